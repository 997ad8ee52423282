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
# ZP_AARCH64_SYSROOT: the arm64 -dev packages Debian's multiarch cannot install
# beside their amd64 twins (libdnnl-dev's dnnl_config.h and libonnxifi's
# /usr/lib/libonnxifi.so differ per architecture), unpacked by
# scripts/cross_aarch64.sh; searched first.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES ZP_AARCH64_SYSROOT)
# The runtime names oneDNN as a plain library and includes its headers from the
# default paths: the unpacked arm64 ones come first (dnnl_config.h differs per
# architecture).
if(ZP_AARCH64_SYSROOT)
  set(CMAKE_CXX_FLAGS_INIT "-isystem ${ZP_AARCH64_SYSROOT}/usr/include")
  set(CMAKE_EXE_LINKER_FLAGS_INIT "-L${ZP_AARCH64_SYSROOT}/usr/lib/aarch64-linux-gnu")
  set(CMAKE_SHARED_LINKER_FLAGS_INIT "-L${ZP_AARCH64_SYSROOT}/usr/lib/aarch64-linux-gnu")
endif()
# Programs (protoc) are the build machine's; libraries and packages the target's.
set(CMAKE_FIND_ROOT_PATH ${ZP_AARCH64_SYSROOT} /usr/aarch64-linux-gnu /)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# pkg-config (FindOpenSSL asks it) reads the arm64 .pc files, not the build machine's.
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
# The loader and libc of the cross toolchain; the multiarch libraries from their own
# directory, which the loader searches anyway.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/aarch64-linux-gnu)
