#!/bin/bash
# Outputs written while the run goes: the per-request log (--log, JSON
# lines or CSV), counted against the report and the server; '-' for
# standard output; what a kill -9 leaves behind.  (Lines dropped when the
# reader cannot keep up: tests/unit/test_stream.c.)
. "$YB_SRCDIR/tests/lib.sh"
PY=/usr/bin/python3
HLOG_CHECK=${YB_BUILDDIR:-.}/tests/tools/hlog_check

"$YB" synth acl -n 200 -r 2 -o "$T/a.ybc" >/dev/null
yb_serve "$T/serve.out" --restconf 127.0.0.1:0 --gnmi off --stats "$T/stats.json" ||
    { echo "Bail out! serve did not start"; exit 1; }

# checklog FILE FORMAT: checks every line of a --log file and prints
# "LINES OK_LINES" (exit 1 with the offending line on any problem): every
# field present, numbers where numbers belong, times ordered on successful
# requests (due <= start <= sent <= first byte <= done), the last line
# complete.
checklog() {
    $PY - "$1" "$2" <<'PYEOF'
import csv, json, sys
path, fmt = sys.argv[1], sys.argv[2]
FIELDS = ["record", "index", "shard", "workload", "target", "worker", "session", "t_due_ns", "t_start_ns",
          "t_sent_ns", "t_first_byte_ns", "t_done_ns", "e2e_ns", "service_ns", "lateness_ns",
          "gen_late_ns", "session_wait_ns", "connect_ns", "tls_ns", "h2_ns", "write_ns", "ttfb_ns", "bytes_out", "bytes_in",
          "status", "grpc_status", "notifications", "updates", "error", "reason"]
data = open(path, newline="").read()
if data and not data.endswith("\n"):
    sys.exit("last line incomplete: %r" % data[-80:])
if fmt == "csv":
    rows = list(csv.reader(data.splitlines()))
    if rows[0] != FIELDS:
        sys.exit("csv header: %r" % rows[0])
    recs = []
    for r in rows[1:]:
        if len(r) != len(FIELDS):
            sys.exit("csv row has %d fields: %r" % (len(r), r))
        d = dict(zip(FIELDS, r))
        recs.append({k: (None if v == "" else v if k in ("error", "reason") else int(v))
                     for k, v in d.items()})
else:
    recs = [json.loads(l) for l in data.splitlines()]
ok = 0
for d in recs:
    if list(d) != FIELDS:
        sys.exit("fields: %r" % list(d))
    if d["error"] is None:
        t = [d["t_due_ns"], d["t_start_ns"], d["t_sent_ns"], d["t_first_byte_ns"], d["t_done_ns"]]
        if None in t or t != sorted(t) or t[0] < 0:
            sys.exit("times out of order: %r" % d)
        if d["e2e_ns"] != t[4] - t[0] or d["service_ns"] != t[4] - t[1]:
            sys.exit("phases do not match the times: %r" % d)
        # lateness (due -> start) is the generator's part plus the wait for a
        # session; each part is recorded rounded to its own floor, so allow 2 ns
        if d["gen_late_ns"] is None or d["session_wait_ns"] is None or \
                abs(d["lateness_ns"] - d["gen_late_ns"] - d["session_wait_ns"]) > 2:
            sys.exit("lateness parts do not add up: %r" % d)
        if not (d["status"] and d["session"] and d["bytes_out"] > 0):
            sys.exit("status/session/bytes missing: %r" % d)
        ok += 1
print(len(recs), ok)
PYEOF
}
srv_requests() { jget "$T/stats.json" 'sum(r["http_status"].values())'; }

# 1. JSON lines: one per completed request, as many as the server answered
"$YB" run "$T/a.ybc" --target "$RURL" -c 4 -t 2 -n 500 -q --log "$T/l.jsonl" \
    --json "$T/l.json" >/dev/null
yb_serve_stop
is "--log: one line per completed request, every field well-formed, times in order" \
    "$(checklog "$T/l.jsonl" json)" "500 500"
is "--log: the report counts as many" "$(jget "$T/l.json" 'r["summary"]["requests_completed"]')" 500
is "--log: the server answered as many" "$(srv_requests)" 500
is "--log: both workers' requests, records 0..199, sessions numbered across the run" \
    "$($PY -c 'import json,sys; L=[json.loads(l) for l in open(sys.argv[1])]; print(sorted({d["worker"] for d in L}), min(d["record"] for d in L), max(d["record"] for d in L), sorted({d["session"] for d in L}))' "$T/l.jsonl")" \
    "[0, 1] 0 199 [1, 2, 3, 4]"
is "--log: the per-line bytes add up to the report's" \
    "$($PY -c 'import json,sys; print(sum(json.loads(l)["bytes_out"] for l in open(sys.argv[1])))' "$T/l.jsonl")" \
    "$(jget "$T/l.json" 'r["summary"]["data_bytes"]')"

# 2. CSV, and errors with their class
yb_serve "$T/serve.out" --restconf 127.0.0.1:0 --gnmi off --fault status:409@0.2 \
    --stats "$T/stats.json" || { echo "Bail out! serve did not start"; exit 1; }
"$YB" run "$T/a.ybc" --target "$RURL" -c 2 -n 300 -q --log "$T/l.csv" --log-format csv \
    --max-errors 1000 --json "$T/c.json" >/dev/null
yb_serve_stop
read -r lines okl < <(checklog "$T/l.csv" csv)
is "--log-format csv: a header and one row per request" "$lines" 300
is "--log-format csv: ok rows match the report" "$okl" "$(jget "$T/c.json" 'r["summary"]["requests_ok"]')"
is "--log-format csv: failed rows carry class 'status', HTTP 409 and reason 'http 409'" \
    "$($PY -c 'import csv,sys; R=list(csv.DictReader(open(sys.argv[1]))); print(all(r["status"]=="409" and r["reason"]=="http 409" for r in R if r["error"]), all(r["reason"]=="" for r in R if not r["error"]), sum(1 for r in R if r["error"]=="status"))' "$T/l.csv")" \
    "True True $(jget "$T/c.json" 'r["errors"]["status"]')"
dead=$(free_port)
"$YB" run "$T/a.ybc" --target "http://127.0.0.1:$dead" -n 3 -q --log "$T/r.jsonl" --max-errors 3 >/dev/null
is "--log: a refused connection: its class, its reason, no session, no sent time" \
    "$($PY -c 'import json,sys; L=[json.loads(l) for l in open(sys.argv[1])]; print(len(L), {(d["error"], d["reason"], d["session"], d["t_sent_ns"]) for d in L})' "$T/r.jsonl")" \
    "3 {('refused', 'connect: connection refused (127.0.0.1:$dead)', None, None)}"

# 3. '-' is standard output; the text report then goes to standard error
yb_serve "$T/serve.out" --restconf 127.0.0.1:0 --gnmi off || { echo "Bail out! serve did not start"; exit 1; }
"$YB" run "$T/a.ybc" --target "$RURL" -c 2 -n 120 -q --log - --json "$T/d.json" \
    >"$T/d.out" 2>"$T/d.err"
is "--log -: every line on stdout" "$(checklog "$T/d.out" json)" "120 120"
like "--log -: the text report on stderr" "$(cat "$T/d.err")" "Generator CPU:"
is "--log - with --json FILE: the JSON report is whole" \
    "$(jget "$T/d.json" 'r["summary"]["requests_completed"]')" 120
check_rc "--log - and --json - together: refused (one standard output)" 2 \
    "$YB" run "$T/a.ybc" --target "$RURL" -n 1 -q --log - --json -
check_rc "--log-format without --log: refused" 2 \
    "$YB" run "$T/a.ybc" --target "$RURL" -n 1 -q --log-format csv
check_rc "--log-format xml: refused" 2 \
    "$YB" run "$T/a.ybc" --target "$RURL" -n 1 -q --log "$T/x" --log-format xml
check_rc "--log in a missing directory: refused before the run" 2 \
    "$YB" run "$T/a.ybc" --target "$RURL" -n 1 -q --log "$T/nodir/x.jsonl"

# 4. --series: one line per second of the run, the report's intervals
"$YB" run "$T/a.ybc" --target "$RURL" -c 2 --rate 200 -D 3s -q --series "$T/s.jsonl" \
    --json "$T/s.json" >/dev/null
is "--series: exactly the report's per-second intervals, line by line" \
    "$($PY -c 'import json,sys; S=[json.loads(l) for l in open(sys.argv[1])]; J=json.load(open(sys.argv[2]))["intervals"]; print(S == J, [s["t_s"] for s in S] == list(range(len(S))))' "$T/s.jsonl" "$T/s.json")" \
    "True True"
n=$(grep -c . "$T/s.jsonl")
is "--series: one line per second of the run (-D 3s: 3 and the last, partial one)" \
    "$n $((n >= 4))" "$(jget "$T/s.json" 'int(r["summary"]["duration_s"]) + 1') 1"
is "--series: the seconds add up to the requests" \
    "$($PY -c 'import json,sys; print(sum(json.loads(l)["requests"] for l in open(sys.argv[1])))' "$T/s.jsonl")" \
    "$(jget "$T/s.json" 'r["summary"]["requests_completed"]')"

# 5. --hlog, streamed: decodes, one line per second with completions, the
#    same counts as the series (no errors here), the total is the report's
"$YB" run "$T/a.ybc" --target "$RURL" -c 2 --rate 200 -D 3s -q --series "$T/h.jsonl" \
    --hlog "$T/h.hlog" --json "$T/h.json" >/dev/null
check "--hlog: decodes with the project's decoder" "$HLOG_CHECK" "$T/h.hlog"
is "--hlog: per-second counts are the series' requests" \
    "$("$HLOG_CHECK" "$T/h.hlog" | awk '$1 ~ /^[0-9]/{printf "%d:%d ", $1, $4}')" \
    "$($PY -c 'import json,sys; print(" ".join("%d:%d" % (s["t_s"], s["requests"]) for s in map(json.loads, open(sys.argv[1])) if s["requests"]), end=" ")' "$T/h.jsonl")"
is "--hlog: the total is the report's ok requests" \
    "$("$HLOG_CHECK" "$T/h.hlog" | awk '$1=="total"{print $2}')" \
    "$(jget "$T/h.json" 'r["summary"]["requests_ok"]')"

# 6. the series grows while the run goes (tail -f), a second at a time
"$YB" run "$T/a.ybc" --target "$RURL" -c 2 --rate 100 -D 4s -q --series "$T/g.jsonl" >/dev/null 2>&1 &
gpid=$!
sleep 2.5
mid=$(grep -c . "$T/g.jsonl")
wait $gpid
end=$(grep -c . "$T/g.jsonl")
check "--series: seconds written while the run went ($mid lines at 2.5 s, $end at the end)" \
    test "$mid" -ge 1 -a "$mid" -le 3 -a "$end" -ge 5

# 7. kill -9 mid-run: every output holds whole lines only, and all that
#    was measured up to a moment before the kill
"$YB" run "$T/a.ybc" --target "$RURL" -c 2 --rate 300 -D 30s -q --log "$T/k.jsonl" \
    --series "$T/k.series" --hlog "$T/k.hlog" >/dev/null 2>&1 &
kpid=$!
sleep 3.5
before=$(grep -c . "$T/k.jsonl")
kill -9 $kpid
wait $kpid 2>/dev/null
read -r klines _ < <(checklog "$T/k.jsonl" json)
check "kill -9: every line of the log is whole and well-formed ($klines lines)" test -n "$klines"
check "kill -9: the log grew while the run went (${before} lines at 3.5 s, ~1050 due)" \
    test "$before" -ge 700 -a "$klines" -ge "$before"
is "kill -9: --series holds seconds 0, 1, 2 whole (and maybe 3), ~300 requests each" \
    "$($PY -c '
import json, sys
d = open(sys.argv[1]).read()
S = [json.loads(l) for l in d.splitlines()]
print(d.endswith("\n"), [s["t_s"] for s in S][:3], len(S) in (3, 4), all(250 <= s["requests"] <= 350 for s in S[:3]))' "$T/k.series")" \
    "True [0, 1, 2] True True"
check "kill -9: --hlog decodes, every line whole" "$HLOG_CHECK" "$T/k.hlog"
is "kill -9: --hlog holds seconds 0, 1, 2 with the series' counts" \
    "$("$HLOG_CHECK" "$T/k.hlog" | awk '$1 ~ /^[0-9]/ && ++n<=3{printf "%d:%d ", $1, $4}')" \
    "$($PY -c 'import json,sys; print(" ".join("%d:%d" % (s["t_s"], s["requests"]) for s in list(map(json.loads, open(sys.argv[1])))[:3]), end=" ")' "$T/k.series")"

done_testing
