"""Turns a Gemma 3 text checkpoint DIR into a Gemma3ForConditionalGeneration
one in place, as transformers lays them out: make_multimodal.py DIR LAYOUT,
LAYOUT "published" (language_model.model.*, the Hub's Gemma 3 files) or
"new" (model.language_model.*, transformers 4.52 and later). The text config
moves under text_config; a vision tensor joins, which the text model must
pass over."""
import json
import os
import struct
import sys

d, layout = sys.argv[1], sys.argv[2]
prefix = {"published": "language_model.model.", "new": "model.language_model."}[layout]
path = os.path.join(d, "model.safetensors")
raw = open(path, "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
header = json.loads(raw[8:8 + n])
tensors = {}
for k, v in header.items():
    if k == "__metadata__":
        continue
    blob = raw[8 + n + v["data_offsets"][0]:8 + n + v["data_offsets"][1]]
    name = prefix + k[len("model."):] if k.startswith("model.") else k
    tensors[name] = (v["dtype"], v["shape"], blob)
tensors["vision_tower.vision_model.embeddings.patch_embedding.weight"] = (
    "F32", [2, 2], struct.pack("<4f", 1, 2, 3, 4))
out, offset, blobs = {"__metadata__": {"format": "pt"}}, 0, []
for k in sorted(tensors):
    dtype, shape, blob = tensors[k]
    out[k] = {"dtype": dtype, "shape": shape,
              "data_offsets": [offset, offset + len(blob)]}
    offset += len(blob)
    blobs.append(blob)
h = json.dumps(out).encode()
h += b" " * ((8 - len(h) % 8) % 8)
with open(path, "wb") as f:
    f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))

cpath = os.path.join(d, "config.json")
text = json.load(open(cpath))
text.pop("architectures")
config = {"architectures": ["Gemma3ForConditionalGeneration"],
          "model_type": "gemma3", "text_config": text,
          "vision_config": {"model_type": "siglip_vision_model"},
          "bos_token_id": text.get("bos_token_id"),
          "eos_token_id": text.get("eos_token_id")}
json.dump(config, open(cpath, "w"), indent=2, sort_keys=True)
