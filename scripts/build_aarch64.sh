#!/usr/bin/env bash
# Cross-builds delegato for 64-bit Arm Linux (aarch64) on a Debian 12 x86-64
# host, into build-aarch64/: the library, the CLI (delegato), time_model, the
# unit tests and the TFLite delegate plugin (libdelegato_delegate.so).
# Installs what is missing: Debian's cross toolchain, qemu-user (to run the
# tests, scripts/test_aarch64.sh) and the arm64 multiarch -dev packages linked
# against (flatbuffers, GoogleTest).
#   BUILD_DIR (default build-aarch64); JOBS (default nproc); any arguments go
#   to cmake's configure step (e.g. -DDELEGATO_BUILD_TESTS=OFF).
# The Python extension is not cross-built (it would need an arm64 Python and
# pybind11 environment); build it on the board with `pip install .`.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${BUILD_DIR:-build-aarch64}"
JOBS="${JOBS:-$(nproc)}"

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
PACKAGES=(
  cmake make ccache flatbuffers-compiler    # host tools (flatc runs on the host)
  crossbuild-essential-arm64                # aarch64-linux-gnu-g++ and the arm64 libc
  qemu-user                                 # qemu-aarch64: runs the tests
  libflatbuffers-dev:arm64 libgtest-dev:arm64 libgmock-dev:arm64
  nlohmann-json3-dev                        # headers only (any architecture)
)
missing=()
for pkg in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "installing Debian packages: ${missing[*]}"
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    $SUDO dpkg --add-architecture arm64
  fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -o DPkg::Lock::Timeout=600 -y -qq \
    "${missing[@]}" >/dev/null
fi

# ccache: paths relative to the checkout (as scripts/test.sh does).
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1 CCACHE_SLOPPINESS=time_macros
echo "note: the Python extension is not cross-built (build it on the board: pip install .)"
cmake -S . -B "$BUILD_DIR" -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/aarch64-linux-gnu.cmake" \
  -DCMAKE_BUILD_TYPE=Release -DDELEGATO_PYTHON=OFF "$@" >/dev/null
cmake --build "$BUILD_DIR" -j"$JOBS"
file "$BUILD_DIR/delegato" "$BUILD_DIR/libdelegato_delegate.so"
