#!/usr/bin/env python3
"""Writes docs/ops.md: every op of delegato's op table with the tensor types and versions
its single-op cases verified against LiteRT (BUILTIN_REF), and every op of LiteRT's
reference resolver delegato lacks, with the reason.

Inputs:
  - `delegato ops --format json` (the op table, src/ops/op_list.inc);
  - the replay results of tests/conformance/test_single_ops.py (<cases>/results.json);
  - ../shared/docs/litert-reference-ops.md (the reference resolver's op list).

  scripts/ops_doc.py --results build/op_cases/results.json [--delegato build/delegato]
                     [--reference ../shared/docs/litert-reference-ops.md] [-o docs/ops.md]
"""
from __future__ import annotations

import argparse
import collections
import json
import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# Why an op of the reference resolver is missing, where a reason is known.
_STABLEHLO = ("not implemented: StableHLO ops come from the experimental StableHLO/JAX lowering "
              "path; TFLiteConverter on Keras models and SavedModels does not emit them")
_HASHING = ("not implemented: legacy text-model op (hashing / sparse lookups of the TF 1.x era) that "
            "current converters do not emit")
_COMPLEX = "not implemented: needs COMPLEX64 tensors, which delegato does not represent"
_RANDOM = ("not implemented: a random op has no bit-exact reference to check against; "
           "inference graphs seldom carry one")
MISSING_REASONS = {
    **{op: _STABLEHLO for op in (
        "STABLEHLO_ADD", "STABLEHLO_COMPOSITE", "STABLEHLO_GATHER", "STABLEHLO_MAXIMUM",
        "STABLEHLO_MINIMUM", "STABLEHLO_MULTIPLY", "STABLEHLO_PAD", "STABLEHLO_REDUCE_WINDOW",
        "STABLEHLO_RNG_BIT_GENERATOR", "STABLEHLO_SCATTER")},
    "DILATE": "not implemented: the TFLite form of StableHLO's dilation, emitted only by that lowering path",
    "REDUCE_WINDOW": "not implemented: the TFLite form of StableHLO's reduce_window, emitted only by that lowering path",
    **{op: _HASHING for op in ("LSH_PROJECTION", "SKIP_GRAM", "HASHTABLE_LOOKUP",
                               "EMBEDDING_LOOKUP_SPARSE")},
    **{op: _COMPLEX for op in ("COMPLEX_ABS", "REAL", "IMAG", "RFFT2D")},
    **{op: _RANDOM for op in ("MULTINOMIAL", "RANDOM_STANDARD_NORMAL", "RANDOM_UNIFORM")},
    "FAKE_QUANT": ("not implemented: the converter folds fake-quantization into quantization "
                   "parameters; it survives only in legacy quantization-aware-training graphs"),
    "DENSIFY": ("not implemented: sparse (block-sparse) weights; the converter writes them only "
                "when sparsity encoding is requested"),
}
NOT_YET = "not yet implemented"

# What an op version needs (TFLite's op versioning rules, mirrored by src/model/op_version.cc),
# for the versions of the table's range that no single-op case verifies: the reason the
# doc shows. Versions no rule yields are registered by LiteRT for kernels the converter
# never names by version; nothing a converter writes carries them.
_INT4 = "int4 tensors, which delegato does not represent"
_STRING = "string tensors, which delegato does not represent"
NO_CASE_YET_TEXT = "no single-op case yet"
_NO_RULE = "no TFLite versioning rule yields this version (no converter output carries it)"
VERSION_NEEDS: dict[tuple[str, int], str] = {
    ("CONV_2D", 7): "int4 filter: " + _INT4,
    ("CONV_2D", 8): "int16x8 with the quantized_bias_type option",
    ("DEPTHWISE_CONV_2D", 4): ("hybrid with one filter scale for all channels: delegato's hybrid "
                               "kernel needs one scale per output channel (version 6)"),
    ("DEPTHWISE_CONV_2D", 7): "int4 filter: " + _INT4,
    ("FULLY_CONNECTED", 2): "SHUFFLED4x16INT8 weights format",
    ("FULLY_CONNECTED", 8): "sparse weights, which delegato recognises but does not execute",
    ("FULLY_CONNECTED", 10): "int4 weights: " + _INT4,
    ("FULLY_CONNECTED", 11): "int16x8 with the quantized_bias_type option",
    ("FULLY_CONNECTED", 13): "int16 activations with int4 weights: " + _INT4,
    ("GATHER", 7): "int4 params: " + _INT4,
    ("TRANSPOSE", 7): "int4 input: " + _INT4,
    ("MUL", 6): "complex64 inputs, which delegato does not represent",
    ("SLICE", 3): "string input: " + _STRING,
    ("STRIDED_SLICE", 5): "string input: " + _STRING,
    ("GATHER_ND", 2): "string params: " + _STRING,
    ("EQUAL", 3): "string inputs: " + _STRING,
    ("NOT_EQUAL", 3): "string inputs: " + _STRING,
    ("SQUEEZE", 2): "string input: " + _STRING,
    ("TILE", 2): "string input: " + _STRING,
    ("QUANTIZE", 4): "int4 input or output: " + _INT4,
    ("DEQUANTIZE", 6): "int4 input: " + _INT4,
    ("CAST", 6): "int4 input: " + _INT4,
    ("CAST", 7): "bfloat16, which delegato does not represent",
    ("EMBEDDING_LOOKUP", 4): "int4 or per-channel quantized values",
    ("LSTM", 2): "the BASIC kernel type, which delegato does not implement",
    ("UNIDIRECTIONAL_SEQUENCE_LSTM", 4): ("diagonal recurrent weights (diagonal_recurrent_tensors), "
                                          "which delegato does not implement"),
    ("TRANSPOSE_CONV", 5): ("int16x8 with the quantized_bias_type option, which delegato's "
                            "TRANSPOSE_CONV options do not carry"),
    ("SELECT", 2): ("the rule asks for an int8 input 0, which is SELECT's bool condition: "
                    "no node needs this version"),
    **{key: _NO_RULE for key in (
        ("SLICE", 7), ("CONCATENATION", 5), ("DEQUANTIZE", 4), ("DEQUANTIZE", 7), ("DEQUANTIZE", 8),
        ("QUANTIZE", 5), ("CAST", 8), ("EQUAL", 5), ("NOT_EQUAL", 4), ("SQRT", 2),
        ("EMBEDDING_LOOKUP", 2), ("EMBEDDING_LOOKUP", 3), ("DYNAMIC_UPDATE_SLICE", 5))},
}
NO_CASE_YET = NO_CASE_YET_TEXT

# Input types that LiteRT 2.3's reference kernels accept (measured with single-op models in
# LiteRT, BUILTIN_REF) and delegato refuses at load time: (ops, types, why).
_COMPARISONS = "EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER, GREATER_EQUAL"
TYPE_GAPS: list[tuple[str, str, str]] = [
    ("NOT_EQUAL", "INT16 without quantization",
     "LiteRT accepts the node but leaves the output unwritten (its values change from run to run "
     "and follow whatever the arena held), so there is no answer to match; delegato refuses it. "
     "EQUAL and the ordering comparisons on unquantized INT16 are implemented and verified"),
    (_COMPARISONS, "FLOAT16",
     "LiteRT's reference comparisons accept FLOAT16 inputs; delegato has no float16 arithmetic "
     "(converters write float16 only as constant weights ahead of a DEQUANTIZE, which delegato runs)"),
    ("ADD, ATAN2, CAST (from), COS, FLOOR, GELU, MAXIMUM, MINIMUM, NEG, SIN", "FLOAT16",
     "LiteRT runs them on FLOAT16 tensors; delegato has no float16 arithmetic"),
    ("MATRIX_DIAG, MATRIX_SET_DIAG", "FLOAT16, UINT16",
     "LiteRT 2.3 accepts them but writes the values in a row, not on the diagonal (MATRIX_DIAG "
     "of [1, -2] gives [[1, -2], [0, 0]]), so there is no answer to match; delegato refuses them "
     "(UINT32, which LiteRT places correctly, is implemented)"),
    ("SPLIT", "UINT32", "a copy; not admitted yet (its type check is shared with GATHER and "
     "EXPAND_DIMS, whose LiteRT kernels were not probed for UINT32)"),
    ("REDUCE_MAX, REDUCE_MIN, REDUCE_PROD, SUM", "BOOL",
     "LiteRT's reference kernels run them on BOOL (what they compute was not checked); "
     "delegato refuses BOOL reductions other than REDUCE_ANY / REDUCE_ALL"),
    ("BIDIRECTIONAL_SEQUENCE_LSTM", "FLOAT32 input with INT8 weights (hybrid)",
     "delegato implements the float form only; the hybrid form is refused at load time"),
]


def reference_ops(path: Path) -> list[str]:
    return [m.group(1) for m in re.finditer(r"^- \[[ x]\] (\S+)", path.read_text(), re.M)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=REPO / "build" / "op_cases" / "results.json")
    parser.add_argument("--delegato", type=Path, default=REPO / "build" / "delegato")
    parser.add_argument("--reference", type=Path,
                        default=REPO.parent / "shared" / "docs" / "litert-reference-ops.md")
    parser.add_argument("-o", "--output", type=Path, default=REPO / "docs" / "ops.md")
    args = parser.parse_args()

    table = json.loads(subprocess.run([str(args.delegato), "ops", "--format", "json"], check=True,
                                      capture_output=True, text=True).stdout)
    results = json.loads(args.results.read_text())
    reference = reference_ops(args.reference)

    matched = collections.defaultdict(int)
    cases = collections.defaultdict(int)
    types = collections.defaultdict(set)
    versions = collections.defaultdict(set)
    default_only = collections.defaultdict(set)  # verified with LiteRT's default kernels
    ref_versions = collections.defaultdict(set)  # verified with its reference kernels
    kernels = collections.defaultdict(set)
    other = collections.defaultdict(collections.Counter)
    for r in results:
        names = {op["name"] for op in r.get("ops", [])}
        for op in r.get("ops", []):
            name = op["name"]
            cases[name] += 1
            if r["status"] == "match":
                matched[name] += 1
                # A version counts as verified where the node's types, shapes and options
                # need it (cases that state a higher version verify nothing more).
                if op.get("needed", op["version"]) == op["version"]:
                    versions[name].add(op["version"])
                    (default_only if r.get("reference_lacks_version") else ref_versions)[name].add(op["version"])
                kernels[name].add(r["kernels"])
                if len(names) == 1:  # types of multi-op cases belong to no single op
                    types[name].update(t.lower() for t in r["types"])
            elif r["status"] == "litert_aborts" and r.get("fallback", {}).get("status") == "match":
                other[name]["reference kernel aborts, default kernels match"] += 1
            else:
                other[name][r["status"]] += 1

    builtins = [e for e in table if e["kind"] == "builtin"]
    unverified = {}
    for entry in builtins:
        gaps = [v for v in range(entry["min_version"], entry["max_version"] + 1)
                if v not in versions[entry["name"]]]
        if gaps:
            unverified[entry["name"]] = gaps
    complete = len(builtins) - len(unverified)

    lines = [
        "# Ops",
        "",
        "Generated by `scripts/ops_doc.py` from the op table (`delegato ops --format json`, i.e.",
        "`src/ops/op_list.inc`), the single-op cases of the unit tests replayed in LiteRT's reference",
        "kernels (`tests/conformance/test_single_ops.py`) and LiteRT's reference op list. Do not edit by hand.",
        "",
        "A case is one OpModel interpreter of a unit test (model written by delegato's writer, every",
        "invoke replayed in LiteRT `BUILTIN_REF`): integer and bool outputs must be equal, float outputs",
        "within rtol 1e-5 / atol 1e-6 (per-op exceptions are listed in the test). Where LiteRT's",
        "reference kernel aborts the process, the case is compared with LiteRT's default kernels",
        "(`BUILTIN_WITHOUT_DEFAULT_DELEGATES`) instead and counted apart.",
        "\"Tensor types\" are the input and output types of the single-op cases that matched;",
        "\"versions verified\" are the op versions those cases used, out of the table's range.",
        "Each case carries the version TFLite's converter gives its node (`src/model/op_version.cc`,",
        "TFLite's versioning rules), so a version is verified by a case whose types, shapes or",
        "options need it (the case records that version next to the one its model states; where",
        "they differ the case does not count for the version). Versions of the range no case",
        "verifies are listed after the table with what they need. A version marked * is one",
        "LiteRT's reference resolver does not register (it registers fewer versions of some ops than",
        "the default resolver); its cases were compared with LiteRT's default kernels instead.",
        "",
        f"## Implemented ({len(table)} table entries)",
        "",
        f"Builtins with every version of the table's range verified: {complete} of {len(builtins)}.",
        "",
        "| op | kind | versions (table) | versions verified | tensor types verified | cases matched | kernel sets |",
        "|---|---|---|---|---|---|---|",
    ]
    for entry in sorted(table, key=lambda e: e["name"]):
        name = entry["name"]
        note = ""
        if other[name]:
            note = " (" + ", ".join(f"{n} {s}" for s, n in sorted(other[name].items())) + ")"
        lines.append(
            f"| {name} | {entry['kind']} | {entry['min_version']}-{entry['max_version']} | "
            f"{', '.join(f'{v}*' if v not in ref_versions[name] else str(v) for v in sorted(versions[name])) or '-'} | "
            f"{', '.join(sorted(types[name])) or '-'} | {matched[name]}/{cases[name]}{note} | "
            f"{', '.join(sorted(kernels[name])) or '-'} |")

    lines += [
        "",
        f"## Versions not verified ({sum(map(len, unverified.values()))} versions of "
        f"{len(unverified)} builtins)",
        "",
        "| op | version | needs |",
        "|---|---|---|",
    ]
    for name in sorted(unverified):
        for v in unverified[name]:
            lines.append(f"| {name} | {v} | {VERSION_NEEDS.get((name, v), NO_CASE_YET)} |")

    lines += [
        "",
        f"## Types not implemented ({len(TYPE_GAPS)} rows found)",
        "",
        "Input types that LiteRT's reference kernels accept and delegato refuses at load time. Found by",
        "taking one single-op case per op, giving its first input (and the graph inputs and outputs of",
        "the same type) each of BOOL, UINT8, INT8, INT16, UINT16, INT32, UINT32, INT64, FLOAT32 and",
        "FLOAT16, and running it in LiteRT (`BUILTIN_REF`) and through `delegato inspect`. So only",
        "the type of that first input was varied (an op's other inputs and its option branches keep the",
        "case's types), and the list is not exhaustive. Not listed: INT8 / UINT8 / INT16 tensors",
        "without quantization on ops that LiteRT defines for quantized tensors only (several run",
        "there with a zero scale; no converter writes such tensors; delegato requires the",
        "quantization). Comparisons on unquantized INT8 / UINT8 are not a gap either: LiteRT's",
        "reference kernel aborts on them, delegato refuses them.",
        "",
        "| op | types | why |",
        "|---|---|---|",
    ]
    lines += [f"| {ops} | {types_} | {why} |" for ops, types_, why in TYPE_GAPS]

    implemented = {e["name"] for e in table}
    missing = [op for op in reference if op not in implemented]
    lines += [
        "",
        f"## Missing: {len(missing)} of the {len(reference)} builtins of LiteRT's reference resolver",
        "",
        "A model using one of these fails at load time with an error naming the node, op, version and",
        "tensor types; `delegato inspect` lists every such node of a model.",
        "",
        "| op | reason |",
        "|---|---|",
    ]
    lines += [f"| {op} | {MISSING_REASONS.get(op, NOT_YET)} |" for op in missing]
    args.output.write_text("\n".join(lines) + "\n")
    print(f"wrote {args.output}: {len(table)} implemented ({complete} of {len(builtins)} builtins with "
          f"every version verified), {len(missing)} missing")


if __name__ == "__main__":
    main()
