"""The Ethos-U targets against Vela (ethos-u-vela from PyPI) as an oracle:
scripts/vela_compare.py compiles a model with Vela and compares the nodes it
leaves on the CPU with `delegato plan --target ethos-u55|u65|u85`. Skips when
Vela is not installed. Vela takes 1-5 s per small model and 10-20 s for DeepLab
(measured with Vela 5.2.0), so CI runs a sample; DELEGATO_VELA_ALL=1 runs every
shared model at every configuration."""
import importlib.util
import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("vela_compare", REPO / "scripts" / "vela_compare.py")
vela_compare = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(vela_compare)

# Each covers a modelled Vela behaviour (cited in targets/ethos-u55.json).
SAMPLE = [
    "hello_world_int8",                    # fully mapped
    "keyword_scrambled",                   # SVDF on the CPU, int8 -> int16 SOFTMAX on the NPU, int32 QUANTIZE on the CPU
    "keras_lstm_mnist_ptq",                # integer LSTM unrolled onto the NPU
    "mobilenet_v2_quantized_1x3x224x224",  # TRANSPOSE on the NPU
    "movenet_single_pose_lightning_ptq",   # ARG_MAX off the depth axis, int32 RESHAPE/MUL/SUB, float ops
]
ALL = os.environ.get("DELEGATO_VELA_ALL") == "1"

# Where ethos-u85 still differs from Vela: node indices per model, as the
# target's known_differences list them (plan prints them). MoveNet covers the
# U85's relaxations (ARG_MAX on any axis, int32 PACK/CONCATENATION).
U85_KNOWN = {
    "keyword_scrambled": {"plan_only": set(), "vela_only": {0, 13}},
}


@pytest.fixture(scope="module")
def vela():
    version = vela_compare.vela_version()
    if not version:
        pytest.skip("vela not installed (pip install ethos-u-vela; scripts/install_deps.sh does)")
    return version


def models(shared_models):
    if ALL:
        return sorted(p.stem for p in shared_models.glob("*.tflite") if p.stem != "model_invoking_error")
    return SAMPLE


def check(delegato_bin, shared_models, name, config):
    model = shared_models / f"{name}.tflite"
    if not model.exists():
        pytest.skip(f"{model} not found")
    result = vela_compare.compare(delegato_bin, model, config)
    if result["agree"] is None:
        pytest.skip(f"Vela does not compile {name} at {config}: {result['vela_error']}")
    return result


@pytest.mark.parametrize("config", ["ethos-u55-256", "ethos-u65-256"])
def test_ethos_u55_u65_agree_with_vela(delegato_bin, shared_models, vela, config):
    for name in models(shared_models):
        r = check(delegato_bin, shared_models, name, config)
        assert r["agree"], (name, config, r["cpu_only_in_plan"], r["cpu_only_in_vela"], r["vela_unmatched"])
        assert r["plan_npu_nodes"] == r["vela_npu_nodes"]
        assert r["plan_cpu"] == r["vela_cpu"]


def test_ethos_u85_differs_only_where_the_target_says(delegato_bin, shared_models, vela):
    names = models(shared_models) if ALL else ["movenet_single_pose_lightning_ptq", "keyword_scrambled",
                                                 "hello_world_int8"]
    for name in names:
        r = check(delegato_bin, shared_models, name, "ethos-u85-256")
        known = U85_KNOWN.get(name, {"plan_only": set(), "vela_only": set()})
        assert {d["node"] for d in r["cpu_only_in_plan"]} == known["plan_only"], (name, r["cpu_only_in_plan"])
        assert {d["node"] for d in r["cpu_only_in_vela"]} == known["vela_only"], (name, r["cpu_only_in_vela"])
        assert not r["vela_unmatched"]


def test_vela_reasons_are_reported(delegato_bin, shared_models, vela):
    # MoveNet's ARG_MAX over axis 1: Vela's reason and plan's rule say the same thing.
    r = check(delegato_bin, shared_models, "movenet_single_pose_lightning_ptq", "ethos-u55-256")
    plan = vela_compare.plan(delegato_bin, shared_models / "movenet_single_pose_lightning_ptq.tflite", "ethos-u55")
    assert plan["nodes"][89]["op"] == "ARG_MAX"
    assert "last (depth) axis" in plan["nodes"][89]["reasons"][0]["message"]
    assert r["vela_cpu"]["ARG_MAX"] == 2


def test_u85_plan_prints_its_known_differences(delegato_bin, shared_models):
    plan = vela_compare.plan(delegato_bin, shared_models / "keyword_scrambled.tflite", "ethos-u85")
    assert plan["known_differences"] and all(d["oracle"].startswith("Vela") for d in plan["known_differences"])


def zoo_int8_models():
    spec = importlib.util.spec_from_file_location("make_zoo", REPO / "scripts" / "make_zoo.py")
    make_zoo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_zoo)
    zoo = make_zoo.zoo_dir()
    return sorted(list(zoo.glob("*_int8.tflite")) + list(zoo.glob("*_uint8io.tflite")))


@pytest.mark.parametrize("config", ["ethos-u55-256", "ethos-u85-256"])
def test_zoo_int8_models_agree_with_vela(delegato_bin, vela, config):
    # The converter-made zoo (scripts/make_zoo.py): per-channel FULLY_CONNECTED,
    # 3-D FULLY_CONNECTED, BATCH_MATMUL, GELU, RSQRT, SQUARED_DIFFERENCE, a biased
    # TRANSPOSE_CONV, a fused LSTM: each placed where Vela 5.2 places it.
    models = zoo_int8_models()
    if not models:
        pytest.skip("the converter-made zoo is not generated (scripts/make_zoo.py)")
    for model in models:
        r = vela_compare.compare(delegato_bin, model, config)
        if r["agree"] is None:
            continue  # Vela cannot compile it: nothing to compare
        assert r["agree"], (model.name, config, r["cpu_only_in_plan"], r["cpu_only_in_vela"],
                            r["vela_unmatched"])
