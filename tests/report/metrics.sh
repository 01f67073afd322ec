#!/bin/bash
# Live metrics (--metrics-listen): curl scrapes a run against `yangblast
# serve` while it goes; every scrape passes Debian's `promtool check
# metrics`, counters never go back, the final scrape (after the report is
# written, during --metrics-linger) equals the JSON report, OpenMetrics
# text when asked for it by Accept.  Hostile scrapers (wrong path or
# method, an oversized head, every slot held by silent connections) get
# their answer or their deadline and never stop the listener.  Per-target
# labels with the cardinality cap (a fleet of 3 with --metrics-max-series
# 2), experiment's runs as workloads, and the usage errors.
. "${YB_SRCDIR:-.}/tests/lib.sh"

RC_CORPUS=$YB_SRCDIR/corpus/restconf-acl-1000.ybc
GN_CORPUS=$YB_SRCDIR/corpus/gnmi-acl-1000.ybc
CHECK="/usr/bin/python3 $YB_SRCDIR/tests/report/metrics_check.py"

check "promtool is installed (setup.sh TEST_PKGS: prometheus)" command -v promtool
check "python3-prometheus-client is installed (setup.sh TEST_PKGS)" \
    /usr/bin/python3 -c 'import prometheus_client'

yb_serve "$T/serve.out" --restconf 127.0.0.1:0 --gnmi 127.0.0.1:0 --self-signed \
    --service-time uniform:500us..3ms || exit 1

# scrape URL OUT [curl args]: one scrape; prints curl's exit status
scrape() {
    local url=$1 out=$2; shift 2
    curl -s --max-time 5 -o "$out" "$@" "$url"
    echo $?
}
written() { grep -q '^yangblast_report_written 1' "$1" 2>/dev/null; }

# ---- a gNMI run over TLS, scraped as it goes ---------------------------------
MP=$(free_port)
M=http://127.0.0.1:$MP/metrics
"$YB" run -q "$GN_CORPUS" --target "$GURL" -k -c 2 -m 4 --sessions reuse -D 4s \
    --metrics-listen "127.0.0.1:$MP" --metrics-linger 60s --json "$T/run.json" \
    >"$T/run.out" 2>&1 &
RPID=$!
wait_port "$MP" 10
n=0
fails=0
for i in $(seq 60); do
    sleep 0.4
    rc=$(scrape "$M" "$T/s$n.txt")
    [ "$rc" = 0 ] || { fails=$((fails + 1)); continue; }
    written "$T/s$n.txt" && break
    n=$((n + 1))
done
final=$T/s$n.txt
is "every scrape during the run answered" "$fails" 0
like "several scrapes before the report was written" "$n" '^([4-9]|[1-9][0-9]+)$'
check "the listener says when the report is written" written "$final"
bad=0
for f in "$T"/s*.txt; do
    promtool check metrics <"$f" >"$T/promtool.out" 2>&1 || { bad=$((bad + 1)); head -5 "$T/promtool.out" | sed 's/^/# /'; }
done
is "promtool check metrics passes every scrape" "$bad" 0
$CHECK monotonic $(for k in $(seq 0 "$n"); do echo "$T/s$k.txt"; done) >"$T/mono.out"
is "counters are monotonic across the scrapes" "$?" 0
grep -v '^ok' "$T/mono.out" | sed 's/^/# /'
check "the run wrote its JSON report" test -s "$T/run.json"
$CHECK final "$final" "$T/run.json" >"$T/final.out"
is "the final scrape equals the JSON report" "$?" 0
grep -v '^ok' "$T/final.out" | sed 's/^/# /'
like "TLS handshakes are counted" "$(grep '^yangblast_tls_handshakes_total.*kind="full"' "$final")" ' [1-9][0-9]*$'
like "gRPC codes are counted" "$(grep '^yangblast_grpc_responses_total.*code="0"' "$final")" ' [1-9][0-9]*$'
like "per-target labels name the target" "$(grep '^yangblast_requests_started_total' "$final")" \
    "workload=\"gnmi-acl-1000.ybc\",target=\"${GURL//./\\.}\""
like "generator CPU is exposed" "$(grep '^yangblast_generator_cpu_seconds_total' "$final")" 'mode="user"'
like "the self-check is exposed" "$(grep -c '^yangblast_self_check{' "$final")" '^4$'

# OpenMetrics when the scraper asks for it (as Prometheus does)
curl -s --max-time 5 -D "$T/om.h" -o "$T/om.txt" \
    -H 'Accept: application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5' "$M"
like "Content-Type is OpenMetrics" "$(cat "$T/om.h")" 'application/openmetrics-text; version=1.0.0'
$CHECK openmetrics "$T/om.txt" >"$T/om.out"
is "the OpenMetrics text parses and ends with # EOF" "$?" 0
grep -v '^ok' "$T/om.out" | sed 's/^/# /'
curl -s --max-time 5 -D "$T/pt.h" -o /dev/null "$M"
like "plain Prometheus text otherwise" "$(cat "$T/pt.h")" 'text/plain; version=0.0.4'

# hostile scrapers: wrong path, wrong method, an oversized head
code() { curl -s --max-time 5 -o /dev/null -w '%{http_code}' "$@"; }
is "another path is 404" "$(code "http://127.0.0.1:$MP/")" 404
is "POST /metrics is 405" "$(code -X POST -d x "$M")" 405
is "a 16 KiB header is 431" "$(code -H "X-Big: $(head -c 16384 /dev/zero | tr '\0' a)" "$M")" 431
# every slot held by connections that never send a byte: a scrape is
# turned away at once, and served again once their deadline (5 s) passed
/usr/bin/python3 - "$MP" >"$T/slots.out" 2>&1 <<'EOF' &
import socket, sys, time
cs = [socket.create_connection(("127.0.0.1", int(sys.argv[1]))) for _ in range(8)]
time.sleep(8)
EOF
HPID=$!
sleep 1
rc=$(scrape "$M" "$T/held.txt")
like "with every slot held, a scrape is turned away (not queued)" "$rc" '^(52|56|7)$'
sleep 5
rc=$(scrape "$M" "$T/after.txt")
is "once the silent connections' deadline passed, scrapes are served" "$rc" 0
check "and still final" written "$T/after.txt"
kill "$HPID" 2>/dev/null
wait "$HPID" 2>/dev/null
kill -TERM "$RPID"
wait "$RPID"
is "SIGTERM ends --metrics-linger; the run's exit status stands" "$?" 0
check "the listener is closed" bash -c "! (exec 3<>/dev/tcp/127.0.0.1/$MP) 2>/dev/null"

# ---- a fleet of 3 with --metrics-max-series 2: two targets named, one other --
yb_serve_stop
yb_serve "$T/fleet.out" --devices 3 --restconf 127.0.0.1:0 --gnmi off \
    --write-inventory "$T/fleet.yaml" || exit 1
for i in $(seq 100); do grep -q 'devices ready' "$T/fleet.out" && break; sleep 0.1; done
MP=$(free_port)
"$YB" run -q "$RC_CORPUS" --targets "$T/fleet.yaml" --fan-out -n 60 -c 2 \
    --metrics-listen ":$MP" --metrics-max-series 2 --metrics-linger 30s \
    --json "$T/fleet.json" >"$T/fleet.run" 2>&1 &
RPID=$!
for i in $(seq 100); do
    sleep 0.2
    [ "$(scrape "http://127.0.0.1:$MP/metrics" "$T/f.txt")" = 0 ] && written "$T/f.txt" && break
done
$CHECK series "$T/f.txt" 2 1 >"$T/series.out"
is "the cap keeps 2 targets' labels and groups the third" "$?" 0
grep -v '^ok' "$T/series.out" | sed 's/^/# /'
$CHECK final "$T/f.txt" "$T/fleet.json" >"$T/ffinal.out"
is "the fleet's series add up to the JSON report" "$?" 0
grep -v '^ok' "$T/ffinal.out" | sed 's/^/# /'
like "targets are labelled with their inventory names" "$(cat "$T/f.txt")" 'target="sw1"'
kill -TERM "$RPID"
wait "$RPID"

# ---- experiment: each run of the matrix is a workload of its own -------------
yb_serve_stop
yb_serve "$T/serve2.out" --restconf 127.0.0.1:0 --gnmi off || exit 1
MP=$(free_port)
"$YB" experiment sessions -q --restconf "$RURL" -n 40 --metrics-listen "127.0.0.1:$MP" \
    --metrics-linger 30s >"$T/exp.out" 2>&1 &
RPID=$!
for i in $(seq 100); do
    sleep 0.2
    [ "$(scrape "http://127.0.0.1:$MP/metrics" "$T/e.txt")" = 0 ] && written "$T/e.txt" && break
done
like "experiment: the reuse run is a workload" "$(grep '^yangblast_requests_total.*outcome="ok"' "$T/e.txt")" \
    'workload="RESTCONF reuse n=40".* 40$'
like "experiment: the per-request run is another" "$(grep '^yangblast_requests_total.*outcome="ok"' "$T/e.txt")" \
    'workload="RESTCONF per-request n=40".* 40$'
kill -TERM "$RPID"
wait "$RPID"

# ---- usage errors -------------------------------------------------------------
check_rc "--metrics-linger without --metrics-listen is refused" 2 \
    "$YB" run "$RC_CORPUS" --target "$RURL" --metrics-linger 5s
check_rc "a bad address is refused" 2 "$YB" run "$RC_CORPUS" --target "$RURL" \
    --metrics-listen localhost:9464
like "naming the option and the forms" "$(cat "$T/.out")" "--metrics-listen 'localhost:9464': expected ADDR:PORT"
BUSY=$(free_port)
/usr/bin/python3 -c 'import socket,sys,time; s=socket.socket(); s.bind(("127.0.0.1",int(sys.argv[1]))); s.listen(); time.sleep(5)' "$BUSY" &
BPID=$!
wait_port "$BUSY" 5
check_rc "a port in use is refused before any request" 2 "$YB" run "$RC_CORPUS" \
    --target "$RURL" --metrics-listen "127.0.0.1:$BUSY"
like "naming the address" "$(cat "$T/.out")" "127.0.0.1:$BUSY': Address already in use"
kill "$BPID" 2>/dev/null
wait "$BPID" 2>/dev/null

done_testing
