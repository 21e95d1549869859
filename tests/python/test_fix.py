"""delegato fix: the rewrites that take the shared models fully onto their
targets (seeds 000, 003, 004), their measured accuracy cost, --verify, and
every rewritten model loading and running in LiteRT (reference kernels)."""
import json
import pathlib

import numpy as np
import pytest

import os as _os
import pathlib as _pathlib


def shared_dir():
    repo = _pathlib.Path(__file__).resolve().parents[2]
    return _pathlib.Path(_os.environ.get("DELEGATO_SHARED_DIR", repo.parent / "shared"))
from test_plan import run

IMAGES = shared_dir() / "images"


def fix(delegato_bin, tmp_path, model, target, *extra, expect=0):
    out = tmp_path / f"{pathlib.Path(model).stem}_{target}.tflite"
    report = tmp_path / f"{pathlib.Path(model).stem}_{target}.json"
    proc = run(delegato_bin, "fix", f"--graph={model}", f"--target={target}", "-o", str(out),
               f"--report_json={report}", *extra, timeout=900)
    assert proc.returncode == expect, proc.stdout[-4000:] + proc.stderr
    return out, json.loads(report.read_text()), proc.stdout


def run_image(delegato_bin, model, image, out_dir):
    proc = run(delegato_bin, "run", f"--graph={model}", f"--image={image}", f"--output_dir={out_dir}")
    assert proc.returncode == 0, proc.stderr
    return np.load(out_dir / "output_0.npy")


def litert_outputs(path, seed=0):
    interpreter_module = pytest.importorskip("ai_edge_litert.interpreter")
    it = interpreter_module.Interpreter(
        model_path=str(path), experimental_op_resolver_type=interpreter_module.OpResolverType.BUILTIN_REF)
    it.allocate_tensors()
    rng = np.random.default_rng(seed)
    for d in it.get_input_details():
        if d["dtype"] in (np.uint8, np.int8):
            x = rng.integers(0, 256, size=d["shape"]).astype(np.uint8).view(d["dtype"])
        else:
            x = rng.uniform(-1, 1, size=d["shape"]).astype(d["dtype"])
        it.set_tensor(d["index"], x)
    it.invoke()
    return [it.get_tensor(d["index"]) for d in it.get_output_details()]


def op_share(summary, op):
    entry = summary["ops"].get(op, {"total": 0, "delegated": 0})
    return entry["delegated"] / entry["total"] if entry["total"] else None


def test_deeplab_on_nnapi12_fully_delegated_same_mask(delegato_bin, shared_models, tmp_path):
    model = shared_models / "deeplabv3_mnv2_dm05_pascal_quant.tflite"
    image = IMAGES / "bird_segmentation.bmp"
    out, report, text = fix(delegato_bin, tmp_path, model, "nnapi-1.2", f"--image={image}", "--verify")
    before, after = report["before"], report["after"]
    assert before["nodes_delegated"] < before["nodes"]
    for op in ("AVERAGE_POOL_2D", "RESIZE_BILINEAR", "ARG_MAX"):
        assert op_share(before, op) == 0.0, op
    assert after["nodes_delegated"] == after["nodes"]
    assert after["delegated_partitions"] == 1 and after["cpu_steps"] == 0
    passes = {p["pass"] for p in report["passes"] if p["changes"] and not p["undone"]}
    assert {"argmax-int32", "resize-flags", "avgpool-split"} <= passes
    assert "MODEL OUTPUT \"ArgMax\" CHANGES TYPE: int64 -> int32" in text
    assert report["accuracy"]["image"]["kind"] == "segmentation"
    assert report["accuracy"]["image"]["pixel_agreement"] >= 0.99
    # The same check through `delegato run --image --output_dir`.
    mask_a = run_image(delegato_bin, model, image, tmp_path / "a")
    mask_b = run_image(delegato_bin, out, image, tmp_path / "b")
    assert mask_a.shape == mask_b.shape
    assert np.mean(mask_a.astype(np.int64) == mask_b.astype(np.int64)) >= 0.99
    # LiteRT: the rewrite loads, runs, and labels random inputs like the original.
    a, b = litert_outputs(model)[0], litert_outputs(out)[0]
    assert b.dtype == np.int32
    assert np.mean(a.astype(np.int64) == b.astype(np.int64)) >= 0.99


def test_tf2_mobilenet_on_imx8mp_every_conv_on_the_npu(delegato_bin, shared_models, tmp_path):
    model = shared_models / "tf2_mobilenet_v2_1.0_224_ptq.tflite"
    image = IMAGES / "cat.bmp"
    out, report, text = fix(delegato_bin, tmp_path, model, "imx8mp-nnapi", f"--image={image}", "--verify")
    assert op_share(report["before"], "CONV_2D") == 0.0
    assert op_share(report["after"], "CONV_2D") == 1.0
    assert report["after"]["nodes_delegated"] == report["after"]["nodes"]
    img = report["accuracy"]["image"]
    assert img["kind"] == "classifier"
    assert img["top1_after"] == img["top1_before"]
    assert abs(img["score_after"] - img["score_before"]) <= 0.05
    assert "weight error max" in text, "the requantization error is reported per layer"
    # Same through `delegato run`: top-1 and its score (uint8 softmax, scale 1/256).
    scores_a = run_image(delegato_bin, model, image, tmp_path / "a").astype(np.float64).ravel() / 256
    scores_b = run_image(delegato_bin, out, image, tmp_path / "b").astype(np.float64).ravel() / 256
    top = int(np.argmax(scores_a))
    assert int(np.argmax(scores_b)) == top
    assert abs(scores_b[top] - scores_a[top]) <= 0.05
    a, b = litert_outputs(model)[0], litert_outputs(out)[0]
    assert a.dtype == b.dtype == np.uint8, "the user's output type is kept"
    assert np.abs(a.astype(np.int32) - b.astype(np.int32)).max() <= 64


def test_movenet_float_islands_reported_and_keypoints_compared(delegato_bin, shared_models, tmp_path):
    model = shared_models / "movenet_single_pose_lightning_ptq.tflite"
    image = IMAGES / "grace_hopper.bmp"
    out, report, text = fix(delegato_bin, tmp_path, model, "imx8mp-nnapi", f"--image={image}")
    islands = [f for p in report["passes"] if p["pass"] == "float-islands" for f in p["findings"]]
    assert any("SQRT" in f and "no uint8 kernel" in f for f in islands), islands
    assert any("DIV" in f and "target refuses" in f for f in islands), islands
    assert report["after"]["nodes_delegated"] > 2 * report["before"]["nodes_delegated"]
    kp = report["accuracy"]["image"]
    assert kp["kind"] == "keypoints" and kp["keypoints"] == 17
    assert "keypoints: 17 keypoints" in text
    outputs = litert_outputs(out)
    assert outputs[0].shape == (1, 1, 17, 3) and outputs[0].dtype == np.float32

    # Where the target takes an integer DIV (vx-delegate), the rewrite would not
    # move a node to the NPU: it is undone and said so.
    _, report_vx, text_vx = fix(delegato_bin, tmp_path, model, "imx8mp-vx", f"--image={image}")
    assert "UNDONE" in text_vx
    assert report_vx["accuracy"]["image"]["max_shift_px"] == 0


def test_verify_refuses_a_model_beyond_the_tolerance(delegato_bin, shared_models, tmp_path):
    model = shared_models / "tf2_mobilenet_v2_1.0_224_ptq.tflite"
    image = f"--image={IMAGES / 'cat.bmp'}"
    out, report, text = fix(delegato_bin, tmp_path, model, "imx8mp-nnapi", image, "--verify",
                            "--channel_groups=off", expect=1)
    assert "NOT WRITTEN" in text and not out.exists()
    assert report["written"] is False and report["violations"]
    out, report, _ = fix(delegato_bin, tmp_path, model, "imx8mp-nnapi", image, "--verify",
                         "--channel_groups=off", "--accept_accuracy_loss")
    assert out.exists() and report["written"]
    litert_outputs(out)


def test_uint8_to_int8_for_an_int8_target(delegato_bin, shared_models, tmp_path):
    model = shared_models / "mobilenet_v1_0.25_128_quant.tflite"
    out, report, text = fix(delegato_bin, tmp_path, model, "ethos-u55", "--passes=uint8-to-int8,fold-requantize",
                            f"--image={IMAGES / 'grace_hopper.bmp'}")
    assert "int8 symmetric per-channel" in text
    img = report["accuracy"]["image"]
    assert img["top1_after"] == img["top1_before"]
    a, b = litert_outputs(model)[0], litert_outputs(out)[0]
    assert b.dtype == np.uint8, "I/O kept in the user's types"
    assert np.abs(a.astype(np.int32) - b.astype(np.int32)).max() <= 32


def test_dry_run_writes_nothing_and_passes_are_listed(delegato_bin, shared_models, tmp_path):
    model = shared_models / "deeplabv3_mnv2_dm05_pascal_quant.tflite"
    proc = run(delegato_bin, "fix", f"--graph={model}", "--target=nnapi-1.2", "--dry_run")
    assert proc.returncode == 0, proc.stderr
    assert "--dry_run: nothing written" in proc.stdout
    proc = run(delegato_bin, "fix", "--list_passes")
    for name in ("int8-to-uint8", "uint8-to-int8", "per-tensor-weights", "float-islands", "argmax-int32",
                 "resize-flags", "avgpool-split", "fold-requantize"):
        assert name in proc.stdout
    proc = run(delegato_bin, "fix", f"--graph={model}", "--target=nnapi-1.2", "--dry_run", "--passes=nope")
    assert proc.returncode == 2 and "unknown pass 'nope'" in proc.stderr


def test_target_hints_name_real_passes():
    names = {"int8-to-uint8", "uint8-to-int8", "per-tensor-weights", "float-islands", "argmax-int32",
             "resize-flags", "avgpool-split", "fold-requantize"}
    targets = pathlib.Path(__file__).resolve().parents[2] / "targets"
    for path in targets.glob("*.json"):
        text = path.read_text()
        start = 0
        while (i := text.find("delegato fix", start)) >= 0:
            snippet = text[i:i + 120]
            assert any(n in snippet for n in names), f"{path.name}: hint without a pass name: {snippet}"
            start = i + 1
