# splice: put a generated file between two marker lines of a document,
# for the scripts that write their tables into docs/ (study.sh,
# compare.sh).  Sourced, not run.
#
#   splice DOC BEGIN_MARK END_MARK FILE
#
# What lay between the markers is replaced by FILE; the rest of DOC, the
# hand-written text around them, stays.  A DOC without both markers gets
# them appended first.
splice() {
    if [ ! -f "$1" ] || ! grep -q "^$2\$" "$1" || ! grep -q "^$3\$" "$1"; then
        printf '\n%s\n%s\n' "$2" "$3" >>"$1"
    fi
    awk -v b="$2" -v e="$3" -v tables="$4" '
        $0 == b { print; while ((getline l < tables) > 0) print l; skip = 1; next }
        $0 == e { skip = 0 }
        !skip' "$1" >"$1.tmp"
    mv "$1.tmp" "$1"
}
