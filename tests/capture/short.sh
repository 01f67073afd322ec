#!/bin/bash
# tests/capture/short.sh -- flows that end before their first bytes can
# tell their protocol (a TLS record header cut at 2 bytes, part of the
# HTTP/2 preface, a lone method or status word), with and without the TCP
# handshake, from either side: no crash, the flow is counted as "too short
# to tell" and its bytes as unparsed.
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
done_testing
