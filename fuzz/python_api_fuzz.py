"""atheris fuzz target: the Python API's arguments (delegato.interpreter).

Each input is a short program of calls on an Interpreter of the demo model
(or one made from fuzzed bytes): set_tensor with arrays of fuzzed dtype and
shape, get_tensor, tensor(), resize_tensor_input, allocate_tensors, invoke,
signature runners, reset_all_variables, constructor arguments and
load_delegate options. Misuse must raise one of the exceptions LiteRT raises
for it; anything else (another exception type, a crash, a sanitizer report)
is a finding.

  python3 fuzz/python_api_fuzz.py [atheris/libFuzzer flags] [corpus dirs]

The extension comes from build/python (as in tests/python_api) unless
DELEGATO_EXTENSION_DIR or an installed package says otherwise; the delegate
plugin from DELEGATO_PLUGIN (default build/libdelegato_delegate.so).
"""
import atexit
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import atheris

REPO = pathlib.Path(__file__).resolve().parents[1]
_ext = pathlib.Path(os.environ.get("DELEGATO_EXTENSION_DIR", REPO / "build" / "python" / "delegato"))
if any(_ext.glob("_core*.so")):
    os.environ["DELEGATO_EXTENSION_DIR"] = str(_ext)
    sys.path.insert(0, str(REPO / "python"))

with atheris.instrument_imports():
    import numpy as np
    import delegato.interpreter as tflite

# What LiteRT raises for misuse of these calls.
EXPECTED = (ValueError, TypeError, RuntimeError, IndexError, KeyError, OSError, AttributeError,
            OverflowError)
DTYPES = [np.uint8, np.int8, np.int16, np.int32, np.int64, np.float32, np.float16, np.float64,
          np.bool_, np.complex64, object]
SCRATCH = pathlib.Path(tempfile.mkdtemp(prefix="python_api_fuzz_"))
atexit.register(shutil.rmtree, SCRATCH, True)
PLUGIN = os.environ.get("DELEGATO_PLUGIN", str(REPO / "build" / "libdelegato_delegate.so"))
DELEGATO_BIN = os.environ.get("DELEGATO_BIN", str(REPO / "build" / "delegato"))

subprocess.run([DELEGATO_BIN, "generate", "-o", str(SCRATCH / "demo.tflite")], check=True,
               stdout=subprocess.DEVNULL)
DEMO = (SCRATCH / "demo.tflite").read_bytes()


def fuzzed_array(fdp):
    dtype = fdp.PickValueInList(DTYPES)
    rank = fdp.ConsumeIntInRange(0, 5)
    shape = [fdp.ConsumeIntInRange(0, 40) for _ in range(rank)]
    count = int(np.prod(shape)) if shape else 1
    if count > 1 << 16:
        shape, count = [count % 97], count % 97
    if dtype is object:
        return np.array([None] * count, dtype=object).reshape(shape)
    raw = fdp.ConsumeBytes(count * np.dtype(dtype).itemsize)
    raw = raw.ljust(count * np.dtype(dtype).itemsize, b"\0")
    return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()


def fuzzed_index(fdp):
    return fdp.PickValueInList([0, 17, -1, 18, 1 << 31, fdp.ConsumeIntInRange(-3, 40), 1.5, "0", None])


def fuzzed_options(fdp):
    options = {}
    for _ in range(fdp.ConsumeIntInRange(0, 4)):
        key = fdp.PickValueInList(["target", "kernels", "num_threads", "never_delegate", "log",
                                   "report", "cache_dir", fdp.ConsumeUnicodeNoSurrogates(8)])
        value = fdp.PickValueInList([fdp.ConsumeUnicodeNoSurrogates(12), "cpu", "imx8mp-vx",
                                     "reference", "2", "0-3", "", fdp.ConsumeIntInRange(-5, 5)])
        # Files the plugin writes stay in the scratch directory.
        if key == "report" and value:
            value = str(SCRATCH / "report.json")
        if key == "cache_dir" and value:
            value = str(SCRATCH)
        options[key] = value
    return options


def make_interpreter(fdp):
    choice = fdp.ConsumeIntInRange(0, 5)
    threads = fdp.PickValueInList([None, 1, 2, 0, -1, -2, 1 << 40, "2", 1.0])
    if choice == 0:
        return tflite.Interpreter(model_content=fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 256)))
    if choice == 1:
        path = fdp.PickValueInList([str(SCRATCH / "demo.tflite"), str(SCRATCH), "", "/nonexistent.tflite"])
        return tflite.Interpreter(model_path=path, num_threads=threads)
    if choice == 2:
        delegate = tflite.load_delegate(
            fdp.PickValueInList([PLUGIN, "/nonexistent/lib.so", str(SCRATCH / "demo.tflite")]),
            fuzzed_options(fdp))
        return tflite.Interpreter(model_content=DEMO, experimental_delegates=[delegate])
    if choice == 3:
        resolver = fdp.PickValueInList(list(tflite.OpResolverType) + [7, "BUILTIN", None])
        return tflite.Interpreter(model_content=DEMO, experimental_op_resolver_type=resolver,
                                  experimental_preserve_all_tensors=fdp.ConsumeBool())
    return tflite.Interpreter(model_content=DEMO, num_threads=threads)


def one_call(fdp, interpreter, views):
    op = fdp.ConsumeIntInRange(0, 10)
    if op == 0:
        interpreter.allocate_tensors()
    elif op == 1:
        interpreter.invoke()
    elif op == 2:
        interpreter.set_tensor(fuzzed_index(fdp), fuzzed_array(fdp))
    elif op == 3:
        interpreter.get_tensor(fuzzed_index(fdp))
    elif op == 4:
        views.append(interpreter.tensor(fuzzed_index(fdp)))
    elif op == 5:
        if views:
            view = views[-1]()
            if view.size:
                view.flat[0] = 1
    elif op == 6:
        shape = [fdp.ConsumeIntInRange(-2, 64) for _ in range(fdp.ConsumeIntInRange(0, 5))]
        interpreter.resize_tensor_input(fuzzed_index(fdp), shape, strict=fdp.ConsumeBool())
    elif op == 7:
        runner = interpreter.get_signature_runner(fdp.PickValueInList([None, "serving_default", ""]))
        runner(**{fdp.PickValueInList(["input", "x", ""]): fuzzed_array(fdp)})
    elif op == 8:
        interpreter.reset_all_variables()
    elif op == 9:
        interpreter.get_tensor_details(fdp.PickValueInList([0, 1, -1]))
    else:
        interpreter.get_input_details()
        interpreter.get_output_details()
        interpreter.get_signature_list()


def TestOneInput(data):
    fdp = atheris.FuzzedDataProvider(data)
    try:
        interpreter = make_interpreter(fdp)
    except EXPECTED:
        return
    views = []
    for _ in range(fdp.ConsumeIntInRange(1, 12)):
        try:
            one_call(fdp, interpreter, views)
        except EXPECTED:
            pass


if __name__ == "__main__":
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()
