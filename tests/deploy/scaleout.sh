#!/bin/bash
# Scale-out proven on one machine: K = 3 client network namespaces (each its
# own address on a veth to a private bridge) run the 3 shards of one open
# loop with a common --start-at against `yangblast serve` in a target
# namespace; `yangblast merge` of their reports is checked against the
# server's own counts, against a single-process run of the same options (on
# a fresh server), against the percentiles recomputed from all shards'
# per-request logs, and against a packet capture in the target's namespace
# that must show SYNs from the 3 client addresses.  Then the same with
# RESTCONF shards against nginx in the target namespace: its access log's
# request count = the merged count, its $remote_addr the 3 addresses.  Needs root (ip netns):
# skipped otherwise.  Only namespaces and addresses this test creates are
# used (10.213.0.0/24 inside them), removed at exit.
. "$YB_SRCDIR/tests/lib.sh"
. "$YB_SRCDIR/tests/deploy/netns.sh"
PY=/usr/bin/python3
export PYTHONPATH=$YB_SRCDIR/tests/report
K=3
[ "$(id -u)" = 0 ] && netns_up $K ||
    { echo "1..0 # SKIP network namespaces cannot be made here (ip netns needs root)"; exit 0; }
"$YB" synth acl --proto gnmi -n 30 -r 1 -o "$T/gn.ybc" >/dev/null || { echo "Bail out! synth"; exit 1; }
URL=grpc://$NETNS_TARGET:8080
LOAD=(--rate 300 -n 300 -c 6)

# target NAME: `serve` in the target namespace, stats in $T/NAME.stats.json.
target() {
    # ip netns exec execs the command: $! is the server itself.
    ip netns exec "$(netns_name t)" "$YB" serve --restconf off --gnmi "$NETNS_TARGET:8080" --service-time uniform:100us..2ms \
        --stats "$T/$1.stats.json" >"$T/$1.out" 2>&1 &
    SPID=$!
    at_exit yb_serve_stop
    local i
    for i in $(seq 300); do grep -q '^serve:' "$T/$1.out" && return 0; sleep 0.1; done
    cat "$T/$1.out" >&2; return 1
}
target s1 || { echo "Bail out! serve did not start in the target namespace"; exit 1; }
# Every connection's first packet, as the target's namespace sees it.
netns_syn_start "$T/syn.pcap"

START=$(( $(date +%s) + ${YB_WRAP:+40+}3 ))
pids=""
for i in $(seq 0 $((K - 1))); do
    (netns_exec "$i" "$YB" run "$T/gn.ybc" --target "$URL" "${LOAD[@]}" --shard "$i/$K" --start-at "@$START" -q \
        --json "$T/sh.$i.json" --log "$T/sh.$i.jsonl" >"$T/sh.$i.out" 2>&1; echo $? >"$T/sh.$i.rc") &
    pids="$pids $!"
done
wait $pids
is "the $K shards ran, each in its own namespace" "$(cat "$T"/sh.*.rc | tr '\n' ' ')" "0 0 0 "
sleep 0.3
netns_syn_stop
yb_serve_stop
"$YB" merge --json "$T/m.json" "$T"/sh.{0,1,2}.json >"$T/m.out" 2>&1
is "merge of the $K reports (same run id)" "$?" 0

target s2 || { echo "Bail out! serve did not start again"; exit 1; }
netns_exec 0 "$YB" run "$T/gn.ybc" --target "$URL" "${LOAD[@]}" -q --json "$T/one.json" >"$T/one.out" 2>&1
is "the single-process run" "$?" 0
yb_serve_stop

is "merged completed = the single run's = 300" \
    "$(jget "$T/m.json" "r['summary']['requests_completed']") $(jget "$T/one.json" "r['summary']['requests_completed']")" "300 300"
is "merged completed = what the target served to the shards (serve --stats)" \
    "$(jget "$T/m.json" "r['summary']['requests_completed']")" "$(jget "$T/s1.stats.json" "r['requests']['gnmi']['total']")"
is "the single run's completed = what the target served to it" \
    "$(jget "$T/one.json" "r['summary']['requests_completed']")" "$(jget "$T/s2.stats.json" "r['requests']['gnmi']['total']")"
is "merged run id = the single run's (the same work)" "$(jget "$T/m.json" "r['run_id']")" "$(jget "$T/one.json" "r['run_id']")"
is "every shard started at the common --start-at" \
    "$(for i in 0 1 2; do jget "$T/sh.$i.json" "r['shard']['start_at_unix_ns']"; done | sort -u)" "${START}000000000"
is "the shards' logs: global indexes 0..299, each once" \
    "$(cat "$T"/sh.*.jsonl | $PY -c 'import json, sys; x = sorted(json.loads(l)["index"] for l in sys.stdin); print(x == list(range(300)))')" True
is "merged e2e p50, p99, max = the percentiles of all shards' per-request logs" \
    "$($PY - "$T/m.json" "$T"/sh.*.jsonl <<'PY'
import json, sys, hdr_v2
r = json.load(open(sys.argv[1]))
vals = sorted(hdr_v2.us_of_ns(d["e2e_ns"]) for p in sys.argv[2:] for d in map(json.loads, open(p))
              if d["error"] is None)
e = r["latency_us"]["e2e"]
got = [e["p50"], e["p99"], e["max"]]
want = [hdr_v2.percentile(vals, p) for p in (50, 99, 100)]
print(len(vals), "same" if got == want else "merged %r, logs %r" % (got, want))
PY
)" "300 same"
is "the target saw connections from the $K client addresses" \
    "$(netns_syn_sources "$T/syn.pcap")" "$(netns_clients "$K")"

# ---- RESTCONF against nginx in the target namespace ----------------------------------
NG=$T/ng
mkdir -p "$NG/tmp"
cat >"$NG/nginx.conf" <<EOF2
daemon off;
master_process on;
worker_processes 1;
$([ "$(id -u)" = 0 ] && echo "user $(id -un) $(id -gn);")
pid $NG/nginx.pid;
error_log $NG/error.log notice;
events { worker_connections 256; }
http {
    access_log off;
    client_body_temp_path $NG/tmp/body;
    proxy_temp_path $NG/tmp/proxy;
    fastcgi_temp_path $NG/tmp/fastcgi;
    uwsgi_temp_path $NG/tmp/uwsgi;
    scgi_temp_path $NG/tmp/scgi;
    log_format src '\$remote_addr \$request_method \$status';
    server {
        listen $NETNS_TARGET:8081;
        access_log $NG/access.log src;
        client_max_body_size 16m;
        location /restconf/ { return 204; }
    }
}
EOF2
ip netns exec "$(netns_name t)" timeout 300 /usr/sbin/nginx -c "$NG/nginx.conf" -p "$NG" >"$NG/out" 2>&1 &
NGPID=$!
stop_nginx() { [ -n "${NGPID:-}" ] || return 0; kill "$NGPID" 2>/dev/null; wait "$NGPID" 2>/dev/null; NGPID=; }
at_exit stop_nginx
for i in $(seq 100); do netns_exec 0 bash -c "exec 3<>/dev/tcp/$NETNS_TARGET/8081" 2>/dev/null && break; sleep 0.1; done
"$YB" synth acl --proto restconf -n 40 -r 1 -o "$T/rc.ybc" >/dev/null || { echo "Bail out! synth"; exit 1; }
START=$(( $(date +%s) + ${YB_WRAP:+40+}3 ))
pids=""
for i in $(seq 0 $((K - 1))); do
    (netns_exec "$i" "$YB" run "$T/rc.ybc" --target "http://$NETNS_TARGET:8081" -c 6 -n 240 --shard "$i/$K" \
        --start-at "@$START" -q --json "$T/rc.$i.json" >"$T/rc.$i.out" 2>&1; echo $? >"$T/rc.$i.rc") &
    pids="$pids $!"
done
wait $pids
is "RESTCONF: the $K shards ran against nginx" "$(cat "$T"/rc.*.rc | tr '\n' ' ')" "0 0 0 "
"$YB" merge --json "$T/rm.json" "$T"/rc.{0,1,2}.json >"$T/rm.out" 2>&1
is "RESTCONF: merged" "$?" 0
sleep 0.3
stop_nginx
is "RESTCONF: merged completed = nginx's access log = 240" \
    "$(jget "$T/rm.json" "r['summary']['requests_completed']") $(grep -c ' 204$' "$NG/access.log")" "240 240"
is "RESTCONF: nginx logged the $K client addresses, each with its shard's 80 requests" \
    "$(awk '{print $1}' "$NG/access.log" | sort | uniq -c | awk '{printf "%s:%s ", $2, $1}')" \
    "$(for i in $(seq 0 $((K - 1))); do printf '%s:80 ' "$NETNS_NET.$((11 + i))"; done)"
done_testing
