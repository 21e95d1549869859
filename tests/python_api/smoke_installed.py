"""Smoke test of an installed delegato package (scripts/test.sh runs it with
the python of a fresh venv after `pip install .`): the import comes from
site-packages, the `delegato` console script runs, a model runs through the
drop-in interpreter (CPU and an emulated target) and plan() answers."""
import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

import delegato
from delegato.interpreter import Interpreter, OpResolverType

source_tree = pathlib.Path(__file__).resolve().parents[2]
installed = pathlib.Path(delegato.__file__).resolve()
# The venv may sit inside the checkout (build-venv/): what matters is that the
# package comes from site-packages, not from the source tree's python/.
assert "site-packages" in installed.parts and (source_tree / "python") not in installed.parents, \
    f"imported from the source tree: {delegato.__file__}"
cli = pathlib.Path(sys.executable).with_name("delegato")
version = subprocess.run([str(cli), "--version"], capture_output=True, text=True, check=True).stdout
assert version.strip() == "delegato " + delegato.__version__, version

with tempfile.TemporaryDirectory() as tmp:
    model = os.path.join(tmp, "demo.tflite")
    subprocess.run([str(cli), "generate", "-o", model], check=True, capture_output=True)
    outputs = []
    for kwargs in ({}, {"target": "imx8mp-vx"}):
        interp = Interpreter(model_path=model, experimental_op_resolver_type=OpResolverType.BUILTIN_REF, **kwargs)
        interp.allocate_tensors()
        d = interp.get_input_details()[0]
        interp.set_tensor(d["index"], np.arange(np.prod(d["shape"])).reshape(d["shape"]).astype(d["dtype"]))
        interp.invoke()
        outputs.append(interp.get_tensor(interp.get_output_details()[0]["index"]))
    assert np.array_equal(outputs[0], outputs[1])
    # The wheel ships the delegate plugin; delegato hosts it like any TFLite plugin.
    plugin = delegato.plugin_path()
    assert pathlib.Path(plugin).resolve().parent == pathlib.Path(delegato.__file__).resolve().parent, plugin
    from delegato.interpreter import load_delegate
    interp = Interpreter(model_path=model,
                         experimental_delegates=[load_delegate(plugin, {"target": "imx8mp-vx"})])
    interp.allocate_tensors()
    d = interp.get_input_details()[0]
    interp.set_tensor(d["index"], np.arange(np.prod(d["shape"])).reshape(d["shape"]).astype(d["dtype"]))
    interp.invoke()
    assert np.array_equal(interp.get_tensor(interp.get_output_details()[0]["index"]), outputs[0])
    plan = delegato.plan(model, "imx8mp-vx")
    assert plan.nodes and plan.to_html().startswith("<!DOCTYPE html>")
print(f"installed delegato {delegato.__version__} OK: {delegato.__file__}; {plan.summary}")
