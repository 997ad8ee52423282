// zoo.json's multitask_groups section: the weight-shared task models that
// zoo-mts stitches into one graph. Its own reader and writer beside zoo.json's.
#pragma once
#include <string>
#include <vector>

#include "libplan/util/error.h"
#include "libplan/util/json.h"
#include "libplan/zoo/multitask_group.h"
#include "libplan/zoo/zoo.h"

namespace zp::artifacts {

Expected<std::vector<zoo::MultitaskGroup>> parseMultitaskGroups(const std::string& text, const zoo::Zoo& zoo);
Expected<std::vector<zoo::MultitaskGroup>> loadMultitaskGroups(const zoo::Zoo& zoo);

Json multitaskGroupsToJson(const std::vector<zoo::MultitaskGroup>& groups);

}  // namespace zp::artifacts
