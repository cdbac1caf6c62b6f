"""Breaks a Hugging Face MXFP4 pair in a checkpoint's model.safetensors, in
place: edit_mxfp4.py DIR BASE EDIT, BASE naming BASE_blocks and BASE_scales,
EDIT one of nan (the first scale byte becomes 255, E8M0's NaN), half (the
blocks keep 8 of their 16 bytes), fewer (the scales lose their last block),
noscales (BASE_scales is dropped), f32scales (the scales are stored as
F32). For the importer's bad-checkpoint tests."""
import struct
import sys

import safetensors_file

base, edit = sys.argv[2], sys.argv[3]
meta, data = safetensors_file.read(sys.argv[1])
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
safetensors_file.write(sys.argv[1], meta, data)
