// One helper for every operator test (ncnn's test_layer habit): a case is a
// single-node model written as ONNX text with random inputs; the runtime runs it
// (under each policy the case names) and ONNX Runtime runs it once, for all cases
// in one node process; the outputs are compared.
#pragma once
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "libplan/runtime/session.h"

namespace zp::runtime::testing {

// How an operand's random values are drawn.
enum class Fill {
  Uniform,    // floats in [-1, 1)
  Positive,   // floats in [0.1, 2)
  AwayFromZero,  // floats with |v| in [0.5, 2)
  SmallInts,  // integers in [-3, 3] (as floats for float operands): ties and equal values happen
  Halves,     // multiples of 0.5 in [-4, 4]: rounding ties
  Wide,       // floats in [-30, 30)
  Counts,     // integers in [1, 9]
  Bools,      // 0 or 1
  Pruned,     // floats in [-1, 1), 80% of them zero
};

struct Operand {
  std::string name;
  DType dtype = DType::F32;
  Shape shape;
  bool initializer = false;     // written into the model text; otherwise a graph input
  Fill fill = Fill::Uniform;
  std::vector<double> values;   // fixed values instead of random ones
};

// A graph input / an initializer with random values, and one with fixed values.
Operand in(std::string name, Shape shape, Fill fill = Fill::Uniform, DType dtype = DType::F32);
Operand init(std::string name, Shape shape, Fill fill = Fill::Uniform, DType dtype = DType::F32);
Operand fixed(std::string name, DType dtype, Shape shape, std::vector<double> values, bool initializer = true);

struct OpCase {
  std::string op;                        // the operator under test
  std::string what;                      // what the case exercises (unique per op)
  std::string body;                      // the node(s), e.g. "y = Add (a, b)"
  std::vector<Operand> operands;
  std::vector<std::string> outputs = {"float y"};  // "type name" of each graph output
  int opset = 13;
  double tolerance = 1e-5;               // floats: max |ours - ort| <= tolerance * max(1, max |ort|)
  std::vector<std::string> policies = {"default"};
  std::string name() const { return op + "/" + what; }
};

// Every heavy-node kernel policy (tune left out: it picks by timing).
const std::vector<std::string>& everyForcedPolicy();

struct CaseResult {
  std::string name;
  std::vector<std::string> failures;  // empty when every output of every policy matched
};

// Writes every case's model and inputs under `dir`, runs ONNX Runtime once over all
// of them (node at `node`, tests/ort/run_ort.js under `sourceDir`), runs the runtime
// on each under each of its policies, and compares. An error when ORT cannot be run.
// Also records, per case, ORT's error ("" for none) in dir/ort_errors.json, so that
// dir serves as the references of checkAgainstOrtOutputs.
Expected<std::vector<CaseResult>> runAgainstOnnxRuntime(const std::vector<OpCase>& cases,
                                                        const std::filesystem::path& dir,
                                                        const std::string& node, const std::string& sourceDir);

// The same check against ORT's outputs written before by runAgainstOnnxRuntime into
// `references` (on another machine: the aarch64 build under qemu-user, whose cases
// and inputs are the same, seeded); reads them in place, writes nothing.
Expected<std::vector<CaseResult>> checkAgainstOrtOutputs(const std::vector<OpCase>& cases,
                                                         const std::filesystem::path& references);

// The cases, by operator family (tests/runtime/ops/<family>_cases.cpp).
std::vector<OpCase> elementwiseCases();
std::vector<OpCase> unaryCases();
std::vector<OpCase> shapeCases();
std::vector<OpCase> movementCases();
std::vector<OpCase> generatorCases();
std::vector<OpCase> reduceCases();
std::vector<OpCase> quantCases();
std::vector<OpCase> convCases();
std::vector<OpCase> gemmCases();
std::vector<OpCase> poolCases();
std::vector<OpCase> normCases();
std::vector<OpCase> softmaxCases();
std::vector<OpCase> resizeCases();
std::vector<OpCase> convTransposeCases();
std::vector<OpCase> indexCases();
std::vector<OpCase> matrixCases();

}  // namespace zp::runtime::testing
