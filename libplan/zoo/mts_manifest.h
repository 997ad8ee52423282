// mts.json: what zoo-mts wrote. Per multitask group its stitched ONNX file, how
// every member's input and outputs are named in it, and the byte accounting
// (weights shared by several members stored once, exclusive weights, auxiliary
// constants). A later stage places a stitched group as one unit from this.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "libplan/util/error.h"
#include "libplan/util/json.h"
#include "libplan/zoo/member_io.h"

namespace zp::zoo {

// A member's input and outputs, and the variant of its task it was stitched from.
struct MtsMemberEntry : MemberIo {
  std::string variant;
};

struct MtsGroupEntry {
  std::string name;
  std::string mode;    // mts | netfuse
  bool sharedInput = false;  // members of one input shape read one stitched input
  std::string file;    // relative to mts.json's folder
  std::string sha256;  // of the file's bytes
  std::vector<MtsMemberEntry> members;
  int64_t sharedBytes = 0, exclusiveBytes = 0, auxBytes = 0;
  int64_t memberBytes = 0, memberFoldedBytes = 0;
  double flops = 0, memberFlops = 0;
  int64_t masks = 0, realignments = 0;
};

struct MtsManifest {
  std::string tool;
  std::string zooPath, zooSha256;  // zoo.json relative to mts.json's folder
  std::vector<MtsGroupEntry> groups;
};

// Errors: "<label>: $.groups[0].members: ...".

}  // namespace zp::zoo
