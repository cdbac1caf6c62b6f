#!/usr/bin/env bash
# Prints the README's quantization table for the bundled model: plan size,
# held-out perplexity (llmc perplexity, ctx 256) and decode speed (llmc bench)
# of each plan dtype, with ratios against the f32 plan measured in the same run.
#
#   tools/demo-model/quant_table.sh [BUILD_DIR] [BACKEND]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
backend=${2:-cpu}
llmc=$build/bin/llmc
model=$root/test/data/models/fortune-llama
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export LLMC_BACKEND_PATH=$build/bin

variants=("f32|--dtype f32" "bf16|--dtype bf16" "int8|--quant int8"
  "int4 (groups of 32)|--quant int4" "int4 (groups of 128)|--quant int4 --group 128")
echo "| plan | plan MB | perplexity (± s.e.) | vs f32 | decode tok/s | vs f32 |"
echo "|---|---|---|---|---|---|"
f32_ppl="" f32_tps=""
for v in "${variants[@]}"; do
  name=${v%%|*} flags=${v#*|}
  plan=$tmp/p.plan
  # shellcheck disable=SC2086
  "$llmc" compile "$model" -o "$plan" $flags 2>/dev/null
  mb=$(du -m --apparent-size "$plan" | cut -f1)
  read -r ppl se < <("$llmc" perplexity "$plan" --file "$model/heldout.txt" --ctx 256 \
    --backend "$backend" --json | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["perplexity"], j["perplexity_std_error"])')
  tps=$("$llmc" bench "$plan" --backend "$backend" --prompt-len 128 --gen-len 128 --reps 5 --json |
    python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["results"][0]["decode_tok_s"])')
  f32_ppl=${f32_ppl:-$ppl} f32_tps=${f32_tps:-$tps}
  python3 -c "import sys; n,mb,p,se,t,fp,ft=sys.argv[1:]; print(f'| {n} | {mb} | {float(p):.4f} ± {float(se):.2f} | {float(p)/float(fp):.4f} | {float(t):.0f} | {float(t)/float(ft):.2f} |')" \
    "$name" "$mb" "$ppl" "$se" "$tps" "$f32_ppl" "$f32_tps"
done
echo
echo "($backend backend, $(nproc) threads available; $(git -C "$root" rev-parse --short HEAD))"
