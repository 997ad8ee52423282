#include "libplan/runtime/ops/einsum.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "libplan/runtime/ops/attributes.h"
#include "libplan/runtime/ops/dispatch.h"
#include "libplan/runtime/ops/factories.h"
#include "libplan/runtime/ops/fn_op.h"

namespace zp::runtime::detail {
namespace {

// One term of the equation: letters, and where "..." stands (-1: nowhere).
struct Term {
  std::string letters;
  int ellipsisAt = -1;
};

Expected<Term> parseTerm(const std::string& t, const std::string& eq) {
  Term term;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t.compare(i, 3, "...") == 0) {
      if (term.ellipsisAt >= 0) return makeError("Einsum equation '{}' has two ellipses in one term", eq);
      term.ellipsisAt = static_cast<int>(term.letters.size());
      i += 2;
    } else if (std::isalpha(static_cast<unsigned char>(t[i]))) {
      term.letters += t[i];
    } else {
      return makeError("Einsum equation '{}' has an unexpected '{}'", eq, t[i]);
    }
  }
  return term;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out(1);
  for (char c : s) {
    if (c == sep) out.emplace_back();
    else out.back() += c;
  }
  return out;
}

// Label keys: letters as themselves, ellipsis dim k as "#k" (k counted from the left
// of the widest ellipsis).
using Key = std::string;

// The keys of an operand's dims.
Expected<std::vector<Key>> operandKeys(const Term& t, size_t rank, int ellipsisRank, const std::string& eq) {
  std::vector<Key> keys;
  const size_t e = rank >= t.letters.size() ? rank - t.letters.size() : 0;
  if (rank < t.letters.size() || (t.ellipsisAt < 0 && e != 0))
    return makeError("Einsum equation '{}' does not fit an operand of rank {}", eq, rank);
  for (size_t i = 0; i <= t.letters.size(); ++i) {
    if (static_cast<int>(i) == t.ellipsisAt)
      for (size_t k = 0; k < e; ++k) keys.push_back(fmt::format("#{}", ellipsisRank - static_cast<int>(e) + static_cast<int>(k)));
    if (i < t.letters.size()) keys.push_back(std::string(1, t.letters[i]));
  }
  return keys;
}

// The output's keys: as written, or (implicit) the ellipsis dims then the letters
// used exactly once, in alphabetical order.
Expected<std::vector<Key>> outputKeys(const std::string* out, const std::vector<Term>& terms, int ellipsisRank,
                                      const std::string& eq) {
  std::vector<Key> keys;
  std::string letters;
  if (out) {
    ZP_ASSIGN_OR_RETURN(Term t, parseTerm(*out, eq));
    letters = t.letters;
    for (size_t i = 0; i <= letters.size(); ++i) {
      if (static_cast<int>(i) == t.ellipsisAt)
        for (int k = 0; k < ellipsisRank; ++k) keys.push_back(fmt::format("#{}", k));
      if (i < letters.size()) keys.push_back(std::string(1, letters[i]));
    }
    return keys;
  }
  std::map<char, int> count;
  for (const auto& t : terms)
    for (char c : t.letters) ++count[c];
  for (int k = 0; k < ellipsisRank; ++k) keys.push_back(fmt::format("#{}", k));
  for (const auto& [c, n] : count)
    if (n == 1) keys.push_back(std::string(1, c));
  return keys;
}

// Element offsets of operand `o` per label (a label repeated in the operand adds
// its strides: a diagonal; a broadcast dim of size 1 has stride 0).
std::vector<int64_t> labelStrides(const EinsumPlan& p, size_t o, const Shape& shape) {
  std::vector<int64_t> st(static_cast<size_t>(p.labels), 0);
  int64_t s = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    const int l = p.operand[o][d];
    if (shape[d] != 1 || p.size[static_cast<size_t>(l)] == 1) st[static_cast<size_t>(l)] += s;
    s *= shape[d];
  }
  return st;
}

template <typename T, typename Acc>
void naiveSum(const EinsumPlan& p, const std::vector<const Tensor*>& in, Tensor& y) {
  std::vector<std::vector<int64_t>> st;
  for (size_t o = 0; o < in.size(); ++o) st.push_back(labelStrides(p, o, in[o]->shape));
  std::vector<int64_t> idx(static_cast<size_t>(p.labels), 0);
  const int64_t outCount = numel(p.outputShape);
  int64_t inner = 1;
  for (int l = p.outputLabels; l < p.labels; ++l) inner *= p.size[static_cast<size_t>(l)];
  std::vector<int64_t> offs(in.size(), 0);
  for (int64_t out = 0; out < outCount; ++out) {
    Acc acc = 0;
    for (int64_t j = 0; j < inner; ++j) {
      Acc prod = 1;
      for (size_t o = 0; o < in.size(); ++o) {
        int64_t off = 0;
        for (int l = 0; l < p.labels; ++l) off += idx[static_cast<size_t>(l)] * st[o][static_cast<size_t>(l)];
        prod *= static_cast<Acc>(in[o]->ptr<T>()[off]);
      }
      acc += prod;
      for (int l = p.labels; l-- > p.outputLabels;) {  // next contracted position
        if (++idx[static_cast<size_t>(l)] < p.size[static_cast<size_t>(l)]) break;
        idx[static_cast<size_t>(l)] = 0;
      }
    }
    y.ptr<T>()[out] = static_cast<T>(acc);
    for (int l = p.outputLabels; l-- > 0;) {  // next output position
      if (++idx[static_cast<size_t>(l)] < p.size[static_cast<size_t>(l)]) break;
      idx[static_cast<size_t>(l)] = 0;
    }
  }
}

// The roles of labels in a two-operand contraction, each list in the order used.
struct GemmRoles {
  std::vector<int> batch, m, n, k;
};

GemmRoles rolesOf(const EinsumPlan& p) {
  GemmRoles r;
  auto in = [&](size_t o, int l) {
    return std::find(p.operand[o].begin(), p.operand[o].end(), l) != p.operand[o].end();
  };
  for (int l = 0; l < p.outputLabels; ++l) {
    if (in(0, l) && in(1, l)) r.batch.push_back(l);
    else if (in(0, l)) r.m.push_back(l);
    else r.n.push_back(l);
  }
  for (int l : p.operand[0])
    if (l >= p.outputLabels) r.k.push_back(l);
  return r;
}

int64_t product(const EinsumPlan& p, const std::vector<int>& labels) {
  int64_t n = 1;
  for (int l : labels) n *= p.size[static_cast<size_t>(l)];
  return n;
}

std::vector<int> concat(std::initializer_list<const std::vector<int>*> parts) {
  std::vector<int> out;
  for (const auto* v : parts) out.insert(out.end(), v->begin(), v->end());
  return out;
}

// x (dims labelled `from`) copied into the label order `to`.
void permute(const EinsumPlan& p, const float* x, const std::vector<int>& from, const std::vector<int>& to, float* y) {
  std::vector<int64_t> stFrom(static_cast<size_t>(p.labels), 0);
  int64_t s = 1;
  for (size_t d = from.size(); d-- > 0;) {
    stFrom[static_cast<size_t>(from[d])] = s;
    s *= p.size[static_cast<size_t>(from[d])];
  }
  std::vector<int64_t> idx(to.size(), 0);
  for (int64_t o = 0; o < s; ++o) {
    int64_t off = 0;
    for (size_t d = 0; d < to.size(); ++d) off += idx[d] * stFrom[static_cast<size_t>(to[d])];
    y[o] = x[off];
    for (size_t d = to.size(); d-- > 0;) {
      if (++idx[d] < p.size[static_cast<size_t>(to[d])]) break;
      idx[d] = 0;
    }
  }
}

}  // namespace

Expected<EinsumPlan> planEinsum(const std::string& equation, const std::vector<Shape>& shapes) {
  std::string eq;
  for (char c : equation)
    if (!std::isspace(static_cast<unsigned char>(c))) eq += c;
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  const std::string rhs = arrow == std::string::npos ? "" : eq.substr(arrow + 2);
  std::vector<Term> terms;
  for (const auto& t : split(lhs, ',')) { ZP_ASSIGN_OR_RETURN(Term term, parseTerm(t, equation)); terms.push_back(term); }
  if (terms.size() != shapes.size())
    return makeError("Einsum equation '{}' has {} operands, the node {}", equation, terms.size(), shapes.size());
  int ellipsisRank = 0;
  for (size_t o = 0; o < terms.size(); ++o)
    if (terms[o].ellipsisAt >= 0)
      ellipsisRank = std::max(ellipsisRank, static_cast<int>(shapes[o].size()) - static_cast<int>(terms[o].letters.size()));
  std::vector<std::vector<Key>> keys;
  for (size_t o = 0; o < terms.size(); ++o) {
    ZP_ASSIGN_OR_RETURN(auto k, operandKeys(terms[o], shapes[o].size(), ellipsisRank, equation));
    keys.push_back(std::move(k));
  }
  ZP_ASSIGN_OR_RETURN(auto outKeys, outputKeys(arrow == std::string::npos ? nullptr : &rhs, terms, ellipsisRank, equation));
  EinsumPlan p;
  p.equation = equation;
  std::map<Key, int> label;
  auto labelOf = [&](const Key& k) {
    auto [it, added] = label.emplace(k, p.labels);
    if (added) { ++p.labels; p.size.push_back(1); }
    return it->second;
  };
  for (const auto& k : outKeys) {
    if (label.count(k)) return makeError("Einsum equation '{}' repeats '{}' in its output", equation, k);
    labelOf(k);
  }
  p.outputLabels = p.labels;
  for (size_t o = 0; o < keys.size(); ++o) {
    p.operand.emplace_back();
    for (size_t d = 0; d < keys[o].size(); ++d) {
      const int l = labelOf(keys[o][d]);
      p.operand.back().push_back(l);
      int64_t& sz = p.size[static_cast<size_t>(l)];
      const int64_t dim = shapes[o][d];
      if (sz == 1) sz = dim;
      else if (dim != 1 && dim != sz)
        return makeError("Einsum equation '{}': label '{}' is {} in one operand and {} in another", equation, keys[o][d], sz, dim);
    }
  }
  for (int l = 0; l < p.outputLabels; ++l) {
    bool used = false;
    for (const auto& op : p.operand) used = used || std::find(op.begin(), op.end(), l) != op.end();
    if (!used) return makeError("Einsum equation '{}' has output label '{}' in no operand", equation, outKeys[static_cast<size_t>(l)]);
    p.outputShape.push_back(p.size[static_cast<size_t>(l)]);
  }
  return p;
}

Status einsumNaive(const EinsumPlan& p, const std::vector<const Tensor*>& in, Tensor& y) {
  for (const Tensor* t : in)
    if (t->dtype != in[0]->dtype) return makeError("Einsum operands differ in type");
  return visitDType(in[0]->dtype, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) naiveSum<T, double>(p, in, y);
    else if constexpr (kIsArithmetic<T>) naiveSum<T, int64_t>(p, in, y);
    else return makeError("Einsum on {} is not supported", dtypeName(in[0]->dtype));
    return {};
  });
}

bool canUseGemm(const EinsumPlan& p, const std::vector<const Tensor*>& in) {
  if (in.size() != 2 || in[0]->dtype != DType::F32 || in[1]->dtype != DType::F32) return false;
  for (size_t o = 0; o < 2; ++o) {
    const auto& labels = p.operand[o];
    for (size_t d = 0; d < labels.size(); ++d) {
      if (in[o]->shape[d] != p.size[static_cast<size_t>(labels[d])]) return false;  // broadcast
      if (std::count(labels.begin(), labels.end(), labels[d]) > 1) return false;    // diagonal
    }
  }
  // Every contracted label in both operands (none summed over one operand alone).
  for (int l = p.outputLabels; l < p.labels; ++l)
    for (size_t o = 0; o < 2; ++o)
      if (std::find(p.operand[o].begin(), p.operand[o].end(), l) == p.operand[o].end()) return false;
  return true;
}

void einsumGemm(const EinsumPlan& p, const std::vector<const Tensor*>& in, Tensor& y, int threads, GemmLibrary gemm) {
  const GemmRoles r = rolesOf(p);
  const int64_t B = product(p, r.batch), M = product(p, r.m), N = product(p, r.n), K = product(p, r.k);
  // A as [batch, M, K] or [batch, K, M]; B as [batch, K, N] or [batch, N, K]; else a copy.
  const auto aMK = concat({&r.batch, &r.m, &r.k}), aKM = concat({&r.batch, &r.k, &r.m});
  const auto bKN = concat({&r.batch, &r.k, &r.n}), bNK = concat({&r.batch, &r.n, &r.k});
  std::vector<float> aCopy, bCopy, cCopy;
  const float* pa = in[0]->ptr<float>();
  const float* pb = in[1]->ptr<float>();
  bool transA = false, transB = false;
  if (p.operand[0] == aKM && p.operand[0] != aMK) transA = true;
  else if (p.operand[0] != aMK) {
    aCopy.resize(static_cast<size_t>(B * M * K));
    permute(p, pa, p.operand[0], aMK, aCopy.data());
    pa = aCopy.data();
  }
  if (p.operand[1] == bNK && p.operand[1] != bKN) transB = true;
  else if (p.operand[1] != bKN) {
    bCopy.resize(static_cast<size_t>(B * K * N));
    permute(p, pb, p.operand[1], bKN, bCopy.data());
    pb = bCopy.data();
  }
  const auto cOrder = concat({&r.batch, &r.m, &r.n});
  std::vector<int> outOrder(static_cast<size_t>(p.outputLabels));
  for (int l = 0; l < p.outputLabels; ++l) outOrder[static_cast<size_t>(l)] = l;
  float* pc = y.ptr<float>();
  if (cOrder != outOrder) {
    cCopy.resize(static_cast<size_t>(B * M * N));
    pc = cCopy.data();
  }
  for (int64_t b = 0; b < B; ++b)
    sgemmRowMajor(transA, transB, M, N, K, 1.0f, pa + b * M * K, transA ? M : K, pb + b * K * N, transB ? K : N, 0.0f,
                  pc + b * M * N, N, threads, gemm);
  if (cOrder != outOrder) permute(p, pc, cOrder, outOrder, y.ptr<float>());
}

Expected<std::unique_ptr<Op>> makeEinsum(const BuildContext& bc) {
  const std::string equation = attrString(*bc.node, "equation", "");
  if (equation.empty()) return makeError("Einsum without an equation");
  return fnOp([equation](ExecContext& ctx, const std::vector<const Tensor*>& in) -> Status {
    std::vector<Shape> shapes;
    for (const Tensor* t : in) shapes.push_back(t->shape);
    ZP_ASSIGN_OR_RETURN(EinsumPlan p, planEinsum(equation, shapes));
    Tensor& y = ctx.alloc(0, in[0]->dtype, p.outputShape);
    if (canUseGemm(p, in)) {
      einsumGemm(p, in, y, ctx.threads, ctx.gemm);
      return {};
    }
    return einsumNaive(p, in, y);
  });
}

}  // namespace zp::runtime::detail
