# memsim run: a program under the preload with its tree's RSS watched from
# outside; exit statuses, resources.json, rss.jsonl, budgets, bad input.
. tests/integration/lib.sh

if [ "${SANITIZE:-}" = 1 ]; then
    echo "# skip - memsim run tests: libmemsim.so is not built with SANITIZE=1"
    summary
    exit
fi

LIB=$(cd "$BUILD" && pwd -P)/libmemsim.so
TRACECHECK=$BUILD/tracecheck
PROG=$(cd "$BUILD" && pwd -P)/programs
REAL=$(cd "$TMP" && pwd -P) # what memsim run reports: paths resolved
MEMSIM=$(cd "$BUILD" && pwd -P)/memsim # absolute: some runs start elsewhere
JSONQ=$(cd "$BUILD" && pwd -P)/jsonq
for need in "$LIB" "$TRACECHECK" "$PROG/touch_mb" "$PROG/tree_touch"; do
    if [ ! -e "$need" ]; then
        fail "memsim run tests" "$need is missing: run them with make integration"
        summary
        exit
    fi
done
LIMIT=30 # seconds for any one run: a hang fails the test, not CI
unset LD_PRELOAD MEMSIM_OUTPUT MEMSIM_STRATEGY MEMSIM_DEVICE_SIZE MEMSIM_STACK_DEPTH \
    MEMSIM_SAMPLE_MS MEMSIM_TRACE_CHILDREN MEMSIM_MMAP MEMSIM_ROOT_PID MEMSIM_COMPRESS

run() { timeout "$LIMIT" "$MEMSIM" run "$@"; }

# field NAME of DIR/resources.json
field() { "$JSONQ" "$2" <"$1/resources.json" 2>/dev/null; }

# expect_cmp NAME A OP B: a numeric comparison (awk: decimals allowed)
expect_cmp() {
    if awk -v a="$2" -v b="$4" "BEGIN { exit !(a != \"\" && a + 0 $3 b + 0) }"; then
        pass "$1"
    else
        fail "$1" "got '$2', want $3 $4"
    fi
}

# check_traces NAME DIR: every trace in DIR passes tracecheck (a trace
# cut by SIGKILL may pass as --truncated instead); one check.
check_traces() {
    n=0 bad=""
    for f in "$2"/memsim.*.jsonl "$2"/memsim.*.jsonl.zst; do
        [ -e "$f" ] || continue
        n=$((n + 1))
        if ! "$TRACECHECK" "$f" >/dev/null 2>"$TMP/tc.err" &&
            ! "$TRACECHECK" --truncated "$f" >/dev/null 2>>"$TMP/tc.err"; then
            bad="$bad $(basename "$f"): $(head -n 2 "$TMP/tc.err" | tr '\n' ' ')"
        fi
    done
    if [ "$n" -eq 0 ]; then
        fail "$1: traces pass tracecheck" "no trace in $2"
    elif [ -z "$bad" ]; then
        pass "$1: $n trace(s) pass tracecheck"
    else
        fail "$1: traces pass tracecheck" "$(echo "$bad" | head -c 600)"
    fi
}

# check_rss NAME DIR: rss.jsonl parses line by line, elapsed_s increases.
check_rss() {
    n=$("$JSONQ" --lines <"$2/rss.jsonl" 2>&1)
    expect_cmp "$1: rss.jsonl has parseable lines" "$n" ">" 0
    expect_eq "$1: elapsed_s increases" \
        "$(sed 's/.*"elapsed_s": *\([0-9.]*\).*/\1/' "$2/rss.jsonl" |
            awk 'NR > 1 && $1 + 0 <= prev + 0 { bad = 1 } { prev = $1 } END { print bad ? "no" : "yes" }')" yes
}

# ---- a program's status, its record, its traces ------------------------------

expect_status "help" 0 "$MEMSIM" run --help
expect_grep "help has examples" "EXAMPLES" "$TMP/out"
"$MEMSIM" help >"$TMP/help"
expect_grep "memsim help lists run" "^  run  " "$TMP/help"

D=$TMP/touch
expect_status "touch 200 MiB: exit status 3 passes through" 3 run --out "$D" "$PROG/touch_mb" 200 200 3
expect_eq "touch: exit_code 3" "$(field "$D" exit_code)" 3
expect_eq "touch: reason completed" "$(field "$D" reason)" completed
expect_cmp "touch: peak_tree_rss_mb >= 190" "$(field "$D" peak_tree_rss_mb)" ">=" 190
expect_eq "touch: command recorded" "$(field "$D" command.0)/$(field "$D" command.3)" \
    "$PROG/touch_mb/3"
expect_eq "touch: no budgets" "$(field "$D" rss_budget_mb)/$(field "$D" wall_budget_s)" null/null
expect_eq "touch: poll_s" "$(field "$D" poll_s)" 0.01
expect_grep "touch: scope" '"scope": "command launch through exit' "$D/resources.json"
expect_grep "touch: limitation" '"limitation": "polled observations' "$D/resources.json"
expect_eq "touch: output_dir is absolute" "$(field "$D" output_dir)" "$(cd "$D" && pwd -P)"
expect_eq "touch: one trace listed" "$(field "$D" traces.#)" 1
expect_eq "touch: the listed trace exists" \
    "$(test -f "$D/$(field "$D" traces.0)" && echo yes)" yes
expect_eq "touch: directory mode 0700" "$(stat -c %a "$D")" 700
check_traces "touch" "$D"
check_rss "touch" "$D"
expect_grep "touch: the summary line names the directory" "; 1 trace in $(cd "$D" && pwd -P)" \
    "$TMP/err"

D=$TMP/tree
# (Held together 1.5 s: a poll of memsim run in that time, however loaded
# the machine.)
expect_status "three children of 50 MiB: runs" 0 run --out "$D" "$PROG/tree_touch" 3 50 1500
expect_cmp "tree: peak_tree_rss_mb >= 150" "$(field "$D" peak_tree_rss_mb)" ">=" 150
expect_eq "tree: four traces" "$(field "$D" traces.#)" 4
expect_cmp "tree: polls saw four processes" \
    "$(sed 's/.*"processes": *\([0-9]*\).*/\1/' "$D/rss.jsonl" | sort -n | tail -n 1)" ">=" 4
check_traces "tree" "$D"
check_rss "tree" "$D"
if [ -x "$BUILD/memsim-analyze" ]; then
    # The analyzer's process tree: the parent first, its three forks below.
    "$BUILD/memsim-analyze" --json --no-replay --sites 0 "$D" >"$TMP/tree.json"
    tq() { "$JSONQ" "$1" <"$TMP/tree.json"; }
    expect_eq "tree: four nodes" "$(tq tree.nodes.#)" 4
    expect_eq "tree: the root first" "$(tq tree.nodes.0.parent)" null
    root=$(tq tree.nodes.0.process)
    root_pid=$(tq tree.nodes.0.pid)
    expect_eq "tree: three forks of the root, one level down" \
        "$(for k in 1 2 3; do echo "$(tq tree.nodes.$k.via) $(tq tree.nodes.$k.parent) $(tq tree.nodes.$k.depth)"; done | sort -u)" \
        "fork $root 1"
    "$BUILD/memsim-analyze" --no-replay --sites 0 "$D" >"$TMP/tree.txt"
    expect_eq "tree: the text opens with the tree" "$(head -n 1 "$TMP/tree.txt" | cut -d, -f1)" \
        "process tree: 4 processes"
    # (the process table, last: each child indented under its parent)
    expect_eq "tree: the forks, with their parent" \
        "$(grep -c "^ *[0-9]* *$root_pid   tree_touch .*  fork$" "$TMP/tree.txt")" 3

    # sh forks a child that execs ls, then execs true itself.
    D=$TMP/shtree
    expect_status "sh -c with a fork and two execs: runs" 0 run --out "$D" \
        sh -c '/bin/ls / >/dev/null; exec /bin/true'
    "$BUILD/memsim-analyze" --json --no-replay --sites 0 "$D" >"$TMP/tree.json"
    edges=$(n=$(tq tree.nodes.#); k=0; while [ $k -lt "$n" ]; do
        echo "$(tq tree.nodes.$k.depth) $(tq tree.nodes.$k.via) $(basename "$(tq tree.nodes.$k.exe)")"
        k=$((k + 1)); done | tr '\n' ';')
    # dash spawns ls (vfork + exec: no trace of the child before its
    # exec); a shell that forks shows "1 fork sh;1 exec ls" instead.
    expect_eq "sh's tree: sh, ls a level down, then sh execing true" \
        "$(echo "$edges" | sed 's/1 fork [a-z]*;1 exec ls;/1 spawn ls;/; s/^0 null [a-z]*;/0 null sh;/')" \
        "0 null sh;1 spawn ls;0 exec true;"
fi

D=$TMP/nochildren
expect_status "--no-children: runs" 0 run --no-children --out "$D" "$PROG/tree_touch" 2 1 0
expect_eq "--no-children: one trace" "$(field "$D" traces.#)" 1

# --no-compress: plain traces, and the variable that says so.
D=$TMP/plain
expect_status "--no-compress: runs" 0 run --no-compress --out "$D" "$PROG/tree_touch" 2 1 0
expect_eq "--no-compress: plain traces, listed" \
    "$(find "$D" -name 'memsim.*.jsonl' | wc -l | tr -d ' ')/$(field "$D" traces.#)" 3/3
expect_eq "--no-compress: none compressed" "$(find "$D" -name '*.zst' | wc -l | tr -d ' ')" 0
check_traces "--no-compress" "$D"
expect_status "--no-compress: MEMSIM_COMPRESS=0 in the environment" 0 \
    timeout "$LIMIT" "$MEMSIM" run --no-compress --out "$TMP/plain-env" --no-children -- \
    sh -c 'env >"$1"' sh "$TMP/plain-env.txt"
expect_grep "--no-compress: MEMSIM_COMPRESS=0" "^MEMSIM_COMPRESS=0\$" "$TMP/plain-env.txt"

# The environment the command gets.
D=$TMP/env
expect_status "options reach the environment" 0 env LD_PRELOAD=libm.so.6 MEMSIM_ROOT_PID=1 \
    timeout "$LIMIT" "$MEMSIM" run --out "$D" --strategy none --device-size 64M --sample-ms 50 \
    --no-children -- sh -c 'env >"$1"' sh "$TMP/env.txt"
expect_grep "env: LD_PRELOAD prepended" "^LD_PRELOAD=$LIB:libm.so.6\$" "$TMP/env.txt"
expect_grep "env: MEMSIM_OUTPUT" "^MEMSIM_OUTPUT=$(cd "$D" && pwd -P)\$" "$TMP/env.txt"
expect_grep "env: MEMSIM_STRATEGY" "^MEMSIM_STRATEGY=none\$" "$TMP/env.txt"
expect_grep "env: MEMSIM_DEVICE_SIZE" "^MEMSIM_DEVICE_SIZE=67108864\$" "$TMP/env.txt"
expect_grep "env: MEMSIM_SAMPLE_MS" "^MEMSIM_SAMPLE_MS=50\$" "$TMP/env.txt"
expect_grep "env: MEMSIM_TRACE_CHILDREN" "^MEMSIM_TRACE_CHILDREN=0\$" "$TMP/env.txt"

# The default directory: memsim-<exe>-<time>/ here, a new one each run.
mkdir "$TMP/here"
(cd "$TMP/here" && run "$PROG/touch_mb" 1 0 0 && run "$PROG/touch_mb" 1 0 0) 2>"$TMP/err"
expect_eq "default directories: two runs, two directories" \
    "$(find "$TMP/here" -mindepth 1 -maxdepth 1 -type d -name 'memsim-touch_mb-20*-*' |
        wc -l | tr -d ' ')" 2
expect_eq "default directories: each has its record" \
    "$(find "$TMP/here" -name resources.json | wc -l | tr -d ' ')" 2

expect_status "--out is created with its parents" 0 run --out "$TMP/a/b/c" "$PROG/touch_mb" 1 0 0
expect_eq "--out: created with mode 0700" "$(stat -c %a "$TMP/a/b/c" 2>&1)" 700
expect_status "-- before a command" 4 run --out "$TMP/dd" -- sh -c 'exit 4'

# A directory that is not empty: refused, unless --force, which removes
# the run before's files and nothing else.
D=$TMP/reuse
mkdir -p "$D"
echo mine >"$D/notes.txt"
expect_status "--out not empty: refused" 2 run --out "$D" "$PROG/touch_mb" 1 0 0
expect_eq "--out not empty: one line naming it" "$(cat "$TMP/err")" \
    "memsim run: --out: \"$D\" is not empty (--force reuses it, removing the files of the run before)"
expect_eq "--out not empty: nothing written" "$(ls -A "$D")" notes.txt
expect_status "--force: runs" 0 run --force --out "$D" "$PROG/touch_mb" 1 0 0
first=$(field "$D" traces.0)
expect_status "--force again: runs" 0 run -f --out "$D" "$PROG/touch_mb" 1 0 0
expect_eq "--force: one run's trace, not two" \
    "$(find "$D" -name 'memsim.*' | wc -l | tr -d ' '):$(field "$D" traces.#)" "1:1"
expect_eq "--force: the trace is the new run's" "$(test -e "$D/$first" && echo old)" ""
expect_eq "--force: other files stay" "$(cat "$D/notes.txt")" mine
expect_status "--out of a run before: refused" 2 run --out "$D" "$PROG/touch_mb" 1 0 0

# No trace: one line saying why.
D=$TMP/static
expect_status "a static program: its status" 0 run --out "$D" "$PROG/static_hello"
expect_eq "a static program: the summary line, then why" "$(cat "$TMP/err")" \
    "memsim run: completed, exit status 0 after $(sed -n 's/.* after \([0-9.]*\) s.*/\1/p' "$TMP/err") s, peak tree RSS $(sed -n 's/.*peak tree RSS \([0-9.]*\) MiB.*/\1/p' "$TMP/err") MiB; 0 traces in $REAL/static
memsim run: no trace: $PROG/static_hello is statically linked: no dynamic loader runs in it, so LD_PRELOAD cannot bring libmemsim.so in"
expect_eq "a static program: no trace listed" "$(field "$D" traces.#)" 0
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
    mkdir -m 755 "$TMP/suid"
    cp "$PROG/touch_mb" "$TMP/suid/touch_mb"
    chown nobody "$TMP/suid/touch_mb" && chmod 4755 "$TMP/suid/touch_mb"
    expect_status "a setuid program: its status" 0 run --out "$TMP/suid/out" "$TMP/suid/touch_mb" 1 0 0
    expect_eq "a setuid program: why, in one line" "$(tail -n 1 "$TMP/err")" \
        "memsim run: no trace: $TMP/suid/touch_mb is setuid: the dynamic loader ignores LD_PRELOAD for it (secure execution)"
else
    echo "# skip - a setuid program: not root, or no user nobody"
fi
(PATH=$PROG:$PATH && run --out "$TMP/static-path" static_hello) >/dev/null 2>"$TMP/err"
expect_eq "a static program found on PATH: named by its path" "$(tail -n 1 "$TMP/err" | cut -d: -f1-3)" \
    "memsim run: no trace: $PROG/static_hello is statically linked"
expect_status "a script whose interpreter is static: its status" 0 \
    sh -c "printf '#!%s\\n' '$PROG/static_hello' >'$TMP/script' && chmod +x '$TMP/script' && \
        timeout $LIMIT '$MEMSIM' run --out '$TMP/script-out' '$TMP/script'"
expect_eq "a script whose interpreter is static: why" "$(tail -n 1 "$TMP/err" | cut -d: -f1-3)" \
    "memsim run: no trace: $PROG/static_hello is statically linked"
expect_status "a command that clears LD_PRELOAD: its status" 0 \
    run --no-children --out "$TMP/cleared" env LD_PRELOAD= "$PROG/touch_mb" 1 0 0
expect_eq "a command with a trace: no such line" "$(grep -c 'no trace' "$TMP/err")" 0

# ---- budgets and signals ----------------------------------------------------------

D=$TMP/runaway
expect_status "an RSS budget stops a runaway: status 124, as timeout(1)" 124 \
    run --rss-mb 50 --out "$D" "$PROG/touch_mb" forever
expect_eq "runaway: reason" "$(field "$D" reason)" rss_budget_exceeded
expect_eq "runaway: exit_code is minus the signal" "$(field "$D" exit_code | sed 's/^-9$/-15/')" -15
expect_grep "runaway: the line says it in words" \
    "^memsim run: the RSS budget of 50 MiB was exceeded: stopped, killed by signal [0-9]* ([A-Z][a-z]*) after [0-9.]* s, peak tree RSS [0-9.]* MiB; 1 trace in $REAL/runaway\$" \
    "$TMP/err"
expect_eq "runaway: no machine token on stderr" "$(grep -c '_exceeded' "$TMP/err")" 0
# (How soon it stops, within 2 s and two polls of the crossing, is a
# matter of time on a loaded machine: bench/timing.sh measures it.)
expect_cmp "runaway: peak above the budget" "$(field "$D" peak_tree_rss_mb)" ">=" 50
expect_eq "runaway: budget recorded" "$(field "$D" rss_budget_mb)" 50.0
check_traces "runaway" "$D"

D=$TMP/wall
expect_status "a wall budget stops sleep 5: status 124" 124 run --wall-s 0.5 --out "$D" sleep 5
expect_eq "wall: reason" "$(field "$D" reason)" wall_budget_exceeded
expect_eq "wall: exit_code, the signal" "$(field "$D" exit_code)" -15
expect_grep "wall: the line says it in words" \
    "^memsim run: the wall-time budget of 0.5 s was exceeded: stopped, killed by signal 15 (Terminated) after [0-9.]* s, peak tree RSS [0-9.]* MiB; 1 trace in $REAL/wall\$" \
    "$TMP/err"
expect_eq "wall: the line is the only one" "$(wc -l <"$TMP/err" | tr -d ' ')" 1
expect_cmp "wall: wall_s >= 0.5" "$(field "$D" wall_s)" ">=" 0.5
expect_eq "wall: budget recorded" "$(field "$D" wall_budget_s)" 0.5
check_traces "wall" "$D"

# term_sleep DIR SETTLE: memsim run of sleep 5 into DIR under timeout(1),
# SIGTERM to timeout SETTLE seconds after memsim's start-up in sleep is
# over: its handlers are installed (SigCgt has SIGTERM's bit, 0x4000; a
# signal before them ends sleep untraced, however long start-up takes on
# a loaded machine); the status of timeout.
term_sleep() {
    timeout "$LIMIT" "$MEMSIM" run --out "$1" sleep 5 >/dev/null 2>&1 &
    waiter=$!
    i=0 sleeper=""
    while [ $i -lt 1500 ] && [ -z "$sleeper" ]; do
        sleeper=$(find "$1" -name 'memsim.sleep.*.jsonl.zst' 2>/dev/null |
            sed -n 's/.*memsim\.sleep\.\([0-9]*\)\..*/\1/p' | head -n 1)
        [ -z "$sleeper" ] && sleep 0.02
        i=$((i + 1))
    done
    [ -n "$sleeper" ] && wait_handlers "$sleeper"
    sleep "$2"
    kill -TERM $waiter
    wait $waiter
}

# SIGTERM to memsim run goes on to the command, whose trace ends cleanly.
D=$TMP/forward
term_sleep "$D" 0.2
expect_eq "SIGTERM to memsim run: 128+15" "$?" 143
expect_eq "SIGTERM forwarded: reason completed" "$(field "$D" reason)" completed
expect_eq "SIGTERM forwarded: exit_code -15" "$(field "$D" exit_code)" -15
f=$(find "$D" -name 'memsim.sleep.*.jsonl.zst')
expect_status "SIGTERM forwarded: the trace ends with the signal" 0 \
    "$TRACECHECK" --expect-end signal "${f:-/dev/null}"

# timeout(1) signals memsim run and its own group: memsim run forwards
# SIGTERM twice, the second while the traced program's handler is writing
# its end record.  The second must wait (it killed the program before its
# end record 1 run in 15 while the handler reset the disposition on
# entry).  Twenty rounds.
bad=0
for round in $(seq 20); do
    D=$TMP/twice.$round
    term_sleep "$D" 0.1
    f=$(find "$D" -name 'memsim.sleep.*.jsonl.zst')
    "$TRACECHECK" --expect-end signal "${f:-/dev/null}" >/dev/null 2>&1 || bad=$((bad + 1))
done
expect_eq "SIGTERM forwarded twice: 20 traces end with the signal" "$bad" 0

# ---- --analyze: report.txt and report.json in the directory, shown ----------------

if [ -x "$BUILD/memsim-analyze" ]; then
    ADIR=$(cd "$BUILD" && pwd -P)
    HERE=$(pwd -P)
    # The analyzer as a user types it from here: relative below the
    # current directory, else absolute.
    case $ADIR in
    "$HERE"/*) ATOOL=${ADIR#"$HERE"/}/memsim-analyze ;;
    *) ATOOL=$ADIR/memsim-analyze ;;
    esac
    expect_status "--analyze: the command's status" 5 \
        run --analyze --out "$TMP/an" "$PROG/touch_mb" 1 0 5
    expect_eq "--analyze: report.txt and report.json in the directory" \
        "$(test -s "$TMP/an/report.txt" && test -s "$TMP/an/report.json" && echo yes)" yes
    expect_eq "--analyze: nothing on stdout but the program's" "$(cat "$TMP/out")" ""
    expect_eq "--analyze: the report on stderr, between memsim run's two lines" \
        "$(sed '1d;$d' "$TMP/err" | md5sum)" "$(md5sum <"$TMP/an/report.txt")"

    # det_heap prints one line; the analysis must not add to it.
    D=$TMP/an-det
    run --out "$TMP/det-plain" "$PROG/det_heap" >"$TMP/det-plain.out" 2>/dev/null
    (PATH=/usr/bin:/bin && run --analyze --out "$D" "$PROG/det_heap") >"$TMP/det.out" 2>"$TMP/det.err"
    expect_eq "--analyze det_heap: status 0" "$?" 0
    expect_eq "--analyze: stdout is the program's own, byte for byte" \
        "$(cmp "$TMP/det.out" "$TMP/det-plain.out" 2>&1 && echo same)" same
    expect_eq "--analyze: the program's stdout is its one line" "$(wc -l <"$TMP/det.out" | tr -d ' ')" 1
    expect_eq "--analyze: report.txt and report.json exist" \
        "$(test -s "$D/report.txt" && test -s "$D/report.json" && echo yes)" yes
    expect_eq "--analyze: no temporary file left" "$(ls -A "$D" | grep -c '^\.')" 0
    expect_eq "--analyze: report.html, a whole page" \
        "$(head -c 15 "$D/report.html"):$(tail -n 1 "$D/report.html")" "<!DOCTYPE html>:</body></html>"
    expect_status "--analyze: report.json parses" 0 "$JSONQ" "" <"$D/report.json"
    T=$(find "$D" -name 'memsim.det_heap.*.jsonl*')
    check=$("$TRACECHECK" "${T:-/dev/null}")
    allocs=$(echo "$check" | sed -n 's/.* allocs=\([0-9]*\).*/\1/p')
    reallocs=$(echo "$check" | sed -n 's/.* reallocs=\([0-9]*\).*/\1/p')
    # 20 rounds of 1000 mallocs and 500 reallocs, the leak, stdout's buffer.
    expect_eq "--analyze: report.json counts det_heap's 30002 allocations" \
        "$("$JSONQ" summary.allocations <"$D/report.json")" 30002
    expect_eq "--analyze: report.json agrees with the trace" \
        "$("$JSONQ" summary.allocations <"$D/report.json")" "$((allocs + reallocs))"
    expect_eq "--analyze: report.json is memsim-analyze --json's, times aside" \
        "$("$BUILD/memsim-analyze" --json "$D" 2>/dev/null | grep -v '_s"' | md5sum)" \
        "$(grep -v '_s"' "$D/report.json" | md5sum)"
    # stderr: memsim run's line, report.txt whole, then how to see it again.
    expect_grep "--analyze: stderr opens with memsim run's line" "^memsim run: completed, exit status 0" \
        "$TMP/det.err"
    expect_eq "--analyze: report.txt, whole, on stderr" \
        "$(sed '1d;$d' "$TMP/det.err" | md5sum)" "$(md5sum <"$D/report.txt")"
    expect_eq "--analyze: the last line says how to see it again" "$(tail -n 1 "$TMP/det.err")" \
        "memsim run: report: $REAL/an-det/report.txt, $REAL/an-det/report.html (again: $ATOOL $REAL/an-det)"
    # --analyze-opts: the analyzer's options, for each of the three analyses.
    D=$TMP/an-opts
    (PATH=/usr/bin:/bin && run --analyze-opts '--sites 1  --no-replay' --out "$D" "$PROG/det_heap") \
        >/dev/null 2>"$TMP/opts.err"
    expect_eq "--analyze-opts: status 0" "$?" 0
    expect_eq "--analyze-opts: report.json is memsim-analyze --json with them" \
        "$("$BUILD/memsim-analyze" --json --sites 1 --no-replay "$D" 2>/dev/null | grep -v '_s"' | md5sum)" \
        "$(grep -v '_s"' "$D/report.json" | md5sum)"
    # (by peak, calls, temporary allocations and leaked bytes)
    expect_eq "--analyze-opts: report.txt has one site a ranking" \
        "$(grep -c '^ *#2 ' "$D/report.txt"):$(grep -c '^ *#1 ' "$D/report.txt")" "0:4"
    expect_eq "--analyze-opts: the again line has them" "$(tail -n 1 "$TMP/opts.err")" \
        "memsim run: report: $REAL/an-opts/report.txt, $REAL/an-opts/report.html (again: $ATOOL --sites 1 --no-replay $REAL/an-opts)"
    D=$TMP/an-det
    # The analyzer found on PATH is named as the shell finds it.
    (PATH=$ADIR:/usr/bin:/bin && run --analyze --force --out "$D" "$PROG/det_heap") >/dev/null 2>"$TMP/det.err"
    expect_eq "--analyze: memsim-analyze on PATH is named so" "$(tail -n 1 "$TMP/det.err")" \
        "memsim run: report: $REAL/an-det/report.txt, $REAL/an-det/report.html (again: memsim-analyze $REAL/an-det)"
    # From the analyzer's own directory, not on PATH: ./memsim-analyze.
    (cd "$ADIR" && PATH=/usr/bin:/bin && run --analyze --out "$TMP/an-here" "$PROG/det_heap") \
        >/dev/null 2>"$TMP/det.err"
    expect_eq "--analyze: ./memsim-analyze from its directory" "$(tail -n 1 "$TMP/det.err")" \
        "memsim run: report: $REAL/an-here/report.txt, $REAL/an-here/report.html (again: ./memsim-analyze $REAL/an-here)"
    # A directory below the current one: relative, quoted for the shell.
    mkdir -p "$TMP/cwd"
    (cd "$TMP/cwd" && PATH=/usr/bin:/bin && run --analyze --out "it's here" "$PROG/det_heap") \
        >/dev/null 2>"$TMP/det.err"
    expect_eq "--analyze: a relative directory quoted for the shell" "$(tail -n 1 "$TMP/det.err")" \
        "memsim run: report: 'it'\\''s here/report.txt', 'it'\\''s here/report.html' (again: $ADIR/memsim-analyze 'it'\\''s here')"
    expect_eq "--analyze: the quoted line works in sh" \
        "$(cd "$TMP/cwd" && sh -c "cat 'it'\\''s here/report.txt'" | md5sum)" \
        "$(md5sum <"$TMP/cwd/it's here/report.txt")"

    # On a terminal the report goes to stdout (script(1) gives a pty).
    if command -v script >/dev/null 2>&1 &&
        script -qec true /dev/null </dev/null >/dev/null 2>&1; then
        D=$TMP/an-tty
        timeout "$LIMIT" script -qec "PATH=/usr/bin:/bin '$MEMSIM' run --analyze --out '$D' \
            '$PROG/det_heap' 2>'$TMP/tty.err'" /dev/null </dev/null >"$TMP/tty.raw"
        expect_eq "--analyze on a terminal: status 0" "$?" 0
        tr -d '\r' <"$TMP/tty.raw" >"$TMP/tty.out"
        expect_eq "--analyze on a terminal: the program's line, report.txt, the again line" \
            "$(sed '$d' "$TMP/tty.out" | md5sum)" \
            "$({ cat "$TMP/det-plain.out" "$D/report.txt"; } | md5sum)"
        expect_eq "--analyze on a terminal: the again line last" "$(tail -n 1 "$TMP/tty.out")" \
            "memsim run: report: $REAL/an-tty/report.txt, $REAL/an-tty/report.html (again: $ATOOL $REAL/an-tty)"
        expect_eq "--analyze on a terminal: stderr has memsim run's line only" \
            "$(wc -l <"$TMP/tty.err" | tr -d ' '):$(cut -c1-21 "$TMP/tty.err")" \
            "1:memsim run: completed"
    else
        echo "# skip - --analyze on a terminal: script(1) cannot give a pseudo-terminal here"
    fi

    # An analyzer that fails: a stand-in beside a copy of memsim.
    F=$TMP/fake
    mkdir -p "$F"
    cp "$MEMSIM" "$F/memsim"
    ln -s "$LIB" "$F/libmemsim.so"
    fake() { printf '#!/bin/sh\n%s\n' "$1" >"$F/memsim-analyze" && chmod +x "$F/memsim-analyze"; }
    frun() { timeout "$LIMIT" "$F/memsim" run --analyze --force "$@"; }
    fake 'echo half a report; exit 2'
    D=$TMP/an-fail
    mkdir -p "$D" && echo stale >"$D/report.txt" && echo stale >"$D/report.json"
    expect_status "a failing analyzer: the command's status stays" 3 frun --out "$D" "$PROG/touch_mb" 1 0 3
    expect_eq "a failing analyzer: one line naming the cause, after memsim run's" \
        "$(sed 1d "$TMP/err")" \
        "memsim run: --analyze: no report.txt nor report.json: memsim-analyze exited with status 2"
    expect_eq "a failing analyzer: no report left, stale or partial" "$(ls -A "$D" | grep -c 'report')" 0
    expect_eq "a failing analyzer: stdout untouched" "$(cat "$TMP/out")" ""
    fake 'kill -SEGV $$'
    expect_status "a crashing analyzer: the command's status stays" 0 frun --out "$D" "$PROG/touch_mb" 1 0 0
    expect_eq "a crashing analyzer: named" "$(sed 1d "$TMP/err")" \
        "memsim run: --analyze: no report.txt nor report.json: memsim-analyze was killed by signal 11 (Segmentation fault)"
    # One pass of the analyzer writes the three forms: the text on its
    # stdout, the JSON and the page into the files of --output.
    fake 'echo "$*" >>"$0.calls"; echo "the text"'
    rm -f "$F/memsim-analyze.calls"
    expect_status "an analyzer that writes only the text: the command's status" 0 \
        frun --out "$D" "$PROG/touch_mb" 1 0 0
    expect_eq "one pass of the analyzer for the three forms" "$(cat "$F/memsim-analyze.calls")" \
        "--output text=- --output json=$D/report.json --output html=$D/report.html $D"
    expect_eq "only the text written: report.txt kept, no report.json" \
        "$(cat "$D/report.txt" 2>&1):$(ls -A "$D" | grep -c 'report.json')" "the text:0"
    expect_eq "only the text written: one line, then the again line" "$(sed 1d "$TMP/err")" \
        "the text
memsim run: --analyze: no report.json
memsim run: report: $REAL/an-fail/report.txt (again: $REAL/fake/memsim-analyze $REAL/an-fail)"
    # A reader of the report gone: memsim run's status is still the command's.
    fake 'yes a long report | head -n 100000'
    { frun --out "$TMP/an-pipe" "$PROG/touch_mb" 1 0 3 2>&1; echo $? >"$TMP/pipe.st"; } |
        head -c 100 >/dev/null
    expect_eq "--analyze into a closed pipe: the command's status" "$(cat "$TMP/pipe.st")" 3
    # A signal to memsim run alone while the analyzer writes: passed on to
    # it, nothing half-written left, and memsim run ends by the signal, as
    # it did before it wrote reports.
    fake "echo partial; touch '$TMP/fake.started'; exec sleep 120"
    D=$TMP/an-term
    rm -f "$TMP/fake.started"
    "$F/memsim" run --analyze --out "$D" "$PROG/touch_mb" 1 0 0 >/dev/null 2>&1 &
    waiter=$!
    i=0
    while [ $i -lt 3000 ] && [ ! -e "$TMP/fake.started" ]; do sleep 0.02; i=$((i + 1)); done
    t0=$(date +%s)
    kill -TERM $waiter
    { wait $waiter; } 2>/dev/null # without dash's "Terminated"
    expect_eq "SIGTERM during the analysis: memsim run ends by it" "$?" 143
    expect_cmp "SIGTERM during the analysis: passed on (the analyzer's 120 s sleep cut)" \
        "$(($(date +%s) - t0))" "<" 60
    expect_eq "SIGTERM during the analysis: no report, no temporary file" \
        "$(ls -A "$D" | grep -c 'report')" 0
else
    expect_status "--analyze without the analyzer: the command's status" 5 \
        run --analyze --out "$TMP/an" "$PROG/touch_mb" 1 0 5
    expect_grep "--analyze says so" "memsim-analyze is not built yet; traces are in $REAL/an\$" \
        "$TMP/err"
fi

# ---- bad input: exit 2, one line, nothing started ---------------------------------

mkdir "$TMP/bad"
: >"$TMP/file"
bad() {
    name=$1 pattern=$2
    shift 2
    rm -f "$TMP/marker"
    (cd "$TMP/bad" && run "$@") >"$TMP/out" 2>"$TMP/err"
    expect_eq "refuses $name" "$?" 2
    expect_grep "names $name" "$pattern" "$TMP/err"
    expect_one_line "one line for $name" "$TMP/err"
    expect_eq "$name: nothing started" "$(ls -A "$TMP/bad")$(test -e "$TMP/marker" && echo marker)" ""
}
MARK="touch $TMP/marker"
bad "--wall-s 0" '^memsim run: --wall-s: 0 is not a positive number$' --wall-s 0 sh -c "$MARK"
bad "--wall-s -1" '--wall-s: -1 is not a positive' --wall-s -1 sh -c "$MARK"
bad "--wall-s nan" '--wall-s: "nan" is not a finite number' --wall-s nan sh -c "$MARK"
bad "--wall-s inf" '--wall-s: "inf" is not a finite number' --wall-s inf sh -c "$MARK"
bad "--wall-s abc" '--wall-s: "abc" is not a finite number' --wall-s abc sh -c "$MARK"
bad "--rss-mb 0" '--rss-mb: 0 is not a positive number' --rss-mb 0 sh -c "$MARK"
bad "--rss-mb -5" '--rss-mb: -5 is not a positive number' --rss-mb -5 sh -c "$MARK"
bad "--sample-ms 0" '--sample-ms: 0 is below the minimum 1' --sample-ms 0 sh -c "$MARK"
bad "--sample-ms 1.5" '--sample-ms: "1.5" is not a whole number' --sample-ms 1.5 sh -c "$MARK"
bad "--device-size 12X" '--device-size: "12X" is not a size' --device-size 12X sh -c "$MARK"
bad "--strategy bogus" '--strategy: unknown strategy "bogus" (known: none, first-fit' \
    --strategy bogus sh -c "$MARK"
bad "--analyze-opts --json" "^memsim run: --analyze-opts: --json is memsim run's to choose (it writes report.txt, report.json and report.html)\$" \
    --analyze-opts --json sh -c "$MARK"
bad "--analyze-opts --html" "--analyze-opts: --html is memsim run's to choose" --analyze-opts '--html x' sh -c "$MARK"
bad "--analyze-opts --pprof" "--analyze-opts: --pprof is memsim run's to choose" --analyze-opts '--pprof x' sh -c "$MARK"
bad "--analyze-opts --output" "--analyze-opts: --output is memsim run's to choose" --analyze-opts '-o text=x' sh -c "$MARK"
bad "--analyze-opts --diff" "^memsim" --analyze-opts '--diff' sh -c "$MARK"
bad "--analyze-opts a bad value" '^memsim-analyze: --fail-on: "x" is not a severity (info, warning, critical)$' \
    --analyze-opts '--sites 2 --fail-on x' sh -c "$MARK"
bad "--analyze-opts an unknown option" '^memsim-analyze: unknown option "--bogus"' --analyze-opts --bogus sh -c "$MARK"
bad "--analyze-opts a value missing" '^memsim-analyze: --sites needs a value$' --analyze-opts --sites sh -c "$MARK"
bad "--analyze-opts a word that is no option" \
    '^memsim run: --analyze-opts: "foo" is not an option (the run.s directory is the analyzer.s only input)$' \
    --analyze-opts '--all foo' sh -c "$MARK"
bad "--analyze-opts --help" '^memsim run: --analyze-opts: --help is not an analysis option' \
    --analyze-opts --help sh -c "$MARK"
bad "--analyze-opts blank" '^memsim run: --analyze-opts: no option given$' --analyze-opts ' ' sh -c "$MARK"
bad "--rss-mb 1e20" '^memsim run: --rss-mb: 1e20 is above the maximum 16777216 MiB$' --rss-mb 1e20 sh -c "$MARK"
bad "--rss-mb 0.5" '^memsim run: --rss-mb: 0.5 is below the minimum 1 MiB$' --rss-mb 0.5 sh -c "$MARK"
bad "--wall-s 1e9" '^memsim run: --wall-s: 1e9 is above the maximum 31536000 s$' --wall-s 1e9 sh -c "$MARK"
bad "--wall-s 0.001" '^memsim run: --wall-s: 0.001 is below the minimum 0.01 s$' --wall-s 0.001 sh -c "$MARK"
bad "--device-size 2P" '^memsim run: --device-size: 2P is above the maximum 1P$' --device-size 2P sh -c "$MARK"
bad "--sample-ms 3600001" '^memsim run: --sample-ms: 3600001 is above the maximum 3600000$' \
    --sample-ms 3600001 sh -c "$MARK"
# --sample and --sample-bytes: the command's traces are sampled at that
# interval (MEMSIM_SAMPLE_BYTES, which they replace).
for opt in "--sample:524288" "--sample-bytes 4M:4194304"; do
    rm -rf "$TMP/sampled"
    MEMSIM_SAMPLE_BYTES=1K run --out "$TMP/sampled" ${opt%:*} sh -c 'echo hi' >"$TMP/out" 2>"$TMP/err"
    expect_eq "$opt: the command runs" "$?:$(cat "$TMP/out")" "0:hi"
    expect_eq "$opt: its trace names the interval" \
        "$(trace_text "$(ls "$TMP"/sampled/memsim.*.zst | head -n 1)" | head -n 1 | "$JSONQ" sample_bytes)" "${opt#*:}"
done
bad "--sample-bytes 0" '^memsim run: --sample-bytes: 0 is below the minimum 1 bytes$' --sample-bytes 0 sh -c "$MARK"
bad "--sample-bytes 2G" '^memsim run: --sample-bytes: 2G is above the maximum 1G$' --sample-bytes 2G sh -c "$MARK"
bad "--sample-bytes 5X" '^memsim run: --sample-bytes: "5X" is not a size' --sample-bytes 5X sh -c "$MARK"
bad "--force without --out" '^memsim run: --force needs --out (the default directory is always new)$' \
    --force sh -c "$MARK"
bad "no command" 'no command to run' --wall-s 1
bad "an empty command" 'the command is an empty string' ''
bad "--out a regular file" "--out: \"$TMP/file\" exists and is not a directory" \
    --out "$TMP/file" sh -c "$MARK"
bad "an unknown option" 'unknown option "--bogus"' --bogus sh -c "$MARK"
bad "a missing value" '--rss-mb needs a value' --rss-mb

rm -f "$TMP/marker"
(cd "$TMP/bad" && run /nonexistent/cmd) >"$TMP/out" 2>"$TMP/err"
expect_eq "a nonexistent command: 127" "$?" 127
expect_grep "a nonexistent command: says so" \
    '^memsim run: cannot run /nonexistent/cmd: No such file or directory$' "$TMP/err"
expect_one_line "a nonexistent command: one line" "$TMP/err"
expect_eq "a nonexistent command: no directory left" "$(ls -A "$TMP/bad")" ""
expect_status "a file that is not executable: 126" 126 run --out "$TMP/noexec" "$TMP/file"
# A working directory that no longer exists: refused before anything starts.
mkdir "$TMP/gone"
(cd "$TMP/gone" && rmdir "$TMP/gone" && exec "$MEMSIM" run -- touch "$TMP/gone-marker") \
    >"$TMP/out" 2>"$TMP/err"
expect_eq "a deleted working directory: exit 2" "$?" 2
expect_grep "a deleted working directory: named" "the current directory is not usable" "$TMP/err"
expect_one_line "a deleted working directory: one line" "$TMP/err"
expect_eq "a deleted working directory: nothing started" "$(test -e "$TMP/gone-marker" && echo ran)" ""
expect_eq "not executable: the --out it made is gone" "$(test -e "$TMP/noexec" && echo there)" ""

# Without libmemsim.so beside it (nor in ../lib/memsim/), memsim run says where it looked.
mkdir "$TMP/lonely"
cp "$MEMSIM" "$TMP/lonely/memsim"
(cd "$TMP/bad" && timeout "$LIMIT" "$TMP/lonely/memsim" run sh -c "$MARK") >"$TMP/out" 2>"$TMP/err"
expect_eq "no libmemsim.so: refused" "$?" 2
expect_grep "no libmemsim.so: names where it looked" \
    "cannot find libmemsim.so: looked for $REAL/lonely/libmemsim.so and $REAL/lib/memsim/libmemsim.so (build it with make)\$" \
    "$TMP/err"
expect_eq "no libmemsim.so: nothing started" "$(ls -A "$TMP/bad")$(test -e "$TMP/marker" && echo marker)" ""

summary
