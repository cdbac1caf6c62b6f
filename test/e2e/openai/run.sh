#!/usr/bin/env bash
# Starts `llmc serve` on a test model (a free loopback port), runs npm
# clients against it (CLIENT_DIR/client.test.mjs, default: the official
# openai client beside this script), and stops the server with SIGTERM,
# which must exit 0. Installs CLIENT_DIR/package.json's packages at their
# pinned versions into WORK/node_modules the first time.
# Usage: run.sh BIN_DIR DATA_DIR WORK_DIR [CLIENT_DIR MODEL [SERVE_ARGS...]]
# Env: LLMC_COMPILE_ARGS (more llmc compile flags, e.g. --tp 2) and
# LLMC_LAUNCH (a launcher before llmc serve, e.g. mpirun -n 2).
set -euo pipefail
bin=$1 data=$2 work=$3
here=${4:-$(cd "$(dirname "$0")" && pwd)}
model=${5:-fortune-llama}
shift $(($# < 5 ? $# : 5))
mkdir -p "$work"
plan=$work/$model.plan
# shellcheck disable=SC2086 # word lists on purpose
"$bin/llmc" compile "$data/models/$model" -o "$plan" --target cpu \
  ${LLMC_COMPILE_ARGS:-} >/dev/null
if [ ! -d "$work/node_modules" ] ||
  ! cmp -s "$here/package.json" "$work/package.json"; then
  cp "$here/package.json" "$work/package.json"
  (cd "$work" && timeout 600 npm install --no-audit --no-fund --loglevel=error)
fi
cp "$here/client.test.mjs" "$work/client.test.mjs"
cp "$(dirname "$0")/checks.mjs" "$work/checks.mjs"

out=$work/serve.out err=$work/serve.err
# Emptied here, not by the server's redirect: on a loaded machine the loop
# below could read the last run's port before the new server opened them.
: >"$out"
: >"$err"
# shellcheck disable=SC2086
${LLMC_LAUNCH:-} "$bin/llmc" serve "$plan" --port 0 --served-model-name "$model" \
  --max-num-seqs 16 "$@" >"$out" 2>"$err" &
pid=$!
stop() { kill -TERM "$pid" 2>/dev/null || true; }
trap stop EXIT
port=""
for _ in $(seq 300); do
  port=$(sed -n 's|^llmc serve: listening on http://127.0.0.1:\([0-9]*\)$|\1|p' "$out")
  [ -n "$port" ] && break
  kill -0 "$pid" 2>/dev/null || { cat "$err"; echo "llmc serve exited early" >&2; exit 1; }
  sleep 0.1
done
[ -n "$port" ] || { cat "$err"; echo "llmc serve did not start in 30 s" >&2; exit 1; }
rc=0
(cd "$work" && timeout 280 node client.test.mjs "http://127.0.0.1:$port" "$model") || rc=$?
trap - EXIT
# Under a launcher, rank 0 (the server) is told to stop: it drains, and its
# engine releases the other ranks (mpirun itself would end on the signal).
target=$pid
if [ -n "${LLMC_LAUNCH:-}" ]; then
  for child in $(pgrep -P "$pid"); do
    if tr '\0' '\n' <"/proc/$child/environ" | grep -qx 'OMPI_COMM_WORLD_RANK=0'; then
      target=$child
    fi
  done
fi
kill -TERM "$target"
for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$pid" 2>/dev/null; then
  kill -9 "$pid"
  echo "llmc serve did not stop on SIGTERM within 30 s" >&2
  exit 1
fi
wait "$pid" || { echo "llmc serve exited with $? on SIGTERM" >&2; cat "$err"; exit 1; }
grep -c '^llmc serve: .* finish_reason=' "$err" >/dev/null
exit $rc
