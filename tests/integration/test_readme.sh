# README.md against the repository: its layout table names every file
# (by its name, or a module's stem, in the row of its directory), and
# every option of every command's --help is in it.
. tests/integration/lib.sh

# ---- the layout table ----------------------------------------------------------------

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    awk '/^## Layout/ { on = 1; next } /^## / { on = 0 } on && /^\| `/' README.md >"$TMP/rows"
    git ls-files -co --exclude-standard >"$TMP/files"
    missing=""
    while read -r f; do
        [ -e "$f" ] || continue # deleted in the work tree, not yet in the index
        base=$(basename "$f")
        stem=${base%%.*}
        found=""
        while IFS= read -r row; do
            first=$(printf '%s' "$row" | cut -d'|' -f2)
            rest=$(printf '%s' "$row" | cut -d'|' -f3-)
            for p in $(printf '%s' "$first" | grep -o '`[^`]*`' | tr -d '`' | tr ',' ' '); do
                case $f in
                "$p") found=y ;;
                "$p"*)
                    rel=${f#"$p"}
                    if printf '%s' "$rest" | grep -qF -e "\`$base\`" -e "\`$rel\`" -e "\`$stem\`" \
                        -e "\`$stem.c\`" -e "\`$stem.h\`" -e "\`$stem (" -e "\`$stem\` "; then
                        found=y
                    fi
                    ;;
                esac
            done
        done <"$TMP/rows"
        [ -n "$found" ] || missing="$missing $f"
    done <"$TMP/files"
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
