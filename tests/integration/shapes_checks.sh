# The findings every planted pattern of tests/programs/shapes.c must give,
# checked on one trace.  Sourced after lib.sh (pass, fail, expect_eq, $TMP)
# by test_shapes.sh (on the recorded traces in tests/data/shapes/),
# bench/shapes.sh (on live runs) and tests/tools/record_shapes.sh.
# Needs A (memsim-analyze), J (jsonq) and the zstd command.
#
#   check_shape PATTERN MS TRACE
#
# analyzes TRACE (plain or zstd-compressed) and checks that every planted
# spike, drift and fragmentation is found with its class and series, its
# time range within two samples of when the program really made it (the
# trace's own phase records say when), its height within 10%, and that
# nothing else is reported.

MB=1048576

# phase NAME begin|end: the seconds of the phase record in $PLAIN (begin:
# the one that opens NAME; end: the first end after it).
phase() {
    awk -v name="$1" -v want="$2" '
        /"ev":"phase"/ {
            t = $0; sub(/.*"t":/, "", t); sub(/,.*/, "", t)
            if (index($0, "\"op\":\"begin\"") && index($0, "\"name\":\"" name "\"")) { open = 1
                if (want == "begin") { printf "%.6f\n", t / 1e6; exit } }
            else if (open && index($0, "\"op\":\"end\"") && want == "end") { printf "%.6f\n", t / 1e6; exit }
        }' "$PLAIN"
}

# expect PATTERN MS CLASS SERIES MIB START_PHASE END_PHASE: a finding of
# CLASS on SERIES, MIB MiB high within 10%, starting within two samples
# of START_PHASE (from its begin to its end) and ending within two
# samples of END_PHASE.  It is struck off the list of what was found.
expect() {
    p=$1 ms=$2 class=$3 series=$4 mib=$5
    lo0=$(awk -v t="$(phase "$6" begin)" -v d="$DT" 'BEGIN { print t - d }')
    hi0=$(awk -v t="$(phase "$6" end)" -v d="$DT" 'BEGIN { print t + d }')
    lo1=$(awk -v t="$(phase "$7" begin)" -v d="$DT" 'BEGIN { print t - d }')
    hi1=$(awk -v t="$(phase "$7" end)" -v d="$DT" 'BEGIN { print t + d }')
    what="$p at $ms ms: $class of $series, $mib MiB, from [$lo0, $hi0] to [$lo1, $hi1]"
    line=$(awk -v c="$class" -v s="$series" -v b=$((mib * MB)) -v lo0="$lo0" -v hi0="$hi0" \
        -v lo1="$lo1" -v hi1="$hi1" '
        $1 == c && $2 == s && $3 >= 0.9 * b && $3 <= 1.1 * b && $4 >= lo0 && $4 <= hi0 &&
        $5 >= lo1 && $5 <= hi1 { print NR; exit }' "$FOUND")
    if [ -n "$line" ]; then
        pass "$what"
        sed -i "${line}s/^/found /" "$FOUND"
    else
        fail "$what" "found: $(grep -v '^found ' "$FOUND" | tr '\n' ';')"
    fi
}

# nothing_else PATTERN MS: every finding was expected.
nothing_else() {
    expect_eq "$1 at $2 ms: nothing else" "$(grep -v '^found ' "$FOUND" | tr '\n' ';')" ""
}

# (Its variables are the shell's globals: those a caller may use, as d
# for a run's folder, are left alone.)
check_shape() {
    p=$1 ms=$2
    cs=$TMP/check-$p-$ms
    mkdir -p "$cs"
    PLAIN=$cs/trace.jsonl
    FOUND=$cs/found
    zstd -dcqf "$3" >"$PLAIN" # plain ones pass through
    # two samples: of MS, or of the trace's own spacing (its median) when
    # a busy machine made the recorder sample less often
    gaps=$(awk '/"ev":"sample"/ { t = $0; sub(/.*"t":/, "", t); sub(/,.*/, "", t)
            if (n++) print (t - last) / 1e6; last = t }' "$PLAIN" | sort -n)
    DT=$(echo "$gaps" | awk -v ms="$ms" '{ d[NR] = $1 }
        END { g = NR ? d[int((NR + 1) / 2)] : 0; if (g < ms / 1000) g = ms / 1000
              printf "%.3f", 2 * g }')
    "$A" --json --no-replay "$3" >"$cs/out.json" 2>"$cs/err"
    n=$("$J" findings.# <"$cs/out.json")
    : >"$FOUND"
    i=0
    while [ "$i" -lt "${n:-0}" ]; do
        f=findings.$i
        echo "$("$J" $f.classification <"$cs/out.json") $("$J" $f.series <"$cs/out.json")" \
            "$("$J" $f.bytes <"$cs/out.json") $("$J" $f.start_s <"$cs/out.json")" \
            "$("$J" $f.end_s <"$cs/out.json")" >>"$FOUND"
        i=$((i + 1))
    done
    case $p in
    long_spike) expect "$p" "$ms" transient_spike mapped 150 up1 down1 ;;
    short_spike) expect "$p" "$ms" transient_spike mapped 200 up1 down1 ;;
    two_spikes)
        expect "$p" "$ms" transient_spike mapped 100 up1 down1
        expect "$p" "$ms" transient_spike mapped 100 up2 down2
        ;;
    heap_gap)
        expect "$p" "$ms" transient_spike heap_live 64 up1 down1
        expect "$p" "$ms" transient_spike gap 128 up2 down2
        ;;
    step | sawtooth | flat) ;;
    noisy_drift) expect "$p" "$ms" persistent_drift heap_live 40 start stop ;;
    warmup_drift)
        expect "$p" "$ms" transient_spike heap_live 96 up1 down1
        expect "$p" "$ms" persistent_drift heap_live 60 start stop
        ;;
    holes) expect "$p" "$ms" fragmentation_like heap_live 24 down1 down2 ;;
    *) fail "$p at $ms ms" "no such pattern" ;;
    esac
    nothing_else "$p" "$ms"
}

# Every pattern, and the sampling intervals each is traced at.
SHAPES="long_spike short_spike two_spikes heap_gap step sawtooth noisy_drift warmup_drift flat holes"
SHAPE_MS="100 20"
