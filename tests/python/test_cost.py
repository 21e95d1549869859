"""delegato plan's cost estimate from the command line: the alternatives in the
JSON, --partitioning greedy unchanged and cost never worse, seed 000's story
(greedy slower than CPU-only, the uint8 fix faster than both), the summary
first, and nonsense cost numbers refused. Estimates only: no timing is
measured here."""
import json
import subprocess


def plan(delegato_bin, *args):
    proc = subprocess.run([delegato_bin, "plan", *args], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def plan_json(delegato_bin, *args):
    return json.loads(plan(delegato_bin, "--format=json", *args))


def test_alternatives_and_greedy_default(delegato_bin, shared_models):
    model = shared_models / "deeplabv3_mnv2_dm05_pascal_quant.tflite"
    default = plan_json(delegato_bin, f"--graph={model}", "--target=nnapi-1.2")
    greedy = plan_json(delegato_bin, f"--graph={model}", "--target=nnapi-1.2", "--partitioning=greedy")
    assert [n["placement"] for n in default["nodes"]] == [n["placement"] for n in greedy["nodes"]]
    assert default["partitioning"] == "greedy"
    alts = default["alternatives"]
    for name in ("greedy", "cost", "cpu_only"):
        for key in ("total_us", "accelerator_us", "cpu_us", "sync_us", "partitions"):
            assert key in alts[name]
    assert alts["greedy"]["partitions"] == default["delegate_kernels"]
    assert abs(alts["greedy"]["total_us"] - default["estimate"]["total_us"]) < 1e-6
    assert alts["cpu_only"]["partitions"] == 0
    assert alts["cost"]["total_us"] <= alts["greedy"]["total_us"] + 1e-6
    assert alts["cost"]["total_us"] <= alts["cpu_only"]["total_us"] + 1e-6
    cost = plan_json(delegato_bin, f"--graph={model}", "--target=nnapi-1.2", "--partitioning=cost")
    assert cost["partitioning"] == "cost"
    assert abs(cost["estimate"]["total_us"] - alts["cost"]["total_us"]) < 1e-6
    assert cost["delegate_kernels"] == alts["cost"]["partitions"]
    kept = [n["index"] for n in cost["nodes"]
            if any("cost-aware partitioning" in r["message"] for r in n["reasons"])]
    assert kept and kept == default["cost_never_delegate"]
    assert all(default["nodes"][i]["placement"] == "delegate" for i in kept)


def test_seed000_greedy_slower_than_cpu_and_fix_faster(delegato_bin, shared_models):
    model = shared_models / "tf2_mobilenet_v2_1.0_224_ptq.tflite"
    p = plan_json(delegato_bin, f"--graph={model}", "--target=imx8mp-nnapi")
    alts = p["alternatives"]
    ratio = alts["greedy"]["total_us"] / alts["cpu_only"]["total_us"]
    assert 1.9 * 0.75 <= ratio <= 1.9 * 1.25, ratio  # seed 000: 355.5 / 187.5
    assert "int8-to-uint8" in p["after_fix"]["passes"]
    fixed = min(p["after_fix"]["greedy"]["total_us"], p["after_fix"]["cost"]["total_us"])
    assert fixed < alts["cpu_only"]["total_us"] and fixed < alts["greedy"]["total_us"]
    assert p["recommendation"]["choice"] == "fix"
    groups = {g["code"]: g for g in p["cpu_groups"]}
    assert groups["driver_rejected"]["count"] == 66
    assert "int8-to-uint8" in groups["driver_rejected"]["fix"]
    # The cost-aware plan keeps every node away from NNAPI: the list says so.
    assert p["cost_never_delegate"] == list(range(68))


def test_text_opens_with_the_summary(delegato_bin, shared_models):
    model = shared_models / "tf2_mobilenet_v2_1.0_224_ptq.tflite"
    text = plan(delegato_bin, f"--graph={model}", "--target=imx8mp-nnapi")
    head = text[:text.index("node  op")]
    assert "Summary" in head
    assert "66 x driver_rejected [driver]" in head
    for word in ("greedy", "cost-aware", "CPU only", "after fix", "choose: `delegato fix --passes int8-to-uint8`",
                 "never_delegate=0-67"):
        assert word in head, word


def test_html_has_summary_and_time_bars(delegato_bin, shared_models, tmp_path):
    model = shared_models / "tf2_mobilenet_v2_1.0_224_ptq.tflite"
    page = tmp_path / "plan.html"
    plan(delegato_bin, f"--graph={model}", "--target=imx8mp-nnapi", f"--html={page}")
    html = page.read_text()
    assert html.index('id="cost-summary"') < html.index('id="graph"')
    assert 'id="time-bars"' in html and "after fix" in html


def test_nonsense_cost_numbers_are_refused(delegato_bin, shared_models, tmp_path):
    target = tmp_path / "bad.json"
    target.write_text(json.dumps({"id": "bad", "description": "d",
                                  "cost": {"ops_per_second": {"int8": {"value": 0, "placeholder": True}}},
                                  "layers": [{"name": "delegate", "description": "d", "ops_not_listed": "accept"}]}))
    proc = subprocess.run([delegato_bin, "plan", f"--graph={shared_models / 'person_detect.tflite'}",
                           f"--target={target}"], capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert "bad.json" in proc.stderr and "cost.ops_per_second.int8.value" in proc.stderr
