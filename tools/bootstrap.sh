#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine for llmc and builds it, then either runs
# the main job on the bundled model (`run`) or every test (`test`).
#
#   tools/bootstrap.sh run    # install packages, build, compile + run the default model
#   tools/bootstrap.sh test   # install packages, build, run all tests (CI calls this)
#
# Idempotent: packages already present are skipped, builds are incremental.
# Environment: BUILD_DIR (default build), JOBS (default nproc),
# LLMC_FUZZ_SECONDS (default 60, per fuzzer; 0 skips fuzzing).
set -euo pipefail

mode=${1:-run}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
jobs=${JOBS:-$(nproc)}
fuzz_seconds=${LLMC_FUZZ_SECONDS:-60}

packages=(
  llvm-19-dev llvm-19-tools libmlir-19-dev mlir-19-tools libzstd-dev
  libdnnl-dev ocl-icd-opencl-dev
  libflatbuffers-dev flatbuffers-compiler
  nlohmann-json3-dev libpcre2-dev libsentencepiece-dev sentencepiece
  libcpp-httplib-dev libcli11-dev
  cmake ninja-build libgtest-dev libgmock-dev libbenchmark-dev pkg-config
  clang libclang-rt-14-dev tmux nodejs chromium
  libopenmpi-dev openmpi-bin
)

step() { printf '\n== %s\n' "$*"; }

install_packages() {
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "all ${#packages[@]} packages present"
    return
  fi
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -q
  $sudo apt-get -o DPkg::Lock::Timeout=900 install -y -q --no-install-recommends "${missing[@]}"
}

configure_and_build() { # DIR TARGET CMAKE_ARGS...
  local dir=$1 target=$2
  shift 2
  cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
  cmake --build "$dir" -j "$jobs" --target "$target"
}

run_main_job() {
  local llmc=$build/bin/llmc
  local model=$root/test/data/models/fortune-llama plan=$build/fortune-llama.plan
  "$llmc" --version
  "$llmc" backends
  step "llmc compile $model -o $plan (a 4.3M-parameter Llama trained on Debian's fortunes: tools/demo-model)"
  "$llmc" compile "$model" -o "$plan" --target cpu
  "$llmc" inspect "$plan" | head -n 12
  step "llmc run: an English fortune"
  "$llmc" run "$plan" --prompt "A journey of a thousand miles" --max-new-tokens 64 \
    --temperature 0.7 --top-p 0.9 --seed 1 --stats
  step "llmc run: a Tang poem"
  "$llmc" run "$plan" --prompt "请写一首诗：" --max-new-tokens 64 \
    --temperature 0.7 --top-p 0.9 --seed 1 --stats
}

run_tests() {
  step "unit, lit and end-to-end tests"
  (cd "$build" && ctest --output-on-failure -j "$jobs")

  step "sanitizer build (ASan + UBSan) of the runtime, backends and parsers"
  # -O1: the sanitizer tree compiles in half the time of -O3, and ASan's
  # checks do not need the optimiser.
  configure_and_build "$build-asan" all -DLLMC_SANITIZE=ON -DLLMC_ENABLE_COMPILER=OFF \
    -DLLMC_ENABLE_CUDA=OFF -DLLMC_BUILD_BENCH=OFF \
    -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" -DCMAKE_C_FLAGS_RELEASE="-O1 -DNDEBUG"
  # LeakSanitizer cannot work under a tracer (it uses ptrace itself).
  local leaks=1
  [ "$(awk '/TracerPid/ {print $2}' /proc/self/status)" = "0" ] || leaks=0
  [ "$leaks" = 1 ] || echo "running under a tracer: leak detection off"
  # intercept_tls_get_addr=0: GCC 12's LeakSanitizer misreads glibc 2.36's
  # dynamic TLS of dlopened plugins ("Tracer caught signal 11" after "DTLS
  # ... at 0x26b-0x28...") and dies at exit; without the interception it
  # scans static TLS only.
  (cd "$build-asan" && ASAN_OPTIONS=detect_leaks=$leaks:intercept_tls_get_addr=0 ctest --output-on-failure -j "$jobs" -E "OpConformance|cpu_isa")
  # LeakSanitizer's stop-the-world step crashes (SIGSEGV in its tracer) when
  # the cpu plugin's OpenMP threads are alive at exit; the conformance suite
  # still runs under ASan + UBSan, without the leak check.
  (cd "$build-asan" && ASAN_OPTIONS=detect_leaks=0 ctest --output-on-failure -j "$jobs" -R "OpConformance|cpu_isa")

  if [ "$fuzz_seconds" -gt 0 ]; then
    step "fuzzers (${fuzz_seconds}s each)"
    configure_and_build "$build-fuzz" llmc-fuzzers -DLLMC_FUZZ=ON -DLLMC_ENABLE_COMPILER=OFF \
      -DLLMC_ENABLE_CUDA=OFF -DLLMC_BUILD_BENCH=OFF -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++
    cmake --build "$build-fuzz" -j "$jobs" --target llmc-make-gguf
    "$root/test/fuzz/run_fuzzers.sh" "$build-fuzz" "$fuzz_seconds"
  fi
}

step "packages"
install_packages
step "configure and build ($build)"
configure_and_build "$build" all

case "$mode" in
  run) run_main_job ;;
  test) run_tests ;;
  *) echo "usage: $0 [run|test]" >&2; exit 2 ;;
esac
