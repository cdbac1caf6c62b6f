#!/usr/bin/python3
"""A random-weight Gemma 2 checkpoint in Hugging Face form, for benchmarks.

Gemma-2-2B's structure (head_dim 256, GQA 2:1, soft-caps 50 and 30, a 4096
window on even layers, tied head) at about the bench model's size: hidden 768,
12 layers, 4 heads of 256, ff 3072, vocabulary 32000 (138M parameters).
llama.cpp reads the same weights from `llmc-make-gguf` of this folder.
Weights N(0, 0.02), norms N(0, 0.1) (Gemma stores w for a 1 + w scale).
The tokenizer is test/data/models/gemma2-softcap's (benchmarks feed ids).

usage: gen_gemma2.py OUT_DIR TOKENIZER_DIR      (numpy: Debian python3-numpy)
"""
import json
import os
import shutil
import struct
import sys

import numpy as np


def layer_shapes(H, L, NH, KV, HD, FF, V, qk_norm=False):
    """Gemma 2's (and, with qk_norm, Gemma 3's) tensors: name -> (shape, std)."""
    shapes = {"model.embed_tokens.weight": ([V, H], 0.02),
              "model.norm.weight": ([H], 0.1)}
    for i in range(L):
        p = f"model.layers.{i}."
        for n in ("input_layernorm", "post_attention_layernorm",
                  "pre_feedforward_layernorm", "post_feedforward_layernorm"):
            shapes[p + n + ".weight"] = ([H], 0.1)
        if qk_norm:
            shapes[p + "self_attn.q_norm.weight"] = ([HD], 0.1)
            shapes[p + "self_attn.k_norm.weight"] = ([HD], 0.1)
        shapes[p + "self_attn.q_proj.weight"] = ([NH * HD, H], 0.02)
        shapes[p + "self_attn.k_proj.weight"] = ([KV * HD, H], 0.02)
        shapes[p + "self_attn.v_proj.weight"] = ([KV * HD, H], 0.02)
        shapes[p + "self_attn.o_proj.weight"] = ([H, NH * HD], 0.02)
        shapes[p + "mlp.gate_proj.weight"] = ([FF, H], 0.02)
        shapes[p + "mlp.up_proj.weight"] = ([FF, H], 0.02)
        shapes[p + "mlp.down_proj.weight"] = ([H, FF], 0.02)
    return shapes


def write_random(out, config, tok, shapes, seed):
    """config.json, the tokenizer files of `tok`, and N(0, std) F32 weights."""
    os.makedirs(out, exist_ok=True)
    json.dump(config, open(os.path.join(out, "config.json"), "w"), indent=2,
              sort_keys=True)
    for f in os.listdir(tok):
        if f.startswith("tokenizer") or f == "special_tokens_map.json":
            shutil.copy(os.path.join(tok, f), out)
    rng = np.random.default_rng(seed)
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


if __name__ == "__main__":
    out, tok = sys.argv[1], sys.argv[2]
    H, L, NH, KV, HD, FF, V = 768, 12, 4, 2, 256, 3072, 32000
    config = {
        "architectures": ["Gemma2ForCausalLM"], "attention_bias": False,
        "attn_logit_softcapping": 50.0, "bos_token_id": 1, "eos_token_id": 2,
        "final_logit_softcapping": 30.0, "head_dim": HD,
        "hidden_activation": "gelu_pytorch_tanh", "hidden_size": H,
        "intermediate_size": FF, "max_position_embeddings": 8192,
        "model_type": "gemma2", "num_attention_heads": NH,
        "num_hidden_layers": L, "num_key_value_heads": KV,
        "query_pre_attn_scalar": HD, "rms_norm_eps": 1e-06,
        "rope_theta": 10000.0, "sliding_window": 4096,
        "torch_dtype": "float32", "vocab_size": V,
    }
    write_random(out, config, tok, layer_shapes(H, L, NH, KV, HD, FF, V), 2)
