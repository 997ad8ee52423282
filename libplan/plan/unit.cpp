#include "libplan/plan/unit.h"

#include <algorithm>
#include <charconv>

namespace zp::plan {

UnitId UnitId::subgraph(std::string task, int position, std::string variant) {
  return UnitId{UnitKind::Subgraph, std::move(task), position, std::move(variant)};
}
UnitId UnitId::group(std::string name) { return UnitId{UnitKind::Group, std::move(name), -1, ""}; }
UnitId UnitId::model(std::string name) { return UnitId{UnitKind::Model, std::move(name), -1, ""}; }

std::string UnitId::profileKey() const {
  if (kind == UnitKind::Subgraph) return name + "/" + std::to_string(position) + "/" + variant;
  return name;
}

std::string UnitId::str() const {
  switch (kind) {
    case UnitKind::Subgraph: return "subgraph:" + profileKey();
    case UnitKind::Group: return "group:" + name;
    case UnitKind::Model: return "model:" + name;
  }
  return {};
}

Expected<UnitId> parseUnitId(const std::string& text) {
  auto bad = [&] {
    return makeError("unit id '{}': expected subgraph:TASK/POSITION/VARIANT, group:NAME or model:NAME", text);
  };
  const auto colon = text.find(':');
  if (colon == std::string::npos || colon + 1 == text.size()) return bad();
  const std::string kind = text.substr(0, colon), rest = text.substr(colon + 1);
  if (kind == "group") return UnitId::group(rest);
  if (kind == "model") return UnitId::model(rest);
  if (kind != "subgraph") return bad();
  const auto a = rest.find('/'), b = rest.rfind('/');
  if (a == std::string::npos || a == b || a == 0 || b + 1 == rest.size()) return bad();
  int position = -1;
  const char* first = rest.data() + a + 1;
  const char* last = rest.data() + b;
  auto [end, ec] = std::from_chars(first, last, position);
  if (ec != std::errc() || end != last || position < 0) return bad();
  return UnitId::subgraph(rest.substr(0, a), position, rest.substr(b + 1));
}

const Unit* findUnit(const std::vector<Unit>& units, const UnitId& id) {
  auto it = std::find_if(units.begin(), units.end(), [&](const Unit& u) { return u.id == id; });
  return it == units.end() ? nullptr : &*it;
}

}  // namespace zp::plan
