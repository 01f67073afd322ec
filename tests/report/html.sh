#!/bin/bash
# The HTML report: real runs against `yangblast serve` (gNMI reuse and a
# new session per request, a RESTCONF open-loop ramp) with --json and
# --html, rendered by `yangblast report`, checked by tests/report/
# html_check.py (self-contained, plot count, every data point equals the
# JSON and is drawn where its value is) and opened in headless Chromium
# (renders: non-blank screenshot, the SVG plots in its DOM, no console
# error).  Hostile input: errors naming the file and the key, no page
# written.  1,000 targets: a folded table, no extra plot.
. "${YB_SRCDIR:-.}/tests/lib.sh"

RC_CORPUS=$YB_SRCDIR/corpus/restconf-acl-1000.ybc
GN_CORPUS=$YB_SRCDIR/corpus/gnmi-acl-1000.ybc
CHECK=$YB_SRCDIR/tests/report/html_check.py
INK=$YB_SRCDIR/tests/report/png_ink.py

yb_serve "$T/serve.out" --restconf 127.0.0.1:0 --gnmi 127.0.0.1:0 --self-signed \
    --service-time uniform:200us..2ms || exit 1

check "gNMI reuse run with --json and --html" timeout 60 "$YB" run -q "$GN_CORPUS" \
    --target "$GURL" -k -n 600 -c 4 --json "$T/reuse.json" --html "$T/reuse.html"
check "gNMI per-request run" timeout 60 "$YB" run -q "$GN_CORPUS" --target "$GURL" -k \
    --sessions per-request -n 200 -c 4 --json "$T/per.json"
check "RESTCONF open-loop ramp" timeout 60 "$YB" run -q "$RC_CORPUS" --target "$RURL" -k \
    --rate ramp:20..120/2s -D 3s -c 8 --json "$T/ramp.json"
is "the JSON carries a percentile curve per histogram, ending at the maximum" \
    "$(jget "$T/reuse.json" 'all(h["percentile_curve"][-1] == [100.0, h["max"]] if h["count"] else h["percentile_curve"] == [] for h in r["latency_us"].values())')" true
is "the JSON carries the load model" "$(jget "$T/ramp.json" 'r["run"]["load"]')" "ramp:20..120/2s"

check "report renders three runs" timeout 60 "$YB" report "$T/reuse.json" "$T/per.json" \
    "$T/ramp.json" -o "$T/all.html"
"$CHECK" "$T/all.html" "$T/reuse.json" "$T/per.json" "$T/ramp.json" >"$T/check.out" 2>&1
rc=$?
is "the page checks out against the JSON (html_check.py)" "$rc" 0
[ $rc = 0 ] || grep -v '^ok' "$T/check.out" | head -20 | sed 's/^/# /'
like "the e2e percentile plot overlays the three runs" "$(cat "$T/check.out")" \
    '^ok e2e: every run with data overlaid \(3\)'
like "the ramp's target rate is drawn from 20 to 120/s" "$(cat "$T/check.out")" \
    '^ok run 2: the target rate ramps from 20 to 120/s'
nplots=$(grep -o '<svg class="plot"' "$T/all.html" | wc -l)
like "a structured setting (run.accept) is shown as JSON" "$(cat "$T/all.html")" \
    '<td class="s">\{&quot;http&quot;:\[\]'


# run --html renders the run's own JSON: the same page as report on the file
# (but for the last digits of means: the file holds 15 significant digits)
"$YB" report "$T/reuse.json" -o "$T/reuse2.html" 2>&1
digits9() {
    python3 -c 'import re,sys; print(re.sub(r"\d+\.\d+(e-?\d+)?", lambda m: "%.9g" % float(m.group()), open(sys.argv[1]).read()))' "$1"
}
is "run --html is the page report makes of its --json" \
    "$(diff <(digits9 "$T/reuse.html") <(digits9 "$T/reuse2.html") | head -5)" ""

# ---- in a real browser ------------------------------------------------------
check "chromium is installed (setup.sh TEST_PKGS)" command -v chromium
chrome() {
    timeout 90 chromium --headless --no-sandbox --disable-gpu --no-first-run \
        --user-data-dir="$T/chrome" --enable-logging=stderr --v=0 "$@" 2>>"$T/chrome.log"
}
chrome --window-size=1280,4000 --force-device-scale-factor=0.5 \
    --screenshot="$T/all.png" "file://$T/all.html" >/dev/null
check "chromium took a screenshot" test -s "$T/all.png"
read -r ink w h < <(python3 "$INK" "$T/all.png" 2>/dev/null || echo "0 0 0")
like "the screenshot is not blank (share of non-white pixels: $ink)" "$ink" '^0\.(0[2-9]|[1-9])'
printf '<!DOCTYPE html><html><body></body></html>\n' >"$T/blank.html"
chrome --window-size=1280,4000 --force-device-scale-factor=0.5 \
    --screenshot="$T/blank.png" "file://$T/blank.html" >/dev/null
read -r bink _ < <(python3 "$INK" "$T/blank.png" 2>/dev/null || echo "1 0 0")
is "(the same check calls a blank page blank)" "$bink" "0.0000"
chrome --dump-dom "file://$T/all.html" >"$T/dom.html"
is "the browser's DOM holds the $nplots SVG plots" \
    "$(grep -o '<svg class="plot"' "$T/dom.html" | wc -l)" "$nplots"
like "the browser parsed the plots' polylines" "$(grep -c '<polyline' "$T/dom.html")" '^[1-9]'
is "no console message (no script, nothing failed to load)" \
    "$(grep -c 'CONSOLE' "$T/chrome.log")" 0
is "no failed load in the browser's log" \
    "$(grep -ciE 'net::ERR|Failed to load|Not allowed to load' "$T/chrome.log")" 0
grep -o -E '(src|href)=[^ >]*|url\(|@import|<script|<link' "$T/all.html" >"$T/refs"
is "no external reference in the file (src=, href=, url(), @import, script, link)" \
    "$(wc -l <"$T/refs")" 0

# ---- hostile input ------------------------------------------------------------
bad() { # bad NAME PYTHON-EDIT: writes $T/NAME.json, reuse.json edited by the statement
    python3 - "$T/reuse.json" "$T/$1.json" "$2" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(r, open(sys.argv[2], "w"))
PYEOF
}
bad_case() { # bad_case DESC NAME EDIT WANT-REGEX
    bad "$2" "$3"
    "$YB" report "$T/$2.json" -o "$T/$2.html" >"$T/$2.err" 2>&1
    local rc=$?
    is "$1: exit 2" "$rc" 2
    like "$1: the message names the file and the key" "$(cat "$T/$2.err")" "$4"
    check "$1: no page written" test ! -e "$T/$2.html"
}
bad_case "a string as a per-second p99" b1 'r["intervals"][0]["p99_us"] = "x"' \
    "b1\\.json: intervals\\[0\\]\\.p99_us: expected a number, got a string"
bad_case "a negative duration" b2 'r["summary"]["duration_s"] = -1' \
    "b2\\.json: summary\\.duration_s: expected a number >= 0 \\(up to 1e19\\), got -1"
bad_case "a curve point that is not a pair" b3 'r["latency_us"]["ttfb"]["percentile_curve"][1] = [1]' \
    "b3\\.json: latency_us\\.ttfb\\.percentile_curve\\[1\\]: expected \\[percentile, value\\]"
bad_case "another schema" b4 'r["schema"] = "other/9"' \
    'b4\.json: schema: expected "yangblast-report/1", "yangblast-experiment/1" or "yangblast-sweep/1"'
bad_case "no summary" b5 'del r["summary"]' "b5\\.json: summary: missing"
bad_case "a reason that is a number" b6 'r["errors"]["reasons"] = [{"class": "tls", "reason": 5}]' \
    "b6\\.json: errors\\.reasons\\[0\\]\\.reason: expected a string, got a number"
bad_case "an experiment's run without latency" b7 \
    'r = {"schema": "yangblast-experiment/1", "runs": [r, {k: v for k, v in r.items() if k != "latency_us"}]}' \
    "b7\\.json: runs\\[1\\]\\.latency_us: missing"
printf '{"schema": "yangblast-report/1", "run": {' >"$T/trunc.json"
"$YB" report "$T/trunc.json" -o "$T/trunc.html" >"$T/trunc.err" 2>&1
is "truncated JSON: exit 2" "$?" 2
like "truncated JSON: file, line and column" "$(cat "$T/trunc.err")" 'trunc\.json:1:[0-9]+: not valid JSON'
"$YB" report "$T/none.json" -o "$T/none.html" >"$T/none.err" 2>&1
like "a missing file is named" "$(cat "$T/none.err")" 'none\.json: cannot open'
check_rc "report without -o" 2 "$YB" report "$T/reuse.json"
# escaping: markup in every string the page shows
bad esc 'r["run"]["corpus"] = "<script>alert(1)</script>"; r["run"]["unit"] = "\"><b>"; r["errors"]["reasons"] = [{"class": "tls", "reason": "<img src=x onerror=alert(1)>", "count": 1, "first_s": 0.5}]; r["errors"]["tls"] = 1'
check "strings with markup render" "$YB" report "$T/esc.json" -o "$T/esc.html"
is "they are escaped" "$(grep -c -E '<script|<img|"><b>' "$T/esc.html")" 0
like "and shown as text" "$(cat "$T/esc.html")" '&lt;img src=x onerror=alert\(1\)&gt;'

# ---- 1,000 targets ------------------------------------------------------------
bad t1000 'r["targets"] = [{"name": "sw%04d" % i, "address": "10.0.%d.%d:8080" % (i // 256, i % 256), "requests_ok": 100 + i, "latency_us": {"e2e": {"p50": 1000 + i, "p99": 5000 + i}}} for i in range(1000)]'
check "1,000 targets render (bounded by timeout 60)" timeout 60 "$YB" report "$T/t1000.json" -o "$T/t1000.html"
is "the targets' table has 1,000 rows" "$(grep -c '<td class="s">sw[0-9]' "$T/t1000.html")" 1000
like "it is folded away (<details>)" "$(grep -o '<details class="table"><summary>[^<]*: 1000 targets (1000 rows)' "$T/t1000.html")" '1000 targets'
is "its columns are the targets' keys, nested ones dotted" \
    "$(grep -o '<th>latency_us.e2e.p99</th>' "$T/t1000.html" | head -1)" '<th>latency_us.e2e.p99</th>'
is "no plot more than one run's" "$(grep -o '<svg class="plot"' "$T/t1000.html" | wc -l)" \
    "$(grep -o '<svg class="plot"' "$T/reuse.html" | wc -l)"

# ---- thresholds and a fleet's per-target figures, from real runs -------------------
timeout 60 "$YB" run -q "$RC_CORPUS" --target "$RURL" -k -n 60 -c 2 --threshold 'e2e.p99<1us' \
    --threshold 'errors<1%' --json "$T/th.json" --html "$T/th.html" >/dev/null 2>&1
is "a failed threshold: exit 1" "$?" 1
is "the thresholds' table: each threshold, its measured figure and its verdict in words" \
    "$(sed -n '/id="thresholds"/,/<\/table>/p' "$T/th.html" | grep -o '<tr class="[a-z]*"><td class="s">[^<]*</td><td class="s">run</td><td class="n">[0-9.]*</td>.*<td>[^<]*\(<strong>FAIL</strong>\)\?' | sed 's/<[^>]*>/|/g; s/||*/|/g; s/|$//')" \
    "$(jget "$T/th.json" '"\n".join("|%s|run|%s|%s %s|%s|%s" % (t["expr"].replace("<", "&lt;"), "%.6g" % t["measured"], t["op"].replace("<", "&lt;"), "%.6g" % t["limit"], t["unit"], "pass" if t["pass"] else "FAIL") for t in r["thresholds"])')"
yb_serve_stop
yb_serve "$T/fleet.out" --devices 3 --restconf 127.0.0.1:0 --gnmi 127.0.0.1:0 \
    --write-inventory "$T/inv.yaml" || exit 1
check "a fleet run (--targets --fan-out) with --html" timeout 60 "$YB" run -q "$GN_CORPUS" \
    --targets "$T/inv.yaml" --fan-out -n 30 -c 2 --json "$T/fleet.json" --html "$T/fleet.html"
# (a real as the page writes it, %.6g: a p50 of exactly 2 ms is "2", not "2.0")
is "the page's per-target table lists the JSON's targets, with their figures (not their histograms)" \
    "$(sed -n '/id="targets"/,/<\/table>/p' "$T/fleet.html" | grep '^<tr><td' | sed 's/<[^>]*>/ /g; s/  */ /g; s/^ //; s/ $//')" \
    "$(jget "$T/fleet.json" '"\n".join(" ".join("%.6g" % t[k] if isinstance(t[k], float) else str(t[k]) for k in t if k != "histograms") for t in r["targets"])')"
yb_serve_stop

# ---- experiment sessions --html: one page over the matrix -----------------------
yb_serve "$T/serve2.out" --restconf 127.0.0.1:0 --gnmi 127.0.0.1:0 --self-signed || exit 1
check "experiment sessions --html" timeout 120 "$YB" experiment sessions -q --gnmi "$GURL" -k \
    -n 50,100 --json "$T/exp.json" --html "$T/exp.html"
"$CHECK" "$T/exp.html" "$T/exp.json" >"$T/expcheck.out" 2>&1
is "the experiment's page checks out against its JSON" "$?" 0
grep -v '^ok' "$T/expcheck.out" | head -10 | sed 's/^/# /'
is "one study table per configuration" "$(grep -c '<caption>gnmi, ' "$T/exp.html")" 2
like "the e2e plot overlays the four runs" "$(cat "$T/expcheck.out")" \
    '^ok e2e: every run with data overlaid \(4\)'
done_testing
