#!/bin/bash
# yangblast run, RESTCONF over HTTP/1.1 (plain and TLS), against real peers:
# nginx (tests/peers/nginx.sh) as the switch, and badhttp.py for the ways a
# server can misbehave.  Every claim is checked from two sides: nginx's own
# access log (what arrived on which connection, resumed or not, with which
# lengths) and yangblast's --json report.  Every run is bounded by
# `timeout 60`; every peer is stopped by PID.  Loopback only.
. "$YB_SRCDIR/tests/lib.sh"
P=$YB_SRCDIR/tests/peers
. "$P/nginx.sh"
. "$P/peer.sh"

PY=/usr/bin/python3
export NGINX_MAX_SECONDS=240
unset YANGBLAST_PASSWORD YANGBLAST_TOKEN

cleanup() {
    nginx_stop "$T/ngtls"; nginx_stop "$T/ng"
    for d in "$T"/bh-*; do [ -d "$d" ] && peer_stop "$d"; done
    return 0
}
at_exit cleanup

# jget FILE PYEXPR: evaluates PYEXPR with the JSON document in d.
jget() { "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2" 2>&1; }

# lstat LOG PYEXPR: evaluates PYEXPR over the access log's /restconf lines
# (nginx's internal proxy hops are numbered connections too, but only the
# front server logs, and only client requests start with /restconf), as
# `rows`: dicts conn, nreq, reused, method, uri, status, len, clen, ctype,
# auth (strings as logged).
lstat() {
    "$PY" -c '
import sys
keys = ["conn", "nreq", "reused", "method", "uri", "status", "len", "clen", "ctype", "auth"]
rows = []
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    if len(f) >= 10 and f[4].startswith("/restconf"):
        rows.append(dict(zip(keys, f)))
print(eval(sys.argv[2]))' "$1" "$2" 2>&1
}

# wait_log LOG N: waits (up to 5 s) until LOG holds N /restconf lines; nginx
# writes a line after it has sent the response, so the client can be done
# a moment before the log is.
wait_log() {
    local n=50
    while [ "$(lstat "$1" 'len(rows)')" -lt "$2" ] 2>/dev/null && [ $n -gt 0 ]; do
        sleep 0.1; n=$((n - 1))
    done
    sleep 0.1
}

# body_lens CORPUS: the records' body lengths in bytes, one JSON list.
body_lens() {
    "$YB" corpus cat "$1" | "$PY" -c '
import json, sys, base64
out = []
for line in sys.stdin:
    r = json.loads(line)
    if "body_base64" in r:
        out.append(len(base64.b64decode(r["body_base64"])))
    else:
        out.append(len(r["body"].encode("utf-8")))
print(json.dumps(out))'
}

# yb NAME ARGS...: runs `yangblast run ARGS --json $T/NAME.json` under
# timeout 60; stdout in $T/NAME.out, stderr in $T/NAME.err, exit status in
# $rc, wall time (seconds) in $secs.
yb() {
    local name=$1 t0 t1
    shift
    rm -f "$T/$name.json"
    t0=$(date +%s.%N)
    timeout 60 "$YB" run "$@" --json "$T/$name.json" >"$T/$name.out" 2>"$T/$name.err"
    rc=$?
    t1=$(date +%s.%N)
    secs=$("$PY" -c "print(round($t1 - $t0, 2))")
    J=$T/$name.json
    if [ "$rc" = 124 ]; then diag "$name: killed by timeout 60 (hang)"; fi
}

# report_complete NAME DESC: the JSON report and the text report are whole.
report_complete() {
    is "$2: JSON report complete (schema, every documented error class, cpu, intervals)" \
        "$(jget "$T/$1.json" '(d["schema"] == "yangblast-report/1" and
            set(d["errors"]) >= {"refused","connect_timeout","tls","reset","closed","timeout","protocol","status","other"}
            and "per_request_us" in d["cpu"] and isinstance(d["intervals"], list)
            and d["summary"]["requests_error"] == sum(v for k, v in d["errors"].items() if k != "reasons"))')" True
    like "$2: text report has the table and the errors line" \
        "$(cat "$T/$1.out")" '^# Requests \|'
}

clear_log() { : >"$(nginx_log "$1")"; }

# ---------------------------------------------------------------- corpora
"$YB" synth acl -n 10 -o "$T/acl10.ybc" >/dev/null 2>&1
check "synth: a 10-record RESTCONF corpus" test -s "$T/acl10.ybc"
LENS=$(body_lens "$T/acl10.ybc")
like "corpus bodies are ~14.5 KB" "$LENS" '^\[1[3-6][0-9]{3}, '

# expected_clens N: the content lengths of N requests cycling through the
# corpus, sorted (a multiset: with -c > 1 the log's order is not the
# corpus order).
expected_clens() { "$PY" -c "l=$LENS; print(sorted(l[i % len(l)] for i in range($1)))"; }
got_clens() { lstat "$1" 'sorted(int(r["clen"]) for r in rows)'; }

# ---------------------------------------------------------------- nginx TLS
tport=$(free_port)
check "nginx (TLS) starts" nginx_start "$T/ngtls" "$tport" tls
TU=https://127.0.0.1:$tport
CA=$(nginx_cert "$T/ngtls")
TL=$(nginx_log "$T/ngtls")

# -- reuse: -c 4, -n 200
clear_log "$T/ngtls"
yb reuse "$T/acl10.ybc" --target "$TU" --cacert "$CA" -c 4 -n 200
is "reuse -c 4 -n 200: exit 0" "$rc" 0
wait_log "$TL" 200
is "reuse: nginx logged 200 requests" "$(lstat "$TL" 'len(rows)')" 200
is "reuse: exactly 4 distinct connections" "$(lstat "$TL" 'len({r["conn"] for r in rows})')" 4
is "reuse: each connection numbers its requests 1..k (keep-alive, no reconnects)" \
    "$(lstat "$TL" 'all(sorted(int(r["nreq"]) for r in rows if r["conn"] == c) == list(range(1, 1 + sum(1 for r in rows if r["conn"] == c))) for c in {r["conn"] for r in rows})')" True
is "reuse: all full handshakes (no resumption asked)" "$(lstat "$TL" 'sorted({r["reused"] for r in rows})')" "['.']"
is "reuse: all PATCH 204" "$(lstat "$TL" 'sorted({(r["method"], r["status"]) for r in rows})')" "[('PATCH', '204')]"
is "reuse: Content-Length of each request is its record's body length" \
    "$(got_clens "$TL")" "$(expected_clens 200)"
is "reuse: request_length >= body length on every request" \
    "$(lstat "$TL" 'all(int(r["len"]) >= int(r["clen"]) > 0 for r in rows)')" True
is "reuse: Content-Type from the record" "$(lstat "$TL" 'sorted({r["ctype"] for r in rows})')" \
    "['application/yang-data+json']"
is "reuse: no Authorization without credentials" "$(lstat "$TL" 'sorted({r["auth"] for r in rows})')" "['0']"
is "reuse JSON: requests_ok, completed, errors" \
    "$(jget "$J" '(d["summary"]["requests_ok"], d["summary"]["requests_completed"], d["summary"]["requests_error"])')" \
    "(200, 200, 0)"
is "reuse JSON: sessions opened 4, TLS full 4, resumed 0" \
    "$(jget "$J" '(d["sessions"]["opened"], d["sessions"]["tls_full"], d["sessions"]["tls_resumed"])')" "(4, 4, 0)"
is "reuse JSON: status 204 x 200" "$(jget "$J" 'd["status"]')" "{'204': 200}"
is "reuse JSON: data_bytes >= the bodies' sum" \
    "$(jget "$J" "d['summary']['data_bytes'] >= sum($(expected_clens 200))")" True
is "reuse JSON: connect and tls phases paid 4 times, e2e 200" \
    "$(jget "$J" '(d["latency_us"]["connect"]["count"], d["latency_us"]["tls"]["count"], d["latency_us"]["e2e"]["count"])')" \
    "(4, 4, 200)"
report_complete reuse "reuse"

# -- per-request
clear_log "$T/ngtls"
yb perreq "$T/acl10.ybc" --target "$TU" --cacert "$CA" -c 4 -n 200 --sessions per-request
is "per-request: exit 0" "$rc" 0
wait_log "$TL" 200
is "per-request: nginx logged 200 requests" "$(lstat "$TL" 'len(rows)')" 200
is "per-request: 200 distinct connections" "$(lstat "$TL" 'len({r["conn"] for r in rows})')" 200
is "per-request: one request per connection" "$(lstat "$TL" 'sorted({r["nreq"] for r in rows})')" "['1']"
is "per-request: Content-Length of each request is its record's body length" \
    "$(got_clens "$TL")" "$(expected_clens 200)"
is "per-request JSON: ok 200, sessions 200, TLS full 200, resumed 0" \
    "$(jget "$J" '(d["summary"]["requests_ok"], d["sessions"]["opened"], d["sessions"]["tls_full"], d["sessions"]["tls_resumed"])')" \
    "(200, 200, 200, 0)"
is "per-request: nginx saw no resumption either" "$(lstat "$TL" 'sum(r["reused"] == "r" for r in rows)')" 0

# -- per-request with --tls-resume (TLS 1.3 tickets, then TLS 1.2 ids/tickets)
for v in 1.3 1.2; do
    clear_log "$T/ngtls"
    yb resume$v "$T/acl10.ybc" --target "$TU" --cacert "$CA" -c 4 -n 200 \
        --sessions per-request --tls-resume --tls-max "$v" --tls-min "$v"
    is "tls-resume (TLS $v): exit 0" "$rc" 0
    wait_log "$TL" 200
    is "tls-resume (TLS $v): 200 connections" "$(lstat "$TL" 'len({r["conn"] for r in rows})')" 200
    nr=$(lstat "$TL" 'sum(r["reused"] == "r" for r in rows)')
    check "tls-resume (TLS $v): nginx resumed >= 90% ($nr of 200)" test "$nr" -ge 180
    is "tls-resume (TLS $v): JSON tls_resumed = nginx's count of r" "$(jget "$J" 'd["sessions"]["tls_resumed"]')" "$nr"
    is "tls-resume (TLS $v): JSON tls_full = nginx's count of ." \
        "$(jget "$J" 'd["sessions"]["tls_full"]')" "$(lstat "$TL" 'sum(r["reused"] == "." for r in rows)')"
    is "tls-resume (TLS $v): protocol" "$(awk -F'\t' '$5 ~ /^\/restconf/ {print $14}' "$TL" | sort -u)" "TLSv$v"
    is "tls-resume (TLS $v): JSON run.tls_resume" "$(jget "$J" 'd["run"]["tls_resume"]')" True
done

# -- -c 2: two connections (h2load's -c; pool=N is retired)
clear_log "$T/ngtls"
yb pool "$T/acl10.ybc" --target "$TU" --cacert "$CA" -c 2 -n 100
is "-c 2: exit 0" "$rc" 0
wait_log "$TL" 100
is "-c 2: nginx logged 100 requests" "$(lstat "$TL" 'len(rows)')" 100
is "-c 2: exactly 2 connections" "$(lstat "$TL" 'len({r["conn"] for r in rows})')" 2
is "-c 2 JSON: ok 100, sessions 2, run.sessions" \
    "$(jget "$J" '(d["summary"]["requests_ok"], d["sessions"]["opened"], d["run"]["sessions"])')" "(100, 2, 'reuse')"

# -- -t 2 -c 4
clear_log "$T/ngtls"
yb threads "$T/acl10.ybc" --target "$TU" --cacert "$CA" -t 2 -c 4 -n 200
is "-t 2 -c 4: exit 0" "$rc" 0
wait_log "$TL" 200
is "-t 2: nginx logged 200 requests" "$(lstat "$TL" 'len(rows)')" 200
is "-t 2: 4 connections" "$(lstat "$TL" 'len({r["conn"] for r in rows})')" 4
is "-t 2: Content-Length of each request is its record's body length" \
    "$(got_clens "$TL")" "$(expected_clens 200)"
is "-t 2 JSON: ok, completed, started, error merged" \
    "$(jget "$J" '(d["summary"]["requests_ok"], d["summary"]["requests_completed"], d["summary"]["requests_started"], d["summary"]["requests_error"])')" \
    "(200, 200, 200, 0)"
is "-t 2 JSON: sessions 4, TLS full 4; status 204 x 200" \
    "$(jget "$J" '(d["sessions"]["opened"], d["sessions"]["tls_full"], d["status"])')" "(4, 4, {'204': 200})"
is "-t 2 JSON: e2e count 200, intervals sum 200, threads 2" \
    "$(jget "$J" '(d["latency_us"]["e2e"]["count"], sum(i["requests"] for i in d["intervals"]), d["run"]["threads"])')" \
    "(200, 200, 2)"

# -- -n above the corpus size cycles
clear_log "$T/ngtls"
yb cycle "$T/acl10.ybc" --target "$TU" --cacert "$CA" -n 35
is "-n 35 over 10 records: exit 0" "$rc" 0
wait_log "$TL" 35
is "-n 35: nginx logged 35 requests" "$(lstat "$TL" 'len(rows)')" 35
is "-n 35: bodies cycle through the corpus (in order, -c 1)" \
    "$(lstat "$TL" '[int(r["clen"]) for r in rows]')" \
    "$("$PY" -c "l=$LENS; print([l[i % 10] for i in range(35)])")"
is "-n 35 JSON: requests_ok" "$(jget "$J" 'd["summary"]["requests_ok"]')" 35

# -- no -n: one pass over the corpus
clear_log "$T/ngtls"
yb onepass "$T/acl10.ybc" --target "$TU" --cacert "$CA" -c 3
wait_log "$TL" 10
is "no -n: one pass (10 requests, exit 0)" "$rc $(lstat "$TL" 'len(rows)') $(jget "$J" 'd["summary"]["requests_ok"]')" "0 10 10"

# -- host name verification through --cacert
yb byname "$T/acl10.ybc" --target "https://localhost:$tport" --cacert "$CA" -n 3
is "https://localhost with --cacert: exit 0, 3 ok" "$rc $(jget "$J" 'd["summary"]["requests_ok"]')" "0 3"

# -- credentials
PW='pw-S3cret-7f1c9e'
B64=$(printf 'admin:%s' "$PW" | base64 -w0)
clear_log "$T/ngtls"
YANGBLAST_PASSWORD=$PW yb auth "$T/acl10.ybc" --target "$TU" --cacert "$CA" --user admin -n 5
is "--user + YANGBLAST_PASSWORD: exit 0" "$rc" 0
wait_log "$TL" 5
is "--user: every request carried Authorization" "$(lstat "$TL" '[r["auth"] for r in rows]')" \
    "['1', '1', '1', '1', '1']"
check "--user: the password is not in the JSON, stdout or stderr" \
    sh -c "! grep -rqF -e '$PW' -e '$B64' '$T/auth.json' '$T/auth.out' '$T/auth.err'"
printf '%s\n' "$PW" >"$T/pwfile"
clear_log "$T/ngtls"
yb authf "$T/acl10.ybc" --target "$TU" --cacert "$CA" --user admin --password-file "$T/pwfile" -n 3
is "--user + --password-file: exit 0" "$rc" 0
wait_log "$TL" 3
is "--password-file: Authorization sent" "$(lstat "$TL" 'sorted({r["auth"] for r in rows}), len(rows)')" "(['1'], 3)"
check "--password-file: the password is not in the outputs" \
    sh -c "! grep -rqF -e '$PW' -e '$B64' '$T/authf.json' '$T/authf.out' '$T/authf.err'"
clear_log "$T/ngtls"
yb nopw "$T/acl10.ybc" --target "$TU" --cacert "$CA" --user admin -n 3
is "--user without a password: exit 2" "$rc" 2
like "--user without a password: says where a password comes from" "$(cat "$T/nopw.err")" 'YANGBLAST_PASSWORD|password-file'
sleep 0.2
is "--user without a password: nothing sent" "$(lstat "$TL" 'len(rows)')" 0
yb nopwf "$T/acl10.ybc" --target "$TU" --cacert "$CA" --user admin --password-file "$T/no-such-pw" -n 3
is "--password-file missing: exit 2" "$rc" 2
like "--password-file missing: names the file" "$(cat "$T/nopwf.err")" 'no-such-pw'

# -- TLS verification
yb noca "$T/acl10.ybc" --target "$TU" -n 3
is "no --cacert (self-signed): exit 1" "$rc" 1
is "no --cacert: 3 tls errors, 0 ok" \
    "$(jget "$J" '(d["errors"]["tls"], d["summary"]["requests_ok"], d["summary"]["requests_completed"])')" "(3, 0, 3)"
report_complete noca "no --cacert"
yb insecure "$T/acl10.ybc" --target "$TU" --insecure -n 3
is "--insecure: exit 0, 3 ok" "$rc $(jget "$J" 'd["summary"]["requests_ok"]')" "0 3"
yb wrongca "$T/acl10.ybc" --target "$TU" --cacert "$T/pwfile" -n 1
is "--cacert not a certificate: exit 2" "$rc" 2
like "--cacert not a certificate: names the file" "$(cat "$T/wrongca.err")" 'pwfile'

# -- -D 2s
clear_log "$T/ngtls"
yb dur "$T/acl10.ybc" --target "$TU" --cacert "$CA" -c 2 -D 2s
is "-D 2s: exit 0" "$rc" 0
check "-D 2s: the run ended within 10 s (took ${secs}s)" "$PY" -c "assert $secs < 10"
is "-D 2s JSON: duration_s in [1.5, 4]" "$(jget "$J" '1.5 <= d["summary"]["duration_s"] <= 4')" True
n_ok=$(jget "$J" 'd["summary"]["requests_ok"]')
check "-D 2s: cycled past the corpus ($n_ok requests)" test "$n_ok" -gt 10
wait_log "$TL" "$n_ok"
is "-D 2s: nginx logged as many requests as the report" "$(lstat "$TL" 'len(rows)')" "$n_ok"
is "-D 2s JSON: no errors, nothing cut off" "$(jget "$J" '(d["summary"]["requests_error"], d["cut_off"])')" "(0, 0)"

# -- status counting: 409 from /restconf/data/conflict
cat >"$T/conflict.jsonl" <<'EOF'
{"protocol":"restconf","method":"POST","scheme":"https","authority":"localhost","path":"/restconf/data/conflict/openconfig-acl:acl","headers":[{"name":"Content-Type","value":"application/yang-data+json"}],"body":"{\"openconfig-acl:acl-sets\":{}}"}
{"protocol":"restconf","method":"PATCH","scheme":"https","authority":"localhost","path":"/restconf/data/conflict/openconfig-acl:acl/acl-sets","headers":[{"name":"Content-Type","value":"application/yang-data+json"}],"body":"{}"}
EOF
check "corpus import: a conflict corpus" "$YB" corpus import "$T/conflict.jsonl" -o "$T/conflict.ybc"
clear_log "$T/ngtls"
yb conflict "$T/conflict.ybc" --target "$TU" --cacert "$CA" -n 6 --max-errors 0
is "409s with --max-errors 0: exit 1" "$rc" 1
wait_log "$TL" 6
is "409s: nginx answered 409 six times" "$(lstat "$TL" '[r["status"] for r in rows]')" \
    "['409', '409', '409', '409', '409', '409']"
is "409s JSON: status 409 x 6, errors.status 6, ok 0" \
    "$(jget "$J" '(d["status"], d["errors"]["status"], d["summary"]["requests_ok"], d["summary"]["requests_completed"])')" \
    "({'409': 6}, 6, 0, 6)"
report_complete conflict "409s"
yb conflict2 "$T/conflict.ybc" --target "$TU" --cacert "$CA" -n 6 --max-errors 1000
is "409s with --max-errors 1000: exit 0" "$rc" 0
is "409s --max-errors 1000 JSON: errors.status 6, run.max_errors" \
    "$(jget "$J" '(d["errors"]["status"], d["run"]["max_errors"])')" "(6, 1000)"
yb conflict3 "$T/conflict.ybc" --target "$TU" --cacert "$CA" -n 6 --max-errors 6
is "6 errors with --max-errors 6: exit 0 (exit 1 only above)" "$rc" 0

nginx_stop "$T/ngtls"

# ---------------------------------------------------------------- nginx plain
pport=$(free_port)
check "nginx (plain) starts" nginx_start "$T/ng" "$pport"
PU=http://127.0.0.1:$pport
PL=$(nginx_log "$T/ng")
yb plain "$T/acl10.ybc" --target "$PU" -c 2 -n 20
is "plain http: exit 0" "$rc" 0
wait_log "$PL" 20
is "plain http: nginx logged 20 requests on 2 connections, none TLS" \
    "$(lstat "$PL" '(len(rows), len({r["conn"] for r in rows}), sorted({r["reused"] for r in rows}))')" "(20, 2, ['-'])"
is "plain http: Content-Length of each request is its record's body length" \
    "$(got_clens "$PL")" "$(expected_clens 20)"
is "plain http JSON: ok 20, sessions 2, no TLS handshakes" \
    "$(jget "$J" '(d["summary"]["requests_ok"], d["sessions"]["opened"], d["sessions"]["tls_full"], d["sessions"]["tls_resumed"], d["latency_us"]["tls"]["count"])')" \
    "(20, 2, 0, 0, 0)"
yb tls2plain "$T/acl10.ybc" --target "https://127.0.0.1:$pport" --insecure -n 2 --timeout 5s
is "https:// to a plain-HTTP port: exit 1, tls errors" "$rc $(jget "$J" 'd["errors"]["tls"]')" "1 2"
nginx_stop "$T/ng"

# ---------------------------------------------------------------- failures
# Nothing listening.
dead=$(free_port)
yb refused "$T/acl10.ybc" --target "http://127.0.0.1:$dead" -c 2 -n 7
is "nothing listening: exit 1" "$rc" 1
is "nothing listening: errors.refused == requests (7), ok 0" \
    "$(jget "$J" '(d["errors"]["refused"], d["summary"]["requests_completed"], d["summary"]["requests_ok"])')" "(7, 7, 0)"
report_complete refused "nothing listening"
yb refused2 "$T/acl10.ybc" --target "http://127.0.0.1:$dead" -n 7 --max-errors 7
is "nothing listening, --max-errors 7: exit 0" "$rc" 0

# badhttp modes: MODE EXPECTED-CLASSES (a python set of error classes)
bh_case() {
    local mode=$1 classes=$2 extra=${3:-}
    if ! peer_start "$T/bh-$mode" badhttp.py "$mode" --max-seconds 120; then
        not_ok "badhttp $mode starts"; return
    fi
    local port
    port=$(peer_port "$T/bh-$mode")
    # shellcheck disable=SC2086
    yb "bh-$mode" "$T/acl10.ybc" --target "http://127.0.0.1:$port" -c 2 -n 6 $extra
    is "badhttp $mode: exit 1" "$rc" 1
    is "badhttp $mode: all 6 requests counted as $classes errors" \
        "$(jget "$J" "(sum(v for k, v in d['errors'].items() if k in $classes), d['summary']['requests_error'], d['summary']['requests_completed'], d['summary']['requests_ok'])")" \
        "(6, 6, 6, 0)"
    report_complete "bh-$mode" "badhttp $mode"
    peer_stop "$T/bh-$mode"
}
bh_case reset "{'reset', 'closed'}"
bh_case garbage "{'protocol'}"
bh_case close "{'closed'}"
bh_case truncated "{'closed', 'protocol'}"
bh_case stall "{'timeout'}" "--timeout 500ms"
check "badhttp stall with --timeout 500ms: the run ended quickly (${secs}s)" "$PY" -c "assert $secs < 10"

# A well-behaved python peer with a delay: the timeout is per request.
if peer_start "$T/bh-slow" badhttp.py slow --delay-ms 300 --max-seconds 120; then
    yb bh-slow "$T/acl10.ybc" --target "http://127.0.0.1:$(peer_port "$T/bh-slow")" -n 3 --timeout 5s
    is "slow peer (300 ms) within --timeout 5s: exit 0, 3 ok" "$rc $(jget "$J" 'd["summary"]["requests_ok"]')" "0 3"
    peer_stop "$T/bh-slow"
else
    not_ok "badhttp slow starts"
fi

# ---------------------------------------------------------------- set-up errors
setup_err() {
    local desc=$1 want=$2
    shift 2
    yb setup "$@"
    is "$desc: exit 2" "$rc" 2
    like "$desc: the message names it" "$(cat "$T/setup.err")" "$want"
    check "$desc: no JSON report" test ! -e "$T/setup.json"
}
setup_err "--target ftp://" 'ftp://x' "$T/acl10.ybc" --target ftp://x -n 1
setup_err "--target without a host" "'http://'" "$T/acl10.ybc" --target http:// -n 1
setup_err "--target with a bad port" '99999' "$T/acl10.ybc" --target http://127.0.0.1:99999 -n 1
setup_err "--target not a URL" 'notaurl' "$T/acl10.ybc" --target notaurl -n 1
setup_err "missing corpus" 'no-such\.ybc' "$T/no-such.ybc" --target "http://127.0.0.1:$dead" -n 1
printf 'this is not a corpus\n' >"$T/text.ybc"
setup_err "a text file as corpus" 'text\.ybc' "$T/text.ybc" --target "http://127.0.0.1:$dead" -n 1
sz=$(stat -c %s "$T/acl10.ybc")
head -c 100 "$T/acl10.ybc" >"$T/cut100.ybc"
setup_err "a corpus cut after 100 bytes" 'cut100\.ybc' "$T/cut100.ybc" --target "http://127.0.0.1:$dead" -n 1
head -c $((sz - 200)) "$T/acl10.ybc" >"$T/cutend.ybc"
setup_err "a corpus cut inside its last record" 'cutend\.ybc' "$T/cutend.ybc" --target "http://127.0.0.1:$dead" -c 2
is "a corpus cut inside its last record: named once" "$(grep -o 'cutend\.ybc' "$T/setup.err" | wc -l)" 1
setup_err "missing --target" 'target' "$T/acl10.ybc" -n 1

done_testing
