#!/bin/sh
# bench-study: how real programs would fare under each allocation
# strategy.  Traces real, deterministic workloads of Debian packages
# under memsim, replays each trace through every strategy of sim/ and
# writes the results into docs/strategies.md (between its study markers)
# and docs/strategies.svg.
#
#   sh bench/study.sh [BUILD]          (make study)
#
# Per workload: the traced process tree's largest process by peak heap
# (gcc: its cc1; make -j2: the largest of its processes) is replayed on the
# default device (the trace's own: physical memory) for peak footprint,
# Johnstone-Wilson fragmentation (peak footprint / peak live - 1) and
# the footprint at its peak split into live, internal and external
# bytes; then again on a device of 1.25 x its peak live bytes, for the
# requests each strategy cannot serve there.  The same process's trace is
# replayed through the real allocators (memsim-analyze --allocators
# --allocators-pages all, every page of each block written as the
# strategies count every requested byte:
# glibc, jemalloc, mimalloc, tcmalloc), whose peak RSS and overhead (peak
# RSS ÷ peak live − 1) stand beside the strategies.  Then the full study
# runs bench/allocators.sh, which checks those replays' predictions
# against real runs and writes its table between the prediction markers.
#
# Environment:
#   STUDY_QUICK=1         two workloads (python-malloc, lua), shortened: the
#                         check `make test` runs (tests/integration/test_study.sh)
#   STUDY_WORKLOADS="…"   a subset, by name (default: all of them)
#   STUDY_DOC=FILE        where the tables go (docs/strategies.md); a file
#                         without the markers gets them appended
#   STUDY_SVG=FILE        the plot (docs/strategies.svg)
#   STUDY_DEVICE_X=F      the constrained device as a multiple of peak live (1.25)
#   STUDY_ALLOCATORS=A,B  the real allocators (glibc,jemalloc,mimalloc,tcmalloc;
#                         empty: none); one not installed is a note and a dash
#   STUDY_PREDICTION=0|1  run bench/allocators.sh after (1; 0 with STUDY_QUICK=1)
#   STUDY_KEEP=DIR        keep the traces and inputs in DIR (default: a
#                         scratch directory under $TMPDIR, removed at the end)
#
# Needs python3, perl, sqlite3, gcc, xz, lua5.4, git and make: run as
# root it installs the Debian packages that are missing; otherwise it
# prints the apt-get line and skips those workloads.
set -eu
BUILD=${1:-build}
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/.." && pwd)
BIN=$(cd "$BUILD" && pwd)
LIB=$BIN/libmemsim.so
ANALYZE=$BIN/memsim-analyze
JSONQ=$BIN/jsonq
QUICK=${STUDY_QUICK:-0}
DOC=${STUDY_DOC:-$TOP/docs/strategies.md}
SVG=${STUDY_SVG:-$TOP/docs/strategies.svg}
DEVX=${STUDY_DEVICE_X:-1.25}
STRATEGIES=first-fit,best-fit,worst-fit,next-fit,buddy,caching
ALLOCATORS=${STUDY_ALLOCATORS-glibc,jemalloc,mimalloc,tcmalloc}
PREDICTION=${STUDY_PREDICTION:-$((1 - QUICK))}
if [ "$QUICK" = 1 ]; then
    WORKLOADS=${STUDY_WORKLOADS:-python-malloc lua}
else
    WORKLOADS=${STUDY_WORKLOADS:-python python-malloc perl sqlite gcc xz lua git make}
fi
# The workloads, their sizes, programs and inputs (shared with bench/compare.sh).
. "$HERE/study/workloads.sh"
. "$HERE/splice.sh"
workloads_sizes "$QUICK"

for f in "$LIB" "$BIN/memsim-recorder" "$ANALYZE" "$JSONQ"; do
    [ -f "$f" ] || { echo "bench-study: $f is missing (make study builds it)" >&2; exit 1; }
done
if [ -n "${STUDY_KEEP:-}" ]; then
    OUT=$STUDY_KEEP
    mkdir -p "$OUT"
else
    OUT=$(mktemp -d "${TMPDIR:-/tmp}/memsim-study.XXXXXX")
    trap 'rm -rf "$OUT"' EXIT
fi
trap 'exit 130' INT
trap 'exit 143' TERM
IN=$OUT/inputs
mkdir -p "$IN"
NOTES=$OUT/notes
WROWS=$OUT/workloads
SROWS=$OUT/strategies
AROWS=$OUT/allocators
: >"$AROWS"
: >"$NOTES"
: >"$WROWS"
: >"$SROWS"
note() { grep -qxF "$*" "$NOTES" || echo "$*" >>"$NOTES"; echo "bench-study: $*" >&2; }

# ---------------------------------------------------------------- inputs

echo "bench-study: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, memsim $(git -C "$TOP" rev-parse --short HEAD 2>/dev/null || echo '?'), load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
workloads_programs
workloads_inputs

# ---------------------------------------------------------------- runs

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# q FILE PATH: a value of a JSON file, empty when missing.
q() { "$JSONQ" "$2" <"$1" 2>/dev/null || true; }

# study NAME: trace, analyze, replay on the constrained device.
study() {
    name=$1
    if ! workload_cmd "$name" 1; then
        note "$name: skipped (its program is missing, or the git history of $GIT_COMMIT)"
        return
    fi
    printf '  %-14s ...' "$name" >&2
    T=$OUT/traces/$name
    rm -rf "$T"
    mkdir -p "$T"
    t0=$(now)
    # shellcheck disable=SC2086 # ENVV and CMD are words without blanks (but .read's)
    eval env $ENVV "$CMD" </dev/null >"$OUT/$name.stdout" 2>"$OUT/$name.stderr" || {
        note "$name: exits with status $? natively: skipped ($(head -c 200 "$OUT/$name.stderr"))"
        echo " failed" >&2
        return
    }
    t1=$(now)
    workload_cmd "$name" 1 # make: clean what the native run built
    # shellcheck disable=SC2086
    eval env LD_PRELOAD="$LIB" MEMSIM_OUTPUT="$T" MEMSIM_STRATEGY=none $ENVV "$CMD" \
        </dev/null >"$OUT/$name.mstdout" 2>"$OUT/$name.stderr" || {
        note "$name: exits with status $? under memsim ($(head -c 200 "$OUT/$name.stderr"))"
        echo " failed" >&2
        return
    }
    t2=$(now)
    cmp -s "$OUT/$name.stdout" "$OUT/$name.mstdout" ||
        note "$name: prints something else under memsim than natively"
    "$ANALYZE" --json --all --sites 0 -s "$STRATEGIES" "$T" >"$OUT/$name.json" 2>"$OUT/$name.aerr" || {
        note "$name: memsim-analyze failed: $(head -c 200 "$OUT/$name.aerr")"
        echo " failed" >&2
        return
    }
    t3=$(now)
    J=$OUT/$name.json
    # The process: the only one, or the one with the largest peak heap.
    np=$(q "$J" processes.#)
    if [ -z "$np" ]; then
        np=1 pre=
    else
        best=-1 bi=0
        for i in $(seq 0 $((np - 1))); do
            e=$(q "$J" "processes.$i.summary.exe")
            [ -z "$PRINCIPAL" ] || [ "${e##*/}" = "$PRINCIPAL" ] || continue
            h=$(q "$J" "processes.$i.summary.peak_heap_bytes")
            [ "${h:-0}" -gt "$best" ] && best=$h bi=$i
        done
        pre=processes.$bi.
    fi
    trace=$(q "$J" "${pre}summary.trace")
    exe=$(q "$J" "${pre}summary.exe")
    events=$(($(q "$J" "${pre}summary.allocations") + $(q "$J" "${pre}summary.frees")))
    live=$(q "$J" "${pre}strategies.0.peak_live_bytes")
    dev=$(awk -v l="$live" -v x="$DEVX" 'BEGIN { d = int(l * x / 4096 + 0.999999) * 4096; print (d < 4096) ? 4096 : d }')
    "$ANALYZE" --json --sites 0 -s "$STRATEGIES" -d "$dev" "$trace" >"$OUT/$name.c.json" 2>"$OUT/$name.aerr" || {
        note "$name: memsim-analyze -d $dev failed: $(head -c 200 "$OUT/$name.aerr")"
        echo " failed" >&2
        return
    }
    t4=$(now)
    # the real allocators, on the same process's trace, every page of
    # each block written: the strategies count every requested byte, and
    # the allocators are compared with them on the same terms (the
    # prediction table, bench/allocators.sh, writes the pages touched)
    if [ -n "$ALLOCATORS" ]; then
        R=$OUT/$name.r.json
        if "$ANALYZE" --json --sites 0 --no-replay --allocators "$ALLOCATORS" --allocators-pages all \
            "$trace" >"$R" 2>"$OUT/$name.rerr"; then
            k=0
            while rn=$(q "$R" "allocators.rows.$k.name") && [ -n "$rn" ]; do
                st=$(q "$R" "allocators.rows.$k.status")
                if [ "$st" = ok ]; then
                    echo "$name $rn $(q "$R" "allocators.rows.$k.peak_rss_bytes") $(q "$R" "allocators.rows.$k.overhead")" >>"$AROWS"
                elif [ "$st" = missing ]; then
                    note "allocator $rn is not installed: $(q "$R" "allocators.rows.$k.install")"
                else
                    note "$name: the $rn replay failed: $(q "$R" "allocators.rows.$k.message")"
                fi
                k=$((k + 1))
            done
        else
            note "$name: memsim-analyze --allocators failed: $(head -c 200 "$OUT/$name.rerr")"
        fi
    fi
    t5=$(now)
    C=$OUT/$name.c.json
    echo "$name|$WHAT|${exe##*/}|$np|$events|$live|$dev|$(secs "$t0" "$t1")|$(secs "$t1" "$t2")|$(secs "$t2" "$t3")|$(secs "$t3" "$t4")|$(secs "$t4" "$t5")" >>"$WROWS"
    ns=$(q "$J" "${pre}strategies.#")
    for i in $(seq 0 $((ns - 1))); do
        s=${pre}strategies.$i
        sn=$(q "$J" "$s.name")
        # the same strategy in the constrained run (its order may differ)
        failed=- requests=-
        for k in $(seq 0 $((ns - 1))); do
            if [ "$(q "$C" "strategies.$k.name")" = "$sn" ]; then
                failed=$(q "$C" "strategies.$k.failed_requests")
                requests=$(q "$C" "strategies.$k.requests")
            fi
        done
        echo "$name $sn $(q "$J" "$s.peak_live_bytes") $(q "$J" "$s.peak_footprint_bytes") $(q "$J" "$s.fragmentation") $(q "$J" "$s.live_at_peak_bytes") $(q "$J" "$s.internal_fragmentation_at_peak_bytes") $(q "$J" "$s.external_fragmentation_at_peak_bytes") $failed $requests" >>"$SROWS"
    done
    [ -n "${STUDY_KEEP:-}" ] || rm -rf "$T"
    echo " $(secs "$t0" "$t5") s" >&2
}

START=$(now)
for w in $WORKLOADS; do study "$w"; done
TOTAL=$(secs "$START" "$(now)")
[ -s "$WROWS" ] || { echo "bench-study: no workload ran" >&2; sed 's/^/note: /' "$NOTES" >&2; exit 1; }

# ---------------------------------------------------------------- tables

ORDER="first-fit best-fit worst-fit next-fit buddy caching"
AORDER=$(echo "$ALLOCATORS" | tr ',' ' ')
TABLES=$OUT/tables.md
awk -v order="$ORDER" -v aorder="$AORDER" -v afile="$AROWS" -v devx="$DEVX" -v total="$TOTAL" -v quick="$QUICK" -v when="$(date -u '+%Y-%m-%d')" \
    -v rev="$(git -C "$TOP" rev-parse --short HEAD 2>/dev/null || echo '?')" -v cores="$(nproc)" \
    -v svg="$(basename "$SVG")" -v wfile="$WROWS" -v notes="$NOTES" '
function pct(x) { return sprintf("%.1f%%", 100 * x) }
function mib(b) { return sprintf("%.2f", b / 1048576) }
BEGIN {
    ns = split(order, S, " ")
    na = split(aorder, A, " ")
    FS = "|"
    while ((getline line < wfile) > 0) {
        split(line, f, "|")
        nw++; W[nw] = f[1]; what[f[1]] = f[2]; exe[f[1]] = f[3]; np[f[1]] = f[4]; ev[f[1]] = f[5]
        live[f[1]] = f[6]; dev[f[1]] = f[7]; tn[f[1]] = f[8]; tm[f[1]] = f[9]; ta[f[1]] = f[10]; tc[f[1]] = f[11]
        tr[f[1]] = f[12]
    }
    FS = " "
    while ((getline line < afile) > 0) { split(line, f, " "); k = f[1] SUBSEP f[2]; arss[k] = f[3]; aov[k] = f[4] }
}
{ k = $1 SUBSEP $2; fp[k] = $4; jw[k] = $5; lp[k] = $6; in_[k] = $7; ex[k] = $8; fl[k] = $9; rq[k] = $10; pl[k] = $3 }
END {
    printf "<!-- written by bench/study.sh (make study): do not edit between these markers -->\n\n"
    printf "Measured %s at %s on %d cores in %s s%s.\n\n", when, rev, cores, total,
        quick == 1 ? " (STUDY_QUICK=1: shortened, no measure of anything)" : ""
    print "| workload | what runs | process replayed | processes | heap events | peak live MiB |"
    print "|---|---|---|---:|---:|---:|"
    for (i = 1; i <= nw; i++) { w = W[i]
        printf "| %s | `%s` | %s | %d | %d | %s |\n", w, what[w], exe[w], np[w], ev[w], mib(live[w]) }
    print ""
    hdr = "| workload |"; sep = "|---|"
    for (j = 1; j <= ns; j++) { hdr = hdr " " S[j] " |"; sep = sep "---:|" }
    ahdr = hdr; asep = sep
    for (j = 1; j <= na; j++) { ahdr = ahdr " " A[j] " |"; asep = asep "---:|" }
    if (na) {
        print "**Johnstone–Wilson fragmentation** (peak footprint ÷ peak live − 1; in bold the smallest of each row), and beside it each real allocator'"'"'s overhead: the same trace replayed through each (`memsim-analyze --allocators`), its peak RSS ÷ peak live − 1, every page of each block written as the strategies count every requested byte (`--allocators-pages all`; in bold the smallest allocator):"
    } else
        print "**Johnstone–Wilson fragmentation** (peak footprint ÷ peak live − 1; in bold the smallest of each row):"
    print ""
    print ahdr; print asep
    for (i = 1; i <= nw; i++) { w = W[i]; line = "| " w " |"; hm = 0; ham = 0
        # the smallest of each side (an overhead can be below 0: the seen flags, not a sentinel)
        for (j = 1; j <= ns; j++) { k = w SUBSEP S[j]; if (k in jw && (!hm || jw[k] < m)) { m = jw[k]; hm = 1 } }
        for (j = 1; j <= na; j++) { k = w SUBSEP A[j]; if (k in aov && (!ham || aov[k] < am)) { am = aov[k]; ham = 1 } }
        for (j = 1; j <= ns; j++) { k = w SUBSEP S[j]
            c = (k in jw) ? pct(jw[k]) : "-"
            if ((k in jw) && jw[k] == m) c = "**" c "**"
            line = line " " c " |" }
        for (j = 1; j <= na; j++) { k = w SUBSEP A[j]
            c = (k in aov) ? pct(aov[k]) : "-"
            if ((k in aov) && aov[k] == am) c = "**" c "**"
            line = line " " c " |" }
        print line }
    print ""
    print "**The footprint at its peak, split**: internal (bytes of allocated blocks beyond their requests) + external (free bytes inside the footprint), as shares of the peak footprint; the rest is live requested bytes:"
    print ""
    print hdr; print sep
    for (i = 1; i <= nw; i++) { w = W[i]; line = "| " w " |"
        for (j = 1; j <= ns; j++) { k = w SUBSEP S[j]
            c = (k in fp && fp[k] > 0) ? sprintf("%.1f + %.1f", 100 * in_[k] / fp[k], 100 * ex[k] / fp[k]) : "-"
            line = line " " c " |" }
        print line }
    print ""
    printf "**Failed requests on a device of %s × peak live** (the share of the requests the strategy could not serve there; a failed request'"'"'s free is ignored):\n\n", devx
    print hdr; print sep
    for (i = 1; i <= nw; i++) { w = W[i]; line = "| " w " |"
        for (j = 1; j <= ns; j++) { k = w SUBSEP S[j]
            c = (k in fl && fl[k] != "-") ? sprintf("%d (%.2f%%)", fl[k], rq[k] ? 100 * fl[k] / rq[k] : 0) : "-"
            line = line " " c " |" }
        print line }
    print ""
    print (na ? "**Peak footprint**, MiB, and each real allocator'"'"'s peak RSS over the replay'"'"'s baseline:" : "**Peak footprint**, MiB:")
    print ""
    print ahdr; print asep
    for (i = 1; i <= nw; i++) { w = W[i]; line = "| " w " |"
        for (j = 1; j <= ns; j++) { k = w SUBSEP S[j]; line = line " " ((k in fp) ? mib(fp[k]) : "-") " |" }
        for (j = 1; j <= na; j++) { k = w SUBSEP A[j]; line = line " " ((k in arss) ? mib(arss[k]) : "-") " |" }
        print line }
    print ""
    printf "![Johnstone–Wilson fragmentation per workload and strategy](%s)\n\n", svg
    print "Seconds per workload: native run, traced run, analysis with the six replays, replay on the constrained device, the replays through the real allocators:"
    print ""
    print "| workload | native s | traced s | analysis s | constrained s | allocators s |"
    print "|---|---:|---:|---:|---:|---:|"
    for (i = 1; i <= nw; i++) { w = W[i]; printf "| %s | %s | %s | %s | %s | %s |\n", w, tn[w], tm[w], ta[w], tc[w], tr[w] }
    while ((getline line < notes) > 0) { if (!nn++) print ""; print "Note: " line "  " }
}' "$SROWS" >"$TABLES"

# ---------------------------------------------------------------- plot

# Grouped bars: per workload one bar per strategy, its height the J-W
# fragmentation (clipped at the axis' top, the value written above), cut
# into an internal (solid) and an external (pale) part in the proportion
# of the two at the footprint's peak.
awk -v order="$ORDER" -v wfile="$WROWS" '
function esc(s) { gsub(/&/, "\\&amp;", s); gsub(/</, "\\&lt;", s); return s }
BEGIN {
    ns = split(order, S, " ")
    col["first-fit"] = "#1f77b4"; col["best-fit"] = "#2ca02c"; col["worst-fit"] = "#d62728"
    col["next-fit"] = "#ff7f0e"; col["buddy"] = "#9467bd"; col["caching"] = "#8c564b"
    while ((getline line < wfile) > 0) { split(line, f, "|"); nw++; W[nw] = f[1] }
}
{ k = $1 SUBSEP $2; jw[k] = $5; in_[k] = $7; ex[k] = $8 }
END {
    top = 0
    for (k in jw) if (jw[k] > top) top = jw[k]
    # the axis: 100% unless every value is far below; caching and worse clip
    ymax = (top > 1) ? 1 : (top > 0.5 ? 1 : (top > 0.2 ? 0.5 : 0.2))
    bw = 12; gap = 26; left = 60; right = 20; ptop = 56; ph = 300
    gw = ns * bw + gap
    width = left + nw * gw + right; height = ptop + ph + 110
    printf "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"11\">\n", width, height, width, height
    printf "<title>Johnstone-Wilson fragmentation per workload and strategy (bench/study.sh)</title>\n"
    printf "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", width, height
    printf "<text x=\"%d\" y=\"18\" font-size=\"13\">peak footprint / peak live - 1, per workload and strategy (solid: internal, pale: external, at the peak)</text>\n", left
    for (t = 0; t <= 4; t++) {
        v = ymax * t / 4; y = ptop + ph - ph * t / 4
        printf "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", left, y, width - right, y
        printf "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%d%%</text>\n", left - 4, y + 4, 100 * v + 0.5
    }
    for (i = 1; i <= nw; i++) {
        x0 = left + (i - 1) * gw + gap / 2
        for (j = 1; j <= ns; j++) {
            k = W[i] SUBSEP S[j]
            if (!(k in jw)) continue
            v = jw[k]; if (v < 0) v = 0
            h = ph * (v > ymax ? ymax : v) / ymax
            share = (in_[k] + ex[k] > 0) ? in_[k] / (in_[k] + ex[k]) : 0
            x = x0 + (j - 1) * bw; y = ptop + ph - h
            printf "<rect x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"%s\" fill-opacity=\"0.35\"><title>%s %s: %.1f%%</title></rect>\n", x, y, bw - 1, h, col[S[j]], esc(W[i]), S[j], 100 * jw[k]
            printf "<rect x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"%s\"/>\n", x, ptop + ph - h * share, bw - 1, h * share, col[S[j]]
            if (v > ymax)
                printf "<text x=\"%.1f\" y=\"%d\" font-size=\"9\" text-anchor=\"middle\">%d%%</text>\n", x + bw / 2, ptop - 4 - 11 * (j % 2), 100 * v + 0.5
        }
        printf "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", x0 + ns * bw / 2, ptop + ph + 16, esc(W[i])
    }
    printf "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", left, ptop + ph, width - right, ptop + ph
    for (j = 1; j <= ns; j++) {
        x = left + (j - 1) * 110; y = ptop + ph + 50
        printf "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>\n", x, y, col[S[j]]
        printf "<text x=\"%d\" y=\"%d\">%s</text>\n", x + 16, y + 10, S[j]
    }
    printf "<text x=\"%d\" y=\"%d\" font-size=\"10\">bars above the axis are clipped; their value is written at the top</text>\n", left, ptop + ph + 85
    printf "</svg>\n"
}' "$SROWS" >"$SVG.tmp"
mv "$SVG.tmp" "$SVG"

# ---------------------------------------------------------------- the doc

splice "$DOC" '<!-- study:begin -->' '<!-- study:end -->' "$TABLES"
cat "$TABLES"
echo "bench-study: $(wc -l <"$WROWS") workloads in $TOTAL s; wrote $DOC and $SVG" >&2

# ---------------------------------------------------------------- prediction

# The replays' predictions against real runs (bench/allocators.sh), into
# the document's prediction markers.
if [ "$PREDICTION" = 1 ] && [ -n "$ALLOCATORS" ]; then
    echo
    ALLOC_DOC=$DOC ALLOC_QUICK=$QUICK sh "$HERE/allocators.sh" "$BUILD"
fi
