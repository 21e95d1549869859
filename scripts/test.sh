#!/usr/bin/env bash
# Runs every test: unit tests (Release), conformance against LiteRT on
# ../shared/models (skipped with a message when absent), the unit tests again
# under AddressSanitizer + UndefinedBehaviorSanitizer (with every fuzz
# target's regression corpus), the thread pool's test under ThreadSanitizer,
# and a bounded run of every fuzz target (scripts/fuzz_long.sh for long runs);
# the aarch64 cross build's tests under qemu-aarch64 (scripts/test_aarch64.sh).
#   FUZZ_SECONDS (default 60) bounds the fuzzers in all; SKIP_SANITIZE=1 skips the
#   sanitizer build (for quick local runs); SKIP_FIDELITY=1 skips regenerating
#   the target fidelity report (build/target_fidelity.md; docs/ holds the committed one);
#   SKIP_ZOO=1 skips the converter-made zoo (scripts/make_zoo.py, cached in
#   $DELEGATO_ZOO_DIR or ~/.cache/delegato/zoo, then tests/conformance/test_zoo.py).
#   SKIP_AARCH64=1 skips the aarch64 stage.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
JOBS="$(nproc)"
# ccache: paths relative to the checkout, so the build trees of this run (and
# of earlier runs on this machine) share compiled objects wherever flags match.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1 CCACHE_SLOPPINESS=time_macros
# The sanitizer and fuzzing trees keep line tables only (-g1: enough for the
# sanitizers' stack traces) and ASan's links the core as a shared library:
# with full debug information and the core in every test executable, that
# tree alone took 18 GB.
SANITIZER_FLAGS=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG")
echo "disk free before the build: $(df -h --output=avail . | tail -1)"
failed=0

echo "== build (Release)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DDELEGATO_PYTHON=ON >/dev/null
cmake --build build -j"$JOBS"

echo "== unit tests (each single-op case dumped for the LiteRT replay below)"
rm -rf build/op_cases
(cd build && DELEGATO_OP_DUMP_DIR="$PWD/op_cases" ctest --output-on-failure -j"$JOBS") || failed=1

echo "== Python tests (CLI, writer, conformance and single-op cases vs LiteRT, the Python API from build/)"
DELEGATO_BIN="$PWD/build/delegato" DELEGATO_OP_CASES="$PWD/build/op_cases" \
  python3 -m pytest -q tests/python tests/conformance tests/python_api \
  --ignore=tests/conformance/test_zoo.py || failed=1

if [ "${SKIP_ZOO:-0}" != "1" ]; then
  echo "== converter-made zoo: TensorFlow converter output vs LiteRT (cached; SKIP_ZOO=1 skips)"
  start=$SECONDS
  if scripts/install_deps.sh --zoo; then
    timeout 1200 python3 scripts/make_zoo.py || failed=1
  fi
  echo "zoo generation: $((SECONDS - start)) s"
  start=$SECONDS
  DELEGATO_BIN="$PWD/build/delegato" timeout 1200 python3 -m pytest -q -rsx \
    tests/conformance/test_zoo.py || failed=1
  echo "zoo test: $((SECONDS - start)) s"
fi

echo "== the seeds' stories: plan -> fix -> plan -> diff on seeds 000, 003, 004 (scripts/story.sh, a few seconds)"
scripts/story.sh --delegato build/delegato || failed=1

echo "== TFLite delegate ABI: delegato's plugin inside LiteRT, plugins hosted by delegato (~30 s)"
DELEGATO_BIN="$PWD/build/delegato" DELEGATO_PLUGIN="$PWD/build/libdelegato_delegate.so" \
  python3 -m pytest -q tests/abi || failed=1

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

echo "== aarch64: cross build, unit tests and sample models under qemu-aarch64 -cpu cortex-a53 / max (SKIP_AARCH64=1 skips)"
scripts/test_aarch64.sh || failed=1

if [ "${SKIP_FIDELITY:-0}" != "1" ] && [ -d ../shared/models/edgetpu ]; then
  echo "== target fidelity against edgetpu_compiler pairs and Vela (about 3 minutes; SKIP_FIDELITY=1 skips)"
  python3 scripts/target_fidelity.py --out build/target_fidelity.md || failed=1
fi

if [ "${SKIP_SANITIZE:-0}" != "1" ]; then
  echo "== unit tests under ASan + UBSan"
  cmake -S . -B build-asan "${SANITIZER_FLAGS[@]}" -DDELEGATO_SANITIZE=ON -DDELEGATO_SHARED_LIBS=ON >/dev/null
  cmake --build build-asan -j"$JOBS"
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j"$JOBS") || failed=1

  echo "== thread pool and concurrent interpreters under ThreadSanitizer"
  cmake -S . -B build-tsan "${SANITIZER_FLAGS[@]}" -DDELEGATO_TSAN=ON >/dev/null
  cmake --build build-tsan --target thread_pool_test concurrency_test -j"$JOBS"
  (cd build-tsan && ./thread_pool_test --gtest_brief=1 && ./concurrency_test --gtest_brief=1) || failed=1

  # Every fuzz target gets a share of FUZZ_SECONDS: the model loader half,
  # the other surfaces the rest. Their regression corpora also run in ctest.
  fuzz_total="${FUZZ_SECONDS:-60}"
  echo "== fuzzing every input surface for ${fuzz_total}s in all"
  CXX=clang++ cmake -S . -B build-fuzz "${SANITIZER_FLAGS[@]}" -DDELEGATO_FUZZ=ON \
    -DDELEGATO_BUILD_TESTS=OFF >/dev/null
  fuzz_targets="fuzz_model fuzz_target_json fuzz_cache_entry fuzz_npy fuzz_bmp fuzz_plugin_options"
  # shellcheck disable=SC2086
  cmake --build build-fuzz --target $fuzz_targets -j"$JOBS"
  rm -rf build-fuzz/corpus
  scripts/fuzz_seeds.sh build-fuzz/corpus build/delegato >/dev/null
  for t in $fuzz_targets; do
    if [ "$t" = fuzz_model ]; then seconds=$((fuzz_total / 2)); else seconds=$((fuzz_total / 8)); fi
    [ "$seconds" -ge 5 ] || seconds=5
    build-fuzz/$t -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -max_len=300000 \
      "build-fuzz/corpus/$t" "fuzz/regression/$t" 2>"build-fuzz/$t.log" ||
      { echo "$t found a failure:"; tail -40 "build-fuzz/$t.log"; failed=1; }
    echo "$t: $(grep -E "^#[0-9]+.*DONE|Done [0-9]+ runs" "build-fuzz/$t.log" | tail -1)"
  done
  # The Python API's arguments (atheris, over the Release build's extension).
  if python3 -c "import atheris" 2>/dev/null; then
    seconds=$((fuzz_total / 6)); [ "$seconds" -ge 5 ] || seconds=5
    mkdir -p build-fuzz/corpus/python_api
    python3 fuzz/python_api_fuzz.py -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
      build-fuzz/corpus/python_api 2>build-fuzz/python_api.log ||
      { echo "python_api_fuzz found a failure:"; tail -40 build-fuzz/python_api.log; failed=1; }
    echo "python_api_fuzz: $(grep -E "Done [0-9]+ runs" build-fuzz/python_api.log | tail -1)"
  else
    echo "python_api_fuzz skipped: atheris is not installed"
  fi
fi

echo "disk used by the build trees: $(du -shc build build-* 2>/dev/null | tail -1 | cut -f1)"
if [ "$failed" -ne 0 ]; then
  echo "SOME TESTS FAILED"
  exit 1
fi
echo "ALL TESTS PASSED"
