# memsim-analyze --diff BASE NEW: two builds of one program (tests/programs
# /growth.c, the second with 2,000 blocks kept at grow_here() instead of
# 500, at other addresses), matched by function and line; --fail-on-growth
# as a CI gate; bad input.
. tests/integration/lib.sh

A=$BUILD/memsim-analyze
J=$JSONQ

if [ "${SANITIZE:-}" = 1 ]; then
    echo "# skip - --diff of real runs: libmemsim.so is not built with SANITIZE=1"
    summary
    exit $?
fi

CC=${CC:-cc}
SRC=tests/programs/growth.c
line=$(grep -n 'growth: the planted site' "$SRC" | cut -d: -f1)
expect_status "the base build" 0 "$CC" -g -O2 -o "$TMP/growth" "$SRC"
mkdir -p "$TMP/new"
expect_status "the new build (-O1: other addresses)" 0 "$CC" -g -O1 -DGROWN=2000 -o "$TMP/new/growth" "$SRC"
expect_eq "the builds differ" "$(cmp -s "$TMP/growth" "$TMP/new/growth" && echo same)" ""
expect_status "the base run" 0 "$BUILD/memsim" run --out "$TMP/base-run" -- "$TMP/growth"
expect_status "the new run" 0 "$BUILD/memsim" run --out "$TMP/new-run" -- "$TMP/new/growth"

expect_status "--diff" 0 "$A" --diff "$TMP/base-run" "$TMP/new-run"
cp "$TMP/out" "$TMP/diff.txt"
expect_eq "the totals: peak heap" "$(grep '^  peak heap ' "$TMP/diff.txt" | tr -s ' ')" \
    " peak heap 488 KiB 1.91 MiB +1.43 MiB +300.0%"
expect_eq "the totals: calls" "$(grep '^  calls ' "$TMP/diff.txt" | tr -s ' ')" " calls 1500 3000 +1500 +100.0%"
expect_eq "the planted growth comes first by live at peak" \
    "$(grep -A1 '^  functions grown by live at peak:' "$TMP/diff.txt" | sed -n 2p)" \
    "    #1  grow_here (growth.c): 488 KiB -> 1.91 MiB (+1.43 MiB, +300.0%)"
expect_eq "and by leaked bytes" \
    "$(grep -A1 '^  functions grown by leaked bytes:' "$TMP/diff.txt" | sed -n 2p | cut -d: -f1)" \
    "    #1  grow_here (growth.c)"
expect_eq "steady() is matched across the builds: unchanged" \
    "$(grep -c 'steady' "$TMP/diff.txt")" 0
expect_eq "the site, matched by function and line" \
    "$(grep -A1 '^  sites grown by live at peak:' "$TMP/diff.txt" | sed -n 2p | sed 's/ < __libc.*//')" \
    "    #1  grow_here (growth.c:$line) < main (growth.c:$(grep -n '    grow_here();' "$SRC" | cut -d: -f1))"

expect_status "--diff --json" 0 "$A" --diff --json "$TMP/base-run" "$TMP/new-run"
expect_eq "JSON: the peak heap's delta" "$("$J" delta.peak_heap_bytes.delta <"$TMP/out")" 1500000
expect_eq "JSON: the first function grown by peak" "$("$J" functions.peak.grown.0.name <"$TMP/out")" \
    "grow_here (growth.c)"
expect_eq "JSON: nothing shrunk" "$("$J" functions.peak.shrunk.# <"$TMP/out")" 0

expect_status "--diff --html" 0 "$A" --diff --html "$TMP/diff.html" "$TMP/base-run" "$TMP/new-run"
expect_eq "the page: whole, with the report's one script" \
    "$(head -c 15 "$TMP/diff.html"):$(tail -n 1 "$TMP/diff.html"):$(grep -o '<script' "$TMP/diff.html" | wc -l | tr -d ' ')" \
    "<!DOCTYPE html>:</body></html>:1"
expect_eq "the difference's flame graph: grow_here red (grew 75% of its width)" \
    "$(grep -o '<title>grow_here — base 488 KiB, new 1.91 MiB (+1.43 MiB)</title><rect [^>]*fill="hsl(0,80%,[0-9]*%)" data-change="0.750"' "$TMP/diff.html" | wc -l)" 1

# --fail-on-growth: exit 1 past PCT (the peak heap grew 300%), one line why.
expect_status "--fail-on-growth 50" 1 "$A" --diff --fail-on-growth 50 "$TMP/base-run" "$TMP/new-run"
expect_eq "a line for each total that grew past it" "$(cat "$TMP/err")" \
    "memsim-analyze: --fail-on-growth 50: peak heap grew +300.0% (488 KiB to 1.91 MiB)
memsim-analyze: --fail-on-growth 50: leaked grew +300.0% (488 KiB to 1.91 MiB)"
expect_status "--fail-on-growth 400" 0 "$A" --diff --fail-on-growth 400 "$TMP/base-run" "$TMP/new-run"
expect_status "a run against itself" 0 "$A" --diff --fail-on-growth 0 "$TMP/base-run" "$TMP/base-run"
expect_grep "no change" "^  peak heap  *488 KiB  *488 KiB  *0 B  *0.0%$" "$TMP/out"
expect_status "the other way: shrinkage is no growth" 0 \
    "$A" --diff --fail-on-growth 0 "$TMP/new-run" "$TMP/base-run"
expect_eq "grow_here shrunk" \
    "$(grep -A1 '^  functions shrunk by live at peak:' "$TMP/out" | sed -n 2p | cut -d: -f1)" \
    "    #1  grow_here (growth.c)"

# Bad input: one line, exit 2.
expect_status "--diff with one run" 2 "$A" --diff "$TMP/base-run"
expect_one_line "one line for it" "$TMP/err"
expect_status "--fail-on-growth without --diff" 2 "$A" --fail-on-growth 5 "$TMP/base-run"
expect_eq "one line naming it" "$(cat "$TMP/err")" "memsim-analyze: --fail-on-growth needs --diff"
expect_status "a bad PCT" 2 "$A" --diff --fail-on-growth x "$TMP/base-run" "$TMP/new-run"
expect_one_line "one line for it" "$TMP/err"
expect_status "a run that is not there" 2 "$A" --diff "$TMP/base-run" "$TMP/nonexistent"
expect_one_line "one line for it" "$TMP/err"

summary
