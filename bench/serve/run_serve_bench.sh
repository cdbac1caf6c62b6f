#!/usr/bin/env bash
# llmc serve under load: the ~110M bench model of bench/e2e (made by its
# peers/setup.sh), compiled for the cpu backend, served on a free loopback
# port, driven by load.mjs at concurrency 1, 8 and 32.
# Usage: bench/serve/run_serve_bench.sh [DTYPE]   (f32, bf16, int8, int4; default bf16)
# Env: LLMC_BENCH_DIR (default /tmp/llmc-bench), LLMC_BUILD_DIR (default <repo>/build),
#      THREADS (2), REQUESTS (64), MAX_TOKENS (128), CONCURRENCY (1,8,32), SERVE_FLAGS.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
W=${LLMC_BENCH_DIR:-/tmp/llmc-bench}
BUILD=${LLMC_BUILD_DIR:-$repo/build}
dtype=${1:-bf16}
export LLMC_PEER_DIR=${LLMC_PEER_DIR:-$W/peer}
hf=$LLMC_PEER_DIR/models/small-hf
[ -d "$hf" ] || bash "$repo/bench/e2e/peers/setup.sh" small >&2
mkdir -p "$W/plans"
plan=$W/plans/small-serve-$dtype.plan
case $dtype in
  f32) flags=() ;; bf16) flags=(--dtype bf16) ;;
  int8) flags=(--quant int8) ;; int4) flags=(--quant int4) ;;
  *) echo "dtype: f32, bf16, int8 or int4" >&2; exit 2 ;;
esac
[ -f "$plan" ] || "$BUILD/bin/llmc" compile "$hf" -o "$plan" --target cpu "${flags[@]}" >&2
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores; isa: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|avx512f|avx512_bf16|amx_bf16)$' | tr '\n' ' ')"
echo "llmc: $(git -C "$repo" rev-parse --short HEAD), plan $dtype, threads ${THREADS:-2}"
out=$(mktemp) err=$(mktemp)
"$BUILD/bin/llmc" serve "$plan" --port 0 --threads "${THREADS:-2}" --log-level warn \
  ${SERVE_FLAGS:-} >"$out" 2>"$err" &
pid=$!
trap 'kill -TERM $pid 2>/dev/null || true' EXIT
for _ in $(seq 600); do
  port=$(sed -n 's|^llmc serve: listening on http://127.0.0.1:\([0-9]*\)$|\1|p' "$out")
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "${port:-}" ] || { cat "$err"; exit 1; }
node "$here/load.mjs" "http://127.0.0.1:$port" "$(basename "$plan" .plan)" \
  --concurrency "${CONCURRENCY:-1,8,32}" --requests "${REQUESTS:-64}" --max-tokens "${MAX_TOKENS:-128}"
