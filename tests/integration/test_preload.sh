# libmemsim.so under real programs: each runs once plainly and once under
# the preload, and must behave the same (stdout, stderr, exit status);
# every trace it leaves must pass tracecheck, and the traces of a process
# tree must account for every process in it.
. tests/integration/lib.sh

if [ "${SANITIZE:-}" = 1 ]; then
    echo "# skip - preload tests: libmemsim.so is not built with SANITIZE=1"
    summary
    exit
fi

LIB=$(cd "$BUILD" && pwd)/libmemsim.so
TRACECHECK=$BUILD/tracecheck
PROG=$BUILD/programs
for need in "$LIB" "$TRACECHECK" "$PROG/mt_alloc"; do
    if [ ! -x "$need" ]; then
        fail "preload tests" "$need is missing: run them with make integration"
        summary
        exit
    fi
done
LIMIT=60 # seconds for any one run: a hang fails the test, not CI
TAG=4096:777 # the test programs' own sizes: size % 4096 == 777
unset LD_PRELOAD MEMSIM_OUTPUT MEMSIM_STRATEGY MEMSIM_DEVICE_SIZE MEMSIM_STACK_DEPTH \
    MEMSIM_SAMPLE_MS MEMSIM_TRACE_CHILDREN MEMSIM_MMAP MEMSIM_ROOT_PID
ulimit -c 0 2>/dev/null # crash.c dumps no core (and timeout says nothing of one)

# fresh_out: a new empty trace directory in $OUT (the previous one goes:
# the million-operation trace alone is some 180 MB).
n_out=0
fresh_out() {
    [ -n "${OUT:-}" ] && rm -rf "$OUT"
    n_out=$((n_out + 1))
    OUT=$TMP/traces.$n_out
    mkdir "$OUT"
}

# untraced CMD..., traced CMD...: CMD plainly, or under the preload
# tracing into $OUT (both functions, so that a shell reports a fatal
# signal the same way for both).
untraced() { timeout "$LIMIT" "$@"; }
traced() { timeout "$LIMIT" env LD_PRELOAD="$LIB" MEMSIM_OUTPUT="$OUT" "$@"; }

# expect_same NAME FILE1 FILE2
expect_same() {
    if cmp -s "$2" "$3"; then pass "$1"; else
        fail "$1" "$(diff "$2" "$3" | head -n 6 | tr '\n' '|' | head -c 400)"
    fi
}

# unshell FILE: a shell reports a command killed by a signal on the
# command's stderr: dash as "Segmentation fault", bash as "FILE: line N:
# PID Segmentation fault   COMMAND".  Keep only the part that does not
# vary between the runs being compared.
unshell() {
    sed 's/^.*: line [0-9]*: *[0-9]* \([A-Z][a-z]*\( [a-z][a-z]*\)*\)\( (core dumped)\)\{0,1\} .*$/\1/' \
        "$1" >"$1.u" && mv "$1.u" "$1"
}

# pair NAME CMD...: run CMD plainly, then under the preload into a fresh
# $OUT; stdout, stderr and exit status must be the same.  The traced
# run's output stays in $TMP/t.out and $TMP/t.err, its status in $STATUS.
pair() {
    name=$1
    shift
    fresh_out
    untraced "$@" >"$TMP/p.out" 2>"$TMP/p.err"
    plain=$?
    traced "$@" >"$TMP/t.out" 2>"$TMP/t.err"
    STATUS=$?
    expect_same "$name: same stdout" "$TMP/p.out" "$TMP/t.out"
    unshell "$TMP/p.err"
    unshell "$TMP/t.err"
    expect_same "$name: same stderr" "$TMP/p.err" "$TMP/t.err"
    if [ "$STATUS" = 124 ] || [ "$plain" = 124 ]; then
        fail "$name: same status" "timed out after ${LIMIT}s (plain $plain, traced $STATUS)"
    else
        expect_eq "$name: same status" "$STATUS" "$plain"
    fi
}

# wait_ended FILE: the trace of a process that vanished (SIGKILL) is
# finished by its recorder, a process apart, a moment later: wait (60 s at
# most: a loaded machine) for its end record.
wait_ended() {
    i=0
    while [ $i -lt 1200 ] && ! tail -n 1 "${1:-/dev/null}" 2>/dev/null | grep -q '^{"ev":"end"'; do
        sleep 0.05
        i=$((i + 1))
    done
}

# ntraces: the number of trace files in $OUT.
ntraces() { find "$OUT" -name 'memsim.*.jsonl' | wc -l | tr -d ' '; }

# nexe EXE: the number of traces in $OUT of executables named EXE.
nexe() { find "$OUT" -name "memsim.$1.*.jsonl" | wc -l | tr -d ' '; }

# check_traces NAME [TRACECHECK OPTIONS]: tracecheck every trace in $OUT;
# one check.  Each trace's summary line is left in FILE.tc.
check_traces() {
    name=$1
    shift
    n=0 bad=""
    for f in "$OUT"/memsim.*.jsonl; do
        [ -e "$f" ] || continue
        n=$((n + 1))
        if ! "$TRACECHECK" "$@" "$f" >"$f.tc" 2>"$f.tcerr"; then
            bad="$bad $(basename "$f"): $(head -n 3 "$f.tcerr" | tr '\n' ' ')"
        fi
    done
    if [ "$n" -eq 0 ]; then
        fail "$name: traces pass tracecheck" "no trace file in $OUT"
    elif [ -z "$bad" ]; then
        pass "$name: $n trace(s) pass tracecheck"
    else
        fail "$name: traces pass tracecheck" "$(echo "$bad" | head -c 600)"
    fi
}

# tc FIELD FILE: a field of tracecheck's summary of trace FILE.
tc() { sed -n "s/.*\\<$1=\\([^ ]*\\).*/\\1/p" "$2.tc" 2>/dev/null; }

# only_trace: the path of the single trace in $OUT (empty when not one).
only_trace() {
    [ "$(ntraces)" = 1 ] && find "$OUT" -name 'memsim.*.jsonl'
}

# tree NAME: the traces in $OUT account for every process of the tree.
# Traces of one pid form a chain in start order, each but the last ending
# in exec (the next is the program it ran).  The first trace of each
# chain was started by a fork (its meta names the parent's trace, and
# that trace has the matching fork record), a spawn (the parent's trace
# has a spawn record naming it) or a vfork+exec (its ppid is a traced
# process); exactly one, the command itself, has no traced parent.  Every
# fork and spawn record names a child that has a trace (for a fork, the
# first trace of the child's pid names the parent's).  Sets ROOTS,
# FORKED, SPAWNED, VFORKED, EXECED.
tree() {
    name=$1
    : >"$TMP/procs"
    : >"$TMP/kids"
    for f in "$OUT"/memsim.*.jsonl; do
        [ -e "$f" ] || continue
        head -n 1 "$f" >"$TMP/meta"
        reason=$(tail -n 1 "$f" | "$JSONQ" reason 2>/dev/null) || reason=none
        echo "$($JSONQ pid <"$TMP/meta") $($JSONQ ppid <"$TMP/meta")" \
            "$($JSONQ start_unix_ns <"$TMP/meta") $reason" \
            "$($JSONQ parent_trace <"$TMP/meta") $f" >>"$TMP/procs"
        grep -E '^\{"ev":"(fork|spawn)"' "$f" |
            sed -n "s|^{\"ev\":\"\\([a-z]*\\)\".*\"child\":\\([0-9]*\\).*|\\1 \\2 $f|p" >>"$TMP/kids"
    done
    result=$(sort -k1,1n -k3,3n "$TMP/procs" | awk -v kids="$TMP/kids" '
        { pid[NR] = $1; ppid[NR] = $2; reason[NR] = $4; parent[NR] = $5; path[NR] = $6
          traced[$1] = 1 }
        END {
            while ((getline line < kids) > 0) {
                split(line, k, " ")
                rec[k[1] " " k[2]] = k[3]
                nkids++; kind[nkids] = k[1]; kid[nkids] = k[2]; kfrom[nkids] = k[3]
            }
            roots = forked = spawned = vforked = execed = 0
            for (i = 1; i <= NR; i++) {
                if (i > 1 && pid[i - 1] == pid[i]) {
                    execed++
                    if (reason[i - 1] != "exec")
                        problem = problem " two traces of pid " pid[i] " without an exec;"
                    continue
                }
                if (i > 1 && reason[i - 1] == "exec")
                    problem = problem " " path[i - 1] " ends in exec, no trace follows;"
                first[pid[i]] = i
                if (parent[i] != "null") {
                    forked++
                    if (rec["fork " pid[i]] != parent[i])
                        problem = problem " " path[i] ": no fork record for it in its parent_trace;"
                } else if (("spawn " pid[i]) in rec) {
                    spawned++
                } else if (ppid[i] in traced) {
                    vforked++
                } else {
                    roots++
                }
            }
            if (NR && reason[NR] == "exec")
                problem = problem " " path[NR] " ends in exec, no trace follows;"
            for (j = 1; j <= nkids; j++) {
                if (!(kid[j] in first))
                    problem = problem " " kfrom[j] ": " kind[j] " of " kid[j] ", which left no trace;"
                else if (kind[j] == "fork" && parent[first[kid[j]]] != kfrom[j])
                    problem = problem " " kfrom[j] ": fork of " kid[j] ", whose first trace " \
                        path[first[kid[j]]] " does not name it as parent_trace;"
            }
            if (roots != 1)
                problem = problem " " roots " traces without a traced parent (want 1);"
            printf "%d %d %d %d %d%s\n", roots, forked, spawned, vforked, execed, problem
        }')
    set -- $result
    ROOTS=$1 FORKED=$2 SPAWNED=$3 VFORKED=$4 EXECED=$5
    shift 5
    if [ $# -eq 0 ]; then
        pass "$name: the traces form one process tree ($(ntraces) traces: $ROOTS root, $FORKED forked, $SPAWNED spawned, $VFORKED vforked, $EXECED exec'd)"
    else
        fail "$name: the traces form one process tree" "$(echo "$*" | head -c 600)"
    fi
}

# at_least NAME ACTUAL MIN
at_least() {
    if [ "$2" -ge "$3" ] 2>/dev/null; then pass "$1"; else fail "$1" "got '$2', want >= $3"; fi
}

# ---- interpreters and tools ---------------------------------------------------

if PY=$(command -v python3); then
    # The interpreter (behind a pyenv shim on some machines: bash scripts
    # that run more programs) works a while, then starts a child each way
    # Python can: subprocess (vfork or fork, then exec), fork, posix_spawn.
    pair "python3" "$PY" -c 'import json, os, subprocess
d = {str(i): list(range(i % 50)) for i in range(20000)}
s = json.dumps(d, sort_keys=True)
print(len(s), sum(len(v) for v in json.loads(s).values()))
print(subprocess.run(["sort"], input="b\na\n", capture_output=True, text=True).stdout.split())
pid = os.fork()
if pid == 0:
    os._exit(3)
print("fork", os.waitpid(pid, 0)[1] >> 8)
pid = os.posix_spawn("/bin/true", ["true"], dict(os.environ))
print("spawn", os.waitpid(pid, 0)[1])'
    check_traces "python3"
    tree "python3"
    expect_eq "python3: one trace per process" "$(ntraces)" \
        "$((ROOTS + FORKED + SPAWNED + VFORKED + EXECED))"
    expect_eq "python3: the interpreter and its fork child have traces" \
        "$(find "$OUT" -name 'memsim.python3*.jsonl' | wc -l | tr -d ' ')" 2
    expect_eq "python3: the programs it started have traces" "$(nexe sort)/$(nexe true)" 1/1
else
    echo "# skip - python3: not installed"
fi

pair "perl" perl -e 'my %h; $h{$_} = "x" x ($_ % 97) for 1 .. 50000;
my @k = sort { $a <=> $b } keys %h; print scalar(@k), " ", length(join ",", @h{@k}), "\n"'
check_traces "perl"
expect_eq "perl: one trace" "$(nexe perl)/$(ntraces)" "1/1"

awk 'BEGIN { x = 1; for (i = 0; i < 200000; i++) { x = (x * 69069 + 1) % 4294967296; print x } }' \
    >"$TMP/numbers"
# A small buffer makes sort spill to temporary files and merge them, in threads.
pair "sort" sort -n -S 1M --parallel=4 -T "$TMP" "$TMP/numbers"
check_traces "sort"
expect_eq "sort: one trace" "$(nexe sort)/$(ntraces)" "1/1"
expect_eq "sort sorted" "$(wc -l <"$TMP/t.out" | tr -d ' ')" 200000

cat >"$TMP/small.c" <<'EOF'
struct point { int x, y; };
int dot(const struct point *a, const struct point *b) { return a->x * b->x + a->y * b->y; }
EOF
pair "gcc -c" gcc -O2 -c -o "$TMP/small.o" "$TMP/small.c"
mv "$TMP/small.o" "$TMP/small.traced.o"
timeout "$LIMIT" gcc -O2 -c -o "$TMP/small.o" "$TMP/small.c"
expect_same "gcc -c: the same object file" "$TMP/small.o" "$TMP/small.traced.o"
check_traces "gcc -c"
tree "gcc -c"
expect_eq "gcc -c: one trace per process" "$(ntraces)" \
    "$((ROOTS + FORKED + SPAWNED + VFORKED + EXECED))"
expect_eq "gcc -c: cc1 has a trace" "$(nexe cc1)" 1
expect_eq "gcc -c: the assembler has a trace" \
    "$(find "$OUT" \( -name 'memsim.as.*.jsonl' -o -name 'memsim.*-as.*.jsonl' \) | wc -l | tr -d ' ')" 1

pair "shell pipeline" bash -c 'cat /etc/passwd | sort | head -3; (cd / && ls >/dev/null)'
check_traces "shell pipeline"
tree "shell pipeline"
for exe in cat sort head ls; do
    expect_eq "shell pipeline: one trace of $exe" "$(nexe "$exe")" 1
done
at_least "shell pipeline: bash and its subshells have traces" "$(nexe bash)" 2
expect_eq "shell pipeline: bash forked every child" "$FORKED/$SPAWNED/$VFORKED" \
    "$(($(ntraces) - 1 - EXECED))/0/0"

# A relative MEMSIM_OUTPUT is the directory the first process started in,
# for every program of the tree wherever it runs: memsim puts the absolute
# form in the environment.  bash hands its children the environment it
# got in main's envp, so the shells differ in what they pass on.
mkdir "$TMP/elsewhere"
for shell in sh bash; do
    fresh_out
    (cd "$OUT" && timeout "$LIMIT" env LD_PRELOAD="$LIB" MEMSIM_OUTPUT=. \
        "$shell" -c 'cd "$1" && ls >/dev/null; true' "$shell" "$TMP/elsewhere")
    expect_eq "relative MEMSIM_OUTPUT, $shell: runs" "$?" 0
    expect_eq "relative MEMSIM_OUTPUT, $shell: ls writes beside its shell" "$(nexe ls)" 1
    expect_eq "relative MEMSIM_OUTPUT, $shell: nothing where the shell went" \
        "$(find "$TMP/elsewhere" -type f | wc -l | tr -d ' ')" 0
    rm -f "$TMP/elsewhere"/*
done

# ---- the test programs -------------------------------------------------------------

pair "mt_alloc" "$PROG/mt_alloc" 16 62500 7
check_traces "mt_alloc" --tag "$TAG"
f=$(only_trace)
expect_eq "mt_alloc: one trace" "${f:+1}" 1
calls=$(sed -n 's/.* calls=\([0-9]*\) .*/\1/p' "$TMP/t.out")
expect_eq "mt_alloc: 16 threads did a million operations" \
    "$(sed -n 's/^threads=\([0-9]*\) ops=\([0-9]*\) .*/\1 \2/p' "$TMP/t.out")" "16 1000000"
expect_eq "mt_alloc: every allocation call is in the trace (tagged = calls)" \
    "$(tc tagged "$f")" "${calls:-?}"
# memsim's own unwinder has thread-local storage; glibc allocates a
# thread's block of it (inside memsim, so unrecorded) and frees it when
# the thread is joined (in the program, so recorded): such frees must not
# show up as the program's errors.
expect_eq "mt_alloc: no unknown frees" "$(tc errors "$f")" 0

pair "fork_mt" "$PROG/fork_mt"
expect_eq "fork_mt: finished" "$(cat "$TMP/t.out")" "forks=20 ok"
check_traces "fork_mt" --tag "$TAG"
expect_eq "fork_mt: 21 traces (parent and 20 children)" "$(nexe fork_mt)/$(ntraces)" "21/21"
tree "fork_mt"
expect_eq "fork_mt: 20 forked children" "$FORKED/$SPAWNED/$VFORKED/$EXECED" "20/0/0/0"
expect_eq "fork_mt: each child freed its parent's block (inherited)" \
    "$(grep -l '^\["f",[-0-9]*,[0-9]*,"[0-9a-f]*",1[],]' "$OUT"/memsim.*.jsonl | wc -l | tr -d ' ')" 20
ends=$(for f in "$OUT"/memsim.*.jsonl; do tc end "$f"; done | sort | uniq -c | tr -s ' \n' '  ')
expect_eq "fork_mt: 10 children left with _exit, 10 with exit (and the parent)" "$ends" " 10 _exit 11 exit "

# killme: SIGKILL while it sleeps after "ready".  The recorder, a process
# apart, writes everything the program had posted and an end record saying
# the process vanished.
fresh_out
timeout -s KILL "$LIMIT" env LD_PRELOAD="$LIB" MEMSIM_OUTPUT="$OUT" "$PROG/killme" \
    >"$TMP/k.out" 2>"$TMP/k.err" &
waiter=$!
i=0
while [ $i -lt 1200 ] && ! grep -qs ready "$TMP/k.out"; do
    sleep 0.05
    i=$((i + 1))
done
expect_grep "killme: got ready" ready "$TMP/k.out"
sleep 0.2
f=$(only_trace)
pid=$(echo "$f" | sed -n 's/.*memsim\.killme\.\([0-9]*\)\.[0-9]*\.jsonl$/\1/p')
[ -n "$pid" ] && kill -KILL "$pid"
{ wait "$waiter"; } 2>/dev/null # the shell's "Killed" is no news here
expect_eq "killme: killed by SIGKILL" "$?" 137
expect_eq "killme: one trace" "${pid:+1}" 1
wait_ended "$f"
check_traces "killme" --tag "$TAG" --expect-end vanished
expect_eq "killme: the end record names SIGKILL (or nothing, if the zombie was reaped first)" \
    "$(tail -n 1 "${f:-/dev/null}" | "$JSONQ" signal 2>&1 | sed 's/^null$/9/')" 9
at_least "killme: the 5000 allocations before ready are in it" "$(tc tagged "$f")" 5000

# cut_short NAME CAUSE STATUS: alloc_heavy 1 100000 just ran traced into
# $OUT, which could not hold its whole trace (status STATUS, output in
# $TMP/t.out and $TMP/t.err).  It must behave as without memsim, memsim
# must say in one line which trace lacks records and why (CAUSE), and
# what fit must end with its end record, which counts what was dropped.
cut_short() {
    untraced "$BUILD/programs/alloc_heavy" 1 100000 >"$TMP/p.out" 2>&1
    expect_eq "$1: same status" "$3" "$?"
    expect_same "$1: same stdout" "$TMP/p.out" "$TMP/t.out"
    expect_one_line "$1: one line on stderr" "$TMP/t.err"
    expect_grep "$1: it names the trace and the cause" \
        "memsim: $OUT/memsim.alloc_heavy.*is incomplete: [0-9]* records could not be written ($2)" \
        "$TMP/t.err"
    check_traces "$1" --dropped-ok
    f=$(only_trace)
    # (read from the trace: the summary beside it may not fit on a full disk)
    at_least "$1: the end record counts what was dropped" \
        "$(tail -n 1 "${f:-/dev/null}" | "$JSONQ" dropped 2>&1)" 1
    "$BUILD/memsim-analyze" --no-replay "${f:-/dev/null}" >"$TMP/a.out" 2>"$TMP/a.err"
    expect_one_line "$1: memsim-analyze warns in one line" "$TMP/a.err"
    expect_grep "$1: ... that records could not be written" \
        "records could not be written (a full disk, the file size limit)" "$TMP/a.err"
    expect_grep "$1: the report says so" "^  ended: .*records dropped: the figures are of what was written" \
        "$TMP/a.out"
}

# A full disk: the trace used to grow into holes, and the first write to
# one killed the program with SIGBUS.  Needs a small tmpfs: root and
# permission to mount.
fresh_out
if mount -t tmpfs -o size=3m tmpfs "$OUT" 2>/dev/null; then
    traced "$BUILD/programs/alloc_heavy" 1 100000 >"$TMP/t.out" 2>"$TMP/t.err"
    cut_short "full disk" "no space left on device" "$?"
    umount "$OUT"
else
    echo "# skip - full disk: cannot mount a small tmpfs here (needs root)"
fi

# A file size limit (ulimit -f) the trace would pass: growing the file
# past it sent SIGXFSZ, which killed the program.
fresh_out
(ulimit -f 2048 && traced "$BUILD/programs/alloc_heavy" 1 100000) >"$TMP/t.out" 2>"$TMP/t.err"
cut_short "ulimit -f" "the file size limit, ulimit -f, is reached" "$?"

# SIGTERM to a program in the middle of its allocations: the handler
# drains the ring itself, and must find every record claimed before it,
# even the one its own thread was claiming (it used to lose up to a ring
# of records in one run of three, when the signal landed while the
# program's thread helped the writer or waited for room).
runs=4 ok=0 why=""
for i in $(seq "$runs"); do
    fresh_out
    # env execs the program: $! is its pid
    env LD_PRELOAD="$LIB" MEMSIM_OUTPUT="$OUT" "$BUILD/programs/alloc_heavy" 1 3000000 \
        >/dev/null 2>&1 &
    victim=$!
    wait_handlers "$victim" # memsim's are in: a SIGTERM before them ends it untraced
    sleep "0.0$i"
    kill -TERM "$victim"
    { wait "$victim"; } 2>/dev/null
    f=$(only_trace)
    if [ -n "$f" ] && "$TRACECHECK" --expect-end signal "$f" >"$f.tc" 2>"$f.tcerr"; then
        ok=$((ok + 1))
    else
        why="$why run $i: $(head -n 2 "${f:-/dev/null}.tcerr" 2>/dev/null | tr '\n' ' ')"
    fi
done
if [ "$ok" = "$runs" ]; then
    pass "SIGTERM mid-allocation: $runs complete traces, nothing dropped"
else
    fail "SIGTERM mid-allocation: complete traces" "$((runs - ok)) of $runs runs broken:$(echo "$why" | head -c 500)"
fi

# exit() while other threads allocate: the trace must still be complete
# (a race, so several runs).
runs=10 ok=0 why=""
for i in $(seq "$runs"); do
    fresh_out
    traced "$PROG/exit_threads" 4 30 >"$TMP/t.out" 2>"$TMP/t.err"
    st=$?
    f=$(only_trace)
    if [ "$st" = 0 ] && [ -n "$f" ] && "$TRACECHECK" --tag "$TAG" "$f" >"$f.tc" 2>"$f.tcerr"; then
        ok=$((ok + 1))
    else
        why="$why run $i (status $st): $(head -n 2 "${f:-/dev/null}.tcerr" 2>/dev/null | tr '\n' ' ')"
    fi
done
if [ "$ok" = "$runs" ]; then
    pass "exit_threads: $runs complete traces when exit() races other threads"
else
    fail "exit_threads: complete traces when exit() races other threads" \
        "$((runs - ok)) of $runs runs broken:$(echo "$why" | head -c 500)"
fi
pair "exit_threads" "$PROG/exit_threads" 4 30

pair "closefds" "$PROG/closefds"
check_traces "closefds" --tag "$TAG"
f=$(only_trace)
expect_eq "closefds: every allocation recorded" "$(tc tagged "$f")" 200000
expect_eq "closefds: a complete trace" "$(tc end "$f")" exit
at_least "closefds: the trace grew past 8 MiB" "$(wc -c <"${f:-/dev/null}")" 8388608

for mode in segv:139:signal:11 abort:134:signal:6 term:143:signal:15 exit7:7:_exit:null; do
    IFS=: read -r m code reason sig <<EOF
$mode
EOF
    pair "crash $m" "$PROG/crash" "$m"
    expect_eq "crash $m: exit status $code" "$STATUS" "$code"
    check_traces "crash $m" --tag "$TAG" --expect-end "$reason"
    f=$(only_trace)
    expect_eq "crash $m: the end record names signal $sig" \
        "$(tail -n 1 "${f:-/dev/null}" | "$JSONQ" signal 2>&1)" "$sig"
    expect_eq "crash $m: the allocations before it are in the trace" "$(tc tagged "$f")" 8
done

pair "phases" "$PROG/phases"
check_traces "phases" --tag "$TAG"
f=$(only_trace)
expect_grep "phases: begin record" '^{"ev":"phase",.*"op":"begin","name":"load"}' "${f:-/dev/null}"
expect_grep "phases: end record" '^{"ev":"phase",.*"op":"end"}' "${f:-/dev/null}"
# In file order: begin, the 10 tagged allocations of the phase, end.
expect_eq "phases: the phase holds the load allocations" \
    "$(awk '/^\{"ev":"phase"/ { print /"op":"begin"/ ? "begin" : "end"; next }
            /^\["a",/ { split($0, e, ","); if (e[5] % 4096 == 777) print "alloc" }' \
        "${f:-/dev/null}" | uniq -c | head -n 3 | tr -s ' \n' '  ')" " 1 begin 10 alloc 1 end "

if [ -x "$PROG/unwind_clash" ]; then
    pair "unwind_clash" "$PROG/unwind_clash"
    check_traces "unwind_clash" --tag "$TAG"
    f=$(only_trace)
    at_least "unwind_clash: the trace has stacks" "$(tc stacks "$f")" 1
    # 13 + 7 blocks on the way down, one per frame in the callbacks.
    frames=$(sed -n 's/^frames=\([0-9]*\) shallower=\([0-9]*\) .*/\1 + \2/p' "$TMP/t.out")
    expect_eq "unwind_clash: every allocation recorded" "$(tc tagged "$f")" \
        "$((20 + ${frames:-0}))"
else
    echo "# skip - unwind_clash: LLVM's libunwind (Debian package libunwind-14) is not installed"
fi

# ---- configuration errors: one line, then the program runs untraced --------------

# bad_config NAME PATTERN VAR=VALUE...: the phases program under the
# preload with the given environment prints PATTERN on one stderr line,
# the same stdout as a plain run, the same status, and leaves no trace.
bad_config() {
    name=$1 pattern=$2
    shift 2
    fresh_out
    timeout "$LIMIT" "$PROG/phases" >"$TMP/p.out" 2>"$TMP/p.err"
    plain=$?
    timeout "$LIMIT" env LD_PRELOAD="$LIB" MEMSIM_OUTPUT="$OUT" "$@" "$PROG/phases" \
        >"$TMP/t.out" 2>"$TMP/t.err"
    expect_eq "$name: same status" "$?" "$plain"
    expect_same "$name: same stdout" "$TMP/p.out" "$TMP/t.out"
    expect_one_line "$name: one line on stderr" "$TMP/t.err"
    expect_grep "$name: the line says why" "$pattern" "$TMP/t.err"
    expect_eq "$name: no trace" "$(ntraces)" 0
}
bad_config "MEMSIM_STACK_DEPTH=abc" '^memsim: MEMSIM_STACK_DEPTH="abc"' MEMSIM_STACK_DEPTH=abc
bad_config "MEMSIM_STRATEGY=bogus" '^memsim: MEMSIM_STRATEGY="bogus"' MEMSIM_STRATEGY=bogus
bad_config "MEMSIM_OUTPUT=/nonexistent/dir" '^memsim: .*trace file.*/nonexistent/dir' \
    MEMSIM_OUTPUT=/nonexistent/dir

fresh_out
traced "$PROG/phases" >/dev/null 2>&1
f=$(only_trace)
expect_eq "a trace file has mode 0600" "$(stat -c %a "${f:-/dev/null}" 2>&1)" 600

summary
