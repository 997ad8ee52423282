// CRC-32C (Castagnoli), the checksum of weight cache payloads, tables and skeletons,
// and of the source tensors a cached payload was made from.
#pragma once
#include <cstddef>
#include <cstdint>

namespace zp::runtime {

// Chains: crc32c(b, nb, crc32c(a, na)) == crc32c of a followed by b.
uint32_t crc32c(const void* data, size_t bytes, uint32_t seed = 0);

}  // namespace zp::runtime
