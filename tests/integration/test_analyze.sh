# memsim-analyze: hand-built traces with known answers, bad input, and a
# real program's trace end to end.
. tests/integration/lib.sh

A=$BUILD/memsim-analyze
J=$JSONQ

# A trace with known answers: 3 allocations (one a realloc), a temporary,
# a leak of 300 bytes, peak heap 100 + 200 + 300 = 600 at t=4.
cat >"$TMP/known.jsonl" <<'EOT'
{"ev":"meta","t":0,"tid":1,"format":"memsim-trace","version":1,"pid":42,"ppid":1,"exe":"/bin/known","argv":["known"],"start_unix_ns":0,"page_size":4096,"strategy":"best-fit","device_size":1048576,"stack_depth":64,"mmap":true,"memsim_version":"0.1.0","parent_trace":null}
{"ev":"stack","t":1,"tid":1,"id":1,"frames":[4096]}
{"ev":"alloc","t":2,"tid":1,"fn":"malloc","addr":4096,"size":100,"align":16,"stack":1,"sim":268435456}
{"ev":"alloc","t":3,"tid":1,"fn":"malloc","addr":8192,"size":200,"align":16,"stack":1,"sim":null}
{"ev":"alloc","t":4,"tid":1,"fn":"malloc","addr":12288,"size":300,"align":16,"stack":1,"sim":null}
{"ev":"free","t":5,"tid":1,"fn":"free","addr":12288,"size":300,"stack":1}
{"ev":"realloc","t":6,"tid":1,"fn":"realloc","old_addr":4096,"addr":16384,"old_size":100,"size":300,"stack":1,"sim":null}     
{"ev":"sample","t":7,"tid":2,"rss":5000000,"hwm":6000000,"vm_size":1,"vm_peak":1,"tree_rss":9000000,"children":[]}
{"ev":"free","t":8,"tid":1,"fn":"free","addr":8192,"size":200,"stack":1}
{"ev":"end","t":9,"tid":1,"reason":"exit","status":0,"signal":null,"records":10,"dropped":0,"after_end":0,"unknown_frees":0,"live_allocations":1,"live_bytes":300,"stacks":1}
EOT
expect_status "a known trace" 0 "$A" --json "$TMP/known.jsonl"
cp "$TMP/out" "$TMP/known.json"
q() { "$J" "$1" <"$TMP/known.json"; }
expect_eq "allocations" "$(q summary.allocations)" 4
expect_eq "frees" "$(q summary.frees)" 2
expect_eq "peak heap" "$(q summary.peak_heap_bytes)" 600
expect_eq "peak heap when (4 ns)" "$(q summary.peak_heap_at_s | awk '{printf "%.0f", $1 * 1e9}')" 4
expect_eq "temporaries" "$(q summary.temporary_allocations)" 1
expect_eq "leaked bytes" "$(q summary.leaked_bytes)" 300
expect_eq "leaked allocations" "$(q summary.leaked_allocations)" 1
expect_eq "peak RSS (the HWM)" "$(q summary.peak_rss_bytes)" 6000000
expect_eq "peak tree RSS" "$(q summary.peak_tree_rss_bytes)" 9000000
expect_eq "end reason" "$(q summary.end_reason)" exit
expect_eq "a heap under 1 MiB is not replayed" "$(q strategies.#)" 0
expect_eq "replay_skipped says so" "$(q replay_skipped)" true
expect_status "-s replays a small heap" 0 "$A" --json -s best-fit "$TMP/known.jsonl"
expect_eq "replay field names" "$("$J" strategies.0.name <"$TMP/out")" best-fit
expect_eq "best fit's footprint: 100+200+300, then 304 after 112" \
    "$("$J" strategies.0.peak_footprint_bytes <"$TMP/out")" 624
expect_eq "no request failed" "$("$J" strategies.0.failed_requests <"$TMP/out")" 0
expect_status "all six" 0 "$A" --json -s first-fit,best-fit,worst-fit,next-fit,buddy,caching \
    "$TMP/known.jsonl"
cp "$TMP/out" "$TMP/six.json"
expect_eq "six strategies replayed" "$("$J" strategies.# <"$TMP/six.json")" 6
# Sorted best first: fewest failed requests, then the smallest peak footprint
# (first fit before best fit among equals: the table's order).
order=$(for i in 0 1 2 3 4 5; do printf '%s ' "$("$J" strategies.$i.name <"$TMP/six.json")"; done)
expect_eq "ranked by failures, then footprint" "$order" "first-fit best-fit worst-fit next-fit buddy caching "
expect_eq "the best is marked" "$("$J" strategies.0.best <"$TMP/six.json")" true
expect_eq "buddy: 400 B over the best" "$("$J" strategies.4.over_best_bytes <"$TMP/six.json")" 400
expect_eq "findings are an array" "$(q findings.#)" 0
expect_eq "one site: stack 1" "$(q sites.#)" 1
expect_eq "its calls" "$(q sites.0.calls)" 4
expect_eq "its bytes" "$(q sites.0.allocated_bytes)" 900
expect_eq "its peak: all of the peak heap" "$(q sites.0.peak_bytes)" 600
expect_eq "its leak" "$(q sites.0.leaked_bytes)" 300
expect_eq "its frame, in no module" "$(q sites.0.frames.0.address)" 4096

expect_status "text output" 0 "$A" "$TMP/known.jsonl"
expect_grep "text names the exe" "/bin/known (pid 42)" "$TMP/out"
expect_grep "text says the replay was skipped" "not replayed: the peak heap is under 1.00 MiB" "$TMP/out"
expect_status "text output, replayed" 0 "$A" -s best-fit,buddy "$TMP/known.jsonl"
expect_grep "text ranks best first" "best-fit *624 B *best" "$TMP/out"
expect_grep "text: buddy over the best" "buddy *1.00 KiB *+400 B" "$TMP/out"
# peak foot = live + int@peak + ext@peak: buddy's 1 KiB = 600 + 296 + 128
expect_grep "text: buddy's free bytes inside its footprint" \
    "buddy *1.00 KiB *+400 B *70.7% *296 B *128 B" "$TMP/out"
expect_grep "text: best fit's footprint is live and rounding" "best-fit *624 B *best *4.0% *24 B *0 B" "$TMP/out"
expect_grep "a legend of the columns" "J-W frag: peak foot" "$TMP/out"
# caching takes a 2 MiB segment for a 600 B heap: no five-digit percentage
expect_status "a huge J-W" 0 "$A" -s caching -d 64M "$TMP/known.jsonl"
expect_grep "as a multiple of the live bytes" "caching *2.00 MiB *best *3495x live" "$TMP/out"
# Progress: none when stderr is no terminal (and the run is short); with
# --progress a status line, redrawn with \r and erased at the end.
"$A" --no-replay "$TMP/known.jsonl" >/dev/null 2>"$TMP/p.err"
expect_eq "no progress off a terminal" "$(wc -c <"$TMP/p.err" | tr -d ' ')" 0
{
    head -n 1 "$TMP/known.jsonl"
    awk 'BEGIN { for (i = 0; i < 70000; i++) printf "{\"ev\":\"phase\",\"t\":%d,\"tid\":1,\"op\":\"end\"}\n", i }'
    tail -n 1 "$TMP/known.jsonl"
} >"$TMP/long.jsonl"
"$A" --progress --no-replay "$TMP/long.jsonl" >/dev/null 2>"$TMP/p.err"
expect_grep "--progress: a status line" "memsim-analyze: $TMP/long.jsonl: .*% (0.1 M records" "$TMP/p.err"
expect_eq "--progress: the line erased at the end" "$(tail -c 4 "$TMP/p.err" | od -An -c | tr -d ' \n')" '\r033[K'
"$A" --no-progress --no-replay "$TMP/long.jsonl" >/dev/null 2>"$TMP/p.err"
expect_eq "--no-progress: nothing about progress" "$(grep -c 'M records' "$TMP/p.err")" 0

expect_status "--no-replay" 0 "$A" --json --no-replay "$TMP/known.jsonl"
expect_eq "no strategies without replay" "$("$J" strategies.# <"$TMP/out")" 0
expect_status "--strategy" 0 "$A" --json -s buddy,caching "$TMP/known.jsonl"
expect_eq "only those" "$("$J" strategies.1.name <"$TMP/out")" caching

# Bad input: each gets a message with file and line, and is skipped.
head -n 4 "$TMP/known.jsonl" >"$TMP/bad.jsonl"
printf '%s\n' 'this is not json' '{"ev":"alloc","t":5,"tid":1,"fn":"malloc","size":8}' \
    '{"ev":"teleport","t":6,"tid":1}' \
    '{"ev":"free","t":7,"tid":1,"fn":"free","addr":999999,"size":8,"stack":1}' >>"$TMP/bad.jsonl"
printf '%s' '{"ev":"free","t":8,"tid":1,"fn":"fr' >>"$TMP/bad.jsonl"
expect_status "bad lines are skipped" 0 "$A" --json "$TMP/bad.jsonl"
expect_grep "invalid JSON named by line" "bad.jsonl:5: not a JSON object" "$TMP/err"
expect_grep "a missing field named" "bad.jsonl:6: missing field \"addr\"" "$TMP/err"
expect_grep "a truncated last line" "bad.jsonl:9: a truncated last line" "$TMP/err"
expect_grep "no end: truncated" "no end record: the trace is truncated" "$TMP/err"
expect_eq "bad lines counted" "$("$J" summary.bad_lines <"$TMP/out")" 3
expect_eq "unknown records counted" "$("$J" summary.unknown_records <"$TMP/out")" 1
expect_eq "a free of an unknown address counted" "$("$J" summary.unknown_frees <"$TMP/out")" 1
expect_eq "truncated" "$("$J" summary.truncated <"$TMP/out")" true
expect_eq "analyzed up to the break" "$("$J" summary.allocations <"$TMP/out")" 2

sed 's/"version":1/"version":7/' "$TMP/known.jsonl" >"$TMP/newer.jsonl"
expect_status "a newer version is read" 0 "$A" "$TMP/newer.jsonl"
expect_grep "and said" "version 7 is newer than this analyzer's 5" "$TMP/err"

head -n 5 "$TMP/known.jsonl" >"$TMP/cut.jsonl"
head -c 4096 /dev/zero >>"$TMP/cut.jsonl"
expect_status "a NUL tail (SIGKILL)" 0 "$A" --json "$TMP/cut.jsonl"
expect_grep "is named" "cut.jsonl:6: the trace stops here" "$TMP/err"
expect_eq "and read up to it" "$("$J" summary.allocations <"$TMP/out")" 3

: >"$TMP/empty.jsonl"
expect_status "an empty file" 2 "$A" "$TMP/empty.jsonl"
expect_grep "is named" "empty.jsonl: empty trace" "$TMP/err"
# Input that is not a trace: one line naming the file, and status 2.
head -c 100000 /dev/urandom >"$TMP/random.bin"
printf '{"ev":"alloc","t":1,"tid":1,"addr":1,"size":1}\n' >"$TMP/headless.jsonl"
for f in /etc/passwd /dev/zero "$TMP/random.bin" "$TMP/headless.jsonl"; do
    expect_status "not a trace: $f" 2 timeout 20 "$A" "$f"
    expect_one_line "one line for $f" "$TMP/err"
    expect_grep "naming it: $f" "$f: not a memsim trace" "$TMP/err"
    expect_eq "no report for $f" "$(wc -c <"$TMP/out" | tr -d ' ')" 0
done
expect_status "a missing file" 2 "$A" "$TMP/nope.jsonl"
expect_one_line "one line for it" "$TMP/err"
expect_status "no trace" 2 "$A"
expect_status "a bad strategy" 2 "$A" -s fastest "$TMP/known.jsonl"
expect_one_line "one line for it" "$TMP/err"
expect_status "a bad --fail-on" 2 "$A" --fail-on loud "$TMP/known.jsonl"
expect_status "a directory without traces" 2 "$A" "$TMP/a-dir-$$" 
mkdir -p "$TMP/empty-dir"
expect_status "an empty directory" 2 "$A" "$TMP/empty-dir"
expect_grep "is named" "holds no memsim traces" "$TMP/err"
expect_status "--help" 0 "$A" --help

# A real program, end to end (not under SANITIZE=1: no libmemsim.so).
if [ "${SANITIZE:-}" != 1 ]; then
    D=$TMP/run
    expect_status "det_heap under memsim run" 0 "$MEMSIM" run --out "$D" -- "$BUILD/programs/det_heap"
    expect_status "its directory analyzed" 0 "$A" --json "$D"
    T=$(ls "$D"/memsim.det_heap.*.jsonl)
    check=$("$BUILD/tracecheck" "$T")
    allocs=$(echo "$check" | sed -n 's/.* allocs=\([0-9]*\).*/\1/p')
    reallocs=$(echo "$check" | sed -n 's/.* reallocs=\([0-9]*\).*/\1/p')
    peak=$(echo "$check" | sed -n 's/.* peak=\([0-9]*\).*/\1/p')
    expect_eq "allocations agree with the trace" "$("$J" summary.allocations <"$TMP/out")" "$((allocs + reallocs))"
    expect_eq "peak heap agrees with the trace" "$("$J" summary.peak_heap_bytes <"$TMP/out")" "$peak"
    # stdout's buffer is libc's one-time allocation: suppressed by default, counted apart.
    expect_eq "the leak, stdout's buffer suppressed" "$("$J" summary.leaked_bytes <"$TMP/out")" 12345
    expect_eq "stdout's buffer counted as suppressed" \
        "$("$J" summary.suppressed_leaked_bytes <"$TMP/out")/$("$J" summary.suppressed_leaked_allocations <"$TMP/out")" 4096/1
    expect_status "--no-default-suppressions" 0 "$A" --json --no-default-suppressions "$D"
    expect_eq "the leak and stdout's buffer" "$("$J" summary.leaked_bytes <"$TMP/out")" "$((12345 + 4096))"
    expect_eq "nothing suppressed" "$("$J" summary.suppressed_leaked_bytes <"$TMP/out")" 0
    expect_eq "the process is listed once" "$("$J" processes.# <"$TMP/out" 2>/dev/null || echo single)" single
    expect_eq "every strategy replayed" "$("$J" strategies.# <"$TMP/out")" 6
    cp "$TMP/out" "$TMP/det.json"

    # The address space runs out while the analysis names frames
    # (libas-squeeze.so fills what ulimit -v allows at the first line
    # lookup, leaving 64 KiB).  Before: SIGSEGV, libdw's stack could not
    # grow; with the stack mapped ahead, libdw's exit on a failed malloc,
    # the report lost.  Now the report is whole, the frames from there
    # on have no names, and one line says why.
    # (Without the default suppressions: they match frames by name, and
    # the squeeze takes the names away.)
    (ulimit -v 400000; LD_PRELOAD="$BUILD/libas-squeeze.so" "$A" --json --no-default-suppressions "$T") \
        >"$TMP/sq.json" 2>"$TMP/sq.err"
    expect_eq "squeezed address space: exit 0" "$?" 0
    expect_one_line "squeezed address space: one line" "$TMP/sq.err"
    expect_grep "squeezed address space: the line names the cause" \
        "^memsim-analyze: out of memory for symbols (under ulimit -v or -d): frames from here on print as module+0x…$" \
        "$TMP/sq.err"
    for k in summary.allocations summary.peak_heap_bytes summary.leaked_bytes sites.# \
        sites.0.allocated_bytes strategies.#; do
        expect_eq "squeezed address space: $k as without the limit" \
            "$("$J" "$k" <"$TMP/sq.json")" "$("$J" "$k" <"$TMP/det.json")"
    done
    # The first lookup (main) was made before the squeeze took hold.
    expect_eq "squeezed address space: main named, later frames not" \
        "$("$J" sites.0.frames.0.function <"$TMP/sq.json") $("$J" sites.1.frames.0.function <"$TMP/sq.json" 2>/dev/null)" \
        "main null"
fi

# (Not under SANITIZE=1: no libmemsim.so.)
if [ "${SANITIZE:-}" != 1 ]; then
# A process tree: one line per process, heaviest first
# (peak heap + peak mapped); full reports only above 1% of the tree's.
P=$BUILD/programs
T=$TMP/tree-run
"$BUILD/memsim" run --out "$T" -- sh -c "$P/touch_mb 20 100 && $P/touch_mb 2 0" >/dev/null 2>&1
expect_status "a tree analyzed" 0 "$A" --no-replay --sites 0 "$T"
cp "$TMP/out" "$TMP/tree.txt"
expect_grep "the tree is called one" "^process tree: 3 processes, peak tree RSS" "$TMP/tree.txt"
expect_grep "the command that was run, second" "^command: sh -c $P/touch_mb 20 100 && $P/touch_mb 2 0\$" \
    "$(sed -n 2p "$TMP/tree.txt" >"$TMP/tree.l2"; echo "$TMP/tree.l2")"
# The program the user ran comes first (the root, sh), then the others,
# heaviest first; the process table last, heaviest first under each parent.
expect_eq "the program run first, then the others heaviest first" \
    "$(grep '^== ' "$TMP/tree.txt" | sed 's/^== [^ ]*\/\([^/ ]*\) .*/\1/' | tr '\n' ' ')" \
    "dash touch_mb touch_mb "
expect_eq "then the 20 MiB touch_mb, then the 2 MiB one" \
    "$(grep -A2 '^== .*touch_mb' "$TMP/tree.txt" | sed -n 's/^  command: *//p' | tr '\n' '/')" \
    "$P/touch_mb 20 100/$P/touch_mb 2 0/"
table=$(sed -n '/^process table/,$p' "$TMP/tree.txt")
expect_eq "the table last: sh, then its children heaviest first" \
    "$(echo "$table" | sed -n '3,5p' | awk '{print $3 "/" $5 $6}' | tr '\n' ' ')" \
    "dash/$(echo "$table" | sed -n '3p' | awk '{print $5 $6}') touch_mb/20.0MiB touch_mb/2.00MiB "
expect_eq "the children indented under sh" \
    "$(echo "$table" | sed -n '4,5p' | cut -c 21-26 | tr '\n' '/')" "  touc/  touc/"
expect_status "--all" 0 "$A" --no-replay --sites 0 --all "$T"
expect_eq "--all: three full reports" "$(grep -c '^== ' "$TMP/out")" 3
sh_pid=$(echo "$table" | sed -n '3p' | awk '{print $1}')
expect_status "--pid" 0 "$A" --no-replay --sites 0 --pid "$sh_pid" "$T"
expect_eq "--pid: its report only" "$(grep -c "^== .*(pid $sh_pid)" "$TMP/out")/$(grep -c '^== ' "$TMP/out")" 1/1
expect_status "--exe" 0 "$A" --no-replay --sites 0 --exe touch_mb "$T"
expect_eq "--exe: both touch_mb" "$(grep -c '^== .*touch_mb' "$TMP/out")/$(grep -c '^== ' "$TMP/out")" 2/2
expect_status "a bad --pid" 2 "$A" --pid x "$T"
expect_one_line "one line for it" "$TMP/err"
# One peak RSS (point 6): the tree's is never below a process's own, and it
# takes memsim run's polls (resources.json) into account.
expect_status "the tree as JSON" 0 "$A" --json --no-replay --sites 0 "$T"
tree_peak=$("$J" tree.peak_tree_rss_bytes <"$TMP/out")
run_peak=$("$J" peak_tree_rss_bytes <"$T/resources.json")
low=0
for i in 0 1 2; do
    p=$("$J" processes.$i.summary.peak_rss_bytes <"$TMP/out")
    [ "${p:-0}" -gt "${tree_peak:-0}" ] && low=$((low + 1))
done
expect_eq "no process's peak RSS above the tree's" "$low" 0
expect_eq "the tree's peak at least memsim run's" "$([ "${tree_peak:-0}" -ge "${run_peak:-1}" ] && echo yes)" yes
fi
# Unrelated traces in one directory are not called a tree.
mkdir -p "$TMP/strangers"
cp "$TMP/known.jsonl" "$TMP/strangers/memsim.known.42.0.jsonl"
sed 's/"pid":42,"ppid":1/"pid":43,"ppid":2/' "$TMP/known.jsonl" >"$TMP/strangers/memsim.known.43.0.jsonl"
expect_status "unrelated traces" 0 "$A" --no-replay "$TMP/strangers"
expect_grep "are not a tree" "^2 traces of unrelated processes" "$TMP/out"

# The strategies replayed in rounds: MEMSIM_REPLAY_WIDTH of them at once,
# the others afterwards from a spool of the operations.  A churn of
# 300,000 records (reallocs, aligned and empty requests, allocations at
# a live address, frees of none, samples) on a 4 MiB device, where
# worst fit and buddy run out, gives the same report whatever the width;
# and where the spool cannot be made (no such TMPDIR) or written (the
# file size limit, past its first MiB), one line says so and the report
# is the same again.
cat >"$TMP/churn.awk" <<'EOT'
function rnd() { seed = (seed * 1103515245 + 12345) % 2147483648; return int(seed / 65536) }
BEGIN {
    seed = 7; t = 0; next_addr = 65536; live_n = 0; recs = 0
    printf "{\"ev\":\"meta\",\"t\":0,\"tid\":1,\"format\":\"memsim-trace\",\"version\":1,\"pid\":42,\"ppid\":1,\"exe\":\"/bin/churn\",\"argv\":[\"churn\"],\"start_unix_ns\":0,\"page_size\":4096,\"strategy\":\"best-fit\",\"device_size\":%d,\"stack_depth\":64,\"mmap\":true,\"memsim_version\":\"0.1.0\",\"parent_trace\":null}\n", DEV
    print "{\"ev\":\"stack\",\"t\":1,\"tid\":1,\"id\":1,\"frames\":[4096]}"
    for (i = 0; i < N; i++) {
        t++
        k = rnd() % SLOTS; r = rnd() % 100
        if (i % 997 == 0) {
            printf "{\"ev\":\"sample\",\"t\":%d,\"tid\":2,\"rss\":5000000,\"hwm\":6000000,\"vm_size\":1,\"vm_peak\":1,\"tree_rss\":9000000,\"children\":[]}\n", t
        } else if (i % 1499 == 0) {
            printf "{\"ev\":\"free\",\"t\":%d,\"tid\":1,\"fn\":\"free\",\"addr\":%d,\"size\":16,\"stack\":1}\n", t, 16 + 32 * i
        } else if (k in addr) {
            if (r < 60) {
                printf "{\"ev\":\"free\",\"t\":%d,\"tid\":1,\"fn\":\"free\",\"addr\":%d,\"size\":%d,\"stack\":1}\n", t, addr[k], size[k]
                delete addr[k]
            } else if (r < 99 || rnd() % 20) {
                s = 1 + rnd() % 6000; a = next_addr; next_addr += 8192
                printf "{\"ev\":\"realloc\",\"t\":%d,\"tid\":1,\"fn\":\"realloc\",\"old_addr\":%d,\"addr\":%d,\"old_size\":%d,\"size\":%d,\"stack\":1,\"sim\":null}\n", t, addr[k], a, size[k], s
                addr[k] = a; size[k] = s
            } else {  # allocated again at a live address, no free between
                s = 1 + rnd() % 6000
                printf "{\"ev\":\"alloc\",\"t\":%d,\"tid\":1,\"fn\":\"malloc\",\"addr\":%d,\"size\":%d,\"align\":16,\"stack\":1,\"sim\":null}\n", t, addr[k], s
                size[k] = s
            }
        } else {
            s = (r < 3) ? 0 : 1 + rnd() % 6000
            al = (r < 90) ? 16 : (r < 97) ? 64 : 4096
            a = next_addr; next_addr += 8192
            printf "{\"ev\":\"alloc\",\"t\":%d,\"tid\":1,\"fn\":\"malloc\",\"addr\":%d,\"size\":%d,\"align\":%d,\"stack\":1,\"sim\":null}\n", t, a, s, al
            addr[k] = a; size[k] = s
        }
    }
    printf "{\"ev\":\"end\",\"t\":%d,\"tid\":1,\"reason\":\"exit\",\"status\":0,\"signal\":null,\"records\":%d,\"dropped\":0,\"after_end\":0,\"unknown_frees\":0,\"live_allocations\":0,\"live_bytes\":0,\"stacks\":1}\n", t + 1, N + 3
}
EOT
awk -v N=300000 -v SLOTS=1500 -v DEV=4194304 -f "$TMP/churn.awk" >"$TMP/churn.jsonl"
mask() { sed 's/"events_per_s": *[0-9.e+-]*/"events_per_s": -/g' "$1"; }
expect_status "churn, every strategy at once" 0 env MEMSIM_REPLAY_WIDTH=0 "$A" --json "$TMP/churn.jsonl"
mask "$TMP/out" >"$TMP/churn.0"
expect_eq "churn: worst fit and buddy run out" \
    "$("$J" strategies.4.failed_requests <"$TMP/out") $("$J" strategies.5.failed_requests <"$TMP/out")" \
    "922 2383"
"$A" "$TMP/churn.jsonl" >"$TMP/churn.0.txt" 2>&1
for w in 1 2 6; do
    expect_status "churn, $w at once" 0 env MEMSIM_REPLAY_WIDTH=$w "$A" --json "$TMP/churn.jsonl"
    expect_eq "churn, $w at once: the same JSON" "$(mask "$TMP/out" | cmp - "$TMP/churn.0" && echo same)" same
    expect_eq "churn, $w at once: nothing said" "$(cat "$TMP/err")" ""
    MEMSIM_REPLAY_WIDTH=$w "$A" "$TMP/churn.jsonl" >"$TMP/churn.txt" 2>&1
    expect_eq "churn, $w at once: the same text" "$(cmp "$TMP/churn.txt" "$TMP/churn.0.txt" && echo same)" same
done
expect_status "churn, no spool: no such TMPDIR" 0 \
    env MEMSIM_REPLAY_WIDTH=1 TMPDIR="$TMP/none" "$A" --json "$TMP/churn.jsonl"
expect_one_line "no spool: one line" "$TMP/err"
expect_grep "no spool: it names the directory and the error" \
    "replay: cannot make the spool of the strategies' later rounds in $TMP/none: No such file or directory: all replayed at once$" \
    "$TMP/err"
expect_eq "no spool: the same JSON" "$(mask "$TMP/out" | cmp - "$TMP/churn.0" && echo same)" same
(trap '' XFSZ; ulimit -f 100; MEMSIM_REPLAY_WIDTH=2 exec "$A" --json "$TMP/churn.jsonl") \
    >"$TMP/out" 2>"$TMP/err"
expect_eq "spool past the file size limit: exit 0" "$?" 0
expect_one_line "spool past the file size limit: one line" "$TMP/err"
expect_grep "spool past the file size limit: it says so" \
    "replay: cannot write the spool of the strategies' later rounds in .*: File too large: all replayed at once$" \
    "$TMP/err"
expect_eq "spool past the file size limit: the same JSON" \
    "$(mask "$TMP/out" | cmp - "$TMP/churn.0" && echo same)" same

# The fuzzer's seeds, found bugs among them, go through the whole
# analyzer (under SANITIZE=1 a read of freed memory fails here): each
# ends with a report or a one-line complaint, never a crash.
crashed=""
for f in tests/fuzz/corpus/*; do
    "$A" --sites 5 "$f" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    if [ "$rc" -gt 2 ] || grep -q 'Sanitizer\|runtime error' "$TMP/err"; then
        crashed="$crashed $(basename "$f"):$rc"
    fi
done
expect_eq "every fuzz seed analyzed without a crash" "$crashed" ""

summary
