# A launcher locks itself in a seccomp filter and executes the program,
# which starts under the filter it inherits (a service under systemd's
# SystemCallFilter, a container).  memsim cannot read such a filter; one
# that allows what memsim's start-up needs leaves it tracing as usual,
# the recorder (its process inherits the filter too) included.
if need_program seccomp_inherit && need_program seccomp_whitelist; then
    pair "seccomp_inherit" "$EDGES/seccomp_inherit" "$EDGES/seccomp_whitelist" none 200000
    expect_eq "seccomp_inherit: natively, exit 0 and the checksum" \
        "$PLAIN:$(tail -n 1 "$TMP/p.out")" "0:total 89613618"
    check_traces "seccomp_inherit"
    f=$(trace_of_exe seccomp_inherit)
    expect_eq "seccomp_inherit: the launcher's trace notes its sandbox and ends with the exec" \
        "$(trace_text "$f" | grep -c '"ev":"sandbox"'):$(end_field reason "$f")" "1:exec"
    f=$(trace_of_exe seccomp_whitelist)
    expect_eq "seccomp_inherit: the program's trace is whole" \
        "$(end_field reason "$f"):$(end_field status "$f"):$(end_field dropped "$f"):$(tc allocs "$f")" \
        "exit:0:0:200002"
fi
