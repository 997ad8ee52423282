#!/usr/bin/env bash
# Configures (Release by default) and builds zooplan into build/; tools land in build/bin/.
#   scripts/build.sh                    configure when needed, then build
#   scripts/build.sh --configure-only   (re)configure only
#   scripts/build.sh --benches          also build the bench executables and
#                                       register their smoke runs in ctest
#                                       (-DZP_BENCHES=ON; without it, OFF)
#   scripts/build.sh --tools            build the command-line tools only (the
#                                       target `tools`), not the test suite
# Compiles through ccache when it is installed (CMakeLists.txt says how a clone
# in another folder shares the cache).
set -euo pipefail
cd "$(dirname "$0")/.."
configure_only=0
benches=OFF
target=()
for arg in "$@"; do
  case "$arg" in
    --configure-only) configure_only=1 ;;
    --benches) benches=ON ;;
    --tools) target=(--target tools) ;;
    *) echo "build.sh: unknown option '$arg' (known: --configure-only, --benches, --tools)" >&2; exit 2 ;;
  esac
done
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
if [ ! -f build/CMakeCache.txt ]; then
  cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DZP_BENCHES=$benches
elif [ $configure_only -eq 1 ] || ! grep -q "^ZP_BENCHES:BOOL=$benches$" build/CMakeCache.txt; then
  cmake -S . -B build -DZP_BENCHES=$benches >/dev/null
fi
[ $configure_only -eq 1 ] && exit 0
cmake --build build --parallel "$(nproc)" "${target[@]}"
