// The zoo (what zoo.json describes, schema in schemas/zoo.schema.json): tasks,
// their sparse variants, datasets or measured accuracies, and the target
// processors. Its reader and writer are libplan/artifacts/zoo_json.h.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "libplan/zoo/processor.h"


namespace zp::zoo {

struct VariantSpec {
  std::string id;
  std::string onnx;  // as written in zoo.json
  std::string kind;  // dense | unstructured | structured | quantized
  std::optional<double> sparsity;
  std::optional<std::string> precision;
  std::optional<double> accuracy;
};

struct DatasetSpec {
  std::string inputs, labels, calibration, metric;  // paths as written in zoo.json
};

struct TaskSpec {
  std::string name;
  std::string description;
  std::vector<VariantSpec> variants;
  std::optional<DatasetSpec> dataset;
};

struct Zoo {
  std::filesystem::path file;  // where it was read from
  std::string sha256;          // of the file's bytes
  std::string name;
  std::string description;
  std::vector<Processor> processors;  // their profile source, engine and cores resolved (defaults filled in)
  std::vector<TaskSpec> tasks;

  // A path from zoo.json resolved against the folder of zoo.json.
  std::filesystem::path resolve(const std::string& relative) const;
  // zoo.json and every file it names (models, datasets, imported profiles):
  // what a tool reading the zoo must never write over.
  std::vector<std::filesystem::path> files() const;
};

}  // namespace zp::zoo
