# How memsim walks stacks (preload/walk.h): by cached frame rules and the
# thread's last stack, with libunwind where they end.  Under
# MEMSIM_UNWIND=check every stack is walked both ways and a difference is
# said on stderr ("memsim: unwind check: stacks differ ..."): none may
# appear, on test programs of hard shapes and on real programs, and each
# program's output and status stay its own.
. tests/integration/lib.sh

if [ "${SANITIZE:-}" = 1 ]; then
    echo "# skip - unwind tests: libmemsim.so is not built with SANITIZE=1"
    summary
    exit
fi

LIB=$(cd "$BUILD" && pwd)/libmemsim.so
mkdir -p "$TMP/t"

# checked NAME CMD...: CMD's output and status natively, then under
# memsim with MEMSIM_UNWIND=check: the same, and no stack differed.
checked() {
    name=$1
    shift
    "$@" >"$TMP/native.out" 2>/dev/null </dev/null
    want=$?
    env LD_PRELOAD="$LIB" MEMSIM_OUTPUT="$TMP/t" MEMSIM_UNWIND=check "$@" \
        >"$TMP/traced.out" 2>"$TMP/traced.err" </dev/null
    got=$?
    if grep -q "unwind check" "$TMP/traced.err"; then
        fail "$name: stacks as libunwind's" "$(head -c 400 "$TMP/traced.err")"
    else
        pass "$name: stacks as libunwind's"
    fi
    if [ "$got" = "$want" ] && cmp -s "$TMP/native.out" "$TMP/traced.out"; then
        pass "$name: same output and status"
    else
        fail "$name: same output and status" "status $got, want $want; $(head -c 200 "$TMP/traced.err")"
    fi
    if ls "$TMP"/t/*.jsonl* >/dev/null 2>&1 && grep -q '"ev":"stack"' "$TMP/t"/* 2>/dev/null; then
        pass "$name: traced, with stacks"
    else
        fail "$name: traced, with stacks" "no stack record in $(ls "$TMP/t")"
    fi
    rm -f "$TMP"/t/*
}

checked "walk_shapes" "$BUILD/programs/walk_shapes" 4000
# After an unload the stacks the rules do not cover (signal frames here)
# are libunwind's by unw_step; check mode compares every stack with it.
checked "walk_shapes, a library unloaded first" "$BUILD/programs/walk_shapes" 4000 unloaded
checked "coro" "$BUILD/programs/coro"
checked "mt_alloc" "$BUILD/programs/mt_alloc"
checked "fork_mt" "$BUILD/programs/fork_mt"
checked "small_stack" "$BUILD/programs/small_stack"
checked "dlswap" sh -c "cd '$BUILD/programs' && exec ./dlswap"
# Other frame rules at an unloaded library's return address: walked by
# the old rule, the stack is read at an address that is never mapped
# (heaptrack faults so: libunwind's unw_backtrace keeps its frame cache).
DLR=$(cd "$BUILD/programs" && ./dlrules 2>&1)
want=$?
expect_eq "dlrules: the plugins load at one address" "$want" 0
for mode in fast libunwind check; do
    got=$(cd "$BUILD/programs" && LD_PRELOAD="$LIB" MEMSIM_OUTPUT="$TMP/t" MEMSIM_UNWIND=$mode \
        ./dlrules 2>"$TMP/dlr.err")
    expect_eq "dlrules ($mode): same output and status" "$got / $?" "$DLR / $want"
    expect_eq "dlrules ($mode): no message" "$(cat "$TMP/dlr.err")" ""
    expect_eq "dlrules ($mode): traced" "$(ls "$TMP"/t | grep -c '^memsim\.dlrules\.')" 1
    # a's unload is posted as dlclose returns, before b's first block
    # (b's stacks are a's, none new: nothing else would post it).
    trace_text "$TMP"/t/memsim.dlrules.* >"$TMP/dlr.txt"
    abase=$(grep -o '"op":"load","path":"[^"]*librules_a.so","base":[0-9]*' "$TMP/dlr.txt" | grep -o '[0-9]*$')
    ua=$(grep -n "\"op\":\"unload\",\"path\":\"[^\"]*\",\"base\":$abase," "$TMP/dlr.txt" | head -n 1 | cut -d: -f1)
    b1=$(grep -n '^\["a",[-0-9]*,[0-9]*,"[0-9a-f]*",24,' "$TMP/dlr.txt" | tail -n 1 | cut -d: -f1)
    expect_eq "dlrules ($mode): a's unload before b's first block" \
        "$([ -n "$ua" ] && [ -n "$b1" ] && [ "$ua" -lt "$b1" ] && echo yes)" yes
    # b's 50 blocks come through a's return addresses: its own site all
    # the same, named from librules_b.so (its stacks are new after a's
    # unload, posted after b's load).
    "$BUILD/memsim-analyze" --json --no-replay "$TMP"/t/memsim.dlrules.* >"$TMP/dlr.json" 2>/dev/null
    got=
    for k in 0 1 2 3 4 5; do
        [ "$("$JSONQ" sites.$k.frames.0.function <"$TMP/dlr.json" 2>/dev/null)" = rules_f ] || continue
        got="$got $("$JSONQ" sites.$k.calls <"$TMP/dlr.json") $(basename "$("$JSONQ" sites.$k.frames.0.module <"$TMP/dlr.json")")"
    done
    expect_eq "dlrules ($mode): 50 blocks named from each plugin" \
        "$(echo $got | tr ' ' '\n' | paste - - | sort | tr '\n' ' ')" "50	librules_a.so 50	librules_b.so "
    rm -f "$TMP"/t/*
done
checked "sigdisp" "$BUILD/programs/sigdisp"

# Real programs, where installed.
HERE=$(pwd)
if [ -x /usr/bin/python3 ]; then
    checked "python3" env PYTHONMALLOC=malloc /usr/bin/python3 "$HERE/bench/real/churn.py" 3000
fi
if command -v perl >/dev/null 2>&1; then
    seq 1 3000 | awk '{print "w" $1 % 97, "x" $1 % 13}' >"$TMP/words.txt"
    checked "perl" perl "$HERE/bench/real/words.pl" "$TMP/words.txt"
fi
if command -v lua5.4 >/dev/null 2>&1; then
    checked "lua5.4" lua5.4 "$HERE/bench/real/tables.lua" 3000
fi
if command -v sqlite3 >/dev/null 2>&1; then
    printf 'create table t(a integer, b text);\n%s\nselect count(*), sum(a) from t;\n' \
        "$(seq 1 500 | awk '{print "insert into t values(" $1 ", \x27v" $1 "\x27);"}')" >"$TMP/q.sql"
    checked "sqlite3" sqlite3 -init "$TMP/q.sql" :memory: .quit
fi
checked "sort" sort "$HERE/README.md"
if command -v xz >/dev/null 2>&1; then
    checked "xz" xz -c "$HERE/README.md"
fi
if command -v git >/dev/null 2>&1 && [ -d .git ]; then
    checked "git log" git log --oneline -n 20
fi

# A bad value: one line naming it, the program untraced and unchanged.
"$BUILD/programs/det_heap" >"$TMP/native.out" 2>/dev/null
env LD_PRELOAD="$LIB" MEMSIM_OUTPUT="$TMP/t" MEMSIM_UNWIND=fastest "$BUILD/programs/det_heap" \
    >"$TMP/traced.out" 2>"$TMP/traced.err"
expect_eq "MEMSIM_UNWIND=fastest: status" "$?" 0
expect_one_line "MEMSIM_UNWIND=fastest: one line" "$TMP/traced.err"
expect_grep "MEMSIM_UNWIND=fastest: names it" 'MEMSIM_UNWIND="fastest" is not fast, libunwind or check' "$TMP/traced.err"
if cmp -s "$TMP/native.out" "$TMP/traced.out"; then pass "MEMSIM_UNWIND=fastest: same output"; else
    fail "MEMSIM_UNWIND=fastest: same output" "differs"
fi

# MEMSIM_UNWIND=libunwind and the default give the same stacks (addresses
# differ from run to run: compared without address randomization; ids
# follow the threads' order, so only the frames are compared).
# walk_stacks NAME ARGS...: walk_shapes ARGS traced under MEMSIM_UNWIND=libunwind
# and fast, without address randomization; each trace's stacks (their
# frames), sorted, into $TMP/NAME-libunwind.stacks and $TMP/NAME-fast.stacks.
walk_stacks() {
    name=$1
    shift
    for m in libunwind fast; do
        mkdir -p "$TMP/$name-$m"
        setarch -R env LD_PRELOAD="$LIB" MEMSIM_OUTPUT="$TMP/$name-$m" MEMSIM_UNWIND=$m \
            "$BUILD/programs/walk_shapes" "$@" >/dev/null 2>&1
        trace_text "$TMP/$name-$m"/*.jsonl* | grep '"ev":"stack"' | sed 's/.*"frames"://' |
            sort >"$TMP/$name-$m.stacks"
    done
}

# same_stacks NAME WHAT: walk_stacks NAME's two sets are the same (over 20).
same_stacks() {
    n=$(wc -l <"$TMP/$1-fast.stacks")
    if [ "$n" -gt 20 ] && cmp -s "$TMP/$1-libunwind.stacks" "$TMP/$1-fast.stacks"; then
        pass "$2: the same $n stacks as with MEMSIM_UNWIND=libunwind"
    else
        fail "$2: the same stacks as with MEMSIM_UNWIND=libunwind" \
            "$n stacks; $(diff "$TMP/$1-libunwind.stacks" "$TMP/$1-fast.stacks" | head -c 300)"
    fi
}

if command -v setarch >/dev/null 2>&1 && setarch -R true 2>/dev/null; then
    walk_stacks all 2000
    same_stacks all "walk_shapes"
    # One thread, a signal handler allocating: libunwind is never loaded
    # (a dlopen from a handler could interrupt the loader), so those
    # stacks end at the signal frame, their frames libunwind's first ones
    # (the last the handler's return address); every other stack is
    # libunwind's.  Before libunwind was loaded on demand it was loaded
    # at every start: all the stacks were libunwind's.
    walk_stacks alone 500 alone
    counts=$(awk 'NR == FNR { full[$0] = 1; n++; next }
                  { if ($0 in full) same++; else { p = substr($0, 1, length($0) - 2) ","; cut = 0
                        for (s in full) if (index(s, p) == 1) { cut = 1; break }
                        if (cut) cuts++; else other++ } }
                  END { printf "%d %d %d %d", n, same, cuts, other }' \
        "$TMP/alone-libunwind.stacks" "$TMP/alone-fast.stacks")
    set -- $counts
    if [ "$1" -gt 20 ] && [ "$3" -ge 1 ] && [ "$4" = 0 ] && [ $(($2 + $3)) -eq "$1" ]; then
        pass "walk_shapes alone: $2 stacks as libunwind's, $3 cut at the signal frame"
    else
        fail "walk_shapes alone: libunwind's stacks, the handler's cut at its frame" \
            "libunwind $1 stacks; same $2, cut $3, other $4"
    fi
    # C11 threads first: libunwind was loaded before them, no stack is cut.
    walk_stacks c11 500 c11
    same_stacks c11 "walk_shapes c11"
else
    echo "# skip - stacks compared with libunwind's: setarch -R is not permitted here"
fi

# libunwind is loaded only where a stack needs it, or before a thread,
# an unload or a sandbox: a process that makes none of them never maps it.
fresh_maps() {
    env LD_PRELOAD="$LIB" MEMSIM_OUTPUT="$TMP/maps" "$@" 2>/dev/null |
        grep -o 'libunwind\.so[.0-9]*\|liblzma\.so[.0-9]*' | sort -u | wc -l
}
mkdir -p "$TMP/maps"
expect_eq "one thread, no stack needing it: libunwind not loaded" "$(fresh_maps cat /proc/self/maps)" 0
if command -v python3 >/dev/null 2>&1; then
    expect_eq "a thread made: libunwind loaded before it" \
        "$(fresh_maps python3 -c 'import threading; t = threading.Thread(target=print); t.start(); t.join(); print(open("/proc/self/maps").read())')" 2
fi

summary
