#!/usr/bin/env bash
# Fetches MaskBench's data (guidance-ai/jsonschemabench, ~11,300 schemas
# with valid and invalid instances; not committed) and prints llmc's table.
# Usage: fetch_maskbench.sh [BUILD_DIR] [WORK_DIR]
set -euo pipefail
build=${1:-build}
work=${2:-/tmp/maskbench}
if [ ! -d "$work/repo/maskbench/data" ]; then
  git clone --depth 1 https://github.com/guidance-ai/jsonschemabench "$work/repo"
fi
"$build/bin/llmc_maskbench" "$work/repo/maskbench/data"
