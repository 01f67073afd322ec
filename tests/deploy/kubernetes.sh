#!/bin/bash
# deploy/kubernetes without a cluster: the manifests parse and hold what an
# Indexed Job of shards needs (tests/deploy/k8s_local.py check), the checker
# catches a secret in argv and a non-indexed Job; then the shards' and the
# merge Job's exact command lines (each pod's environment, ConfigMap and
# Secret volumes laid out under $T) run against a real `yangblast serve
# --devices 2 --auth` on loopback with a common --start-at, and the merged
# report equals the devices' own counts.  The Containerfile's package lists
# are checked against setup.sh and the binary's shared libraries (no image
# is built: nothing is downloaded).
. "$YB_SRCDIR/tests/lib.sh"
PY=/usr/bin/python3
K=$YB_SRCDIR/deploy/kubernetes
KL=$YB_SRCDIR/tests/deploy/k8s_local.py
$PY -c 'import yaml' 2>/dev/null || { echo "1..0 # SKIP python3-yaml missing"; exit 0; }

is "manifests: parse, Indexed, parallelism = completions = --shards, JOB_COMPLETION_INDEX, start from a ConfigMap, no secret in argv" \
    "$($PY "$KL" check "$K" 2>&1)" OK

# The checker can fail: a password in argv, a secret variable in argv, a
# plain Job, parallelism below completions.
mutate() {
    rm -rf "$T/km" && cp -r "$K" "$T/km" && $PY - "$T/km/shards-job.yaml" "$1" <<'PYEOF'
import sys, yaml
p, what = sys.argv[1], sys.argv[2]
j = yaml.safe_load(open(p))
s = j["spec"]; c = s["template"]["spec"]["containers"][0]
if what == "password": c["args"] += ["--password", "hunter2"]
if what == "secretenv":
    c["env"].append({"name": "PW", "valueFrom": {"secretKeyRef": {"name": "yangblast-credentials", "key": "password"}}})
    c["args"] += ["--header", "X-Pw: $(PW)"]
if what == "plain": del s["completionMode"]
if what == "parallelism": s["parallelism"] = 2
yaml.safe_dump(j, open(p, "w"))
PYEOF
    $PY "$KL" check "$T/km"
}
like "checker: --password VALUE in args is caught" "$(mutate password)" "carries a credential"
like "checker: a secretKeyRef variable in args is caught" "$(mutate secretenv)" "uses the secret variable PW"
like "checker: a Job without completionMode Indexed is caught" "$(mutate plain)" "not Indexed"
like "checker: parallelism != completions is caught" "$(mutate parallelism)" "parallelism 2 != completions 4"

# ---- Containerfile: build deps = setup.sh's BUILD_PKGS; runtime libs cover the binary ----
CF=$K/Containerfile
stage() { awk -v n="$1" '/^FROM /{s++} s==n' "$CF" | grep -o '[a-z0-9][a-z0-9.+-]*' | sort -u; }
build_pkgs=$(sed -n '/^BUILD_PKGS="/,/"/p' "$YB_SRCDIR/setup.sh" | sed 's/BUILD_PKGS=//; s/"//g' | tr ' ' '\n' | grep . | sort -u)
is "Containerfile: the build stage installs every BUILD_PKGS package of setup.sh" \
    "$(comm -23 <(echo "$build_pkgs") <(stage 1) | tr '\n' ' ')" ""
like "Containerfile: build on debian:12, run on debian:12-slim" "$(grep '^FROM' "$CF" | tr '\n' ' ')" \
    '^FROM debian:12 AS build FROM debian:12-slim $'
need=$(objdump -p "$YB" 2>/dev/null | awk '/NEEDED/{print $2}' | grep -Ev '^lib(asan|ubsan|c|m)\.so|^ld-linux')
missing=""
for l in $need; do
    f=$(readlink -f "$(ldd "$YB" | awk -v l="$l" '$1==l{print $3}')")
    # merged /usr: dpkg knows a library by either path
    p=$({ dpkg -S "$f" || dpkg -S "${f#/usr}"; } 2>/dev/null | head -1 | cut -d: -f1)
    stage 2 | grep -qx "$p" || missing="$missing $l($p)"
done
is "Containerfile: the runtime stage installs the package of every library the binary needs" "$missing" ""

# ---- the pods' command lines, run here ------------------------------------------------
N=$($PY -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["spec"]["completions"])' "$K/shards-job.yaml")
PW="k8s-$$-pw-$RANDOM"
export YANGBLAST_SERVE_PASSWORD=$PW
DEVICES=2 serve_fleet fl --self-signed --write-cert "$T/ca.pem" --auth admin ||
    { echo "Bail out! serve --devices did not start"; exit 1; }
unset YANGBLAST_SERVE_PASSWORD
# The ConfigMap's plan and inventory, with the devices' URLs and CA and a
# 2 s duration instead of 60 s (the only edits).
mkdir -p "$T/pods"
$PY - "$K/config.yaml" "$T/fl.yaml" "$T/ca.pem" "$T/cfg" <<'PYEOF' || { echo "Bail out! config"; exit 1; }
import os, sys, yaml
cm = yaml.safe_load(open(sys.argv[1]))["data"]
served = {t["name"]: t for t in yaml.safe_load(open(sys.argv[2]))["targets"]}
inv = cm["inventory.yaml"]
for t in yaml.safe_load(inv)["targets"]:
    for k in ("restconf", "gnmi"):
        inv = inv.replace(t[k], served[t["name"]][k])
os.makedirs(sys.argv[4])
open(os.path.join(sys.argv[4], "inventory.yaml"), "w").write(inv)
open(os.path.join(sys.argv[4], "plan.yaml"), "w").write(cm["plan.yaml"].replace("duration: 60s", "duration: 2s"))
open(os.path.join(sys.argv[4], "ca.pem"), "w").write(open(sys.argv[3]).read())
PYEOF
mkdir -p "$T/bin" && ln -s "$YB" "$T/bin/yangblast"
export K8S_CM_RUN_NAME=run$$ K8S_CM_START_AT
# (valgrind, YB_WRAP: preparing takes far longer)
K8S_CM_START_AT=$(date -u -d "+${YB_WRAP:+4}6 seconds" +%Y-%m-%dT%H:%M:%SZ)

# layout JOB INDEX: lays the pod's volumes out under $T/pod (one place for
# every pod, as the volumes are the same in each) and prints its command
# line (argv NUL-separated after its environment) to $T/JOB-INDEX.argv.
mkdir -p "$T/pod" && cp -r "$T/cfg" "$T/pod/config" && mkdir -p "$T/pod/reports"
layout() {
    K8S_SECRET_PASSWORD=$PW $PY "$KL" layout "$K" "$T/pod" "$1" "$2" >"$T/$1-$2.argv" ||
        { echo "Bail out! layout of $1 $2"; exit 1; }
}
# pod JOB INDEX: runs that command line with the pod's environment only (and
# PATH); exit status in $T/pods/JOB-INDEX.rc, output in .out.
pod() {
    local out=$T/pods/$1-$2 n envs=() argv=()
    mapfile -d '' argv <"$T/$1-$2.argv"
    n=${argv[0]}; envs=("${argv[@]:1:$n}"); argv=("${argv[@]:$((n + 1))}")
    [ "$1" = yangblast-shards ] && argv=("$YB" "${argv[@]}")
    (cd "$T/pod" && env -i ${ASAN_OPTIONS:+ASAN_OPTIONS=$ASAN_OPTIONS} PATH="$T/bin:/usr/bin:/bin" \
        "${envs[@]}" "${argv[@]}" >"$out.out" 2>&1; echo $? >"$out.rc")
}
for i in $(seq 0 $((N - 1))); do layout yangblast-shards "$i"; done
layout yangblast-merge 0
pids=""
for i in $(seq 0 $((N - 1))); do pod yangblast-shards "$i" & pids="$pids $!"; done
wait $pids
rcs=$(cat "$T"/pods/yangblast-shards-*.rc | tr '\n' ' ')
is "the $N shard pods' command lines ran (exit 0 each)" "$rcs" "$(printf '0 %.0s' $(seq $N))"
[ "${rcs// /}" = "$(printf '0%.0s' $(seq $N))" ] || for f in "$T"/pods/yangblast-shards-*.out; do diag "$(head -5 "$f")"; done
pod yangblast-merge 0
is "the merge pod's command line ran" "$(cat "$T/pods/yangblast-merge-0.rc")" 0
[ "$(cat "$T/pods/yangblast-merge-0.rc")" = 0 ] || diag "$(head -5 "$T/pods/yangblast-merge-0.out")"
stop_fleet
M=$T/pod/reports/run$$-merged.json
is "merged: $N shards, indexes 0..$((N - 1))" "$(jget "$M" "sorted(s['index'] for s in r['shards'])")" "[$(seq -s, 0 $((N - 1)))]"
is "every shard's report: started at the ConfigMap's START_AT" \
    "$(for f in "$T"/pod/reports/run$$-shard-*.json; do jget "$f" "r['shard']['start_at_unix_ns']"; done | sort -u)" \
    "$(date -u -d "$K8S_CM_START_AT" +%s)000000000"
is "merged: requests completed = the devices' own count" \
    "$(jget "$M" "r['summary']['requests_completed']")" \
    "$(jget "$T/fl.stats.json" "sum(d['requests']['gnmi']['total'] for d in r['devices'])")"
is "merged: the plan's two workloads" "$(jget "$M" "sorted(w['name'] for w in r['workloads'])")" '["pollers","writers"]'
is "merged interval log written" "$(test -s "$T/pod/reports/run$$-merged.hlog" && echo yes)" yes
is "the password is in no report, log or output" \
    "$(grep -rl -- "$PW" "$T/pod/reports" "$T"/pods/*.out 2>/dev/null | wc -l)" 0
done_testing
