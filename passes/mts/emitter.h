// Appends nodes and initializers to the stitched graph with unique names, and
// counts the bytes of auxiliary constants (masks, indices).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace zp::mts {

class Emitter {
 public:
  explicit Emitter(onnx::GraphProto* graph) : graph_(graph) {}

  std::string fresh(const std::string& base);
  // A float initializer; weights are accounted by the caller, auxiliary ones here.
  std::string floats(const std::string& base, const std::vector<int64_t>& dims, const std::vector<float>& values,
                     bool auxiliary);
  std::string int64s(const std::string& base, const std::vector<int64_t>& values);
  // A node with one output named fresh(base) (or exactly `output` when given).
  onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& inputs, const std::string& base,
                        const std::string& output = "");
  static void setInt(onnx::NodeProto& n, const std::string& name, int64_t v);
  static void setInts(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v);

  // data[:, begin:end] along `axis` (Slice) or data gathered at `indices` along axis 1.
  std::string slice(const std::string& data, int64_t axis, int64_t begin, int64_t end, const std::string& base);
  std::string gather(const std::string& data, const std::vector<int64_t>& indices, const std::string& base,
                     int64_t axis = 1);
  // data with `before` and `after` zero slices of its shape `dims` along `axis` (Concat with zeros).
  std::string padZeros(const std::string& data, std::vector<int64_t> dims, int64_t axis, int64_t before,
                       int64_t after, const std::string& base);
  // The columns `indices` of `data` along axis 1: nothing, a Slice or a Gather.
  std::string selectColumns(const std::string& data, int64_t width, const std::vector<int64_t>& indices,
                            const std::string& base);

  int64_t auxBytes() const { return auxBytes_; }

 private:
  onnx::GraphProto* graph_;
  std::map<std::string, int> used_;
  int64_t auxBytes_ = 0;
};

}  // namespace zp::mts
