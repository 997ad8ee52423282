// Linked into the runtime's tests when they run under an emulator (the aarch64 cross
// build under qemu-user, scripts/cross_aarch64.sh): qemu-user 7.2 hangs starting a
// thread on some hosts (a 6.18 kernel here). So every parallel loop runs on its
// caller, in the chunks it would have on any thread count, a session starts no GEMM
// warm-up thread, and OpenMP (oneDNN's) keeps its regions on the calling thread.
// Tests that start threads of their own stay out of that build.
#include <omp.h>

#include "libplan/runtime/kernels/parallel.h"

namespace {
const bool kOneThread = (zp::runtime::capHelperThreads(0), omp_set_num_threads(1), true);
}  // namespace
