"""Shared helpers for the conformance test and report: LiteRT as the oracle,
seeded inputs, running `delegato run`, and comparing outputs.

The oracle is TFLite/LiteRT itself. "Bit-exact" means equal to its reference
kernels (BUILTIN_REF op resolver); the default interpreter (optimized kernels,
XNNPACK) is a secondary comparison that may differ by an LSB here and there.
"""

from __future__ import annotations

import dataclasses
import os
import re
import struct
import subprocess
import tempfile
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[2]

# Tolerance for float outputs (integer outputs must be exactly equal).
FLOAT_RTOL = 1e-5
FLOAT_ATOL = 1e-6

# Seeds used for random inputs, each with the thread count delegato runs
# with (the second run exercises the thread pool); the report and the test
# use the same ones.
DEFAULT_SEEDS = (1, 2)
DEFAULT_RUNS = tuple(zip(DEFAULT_SEEDS, (1, 2)))

# Models whose ops are a stretch goal: an "unsupported op" error is expected
# even in strict mode.
OPTIONAL_MODELS = frozenset({"keras_lstm_mnist_ptq", "keyword_scrambled"})

# Classifiers run on a real image, and the known top-1 answers (ImageNet label
# index, minimum score) from Coral's own tests. None: compare only.
IMAGE_CLASSIFIERS = {
    "mobilenet_v2_1.0_224_quant": (286, 0.8),     # Egyptian cat
    "mobilenet_v1_0.25_128_quant": (283, 0.36),   # tiger cat
    "tf2_mobilenet_v2_1.0_224_ptq": None,
}
CLASSIFIER_IMAGE = "cat.bmp"

# The bad model: delegato must refuse it naming this custom op and node.
INVOKING_ERROR_MODEL = "model_invoking_error"
INVOKING_ERROR_OP = "fake-op-double"
INVOKING_ERROR_NODE = 0

# What delegato prints when an op, op version or dtype has no kernel.
UNSUPPORTED_PATTERN = re.compile(
    r"unsupported|not supported|no kernel|not implemented|unknown (builtin|custom )?op",
    re.IGNORECASE)


class OracleUnavailable(RuntimeError):
    """No LiteRT / TFLite Python package is installed."""


class OracleRejectsModel(RuntimeError):
    """LiteRT refuses to load or run the model."""


# --------------------------------------------------------------------------
# Locations

def shared_dir() -> Path:
    env = os.environ.get("DELEGATO_SHARED_DIR")
    return Path(env) if env else REPO_ROOT.parent / "shared"


def models_dir() -> Path:
    return shared_dir() / "models"


def images_dir() -> Path:
    return shared_dir() / "images"


def list_models() -> list[Path]:
    directory = models_dir()
    return sorted(directory.glob("*.tflite")) if directory.is_dir() else []


def strict_mode() -> bool:
    """DELEGATO_CONFORMANCE_STRICT=1: a missing binary and unsupported ops
    (outside the optional LSTM/SVDF models) fail instead of skip/xfail."""
    return os.environ.get("DELEGATO_CONFORMANCE_STRICT", "") not in ("", "0")


def delegato_binary() -> Path:
    env = os.environ.get("DELEGATO_BIN")
    return Path(env) if env else REPO_ROOT / "build" / "delegato"


# --------------------------------------------------------------------------
# The LiteRT package

@dataclasses.dataclass(frozen=True)
class OracleBackend:
    package: str          # "ai_edge_litert", "tflite_runtime" or "tensorflow"
    version: str
    interpreter_class: type
    resolver_enum: Optional[type]


_backend: Optional[OracleBackend] = None


def _package_version(name: str, module) -> str:
    version = getattr(module, "__version__", None)
    if version:
        return str(version)
    try:
        from importlib import metadata
        return metadata.version(name.replace("_", "-"))
    except Exception:
        return "unknown"


def backend() -> OracleBackend:
    """The first LiteRT/TFLite Python package found; raises OracleUnavailable."""
    global _backend
    if _backend is not None:
        return _backend
    try:
        import ai_edge_litert
        from ai_edge_litert import interpreter as lite
        _backend = OracleBackend("ai_edge_litert", _package_version("ai_edge_litert", ai_edge_litert),
                                 lite.Interpreter, lite.OpResolverType)
        return _backend
    except ImportError:
        pass
    try:
        import tflite_runtime
        from tflite_runtime import interpreter as lite
        _backend = OracleBackend("tflite_runtime", _package_version("tflite_runtime", tflite_runtime),
                                 lite.Interpreter, getattr(lite, "OpResolverType", None))
        return _backend
    except ImportError:
        pass
    try:
        import tensorflow as tf
        _backend = OracleBackend("tensorflow", tf.__version__, tf.lite.Interpreter,
                                 getattr(tf.lite.experimental, "OpResolverType", None))
        return _backend
    except ImportError:
        pass
    raise OracleUnavailable(
        "no LiteRT oracle installed: pip install ai-edge-litert "
        "(or tflite-runtime / tensorflow)")


# --------------------------------------------------------------------------
# Models LiteRT refuses although the kernels would run them

def _u32(data, pos):
    return struct.unpack_from("<I", data, pos)[0]


def _table_field(data, table_pos, slot):
    """Absolute position of field `slot` of the table at table_pos, or None."""
    vtable = table_pos - struct.unpack_from("<i", data, table_pos)[0]
    vtable_size = struct.unpack_from("<H", data, vtable)[0]
    entry = 4 + 2 * slot
    if entry >= vtable_size:
        return None
    offset = struct.unpack_from("<H", data, vtable + entry)[0]
    return table_pos + offset if offset else None


def _table_vector(data, table_pos, slot):
    """(start, length) of a vector field, or (0, 0) when absent."""
    field = _table_field(data, table_pos, slot)
    if field is None:
        return 0, 0
    vector = field + _u32(data, field)
    return vector + 4, _u32(data, vector)


def _deref(data, pos):
    return pos + _u32(data, pos)


def fix_out_of_range_quantized_dimension(model_bytes: bytes) -> tuple[bytes, int]:
    """Sets quantized_dimension to 0 where it is >= the tensor's rank.

    Some converters wrote per-channel biases (rank 1) with the filter's
    quantized_dimension (3). LiteRT rejects such files at load time, yet its
    kernels never read the bias quantization. Patching the stored int32 in
    place keeps every other byte of the file. Returns (bytes, tensors fixed).
    """
    data = bytearray(model_bytes)
    root = _u32(data, 0)
    fixed = 0
    subgraphs, subgraph_count = _table_vector(data, root, 2)      # Model.subgraphs
    for s in range(subgraph_count):
        subgraph = _deref(data, subgraphs + 4 * s)
        tensors, tensor_count = _table_vector(data, subgraph, 0)  # SubGraph.tensors
        for t in range(tensor_count):
            tensor = _deref(data, tensors + 4 * t)
            _, rank = _table_vector(data, tensor, 0)              # Tensor.shape
            quant_field = _table_field(data, tensor, 4)           # Tensor.quantization
            if quant_field is None:
                continue
            quant = quant_field + _u32(data, quant_field)
            dim_field = _table_field(data, quant, 6)              # quantized_dimension
            if dim_field is None:
                continue
            dim = struct.unpack_from("<i", data, dim_field)[0]
            if dim >= max(rank, 1) or dim < 0:
                struct.pack_into("<i", data, dim_field, 0)
                fixed += 1
    return bytes(data), fixed


# --------------------------------------------------------------------------
# Running LiteRT

@dataclasses.dataclass(frozen=True)
class TensorInfo:
    name: str
    dtype: np.dtype
    shape: tuple[int, ...]
    scale: float
    zero_point: int


def _tensor_infos(details) -> list[TensorInfo]:
    infos = []
    for d in details:
        scale, zero_point = d.get("quantization", (0.0, 0))
        infos.append(TensorInfo(d["name"], np.dtype(d["dtype"]),
                                tuple(int(x) for x in d["shape"]),
                                float(scale), int(zero_point)))
    return infos


class Oracle:
    """One LiteRT interpreter over a model.

    reference=True uses the reference kernels (BUILTIN_REF), otherwise the
    default resolver (optimized kernels plus the default XNNPACK delegate).
    `note` says when the model had to be patched for LiteRT to accept it.
    """

    def __init__(self, model_path: Path, reference: bool = True, num_threads: int = 1):
        self.backend = backend()
        self.model_path = Path(model_path)
        self.reference = reference
        self.note = ""
        content = self.model_path.read_bytes()
        try:
            self._interpreter = self._make(content, reference, num_threads)
        except (ValueError, RuntimeError) as error:
            message = str(error)
            if "quantized_dimension" not in message:
                raise OracleRejectsModel(_first_line(message)) from error
            patched, fixed = fix_out_of_range_quantized_dimension(content)
            try:
                self._interpreter = self._make(patched, reference, num_threads)
            except (ValueError, RuntimeError) as second:
                raise OracleRejectsModel(_first_line(str(second))) from second
            reason = re.search(r"quantized_dimension must be in range \[[^)]*\)\. Was \d+\.", message)
            reason = reason.group(0) if reason else _first_line(message)
            self.note = (f"LiteRT rejects the file ({reason}); the oracle runs "
                         f"a copy with quantized_dimension set to 0 on {fixed} tensors "
                         "whose rank it exceeds (biases; no kernel reads it)")
        self.inputs = _tensor_infos(self._interpreter.get_input_details())
        self.outputs = _tensor_infos(self._interpreter.get_output_details())
        self._input_indices = [d["index"] for d in self._interpreter.get_input_details()]
        self._output_indices = [d["index"] for d in self._interpreter.get_output_details()]

    def _make(self, content: bytes, reference: bool, num_threads: int):
        kwargs = {"model_content": content, "num_threads": num_threads}
        enum = self.backend.resolver_enum
        if reference:
            if enum is None:
                raise OracleUnavailable(
                    f"{self.backend.package} {self.backend.version} has no BUILTIN_REF op resolver")
            kwargs["experimental_op_resolver_type"] = enum.BUILTIN_REF
        interpreter = self.backend.interpreter_class(**kwargs)
        interpreter.allocate_tensors()
        return interpreter

    def run(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        if len(inputs) != len(self.inputs):
            raise ValueError(f"model has {len(self.inputs)} inputs, got {len(inputs)}")
        for index, info, array in zip(self._input_indices, self.inputs, inputs):
            array = np.asarray(array)
            if array.dtype != info.dtype or tuple(array.shape) != info.shape:
                raise ValueError(f"input '{info.name}': expected {info.dtype}{list(info.shape)}, "
                                 f"got {array.dtype}{list(array.shape)}")
            self._interpreter.set_tensor(index, array)
        # Variable tensors (LSTM/SVDF state) keep values between invocations;
        # every run starts from the model's initial state, as a fresh delegato run does.
        self._interpreter.reset_all_variables()
        try:
            self._interpreter.invoke()
        except (ValueError, RuntimeError) as error:
            raise OracleRejectsModel(_first_line(str(error))) from error
        return [np.array(self._interpreter.get_tensor(i), copy=True) for i in self._output_indices]


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return text.strip()


# --------------------------------------------------------------------------
# Inputs

def random_inputs(infos: Sequence[TensorInfo], seed: int) -> list[np.ndarray]:
    """Seeded inputs: full range for 8/16-bit integers, [-1, 1) for floats,
    small values for wider integers (often indices or sizes)."""
    rng = np.random.default_rng(seed)
    arrays = []
    for info in infos:
        dtype, shape = info.dtype, info.shape
        if dtype == np.bool_:
            array = rng.integers(0, 2, size=shape).astype(np.bool_)
        elif dtype in (np.uint8, np.int8, np.int16, np.uint16):
            limits = np.iinfo(dtype)
            array = rng.integers(int(limits.min), int(limits.max), size=shape,
                                 endpoint=True).astype(dtype)
        elif np.issubdtype(dtype, np.integer):
            array = rng.integers(-8, 8, size=shape, endpoint=True).astype(dtype)
        elif np.issubdtype(dtype, np.floating):
            array = rng.uniform(-1.0, 1.0, size=shape).astype(dtype)
        else:
            raise ValueError(f"input '{info.name}': no generator for dtype {dtype}")
        arrays.append(array)
    return arrays


# --------------------------------------------------------------------------
# Running delegato

@dataclasses.dataclass
class DelegatoRun:
    command: list[str]
    returncode: int
    stdout: str
    stderr: str
    outputs: list[np.ndarray]
    fed_inputs: list[np.ndarray]   # input_<i>.npy written with --save_inputs

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    @property
    def crashed(self) -> bool:
        return self.returncode < 0

    @property
    def unsupported(self) -> bool:
        return self.returncode > 0 and bool(UNSUPPORTED_PATTERN.search(self.stderr))

    def error_line(self) -> str:
        return _first_line(self.stderr) or f"exit code {self.returncode}, no message"


def rejected_like_litert(run: DelegatoRun, oracle: "Oracle") -> bool:
    """delegato refused a file that LiteRT also refuses as written (the
    oracle only runs it after a patch), for the same reason: quantization."""
    return (run.returncode > 0 and bool(oracle.note)
            and re.search(r"quantiz|per-axis", run.stderr, re.IGNORECASE) is not None)


def _numbered_npy(directory: Path, prefix: str) -> list[np.ndarray]:
    found = {}
    for path in directory.glob(f"{prefix}_*.npy"):
        suffix = path.stem[len(prefix) + 1:]
        if suffix.isdigit():
            found[int(suffix)] = path
    if sorted(found) != list(range(len(found))):
        raise AssertionError(f"{prefix}_<i>.npy files are not numbered 0..n-1: {sorted(found)}")
    return [np.load(found[i], allow_pickle=False) for i in range(len(found))]


def run_delegato(model: Path, inputs: Optional[Sequence[np.ndarray]] = None,
                 image: Optional[Path] = None, binary: Optional[Path] = None,
                 extra_args: Sequence[str] = (), timeout: float = 600) -> DelegatoRun:
    """Runs `delegato run` on the model with the given inputs (or image) and
    reads back its outputs (and, with an image, the inputs it fed)."""
    binary = Path(binary) if binary else delegato_binary()
    with tempfile.TemporaryDirectory(prefix="delegato_conf_") as work:
        work = Path(work)
        out_dir = work / "out"
        out_dir.mkdir()
        command = [str(binary), "run", "--graph", str(model), "--output_dir", str(out_dir)]
        for i, array in enumerate(inputs or ()):
            path = work / f"in_{i}.npy"
            np.save(path, np.ascontiguousarray(array), allow_pickle=False)
            command += ["--input", f"{i}={path}"]
        if image is not None:
            command += ["--image", str(image), "--save_inputs"]
        command += list(extra_args)
        process = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        outputs, fed = [], []
        if process.returncode == 0:
            outputs = _numbered_npy(out_dir, "output")
            if image is not None:
                fed = _numbered_npy(out_dir, "input")
        return DelegatoRun(command, process.returncode, process.stdout, process.stderr,
                           outputs, fed)


# --------------------------------------------------------------------------
# Comparing

@dataclasses.dataclass
class Comparison:
    """One output against the oracle's. For integers `max_diff` is in LSB
    (raw integer units); for floats it is the max relative difference."""
    dtype: str
    shape: tuple[int, ...]
    elements: int
    equal: int
    max_diff: float
    max_abs_diff: float
    within_tolerance: bool
    first_difference: str     # "" when everything is equal
    layout_error: str = ""    # dtype/shape mismatch: nothing else is meaningful

    @property
    def is_float(self) -> bool:
        return np.issubdtype(np.dtype(self.dtype), np.floating) if not self.layout_error else False

    @property
    def ok(self) -> bool:
        return not self.layout_error and self.within_tolerance


def compare(actual: np.ndarray, expected: np.ndarray) -> Comparison:
    actual, expected = np.asarray(actual), np.asarray(expected)
    if actual.dtype != expected.dtype or actual.shape != expected.shape:
        return Comparison(str(expected.dtype), tuple(expected.shape), expected.size, 0,
                          float("inf"), float("inf"), False, "",
                          layout_error=f"got {actual.dtype}{list(actual.shape)}, expected "
                                       f"{expected.dtype}{list(expected.shape)}")
    size = expected.size
    is_float = np.issubdtype(expected.dtype, np.floating)
    if is_float:
        a, e = actual.astype(np.float64), expected.astype(np.float64)
        both_nan = np.isnan(a) & np.isnan(e)
        equal_mask = (a == e) | both_nan
        abs_diff = np.where(equal_mask, 0.0, np.abs(a - e))
        abs_diff = np.nan_to_num(abs_diff, nan=np.inf)
        scale = np.maximum(np.abs(a), np.abs(e))
        with np.errstate(divide="ignore", invalid="ignore"):
            rel_diff = np.where(equal_mask, 0.0, abs_diff / np.where(scale > 0, scale, 1.0))
        within = bool(np.allclose(a, e, rtol=FLOAT_RTOL, atol=FLOAT_ATOL, equal_nan=True))
        max_diff = float(rel_diff.max()) if size else 0.0
    else:
        a, e = actual.astype(np.int64), expected.astype(np.int64)
        equal_mask = a == e
        abs_diff = np.abs(a - e).astype(np.float64)
        within = bool(equal_mask.all())
        max_diff = float(abs_diff.max()) if size else 0.0
    max_abs = float(abs_diff.max()) if size else 0.0
    first = ""
    if not equal_mask.all():
        flat = int(np.flatnonzero(~equal_mask.ravel())[0])
        where = np.unravel_index(flat, expected.shape) if expected.ndim else ()
        first = (f"first difference at {list(int(i) for i in where)}: "
                 f"got {actual.ravel()[flat]}, expected {expected.ravel()[flat]}")
    return Comparison(str(expected.dtype), tuple(expected.shape), size, int(equal_mask.sum()),
                      max_diff, max_abs, within, first)


def describe_mismatches(comparisons: Sequence[Comparison], names: Sequence[str]) -> str:
    lines = []
    for i, (c, name) in enumerate(zip(comparisons, names)):
        if c.layout_error:
            lines.append(f"output {i} '{name}': {c.layout_error}")
        elif not c.ok:
            if c.is_float:
                size = f"max rel diff {c.max_diff:.6g}, max abs diff {c.max_abs_diff:.6g}"
            else:
                size = f"max abs diff {c.max_diff:.0f} LSB"
            lines.append(f"output {i} '{name}' {c.dtype}{list(c.shape)}: "
                         f"{c.elements - c.equal}/{c.elements} elements differ, "
                         f"{size}; {c.first_difference}")
    return "\n".join(lines)


def dequantize(array: np.ndarray, info: TensorInfo) -> np.ndarray:
    if info.scale == 0.0 or np.issubdtype(array.dtype, np.floating):
        return array.astype(np.float64)
    return (array.astype(np.float64) - info.zero_point) * info.scale
