#!/usr/bin/python3
"""pcaptool.py -- rewrite classic pcap files (Ethernet/IPv4/TCP, as tcpdump
records loopback) for yangblast's capture tests.

  pcaptool.py IN OUT OP [ARG]
    link sll|sll2|null|loop|raw|vlan   re-encapsulate every packet
    ipv6                               IPv4 -> IPv6 (addresses ::ffff:a.b.c.d)
    snaplen N                          cut every packet to N bytes
    swap                               swap each pair of adjacent data segments
    dup                                send every data segment twice
    overlap                            before each data segment > 20 bytes,
                                       send its first half alone
    drop N                             drop the N-th data segment (0-based)
    noack                              clear the ACK flag of every packet (a
                                       capture whose ACKs tell nothing)
    nosyn                              drop the first N=4 packets of the file
                                       (handshake + first request: mid-stream)
    truncate N                         keep only the first N bytes of the file
    rstlate                            cut after the last data segment; the
                                       server resets, then late packets: both
                                       sides' last data segments again, an
                                       ACK, and a RST answering them
    finlate                            after the closing FINs, late packets:
                                       both sides' last data segments again,
                                       the server's FIN again, an ACK
    frag N                             IP-fragment (IPv4 or IPv6) every packet
                                       whose IP payload is over N bytes (N a
                                       multiple of 8) into N-byte fragments
    fragrev N | fragdup N              the same, fragments of each datagram in
                                       reverse order | each sent twice
    fragconflict N                     the same, and the 2nd data packet's first
                                       fragment comes again with other bytes
    fragflood N                        the same, and before each packet 40
                                       first fragments (MF) of datagrams that
                                       never complete
    fragtimeout N                      the same, and the last fragment of the
                                       2nd data packet comes 31 s later (after
                                       the rest of the capture)
    again                              the connection twice on the same ports
                                       (port reuse: 1 s later, new sequence
                                       numbers)
    garbage                            replace TCP payloads by random bytes

  pcaptool.py flow OUT [--nosyn] [--nofin] SEG...
    writes one TCP connection 127.0.0.1:40000 -> 127.0.0.1:443 (Ethernet):
    the handshake unless --nosyn, then each SEG (c:HEX from the client,
    s:HEX from the server) in order, then FIN from both unless --nofin.

flow_pcap(path, segs, syn=True, fin=True) does the same from Python
(segs: a list of (0 = client / 1 = server, bytes)).
"""
import random
import struct
import sys


def read(path):
    b = open(path, "rb").read()
    magic = struct.unpack("<I", b[:4])[0]
    assert magic in (0xa1b2c3d4, 0xa1b23c4d), "classic little-endian pcap expected"
    link = struct.unpack("<I", b[20:24])[0]
    pk, off = [], 24
    while off + 16 <= len(b):
        s, us, cl, wl = struct.unpack("<IIII", b[off:off + 16])
        pk.append([s, us, b[off + 16:off + 16 + cl], wl])
        off += 16 + cl
    return b[:24], link, pk


def write(path, hdr, link, pk):
    out = bytearray(hdr[:20] + struct.pack("<I", link))
    for s, us, d, wl in pk:
        out += struct.pack("<IIII", s, us, len(d), max(wl, len(d))) + d
    open(path, "wb").write(out)


def tcp_packet(payload, seq, ack, flags, sport, dport):
    tcp = struct.pack(">HHIIBBHHH", sport, dport, seq & 0xffffffff, ack & 0xffffffff, 5 << 4,
                      flags, 65535, 0, 0)
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp) + len(payload), 0, 0, 64, 6, 0,
                     bytes([127, 0, 0, 1]), bytes([127, 0, 0, 1]))
    return b"\0" * 12 + b"\x08\x00" + ip + tcp + payload


def flow_pcap(path, segs, syn=True, fin=True, sport=40000, dport=443):
    """One TCP connection; segments larger than 60000 bytes are split."""
    ports = [(sport, dport), (dport, sport)]
    seq = [1000, 5000]
    pk = []
    if syn:
        pk.append(tcp_packet(b"", seq[0], 0, 0x02, *ports[0]))
        pk.append(tcp_packet(b"", seq[1], seq[0] + 1, 0x12, *ports[1]))
        seq = [seq[0] + 1, seq[1] + 1]
        pk.append(tcp_packet(b"", seq[0], seq[1], 0x10, *ports[0]))
    for d, data in segs:
        for off in range(0, len(data), 60000):
            part = data[off:off + 60000]
            pk.append(tcp_packet(part, seq[d], seq[1 - d], 0x18, *ports[d]))
            seq[d] += len(part)
    if fin:
        for d in (0, 1):
            pk.append(tcp_packet(b"", seq[d], seq[1 - d], 0x11, *ports[d]))
            seq[d] += 1
    hdr = struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1)
    write(path, hdr, 1, [[1, i, p, len(p)] for i, p in enumerate(pk)])


def ip_of(eth):
    return eth[14:]


def tcp_payload_len(ip):
    ihl = (ip[0] & 15) * 4
    tot = struct.unpack(">H", ip[2:4])[0]
    doff = (ip[ihl + 12] >> 4) * 4
    return tot - ihl - doff, ihl + doff


def tcp_fields(eth):
    """(ip header, tcp offset, sport, dport, seq, ack, flags) of an Ethernet frame."""
    ip = ip_of(eth)
    ihl = (ip[0] & 15) * 4
    sport, dport, seq, ack = struct.unpack(">HHII", ip[ihl:ihl + 12])
    return ip, ihl, sport, dport, seq, ack, ip[ihl + 13]


def fragments(eth, n, ident):
    """IP fragments of one Ethernet frame (payload pieces of n bytes), or
    [eth] when its IP payload is not over n."""
    et = eth[12:14]
    if et == b"\x08\x00":
        ip = eth[14:]
        ihl = (ip[0] & 15) * 4
        tot = struct.unpack(">H", ip[2:4])[0]
        pay = ip[ihl:tot]
        if len(pay) <= n:
            return [eth]
        out = []
        for off in range(0, len(pay), n):
            part = pay[off:off + n]
            h = bytearray(ip[:ihl])
            struct.pack_into(">HHH", h, 2, ihl + len(part), ident & 0xffff,
                             (0x2000 if off + n < len(pay) else 0) | (off // 8))
            out.append(eth[:14] + bytes(h) + part)
        return out
    if et == b"\x86\xdd":
        ip = eth[14:]
        plen = struct.unpack(">H", ip[4:6])[0]
        nh, pay = ip[6], ip[40:40 + plen]
        if len(pay) <= n:
            return [eth]
        out = []
        for off in range(0, len(pay), n):
            part = pay[off:off + n]
            h = bytearray(ip[:40])
            struct.pack_into(">H", h, 4, 8 + len(part))
            h[6] = 44
            fh = struct.pack(">BBHI", nh, 0, off | (1 if off + n < len(pay) else 0), ident)
            out.append(eth[:14] + bytes(h) + fh + part)
        return out
    return [eth]


def fragment_all(pk, op, n):
    """The frag* ops (see the usage)."""
    out, ident, datas = [], 0x1000, 0
    for p in pk:
        fr = fragments(p[2], n, ident)
        ident += 1
        if len(fr) > 1:
            datas += 1
        if op == "fragflood" and len(fragments(p[2], 8, 0)) > 1:
            for k in range(40):  # first fragments of datagrams that never complete
                e = fragments(p[2], 8, (ident * 40 + k) & 0xffff | 0x10000)[0]
                out.append([p[0], p[1], e, len(e)])
        if op == "fragrev":
            fr = fr[::-1]
        elif op == "fragdup":
            fr = [f for f in fr for _ in (0, 1)]
        elif op == "fragconflict" and len(fr) > 1 and datas == 2:
            bad = bytearray(fr[0])
            bad[-1] ^= 0xff
            fr = [fr[0], bytes(bad)] + fr[1:]
        elif op == "fragtimeout" and len(fr) > 1 and datas == 2:
            last = fr.pop()
            out_late = [p[0] + 31, p[1], last, len(last)]
        for f in fr:
            out.append([p[0], p[1], f, len(f)])
    if op == "fragtimeout":
        out.append(out_late)
    return out


def late(pk, data_idx, rst):
    """Late packets of a connection already closed (see rstlate/finlate)."""
    last = data_idx[-1]
    _, _, sp, dp, _, _, _ = tcp_fields(pk[data_idx[0]][2])  # client -> server
    lastof = {}
    for i in data_idx:
        lastof[tcp_fields(pk[i][2])[2] == sp] = pk[i]
    # next sequence number of each side (True = client), from the last packets
    nxt = {}
    for p in pk[:last + 1] if rst else pk:
        ip, ihl, a, b, seq, ack, fl = tcp_fields(p[2])
        n, _ = tcp_payload_len(ip)
        nxt[a == sp] = (seq + n + (1 if fl & 0x03 else 0)) & 0xffffffff
    out = pk[:last + 1] if rst else list(pk)
    t = out[-1][0] + 1

    def put(e):
        out.append([t, len(out), e, len(e)])

    def add(d, fl, payload=b""):
        src, dst = (sp, dp) if d else (dp, sp)
        put(tcp_packet(payload, nxt[d], nxt[not d], fl, src, dst))

    if rst:
        add(False, 0x14)                       # the server resets
    put(lastof[True][2])                       # late client data
    put(lastof[False][2])                      # late server data
    if not rst:
        nxt[False] = (nxt[False] - 1) & 0xffffffff
        add(False, 0x11)                       # the server's FIN again
        nxt[False] = (nxt[False] + 1) & 0xffffffff
    add(True, 0x10)                            # an ACK
    add(False, 0x04)                           # a RST answering them
    return out


def main():
    if sys.argv[1] == "flow":
        args = sys.argv[3:]
        segs = [(0 if a[0] == "c" else 1, bytes.fromhex(a[2:])) for a in args if a[:2] in ("c:", "s:")]
        flow_pcap(sys.argv[2], segs, "--nosyn" not in args, "--nofin" not in args)
        return
    src, dst, op = sys.argv[1:4]
    arg = sys.argv[4] if len(sys.argv) > 4 else None
    hdr, link, pk = read(src)
    assert link == 1
    if op == "truncate":
        data = open(src, "rb").read()
        open(dst, "wb").write(data[:int(arg)])
        return
    if op in ("frag", "fragrev", "fragdup", "fragconflict", "fragflood", "fragtimeout"):
        pk = fragment_all(pk, op, int(arg))
        write(dst, hdr, link, pk)
        return
    if op == "link":
        enc = {"sll": 113, "sll2": 276, "null": 0, "loop": 108, "raw": 101, "vlan": 1}[arg]
        for p in pk:
            ip = ip_of(p[2])
            et = p[2][12:14]
            if arg == "sll":
                p[2] = struct.pack(">HHH8s", 0, 772, 6, b"\0" * 8) + et + ip
            elif arg == "sll2":
                p[2] = et + b"\0\0" + struct.pack(">I", 1) + struct.pack(">HBB8s", 772, 0, 6, b"\0" * 8) + ip
            elif arg == "null":
                p[2] = struct.pack("<I", 2) + ip
            elif arg == "loop":
                p[2] = struct.pack(">I", 2) + ip
            elif arg == "raw":
                p[2] = ip
            elif arg == "vlan":
                p[2] = p[2][:12] + b"\x81\x00\x00\x64" + et + ip
            p[3] = len(p[2])
        link = enc
    elif op == "ipv6":
        for p in pk:
            ip = ip_of(p[2])
            ihl = (ip[0] & 15) * 4
            tot = struct.unpack(">H", ip[2:4])[0]
            pay = ip[ihl:tot]
            v6 = struct.pack(">IHBB", 6 << 28, len(pay), 6, 64) + \
                b"\0" * 10 + b"\xff\xff" + ip[12:16] + b"\0" * 10 + b"\xff\xff" + ip[16:20]
            p[2] = p[2][:12] + b"\x86\xdd" + v6 + pay
            p[3] = len(p[2])
    elif op == "snaplen":
        n = int(arg)
        for p in pk:
            p[2] = p[2][:n]
    elif op == "garbage":
        rnd = random.Random(7)
        for p in pk:
            ip = ip_of(p[2])
            n, h = tcp_payload_len(ip)
            if n > 0:
                p[2] = p[2][:14 + h] + bytes(rnd.randrange(256) for _ in range(n)) + p[2][14 + h + n:]
    else:
        data_idx = [i for i, p in enumerate(pk) if tcp_payload_len(ip_of(p[2]))[0] > 0]
        if op == "swap":
            for a, b in zip(data_idx[0::2], data_idx[1::2]):
                pk[a][2], pk[b][2] = pk[b][2], pk[a][2]
        elif op == "dup":
            out = []
            for i, p in enumerate(pk):
                out.append(p)
                if i in data_idx:
                    out.append(list(p))
            pk = out
        elif op == "overlap":
            out = []
            for i, p in enumerate(pk):
                ip = ip_of(p[2])
                n, h = tcp_payload_len(ip)
                if i in data_idx and n > 20:
                    half = n // 2
                    e = bytearray(p[2][:14 + h + half])
                    struct.pack_into(">H", e, 14 + 2, len(e) - 14)
                    out.append([p[0], p[1], bytes(e), len(e)])
                out.append(p)
            pk = out
        elif op == "drop":
            del pk[data_idx[int(arg)]]
        elif op == "nosyn":
            pk = pk[4:]
        elif op == "noack":
            for p in pk:
                e = bytearray(p[2])
                ihl = (e[14] & 15) * 4
                e[14 + ihl + 13] &= ~0x10 & 0xff
                p[2] = bytes(e)
        elif op == "again":
            second = []
            for p in pk:
                e = bytearray(p[2])
                ip, ihl, _, _, seq, ack, fl = tcp_fields(p[2])
                struct.pack_into(">II", e, 14 + ihl + 4, (seq + 100000) & 0xffffffff,
                                 (ack + 100000) & 0xffffffff if fl & 0x10 else 0)
                second.append([p[0] + 1, p[1], bytes(e), p[3]])
            pk = pk + second
        elif op in ("rstlate", "finlate"):
            pk = late(pk, data_idx, op == "rstlate")
        else:
            sys.exit("unknown op " + op)
    write(dst, hdr, link, pk)


if __name__ == "__main__":
    main()
