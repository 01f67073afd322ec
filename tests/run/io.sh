#!/bin/bash
# --io: plain TCP sessions read and write through the worker's io_uring
# (the default where the kernel allows it) or through libuv's epoll.  Both
# ways, against `yangblast serve`: small RESTCONF bodies (copied onto the
# ring), large ones (written at once, as with epoll), gNMI over h2c; the
# server's own counts and bytes agree with the report, and every
# request's times are in order (the ring's send time lies between the
# request's start and its first byte).  strace shows which way the bytes
# went, and the report says it (cpu.io).  Bad values and --io with a
# TLS-only target are refused.
. "$YB_SRCDIR/tests/lib.sh"
PY=/usr/bin/python3

"$YB" synth acl -n 200 -r 2 --name-prefix IO_S -o "$T/small.ybc" >/dev/null
"$YB" synth acl -n 50 -r 60 --name-prefix IO_L -o "$T/large.ybc" >/dev/null
"$YB" synth acl --proto gnmi -n 200 -r 2 --name-prefix IO_G -o "$T/gnmi.ybc" >/dev/null

# body_range CORPUS: the smallest and largest body, in bytes.
body_range() {
    "$YB" corpus cat "$1" | $PY -c '
import json, sys
n = [len(json.loads(l)["body"].encode()) for l in sys.stdin]
print(min(n), max(n))'
}
read -r smin smax <<<"$(body_range "$T/small.ybc")"
read -r lmin lmax <<<"$(body_range "$T/large.ybc")"
check "the small bodies fit the ring's copy (<= 4096 bytes: $smin..$smax)" [ "$smax" -le 4096 ]
check "the large ones do not (> 4096 bytes: $lmin..$lmax)" [ "$lmin" -gt 4096 ]

# logcheck FILE: "LINES OK" when every successful request's times are in
# order (due <= start <= sent <= first byte <= done), else the first
# offending line.
logcheck() {
    $PY - "$1" <<'PYEOF'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
ok = 0
for d in recs:
    if d["error"] is not None:
        continue
    t = [d["t_due_ns"], d["t_start_ns"], d["t_sent_ns"], d["t_first_byte_ns"], d["t_done_ns"]]
    if None in t or t != sorted(t):
        sys.exit("times out of order: %r" % d)
    ok += 1
print(len(recs), ok)
PYEOF
}

N=600
for mode in uring epoll; do
    yb_serve "$T/serve.$mode" --restconf 127.0.0.1:0 --gnmi 127.0.0.1:0 --stats "$T/stats.$mode.json" ||
        { echo "Bail out! serve did not start"; exit 1; }
    out_bytes=0
    for c in small large gnmi; do
        url=$RURL
        [ $c = gnmi ] && url=$GURL
        timeout 60 "$YB" run "$T/$c.ybc" --target "$url" --io $mode -c 4 -t 2 -n $N -q \
            --log "$T/$mode.$c.jsonl" --json "$T/$mode.$c.json" >"$T/$mode.$c.out" 2>&1
        rc=$?
        is "--io $mode, $c: exit 0" "$rc" 0
        is "--io $mode, $c: $N requests, all ok" \
            "$(jget "$T/$mode.$c.json" 'r["summary"]["requests_ok"]')" $N
        is "--io $mode, $c: every request's times in order" "$(logcheck "$T/$mode.$c.jsonl")" "$N $N"
        want=$([ $mode = uring ] && echo '["io_uring",2]' || echo '["epoll",0]')
        is "--io $mode, $c: the report says so, of both threads" \
            "$(jget "$T/$mode.$c.json" '[r["cpu"]["io"], r["cpu"]["io_uring_threads"]]')" "$want"
        [ $c = gnmi ] ||
            out_bytes=$((out_bytes + $(jget "$T/$mode.$c.json" 'r["summary"]["data_bytes"]')))
    done
    yb_serve_stop
    is "--io $mode: the server answered $N RESTCONF PATCHes twice over" \
        "$(jget "$T/stats.$mode.json" 'r["requests"]["restconf"]["PATCH"]')" $((2 * N))
    is "--io $mode: and $N gNMI Set calls" \
        "$(jget "$T/stats.$mode.json" 'r["requests"]["gnmi"]["Set"]')" $N
    is "--io $mode: the server received every RESTCONF body byte the reports say were sent" \
        "$(jget "$T/stats.$mode.json" 'r["bytes_in"]["restconf"]')" "$out_bytes"
done

# Which way the bytes went: with the ring, io_uring_enter and next to no
# read/write calls on the sockets; with epoll, no io_uring at all and a
# read and a write per request.  gNMI on the ring: the reads only (its
# writes go to the kernel at once from the prepared bodies, uncopied).
yb_serve "$T/serve.strace" --restconf 127.0.0.1:0 --gnmi 127.0.0.1:0 ||
    { echo "Bail out! serve did not start"; exit 1; }
# calls TRACE NAME...: how many calls of the NAMEs strace -c counted.
calls() {
    local f=$1; shift
    $PY - "$f" "$@" <<'PYEOF'
import sys
names, n = set(sys.argv[2:]), 0
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) >= 5 and f[-1] in names and f[3].isdigit():
        n += int(f[3])
print(n)
PYEOF
}
for mode in uring epoll; do
    strace -f -qq -c -o "$T/strace.$mode" "$YB" run "$T/small.ybc" --target "$RURL" --io $mode \
        -c 2 -n 400 -q --json "$T/strace.$mode.json" >/dev/null 2>&1
    is "strace, --io $mode: 400 ok" "$(jget "$T/strace.$mode.json" 'r["summary"]["requests_ok"]')" 400
done
strace -f -qq -c -o "$T/strace.gnmi" "$YB" run "$T/gnmi.ybc" --target "$GURL" --io uring \
    -c 2 -n 400 -q --json "$T/strace.gnmi.json" >/dev/null 2>&1
is "strace, gNMI --io uring: 400 ok" "$(jget "$T/strace.gnmi.json" 'r["summary"]["requests_ok"]')" 400
yb_serve_stop
u_enter=$(calls "$T/strace.uring" io_uring_enter)
u_rw=$(calls "$T/strace.uring" read write readv writev recvfrom sendto)
e_enter=$(calls "$T/strace.epoll" io_uring_enter)
e_rw=$(calls "$T/strace.epoll" read write readv writev recvfrom sendto)
diag "io_uring_enter / read+write calls: uring $u_enter / $u_rw, epoll $e_enter / $e_rw"
check "--io uring: the requests went through io_uring_enter ($u_enter calls for 400)" \
    [ "$u_enter" -ge 200 ]
check "--io uring: not through read and write ($u_rw calls for 400 requests)" [ "$u_rw" -lt 200 ]
check "--io epoll: no io_uring ($e_enter calls)" [ "$e_enter" -eq 0 ]
check "--io epoll: a read and a write per request ($e_rw calls for 400)" [ "$e_rw" -ge 800 ]
g_enter=$(calls "$T/strace.gnmi" io_uring_enter)
g_w=$(calls "$T/strace.gnmi" write writev sendto sendmsg)
g_r=$(calls "$T/strace.gnmi" read readv recvfrom recvmsg)
diag "gNMI --io uring: io_uring_enter $g_enter, writes $g_w, reads $g_r"
check "gNMI --io uring: the ring carried its answers ($g_enter io_uring_enter for 400)" \
    [ "$g_enter" -ge 100 ]
check "gNMI --io uring: not read(2) ($g_r reads for 400)" [ "$g_r" -lt 200 ]
check "gNMI --io uring: its requests went out at once, uncopied ($g_w writes for 400)" [ "$g_w" -ge 200 ]

# Refused: a bad value; --io where every target is TLS.
"$YB" run "$T/small.ybc" --target http://127.0.0.1:9 --io fast >"$T/bad.out" 2>&1
rc=$?
is "--io fast: exit 2" "$rc" 2
like "--io fast: says what it takes" "$(cat "$T/bad.out")" "--io 'fast': expected auto, uring or epoll"
"$YB" run "$T/small.ybc" --target https://127.0.0.1:9 --io epoll >"$T/tls.out" 2>&1
rc=$?
is "--io with a TLS target: exit 2" "$rc" 2
like "--io with a TLS target: says why" "$(cat "$T/tls.out")" "--io applies to plain targets"

done_testing
