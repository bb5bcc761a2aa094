# The findings on planted patterns (tests/programs/shapes.c): every
# planted spike, drift and fragmentation is found with its class and
# series, its time range within two samples of when the program really
# made it (its phase records say when), its height within 10%, and
# nothing else is reported (tests/integration/shapes_checks.sh).
# (The old classifiers, a z-score and one line over the whole run, found
# nothing in long_spike, two_spikes and heap_gap, fragmentation instead
# of warmup_drift's drift, and noisy_drift 30% too high.)
#
# The findings are checked on recorded traces, tests/data/shapes/
# PATTERN-MS.jsonl.zst (every pattern at MEMSIM_SAMPLE_MS 100 and 20,
# re-recorded by tests/tools/record_shapes.sh): the program is driven by
# wall time, so on a loaded machine a live run's series, and so its
# findings, change; on a fixed trace the analysis gives the same findings
# every run.  The live runs of every pattern are in the bench
# (bench/shapes.sh).  Live here: one pattern traced, its trace well-formed
# with its phases and samples, and analyzed; nothing that depends on time.
. tests/integration/lib.sh
. tests/integration/shapes_checks.sh

A=$BUILD/memsim-analyze
J=$JSONQ
DATA=tests/data/shapes

for p in $SHAPES; do
    for ms in $SHAPE_MS; do
        if [ -s "$DATA/$p-$ms.jsonl.zst" ]; then
            check_shape "$p" "$ms" "$DATA/$p-$ms.jsonl.zst"
        else
            fail "$p at $ms ms" "no $DATA/$p-$ms.jsonl.zst (tests/tools/record_shapes.sh records it)"
        fi
    done
done

# ---- live: short_spike traced --------------------------------------------------------

if [ "${SANITIZE:-}" = 1 ]; then
    echo "# skip - short_spike traced: libmemsim.so is not built with SANITIZE=1"
    summary
    exit $?
fi

d=$TMP/live
mkdir -p "$d"
env LD_PRELOAD="$BUILD/libmemsim.so" MEMSIM_OUTPUT="$d" MEMSIM_SAMPLE_MS=20 \
    "$BUILD/programs/shapes" short_spike >"$d/stdout" 2>"$d/stderr"
expect_eq "short_spike traced: exit 0" "$?" 0
expect_eq "short_spike traced: one line out" "$(wc -l <"$d/stdout")" 1
expect_eq "short_spike traced: nothing from memsim on stderr" "$(cat "$d/stderr")" ""
TRACE=$(ls "$d"/memsim.shapes.*.jsonl 2>/dev/null | head -n 1)
expect_status "short_spike traced: a well-formed trace" 0 "$BUILD/tracecheck" "${TRACE:-$d/none}"
if [ -n "$TRACE" ]; then
    # each phase opened and closed, in the program's order
    expect_eq "short_spike traced: its phases" \
        "$(grep '"ev":"phase"' "$TRACE" | grep -o '"op":"[a-z]*"\(,"name":"[a-z0-9]*"\)\?' | tr -d '"' | tr '\n' ' ')" \
        "op:begin,name:up1 op:end op:begin,name:down1 op:end "
    n=$(grep -c '"ev":"sample"' "$TRACE")
    if [ "$n" -ge 2 ]; then pass "short_spike traced: $n samples"; else
        fail "short_spike traced: samples" "$n, want 2 or more"
    fi
fi
expect_status "short_spike traced: analyzed" 0 "$A" --json --no-replay "${TRACE:-$d/none}"
expect_grep "short_spike traced: the analysis lists its findings" '"findings":' "$TMP/out"

summary
