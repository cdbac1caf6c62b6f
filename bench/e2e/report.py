#!/usr/bin/python3
"""Turns one run_bench.sh result folder into markdown tables (stdout).

usage: report.py RESULTS_DIR HF_CONFIG_JSON FORMAT...
Reads llmc-<fmt>.json (llmc bench --json), llama-<fmt>.json (llama_mini_bench), membw.txt,
matmul_probe.json and, if present, kernels_bench.json.
"""
import json
import os
import re
import sys

res, cfg_path, formats = sys.argv[1], sys.argv[2], sys.argv[3:]
cfg = json.load(open(cfg_path))
V, H = cfg["vocab_size"], cfg["hidden_size"]
# An MoE reads k of E experts per token: llama.cpp's bytes per token are the
# GGUF's less the experts it does not read (every layer sparse, as qwen3moe).
E = cfg.get("num_experts", cfg.get("num_local_experts", 0))
K_ACTIVE = cfg.get("num_experts_per_tok", 0)
EXPERT_WIDTH = cfg.get("moe_intermediate_size", cfg["intermediate_size"])
EXPERT_PARAMS = cfg["num_hidden_layers"] * E * 3 * EXPERT_WIDTH * H if E else 0

bw = None  # DRAM read GB/s, median of the full-buffer "read" kernel
for line in open(os.path.join(res, "membw.txt")):
    m = re.match(r"read\s+\S+ MiB\s+best\s+(\S+) GB/s\s+median\s+(\S+) GB/s", line)
    if m:
        bw = float(m.group(2))
        break
probe = json.load(open(os.path.join(res, "matmul_probe.json")))


def gflops(name):
    p = probe.get(name, {})
    return p["gflops_median"] if p.get("ok") and not p["impl"].startswith("ref") else 0.0


# The fastest oneDNN path a format could use here. bf16 without bf16 hardware (no AVX512_BF16/AMX)
# is at best converted to f32 and run there; quantized weights may use either f32 (dequantize) or
# int8 dot products (quantize activations, as llama.cpp's Q8_0/Q4_0 do).
ceiling = {
    "f32": gflops("f32"),
    "bf16": gflops("bf16") or gflops("f32"),
    "int8": max(gflops("f32"), gflops("int8")),
    "int4": max(gflops("f32"), gflops("int8")),
    "mxfp4": max(gflops("f32"), gflops("int8")),
}
for k in ("q4_k_m", "q5_k_m", "q6_k"):  # llama.cpp's K-quant GGUFs: int8 dots on both sides
    ceiling[k] = max(gflops("f32"), gflops("int8"))
# llama.cpp bytes of one GGUF row of token_embd, to subtract the table it only gathers from.
# mxfp4 (gpt-oss): BF16 tables and dense weights, MXFP4 experts.
# K-quant files: llama.cpp's quantizer keeps token_embd in Q4_K (Q4_K_M), Q5_K (Q5_K_M), Q6_K (Q6_K).
gguf_bpe = {"f32": 4.0, "bf16": 2.0, "int8": 34 / 32, "int4": 18 / 32, "mxfp4": 2.0,
            "q4_k_m": 144 / 256, "q5_k_m": 176 / 256, "q6_k": 210 / 256}
expert_bpe = dict(gguf_bpe, mxfp4=17 / 32)
gguf_name = {"f32": "F32", "bf16": "BF16", "int8": "Q8_0", "int4": "Q4_0", "mxfp4": "MXFP4 + BF16",
             "q4_k_m": "Q4_K_M", "q5_k_m": "Q5_K_M", "q6_k": "Q6_K"}

rows, detail = [], []
for f in formats:
    L = json.load(open(os.path.join(res, f"llmc-{f}.json")))
    G = json.load(open(os.path.join(res, f"llama-{f}.json")))
    r = L["results"][0]
    lp, ld = r["prefill_tok_s"], r["decode_tok_s"]
    gp, gd = G["pp_median"], G["tg_median"]
    lbytes = L["decode_weight_bytes_per_token"]
    gbytes = G["model_size"] - V * H * gguf_bpe[f] * (1 - 1 / V)
    if E:
        gbytes -= EXPERT_PARAMS * expert_bpe[f] * (1 - K_ACTIVE / E)
    bpath = os.path.join(res, f"llmc-{f}-batch.json")
    batch8 = json.load(open(bpath))["results"][0] if os.path.exists(bpath) else None
    l_roof = bw * 1e9 / lbytes
    g_roof = bw * 1e9 / gbytes
    p_roof = ceiling[f] * 1e9 / L["prefill_flops_per_token"] if ceiling[f] else 0
    rows.append(
        f"| {f} ({gguf_name[f]}) | {lp:.0f} | {gp:.0f} | {lp / gp:.2f} | {ld:.1f} | {gd:.1f} | {ld / gd:.2f} "
        f"| {100 * ld / l_roof:.0f}% | {100 * gd / g_roof:.0f}% | "
        + (f"{100 * lp / p_roof:.0f}% / {100 * gp / p_roof:.0f}%" if p_roof else "n/a")
        + " |"
    )
    detail.append(
        f"| {f} | {lbytes / 1e6:.0f} | {gbytes / 1e6:.0f} | {l_roof:.0f} | {g_roof:.0f} | {p_roof:.0f} "
        f"| {r['ttft_ms']:.0f} | {r['tpot_ms']:.1f} | {L['peak_rss_bytes'] / 2**20:.0f} "
        f"| {G['max_rss_bytes'] / 2**20:.0f} |"
        + (f" {batch8['batch']}: {batch8['decode_tok_s']:.1f} ({batch8['decode_tok_s'] / ld:.2f}x) |"
           if batch8 else "")
    )

print("| format (GGUF) | llmc prefill tok/s | llama.cpp prefill tok/s | ratio | llmc decode tok/s "
      "| llama.cpp decode tok/s | ratio | llmc decode % of BW roofline | llama.cpp decode % of BW roofline "
      "| prefill % of matmul roofline (llmc / llama.cpp) |")
print("|---|---|---|---|---|---|---|---|---|---|")
print("\n".join(rows))
print()
has_b8 = any(d.count("|") > 11 for d in detail)
print("| format | llmc MB read/token | llama.cpp MB read/token | llmc decode roofline tok/s "
      "| llama.cpp decode roofline tok/s | prefill roofline tok/s | llmc TTFT ms | llmc TPOT ms "
      "| llmc peak RSS MiB | llama.cpp peak RSS MiB |" + (" llmc batch B decode tok/s (vs batch 1) |" if has_b8 else ""))
print("|---|---|---|---|---|---|---|---|---|---|" + ("---|" if has_b8 else ""))
print("\n".join(detail))
print()
impl = ", ".join(
    f"{k} {probe[k]['gflops_median']:.0f} GFLOP/s ({probe[k]['impl']})" if probe[k]["ok"] else f"{k} unsupported"
    for k in ("f32", "bf16", "int8")
)
print(f"Ceilings (same run): DRAM read {bw:.1f} GB/s (membw, median); oneDNN matmul "
      f"{probe['M']}x{probe['N']}x{probe['K']}: {impl}.")
kb = os.path.join(res, "kernels_bench.json")
if os.path.exists(kb):
    names = ["f32", "bf16", "int8", "int4", "q4_k", "q5_k", "q6_k"]
    parts = []
    for b in json.load(open(kb))["benchmarks"]:
        m = re.match(r"BM_Prefill/fmt:(\d)", b["name"])
        if m and "FLOP/s" in b:
            parts.append(f"{names[int(m.group(1))]} {b['FLOP/s'] / 1e9:.0f} ({b.get('label', '')})")
    if parts:
        print("llmc's own cpu matmul path (llmc_kernels_bench BM_Prefill, 512x2048x2048, GFLOP/s): "
              + "; ".join(parts) + ".")
