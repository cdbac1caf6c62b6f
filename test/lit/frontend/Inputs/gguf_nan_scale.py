"""gguf_nan_scale.py IN.gguf TENSOR OUT.gguf: a copy of a GGUF whose MXFP4
tensor TENSOR has its first block's E8M0 scale byte set to 255 (NaN). For
the importer's bad-GGUF tests."""
import struct
import sys

src, name, dst = sys.argv[1], sys.argv[2].encode(), sys.argv[3]
b = bytearray(open(src, "rb").read())
SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}


def skip(off, t):
    if t in SIZES:
        return off + SIZES[t]
    if t == 8:
        return off + 8 + struct.unpack_from("<Q", b, off)[0]
    et, n = struct.unpack_from("<IQ", b, off)
    off += 12
    for _ in range(n):
        off = skip(off, et)
    return off


_, _, nt, nkv = struct.unpack_from("<IIQQ", b, 0)
off = 24
align = 32
for _ in range(nkv):
    klen = struct.unpack_from("<Q", b, off)[0]
    key = bytes(b[off + 8:off + 8 + klen])
    off += 8 + klen
    t = struct.unpack_from("<I", b, off)[0]
    off += 4
    if key == b"general.alignment":
        align = struct.unpack_from("<I", b, off)[0]
    off = skip(off, t)
target = None
for _ in range(nt):
    nlen = struct.unpack_from("<Q", b, off)[0]
    tname = bytes(b[off + 8:off + 8 + nlen])
    off += 8 + nlen
    nd = struct.unpack_from("<I", b, off)[0]
    off += 4 + 8 * nd
    ttype, toff = struct.unpack_from("<IQ", b, off)
    off += 12
    if tname == name:
        assert ttype == 39, "not MXFP4"
        target = toff
data = (off + align - 1) // align * align
b[data + target] = 255
open(dst, "wb").write(b)
