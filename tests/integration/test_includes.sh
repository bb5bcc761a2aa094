# The include rules: every `#include "..."` of every source file against
# the "May include:" line of the README.md nearest above it (the rules
# are those lines, nowhere else; README.md's "Layout" sums them up).  A
# rule lists folders (`lib/`: anything under it) and single headers
# (`analyzer/options.h`); "May include any folder" allows all.  One line
# per include that breaks its folder's rule, naming the file and the
# include; quoted includes are named from the repository's root.
. tests/integration/lib.sh

# rules ROOT: "DIR<TAB>ALLOWED..." for each README.md with a rule, DIR
# with a trailing / ("" at the root), ALLOWED "*" for any folder.
rules() {
    (cd "$1" && find . -name README.md -not -path './build/*' -not -path './.git/*') | sort |
        while read -r r; do
            dir=${r#./}
            dir=${dir%README.md}
            # the rule's paragraph: from "May include" to the next blank line
            text=$(awk '/May include/ { on = 1 } on && /^[[:space:]]*$/ { exit } on' "$1/$r" |
                sed 's/.*May include//' | tr '\n' ' ')
            [ -n "$text" ] || continue
            case $text in
            " any folder"*) allowed="*" ;;
            *) allowed=$(printf '%s\n' "$text" | grep -o '`[^`]*`' | tr -d '`' | grep / | tr '\n' ' ') ;;
            esac
            printf '%s\t%s\n' "$dir" "$allowed"
        done
}

# check_includes ROOT FILES-LIST: the offending includes, one line each.
check_includes() {
    rules "$1" >"$TMP/rules"
    while read -r f; do
        grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$1/$f" 2>/dev/null |
            sed 's/^\([0-9]*\):[^"]*"\([^"]*\)".*/\1 \2/' |
            while read -r line inc; do
                printf '%s\t%s\t%s\n' "$f" "$line" "$inc"
            done
    done <"$2" |
        awk -F'\t' -v rules="$TMP/rules" '
            BEGIN { while ((getline r < rules) > 0) { split(r, p, "\t"); allow[p[1]] = p[2]; have[p[1]] = 1 } }
            {
                f = $1; inc = $3
                # the nearest folder above f with a rule
                d = f; rule = ""; found = 0
                while (1) {
                    if (d ~ /\//) { sub(/[^\/]*\/?$/, "", d) } else d = ""
                    if (d in have) { rule = d; found = 1; break }
                    if (d == "") break
                }
                if (!found) { printf "%s:%d: #include \"%s\": no README.md above it says what it may include\n", f, $2, inc; next }
                if (inc !~ /\//) { printf "%s:%d: #include \"%s\": name it from the repository'"'"'s root\n", f, $2, inc; next }
                a = allow[rule]
                if (a == "*") next
                n = split(a, ok, " ")
                for (i = 1; i <= n; i++) {
                    if (ok[i] ~ /\/$/ && index(inc, ok[i]) == 1) next
                    if (inc == ok[i]) next
                }
                printf "%s:%d: #include \"%s\": %sREADME.md allows only %s\n", f, $2, inc, rule, a
            }'
}

# ---- the checker finds a planted bad include ------------------------------------------

mkdir -p "$TMP/tree/low" "$TMP/tree/high"
printf '# low/\n\nMay include: `low/`.\n' >"$TMP/tree/low/README.md"
printf '# high/\n\nMay include: `high/`, `low/`,\n`other/one.h`.\n' >"$TMP/tree/high/README.md"
printf '#include "low/a.h"\n#include "high/b.h"\n#include "other/one.h"\n' >"$TMP/tree/high/ok.c"
printf '#include "low/a.h"\n#include "high/b.h"\n' >"$TMP/tree/low/bad.c"
printf 'high/ok.c\nlow/bad.c\n' >"$TMP/tree/files"
check_includes "$TMP/tree" "$TMP/tree/files" >"$TMP/planted"
expect_eq "a planted include against the rules is one line naming the file and the include" \
    "$(cat "$TMP/planted")" 'low/bad.c:2: #include "high/b.h": low/README.md allows only low/ '

# ---- the repository ---------------------------------------------------------------------

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -co --exclude-standard | grep -E '\.(c|h|def|S|cc|cpp)$' | while read -r f; do
        [ -e "$f" ] && printf '%s\n' "$f"
    done >"$TMP/sources"
    check_includes . "$TMP/sources" >"$TMP/bad"
    cat "$TMP/bad"
    expect_eq "every #include follows its folder's README.md (lines above)" "$(wc -l <"$TMP/bad" | tr -d ' ')" 0
else
    echo "# skip - the include rules: not a git checkout"
fi

summary
