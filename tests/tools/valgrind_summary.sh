#!/bin/bash
# tests/tools/valgrind_summary.sh LOGDIR TEST_SUITE_LOG -- the verdict of
# `make check-valgrind`: reads the valgrind log of every process the suite
# ran under valgrind (LOGDIR/*.log) and prints each one with memory errors
# or definite/indirect leaks (its command and the first error), then the
# tests that failed.  Exits 1 when valgrind found anything (or checked no
# process).  Failed tests are listed but do not decide: ten to fifty times
# slower under valgrind, timing-bound tests (rates, signals sent after a
# delay, a server expected up within seconds) fail without a memory error.
set -u
D=$1 SUITE=$2
procs=0 bad=0
for f in "$D"/*.log; do
    [ -f "$f" ] || continue
    procs=$((procs + 1))
    # Errors (leaks count: --errors-for-leak-kinds) in the closing summary.
    if grep -Eq 'ERROR SUMMARY: [1-9]' "$f"; then
        bad=$((bad + 1))
        echo "== valgrind: $(sed -n 's/^==[0-9]*== Command: //p' "$f" | head -1 | cut -c1-300)"
        sed -n '/^==[0-9]*== Command:/,$p' "$f" | grep -v '^==[0-9]*== *$' | sed -n '3,30p'
    fi
done
failed=$(grep -E '^# (FAIL|ERROR|XPASS): *[0-9]+' "$SUITE" 2>/dev/null | awk '{s += $3} END {print s + 0}')
echo "valgrind: $procs processes checked, $bad with memory errors or leaks"
if [ "$failed" != 0 ]; then
    echo "tests failed under valgrind: $failed (listed for review; timing-bound tests fail from slowness):"
    grep -E '^(FAIL|ERROR|XPASS):' "$SUITE" | head -40
fi
[ "$procs" -gt 0 ] && [ "$bad" = 0 ]
