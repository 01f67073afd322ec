#!/bin/bash
# tests/capture/frags.sh -- IPv4 and IPv6 fragments are reassembled: the
# committed captures fragmented by pcaptool.py (in order, reversed,
# duplicated) give the same records; a conflicting overlap drops its
# datagram, a fragment 31 s late times out, a flood of fragments that
# never complete is bounded (oldest evicted), fragments cut by the
# snapshot length are invalid; all counted in the text and the JSON, the
# flow count as tshark's.
. "$YB_SRCDIR/tests/lib.sh"
C=$YB_SRCDIR/captures
PT="/usr/bin/python3 $YB_SRCDIR/tests/capture/pcaptool.py"
nots() { "$YB" corpus cat "$1" | sed 's/"timestamp_ns":[0-9]*,//'; }
fj() { jget "$T/x.json" "$1"; }

for base in h1-keepalive gnmi-interleaved; do
    "$YB" capture -q -r "$C/$base.pcap" -o "$T/ref.ybc"
    ref=$(nots "$T/ref.ybc")
    $PT "$C/$base.pcap" "$T/$base-v6.pcap" ipv6
    for v in 4 6; do
        src=$C/$base.pcap
        [ $v = 6 ] && src=$T/$base-v6.pcap
        for op in frag fragrev fragdup; do
            $PT "$src" "$T/f.pcap" $op 64
            timeout 60 "$YB" capture -r "$T/f.pcap" -o "$T/x.ybc" --json "$T/x.json" 2>"$T/x.err"
            is "$base, IPv$v, $op 64: same records" "$(nots "$T/x.ybc")" "$ref"
            like "$base, IPv$v, $op 64: datagrams reassembled, none dropped but late duplicates" \
                "$(fj '[r["ip_fragments"]["reassembled"] > 0, r["ip_fragments"]["dropped_datagrams"]]')" \
                '^\[true,\{"incomplete":[0-9]+,"invalid":0,"over_caps":0,"overlap":0,"timeout":0\}\]$'
        done
        like "$base, IPv$v: the text says so" "$(cat "$T/x.err")" \
            '^ip fragments: [0-9]+, [0-9]+ datagram\(s\) reassembled; dropped: 0 incomplete after 30s'
    done
done
# tshark sees the same connections in the fragmented captures.
if command -v tshark >/dev/null; then
    for f in "$T"/h1-keepalive-v6.pcap "$C/gnmi-interleaved.pcap"; do
        $PT "$f" "$T/f.pcap" frag 64
        "$YB" capture -q -r "$T/f.pcap" -o "$T/x.ybc" --json "$T/x.json"
        is "$(basename "$f") fragmented: flows as tshark's tcp.stream" "$(fj 'r["flows"]["total"]')" \
            "$(tshark -r "$T/f.pcap" -T fields -e tcp.stream 2>/dev/null | sort -u | grep -c .)"
    done
fi

# A second copy of a fragment with other bytes: its datagram is dropped.
$PT "$C/h1-keepalive.pcap" "$T/f.pcap" fragconflict 64
"$YB" capture -q -r "$T/f.pcap" -o "$T/x.ybc" --json "$T/x.json"
is "conflicting overlap: 1 datagram dropped, its segment a gap" \
    "$(fj '[r["ip_fragments"]["dropped_datagrams"]["overlap"], r["gaps"]]')" "[1,1]"
is "conflicting overlap: the 3 requests, one without its response" \
    "$("$YB" corpus cat "$T/x.ybc" | grep -c '"path"'):$(fj 'r["requests"]["no_response"]')" "3:1"
# The last fragment 31 s late: timed out (capture time, not wall clock).
$PT "$C/h1-keepalive.pcap" "$T/f.pcap" fragtimeout 64
"$YB" capture -q -r "$T/f.pcap" -o "$T/x.ybc" --json "$T/x.json"
is "a fragment 31 s late: 1 timed out, its lone fragment incomplete at the end" \
    "$(fj '[r["ip_fragments"]["dropped_datagrams"]["timeout"], r["ip_fragments"]["dropped_datagrams"]["incomplete"]]')" "[1,1]"
# A flood of first fragments that never complete: bounded, counted, the
# real datagrams still reassembled.
"$YB" capture -q -r "$C/gnmi-interleaved.pcap" -o "$T/ref.ybc"
$PT "$C/gnmi-interleaved.pcap" "$T/f.pcap" fragflood 256
check_rc "fragment flood: exit 0" 0 timeout 60 "$YB" capture -q -r "$T/f.pcap" -o "$T/x.ybc" --json "$T/x.json"
is "fragment flood: the 16 Sets still there" "$(nots "$T/x.ybc")" "$(nots "$T/ref.ybc")"
is "fragment flood: evicted over the caps, at most 1024 waiting at the end" \
    "$(fj '[r["ip_fragments"]["dropped_datagrams"]["over_caps"] > 0, r["ip_fragments"]["dropped_datagrams"]["incomplete"]]')" \
    "[true,1024]"
# Fragments cut by the snapshot length cannot be reassembled.
$PT "$C/h1-keepalive.pcap" "$T/f.pcap" frag 64
$PT "$T/f.pcap" "$T/cut.pcap" snaplen 80
check_rc "snaplen-cut fragments: exit 0" 0 "$YB" capture -q -r "$T/cut.pcap" -o "$T/x.ybc" --json "$T/x.json"
like "snaplen-cut fragments: invalid datagrams counted" "$(fj 'r["ip_fragments"]["dropped_datagrams"]["invalid"]')" '^[1-9]'
# Garbage in the fragments: no crash.
$PT "$C/h1-keepalive.pcap" "$T/g0.pcap" garbage
$PT "$T/g0.pcap" "$T/g.pcap" frag 64
check_rc "fragments with garbage payloads: exit 0" 0 timeout 60 "$YB" capture -q -r "$T/g.pcap" -o "$T/x.ybc"
done_testing
