#!/usr/bin/env python3
"""Compares `delegato plan --target edgetpu` with real edgetpu_compiler outputs.

Each pair is <name>.tflite (the compiler's input) and edgetpu/<name>_edgetpu.tflite
(its output). In the compiled model every op the compiler mapped is replaced by
an `edgetpu-custom-op` node; the ops left outside are what it put on the CPU.
Agreement means: the multiset of CPU ops is equal and the number of TPU nodes
(custom ops) equals plan's delegate kernel count.

    scripts/edgetpu_compare.py [--delegato build/delegato] [--shared ../shared]
exits 1 when a pair disagrees.
"""
import argparse
import collections
import json
import pathlib
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
TPU_OP = "edgetpu-custom-op"


def compiled_ops(path):
    """Op names of a compiled model, in execution order (LiteRT reads them)."""
    from ai_edge_litert.interpreter import Interpreter
    interpreter = Interpreter(model_path=str(path))
    return [op["op_name"] for op in interpreter._get_ops_details()]


def plan(delegato, model, target="edgetpu"):
    proc = subprocess.run([delegato, "plan", f"--graph={model}", f"--target={target}", "--format=json"],
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"delegato plan failed on {model}: {proc.stderr.strip()}")
    return json.loads(proc.stdout)


def pairs(shared):
    """(source, compiled) for every compiled model whose input is in shared/models."""
    models = pathlib.Path(shared) / "models"
    out = []
    for compiled in sorted((models / "edgetpu").glob("*_edgetpu.tflite")):
        source = models / (compiled.name[: -len("_edgetpu.tflite")] + ".tflite")
        if source.exists():
            out.append((source, compiled))
    return out


def compare(delegato, source, compiled):
    """A dict describing the agreement of one pair."""
    ops = compiled_ops(compiled)
    compiler_cpu = collections.Counter(op for op in ops if op != TPU_OP)
    compiler_tpu_nodes = sum(op == TPU_OP for op in ops)
    p = plan(delegato, source)
    plan_cpu = collections.Counter(n["op"] for n in p["nodes"] if n["placement"] == "cpu")
    plan_tpu_nodes = p["delegate_kernels"]
    only_plan = plan_cpu - compiler_cpu
    only_compiler = compiler_cpu - plan_cpu
    return {
        "model": source.name,
        "compiled": compiled.name,
        "agree": not only_plan and not only_compiler and plan_tpu_nodes == compiler_tpu_nodes,
        "compiler_cpu": dict(sorted(compiler_cpu.items())),
        "plan_cpu": dict(sorted(plan_cpu.items())),
        "cpu_only_in_plan": dict(sorted(only_plan.items())),
        "cpu_only_in_compiler": dict(sorted(only_compiler.items())),
        "compiler_tpu_nodes": compiler_tpu_nodes,
        "plan_tpu_nodes": plan_tpu_nodes,
        "nodes_total": p["nodes_total"],
        "plan_nodes_delegated": p["nodes_delegated"],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--delegato", default=str(REPO / "build" / "delegato"))
    parser.add_argument("--shared", default=str(REPO.parent / "shared"))
    args = parser.parse_args()
    found = pairs(args.shared)
    if not found:
        print(f"no compiled pairs under {args.shared}/models/edgetpu", file=sys.stderr)
        return 2
    failed = 0
    for source, compiled in found:
        r = compare(args.delegato, source, compiled)
        status = "agree" if r["agree"] else "DIFFER"
        print(f"{status:6} {r['model']}: TPU nodes plan {r['plan_tpu_nodes']} / compiler {r['compiler_tpu_nodes']}, "
              f"CPU ops plan {sum(r['plan_cpu'].values())} / compiler {sum(r['compiler_cpu'].values())}")
        if not r["agree"]:
            failed += 1
            print(f"       CPU only in plan: {r['cpu_only_in_plan']}")
            print(f"       CPU only in compiler: {r['cpu_only_in_compiler']}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
