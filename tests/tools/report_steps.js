// report_steps.js: the HTML report's interactions, driven in headless
// Chromium by tests/tools/browse.js for test_html.sh.  It prints what a
// user would see after each step: the timeline's series before and after
// a legend box is unchecked, the flame graph's top frame and frame count
// before and after a click on "main", after the reset, and the first
// frames of the bottom-up view.  A page without a timeline (or a flame
// graph) prints series 0 (or flame_top none) and skips its steps.
'use strict';
module.exports = async function (b) {
  const r = {};
  const count = "document.querySelectorAll('svg.timeline-plot polyline.series').length";
  r.series = await b.eval(count);
  if (r.series) {
    r.first_series = await b.eval("document.querySelector('div.timeline label.toggle input').getAttribute('data-series')");
    await b.click('div.timeline label.toggle input', 0);
    r.series_toggled = await b.eval(count);
    r.first_series_drawn = await b.eval("Array.from(document.querySelectorAll('svg.timeline-plot polyline.series')).some(p => p.getAttribute('data-name') === " + JSON.stringify(r.first_series) + ")");
  }
  const names = "document.querySelectorAll('div.flamegraph svg.flame')[0].querySelectorAll('g.frame')";
  r.flame_top = await b.eval("document.querySelector('div.flamegraph svg.flame g.frame') ? " + names + "[0].getAttribute('data-name') : 'none'");
  if (r.flame_top === 'none')
    return r;
  r.flame_frames = await b.eval(names + ".length");
  await b.click("div.flamegraph svg.flame g.frame[data-name='main'] rect", 0);
  r.zoomed_top = await b.eval(names + "[0].getAttribute('data-name')");
  r.zoomed_frames = await b.eval(names + ".length");
  await b.click('div.flamegraph button.reset-zoom', 0);
  r.reset_top = await b.eval(names + "[0].getAttribute('data-name')");
  await b.select('div.flamegraph select.view', 'bottom-up');
  r.bottom_up = await b.eval("Array.from(" + names + ").slice(0, 3).map(g => g.getAttribute('data-name')).join(',')");
  return r;
};
