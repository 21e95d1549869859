#!/usr/bin/env bash
# Set-up + main job: installs dependencies, builds delegato, and runs the
# model the project generates itself (a small uint8 CNN) end to end.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
echo "== delegato inspect (built-in demo model)"
build/delegato inspect
echo "== delegato run (built-in demo model, random input, seed 0)"
build/delegato run --output_dir build/demo_outputs
echo "outputs written to build/demo_outputs/"
