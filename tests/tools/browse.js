// browse.js: drive headless Chromium over its DevTools protocol on a
// pipe (--remote-debugging-pipe: file descriptors 3 and 4, messages
// ended by a NUL byte), with nothing but Node.js: no package to install.
//
//   node tests/tools/browse.js PAGE.html STEPS.js [SCREENSHOT.png]
//
// STEPS.js exports `async function (b)`, given:
//   b.eval(expr)          the value of a JavaScript expression in the page
//   b.click(selector, i)  a real mouse click (pressed and released) at the
//                         centre of the i-th element matching selector
//   b.drag(selector, from, to)  press at the fraction `from` of the
//                         element's width, move, release at `to`
//   b.hover(selector, fx, fy)   move the mouse over it
//   b.select(selector, value)   choose an option, as a user would (change)
// and returns an object: each key and value is printed as `key<TAB>value`
// on a line, for the shell test to check.  Console errors and exceptions
// in the page are printed as `console-error<TAB>text`.  Exit status: 0,
// or 1 when the browser or the steps failed (the reason on stderr).
'use strict';
const { spawn } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const [page, steps, shot] = process.argv.slice(2);
if (!page || !steps) {
  process.stderr.write('usage: node browse.js PAGE.html STEPS.js [SCREENSHOT.png]\n');
  process.exit(2);
}
const chromium = process.env.CHROMIUM || 'chromium';
const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'memsim-browse-'));
const child = spawn(chromium, [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic',
  '--user-data-dir=' + profile, '--remote-debugging-pipe', '--window-size=1100,900',
  'about:blank'], { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
child.stderr.on('data', () => {});
const send = child.stdio[3], recv = child.stdio[4];
let nextId = 1, buf = Buffer.alloc(0), session = null;
const waiting = new Map(), listeners = [];
recv.on('data', (chunk) => {
  buf = Buffer.concat([buf, chunk]);
  let at;
  while ((at = buf.indexOf(0)) >= 0) {
    const msg = JSON.parse(buf.slice(0, at).toString('utf8'));
    buf = buf.slice(at + 1);
    if (msg.id && waiting.has(msg.id)) {
      const w = waiting.get(msg.id);
      waiting.delete(msg.id);
      msg.error ? w.reject(new Error(w.method + ': ' + msg.error.message)) : w.resolve(msg.result);
    } else if (msg.method) {
      listeners.forEach((l) => l(msg));
    }
  }
});
function call(method, params, sessionId) {
  const id = nextId++;
  const msg = { id, method, params: params || {} };
  if (sessionId) msg.sessionId = sessionId;
  send.write(JSON.stringify(msg) + '\0');
  return new Promise((resolve, reject) => waiting.set(id, { resolve, reject, method }));
}
const s = (method, params) => call(method, params, session);
function once(method) {
  return new Promise((resolve) => {
    const l = (m) => { if (m.method === method) { listeners.splice(listeners.indexOf(l), 1); resolve(m.params); } };
    listeners.push(l);
  });
}
const out = [];
listeners.push((m) => {
  if (m.method === 'Runtime.exceptionThrown')
    out.push(['console-error', m.params.exceptionDetails.exception ? m.params.exceptionDetails.exception.description : m.params.exceptionDetails.text]);
  if (m.method === 'Runtime.consoleAPICalled' && m.params.type === 'error')
    out.push(['console-error', m.params.args.map((a) => a.value || a.description).join(' ')]);
  if (m.method === 'Log.entryAdded' && m.params.entry.level === 'error')
    out.push(['console-error', m.params.entry.text]);
});

async function evaluate(expr) {
  const r = await s('Runtime.evaluate', { expression: expr, returnByValue: true, awaitPromise: true });
  if (r.exceptionDetails) throw new Error('in the page: ' + (r.exceptionDetails.exception ? r.exceptionDetails.exception.description : r.exceptionDetails.text));
  return r.result.value;
}
async function box(selector, i) {
  const b = await evaluate(`(() => { const e = document.querySelectorAll(${JSON.stringify(selector)})[${i || 0}];
    if (!e) return null; e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();
    return {x: r.left, y: r.top, w: r.width, h: r.height}; })()`);
  if (!b) throw new Error('no element ' + selector + ' [' + (i || 0) + ']');
  return b;
}
async function mouse(type, x, y, buttons) {
  await s('Input.dispatchMouseEvent', { type, x, y, button: 'left', buttons: buttons || 0, clickCount: type === 'mouseMoved' ? 0 : 1 });
}
const b = {
  eval: evaluate,
  async click(selector, i) {
    const r = await box(selector, i);
    const x = r.x + r.w / 2, y = r.y + r.h / 2;
    await mouse('mouseMoved', x, y);
    await mouse('mousePressed', x, y, 1);
    await mouse('mouseReleased', x, y);
  },
  async drag(selector, from, to) {
    const r = await box(selector, 0);
    const y = r.y + r.h / 2, x0 = r.x + r.w * from, x1 = r.x + r.w * to;
    await mouse('mouseMoved', x0, y);
    await mouse('mousePressed', x0, y, 1);
    for (let k = 1; k <= 5; k++) await mouse('mouseMoved', x0 + (x1 - x0) * k / 5, y, 1);
    await mouse('mouseReleased', x1, y);
  },
  async hover(selector, fx, fy) {
    const r = await box(selector, 0);
    await mouse('mouseMoved', r.x + r.w * fx, r.y + r.h * fy);
  },
  async select(selector, value) {
    await evaluate(`(() => { const e = document.querySelector(${JSON.stringify(selector)});
      e.value = ${JSON.stringify(value)}; e.dispatchEvent(new Event('change')); })()`);
  },
};

async function main() {
  const { targetInfos } = await call('Target.getTargets');
  const target = targetInfos.find((t) => t.type === 'page');
  ({ sessionId: session } = await call('Target.attachToTarget', { targetId: target.targetId, flatten: true }));
  await s('Page.enable');
  await s('Runtime.enable');
  await s('Log.enable');
  const loaded = once('Page.loadEventFired');
  await s('Page.navigate', { url: 'file://' + path.resolve(page) });
  await loaded;
  const result = await require(path.resolve(steps))(b);
  if (shot) {
    const { data } = await s('Page.captureScreenshot', { format: 'png', captureBeyondViewport: true });
    fs.writeFileSync(shot, Buffer.from(data, 'base64'));
  }
  for (const k of Object.keys(result || {})) out.push([k, result[k]]);
}
const timer = setTimeout(() => { process.stderr.write('browse.js: timed out\n'); finish(1); }, 90000);
function finish(code) {
  clearTimeout(timer);
  for (const [k, v] of out) process.stdout.write(k + '\t' + String(v).replace(/\n/g, ' ') + '\n');
  const done = () => {
    try { fs.rmSync(profile, { recursive: true, force: true }); } catch (e) { /* its last files */ }
    process.exit(code);
  };
  if (child.exitCode !== null || child.signalCode !== null) return done();
  child.on('exit', done);
  child.kill('SIGKILL');
}
main().then(() => finish(0), (e) => { process.stderr.write('browse.js: ' + e.message + '\n'); finish(1); });
