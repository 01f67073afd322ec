#!/bin/bash
# bench/floor.sh's minimal clients count right: bench/floor_h1 against nginx
# and bench/floor_h2 against `yangblast serve --sink` (and python3-h2's
# h2bad.py), each run's count compared with the server's own (nginx's log,
# the sink's --stats, h2bad's --stats), and a misbehaving server ends a run
# with exit 1 and a message naming what was wrong.  Every run is bounded by
# `timeout 30`; exit 124 would mean a hang.  No timing is asserted.
. "${YB_SRCDIR:-.}/tests/lib.sh"
. "$YB_SRCDIR/tests/peers/peer.sh"
. "$YB_SRCDIR/tests/peers/nginx.sh"
. "$YB_SRCDIR/bench/lib.sh"
FL=${YB_BUILDDIR:-.}/bench
export NGINX_MAX_SECONDS=60

# fl NAME CMD...: runs bench/CMD, output in $T/NAME.out and $out, exit in $rc.
fl() {
    local n=$1
    shift
    timeout 30 "$FL/$@" >"$T/$n.out" 2>&1
    rc=$?
    out=$(cat "$T/$n.out")
}
# logged: "REQUESTS MATCHING" of nginx's log (MATCHING: GETs of $path
# answered 200 whose request is the file's length); empties the log.
logged() {
    local log
    log=$(nginx_log "$T/ng")
    awk -F'\t' -v p="$path" -v l="$(stat -c %s "$T/req.bin")" \
        '$4 == "GET" && $5 == p && $6 == 200 && $7 == l { m++ } END { print NR, m + 0 }' "$log"
    : >"$log"
}
stop_ng() { nginx_stop "$T/ng"; }

# ---- floor_h1 against nginx ---------------------------------------------------------
port=$(free_port)
nginx_start "$T/ng" "$port" || exit 1
at_exit stop_ng
bench_h1_workload "$T" get http 1 >"$T/first" || exit 1
read -r _ _ _ path <"$T/first"
bench_h1_request "$T" "127.0.0.1:$port" "$T/req.bin"
like "the request is wrk's: GET, Host and Accept" "$(cat "$T/req.bin")" \
    "^GET $path HTTP/1.1"$'\r'"\$"
logged >/dev/null

fl lvl floor_h1 127.0.0.1 "$port" 4 2000 "$T/req.bin"
is "floor_h1, 2000 requests on 4 connections: exit 0" "$rc" 0
like "... it counts 2000 answers, all 200 of one length" "$out" \
    '^floor_h1: requests 2000 conns 4 seconds [0-9.]+ user_s [0-9.]+ sys_s [0-9.]+ us_per_request [0-9.]+ status 200 response_bytes [1-9][0-9]* mode level poll_ns 0$'
is "... nginx logged 2000 requests, all the file's GET" "$(logged)" "2000 2000"

fl edge floor_h1 -e 127.0.0.1 "$port" 3 2000 "$T/req.bin"
like "edge-triggered (-e), 2000 requests on 3 connections" "$rc $out" '^0 floor_h1: requests 2000 conns 3 .* mode edge poll_ns 0$'
is "... nginx logged 2000" "$(logged)" "2000 2000"

fl poll floor_h1 -p 20us 127.0.0.1 "$port" 3 2000 "$T/req.bin"
like "polling 20 us before sleeping (-p), 2000 requests" "$rc $out" '^0 floor_h1: requests 2000 conns 3 .* mode level poll_ns 20000$'
is "... nginx logged 2000" "$(logged)" "2000 2000"

fl dur floor_h1 127.0.0.1 "$port" 5 1s "$T/req.bin"
n=$(sed -n 's/^floor_h1: requests \([0-9]*\) .*/\1/p' "$T/dur.out")
like "for 1 s on 5 connections: exit 0, some requests" "$rc $n" '^0 [1-9][0-9]*$'
is "... nginx logged exactly those (the ones in flight at 1 s finished)" "$(logged)" "$n $n"

stop_ng
# (a directory per peer: peer_start waits for its "listening" line)
peer_start "$T/trunc" badhttp.py truncated --max-seconds 60 || exit 1
fl trunc floor_h1 127.0.0.1 "$(peer_port "$T/trunc")" 2 10 "$T/req.bin"
like "a body cut short by a close: exit 1, named" "$rc $out" \
    '^1 floor_h1: connection [0-9]+, request 1: the server closed the connection$'
peer_stop "$T/trunc"
peer_start "$T/garbage" badhttp.py garbage --max-seconds 60 || exit 1
fl garbage floor_h1 127.0.0.1 "$(peer_port "$T/garbage")" 2 10 "$T/req.bin"
like "a garbage status line: exit 1, named" "$rc $out" "does not start with a status line 'HTTP/1.1 NNN'\$"
peer_stop "$T/garbage"
fl usage floor_h1 127.0.0.1 "$port" 2 5x "$T/req.bin"
like "a limit neither a count nor a duration: exit 2, named" "$rc $out" "^2 floor_h1: '5x': a request count"
fl usage floor_h1 127.0.0.1 0 2 5 "$T/req.bin"
like "port 0: exit 2, named" "$rc $out" "^2 floor_h1: port '0': an integer 1..65535"

# ---- floor_h2 against serve --sink and h2bad.py -------------------------------------
mkdir -p "$T/set"
gpath=$(bench_gnmi_set "$T/set") || exit 1
len=$(stat -c %s "$T/set/body.bin")
# sink_calls: "SET_CALLS BODIES_OK" of the stopped sink's --stats
# (BODIES_OK: at least SET_CALLS bodies' bytes received).
sink_calls() {
    yb_serve_stop
    jget "$T/st.json" "'%d %s' % (r['requests']['gnmi']['Set'], r['bytes_in']['gnmi'] >= r['requests']['gnmi']['Set'] * $len)"
}
yb_serve "$T/sink.out" --sink --gnmi 127.0.0.1:0 --restconf off --stats "$T/st.json" || exit 1
fl h2 floor_h2 127.0.0.1 "${GURL##*:}" 4 10 2000 "$gpath" "$T/set/body.bin"
is "floor_h2, 2000 Sets, 4 connections x 10 streams to the sink: exit 0" "$rc" 0
like "... it counts 2000 answers of one length" "$out" \
    '^floor_h2: requests 2000 conns 4 seconds [0-9.]+ user_s [0-9.]+ sys_s [0-9.]+ us_per_request [0-9.]+ response_data_bytes [1-9][0-9]* poll_ns 0$'
is "... the sink saw 2000 Set calls and their bodies" "$(sink_calls)" "2000 True"

yb_serve "$T/sink.out" --sink --gnmi 127.0.0.1:0 --restconf off --stats "$T/st.json" || exit 1
fl h2dur floor_h2 -p 20us 127.0.0.1 "${GURL##*:}" 2 3 1s "$gpath" "$T/set/body.bin"
n=$(sed -n 's/^floor_h2: requests \([0-9]*\) .*/\1/p' "$T/h2dur.out")
like "for 1 s, 2 connections x 3 streams, polling 20 us (-p): exit 0, some calls" "$rc $n" '^0 [1-9][0-9]*$'
is "... the sink saw exactly those" "$(sink_calls)" "$n True"

peer_start "$T/h2" h2bad.py --mode ok --stats "$T/h2.json" --max-seconds 60 || exit 1
fl h2ok floor_h2 127.0.0.1 "$(peer_port "$T/h2")" 2 5 200 "$gpath" "$T/set/body.bin"
like "python3-h2's server (h2bad.py ok): exit 0, 200 calls" "$rc $out" '^0 floor_h2: requests 200 '
peer_stop "$T/h2"
is "... it answered 200" "$(jget "$T/h2.json" 'r["answered"]')" 200
for m in "rst:RST_STREAM" "no-status:END_STREAM on DATA: an answer without trailers" \
    "non200:a trailers-only answer"; do
    peer_start "$T/${m%%:*}" h2bad.py --mode "${m%%:*}" --max-seconds 60 || exit 1
    fl h2bad floor_h2 127.0.0.1 "$(peer_port "$T/${m%%:*}")" 2 5 200 "$gpath" "$T/set/body.bin"
    like "h2bad.py ${m%%:*}: exit 1, named" "$rc $out" "^1 floor_h2: connection [0-9]+, stream [0-9]+: ${m#*:}"
    peer_stop "$T/${m%%:*}"
done
done_testing
