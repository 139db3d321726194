#!/usr/bin/env python3
"""Is a screenshot of the scenario report non-blank? (make report-check)

  png_nonblank.py FILE.png [--colour RRGGBB --min-pixels N]...

Decodes the PNG with the standard library (8-bit RGB or RGBA, not
interlaced, as headless Chromium writes it) and fails unless at least 1% of
the pixels differ from the most common (background) colour, at least 8
colours appear, and each --colour covers at least its --min-pixels pixels
(the report's Lease lane: the Stage's fence interval was drawn). Before
judging FILE it judges a blank image it makes itself, which must fail: a
check that cannot fail would pass any screenshot.
"""
import struct
import sys
import zlib
from collections import Counter


def decode(data):
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, hdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    w, h, depth, ctype, _, _, interlace = hdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        raise ValueError(f"unsupported PNG (depth {depth}, colour type {ctype})")
    bpp = 3 if ctype == 2 else 4
    raw, stride = zlib.decompress(idat), w * bpp
    prev, pixels, i = bytearray(stride), Counter(), 0
    for _ in range(h):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b, c = prev[x], prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        for x in range(0, stride, bpp):
            pixels[bytes(line[x:x + 3])] += 1
        prev = line
    return w * h, pixels


def judge(total, pixels, wants):
    probs = []
    bg, n_bg = pixels.most_common(1)[0]
    if total - n_bg < total // 100:
        probs.append(f"only {total - n_bg} of {total} pixels differ from the background")
    if len(pixels) < 8:
        probs.append(f"only {len(pixels)} colours")
    for colour, least in wants:
        got = pixels.get(bytes.fromhex(colour), 0)
        if got < least:
            probs.append(f"colour #{colour}: {got} pixels, want at least {least}")
    return probs


def blank_png(w=64, h=64):
    raw = b"".join(b"\x00" + b"\xff" * (3 * w) for _ in range(h))
    def chunk(k, d):
        return struct.pack(">I", len(d)) + k + d + struct.pack(">I", zlib.crc32(k + d))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def main():
    args, wants = sys.argv[1:], []
    path = args.pop(0)
    while args:
        if args[0] == "--colour" and len(args) >= 4 and args[2] == "--min-pixels":
            wants.append((args[1].lower(), int(args[3])))
            args = args[4:]
        else:
            print(f"png: unknown argument {args[0]}")
            return 2
    if not judge(*decode(blank_png()), wants):
        print("png: the check accepts a blank image")
        return 1
    probs = judge(*decode(open(path, "rb").read()), wants)
    for p in probs:
        print("png:", p)
    if not probs:
        print(f"png: {path} is not blank")
    return 1 if probs else 0


if __name__ == "__main__":
    sys.exit(main())
