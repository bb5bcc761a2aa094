# memsim against heaptrack, the profiler it is measured against, on one deterministic
# program: the same allocation calls and the same peak heap.  heaptrack
# adds one allocation call of its own and 72,704 bytes (its libstdc++
# pool) to every C program it traces.
. tests/integration/lib.sh

if [ "${SANITIZE:-}" = 1 ]; then
    echo "# skip - heaptrack comparison: libmemsim.so is not built with SANITIZE=1"
    summary
    exit $?
fi
if ! command -v heaptrack >/dev/null 2>&1 || ! command -v heaptrack_print >/dev/null 2>&1; then
    echo "# skip - heaptrack comparison: heaptrack is not installed (apt-get install heaptrack)"
    summary
    exit $?
fi

PROG=$BUILD/programs/det_heap
mkdir -p "$TMP/m"
expect_status "det_heap under memsim" 0 env LD_PRELOAD="$BUILD/libmemsim.so" MEMSIM_OUTPUT="$TMP/m" "$PROG"
line=$("$BUILD/tracecheck" "$TMP"/m/memsim.det_heap.*.jsonl)
allocs=$(echo "$line" | sed -n 's/.* allocs=\([0-9]*\).*/\1/p')
reallocs=$(echo "$line" | sed -n 's/.* reallocs=\([0-9]*\).*/\1/p')
peak=$(echo "$line" | sed -n 's/.* peak=\([0-9]*\).*/\1/p')

expect_status "det_heap under heaptrack" 0 heaptrack -o "$TMP/ht" "$PROG"
heaptrack_print "$TMP"/ht.zst >"$TMP/ht.txt" 2>/dev/null
ht_calls=$(sed -n 's/^calls to allocation functions: \([0-9]*\).*/\1/p' "$TMP/ht.txt")
ht_peak=$(sed -n 's/^peak heap memory consumption: \(.*\)$/\1/p' "$TMP/ht.txt")

# heaptrack counts realloc as an allocation call, as memsim's realloc records.
expect_eq "allocation calls agree (heaptrack adds its own one)" \
    "$((allocs + reallocs + 1))" "$ht_calls"
# heaptrack prints the peak rounded to three digits (2.11M): within 1%.
ht_bytes=$(echo "$ht_peak" | awk '{v = $1 + 0; u = substr($1, length($1));
    if (u == "K") v *= 1000; if (u == "M") v *= 1000000; if (u == "G") v *= 1000000000;
    printf "%d", v}')
ours=$((peak + 72704))
within=$(awk -v a="$ours" -v b="$ht_bytes" 'BEGIN { d = a - b; if (d < 0) d = -d;
    print (d <= b / 100) ? "yes" : "no (" a " vs " b ")" }')
expect_eq "peak heap agrees within 1% (memsim $peak + 72704, heaptrack $ht_peak)" "$within" yes

# The same through memsim-analyze: calls, peak heap, leaks, temporaries
# (all leaks: heaptrack's own list does not leave out stdio's buffer,
# memsim's built-in suppressions do).
expect_status "det_heap's trace analyzed" 0 "$BUILD/memsim-analyze" --json --no-replay --no-default-suppressions \
    "$TMP"/m/memsim.det_heap.*.jsonl
an_calls=$("$JSONQ" summary.allocations <"$TMP/out")
an_peak=$("$JSONQ" summary.peak_heap_bytes <"$TMP/out")
an_leak=$("$JSONQ" summary.leaked_bytes <"$TMP/out")
an_temp=$("$JSONQ" summary.temporary_allocations <"$TMP/out")
ht_leak=$(sed -n 's/^total memory leaked: \(.*\)$/\1/p' "$TMP/ht.txt" | awk '{v = $1 + 0;
    u = substr($1, length($1)); if (u == "K") v *= 1000; if (u == "M") v *= 1000000; printf "%d", v}')
ht_temp=$(sed -n 's/^temporary memory allocations: \([0-9]*\).*/\1/p' "$TMP/ht.txt")
expect_eq "analyzer: allocation calls agree" "$((an_calls + 1))" "$ht_calls"
expect_eq "analyzer: peak heap agrees within 1%" "$(awk -v a="$((an_peak + 72704))" -v b="$ht_bytes" \
    'BEGIN { d = a - b; if (d < 0) d = -d; print (d <= b / 100) ? "yes" : "no" }')" yes
expect_eq "analyzer: leaked bytes agree within 1% ($an_leak vs heaptrack's $ht_leak)" \
    "$(awk -v a="$an_leak" -v b="$ht_leak" 'BEGIN { d = a - b; if (d < 0) d = -d; print (d <= b / 100) ? "yes" : "no" }')" yes
expect_eq "analyzer: temporary allocations agree" "$an_temp" "$ht_temp"

# Temporaries as heaptrack counts them: tests/programs/temps.c
# holds each pattern that tells its rule from looser ones, 52 in all.
PROG=$BUILD/programs/temps
mkdir -p "$TMP/t"
expect_status "temps under memsim" 0 env LD_PRELOAD="$BUILD/libmemsim.so" MEMSIM_OUTPUT="$TMP/t" "$PROG"
"$BUILD/memsim-analyze" --json --no-replay "$TMP"/t/memsim.temps.*.jsonl >"$TMP/t.json"
expect_eq "temps: memsim counts the 52 temporaries" "$("$JSONQ" summary.temporary_allocations <"$TMP/t.json")" 52
expect_status "temps under heaptrack" 0 heaptrack -o "$TMP/htt" "$PROG"
heaptrack_print "$TMP"/htt.zst >"$TMP/htt.txt" 2>/dev/null
expect_eq "temps: heaptrack counts the same 52" \
    "$(sed -n 's/^temporary memory allocations: \([0-9]*\).*/\1/p' "$TMP/htt.txt")" 52

# A real program: sqlite3 inserts (bench/inputs.sh), where the looser
# rule counted three times heaptrack's figure.  heaptrack's own call is
# a temporary too.
if command -v sqlite3 >/dev/null 2>&1; then
    sh bench/inputs.sh "$TMP/in" 10 2000 >/dev/null
    mkdir -p "$TMP/s"
    env LD_PRELOAD="$BUILD/libmemsim.so" MEMSIM_OUTPUT="$TMP/s" sqlite3 :memory: \
        <"$TMP/in/inserts.sql" >"$TMP/s.out" 2>&1
    heaptrack -o "$TMP/hts" sqlite3 :memory: <"$TMP/in/inserts.sql" >/dev/null 2>&1
    heaptrack_print "$TMP"/hts.zst >"$TMP/hts.txt" 2>/dev/null
    "$BUILD/memsim-analyze" --json --no-replay "$TMP"/s/memsim.sqlite3.*.jsonl >"$TMP/s.json"
    ht_temp=$(sed -n 's/^temporary memory allocations: \([0-9]*\).*/\1/p' "$TMP/hts.txt")
    an_temp=$("$JSONQ" summary.temporary_allocations <"$TMP/s.json")
    expect_eq "sqlite3: temporaries agree with heaptrack's (less its own one)" \
        "$((an_temp + 1))" "$ht_temp"
    expect_eq "sqlite3: allocation calls agree (less heaptrack's own one)" \
        "$(($("$JSONQ" summary.allocations <"$TMP/s.json") + 1))" \
        "$(sed -n 's/^calls to allocation functions: \([0-9]*\).*/\1/p' "$TMP/hts.txt")"
else
    echo "# skip - sqlite3 against heaptrack: sqlite3 is not installed (apt-get install sqlite3)"
fi

summary
