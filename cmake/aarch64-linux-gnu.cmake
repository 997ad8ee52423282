# Cross-compiling for 64-bit ARM (aarch64) with Debian's toolchain
# (g++-aarch64-linux-gnu) against the arm64 libraries of Debian's multiarch
# (libonnx-dev:arm64, ...): headers in /usr/include, libraries in
# /usr/lib/aarch64-linux-gnu. Test binaries run under qemu-user. Used by
# scripts/cross_aarch64.sh.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# Programs (protoc) are the build machine's; libraries and packages the target's.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu /)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# The loader and libc of the cross toolchain; the multiarch libraries from their own
# directory, which the loader searches anyway.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/aarch64-linux-gnu)
