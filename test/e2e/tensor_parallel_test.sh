#!/usr/bin/env bash
# Tensor parallelism against the unsharded plan: every reference model
# that llmc-shard splits is compiled with and without --tp 2 and run on ref
# and cpu, the split plan on 2 MPI ranks (mpirun -n 2). Greedy tokens must be
# equal (one request; four requests batched through the scheduler, two of
# them sharing a prefix for the prefix cache; the same with a KV pool so
# small that requests are preempted and recomputed), and the last prompt
# position's logits within 1e-4 (only the summation order differs).
# Usage: tensor_parallel_test.sh BIN_DIR DATA_DIR WORK_DIR
# Env: TP_BACKENDS (default "ref cpu"); with cuda (NCCL, a GPU per rank) it
# exits 77 (a skip) where fewer than two GPUs are usable.
set -euo pipefail
bin=$1 data=$2 work=$3
backends=${TP_BACKENDS:-ref cpu}
mkdir -p "$work"
if [[ " $backends " == *" cuda "* ]]; then
  gpus=$("$bin/llmc" backends |
    awk '/^[a-z]/ { on = $1 == "cuda" } on && /device [0-9]+: .*: usable/' | wc -l)
  if [ "$gpus" -lt 2 ]; then
    echo "skipped: $gpus usable CUDA device(s); NCCL over 2 ranks needs 2"
    exit 77
  fi
fi
mpirun=(mpirun --allow-run-as-root --oversubscribe -n 2)
py=/usr/bin/python3

cat >"$work/prompts.jsonl" <<'JSON'
{"prompt_ids": [5, 17, 42, 99, 120, 7, 33, 64, 12, 3, 8, 91, 14, 55, 60, 21, 4, 76, 39], "max_new_tokens": 12}
{"prompt_ids": [5, 17, 42, 99, 120, 7, 33, 64, 12, 3, 8, 91, 14, 55, 60, 21, 4, 76, 39, 50, 6], "max_new_tokens": 9}
{"prompt_ids": [88, 3, 51], "max_new_tokens": 14}
{"prompt_ids": [9, 9, 100, 23, 61, 77, 18, 40, 2, 90, 15, 31, 8, 70, 44, 11, 19, 27], "max_new_tokens": 10}
JSON
# Prompts of one block that grow into a second: three blocks hold all three
# prompts, not their growth.
cat >"$work/preempt.jsonl" <<'JSON'
{"prompt_ids": [5, 17, 42, 99, 120, 7, 33, 64, 12, 3], "max_new_tokens": 12}
{"prompt_ids": [88, 3, 51, 9, 9, 100, 23, 61, 77, 18, 40], "max_new_tokens": 12}
{"prompt_ids": [2, 90, 15, 31, 8, 70, 44, 11, 19, 27, 6, 13], "max_new_tokens": 12}
JSON

compare_ids() { # a.jsonl b.jsonl what [stat that must be > 0 in b]
  "$py" - "$1" "$2" "$3" "${4:-}" <<'PY'
import json, sys
a, b, what, need = sys.argv[1:]
ra = sorted((json.loads(l) for l in open(a) if l.startswith('{')), key=lambda r: r.get('index', 0))
rb = sorted((json.loads(l) for l in open(b) if l.startswith('{')), key=lambda r: r.get('index', 0))
assert len(ra) == len(rb) and ra, f"{what}: {len(ra)} vs {len(rb)} results"
for x, y in zip(ra, rb):
    if x['output_ids'] != y['output_ids']:
        sys.exit(f"{what}: request {x.get('index', 0)}: {x['output_ids']} (tp 1) vs {y['output_ids']} (tp 2)")
got = sum(r.get('stats', {}).get(need, 0) for r in rb) if need else 0
if need and got == 0:
    sys.exit(f"{what}: no {need} in the tp 2 run (the check would test nothing)")
print(f"{what}: {len(ra)} requests, same tokens" + (f", {need} {got}" if need else ""))
PY
}

compare_logits() { # a.bin b.bin what
  "$py" - "$1" "$2" "$3" <<'PY'
import array, sys
a, b, what = sys.argv[1:]
x, y = array.array('f'), array.array('f')
x.frombytes(open(a, 'rb').read()); y.frombytes(open(b, 'rb').read())
assert len(x) == len(y) and len(x) > 0, f"{what}: {len(x)} vs {len(y)} logits"
d = max(abs(p - q) for p, q in zip(x, y))
if d > 1e-4:
    sys.exit(f"{what}: logits differ by {d}")
print(f"{what}: {len(x)} logits within {d:.2e}")
PY
}

for model in fortune-llama llama-gqa llama-mha llama-mqa llama-bf16 llama-sharded qwen2-bias-tied \
  mixtral-moe qwen3-moe gpt-oss-mxfp4 gpt2 phi4-mini-longrope \
  qwen3-qknorm mistral-swa gemma2-softcap gemma3-text; do
  one=$work/$model.plan two=$work/$model-tp2.plan
  "$bin/llmc" compile "$data/models/$model" -o "$one" -q
  "$bin/llmc" compile "$data/models/$model" -o "$two" -q --tp 2
  for backend in $backends; do
    run=(run --backend "$backend" --temperature 0 --threads 1 --json)
    w=$work/$model-$backend
    "$bin/llmc" "${run[@]}" "$one" --prompt-ids 5,17,42,99,120,7,33 --max-new-tokens 12 \
      --dump-logits "$w-1.bin" >"$w-1.json"
    "${mpirun[@]}" "$bin/llmc" "${run[@]}" "$two" --prompt-ids 5,17,42,99,120,7,33 \
      --max-new-tokens 12 --dump-logits "$w-2.bin" >"$w-2.json"
    compare_ids "$w-1.json" "$w-2.json" "$model $backend: one request"
    compare_logits "$w-1.bin" "$w-2.bin" "$model $backend"
    "$bin/llmc" "${run[@]}" "$one" --prompts-file "$work/prompts.jsonl" >"$w-b1.json"
    "${mpirun[@]}" "$bin/llmc" "${run[@]}" "$two" --prompts-file "$work/prompts.jsonl" >"$w-b2.json"
    compare_ids "$w-b1.json" "$w-b2.json" "$model $backend: batched"
    # One at a time: the second request finds the first's 16-token block.
    "${mpirun[@]}" "$bin/llmc" "${run[@]}" "$two" --prompts-file "$work/prompts.jsonl" \
      --max-num-seqs 1 >"$w-c2.json"
    compare_ids "$w-b1.json" "$w-c2.json" "$model $backend: prefix cache" cached_prompt_tokens
    "$bin/llmc" "${run[@]}" "$one" --prompts-file "$work/preempt.jsonl" >"$w-p1.json"
    "${mpirun[@]}" "$bin/llmc" "${run[@]}" "$two" --prompts-file "$work/preempt.jsonl" \
      --kv-cache-blocks 3 >"$w-p2.json"
    compare_ids "$w-p1.json" "$w-p2.json" "$model $backend: preempted" preemptions
  done
done

[ "$backends" = "ref cpu" ] || { echo "tensor parallelism on $backends: every model passed"; exit 0; }

# The verify graph: perplexity (every position's logits) and speculative
# decoding (drafts checked in one step) give what the unsharded plan gives.
held=$data/models/fortune-llama/heldout.txt
ppl1=$("$bin/llmc" perplexity "$work/fortune-llama.plan" --file "$held" | grep -o 'perplexity [0-9.]*')
ppl2=$("${mpirun[@]}" "$bin/llmc" perplexity "$work/fortune-llama-tp2.plan" --file "$held" |
  grep -o 'perplexity [0-9.]*')
[ "$ppl1" = "$ppl2" ] || { echo "perplexity: $ppl1 (tp 1) vs $ppl2 (tp 2)" >&2; exit 1; }
echo "perplexity: $ppl1 on both"
spec=(run --temperature 0 --json --prompt "Once upon a time there was" --max-new-tokens 24
  --speculative ngram)
"$bin/llmc" "${spec[@]}" "$work/fortune-llama.plan" >"$work/spec1.json"
"${mpirun[@]}" "$bin/llmc" "${spec[@]}" "$work/fortune-llama-tp2.plan" >"$work/spec2.json"
compare_ids "$work/spec1.json" "$work/spec2.json" "speculative (ngram)"

# A plan compiled for 2 ranks refuses one rank, and the other way round:
# an error on every rank, no hang.
if "$bin/llmc" run "$work/fortune-llama-tp2.plan" --prompt-ids 5,6 --max-new-tokens 1 \
  2>"$work/err1"; then
  echo "a tp 2 plan ran on one rank" >&2; exit 1
fi
grep -q "compiled for 2 tensor-parallel rank(s)" "$work/err1"
if timeout 60 "${mpirun[@]}" "$bin/llmc" run "$work/fortune-llama.plan" --prompt-ids 5,6 \
  --max-new-tokens 1 >/dev/null 2>"$work/err2"; then
  echo "a tp 1 plan ran on two ranks" >&2; exit 1
fi
grep -q "tensor-parallel rank" "$work/err2"
# A lost rank: the job ends (mpirun takes the others down), no hang. The
# output is emptied first: the loop must not read a last run's line.
: >"$work/lost.out"
"${mpirun[@]}" "$bin/llmc" serve "$work/fortune-llama-tp2.plan" --port 0 \
  >"$work/lost.out" 2>"$work/lost.err" &
job=$!
for _ in $(seq 300); do
  grep -q "listening on" "$work/lost.out" && break
  sleep 0.1
done
for child in $(pgrep -P "$job"); do
  if tr '\0' '\n' <"/proc/$child/environ" | grep -qx 'OMPI_COMM_WORLD_RANK=1'; then
    kill -9 "$child"
  fi
done
for _ in $(seq 300); do kill -0 "$job" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$job" 2>/dev/null; then
  kill -9 "$job"; echo "the job outlived its lost rank by 30 s" >&2; exit 1
fi
if wait "$job"; then echo "a job that lost a rank exited 0" >&2; exit 1; fi
echo "lost rank: the job ended"
echo "tensor parallelism: every model and check passed"
