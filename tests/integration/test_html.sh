# memsim-analyze --html: one self-contained HTML file, every
# string from the trace escaped, loaded in headless Chromium (Debian's
# chromium) with no console error; a screenshot is kept in
# $BUILD/test-artifacts/.
. tests/integration/lib.sh

A=$BUILD/memsim-analyze
J=$JSONQ

# Strings of a hand-made trace (run under SANITIZE=1 too): markup in a phase name and in argv stays text.
cat >"$TMP/evil.jsonl" <<'EOT'
{"ev":"meta","t":0,"tid":1,"format":"memsim-trace","version":1,"pid":42,"ppid":1,"exe":"/bin/x","argv":["x","</code><script>alert(2)</script>"],"start_unix_ns":0,"page_size":4096,"strategy":"none","device_size":1048576,"stack_depth":64,"mmap":true,"memsim_version":"0.1.0","parent_trace":null}
{"ev":"phase","t":1,"tid":1,"op":"begin","name":"<b onmouseover=alert(3)>p</b>"}
{"ev":"sample","t":2,"tid":2,"rss":5000000,"hwm":5000000,"vm_size":1,"vm_peak":1,"tree_rss":5000000,"children":[]}
{"ev":"sample","t":300000000,"tid":2,"rss":5000000,"hwm":5000000,"vm_size":1,"vm_peak":1,"tree_rss":5000000,"children":[]}
{"ev":"phase","t":300000001,"tid":1,"op":"end"}
{"ev":"end","t":300000002,"tid":1,"reason":"exit","status":0,"signal":null,"records":6,"dropped":0,"after_end":0,"unknown_frees":0,"live_allocations":0,"live_bytes":0,"stacks":0}
EOT
expect_status "a hostile trace's page" 0 "$A" --html "$TMP/evil.html" "$TMP/evil.jsonl"
expect_eq "argv and phase names stay text" \
    "$(grep -c '<script>alert\|<b onmouseover' "$TMP/evil.html")" 0
expect_grep "argv, escaped" '&lt;/code&gt;&lt;script&gt;alert(2)&lt;/script&gt;' "$TMP/evil.html"
expect_eq "the phase, escaped in the page's data" \
    "$(grep -cF '\u003cb onmouseover=alert(3)\u003ep\u003c/b\u003e' "$TMP/evil.html")" 1

if [ "${SANITIZE:-}" = 1 ]; then
    echo "# skip - the HTML report of real runs: libmemsim.so is not built with SANITIZE=1"
    summary
    exit $?
fi

# A program whose file name is markup: its exe is in the report's title,
# headings and tables.
EVIL='<img src=x onerror=alert(1)>'
mkdir -p "$TMP/bin" "$TMP/run"
cp "$BUILD/programs/touch_mb" "$TMP/bin/$EVIL"
# (env would take its name, with "=" in it, for an assignment)
expect_status "the markup-named program traced" 0 sh -c 'LD_PRELOAD="$1" MEMSIM_OUTPUT="$2" exec "$3" 24 300' \
    sh "$(cd "$BUILD" && pwd)/libmemsim.so" "$TMP/run" "$TMP/bin/$EVIL"
T=$(ls "$TMP"/run/memsim.*.jsonl)
expect_status "--html writes the report" 0 "$A" --html "$TMP/r.html" "$T"
expect_grep "and says where" "the report is in $TMP/r.html" "$TMP/err"
expect_eq "nothing on stdout" "$(wc -c <"$TMP/out" | tr -d ' ')" 0
R=$TMP/r.html
expect_eq "the name never appears as markup" "$(grep -c '<img' "$R")" 0
expect_grep "it appears escaped" '&lt;img src=x onerror=alert(1)&gt;' "$R"
expect_eq "only its own script: one script element, the others data" \
    "$(grep -o '<script>' "$R" | wc -l | tr -d ' '):$(grep -o '<script' "$R" | grep -vc '^<script$')" 1:0
expect_eq "every other script element a data block" \
    "$(grep -o '<script[^>]*>' "$R" | grep -v '^<script>$' | grep -vc '^<script type="application/json" id="[a-z]*-[0-9a-z]*">$')" 0
expect_grep "a policy that forbids every fetch" "Content-Security-Policy\" content=\"default-src 'none'" "$R"
expect_eq "no outside resource" "$(grep -c 'src="http\|href="http\|url(http' "$R")" 0
expect_grep "a timeline, drawn from its data" '<div class="timeline" id="timeline" data-src="timeline-0">' "$R"
expect_grep "strategy bars (a 24 MiB heap is replayed)" '<svg id="strategies"' "$R"
expect_grep "a flame graph, drawn from its data" '<div class="flamegraph" data-src="flame-0">' "$R"
expect_grep "each strategy's footprint over time" '"footprint: best-fit"' "$R"
expect_eq "a fragmentation map per strategy" "$(grep -o '<g class="fragmap">' "$R" | wc -l | tr -d ' ')" 6
expect_grep "request sizes" '<svg id="sizes"' "$R"
expect_status "--html with --json" 2 "$A" --html "$TMP/x.html" --json "$T"
expect_one_line "one line for it" "$TMP/err"
expect_status "--html into a missing directory" 2 "$A" --html "$TMP/nope/r.html" "$T"
expect_one_line "one line for that" "$TMP/err"

# A process tree: one bar per process over time.
P=$BUILD/programs
"$BUILD/memsim" run --out "$TMP/tree" -- sh -c "$P/touch_mb 8 50 && $P/touch_mb 2 0" >/dev/null 2>&1
expect_status "a tree's page" 0 "$A" --html "$TMP/tree.html" "$TMP/tree"
expect_grep "the processes over time" '<svg id="gantt"' "$TMP/tree.html"
expect_eq "a bar's data for each of the 3 processes" \
    "$(sed -n 's/.*id="gantt-data">\(.*\)<\/script>.*/\1/p' "$TMP/tree.html" | "$BUILD/jsonq" bars.#)" 3
sh_pid=$(ls "$TMP/tree" | sed -n 's/^memsim\.[a-z]*sh\.\([0-9]*\)\..*/\1/p' | head -n 1)
expect_status "--pid chooses the sections, as in the text report" 0 "$A" --html "$TMP/tree-pid.html" --pid "$sh_pid" "$TMP/tree"
expect_eq "the shell's section alone, light as it is" \
    "$(grep -o '<section class="process"' "$TMP/tree-pid.html" | wc -l | tr -d ' '):$(grep -c "pid $sh_pid<" "$TMP/tree-pid.html")" 1:1

if ! command -v chromium >/dev/null 2>&1; then
    echo "# skip - the report in a browser: chromium is not installed (apt-get install chromium)"
    summary
    exit $?
fi
ART=$BUILD/test-artifacts
mkdir -p "$ART"
browse() { # browse ARGS...: headless Chromium, a fresh profile, logging on stderr
    rm -rf "$TMP/profile"
    timeout 120 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$TMP/profile" \
        --enable-logging=stderr --v=0 "$@"
}
browse --dump-dom "file://$R" >"$TMP/dom.html" 2>"$TMP/chromium.err"
expect_eq "no console error" "$(grep -c 'CONSOLE' "$TMP/chromium.err")" 0
expect_eq "no alert ran (the name stayed text)" "$(grep -ci 'alert' "$TMP/chromium.err")" 0
n_poly=$(grep -o '<polyline class="series"' "$TMP/dom.html" | wc -l | tr -d ' ')
expect_eq "the timeline's series are drawn" "$([ "$n_poly" -ge 5 ] && echo yes)" yes
expect_eq "the strategy bars are drawn" \
    "$([ "$(grep -o '<g class="bar' "$TMP/dom.html" | wc -l)" -ge 6 ] && echo yes)" yes
expect_eq "the flame graph has frames" \
    "$([ "$(grep -o '<g class="frame"' "$TMP/dom.html" | wc -l)" -ge 3 ] && echo yes)" yes
expect_eq "the fragmentation maps are drawn, each strip's runs as rects" \
    "$([ "$(grep -o '<g class="fragmap">' "$TMP/dom.html" | wc -l)" -ge 6 ] &&
        [ "$(grep -o '<g class="runs"[^>]*><rect' "$TMP/dom.html" | wc -l)" -ge 6 ] && echo yes)" yes
browse --dump-dom "file://$TMP/tree.html" >"$TMP/tree-dom.html" 2>/dev/null
expect_eq "the processes over time: a bar drawn for each of the 3 processes" \
    "$(grep -o '<g class="proc"><title>[^<]*</title><text[^>]*>[^<]*</text><rect' "$TMP/tree-dom.html" | wc -l | tr -d ' ')" 3
# The interactions, in Chromium driven by a script (tests/tools/browse.js,
# tests/tools/report_steps.js): the timeline of the 24 MiB touch_mb page;
# the flame graph of sites (two functions called from main).
steps() { # steps PAGE: the step's figures in $TMP/steps
    timeout 180 node tests/tools/browse.js "$1" tests/tools/report_steps.js >"$TMP/steps" 2>"$TMP/steps.err" ||
        fail "the interactions in Chromium ($1)" "$(head -c 300 "$TMP/steps.err")"
    expect_eq "no error in the page ($1)" "$(grep -c '^console-error' "$TMP/steps")" 0
}
v() { sed -n "s/^$1\t//p" "$TMP/steps"; }
steps "$R"
n=$(v series)
expect_eq "the timeline draws its series" "$([ "${n:-0}" -ge 2 ] && echo yes)" yes
expect_eq "a legend box unchecked hides its series" "$(v series_toggled):$(v first_series_drawn)" "$((n - 1)):false"
mkdir -p "$TMP/srun"
expect_status "sites traced" 0 env LD_PRELOAD="$BUILD/libmemsim.so" MEMSIM_OUTPUT="$TMP/srun" "$P/sites"
expect_status "its page" 0 "$A" --html "$TMP/sites.html" "$TMP"/srun/memsim.sites.*
steps "$TMP/sites.html"
expect_eq "the flame graph from the root" "$(v flame_top)" all
expect_eq "a click on main zooms to it: main on top, fewer frames" \
    "$(v zoomed_top):$([ "$(v zoomed_frames)" -lt "$(v flame_frames)" ] && echo fewer)" "main:fewer"
expect_eq "reset: the root again" "$(v reset_top)" all
expect_eq "bottom-up: the heaviest allocating function, then its caller" "$(v bottom_up)" "all,leak_here,main"
browse --window-size=1100,2600 --screenshot="$ART/html-report.png" "file://$R" >/dev/null 2>&1
expect_eq "a screenshot kept ($ART/html-report.png)" \
    "$([ -s "$ART/html-report.png" ] && echo yes)" yes

summary
