"""New targets checked node by node on a shared model against what their
sources say (each assertion cites the source the target file cites)."""
import json
import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
ARMNN_DELEGATE_DOC = "ARM-software/armnn docs/05_03_delegate.dox (commit 077cddbe)"
ARMNN_OPERATOR_LIST = "ARM-software/armnn docs/02_operator_list.dox (commit 0ec00876)"


def plan_json(delegato_bin, model, target):
    proc = subprocess.run([delegato_bin, "plan", f"--graph={model}", f"--target={target}", "--format=json"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize("target,backend", [("armnn-cpuacc", "CpuAcc"), ("armnn-gpuacc", "GpuAcc")])
def test_armnn_movenet_node_by_node(delegato_bin, shared_models, target, backend):
    plan = plan_json(delegato_bin, shared_models / "movenet_single_pose_lightning_ptq.tflite", target)
    nodes = plan["nodes"]
    cpu = {n["index"] for n in nodes if n["placement"] == "cpu"}
    # ARMNN_OPERATOR_LIST: ConcatLayer on CpuAcc and GpuAcc takes QASYMMU8, QASYMMS8, FLOAT16, FLOAT32,
    # not SIGNED32: node 151 concatenates int32 indices.
    assert cpu == {151}
    assert nodes[151]["op"] == "CONCATENATION" and "int32" in nodes[151]["types"]
    reason = nodes[151]["reasons"][0]
    assert reason["layer"] == "backend" and reason["code"] == "unsupported_input_type"
    assert backend in reason["message"] and "ConcatLayer" in reason["message"]
    # ARMNN_DELEGATE_DOC lists CAST, QUANTIZE, GATHER_ND, FLOOR_DIV, ARG_MAX, PACK, UNPACK, DEQUANTIZE, SQRT,
    # DIV; ARMNN_OPERATOR_LIST: CastLayer takes QASYMMU8 and FLOAT32 on both backends (node 0: uint8 -> float32).
    for op in ("CAST", "QUANTIZE", "GATHER_ND", "FLOOR_DIV", "ARG_MAX", "PACK", "UNPACK", "DEQUANTIZE", "SQRT", "DIV"):
        on_cpu = [n["index"] for n in nodes if n["op"] == op and n["placement"] == "cpu"]
        assert not on_cpu, (op, on_cpu)
    assert plan["delegate_kernels"] == 2


def test_armnn_backends_differ_where_the_operator_list_does(delegato_bin):
    # ARMNN_OPERATOR_LIST: AbsLayer CpuAcc FLOAT16, FLOAT32, SIGNED32; GpuAcc FLOAT16, FLOAT32.
    def abs_types(target):
        data = json.loads((REPO / "targets" / f"{target}.json").read_text())
        backend = next(l for l in data["layers"] if l["name"] == "backend")
        entry = next(e for e in backend["ops"] if e["op"] == "ABS")
        return set(entry["rules"][0]["require"]["in"])
    assert abs_types("armnn-cpuacc") - abs_types("armnn-gpuacc") == {"int32"}


def test_armnn_refuses_sign_bit_fused_activation_and_ops_outside_its_list(delegato_bin, shared_models):
    # ARMNN_DELEGATE_DOC: SVDF is not in the delegate's list (keyword_scrambled has seven).
    plan = plan_json(delegato_bin, shared_models / "keyword_scrambled.tflite", "armnn-cpuacc")
    svdf = [n for n in plan["nodes"] if n["op"] == "SVDF"]
    assert svdf and all(n["placement"] == "cpu" and n["reasons"][0]["code"] == "unsupported_op" for n in svdf)


def test_pixel6_google_edgetpu_driver(delegato_bin, shared_models):
    # Seed 003 (tensorflow/tensorflow#57758), Pixel 6 with google-edgetpu: float32 -> int8 QUANTIZE ran in
    # XNNPACK ('Convert (NC, F32, QS8)'), int8 ops and DEQUANTIZE in the NNAPI partitions.
    plan = plan_json(delegato_bin, shared_models / "movenet_single_pose_lightning_ptq.tflite", "pixel6-nnapi")
    nodes = plan["nodes"]
    float_quantize = [n for n in nodes if n["op"] == "QUANTIZE" and n["types"].startswith("float32")]
    assert len(float_quantize) == 7
    for n in float_quantize:
        assert n["placement"] == "cpu"
        assert n["reasons"][0]["layer"] == "driver" and n["reasons"][0]["code"] == "driver_rejected"
    int8_quantize = [n for n in nodes if n["op"] == "QUANTIZE" and n["types"] == "int8"]
    assert int8_quantize and all("google-edgetpu" not in r["message"] for n in int8_quantize for r in n["reasons"])
    # A fully int8 model with no float op: one NNAPI partition, as the seed's int8 ops were delegated.
    plan = plan_json(delegato_bin, shared_models / "tf2_mobilenet_v2_1.0_224_ptq.tflite", "pixel6-nnapi")
    assert plan["nodes_delegated"] == plan["nodes_total"] and plan["delegate_kernels"] == 1


@pytest.mark.parametrize("target", ["vs680-nnapi", "vs680-timvx"])
def test_vs680_mobilenet_v1_is_one_partition(delegato_bin, shared_models, target):
    # Seed 001 (SyNAP manual): mobilenet_v1_0.25_224_quant, 'Replacing 31 node(s) with delegate
    # (TfLiteNnapiDelegate) node, yielding 1 partitions' on synap-npu; the timvx delegate runs it too.
    plan = plan_json(delegato_bin, shared_models / "mobilenet_v1_0.25_128_quant.tflite", target)
    assert plan["nodes_total"] == 31
    assert plan["nodes_delegated"] == 31 and plan["delegate_kernels"] == 1


def test_vs680_nnapi_driver_leaves_resize_nearest_on_the_cpu(delegato_bin, tmp_path):
    # Seed 001: 'the network contains a RESIZE_NEAREST_NEIGHBOR layer which falls back to CPU
    # execution'. The rule is checked on the target data (no shared model has the op).
    data = json.loads((REPO / "targets" / "vs680-nnapi.json").read_text())
    driver = next(l for l in data["layers"] if l["name"] == "driver")
    rule = next(r for r in driver["rules"] if r["id"] == "synap-nnapi-no-resize-nearest")
    assert rule["ops"] == ["RESIZE_NEAREST_NEIGHBOR"] and "001" in rule["source"]["path"]


def test_list_targets_shows_versions_and_sources(delegato_bin):
    proc = subprocess.run([delegato_bin, "plan", "--list-targets"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    blocks = {}
    for line in proc.stdout.splitlines():
        if line and not line.startswith(" "):
            current = blocks.setdefault(line, [])
        else:
            current.append(line.strip())
    for new in ("vs680-nnapi", "vs680-timvx", "pixel6-nnapi", "armnn-cpuacc", "armnn-gpuacc", "ethos-u65", "ethos-u85"):
        assert new in blocks, new
        text = "\n".join(blocks[new])
        assert "version: " in text and "(not stated)" not in text, (new, text)
        assert "sources:" in text and "sources: none" not in text, (new, text)
