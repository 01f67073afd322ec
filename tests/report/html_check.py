#!/usr/bin/python3
"""Checks an HTML report of yangblast against the JSON reports it came from.

    html_check.py PAGE.html RUN.json [RUN2.json ...]

Prints one line per finding as "ok DESCRIPTION" or "FAIL DESCRIPTION: why"
and exits 1 when anything failed.  What it checks:
  - the page is self-contained: no script, no external resource (no src=,
    no href other than #fragment, no url(), no @import, no <link>);
  - it has as many <svg class="plot"> as the JSON says it should (two
    per-second plots per run with intervals, one percentile plot per phase
    with data, one stacked-bar plot);
  - every series' data attributes equal the JSON numbers (per-second
    figures, percentile curves, phase means), and every drawn point maps
    back through the plot's axes to its data value (within half a pixel).
"""
import json, math, sys
from html.parser import HTMLParser

fails = 0


def report(ok, what, why=""):
    global fails
    if ok:
        print("ok", what)
    else:
        fails += 1
        print("FAIL", what + ":", why)


class Page(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.plots = []       # [{attrs, series: [{attrs, points}], bars: [...]}]
        self.bad = []         # external references found
        self.stack = []
        self.in_style = False
        self.styles = ""

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for k, v in attrs:
            v = v or ""
            if k in ("src", "srcset", "action", "formaction", "poster", "background"):
                self.bad.append(f"<{tag} {k}={v}>")
            if k in ("href", "xlink:href") and not v.startswith("#"):
                self.bad.append(f"<{tag} {k}={v}>")
            if "://" in v and k.startswith("data-") is False and k not in ("title",):
                self.bad.append(f"<{tag} {k}={v}>")
        if tag in ("script", "link", "iframe", "object", "embed", "img", "image", "use"):
            self.bad.append(f"<{tag}>")
        if tag == "style":
            self.in_style = True
        if tag == "svg":
            self.plots.append({"attrs": a, "series": [], "bars": []})
        elif tag == "g" and a.get("class") == "series":
            self.plots[-1]["series"].append({"attrs": a, "points": None})
        elif tag == "polyline" and self.plots and self.plots[-1]["series"]:
            self.plots[-1]["series"][-1]["points"] = [
                tuple(map(float, p.split(","))) for p in a["points"].split()]
        elif tag == "circle" and self.plots and self.plots[-1]["series"]:
            self.plots[-1]["series"][-1]["points"] = [(float(a["cx"]), float(a["cy"]))]
        elif tag == "g" and a.get("class") == "bar":
            self.plots[-1]["bars"].append({"name": a.get("data-name"), "rects": []})
        elif tag == "rect" and "data-value" in a and self.plots[-1]["bars"]:
            self.plots[-1]["bars"][-1]["rects"].append((a["data-name"], float(a["data-value"])))

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag):
        if tag == "style":
            self.in_style = False

    def handle_data(self, data):
        if self.in_style:
            self.styles += data


def nums(s):
    return [float(v) for v in s.split()] if s else []


def close(a, b, rel=1e-9):
    return len(a) == len(b) and all(abs(x - y) <= rel * max(1.0, abs(y)) for x, y in zip(a, b))


def pct_pos(p):
    return 1e9 if p >= 100 else math.log10(100.0 / (100.0 - p))


def check_geometry(plot, what):
    a = plot["attrs"]
    x0, y0, x1, y1 = map(float, a["data-area"].split())
    xmin, xmax = float(a["data-x-min"]), float(a["data-x-max"])
    ymin, ymax = float(a["data-y-min"]), float(a["data-y-max"])
    pct = a["data-x-axis"] == "percentile"
    worst = 0.0
    for s in plot["series"]:
        xs, ys, pts = nums(s["attrs"]["data-x"]), nums(s["attrs"]["data-y"]), s["points"] or []
        if len(pts) != len(xs):
            report(False, what + ": points drawn = data points", f"{len(pts)} vs {len(xs)}")
            return
        for (px, py), x, y in zip(pts, xs, ys):
            t = pct_pos(x) if pct else x
            t = min(max(t, xmin), xmax)
            ex = x0 + (t - xmin) / (xmax - xmin) * (x1 - x0)
            ey = y1 - (min(max(y, ymin), ymax) - ymin) / (ymax - ymin) * (y1 - y0)
            worst = max(worst, abs(px - ex), abs(py - ey))
            if not (x0 - 0.01 <= px <= x1 + 0.01 and y0 - 0.01 <= py <= y1 + 0.01):
                worst = max(worst, 999)
    report(worst <= 0.5, what + ": every point drawn where its value is", f"off by {worst:.2f} px")


def main():
    page = Page()
    page.feed(open(sys.argv[1], encoding="utf-8").read())
    runs = []
    for path in sys.argv[2:]:
        d = json.load(open(path))
        runs += d["runs"] if d.get("schema") == "yangblast-experiment/1" else [d]
    report(not page.bad, "no script and no external reference", "; ".join(page.bad[:5]))
    report("url(" not in page.styles and "@import" not in page.styles, "styles load nothing")

    plots = [p for p in page.plots if p["attrs"].get("class") == "plot"]
    phases = []
    for r in runs:
        for k, h in r["latency_us"].items():
            if h.get("count", 0) > 0 and k not in phases:
                phases.append(k)
    with_iv = [i for i, r in enumerate(runs) if r.get("intervals")]
    bars = any(r["summary"]["requests_ok"] > 0 and r["latency_us"]["e2e"]["count"] > 0 for r in runs)
    want = 2 * len(with_iv) + len(phases) + (1 if bars else 0)
    report(len(plots) == want, f"{want} plots", f"found {len(plots)}")
    report(len(page.plots) == len(plots), "every <svg> is a plot", f"{len(page.plots)} svg")

    rate = [p for p in plots if p["attrs"]["data-kind"] == "timeseries-rate"]
    lat = [p for p in plots if p["attrs"]["data-kind"] == "timeseries-latency"]
    for k, i in enumerate(with_iv):
        iv = runs[i]["intervals"]
        s = {x["attrs"]["data-name"]: x["attrs"] for x in rate[k]["series"]}
        report(close(nums(s["completed/s"]["data-x"]), [e["t_s"] for e in iv]) and
               close(nums(s["completed/s"]["data-y"]), [e["requests"] for e in iv]) and
               close(nums(s["errors/s"]["data-y"]), [e["errors"] for e in iv]),
               f"run {i}: completed/s and errors/s are the JSON intervals")
        load, rt = runs[i]["run"].get("load"), runs[i]["run"].get("rate_target_per_s", 0)
        if load or rt:
            ty = nums(s.get("target rate/s", {}).get("data-y", ""))
            report(len(ty) > 1, f"run {i}: the target rate is drawn", "missing")
            if load and load.startswith("ramp:") and ty:
                lo, hi = load[5:].split("/")[0].split("..")
                report(close([ty[0], ty[-1]], [float(lo), float(hi)]),
                       f"run {i}: the target rate ramps from {lo} to {hi}/s", f"{ty[0]}..{ty[-1]}")
        else:
            report("target rate/s" not in s, f"run {i}: closed loop, no target rate")
        s = {x["attrs"]["data-name"]: x["attrs"] for x in lat[k]["series"]}
        for name, key in (("p50", "p50_us"), ("p99", "p99_us"), ("max", "max_us")):
            report(close(nums(s[name]["data-y"]), [e[key] / 1000 for e in iv]),
                   f"run {i}: latency {name} per second is the JSON's {key}")
        check_geometry(rate[k], f"run {i} throughput")
        check_geometry(lat[k], f"run {i} latency")

    labels = None
    for ph in phases:
        pl = [p for p in plots if p["attrs"]["data-kind"] == "percentile " + ph]
        if len(pl) != 1:
            report(False, f"one percentile plot for {ph}", f"{len(pl)}")
            continue
        series = pl[0]["series"]
        have = [r for r in runs if r["latency_us"].get(ph, {}).get("count", 0) > 0]
        report(len(series) == len(have), f"{ph}: every run with data overlaid ({len(have)})",
               f"{len(series)}")
        for s, r in zip(series, have):
            c = [pt for pt in r["latency_us"][ph]["percentile_curve"] if pt[0] < 100]
            if not (close(nums(s["attrs"]["data-x"]), [p for p, v in c]) and
                    close(nums(s["attrs"]["data-y"]), [v / 1000 for p, v in c])):
                report(False, f"{ph}: curve of {s['attrs']['data-name']} is the JSON's percentile_curve")
                break
        else:
            report(True, f"{ph}: curves are the JSON's percentile_curve")
        check_geometry(pl[0], f"percentile {ph}")
        if ph == "e2e":
            labels = [s["attrs"]["data-name"] for s in series]
    report(labels is not None and len(set(labels)) == len(labels), "run labels are distinct", labels)

    bp = [p for p in plots if p["attrs"]["data-kind"] == "phases"]
    if bars:
        got = bp[0]["bars"]
        ok = True
        have = [r for r in runs if r["summary"]["requests_ok"] > 0 and r["latency_us"]["e2e"]["count"] > 0]
        for b, r in zip(got, have):
            L, ok_n = r["latency_us"], r["summary"]["requests_ok"]
            per = {k: L[k]["mean"] * L[k]["count"] / ok_n / 1000 for k in ("connect", "tls", "h2", "ttfb", "e2e")}
            want = [per["connect"], per["tls"], per["h2"], per["ttfb"],
                    max(0, per["e2e"] - per["connect"] - per["tls"] - per["h2"] - per["ttfb"])]
            ok = ok and close([v for n, v in b["rects"]], want, 1e-9)
        report(ok and len(got) == len(have), "phase bars are the JSON's means per request",
               json.dumps(got)[:300])
    sys.exit(1 if fails else 0)


main()
