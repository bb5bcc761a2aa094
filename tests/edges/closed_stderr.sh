# A daemon closes stderr, and its data file opens as descriptor 2.  Its
# trace cannot be written whole (the file size limit, as a full disk
# would), so memsim has something to say at exit: the line must not go
# into the program's data file.  The trace still says what it lost.
if need_program closed_stderr; then
    fresh_out
    # ulimit -f counts 1 KiB blocks in bash, 512-byte ones in dash: the
    # data file is 12 bytes, the arena and the trace want megabytes.
    untraced sh -c 'ulimit -f 4096; exec "$@"' sh "$EDGES/closed_stderr" "$TMP/data.plain" 400000 \
        >"$TMP/p.out" 2>"$TMP/p.err"
    plain=$?
    traced sh -c 'ulimit -f 4096; exec "$@"' sh "$EDGES/closed_stderr" "$TMP/data.traced" 400000 \
        >"$TMP/t.out" 2>"$TMP/t.err"
    st=$?
    expect_eq "closed_stderr: natively, exit 0 and its two lines" \
        "$plain:$(cat "$TMP/data.plain")" "0:begin
end 400000"
    same_status "closed_stderr" "$st" "$plain"
    expect_same "closed_stderr: the data file holds the program's bytes only" \
        "$TMP/data.plain" "$TMP/data.traced"
    expect_same "closed_stderr: same stdout" "$TMP/p.out" "$TMP/t.out"
    f=$(trace_of_exe closed_stderr)
    expect_eq "closed_stderr: the trace ends, counting what it could not write" \
        "$(end_field reason "$f"):$([ "$(end_field dropped "$f")" -gt 0 ] 2>/dev/null && echo dropped)" \
        "exit:dropped"
fi
# The same program exec'd under `ulimit -f` below a shell that stays:
# it joins the tree's running recorder (started before the limit), and
# its trace keeps to its own limit all the same (the lower of the
# recorder's and the process's), whichever way the join goes.
if need_program closed_stderr; then
    fresh_out
    traced sh -c '(ulimit -f 4096; exec "$@"); :' sh "$EDGES/closed_stderr" "$TMP/data.joined" 400000 \
        >/dev/null 2>&1
    f=$(trace_of_exe closed_stderr)
    expect_eq "closed_stderr, joined: its trace keeps to its own file size limit (2 MiB in dash's blocks)" \
        "$([ "$(wc -c <"$f")" -le 2097152 ] && echo within):$([ "$(end_field dropped "$f")" -gt 0 ] 2>/dev/null && echo dropped)" \
        "within:dropped"
fi
