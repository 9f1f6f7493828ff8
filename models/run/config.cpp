#include "seqgrad/models/run/config.h"

#include <fmt/format.h>

#include <cerrno>
#include <fstream>
#include <set>

#include "seqgrad/autograd/error.h"
#include "seqgrad/data/utf8.h"

namespace seqgrad {
namespace {

using nlohmann::json;

// A data key the chosen task never reads is an error, not silently ignored (data.train with the
// dates task would train on dates). A key set to its default is allowed: a run directory's
// config.json lists every key.
void check_task_keys(const SectionReader& r, const DataConfig& d, const std::string& source) {
    const DataConfig defaults;
    const std::vector<std::pair<const char*, bool>> tsv_only = {
        {"train", d.train != defaults.train},
        {"valid", d.valid != defaults.valid},
        {"test", d.test != defaults.test},
        {"source_column", d.source_column != defaults.source_column},
        {"columns", d.columns != defaults.columns},
        {"bad_lines", d.bad_lines != defaults.bad_lines}};
    const std::vector<std::pair<const char*, bool>> dates_only = {
        {"dates_train", d.dates_train != defaults.dates_train},
        {"dates_valid", d.dates_valid != defaults.dates_valid},
        {"dates_test", d.dates_test != defaults.dates_test},
        {"dates_seed", d.dates_seed != defaults.dates_seed}};
    const bool dates = d.task == "dates";
    for (const auto& [key, changed] : dates ? tsv_only : dates_only)
        if (r.given(key) && changed)
            throw Error(
                fmt::format("{}: data.{}: not read by data.task \"{}\" ({}); remove the key{}",
                            source, key, d.task,
                            dates ? "the dates task generates its pairs"
                                  : "only the dates task generates pairs",
                            dates ? ", or set data.task to \"tsv\" to train on files" : ""));
    const std::vector<std::pair<const char*, bool>> bpe_only = {
        {"bpe_merges", d.bpe_merges != defaults.bpe_merges},
        {"bpe_joint", d.bpe_joint != defaults.bpe_joint}};
    if (d.tokenizer != "bpe")
        for (const auto& [key, changed] : bpe_only)
            if (r.given(key) && changed)
                throw Error(fmt::format(
                    "{}: data.{}: only read with data.tokenizer \"bpe\" (the tokenizer is "
                    "\"{}\"); remove the key or set data.tokenizer to \"bpe\"",
                    source, key, d.tokenizer));
}

// The "data" section: every key of its table, and the checks across keys.
DataConfig read_data(const json& j, const std::string& source) {
    DataConfig d;
    SectionReader r(j, "data", source);
    r.read(DataConfig::fields(), d);
    r.finish();
    // BPE text is cased by default: it goes through the reversible pre-tokeniser.
    if (d.tokenizer == "bpe" && !r.given("lowercase")) d.lowercase = false;
    if (d.bad_lines == "fail") d.bad_lines = "error";  // its name in older configs
    if (d.tokenizer == "bpe" && d.separate_punctuation)
        throw Error(fmt::format(
            "{}: data.separate_punctuation: must be false with data.tokenizer \"bpe\" (its "
            "reversible pre-tokeniser splits punctuation off itself)",
            source));
    check_task_keys(r, d, source);
    if (d.task == "tsv" && (d.train.empty() || d.valid.empty()))
        throw Error(
            fmt::format("{}: data.train and data.valid: required when data.task is "
                        "\"tsv\" (paths to source<TAB>target files)",
                        source));
    return d;
}

// The "train", "decode" and "output" sections: every key of their tables.
template <class Section>
Section read_section(const json& j, const char* name, const std::string& source) {
    Section section;
    SectionReader r(j, name, source);
    r.read(Section::fields(), section);
    r.finish();
    return section;
}

template <class Section>
json as_json(const Section& section) {
    json j = json::object();
    fields_as_json(Section::fields(), section, j);
    return j;
}

}  // namespace

const FieldTable<DataConfig>& DataConfig::fields() {
    using Section = DataConfig;
    static const FieldTable<Section> table = {SEQGRAD_DATA_FIELDS(SEQGRAD_FIELD_ENTRY)};
    return table;
}

const FieldTable<TrainConfig>& TrainConfig::fields() {
    using Section = TrainConfig;
    static const FieldTable<Section> table = {SEQGRAD_TRAIN_FIELDS(SEQGRAD_FIELD_ENTRY)};
    return table;
}

const FieldTable<DecodeConfig>& DecodeConfig::fields() {
    using Section = DecodeConfig;
    static const FieldTable<Section> table = {SEQGRAD_DECODE_FIELDS(SEQGRAD_FIELD_ENTRY)};
    return table;
}

const FieldTable<OutputConfig>& OutputConfig::fields() {
    using Section = OutputConfig;
    static const FieldTable<Section> table = {SEQGRAD_OUTPUT_FIELDS(SEQGRAD_FIELD_ENTRY)};
    return table;
}

Config Config::from_json(const json& j, const std::string& source) {
    if (!j.is_object()) throw Error(fmt::format("{}: expected a JSON object at the top", source));
    const std::set<std::string> sections{"data", "model", "train", "decode", "output"};
    for (auto it = j.begin(); it != j.end(); ++it)
        if (!sections.count(it.key()))
            throw Error(fmt::format("{}: {}: unknown section (expected data, model, train, "
                                    "decode, output)",
                                    source, it.key()),
                        ErrorKind::key);
    Config c;
    c.data = read_data(j, source);
    c.model = ModelConfig::from_json(j, source);
    c.train = read_section<TrainConfig>(j, "train", source);
    c.decode = read_section<DecodeConfig>(j, "decode", source);
    c.output = read_section<OutputConfig>(j, "output", source);
    if (c.output.run_dir.empty())
        throw Error(fmt::format("{}: output.run_dir: expected a non-empty path", source));
    if (c.train.coverage_loss > 0 && c.model.coverage == "none")
        throw Error(fmt::format(
            "{}: train.coverage_loss {} needs a coverage vector: model.coverage is \"none\" "
            "(expected \"subtract\" or \"learned\"; or train.coverage_loss 0)",
            source, c.train.coverage_loss));
    // A learned position table reads at most model.max_positions ids on either side; training
    // keeps pairs up to data.max_source_len / data.max_target_len ids, which must fit.
    if (c.model.kind == "transformer" && c.model.positional == "learned")
        for (const auto& [key, length] :
             {std::pair<const char*, int>{"max_source_len", c.data.max_source_len},
              {"max_target_len", c.data.max_target_len}})
            if (c.model.max_positions < length)
                throw Error(fmt::format(
                    "{}: model.max_positions {} is shorter than data.{} {}: the learned "
                    "position table would not reach the longest training sentences; raise "
                    "model.max_positions or lower data.{}",
                    source, c.model.max_positions, key, length, key));
    if (c.data.task == "dates" && c.train.best_metric != "loss")
        throw Error(fmt::format(
            "{}: train.best_metric \"{}\": the dates task measures exact-match accuracy, not "
            "{}; expected \"loss\"",
            source, c.train.best_metric, c.train.best_metric));
    return c;
}

json Config::to_json() const {
    return json{{"data", as_json(data)},
                {"model", model.to_json()},
                {"train", as_json(train)},
                {"decode", as_json(decode)},
                {"output", as_json(output)}};
}

void apply_override(json& j, const std::string& assignment) {
    size_t eq = assignment.find('=');
    size_t dot = assignment.find('.');
    if (eq == std::string::npos || dot == std::string::npos || dot > eq)
        throw Error(
            fmt::format("--set {}: expected section.key=value (e.g. train.lr=0.0005)", assignment));
    std::string section = assignment.substr(0, dot);
    std::string key = assignment.substr(dot + 1, eq - dot - 1);
    std::string text = assignment.substr(eq + 1);
    const std::string where = "--set " + assignment.substr(0, eq);
    if (!is_valid_utf8(assignment))
        throw Error(
            fmt::format("{}: expected UTF-8 text, byte {} of the argument is not valid UTF-8",
                        is_valid_utf8(where) ? where : "--set", find_invalid_utf8(assignment) + 1));
    json value;
    try {
        value = json::parse(text, nullptr, /*allow_exceptions=*/false);
    } catch (const json::exception&) {  // a number too large for a double (1e400)
        throw Error(fmt::format("{}: the value {} is out of range", where, text));
    }
    if (value.is_discarded()) value = text;  // a bare word: a string
    if (!j.is_object()) throw Error(fmt::format("{}: the config is not a JSON object", where));
    if (!j.contains(section)) j[section] = json::object();
    if (!j[section].is_object())
        throw Error(fmt::format("{}: section {} is not an object in the config (it is {})", where,
                                section, j[section].dump()));
    j[section][key] = value;
}

Config Config::load(const std::string& path, const std::vector<std::string>& overrides) {
    std::ifstream in(path);
    if (!in) {
        const int error = errno;
        throw Error(fmt::format("{}: cannot open the config file", path), file_error_kind(error));
    }
    json j;
    try {
        j = json::parse(in, nullptr, true, /*ignore_comments=*/true);
    } catch (const json::exception& e) {  // parse_error, or out_of_range for 1e400
        throw Error(fmt::format("{}: not valid JSON: {}", path, e.what()));
    }
    for (const auto& o : overrides) apply_override(j, o);
    Config c;
    try {
        c = from_json(j, path);
    } catch (const json::exception& e) {  // a check missed: still name the file
        throw Error(fmt::format("{}: {}", path, e.what()));
    }
    size_t slash = path.find_last_of('/');
    c.base_dir = slash == std::string::npos ? "." : path.substr(0, slash);
    return c;
}

std::vector<std::string> Config::keys() {
    std::vector<std::string> keys;
    auto add = [&](const char* section, const auto& table) {
        for (const auto& f : table) keys.push_back(std::string(section) + "." + f.key);
    };
    add("data", DataConfig::fields());
    for (const std::string& key : ModelConfig::keys()) keys.push_back("model." + key);
    add("train", TrainConfig::fields());
    add("decode", DecodeConfig::fields());
    add("output", OutputConfig::fields());
    return keys;
}

std::string Config::resolve(const std::string& p) const {
    if (p.empty() || p[0] == '/') return p;
    return base_dir + "/" + p;
}

}  // namespace seqgrad
