#include "libplan/runtime/kernels/gemm.h"

#include "libplan/runtime/kernels/parallel.h"

#include <fmt/format.h>
#include <oneapi/dnnl/dnnl.h>
#include <blis.h>

#include <algorithm>
#include <atomic>
#include <iterator>
#include <cassert>

#include <omp.h>

namespace zp::runtime {

// oneDNN runs on OpenMP's default team size; the runtime's own parallel regions
// name their thread counts, so one thread here keeps a GEMM from spawning its own.
// JIT profiling (VTune/perf registration of every generated kernel) is off: it costs
// a cold start several milliseconds and nothing here reads it.
void useSingleThreadedGemm() {
  static const bool configured = [] {
    dnnl_set_jit_profiling_flags(DNNL_JIT_PROFILE_NONE);
    return true;
  }();
  (void)configured;
  omp_set_num_threads(1);
}

const char* gemmLibraryKey(GemmLibrary g) {
  return g == GemmLibrary::Blis ? "blis" : "onednn";
}

bool parseGemmLibrary(const std::string& key, GemmLibrary* out) {
  for (GemmLibrary g : kAllGemmLibraries)
    if (key == gemmLibraryKey(g)) { *out = g; return true; }
  return false;
}

std::string gemmLibraryName(GemmLibrary gemm) {
  if (gemm == GemmLibrary::Blis)
    return fmt::format("BLIS {} sgemm ({})", bli_info_get_version_str(), bli_arch_string(bli_arch_query_id()));
  const dnnl_version_t* v = dnnl_version();
  const char* isa = "generic";
  switch (dnnl_get_effective_cpu_isa()) {
    case dnnl_cpu_isa_sse41: isa = "sse41"; break;
    case dnnl_cpu_isa_avx: isa = "avx"; break;
    case dnnl_cpu_isa_avx2: isa = "avx2"; break;
    case dnnl_cpu_isa_avx2_vnni: isa = "avx2_vnni"; break;
    case dnnl_cpu_isa_avx512_core: isa = "avx512_core"; break;
    case dnnl_cpu_isa_avx512_core_vnni: isa = "avx512_core_vnni"; break;
    case dnnl_cpu_isa_avx512_core_bf16: isa = "avx512_core_bf16"; break;
    case dnnl_cpu_isa_avx512_core_amx: isa = "avx512_core_amx"; break;
    default: break;
  }
  return fmt::format("oneDNN {}.{}.{} sgemm ({})", v->major, v->minor, v->patch, isa);
}

static std::atomic<bool> gemmStarted[std::size(kAllGemmLibraries)];

bool gemmLibraryStarted(GemmLibrary gemm) { return gemmStarted[static_cast<size_t>(gemm)].load(std::memory_order_relaxed); }

// oneDNN picks its kernels from the CPU it finds (JIT), where Debian's OpenBLAS
// 0.3.21 falls back to SSE3 on cores it does not know. BLIS picks among its
// compiled kernels (its own CPU detection).
static void sgemmOne(GemmLibrary gemm, bool transA, bool transB, int64_t M, int64_t N, int64_t K, float alpha,
                     const float* A, int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  // Written once: the panels of one product run on several threads, which would
  // otherwise all write the flag's cache line on every call.
  auto& started = gemmStarted[static_cast<size_t>(gemm)];
  if (!started.load(std::memory_order_relaxed)) started.store(true, std::memory_order_relaxed);
  if (gemm == GemmLibrary::Blis) {
    // BLIS takes row and column strides; its API is not const-correct.
    bli_sgemm(transA ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE, transB ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE, M, N, K,
              &alpha, const_cast<float*>(A), lda, 1, const_cast<float*>(B), ldb, 1, &beta, C, ldc, 1);
    return;
  }
  [[maybe_unused]] dnnl_status_t st =
      dnnl_sgemm(transA ? 'T' : 'N', transB ? 'T' : 'N', M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  assert(st == dnnl_success);
}

void startGemmLibrary(GemmLibrary gemm) {
  const float a[4] = {1, 2, 3, 4}, b[4] = {1, 0, 0, 1};
  float c[4];
  sgemmOne(gemm, false, false, 2, 2, 2, 1.0f, a, 2, b, 2, 0.0f, c, 2);
}

bool gemmSplitsFreely(GemmLibrary gemm) {
#if defined(__x86_64__)
  // oneDNN's AVX-512 sgemm sums an element the same way whatever the panel's
  // extents (kernels_test checks it); its AVX2 kernels do not (on an AMD EPYC
  // host a 12x1480x360 product summed differently from its row tiles), so there
  // the panels are fixed as with BLIS. The ISA is fixed once oneDNN first runs.
  static const bool avx512 = (dnnl_get_effective_cpu_isa() & dnnl_cpu_isa_avx512_core) == dnnl_cpu_isa_avx512_core;
  return gemm == GemmLibrary::OneDnn && avx512;
#else
  (void)gemm;
  return false;
#endif
}

int gemmSplitParts(GemmLibrary gemm, int threads) { return gemmSplitsFreely(gemm) ? std::max(1, threads) : kFixedGemmParts; }

// The GEMM library runs single-threaded; a large product is split into column (or
// row) panels computed by the runtime's threads (parallel.h), so only one thread pool
// competes for the cores. The panels follow the thread count only where the library
// sums an element the same way whatever the panel (gemmSplitsFreely); elsewhere they
// are fixed by the shape, on one thread too.
void sgemmRowMajor(bool transA, bool transB, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
                   int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc, int threads,
                   GemmLibrary gemm) {
  if (M == 0 || N == 0) return;
  if (K == 0) {
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) C[i * ldc + j] = beta == 0 ? 0 : beta * C[i * ldc + j];
    return;
  }
  threads = std::max(1, threads);
  const int parts = gemmSplitParts(gemm, threads);
  if (parts == 1 || M * N * K < 2000000) {
    sgemmOne(gemm, transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    return;
  }
  // Each panel packs the whole of the operand it does not split, so the larger one is
  // split: a conv's weights where it has more output channels than pixels (ResNet-50's
  // 1x1s from layer 3 on, SqueezeNet's classifier: 1000 x 169 by 512). Against
  // splitting the columns whenever there were 128 or more (two threads, AVX-512,
  // alternating binaries): ResNet-18, ResNet-50, Wide ResNet-50 and SqueezeNet
  // 0.94-0.96x the time, the others within noise.
  const bool splitN = N >= M;
  const int64_t total = splitN ? N : M;
  const int64_t chunk = ((total + parts - 1) / parts + 15) / 16 * 16;
  const int64_t panels = (total + chunk - 1) / chunk;
  parallelForEach(threads, panels, [&](int64_t t, int) {
    const int64_t lo = t * chunk, hi = std::min(total, lo + chunk);
    if (splitN)
      sgemmOne(gemm, transA, transB, M, hi - lo, K, alpha, A, lda, transB ? B + lo * ldb : B + lo, ldb, beta, C + lo, ldc);
    else
      sgemmOne(gemm, transA, transB, hi - lo, N, K, alpha, transA ? A + lo : A + lo * lda, lda, B, ldb, beta, C + lo * ldc,
               ldc);
  }, 1);
}

}  // namespace zp::runtime
