#!/usr/bin/env bash
# Configures and builds the libFuzzer harnesses into build-fuzz/ with clang
# (ZP_FUZZ=ON: ASan + UBSan + libFuzzer coverage; only the target `fuzzers`,
# the harnesses and the libraries they link, is built), at -O1 with line tables
# only: what fuzzing needs, and the quickest sanitized build to compile.
# Exits 3 with a one-line notice when clang++ is not installed.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang++ >/dev/null; then
  echo "build_fuzz: clang++ not found; the fuzz harnesses need clang (scripts/bootstrap.sh --full installs it)" >&2
  exit 3
fi
if [ ! -f build-fuzz/CMakeCache.txt ]; then
  cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DZP_FUZZ=ON -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_FLAGS_RELEASE="-O1 -gline-tables-only" >/dev/null
fi
cmake --build build-fuzz --target fuzzers --parallel "$(nproc)"
