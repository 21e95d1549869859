"""TFLite external delegate plugins hosted from Python: load_delegate +
experimental_delegates load the library, create the delegate with the
options as strings and apply it, as LiteRT does; outputs match LiteRT with
the same plugin and the CPU run."""
import os
import pathlib
import shutil
import subprocess

import numpy as np
import pytest

ai_edge_litert = pytest.importorskip("ai_edge_litert.interpreter")
pytest.importorskip("delegato._core", reason="delegato._core not built (cmake -DDELEGATO_PYTHON=ON, target _core) nor installed")
from delegato import interpreter as dlg  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[2]
MODELS_DIR = REPO.parent / "shared" / "models"
# LiteRT's Delegate.__del__ complains about delegates it failed to create.
pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


def model(name):
    path = MODELS_DIR / name
    if not path.exists():
        pytest.skip(f"{path} not found")
    return str(path)


@pytest.fixture(scope="module")
def plugin_path():
    path = pathlib.Path(os.environ.get("DELEGATO_PLUGIN", REPO / "build" / "libdelegato_delegate.so"))
    if not path.exists():
        pytest.skip(f"plugin not found at {path} (build target delegato_delegate or set DELEGATO_PLUGIN)")
    return str(path)


def compile_plugin(out_dir, source_text=None, source=None):
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler")
    if source is None:
        source = out_dir / "plugin.c"
        source.write_text(source_text)
    library = out_dir / ("lib" + pathlib.Path(source).stem + ".so")
    subprocess.run([compiler, "-std=c11", "-shared", "-fPIC", "-O1", "-o", str(library), str(source), "-lm"],
                   check=True)
    return str(library)


@pytest.fixture(scope="module")
def naive_plugin(tmp_path_factory):
    return compile_plugin(tmp_path_factory.mktemp("naive"), source=REPO / "tests" / "abi" / "naive_add_plugin.c")


def run(module, graph, delegates=(), seed=1, **kw):
    interpreter = module.Interpreter(model_path=graph, experimental_op_resolver_type=module.OpResolverType.BUILTIN_REF,
                                     experimental_delegates=list(delegates), **kw)
    interpreter.allocate_tensors()
    rng = np.random.default_rng(seed)
    for detail in interpreter.get_input_details():
        dtype = detail["dtype"]
        if np.issubdtype(dtype, np.integer):
            info = np.iinfo(dtype)
            value = rng.integers(info.min, info.max, size=detail["shape"], dtype=dtype, endpoint=True)
        else:
            value = rng.uniform(-1, 1, size=detail["shape"]).astype(dtype)
        interpreter.set_tensor(detail["index"], value)
    interpreter.invoke()
    return [interpreter.get_tensor(d["index"]) for d in interpreter.get_output_details()], interpreter


@pytest.mark.parametrize("name", ["mobilenet_v1_0.25_128_quant.tflite", "keras_lstm_mnist_ptq.tflite"])
def test_delegatos_plugin_from_python_matches_litert_and_cpu(plugin_path, name):
    graph = model(name)
    options = {"target": "imx8mp-vx"}
    cpu, _ = run(dlg, graph)
    ours, interpreter = run(dlg, graph, [dlg.load_delegate(plugin_path, options)])
    theirs, _ = run(ai_edge_litert, graph, [ai_edge_litert.load_delegate(plugin_path, options)])
    assert any(line.startswith("libdelegato_delegate delegate:") for line in interpreter.delegation_log()), \
        interpreter.delegation_log()
    assert "libdelegato_delegate" in {op["op_name"] for op in interpreter._get_ops_details()}
    for a, b, c in zip(ours, theirs, cpu):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)


def test_third_party_plugin_from_python(naive_plugin):
    graph = model("mobilenet_v2_1.0_224_quant.tflite")
    cpu, _ = run(dlg, graph)
    ours, interpreter = run(dlg, graph, [dlg.load_delegate(naive_plugin)])
    theirs, _ = run(ai_edge_litert, graph, [ai_edge_litert.load_delegate(naive_plugin)])
    assert any(line.startswith("libnaive_add_plugin delegate: 10 nodes delegated")
               for line in interpreter.delegation_log()), interpreter.delegation_log()
    for a, b, c in zip(ours, theirs, cpu):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)


def test_plugin_prepare_failure_warns_and_stays_on_cpu(naive_plugin):
    graph = model("mobilenet_v2_1.0_224_quant.tflite")
    cpu, _ = run(dlg, graph)
    with pytest.warns(RuntimeWarning, match="prepare refused"):
        ours, _ = run(dlg, graph, [dlg.load_delegate(naive_plugin, {"fail": "prepare"})])
    for a, c in zip(ours, cpu):
        np.testing.assert_array_equal(a, c)


def test_plugin_invoke_failure_is_runtime_error(naive_plugin):
    graph = model("mobilenet_v2_1.0_224_quant.tflite")
    with pytest.raises(RuntimeError, match="invoke refused"):
        run(dlg, graph, [dlg.load_delegate(naive_plugin, {"fail": "invoke"})])


def outcome(call):
    try:
        call()
    except Exception as e:  # noqa: BLE001  (type and message are compared)
        return type(e), str(e)
    return None, ""


@pytest.mark.parametrize("options", [{"target": "no-such-npu"}, {"colour": "blue"}, {"num_threads": "many"}])
def test_bad_options_are_value_errors_like_litert(plugin_path, options):
    ours = outcome(lambda: dlg.load_delegate(plugin_path, options))
    theirs = outcome(lambda: ai_edge_litert.load_delegate(plugin_path, options))
    assert ours[0] is theirs[0] is ValueError, (ours, theirs)
    assert ours[1] == theirs[1]
    assert ours[1].startswith(f"Failed to load delegate from {plugin_path}\n") and len(ours[1].splitlines()) > 1


def test_option_values_are_str_converted(plugin_path):
    graph = model("mobilenet_v1_0.25_128_quant.tflite")
    cpu, _ = run(dlg, graph)
    ours, _ = run(dlg, graph, [dlg.load_delegate(plugin_path, {"target": "cpu", "num_threads": 2})])
    for a, c in zip(ours, cpu):
        np.testing.assert_array_equal(a, c)


def test_create_returning_null_without_message(tmp_path):
    library = compile_plugin(tmp_path, "void* tflite_plugin_create_delegate(void) { return 0; }\n"
                                       "void tflite_plugin_destroy_delegate(void* d) { (void)d; }\n")
    ours = outcome(lambda: dlg.load_delegate(library, {"backends": "VsiNpu"}))
    theirs = outcome(lambda: ai_edge_litert.load_delegate(library, {"backends": "VsiNpu"}))
    assert ours == theirs and ours[0] is ValueError


@pytest.mark.parametrize("library", ["/nonexistent/libvx_delegate.so", "libm.so.6"])
def test_library_errors_like_litert(library):
    ours = outcome(lambda: dlg.load_delegate(library))
    theirs = outcome(lambda: ai_edge_litert.load_delegate(library))
    assert ours[0] is theirs[0] and ours[0] in (OSError, AttributeError)
    assert ours[1] == theirs[1]


def test_max_memory_budget():
    graph = model("mobilenet_v1_0.25_128_quant.tflite")
    cpu, _ = run(dlg, graph)
    roomy, _ = run(dlg, graph, experimental_max_memory_mb=512)
    for a, c in zip(roomy, cpu):
        np.testing.assert_array_equal(a, c)
    with pytest.raises(RuntimeError):
        run(dlg, graph, experimental_max_memory_mb=0.01)
    with pytest.raises(ValueError):
        dlg.Interpreter(model_path=graph, experimental_max_memory_mb=-1)
