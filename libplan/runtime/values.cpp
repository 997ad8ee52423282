#include "libplan/runtime/values.h"

#include "libplan/runtime/cache/skeleton.h"
#include "libplan/runtime/ops/attributes.h"

namespace zp::runtime {

int ValueTable::id(const std::string& name) {
  auto it = ids.find(name);
  if (it != ids.end()) return it->second;
  int i = static_cast<int>(names.size());
  ids[name] = i;
  names.push_back(name);
  vals.emplace_back();
  isConst.push_back(false);
  isInput.push_back(false);
  isOutput.push_back(false);
  aliasRoot.push_back(i);
  stripped.push_back(false);
  return i;
}

int ValueTable::find(const std::string& name) const {
  auto it = ids.find(name);
  return it == ids.end() ? -1 : it->second;
}

const Tensor* ValueTable::constant(const std::string& name) const {
  if (name.empty()) return nullptr;
  const int v = find(name);
  if (v < 0 || !isConst[static_cast<size_t>(v)]) return nullptr;
  return &vals[static_cast<size_t>(v)];
}

int ValueTable::root(int v) const {
  while (aliasRoot[static_cast<size_t>(v)] != v) v = aliasRoot[static_cast<size_t>(v)];
  return v;
}

bool ValueTable::pinned(int v) const {
  const size_t i = static_cast<size_t>(v);
  return isConst[i] || isInput[i] || isOutput[i];
}

Status loadInitializers(const onnx::GraphProto& g, bool fromSkeleton, const std::string& label, ValueTable& values,
                        std::vector<std::pair<int, ModelFileRef>>* modelRefs) {
  for (const auto& init : g.initializer()) {
    const size_t v = static_cast<size_t>(values.id(init.name()));
    values.isConst[v] = true;
    auto dt = dtypeFromOnnx(init.data_type());
    auto ref = modelFileRef(init);
    if (!ref.ok()) return makeError("{}: {}", label, ref.error().message);
    if (*ref) {
      // The skeleton points at the model file: shape and type now, the bytes when
      // the session reads them (Session::readModelRefs, or a cold start's reads).
      if (!fromSkeleton || !modelRefs)
        return makeError("{}: initializer '{}' refers to the model file's bytes (the model is a weight cache's skeleton)",
                         label, init.name());
      if (!dt.ok()) return makeError("{}: initializer '{}': {}", label, init.name(), dt.error().message);
      Tensor t;
      t.dtype = *dt;
      t.shape.assign(init.dims().begin(), init.dims().end());
      if ((*ref)->bytes != t.bytes())
        return makeError("{}: initializer '{}' refers to {} bytes of the model file, its shape needs {}", label,
                         init.name(), (*ref)->bytes, t.bytes());
      values.vals[v] = std::move(t);
      values.stripped[v] = true;
      modelRefs->push_back({static_cast<int>(v), **ref});
      continue;
    }
    if (isStrippedInitializer(init)) {
      // The skeleton left these weights to the cache: shape and type only.
      if (!fromSkeleton)
        return makeError("{}: initializer '{}' has no data (the model is a weight cache's skeleton)", label, init.name());
      if (!dt.ok()) return makeError("{}: initializer '{}': {}", label, init.name(), dt.error().message);
      Tensor t;
      t.dtype = *dt;
      t.shape.assign(init.dims().begin(), init.dims().end());
      values.vals[v] = std::move(t);
      values.stripped[v] = true;
      continue;
    }
    if (dt.ok() && init.has_raw_data()) {
      // Weights stay where protobuf put them (the session keeps the model alive): no copy.
      Tensor t;
      t.dtype = *dt;
      t.shape.assign(init.dims().begin(), init.dims().end());
      if (init.raw_data().size() != t.bytes())
        return makeError("{}: initializer '{}' holds {} bytes, expected {}", label, init.name(), init.raw_data().size(),
                         t.bytes());
      t.data = const_cast<char*>(init.raw_data().data());
      t.owner = std::shared_ptr<void>(t.data, [](void*) {});
      values.vals[v] = std::move(t);
      continue;
    }
    auto t = tensorFromProto(init);
    if (!t.ok()) return makeError("{}: {}", label, t.error().message);
    values.vals[v] = std::move(*t);
  }
  return {};
}

std::optional<Shape> StaticShapes::of(const std::string& name) const {
  if (!inputsFixed_) {
    // Only constants have trustworthy shapes when inputs are dynamic.
    const Tensor* t = values_->constant(name);
    if (t) return t->shape;
    return std::nullopt;
  }
  auto info = view_->tensorInfo(name);
  if (!info || !info->hasShape || info->numElements() < 0) return std::nullopt;
  return info->shape;
}

graph::ConstantLookup constantLookup(const ValueTable& values) {
  return [&values](const std::string& name) -> std::optional<graph::ConstantInfo> {
    const Tensor* t = values.constant(name);
    if (!t) return std::nullopt;
    graph::ConstantInfo c;
    c.elemType = dtypeToOnnx(t->dtype);
    c.dims = t->shape;
    if (t->size() == 1 && t->data) c.scalar = t->toF32()[0];
    if ((t->dtype == DType::I64 || t->dtype == DType::I32) && t->size() <= 16 && t->data) c.ints = t->toI64();
    return c;
  };
}

}  // namespace zp::runtime
