#!/usr/bin/env bash
# Regenerates the fixtures here with llama.cpp's own quantizer and
# dequantizer (libggml-base of node-llama-cpp 3.21.1, llama.cpp 80fb11a).
# Needs bench/e2e/peers/setup.sh run first (LLMC_PEER_DIR, default
# /tmp/llmc-bench/peer). CI does not run this: the .bin files are committed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
P=${LLMC_PEER_DIR:-/tmp/llmc-bench/peer}
B=$P/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64
tool=$(mktemp -d)/ggml_quant_fixtures
g++ -O2 -std=c++17 -I"$P/llama.cpp-src/ggml/include" -o "$tool" \
  "$here/ggml_quant_fixtures.cpp" -L"$B" -l:libggml-base.so -Wl,-rpath,"$B"
"$tool" "$here"
