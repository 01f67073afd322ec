#!/usr/bin/python3
"""png_ink.py FILE.png: prints the share of pixels that are not white (or
transparent) in an 8-bit RGB/RGBA PNG, e.g. a browser's screenshot, and
its width and height: "0.0312 1280 4000".  Python's zlib only."""
import struct, sys, zlib

d = open(sys.argv[1], "rb").read()
if d[:8] != b"\x89PNG\r\n\x1a\n":
    sys.exit("not a PNG")
pos, idat = 8, b""
while pos < len(d):
    n, = struct.unpack(">I", d[pos:pos + 4])
    t, c = d[pos + 4:pos + 8], d[pos + 8:pos + 8 + n]
    pos += 12 + n
    if t == b"IHDR":
        w, h, depth, ctype = struct.unpack(">IIBB", c[:10])
    elif t == b"IDAT":
        idat += c
if depth != 8 or ctype not in (2, 6):
    sys.exit("unsupported PNG (depth %d, colour type %d)" % (depth, ctype))
raw, bpp = zlib.decompress(idat), (3 if ctype == 2 else 4)
stride, prev, i, ink = w * bpp, bytearray(w * bpp), 0, 0
for y in range(h):
    f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
    i += 1 + stride
    for x in range(stride):
        a = line[x - bpp] if x >= bpp else 0
        b, c = prev[x], (prev[x - bpp] if x >= bpp else 0)
        if f == 1:
            line[x] = (line[x] + a) & 255
        elif f == 2:
            line[x] = (line[x] + b) & 255
        elif f == 3:
            line[x] = (line[x] + ((a + b) >> 1)) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    for x in range(0, stride, bpp):
        px = line[x:x + bpp]
        if (bpp == 4 and px[3] == 0) or min(px[:3]) >= 250:
            continue
        ink += 1
    prev = line
print("%.4f %d %d" % (ink / float(w * h), w, h))
