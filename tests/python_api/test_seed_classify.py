"""The classification script of a tflite_runtime user (load_delegate,
Interpreter(experimental_delegates=...), set_tensor, invoke, get_tensor),
run once per runtime: the programs differ only by their import line and give
the same top-5 on a real photo."""
import os
import pathlib
import subprocess
import sys

import pytest

pytest.importorskip("ai_edge_litert.interpreter")

pytest.importorskip("delegato._core", reason="delegato._core not built (cmake -DDELEGATO_PYTHON=ON, target _core) nor installed")
REPO = pathlib.Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
MODEL = SHARED / "models" / "mobilenet_v2_1.0_224_quant.tflite"
IMAGE = SHARED / "images" / "cat.bmp"
LABELS = SHARED / "images" / "imagenet_labels.txt"

PROGRAM = '''
import sys
import numpy as np
{import_line}


def read_bmp(path):
    """24-bit uncompressed BMP -> HxWx3 RGB uint8."""
    data = open(path, "rb").read()
    offset = int.from_bytes(data[10:14], "little")
    width = int.from_bytes(data[18:22], "little", signed=True)
    height = int.from_bytes(data[22:26], "little", signed=True)
    row = (width * 3 + 3) // 4 * 4
    pixels = np.frombuffer(data, np.uint8, row * abs(height), offset).reshape(abs(height), row)
    image = pixels[:, :width * 3].reshape(abs(height), width, 3)[:, :, ::-1]
    return image[::-1] if height > 0 else image


model_path, image_path, labels_path = sys.argv[1:4]
delegates = []
if len(sys.argv) > 4:
    delegates = [tflite.load_delegate(library=sys.argv[4], options={{"target": sys.argv[5]}})]
interpreter = tflite.Interpreter(model_path=model_path, experimental_delegates=delegates)
interpreter.allocate_tensors()
input_details = interpreter.get_input_details()
output_details = interpreter.get_output_details()
_, height, width, _ = input_details[0]["shape"]
image = read_bmp(image_path)
rows = np.arange(height) * image.shape[0] // height
cols = np.arange(width) * image.shape[1] // width
input_data = image[rows][:, cols][np.newaxis].astype(input_details[0]["dtype"])
interpreter.set_tensor(input_details[0]["index"], input_data)
interpreter.invoke()
output_data = interpreter.get_tensor(output_details[0]["index"])[0]
labels = [line.strip() for line in open(labels_path)]
for i in np.argsort(-output_data.astype(np.int64), kind="stable")[:5]:
    print(i, labels[i] if i < len(labels) else "")
'''


def run(import_line, *extra):
    repo = pathlib.Path(__file__).resolve().parents[2]
    env = dict(os.environ)
    if os.environ.get("DELEGATO_TEST_INSTALLED") != "1":
        env["PYTHONPATH"] = os.pathsep.join([str(repo / "python"), env.get("PYTHONPATH", "")])
    result = subprocess.run([sys.executable, "-c", PROGRAM.format(import_line=import_line), str(MODEL),
                             str(IMAGE), str(LABELS), *extra], capture_output=True, text=True, env=env,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_same_top5_as_litert():
    if not (MODEL.exists() and IMAGE.exists() and LABELS.exists()):
        pytest.skip("shared model/image/labels missing")
    theirs = run("import ai_edge_litert.interpreter as tflite")
    ours = run("import delegato.interpreter as tflite")
    assert len(theirs) == 5
    assert ours == theirs
    # The same script with delegato's plugin (the real load_delegate path: the
    # library is loaded, created with the options and applied), in delegato
    # and in LiteRT: same top-5.
    plugin = pathlib.Path(os.environ.get("DELEGATO_PLUGIN", REPO / "build" / "libdelegato_delegate.so"))
    if not plugin.exists():
        pytest.skip(f"plugin not found at {plugin} (build target delegato_delegate or set DELEGATO_PLUGIN)")
    assert run("import ai_edge_litert.interpreter as tflite", str(plugin), "imx8mp-vx") == theirs
    assert run("import delegato.interpreter as tflite", str(plugin), "imx8mp-vx") == theirs
