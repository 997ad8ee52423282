// Resize and Upsample: nearest with every nearest_mode, linear and cubic, under the
// coordinate transformations exporters write (PyTorch: nearest = asymmetric/floor,
// bilinear = pytorch_half_pixel or align_corners, from sizes or scales).
#include <fmt/format.h>

#include "tests/runtime/ops/op_case.h"

namespace zp::runtime::testing {
namespace {

std::string attrs(const std::string& mode, const std::string& coord, const std::string& nearest = "") {
  std::string a = "mode=\"" + mode + "\", coordinate_transformation_mode=\"" + coord + "\"";
  if (!nearest.empty()) a += ", nearest_mode=\"" + nearest + "\"";
  return a;
}

OpCase bySizes(const std::string& what, const std::string& a, Shape x, std::vector<double> sizes, DType dt = DType::F32,
               const std::string& out = "float y") {
  return {"Resize", what, "y = Resize <" + a + "> (x, , , sizes)",
          {in("x", x, Fill::Uniform, dt), fixed("sizes", DType::I64, {static_cast<int64_t>(sizes.size())}, sizes)},
          {out}};
}

OpCase byScales(const std::string& what, const std::string& a, Shape x, std::vector<double> scales) {
  return {"Resize", what, "y = Resize <" + a + "> (x, , scales)",
          {in("x", x), fixed("scales", DType::F32, {static_cast<int64_t>(scales.size())}, scales)}};
}

}  // namespace

std::vector<OpCase> resizeCases() {
  std::vector<OpCase> c;
  c.push_back(byScales("nearest asymmetric floor x2 (PyTorch nearest)", attrs("nearest", "asymmetric", "floor"),
                       {1, 3, 5, 6}, {1, 1, 2, 2}));
  c.push_back(bySizes("nearest asymmetric floor to 11x13", attrs("nearest", "asymmetric", "floor"), {1, 2, 5, 6},
                      {1, 2, 11, 13}));
  c.push_back(bySizes("nearest half_pixel round_prefer_floor downsample", attrs("nearest", "half_pixel"), {2, 2, 9, 10},
                      {2, 2, 4, 7}));
  c.push_back(bySizes("nearest half_pixel round_prefer_ceil", attrs("nearest", "half_pixel", "round_prefer_ceil"),
                      {1, 2, 4, 5}, {1, 2, 10, 8}));
  c.push_back(bySizes("nearest align_corners ceil", attrs("nearest", "align_corners", "ceil"), {1, 1, 4, 5}, {1, 1, 7, 9}));
  c.push_back(bySizes("nearest tf_half_pixel_for_nn", attrs("nearest", "tf_half_pixel_for_nn"), {1, 1, 4, 5}, {1, 1, 7, 3}));
  c.push_back(bySizes("nearest int32", attrs("nearest", "asymmetric", "floor"), {1, 2, 3, 3}, {1, 2, 6, 5}, DType::I32,
                      "int32 y"));
  c.push_back(bySizes("nearest uint8 3-D", attrs("nearest", "half_pixel"), {2, 3, 4}, {2, 5, 9}, DType::U8, "uint8 y"));
  c.push_back(byScales("linear half_pixel x2", attrs("linear", "half_pixel"), {1, 3, 4, 5}, {1, 1, 2, 2}));
  c.push_back(bySizes("linear pytorch_half_pixel to 12x9 (PyTorch bilinear)", attrs("linear", "pytorch_half_pixel"),
                      {1, 3, 5, 7}, {1, 3, 12, 9}));
  c.push_back(bySizes("linear pytorch_half_pixel to width 1", attrs("linear", "pytorch_half_pixel"), {1, 2, 5, 4},
                      {1, 2, 3, 1}));
  c.push_back(bySizes("linear align_corners (PyTorch align_corners=True)", attrs("linear", "align_corners"),
                      {2, 2, 6, 5}, {2, 2, 11, 3}));
  c.push_back(byScales("linear asymmetric downsample", attrs("linear", "asymmetric"), {1, 2, 8, 8}, {1, 1, 0.5, 0.75}));
  c.push_back(byScales("cubic half_pixel x2", attrs("cubic", "half_pixel"), {1, 2, 5, 6}, {1, 1, 2, 2}));
  c.push_back(bySizes("cubic align_corners", attrs("cubic", "align_corners"), {1, 1, 6, 6}, {1, 1, 9, 4}));
  OpCase cubicA = byScales("cubic A=-0.5 exclude_outside", attrs("cubic", "half_pixel") + ", cubic_coeff_a=-0.5, exclude_outside=1",
                           {1, 1, 5, 5}, {1, 1, 1.6, 0.8});
  c.push_back(cubicA);
  c.push_back({"Resize", "opset 11 with an empty roi", "y = Resize <mode=\"linear\"> (x, roi, scales)",
               {in("x", {1, 2, 4, 4}), fixed("roi", DType::F32, {0}, {}), fixed("scales", DType::F32, {4}, {1, 1, 2, 1.5})},
               {"float y"}, 11});
  c.push_back({"Resize", "opset 10 nearest", "y = Resize (x, scales)",
               {in("x", {1, 2, 3, 4}), fixed("scales", DType::F32, {4}, {1, 1, 2, 3})}, {"float y"}, 10});
  c.push_back({"Upsample", "nearest scales input (opset 9)", "y = Upsample (x, scales)",
               {in("x", {1, 2, 3, 4}), fixed("scales", DType::F32, {4}, {1, 1, 2, 2})}, {"float y"}, 9});
  c.push_back({"Upsample", "linear scales input (opset 9)", "y = Upsample <mode=\"linear\"> (x, scales)",
               {in("x", {1, 2, 3, 4}), fixed("scales", DType::F32, {4}, {1, 1, 2, 2.5})}, {"float y"}, 9});
  // GridSample (opset 16): grid values with |v| in [0.5, 2) land inside and well outside the input.
  for (const char* mode : {"bilinear", "nearest", "bicubic"})
    for (const char* padding : {"zeros", "border", "reflection"})
      for (int align : {0, 1}) {
        const std::string attrs = fmt::format("mode=\"{}\", padding_mode=\"{}\", align_corners={}", mode, padding, align);
        c.push_back({"GridSample", attrs, "y = GridSample <" + attrs + "> (x, grid)",
                     {in("x", {2, 3, 5, 6}), in("grid", {2, 4, 3, 2}, align ? Fill::AwayFromZero : Fill::Uniform)},
                     {"float y"}, 16});
      }
  c.push_back({"GridSample", "defaults, upsampling grid", "y = GridSample (x, grid)",
               {in("x", {1, 2, 3, 3}), in("grid", {1, 7, 8, 2})}, {"float y"}, 16});
  return c;
}

}  // namespace zp::runtime::testing
