#!/usr/bin/python3
"""tlscap.py -- TLS captures for yangblast's capture tests, made here: a
client and a server (Python's ssl module, OpenSSL underneath) talk over
memory BIOs, every chunk each side writes becomes a TCP segment of one
connection in a pcap (pcaptool.flow_pcap), and the client's secrets go to
an NSS key log.

  tlscap.py CERT KEY OUT.pcap OUT.keylog SCENARIO [PORT]

Scenarios (CERT/KEY: an EC P-256 certificate and its key):
  h1        TLS 1.3, ALPN http/1.1: one RESTCONF GET answered 200
  h2-split  TLS 1.3, no ALPN: the client writes its HTTP/2 preface as a
            1-byte record, then the rest, then one GET; the server answers
            200 (the first plaintext is too short to tell the protocol)
  tls12     TLS 1.2 ECDHE-ECDSA-AES128-GCM-SHA256, ALPN http/1.1, one GET
  tls12-cbc TLS 1.2 ECDHE-ECDSA-AES128-SHA (a CBC suite), one GET
  mismatch  the client offers only ECDHE-ECDSA-AES128-SHA, the server only
            AES-GCM: the server refuses with an alert
  dup-sh    as tls12, with the server's first record (its ServerHello)
            written twice in the capture
"""
import os
import ssl
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pcaptool import flow_pcap  # noqa: E402

H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def h2_frame(t, fl, sid, body):
    return len(body).to_bytes(3, "big") + bytes([t, fl]) + sid.to_bytes(4, "big") + body


def main():
    cert, key, out, keylog, scen = sys.argv[1:6]
    port = int(sys.argv[6]) if len(sys.argv) > 6 else 443
    if os.path.exists(keylog):
        os.unlink(keylog)
    cctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    cctx.check_hostname = False
    cctx.verify_mode = ssl.CERT_NONE
    cctx.keylog_filename = keylog
    sctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    sctx.load_cert_chain(cert, key)
    if scen in ("h1", "tls12", "tls12-cbc", "dup-sh"):
        cctx.set_alpn_protocols(["http/1.1"])
        sctx.set_alpn_protocols(["http/1.1"])
    if scen in ("tls12", "dup-sh"):
        cctx.maximum_version = ssl.TLSVersion.TLSv1_2
        cctx.set_ciphers("ECDHE-ECDSA-AES128-GCM-SHA256")
    if scen in ("tls12-cbc", "mismatch"):
        cctx.maximum_version = ssl.TLSVersion.TLSv1_2
        cctx.set_ciphers("ECDHE-ECDSA-AES128-SHA:@SECLEVEL=0")
        sctx.set_ciphers("ECDHE-ECDSA-AES128-SHA:@SECLEVEL=0")
    if scen == "mismatch":
        sctx.maximum_version = ssl.TLSVersion.TLSv1_2
        sctx.set_ciphers("ECDHE-ECDSA-AES128-GCM-SHA256")
    cin, cout, sin, sout = ssl.MemoryBIO(), ssl.MemoryBIO(), ssl.MemoryBIO(), ssl.MemoryBIO()
    c = cctx.wrap_bio(cin, cout, server_side=False, server_hostname="sw")
    s = sctx.wrap_bio(sin, sout, server_side=True)
    segs = []

    def move():
        moved = False
        d = cout.read()
        if d:
            segs.append((0, d))
            sin.write(d)
            moved = True
        d = sout.read()
        if d:
            segs.append((1, d))
            cin.write(d)
            moved = True
        return moved

    done = [False, False]
    failed = False
    for _ in range(50):
        for i, o in enumerate((c, s)):
            if done[i]:
                continue
            try:
                o.do_handshake()
                done[i] = True
            except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
                pass
            except ssl.SSLError:
                failed = True
        if not move() and (all(done) or failed):
            break
    if scen == "mismatch":
        assert failed, "the handshake was expected to fail"
    else:
        assert all(done), "handshake did not complete"

        def server_reads(n_expected):
            got = b""
            while len(got) < n_expected:
                try:
                    got += s.read(65536)
                except ssl.SSLWantReadError:
                    if not move():
                        break
            return got

        if scen == "h2-split":
            req = (H2_PREFACE + h2_frame(4, 0, 0, b"")
                   + h2_frame(1, 5, 1, b"\x82\x87\x84\x41\x02sw"))  # GET https / sw
            c.write(req[:1])
            move()
            c.write(req[1:])
            move()
            server_reads(len(req))
            s.write(h2_frame(4, 0, 0, b"") + h2_frame(1, 5, 1, b"\x88"))  # :status 200
        else:
            req = b"GET /restconf/data/x HTTP/1.1\r\nHost: sw\r\n\r\n"
            c.write(req)
            move()
            server_reads(len(req))
            s.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        move()
        c.read(65536)  # the client takes the response (and any ticket)
        move()
    if scen == "dup-sh":
        first = segs[1][1]  # the server's first flight
        n = 5 + int.from_bytes(first[3:5], "big")
        segs[1] = (1, first[:n] + first[:n] + first[n:])
    flow_pcap(out, segs, dport=port)


main()
