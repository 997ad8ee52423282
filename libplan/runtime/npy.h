// NumPy .npy files (format 1.0-3.0, C order, little-endian) <-> runtime tensors.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>

#include "libplan/runtime/tensor.h"
#include "libplan/util/error.h"

namespace zp::runtime {

// What a .npy header says, checked against the bytes that follow it.
struct NpyHeader {
  DType dtype = DType::F32;
  Shape shape;
  size_t dataOffset = 0;  // where the array's bytes start
  size_t dataBytes = 0;   // elements x item size, equal to what follows the header
};

// The longest header accepted (NumPy itself writes a few hundred bytes).
inline constexpr size_t kMaxNpyHeaderBytes = size_t{1} << 20;

// Parses the header of the .npy file `bytes`: every dimension a non-negative
// integer, the element count computed without overflow, and the data after the
// header exactly its size. Nothing is allocated; errors start with `label`.
Expected<NpyHeader> parseNpyHeader(std::string_view bytes, const std::string& label);

Expected<Tensor> readNpy(const std::filesystem::path& path);
std::string encodeNpy(const Tensor& t);
Status writeNpy(const std::filesystem::path& path, const Tensor& t);  // atomic

}  // namespace zp::runtime
