# The user's process limit (RLIMIT_NPROC) counts every process of the
# user, memsim's recorder too.  A program that forks 4 children that
# stay, run as a user of its own under `ulimit -u 6` (one process to
# spare natively): traced, every fork succeeds as natively (one recorder
# for the whole tree).  Under `ulimit -u 5` (no room even for one
# recorder) the last fork fails traced, and memsim says why in one line.
if ! as_root; then
    echo "# skip - nproc: needs root (it runs the program as a user of its own)"
elif ! command -v setpriv >/dev/null 2>&1; then
    echo "# skip - nproc: setpriv (util-linux) is not installed"
elif need_program nproc; then
    nuid=$((40000 + $$ % 20000)) # no process of this user but ours
    ndir=$(mktemp -d /tmp/memsim-nproc.XXXXXX)
    cp "$EDGES/nproc" "$LIB" "$(dirname "$LIB")/memsim-recorder" "$ndir/"
    mkdir "$ndir/traces"
    chmod 755 "$ndir"
    chmod 1777 "$ndir/traces"
    # as_user LIMIT CMD...: CMD as that user, under ulimit -u LIMIT, once
    # the user has no process left.
    as_user() {
        n=0
        while pgrep -u "$nuid" >/dev/null && [ $n -lt 1200 ]; do
            sleep 0.05
            n=$((n + 1))
        done
        timeout -k 2 "$LIMIT" setpriv --reuid="$nuid" --regid="$nuid" --clear-groups \
            bash -c 'ulimit -u "$1" && shift && exec "$@"' bash "$@"
    }
    as_traced() {
        lim=$1
        shift
        as_user "$lim" env LD_PRELOAD="$ndir/libmemsim.so" MEMSIM_OUTPUT="$ndir/traces" "$@"
    }
    as_user 6 "$ndir/nproc" 4 >"$TMP/p.out" 2>"$TMP/p.err"
    plain=$?
    as_traced 6 "$ndir/nproc" 4 >"$TMP/t.out" 2>"$TMP/t.err"
    st=$?
    expect_eq "nproc: natively, 4 forks under ulimit -u 6" "$plain:$(cat "$TMP/p.out")" \
        "0:forks=4 failed=0"
    same_status "nproc" "$st" "$plain"
    expect_same "nproc: same stdout (every fork succeeds)" "$TMP/p.out" "$TMP/t.out"
    expect_same "nproc: same stderr" "$TMP/p.err" "$TMP/t.err"
    OUT_SAVED=$OUT
    OUT=$ndir/traces
    expect_eq "nproc: 5 traces" "$(ntraces)" 5
    check_traces "nproc" --tag 4096:777
    rm -f "$ndir"/traces/*
    as_user 5 "$ndir/nproc" 4 >"$TMP/p.out" 2>"$TMP/p.err"
    plain=$?
    as_traced 5 "$ndir/nproc" 4 >"$TMP/t.out" 2>"$TMP/t.err"
    expect_eq "nproc: natively, 4 forks under ulimit -u 5" "$plain:$(cat "$TMP/p.out")" \
        "0:forks=4 failed=0"
    expect_eq "nproc: under ulimit -u 5 the recorder takes the last one" "$(cat "$TMP/t.out")" \
        "forks=4 failed=1 EAGAIN"
    expect_one_line "nproc: ... and memsim says so in one line" "$TMP/t.err"
    expect_grep "nproc: ... naming the limit" \
        "^memsim: fork failed (EAGAIN) under the process limit (ulimit -u 5), which counts memsim's recorder" \
        "$TMP/t.err"
    OUT=$OUT_SAVED
    rm -rf "$ndir"
fi
