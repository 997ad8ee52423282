// The op table, built from op_list.def: operator type -> factory.
#include <algorithm>
#include <string_view>

#include <cmath>
#include "libplan/runtime/ops/attributes.h"
#include "libplan/runtime/ops/factories.h"

namespace zp::runtime {
namespace {

using Factory = Expected<std::unique_ptr<Op>> (*)(const BuildContext&);

struct OpEntry {
  std::string_view type;
  Factory make;
};

constexpr OpEntry kOps[] = {
#define ZP_OP(type, family) {#type, &detail::make##type},
#include "libplan/runtime/ops/op_list.def"
};

const OpEntry* findOp(std::string_view type) {
  for (const auto& e : kOps)
    if (e.type == type) return &e;
  return nullptr;
}

bool isStandardDomain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

}  // namespace

bool isSupportedOp(const std::string& opType) { return findOp(opType) != nullptr; }

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
  if (!isStandardDomain(n.domain()))
    return makeError("{}: operator domain '{}' is not supported", detail::nodeLabel(n), n.domain());
  const OpEntry* e = findOp(n.op_type());
  if (!e) return makeError("{}: operator '{}' is not supported", detail::nodeLabel(n), n.op_type());
  auto op = e->make(bc);
  if (!op.ok()) return makeError("{}: {}", detail::nodeLabel(n), op.error().message);
  return op;
}

bool isFusableActivation(const onnx::NodeProto& n, const std::vector<const Tensor*>& constInputs, Epilogue* out) {
  if (n.op_type() == "Relu") { out->kind = Epilogue::Relu; return true; }
  if (n.op_type() != "Clip") return false;
  float lo = attrFloat(n, "min", -INFINITY), hi = attrFloat(n, "max", INFINITY);
  for (int i = 1; i < n.input_size() && i < 3; ++i) {
    if (n.input(i).empty()) continue;
    const Tensor* t = constInputs.size() > static_cast<size_t>(i) ? constInputs[static_cast<size_t>(i)] : nullptr;
    if (!t || t->size() != 1) return false;
    (i == 1 ? lo : hi) = t->toF32()[0];
  }
  out->kind = Epilogue::Clip;
  out->lo = lo;
  out->hi = hi;
  return true;
}

}  // namespace zp::runtime
