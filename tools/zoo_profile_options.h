// zoo-profile's command line: every option and its checks, parsed into one
// request (a whole run, one shard of it, or the merge of the shards).
#pragma once
#include <filesystem>
#include <optional>
#include <variant>
#include <vector>

#include "drivers/stitch_flow/zoo_profile.h"

namespace zp::cli {

struct ZooProfileRequest {
  std::filesystem::path stitchDir, outDir;
  drivers::ProfileParams params;           // params.stop is the caller's to set
  std::optional<drivers::ShardSpec> shard;  // --shard K/N
  std::vector<std::filesystem::path> mergeDirs;  // --merge: the shards' directories
};

// A request, or the exit code to end with: 0 after --help, kOptionError after
// one line "zoo-profile: error: ..." on stderr.
std::variant<ZooProfileRequest, int> parseZooProfileArgs(int argc, char** argv);

}  // namespace zp::cli
