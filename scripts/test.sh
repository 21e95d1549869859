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
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$JOBS"

echo "== unit tests (each single-op case dumped for the LiteRT replay below)"
rm -rf build/op_cases
(cd build && DELEGATO_OP_DUMP_DIR="$PWD/op_cases" ctest --output-on-failure -j"$JOBS") || failed=1

echo "== Python tests (CLI, writer, conformance and single-op cases vs LiteRT)"
DELEGATO_BIN="$PWD/build/delegato" DELEGATO_OP_CASES="$PWD/build/op_cases" \
  python3 -m pytest -q tests/python tests/conformance || failed=1

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
