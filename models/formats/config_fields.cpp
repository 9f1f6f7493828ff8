#include "seqgrad/models/formats/config_fields.h"

#include <fmt/format.h>

#include <algorithm>

#include "seqgrad/autograd/error.h"
#include "seqgrad/data/utf8.h"

namespace seqgrad {

using nlohmann::json;

namespace {

std::string describe_range(int64_t min, int64_t max) {
    if (min == 1 && max >= INT32_MAX) return "expected a positive integer";
    if (min == 0 && max >= INT32_MAX) return "expected a non-negative integer";
    return fmt::format("expected an integer in [{}, {}]", min, max);
}

}  // namespace

SectionReader::SectionReader(const json& root, const std::string& section,
                             const std::string& source)
    : section_(section), source_(source) {
    if (root.contains(section)) {
        object_ = &root.at(section);
        if (!object_->is_object()) fail(section, "expected an object", *object_);
    }
}

void SectionReader::read(const std::string& key, int& field, const FieldRule& rule) {
    int64_t v = field;
    read(key, v, between(rule.min, std::min<int64_t>(rule.max, INT32_MAX)));
    field = int(v);
}

void SectionReader::read(const std::string& key, int64_t& field, const FieldRule& rule) {
    const json* v = take(key);
    if (!v) return;
    const std::string expected = describe_range(rule.min, rule.max);
    if (!v->is_number_integer()) fail(key, expected, *v);
    const int64_t x = v->get<int64_t>();
    if (x < rule.min || x > rule.max) fail(key, expected, *v);
    field = x;
}

void SectionReader::read(const std::string& key, uint64_t& field, const FieldRule&) {
    const json* v = take(key);
    if (!v) return;
    if (!v->is_number_unsigned() && !(v->is_number_integer() && v->get<int64_t>() >= 0))
        fail(key, "expected a non-negative integer", *v);
    field = v->get<uint64_t>();
}

void SectionReader::read(const std::string& key, double& field, const FieldRule& rule) {
    const json* v = take(key);
    if (!v) return;
    const double min = rule.number_min, max = rule.number_max;
    const std::string expected =
        max == HUGE_VAL
            ? fmt::format("a number {} {}", rule.min_inclusive ? ">=" : ">", min)
            : fmt::format("a number in {}{}, {}]", rule.min_inclusive ? "[" : "(", min, max);
    if (!v->is_number()) fail(key, "expected " + expected, *v);
    const double x = v->get<double>();
    if (!std::isfinite(x) || x > max || x < min || (!rule.min_inclusive && x == min))
        fail(key, "expected " + expected, *v);
    field = x;
}

void SectionReader::read(const std::string& key, bool& field, const FieldRule&) {
    const json* v = take(key);
    if (!v) return;
    if (!v->is_boolean()) fail(key, "expected true or false", *v);
    field = v->get<bool>();
}

void SectionReader::read(const std::string& key, std::string& field, const FieldRule& rule) {
    const json* v = take(key);
    if (!v) return;
    if (!rule.if_true.empty() && v->is_boolean()) {
        field = v->get<bool>() ? rule.if_true : rule.if_false;
        return;
    }
    if (!rule.options.empty()) {  // one of a few names
        std::string list;
        for (const auto& o : rule.options) list += (list.empty() ? "\"" : ", \"") + o + "\"";
        if (!rule.if_true.empty())
            list += fmt::format(", or true (\"{}\") or false (\"{}\")", rule.if_true,
                                rule.if_false);
        if (!v->is_string()) fail(key, "expected one of " + list, *v);
        const std::string& s = v->get_ref<const std::string&>();
        bool ok = false;
        for (const auto& o : rule.options) ok = ok || o == s;
        if (!ok) fail(key, "expected one of " + list, *v);
        field = s;
        return;
    }
    if (!v->is_string()) fail(key, "expected a string", *v);
    const std::string& text = v->get_ref<const std::string&>();
    if (!is_valid_utf8(text))
        throw Error(fmt::format("{}: {}.{}: expected a UTF-8 string, byte {} is not valid UTF-8",
                                source_, section_, key, find_invalid_utf8(text) + 1));
    field = text;
}

bool SectionReader::given(const std::string& key) const {
    return object_ && object_->contains(key);
}

void SectionReader::finish() {
    if (!object_) return;
    for (auto it = object_->begin(); it != object_->end(); ++it) {
        if (read_.count(it.key())) continue;
        std::string known;
        for (const auto& k : read_) known += (known.empty() ? "" : ", ") + k;
        throw Error(fmt::format("{}: {}.{}: unknown key (known keys: {})", source_, section_,
                                it.key(), known),
                    ErrorKind::key);
    }
}

const json* SectionReader::take(const std::string& key) {
    read_.insert(key);
    if (!object_ || !object_->contains(key)) return nullptr;
    return &object_->at(key);
}

void SectionReader::fail(const std::string& key, const std::string& expected,
                         const json& got) const {
    const std::string where = key == section_ ? section_ : section_ + "." + key;
    throw Error(fmt::format("{}: {}: {}, got {}", source_, where, expected, got.dump()));
}

}  // namespace seqgrad
