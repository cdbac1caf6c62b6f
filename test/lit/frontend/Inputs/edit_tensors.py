"""Rewrites a checkpoint's model.safetensors in place: edit_tensors.py DIR
-NAME (drop a tensor) NAME=NEW (rename) NAME:R,C (keep only the first R rows
and C columns of a 2-D F32 tensor). For the importer's bad-checkpoint
tests."""
import json
import os
import struct
import sys

path = os.path.join(sys.argv[1], "model.safetensors")
raw = open(path, "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
header = json.loads(raw[8:8 + n])
data = {k: raw[8 + n + v["data_offsets"][0]:8 + n + v["data_offsets"][1]]
        for k, v in header.items() if k != "__metadata__"}
meta = {k: v for k, v in header.items() if k != "__metadata__"}
for arg in sys.argv[2:]:
    if arg.startswith("-"):
        del data[arg[1:]], meta[arg[1:]]
    elif "=" in arg:
        old, new = arg.split("=", 1)
        data[new], meta[new] = data.pop(old), meta.pop(old)
    else:
        name, shape = arg.split(":", 1)
        rows, cols = (int(x) for x in shape.split(","))
        r0, c0 = meta[name]["shape"]
        blob = data[name]
        data[name] = b"".join(blob[(r * c0) * 4:(r * c0 + cols) * 4] for r in range(rows))
        meta[name]["shape"] = [rows, cols]
out, offset = {"__metadata__": {"format": "pt"}}, 0
for k in sorted(data):
    out[k] = {"dtype": meta[k]["dtype"], "shape": meta[k]["shape"],
              "data_offsets": [offset, offset + len(data[k])]}
    offset += len(data[k])
h = json.dumps(out).encode()
h += b" " * (-len(h) % 8)
open(path, "wb").write(struct.pack("<Q", len(h)) + h + b"".join(data[k] for k in sorted(data)))
