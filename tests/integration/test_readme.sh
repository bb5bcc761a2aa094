# README.md against the repository: its layout table covers every file
# (one row per folder), each folder row has a README.md saying what lives
# there, and every option of every command's --help is in README.md.
. tests/integration/lib.sh

# ---- the layout table ----------------------------------------------------------------

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    awk '/^## Layout/ { on = 1; next } /^## / { on = 0 } on && /^\| `/' README.md |
        cut -d'|' -f2 | grep -o '`[^`]*`' | tr -d '`' | tr ',' '\n' | tr -d ' ' |
        grep . >"$TMP/paths"
    git ls-files -co --exclude-standard >"$TMP/files"
    while read -r f; do
        [ -e "$f" ] && printf '%s\n' "$f" # deleted in the work tree, not yet in the index
    done <"$TMP/files" >"$TMP/present"
    # Every file is a row's path or lies under a row's folder (a path ending in /).
    missing=$(awk -v paths="$TMP/paths" '
        BEGIN { while ((getline p < paths) > 0) path[++n] = p }
        {
            for (i = 1; i <= n; i++)
                if ($0 == path[i] || (path[i] ~ /\/$/ && index($0, path[i]) == 1)) next
            printf " %s", $0
        }' "$TMP/present")
    expect_eq "README's layout table covers every file" "$missing" ""
    # and names nothing that is gone
    gone=""
    for p in $(cat "$TMP/paths"); do
        [ -e "$p" ] || gone="$gone $p"
    done
    expect_eq "README's layout table: every path it names exists" "$gone" ""
    # Every top-level folder has a row at or below it.
    norow=""
    for d in $(grep / "$TMP/present" | cut -d/ -f1 | sort -u); do
        grep -q "^$d/" "$TMP/paths" || norow="$norow $d/"
    done
    expect_eq "README's layout table has a row for every top-level folder" "$norow" ""
    # Every folder row opens with a README.md saying what lives there.
    noreadme=""
    for d in $(grep '/$' "$TMP/paths"); do
        [ -s "${d}README.md" ] || noreadme="$noreadme ${d}README.md"
    done
    expect_eq "every folder of the layout table has a README.md" "$noreadme" ""
    # Every folder holding source has a row (of its own, or of a file in it
    # whose opening comment says what it is), or is named in the README.md
    # of the nearest folder above it that has a row.
    unnamed=""
    for d in $(grep -E '/[^/]+\.(c|h|S|sh|py|pl|lua|js|def|proto)$' "$TMP/present" | sed 's,/[^/]*$,,' | sort -u); do
        grep -qx "$d/" "$TMP/paths" && continue
        grep -q "^$d/[^/]*\$" "$TMP/paths" && continue
        up=$d
        while case $up in */*) true ;; *) false ;; esac; do
            up=${up%/*}
            grep -qx "$up/" "$TMP/paths" && break
        done
        if grep -qx "$up/" "$TMP/paths" && grep -qF "${d#"$up"/}/" "$up/README.md"; then
            continue
        fi
        unnamed="$unnamed $d/"
    done
    expect_eq "every folder with source has a row or is named in its folder's README.md" "$unnamed" ""
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

# Every variable libmemsim.so reads (ipc/config.h) is documented in
# the README's table and in libmemsim(7).
missing=
for v in $(grep -o '"MEMSIM_[A-Z_]*"' ipc/config.h | tr -d '"'); do
    grep -q "\b$v\b" README.md || missing="$missing README:$v"
    grep -q "\b$v\b" man/libmemsim.7 || missing="$missing libmemsim.7:$v"
done
expect_eq "every MEMSIM_ variable in the README and libmemsim(7)" "$missing" ""

summary
