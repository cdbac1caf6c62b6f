"""Breaks a Hugging Face MXFP4 pair in a checkpoint's model.safetensors, in
place: edit_mxfp4.py DIR BASE EDIT, BASE naming BASE_blocks and BASE_scales,
EDIT one of nan (the first scale byte becomes 255, E8M0's NaN), half (the
blocks keep 8 of their 16 bytes), fewer (the scales lose their last block),
noscales (BASE_scales is dropped), f32scales (the scales are stored as
F32). For the importer's bad-checkpoint tests."""
import json
import os
import struct
import sys

path = os.path.join(sys.argv[1], "model.safetensors")
base, edit = sys.argv[2], sys.argv[3]
raw = open(path, "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
header = json.loads(raw[8:8 + n])
meta = {k: v for k, v in header.items() if k != "__metadata__"}
data = {k: raw[8 + n + v["data_offsets"][0]:8 + n + v["data_offsets"][1]] for k, v in meta.items()}
blocks, scales = base + "_blocks", base + "_scales"
if edit == "nan":
    data[scales] = b"\xff" + data[scales][1:]
elif edit == "half":
    b = data[blocks]
    data[blocks] = b"".join(b[i:i + 8] for i in range(0, len(b), 16))
    meta[blocks]["shape"][-1] = 8
elif edit == "fewer":
    shape = meta[scales]["shape"]
    inner = shape[-1]
    s = data[scales]
    data[scales] = b"".join(s[i:i + inner - 1] for i in range(0, len(s), inner))
    shape[-1] = inner - 1
elif edit == "noscales":
    del data[scales], meta[scales]
elif edit == "f32scales":
    data[scales] = b"".join(struct.pack("<f", float(x)) for x in data[scales])
    meta[scales]["dtype"] = "F32"
out, offset = {"__metadata__": {"format": "pt"}}, 0
for k in sorted(data):
    out[k] = {"dtype": meta[k]["dtype"], "shape": meta[k]["shape"],
              "data_offsets": [offset, offset + len(data[k])]}
    offset += len(data[k])
h = json.dumps(out).encode()
h += b" " * (-len(h) % 8)
open(path, "wb").write(struct.pack("<Q", len(h)) + h + b"".join(data[k] for k in sorted(data)))
