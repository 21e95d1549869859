#!/usr/bin/env python3
"""Compares `delegato plan --target ethos-u55|u65|u85` with Vela (ethos-u-vela).

For each model and accelerator configuration, Vela compiles the model; every
operator it leaves on the CPU is reported as
    Warning (supported operators) operator: OP, ofm: 'NAME'
    Reason: ...
Those are matched to the model's nodes by output tensor name. Nodes Vela does
not report run on the NPU (or were removed by its rewrites: folded constant
subgraphs, eliminated RESHAPE/SQUEEZE). Agreement means: the multiset of CPU
ops is equal and the number of NPU nodes (of the original graph) is equal.
Vela's own NPU operator count counts its rewritten graph (an LSTM becomes
hundreds of ops) and is reported beside, not compared.

    scripts/vela_compare.py [--models a.tflite ...] [--configs ethos-u55-256 ...] [--json out.json]
exits 1 when a pair disagrees, 2 when Vela is not installed.
"""
import argparse
import collections
import json
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
# Vela accelerator configuration -> delegato target.
CONFIGS = {"ethos-u55-256": "ethos-u55", "ethos-u65-256": "ethos-u65", "ethos-u85-256": "ethos-u85"}
WARNING = re.compile(r"^Warning \(supported operators\) operator: (\S+), ofm: '(.*)'$")


def vela_version():
    exe = shutil.which("vela")
    if not exe:
        return None
    proc = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60)
    return proc.stdout.strip() or None


def run_vela(model, config, timeout=600):
    """{'ok', 'cpu': [(op, ofm, reason)], 'npu_ops', 'seconds', 'error'}."""
    with tempfile.TemporaryDirectory() as out:
        start = time.monotonic()
        proc = subprocess.run(["vela", f"--accelerator-config={config}", "--output-dir", out, str(model)],
                              capture_output=True, text=True, timeout=timeout)
        seconds = time.monotonic() - start
    text = proc.stdout + proc.stderr
    cpu = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = WARNING.match(line)
        if m:
            reason = []
            for follow in lines[i + 1:]:
                if follow.startswith("Warning") or not follow.strip() or follow.startswith("Network summary"):
                    break
                reason.append(follow.strip().removeprefix("Reason: "))
            cpu.append((m.group(1), m.group(2), " ".join(reason)))
    npu = re.search(r"NPU operators = (\d+)", text)
    error = None
    if proc.returncode != 0:
        tail = [l for l in lines if l.strip()][-1:] or ["(no output)"]
        error = f"vela exit {proc.returncode}: {tail[0]}"
    return {"ok": proc.returncode == 0, "cpu": cpu, "npu_ops": int(npu.group(1)) if npu else None,
            "seconds": round(seconds, 2), "error": error}


# Vela prints some op names its own way.
VELA_OP_NAMES = {"ARGMAX": "ARG_MAX", "ARGMIN": "ARG_MIN"}
FUSED_ACTIVATIONS = {"RELU", "RELU6", "RELU_N1_TO_1", "TANH", "LOGISTIC"}


def _is_builtin(op):
    return re.fullmatch(r"[A-Z0-9_]+", op) is not None


def plan(delegato, model, target):
    proc = subprocess.run([delegato, "plan", f"--graph={model}", f"--target={target}", "--format=json"],
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"delegato plan failed on {model}: {proc.stderr.strip()}")
    return json.loads(proc.stdout)


def compare(delegato, model, config, vela=None):
    target = CONFIGS[config]
    vela = vela or run_vela(model, config)
    p = plan(delegato, model, target)
    result = {"model": pathlib.Path(model).name, "config": config, "target": target,
              "vela_seconds": vela["seconds"], "vela_npu_ops_rewritten": vela["npu_ops"]}
    if not vela["ok"]:
        result.update({"agree": None, "vela_error": vela["error"]})
        return result
    nodes = p["nodes"]
    by_name = {}
    for n in nodes:
        by_name.setdefault(n["output"], n["index"])
    vela_cpu_nodes = {}
    unmatched = []
    pending = []
    for op, ofm, reason in vela["cpu"]:
        op = VELA_OP_NAMES.get(op, op)
        index = by_name.get(ofm)
        if index is not None and op in FUSED_ACTIVATIONS and nodes[index]["op"] != op:
            # Vela splits a fused activation into its own op, named after the node's output.
            vela_cpu_nodes.setdefault(index, {"op": nodes[index]["op"], "reason": reason})
        elif index is None or index in vela_cpu_nodes or nodes[index]["op"] != op:
            pending.append((op, ofm, reason))
        else:
            vela_cpu_nodes[index] = {"op": op, "reason": reason}
    # Unnamed outputs (Vela prints '<unnamed>'): the first node of that op not matched yet.
    for op, ofm, reason in pending:
        if op == "CUSTOM":  # plan names custom ops by their code; Vela prints CUSTOM
            index = by_name.get(ofm)
            if index is not None and index not in vela_cpu_nodes and not _is_builtin(nodes[index]["op"]):
                vela_cpu_nodes[index] = {"op": nodes[index]["op"], "reason": reason}
                continue
        dtype = re.search(r"dataType (\w+)", reason)
        candidates = [n for n in nodes if n["op"] == op and n["index"] not in vela_cpu_nodes]
        if dtype:  # the reason names the offending type: prefer a node that has it
            typed = [n for n in candidates if dtype.group(1).lower() in n["types"]]
            candidates = typed or candidates
        index = candidates[0]["index"] if candidates else None
        if index is None:
            unmatched.append({"op": op, "ofm": ofm, "reason": reason})
        else:
            vela_cpu_nodes[index] = {"op": op, "reason": reason, "matched_by": "op order"}
    plan_cpu_nodes = {n["index"] for n in nodes if n["placement"] == "cpu"}
    vela_cpu = collections.Counter(nodes[i]["op"] for i in vela_cpu_nodes)
    vela_cpu.update(u["op"] for u in unmatched)
    plan_cpu = collections.Counter(nodes[i]["op"] for i in plan_cpu_nodes)
    only_plan = sorted(plan_cpu_nodes - set(vela_cpu_nodes))
    only_vela = sorted(set(vela_cpu_nodes) - plan_cpu_nodes)
    result.update({
        "agree": not only_plan and not only_vela and not unmatched,
        "nodes_total": len(nodes),
        "plan_npu_nodes": len(nodes) - len(plan_cpu_nodes),
        "vela_npu_nodes": len(nodes) - len(vela_cpu_nodes) - len(unmatched),
        "plan_cpu": dict(sorted(plan_cpu.items())),
        "vela_cpu": dict(sorted(vela_cpu.items())),
        "cpu_only_in_plan": [{"node": i, "op": nodes[i]["op"],
                              "plan_reason": nodes[i]["reasons"][0]["message"] if nodes[i]["reasons"] else ""}
                             for i in only_plan],
        "cpu_only_in_vela": [{"node": i, "op": nodes[i]["op"], "vela_reason": vela_cpu_nodes[i]["reason"]}
                             for i in only_vela],
        "vela_unmatched": unmatched,
    })
    return result


def default_models(shared):
    models = pathlib.Path(shared) / "models"
    return sorted(p for p in models.glob("*.tflite"))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--delegato", default=str(REPO / "build" / "delegato"))
    parser.add_argument("--shared", default=str(REPO.parent / "shared"))
    parser.add_argument("--models", nargs="*")
    parser.add_argument("--configs", nargs="*", default=list(CONFIGS))
    parser.add_argument("--json", help="write every result here")
    args = parser.parse_args()
    version = vela_version()
    if not version:
        print("vela not installed (pip install ethos-u-vela)", file=sys.stderr)
        return 2
    models = [pathlib.Path(m) for m in args.models] if args.models else default_models(args.shared)
    results, failed = [], 0
    for model in models:
        for config in args.configs:
            r = compare(args.delegato, model, config)
            r["vela_version"] = version
            results.append(r)
            if r["agree"] is None:
                print(f"vela-error {r['model']} {config}: {r['vela_error']} ({r['vela_seconds']} s)")
                continue
            status = "agree" if r["agree"] else "DIFFER"
            failed += not r["agree"]
            print(f"{status:6} {r['model']} {config}: NPU nodes plan {r['plan_npu_nodes']} / vela {r['vela_npu_nodes']} "
                  f"of {r['nodes_total']} ({r['vela_seconds']} s)")
            for d in r["cpu_only_in_plan"]:
                print(f"       CPU only in plan: node {d['node']} {d['op']}: {d['plan_reason'][:140]}")
            for d in r["cpu_only_in_vela"]:
                print(f"       CPU only in vela: node {d['node']} {d['op']}: {d['vela_reason'][:140]}")
            for d in r["vela_unmatched"]:
                print(f"       vela CPU op not matched to a node: {d}")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
