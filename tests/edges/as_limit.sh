# Under an address-space limit (ulimit -v), a program that allocates
# 1 MiB blocks until malloc fails, then single pages until mmap fails.
# Wherever memsim does not trace, the program must get what it gets
# natively: memsim gives back what it took (the arena, the tables, the
# threads' areas).  The native run's limit is lowered by what the images
# of libmemsim.so and its libraries take in the run it is compared with
# (libm; libunwind and liblzma once loaded: as_limit libs), which no
# program can give back; then the blocks must match exactly and the
# pages within 2 (the libraries' own pages, rounded).  Traced, memsim
# takes at most an eighth of the limit for the arena, and here (one
# stack, one thread) 6 MiB more: the frame rules' table (1 MiB), the
# stack table's first chunk and index, the thread's area, libunwind's caches
# (docs/preload.md).
if need_program as_limit; then
    KIB=100000
    # as_limit_case NAME MODE ENV...: MODE's counts natively and with ENV.
    as_limit_case() {
        name=$1 mode=$2
        shift 2
        libs=$(untraced env "$@" "$EDGES/as_limit" libs 2>/dev/null)
        n=$( (ulimit -v $((KIB - libs)); untraced "$EDGES/as_limit" "$mode") 2>&1)
        t=$( (ulimit -v "$KIB"; untraced env "$@" "$EDGES/as_limit" "$mode") 2>/dev/null)
        nb=${n% *} np=${n#* } tb=${t% *} tp=${t#* }
        if [ "$libs" -gt 0 ] 2>/dev/null && [ "$libs" -lt 2048 ] && [ "$nb" -gt 40 ] 2>/dev/null &&
            [ "$tb" = "$nb" ] && [ "$tp" -ge $((np - 2)) ] 2>/dev/null && [ "$tp" -le $((np + 2)) ]; then
            pass "as_limit: $name: as natively ($t against $n, libraries $libs KiB)"
        else
            fail "as_limit: $name: as natively" "blocks and pages $t against $n natively (libraries $libs KiB)"
        fi
    }
    fresh_out
    as_limit_case "MEMSIM_TRACE_CHILDREN=0, a program below the first" plain \
        LD_PRELOAD="$LIB" MEMSIM_OUTPUT="$OUT" MEMSIM_TRACE_CHILDREN=0 MEMSIM_ROOT_PID=1
    as_limit_case "a bad MEMSIM_* value" plain LD_PRELOAD="$LIB" MEMSIM_STACK_DEPTH=deep
    as_limit_case "the recorder cannot open its trace" plain \
        LD_PRELOAD="$LIB" MEMSIM_OUTPUT="$TMP/no/such/dir"
    # libmemsim.so with no memsim-recorder beside it.
    mkdir -p "$TMP/lonely"
    cp "$LIB" "$TMP/lonely/libmemsim.so"
    as_limit_case "no recorder to start" plain \
        LD_PRELOAD="$TMP/lonely/libmemsim.so" MEMSIM_OUTPUT="$OUT"
    as_limit_case "an exec'd image that cannot join its recorder, nor start one" plain \
        LD_PRELOAD="$TMP/lonely/libmemsim.so" MEMSIM_OUTPUT="$OUT" MEMSIM_ARENA=999999:1
    as_limit_case "a traced parent's child under MEMSIM_TRACE_CHILDREN=0" fork \
        LD_PRELOAD="$LIB" MEMSIM_OUTPUT="$OUT" MEMSIM_TRACE_CHILDREN=0
    as_limit_case "the child of an untraced parent" fork \
        LD_PRELOAD="$LIB" MEMSIM_OUTPUT="$TMP/no/such/dir"
    as_limit_case "threads come and gone, untraced" threads \
        LD_PRELOAD="$LIB" MEMSIM_OUTPUT="$TMP/no/such/dir"
    # Its recorder killed (SIGKILL) while it waits for a line: its next
    # posts find the ring closed, tracing stops, the process (one thread)
    # gives its address space back, and at exit one line says the trace
    # may be incomplete.
    libs=$(untraced env LD_PRELOAD="$LIB" MEMSIM_OUTPUT="$OUT" "$EDGES/as_limit" libs)
    n=$(echo | (ulimit -v $((KIB - libs)); untraced "$EDGES/as_limit" wait) 2>&1)
    fresh_out
    rm -f "$TMP/line"
    mkfifo "$TMP/line"
    (ulimit -v "$KIB"; traced "$EDGES/as_limit" wait <"$TMP/line" >"$TMP/gone.out" 2>"$TMP/gone.err") &
    waiter=$!
    exec 9>"$TMP/line"
    rec=
    i=0
    while [ -z "$rec" ] && [ $i -lt 1200 ]; do
        for f in "$OUT"/memsim.as_limit.*.jsonl.zst; do
            [ -e "$f" ] || continue
            for c in /proc/[0-9]*/comm; do
                [ "$(cat "$c" 2>/dev/null)" = memsim-recorder ] || continue
                for fd in "${c%/comm}"/fd/*; do
                    [ "$(readlink "$fd" 2>/dev/null)" = "$f" ] && rec=$(echo "$c" | cut -d/ -f3)
                done
            done
        done
        [ -z "$rec" ] && sleep 0.05
        i=$((i + 1))
    done
    [ -n "$rec" ] && kill -KILL "$rec"
    echo >&9
    exec 9>&-
    wait $waiter
    st=$?
    t=$(cat "$TMP/gone.out")
    nb=${n% *} np=${n#* } tb=${t% *} tp=${t#* }
    if [ -n "$rec" ] && [ "$st" = 0 ] && [ "$tb" = "$nb" ] && [ "$tp" -ge $((np - 2)) ] 2>/dev/null &&
        [ "$tp" -le $((np + 2)) ]; then
        pass "as_limit: its recorder killed: as natively ($t against $n)"
    else
        fail "as_limit: its recorder killed: as natively" \
            "recorder ${rec:-not found}, status $st, $t against $n natively"
    fi
    expect_eq "as_limit: its recorder killed: one line, at exit" \
        "$(grep -c 'may be incomplete: its recorder did not finish with it$' "$TMP/gone.err")/$(wc -l <"$TMP/gone.err" | tr -d ' ')" 1/1
    # Traced: the arena (an eighth of the limit at most) and 6 MiB more.
    libs=$(untraced env LD_PRELOAD="$LIB" MEMSIM_OUTPUT="$OUT" "$EDGES/as_limit" libs)
    n=$( (ulimit -v $((KIB - libs)); untraced "$EDGES/as_limit") 2>&1)
    t=$( (ulimit -v "$KIB"; traced "$EDGES/as_limit") 2>/dev/null)
    nb=${n% *} tb=${t% *}
    if [ "$tb" -ge $((nb - KIB / 8 / 1024 - 6)) ] 2>/dev/null && [ "$tb" -le "$nb" ]; then
        pass "as_limit: traced, within an eighth of the limit and 6 MiB ($tb blocks against $nb)"
    else
        fail "as_limit: traced, within an eighth of the limit and 6 MiB" "$tb blocks against $nb"
    fi
fi
