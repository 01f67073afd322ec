#!/bin/bash
# tests/capture/short.sh -- flows that end before their first bytes can
# tell their protocol (a TLS record header cut at 2 bytes, part of the
# HTTP/2 preface, a lone method or status word), with and without the TCP
# handshake, from either side: no crash, the flow is counted as "too short
# to tell" and its bytes as unparsed.  And HTTP/1.1 joined mid-stream whose
# next request line and status line are split right at their start.
. "$YB_SRCDIR/tests/lib.sh"
PT="/usr/bin/python3 $YB_SRCDIR/tests/capture/pcaptool.py"

# The capture that once crashed: 96 bytes, one segment, no SYN, "16 03".
$PT flow "$T/tls2.pcap" --nosyn --nofin c:1603
is "the 96-byte capture" "$(stat -c %s "$T/tls2.pcap")" 96

# name | pcaptool flow arguments | unparsed bytes
while IFS='|' read -r name args bytes; do
    # shellcheck disable=SC2086
    $PT flow "$T/$name.pcap" $args
    "$YB" capture -r "$T/$name.pcap" -o "$T/$name.ybc" --json "$T/$name.json" 2>"$T/$name.err"
    rc=$?
    is "$name: exit 0" "$rc" 0
    like "$name: no sanitizer report" "$(cat "$T/$name.err")" '^capture: '
    is "$name: flows total/other/too_short, requests, unparsed bytes" \
        "$(jget "$T/$name.json" '[r["flows"]["total"], r["flows"]["other"], r["flows"]["too_short"], r["requests"]["total"], r["dropped_bytes"]["unparsed"]]')" \
        "[1,1,1,0,$bytes]"
    like "$name: text report says so" "$(cat "$T/$name.err")" '; 1 too short to tell their protocol\)'
done <<'CASES'
tls2-nosyn|--nosyn --nofin c:1603|2
tls1-nosyn|--nosyn --nofin c:16|1
tls4-syn|c:16030100|4
tls-both-sides|--nosyn c:1603 s:1603|4
tls-server-only|s:1603|2
preface-part|--nosyn c:505249202a20485454|9
method-word|--nosyn --nofin c:474554|3
status-word|s:48545450|4
appdata-2|--nosyn --nofin c:1703|2
CASES

# Mid-stream HTTP/1.1: the tail of an earlier message, then "GE" | "T /a ..."
# and "HT" | "TP/1.1 200 ...": the line starts are kept until they can tell.
$PT flow "$T/split.pcap" --nosyn \
    c:$(printf 'x}\r\n' | xxd -p) c:$(printf 'GE' | xxd -p) \
    c:$(printf 'T /restconf/data/a HTTP/1.1\r\nHost: sw\r\n\r\n' | xxd -p | tr -d '\n') \
    s:$(printf 'ok\r\n' | xxd -p) s:$(printf 'HT' | xxd -p) \
    s:$(printf 'TP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n' | xxd -p | tr -d '\n')
"$YB" capture -q -r "$T/split.pcap" -o "$T/split.ybc" --json "$T/split.json"
is "split line starts: the request and its status" \
    "$("$YB" corpus cat "$T/split.ybc" | grep -o '"path":"[^"]*"\|"expected_status":[0-9]*' | tr '\n' ' ')" \
    '"path":"/restconf/data/a" "expected_status":201 '
is "split line starts: only the earlier tails unparsed" \
    "$(jget "$T/split.json" 'r["dropped_bytes"]["unparsed"]')" 8
done_testing
