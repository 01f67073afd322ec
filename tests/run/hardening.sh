#!/bin/bash
# `yangblast run` with credentials and rejected calls: a bearer token goes
# to gNMI servers as `authorization` metadata; a target URL with user-info
# is refused without printing its password (run and experiment); key logs
# are created 0600 and a group/world-accessible one is refused; a Subscribe
# the server rejects (UNAUTHENTICATED before our half-close) ends at once as
# an error with the server's status, in ONCE, POLL and STREAM mode; a
# corpus mixing protocols that need different codecs is refused before the
# run, naming each protocol and its count.
# Every run is bounded by `timeout 60`.
. "${YB_SRCDIR:-.}/tests/lib.sh"
. "$YB_SRCDIR/tests/peers/peer.sh"
unset YANGBLAST_PASSWORD YANGBLAST_TOKEN

# yb ARGS...: yangblast under `timeout 60`; output in $T/out, exit in $rc.
yb() {
    timeout 60 "$YB" "$@" >"$T/out" 2>&1
    rc=$?
}
stop_py() { [ -f "$T/py/pid" ] && peer_stop "$T/py"; return 0; }
at_exit stop_py

check "synth gnmi Set corpus" "$YB" synth acl --proto gnmi -n 5 -o "$T/set.ybc"
check "synth subscribe once" "$YB" synth acl --proto gnmi --op subscribe --mode once -n 3 \
    -o "$T/once.ybc"
check "synth subscribe poll" "$YB" synth acl --proto gnmi --op subscribe --mode poll --polls 2 \
    -n 3 -o "$T/poll.ybc"
check "synth subscribe stream" "$YB" synth acl --proto gnmi --op subscribe --mode stream \
    --sample-interval 100ms -n 3 -o "$T/stream.ybc"

# ---- bearer token on gNMI ----------------------------------------------------
TOKEN=tok-$$-Zq81
if GNMI_TEST_TOKEN=$TOKEN peer_start "$T/py" gnmi_server.py --require-token \
        --stats "$T/py/stats.json" --max-seconds 60; then
    PURL=grpc://127.0.0.1:$(peer_port "$T/py")
    YANGBLAST_TOKEN=$TOKEN yb run "$T/set.ybc" --target "$PURL" -q --json "$T/tok.json"
    is "YANGBLAST_TOKEN on gNMI: exit 0, 5 ok" \
        "$rc $(jget "$T/tok.json" 'r["summary"]["requests_ok"]')" "0 5"
    printf '%s\n' "$TOKEN" >"$T/token"
    yb run "$T/set.ybc" --target "$PURL" -q --token-file "$T/token" --json "$T/tokf.json"
    is "--token-file on gNMI: exit 0, 5 ok" \
        "$rc $(jget "$T/tokf.json" 'r["summary"]["requests_ok"]')" "0 5"
    YANGBLAST_TOKEN=not-$TOKEN yb run "$T/set.ybc" --target "$PURL" -q --json "$T/tokbad.json"
    is "a wrong token: exit 1, UNAUTHENTICATED counted" \
        "$rc $(jget "$T/tokbad.json" 'r["grpc_status"]')" '1 {"16":5}'
    peer_stop "$T/py"
    is "server: 10 RPCs carried 'authorization: Bearer TOKEN', 5 were refused" \
        "$(jget "$T/py/stats.json" '[r["bearer_ok"], r["unauthenticated"], r["rpcs_total"]]')" "[10,5,15]"
else
    not_ok "gnmi_server.py starts"
fi

YANGBLAST_TOKEN=$'tok\r\nX-Injected: 1' yb run "$T/set.ybc" --target grpc://127.0.0.1:1 -q
is "a token with CR/LF: exit 2 before the run" "$rc" 2
like "... saying why" "$(cat "$T/out")" 'YANGBLAST_TOKEN: the token contains a control character'

# ---- rejected Subscribe calls -------------------------------------------------
SOUT=$T/serve.out
YANGBLAST_SERVE_PASSWORD=right-pw yb_serve "$SOUT" --restconf 127.0.0.1:0 --gnmi 127.0.0.1:0 \
    --auth admin || { echo "Bail out! serve did not start"; exit 1; }
for m in once poll stream; do
    # --timeout 20s: a call left waiting for it would show as timeouts and
    # take 20 s; the outer `timeout 60` bounds a hang
    t0=$(date +%s)
    YANGBLAST_PASSWORD=wrong-pw yb run "$T/$m.ybc" --target "$GURL" --user admin -c 3 \
        --timeout 20s -q --json "$T/rej-$m.json"
    t1=$(date +%s)
    is "rejected $m Subscribe: exit 1; 3 started, 3 errors of class status, gRPC 16 each" \
        "$rc $(jget "$T/rej-$m.json" '[r["summary"]["requests_started"], r["summary"]["requests_error"], {k: v for k, v in r["errors"].items() if k != "reasons" and v}, r["grpc_status"]]')" \
        '1 [3,3,{"status":3},{"16":3}]'
    check "rejected $m Subscribe: ended well before --timeout ($((t1 - t0)) s)" test $((t1 - t0)) -lt 15
done
YANGBLAST_PASSWORD=wrong-pw yb run "$T/stream.ybc" --target "$GURL" --user admin \
    --subscriptions 2 -D 1s -q --json "$T/rej-sub.json"
is "rejected STREAM under --subscriptions -D: exit 1, UNAUTHENTICATED is the only status" \
    "$rc $(jget "$T/rej-sub.json" '[r["summary"]["requests_error"] > 2, list(r["grpc_status"]), r["errors"]["timeout"]]')" \
    '1 [true,["16"],0]'
YANGBLAST_PASSWORD=right-pw yb run "$T/stream.ybc" --target "$GURL" --user admin \
    --subscriptions 2 -D 1s -q --json "$T/acc-sub.json"
is "accepted STREAM under --subscriptions -D: exit 0, 2 ok" \
    "$rc $(jget "$T/acc-sub.json" '[r["summary"]["requests_ok"], r["summary"]["requests_error"]]')" '0 [2,0]'

# ---- user-info in the target URL ---------------------------------------------
SECRET=pw-$$-Xk4
for u in "https://admin:$SECRET@127.0.0.1:1" "grpc://admin:$SECRET@127.0.0.1:1/x" \
         "admin:$SECRET@127.0.0.1"; do
    yb run "$T/set.ybc" --target "$u" -q
    is "run --target with user-info ($(printf %s "$u" | sed "s/$SECRET/***/")): exit 2" "$rc" 2
    check "... the password is not printed" bash -c "! grep -q -- '$SECRET' '$T/out'"
    like "... the URL is shown masked, --user and YANGBLAST_PASSWORD named" "$(cat "$T/out")" \
        'admin:\*\*\*@127\.0\.0\.1.*--user.*YANGBLAST_PASSWORD'
done
yb experiment sessions --gnmi "grpc://admin:$SECRET@127.0.0.1:1" -n 2
is "experiment --gnmi with user-info: exit 2" "$rc" 2
check "... the password is not printed" bash -c "! grep -q -- '$SECRET' '$T/out'"
like "... the URL is shown masked" "$(cat "$T/out")" 'grpc://admin:\*\*\*@127\.0\.0\.1:1'

# ---- --keylog ------------------------------------------------------------------
yb_serve_stop
yb_serve "$T/serve2.out" --restconf 127.0.0.1:0 --gnmi off --self-signed ||
    { echo "Bail out! serve --self-signed did not start"; exit 1; }
check "synth restconf corpus" "$YB" synth acl --proto restconf -n 3 -o "$T/rc.ybc"
yb run "$T/rc.ybc" --target "$RURL" -k -q --keylog "$T/keys.log"
is "--keylog new file: exit 0" "$rc" 0
is "--keylog new file: created 0600" "$(stat -c %a "$T/keys.log")" 600
check "--keylog: secrets written" grep -q '^CLIENT_RANDOM \|_TRAFFIC_SECRET_0 ' "$T/keys.log"
yb run "$T/rc.ybc" --target "$RURL" -k -q --keylog "$T/keys.log"
is "--keylog existing 0600 file: appended, exit 0" "$rc" 0
: >"$T/open.log"
chmod 644 "$T/open.log"
yb run "$T/rc.ybc" --target "$RURL" -k -q --keylog "$T/open.log"
is "--keylog on a 0644 file: exit 2" "$rc" 2
like "... naming the file and the fix" "$(cat "$T/out")" "open\.log.*chmod 600"
is "... nothing written to it" "$(stat -c %s "$T/open.log")" 0

# ---- mixed-protocol corpora ----------------------------------------------------
check "synth 2 restconf + 3 gnmi" bash -c "'$YB' synth acl --proto restconf -n 2 -o '$T/r2.ybc' &&
    '$YB' synth acl --proto gnmi -n 3 -o '$T/g3.ybc'"
("$YB" corpus cat "$T/r2.ybc"; "$YB" corpus cat "$T/g3.ybc") >"$T/mixed.jsonl"
check "corpus import of a mixed JSON-lines file" "$YB" corpus import "$T/mixed.jsonl" -o "$T/mixed.ybc"
for tg in "$RURL" "grpc://127.0.0.1:1"; do
    yb run "$T/mixed.ybc" --target "$tg" -q --json "$T/mixed.json"
    is "run a mixed corpus against $tg: exit 2, no report" "$rc $(test -e "$T/mixed.json"; echo $?)" "2 1"
    like "... naming the protocols and their counts" "$(cat "$T/out")" 'mixes protocols.*restconf 2, gnmi 3'
done
yb experiment sessions --gnmi grpc://127.0.0.1:1 --gnmi-corpus "$T/mixed.ybc" -n 2
is "experiment with a mixed --gnmi-corpus: exit 2" "$rc" 2
like "... naming the protocols and their counts" "$(cat "$T/out")" 'mixes protocols.*restconf 2, gnmi 3'
# the split the message suggests works
"$YB" corpus cat "$T/mixed.ybc" | jq -c 'select(.protocol=="restconf")' |
    "$YB" corpus import -o "$T/ronly.ybc" >/dev/null 2>&1
yb run "$T/ronly.ybc" --target "$RURL" -k -q --json "$T/ronly.json"
is "the suggested split: its restconf part runs, 2 started, 2 completed, 2 ok" \
    "$rc $(jget "$T/ronly.json" '[r["summary"]["requests_started"], r["summary"]["requests_completed"], r["summary"]["requests_ok"]]')" \
    "0 [2,2,2]"
# a summary (the frame that ends the file) that claims 5 restconf records
# for the mixed corpus: trusted before the run, so the run stops at the
# first gnmi record, naming it; reading to the end finds the lie
"$YB" synth acl --proto restconf -n 5 -o "$T/r5.ybc"
sumlen() { echo $((16 + $(tail -c 8 "$1" | od -An -tu4 -N4))); }
head -c $(($(stat -c %s "$T/mixed.ybc") - $(sumlen "$T/mixed.ybc"))) "$T/mixed.ybc" >"$T/lie.ybc"
tail -c "$(sumlen "$T/r5.ybc")" "$T/r5.ybc" >>"$T/lie.ybc"
yb run "$T/lie.ybc" --target "$RURL" -k -q --json "$T/lie.json"
is "a lying summary: the run stops, exit 2, no report" "$rc $(test -e "$T/lie.json"; echo $?)" "2 1"
like "... naming the first record the codec cannot send" "$(cat "$T/out")" 'lie\.ybc: record 2: a gnmi record'
yb corpus info "$T/lie.ybc"
like "... corpus info: exit 2, the summary does not match" "$rc $(cat "$T/out")" \
    '^2 .*lie\.ybc: record 5: corrupt corpus \(the summary at its end does not match'
# ---- open files: room for every session, or a clear refusal before any traffic ----
(ulimit -Sn 200 -Hn 200; exec timeout 60 "$YB" run "$T/ronly.ybc" --target http://127.0.0.1:1 \
    -c 500 -n 1 -q) >"$T/out" 2>&1
is "-c 500 with at most 200 open files: exit 2" "$?" 2
like "... naming the sessions, the limit and the fix" "$(cat "$T/out")" \
    "500 sessions need about [0-9]+ open files, but RLIMIT_NOFILE is 200 \(hard limit 200\): raise the hard limit"
(ulimit -Sn 64; exec timeout 60 "$YB" run "$T/ronly.ybc" --target "$RURL" -k -c 100 -n 100 -q \
    --json "$T/nofile.json") >"$T/out" 2>&1
is "-c 100 with a soft limit of 64 below the hard one: raised, 100 ok" \
    "$? $(jget "$T/nofile.json" 'r["summary"]["requests_ok"]')" "0 100"
done_testing
