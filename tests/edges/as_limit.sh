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
