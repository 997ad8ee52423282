// Shapes behind shape arithmetic. torch.onnx.export writes `x.view(x.size(0), -1)`
// as a Reshape whose target shape is computed (Shape -> Gather -> Unsqueeze ->
// Concat); ONNX 1.12's shape inference cannot follow Unsqueeze, so the
// Reshape's output and everything after it stay unknown and count no FLOPs.
#pragma once
#include <string>

#include <onnx/onnx_pb.h>

#include "libplan/util/error.h"

namespace zp::graph {

// Evaluates the small int64 tensors that feed Reshape targets (Constant,
// int64 initializers, Shape of a tensor of known shape, Gather, Unsqueeze,
// Squeeze, Concat, Cast, Add, Sub, Mul, Div), gives each Reshape whose target
// it can compute and whose input shape is known the output shape, and
// re-infers the shapes after it; repeated while that resolves more. Returns
// whether anything changed. The model must have been shape-inferred.
Expected<bool> completeReshapeShapes(onnx::ModelProto& model, const std::string& label);

}  // namespace zp::graph
