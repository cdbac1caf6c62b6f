#!/usr/bin/env bash
# Starts `llmc serve` on the bundled model (a free loopback port), runs the
# official openai npm client against it (client.test.mjs), and stops the
# server with SIGTERM, which must exit 0. Installs openai at the version in
# package.json into WORK/node_modules the first time.
# Usage: run.sh BIN_DIR DATA_DIR WORK_DIR
set -euo pipefail
bin=$1 data=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work"
plan=$work/fortune-llama.plan
"$bin/llmc" compile "$data/models/fortune-llama" -o "$plan" --target cpu >/dev/null
if [ ! -f "$work/node_modules/openai/package.json" ] ||
  ! cmp -s "$here/package.json" "$work/package.json"; then
  cp "$here/package.json" "$work/package.json"
  (cd "$work" && timeout 300 npm install --no-audit --no-fund --loglevel=error)
fi
cp "$here/client.test.mjs" "$work/client.test.mjs"

out=$work/serve.out err=$work/serve.err
"$bin/llmc" serve "$plan" --port 0 --served-model-name fortune-llama \
  --max-num-seqs 16 >"$out" 2>"$err" &
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
(cd "$work" && timeout 280 node client.test.mjs "http://127.0.0.1:$port" fortune-llama) || rc=$?
trap - EXIT
kill -TERM "$pid"
for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$pid" 2>/dev/null; then
  kill -9 "$pid"
  echo "llmc serve did not stop on SIGTERM within 30 s" >&2
  exit 1
fi
wait "$pid" || { echo "llmc serve exited with $? on SIGTERM" >&2; cat "$err"; exit 1; }
grep -c '^llmc serve: .* finish_reason=' "$err" >/dev/null
exit $rc
