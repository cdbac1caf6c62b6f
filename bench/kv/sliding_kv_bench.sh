#!/bin/sh
# Sliding-window KV memory on a Gemma-3-4B-shaped plan (bench/e2e/peers/gen_gemma3_shape.py):
# KV bytes one sequence of the context holds, and the full contexts a fixed
# 8 GiB budget admits, with the sliding layers' own pool and without it
# (llmc inspect), then what an engine actually makes of that budget
# (llmc run --stats: the pool split, blocks of 16 tokens).
#
# usage: bench/kv/sliding_kv_bench.sh [BUILD_DIR]     (from the repo root)
set -eu
BUILD=${1:-build}
OUT=${TMPDIR:-/tmp}/llmc-sliding-kv
mkdir -p "$OUT"
grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|avx512f|avx512_bf16|amx_tile)$' | tr '\n' ' '; echo
for ctx in 8192 32768; do
  /usr/bin/python3 bench/e2e/peers/gen_gemma3_shape.py "$OUT/ckpt$ctx" test/data/models/gemma3-text $ctx
  "$BUILD/bin/llmc" compile "$OUT/ckpt$ctx" -o "$OUT/g$ctx.plan" --target cpu -q
  for dtype in bf16 int8; do
    echo "== context $ctx, KV $dtype, 8 GiB budget"
    "$BUILD/bin/llmc" inspect "$OUT/g$ctx.plan" \
      --kv-dtype $dtype --kv-cache-memory 8GiB | grep -E "full context|sliding|in --kv"
  done
  echo "== engine at context $ctx (bf16, 8 GiB, --max-num-seqs 64)"
  printf '{"prompt_ids": [2, 10, 11], "max_tokens": 2}\n' > "$OUT/p.jsonl"
  "$BUILD/bin/llmc" run "$OUT/g$ctx.plan" --prompts-file "$OUT/p.jsonl" \
    --kv-dtype bf16 --kv-cache-memory 8GiB --max-num-seqs 64 --stats \
    2>&1 >/dev/null | grep -E "KV pool|blocks"
done
