// The HTML of `seqgrad explore`: the page template (apps/explore/explore_page.html, embedded by CMake)
// with the data block and the title filled in, safely.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace seqgrad {

// `data` as JSON that can sit inside <script type="application/json">: every "<", ">" and "&"
// (they only occur inside strings) is written as \u003c, \u003e, \u0026, so no string can end
// the script element ("</script>") or open a comment ("<!--"); JSON.parse reads it back as is.
std::string json_for_script(const nlohmann::json& data);

// The whole self-contained page (the title escaped by plot::xml_escape).
std::string explore_page(const nlohmann::json& data, const std::string& title);

}  // namespace seqgrad
