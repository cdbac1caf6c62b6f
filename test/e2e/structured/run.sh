#!/usr/bin/env bash
# Structured output end to end: every schema of test/data/schemas, OpenAI's
# json_object mode and llama.cpp's GBNF grammars, on the bundled model and
# reference models of each tokenizer kind (SentencePiece with byte fallback,
# byte-level BPE), greedy and sampled at several temperatures and seeds, all
# through one `llmc run --prompts-file` per model (constrained requests
# batched together). structured.mjs checks every output with ajv and with
# GBNF checkers of its own. Installs ajv at the pinned versions into WORK.
# Usage: run.sh BIN_DIR DATA_DIR WORK_DIR
set -euo pipefail
bin=$1 data=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work"
if [ ! -f "$work/node_modules/ajv/package.json" ] ||
  ! cmp -s "$here/package.json" "$work/package.json"; then
  cp "$here/package.json" "$work/package.json"
  (cd "$work" && timeout 300 npm install --no-audit --no-fund --loglevel=error)
fi
cp "$here/structured.mjs" "$work/structured.mjs"
rm -rf "$work/schemas" && cp -r "$data/schemas" "$work/schemas"
(cd "$work" && node structured.mjs gen "$data" "$work")
rc=0
for model in fortune-llama gpt2 llama-bf16 llama-gqa llama-mha llama-mqa llama-sharded \
  mistral-swa qwen2-bias-tied qwen3-qknorm gemma2-softcap; do
  plan=$work/$model.plan
  "$bin/llmc" compile "$data/models/$model" -o "$plan" --target cpu >/dev/null
  timeout 900 "$bin/llmc" run "$plan" --prompts-file "$work/requests.jsonl" \
    --json --max-num-seqs 16 >"$work/$model.out"
  (cd "$work" && node structured.mjs check "$work" "$work/$model.out" "$model") || rc=1
done
exit $rc
