#!/bin/bash
# Every failure has a reason: yangblast run against real peers that fail in
# known ways, checking the reason text in the text report and in JSON
# (errors.reasons), that the reasons' counts add up to the class counts,
# and that failed requests stay out of the success figures.  Every run is
# bounded by `timeout 60`; exit 124 would mean a hang.
. "${YB_SRCDIR:-.}/tests/lib.sh"
. "$YB_SRCDIR/tests/peers/peer.sh"
. "$YB_SRCDIR/tests/peers/nginx.sh"

RC_CORPUS=$YB_SRCDIR/corpus/restconf-acl-1000.ybc
GN_CORPUS=$YB_SRCDIR/corpus/gnmi-acl-1000.ybc

# yb NAME ARGS...: runs yangblast with --json $T/NAME.json, text report in
# $T/NAME.out, exit in $rc.
yb() {
    local n=$1
    shift
    timeout 60 "$YB" run -q --json "$T/$n.json" "$@" >"$T/$n.out" 2>&1
    rc=$?
    cat "$T/$n.out" >>"$T/all.out"
}
# reasons NAME: the JSON's errors.reasons as [[class, reason, count], ...].
reasons() {
    jget "$T/$1.json" '[[e["class"], e["reason"], e["count"]] for e in r["errors"]["reasons"]]'
}
# adds_up NAME: for every class, its reasons' counts add up to its count.
adds_up() {
    jget "$T/$1.json" 'all(sum(e["count"] for e in r["errors"]["reasons"] if e["class"] == c) == n for c, n in r["errors"].items() if c != "reasons")'
}

# ---- yangblast serve: TLS without the CA, 409 ------------------------------
yb_serve "$T/serve.out" --restconf 127.0.0.1:0 --gnmi 127.0.0.1:0 --self-signed \
    --fault status:409@1 || exit 1
rport=${RURL##*:}

yb tls "$RC_CORPUS" --target "$RURL" -n 4 -c 2
is "self-signed, no --cacert: exit 1" "$rc" 1
is "self-signed: the TLS reason names the check and the peer" "$(reasons tls)" \
    "[[\"tls\",\"tls: certificate verify failed: self-signed certificate (127.0.0.1:$rport)\",4]]"
like "self-signed: the text report lists it" "$(cat "$T/tls.out")" \
    "^ +4  tls: certificate verify failed: self-signed certificate \\(127\\.0\\.0\\.1:$rport\\)$"
is "self-signed: reasons add up to the classes" "$(adds_up tls)" true

yb conflict "$RC_CORPUS" --target "$RURL" --insecure -n 6 -c 2
is "409 on every request: exit 1" "$rc" 1
is "409: reason http 409" "$(reasons conflict)" '[["status","http 409",6]]'
is "409: reasons add up" "$(adds_up conflict)" true
# the error responses keep their bodies (what the switch disliked)
is "409: the 6 error responses kept with their RESTCONF error body" \
    "$(jget "$T/conflict.json" '[(e["status"], e["reason"], "ietf-restconf:errors" in e["body"] and "injected fault" in e["body"], e["body_kept_bytes"] == len(e["body"])) for e in r["error_responses"]]')" \
    "$(printf '%s' '[[409,"http 409",true,true]'; for i in 2 3 4 5 6; do printf '%s' ',[409,"http 409",true,true]'; done; printf ']')"
like "409: the text report shows a body under its reason" "$(cat "$T/conflict.out")" \
    '^  \[\+[0-9.]+ s\] http 409$'
like "409: ... and the body itself" "$(cat "$T/conflict.out")" '^    \{"ietf-restconf:errors":.*"injected fault"'
# all failed: no success figure (table, latency, .hgrm) holds them
row=$(sed -n '3p' "$T/conflict.out")
like "all failed: the table shows 0 requests, 0 MB/s, 0 MB" "$row" \
    '^ +0 \| +0\.00 \| +0\.00 \| '
is "all failed: JSON data 0 but all_data counts what was sent" \
    "$(jget "$T/conflict.json" '[r["summary"]["data_bytes"], r["summary"]["avg_speed_mbps"], r["summary"]["all_data_bytes"] > 0]')" \
    '[0,0.0,true]'
is "all failed: e2e empty, e2e_failed holds the 6" \
    "$(jget "$T/conflict.json" '[r["latency_us"]["e2e"]["count"], r["latency_us"]["service"]["count"], r["latency_us"]["e2e_failed"]["count"]]')" \
    '[0,0,6]'
like "all failed: the text shows the failed e2e row" "$(cat "$T/conflict.out")" '^failed e2e +6 '
# -v: each new distinct reason once, when it first happens, across threads
yb verbose "$RC_CORPUS" --target "$RURL" --insecure -n 12 -c 2 -t 2 -v
like "-v: the new reason announced with its time and class" "$(cat "$T/verbose.out")" \
    '^\[\+[0-9]+\.[0-9]{3} s\] new error reason \(status\): http 409$'
is "-v: announced once for 12 failures on 2 threads" "$(grep -c 'new error reason' "$T/verbose.out")" 1
is "at most 8 error responses kept, the first by time, merged over 2 threads" \
    "$(jget "$T/verbose.json" '[len(r["error_responses"]), [e["t_s"] for e in r["error_responses"]] == sorted(e["t_s"] for e in r["error_responses"])]')" \
    '[8,true]'
is "without -v: no announcement" "$(grep -c 'new error reason' "$T/conflict.out")" 0
yb_serve_stop

# ---- nothing listening --------------------------------------------------------
dead=$(free_port)
yb refused "$RC_CORPUS" --target "http://127.0.0.1:$dead" -n 3
is "refused: reason names the address" "$(reasons refused)" \
    "[[\"refused\",\"connect: connection refused (127.0.0.1:$dead)\",3]]"
is "refused: reasons add up" "$(adds_up refused)" true

# ---- grpcio: a status with a percent-encoded message ----------------------------
if peer_start "$T/g3" gnmi_server.py --status-code 3 --max-seconds 60; then
    yb grpc3 "$GN_CORPUS" --target "grpc://127.0.0.1:$(peer_port "$T/g3")" -n 5
    peer_stop "$T/g3"
fi
# the server's message is "bad thing: 100%", sent as "bad thing: 100%25"
is "grpc status 3: code, name and the decoded grpc-message" "$(reasons grpc3)" \
    '[["status","grpc 3 INVALID_ARGUMENT: bad thing: 100%",5]]'
is "grpc status 3: reasons add up" "$(adds_up grpc3)" true

# ---- silent peers: which phase timed out ---------------------------------------
if peer_start "$T/stall" badhttp.py stall --max-seconds 60; then
    yb stall "$RC_CORPUS" --target "http://127.0.0.1:$(peer_port "$T/stall")" -n 2 -c 2 --timeout 1s
    peer_stop "$T/stall"
fi
is "HTTP/1.1 peer that never answers: timeout waiting for first byte" "$(reasons stall)" \
    '[["timeout","timeout after 1s (waiting for first byte)",2]]'
if peer_start "$T/silent" h2bad.py --mode silent --max-seconds 60; then
    yb silent "$GN_CORPUS" --target "grpc://127.0.0.1:$(peer_port "$T/silent")" -n 2 -c 2 \
        --timeout 1s
    peer_stop "$T/silent"
fi
is "HTTP/2 peer that never sends SETTINGS: timeout in the HTTP/2 settings phase" \
    "$(reasons silent)" '[["connect_timeout","timeout after 1s (HTTP/2 settings)",2]]'

# ---- a response cut short -------------------------------------------------------
if peer_start "$T/trunc" badhttp.py truncated --max-seconds 60; then
    yb trunc "$RC_CORPUS" --target "http://127.0.0.1:$(peer_port "$T/trunc")" -n 2
    peer_stop "$T/trunc"
fi
is "truncated body: how much of it came" "$(reasons trunc)" \
    '[["closed","closed by peer after 10 of 100 response body bytes",2]]'

# ---- a reset, a malformed answer -------------------------------------------------
if peer_start "$T/reset" badhttp.py reset --max-seconds 60; then
    bport=$(peer_port "$T/reset")
    yb reset "$RC_CORPUS" --target "http://127.0.0.1:$bport" -n 2
    peer_stop "$T/reset"
fi
is "a peer that resets: reset, while reading, and where" "$(reasons reset)" \
    "[[\"reset\",\"reset: connection reset by peer (while reading) (127.0.0.1:$bport)\",2]]"
if peer_start "$T/garbage" badhttp.py garbage --max-seconds 60; then
    yb garbage "$RC_CORPUS" --target "http://127.0.0.1:$(peer_port "$T/garbage")" -n 2
    peer_stop "$T/garbage"
fi
is "a malformed status line: what was wrong, and what came" "$(reasons garbage)" \
    '[["protocol","protocol: invalid HTTP status code (response began \"HTTP/1.1 ABC nonsense\")",2]]'

# ---- connections reset as soon as they are accepted -------------------------------
# The peers reset every other connection the moment they accept it, so a
# session's first write (HTTP/2's preface and SETTINGS, HTTP/1.1's request)
# races the reset and often fails at once.  That is a reset wherever it is
# seen, never "protocol: the session could not start" nor "the session
# refused the request".  Per-request sessions make many connects; the
# served half ends the back-off each time.  Both protocols, both I/O paths.
if peer_start "$T/abh2" h2bad.py --mode ok --abort-every 2 --stats "$T/abh2/stats.json" \
    --max-seconds 60 && peer_start "$T/abh1" badhttp.py ok --abort-every 2 --max-seconds 60; then
    for io in epoll uring; do
        yb "ab2$io" "$GN_CORPUS" --target "grpc://127.0.0.1:$(peer_port "$T/abh2")" -c 4 -D 2s \
            --sessions per-request --io "$io"
        yb "ab1$io" "$RC_CORPUS" --target "http://127.0.0.1:$(peer_port "$T/abh1")" -c 4 -D 2s \
            --sessions per-request --io "$io"
    done
    h2_answered=$(jget "$T/abh2/stats.json" 'r["answered"]')
fi
peer_stop "$T/abh2"
peer_stop "$T/abh1"
for n in ab2epoll ab2uring ab1epoll ab1uring; do
    is "connections reset on accept ($n): only resets, every request accounted for" \
        "$(jget "$T/$n.json" '[[c for c, v in r["errors"].items() if c not in ("reasons", "reset") and v], r["errors"]["reset"] > 0, r["summary"]["requests_ok"] > 0, r["summary"]["requests_completed"] == r["summary"]["requests_ok"] + r["errors"]["reset"]]')" \
        '[[],true,true,true]'
    is "connections reset on accept ($n): reasons add up" "$(adds_up "$n")" true
done
h2_ok=$(/usr/bin/python3 -c 'import json, sys; print(sum(json.load(open(f))["summary"]["requests_ok"] for f in sys.argv[1:]))' \
    "$T/ab2epoll.json" "$T/ab2uring.json" 2>/dev/null)
is "connections reset on accept: the HTTP/2 peer answered as many as yangblast counted ok" \
    "${h2_ok:-none}" "${h2_answered:-unknown}"

# ---- a server that does not speak what the corpus needs ---------------------------
nport=$(free_port)
if check "nginx (HTTP/1.1 only) starts" nginx_start "$T/ng" "$nport"; then
    yb h1only "$GN_CORPUS" --target "http://127.0.0.1:$nport" -n 3
    nginx_stop "$T/ng"
fi
like "gNMI against an HTTP/1.1-only server: it does not speak HTTP/2" "$(reasons h1only)" \
    '^\[\["protocol","protocol: the server answered the HTTP/2 preface in HTTP/1.x: it does not speak HTTP/2 here[^"]*",3\]\]$'
is "h1-only: reasons add up" "$(adds_up h1only)" true
tport=$(free_port)
if check "nginx (TLS, HTTP/1.1 only) starts" nginx_start "$T/ngt" "$tport" tls; then
    yb noh2 "$GN_CORPUS" --target "https://127.0.0.1:$tport" --cacert "$(nginx_cert "$T/ngt")" -n 2
    nginx_stop "$T/ngt"
fi
is "gNMI against a TLS server without h2 in ALPN: it does not speak h2 over TLS" \
    "$(reasons noh2)" \
    "[[\"tls\",\"tls: the server accepts none of the protocols offered via ALPN (h2): it does not speak h2 over TLS here (127.0.0.1:$tport)\",2]]"

# ---- requests that wait for a session time out from their due time ---------------
# One session, a server that takes 5 s with one worker, four requests due
# 100 ms apart, --timeout 2s: the first times out waiting for its first
# byte (2.0 s), and its session with it; the second goes out on a new one
# at once and times out there too (4.0 s); the third and fourth, still
# waiting for the one session, time out at their due time + 2 s (2.2 s,
# 2.3 s).  (The scan of the queue stops at the first that has not timed
# out when the queue is in due order, as here.)
if yb_serve "$T/slow.serve" --restconf 127.0.0.1:0 --gnmi off --service-time fixed:5s \
    --workers 1; then
    yb waiting "$RC_CORPUS" --target "$RURL" --rate 10 -n 4 -c 1 --timeout 2s
    yb_serve_stop
fi
is "waiting requests time out from their due time, waiting for a session" \
    "$(reasons waiting)" \
    '[["timeout","timeout after 2s (waiting for first byte)",2],["timeout","timeout after 2s (waiting for a session)",2]]'
is "... three of the four failed 2 s after their due time (within 150 ms)" \
    "$(jget "$T/waiting.json" '[1950000 <= r["latency_us"]["e2e_failed"]["p50"] < 2150000, r["latency_us"]["e2e_failed"]["count"]]')" \
    '[true,4]'

check "no sanitizer reports in any run" sh -c "! grep -E 'Sanitizer|runtime error:' '$T/all.out'"
done_testing
