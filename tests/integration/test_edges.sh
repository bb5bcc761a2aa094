# Programs at the edges of what memsim must leave unchanged: sandboxes,
# hundreds of threads, forks from threads and from signal handlers, small
# disks, closed standard streams, process limits.  Each case is
# tests/edges/NAME.sh (its checks), with tests/edges/NAME.c where it needs
# a program of its own (built into $BUILD/edges/NAME).  Each compares a
# plain run with a traced one: output, status, the files the program
# wrote, and the time where a hang is the risk; a case that needs what
# this machine lacks (root for a small filesystem, say) prints a skip line.
#
#   EDGE=NAME sh tests/integration/test_edges.sh     one case only
. tests/integration/lib.sh

if [ "${SANITIZE:-}" = 1 ]; then
    echo "# skip - edge cases: libmemsim.so is not built with SANITIZE=1"
    summary
    exit
fi

LIB=$(cd "$BUILD" && pwd)/libmemsim.so
TRACECHECK=$BUILD/tracecheck
EDGES=$BUILD/edges
for need in "$LIB" "$TRACECHECK" "$JSONQ"; do
    if [ ! -x "$need" ]; then
        fail "edge cases" "$need is missing: run them with make integration"
        summary
        exit
    fi
done
LIMIT=60 # seconds for any one run; then SIGKILL 2 s later
unset LD_PRELOAD MEMSIM_OUTPUT MEMSIM_STRATEGY MEMSIM_DEVICE_SIZE MEMSIM_STACK_DEPTH \
    MEMSIM_SAMPLE_MS MEMSIM_TRACE_CHILDREN MEMSIM_MMAP MEMSIM_ROOT_PID MEMSIM_COMPRESS \
    MEMSIM_SAMPLE_BYTES MEMSIM_SAMPLE_SEED
ulimit -c 0 2>/dev/null

. tests/integration/traced.sh

# need_program NAME: $EDGES/NAME is built, or the case fails once.
need_program() {
    [ -x "$EDGES/$1" ] && return 0
    fail "$1" "$EDGES/$1 is missing: run the tests with make integration"
    return 1
}

# as_root: whether this run may mount, change users and so on.
as_root() { [ "$(id -u)" = 0 ]; }

for case in tests/edges/*.sh; do
    [ -e "$case" ] || continue
    name=$(basename "$case" .sh)
    [ -n "${EDGE:-}" ] && [ "$EDGE" != "$name" ] && continue
    echo "# edge: $name"
    . "$case"
done

summary
