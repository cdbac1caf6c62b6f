"""Rewrites a checkpoint's model.safetensors in place: edit_tensors.py DIR
-NAME (drop a tensor) NAME=NEW (rename) NAME:R,C (keep only the first R rows
and C columns of a 2-D F32 tensor). For the importer's bad-checkpoint
tests."""
import sys

import safetensors_file

meta, data = safetensors_file.read(sys.argv[1])
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
safetensors_file.write(sys.argv[1], meta, data)
