// An op whose state lives in a closure: what most op factories build.
#pragma once
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "libplan/runtime/ops/op.h"

namespace zp::runtime::detail {

using RunFn = std::function<Status(ExecContext&, const std::vector<const Tensor*>&)>;

class FnOp : public Op {
 public:
  FnOp(RunFn fn, bool view = false) : fn_(std::move(fn)), view_(view) {}
  Status run(ExecContext& ctx, const std::vector<const Tensor*>& in) override { return fn_(ctx, in); }
  bool isView() const override { return view_; }

 private:
  RunFn fn_;
  bool view_;
};

inline Expected<std::unique_ptr<Op>> fnOp(RunFn fn, bool view = false) {
  return std::unique_ptr<Op>(std::make_unique<FnOp>(std::move(fn), view));
}

}  // namespace zp::runtime::detail
