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

bool reorderWeightsOnce(const dnnl::memory::desc& given, const float* data, const dnnl::memory::desc& want,
                        dnnl::memory* into) {
  if (*into) return want == into->get_desc();
  dnnl::memory source(given, dnnlEngine(), const_cast<float*>(data));
  *into = dnnl::memory(want, dnnlEngine());
  dnnl::reorder(source, *into).execute(dnnlThreadStream(), source, *into);
  return true;
}

void executeOnThisThread(const dnnl::primitive& primitive, std::unordered_map<int, dnnl::memory> args,
                         const dnnl::memory::desc& pad) {
  args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(pad, dnnlEngine(), dnnlThreadScratchpad(pad.get_size())));
  dnnl::stream& stream = dnnlThreadStream();
  primitive.execute(stream, args);
  stream.wait();
}

}  // namespace zp::runtime
