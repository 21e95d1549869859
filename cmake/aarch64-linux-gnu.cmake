# Cross build for 64-bit Arm Linux with Debian's crossbuild-essential-arm64.
# Libraries come from Debian's arm64 multiarch packages (/usr/lib/aarch64-linux-gnu,
# headers shared in /usr/include); programs run at build time (flatc) are the host's.
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
# scripts/build_aarch64.sh installs what this needs and builds.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# Multiarch: search /usr/lib/aarch64-linux-gnu (never the host's x86_64 directory).
set(CMAKE_IGNORE_PATH /usr/lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu/cmake)
# Tests run under user-mode emulation (ctest, gtest discovery at build time);
# the environment variable QEMU_CPU picks the emulated CPU (cortex-a53, max, ...).
# The loader and libc must come from one glibc build: the programs link
# multiarch libraries (libflatbuffers:arm64), which pull in libc6:arm64, and
# ld.so finds that libc through the host's /etc/ld.so.cache. Pairing it with
# the cross package's older ld.so (-L /usr/aarch64-linux-gnu) corrupts the
# loader's state: pthread_create then loops forever in its stack cache. So
# with libc6:arm64 installed the emulator takes / as its prefix.
if(EXISTS /lib/ld-linux-aarch64.so.1)
  set(DELEGATO_AARCH64_LD_PREFIX /)
else()
  set(DELEGATO_AARCH64_LD_PREFIX /usr/aarch64-linux-gnu)
endif()
find_program(DELEGATO_QEMU_AARCH64 qemu-aarch64)
if(DELEGATO_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${DELEGATO_QEMU_AARCH64} -L ${DELEGATO_AARCH64_LD_PREFIX})
endif()
