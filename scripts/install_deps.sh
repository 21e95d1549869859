#!/usr/bin/env bash
# Installs what delegato builds and tests with on Debian 12: the compiler
# toolchain and libraries from Debian, the test oracle (LiteRT) from PyPI.
# Safe to re-run: it installs only what is missing.
#   scripts/install_deps.sh --zoo installs only tensorflow-cpu and tf-keras, the
#   test-only dependencies of the converter-made zoo (scripts/make_zoo.py), which
#   scripts/test.sh's zoo stage asks for; it exits 1 with a message when it
#   cannot (tests/conformance/test_zoo.py then skips).
set -euo pipefail

if [ "${1:-}" = "--zoo" ]; then
  # tf-keras (Keras 2) makes the zoo's fused-LSTM model; without it that one
  # model is recorded as not generated. It is installed without dependencies:
  # it names the `tensorflow` distribution, which would add a second copy of
  # TensorFlow beside tensorflow-cpu; its version follows TensorFlow's.
  pip_install() {
    python3 -m pip install -q "$@" 2>/dev/null ||
      python3 -m pip install -q --break-system-packages "$@" 2>/dev/null
  }
  if ! python3 -c "import tensorflow" 2>/dev/null; then
    echo "installing Python package: tensorflow-cpu (the zoo stage only)"
    if ! pip_install tensorflow-cpu; then
      echo "tensorflow-cpu could not be installed: the converter-made zoo is skipped"
      exit 1
    fi
  fi
  if ! python3 -c "import tf_keras" 2>/dev/null; then
    tf_minor="$(python3 -c "import tensorflow as tf; print('.'.join(tf.__version__.split('.')[:2]))")"
    echo "installing Python package: tf-keras ~= $tf_minor.0 (the zoo stage only)"
    pip_install --no-deps "tf-keras~=$tf_minor.0" ||
      echo "tf-keras could not be installed: the zoo's tf_keras LSTM model is skipped"
  fi
  exit 0
fi

DEBIAN_PACKAGES=(
  cmake g++ clang make            # C++20 build; clang for the libFuzzer target
  ccache                          # the build trees of one run share compiled objects
  libclang-rt-14-dev              # libFuzzer + sanitizer runtimes for clang
  libflatbuffers-dev flatbuffers-compiler   # the .tflite format (schema compiled by flatc)
  libgtest-dev libgmock-dev       # unit tests
  libbenchmark-dev                # micro-benchmarks
  nlohmann-json3-dev              # accelerator target files (JSON)
  python3 python3-pip             # conformance tests against LiteRT
  python3-dev python3-venv        # the Python extension; CI's `pip install .` into a fresh venv
  chromium                        # a test renders `plan --html` headless
)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

missing=()
for pkg in "${DEBIAN_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "installing Debian packages: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Python: LiteRT is the oracle for conformance tests; numpy and pytest drive them;
# pybind11 builds the extension in a CMake build tree (`pip install .` fetches
# its own build requirements, scikit-build-core and pybind11, from PyPI).
PY_PACKAGES=(ai-edge-litert numpy pytest pybind11)
if ! python3 -c "import ai_edge_litert, numpy, pytest, pybind11" 2>/dev/null; then
  echo "installing Python packages: ${PY_PACKAGES[*]}"
  python3 -m pip install -q "${PY_PACKAGES[@]}" 2>/dev/null ||
    python3 -m pip install -q --break-system-packages "${PY_PACKAGES[@]}"
fi

# atheris fuzzes the Python API's arguments (fuzz/python_api_fuzz.py); the
# fuzz stage skips it with a message when it cannot be installed.
if ! python3 -c "import atheris" 2>/dev/null; then
  echo "installing Python package: atheris"
  python3 -m pip install -q atheris 2>/dev/null ||
    python3 -m pip install -q --break-system-packages atheris 2>/dev/null ||
    echo "atheris could not be installed: the Python API fuzz stage will be skipped"
fi

# Vela (Arm's Ethos-U compiler) is the oracle the ethos-u55/u65/u85 targets are
# checked against (scripts/vela_compare.py, tests/python/test_vela.py).
if ! command -v vela >/dev/null 2>&1; then
  echo "installing Python package: ethos-u-vela"
  python3 -m pip install -q ethos-u-vela 2>/dev/null ||
    python3 -m pip install -q --break-system-packages ethos-u-vela
fi
