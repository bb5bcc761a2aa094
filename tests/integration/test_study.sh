# make study, small: bench/study.sh with STUDY_QUICK=1 (two workloads,
# shortened) writes its tables between the markers of a document, keeps
# what is around them, and writes a well-formed SVG.
. tests/integration/lib.sh

if [ "${SANITIZE:-}" = 1 ]; then
    echo "# skip - study: libmemsim.so is not built with SANITIZE=1"
    summary
    exit
fi
# The study traces python3 and lua5.4; without them (and not root to
# install them) there is nothing to run.
if ! { [ -x /usr/bin/python3 ] || command -v python3 >/dev/null; } || ! command -v lua5.4 >/dev/null; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "# skip - study: needs python3 and lua5.4 (apt-get install -y python3 lua5.4)"
        summary
        exit
    fi
fi
unset MEMSIM_COMPRESS # the study reads the default, compressed traces

DOC=$TMP/study.md
SVG=$TMP/study.svg
printf '# hand-written\n\nbefore the study\n\n<!-- study:begin -->\nold table\n<!-- study:end -->\n\nafter the study\n' >"$DOC"
# glibc's allocator only beside the strategies (the others may not be installed)
run_study() { env STUDY_QUICK=1 STUDY_ALLOCATORS=glibc STUDY_DOC="$DOC" STUDY_SVG="$SVG" sh bench/study.sh "$BUILD"; }
expect_status "the quick study runs" 0 run_study
expect_grep "it says how long it took" "2 workloads in" "$TMP/err"
expect_eq "no notes: nothing skipped, failed or printed otherwise" "$(grep -c '^Note: ' "$DOC")" 0
expect_eq "the text before the markers is kept" "$(sed -n 1,3p "$DOC")" "$(printf '# hand-written\n\nbefore the study')"
expect_eq "the text after them is kept" "$(tail -n 1 "$DOC")" "after the study"
expect_eq "the old table is gone" "$(grep -c '^old table$' "$DOC")" 0
expect_eq "one pair of markers" "$(grep -c '^<!-- study:\(begin\|end\) -->$' "$DOC")" 2
for w in python-malloc lua; do
    # the workloads' table, fragmentation, split, failures, footprint, times
    expect_eq "$w: a row in each of the six tables" "$(grep -c "^| $w |" "$DOC")" 6
done
expect_grep "the tables name every strategy" \
    '^| workload | first-fit | best-fit | worst-fit | next-fit | buddy | caching |$' "$DOC"
expect_grep "fragmentation and footprint: glibc's column beside the strategies" \
    '^| workload | first-fit | best-fit | worst-fit | next-fit | buddy | caching | glibc |$' "$DOC"
expect_eq "glibc's overhead on lua is a figure" \
    "$(awk -F'|' '/^\| lua \|/ && ++n == 2 {print $9}' "$DOC" | grep -c '[0-9]%')" 1
expect_eq "glibc's peak RSS on lua is a figure" \
    "$(awk -F'|' '/^\| lua \|/ && ++n == 5 {print $9}' "$DOC" | grep -c '[0-9]\.[0-9][0-9]')" 1
expect_eq "no prediction in the quick study" "$(grep -c 'prediction:begin' "$DOC")" 0
expect_grep "the constrained device is 1.25 x peak live" "device of 1.25 × peak live" "$DOC"
expect_grep "the document shows the plot" "](study.svg)" "$DOC"
# best fit's fragmentation is a small percentage (a figure, not a dash)
expect_eq "best fit's fragmentation is a figure" \
    "$(awk -F'|' '/^\| lua \|/ && ++n == 2 {print $4}' "$DOC" | grep -c '[0-9]%')" 1

if command -v xmllint >/dev/null 2>&1; then
    expect_status "the SVG is well-formed XML" 0 xmllint --noout "$SVG"
else
    expect_eq "the SVG opens and closes" "$(head -c 5 "$SVG")$(tail -n 1 "$SVG")" "<?xml</svg>"
fi
# a bar of each kind for each workload and strategy: 2 x 6 x 2, and the legend's 6, and the background
expect_eq "the SVG has its bars" "$(grep -c '^<rect' "$SVG")" $((2 * 6 * 2 + 6 + 1))
expect_grep "the SVG labels a workload" ">python-malloc</text>" "$SVG"

# Run again: the same document, one table (rewritten, not appended).
lines=$(wc -l <"$DOC")
expect_status "it runs again" 0 run_study
expect_eq "the document keeps its length" "$(wc -l <"$DOC")" "$lines"

# A document without markers gets them, at its end.
printf '# other\n' >"$TMP/bare.md"
expect_status "a document without markers" 0 env STUDY_QUICK=1 STUDY_WORKLOADS=lua STUDY_DOC="$TMP/bare.md" \
    STUDY_SVG="$TMP/bare.svg" sh bench/study.sh "$BUILD"
expect_eq "keeps its text" "$(head -n 1 "$TMP/bare.md")" "# other"
expect_eq "gets the markers" "$(grep -c '^<!-- study:\(begin\|end\) -->$' "$TMP/bare.md")" 2
expect_eq "and lua's rows" "$(grep -c '^| lua |' "$TMP/bare.md")" 6
summary
