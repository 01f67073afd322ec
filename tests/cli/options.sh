#!/bin/bash
# One number parser everywhere (durations with units and compounds, sizes
# with k/M/G, rates with k), --tls-min/--tls-max exactly as --help says,
# and option errors prefixed "yangblast COMMAND:" saying what is accepted.
. "$YB_SRCDIR/tests/lib.sh"

run() { "$@" >"$T/stdout" 2>"$T/stderr"; RC=$?; ERR=$(cat "$T/stderr"); }
# refused DESC PATTERN CMD...: exit 2, message prefixed with the command,
# matching PATTERN.
refused() {
    local d=$1 pat=$2; shift 2
    run "$@"
    is "$d: exit 2" "$RC" 2
    like "$d: 'yangblast $2:' prefix and reason" "$ERR" "^yangblast $2: .*$pat"
}

yb_serve "$T/serve.out" --restconf 127.0.0.1:0 --gnmi off --self-signed \
    --write-cert "$T/ca.pem" --max-body 64k --idle-timeout 1m30s --session-cost 0.5ms ||
    { echo "Bail out! serve did not start"; exit 1; }
HURL=${RURL/https:/http:}
"$YB" synth acl -n 5 -r 1 -o "$T/c.ybc" || { echo "Bail out! synth"; exit 1; }

# Compound durations, k rates and k sizes are taken by run.
run "$YB" run "$T/c.ybc" --target "$RURL" --cacert "$T/ca.pem" -D 1s500ms --rate 0.02k \
    --timeout 1m30s --max-body 1k -q --json "$T/r.json"
is "run -D 1s500ms --rate 0.02k --timeout 1m30s --max-body 1k: exit 0" "$RC" 0
is "--rate 0.02k is 20/s" "$(jget "$T/r.json" "r['run']['rate_target_per_s']")" 20.0
check "-D 1s500ms ran about 1.5 s" /usr/bin/python3 -c "import sys; d=$(jget "$T/r.json" "r['summary']['duration_s']"); sys.exit(not 1.3 <= d <= 2.5)"

# What each number option refuses, and that the message says what it wants.
refused "run -D 1m30" "duration.*1m30s" "$YB" run x --target "$RURL" -D 1m30
refused "run -D 0" "above 0" "$YB" run x --target "$RURL" -D 0
refused "run --timeout 1e3" "duration" "$YB" run x --target "$RURL" --timeout 1e3
refused "run --rate 2M" "2k" "$YB" run x --target "$RURL" --rate 2M
refused "run --rate ramp:1k..x/2s" "ramp:FROM..TO/DURATION" "$YB" run x --target "$RURL" --rate ramp:1k..x/2s
refused "run --max-body 1T" "k, M or G" "$YB" run x --target "$RURL" --max-body 1T
refused "run --max-body 5G" "at most 4G" "$YB" run x --target "$RURL" --max-body 5G
refused "run --spin 1s" "up to 10ms" "$YB" run x --target "$RURL" --rate 10 --spin 1s
refused "run -c 0" "integer in 1..100000" "$YB" run x --target "$RURL" -c 0
refused "run --speed abc" "positive number" "$YB" run x --target "$RURL" --timing original --speed abc
refused "run unknown option" "unknown option '--frob'" "$YB" run --frob
refused "run missing value" "option '--timeout' needs a value" "$YB" run x --timeout
refused "experiment --timeout 10x" "duration" "$YB" experiment sessions --restconf "$HURL" --timeout 10x
refused "experiment --max-body 2q" "size" "$YB" experiment sessions --restconf "$HURL" --max-body 2q
refused "serve --idle-timeout 5 s" "duration" "$YB" serve --idle-timeout '5 s'
refused "serve --max-body 16X" "k, M or G" "$YB" serve --max-body 16X
refused "serve --service-time fixed:1q" "fixed:DUR" "$YB" serve --service-time fixed:1q
refused "capture --max-flow-buffer 3k" "from 4k" "$YB" capture -r x -o y --max-flow-buffer 3k
refused "synth --sample-interval 1m30" "duration" "$YB" synth acl --op subscribe --mode stream --proto gnmi --sample-interval 1m30 -o "$T/s.ybc"
refused "synth unknown option" "unknown option" "$YB" synth acl --frob -o "$T/s.ybc"

# serve took --max-body 64k and --idle-timeout 1m30s (it started); synth takes
# a compound --sample-interval.
run "$YB" synth acl --proto gnmi --op subscribe --mode stream --sample-interval 1m30s -n 1 -o "$T/s.ybc"
is "synth --sample-interval 1m30s: exit 0" "$RC" 0
run "$YB" serve --max-body 65537 --help
is "serve takes plain byte counts too" "$RC" 0

# --tls-min/--tls-max: exactly 1.2 and 1.3, as --help says.
run "$YB" run --help
like "run --help: --tls-min takes 1.2 or 1.3" "$(cat "$T/stdout")" "--tls-min V +lowest TLS version: 1.2 or 1.3"
for v in 1.2 1.3; do
    run "$YB" run "$T/c.ybc" --target "$RURL" --cacert "$T/ca.pem" --tls-min "$v" --tls-max "$v" -n 2 -q
    is "--tls-min $v --tls-max $v: exit 0" "$RC" 0
done
for v in 1.0 1.1 1 TLSv1.2 1.4 "" " 1.2"; do
    refused "--tls-min '$v'" "expected 1.2 or 1.3" "$YB" run "$T/c.ybc" --target "$RURL" --tls-min "$v"
    refused "--tls-max '$v'" "expected 1.2 or 1.3" "$YB" run "$T/c.ybc" --target "$RURL" --tls-max "$v"
done
refused "experiment --tls-max 1.1" "expected 1.2 or 1.3" "$YB" experiment sessions --restconf "$RURL" --tls-max 1.1
refused "--tls-min above --tls-max" "above --tls-max" "$YB" run "$T/c.ybc" --target "$RURL" --tls-min 1.3 --tls-max 1.2

done_testing
