// NumPy .npy files (format 1.0-3.0, C order, little-endian) <-> runtime tensors.
#pragma once
#include <filesystem>

#include "libplan/runtime/tensor.h"
#include "libplan/util/error.h"

namespace zp::runtime {

Expected<Tensor> readNpy(const std::filesystem::path& path);
std::string encodeNpy(const Tensor& t);
Status writeNpy(const std::filesystem::path& path, const Tensor& t);  // atomic

}  // namespace zp::runtime
