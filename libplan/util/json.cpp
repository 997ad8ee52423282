#include "libplan/util/json.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace zp {

double roundSig(double v, int digits) {
  if (v == 0.0 || !std::isfinite(v)) return v;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*e", digits - 1, v);
  return std::strtod(buf, nullptr);
}

static Json roundFloats(const Json& j) {
  if (j.is_number_float()) return roundSig(j.get<double>());
  if (j.is_object()) {
    Json out = Json::object();
    for (auto it = j.begin(); it != j.end(); ++it) out[it.key()] = roundFloats(it.value());
    return out;
  }
  if (j.is_array()) {
    Json out = Json::array();
    for (const auto& e : j) out.push_back(roundFloats(e));
    return out;
  }
  return j;
}

std::string canonicalJson(const Json& j) { return roundFloats(j).dump(2) + "\n"; }

std::string canonicalJsonExact(const Json& j) { return j.dump(2) + "\n"; }

}  // namespace zp
