// Gathers and scatters by index (negative indices, reductions, batch dims), the
// value-dependent NonZero/Compress/OneHot, and ranking along an axis.
#include "tests/runtime/ops/op_case.h"

namespace zp::runtime::testing {

std::vector<OpCase> indexCases() {
  std::vector<OpCase> c;
  c.push_back({"GatherElements", "axis 1", "y = GatherElements <axis=1> (x, i)",
               {in("x", {3, 4}), fixed("i", DType::I64, {3, 2}, {0, 3, -1, 2, 1, 1})}});
  c.push_back({"GatherElements", "axis 0, smaller indices, int64 data", "y = GatherElements (x, i)",
               {in("x", {3, 4, 2}, Fill::Wide, DType::I64), fixed("i", DType::I32, {2, 2, 1}, {2, 0, 1, -3}, false)},
               {"int64 y"}});
  c.push_back({"GatherND", "pairs", "y = GatherND (x, i)",
               {in("x", {3, 4, 5}), fixed("i", DType::I64, {2, 2}, {0, 1, 2, -1})}});
  c.push_back({"GatherND", "batch_dims 1", "y = GatherND <batch_dims=1> (x, i)",
               {in("x", {2, 3, 4}), fixed("i", DType::I64, {2, 2, 1}, {0, 2, 1, 1})}});
  c.push_back({"ScatterElements", "axis 1", "y = ScatterElements <axis=1> (x, i, u)",
               {in("x", {3, 5}), fixed("i", DType::I64, {3, 2}, {0, 4, -1, 2, 1, 3}), in("u", {3, 2})}});
  c.push_back({"ScatterElements", "add with duplicates", "y = ScatterElements <axis=0, reduction=\"add\"> (x, i, u)",
               {in("x", {3, 2}), fixed("i", DType::I64, {2, 2}, {1, 1, 1, 0}), in("u", {2, 2})}, {"float y"}, 16});
  c.push_back({"Scatter", "axis 0 (opset 9)", "y = Scatter (x, i, u)",
               {in("x", {4, 3}), fixed("i", DType::I64, {2, 3}, {3, 0, 1, 2, 1, 0}), in("u", {2, 3})}, {"float y"}, 9});
  c.push_back({"Scatter", "axis 1 (opset 10)", "y = Scatter <axis=1> (x, i, u)",
               {in("x", {2, 4}), fixed("i", DType::I64, {2, 1}, {3, 0}), in("u", {2, 1})}, {"float y"}, 10});
  c.push_back({"ScatterND", "rows", "y = ScatterND (x, i, u)",
               {in("x", {4, 3}), fixed("i", DType::I64, {2, 1}, {2, 0}), in("u", {2, 3})}});
  c.push_back({"ScatterND", "elements, mul", "y = ScatterND <reduction=\"mul\"> (x, i, u)",
               {in("x", {2, 3}), fixed("i", DType::I64, {3, 2}, {0, 1, 1, 2, 0, 1}), in("u", {3})}, {"float y"}, 16});
  c.push_back({"NonZero", "float matrix", "y = NonZero (x)", {in("x", {3, 5}, Fill::SmallInts)}, {"int64 y"}});
  c.push_back({"NonZero", "bool 3-D", "y = NonZero (x)", {in("x", {2, 2, 3}, Fill::Bools, DType::Bool)}, {"int64 y"}});
  c.push_back({"Compress", "axis 1, short condition", "y = Compress <axis=1> (x, m)",
               {in("x", {3, 5}), fixed("m", DType::Bool, {4}, {1, 0, 1, 1})}});
  c.push_back({"Compress", "no axis: flattened", "y = Compress (x, m)",
               {in("x", {2, 3}), fixed("m", DType::Bool, {6}, {0, 1, 1, 0, 0, 1})}});
  c.push_back({"OneHot", "last axis, negative index", "y = OneHot (i, d, v)",
               {fixed("i", DType::I64, {2, 3}, {0, 2, -1, 1, 3, -4}, false), fixed("d", DType::I64, {}, {4}),
                fixed("v", DType::F32, {2}, {0.5, 3.0})}});
  c.push_back({"OneHot", "axis 0, int32 values", "y = OneHot <axis=0> (i, d, v)",
               {fixed("i", DType::I64, {3}, {1, 0, 2}, false), fixed("d", DType::F32, {}, {3}),
                fixed("v", DType::I32, {2}, {0, 7})}, {"int32 y"}});
  // Ranking: ties among SmallInts exercise the lowest-index rule.
  for (const char* op : {"ArgMax", "ArgMin"}) {
    const std::string o = op;
    c.push_back({o, "axis 1 keepdims", "y = " + o + " <axis=1> (x)", {in("x", {3, 6, 2}, Fill::SmallInts)}, {"int64 y"}});
    c.push_back({o, "last index, dropped", "y = " + o + " <axis=-1, keepdims=0, select_last_index=1> (x)",
                 {in("x", {4, 5}, Fill::SmallInts)}, {"int64 y"}});
    c.push_back({o, "int32", "y = " + o + " (x)", {in("x", {5, 3}, Fill::Wide, DType::I32)}, {"int64 y"}});
  }
  c.push_back({"TopK", "largest 3 of the last axis", "y, i = TopK (x, k)",
               {in("x", {3, 7}, Fill::SmallInts), fixed("k", DType::I64, {1}, {3})}, {"float y", "int64 i"}});
  c.push_back({"TopK", "smallest 2 along axis 0", "y, i = TopK <axis=0, largest=0> (x, k)",
               {in("x", {5, 3, 2}, Fill::SmallInts), fixed("k", DType::I64, {1}, {2})}, {"float y", "int64 i"}});
  c.push_back({"TopK", "int64, k = all", "y, i = TopK (x, k)",
               {in("x", {2, 4}, Fill::Wide, DType::I64), fixed("k", DType::I64, {1}, {4})}, {"int64 y", "int64 i"}});
  c.push_back({"Hardmax", "last axis", "y = Hardmax (x)", {in("x", {3, 4, 5}, Fill::SmallInts)}});
  c.push_back({"Hardmax", "axis 1 (opset 11: flattened tail)", "y = Hardmax <axis=1> (x)",
               {in("x", {2, 3, 4}, Fill::SmallInts)}, {"float y"}, 11});
  return c;
}

// Trilu, EyeLike and Einsum on the equations vision and transformer models export.
std::vector<OpCase> matrixCases() {
  std::vector<OpCase> c;
  c.push_back({"Trilu", "upper, k = 1", "y = Trilu (x, k)", {in("x", {2, 4, 5}), fixed("k", DType::I64, {}, {1})}, {"float y"}, 14});
  c.push_back({"Trilu", "lower, default k, int64", "y = Trilu <upper=0> (x)", {in("x", {5, 3}, Fill::Wide, DType::I64)},
               {"int64 y"}, 14});
  c.push_back({"Trilu", "lower, k = -1", "y = Trilu <upper=0> (x, k)", {in("x", {4, 4}), fixed("k", DType::I64, {}, {-1})},
               {"float y"}, 14});
  c.push_back({"EyeLike", "k = 1", "y = EyeLike <k=1> (x)", {in("x", {3, 5})}, {"float y"}, 9});
  c.push_back({"EyeLike", "int64 out, k = -2", "y = EyeLike <k=-2, dtype=7> (x)", {in("x", {4, 3})}, {"int64 y"}, 9});
  auto einsum = [&](const std::string& eq, std::vector<Operand> ops) {
    std::string args;
    for (const auto& o : ops) args += (args.empty() ? "" : ", ") + o.name;
    OpCase e{"Einsum", eq, "y = Einsum <equation=\"" + eq + "\"> (" + args + ")", std::move(ops)};
    e.opset = 12;
    e.tolerance = 1e-4;
    return e;
  };
  c.push_back(einsum("bhqd,bhkd->bhqk", {in("q", {2, 3, 5, 4}), in("k", {2, 3, 6, 4})}));  // attention scores
  c.push_back(einsum("bhqk,bhkd->bhqd", {in("a", {2, 3, 5, 6}), in("v", {2, 3, 6, 4})}));  // attention values
  c.push_back(einsum("bij,bjk->bik", {in("a", {3, 4, 5}), in("b", {3, 5, 2})}));
  c.push_back(einsum("ij,kj->ik", {in("a", {4, 5}), in("b", {3, 5})}));
  c.push_back(einsum("nchw,kc->nkhw", {in("x", {2, 3, 4, 5}), in("w", {6, 3})}));       // 1x1 conv
  c.push_back(einsum("bnd,de->bne", {in("x", {2, 7, 4}), init("w", {4, 3})}));           // linear layer
  c.push_back(einsum("...ij,...jk", {in("a", {2, 3, 4}), in("b", {1, 4, 5})}));           // implicit, broadcast
  c.push_back(einsum("ii->i", {in("a", {4, 4})}));                                         // diagonal
  c.push_back(einsum("ij->", {in("a", {3, 4})}));                                          // sum
  c.push_back(einsum("ij->ji", {in("a", {3, 4})}));                                        // transpose
  c.push_back(einsum("i,i", {in("a", {6}), in("b", {6})}));                                // inner product
  c.push_back(einsum("i,j->ij", {in("a", {3}), in("b", {4})}));                            // outer product
  c.push_back(einsum("bij,bjk,bkl->bil", {in("a", {2, 2, 3}), in("b", {2, 3, 4}), in("c", {2, 4, 2})}));
  c.push_back(einsum("bid,bjd->bij", {in("a", {2, 3, 4}, Fill::SmallInts, DType::I32), in("b", {2, 5, 4}, Fill::SmallInts, DType::I32)}));
  c.back().outputs = {"int32 y"};
  return c;
}

}  // namespace zp::runtime::testing
