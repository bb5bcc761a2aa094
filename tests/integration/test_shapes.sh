# The findings on planted patterns (tests/programs/shapes.c), each traced
# at the default sampling interval and at 20 ms: every planted spike,
# drift and fragmentation is found with its class and series, its time
# range within two samples of when the program really made it (its phase
# records say when), its height within 10%, and nothing else is reported.
# (The old classifiers, a z-score and one line over the whole run, found
# nothing in long_spike, two_spikes and heap_gap, fragmentation instead
# of warmup_drift's drift, and noisy_drift 30% too high.)
. tests/integration/lib.sh

if [ "${SANITIZE:-}" = 1 ]; then
    echo "# skip - planted patterns: libmemsim.so is not built with SANITIZE=1"
    summary
    exit $?
fi

A=$BUILD/memsim-analyze
J=$JSONQ
MB=1048576

# phase TRACE NAME begin|end: the seconds of the phase record (begin:
# the one that opens NAME; end: the first end after it).
phase() {
    awk -v name="$2" -v want="$3" '
        /"ev":"phase"/ {
            t = $0; sub(/.*"t":/, "", t); sub(/,.*/, "", t)
            if (index($0, "\"op\":\"begin\"") && index($0, "\"name\":\"" name "\"")) { open = 1
                if (want == "begin") { printf "%.6f\n", t / 1e6; exit } }
            else if (open && index($0, "\"op\":\"end\"") && want == "end") { printf "%.6f\n", t / 1e6; exit }
        }' "$1"
}

# within X LO HI: yes when LO <= X <= HI
within() { awk -v x="$1" -v lo="$2" -v hi="$3" 'BEGIN { print (x >= lo && x <= hi) ? "yes" : "no" }'; }

# run PATTERN MS: traces it; its findings as lines "class series bytes
# start end" in $TMP/PATTERN-MS.found.
run() {
    d=$TMP/$1-$2
    mkdir -p "$d"
    env LD_PRELOAD="$BUILD/libmemsim.so" MEMSIM_OUTPUT="$d" MEMSIM_SAMPLE_MS="$2" \
        "$BUILD/programs/shapes" "$1" >"$d/stdout" 2>"$d/stderr"
    TRACE=$(ls "$d"/memsim.shapes.*.jsonl 2>/dev/null | head -n 1)
    # two samples: of MS, or of the trace's own spacing (its median) when
    # a busy machine made the recorder sample less often
    gaps=$(awk '/"ev":"sample"/ { t = $0; sub(/.*"t":/, "", t); sub(/,.*/, "", t)
            if (n++) print (t - last) / 1e6; last = t }' "$TRACE" | sort -n)
    DT=$(echo "$gaps" | awk -v ms="$2" '{ d[NR] = $1 }
        END { g = NR ? d[int((NR + 1) / 2)] : 0; if (g < ms / 1000) g = ms / 1000
              printf "%.3f", 2 * g }')
    "$A" --json --no-replay "$TRACE" >"$d/out.json" 2>"$d/err"
    n=$("$J" findings.# <"$d/out.json")
    : >"$TMP/$1-$2.found"
    i=0
    while [ "$i" -lt "${n:-0}" ]; do
        f=findings.$i
        echo "$("$J" $f.classification <"$d/out.json") $("$J" $f.series <"$d/out.json")" \
            "$("$J" $f.bytes <"$d/out.json") $("$J" $f.start_s <"$d/out.json")" \
            "$("$J" $f.end_s <"$d/out.json")" >>"$TMP/$1-$2.found"
        i=$((i + 1))
    done
}

# expect PATTERN MS CLASS SERIES MIB START_PHASE END_PHASE: a finding of
# CLASS on SERIES, MIB MiB high within 10%, starting within two samples
# of START_PHASE (from its begin to its end) and ending within two
# samples of END_PHASE.  It is struck off the list of what was found.
expect() {
    p=$1 ms=$2 class=$3 series=$4 mib=$5
    lo0=$(awk -v t="$(phase "$TRACE" "$6" begin)" -v d="$DT" 'BEGIN { print t - d }')
    hi0=$(awk -v t="$(phase "$TRACE" "$6" end)" -v d="$DT" 'BEGIN { print t + d }')
    lo1=$(awk -v t="$(phase "$TRACE" "$7" begin)" -v d="$DT" 'BEGIN { print t - d }')
    hi1=$(awk -v t="$(phase "$TRACE" "$7" end)" -v d="$DT" 'BEGIN { print t + d }')
    what="$p at $ms ms: $class of $series, $mib MiB, from [$lo0, $hi0] to [$lo1, $hi1]"
    line=$(awk -v c="$class" -v s="$series" -v b=$((mib * MB)) -v lo0="$lo0" -v hi0="$hi0" \
        -v lo1="$lo1" -v hi1="$hi1" '
        $1 == c && $2 == s && $3 >= 0.9 * b && $3 <= 1.1 * b && $4 >= lo0 && $4 <= hi0 &&
        $5 >= lo1 && $5 <= hi1 { print NR; exit }' "$TMP/$p-$ms.found")
    if [ -n "$line" ]; then
        pass "$what"
        sed -i "${line}s/^/found /" "$TMP/$p-$ms.found"
    else
        fail "$what" "found: $(grep -v '^found ' "$TMP/$p-$ms.found" | tr '\n' ';')"
    fi
}

# nothing_else PATTERN MS: every finding was expected.
nothing_else() {
    expect_eq "$1 at $2 ms: nothing else" "$(grep -v '^found ' "$TMP/$1-$2.found" | tr '\n' ';')" ""
}

for ms in 100 20; do
    run long_spike $ms
    expect long_spike $ms transient_spike mapped 150 up1 down1
    nothing_else long_spike $ms

    run short_spike $ms
    expect short_spike $ms transient_spike mapped 200 up1 down1
    nothing_else short_spike $ms

    run two_spikes $ms
    expect two_spikes $ms transient_spike mapped 100 up1 down1
    expect two_spikes $ms transient_spike mapped 100 up2 down2
    nothing_else two_spikes $ms

    run heap_gap $ms
    expect heap_gap $ms transient_spike heap_live 64 up1 down1
    expect heap_gap $ms transient_spike gap 128 up2 down2
    nothing_else heap_gap $ms

    run step $ms
    nothing_else step $ms

    run sawtooth $ms
    nothing_else sawtooth $ms

    run noisy_drift $ms
    expect noisy_drift $ms persistent_drift heap_live 40 start stop
    nothing_else noisy_drift $ms

    run warmup_drift $ms
    expect warmup_drift $ms transient_spike heap_live 96 up1 down1
    expect warmup_drift $ms persistent_drift heap_live 60 start stop
    nothing_else warmup_drift $ms

    run flat $ms
    nothing_else flat $ms

    run holes $ms
    expect holes $ms fragmentation_like heap_live 24 down1 down2
    nothing_else holes $ms
done

summary
