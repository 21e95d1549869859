"""delegato plan and run --target: the published fallback cases (seeds 000
and 004) reproduced per node with their reasons, the JSON contract, CI
gating, bad targets, and the HTML page."""
import json
import shutil
import subprocess

import pytest


def run(delegato_bin, *args, timeout=300):
    proc = subprocess.run([delegato_bin, *args], capture_output=True, text=True, timeout=timeout)
    assert proc.returncode >= 0, f"crashed with signal {-proc.returncode}: {proc.stderr}"
    return proc


def plan_json(delegato_bin, model, target, *extra):
    proc = run(delegato_bin, "plan", f"--graph={model}", f"--target={target}", "--format=json", *extra)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def nodes_of(plan, op):
    return [n for n in plan["nodes"] if n["op"] == op]


def test_json_contract(delegato_bin, shared_models):
    plan = plan_json(delegato_bin, shared_models / "mobilenet_v1_0.25_128_quant.tflite", "nnapi-1.2")
    for key in ("model", "target", "nodes_total", "nodes_delegated", "delegate_kernels", "nodes",
                "execution_plan", "estimate"):
        assert key in plan
    assert plan["nodes_total"] == len(plan["nodes"]) == 31
    for node in plan["nodes"]:
        assert node["placement"] in ("delegate", "cpu")
        assert {"index", "op", "reasons"} <= node.keys()
        if node["placement"] == "cpu":
            assert node["reasons"], f"node {node['index']} on the CPU without a reason"
    covered = sorted(i for step in plan["execution_plan"] for i in step["nodes"])
    assert covered == list(range(31))
    assert plan["estimate"]["kind"].startswith("cost model estimate")


def test_imx8mp_uint8_mobilenet_runs_fully_on_npu(delegato_bin, shared_models):
    plan = plan_json(delegato_bin, shared_models / "mobilenet_v2_1.0_224_quant.tflite", "imx8mp-nnapi")
    assert plan["nodes_delegated"] == plan["nodes_total"]
    assert plan["delegate_kernels"] == 1


def test_imx8mp_int8_mobilenet_falls_back_in_the_driver(delegato_bin, shared_models):
    # Seed 000: the vsi-npu driver refuses TENSOR_QUANT8_ASYMM_SIGNED.
    plan = plan_json(delegato_bin, shared_models / "tf2_mobilenet_v2_1.0_224_ptq.tflite", "imx8mp-nnapi")
    for op in ("CONV_2D", "DEPTHWISE_CONV_2D", "ADD"):
        nodes = nodes_of(plan, op)
        assert nodes
        for node in nodes:
            assert node["placement"] == "cpu", node
            text = " ".join(r["message"] for r in node["reasons"])
            assert "TENSOR_QUANT8_ASYMM_SIGNED" in text
            assert any(r["layer"] == "driver" for r in node["reasons"])


def test_deeplab_on_nnapi_1_2_keeps_the_three_blockers_on_cpu(delegato_bin, shared_models):
    # Seed 004: AVERAGE_POOL_2D (33x33 > 256), RESIZE_BILINEAR (align_corners), ARG_MAX (int64).
    plan = plan_json(delegato_bin, shared_models / "deeplabv3_mnv2_dm05_pascal_quant.tflite", "nnapi-1.2")
    (pool,) = nodes_of(plan, "AVERAGE_POOL_2D")
    assert pool["placement"] == "cpu" and "1089" in pool["reasons"][0]["message"]
    resizes = nodes_of(plan, "RESIZE_BILINEAR")
    assert len(resizes) == 3
    for node in resizes:
        assert node["placement"] == "cpu"
        assert "align_corners" in node["reasons"][0]["message"]
    (argmax,) = nodes_of(plan, "ARG_MAX")
    assert argmax["placement"] == "cpu"
    assert argmax["reasons"][0]["code"] == "unsupported_output_type"
    assert "int64" in argmax["reasons"][0]["message"]
    assert all(n["placement"] == "delegate" for n in nodes_of(plan, "CONV_2D"))
    assert plan["delegate_kernels"] == 3  # NNAPI's default partition limit


def test_deeplab_on_nnapi_1_3_delegates_the_resizes(delegato_bin, shared_models):
    plan = plan_json(delegato_bin, shared_models / "deeplabv3_mnv2_dm05_pascal_quant.tflite", "nnapi-1.3")
    assert all(n["placement"] == "delegate" for n in nodes_of(plan, "RESIZE_BILINEAR"))


def test_naming_the_accelerator_lifts_the_pool_limit(delegato_bin, shared_models):
    plan = plan_json(delegato_bin, shared_models / "deeplabv3_mnv2_dm05_pascal_quant.tflite", "nnapi-1.2",
                     "--nnapi_accelerator_name=vsi-npu")
    assert nodes_of(plan, "AVERAGE_POOL_2D")[0]["placement"] == "delegate"


def test_skip_nodes_and_partition_limit(delegato_bin, shared_models):
    model = shared_models / "mobilenet_v1_0.25_128_quant.tflite"
    plan = plan_json(delegato_bin, model, "nnapi-1.2", "--skip_nodes=5", "--max_delegated_partitions=1")
    assert plan["nodes"][5]["placement"] == "cpu"
    assert plan["nodes"][5]["reasons"][0]["code"] == "user_excluded"
    assert plan["delegate_kernels"] == 1
    codes = {r["code"] for n in plan["nodes"] for r in n["reasons"]}
    assert "partition_limit" in codes


def test_edgetpu_cuts_once_through_the_data_flow(delegato_bin, shared_models):
    # MoveNet compiled by edgetpu_compiler (../shared/models/edgetpu): the leading CAST and
    # float QUANTIZE stay on the CPU, ARG_MAX (node 89) cuts, everything depending on it
    # runs on the CPU; later head branches that do not depend on it stay mapped.
    plan = plan_json(delegato_bin, shared_models / "movenet_single_pose_lightning_ptq.tflite", "edgetpu")
    nodes = plan["nodes"]
    assert [n["placement"] for n in nodes[:2]] == ["cpu", "cpu"]
    assert all(r["code"] != "after_cut" for n in nodes[:2] for r in n["reasons"])
    assert nodes[89]["op"] == "ARG_MAX" and nodes[89]["reasons"][0]["code"] == "unsupported_op"
    assert nodes[90]["reasons"][0]["code"] == "after_cut"
    assert "node 89" in nodes[90]["reasons"][0]["message"]
    assert all(nodes[i]["placement"] == "delegate" for i in range(100, 104))
    assert any(r["code"] == "after_cut" for r in nodes[-1]["reasons"])
    assert plan["delegate_kernels"] == 1


def test_fail_on_exit_codes(delegato_bin, shared_models):
    deeplab = shared_models / "deeplabv3_mnv2_dm05_pascal_quant.tflite"
    assert run(delegato_bin, "plan", f"--graph={deeplab}", "--target=nnapi-1.2", "--fail_on=fallback").returncode == 3
    assert run(delegato_bin, "plan", f"--graph={deeplab}", "--target=nnapi-1.2", "--fail_on=partitions:2").returncode == 3
    assert run(delegato_bin, "plan", f"--graph={deeplab}", "--target=nnapi-1.2", "--fail_on=partitions:3").returncode == 0
    mnv2 = shared_models / "mobilenet_v2_1.0_224_quant.tflite"
    assert run(delegato_bin, "plan", f"--graph={mnv2}", "--target=imx8mp-nnapi", "--fail_on=fallback").returncode == 0


def test_text_output_has_tflite_summary_line(delegato_bin, shared_models):
    proc = run(delegato_bin, "plan", f"--graph={shared_models / 'deeplabv3_mnv2_dm05_pascal_quant.tflite'}",
               "--target=nnapi-1.2")
    assert proc.returncode == 0
    assert "nnapi-1.2 delegate: 67 nodes delegated out of 72 nodes with 3 partitions." in proc.stdout
    assert "fix:" in proc.stdout


def test_unknown_target_lists_ids(delegato_bin, shared_models):
    proc = run(delegato_bin, "plan", f"--graph={shared_models / 'hello_world_int8.tflite'}", "--target=nope")
    assert proc.returncode == 1
    assert "imx8mp-nnapi" in proc.stderr


def test_bad_target_file_names_the_problem(delegato_bin, shared_models, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"id": "bad", "description": "x", "layers": [{"name": "delegate", "ops_not_listed": "maybe"}]}')
    proc = run(delegato_bin, "plan", f"--graph={shared_models / 'hello_world_int8.tflite'}", f"--target={bad}")
    assert proc.returncode == 1
    assert str(bad) in proc.stderr
    broken = tmp_path / "broken.json"
    broken.write_text('{"id": ')
    proc = run(delegato_bin, "plan", f"--graph={shared_models / 'hello_world_int8.tflite'}", f"--target={broken}")
    assert proc.returncode == 1 and str(broken) in proc.stderr


def test_bad_skip_nodes(delegato_bin, shared_models):
    proc = run(delegato_bin, "plan", f"--graph={shared_models / 'hello_world_int8.tflite'}",
               "--target=nnapi-1.3", "--skip_nodes=99")
    assert proc.returncode == 2 and "99" in proc.stderr


def test_dot_and_html_are_written(delegato_bin, shared_models, tmp_path):
    dot, html = tmp_path / "plan.dot", tmp_path / "plan.html"
    proc = run(delegato_bin, "plan", f"--graph={shared_models / 'deeplabv3_mnv2_dm05_pascal_quant.tflite'}",
               "--target=nnapi-1.2", f"--dot={dot}", f"--html={html}")
    assert proc.returncode == 0, proc.stderr
    assert dot.read_text().count("fillcolor") == 72
    page = html.read_text()
    assert page.count('class="node cpu"') == 5 and page.count('class="node delegate"') == 67
    assert "align_corners" in page


def test_html_renders_in_chromium(delegato_bin, shared_models, tmp_path):
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("Chromium not installed (apt-get install chromium): HTML rendering not checked")
    html = tmp_path / "plan.html"
    assert run(delegato_bin, "plan", f"--graph={shared_models / 'deeplabv3_mnv2_dm05_pascal_quant.tflite'}",
               "--target=nnapi-1.2", f"--html={html}").returncode == 0
    # --dump-dom gives the DOM after rendering; computed colours are read by a script in the page.
    probe = tmp_path / "probe.html"
    probe.write_text(html.read_text().replace(
        "</body>",
        "<script>document.title = [...document.querySelectorAll('g.node rect')].map("
        "r => getComputedStyle(r).fill).filter((v, i, a) => a.indexOf(v) === i).join('|') + '#' + "
        "document.querySelectorAll('g.node').length;</script></body>"))
    proc = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", probe.as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    title = proc.stdout.split("<title>")[1].split("</title>")[0]
    colours, count = title.split("#")
    assert count == "72"
    assert "rgb(143, 214, 148)" in colours and "rgb(244, 162, 97)" in colours


def test_run_target_matches_cpu_and_reports_partitions(delegato_bin, shared_models, tmp_path):
    model = shared_models / "mobilenet_v2_1.0_224_quant.tflite"
    cpu = run(delegato_bin, "run", f"--graph={model}", "--seed=3", f"--output_dir={tmp_path / 'cpu'}")
    npu = run(delegato_bin, "run", f"--graph={model}", "--seed=3", "--target=imx8mp-nnapi",
              f"--output_dir={tmp_path / 'npu'}")
    assert cpu.returncode == 0 and npu.returncode == 0, npu.stderr
    assert "imx8mp-nnapi delegate: 66 nodes delegated out of 66 nodes with 1 partitions." in npu.stderr
    assert "emulated on the host" in npu.stderr
    assert (tmp_path / "cpu" / "output_0.npy").read_bytes() == (tmp_path / "npu" / "output_0.npy").read_bytes()
