// How a harness declares its entry point. Built with libFuzzer (ZP_FUZZ=ON) the
// macro defines LLVMFuzzerTestOneInput; built into the replay driver
// (fuzz_replay, any compiler) it registers the body under its name, so the seed
// and regression corpora run in every build, sanitized or not.
#pragma once
#include <cstddef>
#include <cstdint>

namespace zp::fuzz {

using TargetFn = int (*)(const uint8_t* data, size_t size);
bool registerTarget(const char* name, TargetFn fn);

}  // namespace zp::fuzz

#ifdef ZP_FUZZ_REPLAY
#define ZP_FUZZ_TARGET(name)                                                                  \
  static int zpFuzzTarget_##name(const uint8_t* data, size_t size);                          \
  [[maybe_unused]] static const bool zpFuzzRegistered_##name =                               \
      zp::fuzz::registerTarget(#name, zpFuzzTarget_##name);                                  \
  static int zpFuzzTarget_##name(const uint8_t* data, size_t size)
#else
#define ZP_FUZZ_TARGET(name) extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
#endif
