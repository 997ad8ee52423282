// Views of the input under a new shape (Reshape, Flatten, Squeeze, Unsqueeze,
// Identity, Dropout) and shape queries (Shape, Size).
#include <algorithm>
#include <cstdint>

#include "libplan/runtime/ops/attributes.h"
#include "libplan/runtime/ops/factories.h"
#include "libplan/runtime/ops/fn_op.h"

namespace zp::runtime::detail {
namespace {

// Copies a tensor with a new shape into a fresh output (used when aliasing is not possible).
Status viewOrCopy(ExecContext& ctx, const Tensor& x, Shape shape) {
  if (numel(shape) != x.size())
    return makeError("cannot reshape {} ({} elements) to {}", shapeString(x.shape), x.size(), shapeString(shape));
  ctx.alias(0, x, std::move(shape));
  return {};
}

std::vector<int64_t> axesFrom(const BuildContext& bc, const std::vector<const Tensor*>& in, size_t inputIndex) {
  if (bc.opset >= 13 || findAttr(*bc.node, "axes") == nullptr) {
    if (in.size() > inputIndex && in[inputIndex]) return in[inputIndex]->toI64();
    return {};
  }
  return attrInts(*bc.node, "axes");
}

// Identity as a view of its input.
Expected<std::unique_ptr<Op>> identityOp() {
  return fnOp([](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    return viewOrCopy(ctx, *in[0], in[0]->shape);
  }, true);
}

}  // namespace

Expected<std::unique_ptr<Op>> makeIdentity(const BuildContext& bc) { return identityOp(); }

// Dropout at inference is the identity, with an all-true mask. In training mode it
// draws a random mask: refused, unless the ratio is 0 (the identity again).
Expected<std::unique_ptr<Op>> makeDropout(const BuildContext& bc) {
  const bool mask = bc.node->output_size() > 1 && !bc.node->output(1).empty();
  const bool hasTraining = bc.opset >= 12 && bc.node->input_size() > 2 && !bc.node->input(2).empty();
  const float attrRatio = attrFloat(*bc.node, "ratio", 0.5f);
  const int opset = bc.opset;
  return fnOp([=](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    if (hasTraining && in[2]->size() > 0 && in[2]->toI64()[0] != 0) {
      const float ratio = opset >= 12 ? (in.size() > 1 && in[1] ? in[1]->toF32()[0] : 0.5f) : attrRatio;
      if (ratio != 0.0f) return makeError("Dropout with training_mode true (a random mask) is not supported");
    }
    ZP_TRY(viewOrCopy(ctx, x, x.shape));
    if (mask) {
      Tensor& m = ctx.alloc(1, DType::Bool, x.shape);
      std::fill(m.ptr<uint8_t>(), m.ptr<uint8_t>() + m.size(), uint8_t{1});
    }
    return {};
  }, true);
}

Expected<std::unique_ptr<Op>> makeReshape(const BuildContext& bc) {
  const bool allowzero = attrInt(*bc.node, "allowzero", 0) != 0;
  return fnOp([allowzero](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    Shape s = in[1]->toI64();
    int64_t known = 1, infer = -1;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == 0 && !allowzero) {
        if (i >= x.shape.size()) return makeError("shape {} copies a dimension the input lacks", shapeString(s));
        s[i] = x.shape[i];
      }
      if (s[i] == -1) {
        if (infer >= 0) return makeError("shape {} has two -1 dimensions", shapeString(s));
        infer = static_cast<int64_t>(i);
      } else {
        known *= s[i];
      }
    }
    if (infer >= 0) {
      if (known == 0 || x.size() % known != 0)
        return makeError("cannot reshape {} to {}", shapeString(x.shape), shapeString(s));
      s[static_cast<size_t>(infer)] = x.size() / known;
    }
    return viewOrCopy(ctx, x, s);
  }, true);
}

Expected<std::unique_ptr<Op>> makeFlatten(const BuildContext& bc) {
  const int64_t axis = attrInt(*bc.node, "axis", 1);
  return fnOp([axis](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    const int64_t a = normAxis(axis, x.rank());
    int64_t outer = 1;
    for (int64_t i = 0; i < a; ++i) outer *= x.shape[static_cast<size_t>(i)];
    return viewOrCopy(ctx, x, {outer, outer == 0 ? 0 : x.size() / outer});
  }, true);
}

Expected<std::unique_ptr<Op>> makeSqueeze(const BuildContext& bc) {
  BuildContext copy = bc;
  return fnOp([copy](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    std::vector<int64_t> axes = axesFrom(copy, in, 1);
    std::vector<bool> drop(x.shape.size(), false);
    if (axes.empty()) {
      for (size_t i = 0; i < x.shape.size(); ++i) drop[i] = x.shape[i] == 1;
    } else {
      for (auto a : axes) {
        a = normAxis(a, x.rank());
        if (a < 0 || a >= x.rank() || x.shape[static_cast<size_t>(a)] != 1)
          return makeError("cannot squeeze axis {} of {}", a, shapeString(x.shape));
        drop[static_cast<size_t>(a)] = true;
      }
    }
    Shape s;
    for (size_t i = 0; i < x.shape.size(); ++i)
      if (!drop[i]) s.push_back(x.shape[i]);
    return viewOrCopy(ctx, x, s);
  }, true);
}

Expected<std::unique_ptr<Op>> makeUnsqueeze(const BuildContext& bc) {
  BuildContext copy = bc;
  return fnOp([copy](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const Tensor& x = *in[0];
    std::vector<int64_t> axes = axesFrom(copy, in, 1);
    const int64_t outRank = x.rank() + static_cast<int64_t>(axes.size());
    std::vector<bool> ins(static_cast<size_t>(outRank), false);
    for (auto a : axes) {
      a = normAxis(a, outRank);
      if (a < 0 || a >= outRank || ins[static_cast<size_t>(a)]) return makeError("bad unsqueeze axis {}", a);
      ins[static_cast<size_t>(a)] = true;
    }
    Shape s;
    size_t j = 0;
    for (int64_t i = 0; i < outRank; ++i) s.push_back(ins[static_cast<size_t>(i)] ? 1 : x.shape[j++]);
    return viewOrCopy(ctx, x, s);
  }, true);
}

Expected<std::unique_ptr<Op>> makeShape(const BuildContext& bc) {
  int64_t start = attrInt(*bc.node, "start", 0), end = attrInt(*bc.node, "end", INT64_MAX);
  return fnOp([start, end](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    const int64_t r = in[0]->rank();
    int64_t s = std::clamp(start < 0 ? start + r : start, int64_t{0}, r);
    int64_t e = std::clamp(end < 0 ? end + r : end, int64_t{0}, r);
    e = std::max(e, s);
    Tensor& y = ctx.alloc(0, DType::I64, {e - s});
    for (int64_t i = s; i < e; ++i) y.ptr<int64_t>()[i - s] = in[0]->shape[static_cast<size_t>(i)];
    return {};
  });
}

Expected<std::unique_ptr<Op>> makeSize(const BuildContext& bc) {
  return fnOp([](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    ctx.alloc(0, DType::I64, {}).ptr<int64_t>()[0] = in[0]->size();
    return {};
  });
}

}  // namespace zp::runtime::detail
