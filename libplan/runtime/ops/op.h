// Operator implementations behind one small interface. Ops are built once per
// node at load (attributes parsed, weights transformed) and run many times.
// Every operator the runtime runs is named once, in ops/op_list.def.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "libplan/runtime/kernel_policy.h"
#include "libplan/runtime/kernels/kernels.h"
#include "libplan/runtime/tensor.h"
#include "libplan/util/error.h"

namespace zp::runtime {

class WeightCache;

// Where an op puts its outputs. The session hands out planned arena slots; the
// constant folder hands out heap tensors.
class ExecContext {
 public:
  virtual ~ExecContext() = default;
  virtual Tensor& alloc(size_t out, DType dtype, Shape shape) = 0;
  // Output `out` shares src's storage (Reshape, Squeeze, ...).
  virtual void alias(size_t out, const Tensor& src, Shape shape) = 0;
  int threads = 1;
  GemmLibrary gemm = GemmLibrary::OneDnn;
  Scratch* scratch = nullptr;
};

// The transformed weights an op holds, for weight caches and reports.
struct WeightInfo {
  std::string kernel;
  std::string transform;
  std::vector<std::string> sources;  // the constant inputs the weights are made from, in order
  uint32_t sourceCrc = 0;            // CRC-32C chained over `sources` (when sourceCrcKnown)
  bool sourceCrcKnown = false;
  const PackedWeights* packed = nullptr;
  size_t libraryBytes = 0;           // a copy held in a GEMM library's own layout (not cached)
  bool fromCache = false;
  bool cacheCorrupt = false;         // the cache held this node but its entry was rejected
  double transformMs = 0;
  double zeroFraction = 0;
};

class Op {
 public:
  virtual ~Op() = default;
  // in[i] is null for an absent optional input.
  virtual Status run(ExecContext& ctx, const std::vector<const Tensor*>& in) = 0;
  // True when output 0 always aliases input 0.
  virtual bool isView() const { return false; }
  virtual std::string kernel() const { return ""; }
  virtual const WeightInfo* weights() const { return nullptr; }
  // Channel-blocked values (kernels.h BlockedLayouts): the one input the op can read that
  // way (none: nullopt), whether it can write output 0 so, whether the two go together
  // (an elementwise op: both blocked or neither), and which it does. Ops pass a value
  // blocked only where the session that built them set its writer and every reader
  // (Session::Builder::blockChannels).
  virtual std::optional<size_t> blockableInput() const { return std::nullopt; }
  virtual bool takesBlockedOutput() const { return false; }
  virtual bool blocksTogether() const { return false; }
  virtual BlockedLayouts layouts() const { return {}; }
  virtual void setLayouts(BlockedLayouts) {}
};

// What an op factory sees when building a node. A node of the fused domain
// (graph::kFusedDomain: a Conv/Gemm/MatMul with BatchNormalization or an
// activation folded in) describes its fused parts itself.
struct BuildContext {
  const onnx::NodeProto* node = nullptr;
  int opset = 13;
  std::vector<const Tensor*> constInputs;         // per input: the constant value or null
  std::vector<std::optional<Shape>> inputShapes;  // static shapes where known
  bool halfInputs = true;  // an input may be float16 or bfloat16 (false only when every input's type is known)
  const KernelPolicy* policy = nullptr;
  WeightCache* cache = nullptr;
  // Built from the cache's model skeleton: heavy weights come from the cache alone
  // (their constant inputs may have no data) and payloads are checked later.
  bool fromCacheOnly = false;
  std::string cacheRejected;                       // non-empty: the cache file was rejected, why
  // Nodes whose cache entry an earlier session found corrupt, and why: raw weights.
  const std::map<std::string, std::string>* corruptNodes = nullptr;
  std::vector<std::string>* warnings = nullptr;
  int threads = 1;
  GemmLibrary gemm = GemmLibrary::OneDnn;  // what the tune policy times kernels with
  // A Conv's neighbours where the session passes values channel-blocked (Session::
  // Builder::blockChannels): output 0's one reader is a depthwise conv; input 0 is
  // written by a depthwise conv that this node alone reads.
  bool feedsDepthwise = false, fedByDepthwise = false;
  // Products with constant weights may reorder them for oneDNN's matmul at build: a
  // warm session on oneDNN. Not a cold one, whose load must not start oneDNN.
  bool reorderForOneDnn = false;
};

// True for the operators of ops/op_list.def in the standard domain, and for the
// fused forms of Conv, Gemm and MatMul.
bool isSupportedOp(const onnx::NodeProto& node);
// Every operator type of ops/op_list.def, in the list's order.
const std::vector<std::string>& supportedOpTypes();

Expected<std::unique_ptr<Op>> createOp(const BuildContext& ctx);

}  // namespace zp::runtime
