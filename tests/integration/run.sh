#!/bin/sh
# Run every tests/integration/test_*.sh; the last line totals them.
set -u
BUILD=${BUILD:-build}
export BUILD
total_passed=0
total_failed=0
for t in tests/integration/test_*.sh; do
    echo "# $t"
    out=$(sh "$t" 2>&1)
    echo "$out" | grep -v '^ok - '
    line=$(echo "$out" | tail -n 1)
    p=$(echo "$line" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p')
    f=$(echo "$line" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p')
    if [ -z "$p" ]; then
        echo "not ok - $t did not finish"
        total_failed=$((total_failed + 1))
        continue
    fi
    total_passed=$((total_passed + p))
    total_failed=$((total_failed + f))
done
echo "integration: $total_passed passed, $total_failed failed"
[ "$total_failed" -eq 0 ]
