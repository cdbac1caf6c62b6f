#!/usr/bin/env bash
# Speculative decoding against plain decoding, batch 1, in the same run (A B A B, medians):
#   copy    the ~110M bench model (run_bench.sh small's bf16 and int4 plans) on a prompt whose
#           greedy continuation repeats itself (random weights fall into loops: a copying
#           workload), --speculative ngram
#   none    the int4 plan with an unrelated draft (run_bench.sh's random "tiny" model: the same
#           GPT-2 vocabulary, other weights): drafts every step, none accepted, so the adaptive
#           switch must keep the cost of trying small
#   draft   the bundled model with its draft (test/data/models/fortune-llama-draft), greedy and
#           sampled, on the README's prompt
# Usage: bench/e2e/spec_bench.sh   (run bench/e2e/run_bench.sh small first for the 110M plan)
# Env: LLMC_BENCH_DIR (default /tmp/llmc-bench), LLMC_BUILD_DIR, REPS (default 5), GEN (256), K (4).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
W=${LLMC_BENCH_DIR:-/tmp/llmc-bench}
BUILD=${LLMC_BUILD_DIR:-$repo/build}
REPS=${REPS:-5} GEN=${GEN:-256} K=${K:-4}
LLMC=$BUILD/bin/llmc
SMALL=$W/plans/small-int4.plan
for f in "$SMALL" "$W/plans/small-bf16.plan"; do
  [ -f "$f" ] || { echo "no $f: run bench/e2e/run_bench.sh small first" >&2; exit 1; }
done
mkdir -p "$W/plans" "$W/results-spec"
R=$W/results-spec
P=${LLMC_PEER_DIR:-$W/peer}
[ -d "$P/models/tiny-hf" ] || LLMC_PEER_DIR=$P bash "$here/peers/setup.sh" tiny >&2
[ -f "$W/plans/tiny-int4.plan" ] ||
  "$LLMC" compile "$P/models/tiny-hf" -o "$W/plans/tiny-int4.plan" --quant int4 --quiet
for m in fortune-llama fortune-llama-draft; do
  [ -f "$W/plans/$m.plan" ] && [ "$W/plans/$m.plan" -nt "$LLMC" ] ||
    "$LLMC" compile "$repo/test/data/models/$m" -o "$W/plans/$m.plan" --target cpu --quiet
done
{
  echo "date: $(date -u +%FT%TZ)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores visible"
  echo "isa: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|avx512f|avx512_bf16|avx512_vnni|amx_bf16|amx_int8)$' | tr '\n' ' ')"
  echo "llmc: $(git -C "$repo" rev-parse --short HEAD), reps $REPS, $GEN tokens, k=$K"
} | tee "$R/machine.txt" >&2
ids=$(/usr/bin/python3 -c "import random; random.seed(5); print(','.join(str(random.randrange(50000)) for _ in range(64)))")

# One run's decode tok/s and its speculative counts, as "tok_s accepted proposed".
one() {
  "$LLMC" run "$@" --ignore-eos --json | /usr/bin/python3 -c '
import json, sys
s = json.loads(sys.stdin.read().strip().splitlines()[-1])["stats"]
sp = s.get("speculative", {})
print(s["decode_tokens_per_s"], sp.get("accepted_tokens", 0), sp.get("proposed_tokens", 0))'
}

# workload name, then the common arguments; the speculative flags follow "--".
compare() {
  local name=$1
  shift
  local common=() specific=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do common+=("$1"); shift; done
  shift
  specific=("$@")
  : >"$R/$name.txt"
  for rep in $(seq "$REPS"); do
    echo "plain $(one "${common[@]}")" >>"$R/$name.txt"
    echo "spec $(one "${common[@]}" "${specific[@]}")" >>"$R/$name.txt"
  done
  /usr/bin/python3 - "$R/$name.txt" "$name" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
plain = [float(r[1]) for r in rows if r[0] == "plain"]
spec = [(float(r[1]), int(r[2]), int(r[3])) for r in rows if r[0] == "spec"]
p, s = statistics.median(plain), statistics.median(x[0] for x in spec)
acc, prop = sum(x[1] for x in spec), sum(x[2] for x in spec)
print(f"| {sys.argv[2]} | {p:.1f} | {s:.1f} | {s / p:.2f}x | {100 * acc / max(prop, 1):.1f}% ({acc}/{prop}) |")
PY
}

echo "| workload | plain decode tok/s | speculative decode tok/s | ratio | drafts accepted |"
echo "|---|---|---|---|---|"
compare "copy (110M bf16, ngram k=$K)" "$W/plans/small-bf16.plan" --prompt-ids "$ids" \
  --max-new-tokens "$GEN" -- --speculative ngram --num-speculative-tokens "$K"
compare "copy (110M int4, ngram k=$K)" "$SMALL" --prompt-ids "$ids" --max-new-tokens "$GEN" -- \
  --speculative ngram --num-speculative-tokens "$K"
compare "none (110M int4, unrelated draft, k=$K)" "$SMALL" --prompt-ids "$ids" \
  --max-new-tokens "$GEN" -- --speculative draft --draft "$W/plans/tiny-int4.plan" \
  --num-speculative-tokens "$K"
compare "draft, greedy (bundled + its draft, k=$K)" "$W/plans/fortune-llama.plan" \
  --prompt "A journey of a thousand miles" --max-new-tokens "$GEN" -- \
  --speculative draft --draft "$W/plans/fortune-llama-draft.plan" --num-speculative-tokens "$K"
compare "draft, T=0.7 (bundled + its draft, k=$K)" "$W/plans/fortune-llama.plan" \
  --prompt "A journey of a thousand miles" --max-new-tokens "$GEN" --temperature 0.7 --seed 1 -- \
  --speculative draft --draft "$W/plans/fortune-llama-draft.plan" --num-speculative-tokens "$K"
