#!/bin/sh
# bench-report: the reports of a real process tree, and what they weigh.
# `make -j2` of this repository, from a clean copy of its committed
# tree, runs under `memsim run --analyze` (every process traced: make,
# the shells, gcc's drivers, cc1, as, ld: hundreds of processes); then
# memsim-analyze writes the text, JSON and HTML reports once more from
# the run's directory, timed.  Prints the processes traced, each report's
# size (the HTML report's aim: under 1.5 MB), the text report's lines,
# and the analysis's time and peak RSS.
#
#   sh bench/report.sh [BUILD] [JOBS]
set -eu
BUILD=${1:-build}
JOBS=${2:-2}
B=$(cd "$BUILD" && pwd)
SRC=$(cd "$(dirname "$0")/.." && pwd)
OUT=$(mktemp -d "${TMPDIR:-/tmp}/memsim-bench-report.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
LIMIT=1500000 # 1.5 MB

git -C "$SRC" archive --format=tar HEAD | (mkdir "$OUT/src" && cd "$OUT/src" && tar -xf -)
(cd "$OUT/src" && "$B/memsim" run --out "$OUT/run" --analyze make -j"$JOBS" all) \
    >"$OUT/make.out" 2>"$OUT/make.err" ||
    { echo "bench-report: make -j$JOBS under memsim run failed:" >&2; tail -5 "$OUT/make.err" >&2; exit 1; }
procs=$(ls "$OUT/run" | grep -c '^memsim\..*\.jsonl')
if command -v /usr/bin/time >/dev/null 2>&1; then
    /usr/bin/time -f '%e %U %M' -o "$OUT/time" "$B/memsim-analyze" --output text="$OUT/r.txt" \
        --output json="$OUT/r.json" --html "$OUT/r.html" "$OUT/run" >/dev/null 2>"$OUT/an.err"
    read -r wall user kb <"$OUT/time"
else
    "$B/memsim-analyze" --output text="$OUT/r.txt" --output json="$OUT/r.json" --html "$OUT/r.html" \
        "$OUT/run" >/dev/null 2>"$OUT/an.err"
    wall=- user=- kb=-
fi
html=$(wc -c <"$OUT/r.html")
echo "bench-report: make -j$JOBS of memsim's own tree under memsim run --analyze: $procs processes traced"
printf '  %-28s %12s\n' "report.html bytes" "$html"
printf '  %-28s %12s\n' "report.json bytes" "$(wc -c <"$OUT/r.json")"
printf '  %-28s %12s\n' "report.txt lines" "$(wc -l <"$OUT/r.txt")"
printf '  %-28s %12s\n' "analysis wall s" "$wall"
printf '  %-28s %12s\n' "analysis user CPU s" "$user"
printf '  %-28s %12s\n' "analysis peak RSS KiB" "$kb"
if [ "$html" -lt "$LIMIT" ]; then
    echo "  the HTML report under 1.5 MB: met ($(awk "BEGIN { printf \"%.2f\", $html / $LIMIT }") of it)"
else
    echo "  the HTML report under 1.5 MB: NOT met ($(awk "BEGIN { printf \"%.2f\", $html / $LIMIT }") of it)"
fi
