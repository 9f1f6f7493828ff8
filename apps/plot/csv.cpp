// CSV, the numbers behind every picture (to_csv, apps/plot/plot.h).
#include <stdexcept>

#include <fmt/format.h>

#include "apps/plot/plot.h"

namespace seqgrad::plot {

namespace {

std::string csv_field(const std::string& field) {
    const bool needs_quotes =
        field.find_first_of(",\"\r\n") != std::string::npos ||
        (!field.empty() && (field.front() == ' ' || field.back() == ' '));  // spreadsheets trim
    if (!needs_quotes) return field;
    std::string quoted = "\"";
    for (char c : field) {
        if (c == '"') quoted += '"';  // a quote inside a quoted field is written twice
        quoted += c;
    }
    return quoted + "\"";
}

void append_csv_row(std::string& csv, const std::vector<std::string>& fields) {
    for (std::size_t i = 0; i < fields.size(); ++i) {
        if (i > 0) csv += ',';
        csv += csv_field(fields[i]);
    }
    csv += '\n';
}

}  // namespace

std::string to_csv(const std::vector<std::string>& header,
                   const std::vector<std::vector<std::string>>& rows) {
    std::string csv;
    if (!header.empty()) append_csv_row(csv, header);
    for (std::size_t r = 0; r < rows.size(); ++r) {
        if (!header.empty() && rows[r].size() != header.size()) {
            throw std::invalid_argument(fmt::format("to_csv: row {} has {} fields, header has {}",
                                                    r, rows[r].size(), header.size()));
        }
        append_csv_row(csv, rows[r]);
    }
    return csv;
}

}  // namespace seqgrad::plot
