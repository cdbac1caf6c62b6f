#!/usr/bin/env python3
"""Writes a Llama-shaped ~1.1B checkpoint (TinyLlama's shape: hidden 2048,
22 layers, 32 heads, 4 kv heads, intermediate 5632, vocab 32000) with random
bf16 weights, in Hugging Face layout, using only the standard library.

Pure-Python random numbers for 1.1B values would take far too long, so a
4 MiB block of random bf16 values in [-0.03, 0.03] is generated once and each
tensor is filled with rotated slices of it: the values only need to be
plausible for timing, not independent. Norm weights are 1.

Usage: make_llama_1b.py OUT_DIR
"""
import json
import os
import random
import struct
import sys

HIDDEN, LAYERS, HEADS, KV_HEADS, INTER, VOCAB = 2048, 22, 32, 4, 5632, 32000
HEAD_DIM = HIDDEN // HEADS


def tensors():
    yield "lm_head.weight", [VOCAB, HIDDEN]
    yield "model.embed_tokens.weight", [VOCAB, HIDDEN]
    for i in range(LAYERS):
        p = f"model.layers.{i}."
        yield p + "input_layernorm.weight", [HIDDEN]
        yield p + "mlp.down_proj.weight", [HIDDEN, INTER]
        yield p + "mlp.gate_proj.weight", [INTER, HIDDEN]
        yield p + "mlp.up_proj.weight", [INTER, HIDDEN]
        yield p + "post_attention_layernorm.weight", [HIDDEN]
        yield p + "self_attn.k_proj.weight", [KV_HEADS * HEAD_DIM, HIDDEN]
        yield p + "self_attn.o_proj.weight", [HIDDEN, HIDDEN]
        yield p + "self_attn.q_proj.weight", [HIDDEN, HIDDEN]
        yield p + "self_attn.v_proj.weight", [KV_HEADS * HEAD_DIM, HIDDEN]
    yield "model.norm.weight", [HIDDEN]


def bf16(x):
    return struct.unpack("<I", struct.pack("<f", x))[0] >> 16


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = random.Random(7)
    block = struct.pack("<%dH" % (2 << 20),
                        *(bf16(rng.uniform(-0.03, 0.03)) for _ in range(2 << 20)))
    one = struct.pack("<H", bf16(1.0))
    names = sorted(tensors(), key=lambda t: t[0])
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name, shape in names:
        n = 2
        for d in shape:
            n *= d
        header[name] = {"dtype": "BF16", "shape": shape,
                        "data_offsets": [offset, offset + n]}
        offset += n
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(os.path.join(out, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for i, (name, shape) in enumerate(names):
            n = 2
            for d in shape:
                n *= d
            if len(shape) == 1:
                f.write(one * (n // 2))
                continue
            rot = (i * 12345 * 2) % len(block)
            rotated = block[rot:] + block[:rot]
            while n > 0:
                k = min(n, len(rotated))
                f.write(rotated[:k])
                n -= k
    config = {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama",
        "hidden_size": HIDDEN, "intermediate_size": INTER,
        "num_hidden_layers": LAYERS, "num_attention_heads": HEADS,
        "num_key_value_heads": KV_HEADS, "vocab_size": VOCAB,
        "max_position_embeddings": 2048, "rms_norm_eps": 1e-05,
        "rope_theta": 10000.0, "hidden_act": "silu",
        "tie_word_embeddings": False, "torch_dtype": "bfloat16",
        "bos_token_id": 1, "eos_token_id": 2,
    }
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=2, sort_keys=True)
    with open(os.path.join(out, "generation_config.json"), "w") as f:
        json.dump({"bos_token_id": 1, "eos_token_id": 2}, f)


if __name__ == "__main__":
    main()
