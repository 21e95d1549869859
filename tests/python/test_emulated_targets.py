"""For every shared model and every shipped target, running through the
emulated accelerator delegate gives outputs identical to the CPU-only run."""
import os
import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
TARGETS = sorted(p.stem for p in (REPO / "targets").glob("*.json"))
SHARED_MODELS = pathlib.Path(os.environ.get("DELEGATO_SHARED_DIR", REPO.parent / "shared")) / "models"
MODELS = sorted(p.name for p in SHARED_MODELS.glob("*.tflite")) if SHARED_MODELS.is_dir() else []


def run(delegato_bin, *args):
    proc = subprocess.run([delegato_bin, *args], capture_output=True, text=True, timeout=600)
    assert proc.returncode >= 0, f"crashed with signal {-proc.returncode}: {proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def cpu_outputs(delegato_bin, tmp_path_factory):
    """model -> (output dir, or the CPU error for models delegato cannot run)."""
    root = tmp_path_factory.mktemp("cpu")
    results = {}
    for model in MODELS:
        out = root / model
        proc = run(delegato_bin, "run", f"--graph={SHARED_MODELS / model}", "--seed=11", "--num_threads=2",
                   f"--output_dir={out}")
        results[model] = (out, None if proc.returncode == 0 else proc.stderr.strip())
    return results


@pytest.mark.skipif(not MODELS, reason=f"shared models not found at {SHARED_MODELS}")
@pytest.mark.parametrize("target", TARGETS)
def test_emulated_delegate_matches_cpu(delegato_bin, cpu_outputs, target, tmp_path):
    checked = 0
    for model in MODELS:
        cpu_dir, cpu_error = cpu_outputs[model]
        out = tmp_path / model
        proc = run(delegato_bin, "run", f"--graph={SHARED_MODELS / model}", "--seed=11", "--num_threads=2",
                   f"--target={target}", f"--output_dir={out}")
        if cpu_error is not None:
            # A model the CPU runtime cannot run must fail the same clear way, not crash.
            assert proc.returncode == 1, f"{model}: {proc.stdout}"
            continue
        assert proc.returncode == 0, f"{model} on {target}: {proc.stderr}"
        outputs = sorted(cpu_dir.glob("output_*.npy"))
        assert outputs
        for cpu_file in outputs:
            assert (out / cpu_file.name).read_bytes() == cpu_file.read_bytes(), f"{model} {cpu_file.name} on {target}"
        checked += 1
    assert checked > 0
