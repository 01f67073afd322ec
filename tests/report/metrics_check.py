#!/usr/bin/python3
"""Checks scrapes of `--metrics-listen` (Prometheus text, parsed by Debian's
python3-prometheus-client) for tests/report/metrics.sh.  Prints "ok ..."
or "not ok ..." lines and exits 1 when any check fails.

  metrics_check.py monotonic S1 S2 ...   counters never go back; some grow
  metrics_check.py final SCRAPE JSON     the scrape equals the JSON report
  metrics_check.py openmetrics SCRAPE    parses as OpenMetrics (ends # EOF)
  metrics_check.py series SCRAPE N G     N series (besides other), G grouped
"""
import json
import sys

from prometheus_client.parser import text_string_to_metric_families

failed = 0


def report(cond, what):
    global failed
    print(("ok " if cond else "not ok ") + what)
    if not cond:
        failed += 1


def samples(path):
    """{(name, sorted labels): value} of a Prometheus text scrape."""
    out = {}
    with open(path) as f:
        for fam in text_string_to_metric_families(f.read()):
            for s in fam.samples:
                out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def cumulative(name):
    return name.endswith(("_total", "_bucket", "_count", "_sum"))


def monotonic(paths):
    scrapes = [samples(p) for p in paths]
    back, grew = [], 0
    for a, b in zip(scrapes, scrapes[1:]):
        for k, v in a.items():
            if not cumulative(k[0]):
                continue
            if k not in b:
                back.append("%s vanished" % (k,))
            elif b[k] < v:
                back.append("%s: %s -> %s" % (k, v, b[k]))
        grew += sum(1 for k, v in b.items()
                    if k[0] == "yangblast_requests_total" and v > a.get(k, 0))
    report(not back, "counters never go back over %d scrapes %s" % (len(paths), back[:3]))
    report(grew >= len(paths) - 2,
           "completed requests grew between scrapes (%d times)" % grew)
    # each histogram: cumulative buckets, +Inf == _count
    bad = []
    for s in scrapes:
        for k, v in s.items():
            if k[0] == "yangblast_latency_seconds_bucket" and dict(k[1])["le"] == "+Inf":
                lab = tuple(x for x in k[1] if x[0] != "le")
                if s.get(("yangblast_latency_seconds_count", lab)) != v:
                    bad.append(lab)
    report(not bad, "every histogram's +Inf bucket equals its _count %s" % bad[:2])


def total(s, name, **want):
    return sum(v for (n, lab), v in s.items()
               if n == name and all(dict(lab).get(k) == w for k, w in want.items()))


def final(path, jpath):
    s = samples(path)
    r = json.load(open(jpath))
    sm = r["summary"]
    report(total(s, "yangblast_report_written") == 1, "the final scrape says report_written 1")
    pairs = [
        ("started", total(s, "yangblast_requests_started_total"), sm["requests_started"]),
        ("ok", total(s, "yangblast_requests_total", outcome="ok"), sm["requests_ok"]),
        ("errors", total(s, "yangblast_requests_total", outcome="error"), sm["requests_error"]),
        ("unsent", total(s, "yangblast_requests_unsent_total"), sm["requests_unsent"]),
        ("retried", total(s, "yangblast_requests_retried_total"), sm["requests_retried"]),
        ("bytes sent", total(s, "yangblast_sent_bytes_total"), sm["all_data_bytes"]),
        ("bytes received", total(s, "yangblast_received_bytes_total"), sm["all_data_in_bytes"]),
        ("sessions", total(s, "yangblast_sessions_opened_total"), r["sessions"]["opened"]),
        ("tls full", total(s, "yangblast_tls_handshakes_total", kind="full"),
         r["sessions"]["tls_full"]),
        ("tls resumed", total(s, "yangblast_tls_handshakes_total", kind="resumed"),
         r["sessions"]["tls_resumed"]),
        ("cut off", total(s, "yangblast_requests_cut_off_total"), r["cut_off"]),
        ("in flight", total(s, "yangblast_requests_in_flight"), 0),
    ]
    for st, n in r["status"].items():
        pairs.append(("HTTP %s" % st, total(s, "yangblast_http_responses_total",
                                            status=st if st != "0" else "none"), n))
    for cls, n in r["errors"].items():
        if isinstance(n, int):
            pairs.append(("errors %s" % cls,
                          total(s, "yangblast_request_errors_total", **{"class": cls}), n))
    for ph, h in r["latency_us"].items():
        pairs.append(("%s count" % ph,
                      total(s, "yangblast_latency_seconds_count", phase=ph), h["count"]))
    bad = [p for p in pairs if p[1] != p[2]]
    report(not bad, "the final scrape equals the JSON report (%d figures) %s" % (len(pairs), bad))
    # sums are exact µs; the report's mean comes from the HdrHistogram
    off = []
    for ph, h in r["latency_us"].items():
        if h["count"]:
            got = total(s, "yangblast_latency_seconds_sum", phase=ph) * 1e6
            want = h["mean"] * h["count"]
            if abs(got - want) > 0.01 * want + h["count"]:
                off.append((ph, got, want))
    report(not off, "each phase's _sum is its mean x count (1%%) %s" % off)
    report(total(s, "yangblast_latency_seconds_count", phase="e2e") > 0,
           "the e2e histogram has counts")


def openmetrics(path):
    from prometheus_client.openmetrics.parser import text_string_to_metric_families as om
    text = open(path).read()
    report(text.endswith("# EOF\n"), "OpenMetrics text ends with # EOF")
    try:
        fams = list(om(text))
        report(len(fams) > 10, "parses as OpenMetrics (%d families)" % len(fams))
    except Exception as e:  # noqa: BLE001 - the parser's message is the finding
        report(False, "parses as OpenMetrics: %s" % e)


def series(path, n, grouped):
    s = samples(path)
    names = {(dict(lab)["workload"], dict(lab)["target"])
             for (nm, lab), _ in s.items() if nm == "yangblast_requests_started_total"}
    named = [x for x in names if x != ("other", "other")]
    report(len(named) == int(n), "%s label pairs of their own (%s)" % (n, sorted(named)))
    report((("other", "other") in names) == (int(grouped) > 0),
           "the rest add up under other" if int(grouped) else "no other series")
    report(total(s, "yangblast_metrics_series_grouped") == int(grouped),
           "yangblast_metrics_series_grouped %s" % grouped)


cmd = sys.argv[1]
if cmd == "monotonic":
    monotonic(sys.argv[2:])
elif cmd == "final":
    final(sys.argv[2], sys.argv[3])
elif cmd == "openmetrics":
    openmetrics(sys.argv[2])
elif cmd == "series":
    series(sys.argv[2], sys.argv[3], sys.argv[4])
sys.exit(1 if failed else 0)
