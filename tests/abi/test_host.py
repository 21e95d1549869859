"""delegato as the host of TFLite external delegate plugins: its own plugin,
and a third-party-style plugin written in C against the structs only."""
import shutil
import subprocess

import numpy as np
import pytest

from conftest import REPO, shared_dir


def model(name):
    path = shared_dir() / "models" / name
    if not path.exists():
        pytest.skip(f"{path} not found")
    return str(path)


@pytest.fixture(scope="session")
def naive_plugin(tmp_path_factory):
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler")
    out = tmp_path_factory.mktemp("naive") / "libnaive_add.so"
    subprocess.run([compiler, "-std=c11", "-shared", "-fPIC", "-O1", "-Wall", "-Werror", "-o", str(out),
                    str(REPO / "tests" / "abi" / "naive_add_plugin.c"), "-lm"], check=True)
    return str(out)


def run(delegato_bin, graph, out_dir, *extra):
    result = subprocess.run([delegato_bin, "run", "--graph", graph, "--output_dir", str(out_dir), *extra],
                            capture_output=True, text=True, timeout=300)
    return result


def outputs(out_dir):
    return sorted(p.read_bytes() for p in out_dir.glob("output_*.npy"))


@pytest.mark.parametrize("target", ["cpu", "imx8mp-vx"])
@pytest.mark.parametrize("name", ["mobilenet_v1_0.25_128_quant.tflite", "keras_lstm_mnist_ptq.tflite",
                                  "mobilenet_v2_quantized_1x3x224x224.tflite"])
def test_delegato_hosts_its_own_plugin(delegato_bin, plugin_path, tmp_path, name, target):
    graph = model(name)
    alone = run(delegato_bin, graph, tmp_path / "alone")
    assert alone.returncode == 0, alone.stderr
    hosted = run(delegato_bin, graph, tmp_path / "hosted", "--external_delegate_path", plugin_path,
                 "--external_delegate_options", f"target:{target};kernels:reference")
    assert hosted.returncode == 0, hosted.stderr
    assert "libdelegato_delegate delegate:" in hosted.stderr
    assert "WARNING" not in hosted.stderr, hosted.stderr
    assert outputs(tmp_path / "hosted") == outputs(tmp_path / "alone")


def test_third_party_plugin_runs_in_delegato(delegato_bin, naive_plugin, tmp_path):
    graph = model("mobilenet_v2_quantized_1x3x224x224.tflite")
    alone = run(delegato_bin, graph, tmp_path / "alone")
    hosted = run(delegato_bin, graph, tmp_path / "hosted", "--external_delegate_path", naive_plugin)
    assert hosted.returncode == 0, hosted.stderr
    # Every ADD is its own partition: the convolutions between them stay on delegato's CPU.
    assert "libnaive_add delegate: 10 nodes delegated out of 84 nodes with 10 partitions." in hosted.stderr
    assert outputs(tmp_path / "hosted") == outputs(tmp_path / "alone")


def test_third_party_plugin_in_litert_agrees(naive_plugin):
    from ai_edge_litert.interpreter import Interpreter, OpResolverType, load_delegate
    graph = model("mobilenet_v2_1.0_224_quant.tflite")
    results = []
    for delegates in ([], [load_delegate(naive_plugin)]):
        interpreter = Interpreter(model_path=graph, experimental_op_resolver_type=OpResolverType.BUILTIN_REF,
                                  experimental_delegates=delegates)
        interpreter.allocate_tensors()
        detail = interpreter.get_input_details()[0]
        interpreter.set_tensor(detail["index"], np.random.default_rng(1).integers(0, 255, size=detail["shape"],
                                                                                   dtype=np.uint8))
        interpreter.invoke()
        results.append(interpreter.get_tensor(interpreter.get_output_details()[0]["index"]))
    np.testing.assert_array_equal(results[1], results[0])


def test_plugin_prepare_failure_falls_back_with_a_warning(delegato_bin, naive_plugin, tmp_path):
    graph = model("mobilenet_v2_quantized_1x3x224x224.tflite")
    alone = run(delegato_bin, graph, tmp_path / "alone")
    for step, phrase in [("prepare", "Prepare (TfLiteDelegate::Prepare)"), ("init", "kernel init")]:
        hosted = run(delegato_bin, graph, tmp_path / step, "--external_delegate_path", naive_plugin,
                     "--external_delegate_options", f"fail:{step}")
        assert hosted.returncode == 0, hosted.stderr
        assert "WARNING" in hosted.stderr and "libnaive_add" in hosted.stderr and phrase in hosted.stderr
        assert f"refused (fail={step})" in hosted.stderr
        assert outputs(tmp_path / step) == outputs(tmp_path / "alone")


def test_plugin_invoke_failure_is_an_error(delegato_bin, naive_plugin, tmp_path):
    hosted = run(delegato_bin, model("mobilenet_v2_quantized_1x3x224x224.tflite"), tmp_path,
                 "--external_delegate_path", naive_plugin, "--external_delegate_options", "fail:invoke")
    assert hosted.returncode != 0
    assert "kernel invoke failed: naive_add: invoke refused (fail=invoke)" in hosted.stderr


def test_load_errors_are_clear(delegato_bin, plugin_path, naive_plugin, tmp_path):
    graph = model("hello_world_int8.tflite")
    missing = run(delegato_bin, graph, tmp_path, "--external_delegate_path", str(tmp_path / "nope.so"))
    assert missing.returncode != 0 and "cannot open shared object file" in missing.stderr
    not_plugin = run(delegato_bin, graph, tmp_path, "--external_delegate_path", "libm.so.6")
    assert not_plugin.returncode != 0 and "does not export tflite_plugin_create_delegate" in not_plugin.stderr
    refused = run(delegato_bin, graph, tmp_path, "--external_delegate_path", plugin_path,
                  "--external_delegate_options", "target:no-such-npu")
    assert refused.returncode != 0 and "option target" in refused.stderr
    malformed = run(delegato_bin, graph, tmp_path, "--external_delegate_path", naive_plugin,
                    "--external_delegate_options", "fail")
    assert malformed.returncode != 0 and "is not key:value" in malformed.stderr


def test_bench_and_diff_take_the_flags(delegato_bin, plugin_path):
    graph = model("mobilenet_v1_0.25_128_quant.tflite")
    flags = ["--external_delegate_path", plugin_path, "--external_delegate_options", "target:cpu"]
    bench = subprocess.run([delegato_bin, "bench", "--graph", graph, "--num_runs", "2", "--warmup_runs", "1", *flags],
                           capture_output=True, text=True, timeout=300)
    assert bench.returncode == 0, bench.stderr
    assert "libdelegato_delegate delegate: 31 nodes delegated out of 31 nodes" in bench.stdout + bench.stderr
    diff = subprocess.run([delegato_bin, "diff", "--graph", graph, *flags], capture_output=True, text=True, timeout=300)
    assert diff.returncode == 0, diff.stderr
    assert "differing=0/" in diff.stdout + diff.stderr


def test_plan_shows_a_plugins_partitions(delegato_bin, plugin_path, naive_plugin):
    import json
    graph = model("mobilenet_v2_quantized_1x3x224x224.tflite")

    def plan(*flags):
        out = subprocess.run([delegato_bin, "plan", "--graph", graph, "--format", "json", *flags],
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)
    naive = plan("--external_delegate_path", naive_plugin)
    assert naive["delegate_kernels"] == naive["nodes_delegated"] == 10
    assert {n["op"] for n in naive["nodes"] if n["placement"] == "delegate"} == {"ADD"}
    # delegato's own plugin, hosted, places nodes as plan --target does.
    hosted = plan("--external_delegate_path", plugin_path, "--external_delegate_options", "target:imx8mp-vx")
    direct = plan("--target", "imx8mp-vx")
    assert [n["placement"] for n in hosted["nodes"]] == [n["placement"] for n in direct["nodes"]]
    assert hosted["delegate_kernels"] == direct["delegate_kernels"]
