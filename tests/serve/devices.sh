#!/bin/bash
# yangblast serve --devices N: a fleet in one process.  Every device has
# its own consecutive ports, its own datastore (a PATCH on sw2 is seen on
# sw2 over gNMI and on no other device), its own workers and queue, and
# its own statistics (what `yangblast run` sent to each device is counted
# on exactly that device).  --write-inventory writes a YAML inventory of
# the fleet that names the secret only by reference.  Set-up errors
# (bounds, port ranges, descriptor limits) exit 2 before anything listens.
. "${YB_SRCDIR:-.}/tests/serve/common.sh"
A=/restconf/data/openconfig-acl:acl
SECRET=fleet-s3cret
export YANGBLAST_SERVE_PASSWORD=$SECRET YANGBLAST_PASSWORD=$SECRET

# start_fleet ARGS...: starts `yangblast serve ARGS`, waits for its
# "serve: N devices ready" line; sets SPID and SOUT.  Returns 1 when it
# did not come up.
start_fleet() {
    SOUT=$(mktemp "$T/fleet.XXXXXX.out") || return 1
    "$YB" serve "$@" >"$SOUT" 2>&1 &
    SPID=$!
    _serve_pids="$_serve_pids $SPID"
    local n=200
    [ -z "${YB_WRAP:-}" ] || n=2400 # valgrind: TLS set-up alone takes seconds
    while [ $n -gt 0 ] && ! grep -q '^serve: [0-9]* devices ready' "$SOUT"; do
        kill -0 "$SPID" 2>/dev/null || break
        sleep 0.05; n=$((n - 1))
    done
    grep -q '^serve: [0-9]* devices ready' "$SOUT"
}
# url NAME PROTO: the URL the ready lines give device NAME for restconf|gnmi.
url() { awk -v d="$1" -v p="$2" '$1 == "serve:" && $2 == d { for (i = 3; i < NF; i++) if ($i == p) print $(i + 1) }' "$SOUT"; }
hostport() { printf '%s\n' "$1" | sed 's#^[a-z]*://##'; }

# ---- a TLS + auth fleet of 3 on consecutive ports ------------------------------
# Six consecutive ports from a random base; retried when one is taken.
up=""
for try in 1 2 3 4 5; do
    RB=$((20000 + (RANDOM % 2000) * 10)); GB=$((RB + 5))
    if start_fleet --devices 3 --restconf 127.0.0.1:$RB --gnmi 127.0.0.1:$GB --self-signed \
        --write-cert "$T/cert.pem" --auth admin --workers 2 --write-inventory "$T/inv.yaml" \
        --stats "$T/stats.json"; then up=1; break; fi
    kill -KILL "$SPID" 2>/dev/null
done
[ -n "$up" ] || { cat "$SOUT"; echo "Bail out! serve --devices 3 did not start"; exit 1; }
ok "serve --devices 3 --self-signed --auth: ready"
is "one ready line per device, then the summary line" "$(grep -c '^serve:' "$SOUT")" 4
is "sw1 on the given ports" "$(url sw1 restconf) $(url sw1 gnmi)" \
   "https://127.0.0.1:$RB grpcs://127.0.0.1:$GB"
is "sw2 and sw3 on the next ports" "$(url sw2 restconf) $(url sw3 restconf) $(url sw2 gnmi) $(url sw3 gnmi)" \
   "https://127.0.0.1:$((RB + 1)) https://127.0.0.1:$((RB + 2)) grpcs://127.0.0.1:$((GB + 1)) grpcs://127.0.0.1:$((GB + 2))"
like "the last line names the inventory" "$(tail -1 "$SOUT")" "^serve: 3 devices ready; inventory $T/inv.yaml\$"

# ---- the inventory --------------------------------------------------------------
inv() {
    "$PY" - "$T/inv.yaml" "$1" <<'EOF' 2>&1
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
print(eval(sys.argv[2], {"d": d}))
EOF
}
is "inventory parses as YAML: 3 targets sw1..sw3" "$(inv '[t["name"] for t in d["targets"]]')" \
   "['sw1', 'sw2', 'sw3']"
is "each target's URLs are the device's" \
   "$(inv '" ".join(t["restconf"] + " " + t["gnmi"] for t in d["targets"])')" \
   "$(for s in sw1 sw2 sw3; do printf '%s %s ' "$(url $s restconf)" "$(url $s gnmi)"; done | sed 's/ $//')"
is "defaults: user admin, password by reference (YANGBLAST_PASSWORD), CA = the written cert" \
   "$(inv '(d["defaults"]["user"], d["defaults"]["password-env"], d["defaults"]["tls"]["ca"])')" \
   "('admin', 'YANGBLAST_PASSWORD', '$T/cert.pem')"
is "only the native keys" "$(inv 'sorted(d) + sorted(d["defaults"]) + sorted(d["targets"][0])')" \
   "['defaults', 'targets', 'password-env', 'tls', 'user', 'gnmi', 'name', 'restconf']"
check "the inventory holds no password" sh -c "! grep -q -e '$SECRET' -e 'password:' '$T/inv.yaml'"
is "inventory mode 0644 (no secret in it)" "$(stat -c %a "$T/inv.yaml")" 644

# ---- separate datastores ----------------------------------------------------------
CURL="curl -s --cacert $T/cert.pem -u admin:$SECRET"
D2='{"openconfig-acl:acl-sets":{"acl-set":[{"name":"ONLY_SW2","type":"ACL_IPV4"}]}}'
is "PATCH on sw2's RESTCONF: 204" \
   "$($CURL -o /dev/null -w '%{http_code}' -X PATCH -H "$CT" -d "$D2" "$(url sw2 restconf)$A/acl-sets")" 204
GPATH='/acl/acl-sets/acl-set[name=ONLY_SW2][type=ACL_IPV4]/name'
g() { "$PY" "$GC" --target "$(hostport "$(url "$1" gnmi)")" --tls "$T/cert.pem" --user admin \
        --password "$SECRET" --timeout 10 get "$GPATH" 2>&1; }
like "sw2's gNMI Get reads it back" "$(g sw2)" '"value": *"ONLY_SW2"'
like "sw1 does not have it (gNMI NOT_FOUND)" "$(g sw1)" 'NOT_FOUND'
like "sw3 does not have it (gNMI NOT_FOUND)" "$(g sw3)" 'NOT_FOUND'
is "nor over RESTCONF on sw1 and sw3 (404 404)" \
   "$($CURL -o /dev/null -w '%{http_code}' "$(url sw1 restconf)$A/acl-sets/acl-set=ONLY_SW2,ACL_IPV4") $($CURL -o /dev/null -w '%{http_code}' "$(url sw3 restconf)$A/acl-sets/acl-set=ONLY_SW2,ACL_IPV4")" \
   "404 404"
# So far: sw1 restconf 1 gnmi 1; sw2 restconf 1 gnmi 1; sw3 restconf 1 gnmi 1.

# ---- yangblast run against each device: counted on that device only ------------------
"$YB" synth acl --proto restconf -n 5 -r 1 --name-prefix F1 -o "$T/r5.ybc" >/dev/null
"$YB" synth acl --proto gnmi -n 7 -r 1 --name-prefix F2 -o "$T/g7.ybc" >/dev/null
"$YB" synth acl --proto restconf -n 4 -r 1 --name-prefix F3 -o "$T/r4.ybc" >/dev/null
runok() { # CORPUS URL NAME: prints requests_ok of a run
    timeout 60 "$YB" run "$1" --target "$2" --cacert "$T/cert.pem" --user admin -q -c 2 \
        --json "$T/$3.json" >/dev/null 2>"$T/$3.err"
    jget "$T/$3.json" "r['summary']['requests_ok']"
}
is "run: 5 RESTCONF requests to sw1 succeed" "$(runok "$T/r5.ybc" "$(url sw1 restconf)" run1)" 5
is "run: 7 gNMI requests to sw2 succeed" "$(runok "$T/g7.ybc" "$(url sw2 gnmi)" run2)" 7
is "run: 4 RESTCONF requests to sw3 succeed" "$(runok "$T/r4.ybc" "$(url sw3 restconf)" run3)" 4
check "serve exits 0 on SIGTERM" stop_serve

dev() { jget "$T/stats.json" "[(x['name'], x['requests']['restconf']['total'], x['requests']['gnmi']['total']) for x in r['devices']]"; }
is "--stats per device: exactly the requests each device was sent" "$(dev)" \
   '[["sw1",6,1],["sw2",1,8],["sw3",5,1]]'
is "--stats totals are their sums" \
   "$(jget "$T/stats.json" "[r['requests']['restconf']['total'], r['requests']['gnmi']['total'], r['requests']['restconf']['PATCH'], r['requests']['gnmi']['Set']]")" \
   '[12,10,10,7]'
is "--stats devices carry their URLs" "$(jget "$T/stats.json" "[x['restconf'] for x in r['devices']]")" \
   "[\"$(url sw1 restconf)\",\"$(url sw2 restconf)\",\"$(url sw3 restconf)\"]"
like "summary: totals in the single-device shape" "$(cat "$SOUT")" \
   'requests: restconf 12 \(GET 2 POST 0 PUT 0 PATCH 10 DELETE 0 other 0\); gnmi 10 \(Capabilities 0 Get 3 Set 7 '
like "summary: one line per device" "$(grep '^sw[0-9]*:' "$SOUT" | cut -d';' -f1-2 | tr '\n' '|')" \
   '^sw1: connections restconf [0-9]+ gnmi 1 .*; requests restconf 6 gnmi 1\|sw2: .*; requests restconf 1 gnmi 8\|sw3: .*; requests restconf 5 gnmi 1\|$'

# ---- the written inventory drives one run against the whole fleet -------------------------
check "fleet of 3 (TLS, auth) for run --targets" start_fleet --devices 3 --restconf 127.0.0.1:0 \
    --gnmi 127.0.0.1:0 --self-signed --write-cert "$T/fc.pem" --auth admin \
    --write-inventory "$T/fleet.yaml" --stats "$T/fleet.json"
"$YB" synth acl --proto restconf -n 6 -r 1 --name-prefix FO -o "$T/r6.ybc" >/dev/null
timeout 60 "$YB" run "$T/r6.ybc" --targets "$T/fleet.yaml" --fan-out -q --json "$T/fo.json" \
    >/dev/null 2>"$T/fo.err"
is "run --targets FILE --fan-out with the written inventory: exit 0" "$?" 0
is "18 requests ok (6 to each device)" "$(jget "$T/fo.json" "r['summary']['requests_ok']")" 18
check "serve exits 0" stop_serve
is "each device served exactly its 6" \
   "$(jget "$T/fleet.json" "[(x['name'], x['requests']['restconf']['PATCH'], x['auth_failures']) for x in r['devices']]")" \
   '[["sw1",6,0],["sw2",6,0],["sw3",6,0]]'

# ---- per-device workers: one device's queue does not hold another's requests ---------
# One worker each and 100 ms per request: 8 requests 4 at a time queue on
# sw1; sw2's one-at-a-time requests, sent meanwhile, never wait for a worker
# (a request passes through the queue on its way to a free worker, so a
# device that never made one wait shows a maximum depth of 1).
check "fleet of 2, --workers 1 --service-time fixed:100ms (ports any)" \
    start_fleet --devices 2 --restconf 127.0.0.1:0 --gnmi 127.0.0.1:0 --workers 1 \
    --service-time fixed:100ms --stats "$T/q.json"
"$YB" synth acl --proto restconf -n 8 --op get -o "$T/get8.ybc" >/dev/null
"$YB" synth acl --proto restconf -n 4 --op get -o "$T/get4.ybc" >/dev/null
timeout 60 "$YB" run "$T/get8.ybc" --target "$(url sw1 restconf)" -q -c 4 >/dev/null 2>&1 &
R1=$!
timeout 60 "$YB" run "$T/get4.ybc" --target "$(url sw2 restconf)" -q -c 1 >/dev/null 2>&1
wait $R1
check "serve exits 0" stop_serve
is "queue depth: sw1 queued behind its one worker (max >= 2), sw2 never did (max 1)" \
   "$(jget "$T/q.json" "[x['requests']['restconf']['total'] for x in r['devices']] + [r['devices'][0]['queue_depth']['max'] >= 2, r['devices'][1]['queue_depth']['max']]")" \
   '[8,4,true,1]'

# ---- plain fleet: http/grpc URLs, an inventory without defaults -------------------------
check "plain fleet of 2 with an inventory" start_fleet --devices 2 --restconf 127.0.0.1:0 \
    --gnmi off --write-inventory "$T/plain.yaml"
is "no defaults, RESTCONF only, http" \
   "$("$PY" -c 'import sys, yaml; d = yaml.safe_load(open(sys.argv[1])); print(sorted(d), [sorted(t) for t in d["targets"]], d["targets"][1]["restconf"].split(":")[0])' "$T/plain.yaml")" \
   "['targets'] [['name', 'restconf'], ['name', 'restconf']] http"
is "ready lines say gnmi off" "$(url sw2 gnmi)" off
stop_serve >/dev/null

# ---- --device-addresses: one loopback address per device ----------------------------------
P=$(free_port)
check "--device-addresses 127.0.1.1 --devices 3" start_fleet --devices 3 \
    --device-addresses 127.0.1.1 --restconf :$P --gnmi off --self-signed \
    --write-cert "$T/c2.pem" --write-inventory "$T/addr.yaml"
is "device k on 127.0.1.k, all on port $P" "$(url sw1 restconf) $(url sw3 restconf)" \
   "https://127.0.1.1:$P https://127.0.1.3:$P"
is "sw3 answers on its address (verified as localhost)" \
   "$(curl -s -o /dev/null -w '%{http_code}' --cacert "$T/c2.pem" --resolve "localhost:$P:127.0.1.3" "https://localhost:$P$A")" 200
is "the inventory verifies the certificate as localhost" \
   "$("$PY" -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["defaults"]["tls"]["server-name"])' "$T/addr.yaml")" localhost
stop_serve >/dev/null

# ---- hostile names stay one YAML value ---------------------------------------------------
U=$'ad"m\\in: #x\ty'
check "an --auth user with quotes, a backslash, ': ', '#' and a tab" start_fleet --devices 2 \
    --restconf 127.0.0.1:0 --gnmi off --auth "$U" --write-inventory "$T/odd.yaml"
stop_serve >/dev/null
is "the inventory reads back the exact user name" \
   "$("$PY" -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["defaults"]["user"] == sys.argv[2])' "$T/odd.yaml" "$U")" True
like "a user name that is not UTF-8: exit 2, no inventory" \
   "$("$YB" serve --devices 2 --restconf :0 --gnmi off --auth $'\xff' --write-inventory "$T/bad.yaml" 2>&1 >/dev/null | tr '\n' ' '; echo "rc=${PIPESTATUS[0]} $(test -e "$T/bad.yaml" && echo written)")" \
   'the --auth user name is not UTF-8 text.*rc=2 $'

# ---- one device: as it always was ---------------------------------------------------------
check "serve without --devices" start_serve --stats "$T/one.json" --write-inventory "$T/one.yaml"
is "the single ready line is unchanged" "$(grep -c '^serve:' "$SOUT") $(grep '^serve:' "$SOUT" | sed 's/:[0-9][0-9]*/:P/g')" \
   "1 serve: restconf http://127.0.0.1:P gnmi grpc://127.0.0.1:P"
stop_serve >/dev/null
is "single-device --stats has no devices list" "$(jget "$T/one.json" "'devices' in r")" false
is "its inventory: one target sw1" \
   "$("$PY" -c 'import sys, yaml; print([t["name"] for t in yaml.safe_load(open(sys.argv[1]))["targets"]])' "$T/one.yaml")" \
   "['sw1']"

# ---- set-up errors: exit 2 with a message, nothing left listening ---------------------------
err() { "$YB" serve "$@" 2>&1 >/dev/null | tr '\n' ' '; echo "rc=${PIPESTATUS[0]}"; }
like "--devices 0 refused" "$(err --devices 0)" '--devices must be an integer in 1..4096.*rc=2'
like "--devices 4097 refused" "$(err --devices 4097)" '--devices must be an integer in 1..4096.*rc=2'
like "ports past 65535 refused" "$(err --devices 3 --restconf :65534 --gnmi off)" \
   '3 devices need ports 65534..65536, past 65535.*rc=2'
like "overlapping port ranges refused" "$(err --devices 3 --restconf :30000 --gnmi :30002)" \
   'ports 30000..30002 and --gnmi ports 30002..30004 overlap.*rc=2'
like "--write-inventory - refused" "$(err --devices 2 --write-inventory -)" \
   'standard output carries.*rc=2'
like "--write-inventory onto the --write-cert file refused" \
   "$(cd "$T" && err --devices 2 --self-signed --write-cert c.pem --write-inventory ./c.pem)" \
   '--write-cert and --write-inventory both name ./c.pem.*rc=2'
ln -s st.json "$T/st-link"
like "--stats through a link onto the inventory refused" \
   "$(err --devices 2 --stats "$T/st-link" --write-inventory "$T/st.json")" \
   '--stats and --write-inventory both name.*rc=2'
like "--device-addresses outside 127/8 refused" "$(err --devices 2 --device-addresses 10.0.0.1)" \
   '127\.0\.0\.0/8.*rc=2'
like "--device-addresses with an explicit listener address refused" \
   "$(err --devices 2 --device-addresses 127.0.1.1 --restconf 0.0.0.0:30000)" \
   'give --restconf as :PORT.*rc=2'
like "--device-addresses past 127.255.255.254 refused" \
   "$(err --devices 3 --device-addresses 127.255.255.253 --restconf :0 --gnmi off)" \
   'go past 127\.255\.255\.254.*rc=2'
like "RLIMIT_NOFILE too low even at the hard limit: says so" \
   "$(ulimit -n 100; err --devices 100 --restconf :0 --gnmi :0)" \
   '200 listeners and 100 timers need at least 364 open files, but RLIMIT_NOFILE is [0-9]+ \(hard limit [0-9]+\).*rc=2'
# Room for the listeners and timers but few connections: it starts, and says so.
(ulimit -n 400; start_fleet --devices 100 --restconf 127.0.0.1:0 --gnmi 127.0.0.1:0 \
    && cp "$SOUT" "$T/scarce"; kill -TERM "$SPID"; wait "$SPID")
like "RLIMIT_NOFILE with little room for connections: starts with a warning" \
   "$(cat "$T/scarce" 2>/dev/null)" 'warning: RLIMIT_NOFILE [0-9]+ leaves room for only [0-9]+ connections across 200 listeners'
# A low soft limit under a high hard one is raised, not refused.
(ulimit -S -n 100; start_fleet --devices 100 --restconf 127.0.0.1:0 --gnmi 127.0.0.1:0 \
    && echo up >"$T/raised"; kill -TERM "$SPID"; wait "$SPID")
is "a low soft RLIMIT_NOFILE is raised: 100 devices come up" "$(cat "$T/raised" 2>/dev/null)" up
done_testing
