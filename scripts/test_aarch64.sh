#!/usr/bin/env bash
# aarch64 under emulation (scripts/test.sh runs it; it can also run alone):
#   1. the cross build (scripts/build_aarch64.sh, into build-aarch64/);
#   2. the unit tests under qemu-aarch64, with -cpu cortex-a53 (Armv8.0: the
#      neon path) and -cpu max (Armv8.2+: dotprod, Armv8.6: i8mm); AARCH64_TESTS and
#      AARCH64_EXCLUDE (ctest -R / -E regexes) bound them, by default to the
#      optimized kernels' tests (which run every ISA the emulated CPU has;
#      the interpreter-level ones, with 2 threads, under -cpu max only) and
#      the thread pool and concurrency tests;
#   3. a sample of the shared models (../shared/models) and of the zoo's float
#      models on each ISA path of each CPU (and with 2 threads on one ISA per
#      CPU), outputs compared with the x86 build's reference kernels
#      (build/delegato, conformance-tested against LiteRT): bit-exact for
#      integer outputs, within 1e-5 for float.
# Skips with a message (exit 0) when the cross toolchain cannot be installed.
#   SKIP_AARCH64=1 skips; AARCH64_TESTS=. AARCH64_EXCLUDE=none runs every unit test (long).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${SKIP_AARCH64:-0}" = "1" ]; then
  echo "aarch64: skipped (SKIP_AARCH64=1)"
  exit 0
fi
start=$SECONDS
mkdir -p build-aarch64
log=build-aarch64/build.log
if ! scripts/build_aarch64.sh >"$log" 2>&1; then
  if ! command -v aarch64-linux-gnu-g++ >/dev/null || ! command -v qemu-aarch64 >/dev/null; then
    echo "aarch64: SKIPPED, the cross toolchain or qemu-user could not be installed (see $log)"
    exit 0
  fi
  tail -30 "$log"
  echo "aarch64: cross build FAILED"
  exit 1
fi
grep -E "delegato: |libdelegato_delegate.so: " "$log" || true
echo "aarch64 cross build: $((SECONDS - start)) s"
failed=0

# One glibc for loader and libc (see cmake/aarch64-linux-gnu.cmake): the
# multiarch libc6:arm64 when installed, else the cross package's.
if [ -e /lib/ld-linux-aarch64.so.1 ]; then ld_prefix=/; else ld_prefix=/usr/aarch64-linux-gnu; fi
QEMU=(qemu-aarch64 -L "$ld_prefix")
# The optimized kernels' suites, and every value-parameterised case of an Arm
# ISA (named .../neon, .../dotprod, .../i8mm, or .../neon_<shape>: the float32,
# hybrid, int16x8 and LSTM kernel tests), which the first pattern misses.
TESTS="${AARCH64_TESTS:-^Optimized|^Concurrency|^ThreadPool|/neon|/dotprod|/i8mm}"
# The interpreter-level cases (the whole optimized kernel set, 1 and 2
# threads) run once, under -cpu max; under cortex-a53 they would add about
# five minutes, and the a53 path's 2-thread runs are covered by the models below.
EXCLUDE_A53="${AARCH64_EXCLUDE:-Interpreter}"
EXCLUDE_MAX="${AARCH64_EXCLUDE:-none}"
JOBS="${JOBS:-$(nproc)}"
for cpu in cortex-a53 max; do
  t=$SECONDS
  if [ "$cpu" = max ]; then EXCLUDE=$EXCLUDE_MAX; else EXCLUDE=$EXCLUDE_A53; fi
  # ctest runs each test through CMAKE_CROSSCOMPILING_EMULATOR (qemu-aarch64,
  # cmake/aarch64-linux-gnu.cmake); QEMU_CPU picks the emulated CPU.
  if (cd build-aarch64 && QEMU_CPU=$cpu ctest -R "$TESTS" -E "$EXCLUDE" -j"$JOBS" --output-on-failure \
        --timeout 600 >ctest-$cpu.log 2>&1); then
    echo "aarch64 unit tests, -cpu $cpu: $(grep -E 'tests passed' build-aarch64/ctest-$cpu.log) ($((SECONDS - t)) s)"
  else
    tail -40 build-aarch64/ctest-$cpu.log
    echo "aarch64 unit tests, -cpu $cpu: FAILED"
    failed=1
  fi
done

MODELS="${AARCH64_MODELS:-mobilenet_v1_0.25_128_quant person_detect hello_world_int8 hello_world_float keyword_scrambled}"
# A float32 MobileNet from the converter-made zoo (scripts/make_zoo.py, which
# scripts/test.sh runs first), for the NEON float32 CONV_2D / DEPTHWISE_CONV_2D
# / FULLY_CONNECTED, the zoo's tf_keras LSTMs for the LSTM products and
# fixed-point activations, its int16x8 MobileNet for the int16x8 CONV_2D,
# DEPTHWISE_CONV_2D, FULLY_CONNECTED and ADD, its dynamic-range ResNet for
# the hybrid CONV_2D / FULLY_CONNECTED GEMM, its float32 ResNet for the
# Winograd 3x3 layers and its ResNeXt (float32, int8) for the grouped
# CONV_2D and the depthwise multiplier; skipped when the zoo is not cached.
ZOO_MODELS="${AARCH64_ZOO_MODELS:-mobilenet_v2_float32 lstm_sequence_tf_keras_float32 lstm_sequence_tf_keras_int8 lstm_sequence_tf_keras_dynamic mobilenet_v2_int16x8 resnet_small_dynamic resnet_small_float32 resnext_small_float32 resnext_small_int8}"
ZOO="${DELEGATO_ZOO_DIR:-$HOME/.cache/delegato/zoo}/v1"
if [ -d ../shared/models ] && [ -x build/delegato ]; then
  t=$SECONDS
  out=build-aarch64/model_outputs
  rm -rf "$out"
  for m in $MODELS $ZOO_MODELS; do
    model=../shared/models/$m.tflite
    [ -f "$model" ] || model=$ZOO/$m.tflite
    [ -f "$model" ] || { echo "aarch64: $m.tflite not found (../shared/models, $ZOO), skipped"; continue; }
    build/delegato run --graph "$model" --kernels reference --save_inputs --output_dir "$out/$m/x86" >/dev/null
    inputs=()
    for f in "$out/$m/x86"/input_*.npy; do
      i=${f##*/input_}; inputs+=(--input "${i%.npy}=$f")
    done
    # cpu:isa[:threads]
    for run in cortex-a53:scalar cortex-a53:neon cortex-a53:neon:2 max:scalar max:neon max:dotprod \
               max:i8mm max:i8mm:2; do
      IFS=: read -r cpu isa threads <<<"$run"
      threads=${threads:-1}
      DELEGATO_ISA=$isa "${QEMU[@]}" -cpu "$cpu" build-aarch64/delegato run --graph "$model" \
        --num_threads "$threads" "${inputs[@]}" --output_dir "$out/$m/$cpu-$isa-t$threads" >/dev/null ||
        { echo "$m $cpu $isa $threads threads: run FAILED"; failed=1; }
    done
  done
  python3 - "$out" <<'PY' || failed=1
import sys
from pathlib import Path
import numpy as np
root, bad, n = Path(sys.argv[1]), 0, 0
for model in sorted(p for p in root.iterdir() if p.is_dir()):
    for ref in sorted((model / "x86").glob("output_*.npy")):
        want = np.load(ref)
        for run in sorted(p for p in model.iterdir() if p.name != "x86"):
            got_path = run / ref.name
            n += 1
            if not got_path.exists():
                print(f"{model.name} {run.name} {ref.name}: missing"); bad += 1; continue
            got = np.load(got_path)
            if got.shape != want.shape or got.dtype != want.dtype:
                ok = False
            elif np.issubdtype(want.dtype, np.floating):
                ok = np.allclose(got, want, rtol=1e-5, atol=1e-5)
            else:
                ok = np.array_equal(got, want)
            if not ok:
                print(f"{model.name} {run.name} {ref.name}: differs from x86 reference"); bad += 1
print(f"aarch64 models: {n - bad}/{n} outputs match the x86 reference kernels")
sys.exit(1 if bad else 0)
PY
  echo "aarch64 models under qemu: $((SECONDS - t)) s"
else
  echo "aarch64 models: skipped (../shared/models or build/delegato missing)"
fi
echo "aarch64 stage: $((SECONDS - start)) s in all"
exit $failed
