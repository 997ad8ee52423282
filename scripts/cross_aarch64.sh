#!/usr/bin/env bash
# The runtime on 64-bit ARM: builds util, graph and the runtime with their tests for
# aarch64 (Debian's cross toolchain and arm64 multiarch libraries;
# cmake/aarch64-linux-gnu.cmake) and runs the tests under qemu-user, where the SIMD
# kernels run their NEON target:
#   - every kernel against its naive reference, and every runtime test that needs no
#     planner (runtime_test; the session tests that go through plan-run's driver stay
#     on x86-64);
#   - every operator against ONNX Runtime's outputs, written beforehand by the
#     x86-64 build (runtime_ops_test --write-references): the cases and their inputs
#     are seeded, so both machines build the same ones.
#
#   scripts/cross_aarch64.sh [BUILD_DIR]    default: build-aarch64 (beside build/)
#
# Installs what it needs (scripts/bootstrap.sh --full) and builds the x86-64
# runtime_ops_test into build/ first. Prints ctest's summary; exits non-zero when a
# test fails. scripts/test.sh --full runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-aarch64}
start=$(date +%s)

bash scripts/bootstrap.sh --full

echo "== cross_aarch64.sh: ONNX Runtime's outputs for every operator case (x86-64)"
bash scripts/build.sh --configure-only
cmake --build build --parallel "$(nproc)" --target runtime_ops_test
references=$PWD/$build/ort_references
mkdir -p "$build"
build/bin/runtime_ops_test --write-references "$references" --gtest_brief=1

# libdnnl-dev and libonnx-dev (with libonnxifi) for arm64 cannot be installed beside
# their amd64 twins (files that differ per architecture in shared paths): unpacked
# into a folder of the build instead, their libraries' links pointed at the arm64
# runtime libraries multiarch installs (libdnnl2:arm64, libonnx1:arm64).
sysroot=$PWD/$build/sysroot
if [ ! -f "$sysroot/.complete" ]; then
  echo "== cross_aarch64.sh: unpacking libdnnl-dev, libonnx-dev and libonnxifi (arm64) into $build/sysroot/"
  rm -rf "$sysroot" "$build/debs"
  mkdir -p "$sysroot" "$build/debs"
  (cd "$build/debs" && apt-get download -q libdnnl-dev:arm64 libonnx-dev:arm64 libonnxifi:arm64 2>&1 | grep -v "^W: Download is performed unsandboxed" || true)
  for deb in "$build"/debs/*.deb; do dpkg-deb -x "$deb" "$sysroot"; done
  for link in "$sysroot"/usr/lib/aarch64-linux-gnu/*.so; do
    target=$(readlink "$link" || true)
    if [ -n "$target" ] && [ ! -e "$sysroot/usr/lib/aarch64-linux-gnu/$target" ]; then
      ln -sf "/usr/lib/aarch64-linux-gnu/$target" "$sysroot/usr/lib/aarch64-linux-gnu/$target"
    fi
  done
  touch "$sysroot/.complete"
fi

echo "== cross_aarch64.sh: configure and build for aarch64 into $build/"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DZP_AARCH64_SYSROOT="$sysroot" -DZP_RUNTIME_ONLY=ON \
  -DZP_ORT_REFERENCES="$references" >/dev/null
cmake --build "$build" --parallel "$(nproc)"

echo "== cross_aarch64.sh: the tests under qemu-user"
status=0
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" --timeout 3000 || status=$?
echo "== cross_aarch64.sh: $(( $(date +%s) - start )) s in all"
exit "$status"
