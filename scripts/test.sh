#!/usr/bin/env bash
# Runs every test: unit tests (Release), conformance against LiteRT on
# ../shared/models (skipped with a message when absent), the unit tests again
# under AddressSanitizer + UndefinedBehaviorSanitizer, the thread pool's test
# under ThreadSanitizer, and a bounded fuzz run.
#   FUZZ_SECONDS (default 60) bounds the fuzzer; SKIP_SANITIZE=1 skips the
#   sanitizer build (for quick local runs).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
JOBS="$(nproc)"
failed=0

echo "== build (Release)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DDELEGATO_PYTHON=ON >/dev/null
cmake --build build -j"$JOBS"

echo "== unit tests"
(cd build && ctest --output-on-failure -j"$JOBS") || failed=1

echo "== Python tests (CLI, writer, conformance vs LiteRT, the Python API from build/)"
DELEGATO_BIN="$PWD/build/delegato" python3 -m pytest -q tests/python tests/conformance tests/python_api || failed=1

echo "== pip install . into a fresh venv, then a smoke test of the installed package"
# A fresh venv and build tree, as from a fresh clone. build-pip/ sits at
# build/'s depth and CXX=c++ is the compiler name of the build above (else
# scikit-build-core takes sysconfig's g++, a different ccache key), so ccache
# reuses the Release build's objects.
rm -rf build-venv build-pip
start=$SECONDS
if python3 -m venv build-venv && CXX="${CXX:-c++}" build-venv/bin/pip install -q . &&
   (repo="$PWD" && cd /tmp && "$repo/build-venv/bin/python" "$repo/tests/python_api/smoke_installed.py"); then
  echo "pip install + smoke test: $((SECONDS - start)) s"
else
  failed=1
fi

if [ "${SKIP_SANITIZE:-0}" != "1" ]; then
  echo "== unit tests under ASan + UBSan"
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDELEGATO_SANITIZE=ON >/dev/null
  cmake --build build-asan -j"$JOBS"
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j"$JOBS") || failed=1

  echo "== thread pool under ThreadSanitizer (its lock-free hand-off)"
  g++ -std=c++20 -O1 -g -fsanitize=thread -Isrc -Iinclude tests/unit/thread_pool_test.cc \
    src/runtime/thread_pool.cc -lgtest -lgtest_main -pthread -o build-asan/thread_pool_tsan &&
    build-asan/thread_pool_tsan --gtest_brief=1 || failed=1

  echo "== fuzzing load -> allocate -> invoke for ${FUZZ_SECONDS:-60}s"
  CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDELEGATO_FUZZ=ON \
    -DDELEGATO_BUILD_TESTS=OFF >/dev/null
  cmake --build build-fuzz --target fuzz_model -j"$JOBS"
  # Seeds: the demo model and the small shared models (when present).
  mkdir -p build-fuzz/corpus
  build/delegato generate -o build-fuzz/corpus/demo.tflite >/dev/null
  for m in hello_world_int8 hello_world_float split_concat model_invoking_error; do
    [ -f "../shared/models/$m.tflite" ] && cp "../shared/models/$m.tflite" build-fuzz/corpus/
  done
  build-fuzz/fuzz_model -max_total_time="${FUZZ_SECONDS:-60}" -rss_limit_mb=2048 -timeout=10 \
    -max_len=300000 build-fuzz/corpus 2>build-fuzz/fuzz.log || { tail -40 build-fuzz/fuzz.log; failed=1; }
  grep -E "^#[0-9]+.*DONE|Done [0-9]+ runs" build-fuzz/fuzz.log | tail -1 || true
fi

if [ "$failed" -ne 0 ]; then
  echo "SOME TESTS FAILED"
  exit 1
fi
echo "ALL TESTS PASSED"
