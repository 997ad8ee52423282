// The GEMM libraries behind every matrix product of the runtime. oneDNN's sgemm is
// the fastest warm, but the first product of a process makes it generate all its
// GEMM kernels (JIT, tens of milliseconds); BLIS ships compiled kernels, slower
// warm but with nothing to generate: the choice for a cold start. A session picks
// one (SessionOptions::gemm); the kernels pass it down to sgemmRowMajor.
#pragma once
#include <cstdint>
#include <string>

namespace zp::runtime {

enum class GemmLibrary { OneDnn, Blis };
inline constexpr GemmLibrary kAllGemmLibraries[] = {GemmLibrary::OneDnn, GemmLibrary::Blis};
const char* gemmLibraryKey(GemmLibrary g);  // "onednn", "blis"
bool parseGemmLibrary(const std::string& key, GemmLibrary* out);

// C = alpha * op(A) * op(B) + beta * C, row-major. With threads > 1 large products
// are split into panels over the runtime's OpenMP threads.
void sgemmRowMajor(bool transA, bool transB, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
                   int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc, int threads = 1,
                   GemmLibrary gemm = GemmLibrary::OneDnn);

// Keeps oneDNN's GEMMs on the calling thread (the runtime's own threads split them)
// and turns off its JIT profiling hooks. (The BLIS linked is its single-threaded build.)
void useSingleThreadedGemm();

// Whether `gemm` sums each element of a product the same way whatever the extents of
// the product it is computed in (oneDNN's JIT sgemm on x86-64; the kernel tests check
// it bitwise): then a product may be split by the thread count. Elsewhere (BLIS, whose
// small-matrix path depends on the extents; oneDNN's portable sgemm on aarch64) it is
// split by its shape alone, into kFixedGemmParts, whatever the thread count.
bool gemmSplitsFreely(GemmLibrary gemm);
inline constexpr int kFixedGemmParts = 4;
// The parts a product (or a loop of products) is split into on `threads` threads.
int gemmSplitParts(GemmLibrary gemm, int threads);
// Runs one tiny product so that `gemm` has started up in this process (oneDNN
// generates its kernels, BLIS sets up its contexts and pools).
void startGemmLibrary(GemmLibrary gemm);
// Whether this process has run a product with `gemm` (its start-up is behind it:
// a cold profile cannot time it any more).
bool gemmLibraryStarted(GemmLibrary gemm);
// The GEMM library, its version and the kernels it runs here, for reports.
std::string gemmLibraryName(GemmLibrary gemm = GemmLibrary::OneDnn);

}  // namespace zp::runtime
