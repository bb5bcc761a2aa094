# 400 threads inside realloc at once, each moving its block onto one the
# main thread freed while it waited (tests/edges/realloc_crowd.c, with
# libcrowd.so behind libmemsim.so).  The recorder keeps a moved realloc
# until its done; it had room for 256, and pushed the oldest out early:
# the trace then read "realloc to X, which is still live".  Same output
# and status, traces that pass tracecheck, every realloc in the trace.
if need_program realloc_crowd; then
    fresh_out
    crowd_env="GLIBC_TUNABLES=glibc.malloc.tcache_count=0 MALLOC_ARENA_MAX=1"
    untraced env $crowd_env LD_PRELOAD="$EDGES/libcrowd.so" \
        "$EDGES/realloc_crowd" 400 >"$TMP/p.out" 2>"$TMP/p.err"
    plain=$?
    timeout -k 2 "$LIMIT" env $crowd_env LD_PRELOAD="$LIB $EDGES/libcrowd.so" \
        MEMSIM_OUTPUT="$OUT" "$EDGES/realloc_crowd" 400 >"$TMP/t.out" 2>"$TMP/t.err"
    st=$?
    expect_eq "realloc_crowd: natively" "$plain:$(cat "$TMP/p.out")" "0:threads 400, reallocs 400"
    same_status "realloc_crowd" "$st" "$plain"
    expect_same "realloc_crowd: same stdout" "$TMP/p.out" "$TMP/t.out"
    expect_same "realloc_crowd: same stderr" "$TMP/p.err" "$TMP/t.err"
    check_traces "realloc_crowd"
    f=$(only_trace)
    expect_eq "realloc_crowd: 400 reallocs of 100 bytes in the trace" \
        "$(trace_text "$f" | awk -F, '$1 == "[\"r\"" && $6 == 100' | wc -l | tr -d ' ')" 400
fi
