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
  tls12-ccm TLS 1.2 ECDHE-ECDSA-AES128-CCM (a suite capture cannot decrypt)
  mismatch  the client offers only ECDHE-ECDSA-AES128-SHA, the server only
            AES-GCM: the server refuses with an alert
  dup-sh    as tls12, with the server's first record (its ServerHello)
            written twice in the capture
  mtls      as h1, the server requires a client certificate (CERT/KEY):
            CertificateRequest, the client's Certificate and
            CertificateVerify in the handshake
  pha       as h1, and the server asks for the client certificate after
            the handshake, in front of its response (TLS 1.3 post-handshake
            authentication, under the application keys)
  alps      as h1, and the client's handshake flight starts with an
            EncryptedExtensions carrying ALPS (application_settings,
            extension 17513), as BoringSSL/Chromium clients send it: OpenSSL
            cannot send one, so the client's first protected record is
            decrypted with the logged secret, the message put in front of
            its Finished, and the record encrypted again
  alps-new  the same with the new ALPS code point, 17613
  ee-bad    the same with a malformed client EncryptedExtensions (its
            extension vector says 40 bytes, holds 4)
  ee-twice  the same with two client EncryptedExtensions
  ee-cut    the same with a client EncryptedExtensions whose header says
            300 bytes (more than the record holds)
  tls12-ee  as tls12, with a client EncryptedExtensions forged in front of
            the client's (TLS 1.2, AES-GCM) Finished
The forged scenarios need python3-cryptography.
"""
import os
import ssl
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pcaptool import flow_pcap  # noqa: E402

H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def h2_frame(t, fl, sid, body):
    return len(body).to_bytes(3, "big") + bytes([t, fl]) + sid.to_bytes(4, "big") + body


# ---- forging a client EncryptedExtensions --------------------------------

def records(data):
    """(offset, type, length) of each whole TLS record in a byte stream."""
    off, out = 0, []
    while off + 5 <= len(data):
        n = int.from_bytes(data[off + 3:off + 5], "big")
        out.append((off, data[off], n))
        off += 5 + n
    return out


def keylog_secret(keylog, label):
    for line in open(keylog):
        f = line.split()
        if len(f) == 3 and f[0] == label:
            return bytes.fromhex(f[2])
    raise SystemExit("no %s in %s" % (label, keylog))


def hkdf_label(h, secret, label, n):
    from cryptography.hazmat.primitives.kdf.hkdf import HKDFExpand
    lab = b"tls13 " + label
    info = n.to_bytes(2, "big") + bytes([len(lab)]) + lab + b"\0"
    return HKDFExpand(algorithm=h, length=n, info=info).derive(secret)


def tls12_prf(h, secret, label, seed, n):
    import hmac
    name = h.name
    a, out = label + seed, b""
    while len(out) < n:
        a = hmac.new(secret, a, name).digest()
        out += hmac.new(secret, a + label + seed, name).digest()
    return out[:n]


def client_ee(scen):
    """The forged message (type 8): ALPS settings, or a broken vector."""
    if scen == "ee-bad":
        exts = (40).to_bytes(2, "big") + b"\x44\x69\x00\x00"
        return b"\x08" + len(exts).to_bytes(3, "big") + exts
    if scen == "ee-cut":
        return b"\x08" + (300).to_bytes(3, "big") + b"\x00\x04\x44\x69\x00\x00"
    code = 17613 if scen == "alps-new" else 17513
    settings = b"\x00\x00\x00\x03\x00\x00\x00\x64"  # an HTTP/2 SETTINGS payload
    ext = code.to_bytes(2, "big") + len(settings).to_bytes(2, "big") + settings
    body = len(ext).to_bytes(2, "big") + ext
    msg = b"\x08" + len(body).to_bytes(3, "big") + body
    return msg * 2 if scen == "ee-twice" else msg


def forge_client_ee(segs, keylog, scen):
    """Puts client_ee(scen) in front of the client's first protected
    handshake record's content (its Finished), encrypted again with the
    same key and sequence number (0), in place in segs."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305
    server = b"".join(d for side, d in segs if side == 1)
    sh = server[5:5 + int.from_bytes(server[3:5], "big")]
    assert sh[0] == 2, "the server's first record is not its ServerHello"
    srandom = sh[6:38]
    sidlen = sh[38]
    suite = int.from_bytes(sh[39 + sidlen:41 + sidlen], "big")
    # the client's chunk holding its first protected record
    for i, (side, data) in enumerate(segs):
        if side != 0:
            continue
        recs = [r for r in records(data) if r[1] in (22, 23)]
        if scen == "tls12-ee":
            after_ccs = [r for r in records(data) if r[1] == 20]
            recs = [r for r in records(data) if after_ccs and r[0] > after_ccs[0][0] and r[1] == 22]
        else:
            recs = [r for r in recs if r[1] == 23]
        if recs:
            break
    else:
        raise SystemExit("no protected client record found")
    off, rtype, n = recs[0]
    hdr, frag = data[off:off + 5], data[off + 5:off + 5 + n]
    if scen == "tls12-ee":
        # TLS 1.2 AES-128-GCM (0xc02b): key block from the master secret
        assert suite == 0xC02B, hex(suite)
        client = b"".join(d for side, d in segs if side == 0)
        crandom = client[11:43]
        master = keylog_secret(keylog, "CLIENT_RANDOM")
        kb = tls12_prf(hashes.SHA256(), master, b"key expansion", srandom + crandom, 40)
        key, salt = kb[0:16], kb[32:36]
        aead = AESGCM(key)
        explicit = frag[:8]
        nonce = salt + explicit
        aad = (0).to_bytes(8, "big") + hdr[:3]
        plain = aead.decrypt(nonce, frag[8:], aad + (n - 24).to_bytes(2, "big"))
        plain = client_ee(scen) + plain
        sealed = explicit + aead.encrypt(nonce, plain, aad + len(plain).to_bytes(2, "big"))
    else:
        h, klen, cls = {0x1301: (hashes.SHA256(), 16, AESGCM),
                        0x1302: (hashes.SHA384(), 32, AESGCM),
                        0x1303: (hashes.SHA256(), 32, ChaCha20Poly1305)}[suite]
        secret = keylog_secret(keylog, "CLIENT_HANDSHAKE_TRAFFIC_SECRET")
        aead = cls(hkdf_label(h, secret, b"key", klen))
        nonce = hkdf_label(h, secret, b"iv", 12)  # sequence number 0
        plain = aead.decrypt(nonce, frag, hdr)
        assert plain[-1] == 22, "not a handshake record"
        plain = client_ee(scen) + plain
        newhdr = hdr[:3] + (len(plain) + 16).to_bytes(2, "big")
        sealed = aead.encrypt(nonce, plain, newhdr)
    newrec = hdr[:3] + len(sealed).to_bytes(2, "big") + sealed
    segs[i] = (0, data[:off] + newrec + data[off + 5 + n:])


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
    if scen in ("mtls", "pha"):
        sctx.verify_mode = ssl.CERT_REQUIRED
        sctx.load_verify_locations(cert)
        cctx.load_cert_chain(cert, key)
    if scen == "pha":
        cctx.post_handshake_auth = True
        sctx.post_handshake_auth = True
    forge = scen in ("alps", "alps-new", "ee-bad", "ee-twice", "ee-cut", "tls12-ee")
    if scen in ("h1", "tls12", "tls12-cbc", "tls12-ccm", "dup-sh", "mtls", "pha") or forge:
        cctx.set_alpn_protocols(["http/1.1"])
        sctx.set_alpn_protocols(["http/1.1"])
    if scen in ("tls12", "dup-sh", "tls12-ee"):
        cctx.maximum_version = ssl.TLSVersion.TLSv1_2
        cctx.set_ciphers("ECDHE-ECDSA-AES128-GCM-SHA256")
    if scen == "tls12-ccm":
        cctx.maximum_version = ssl.TLSVersion.TLSv1_2
        cctx.set_ciphers("ECDHE-ECDSA-AES128-CCM")
        sctx.set_ciphers("ECDHE-ECDSA-AES128-CCM")
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
            if scen == "pha":
                # the CertificateRequest goes out in front of the response
                s.verify_client_post_handshake()
            s.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        move()
        c.read(65536)  # the client takes the response (and any ticket)
        move()
        if scen == "pha":
            try:
                s.read(65536)  # takes the client's Certificate ... Finished
            except ssl.SSLWantReadError:
                pass
            move()
            assert s.getpeercert(), "post-handshake authentication failed"
    if scen == "dup-sh":
        first = segs[1][1]  # the server's first flight
        n = 5 + int.from_bytes(first[3:5], "big")
        segs[1] = (1, first[:n] + first[:n] + first[n:])
    if forge:
        forge_client_ee(segs, keylog, scen)
    flow_pcap(out, segs, dport=port)


main()
