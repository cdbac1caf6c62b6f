#!/usr/bin/env bash
# Constrained decoding against free decoding on the ~110M bench model (run_bench.sh small's plans,
# GPT-2's 50,257-token vocabulary), batch 1, in the same run (A B A B, medians of decode tok/s):
#   free         --max-new-tokens N with --ignore-eos, N = what the constrained run produced
#   constrained  --json-schema bench/e2e/structured_bench.schema.json (eight records of bounded
#                strings, numbers and arrays: a few hundred tokens whatever the weights)
# and the mask itself: build/bin/llmc_mask_bench over test/data/schemas (median / p99 µs per mask,
# compile ms per schema).
# Usage: bench/e2e/structured_bench.sh   (run bench/e2e/run_bench.sh small first)
# Env: LLMC_BENCH_DIR (default /tmp/llmc-bench), LLMC_BUILD_DIR, REPS (default 5),
#      FORMATS (default "int4 bf16").
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
W=${LLMC_BENCH_DIR:-/tmp/llmc-bench}
BUILD=${LLMC_BUILD_DIR:-$repo/build}
REPS=${REPS:-5} FORMATS=${FORMATS:-int4 bf16}
LLMC=$BUILD/bin/llmc
SCHEMA=$here/structured_bench.schema.json
{
  echo "date: $(date -u +%FT%TZ)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores visible"
  echo "isa: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|avx512f|avx512_bf16|avx512_vnni|amx_bf16|amx_int8)$' | tr '\n' ' ')"
  echo "llmc: $(git -C "$repo" rev-parse --short HEAD), reps $REPS"
}
echo "== mask time (GPT-2 vocabulary, random documents per schema)"
"$BUILD/bin/llmc_mask_bench" "$repo/test/data/models/tokenizers/gpt2" "$repo"/test/data/schemas/*.json --docs 20

# One run's decode tok/s and generated tokens.
one() {
  "$LLMC" run "$@" --json | /usr/bin/python3 -c '
import json, sys
s = json.loads(sys.stdin.read().strip().splitlines()[-1])["stats"]
print(s["decode_tokens_per_s"], s["generated_tokens"])'
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
for f in $FORMATS; do
  plan=$W/plans/small-$f.plan
  [ -f "$plan" ] || { echo "no $plan: run bench/e2e/run_bench.sh small first" >&2; exit 1; }
  prompt="Eight records of the results table, as JSON:"
  read -r _ n < <(one "$plan" --prompt "$prompt" --json-schema "$SCHEMA" --max-new-tokens 2000)
  free=() con=()
  for _ in $(seq "$REPS"); do
    read -r t _ < <(one "$plan" --prompt "$prompt" --max-new-tokens "$n" --ignore-eos)
    free+=("$t")
    read -r t _ < <(one "$plan" --prompt "$prompt" --json-schema "$SCHEMA" --max-new-tokens 2000)
    con+=("$t")
  done
  a=$(printf '%s\n' "${free[@]}" | median) b=$(printf '%s\n' "${con[@]}" | median)
  printf '%s: %d tokens, free %.1f tok/s, constrained %.1f tok/s, ratio %.3f\n' "$f" "$n" "$a" "$b" \
    "$(echo "$b / $a" | bc -l)"
done
