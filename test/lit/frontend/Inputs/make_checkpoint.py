#!/usr/bin/env python3
"""Writes a tiny Llama checkpoint into OUT_DIR, broken in the way CASE says.

Used by the importer's bad-input lit tests: every case is a mistake a user
can make (or a damaged download), and llmc must name it clearly.
"""
import json
import struct
import sys
from pathlib import Path

case, out = sys.argv[1], Path(sys.argv[2])
out.mkdir(parents=True, exist_ok=True)

config = {
    "architectures": ["LlamaForCausalLM"], "hidden_size": 8, "intermediate_size": 16,
    "num_attention_heads": 2, "num_key_value_heads": 1, "num_hidden_layers": 1,
    "vocab_size": 16, "rms_norm_eps": 1e-5, "max_position_embeddings": 32,
}
H, I, V, KV = 8, 16, 16, 4
tensors = {
    "model.embed_tokens.weight": [V, H],
    "model.layers.0.input_layernorm.weight": [H],
    "model.layers.0.self_attn.q_proj.weight": [H, H],
    "model.layers.0.self_attn.k_proj.weight": [KV, H],
    "model.layers.0.self_attn.v_proj.weight": [KV, H],
    "model.layers.0.self_attn.o_proj.weight": [H, H],
    "model.layers.0.post_attention_layernorm.weight": [H],
    "model.layers.0.mlp.gate_proj.weight": [I, H],
    "model.layers.0.mlp.up_proj.weight": [I, H],
    "model.layers.0.mlp.down_proj.weight": [H, I],
    "model.norm.weight": [H],
    "lm_head.weight": [V, H],
}


dtypes = {}

if case == "missing-key":
    del config["num_attention_heads"]
elif case == "wrong-type":
    config["num_hidden_layers"] = "one"
elif case == "unsupported-arch":
    config["architectures"] = ["FalconForCausalLM"]
elif case == "heads-mismatch":
    config["num_key_value_heads"] = 3
elif case == "missing-tensor":
    del tensors["model.layers.0.mlp.up_proj.weight"]
elif case == "unexpected-tensor":
    tensors["model.layers.0.self_attn.extra.weight"] = [H]
elif case == "wrong-shape":
    tensors["model.layers.0.self_attn.q_proj.weight"] = [H, 7]
elif case == "unsupported-dtype":
    dtypes["model.norm.weight"] = "I64"
elif case == "unknown-dtype":
    dtypes["model.norm.weight"] = "F8_E4M3"

(out / "config.json").write_text(json.dumps(config, indent=2))
if case == "json-syntax":
    (out / "config.json").write_text('{\n  "architectures": ["LlamaForCausalLM"],\n  "hidden_size": 8,,\n}\n')

size = {"F32": 4, "I64": 8, "F8_E4M3": 1}
dtypes = {name: dtypes.get(name, "F32") for name in tensors}
header, data = {"__metadata__": {"format": "pt"}}, bytearray()
for name in sorted(tensors):
    n = 1
    for d in tensors[name]:
        n *= d
    nbytes = n * size[dtypes[name]]
    header[name] = {"dtype": dtypes[name], "shape": tensors[name],
                    "data_offsets": [len(data), len(data) + nbytes]}
    data += bytes(nbytes)
if case == "overlap":
    header["model.norm.weight"]["data_offsets"] = header["lm_head.weight"]["data_offsets"][:]
    header["model.norm.weight"]["data_offsets"][1] = header["model.norm.weight"]["data_offsets"][0] + H * 4
if case == "offset-past-end":
    header["model.norm.weight"]["data_offsets"] = [len(data) - 16, len(data) + 16]
blob = json.dumps(header).encode()
blob += b" " * (-len(blob) % 8)
file = struct.pack("<Q", len(blob)) + blob + bytes(data)
if case == "truncated":
    file = file[: len(file) - 100]
if case == "header-too-long":
    file = struct.pack("<Q", 1 << 40) + file[8:]
if case == "empty":
    file = b""
(out / "model.safetensors").write_bytes(file)

if case == "gguf-bad-magic":
    (out / "model.gguf").write_bytes(b"GGUX" + struct.pack("<I", 3) + bytes(16))
def gguf_kv(pairs):
    """A GGUF v3 file with the given (key, str | int) metadata, no tensors."""
    def string(s):
        b = s.encode()
        return struct.pack("<Q", len(b)) + b
    body = b""
    for k, v in pairs:
        body += string(k)
        body += struct.pack("<I", 8) + string(v) if isinstance(v, str) \
            else struct.pack("<II", 4, v)
    return b"GGUF" + struct.pack("<IQQ", 3, 0, len(pairs)) + body
if case == "gguf-missing-key":
    (out / "model.gguf").write_bytes(gguf_kv([
        ("general.architecture", "llama"), ("llama.block_count", 2),
        ("llama.embedding_length", 64), ("llama.feed_forward_length", 128),
        ("llama.attention.head_count", 4)]))
if case == "gguf-falcon":
    (out / "model.gguf").write_bytes(gguf_kv([
        ("general.architecture", "falcon")]))
if case == "gguf-bad-version":
    (out / "model.gguf").write_bytes(b"GGUF" + struct.pack("<I", 7) + bytes(16))
