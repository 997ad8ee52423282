#include "libplan/runtime/kernels/dnnl_context.h"

#include <vector>

namespace zp::runtime {

const dnnl::engine& dnnlEngine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::stream& dnnlThreadStream() {
  thread_local dnnl::stream stream(dnnlEngine());
  return stream;
}

uint8_t* dnnlThreadScratchpad(size_t bytes) {
  thread_local std::vector<uint8_t> pad;
  if (pad.size() < bytes) pad.resize(bytes);
  return pad.data();
}

}  // namespace zp::runtime
