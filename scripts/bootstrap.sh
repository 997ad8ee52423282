#!/usr/bin/env bash
# Installs what zooplan needs on Debian 12: build tools and libraries from apt,
# and the ONNX Runtime reference (onnxruntime-node) from npm. Idempotent and
# quick when everything is present.
#   scripts/bootstrap.sh          what the build, the demo and scripts/test.sh need
#   scripts/bootstrap.sh --full   also clang and its fuzzer and sanitizer runtimes
#                                 (scripts/test.sh --full, fuzz.sh, sanitize.sh --clang)
#                                 and what scripts/cross_aarch64.sh needs: the
#                                 aarch64 cross toolchain, qemu-user and the arm64
#                                 libraries (Debian multiarch, architecture arm64)
set -euo pipefail
cd "$(dirname "$0")/.."
full=0
if [ "${1:-}" = "--full" ]; then full=1; fi

packages=(
  build-essential cmake ninja-build pkg-config git ccache
  libonnx-dev libprotobuf-dev protobuf-compiler
  libz3-dev libcli11-dev libfmt-dev nlohmann-json3-dev universal-ctags
  libxgboost-dev xgboost libgtest-dev libdnnl-dev libblis-serial-dev libssl-dev libhwy-dev
  python3 python3-numpy python3-onnx python3-torch python3-torchvision python3-sklearn
  # Profiling on a cluster (scripts/slurm_profile.sh and its test): a one-node
  # Slurm with MUNGE authentication, and GNU parallel for the same shards.
  slurm-wlm munge parallel
)
# The fuzz harnesses (scripts/build_fuzz.sh): clang, its libFuzzer and
# sanitizer runtimes, and the OpenMP runtime the libraries link with under clang.
if [ $full -eq 1 ]; then packages+=(clang libclang-rt-14-dev libomp-dev); fi
# The aarch64 cross build of the runtime (scripts/cross_aarch64.sh).
# libdnnl-dev and libonnx-dev cannot be installed for arm64 beside amd64 (files that
# differ per architecture in shared paths): their runtime libraries here, the -dev
# packages unpacked by scripts/cross_aarch64.sh into its build folder.
aarch64_packages=(g++-aarch64-linux-gnu qemu-user
  libonnx1:arm64 libprotobuf-dev:arm64 libdnnl2:arm64 libblis-serial-dev:arm64 libhwy-dev:arm64
  libfmt-dev:arm64 libgtest-dev:arm64 libssl-dev:arm64)
if [ $full -eq 1 ]; then
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    echo "bootstrap: adding the arm64 architecture (Debian multiarch)"
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO dpkg --add-architecture arm64
  fi
  packages+=("${aarch64_packages[@]}")
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js may come from elsewhere than Debian (its npm then conflicts with Debian's).
command -v node >/dev/null && command -v npm >/dev/null || missing+=(nodejs npm)
if [ ${#missing[@]} -gt 0 ]; then
  echo "bootstrap: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# ONNX Runtime (CPU library inside the npm package) for reference checks.
ort_dir=tests/ort
if [ ! -f "$ort_dir/node_modules/onnxruntime-node/package.json" ]; then
  echo "bootstrap: installing onnxruntime-node into $ort_dir"
  # The lock file pins onnxruntime-node 1.30.0; its CPU library ships inside the package.
  npm ci --prefix "$ort_dir" --no-audit --no-fund --ignore-scripts >/dev/null
fi
echo "bootstrap: ok"
