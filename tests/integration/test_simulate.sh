# memsim simulate: the comparison table, JSON, determinism and bad input.
. tests/integration/lib.sh

expect_status "simulate runs" 0 "$MEMSIM" simulate --ops 20000
for s in first-fit best-fit worst-fit next-fit buddy caching; do
    expect_grep "table lists $s" "^$s " "$TMP/out"
done
expect_grep "table marks the best" "<- best" "$TMP/out"

expect_status "simulate --json runs" 0 "$MEMSIM" simulate --ops 20000 --seed 7 --json
cp "$TMP/out" "$TMP/a.json"
expect_eq "json lists six strategies" "$($JSONQ strategies.# <"$TMP/a.json")" 6
expect_eq "json names the first" "$($JSONQ strategies.0.name <"$TMP/a.json")" first-fit
expect_eq "json keeps the workload" "$($JSONQ workload.operations <"$TMP/a.json")" 20000
expect_eq "nothing fails on 1 GiB" "$($JSONQ strategies.1.failed_requests <"$TMP/a.json")" 0
allocs=$($JSONQ strategies.1.allocations <"$TMP/a.json")
frees=$($JSONQ strategies.1.frees <"$TMP/a.json")
expect_eq "allocations + frees = operations" "$((allocs + frees))" 20000
for i in 0 1 2 3 4 5; do
    expect_eq "strategy $i saw the same requests" \
        "$($JSONQ strategies.$i.peak_live_bytes <"$TMP/a.json")" \
        "$($JSONQ strategies.1.peak_live_bytes <"$TMP/a.json")"
done

# Same seed, same footprints (times differ, so compare the figures).
"$MEMSIM" simulate --ops 20000 --seed 7 --json >"$TMP/b.json"
for i in 0 1 2 3 4 5; do
    expect_eq "seed 7 repeats for strategy $i" \
        "$($JSONQ strategies.$i.peak_footprint_bytes <"$TMP/b.json")" \
        "$($JSONQ strategies.$i.peak_footprint_bytes <"$TMP/a.json")"
done

expect_status "one strategy" 0 "$MEMSIM" simulate -s buddy --ops 2000 --json
expect_eq "one strategy is listed" "$($JSONQ strategies.# <"$TMP/out")" 1
expect_eq "it is buddy" "$($JSONQ best <"$TMP/out")" buddy

expect_status "--status prints the blocks" 0 "$MEMSIM" simulate -s first-fit --ops 50 --status
expect_grep "status names the allocator" "Current Allocator: first-fit" "$TMP/out"
expect_grep "status marks segment starts" "SEGMENT_START" "$TMP/out"

expect_status "--check passes" 0 "$MEMSIM" simulate --ops 3000 --check
expect_status "a tiny device fails requests, not the run" 0 \
    "$MEMSIM" simulate -d 64K --ops 3000 --free-prob 0.1 --json
expect_eq "failed requests are counted" \
    "$([ "$($JSONQ strategies.1.failed_requests <"$TMP/out")" -gt 0 ] && echo yes)" yes

# Every bad input: exit 2 and one line naming the problem.
bad() {
    name=$1 pattern=$2
    shift 2
    expect_status "refuses $name" 2 "$MEMSIM" "$@"
    expect_grep "names $name" "$pattern" "$TMP/err"
    expect_one_line "one line for $name" "$TMP/err"
}
bad "a non-number count" '--ops: "abc" is not a whole number' simulate --ops abc
bad "a negative count" '--ops: "-5"' simulate --ops -5
bad "an unknown strategy" 'unknown strategy "nope" (known: all, first-fit' simulate -s nope
bad "a probability above 1" '--free-prob: 1.5 is not in' simulate --free-prob 1.5
bad "a NaN probability" '--free-prob: "nan" is not a finite number' simulate --free-prob nan
bad "a bad size" '--device-size: "12X" is not a size' simulate --device-size 12X
bad "a zero device" '--device-size: 0 is below the minimum' simulate --device-size 0
bad "a zero min size" '--min-size: 0 is below' simulate --min-size 0
bad "an empty size range" 'size range 5000..100' simulate --min-size 5000 --max-size 100
bad "a bad alignment" '--align: 3 is not a power of two' simulate --align 3
bad "an unknown option" 'unknown option "--bogus"' simulate --bogus
bad "a missing value" '--ops needs a value' simulate --ops
bad "--status without a strategy" '--status needs one --strategy' simulate --status
bad "a stray argument" 'unexpected argument "extra"' simulate extra
bad "an unknown command" 'unknown command "bogus"' bogus
bad "a device too small for caching" 'cannot start strategy caching' simulate -s caching -d 256

expect_status "no command" 2 "$MEMSIM"
expect_status "help" 0 "$MEMSIM" simulate --help
expect_grep "help has examples" "EXAMPLES" "$TMP/out"
expect_status "version" 0 "$MEMSIM" version
expect_grep "version prints it" "^memsim [0-9]" "$TMP/out"

summary
