#!/usr/bin/python3
"""mkpcap.py OUT MEGABYTES TEMPLATE.pcap... -- a large capture for
bench/capture_vs_tshark.sh, made from small recorded ones.

Each template (classic pcap, Ethernet/IPv4/TCP, as tcpdump records
loopback) is replayed again and again as a new copy of its connections:
the client's address (the sender of the first packet; the server is the
port it sent it to) becomes a fresh
10.x.y.z per copy, the server keeps its address and port, and the IPv4 and
TCP checksums are updated for the new address (RFC 1624).  16 copies are
in flight at once, their packets interleaved, so the file looks like many
concurrent connections rather than one after the other.  Timestamps rise
by 10 us per packet.  Stops after the copy that crosses MEGABYTES (10^6
bytes) of output, so every connection in the file is complete.

Prints one line: bytes, packets, copies, and PORT=TEMPLATE for each
template's server port (for tshark's decode-as)."""
import struct
import sys

ACTIVE = 16


def read_template(path):
    with open(path, "rb") as f:
        d = f.read()
    magic = struct.unpack("<I", d[:4])[0]
    if magic in (0xA1B2C3D4, 0xA1B23C4D):
        end = "<"
    elif magic in (0xD4C3B2A1, 0x4D3CB2A1):
        end = ">"
    else:
        sys.exit("%s: not a classic pcap file" % path)
    linktype = struct.unpack(end + "I", d[20:24])[0]
    if linktype != 1:
        sys.exit("%s: link type %d, only Ethernet (1) is supported" % (path, linktype))
    pkts, o = [], 24
    while o + 16 <= len(d):
        _, _, caplen, _ = struct.unpack(end + "IIII", d[o:o + 16])
        pkts.append(d[o + 16:o + 16 + caplen])
        o += 16 + caplen
    client = server_port = None
    out = []
    for p in pkts:
        if len(p) < 34 or p[12:14] != b"\x08\x00" or p[23] != 6:
            sys.exit("%s: a packet that is not Ethernet/IPv4/TCP" % path)
        ihl = (p[14] & 15) * 4
        src, dst = p[26:30], p[30:34]
        sport, dport = struct.unpack(">HH", p[14 + ihl:18 + ihl])
        if client is None:
            client, server_port = src, dport
        # (offset of the client's address, TCP checksum offset); on
        # loopback both ends have the same address: the port tells them
        # apart
        from_server = sport == server_port
        if (dst if from_server else src) != client:
            sys.exit("%s: a packet of another client or server" % path)
        out.append((p, 30 if from_server else 26, 14 + ihl + 16))
    return out, client, server_port


def csum_fix(csum, old, new):
    """RFC 1624 eqn. 3: the checksum after 16-bit words old -> new."""
    s = (~csum & 0xFFFF)
    for i in range(0, len(old), 2):
        s += (~((old[i] << 8) | old[i + 1]) & 0xFFFF) + ((new[i] << 8) | new[i + 1])
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    out_path, limit = sys.argv[1], float(sys.argv[2]) * 1e6
    names = sys.argv[3:]
    templates = [read_template(p) for p in names]
    f = open(out_path, "wb", buffering=1 << 20)
    f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, 1))
    written, npkt, copies, t_us = 24, 0, 0, 1767225600 * 1000000
    active = []  # [packets, client, next index, new client address]
    nxt = 0
    stop = False
    while True:
        while not stop and len(active) < ACTIVE:
            pk, client, _ = templates[nxt % len(templates)]
            nxt += 1
            copies += 1
            a = struct.pack(">BBBB", 10, (copies >> 16) & 255, (copies >> 8) & 255,
                            copies & 255)
            active.append([pk, client, 0, a])
        if not active:
            break
        for c in list(active):
            pk, client, i, a = c
            p, aoff, toff = pk[i]
            b = bytearray(p)
            b[aoff:aoff + 4] = a
            ipc = struct.unpack(">H", b[24:26])[0]
            b[24:26] = struct.pack(">H", csum_fix(ipc, client, a))
            if len(b) >= toff + 2:
                tc = struct.unpack(">H", b[toff:toff + 2])[0]
                b[toff:toff + 2] = struct.pack(">H", csum_fix(tc, client, a))
            f.write(struct.pack("<IIII", t_us // 1000000, t_us % 1000000, len(b), len(b)))
            f.write(b)
            t_us += 10
            written += 16 + len(b)
            npkt += 1
            c[2] = i + 1
            if c[2] == len(pk):
                active.remove(c)
        if written >= limit:
            stop = True
    f.close()
    ports = " ".join("%d=%s" % (t[2], n) for t, n in zip(templates, names))
    print("%d bytes %d packets %d copies %s" % (written, npkt, copies, ports))


main()
