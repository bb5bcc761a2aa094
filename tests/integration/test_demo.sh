# make demo: scripts/demo.sh runs to the end, and the bundled program
# (examples/demo_workload.c) gives every kind of answer: fragmentation, a
# transient spike, the drift of the live heap, leaks, phases.
. tests/integration/lib.sh

if [ "${SANITIZE:-}" = 1 ]; then
    echo "# skip - make demo: libmemsim.so is not built with SANITIZE=1"
    summary
    exit $?
fi

A=$BUILD/memsim-analyze
J=$JSONQ
D=$TMP/demo
# What a user gets: the default, compressed trace (lib.sh asks for plain).
unset MEMSIM_COMPRESS

expect_status "scripts/demo.sh exits 0" 0 sh scripts/demo.sh "$BUILD" "$D"
cp "$TMP/out" "$TMP/demo.txt"
expect_grep "it simulates every strategy" "caching " "$TMP/demo.txt"
expect_grep "it runs the demo workload" "demo_workload: warmup, fragment" "$TMP/demo.txt"
expect_grep "it counts the compressed trace's records, compact ones too" \
    "^its trace (memsim\.demo_workload\.[0-9]*\.0\.jsonl\.zst, [0-9]* bytes), [0-9]* records: [0-9]* alloc, [0-9]* free" \
    "$TMP/demo.txt"
expect_grep "it prints the analysis, in words" "persistent drift in the live heap (" "$TMP/demo.txt"
expect_eq "no machine token in the text report" "$(grep -c 'persistent_drift\|transient_spike\|fragmentation_like\|heap_live' "$TMP/demo.txt")" 0
expect_grep "with the strategy replay, ranked" "over best" "$TMP/demo.txt"
expect_grep "the mapped-memory story" "mapped: *1 mmap call; peak 352 MiB" "$TMP/demo.txt"
expect_grep "the spike attributed to its mapping" "file mappings made at spike (demo_workload.c:" "$TMP/demo.txt"
# The real allocators beside the strategies (one not installed here is a
# row naming its package: the ranking and the switching line stay).
expect_grep "the real allocators' table" "^  allocators (the trace's [0-9]* heap operations" "$TMP/demo.txt"
expect_grep "glibc's row, replayed" "^    glibc  *[0-9.]* [KMG]iB " "$TMP/demo.txt"
expect_grep "allocators and strategies ranked together" "ranking (allocators by peak RSS, strategies by peak footprint" "$TMP/demo.txt"
expect_grep "what switching from glibc would save" "^  switching: *the program ran with glibc (" "$TMP/demo.txt"
expect_grep "the page draws them" 'id="allocators"' "$D/report.html"
# make demo builds what the demo runs: memsim-replay too (it used not to,
# and the allocators' rows all failed after a fresh clone's make demo).
make -s -n -B BUILD="$TMP/mk" demo >"$TMP/make-n" 2>&1
expect_grep "make demo builds memsim-replay" "-o $TMP/mk/memsim-replay " "$TMP/make-n"

expect_grep "it writes the page and says where" "in any browser: $D/report.html" "$TMP/demo.txt"
# Without DIR, the page it names is still there once it has ended (it
# used to live in a temporary directory removed at exit).
expect_status "scripts/demo.sh without DIR exits 0" 0 sh scripts/demo.sh "$BUILD"
page=$(sed -n 's/^in any browser: //p' "$TMP/out")
expect_eq "without DIR: the page it names is in BUILD/demo" "$page" "$(cd "$BUILD" && pwd)/demo/report.html"
expect_eq "without DIR: the page is there after it ended" "$(head -c 15 "${page:-/dev/null}" 2>/dev/null)" "<!DOCTYPE html>"
expect_eq "the page is there" "$(head -c 15 "$D/report.html" 2>/dev/null)" "<!DOCTYPE html>"
expect_status "the run's directory analyzed" 0 "$A" --json --no-replay "$D/run"
cp "$TMP/out" "$TMP/demo.json"
q() { "$J" "$1" <"$TMP/demo.json"; }

# Every finding as "classification series phase", one a line.
n=$(q findings.#)
i=0
: >"$TMP/findings"
while [ "$i" -lt "${n:-0}" ]; do
    echo "$(q findings.$i.classification) $(q findings.$i.series) $(q findings.$i.phase 2>/dev/null)" \
        >>"$TMP/findings"
    i=$((i + 1))
done
expect_grep "persistent_drift of the live heap (the leak)" "^persistent_drift heap_live" "$TMP/findings"
leaked=$(q summary.leaked_allocations)
if [ "${leaked:-0}" -ge 1200 ]; then pass "leaks counted: $leaked (the leak phase's 1200 blocks)"; else
    fail "leaks counted" "$leaked leaked allocations, want at least 1200"
fi
expect_eq "the process exited" "$(q summary.end_reason)" exit
expect_eq "four phases marked (begin and end each)" "$(q summary.records_by_type.phase)" 8

# The spike counts on any machine: its 352 MiB is most of the process's
# peak RSS, whatever the machine's memory.  It is the program's own
# mapping (the gap's spike and the mappings' are one finding, the
# mappings'), and fragmentation is the allocator's (reserved − in use),
# which the gap leaves out.
expect_grep "transient_spike of the mappings, in the spike phase" "^transient_spike mapped spike$" "$TMP/findings"
expect_grep "fragmentation_like of the allocator, in the fragment phase" "^fragmentation_like heap_live fragment$" "$TMP/findings"

summary
