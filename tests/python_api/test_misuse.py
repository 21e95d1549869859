"""Misuse raises the exception type LiteRT raises (never a crash): each case
runs against ai_edge_litert and delegato.interpreter."""
import pathlib

import numpy as np
import pytest

ai_edge_litert = pytest.importorskip("ai_edge_litert.interpreter")
pytest.importorskip("delegato._core", reason="delegato._core not built (cmake -DDELEGATO_PYTHON=ON, target _core) nor installed")
from delegato import interpreter as dlg  # noqa: E402

MODELS_DIR = pathlib.Path(__file__).resolve().parents[3] / "shared" / "models"
FLOAT = MODELS_DIR / "hello_world_float.tflite"    # input [-1, 1] float32, one signature
# LiteRT's Delegate.__del__ complains about delegates it failed to create.
pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")

CUSTOM = MODELS_DIR / "model_invoking_error.tflite"  # a custom op neither runtime has


def new(m, path=FLOAT, **kw):
    return m.Interpreter(model_path=str(path), **kw)


def allocated(m, path=FLOAT):
    interp = new(m, path)
    interp.allocate_tensors()
    return interp


def input_index(interp):
    return interp.get_input_details()[0]["index"]


def view_then(action):
    def case(m):
        interp = allocated(m)
        view = interp.tensor(input_index(interp))()  # noqa: F841  (kept alive on purpose)
        action(interp)
    return case


CASES = {
    "no model": lambda m: m.Interpreter(),
    "path and content": lambda m: m.Interpreter(model_path=str(FLOAT), model_content=FLOAT.read_bytes()),
    "missing file": lambda m: m.Interpreter(model_path="/nonexistent/model.tflite"),
    "garbage bytes": lambda m: m.Interpreter(model_content=b"this is not a flatbuffer" * 10),
    "truncated model": lambda m: m.Interpreter(model_content=FLOAT.read_bytes()[:200]),
    "num_threads=0": lambda m: new(m, num_threads=0),
    "num_threads=1.5": lambda m: new(m, num_threads=1.5),
    "unknown op resolver": lambda m: new(m, experimental_op_resolver_type="fast"),
    "invoke before allocate": lambda m: new(m).invoke(),
    "get_tensor before allocate": lambda m: (lambda i: i.get_tensor(i.get_output_details()[0]["index"]))(new(m)),
    "set_tensor wrong dtype": lambda m: (lambda i: i.set_tensor(input_index(i), np.zeros((1, 1), np.float64)))(allocated(m)),
    "set_tensor python list": lambda m: (lambda i: i.set_tensor(input_index(i), [[1.0]]))(allocated(m)),
    "set_tensor wrong dims": lambda m: (lambda i: i.set_tensor(input_index(i), np.zeros((2, 1), np.float32)))(allocated(m)),
    "set_tensor wrong rank": lambda m: (lambda i: i.set_tensor(input_index(i), np.float32(1)))(allocated(m)),
    "set_tensor index 999": lambda m: allocated(m).set_tensor(999, np.zeros((1, 1), np.float32)),
    "set_tensor index -1": lambda m: allocated(m).set_tensor(-1, np.zeros((1, 1), np.float32)),
    "get_tensor index 999": lambda m: allocated(m).get_tensor(999),
    "get_tensor subgraph 3": lambda m: allocated(m).get_tensor(0, 3),
    "get_tensor_details subgraph 5": lambda m: allocated(m).get_tensor_details(5),
    "invoke with a live view": view_then(lambda i: i.invoke()),
    "allocate with a live view": view_then(lambda i: i.allocate_tensors()),
    "resize with a live view": view_then(lambda i: i.resize_tensor_input(input_index(i), [2, 1])),
    "strict resize of a fixed dim": lambda m: (lambda i: i.resize_tensor_input(input_index(i), [1, 4], strict=True))(new(m)),
    "invoke after resize, no allocate": lambda m: (lambda i: (i.resize_tensor_input(input_index(i), [2, 1]), i.invoke()))(allocated(m)),
    "signature runner unknown key": lambda m: new(m).get_signature_runner("nope"),
    "signature runner missing input": lambda m: new(m).get_signature_runner()(),
    "signature runner unknown input": lambda m: new(m).get_signature_runner()(z=np.zeros((1, 1), np.float32)),
    "signature runner list value": lambda m: new(m).get_signature_runner()(dense_input=[[1.0]]),
    "load_delegate missing library": lambda m: m.load_delegate("/nonexistent/libvx_delegate.so"),
    "load_delegate not a delegate": lambda m: m.load_delegate("libm.so.6"),
    "unsupported custom op at allocate": lambda m: new(m, CUSTOM).allocate_tensors(),
    "unsupported custom op invoke": lambda m: new(m, CUSTOM).invoke(),
}


def outcome(module, case):
    try:
        case(module)
    except Exception as e:  # noqa: BLE001  (the type is what is compared)
        return type(e), str(e)
    return None, ""


@pytest.mark.parametrize("name", list(CASES))
def test_same_exception_as_litert(name):
    if not FLOAT.exists() or not CUSTOM.exists():
        pytest.skip("shared models missing")
    theirs, their_message = outcome(ai_edge_litert, CASES[name])
    ours, our_message = outcome(dlg, CASES[name])
    assert ours is theirs, (f"{name}: delegato raises {ours and ours.__name__} ({our_message}), "
                            f"LiteRT {theirs and theirs.__name__} ({their_message})")
    if theirs is not None:
        assert our_message.strip(), f"{name}: empty message"


def test_table_is_large_enough():
    assert len(CASES) >= 20


def test_set_tensor_messages_name_tensor_and_both_types_and_shapes():
    interp = allocated(dlg)
    index = input_index(interp)
    name = interp.get_input_details()[0]["name"]
    with pytest.raises(ValueError) as e:
        interp.set_tensor(index, np.zeros((1, 1), np.float64))
    assert "FLOAT64" in str(e.value) and "FLOAT32" in str(e.value) and name in str(e.value)
    with pytest.raises(ValueError) as e:
        interp.set_tensor(index, np.zeros((2, 1), np.float32))
    assert name in str(e.value) and "[2, 1]" in str(e.value) and "[1, 1]" in str(e.value)
