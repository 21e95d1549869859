#!/usr/bin/env bash
# The seeds' stories end to end on the shared models: plan (why is it slow?)
# -> fix -> plan again -> diff (accuracy kept), then the before/after table a
# user would paste in a bug report. Latencies are delegato's cost-model
# estimates, not measurements; accuracy is measured on random inputs with
# delegato's CPU kernels.
#   seed 000: int8 MobileNet V2 on the i.MX 8M Plus through NNAPI (vsi-npu refuses int8)
#   seed 003: MoveNet with float islands on the Pixel 6 through NNAPI
#   seed 004: DeepLab V3 on NNAPI 1.2 (RESIZE_BILINEAR align_corners, ARG_MAX int64, large AVERAGE_POOL_2D)
#     (DeepLab's diff is sampled: 2 runs)
#
#   scripts/story.sh [--delegato build/delegato] [--shared ../shared] [--markdown]
set -euo pipefail
cd "$(dirname "$0")/.."
DELEGATO="build/delegato"
SHARED="../shared"
MARKDOWN=0
while [ $# -gt 0 ]; do
  case "$1" in
    --delegato) DELEGATO="$2"; shift 2 ;;
    --shared) SHARED="$2"; shift 2 ;;
    --markdown) MARKDOWN=1; shift ;;
    *) echo "usage: scripts/story.sh [--delegato PATH] [--shared DIR] [--markdown]" >&2; exit 2 ;;
  esac
done
MODELS="$SHARED/models"
if [ ! -d "$MODELS" ]; then
  echo "story.sh: $MODELS not found: skipped" >&2
  exit 0
fi
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

stories=(
  "000 tf2_mobilenet_v2_1.0_224_ptq imx8mp-nnapi 3"
  "003 movenet_single_pose_lightning_ptq pixel6-nnapi 3"
  "004 deeplabv3_mnv2_dm05_pascal_quant nnapi-1.2 2"
)
for story in "${stories[@]}"; do
  read -r seed model target runs <<<"$story"
  in="$MODELS/$model.tflite"
  out="$WORK/$model.fixed.tflite"
  echo "== seed $seed: $model on $target" >&2
  "$DELEGATO" plan --graph "$in" --target "$target" --format json >"$WORK/$seed.before.json"
  "$DELEGATO" fix --graph "$in" --target "$target" -o "$out" --runs "$runs" \
    --report_json "$WORK/$seed.fix.json" >"$WORK/$seed.fix.txt"
  "$DELEGATO" plan --graph "$out" --target "$target" --format json >"$WORK/$seed.after.json"
  # diff needs the same interface; a fix that changes an output type is checked by fix's own comparison.
  if "$DELEGATO" diff --graph "$in" --test_graph "$out" --num_runs "$runs" --invocations_per_run 1 \
      >"$WORK/$seed.diff.txt" 2>&1; then
    echo ok >"$WORK/$seed.diff.rc"
  else
    echo failed >"$WORK/$seed.diff.rc"
  fi
done

python3 - "$WORK" "$MARKDOWN" <<'EOF'
import json, pathlib, re, sys
work, markdown = pathlib.Path(sys.argv[1]), sys.argv[2] == "1"
rows = []
for seed in ("000", "003", "004"):
    before = json.loads((work / f"{seed}.before.json").read_text())
    after = json.loads((work / f"{seed}.after.json").read_text())
    fix = json.loads((work / f"{seed}.fix.json").read_text())
    b, a = before["alternatives"], after["alternatives"]
    ms = lambda e: f"{e['total_us'] / 1000:.2f}" + ("*" if e["uses_placeholders"] else "")
    outs = fix["accuracy"]["random"]["outputs"]
    acc = ", ".join(f"{100 * o['equal_fraction']:.1f}% equal" for o in outs)
    diff_text = (work / f"{seed}.diff.txt").read_text()
    if (work / f"{seed}.diff.rc").read_text().strip() == "ok":
        errs = re.findall(r"OutputDiff\[\d+\]: avg_error=([0-9.e+-]+)", diff_text)
        diff = "avg_error " + ", ".join(f"{float(e):.3g}" for e in errs)
    else:
        diff = "interface changed (fix compares)"
    passes = ",".join(p["pass"] for p in fix["passes"] if p.get("changes"))
    rows.append([seed, pathlib.Path(before["model"]).stem, before["target"],
                 f"{before['nodes_delegated']}/{before['nodes_total']} in {before['delegate_kernels']}",
                 ms(b["greedy"]), ms(b["cost"]), ms(b["cpu_only"]), passes or "none",
                 f"{after['nodes_delegated']}/{after['nodes_total']} in {after['delegate_kernels']}",
                 ms(a["greedy"]), acc, diff])
head = ["seed", "model", "target", "before: accel nodes / partitions", "greedy ms", "cost-aware ms",
        "CPU-only ms", "fix passes", "after: accel nodes / partitions", "after greedy ms", "accuracy (fix)",
        "diff"]
if markdown:
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print("| " + " | ".join(r) + " |")
else:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    for line in [head] + rows:
        print("  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip())
print("\nms: cost-model estimates, not measurements; * rests on placeholder numbers of the target "
      "(docs/cost_model.md). accuracy: original vs fixed model on random inputs, delegato CPU kernels.")
EOF
