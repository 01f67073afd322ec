#!/bin/bash
# examples/ci/load-gate.yml, run here step by step as a GitHub-Actions
# runner would: each step's `run:` in its own `bash -e` from the top of the
# tree, GITHUB_ENV / GITHUB_PATH files read back between steps, RUNNER_TEMP
# a scratch directory, `if: always()` steps run even after a failure.  The
# checkout (`uses:`) and Build steps are the runner's: the binary under
# test stands in for them.  Every step must pass: the target starts, the
# run meets its thresholds, the comparison with the committed baseline
# (examples/ci/baseline.json) finds like runs and no regression; its JSON
# says so.  Then the gate is shown to close: the same compare against a
# baseline made twice as fast fails with exit 1.
. "${YB_SRCDIR:-.}/tests/lib.sh"

YML=$YB_SRCDIR/examples/ci/load-gate.yml
check "the example is valid YAML with one job" /usr/bin/python3 -c '
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
assert list(d["jobs"]) == ["load-gate"], d["jobs"]' "$YML"

# the steps, as "NAME<TAB>ALWAYS<TAB>SCRIPT (base64)" lines
/usr/bin/python3 - "$YML" >"$T/steps" <<'PYEOF'
import base64, sys, yaml
job = yaml.safe_load(open(sys.argv[1]))["jobs"]["load-gate"]
for i, s in enumerate(job["steps"]):
    name = s.get("name", s.get("uses", "step %d" % i))
    if "uses" in s or name == "Build":
        print("%s\tskip\t" % name)
        continue
    always = "always" if str(s.get("if", "")).strip() == "always()" else "once"
    print("%s\t%s\t%s" % (name, always, base64.b64encode(s["run"].encode()).decode()))
PYEOF
is "steps: checkout and Build (the runner's), then four to run" \
    "$(cut -f1,2 "$T/steps" | tr '\t\n' ':,')" \
    "actions/checkout@v4:skip,Build:skip,Start the target:once,Load with thresholds:once,Compare with the baseline:once,Stop the target:always,"

mkdir -p "$T/runner"
export RUNNER_TEMP=$T/runner GITHUB_ENV=$T/github_env GITHUB_PATH=$T/github_path
: >"$GITHUB_ENV"
: >"$GITHUB_PATH"
export PATH="$(dirname "$YB"):$PATH"
failed=0
while IFS=$'\t' read -r name when script; do
    [ "$when" = skip ] && continue
    [ "$failed" = 0 ] || [ "$when" = always ] || { not_ok "step '$name' (not run: an earlier step failed)"; continue; }
    # what earlier steps exported, as the runner does
    set -a
    # shellcheck disable=SC1090
    . "$GITHUB_ENV"
    set +a
    (cd "$YB_SRCDIR" && printf '%s' "$script" | base64 -d | bash -e) >"$T/step.out" 2>&1
    rc=$?
    is "step '$name' passes" "$rc" 0 || { failed=1; sed 's/^/# /' "$T/step.out" | tail -15; }
    [ -n "${SERVE_PID:-}" ] && [ "$name" = "Start the target" ] && at_exit stop_serve
done <"$T/steps"
stop_serve() { [ -z "${SERVE_PID:-}" ] || kill "$SERVE_PID" 2>/dev/null; }

is "the run met both thresholds" \
    "$(jget "$RUNNER_TEMP/new.json" '[t["pass"] for t in r["thresholds"]]')" "[true,true]"
check "the HTML report was written" test -s "$RUNNER_TEMP/new.html"
is "compare found like runs and no regression" \
    "$(jget "$RUNNER_TEMP/compare.json" '[r["unlike"], r["regressions"]]')" "[false,0]"
for i in $(seq 50); do kill -0 "$SERVE_PID" 2>/dev/null || break; sleep 0.1; done
check "the target was stopped (its summary printed)" grep -q '^serve: stopped after' "$RUNNER_TEMP/serve.out"

# the gate closes: a baseline twice as fast is a regression of the median
/usr/bin/python3 - "$YB_SRCDIR/examples/ci/baseline.json" "$T/fast.json" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
for k in ("p50", "p90", "p99", "p99_9", "max", "mean", "min"):
    r["latency_us"]["e2e"][k] = r["latency_us"]["e2e"][k] / 2
json.dump(r, open(sys.argv[2], "w"))
PYEOF
check_rc "against a baseline twice as fast the same compare exits 1" 1 \
    "$YB" compare "$T/fast.json" "$RUNNER_TEMP/new.json" --max-regression e2e.p50=50% \
    --max-regression errors=0%

done_testing
