#!/usr/bin/env bash
# Builds the seed corpora of the fuzz targets into OUT/<target>/ from the
# project's own generated files and ../shared (when present). Nothing here is
# committed: the corpora are rebuilt on each run.
#   scripts/fuzz_seeds.sh OUT [DELEGATO_BIN]
set -euo pipefail
cd "$(dirname "$0")/.."
out="$1"
bin="${2:-build/delegato}"
shared="${DELEGATO_SHARED_DIR:-../shared}"
mkdir -p "$out"/{fuzz_model,fuzz_target_json,fuzz_cache_entry,fuzz_npy,fuzz_bmp,fuzz_plugin_options}
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Models: the demo model, the small shared ones, the shared hostile ones.
"$bin" generate -o "$out/fuzz_model/demo.tflite" >/dev/null
for m in hello_world_int8 hello_world_float split_concat model_invoking_error keras_lstm_mnist_ptq; do
  [ -f "$shared/models/$m.tflite" ] && cp "$shared/models/$m.tflite" "$out/fuzz_model/"
done
[ -d "$shared/models/hostile" ] && cp "$shared"/models/hostile/*.tflite "$out/fuzz_model/" 2>/dev/null || true

# Target files: the shipped ones.
cp targets/*.json "$out/fuzz_target_json/"

# Cache entries: a CPU entry (packed weights) and target entries (placement,
# partitions, device compile) written by real runs on the demo model.
"$bin" run --delegate_serialize_dir "$work/cache" >/dev/null 2>&1
for t in edgetpu nnapi-1.3 ethos-u55; do
  "$bin" run --target "$t" --delegate_serialize_dir "$work/cache" >/dev/null 2>&1 || true
done
cp "$work"/cache/*.bin "$out/fuzz_cache_entry/" 2>/dev/null || true

# .npy: inputs and outputs of real runs (uint8, float32).
"$bin" run --output_dir "$work/npy_demo" --save_inputs >/dev/null 2>&1
for f in "$work"/npy_demo/*.npy; do cp "$f" "$out/fuzz_npy/demo_$(basename "$f")"; done
if [ -f "$shared/models/hello_world_float.tflite" ]; then
  "$bin" run --graph "$shared/models/hello_world_float.tflite" --output_dir "$work/npy_hw" \
    --save_inputs >/dev/null 2>&1
  for f in "$work"/npy_hw/*.npy; do cp "$f" "$out/fuzz_npy/hello_$(basename "$f")"; done
fi

# BMP: small generated images (24-bit bottom-up, 32-bit top-down); the
# shared photographs are too large to mutate quickly.
python3 - "$out/fuzz_bmp" <<'PY'
import struct, sys
def bmp(path, w, h, bits):
    row = (w * bits // 8 + 3) // 4 * 4
    pixels = bytes((i * 37) & 255 for i in range(row * abs(h)))
    header = struct.pack('<IiiHHIIiiII', 40, w, h, 1, bits, 0, len(pixels), 2835, 2835, 0, 0)
    open(path, 'wb').write(b'BM' + struct.pack('<IHHI', 54 + len(pixels), 0, 0, 54) + header + pixels)
bmp(sys.argv[1] + '/rgb_8x8.bmp', 8, 8, 24)
bmp(sys.argv[1] + '/rgba_5x3_top_down.bmp', 5, -3, 32)
bmp(sys.argv[1] + '/rgb_3x7.bmp', 3, 7, 24)
PY
# Plugin options: one valid option string per shipped target, and each key.
for f in targets/*.json; do
  printf 'target:%s' "$(basename "$f" .json)" >"$out/fuzz_plugin_options/target_$(basename "$f" .json).txt"
done
printf 'target:cpu;kernels:reference;num_threads:2;never_delegate:0,2-3;log:info;report:r;cache_dir:c' \
  >"$out/fuzz_plugin_options/every_key.txt"

for t in "$out"/*; do echo "$(basename "$t"): $(ls "$t" | wc -l) seeds"; done
