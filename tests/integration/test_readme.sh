# README.md against the repository: its layout table names every file
# (by its name, or a module's stem, in the row of its directory), and
# every option of every command's --help is in it.
. tests/integration/lib.sh

# ---- the layout table ----------------------------------------------------------------

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    awk '/^## Layout/ { on = 1; next } /^## / { on = 0 } on && /^\| `/' README.md >"$TMP/rows"
    git ls-files -co --exclude-standard >"$TMP/files"
    # One awk for every file and row (a shell loop of cut and grep per
    # file and row made some 50,000 processes: ten minutes on a loaded
    # machine).  A file is named when a path of the row's first column is
    # the file, or the start of it and the row's text names the rest, the
    # file's name or its stem (`stem`, `stem.c`, `stem.h`, `stem (`, `stem` ).
    while read -r f; do
        [ -e "$f" ] && printf '%s\n' "$f" # deleted in the work tree, not yet in the index
    done <"$TMP/files" >"$TMP/present"
    missing=$(awk -v rows="$TMP/rows" '
        BEGIN {
            bq = sprintf("%c", 96)
            while ((getline row < rows) > 0) {
                n++
                p1 = index(row, "|"); r1 = substr(row, p1 + 1)
                p2 = index(r1, "|"); first = substr(r1, 1, p2 - 1); rest[n] = substr(r1, p2 + 1)
                np[n] = 0
                while (match(first, bq "[^" bq "]*" bq)) {
                    tok = substr(first, RSTART + 1, RLENGTH - 2)
                    first = substr(first, RSTART + RLENGTH)
                    k = split(tok, parts, /[, ]+/)
                    for (m = 1; m <= k; m++)
                        if (parts[m] != "")
                            path[n, ++np[n]] = parts[m]
                }
            }
        }
        {
            f = $0
            base = f; sub(/.*\//, "", base)
            stem = base; sub(/\..*/, "", stem)
            found = 0
            for (r = 1; r <= n && !found; r++)
                for (m = 1; m <= np[r] && !found; m++) {
                    p = path[r, m]
                    if (f == p) { found = 1; break }
                    if (substr(f, 1, length(p)) != p) continue
                    rel = substr(f, length(p) + 1)
                    t = rest[r]
                    if (index(t, bq base bq) || index(t, bq rel bq) || index(t, bq stem bq) ||
                        index(t, bq stem ".c" bq) || index(t, bq stem ".h" bq) ||
                        index(t, bq stem " (") || index(t, bq stem bq " "))
                        found = 1
                }
            if (!found) printf " %s", f
        }' "$TMP/present")
    expect_eq "README's layout table names every file" "$missing" ""
    # and names no file that is gone: each backquoted path of the first column exists
    gone=""
    for p in $(cut -d'|' -f2 "$TMP/rows" | grep -o '`[^`]*`' | tr -d '`' | tr ',' ' '); do
        [ -e "$p" ] || gone="$gone $p"
    done
    expect_eq "README's layout table: every path it names exists" "$gone" ""
else
    echo "# skip - README's layout table: not a git checkout"
fi

# ---- every option of every --help ----------------------------------------------------

# options HELP-FILE: the options its option lines define (not the examples').
options() { grep -E '^  -[a-zA-Z], --|^      --' "$1" | grep -o -- '--[a-z][a-z0-9-]*' | sort -u; }
check_options() { # NAME CMD...
    name=$1
    shift
    "$@" --help >"$TMP/help" 2>&1
    missing=""
    for o in $(options "$TMP/help"); do
        grep -qF -- "$o" README.md || missing="$missing $o"
    done
    expect_eq "README names every option of $name" "$missing" ""
}
check_options "memsim run" "$MEMSIM" run
check_options "memsim simulate" "$MEMSIM" simulate
check_options "memsim-analyze" "$BUILD/memsim-analyze"
"$MEMSIM" help >"$TMP/help"
missing=""
for c in $(sed -n '/^COMMANDS$/,/^$/p' "$TMP/help" | sed -n 's/^  \([a-z]*\) .*/\1/p'); do
    grep -qF -- "memsim $c" README.md || missing="$missing $c"
done
expect_eq "README names every command of memsim help" "$missing" ""

# Every variable libmemsim.so reads (preload/config.h) is documented in
# the README's table and in libmemsim(7).
missing=
for v in $(grep -o '"MEMSIM_[A-Z_]*"' preload/config.h | tr -d '"'); do
    grep -q "\b$v\b" README.md || missing="$missing README:$v"
    grep -q "\b$v\b" man/libmemsim.7 || missing="$missing libmemsim.7:$v"
done
expect_eq "every MEMSIM_ variable in the README and libmemsim(7)" "$missing" ""

summary
