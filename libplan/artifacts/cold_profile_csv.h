// cold_profile.csv, its reader and writer (libplan/profile/cold_profile.h):
//   kind,model,step,node,op_type,kernel,gemm,raw_bytes,cache_bytes,transform_ms,first_exec_ms,warm_exec_ms,value
// Rows by kind, in this order:
//   host   - key in `node`, number in `value`: cores, threads, storage_read_mb_per_s,
//            storage_probe_bytes (each once), gemm_startup_ms (once per library in `gemm`),
//            storage_read_latency_ms (at most once; absent: 0)
//   model  - `model` and its setup_ms in `value`
//   node   - one candidate of one executed node: every column but `value`
// Cells a kind does not use are empty. Node rows name a model of a model row;
// the rows of one step name one node; a (model, step, kernel, gemm) appears once.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>

#include "libplan/profile/cold_profile.h"
#include "libplan/util/error.h"

namespace zp::artifacts {

inline constexpr std::string_view kColdProfileCsvHeader =
    "kind,model,step,node,op_type,kernel,gemm,raw_bytes,cache_bytes,transform_ms,first_exec_ms,warm_exec_ms,value";

// Errors name the file and line: "cold_profile.csv:4: column 'transform_ms': '-1' is not a number in [0, 1e+07]".
Expected<profile::ColdProfile> parseColdProfileCsv(std::string_view text, const std::string& label);
Expected<profile::ColdProfile> readColdProfileCsv(const std::filesystem::path& path);
std::string formatColdProfileCsv(const profile::ColdProfile& p);
Status writeColdProfileCsv(const profile::ColdProfile& p, const std::filesystem::path& path);

}  // namespace zp::artifacts
