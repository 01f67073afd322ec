#!/bin/bash
# Nothing silently ignored: every option combination that would be ignored
# is refused with exit 2 and a message saying why, before any request; a
# corpus the target's scheme cannot carry and a corpus with redacted
# credentials replayed without credentials are refused; the redaction
# placeholder never goes on the wire.
. "$YB_SRCDIR/tests/lib.sh"

unset YANGBLAST_TOKEN YANGBLAST_PASSWORD
run() { "$@" >"$T/stdout" 2>"$T/stderr"; RC=$?; ERR=$(cat "$T/stderr"); }
# refused DESC PATTERN CMD...: exit 2, "yangblast CMD:" and PATTERN in the message.
refused() {
    local d=$1 pat=$2; shift 2
    run "$@"
    is "$d: exit 2" "$RC" 2
    like "$d: says why" "$ERR" "^yangblast $2: .*$pat"
}

yb_serve "$T/serve.out" --restconf 127.0.0.1:0 --gnmi 127.0.0.1:0 --stats "$T/stats.json" ||
    { echo "Bail out! serve did not start"; exit 1; }
"$YB" synth acl -n 3 -r 1 -o "$T/rc.ybc" && "$YB" synth acl --proto gnmi -n 3 -r 1 -o "$T/gn.ybc" ||
    { echo "Bail out! synth"; exit 1; }
GRPC=$GURL HTTP=$RURL

# run
refused "a second --target for the same records" "two --target URLs for the same records" \
    "$YB" run "$T/rc.ybc" --target "$HTTP" --target "$HTTP"
refused "a second --target no record goes to" "--target $GRPC would receive no record" \
    "$YB" run "$T/rc.ybc" --target "$HTTP" --target "$GRPC"
refused "a path in --target" "has a path.*every record carries its own path" \
    "$YB" run "$T/rc.ybc" --target "$HTTP/restconf/data"
refused "-m with an HTTP/1.1 corpus" "-m 8 sets HTTP/2 streams.*restconf corpus" \
    "$YB" run "$T/rc.ybc" --target "$HTTP" -m 8
refused "a RESTCONF corpus against grpc://" "rc.ybc is a restconf corpus.*'grpc://.*gRPC over HTTP/2 only" \
    "$YB" run "$T/rc.ybc" --target "$GRPC"
refused "a RESTCONF corpus against grpcs://" "restconf corpus.*'grpcs://" \
    "$YB" run "$T/rc.ybc" --target "grpcs://127.0.0.1:1" -k
refused "-c with --sessions original in an open loop" "-c does not apply" \
    "$YB" run "$T/rc.ybc" --target "$HTTP" --sessions original --timing original -c 4
refused "-m with --sessions per-request" "-m does not apply with --sessions per-request" \
    "$YB" run "$T/gn.ybc" --target "$GRPC" --sessions per-request -m 4
refused "--spin without an open loop" "--spin applies to the open loop only" \
    "$YB" run "$T/rc.ybc" --target "$HTTP" --spin 100us
refused "--max-backlog without an open loop" "--max-backlog applies to the open loop only" \
    "$YB" run "$T/rc.ybc" --target "$HTTP" --max-backlog 5
refused "--speed without --timing original" "--speed goes with --timing original" \
    "$YB" run "$T/rc.ybc" --target "$HTTP" --speed 2
for o in "--cacert x" "-k" "--tls-min 1.2" "--tls-max 1.3" "--ciphers HIGH" "--keylog x" "--tls-resume"; do
    # shellcheck disable=SC2086
    refused "$o with http://" "${o%% *} applies to TLS targets" "$YB" run "$T/rc.ybc" --target "$HTTP" $o
done
refused "--cert/--key with grpc://" "--cert applies to TLS targets" \
    "$YB" run "$T/gn.ybc" --target "$GRPC" --cert a --key b
refused "--cacert with -k" "--cacert does not apply with -k" \
    "$YB" run "$T/rc.ybc" --target "https://127.0.0.1:1" -k --cacert x
refused "--ciphers with --tls-min 1.3" "--ciphers sets TLS 1.2 cipher suites" \
    "$YB" run "$T/rc.ybc" --target "https://127.0.0.1:1" --tls-min 1.3 --ciphers HIGH
refused "experiment --cacert with -k" "--cacert does not apply with -k" \
    "$YB" experiment sessions --restconf "https://127.0.0.1:1" -k --cacert x
refused "--no-credentials with --user" "--no-credentials excludes" \
    "$YB" run "$T/rc.ybc" --target "$HTTP" --no-credentials --user a
refused "--password-file without --user" "--password-file needs --user" \
    "$YB" run "$T/rc.ybc" --target "$HTTP" --password-file x
refused "--user with --token-file" "exclude each other" \
    "$YB" run "$T/rc.ybc" --target "$HTTP" --user a --token-file x
refused "--subscriptions with a Set corpus" "--subscriptions holds gNMI Subscribe calls open, but .* is a restconf corpus" \
    "$YB" run "$T/rc.ybc" --target "$HTTP" --subscriptions 2 -D 1s
refused "--no-credentials without redactions" "--no-credentials applies to a corpus whose credentials were redacted" \
    "$YB" run "$T/rc.ybc" --target "$HTTP" --no-credentials

refused "a second --target (URLs not echoed)" "user-info in the URL is not accepted" \
    "$YB" run "$T/rc.ybc" --target "http://u:SECRETPW@127.0.0.1:1" --target "$HTTP"
refused "experiment -k, user-info in the URL" "-k applies to TLS targets" \
    "$YB" experiment sessions --restconf "http://u:SECRETPW@127.0.0.1:1" -k
is "no message echoes a password given in a URL" "$(grep -c SECRETPW "$T/stderr")" 0

# synth
refused "synth --proto gnmi --method POST" "--method is the RESTCONF create method.*--proto gnmi" \
    "$YB" synth acl --proto gnmi --method POST -o "$T/x.ybc"
refused "synth --op delete --method PUT" "--method.*--op delete" \
    "$YB" synth acl --op delete --method PUT -o "$T/x.ybc"
refused "synth --mode without --op subscribe" "--mode applies to --op subscribe only" \
    "$YB" synth acl --proto gnmi --mode stream -o "$T/x.ybc"
refused "synth --sample-interval without --mode stream" "--sample-interval applies to --op subscribe --mode stream" \
    "$YB" synth acl --proto gnmi --op subscribe --mode poll --sample-interval 1s -o "$T/x.ybc"
refused "synth --polls without --mode poll" "--polls applies to --op subscribe --mode poll" \
    "$YB" synth acl --proto gnmi --op subscribe --polls 2 -o "$T/x.ybc"
refused "synth --rules with --op get" "--rules sets the rules' content" \
    "$YB" synth acl --op get --rules 3 -o "$T/x.ybc"
refused "synth --seed with --op delete" "--seed sets the rules' content" \
    "$YB" synth acl --op delete --seed 3 -o "$T/x.ybc"
check "no synth output was written" test ! -e "$T/x.ybc"

# experiment
refused "experiment --gnmi-corpus without --gnmi" "--gnmi-corpus needs --gnmi URL" \
    "$YB" experiment sessions --restconf "$HTTP" --gnmi-corpus "$T/gn.ybc"
refused "experiment -m with RESTCONF only" "-m sets HTTP/2 streams" \
    "$YB" experiment sessions --restconf "$HTTP" -m 4
refused "experiment -k without a TLS target" "-k applies to TLS targets" \
    "$YB" experiment sessions --restconf "$HTTP" -k
refused "experiment --tls-resume without a TLS target" "--tls-resume needs a TLS target" \
    "$YB" experiment sessions --restconf "$HTTP" --tls-resume
refused "experiment: a RESTCONF corpus for the gNMI target" "restconf corpus.*gRPC over HTTP/2 only" \
    "$YB" experiment sessions --gnmi "$GRPC" --gnmi-corpus "$T/rc.ybc"

# serve
refused "serve --sink --auth-cost" "--auth-cost does not apply with --sink" \
    "$YB" serve --sink --auth admin --auth-cost 1ms
refused "serve --sink --session-cost" "--session-cost does not apply with --sink" \
    "$YB" serve --sink --session-cost 1ms
refused "serve --auth-cost without --auth" "--auth-cost needs --auth" "$YB" serve --auth-cost 5ms
refused "serve --no-resumption without TLS" "--no-resumption needs TLS" "$YB" serve --no-resumption
refused "serve --write-cert without --self-signed" "--write-cert needs --self-signed" \
    "$YB" serve --write-cert x.pem
refused "serve --auth-password-file without --auth" "needs --auth USER" \
    "$YB" serve --auth-password-file x

# experiment --json -: the JSON on stdout, the tables on stderr; -q quiets progress
"$YB" experiment sessions --restconf "$HTTP" -n 2 -q --json - 2>"$T/exp.err" > "$T/exp.json"
is "experiment --json -: valid JSON on stdout" "$(jget "$T/exp.json" "r['schema']")" "yangblast-experiment/1"
like "experiment --json -: the tables on stderr" "$(cat "$T/exp.err")" "single persistent session"
is "experiment -q: no progress lines" "$(grep -c '^experiment:' "$T/exp.err")" 0

# A corpus with redacted credentials: refused without credentials, naming them.
{
    echo '{"yangblast_corpus":{"producer":"t","source":"t","redactions":["authorization","cookie"]}}'
    echo '{"protocol":"restconf","method":"GET","path":"/restconf/data/x","headers":[{"name":"Authorization","value":"<redacted>"},{"name":"Cookie","value":"<redacted>"},{"name":"X-Keep","value":"1"}]}'
} > "$T/red.jsonl"
"$YB" corpus import "$T/red.jsonl" -o "$T/red.ybc" || echo "Bail out! import"
refused "redacted credentials, none given" "red.ybc: its credentials were redacted [(]authorization, cookie[)].*--no-credentials" \
    "$YB" run "$T/red.ybc" --target "$HTTP"

# No refused run reached the server.
yb_serve_stop
is "serve saw no connection from any refused run (3: the one experiment that ran)" "$(jget "$T/stats.json" "r['connections']['restconf'] + r['connections']['gnmi']")" 3

# The placeholder never goes on the wire: a peer that logs request headers.
PORT=$(free_port)
/usr/bin/python3 - "$PORT" "$T/headers.log" <<'PY' &
import http.server, sys
log = open(sys.argv[2], "a", buffering=1)
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        for k, v in self.headers.items():
            log.write(f"{k}: {v}\n")
        log.write("--\n")
        self.send_response(204); self.send_header("Content-Length", "0"); self.end_headers()
    def log_message(self, *a): pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
PEER=$!
stop_peer() { kill "$PEER" 2>/dev/null; wait "$PEER" 2>/dev/null; }
at_exit stop_peer
wait_port "$PORT" || echo "Bail out! peer"
run "$YB" run "$T/red.ybc" --target "http://127.0.0.1:$PORT" --no-credentials -n 2 -q
is "--no-credentials: exit 0" "$RC" 0
run env YANGBLAST_PASSWORD=pw "$YB" run "$T/red.ybc" --target "http://127.0.0.1:$PORT" --user alice -n 2 -q
is "--user: exit 0" "$RC" 0
is "the peer saw 4 requests" "$(grep -c '^--$' "$T/headers.log")" 4
is "the placeholder never reached the peer" "$(grep -ci 'redacted' "$T/headers.log")" 0
is "--user sent its own Authorization (2 requests)" "$(grep -c '^Authorization: Basic ' "$T/headers.log")" 2
is "other recorded headers are kept" "$(grep -c '^X-Keep: 1' "$T/headers.log")" 4

done_testing
