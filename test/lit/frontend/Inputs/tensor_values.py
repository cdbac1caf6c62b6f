"""Prints `first: v0 v1 ...` (float32, %.9g) for the first N values of a
safetensors tensor plus OFFSET, as `llmc inspect --weight` prints them: what
a plan must store for Gemma's (1 + w) norms."""
import json
import struct
import sys

path, name, count, offset = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
with open(path, "rb") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    header = json.loads(f.read(n))
    t = header[name]
    assert t["dtype"] == "F32", t["dtype"]
    begin, _ = t["data_offsets"]
    f.seek(8 + n + begin)
    values = struct.unpack("<%df" % count, f.read(4 * count))
f32 = lambda v: struct.unpack("<f", struct.pack("<f", v))[0]
print("  first:" + "".join(" %.9g" % f32(v + offset) for v in values))
