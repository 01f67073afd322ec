# bench/lib.sh -- what the bench scripts share.  Source it (bash) with $YB
# set, after `set -u`; needs /usr/bin/python3 and taskset.
#
#   bench_rusage RU OUT CMD...   runs CMD on CPU 1 (stdout and stderr to
#                                OUT); writes "maxrss_kb user_s sys_s" of
#                                its rusage (microsecond resolution) to RU;
#                                fails when CMD fails
#   bench_sink_start DIR [ARG...]
#                                a `yangblast serve --sink ARG...` (RESTCONF
#                                only) on CPU 0 writing DIR/st.json on exit;
#                                sets SINK_PID and SINK_URL; fails if it did
#                                not start
#   bench_sink_stop              stops it (SIGINT: it writes its --stats);
#                                safe to call twice
#   bench_range V...             prints "MIN..MAX, median MED" of the numbers
#   bench_gnmi_set DIR           one synthesized gNMI Set: DIR/set.ybc for
#                                yangblast, its gRPC-framed body DIR/body.bin
#                                for h2load -d; prints the call's path
#   bench_scratch                makes the scratch directory W, removed on
#                                exit after the server in srvpid (a script's
#                                own, started with srvpid=$!) is stopped
#                                (bench_server_stop: SIGTERM, reaped)
#   bench_cpu OUT CMD...         bench_rusage of CMD (on CPU 1, output to
#                                OUT); prints its user+sys seconds and writes
#                                "user sys" to OUT.us, or prints FAILED
#   bench_us_per CPU_S N         microseconds per request, one decimal
#   bench_h1_workload DIR OP SCHEME NREC
#                                synthesizes NREC ACL records (synth --op OP:
#                                create or get) as DIR/acl.ybc for yangblast,
#                                wrk's Lua script of the first one as
#                                DIR/patch.lua and that record as DIR/first.json;
#                                prints "METHOD BODY_LEN AVG_BODY_LEN PATH"
#   bench_h1_request DIR HOSTPORT OUT
#                                writes to OUT the bytes wrk sends for
#                                DIR/first.json to HOSTPORT (request line, Host,
#                                Content-Type, Accept, Content-Length, body)
#   bench_nginx_pinned DIR PORT [tls]
#                                nginx_start (tests/peers/nginx.sh, sourced by
#                                the caller) with master and workers on CPU 0
#   bench_nginx_served DIR       prints how many requests nginx logged since the
#                                log was last emptied, and empties it
#   bench_gnmi_sink_start DIR PORT CORE [ARGS...]
#                                a `yangblast serve --sink` (gNMI only, ARGS
#                                added, e.g. TLS) on 127.0.0.1:PORT pinned to
#                                CORE, its --stats to DIR/stats.json, as srvpid
#                                (stop it with bench_server_stop); returns once
#                                it accepts connections, 1 if it does not
#   bench_wait_port PORT LOG     waits (up to 5 s) until 127.0.0.1:PORT accepts
#                                connections; 1 (with LOG on stderr) if not
#   bench_gnmi_sink_counts DIR   after it stopped: "SET_CALLS BYTES_IN" of its
#                                --stats

bench_rusage() {
    local ru=$1 out=$2
    shift 2
    taskset -c 1 /usr/bin/python3 -c '
import os, sys
pid = os.fork()
if pid == 0:
    fd = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 1); os.dup2(fd, 2)
    os.execvp(sys.argv[3], sys.argv[3:])
_, st, ru = os.wait4(pid, 0)
open(sys.argv[1], "w").write("%d %.4f %.4f\n" % (ru.ru_maxrss, ru.ru_utime, ru.ru_stime))
sys.exit(0 if os.waitstatus_to_exitcode(st) == 0 else 1)
' "$ru" "$out" "$@"
}

SINK_PID=
bench_sink_start() {
    local dir=$1
    shift
    rm -f "$dir/serve.out" # (the last server's line must not be taken for this one's)
    taskset -c 0 "$YB" serve --sink --restconf 127.0.0.1:0 --gnmi off --stats "$dir/st.json" "$@" \
        >"$dir/serve.out" 2>&1 &
    SINK_PID=$!
    for _ in $(seq 50); do grep -q '^serve:' "$dir/serve.out" && break; sleep 0.1; done
    SINK_URL=$(awk '/^serve:/ { print $3; exit }' "$dir/serve.out")
    [ -n "$SINK_URL" ] || { echo "# serve did not start"; cat "$dir/serve.out"; return 1; }
}

bench_sink_stop() {
    [ -n "$SINK_PID" ] || return 0
    kill -INT "$SINK_PID" 2>/dev/null
    wait "$SINK_PID" 2>/dev/null
    SINK_PID=
}

bench_range() {
    /usr/bin/python3 -c "import sys, statistics as st; v = sorted(map(float, sys.argv[1:]))
print('%.2f..%.2f, median %.2f' % (v[0], v[-1], st.median(v)))" "$@"
}

bench_gnmi_set() {
    "$YB" synth acl --proto gnmi -n 1 -o "$1/set.ybc" >/dev/null || return 1
    "$YB" corpus cat "$1/set.ybc" | /usr/bin/python3 -c '
import base64, json, sys
rec = json.loads(sys.stdin.readline())
open(sys.argv[1], "wb").write(base64.b64decode(rec["body_base64"]))
print(rec["path"])' "$1/body.bin"
}

srvpid=""
bench_server_stop() {
    if [ -n "$srvpid" ]; then
        kill "$srvpid" 2>/dev/null
        wait "$srvpid" 2>/dev/null
    fi
    srvpid=""
}

bench_scratch() {
    W=$(mktemp -d "${TMPDIR:-/tmp}/yb-bench.XXXXXX")
    trap 'bench_server_stop; rm -rf "$W"' EXIT
}

bench_cpu() {
    local out=$1
    shift
    bench_rusage "$out.ru" "$out" "$@" || { echo FAILED; return 1; }
    awk '{ printf "%.4f %.4f\n", $2, $3 }' "$out.ru" >"$out.us"
    awk '{ printf "%.4f\n", $2 + $3 }' "$out.ru"
}

bench_us_per() { /usr/bin/python3 -c "print('%.1f' % ($1 * 1e6 / $2))"; }

bench_h1_workload() {
    local dir=$1 op=$2 scheme=$3 nrec=$4
    "$YB" synth acl -n "$nrec" --op "$op" --scheme "$scheme" -o "$dir/acl.ybc" >/dev/null || return 1
    "$YB" corpus cat "$dir/acl.ybc" | /usr/bin/python3 -c '
import json, sys
recs = [json.loads(l) for l in sys.stdin]
r = recs[0]
def lua(s):
    return "\"" + "".join(c if (c.isascii() and c.isalnum()) or c in " :/-_.,=+{}[]" else "\\%03d" % b
                          for c in s for b in c.encode()) + "\""
hdr = {h["name"]: h["value"] for h in r["headers"]}
with open(sys.argv[1], "w") as f:
    f.write("wrk.method = %s\n" % lua(r["method"]))
    f.write("wrk.path = %s\n" % lua(r["path"]))
    if r["body"]:
        f.write("wrk.body = %s\n" % lua(r["body"]))
    for k in ("Content-Type", "Accept"):
        if k in hdr:
            f.write("wrk.headers[%s] = %s\n" % (lua(k), lua(hdr[k])))
json.dump(r, open(sys.argv[2], "w"))
avg = sum(len(x["body"].encode()) for x in recs) / len(recs)
print("%s %d %.0f %s" % (r["method"], len(r["body"].encode()), avg, r["path"]))
' "$dir/patch.lua" "$dir/first.json"
}

bench_h1_request() {
    /usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
hdr = {h["name"]: h["value"] for h in r["headers"]}
body = r["body"].encode()
lines = ["%s %s HTTP/1.1" % (r["method"], r["path"]), "Host: " + sys.argv[2]]
lines += ["%s: %s" % (k, hdr[k]) for k in ("Content-Type", "Accept") if k in hdr]
if body:
    lines.append("Content-Length: %d" % len(body))
open(sys.argv[3], "wb").write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
' "$1/first.json" "$2" "$3"
}

bench_nginx_pinned() {
    local p
    nginx_start "$@" || return 1
    taskset -a -p -c 0 "$(nginx_pid "$1")" >/dev/null
    for p in $(pgrep -P "$(nginx_pid "$1")"); do taskset -a -p -c 0 "$p" >/dev/null; done
}

bench_nginx_served() {
    local log
    log=$(nginx_log "$1")
    wc -l <"$log"
    : >"$log"
}

bench_gnmi_sink_start() {
    local dir=$1 port=$2 core=$3
    shift 3
    rm -f "$dir/stats.json" "$dir/server.log"
    taskset -c "$core" "$YB" serve --sink --gnmi "127.0.0.1:$port" --restconf off "$@" \
        --stats "$dir/stats.json" >"$dir/server.log" 2>&1 &
    srvpid=$!
    bench_wait_port "$port" "$dir/server.log"
}

bench_wait_port() {
    for _ in $(seq 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
        sleep 0.05
    done
    echo "nothing listens on 127.0.0.1:$1 after 5 s; the server said:" >&2
    cat "$2" >&2
    return 1
}

bench_gnmi_sink_counts() {
    /usr/bin/python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))
print(s["requests"]["gnmi"]["Set"], s["bytes_in"]["gnmi"])' "$1/stats.json" 2>/dev/null
}
