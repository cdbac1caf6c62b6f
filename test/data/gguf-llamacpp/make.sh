#!/usr/bin/env bash
# Regenerates the fixtures here with llama.cpp itself (the prebuilt libllama
# of node-llama-cpp 3.21.1, llama.cpp 80fb11a; run bench/e2e/peers/setup.sh
# first): the bundled model as a GGUF (llmc-make-gguf, f32), quantized to
# Q4_K_M, Q5_K_M, Q6_K, Q3_K_M and Q2_K by llama.cpp's own quantizer (../shared/bench-peers/llama_quantize.cpp,
# copied here as llama_quantize.cpp), and llama.cpp's argmax at every
# position of a 40-token prompt and its greedy continuation
# (llama_reference.cpp). Also Gemma 2: test/data/models/gemma2-softcap with
# query_pre_attn_scalar 32 (= head_dim: llama.cpp's gemma2 has no key for it
# and derives that value) as an F32 GGUF (llmc-make-gguf, which writes
# what convert_hf_to_gguf.py's Gemma2Model does: norms as 1 + w, softcaps,
# window), with llama.cpp's argmax and greedy tokens on it; Gemma 3, Phi-3
# and the MoE fixtures the same way (below). CI does not run this: the
# outputs are committed (LLMC_FTYPES="" skips the bundled model's quants).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
P=${LLMC_PEER_DIR:-/tmp/llmc-bench/peer}
B=$P/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64
build=${LLMC_BUILD_DIR:-$root/build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for tool in llama_quantize llama_reference; do
  g++ -O2 -std=c++17 -I"$P/llama.cpp-src/include" -I"$P/llama.cpp-src/ggml/include" \
    -o "$tmp/$tool" "$here/$tool.cpp" -L"$B" -l:libllama.v0.4.0.so -l:libggml.v0.4.0.so \
    -l:libggml-base.so -Wl,-rpath,"$B"
done
"$build/bin/llmc-make-gguf" "$root/test/data/models/fortune-llama" -o "$tmp/f32.gguf" --type f32
# The bundled model's tokens for "The man who has no imagination has no
# wings. A journey of a thousand miles begins with a single step, ...", BOS
# first, cut to 40.
ids=1,377,463,476,544,497,644,382,265,411,544,497,272,1095,1333,325,473,435,665,1331,299,264,301,537,394,283,367,285,321,1332,1140,380,264,271,288,300,361,587,1339,311
for ftype in ${LLMC_FTYPES-Q4_K_M Q5_K_M Q6_K Q3_K_M Q2_K}; do
  NLC_BINS=$B "$tmp/llama_quantize" "$tmp/f32.gguf" "$here/fortune-$ftype.gguf" "$ftype"
  NLC_BINS=$B "$tmp/llama_reference" "$here/fortune-$ftype.gguf" "$ids" 16 > "$here/fortune-$ftype.json"
  cat "$here/fortune-$ftype.json"
done

# llama.cpp's argmax and greedy tokens on GGUF $1 (written here) for the
# last (40-token) prompt of reference checkpoint $2's reference.json.
reference_on() {
  local ids
  ids=$(/usr/bin/python3 -c "import json, sys; r = json.load(open(sys.argv[1])); print(','.join(map(str, r['prompts'][-1]['input_ids'])))" \
    "$root/test/data/models/$2/reference/reference.json")
  NLC_BINS=$B "$tmp/llama_reference" "$here/$1.gguf" "$ids" 16 > "$here/$1.json"
  cat "$here/$1.json"
}

# Gemma 2 and 3: the checkpoint with query_pre_attn_scalar = head_dim (32;
# llama.cpp has no key for it and derives that value), an F32 GGUF as
# convert_hf_to_gguf.py's Gemma2Model / Gemma3Model writes it (norms, q/k
# norms included, as 1 + w; softcaps, window; Gemma 3's linear rope
# scaling). llama.cpp's gemma3 also assumes rope_local_base_freq 10000 and
# every sixth layer global, which gemma3-text has.
for m in gemma2-softcap gemma3-text; do
  cp -r "$root/test/data/models/$m" "$tmp/$m"
  rm -rf "$tmp/$m/reference"
  python3 - "$tmp/$m/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["query_pre_attn_scalar"] = c["head_dim"]
json.dump(c, open(sys.argv[1], "w"), indent=2, sort_keys=True)
PY
  "$build/bin/llmc-make-gguf" "$tmp/$m" -o "$here/$m-f32.gguf" --type f32
  reference_on "$m-f32" "$m"
done

# Phi-3: test/data/models/phi4-mini-longrope as convert_hf_to_gguf.py's
# Phi3MiniModel writes it (fused attn_qkv and ffn_up, rope_factors_long and
# _short, rope.scaling.attn_factor); its 40-token prompt is past the LongRoPE
# switch (24), where llama.cpp (choosing by context size) and Hugging Face
# (by sequence length) both use the long factors.
"$build/bin/llmc-make-gguf" "$root/test/data/models/phi4-mini-longrope" -o "$here/phi4-mini-longrope-f32.gguf" --type f32
reference_on phi4-mini-longrope-f32 phi4-mini-longrope

# Mixture of experts. The bundled model upcycled to 4 experts, top 2
# (tools/demo-model/upcycle_moe.py: trained MLP copies with 10% noise, a
# random router), quantized to Q4_K_M by llama.cpp; and the two MoE
# reference checkpoints as F32 GGUFs (llmc-make-gguf: Mixtral as llama with
# stacked experts, Qwen3-MoE as qwen3moe), with llama.cpp's argmax and
# greedy tokens on each.
/usr/bin/python3 "$root/tools/demo-model/upcycle_moe.py" "$tmp/fortune-moe"
"$build/bin/llmc-make-gguf" "$tmp/fortune-moe" -o "$tmp/fortune-moe-f32.gguf" --type f32
NLC_BINS=$B "$tmp/llama_quantize" "$tmp/fortune-moe-f32.gguf" "$here/fortune-moe-Q4_K_M.gguf" Q4_K_M
NLC_BINS=$B "$tmp/llama_reference" "$here/fortune-moe-Q4_K_M.gguf" "$ids" 16 > "$here/fortune-moe-Q4_K_M.json"
cat "$here/fortune-moe-Q4_K_M.json"
for m in mixtral-moe qwen3-moe; do
  "$build/bin/llmc-make-gguf" "$root/test/data/models/$m" -o "$here/$m-f32.gguf" --type f32
  reference_on "$m-f32" "$m"
done

# gpt-oss: test/data/models/gpt-oss-mxfp4 as convert_hf_to_gguf.py's
# GptOssModel writes it (MXFP4 experts moved into ggml's blocks, gate/up
# split, attn_sinks), once as it is (YaRN `truncate: false`, which llama.cpp
# cannot honour: it rounds the correction range; llmc reads llmc-make-gguf's
# yarn_truncate key) and once with `truncate: true`, where both round.
cp -r "$root/test/data/models/gpt-oss-mxfp4" "$tmp/gpt-oss-truncate"
rm -rf "$tmp/gpt-oss-truncate/reference"
python3 - "$tmp/gpt-oss-truncate/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["rope_scaling"]["truncate"] = True
json.dump(c, open(sys.argv[1], "w"), indent=2, sort_keys=True)
PY
"$build/bin/llmc-make-gguf" "$tmp/gpt-oss-truncate" -o "$here/gpt-oss-truncate-mxfp4.gguf" --type f32
reference_on gpt-oss-truncate-mxfp4 gpt-oss-mxfp4
"$build/bin/llmc-make-gguf" "$root/test/data/models/gpt-oss-mxfp4" -o "$here/gpt-oss-mxfp4.gguf" --type f32
reference_on gpt-oss-mxfp4 gpt-oss-mxfp4
