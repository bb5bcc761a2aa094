# The front command: memsim help CMD, memsim CMD --help, memsim analyze
# (memsim-analyze under another name), unknown commands, and the bash
# completion (dist/memsim.bash).
. tests/integration/lib.sh

A=$BUILD/memsim-analyze

# ---- help ------------------------------------------------------------------------

expect_status "memsim help: exit 0" 0 "$MEMSIM" help
expect_grep "memsim help lists analyze" "^  analyze  " "$TMP/out"
expect_grep "memsim help says memsim help CMD" "memsim help <command>" "$TMP/out"
for cmd in run simulate; do
    "$MEMSIM" "$cmd" --help >"$TMP/direct" 2>&1
    expect_status "memsim help $cmd: exit 0" 0 "$MEMSIM" help "$cmd"
    expect_eq "memsim help $cmd is memsim $cmd --help" "$(md5sum <"$TMP/out")" "$(md5sum <"$TMP/direct")"
    expect_eq "memsim help $cmd: nothing on stderr" "$(cat "$TMP/err")" ""
    expect_grep "memsim help $cmd: its own usage" "^usage: memsim $cmd " "$TMP/out"
done
"$A" --help >"$TMP/direct" 2>&1
expect_status "memsim help analyze: exit 0" 0 "$MEMSIM" help analyze
expect_eq "memsim help analyze is memsim-analyze --help" "$(md5sum <"$TMP/out")" "$(md5sum <"$TMP/direct")"
expect_status "memsim analyze --help: exit 0" 0 "$MEMSIM" analyze --help
expect_eq "memsim analyze --help is memsim-analyze --help" "$(md5sum <"$TMP/out")" "$(md5sum <"$TMP/direct")"
expect_grep "memsim-analyze --help names memsim analyze" "^   or: memsim analyze " "$TMP/direct"

# memsim-analyze --version: the version memsim prints, exit 0, nothing on stderr.
expect_status "memsim version" 0 "$MEMSIM" version
ver=$(sed 's/^memsim //' "$TMP/out")
expect_status "memsim-analyze --version: exit 0" 0 "$A" --version
expect_eq "memsim-analyze --version: its name and memsim's version" "$(cat "$TMP/out")" "memsim-analyze $ver"
expect_eq "memsim-analyze --version: nothing on stderr" "$(cat "$TMP/err")" ""
expect_status "memsim analyze --version: exit 0" 0 "$MEMSIM" analyze --version
expect_eq "memsim analyze --version: the same" "$(cat "$TMP/out")" "memsim-analyze $ver"

expect_status "memsim help bogus: exit 2" 2 "$MEMSIM" help bogus
expect_eq "memsim help bogus: one line naming it" "$(cat "$TMP/err")" \
    'memsim: help: unknown command "bogus" (commands: run, analyze, simulate, version, help)'
expect_status "memsim help run simulate: exit 2" 2 "$MEMSIM" help run simulate
expect_eq "memsim help with two commands: one line" "$(cat "$TMP/err")" \
    'memsim help: one command at most (usage: memsim help <command>)'
expect_status "memsim bogus: exit 2" 2 "$MEMSIM" bogus
expect_eq "memsim bogus: one line naming it" "$(cat "$TMP/err")" \
    'memsim: unknown command "bogus" (commands: run, analyze, simulate, version, help)'
expect_status "memsim alone: exit 2" 2 "$MEMSIM"
expect_grep "memsim alone: the usage on stderr" "^usage: memsim <command>" "$TMP/err"

# ---- memsim analyze is memsim-analyze ----------------------------------------

cat >"$TMP/t.jsonl" <<'EOT'
{"ev":"meta","t":0,"tid":1,"format":"memsim-trace","version":1,"pid":42,"ppid":1,"exe":"/bin/known","argv":["known"],"start_unix_ns":0,"page_size":4096,"strategy":"best-fit","device_size":1048576,"stack_depth":64,"mmap":true,"memsim_version":"0.1.0","parent_trace":null}
{"ev":"alloc","t":2,"tid":1,"fn":"malloc","addr":4096,"size":100,"align":16,"stack":0,"sim":null}
{"ev":"end","t":9,"tid":1,"reason":"exit","status":0,"signal":null,"records":3,"dropped":0,"after_end":0,"unknown_frees":0,"live_allocations":1,"live_bytes":100,"stacks":0}
EOT
"$A" --json "$TMP/t.jsonl" >"$TMP/direct" 2>&1
expect_status "memsim analyze --json: exit 0" 0 "$MEMSIM" analyze --json "$TMP/t.jsonl"
expect_eq "memsim analyze --json is memsim-analyze --json" "$(md5sum <"$TMP/out")" "$(md5sum <"$TMP/direct")"
expect_status "memsim analyze --bogus: exit 2" 2 "$MEMSIM" analyze --bogus "$TMP/t.jsonl"
expect_eq "memsim analyze --bogus: the analyzer's one line" "$(cat "$TMP/err")" \
    'memsim-analyze: unknown option "--bogus" (see memsim-analyze --help)'
mkdir "$TMP/lonely"
cp "$MEMSIM" "$TMP/lonely/memsim"
REAL=$(cd "$TMP" && pwd -P)
expect_status "memsim analyze without memsim-analyze beside it: exit 2" 2 \
    "$TMP/lonely/memsim" analyze "$TMP/t.jsonl"
expect_eq "memsim analyze without memsim-analyze: says where it looked" "$(cat "$TMP/err")" \
    "memsim analyze: cannot find memsim-analyze: looked for $REAL/lonely/memsim-analyze"

# ---- bash completion -----------------------------------------------------------

if command -v bash >/dev/null 2>&1; then
    # complete WORDS...: what the completion offers for the last word.
    complete_words() {
        bash -c '. dist/memsim.bash
            COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=()
            case $1 in *memsim-analyze) _memsim_analyze ;; *) _memsim ;; esac
            echo "${COMPREPLY[*]}"' bash "$@"
    }
    expect_eq "completion: the commands" "$(complete_words "$MEMSIM" "")" \
        "run analyze simulate help version"
    expect_eq "completion: a command's prefix" "$(complete_words "$MEMSIM" si)" simulate
    expect_eq "completion: memsim help CMD" "$(complete_words "$MEMSIM" help a)" analyze
    expect_eq "completion: run's options from its --help" \
        "$(complete_words "$MEMSIM" run --no)" "--no-children --no-compress"
    expect_eq "completion: run --analyze-opts" \
        "$(complete_words "$MEMSIM" run --analyze-)" "--analyze-opts"
    expect_eq "completion: strategies" "$(complete_words "$MEMSIM" simulate -s b)" "best-fit buddy"
    expect_eq "completion: analyze's options" "$(complete_words "$MEMSIM" analyze --col)" "--collapsed"
    expect_eq "completion: memsim-analyze's options" "$(complete_words "$A" --no-r)" "--no-replay"
    mkdir -p "$TMP/comp/dir-one"
    expect_eq "completion: --out takes a path" \
        "$(complete_words "$MEMSIM" run --out "$TMP/comp/dir-")" "$TMP/comp/dir-one"
    expect_eq "completion: the command's own options are not memsim run's" \
        "$(complete_words "$MEMSIM" run --out x ls --no)" ""
else
    echo "# skip - completion: bash is not installed"
fi

summary
