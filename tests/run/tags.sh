#!/bin/bash
# Per-operation (and per-target) figures in the CSV and the .hlog: a mixed
# gNMI Set + Get corpus on two workers, then a fleet of two switches.  The
# .hlog carries one "Tag=WORKLOAD/TARGET/OPERATION" line per operation
# and second, decoded by tests/tools/hlog_check, which fails unless the
# tagged histograms of every second add up to the untagged one (shown to
# fail on a log with a tagged line removed); the tagged totals equal the
# JSON report's operations.  The CSV has the run's row, then one row per
# operation (per target of a fleet), every row with the header's columns.
. "${YB_SRCDIR:-.}/tests/lib.sh"

HLOG_CHECK=${YB_BUILDDIR:-.}/tests/tools/hlog_check
PY=/usr/bin/python3
GN_CORPUS=$YB_SRCDIR/corpus/gnmi-acl-1000.ybc
RC_CORPUS=$YB_SRCDIR/corpus/restconf-acl-1000.ybc

yb_serve "$T/serve.out" --restconf 127.0.0.1:0 --gnmi 127.0.0.1:0 \
    --service-time uniform:200us..2ms || exit 1
G=${GURL#*://}

# a corpus of Set.update and Get calls
{ "$YB" corpus cat "$GN_CORPUS" | head -30
  "$YB" synth acl --proto gnmi --op get --count 10 -o "$T/get.ybc" >/dev/null &&
      "$YB" corpus cat "$T/get.ybc"; } >"$T/mix.jsonl"
check "a Set + Get corpus" "$YB" corpus import "$T/mix.jsonl" -o "$T/mix.ybc"
check "run -t 2 with --hlog, --csv and --json" "$YB" run -q "$T/mix.ybc" --target "$GURL" \
    -t 2 -c 4 -D 2500ms --hlog "$T/m.hlog" --csv "$T/m.csv" --json "$T/m.json"
"$HLOG_CHECK" "$T/m.hlog" >"$T/m.check" 2>&1
is "hlog_check: every second's tags add up to its untagged line" "$?" 0
grep -v '^[0-9t]' "$T/m.check" | head -5 | sed 's/^/# /'
like "tags name workload, target and operation" "$(grep '^Tag=' "$T/m.hlog" | cut -d, -f1 | sort -u)" \
    "^Tag=mix\.ybc/${G//./\\.}/Get
Tag=mix\.ybc/${G//./\\.}/Set\.update$"
is "each second has its untagged line, then one tagged line per operation" \
    "$($PY -c '
import sys
secs, last = [], None
for l in open(sys.argv[1]):
    if l[0] in "#\"":
        continue
    if l.startswith("Tag="):
        secs[-1][1].append(l.split(",")[1])
    else:
        secs.append((l.split(",")[0], []))
print(all(len(t) == 2 and set(t) == {s} for s, t in secs), len(secs) >= 2)' "$T/m.hlog")" "True True"
per_op() { awk '$1=="tag"{split($2,p,"/"); n[p[3]]+=$6} END{for (k in n) printf "%s=%d ", k, n[k]}' "$1" | tr ' ' '\n' | sort | tr '\n' ' '; }
is "the tagged totals are the JSON report's operations (ok)" "$(per_op "$T/m.check")" \
    "$(jget "$T/m.json" '" ".join(sorted("%s=%d" % (o["operation"], o["ok"]) for o in r["operations"]))') "
is "and add up to the untagged total" "$(awk '$1=="tags"{print $3}' "$T/m.check")" \
    "$(awk '$1=="total"{print $2}' "$T/m.check")"

# the check can fail: a log with one tagged line removed
grep -v -m1 -n '^Tag=' "$T/m.hlog" >/dev/null
awk 'BEGIN{d=0} /^Tag=/ && !d {d=1; next} {print}' "$T/m.hlog" >"$T/cut.hlog"
"$HLOG_CHECK" "$T/cut.hlog" >/dev/null 2>"$T/cut.err"
is "hlog_check fails when a tagged line is missing" "$?" 1
like "naming the interval" "$(cat "$T/cut.err")" 'interval 0\.000: the tagged histograms'

csv_check() {
    $PY - "$@" <<'EOF'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
head, body = rows[0], rows[1:]
print(len({len(r) for r in rows}) == 1, head[-3:], len(body))
run, ops = body[0], body[1:]
col = {k: i for i, k in enumerate(head)}
print(run[col["operation"]] == "", sum(int(r[col["requests_ok"]]) for r in ops) == int(run[col["requests_ok"]]),
      sorted({(r[col["target"]], r[col["operation"]]) for r in ops}))
EOF
}
is "CSV: the run's row, then one per operation, every row with the header's columns" \
    "$(csv_check "$T/m.csv" | head -1)" "True ['sample_lateness_p99_ms', 'workload', 'operation'] 3"
is "CSV: the operations' ok add up to the run's" "$(csv_check "$T/m.csv" | sed -n 2p)" \
    "True True [('$GURL', 'Get'), ('$GURL', 'Set.update')]"
like "CSV: an operation's row has its own percentiles" "$(grep ',Get$' "$T/m.csv")" \
    ',mix\.ybc,Get$'

# ---- a fleet: per target and operation -----------------------------------------
yb_serve_stop
yb_serve "$T/fleet.out" --devices 2 --restconf 127.0.0.1:0 --gnmi off \
    --write-inventory "$T/fleet.yaml" || { echo "Bail out! serve --devices 2"; exit 1; }
for i in $(seq 100); do grep -q 'devices ready' "$T/fleet.out" && break; sleep 0.1; done
check "fleet run with --hlog and --csv" "$YB" run -q "$RC_CORPUS" --targets "$T/fleet.yaml" \
    --fan-out -n 200 -c 2 --hlog "$T/f.hlog" --csv "$T/f.csv" --json "$T/f.json"
"$HLOG_CHECK" "$T/f.hlog" >"$T/f.check" 2>&1
is "fleet: the tags add up" "$?" 0
is "fleet: one tag per target and operation" \
    "$(grep '^Tag=' "$T/f.hlog" | cut -d, -f1 | sed 's/=.*ybc\//=/' | cut -d/ -f1 | sort -u | tr '\n' ' ')" \
    "Tag=sw1 Tag=sw2 "
is "fleet: each target's tagged total is its JSON figure" \
    "$(awk '$1=="tag"{split($2,p,"/"); n[p[2]]+=$6} END{for (k in n) printf "%s=%d\n", k, n[k]}' "$T/f.check" | sort | tr '\n' ' ')" \
    "$(jget "$T/f.json" '" ".join(sorted("%s=%d" % (t["name"], t["ok"]) for t in r["targets"]))') "
is "fleet CSV: one row per target and operation, adding up" \
    "$(csv_check "$T/f.csv" | sed -n 2p | cut -d' ' -f1-2)" "True True"
like "fleet CSV: rows name the targets" "$(cut -d, -f3 "$T/f.csv" | sort -u | tr '\n' ' ')" \
    'sw1 sw2'

# ---- a plan: per workload, target and operation; live metrics per workload ------
cat >"$T/plan.yaml" <<EOF
defaults:
  duration: 2s
workloads:
  - name: writers
    synth: {protocol: restconf, op: create, method: PATCH, count: 50, rules: 1}
    rate: 40
    targets: [sw1, sw2]
  - name: pollers
    synth: {protocol: restconf, op: get, count: 5}
    concurrency: 2
    targets: sw2
EOF
MP=$(free_port)
"$YB" run --plan "$T/plan.yaml" --targets "$T/fleet.yaml" -q --hlog "$T/p.hlog" --csv "$T/p.csv" \
    --json "$T/p.json" --metrics-listen "127.0.0.1:$MP" --metrics-linger 30s >"$T/p.out" 2>&1 &
RPID=$!
for i in $(seq 150); do
    sleep 0.2
    curl -s --max-time 5 -o "$T/p.prom" "http://127.0.0.1:$MP/metrics" &&
        grep -q '^yangblast_report_written 1' "$T/p.prom" && break
done
kill -TERM "$RPID"
wait "$RPID"
is "plan run: exit 0" "$?" 0
sed 's/^/# /' "$T/p.out" | grep -i error | head -5
"$HLOG_CHECK" "$T/p.hlog" >"$T/p.check" 2>&1
is "plan: the tags add up" "$?" 0
is "plan: one tag per workload, target and operation" \
    "$(grep '^Tag=' "$T/p.hlog" | cut -d, -f1 | sed 's|\(/sw[0-9]*/[A-Z]*\).*|\1|' | sort -u | tr '\n' ' ')" \
    "Tag=pollers/sw2/GET Tag=writers/sw1/PATCH Tag=writers/sw2/PATCH "
is "plan: each workload's tagged total is its JSON figure" \
    "$(awk '$1=="tag"{split($2,p,"/"); n[p[1]]+=$6} END{for (k in n) printf "%s=%d\n", k, n[k]}' "$T/p.check" | sort | tr '\n' ' ')" \
    "$(jget "$T/p.json" '" ".join(sorted("%s=%d" % (w["name"], w["ok"]) for w in r["workloads"]))') "
is "plan CSV: rows per workload and target, adding up" \
    "$(csv_check "$T/p.csv" | sed -n 2p | cut -d' ' -f1-2) $($PY -c '
import csv, sys
print(sorted({(r["workload"], r["target"]) for r in csv.DictReader(open(sys.argv[1])) if r["operation"]}))' "$T/p.csv")" \
    "True True [('pollers', 'sw2'), ('writers', 'sw1'), ('writers', 'sw2')]"
$PY "$YB_SRCDIR/tests/report/metrics_check.py" final "$T/p.prom" "$T/p.json" >"$T/p.final"
is "plan: the final scrape equals the JSON report" "$?" 0
grep -v '^ok' "$T/p.final" | sed 's/^/# /'
like "plan: live metrics labelled by workload" \
    "$(grep '^yangblast_requests_started_total' "$T/p.prom" | sed 's/} .*//' | sort | tr '\n' ' ')" \
    'workload="pollers",target="sw2".*workload="writers",target="sw1".*workload="writers",target="sw2"'

done_testing
