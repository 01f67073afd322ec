#!/bin/bash
# The JSON report's exact histograms (yangblast-report(5) HISTOGRAMS): a real run
# against `yangblast serve`, its histograms decoded by tests/report/hdr_v2.py (written
# from HdrHistogram's published format, not from yangblast's C code) must hold the
# report's own counts and percentiles, and the end-to-end one the percentiles
# recomputed from the per-request log; the operations' and the seconds' histograms
# add up to it.  Every run is bounded by `timeout 90`.
. "${YB_SRCDIR:-.}/tests/lib.sh"

CORPUS=$YB_SRCDIR/corpus/restconf-acl-1000.ybc
export PYTHONPATH=$YB_SRCDIR/tests/report

yb_serve "$T/s.out" --restconf 127.0.0.1:0 --gnmi 127.0.0.1:0 --service-time uniform:200us..3ms ||
    { echo "Bail out! serve did not start"; exit 1; }
timeout 90 "$YB" run -q "$CORPUS" --target "$RURL" -n 400 -c 4 --json "$T/r.json" \
    --log "$T/r.log" >/dev/null 2>&1
is "run" "$?" 0
yb_serve_stop

is "every phase's histogram decodes to its summary's count, p50, p90, p99, p99.9 and max" \
    "$(/usr/bin/python3 - "$T/r.json" <<'PY'
import json, sys, hdr_v2
r = json.load(open(sys.argv[1]))
bad = []
for name, s in r["latency_us"].items():
    c = hdr_v2.decode(r["histograms"][name])
    got = [sum(c.values())] + [hdr_v2.hist_percentile(c, p) for p in (50, 90, 99, 99.9, 100)]
    want = [s["count"], s["p50"], s["p90"], s["p99"], s["p99_9"], s["max"]]
    if got != want:
        bad.append((name, got, want))
print(bad or "ok", len(r["histograms"]) == len(r["latency_us"]))
PY
)" "ok True"

is "e2e histogram = percentiles recomputed from the per-request log (400 requests)" \
    "$(/usr/bin/python3 - "$T/r.json" "$T/r.log" <<'PY'
import json, sys, hdr_v2
r = json.load(open(sys.argv[1]))
vals = sorted(hdr_v2.us_of_ns(x["e2e_ns"]) for x in map(json.loads, open(sys.argv[2]))
              if x["error"] is None)
c = hdr_v2.decode(r["histograms"]["e2e"])
print(len(vals), [hdr_v2.percentile(vals, p) for p in (50, 99, 100)] ==
      [hdr_v2.hist_percentile(c, p) for p in (50, 99, 100)])
PY
)" "400 True"

is "operations' and seconds' e2e histograms add up to the run's, slot for slot" \
    "$(/usr/bin/python3 - "$T/r.json" <<'PY'
import json, sys, hdr_v2
r = json.load(open(sys.argv[1]))
whole = hdr_v2.decode(r["histograms"]["e2e"])
for part in ("operations", "intervals"):
    s = hdr_v2.parts_sum(r, part)
    print(part, s == whole and sum(s.values()) == 400)
PY
)" "operations True
intervals True"

done_testing
