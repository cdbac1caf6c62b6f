"""gguf_nan_scale.py IN.gguf TENSOR OUT.gguf: a copy of a GGUF whose MXFP4
tensor TENSOR has its first block's E8M0 scale byte set to 255 (NaN). For
the importer's bad-GGUF tests."""
import struct
import sys

from gguf_kv import end_of_metadata, entries

src, name, dst = sys.argv[1], sys.argv[2].encode(), sys.argv[3]
b = bytearray(open(src, "rb").read())
align = 32
for key, t, off in entries(b):
    if key == b"general.alignment":
        align = struct.unpack_from("<I", b, off)[0]
off, target = end_of_metadata(b), None
for _ in range(struct.unpack_from("<Q", b, 8)[0]):
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
b[(off + align - 1) // align * align + target] = 255
open(dst, "wb").write(b)
