"""gguf_set_key.py IN.gguf KEY VALUE OUT.gguf: a copy of a GGUF with one
integer metadata value overwritten in place (same type, same size). For the
importer's bad-GGUF tests."""
import struct
import sys

from gguf_kv import entries

src, key, value, dst = sys.argv[1], sys.argv[2].encode(), int(sys.argv[3]), sys.argv[4]
b = bytearray(open(src, "rb").read())
INT = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 10: "<Q", 11: "<q"}
for name, t, off in entries(b):
    if name == key:
        struct.pack_into(INT[t], b, off, value)
        open(dst, "wb").write(b)
        sys.exit(0)
raise SystemExit(f"{src}: no key {key.decode()}")
