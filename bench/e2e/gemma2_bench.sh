#!/usr/bin/env bash
# llmc vs llama.cpp on one random-weight Gemma 2 checkpoint (peers/gen_gemma2.py: Gemma-2-2B's
# structure at the bench model's size), side by side: prefill and decode tok/s and peak RSS per
# format. llama.cpp reads llmc-make-gguf's F32 GGUF (the file its own gemma2 code was checked on, see
# test/e2e/gguf_llamacpp_test.cpp), BF16, and its own Q8_0 and Q4_0 of it; llmc compiles each of
# those GGUFs as it keeps them (Q8_0 -> int8, Q4_0 -> int4, exactly).
# Usage: bench/e2e/gemma2_bench.sh        (about 10 minutes on 2 cores)
# Env: as run_bench.sh (LLMC_BENCH_DIR, LLMC_PEER_DIR, LLMC_BUILD_DIR, THREADS, PROMPT_LEN, GEN_LEN,
#      REPS, FORMATS).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
W=${LLMC_BENCH_DIR:-/tmp/llmc-bench}
export LLMC_PEER_DIR=${LLMC_PEER_DIR:-$W/peer}
P=$LLMC_PEER_DIR
BUILD=${LLMC_BUILD_DIR:-$repo/build}
THREADS=${THREADS:-2} PP=${PROMPT_LEN:-512} TG=${GEN_LEN:-128} REPS=${REPS:-3}
FORMATS=${FORMATS:-f32 bf16 int8 int4}
R=$W/results-gemma2
M=$W/gemma2
mkdir -p "$R" "$M"
log() { echo "[$(date +%T)] $*" >&2; }

bash "$here/peers/setup.sh" tiny >&2 # llama.cpp and llama_mini_bench
export NLC_BINS=$P/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64
[ -x "$P/llama_quantize" ] || g++ -O2 -std=c++17 -I"$P/llama.cpp-src/include" \
  -I"$P/llama.cpp-src/ggml/include" -o "$P/llama_quantize" \
  "$repo/test/data/gguf-llamacpp/llama_quantize.cpp" -L"$NLC_BINS" -l:libllama.v0.4.0.so \
  -l:libggml.v0.4.0.so -l:libggml-base.so -Wl,-rpath,"$NLC_BINS"
LLMC=$BUILD/bin/llmc
[ -f "$M/hf/model.safetensors" ] ||
  /usr/bin/python3 "$here/peers/gen_gemma2.py" "$M/hf" "$repo/test/data/models/gemma2-softcap"
[ -f "$M/f32.gguf" ] || "$BUILD/bin/llmc-make-gguf" "$M/hf" -o "$M/f32.gguf" --type f32
[ -f "$M/bf16.gguf" ] || "$BUILD/bin/llmc-make-gguf" "$M/hf" -o "$M/bf16.gguf" --type bf16
for q in Q8_0 Q4_0; do
  [ -f "$M/$q.gguf" ] || "$P/llama_quantize" "$M/f32.gguf" "$M/$q.gguf" "$q" >&2
done
{
  echo "date: $(date -u +%FT%TZ)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores visible"
  echo "isa: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|avx512f|avx512_bf16|avx512_vnni|amx_bf16|amx_int8)$' | tr '\n' ' ')"
  echo "llmc: $(git -C "$repo" rev-parse --short HEAD)"
  echo "threads: $THREADS, prompt $PP, decode $TG, reps $REPS"
} | tee "$R/machine.txt" >&2
declare -A GGUF=([f32]=f32 [bf16]=bf16 [int8]=Q8_0 [int4]=Q4_0)
echo "| format | prefill llmc / llama.cpp tok/s | ratio | decode llmc / llama.cpp tok/s | ratio | peak RSS ratio |"
echo "|---|---|---|---|---|---|"
for f in $FORMATS; do
  g=$M/${GGUF[$f]}.gguf plan=$M/$f.plan
  [ -f "$plan" ] && [ "$plan" -nt "$LLMC" ] || "$LLMC" compile "$g" -o "$plan" --target cpu --quiet
  log "llmc bench $f"
  OMP_NUM_THREADS=$THREADS "$LLMC" bench "$plan" --threads "$THREADS" --prompt-len "$PP" \
    --gen-len "$TG" --reps "$REPS" --json >"$R/llmc-$f.json"
  log "llama.cpp $f"
  "$P/llama_mini_bench" "$g" "$THREADS" "$PP" "$TG" "$PP" "$REPS" 1 >"$R/llama-$f.json"
  /usr/bin/python3 - "$R/llmc-$f.json" "$R/llama-$f.json" "$f" <<'PY'
import json, sys
l = json.load(open(sys.argv[1])); p = json.loads(open(sys.argv[2]).read().strip().splitlines()[-1])
r = l["results"][0]
pf, dc, rss = r["prefill_tok_s"], r["decode_tok_s"], l["peak_rss_bytes"]
print(f"| {sys.argv[3]} | {pf:.0f} / {p['pp_median']:.0f} | {pf / p['pp_median']:.2f}x | "
      f"{dc:.1f} / {p['tg_median']:.1f} | {dc / p['tg_median']:.2f}x | {rss / p['max_rss_bytes']:.2f}x |")
PY
done | tee "$R/table.md"
