# execl, execlp and execle (one body in the hooks): natively and traced,
# the same output and status; the failed execl and the one that goes
# through are in the trace with their argument lists, and execle's
# environment reaches the program (which, without LD_PRELOAD in it, is
# not traced).
if need_program exec_list; then
    for mode in l lp le; do
        fresh_out
        untraced "$EDGES/exec_list" $mode >"$TMP/p.out" 2>"$TMP/p.err"
        plain=$?
        traced "$EDGES/exec_list" $mode >"$TMP/t.out" 2>"$TMP/t.err"
        st=$?
        same_status "exec_list $mode" "$st" "$plain"
        expect_same "exec_list $mode: same stdout" "$TMP/p.out" "$TMP/t.out"
        expect_same "exec_list $mode: same stderr" "$TMP/p.err" "$TMP/t.err"
        f=$(trace_of_exe exec_list)
        execs=$(trace_text "$f" | sed -n 's/.*"ev":"exec",.*"path":"\([^"]*\)","argv":\(.*\)}$/exec \1 \2/p
            s/.*"ev":"exec_failed",.*"errno":\([0-9]*\)}$/failed \1/p' | tr '\n' '|')
        first='exec /nonexistent/exec_list ["x","y"]|failed 2|'
        case $mode in
        l) want="${first}exec /bin/sh [\"sh\",\"-c\",\"echo l: \$0 \$1 \$2\",\"a0\",\"a1\",\"a2\"]|" ;;
        lp) want="${first}exec sh [\"sh\",\"-c\",\"echo lp: \$0 \$1\",\"b0\",\"b1\"]|" ;;
        le) want="${first}exec /bin/sh [\"sh\",\"-c\",\"echo le: \$0 \$EXEC_LIST_VAR\",\"c0\"],\"traced\":false|" ;;
        esac
        expect_eq "exec_list $mode: the trace has both execs with their arguments" "$execs" "$want"
    done
    expect_eq "exec_list le: the environment given reaches the program" \
        "$(sed -n 2p "$TMP/t.out")" "le: c0 given"
fi
