"""gguf_set_key.py IN.gguf KEY VALUE OUT.gguf: a copy of a GGUF with one
integer metadata value overwritten in place (same type, same size). For the
importer's bad-GGUF tests."""
import struct
import sys

src, key, value, dst = sys.argv[1], sys.argv[2].encode(), int(sys.argv[3]), sys.argv[4]
b = bytearray(open(src, "rb").read())
SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
INT = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 10: "<Q", 11: "<q"}


def skip(off, t):
    if t in SIZES:
        return off + SIZES[t]
    if t == 8:
        n = struct.unpack_from("<Q", b, off)[0]
        return off + 8 + n
    if t == 9:
        et, n = struct.unpack_from("<IQ", b, off)
        off += 12
        for _ in range(n):
            off = skip(off, et)
        return off
    raise SystemExit(f"unknown GGUF value type {t}")


assert b[:4] == b"GGUF"
n_kv = struct.unpack_from("<Q", b, 16)[0]
off = 24
for _ in range(n_kv):
    klen = struct.unpack_from("<Q", b, off)[0]
    name = bytes(b[off + 8:off + 8 + klen])
    off += 8 + klen
    t = struct.unpack_from("<I", b, off)[0]
    off += 4
    if name == key:
        struct.pack_into(INT[t], b, off, value)
        open(dst, "wb").write(b)
        sys.exit(0)
    off = skip(off, t)
raise SystemExit(f"{src}: no key {key.decode()}")
