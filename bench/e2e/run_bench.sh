#!/usr/bin/env bash
# llmc vs llama.cpp on the same random-weight Llama checkpoint, side by side, with the machine's two
# ceilings measured in the same run:
#   decode roofline  = DRAM read bandwidth (membw) / weight bytes one decode step reads
#   prefill roofline = oneDNN matmul GFLOP/s (matmul_probe) / prefill FLOPs per token
# Usage: bench/e2e/run_bench.sh [small|1b|moe-small|gpt-oss-small] (default small; about 5-10 minutes on 2
#   cores)
#   moe-small: Qwen3-30B-A3B's shape scaled down (qwen3moe, 64 experts, top 8, expert width 256); llmc also
#   decodes a batch of 8 (BATCH, default 8 there), whose experts a step reads once for all 8 tokens.
#   gpt-oss-small: gpt-oss-20b's shape scaled down (gen_gpt_oss.py: MXFP4 experts, BF16 rest), one format,
#   mxfp4: llmc compiles the Hugging Face folder with --dtype bf16 (experts kept MXFP4), llama.cpp reads
#   the GGUF llmc-make-gguf writes from it (the same blocks, moved).
#   FORMATS may also name q4_k_m, q5_k_m and q6_k: llama.cpp's own quantizer makes that GGUF from the f32
#   one (llama_quantize), and llmc compiles the same file (K-quants kept as they are, --quant auto).
# Env: LLMC_BENCH_DIR (work folder, default /tmp/llmc-bench), LLMC_PEER_DIR (llama.cpp + checkpoints,
#      default $LLMC_BENCH_DIR/peer), LLMC_BUILD_DIR (default <repo>/build), LLMC_BENCH_SKIP_BUILD=1,
#      THREADS (2), PROMPT_LEN (512), GEN_LEN (128), REPS (3), FORMATS ("f32 bf16 int8 int4").
# Generated checkpoints, GGUFs and plans stay in the work folder, never in the repository.
# Machines are shared and noisy: read the ratios, which are measured minutes apart, not the absolutes.
set -euo pipefail
size=${1:-small}
case $size in small | 1b | moe-small | gpt-oss-small) ;; *) echo "usage: $0 [small|1b|moe-small|gpt-oss-small]" >&2; exit 2 ;; esac
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
W=${LLMC_BENCH_DIR:-/tmp/llmc-bench}
export LLMC_PEER_DIR=${LLMC_PEER_DIR:-$W/peer}
P=$LLMC_PEER_DIR
BUILD=${LLMC_BUILD_DIR:-$repo/build}
THREADS=${THREADS:-2} PP=${PROMPT_LEN:-512} TG=${GEN_LEN:-128} REPS=${REPS:-3}
FORMATS=${FORMATS:-f32 bf16 int8 int4}
[ "$size" = moe-small ] && FORMATS=${FORMATS_MOE:-bf16 int8 int4} # f32 is 2.2 GB of experts
[ "$size" = gpt-oss-small ] && FORMATS=mxfp4
# A second llmc run decoding a batch (moe-small: 8), in its own process so the batch-1 run's peak RSS
# is the one compared with llama.cpp's.
BATCH=${BATCH:-$([ "$size" = moe-small ] && echo 8 || echo "")}
R=$W/results-$size
mkdir -p "$W/plans" "$R"
rm -f "$R/sizes.txt"
log() { echo "[$(date +%T)] $*" >&2; }

# The 1.1B set is ~20 GB of checkpoints (HF f32 + five GGUFs) plus ~10 GB of plans, and the f32 plan
# alone maps 4.7 GB: refuse early rather than fail an hour in.
if [ "$size" = 1b ] && [ ! -d "$P/models/1b-hf" ]; then # not set up yet
  free_gb=$(df -Pk "$W" | awk 'NR==2 {print int($4 / 1048576)}')
  mem_gb=$(awk '/MemAvailable/ {print int($2 / 1048576)}' /proc/meminfo)
  if [ "$free_gb" -lt 35 ] || [ "$mem_gb" -lt 12 ]; then
    echo "1b needs ~35 GB free disk under $W (have $free_gb) and ~12 GB free memory (have $mem_gb)" >&2
    exit 1
  fi
fi

log "baseline: llama.cpp + $size checkpoint in $P"
bash "$here/peers/setup.sh" "$size" >&2
NLC_BINS=$P/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64
export NLC_BINS
HF=$P/models/$size-hf

if [ "${LLMC_BENCH_SKIP_BUILD:-0}" != 1 ]; then
  if [ ! -f "$BUILD/build.ninja" ]; then
    log "configuring $BUILD"
    cmake -S "$repo" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release >&2
  fi
  log "building llmc and the cpu backend (-j${JOBS:-1})"
  ninja -C "$BUILD" -j"${JOBS:-1}" llmc llmc-backend-cpu llmc-make-gguf >&2
fi
if [ "$size" = gpt-oss-small ] && [ ! -f "$P/models/$size-mxfp4.gguf" ]; then
  log "writing $size's GGUF (llmc-make-gguf: BF16, the MXFP4 experts moved as they are)"
  "$BUILD/bin/llmc-make-gguf" "$HF" -o "$P/models/$size-mxfp4.gguf" --type bf16 >&2
fi
LLMC=$BUILD/bin/llmc
[ -x "$LLMC" ] || { echo "no $LLMC: build it or unset LLMC_BENCH_SKIP_BUILD" >&2; exit 1; }

# Machine and load, so a reader can judge the numbers.
{
  echo "date: $(date -u +%FT%TZ)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores visible"
  echo "isa: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|avx512f|avx512_bf16|amx_bf16|amx_int8)$' | tr '\n' ' ')"
  echo "llmc: $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$repo" diff --quiet 2>/dev/null || echo ' (+ uncommitted changes)')"
  echo "threads: $THREADS, prompt $PP, decode $TG, reps $REPS (median, after 1 warm-up)"
  echo "uptime before: $(uptime)"
} | tee "$R/machine.txt" >&2

log "ceilings: memory bandwidth"
OMP_NUM_THREADS=$THREADS OMP_PROC_BIND=close "$P/membw" 1024 5 >"$R/membw.txt"
log "ceilings: oneDNN matmul probe"
g++ -O2 -std=c++17 -o "$W/matmul_probe" "$here/matmul_probe.cpp" -ldnnl
# An MoE's FFN is its experts: their width is the shape (moe_intermediate_size).
read -r H F < <(/usr/bin/python3 -c "import json; c=json.load(open('$HF/config.json')); print(c['hidden_size'], c.get('moe_intermediate_size') or c['intermediate_size'])")
# The FFN up/gate shape at a 512-token prefill: the bulk of prefill FLOPs.
OMP_NUM_THREADS=$THREADS "$W/matmul_probe" "$PP" "$F" "$H" 10 >"$R/matmul_probe.json"
# The cpu backend's own kernel microbenchmark, if built: what llmc's linear path reaches (not a ceiling).
kb=""
for d in "$BUILD" "$repo/build-cpu"; do [ -x "$d/bin/llmc_kernels_bench" ] && { kb=$d/bin/llmc_kernels_bench; break; }; done
if [ -n "$kb" ]; then
  OMP_NUM_THREADS=$THREADS "$kb" --benchmark_filter=BM_Prefill --benchmark_min_time=0.3 \
    --benchmark_format=json >"$R/kernels_bench.json" 2>/dev/null || rm -f "$R/kernels_bench.json"
fi

declare -A GGUF=([f32]=f32 [bf16]=bf16 [int8]=q8_0 [int4]=q4_0 [mxfp4]=mxfp4 [q4_k_m]=q4_k_m
  [q5_k_m]=q5_k_m [q6_k]=q6_k)
for f in $FORMATS; do
  plan=$W/plans/$size-$f.plan
  src=$HF/config.json
  case $f in
    f32) flags="--dtype f32" ;; bf16) flags="--dtype bf16" ;;
    int8) flags="--quant int8" ;; int4) flags="--quant int4 --group 32" ;; # Q4_0 is groups of 32
    mxfp4) flags="--dtype bf16" ;; # the experts stay MXFP4 (--quant auto), the rest bf16
    q4_k_m | q5_k_m | q6_k)
      flags="" src=$P/models/$size-$f.gguf
      if [ ! -f "$src" ]; then
        log "llama.cpp's quantizer: $size-f32.gguf -> $(basename "$src")"
        "$P/llama_quantize" "$P/models/$size-f32.gguf" "$src" "$(echo "$f" | tr a-z A-Z)" >&2
      fi ;;
    *) echo "unknown format $f" >&2; exit 2 ;;
  esac
  if [ ! -f "$plan" ] || [ "$plan" -ot "$LLMC" ] || [ "$plan" -ot "$src" ]; then
    log "compile $f"
    # shellcheck disable=SC2086
    "$LLMC" compile "$src" -o "$plan" --target cpu $flags >&2
  fi
  log "llmc bench $f"
  OMP_NUM_THREADS=$THREADS "$LLMC" bench "$plan" --threads "$THREADS" --prompt-len "$PP" \
    --gen-len "$TG" --reps "$REPS" --json >"$R/llmc-$f.json"
  if [ -n "$BATCH" ]; then
    log "llmc bench $f, batch $BATCH"
    OMP_NUM_THREADS=$THREADS "$LLMC" bench "$plan" --threads "$THREADS" --prompt-len "$PP" \
      --gen-len "$TG" --reps "$REPS" --batch "$BATCH" --json >"$R/llmc-$f-batch.json"
  fi
  g=$P/models/$size-${GGUF[$f]}.gguf
  echo "$f: plan $(stat -c %s "$plan") bytes, GGUF $(stat -c %s "$g") bytes" >>"$R/sizes.txt"
  log "llama.cpp $(basename "$g")"
  # tgp = PP: llama.cpp decodes after a prompt as long as llmc's, so both read the same KV per step.
  "$P/llama_mini_bench" "$g" "$THREADS" "$PP" "$TG" "$PP" "$REPS" 1 >"$R/llama-$f.json"
done
echo "uptime after: $(uptime)" | tee -a "$R/machine.txt" >&2

# shellcheck disable=SC2086 # FORMATS is a list
/usr/bin/python3 "$here/report.py" "$R" "$HF/config.json" $FORMATS | tee "$R/table.md"
cat >>"$R/table.md" <<EOF

File sizes: $(cat "$R/sizes.txt" 2>/dev/null | tr '\n' ';')

Command: bench/e2e/run_bench.sh $size (THREADS=$THREADS PROMPT_LEN=$PP GEN_LEN=$TG REPS=$REPS BATCH=$BATCH)
$(cat "$R/machine.txt")
EOF
log "results in $R (table.md, raw JSON)"
