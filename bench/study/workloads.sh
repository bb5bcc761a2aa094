# bench/study/workloads.sh: the real workloads of bench/study.sh and
# bench/compare.sh, sourced by both (POSIX sh).  The caller sets
#
#   HERE  bench/ (absolute)     TOP  the repository     IN  a scratch directory for inputs
#   BIN   the build directory (absolute; alloc_heavy and churn live in BIN/programs)
#   WORKLOADS  the names to run; the sizes below (workloads_sizes QUICK sets them)
#   note  a function that records a line for the report
#
# and calls workloads_programs (finds or, as root, installs what the
# workloads need), workloads_inputs (generates their inputs, the same
# bytes at every run), then workload_cmd NAME THREADS for each run.
#
# Workloads: python, python-malloc (bench/study/sort.py, pymalloc on and
# off), threads (bench/study/threads.py: records passed between threads,
# pymalloc off), perl (bench/real/words.pl), sqlite (sqlite3 :memory:, inserts and
# queries), gcc (gcc -O2 -c of bench/study/gen_c.sh's C: its cc1 child is
# traced), xz (xz -6 of perl's text), lua (bench/real/tables.lua), git
# (git log -p of this repository's history to a fixed commit), make
# (make -j2 of a small generated project); alloc_heavy and churn
# (bench/programs/, at THREADS threads).

# The git workload reads this repository's history up to a fixed commit
# (main when the study was written), so that it does not grow.
GIT_COMMIT=674909b

# workloads_sizes QUICK: the sizes of the full study (0) or of its
# shortened check (1).
workloads_sizes() {
    if [ "$1" = 1 ]; then
        PY_N=20000 PERL_WORDS=50000 SQL_ROWS=3000 GCC_FUNCS=20 XZ_WORDS=50000 LUA_N=20000
        MAKE_FILES=2 MAKE_FUNCS=10 AH_EVENTS=400000 CH_EVENTS=200000 THREADS_N=5000
    else
        PY_N=100000 PERL_WORDS=1000000 SQL_ROWS=50000 GCC_FUNCS=250 XZ_WORDS=1000000 LUA_N=200000
        MAKE_FILES=8 MAKE_FUNCS=30 AH_EVENTS=16000000 CH_EVENTS=5000000 THREADS_N=50000
    fi
}

# need CMD PKG: the path of CMD; as root, installs Debian's PKG when it is
# missing.  Empty (and PKG added to $MISSING) when it cannot be had.
MISSING=
need() {
    p=$(command -v "$1" 2>/dev/null || true)
    if [ -z "$p" ] && [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "bench: installing Debian's $2 for $1" >&2
        export DEBIAN_FRONTEND=noninteractive
        apt-get install -y -qq "$2" >/dev/null 2>&1 ||
            { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq "$2" >/dev/null 2>&1; } || true
        p=$(command -v "$1" 2>/dev/null || true)
    fi
    [ -n "$p" ] || MISSING="$MISSING $2"
    echo "$p"
}

workloads_want() { case " $WORKLOADS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

# Finds (or installs) the programs of $WORKLOADS only.
workloads_programs() {
    PY= PERL= SQLITE= GCC= XZ= LUA= GIT= MAKE=
    if workloads_want python || workloads_want python-malloc || workloads_want threads; then
        # The system's python3, not a version manager's shim (a bash
        # script, which would be traced too).
        if [ -x /usr/bin/python3 ]; then PY=/usr/bin/python3; else PY=$(need python3 python3); fi
    fi
    if workloads_want perl || workloads_want sqlite || workloads_want xz; then PERL=$(need perl perl); fi
    if workloads_want sqlite; then SQLITE=$(need sqlite3 sqlite3); fi
    if workloads_want gcc || workloads_want make; then GCC=$(need gcc gcc); fi
    if workloads_want xz; then XZ=$(need xz xz-utils); fi
    if workloads_want lua; then LUA=$(need lua5.4 lua5.4); fi
    if workloads_want git; then GIT=$(need git git); fi
    if workloads_want make; then MAKE=$(need make make); fi
    [ -z "$MISSING" ] || note "missing programs: run apt-get install -y$MISSING (as root), then again"
}

workloads_inputs() {
    mkdir -p "$IN"
    if workloads_want perl || workloads_want sqlite || workloads_want xz; then
        words=$PERL_WORDS
        [ "$XZ_WORDS" -gt "$words" ] && words=$XZ_WORDS
        sh "$HERE/inputs.sh" "$IN" "$words" "$SQL_ROWS"
        head -n $((PERL_WORDS / 12)) "$IN/words.txt" >"$IN/perl.txt"
        head -n $((XZ_WORDS / 12)) "$IN/words.txt" >"$IN/xz.txt"
    fi
    if workloads_want gcc; then sh "$HERE/study/gen_c.sh" "$IN/big.c" "$GCC_FUNCS"; fi
    if workloads_want make; then
        # A small project: MAKE_FILES generated sources and a main, linked.
        P=$IN/project
        mkdir -p "$P"
        objs=
        for i in $(seq "$MAKE_FILES"); do
            sh "$HERE/study/gen_c.sh" "$P/part$i.c.tmp" "$MAKE_FUNCS"
            sed "s/\bf\([0-9][0-9]*\)\b/p${i}_f\1/g" "$P/part$i.c.tmp" >"$P/part$i.c"
            rm -f "$P/part$i.c.tmp"
            objs="$objs part$i.o"
        done
        printf 'int main(void) { return 0; }\n' >"$P/main.c"
        printf 'CFLAGS = -O2\nprog: main.o%s\n\t$(CC) -o $@ $^\n%%.o: %%.c\n\t$(CC) $(CFLAGS) -c -o $@ $<\nclean:\n\trm -f prog *.o\n' \
            "$objs" >"$P/Makefile"
    fi
}

# workload_cmd NAME THREADS: sets WHAT (what runs, for a table), CMD (the
# command line, for eval), ENVV (its environment, words without blanks)
# and PRINCIPAL (the executable of the process tree that the study
# replays, empty: the one with the largest peak heap); cleans what a
# previous run left (make's objects).  1 when the workload cannot run
# here.
workload_cmd() {
    ENVV= PRINCIPAL=
    case $1 in
    python) [ -n "$PY" ] || return 1
        ENVV="PYTHONHASHSEED=0" WHAT="python3 -s bench/study/sort.py $PY_N"
        CMD="$PY -s $HERE/study/sort.py $PY_N" ;;
    threads) [ -n "$PY" ] || return 1
        ENVV="PYTHONHASHSEED=0 PYTHONMALLOC=malloc"
        WHAT="PYTHONMALLOC=malloc python3 -s bench/study/threads.py $THREADS_N (4 producer and 4 consumer threads)"
        CMD="$PY -s $HERE/study/threads.py $THREADS_N" ;;
    python-malloc) [ -n "$PY" ] || return 1
        ENVV="PYTHONHASHSEED=0 PYTHONMALLOC=malloc" WHAT="PYTHONMALLOC=malloc python3 -s bench/study/sort.py $PY_N"
        CMD="$PY -s $HERE/study/sort.py $PY_N" ;;
    perl) [ -n "$PERL" ] || return 1
        ENVV="PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0" WHAT="perl bench/real/words.pl words.txt ($PERL_WORDS words)"
        CMD="$PERL $HERE/real/words.pl $IN/perl.txt" ;;
    sqlite) [ -n "$SQLITE" ] || return 1
        WHAT="sqlite3 :memory: .read inserts.sql ($SQL_ROWS rows, two indexes, two queries)"
        CMD="$SQLITE :memory: .read\\ $IN/inserts.sql" ;;
    gcc) [ -n "$GCC" ] || return 1
        WHAT="gcc -O2 -c big.c ($(wc -l <"$IN/big.c") lines, bench/study/gen_c.sh $GCC_FUNCS)"
        CMD="$GCC -O2 -c $IN/big.c -o $IN/big.o"
        PRINCIPAL=cc1 ;; # the compiler, not the assembler (whose peak heap is larger: cc1's
                         # garbage-collected memory is mapped, not malloc'd)
    xz) [ -n "$XZ" ] || return 1
        WHAT="xz -6 -T1 -c words.txt ($XZ_WORDS words)"
        CMD="$XZ -6 -T1 -c $IN/xz.txt" ;;
    lua) [ -n "$LUA" ] || return 1
        WHAT="lua5.4 bench/real/tables.lua $LUA_N"
        CMD="$LUA $HERE/real/tables.lua $LUA_N" ;;
    git) [ -n "$GIT" ] || return 1
        git -C "$TOP" cat-file -e "$GIT_COMMIT^{commit}" 2>/dev/null || return 1
        ENVV="HOME=$IN GIT_CONFIG_NOSYSTEM=1"
        WHAT="git log -p --stat $GIT_COMMIT (memsim's own history)"
        CMD="$GIT -C $TOP --no-pager log -p --stat --no-color $GIT_COMMIT" ;;
    make) [ -n "$MAKE" ] && [ -n "$GCC" ] || return 1
        "$MAKE" -s -C "$IN/project" clean >/dev/null
        WHAT="make -j2 (gcc -O2, $MAKE_FILES sources of $MAKE_FUNCS functions, linked)"
        CMD="$MAKE -s -j2 -C $IN/project" ;;
    alloc_heavy) [ -x "$BIN/programs/alloc_heavy" ] || return 1
        WHAT="bench/programs/alloc_heavy $2 $((AH_EVENTS / 2 / $2))"
        CMD="$BIN/programs/alloc_heavy $2 $((AH_EVENTS / 2 / $2))" ;;
    churn) [ -x "$BIN/programs/churn" ] || return 1
        WHAT="bench/programs/churn $2 $((CH_EVENTS / $2))"
        CMD="$BIN/programs/churn $2 $((CH_EVENTS / $2))" ;;
    *) return 1 ;;
    esac
    return 0
}
