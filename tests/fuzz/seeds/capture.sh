#!/bin/bash
# tests/fuzz/seeds/capture.sh SRCDIR OUTDIR -- seeds for the `capture` fuzz
# target, made of the committed captures: each pcap as the target's input
# format (link byte, then 2-byte length-prefixed packets), plus each pcapng
# image for the Decryption Secrets Block walker, and each pcap file image
# for the reader that parses the records in place.
exec /usr/bin/python3 - "$1/captures" "$2" <<'PY'
import os, struct, sys
src, dst = sys.argv[1:3]
for name in sorted(os.listdir(src)):
    p = os.path.join(src, name)
    if name.endswith(".pcapng"):
        open(os.path.join(dst, name), "wb").write(b"\x38" + open(p, "rb").read()[:60000])
    if not name.endswith(".pcap"):
        continue
    b = open(p, "rb").read()
    # the same file for the in-place pcap reader (mode 0x18, block byte)
    open(os.path.join(dst, name + ".file"), "wb").write(b"\x18\x07" + b[:60000])
    out, off = bytearray(b"\x00"), 24
    while off + 16 <= len(b) and len(out) < 60000:
        cl = struct.unpack("<I", b[off + 8:off + 12])[0]
        d = b[off + 16:off + 16 + cl][:65535]
        out += struct.pack(">H", len(d)) + d
        off += 16 + cl
    open(os.path.join(dst, name + ".seed"), "wb").write(out)
PY
