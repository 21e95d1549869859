#!/usr/bin/env bash
# Long fuzzing runs, one target after another, each for SECONDS_PER_TARGET
# (default 3600) or until RUNS_PER_TARGET executions (default 10 million),
# whichever comes first. The corpora grow in build-fuzz/long/<target>/ and are
# kept between runs. A finding stops its target and leaves its input as
# build-fuzz/long/crash-*: add it to fuzz/regression/<target>/ once fixed.
#   scripts/fuzz_long.sh [target ...]     (default: every target)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${SECONDS_PER_TARGET:-3600}"
runs="${RUNS_PER_TARGET:-10000000}"
targets="${*:-fuzz_model fuzz_target_json fuzz_cache_entry fuzz_npy fuzz_bmp fuzz_plugin_options}"

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build --target delegato -j"$(nproc)"
CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDELEGATO_FUZZ=ON \
  -DDELEGATO_BUILD_TESTS=OFF >/dev/null
# shellcheck disable=SC2086
cmake --build build-fuzz --target $targets -j"$(nproc)"
mkdir -p build-fuzz/long
[ -d build-fuzz/long/seeds ] || scripts/fuzz_seeds.sh build-fuzz/long/seeds build/delegato

status=0
for t in $targets; do
  mkdir -p "build-fuzz/long/$t"
  echo "== $t: up to ${seconds}s or $runs runs"
  (cd build-fuzz/long &&
   "../$t" -max_total_time="$seconds" -runs="$runs" -rss_limit_mb=2048 -timeout=10 \
     -max_len=300000 -print_final_stats=1 "$t" "seeds/$t" "../../fuzz/regression/$t" \
     2>"$t.log") || { echo "$t: FAILED, see build-fuzz/long/$t.log"; status=1; }
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb|Done [0-9]+ runs" "build-fuzz/long/$t.log" | tr '\n' ' '
  echo "corpus $(ls "build-fuzz/long/$t" | wc -l) files"
done
exit $status
