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
