#!/usr/bin/env python3
"""Writes the converter-made zoo: small Keras models with random weights,
converted by TensorFlow's TFLiteConverter as a user would (float32, full
integer int8, dynamic range, int16x8), into a cache directory outside the
repository. tests/conformance/test_zoo.py runs every model in delegato and in
LiteRT's reference kernels.

    python3 scripts/make_zoo.py [--out DIR] [--only NAME ...] [--force]

DIR defaults to $DELEGATO_ZOO_DIR, else ~/.cache/delegato/zoo. Models go to
DIR/v<ZOO_VERSION>/ with a manifest zoo.json (model file, architecture,
variant, converter version, or the converter's error where it cannot make a
variant). A model already present for this ZOO_VERSION and TensorFlow version
is not regenerated: change ZOO_VERSION when a recipe changes.

Needs tensorflow-cpu (pip install tensorflow-cpu; tf-keras too for the
Keras 2 LSTM model, recorded as not generated without it). Nothing is
downloaded besides the packages: every network is built with weights=None and
seeded random weights, batch-norm statistics set from one random batch.
Every model has batch size 1 (static shapes). Each architecture converts in
its own process, so a converter crash costs one variant only; what the
converter prints goes to DIR/v<ZOO_VERSION>/convert.log.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path

# Bump when a recipe (architecture, sizes, converter options) changes: the
# cache directory is keyed by it, so a changed recipe regenerates.
ZOO_VERSION = "1"

MANIFEST = "zoo.json"

# Variants: float32, full-integer int8 (int8 in/out), dynamic range (int8
# weights, float activations), int16x8 (int16 activations, int8 weights,
# int16 in/out), uint8 in/out full-integer for one model, and float32 with an
# unknown batch size for some.
VARIANTS = ("float32", "int8", "dynamic", "int16x8")
UINT8_IO_MODELS = ("mobilenet_v2",)
# float32_anybatch: from_keras_model on the model as built, batch dimension
# unknown (shape_signature -1, tensors sized for batch 1), as most users
# convert; the other variants fix the batch to 1. For these Keras 3 models:
ANY_BATCH_MODELS = ("mobilenet_v2", "mobilenet_v3_small", "resnet_small",
                    "transformer_encoder", "gru_sequence", "encoder_decoder")

REPRESENTATIVE_SAMPLES = 4


def zoo_root() -> Path:
    env = os.environ.get("DELEGATO_ZOO_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "delegato" / "zoo"


def zoo_dir(root: Path | None = None) -> Path:
    return (root or zoo_root()) / f"v{ZOO_VERSION}"


# --------------------------------------------------------------------------
# Architectures: each returns (keras model, input shape without batch).

def _mobilenet_v2(keras):
    return keras.applications.MobileNetV2(
        input_shape=(96, 96, 3), alpha=0.35, weights=None, classes=10), (96, 96, 3)


def _mobilenet_v3_small(keras):
    # Not minimalistic: hard-swish and squeeze-and-excitation blocks.
    return keras.applications.MobileNetV3Small(
        input_shape=(96, 96, 3), alpha=0.75, minimalistic=False, weights=None, classes=10,
        include_preprocessing=False), (96, 96, 3)


def _efficientnet_b0(keras):
    # Swish activations (LOGISTIC and MUL once converted), squeeze-and-
    # excitation blocks, stochastic depth (inactive at inference), its own
    # rescaling and normalization layers in front.
    return keras.applications.EfficientNetB0(
        input_shape=(96, 96, 3), weights=None, classes=10), (96, 96, 3)


def _resnet_small(keras):
    """ResNet-style: a strided stem and max pool, then basic residual blocks
    (two 3x3 conv + batch norm, identity or 1x1 strided projection shortcut)."""
    layers = keras.layers
    inputs = keras.Input((64, 64, 3))
    x = layers.Conv2D(16, 5, strides=2, padding="same", use_bias=False)(inputs)
    x = layers.BatchNormalization()(x)
    x = layers.ReLU()(x)
    x = layers.MaxPooling2D(3, strides=2, padding="same")(x)
    for filters, stride in ((16, 1), (32, 2), (32, 1), (64, 2)):
        shortcut = x
        y = layers.Conv2D(filters, 3, strides=stride, padding="same", use_bias=False)(x)
        y = layers.BatchNormalization()(y)
        y = layers.ReLU()(y)
        y = layers.Conv2D(filters, 3, padding="same", use_bias=False)(y)
        y = layers.BatchNormalization()(y)
        if stride != 1 or shortcut.shape[-1] != filters:
            shortcut = layers.Conv2D(filters, 1, strides=stride, use_bias=False)(shortcut)
            shortcut = layers.BatchNormalization()(shortcut)
        x = layers.ReLU()(layers.Add()([shortcut, y]))
    x = layers.GlobalAveragePooling2D()(x)
    outputs = layers.Dense(10, activation="softmax")(x)
    return keras.Model(inputs, outputs, name="resnet_small"), (64, 64, 3)


def _densenet_small(keras):
    """DenseNet-style: every layer of a block sees the concatenation of all
    earlier ones; transitions halve the size with 1x1 conv + average pool."""
    layers = keras.layers
    inputs = keras.Input((48, 48, 3))
    x = layers.Conv2D(16, 3, strides=2, padding="same", use_bias=False)(inputs)
    for block in range(2):
        for _ in range(3):
            y = layers.BatchNormalization()(x)
            y = layers.ReLU()(y)
            y = layers.Conv2D(16, 1, use_bias=False)(y)
            y = layers.BatchNormalization()(y)
            y = layers.ReLU()(y)
            y = layers.Conv2D(8, 3, padding="same", use_bias=False)(y)
            x = layers.Concatenate()([x, y])
        if block == 0:
            x = layers.BatchNormalization()(x)
            x = layers.ReLU()(x)
            x = layers.Conv2D(24, 1, use_bias=False)(x)
            x = layers.AveragePooling2D(2)(x)
    x = layers.GlobalAveragePooling2D()(x)
    outputs = layers.Dense(10, activation="softmax")(x)
    return keras.Model(inputs, outputs, name="densenet_small"), (48, 48, 3)


def _resnext_small(keras):
    """ResNeXt-style: a stem, a depthwise layer with depth multiplier 2, then
    bottleneck blocks whose 3x3 convolution is grouped (8 groups: grouped
    CONV_2D in TFLite), identity or 1x1 projection shortcuts."""
    layers = keras.layers
    inputs = keras.Input((40, 40, 3))
    x = layers.Conv2D(16, 3, strides=2, padding="same", use_bias=False)(inputs)
    x = layers.BatchNormalization()(x)
    x = layers.ReLU()(x)
    x = layers.DepthwiseConv2D(3, depth_multiplier=2, padding="same", use_bias=False)(x)
    x = layers.BatchNormalization()(x)
    x = layers.ReLU()(x)
    for width, out, stride in ((64, 64, 1), (128, 96, 2)):
        shortcut = x
        y = layers.Conv2D(width, 1, use_bias=False)(x)
        y = layers.BatchNormalization()(y)
        y = layers.ReLU()(y)
        y = layers.Conv2D(width, 3, strides=stride, padding="same", groups=8, use_bias=False)(y)
        y = layers.BatchNormalization()(y)
        y = layers.ReLU()(y)
        y = layers.Conv2D(out, 1, use_bias=False)(y)
        y = layers.BatchNormalization()(y)
        if stride != 1 or shortcut.shape[-1] != out:
            shortcut = layers.Conv2D(out, 1, strides=stride, use_bias=False)(shortcut)
            shortcut = layers.BatchNormalization()(shortcut)
        x = layers.ReLU()(layers.Add()([shortcut, y]))
    x = layers.GlobalAveragePooling2D()(x)
    outputs = layers.Dense(10, activation="softmax")(x)
    return keras.Model(inputs, outputs, name="resnext_small"), (40, 40, 3)


def _transformer_encoder(keras):
    """Two pre-norm encoder layers over 16 tokens of width 32: multi-head
    self-attention, layer normalisation, a GELU feed-forward block."""
    layers = keras.layers
    tokens, width = 16, 32
    inputs = keras.Input((tokens, width))
    x = layers.Dense(width)(inputs)
    for _ in range(2):
        y = layers.LayerNormalization(epsilon=1e-6)(x)
        y = layers.MultiHeadAttention(num_heads=4, key_dim=8)(y, y)
        x = layers.Add()([x, y])
        y = layers.LayerNormalization(epsilon=1e-6)(x)
        y = layers.Dense(64, activation="gelu")(y)
        y = layers.Dense(width)(y)
        x = layers.Add()([x, y])
    x = layers.LayerNormalization(epsilon=1e-6)(x)
    x = layers.GlobalAveragePooling1D()(x)
    outputs = layers.Dense(4, activation="softmax")(x)
    return keras.Model(inputs, outputs, name="transformer_encoder"), (tokens, width)


# Recurrent models: 20 steps of 24 features, 48 units, so that every gate's
# weight matrix has the 1024 elements the converter's dynamic-range
# quantization needs before it quantizes a weight.
SEQUENCE = (20, 24)


def _lstm_sequence(keras):
    layers = keras.layers
    inputs = keras.Input(SEQUENCE)
    x = layers.LSTM(48, return_sequences=True)(inputs)
    x = layers.LSTM(48)(x)
    outputs = layers.Dense(4, activation="softmax")(x)
    return keras.Model(inputs, outputs, name="lstm_sequence"), SEQUENCE


def _gru_sequence(keras):
    layers = keras.layers
    inputs = keras.Input(SEQUENCE)
    x = layers.GRU(48)(inputs)
    outputs = layers.Dense(4, activation="softmax")(x)
    return keras.Model(inputs, outputs, name="gru_sequence"), SEQUENCE


def _encoder_decoder(keras):
    """A small U-Net: strided convolutions down, Conv2DTranspose and bilinear
    UpSampling2D up, a skip connection concatenated on the way up."""
    layers = keras.layers
    inputs = keras.Input((32, 32, 3))
    e1 = layers.Conv2D(8, 3, strides=2, padding="same", activation="relu")(inputs)   # 16x16
    e2 = layers.Conv2D(16, 3, strides=2, padding="same", activation="relu")(e1)      # 8x8
    d1 = layers.Conv2DTranspose(8, 3, strides=2, padding="same", activation="relu")(e2)  # 16x16
    d1 = layers.Concatenate()([d1, e1])
    d1 = layers.Conv2D(8, 3, padding="same", activation="relu")(d1)
    d2 = layers.UpSampling2D(2, interpolation="bilinear")(d1)                        # 32x32
    outputs = layers.Conv2D(1, 1, activation="sigmoid")(d2)
    return keras.Model(inputs, outputs, name="encoder_decoder"), (32, 32, 3)


# name -> (description, builder, Keras flavour). "keras" is Keras 3 (tf.keras
# in TensorFlow 2.16+), converted from a frozen batch-1 function; "tf_keras"
# is the Keras 2 package, converted with from_keras_model as its users do:
# only that path turns a Keras LSTM into UNIDIRECTIONAL_SEQUENCE_LSTM (Keras 3
# recurrent layers become WHILE loops).
ARCHITECTURES = {
    "mobilenet_v2": ("Keras MobileNetV2, alpha 0.35, 96x96, 10 classes", _mobilenet_v2, "keras"),
    "mobilenet_v3_small": ("Keras MobileNetV3Small, alpha 0.75, 96x96, not minimalistic",
                           _mobilenet_v3_small, "keras"),
    "efficientnet_b0": ("Keras EfficientNetB0, 96x96, 10 classes", _efficientnet_b0, "keras"),
    "resnet_small": ("ResNet-style CNN: stem, max pool, 4 basic residual blocks, 64x64",
                     _resnet_small, "keras"),
    "densenet_small": ("DenseNet-style CNN: 2 dense blocks of 3 layers, 48x48", _densenet_small,
                       "keras"),
    "resnext_small": ("ResNeXt-style CNN: depthwise with multiplier 2, 2 bottleneck blocks with "
                      "8-group 3x3 convolutions, 40x40", _resnext_small, "keras"),
    "transformer_encoder": ("2-layer transformer encoder: MultiHeadAttention, "
                            "LayerNormalization, GELU; 16 tokens x 32", _transformer_encoder,
                            "keras"),
    "lstm_sequence": ("2 stacked Keras 3 LSTM(48) over 20 steps x 24 features (WHILE loops)",
                      _lstm_sequence, "keras"),
    "lstm_sequence_tf_keras": ("2 stacked tf_keras (Keras 2) LSTM(48) over 20 steps x 24 "
                               "features (UNIDIRECTIONAL_SEQUENCE_LSTM)", _lstm_sequence,
                               "tf_keras"),
    "gru_sequence": ("Keras 3 GRU(48) over 20 steps x 24 features (a WHILE loop)", _gru_sequence,
                     "keras"),
    "encoder_decoder": ("U-Net-style encoder-decoder: Conv2DTranspose, bilinear "
                        "UpSampling2D, skip concat; 32x32", _encoder_decoder, "keras"),
}


def _all_layers(layer):
    for child in getattr(layer, "layers", ()):
        yield child
        yield from _all_layers(child)


def settle_batch_norm(keras, np, model, input_shape, batch=8, seed=1):
    """Random weights with untouched BatchNormalization statistics (mean 0,
    variance 1) let activations shrink layer after layer: the logits of a
    deep network end up within 1e-6 of each other and their quantization
    scales near 1e-9, which nobody ships. One forward pass in training mode
    with momentum 0 sets every layer's moving statistics to those of a
    random batch, as training would, so activations keep a realistic range."""
    norms = [layer for layer in _all_layers(model)
             if isinstance(layer, keras.layers.BatchNormalization)]
    if not norms:
        return
    for layer in norms:
        layer.momentum = 0.0
    rng = np.random.default_rng(seed)
    model(rng.uniform(-1.0, 1.0, size=(batch,) + tuple(input_shape)).astype(np.float32),
          training=True)


# --------------------------------------------------------------------------
# Conversion

def _converter(tf, model, input_shape, flavour):
    """A converter over the model's inference call on a batch-1 input (static
    shapes). Keras 3: the call as a function with its variables frozen into
    constants (the converter from_keras_model uses, without its SavedModel
    round trip: 4x faster here). tf_keras: from_keras_model itself."""
    if flavour == "tf_keras":
        return tf.lite.TFLiteConverter.from_keras_model(model)
    from tensorflow.python.framework.convert_to_constants import (
        convert_variables_to_constants_v2)
    spec = tf.TensorSpec((1,) + tuple(input_shape), tf.float32, name="input")
    function = tf.function(lambda x: model(x, training=False), input_signature=[spec])
    frozen = convert_variables_to_constants_v2(function.get_concrete_function())
    return tf.lite.TFLiteConverter.from_concrete_functions([frozen])


def _representative(np, input_shape, seed=0):
    def generate():
        rng = np.random.default_rng(seed)
        for _ in range(REPRESENTATIVE_SAMPLES):
            yield [rng.uniform(-1.0, 1.0, size=(1,) + tuple(input_shape)).astype(np.float32)]
    return generate


def convert(tf, np, model, input_shape, flavour: str, variant: str) -> bytes:
    if variant == "float32_anybatch":
        return tf.lite.TFLiteConverter.from_keras_model(model).convert()
    converter = _converter(tf, model, input_shape, flavour)
    if variant == "float32":
        pass
    elif variant == "dynamic":
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
    elif variant in ("int8", "uint8io"):
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
        converter.representative_dataset = _representative(np, input_shape)
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        io_type = tf.int8 if variant == "int8" else tf.uint8
        converter.inference_input_type = io_type
        converter.inference_output_type = io_type
    elif variant == "int16x8":
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
        converter.representative_dataset = _representative(np, input_shape)
        converter.target_spec.supported_ops = [
            tf.lite.OpsSet.EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8]
        converter.inference_input_type = tf.int16
        converter.inference_output_type = tf.int16
    else:
        raise ValueError(f"unknown variant {variant}")
    return converter.convert()


@contextlib.contextmanager
def _quiet(log_path: Path):
    """Sends everything the converter prints (Python and C++ alike, at the
    file-descriptor level) to log_path."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with open(log_path, "ab") as log:
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
        try:
            yield
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])


def _variants_of(name: str):
    variants = list(VARIANTS)
    if name in UINT8_IO_MODELS:
        variants.append("uint8io")
    if name in ANY_BATCH_MODELS:
        variants.append("float32_anybatch")
    return variants


def _first_error_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    # The converter's MLIR errors put the useful line after "error:".
    for line in lines:
        if "error:" in line:
            return line[line.index("error:"):][:400]
    return (f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__)[:400]


def load_manifest(directory: Path) -> dict:
    path = directory / MANIFEST
    if path.is_file():
        return json.loads(path.read_text())
    return {"zoo_version": ZOO_VERSION, "models": []}


def _keras_module(tf, flavour):
    if flavour == "tf_keras":
        import tf_keras
        return tf_keras
    return tf.keras


def _build(keras, build, flavour):
    model, input_shape = build(keras)
    if flavour == "tf_keras":
        # from_keras_model takes the batch size from the model's input.
        inputs = keras.Input(tuple(input_shape), batch_size=1, name="input")
        model = keras.Model(inputs, model(inputs), name=model.name)
    return model, input_shape


def worker(directory: Path, name: str, variants, results: Path) -> int:
    """Converts the variants of one architecture, appending to `results` a
    JSON line when each starts and one with its manifest entry when done."""
    log_path = directory / "convert.log"
    description, build, flavour = ARCHITECTURES[name]

    def record(line):
        with open(results, "a") as out:
            out.write(json.dumps(line) + "\n")

    with _quiet(log_path):
        import numpy as np
        import tensorflow as tf
    converter_version = f"tensorflow {tf.__version__}"
    try:
        with _quiet(log_path):
            keras = _keras_module(tf, flavour)
            keras.utils.set_random_seed(0)
            model, input_shape = _build(keras, build, flavour)
            settle_batch_norm(keras, np, model, input_shape)
    except ImportError as error:
        for variant in variants:
            record({"done": variant, "entry": {
                "architecture": name, "variant": variant, "description": description,
                "converter": converter_version, "zoo_version": ZOO_VERSION, "file": None,
                "converter_error": f"not generated: {error} (pip install tf-keras)"}})
        return 0
    for variant in variants:
        record({"started": variant})
        start = time.monotonic()
        entry = {"architecture": name, "variant": variant, "description": description,
                 "converter": converter_version, "zoo_version": ZOO_VERSION}
        try:
            with _quiet(log_path):
                content = convert(tf, np, model, input_shape, flavour, variant)
            filename = f"{name}_{variant}.tflite"
            (directory / filename).write_bytes(content)
            entry.update(file=filename, bytes=len(content))
        except Exception as error:  # the converter's own refusal is a result
            entry.update(file=None, converter_error=_first_error_line(error))
            if os.environ.get("DELEGATO_ZOO_VERBOSE"):
                traceback.print_exc()
        entry["seconds"] = round(time.monotonic() - start, 1)
        record({"done": variant, "entry": entry})
    return 0


def _up_to_date(directory: Path, entry, converter_version: str) -> bool:
    return (entry is not None and entry.get("zoo_version") == ZOO_VERSION
            and not entry.get("converter_error", "").startswith("not generated")
            and entry.get("converter") == converter_version
            and (entry.get("file") is None or (directory / entry["file"]).is_file()))


def _tensorflow_version():
    """TensorFlow's version without importing it (the workers do)."""
    try:
        from importlib import metadata
    except ImportError:
        return None
    for package in ("tensorflow-cpu", "tensorflow"):
        try:
            return metadata.version(package)
        except metadata.PackageNotFoundError:
            continue
    return None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="zoo root (default $DELEGATO_ZOO_DIR or "
                        "~/.cache/delegato/zoo)")
    parser.add_argument("--only", nargs="*", choices=sorted(ARCHITECTURES),
                        help="generate only these architectures")
    parser.add_argument("--force", action="store_true", help="regenerate present models")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--variants", nargs="*", help=argparse.SUPPRESS)
    parser.add_argument("--results", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    directory = zoo_dir(args.out)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    if args.worker:
        return worker(directory, args.worker, args.variants, args.results)

    start = time.monotonic()
    tf_version = _tensorflow_version()
    if tf_version is None:
        print("make_zoo: tensorflow is not installed (pip install tensorflow-cpu); "
              "no zoo generated", file=sys.stderr)
        return 2
    converter_version = f"tensorflow {tf_version}"
    directory.mkdir(parents=True, exist_ok=True)
    log_path = directory / "convert.log"
    log_path.write_bytes(b"")
    manifest = load_manifest(directory)
    entries = {(e["architecture"], e["variant"]): e for e in manifest.get("models", [])}

    made = cached = failed = 0
    for name in args.only or list(ARCHITECTURES):
        todo = []
        for variant in _variants_of(name):
            if not args.force and _up_to_date(directory, entries.get((name, variant)),
                                               converter_version):
                cached += 1
            else:
                todo.append(variant)
        model_start = time.monotonic()
        # One process per architecture: a converter crash (it happens) costs
        # that variant only; the worker restarts for the others.
        while todo:
            results = directory / f".{name}.results"
            results.unlink(missing_ok=True)
            process = subprocess.run(
                [sys.executable, str(Path(__file__).resolve()), "--worker", name,
                 "--variants", *todo] + (["--out", str(args.out)] if args.out else [])
                + ["--results", str(results)])
            lines = ([json.loads(line) for line in results.read_text().splitlines()]
                     if results.is_file() else [])
            results.unlink(missing_ok=True)
            started = None
            for line in lines:
                if "started" in line:
                    started = line["started"]
                    continue
                entry = line["entry"]
                entries[(name, entry["variant"])] = entry
                todo.remove(entry["variant"])
                started = None
                if entry.get("file"):
                    made += 1
                    status = f"{entry['bytes'] / 1024:.0f} KiB"
                else:
                    failed += 1
                    status = f"converter failed: {entry['converter_error']}"
                print(f"  {name}_{entry['variant']}: {status} ({entry.get('seconds', 0)} s)",
                      flush=True)
            if process.returncode != 0:
                if started is None:
                    print(f"make_zoo: the worker for {name} failed (exit {process.returncode}) "
                          f"before converting; see {log_path}", file=sys.stderr)
                    return 1
                reason = (f"the converter crashed (signal {-process.returncode})"
                          if process.returncode < 0 else
                          f"the converter exited with {process.returncode}")
                entries[(name, started)] = {
                    "architecture": name, "variant": started,
                    "description": ARCHITECTURES[name][0], "converter": converter_version,
                    "zoo_version": ZOO_VERSION, "file": None, "converter_error": reason}
                todo.remove(started)
                failed += 1
                print(f"  {name}_{started}: {reason}", flush=True)
            manifest = {"zoo_version": ZOO_VERSION, "converter": converter_version,
                        "models": sorted(entries.values(),
                                         key=lambda e: (e["architecture"], e["variant"]))}
            (directory / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
            if not todo:
                print(f"{name}: {time.monotonic() - model_start:.1f} s", flush=True)

    print(f"zoo in {directory}: {made} converted, {cached} cached, {failed} the converter "
          f"cannot make; {time.monotonic() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
