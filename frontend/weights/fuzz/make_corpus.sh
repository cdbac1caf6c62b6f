#!/usr/bin/env bash
# make_corpus.sh OUT_DIR [LLMC_MAKE_GGUF]
#
# Seeds for the weights fuzzers, in OUT_DIR/safetensors and OUT_DIR/gguf:
#  - the header (plus 4 KiB of data) of every test checkpoint's .safetensors,
#    and small complete files of every dtype built here;
#  - GGUF files written by llmc-make-gguf for a tiny checkpoint built here (in
#    each storage type) and for llama-mha / llama-gqa, and bare one-tensor
#    files of the other ggml block formats llmc reads.
# LLMC_MAKE_GGUF defaults to build-fuzz/bin, then build-weights/bin.
set -euo pipefail

if [[ $# -lt 1 ]]; then
  echo "usage: $0 OUT_DIR [LLMC_MAKE_GGUF]" >&2
  exit 2
fi
out=$1
root=$(cd "$(dirname "$0")/../../.." && pwd)
models=$root/test/data/models
tool=${2:-}
if [[ -z $tool ]]; then
  for b in build-fuzz build-weights build; do
    if [[ -x $root/$b/bin/llmc-make-gguf ]]; then
      tool=$root/$b/bin/llmc-make-gguf
      break
    fi
  done
fi
if [[ -z $tool || ! -x $tool ]]; then
  echo "$0: llmc-make-gguf not found; build it or pass its path" >&2
  exit 1
fi

mkdir -p "$out/safetensors" "$out/gguf"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

python3 - "$models" "$out/safetensors" "$tmp/tiny" <<'PY'
import json, os, struct, sys
models, out, tiny = sys.argv[1:4]

def safetensors(header, data):
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + data

# Real headers, with the first 4 KiB of data.
for root, _, files in os.walk(models):
    for f in sorted(files):
        if f.endswith(".safetensors"):
            raw = open(os.path.join(root, f), "rb").read()
            n = struct.unpack("<Q", raw[:8])[0]
            name = os.path.basename(root) + "-" + f
            open(os.path.join(out, name), "wb").write(raw[: 8 + n + 4096])

# Small complete files: one tensor of each dtype, then a 2-tensor file.
sizes = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4,
         "I16": 2, "I8": 1, "U8": 1, "BOOL": 1}
for dt, sz in sizes.items():
    data = bytes(range(2 * 3 * sz))
    hdr = {"__metadata__": {"format": "pt"},
           "w": {"dtype": dt, "shape": [2, 3], "data_offsets": [0, len(data)]}}
    open(os.path.join(out, "small-" + dt), "wb").write(safetensors(hdr, data))
hdr = {"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},
       "b": {"dtype": "BF16", "shape": [], "data_offsets": [16, 18]},
       "c": {"dtype": "F32", "shape": [0, 5], "data_offsets": [18, 18]}}
open(os.path.join(out, "small-multi"), "wb").write(
    safetensors(hdr, struct.pack("<4f", 1, -2, 3.5, 0) + b"\x80\x3f"))

# A tiny Llama checkpoint for llmc-make-gguf (GGUF seeds of a few KiB).
os.makedirs(tiny, exist_ok=True)
cfg = {"architectures": ["LlamaForCausalLM"], "hidden_size": 32,
       "intermediate_size": 32, "num_attention_heads": 2,
       "num_key_value_heads": 1, "num_hidden_layers": 1,
       "max_position_embeddings": 64, "rms_norm_eps": 1e-5,
       "rope_theta": 10000.0, "vocab_size": 8, "bos_token_id": 6,
       "eos_token_id": 7}
json.dump(cfg, open(os.path.join(tiny, "config.json"), "w"))
shapes = {"model.embed_tokens.weight": [8, 32], "model.norm.weight": [32],
          "lm_head.weight": [8, 32],
          "model.layers.0.input_layernorm.weight": [32],
          "model.layers.0.post_attention_layernorm.weight": [32],
          "model.layers.0.self_attn.q_proj.weight": [32, 32],
          "model.layers.0.self_attn.k_proj.weight": [16, 32],
          "model.layers.0.self_attn.v_proj.weight": [16, 32],
          "model.layers.0.self_attn.o_proj.weight": [32, 32],
          "model.layers.0.mlp.gate_proj.weight": [32, 32],
          "model.layers.0.mlp.up_proj.weight": [32, 32],
          "model.layers.0.mlp.down_proj.weight": [32, 32]}
hdr, data = {}, b""
for i, (name, shape) in enumerate(sorted(shapes.items())):
    n = 1
    for d in shape:
        n *= d
    vals = [((j * 7 + i) % 13 - 6) / 10.0 for j in range(n)]
    hdr[name] = {"dtype": "F32", "shape": shape,
                 "data_offsets": [len(data), len(data) + 4 * n]}
    data += struct.pack("<%df" % n, *vals)
open(os.path.join(tiny, "model.safetensors"), "wb").write(safetensors(hdr, data))
vocab = {"a": 0, "b": 1, "c": 2, "ab": 3, "abc": 4, "\u0120": 5}
tok = {"added_tokens": [
           {"id": 6, "content": "<s>", "special": True},
           {"id": 7, "content": "</s>", "special": True}],
       "model": {"type": "BPE", "vocab": vocab, "merges": ["a b", "ab c"]}}
json.dump(tok, open(os.path.join(tiny, "tokenizer.json"), "w"))
json.dump({"add_bos_token": True, "chat_template": "{{ messages }}"},
          open(os.path.join(tiny, "tokenizer_config.json"), "w"))
PY

# One tensor of each ggml block format llmc reads (llmc-make-gguf writes
# only F32/F16/BF16/Q8_0/Q4_0): a bare GGUF v3, no metadata, two blocks
# each of bytes that are not all zero.
python3 - "$out/gguf" <<'PY'
import os, struct, sys
out = sys.argv[1]
# ggml type: (values per block, bytes per block)
types = {3: (32, 20), 6: (32, 22), 7: (32, 24), 20: (32, 18), 10: (256, 84),
         11: (256, 110), 12: (256, 144), 13: (256, 176), 14: (256, 210)}
def gstr(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b
for t, (per, size) in types.items():
    info = gstr("w") + struct.pack("<I", 2) + struct.pack("<QQ", per, 2)
    info += struct.pack("<IQ", t, 0)
    head = b"GGUF" + struct.pack("<IQQ", 3, 1, 0) + info
    head += b"\0" * (-len(head) % 32)
    data = bytes((i * 37 + t) % 251 for i in range(2 * size))
    open(os.path.join(out, "blocks-type%d.gguf" % t), "wb").write(head + data)
PY

for t in f32 f16 bf16 q8_0 q4_0; do
  "$tool" "$tmp/tiny" -o "$out/gguf/tiny-$t.gguf" --type "$t"
done
"$tool" "$models/llama-mha" -o "$out/gguf/llama-mha-q4_0.gguf" --type q4_0 2>/dev/null
"$tool" "$models/llama-gqa" -o "$out/gguf/llama-gqa-q8_0.gguf" --type q8_0
echo "corpus: $(ls "$out/safetensors" | wc -l) safetensors, $(ls "$out/gguf" | wc -l) gguf seeds in $out"
