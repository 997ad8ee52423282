// shard.json (artifacts::parseProfileShard), what zoo-profile --merge reads;
// an accepted shard must read back equal after writing.
#include "fuzz/fuzz_target.h"
#include "fuzz/fuzz_util.h"
#include "libplan/artifacts/profile_shard.h"

ZP_FUZZ_TARGET(profile_shard) {
  using namespace zp;
  auto shard = artifacts::parseProfileShard(fuzz::asText(data, size), "shard.json");
  if (!shard.ok()) return 0;
  auto again = artifacts::parseProfileShard(artifacts::formatProfileShard(*shard), "shard.json");
  fuzz::require(again.ok() && *again == *shard, "shard.json: an accepted shard does not read back equal");
  return 0;
}
