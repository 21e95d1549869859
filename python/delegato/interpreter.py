"""A drop-in for ``tflite_runtime.interpreter`` / ``ai_edge_litert.interpreter``.

Change the import line and the same application runs on delegato::

    from delegato.interpreter import Interpreter, load_delegate

The methods, their arguments, the details dicts and the exceptions follow
LiteRT 2.3 (see docs/python.md for what differs). The work is done by the
C++ interpreter in ``delegato._core``; this module only shapes arguments and
answers.
"""

import ctypes
import enum
import os
import sys
import warnings

import numpy as np

from delegato import _core

__all__ = ["Interpreter", "InterpreterWithCustomOps", "SignatureRunner", "Delegate",
           "load_delegate", "OpResolverType"]


class OpResolverType(enum.Enum):
    """Which kernels run the model.

    BUILTIN_REF runs delegato's reference kernels (bit-exact with LiteRT's
    BUILTIN_REF); AUTO, BUILTIN and BUILTIN_WITHOUT_DEFAULT_DELEGATES run the
    optimized kernels (the reference wherever no optimized kernel exists).
    """
    AUTO = 0
    BUILTIN = 1
    BUILTIN_REF = 2
    BUILTIN_WITHOUT_DEFAULT_DELEGATES = 3


_NUMPY_TYPES = {
    "FLOAT32": np.float32, "FLOAT16": np.float16, "FLOAT64": np.float64, "INT8": np.int8,
    "UINT8": np.uint8, "INT16": np.int16, "UINT16": np.uint16, "INT32": np.int32,
    "UINT32": np.uint32, "INT64": np.int64, "UINT64": np.uint64, "BOOL": np.bool_,
    "COMPLEX64": np.complex64, "COMPLEX128": np.complex128, "STRING": np.bytes_,
}


class Delegate:
    """A TFLite external delegate plugin for ``experimental_delegates``.

    Any library exporting ``tflite_plugin_create_delegate`` /
    ``tflite_plugin_destroy_delegate`` (a vendor's, or delegato's own
    ``libdelegato_delegate.so`` with ``{'target': ID}``) is loaded and created
    here, then hosted by delegato's interpreter, which applies it as LiteRT's
    ModifyGraphWithDelegate does. Option values are str()-converted.
    """

    def __init__(self, library, options=None):
        options = options or {}
        keys = [str(k) for k in options.keys()]
        values = [str(v) for v in options.values()]
        library = os.fspath(library)
        # LiteRT loads the library with ctypes first: the same exception types
        # and messages for a library that does not load (OSError) or that is
        # not a plugin (AttributeError).
        self._library = ctypes.CDLL(library)
        self._library.tflite_plugin_create_delegate  # pylint: disable=pointless-statement
        self._library.tflite_plugin_destroy_delegate  # pylint: disable=pointless-statement
        self._plugin = _core.load_external_delegate(library, list(zip(keys, values)))
        self.library = library
        self.options = dict(zip(keys, values))


def load_delegate(library, options=None):
    """Returns a Delegate for ``Interpreter(experimental_delegates=[...])``."""
    try:
        return Delegate(library, options)
    except ValueError as e:
        raise ValueError("Failed to load delegate from {}\n{}".format(library, str(e))) from None


class SignatureRunner:
    """Runs one SignatureDef: takes and returns dicts keyed by signature names."""

    def __init__(self, interpreter=None, signature_key=None):
        if not interpreter:
            raise ValueError("None interpreter provided.")
        if not signature_key:
            raise ValueError("None signature_key provided.")
        signatures = interpreter._get_full_signature_list()
        if signature_key not in signatures:
            raise ValueError(f'Invalid signature_key provided: "{signature_key}".')
        self._interpreter = interpreter
        self._inputs = signatures[signature_key]["inputs"]
        self._outputs = signatures[signature_key]["outputs"]

    def __call__(self, **kwargs):
        if len(kwargs) != len(self._inputs):
            raise ValueError("Invalid number of inputs provided for running a SignatureDef, "
                             "expected %s vs provided %s" % (len(self._inputs), len(kwargs)))
        core = self._interpreter._interpreter
        for name, value in kwargs.items():
            if name not in self._inputs:
                raise ValueError("Invalid Input name (%s) for SignatureDef" % name)
            core.resize_input(self._inputs[name], [int(d) for d in value.shape], False)
        core.allocate_tensors()
        for name, value in kwargs.items():
            core.set_tensor(self._inputs[name], value)
        core.invoke()
        return {name: core.get_tensor(index) for name, index in self._outputs.items()}

    def get_input_details(self):
        return {name: self._interpreter._get_tensor_details(i) for name, i in self._inputs.items()}

    def get_output_details(self):
        return {name: self._interpreter._get_tensor_details(i) for name, i in self._outputs.items()}


class Interpreter:
    """Loads a .tflite model and runs it (LiteRT's Interpreter API).

    Beyond LiteRT: ``target='imx8mp-vx'`` runs the target's partitions through
    delegato's emulated accelerator (same as ``delegato run --target``);
    ``experimental_max_memory_mb`` caps the interpreter's planned memory
    (allocate_tensors raises RuntimeError when the model needs more).
    """

    def __init__(self, model_path=None, model_content=None, experimental_delegates=None,
                 num_threads=None, experimental_op_resolver_type=OpResolverType.AUTO,
                 experimental_preserve_all_tensors=False,
                 experimental_disable_delegate_clustering=False,
                 experimental_default_delegate_latest_features=False,
                 experimental_compress_quantization_zero_points=False,
                 experimental_disable_delegate_node_fusion=False,
                 experimental_force_delegate_node_profiling=False,
                 target=None, experimental_max_memory_mb=None):
        if not isinstance(experimental_op_resolver_type, OpResolverType):
            raise ValueError("Unrecognized passed in op resolver type: {}".format(
                experimental_op_resolver_type))
        if num_threads is not None:
            if not isinstance(num_threads, int):
                raise ValueError("type of num_threads should be int")
            if num_threads < 1:
                raise ValueError("num_threads should >= 1")
        max_memory_bytes = 0
        if experimental_max_memory_mb is not None:
            if isinstance(experimental_max_memory_mb, bool) or \
                    not isinstance(experimental_max_memory_mb, (int, float)) or experimental_max_memory_mb <= 0:
                raise ValueError("experimental_max_memory_mb should be a number > 0, got {!r}".format(
                    experimental_max_memory_mb))
            max_memory_bytes = max(1, int(experimental_max_memory_mb * 1024 * 1024))
        if experimental_preserve_all_tensors:
            warnings.warn("experimental_preserve_all_tensors is accepted, but delegato's arena still "
                          "reuses intermediate tensors' memory: use `delegato diff --per_layer` (or "
                          "delegato.diff(..., per_layer=True)) to inspect every layer")
        if model_path and not model_content:
            path = os.fspath(model_path)
            if not os.path.isfile(path):
                raise ValueError("Could not open '{}'.The model allocation is null/empty".format(path))
            model = _core.load_model(path)
        elif model_content and not model_path:
            if not isinstance(model_content, bytes):
                raise TypeError("model_content must be bytes, got {}".format(type(model_content).__name__))
            self._model_content = model_content
            model = _core.load_model_bytes(model_content)
        elif not model_content and not model_path:
            raise ValueError("`model_path` or `model_content` must be specified.")
        else:
            raise ValueError("Can't both provide `model_path` and `model_content`")

        delegates = list(experimental_delegates or [])
        for delegate in delegates:
            if not isinstance(delegate, Delegate):
                raise ValueError("experimental_delegates holds {!r}, not a Delegate from "
                                 "load_delegate()".format(delegate))
        self._delegates = delegates
        self._warned = set()
        reference = experimental_op_resolver_type == OpResolverType.BUILTIN_REF
        self._interpreter = _core.Interpreter(model, reference, int(num_threads or 1), target or "",
                                              [d._plugin for d in delegates], max_memory_bytes)
        self._signature_defs = self.get_signature_list()

    def __del__(self):
        # The interpreter goes before the delegates it may use.
        self._interpreter = None
        self._delegates = None

    # Views from tensor() hold a reference to the wrapper (their numpy base):
    # with any alive, memory must not move.
    def _safe_to_run(self):
        return sys.getrefcount(self._interpreter) == 2

    def _ensure_safe(self):
        if not self._safe_to_run():
            raise RuntimeError("""There is at least 1 reference to internal data
      in the interpreter in the form of a numpy array or slice. Be sure to
      only hold the function returned from tensor() if you are using raw
      data access.""")

    def allocate_tensors(self):
        self._ensure_safe()
        try:
            return self._interpreter.allocate_tensors()
        finally:
            # A plugin whose Prepare failed leaves the model on the CPU: say so, once.
            messages = list(self._interpreter.warnings())
            messages += [d._plugin.prepare_error for d in self._delegates if d._plugin.prepare_error]
            for message in messages:
                if message not in self._warned:
                    warnings.warn(message, RuntimeWarning, stacklevel=2)
                    self._warned.add(message)

    def invoke(self):
        """Runs the model (the GIL is released meanwhile)."""
        self._ensure_safe()
        self._interpreter.invoke()

    def _get_tensor_details(self, tensor_index, subgraph_index=0):
        tensor_index = int(tensor_index)
        name, shape, type_name, scales, zero_points, qdim, signature = \
            self._interpreter.tensor_info(tensor_index)
        dtype = _NUMPY_TYPES.get(type_name)
        if dtype is None:
            raise ValueError("Could not get tensor details")
        per_tensor = len(scales) == 1 and len(zero_points) == 1
        return {
            "name": name,
            "index": tensor_index,
            "shape": np.array(shape, dtype=np.int32),
            "shape_signature": np.array(signature, dtype=np.int32),
            "dtype": dtype,
            "quantization": (float(scales[0]), int(zero_points[0])) if per_tensor else (0.0, 0),
            "quantization_parameters": {
                "scales": np.array(scales, dtype=np.float32),
                "zero_points": np.array(zero_points, dtype=np.int32),
                "quantized_dimension": int(qdim),
                "block_size": 0,
            },
            "sparsity_parameters": {},
        }

    def _check_subgraph(self, subgraph_index):
        if subgraph_index != 0:
            raise ValueError("subgraph_index is out of range: {} for the model, which has 1 "
                             "subgraphs.".format(subgraph_index))

    def get_tensor_details(self, subgraph_index=0):
        self._check_subgraph(subgraph_index)
        details = []
        for index in range(self._interpreter.num_tensors()):
            try:
                details.append(self._get_tensor_details(index))
            except ValueError:
                pass
        return details

    def get_input_details(self):
        return [self._get_tensor_details(i) for i in self._interpreter.inputs()]

    def get_output_details(self):
        return [self._get_tensor_details(i) for i in self._interpreter.outputs()]

    def _get_ops_details(self):
        return self._interpreter.ops_details()

    def set_tensor(self, tensor_index, value):
        """Copies ``value`` into the tensor (no dtype conversion, like LiteRT)."""
        self._interpreter.set_tensor(tensor_index, value)

    def get_tensor(self, tensor_index, subgraph_index=0):
        """A copy of the tensor's current value."""
        self._check_subgraph(subgraph_index)
        return self._interpreter.get_tensor(tensor_index)

    def tensor(self, tensor_index):
        """A function returning a zero-copy numpy view of the tensor.

        Do not keep the view across invoke(), allocate_tensors() or
        resize_tensor_input(): those raise RuntimeError while one is alive.
        """
        return lambda: self._interpreter.tensor(tensor_index)

    def resize_tensor_input(self, input_index, tensor_size, strict=False):
        """Changes an input's shape; allocate_tensors() must follow."""
        self._ensure_safe()
        shape = np.array(tensor_size, dtype=np.int32)
        self._interpreter.resize_input(int(input_index), [int(d) for d in shape.reshape(-1)], bool(strict))

    def get_signature_list(self):
        return {key: {"inputs": sorted(name for name, _ in inputs),
                      "outputs": sorted(name for name, _ in outputs)}
                for key, inputs, outputs in self._interpreter.signature_defs()}

    def _get_full_signature_list(self):
        return {key: {"inputs": dict(inputs), "outputs": dict(outputs)}
                for key, inputs, outputs in self._interpreter.signature_defs()}

    def get_signature_runner(self, signature_key=None):
        if signature_key is None:
            if len(self._signature_defs) != 1:
                raise ValueError(
                    "SignatureDef signature_key is None and model has {0} Signatures. None is only "
                    "allowed when the model has 1 SignatureDef".format(len(self._signature_defs)))
            signature_key = next(iter(self._signature_defs))
        return SignatureRunner(interpreter=self, signature_key=signature_key)

    def reset_all_variables(self):
        self._interpreter.reset_variables()

    def num_subgraphs(self):
        return 1

    def delegation_log(self):
        """delegato: one line per delegate applied ("N nodes delegated out of M ...")."""
        return self._interpreter.delegation_log()


class InterpreterWithCustomOps(Interpreter):
    """LiteRT's name for an interpreter with custom op registerers: delegato
    registers no custom ops from Python, so any registerer is refused."""

    def __init__(self, custom_op_registerers=None, **kwargs):
        if custom_op_registerers:
            raise NotImplementedError("delegato does not load custom op registerers")
        super().__init__(**kwargs)
