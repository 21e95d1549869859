"""The optimized kernel set is bit-exact with the reference kernel set on the
shared models: every output byte equal, 1 and 2 threads, random inputs, with
the optimized kernels on each ISA (DELEGATO_ISA; this CPU's best, AVX2, the
portable scalar code; ISAs the CPU lacks fall back to the best below)."""
import os
import pathlib
import subprocess

import numpy as np
import pytest

MODELS = [
    "mobilenet_v1_0.25_128_quant",
    "mobilenet_v2_1.0_224_quant",
    "tf2_mobilenet_v2_1.0_224_ptq",
    "mobilenet_v2_quantized_1x3x224x224",
    "person_detect",
    "deeplabv3_mnv2_dm05_pascal_quant",
    "movenet_single_pose_lightning_ptq",
    "keyword_scrambled",
    "hello_world_int8",
    "traffic_model",
    "split_concat",
]


def run(delegato_bin, model, out_dir, kernels, threads, seed, isa=None):
    env = dict(os.environ)
    env.pop("DELEGATO_ISA", None)
    if isa:
        env["DELEGATO_ISA"] = isa
    subprocess.run(
        [delegato_bin, "run", "--graph", str(model), "--kernels", kernels,
         "--num_threads", str(threads), "--seed", str(seed), "--output_dir", str(out_dir)],
        check=True, capture_output=True, text=True, timeout=600, env=env)
    return {p.name: np.load(p) for p in sorted(pathlib.Path(out_dir).glob("output_*.npy"))}


@pytest.mark.parametrize("isa", [None, "avx2", "scalar"])
@pytest.mark.parametrize("name", MODELS)
def test_optimized_equals_reference(delegato_bin, shared_models, tmp_path, name, isa):
    model = shared_models / f"{name}.tflite"
    if not model.exists():
        pytest.skip(f"{model} not found")
    reference = run(delegato_bin, model, tmp_path / "ref", "reference", 1, 3)
    assert reference
    for threads in (1, 2):
        optimized = run(delegato_bin, model, tmp_path / f"opt{threads}", "optimized", threads, 3,
                        isa)
        assert optimized.keys() == reference.keys()
        for key, expected in reference.items():
            actual = optimized[key]
            assert actual.dtype == expected.dtype and actual.shape == expected.shape, key
            # Bytewise, so float outputs compare exactly too (NaNs included).
            assert actual.tobytes() == expected.tobytes(), (
                f"{name} {key} threads={threads} isa={isa or 'best'}: "
                f"{int(np.sum(actual != expected))} elements differ")
