// The op table, built from op_list.def: operator type -> factory.
#include <algorithm>
#include <string_view>

#include "libplan/graph/rewrite/fuse.h"
#include "libplan/runtime/ops/attributes.h"
#include "libplan/runtime/ops/factories.h"
#include "libplan/runtime/ops/half_as_float.h"

namespace zp::runtime {
namespace {

using Factory = Expected<std::unique_ptr<Op>> (*)(const BuildContext&);

struct OpEntry {
  std::string_view type;
  Factory make;
  std::string_view family;
};

constexpr OpEntry kOps[] = {
#define ZP_OP(type, family) {#type, &detail::make##type, #family},
#include "libplan/runtime/ops/op_list.def"
};

const OpEntry* findOp(std::string_view type) {
  for (const auto& e : kOps)
    if (e.type == type) return &e;
  return nullptr;
}

bool isStandardDomain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

// The families whose ops compute in float32 (or per type, without the halves): they
// take float16 and bfloat16 through computeHalvesInFloat. Cast and CastLike convert
// halves themselves; the other families move elements of any type as they are.
bool computesHalvesInFloat(const OpEntry& e) {
  if (e.type == "Cast" || e.type == "CastLike") return false;
  for (std::string_view f : {"elementwise", "unary", "reduce", "norm", "softmax", "pool", "resize", "order", "einsum",
                             "conv", "conv_transpose", "gemm"})
    if (e.family == f) return true;
  return false;
}

}  // namespace

bool isSupportedOp(const onnx::NodeProto& node) {
  if (node.domain() == graph::kFusedDomain) return graph::isFusedOpType(node.op_type());
  return isStandardDomain(node.domain()) && findOp(node.op_type()) != nullptr;
}

const std::vector<std::string>& supportedOpTypes() {
  static const std::vector<std::string> types = [] {
    std::vector<std::string> t;
    for (const auto& e : kOps) t.emplace_back(e.type);
    return t;
  }();
  return types;
}

Expected<std::unique_ptr<Op>> createOp(const BuildContext& bc) {
  const auto& n = *bc.node;
  if (!isStandardDomain(n.domain()) && !(n.domain() == graph::kFusedDomain && graph::isFusedOpType(n.op_type())))
    return makeError("{}: operator domain '{}' is not supported", detail::nodeLabel(n), n.domain());
  const OpEntry* e = findOp(n.op_type());
  if (!e) return makeError("{}: operator '{}' is not supported", detail::nodeLabel(n), n.op_type());
  auto op = e->make(bc);
  if (!op.ok()) return makeError("{}: {}", detail::nodeLabel(n), op.error().message);
  if (bc.halfInputs && computesHalvesInFloat(*e)) return detail::computeHalvesInFloat(std::move(*op));
  return op;
}

}  // namespace zp::runtime
