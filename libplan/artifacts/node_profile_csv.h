// node_profile.csv, its reader and writer: per-node warm latency of whole ONNX
// models executed node by node by the runtime on this host (zoo-profile: every
// variant model of the zoo; plan-solve --mode opplace reads it), one block of
// rows per processor, keyed by the processor's kernel policy and thread count,
// with the operator features the latency predictor reads (estimate/op_features.h):
//   model,policy,threads,node,op_type,kernel,activation,batch,in_channels,in_h,in_w,
//   out_channels,kernel_h,kernel_w,stride,groups,flops,intensity,bytes,
//   weight_sparsity,input_sparsity,output_sparsity,input_reuse_bytes,model_bytes,
//   ms,ms_odd,ms_even
// ms is the median over the timed runs; ms_odd and ms_even the medians over
// the odd and the even runs (their agreement is the measurement's own noise).
// Files written before the activation and cache-context columns read with no
// activation and zero context.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "libplan/estimate/op_features.h"
#include "libplan/util/error.h"

namespace zp::artifacts {

inline constexpr std::string_view kNodeProfileCsvHeader =
    "model,policy,threads,node,op_type,kernel,activation,batch,in_channels,in_h,in_w,out_channels,kernel_h,kernel_w,"
    "stride,groups,flops,intensity,bytes,weight_sparsity,input_sparsity,output_sparsity,input_reuse_bytes,model_bytes,"
    "ms,ms_odd,ms_even";
// The header before the activation and cache-context columns.
inline constexpr std::string_view kNodeProfileCsvHeaderNoActivation =
    "model,policy,threads,node,op_type,kernel,batch,in_channels,in_h,in_w,out_channels,kernel_h,kernel_w,stride,"
    "groups,flops,intensity,bytes,weight_sparsity,input_sparsity,output_sparsity,ms,ms_odd,ms_even";

struct NodeProfileRow {
  std::string model, policy;
  int threads = 1;
  std::string node;
  estimate::OpFeatures features;
  double ms = 0, msOdd = 0, msEven = 0;
  bool operator==(const NodeProfileRow&) const = default;
};

// Errors name the file and line: "node_profile.csv:4: column 'ms': '-1' is not a number in [0, 10000000]".
Expected<std::vector<NodeProfileRow>> parseNodeProfileCsv(std::string_view text, const std::string& label);
Expected<std::vector<NodeProfileRow>> readNodeProfileCsv(const std::filesystem::path& path);
std::string formatNodeProfileCsv(const std::vector<NodeProfileRow>& rows);

// The model key of a zoo's variant: "<zoo>/<task>/<variant>" (zoo-profile writes
// its rows under it; plan-solve --mode opplace looks a zoo model up by it).
inline std::string zooModelKey(std::string_view zoo, std::string_view task, std::string_view variant) {
  return std::string(zoo) + "/" + std::string(task) + "/" + std::string(variant);
}

}  // namespace zp::artifacts
