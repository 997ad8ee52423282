// JSON as profilers write it: ONNX Runtime and trtexec print names without escaping,
// so a name holding '"', '\' or a control character (TensorRT's \x1f separator) makes
// the file invalid JSON. parseLenientJson parses strictly first and, only when that
// fails, repairs the strings and parses again.
#pragma once
#include <string>
#include <string_view>

#include "libplan/util/error.h"
#include "libplan/util/json.h"

namespace zp::profile {

struct JsonRepair {
  // true: every '\' inside a string is a literal character (ORT never escapes);
  // false: valid escapes (\" \\ \/ \b \f \n \r \t \uXXXX) are kept, other backslashes made literal.
  bool backslashesLiteral = false;
};

// Inside strings: a '"' whose next non-blank character is not one of : , } ] (or a line
// end) is taken as part of the string and escaped; control characters become \u00XX;
// backslashes as `options` says. Text outside strings is copied unchanged.
std::string repairJsonStrings(std::string_view text, const JsonRepair& options);

// Errors: "<label>: not valid JSON (even after repairing unescaped names): <parser message>".
// *repaired (when given) tells whether the repair was needed.
Expected<Json> parseLenientJson(std::string_view text, const std::string& label, const JsonRepair& options,
                                bool* repaired = nullptr);

}  // namespace zp::profile
