// Data movement: Transpose, Concat, Split, Slice, Gather, Expand, Tile, Pad, DepthToSpace, SpaceToDepth.
#include "tests/runtime/ops/op_case.h"

namespace zp::runtime::testing {

std::vector<OpCase> movementCases() {
  std::vector<OpCase> c;
  c.push_back({"Transpose", "perm", "y = Transpose <perm=[0,2,3,1]> (x)", {in("x", {2, 3, 4, 5})}});
  c.push_back({"Transpose", "reversed by default", "y = Transpose (x)", {in("x", {2, 3, 4})}});
  // Plane transposes cut into tiles of 16, with edges; and one whose contiguous
  // input dim does not end up second to last (the general copy).
  c.push_back({"Transpose", "NCHW to NHWC", "y = Transpose <perm=[0,2,3,1]> (x)", {in("x", {1, 40, 19, 23})}});
  c.push_back({"Transpose", "NHWC to NCHW", "y = Transpose <perm=[0,3,1,2]> (x)", {in("x", {2, 9, 17, 35})}});
  c.push_back({"Transpose", "batched K^T", "y = Transpose <perm=[0,2,1]> (x)", {in("x", {3, 37, 50})}});
  c.push_back({"Transpose", "contiguous dim not second to last", "y = Transpose <perm=[2,0,1]> (x)", {in("x", {5, 6, 7})}});
  c.push_back({"Transpose", "int64 inner axis kept", "y = Transpose <perm=[1,0,2]> (x)",
               {in("x", {3, 4, 5}, Fill::Wide, DType::I64)}, {"int64 y"}});
  c.push_back({"Concat", "axis 1", "y = Concat <axis=1> (a, b, d)", {in("a", {2, 3, 4}), in("b", {2, 1, 4}), in("d", {2, 5, 4})}});
  c.push_back({"Concat", "negative axis", "y = Concat <axis=-1> (a, b)", {in("a", {3, 2}), in("b", {3, 5})}});
  c.push_back({"Concat", "int64 axis 0", "y = Concat <axis=0> (a, b)",
               {in("a", {2}, Fill::Wide, DType::I64), in("b", {3}, Fill::Wide, DType::I64)}, {"int64 y"}});
  c.push_back({"Split", "sizes input", "y, z = Split <axis=1> (x, s)",
               {in("x", {2, 7, 3}), fixed("s", DType::I64, {2}, {3, 4})}, {"float y", "float z"}});
  c.push_back({"Split", "equal parts", "y, z, w = Split <axis=-1> (x)", {in("x", {2, 3, 6})}, {"float y", "float z", "float w"}});
  c.push_back({"Split", "opset 11 attribute", "y, z = Split <axis=0, split=[1,3]> (x)",
               {in("x", {4, 5}, Fill::Wide, DType::I64)}, {"int64 y", "int64 z"}, 11});
  c.push_back({"Slice", "steps and negative indices", "y = Slice (x, st, en, ax, sp)",
               {in("x", {4, 5, 6}), fixed("st", DType::I64, {3}, {0, -1, 1}), fixed("en", DType::I64, {3}, {4, -100, 5}),
                fixed("ax", DType::I64, {3}, {0, 2, 1}), fixed("sp", DType::I64, {3}, {2, -2, 1})}});
  c.push_back({"Slice", "clamped ends, no axes", "y = Slice (x, st, en)",
               {in("x", {4, 5}), fixed("st", DType::I64, {2}, {1, -3}), fixed("en", DType::I64, {2}, {1000, 5})}});
  c.push_back({"Slice", "starts as input", "y = Slice (x, st, en, ax)",
               {in("x", {3, 8}, Fill::Wide, DType::I64), fixed("st", DType::I64, {1}, {2}, false),
                fixed("en", DType::I64, {1}, {7}, false), fixed("ax", DType::I64, {1}, {1})},
               {"int64 y"}});
  c.push_back({"Slice", "opset 9 attributes", "y = Slice <starts=[1,0], ends=[3,-1], axes=[0,1]> (x)", {in("x", {4, 5})},
               {"float y"}, 9});
  c.push_back({"Gather", "axis 0, matrix of indices", "y = Gather (x, i)",
               {in("x", {5, 3}), fixed("i", DType::I64, {2, 2}, {4, 0, -1, 2}, false)}});
  c.push_back({"Gather", "axis 1", "y = Gather <axis=1> (x, i)", {in("x", {2, 6, 3}), fixed("i", DType::I64, {3}, {5, -6, 1})}});
  c.push_back({"Gather", "scalar index, int64 data", "y = Gather <axis=-1> (x, i)",
               {in("x", {3, 4}, Fill::Wide, DType::I64), fixed("i", DType::I64, {}, {2})}, {"int64 y"}});
  c.push_back({"Expand", "broadcast dims", "y = Expand (x, s)", {in("x", {3, 1}), fixed("s", DType::I64, {3}, {2, 3, 4})}});
  c.push_back({"Expand", "shape with ones", "y = Expand (x, s)", {in("x", {2, 1, 5}), fixed("s", DType::I64, {2}, {4, 1})}});
  c.push_back({"Expand", "int64", "y = Expand (x, s)",
               {in("x", {1}, Fill::Wide, DType::I64), fixed("s", DType::I64, {2}, {2, 3}, false)}, {"int64 y"}});
  c.push_back({"Tile", "float", "y = Tile (x, r)", {in("x", {2, 3}), fixed("r", DType::I64, {2}, {2, 3})}});
  c.push_back({"Tile", "int64 rank 3", "y = Tile (x, r)",
               {in("x", {2, 1, 3}, Fill::Wide, DType::I64), fixed("r", DType::I64, {3}, {1, 4, 2})}, {"int64 y"}});
  c.push_back({"Pad", "constant value", "y = Pad (x, p, v)",
               {in("x", {2, 3, 4}), fixed("p", DType::I64, {6}, {0, 1, 2, 1, 0, 3}), fixed("v", DType::F32, {}, {1.5})}});
  c.push_back({"Pad", "zeros", "y = Pad (x, p)", {in("x", {1, 2, 3, 3}), fixed("p", DType::I64, {8}, {0, 0, 1, 1, 0, 0, 1, 1})}});
  c.push_back({"Pad", "opset 2 attributes", "y = Pad <pads=[1,0,0,2], value=-1.0> (x)", {in("x", {3, 4})}, {"float y"}, 2});
  c.push_back({"Pad", "reflect", "y = Pad <mode=\"reflect\"> (x, p)",
               {in("x", {2, 3, 4, 5}), fixed("p", DType::I64, {8}, {0, 1, 2, 3, 0, 2, 1, 2})}});
  c.push_back({"Pad", "reflect, pad of the axis length - 1", "y = Pad <mode=\"reflect\"> (x, p)",
               {in("x", {3, 4}), fixed("p", DType::I64, {4}, {2, 3, 2, 3})}});
  c.push_back({"Pad", "edge", "y = Pad <mode=\"edge\"> (x, p)",
               {in("x", {1, 2, 3, 4}), fixed("p", DType::I64, {8}, {0, 0, 3, 1, 0, 0, 1, 5})}});
  c.push_back({"Pad", "edge, int64, negative pads crop", "y = Pad <mode=\"edge\"> (x, p)",
               {in("x", {4, 5}, Fill::Wide, DType::I64), fixed("p", DType::I64, {4}, {-1, 2, 1, -2})}, {"int64 y"}});
  c.push_back({"Pad", "constant, int32 value", "y = Pad (x, p, v)",
               {in("x", {3, 4}, Fill::Wide, DType::I32), fixed("p", DType::I64, {4}, {1, 0, 2, 1}),
                fixed("v", DType::I32, {}, {7})}, {"int32 y"}});
  c.push_back({"Pad", "reflect, uint8", "y = Pad <mode=\"reflect\"> (x, p)",
               {in("x", {3, 5}, Fill::Counts, DType::U8), fixed("p", DType::I64, {4}, {1, 2, 2, 4})}, {"uint8 y"}});
  c.push_back({"DepthToSpace", "DCR", "y = DepthToSpace <blocksize=2> (x)", {in("x", {2, 12, 3, 4})}});
  c.push_back({"DepthToSpace", "CRD", "y = DepthToSpace <blocksize=2, mode=\"CRD\"> (x)", {in("x", {1, 8, 3, 2})}});
  c.push_back({"DepthToSpace", "blocksize 3, uint8", "y = DepthToSpace <blocksize=3> (x)",
               {in("x", {1, 18, 2, 3}, Fill::Counts, DType::U8)}, {"uint8 y"}});
  c.push_back({"SpaceToDepth", "blocksize 2", "y = SpaceToDepth <blocksize=2> (x)", {in("x", {2, 3, 4, 6})}});
  c.push_back({"SpaceToDepth", "blocksize 3", "y = SpaceToDepth <blocksize=3> (x)", {in("x", {1, 2, 6, 3})}});
  return c;
}

}  // namespace zp::runtime::testing
