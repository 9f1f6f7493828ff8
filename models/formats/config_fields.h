// Config fields declared once. Each section of a config (the model's, models/model/model_config.h;
// data, train, decode, output, models/run/config.h) lists its fields in one table, an X-macro of
//   FIELD(type, name, default, rule, doc)
// from which come the struct's members with their defaults (SEQGRAD_DECLARE_FIELD), the table of
// {key, member, rule, doc} (SEQGRAD_FIELD_ENTRY) that reads a section from JSON with an error
// naming the key and what was expected, writes it back (fields_as_json), and gives the list of
// keys the README's configuration table is checked against (tests/unit/test_config.cpp).
//
// A rule says what a value may be: an integer in a range, a number in a range, one of a few
// strings, any UTF-8 string, true or false. Checks across keys (a key read only by one task, a
// size divisible by another) are written beside the section's reader.
#pragma once

#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace seqgrad {

// What one field's value may be (which of these applies follows from the field's type).
struct FieldRule {
    int64_t min = INT64_MIN, max = INT64_MAX;              // integers: [min, max]
    double number_min = -HUGE_VAL, number_max = HUGE_VAL;  // numbers: [min, max] ...
    bool min_inclusive = true;                             // ... or (min, max]
    std::vector<std::string> options;                      // strings: one of these (empty: any)
    // strings: when not empty, true and false are also read, as these two of the options (a
    // key that was a boolean before it had more values)
    std::string if_true, if_false;
};

// integers
inline FieldRule at_least(int64_t min) {
    return {min, INT64_MAX, -HUGE_VAL, HUGE_VAL, true, {}, {}, {}};
}
inline FieldRule between(int64_t min, int64_t max) {
    return {min, max, -HUGE_VAL, HUGE_VAL, true, {}, {}, {}};
}
// numbers
inline FieldRule number_at_least(double min) {
    return {INT64_MIN, INT64_MAX, min, HUGE_VAL, true, {}, {}, {}};
}
inline FieldRule number_above(double min) {
    return {INT64_MIN, INT64_MAX, min, HUGE_VAL, false, {}, {}, {}};
}
inline FieldRule number_between(double min, double max, bool min_inclusive = true) {
    return {INT64_MIN, INT64_MAX, min, max, min_inclusive, {}, {}, {}};
}
// strings
inline FieldRule one_of(std::vector<std::string> options) {
    return {INT64_MIN, INT64_MAX, -HUGE_VAL, HUGE_VAL, true, std::move(options), {}, {}};
}
// one of a few strings, or true / false as two of them
inline FieldRule one_of_or_boolean(std::vector<std::string> options, std::string if_true,
                                   std::string if_false) {
    FieldRule rule = one_of(std::move(options));
    rule.if_true = std::move(if_true);
    rule.if_false = std::move(if_false);
    return rule;
}
// booleans, any UTF-8 string, a seed (a non-negative integer of 64 bits)
inline FieldRule any_value() {
    return {};
}

// One row of a section's table: the JSON key, the member it fills, its rule and what it means.
template <class Section>
struct Field {
    using Member = std::variant<int Section::*, int64_t Section::*, uint64_t Section::*,
                                double Section::*, bool Section::*, std::string Section::*>;
    const char* key;
    Member member;
    FieldRule rule;
    const char* doc;
};
template <class Section>
using FieldTable = std::vector<Field<Section>>;

// The two uses of a FIELD(type, name, default, rule, doc) table: a struct member with its
// default, and a row of the table (inside a function where `Section` names the struct).
#define SEQGRAD_DECLARE_FIELD(type, name, value, rule, doc) type name = value;
#define SEQGRAD_FIELD_ENTRY(type, name, value, rule, doc) \
    Field<Section>{#name, &Section::name, rule, doc},

// Reads the keys of one section of a config into struct fields, checking types and ranges, and
// rejects any key it was not asked about. Errors name the source, the key path and what was
// expected:  configs/x.json: model.hidden_size: expected a positive integer, got "big".
class SectionReader {
  public:
    SectionReader(const nlohmann::json& root, const std::string& section,
                  const std::string& source);

    // Every field of `table`, in its order.
    template <class Section>
    void read(const FieldTable<Section>& table, Section& section) {
        for (const Field<Section>& f : table)
            std::visit([&](auto member) { read(f.key, section.*member, f.rule); }, f.member);
    }
    void read(const std::string& key, int& field, const FieldRule& rule);
    void read(const std::string& key, int64_t& field, const FieldRule& rule);
    void read(const std::string& key, uint64_t& field, const FieldRule& rule);  // a seed
    void read(const std::string& key, double& field, const FieldRule& rule);
    void read(const std::string& key, bool& field, const FieldRule& rule);
    void read(const std::string& key, std::string& field, const FieldRule& rule);

    // Whether the section sets `key` (read or not).
    bool given(const std::string& key) const;
    // Call after reading every known key: anything left is unknown.
    void finish();
    const std::string& source() const { return source_; }

  private:
    const nlohmann::json* take(const std::string& key);
    [[noreturn]] void fail(const std::string& key, const std::string& expected,
                           const nlohmann::json& got) const;

    std::string section_, source_;
    const nlohmann::json* object_ = nullptr;
    std::set<std::string> read_;
};

// The fields of `table` as the JSON object SectionReader reads back.
template <class Section>
void fields_as_json(const FieldTable<Section>& table, const Section& section, nlohmann::json& out) {
    for (const Field<Section>& f : table)
        std::visit([&](auto member) { out[f.key] = section.*member; }, f.member);
}

}  // namespace seqgrad
