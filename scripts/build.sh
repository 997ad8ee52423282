#!/usr/bin/env bash
# Configures (Release by default) and builds zooplan into build/; tools land in build/bin/.
set -euo pipefail
cd "$(dirname "$0")/.."
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
if [ ! -f build/CMakeCache.txt ]; then
  cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=Release
fi
cmake --build build --parallel "$(nproc)"
