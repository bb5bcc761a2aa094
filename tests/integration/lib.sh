# Shared helpers for the shell integration tests.  Source it; set BUILD.
# Each check prints "ok - name" or "not ok - name: why"; summary prints
# the closing line "N passed, N failed" and sets the exit status.

PASSED=0
FAILED=0
BUILD=${BUILD:-build}
MEMSIM=$BUILD/memsim
JSONQ=$BUILD/jsonq
# The checks read traces with grep: plain ones (test_compress.sh checks
# the default, compressed).
export MEMSIM_COMPRESS=0
TMP=$(mktemp -d "${TMPDIR:-/tmp}/memsim-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# trace_text FILE: a trace's text, plain or compressed.
trace_text() { "$BUILD/tracecheck" --cat "$1"; }

pass() { PASSED=$((PASSED + 1)); echo "ok - $1"; }
fail() { FAILED=$((FAILED + 1)); echo "not ok - $1: $2"; }

# expect_eq NAME ACTUAL EXPECTED
expect_eq() {
    if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "got '$2', want '$3'"; fi
}

# expect_status NAME STATUS CMD...: run CMD, compare its exit status;
# its stdout and stderr are left in $TMP/out and $TMP/err.
expect_status() {
    name=$1 want=$2
    shift 2
    "$@" >"$TMP/out" 2>"$TMP/err"
    got=$?
    if [ "$got" = "$want" ]; then pass "$name"; else
        fail "$name" "exit $got, want $want; stderr: $(head -c 300 "$TMP/err")"
    fi
}

# expect_grep NAME PATTERN FILE
expect_grep() {
    if grep -q -- "$2" "$3"; then pass "$1"; else
        fail "$1" "no '$2' in $(head -c 300 "$3")"
    fi
}

# expect_one_line NAME FILE: exactly one line (bad input gets one clear line)
expect_one_line() {
    n=$(wc -l <"$2")
    if [ "$n" -eq 1 ]; then pass "$1"; else fail "$1" "$n lines: $(head -c 300 "$2")"; fi
}

# wait_handlers PID: wait (60 s at most) until process PID catches
# SIGTERM (SigCgt has its bit, 0x4000): a traced program's memsim
# handlers are in, and a SIGTERM sent now ends it traced.  A signal sent
# after a fixed sleep instead may come before them on a loaded machine,
# and end the program untraced.  Status 0 once they are, else 1.
wait_handlers() {
    wh=0
    while [ $wh -lt 3000 ]; do
        awk '/^SigCgt:/ { exit !(substr($2, 13, 1) ~ /[4567cdefCDEF]/) }' "/proc/$1/status" \
            2>/dev/null && return 0
        [ -e "/proc/$1" ] || return 1
        sleep 0.02
        wh=$((wh + 1))
    done
    return 1
}

summary() {
    echo "$PASSED passed, $FAILED failed"
    [ "$FAILED" -eq 0 ]
}
