// Where this build's checkout, build tree and node executable are. Only
// test_paths.cpp is compiled with them (its compile definitions), so no other
// test source's compile command names an absolute path, and ccache shares the
// objects of every other test source between checkouts in different folders.
#pragma once

namespace zp::testing {

extern const char* const kSourceDir;
extern const char* const kBinaryDir;
extern const char* const kNodeExecutable;  // empty when node was not found

}  // namespace zp::testing
