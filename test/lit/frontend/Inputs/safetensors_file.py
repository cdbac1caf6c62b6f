"""A checkpoint's model.safetensors as the bad-checkpoint test scripts edit
it: read(dir) gives (meta, data), tensor name -> header entry and bytes;
write(dir, meta, data) writes them back in name order."""
import json
import os
import struct


def read(d):
    raw = open(os.path.join(d, "model.safetensors"), "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    meta = {k: v for k, v in header.items() if k != "__metadata__"}
    data = {k: raw[8 + n + v["data_offsets"][0]:8 + n + v["data_offsets"][1]]
            for k, v in meta.items()}
    return meta, data


def write(d, meta, data):
    out, offset = {"__metadata__": {"format": "pt"}}, 0
    for k in sorted(data):
        out[k] = {"dtype": meta[k]["dtype"], "shape": meta[k]["shape"],
                  "data_offsets": [offset, offset + len(data[k])]}
        offset += len(data[k])
    h = json.dumps(out).encode()
    h += b" " * (-len(h) % 8)
    open(os.path.join(d, "model.safetensors"), "wb").write(
        struct.pack("<Q", len(h)) + h + b"".join(data[k] for k in sorted(data)))
