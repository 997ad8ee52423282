// profile.csv, the generic profile CSV (schemas/profile.schema.json): the reader
// and writer of a profile database (libplan/profile/profile_db.h).
//
// Columns, in this order:
//   kind,task,position,variant,node,processor,policy,median_ms,p90_ms,runs,memory_bytes,
//   from_processor,to_processor,bytes,source
// kind subgraph:   one (task, position, variant) subgraph on `processor` with kernel
//                  `policy` ("default" when not applicable): median_ms (p90_ms, runs,
//                  memory_bytes optional).
// kind node:       one ONNX node (`node`) of variant `variant` of `task`, as importers
//                  produce it before mapping onto subgraphs; `position` may be empty.
// kind transition: moving the boundary after `position` of `task` from `from_processor`
//                  to `to_processor`: bytes, median_ms (p90_ms optional); `variant` optional.
// Cells a kind does not use must be empty. Rows are written sorted by their key
// (kind, task, position, variant, processor, policy, node, from, to); numbers in the
// shortest form that reads back to the same double, so rewriting a file this module
// wrote gives the same bytes.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>

#include "libplan/profile/profile_db.h"
#include "libplan/util/error.h"

namespace zp::artifacts {

// The CSV header, comma-separated, without a line end.
std::string_view profileCsvHeader();

// Parses the CSV text; `label` (normally the file name) starts every error:
// "prof.csv:12: column 'median_ms': 'nan' is not a finite number".
// A key given twice in one file is an error.
Expected<profile::ProfileDb> parseProfileCsv(std::string_view text, const std::string& label);
Expected<profile::ProfileDb> readProfileCsv(const std::filesystem::path& path);

std::string formatProfileCsv(const profile::ProfileDb& db);
Status writeProfileCsv(const profile::ProfileDb& db, const std::filesystem::path& path);  // atomic

}  // namespace zp::artifacts
