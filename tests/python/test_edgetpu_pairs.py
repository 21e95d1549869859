"""The edgetpu target against the real edgetpu_compiler: each shared compiled
pair (../shared/models/<name>.tflite and edgetpu/<name>_edgetpu.tflite) must
agree with `delegato plan --target edgetpu`: the CPU op multiset equals the ops
the compiler left outside `edgetpu-custom-op`, and the TPU node count equals the
number of custom ops. scripts/edgetpu_compare.py does the comparison."""
import importlib.util
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("edgetpu_compare", REPO / "scripts" / "edgetpu_compare.py")
edgetpu_compare = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(edgetpu_compare)

PAIRS = [
    "deeplabv3_mnv2_dm05_pascal_quant",   # cut at RESIZE_BILINEAR 1x1 -> 33x33 (node 64)
    "keras_lstm_mnist_ptq",               # int8 LSTM with its int16 cell state mapped
    "mobilenet_v1_0.25_128_quant",        # fully mapped
    "movenet_single_pose_lightning_ptq",  # leading CPU ops, then a data-flow cut at ARG_MAX
]


@pytest.mark.parametrize("name", PAIRS)
def test_pair_agrees_with_compiler(delegato_bin, shared_models, name):
    source = shared_models / f"{name}.tflite"
    compiled = shared_models / "edgetpu" / f"{name}_edgetpu.tflite"
    if not compiled.exists():
        pytest.skip(f"compiled pair not found at {compiled}")
    result = edgetpu_compare.compare(delegato_bin, source, compiled)
    assert result["plan_tpu_nodes"] == result["compiler_tpu_nodes"], result
    assert result["cpu_only_in_plan"] == {} and result["cpu_only_in_compiler"] == {}, result
    assert result["agree"]


def test_every_shared_pair_is_covered(shared_models):
    found = {src.stem for src, _ in edgetpu_compare.pairs(shared_models.parent)}
    if not found:
        pytest.skip("no compiled pairs under ../shared/models/edgetpu")
    assert found <= set(PAIRS), f"new compiled pairs without a test: {found - set(PAIRS)}"


def test_deeplab_cut_names_the_resize(delegato_bin, shared_models):
    # The compiler's first CPU op in the DeepLab pair is RESIZE_BILINEAR 1x1 -> 33x33.
    plan = edgetpu_compare.plan(delegato_bin, shared_models / "deeplabv3_mnv2_dm05_pascal_quant.tflite")
    node = plan["nodes"][64]
    assert node["op"] == "RESIZE_BILINEAR" and node["placement"] == "cpu"
    assert node["reasons"][0]["code"] == "unsupported_shape"
    assert "precision" in node["reasons"][0]["message"]
    assert all(n["placement"] == "delegate" for n in plan["nodes"][:64])
