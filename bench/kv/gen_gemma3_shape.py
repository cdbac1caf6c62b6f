#!/usr/bin/python3
"""A random-weight checkpoint with Gemma-3-4B's KV cache shape, for sizing.

34 layers, 8 heads and 4 KV heads of 256, a 1024-position window on five of
every six layers (sliding_window_pattern 6): what the KV cache holds is
Gemma-3-4B's exactly, at the context asked for (Gemma 3's own is 131072). Everything else is small (hidden 256,
ff 512, the gemma3-text fixture's 2000-token vocabulary), so it compiles in
seconds: KV sizes do not depend on it.

usage: gen_gemma3_shape.py OUT_DIR TOKENIZER_DIR CONTEXT  (numpy: Debian python3-numpy)
"""
import json
import os
import shutil
import struct
import sys

import numpy as np

out, tok, context = sys.argv[1], sys.argv[2], int(sys.argv[3])
H, L, NH, KV, HD, FF, V = 256, 34, 8, 4, 256, 512, 2000
os.makedirs(out, exist_ok=True)
config = {
    "architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text",
    "bos_token_id": 2, "eos_token_id": 1, "head_dim": HD,
    "hidden_activation": "gelu_pytorch_tanh", "hidden_size": H,
    "intermediate_size": FF, "max_position_embeddings": context,
    "num_attention_heads": NH, "num_hidden_layers": L,
    "num_key_value_heads": KV, "query_pre_attn_scalar": HD,
    "rms_norm_eps": 1e-06, "rope_theta": 1000000.0,
    "rope_local_base_freq": 10000.0, "sliding_window": 1024,
    "sliding_window_pattern": 6, "torch_dtype": "float32", "vocab_size": V,
}
json.dump(config, open(os.path.join(out, "config.json"), "w"), indent=2,
          sort_keys=True)
for f in os.listdir(tok):
    if f.startswith("tokenizer") or f == "special_tokens_map.json":
        shutil.copy(os.path.join(tok, f), out)

rng = np.random.default_rng(3)
shapes = {"model.embed_tokens.weight": ([V, H], 0.02),
          "model.norm.weight": ([H], 0.1)}
for i in range(L):
    p = f"model.layers.{i}."
    for n in ("input_layernorm", "post_attention_layernorm",
              "pre_feedforward_layernorm", "post_feedforward_layernorm"):
        shapes[p + n + ".weight"] = ([H], 0.1)
    shapes[p + "self_attn.q_norm.weight"] = ([HD], 0.1)
    shapes[p + "self_attn.k_norm.weight"] = ([HD], 0.1)
    shapes[p + "self_attn.q_proj.weight"] = ([NH * HD, H], 0.02)
    shapes[p + "self_attn.k_proj.weight"] = ([KV * HD, H], 0.02)
    shapes[p + "self_attn.v_proj.weight"] = ([KV * HD, H], 0.02)
    shapes[p + "self_attn.o_proj.weight"] = ([H, NH * HD], 0.02)
    shapes[p + "mlp.gate_proj.weight"] = ([FF, H], 0.02)
    shapes[p + "mlp.up_proj.weight"] = ([FF, H], 0.02)
    shapes[p + "mlp.down_proj.weight"] = ([H, FF], 0.02)
header, offset = {"__metadata__": {"format": "pt"}}, 0
for name in sorted(shapes):
    shape, _ = shapes[name]
    n = int(np.prod(shape)) * 4
    header[name] = {"dtype": "F32", "shape": shape,
                    "data_offsets": [offset, offset + n]}
    offset += n
h = json.dumps(header).encode()
h += b" " * (-len(h) % 8)
with open(os.path.join(out, "model.safetensors"), "wb") as f:
    f.write(struct.pack("<Q", len(h)))
    f.write(h)
    for name in sorted(shapes):
        shape, std = shapes[name]
        f.write(rng.normal(0, std, shape).astype("<f4").tobytes())
