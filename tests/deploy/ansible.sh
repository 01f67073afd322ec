#!/bin/bash
# deploy/ansible/shards.yml for real: three inventory hosts with
# ansible_connection=local, each running its shard (yb_shard from the
# inventory) inside its own network namespace (yb_netns) against `yangblast
# serve --devices 2 --auth` in a target namespace, a common start computed
# once, the reports fetched and merged on the controller.  Checked: the
# merged counts = the devices' own, each shard's index is its host's, all
# started at one instant, the target saw the three addresses, the password
# (from yb_password) is in no argument, output or file left behind; and an
# inventory with a shard index twice is refused before anything runs.
# Needs root (ip netns) and ansible-playbook: skipped otherwise.
. "$YB_SRCDIR/tests/lib.sh"
. "$YB_SRCDIR/tests/deploy/netns.sh"
AP=$(command -v ansible-playbook) || { echo "1..0 # SKIP ansible-playbook missing (Debian package ansible)"; exit 0; }
K=3
[ "$(id -u)" = 0 ] && netns_up $K ||
    { echo "1..0 # SKIP network namespaces cannot be made here (ip netns needs root)"; exit 0; }
PB=$(cd "$YB_SRCDIR" && pwd)/deploy/ansible/shards.yml
case $YB in /*) ;; *) YB=$PWD/$YB ;; esac
: >"$T/ansible.cfg"
export ANSIBLE_CONFIG=$T/ansible.cfg ANSIBLE_LOCAL_TEMP=$T/ansible-local ANSIBLE_REMOTE_TEMP=$T/ansible-remote ANSIBLE_ASYNC_DIR=$T/ansible-async ANSIBLE_NOCOLOR=1 \
    ANSIBLE_RETRY_FILES_ENABLED=0 ANSIBLE_STDOUT_CALLBACK=default HOME=$T

# The devices, in the target namespace; their inventory names the password
# file the playbook writes on each load host.
PW="ans-$$-pw-$RANDOM"
YANGBLAST_SERVE_PASSWORD=$PW ip netns exec "$(netns_name t)" "$YB" serve --devices 2 \
    --restconf "$NETNS_TARGET:0" --gnmi "$NETNS_TARGET:0" --service-time uniform:100us..1ms \
    --write-inventory "$T/lab.yaml" --stats "$T/lab.stats.json" --auth admin >"$T/lab.out" 2>&1 &
FPID=$!
at_exit stop_fleet
for i in $(seq 300); do grep -qs 'devices ready' "$T/lab.out" && break; sleep 0.1; done
grep -q 'devices ready' "$T/lab.out" || { cat "$T/lab.out"; echo "Bail out! serve --devices did not start"; exit 1; }
sed -i "s|password-env: YANGBLAST_PASSWORD.*|password-file: $T/work/password|" "$T/lab.yaml"
# A capture of every connection's first packet in the target's namespace.
netns_syn_start "$T/syn.pcap"

cat >"$T/plan.yaml" <<EOF2
workloads:
  - name: writers
    synth: {protocol: gnmi, op: set, count: 60}
    rate: 150
    concurrency: 3
    requests: 150
    targets: [sw1, sw2]
  - name: pollers
    synth: {protocol: restconf, op: create, method: PATCH, count: 40}
    concurrency: 3
    requests: 90
    targets: [sw2]
EOF2
{
    echo "[loadhosts]"
    for i in $(seq 0 $((K - 1))); do
        echo "load$i yb_shard=$(( (i + 1) % K )) yb_netns=$(netns_name $i)"
    done
    echo "[loadhosts:vars]"
    echo "ansible_connection=local"
    echo "ansible_python_interpreter=/usr/bin/python3"
    echo "[local]"
    echo "localhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3"
} >"$T/hosts.ini"
cat >"$T/run.yml" <<EOF2
yb_binary: $YB
yb_run_name: t$$
yb_args: [--plan, $T/plan.yaml, --targets, $T/lab.yaml]
yb_workdir: $T/work
yb_results_dir: $T/results
yb_start_delay: ${YB_WRAP:+4}15
yb_timeout: 120
yb_password: $PW
EOF2
chmod 600 "$T/run.yml"
(cd "$T" && timeout 300 "$AP" -i "$T/hosts.ini" "$PB" -e "@$T/run.yml" >"$T/ap.out" 2>&1)
rc=$?
is "ansible-playbook: shards run, fetched and merged" "$rc" 0
[ "$rc" = 0 ] || diag "$(grep -E 'fatal|FAILED|ERROR|msg' "$T/ap.out" | head -20)"
sleep 0.3
netns_syn_stop
stop_fleet
M=$T/results/t$$-merged.json
is "merged: $K shards 0..$((K - 1))" "$(jget "$M" "sorted(s['index'] for s in r['shards'])")" "[0,1,2]"
is "merged completed = the devices' own count = the plan's 390 (150 x 2 + 90)" \
    "$(jget "$M" "r['summary']['requests_completed']") $(jget "$T/lab.stats.json" "sum(d['requests']['gnmi']['total'] + d['requests']['restconf']['total'] for d in r['devices'])")" \
    "390 390"
is "merged: no errors" "$(jget "$M" "r['summary']['requests_error']")" 0
is "each fetched report: shard index from the inventory, one common start" \
    "$(for i in 0 1 2; do jget "$T/results/t$$-shard-$i.json" "[r['shard']['index'], r['shard']['count']]"; done | tr '\n' ' ')$(
      for i in 0 1 2; do jget "$T/results/t$$-shard-$i.json" "r['shard']['start_at_unix_ns']"; done | sort -u | wc -l)" \
    "[0,3] [1,3] [2,3] 1"
is "the merged text report is in the playbook's output" "$(grep -c 'Shard' "$T/ap.out" | awk '{print ($1 > 0)}')" 1
is "the target saw connections from the $K namespaces' addresses" \
    "$(netns_syn_sources "$T/syn.pcap")" "$(netns_clients "$K")"
is "the password is in no output or report, and its file is gone" \
    "$(grep -rl -- "$PW" "$T/ap.out" "$T/results" "$T/work" 2>/dev/null | wc -l) $(test -e "$T/work/password" && echo left || echo gone)" \
    "0 gone"

# An inventory that gives one shard index twice is refused before any run.
sed -i 's/^load2 yb_shard=[0-9]*/load2 yb_shard=1/' "$T/hosts.ini"
sed -i "s|^yb_run_name: .*|yb_run_name: dup$$|" "$T/run.yml"
(cd "$T" && timeout 120 "$AP" -i "$T/hosts.ini" "$PB" -e "@$T/run.yml" >"$T/ap2.out" 2>&1)
is "a shard index given twice: the playbook fails" "$?" 2
like "... naming the host and the index" "$(grep -o 'load[0-9]: yb_shard=1 is not one of 0..2 exactly once' "$T/ap2.out" | sort -u | head -1)" \
    '^load[02]: yb_shard=1 is not one of 0..2 exactly once$'
is "... and no shard ran" "$(ls "$T/work" | grep -c "dup$$")" 0
done_testing
