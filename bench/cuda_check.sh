#!/usr/bin/env bash
# cuda_check.sh: everything the cuda backend needs checked on a machine with
# a GPU, in one run of under 8 minutes:
#   1. build (compiler ON, CUDA ON) into $LLMC_BUILD_DIR (default build-cuda-check)
#   2. llmc_cuda_test (every op vs ref, end to end, graph capture) and the
#      conformance suite (KV_WRITE and both attentions with the cache in f32,
#      bf16, f16, int8 and fp8 among it), which must say "comparing: cuda vs
#      ref; the MoE gating, expert linears and combine too)
#   3. every test/data/models checkpoint: llmc compile --target cuda, then
#      llmc run --backend cuda --prompt-ids ... --dump-logits for each
#      reference prompt (gpt-oss-mxfp4 among them: MXFP4, sinks, YaRN): f32
#      logits within 2e-4 and the exact greedy tokens;
#      bf16 logits within 0.1
#   4. compute-sanitizer memcheck on one model's run
#   5. a random Llama-shaped ~1.1B checkpoint (bf16): llmc bench at batch
#      1, 8, 64 (prefill/decode tok/s, TTFT, TPOT) and decode at batch 1 as a
#      fraction of the HBM roofline, the bandwidth measured here by a
#      device-to-device copy probe (bench/cuda/bw_probe.cu)
# Usage: bench/cuda_check.sh        Env: LLMC_BUILD_DIR, LLMC_CHECK_DIR
# (work folder, default /tmp/llmc-cuda-check), JOBS (default nproc),
# SKIP_1B=1 to stop after step 4.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
B=${LLMC_BUILD_DIR:-$repo/build-cuda-check}
W=${LLMC_CHECK_DIR:-/tmp/llmc-cuda-check}
JOBS=${JOBS:-$(nproc)}
mkdir -p "$W"
SECONDS=0
failures=0
log() { echo "[$(date +%T) +${SECONDS}s] $*" >&2; }
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader >&2 || true

# 1. Build.
log "configuring $B"
cmake -S "$repo" -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DLLMC_ENABLE_COMPILER=ON -DLLMC_ENABLE_CUDA=ON >"$W/configure.log" 2>&1 ||
  { tail -30 "$W/configure.log"; exit 1; }
log "building (-j$JOBS)"
ninja -C "$B" -j"$JOBS" llmc llmc-backend-ref llmc-backend-cpu llmc-backend-cuda \
  llmc_cuda_test llmc_conformance_test llmc_long_rope_test \
  llmc_sliding_window_test >"$W/build.log" 2>&1 || { tail -40 "$W/build.log"; exit 1; }
LLMC=$B/bin/llmc
export LLMC_BACKEND_PATH=$B/bin
"$LLMC" backends 2>&1 | tee "$W/backends.txt" >&2 || true
grep -q 'cuda' "$W/backends.txt" || fail "llmc backends does not list cuda"
grep -A1 '^cuda' "$W/backends.txt" | grep -q 'not usable' && {
  echo "the cuda backend is not usable here; nothing to check" >&2; exit 1; }

# 2. Unit tests and conformance.
log "llmc_cuda_test"
"$B/bin/llmc_cuda_test" >"$W/cuda_test.log" 2>&1 || fail "llmc_cuda_test (see $W/cuda_test.log)"
grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$W/cuda_test.log" >&2 || true
grep -q 'SKIPPED \] Cuda\.' "$W/cuda_test.log" && fail "llmc_cuda_test skipped GPU tests on a GPU machine"
for t in llmc_long_rope_test llmc_sliding_window_test; do
  log "$t (cuda: LongRoPE's switch, the sliding KV pool)"
  "$B/bin/$t" --gtest_filter='*/2' >"$W/$t.log" 2>&1 || fail "$t (see $W/$t.log)"
  grep -q 'SKIPPED' "$W/$t.log" && fail "$t skipped cuda on a GPU machine"
done
log "llmc_conformance_test"
"$B/bin/llmc_conformance_test" >"$W/conformance.log" 2>&1 || fail "conformance (see $W/conformance.log)"
grep -q 'comparing: cuda vs ref' "$W/conformance.log" || fail "conformance did not compare cuda"
grep -E 'cuda .*(ok|not supported)' "$W/conformance.log" >&2 || true

# 3. Every reference checkpoint, f32 (exact) and bf16 (loose).
check_model() { # dir dtype tolerance exact_greedy
  local dir=$1 dtype=$2 tol=$3 exact=$4 name plan n i ids want_ids got_ids
  name=$(basename "$dir")
  plan=$W/$name-$dtype.plan
  if ! "$LLMC" compile "$dir" -o "$plan" --target cuda --dtype "$dtype" >"$W/$name-$dtype.compile.log" 2>&1; then
    fail "$name $dtype: compile (see $W/$name-$dtype.compile.log)"; return
  fi
  n=$(python3 -c "import json,sys;print(len(json.load(open(sys.argv[1]))['prompts']))" "$dir/reference/reference.json")
  for ((i = 0; i < n; i++)); do
    read -r pname ids want_ids logits < <(python3 - "$dir/reference/reference.json" "$i" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["prompts"][int(sys.argv[2])]
print(p["name"], ",".join(map(str, p["input_ids"])),
      ",".join(map(str, p["greedy"]["output_ids"])), p["last_logits"]["file"])
PY
)
    local out=$W/$name-$dtype-$pname
    if ! "$LLMC" run "$plan" --backend cuda --prompt-ids "$ids" --max-new-tokens 16 \
        --ignore-eos --json --dump-logits "$out.logits" >"$out.json" 2>"$out.err"; then
      fail "$name $dtype $pname: llmc run ($(tail -1 "$out.err"))"; continue
    fi
    if ! python3 "$here/cuda/compare.py" "$out.logits" "$dir/reference/$logits" "$tol" >"$out.cmp"; then
      fail "$name $dtype $pname: logits $(cat "$out.cmp")"
    fi
    if [ "$exact" = 1 ]; then
      got_ids=$(python3 -c "import json,sys;print(','.join(map(str,json.load(open(sys.argv[1]))['output_ids'])))" "$out.json")
      [ "$got_ids" = "$want_ids" ] || fail "$name $dtype $pname: greedy $got_ids, reference $want_ids"
    fi
    echo "  $name $dtype $pname: $(cat "$out.cmp")" >&2
  done
}
log "reference checkpoints"
for dir in "$repo"/test/data/models/*/; do
  [ -f "$dir/reference/reference.json" ] || continue
  check_model "$dir" f32 2e-4 1
  check_model "$dir" bf16 0.1 0
done

# 4. compute-sanitizer on one model (prefill + decode steps, graph capture).
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
if [ -x "$SAN" ]; then
  log "compute-sanitizer memcheck: llama-gqa"
  "$SAN" --tool memcheck --error-exitcode 9 "$LLMC" run "$W/llama-gqa-f32.plan" \
    --backend cuda --prompt-ids 1,5,9,200,31,7,64 --max-new-tokens 8 --ignore-eos \
    >"$W/sanitizer.log" 2>&1 || fail "compute-sanitizer (see $W/sanitizer.log)"
  tail -2 "$W/sanitizer.log" >&2
else
  fail "compute-sanitizer not found"
fi

if [ "${SKIP_1B:-0}" = 1 ]; then
  log "done (1B skipped), $failures failure(s)"; exit $((failures > 0))
fi

# 5. HBM bandwidth, then a ~1.1B Llama.
log "bandwidth probe"
nvcc -O2 -o "$W/bw_probe" "$here/cuda/bw_probe.cu"
BW=$("$W/bw_probe")
echo "  device-to-device copy: $BW GB/s" >&2
M=$W/llama-1b
if [ ! -f "$M/model.safetensors" ]; then
  log "generating the 1.1B checkpoint"
  python3 "$here/cuda/make_llama_1b.py" "$M"
fi
log "compiling it for cuda (bf16)"
"$LLMC" compile "$M" -o "$W/llama-1b.plan" --target cuda --dtype bf16 >"$W/1b.compile.log" 2>&1 ||
  { tail -5 "$W/1b.compile.log"; fail "1B compile"; exit 1; }
log "llmc bench --batch 1,8,64"
if ! "$LLMC" bench "$W/llama-1b.plan" --backend cuda --prompt-len 512 --gen-len 128 \
    --batch 1,8,64 --reps 2 --json >"$W/bench.json" 2>"$W/bench.err"; then
  cat "$W/bench.err" >&2
  fail "llmc bench failed (is 'llmc bench PLAN --prompt-len --gen-len --batch 1,8,64 --json' there?)"
  exit 1
fi
python3 - "$W/bench.json" "$BW" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
bw = float(sys.argv[2])
print(f"{'batch':>5} {'prefill tok/s':>14} {'decode tok/s':>13} {'TTFT ms':>9} {'TPOT ms':>9}")
for r in j["results"]:
    print(f"{r['batch']:>5} {r['prefill_tok_s']:>14.0f} {r['decode_tok_s']:>13.1f} "
          f"{r['ttft_ms']:>9.1f} {r['tpot_ms']:>9.2f}")
b1 = [r for r in j["results"] if r["batch"] == 1][0]
# decode_weight_gb_s: weight bytes one decode step reads x steps per second.
print(f"decode batch 1: {b1['decode_weight_gb_s']:.0f} GB/s of weights = "
      f"{100 * b1['decode_weight_gb_s'] / bw:.0f}% of the measured {bw:.0f} GB/s")
PY

log "done in ${SECONDS}s, $failures failure(s)"
[ "$SECONDS" -le 480 ] || echo "warning: took ${SECONDS}s, over the 8-minute budget" >&2
exit $((failures > 0))
