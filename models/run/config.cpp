#include "seqgrad/models/run/config.h"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <set>

#include "seqgrad/autograd/tensor.h"
#include "seqgrad/data/utf8.h"

namespace seqgrad {
namespace {

using nlohmann::json;

// Reads the keys of one section into struct fields, checking types and ranges, and rejects any
// key it was not asked about.
class SectionReader {
  public:
    SectionReader(const json& root, const std::string& section, const std::string& source)
        : section_(section), source_(source) {
        if (root.contains(section)) {
            object_ = &root.at(section);
            if (!object_->is_object()) fail(section, "expected an object", *object_);
        }
    }

    void integer(const std::string& key, int& field, int64_t min, int64_t max = INT32_MAX) {
        int64_t v = field;
        integer64(key, v, min, max);
        field = int(v);
    }
    void integer64(const std::string& key, int64_t& field, int64_t min, int64_t max = INT64_MAX) {
        const json* v = take(key);
        if (!v) return;
        std::string expected = describe_range("an integer", min, max);
        if (!v->is_number_integer()) fail(key, expected, *v);
        int64_t x = v->get<int64_t>();
        if (x < min || x > max) fail(key, expected, *v);
        field = x;
    }
    void seed(const std::string& key, uint64_t& field) {
        const json* v = take(key);
        if (!v) return;
        if (!v->is_number_unsigned() && !(v->is_number_integer() && v->get<int64_t>() >= 0))
            fail(key, "expected a non-negative integer", *v);
        field = v->get<uint64_t>();
    }
    void number(const std::string& key, double& field, double min, double max,
                bool min_inclusive = true) {
        const json* v = take(key);
        if (!v) return;
        std::string expected =
            max == INFINITY
                ? fmt::format("a number {} {}", min_inclusive ? ">=" : ">", min)
                : fmt::format("a number in {}{}, {}]", min_inclusive ? "[" : "(", min, max);
        if (!v->is_number()) fail(key, "expected " + expected, *v);
        double x = v->get<double>();
        if (!std::isfinite(x) || x > max || x < min || (!min_inclusive && x == min))
            fail(key, "expected " + expected, *v);
        field = x;
    }
    void boolean(const std::string& key, bool& field) {
        const json* v = take(key);
        if (!v) return;
        if (!v->is_boolean()) fail(key, "expected true or false", *v);
        field = v->get<bool>();
    }
    void string(const std::string& key, std::string& field) {
        const json* v = take(key);
        if (!v) return;
        if (!v->is_string()) fail(key, "expected a string", *v);
        const std::string& text = v->get_ref<const std::string&>();
        if (!is_valid_utf8(text))
            throw Error(
                fmt::format("{}: {}.{}: expected a UTF-8 string, byte {} is not valid UTF-8",
                            source_, section_, key, find_invalid_utf8(text) + 1));
        field = text;
    }
    void choice(const std::string& key, std::string& field,
                const std::vector<std::string>& options) {
        const json* v = take(key);
        if (!v) return;
        std::string list;
        for (const auto& o : options) list += (list.empty() ? "\"" : ", \"") + o + "\"";
        if (!v->is_string()) fail(key, "expected one of " + list, *v);
        std::string s = v->get<std::string>();
        bool ok = false;
        for (const auto& o : options) ok = ok || o == s;
        if (!ok) fail(key, "expected one of " + list, *v);
        field = s;
    }
    // Whether the section sets `key` (read or not).
    bool given(const std::string& key) const { return object_ && object_->contains(key); }
    // Call after reading every known key: anything left is unknown.
    void finish() {
        if (!object_) return;
        for (auto it = object_->begin(); it != object_->end(); ++it)
            if (!read_.count(it.key()))
                throw Error(fmt::format("{}: {}.{}: unknown key (known keys: {})", source_,
                                        section_, it.key(), known_list()));
    }

  private:
    const json* take(const std::string& key) {
        read_.insert(key);
        if (!object_ || !object_->contains(key)) return nullptr;
        return &object_->at(key);
    }
    static std::string describe_range(const std::string& what, int64_t min, int64_t max) {
        if (min == 1 && max >= INT32_MAX) return "expected a positive integer";
        if (min == 0 && max >= INT32_MAX) return "expected a non-negative integer";
        return fmt::format("expected {} in [{}, {}]", what, min, max);
    }
    [[noreturn]] void fail(const std::string& key, const std::string& expected,
                           const json& got) const {
        std::string where = key == section_ ? section_ : section_ + "." + key;
        throw Error(fmt::format("{}: {}: {}, got {}", source_, where, expected, got.dump()));
    }
    std::string known_list() const {
        std::string s;
        for (const auto& k : read_) s += (s.empty() ? "" : ", ") + k;
        return s;
    }

    std::string section_, source_;
    const json* object_ = nullptr;
    std::set<std::string> read_;
};

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

// The "data" section: every key it may hold, with its type and range, and the checks across keys.
DataConfig read_data(const json& j, const std::string& source) {
    DataConfig d;
    SectionReader r(j, "data", source);
    r.choice("task", d.task, {"dates", "tsv"});
    r.string("train", d.train);
    r.string("valid", d.valid);
    r.string("test", d.test);
    r.integer("source_column", d.source_column, 0, 1);
    r.integer("columns", d.columns, 2, 64);
    r.choice("tokenizer", d.tokenizer, {"char", "word", "bpe"});
    // BPE text is cased by default: it goes through the reversible pre-tokeniser.
    if (d.tokenizer == "bpe") d.lowercase = false;
    r.boolean("lowercase", d.lowercase);
    r.boolean("strip_accents", d.strip_accents);
    r.boolean("separate_punctuation", d.separate_punctuation);
    r.integer("min_freq", d.min_freq, 1);
    r.integer("max_vocab", d.max_vocab, 0);
    r.integer("max_source_len", d.max_source_len, 1);
    r.integer("max_target_len", d.max_target_len, 1);
    r.choice("bad_lines", d.bad_lines, {"error", "warn", "skip", "fail"});
    if (d.bad_lines == "fail") d.bad_lines = "error";  // its name in older configs
    r.integer("bpe_merges", d.bpe_merges, 1);
    r.boolean("bpe_joint", d.bpe_joint);
    r.integer("dates_train", d.dates_train, 1);
    r.integer("dates_valid", d.dates_valid, 1);
    r.integer("dates_test", d.dates_test, 1);
    r.seed("dates_seed", d.dates_seed);
    r.finish();
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

// model.layers sets both stacks' depths; the Transformer's keys only with kind "transformer", the
// RNN's attention keys only with kind "rnn"; d_model divisible by heads.
void check_transformer_keys(const SectionReader& r, ModelConfig& m, int layers,
                            const std::string& source) {
    if (layers > 0) {
        if (r.given("encoder_layers") || r.given("decoder_layers"))
            throw Error(
                fmt::format("{}: model.layers: give either model.layers or "
                            "model.encoder_layers / model.decoder_layers, not both",
                            source));
        m.encoder_layers = m.decoder_layers = layers;
    }
    const bool transformer = m.kind == "transformer";
    for (const char* key : {"d_model", "heads", "ff_size", "norm_first", "positional",
                            "max_positions", "share_embeddings", "activation"})
        if (!transformer && r.given(key))
            throw Error(
                fmt::format("{}: model.{}: only read with model.kind \"transformer\" "
                            "(the kind is \"{}\")",
                            source, key, m.kind));
    for (const char* key : {"cell", "embedding_size", "hidden_size", "encoder_hidden_size",
                            "bidirectional", "attention", "attention_size", "luong_scaled",
                            "input_feeding", "attention_bias", "output_layer", "attention_mask",
                            "position_bias", "position_bias_ratio", "coverage", "coverage_weight"})
        if (transformer && r.given(key))
            throw Error(
                fmt::format("{}: model.{}: not read with model.kind \"transformer\" "
                            "(its sizes are model.d_model, model.heads, model.ff_size)",
                            source, key));
    if (transformer && m.init != "pytorch")
        throw Error(
            fmt::format("{}: model.init: \"{}\" is for RNN models; a Transformer starts "
                        "from Xavier-uniform weights (model.init \"pytorch\")",
                        source, m.init));
    if (transformer && m.d_model % m.heads != 0)
        throw Error(
            fmt::format("{}: model.d_model: {} is not divisible by model.heads {} (each "
                        "head gets d_model / heads dims)",
                        source, m.d_model, m.heads));
}

// model.coverage needs an attention to act in; model.coverage_weight is β of "subtract" only.
void check_coverage_keys(const SectionReader& r, const ModelConfig& m, const std::string& source) {
    if (m.coverage != "none" && m.attention == "none")
        throw Error(fmt::format(
            "{}: model.coverage \"{}\" needs an attention to act in (model.attention is "
            "\"none\"); set model.attention or model.coverage \"none\"",
            source, m.coverage));
    if (r.given("coverage_weight") && m.coverage_weight != ModelConfig().coverage_weight &&
        m.coverage != "subtract")
        throw Error(fmt::format(
            "{}: model.coverage_weight: β of model.coverage \"subtract\" only (model.coverage "
            "is \"{}\"); remove the key or set model.coverage to \"subtract\"",
            source, m.coverage));
}

// The "model" section: every key it may hold, with its type and range, and the checks across keys.
ModelConfig read_model(const json& j, const std::string& source) {
    ModelConfig m;
    SectionReader r(j, "model", source);
    r.choice("kind", m.kind, {"rnn", "transformer"});
    r.choice("cell", m.cell, {"gru", "lstm", "rnn"});
    r.integer("embedding_size", m.embedding_size, 1);
    r.integer("hidden_size", m.hidden_size, 1);
    r.integer("encoder_hidden_size", m.encoder_hidden_size, 0);
    r.integer("encoder_layers", m.encoder_layers, 1, 8);
    r.integer("decoder_layers", m.decoder_layers, 1, 8);
    r.boolean("bidirectional", m.bidirectional);
    r.choice("attention", m.attention,
             {"bahdanau", "luong_dot", "luong_general", "luong_concat", "none"});
    r.integer("attention_size", m.attention_size, 1);
    r.boolean("luong_scaled", m.luong_scaled);
    r.boolean("input_feeding", m.input_feeding);
    r.boolean("attention_bias", m.attention_bias);
    r.choice("output_layer", m.output_layer, {"plain", "deep"});
    r.choice("init", m.init, {"pytorch", "normal"});
    r.number("dropout", m.dropout, 0, 0.95);
    r.boolean("attention_mask", m.attention_mask);
    r.number("position_bias", m.position_bias, 0, INFINITY);
    r.number("position_bias_ratio", m.position_bias_ratio, 0, INFINITY, false);
    r.choice("coverage", m.coverage, {"none", "subtract", "learned"});
    r.number("coverage_weight", m.coverage_weight, 0, INFINITY);
    int layers = 0;
    r.integer("layers", layers, 1, 8);
    r.integer("d_model", m.d_model, 1);
    r.integer("heads", m.heads, 1);
    r.integer("ff_size", m.ff_size, 1);
    r.boolean("norm_first", m.norm_first);
    r.choice("positional", m.positional, {"sinusoidal", "learned"});
    r.integer("max_positions", m.max_positions, 1);
    r.boolean("share_embeddings", m.share_embeddings);
    r.choice("activation", m.activation, {"relu", "gelu"});
    r.finish();
    check_transformer_keys(r, m, layers, source);
    if (r.given("attention_bias") && !m.attention_bias && m.attention != "bahdanau")
        throw Error(fmt::format(
            "{}: model.attention_bias: only read with model.attention \"bahdanau\" (the "
            "attention is \"{}\"); remove the key or set model.attention to \"bahdanau\"",
            source, m.attention));
    if (m.attention == "none" && (!m.attention_mask || m.position_bias != 0))
        throw Error(fmt::format(
            "{}: model.attention_mask / model.position_bias: only with attention (model."
            "attention is \"none\")",
            source));
    check_coverage_keys(r, m, source);
    return m;
}

// The "train" section: every key it may hold, with its type and range, and the checks across keys.
TrainConfig read_train(const json& j, const std::string& source) {
    TrainConfig t;
    SectionReader r(j, "train", source);
    r.integer("batch_size", t.batch_size, 1);
    r.integer("batch_tokens", t.batch_tokens, 0);
    r.integer("bucket_chunk", t.bucket_chunk, 0);
    r.integer("epochs", t.epochs, 1);
    r.integer64("max_steps", t.max_steps, 0);
    r.choice("optimizer", t.optimizer, {"adam", "adamw", "sgd"});
    r.number("lr", t.lr, 0, INFINITY, false);
    r.number("weight_decay", t.weight_decay, 0, INFINITY);
    r.number("momentum", t.momentum, 0, 1);
    r.number("clip_norm", t.clip_norm, 0, INFINITY);
    r.choice("schedule", t.schedule, {"constant", "step", "inverse_sqrt", "cosine", "plateau"});
    r.integer64("warmup_steps", t.warmup_steps, 0);
    r.integer64("decay_steps", t.decay_steps, 1);
    r.number("decay_factor", t.decay_factor, 0, 1, false);
    r.number("min_lr", t.min_lr, 0, INFINITY);
    r.number("teacher_forcing", t.teacher_forcing, 0, 1);
    r.number("label_smoothing", t.label_smoothing, 0, 1);
    r.number("coverage_loss", t.coverage_loss, 0, INFINITY);
    r.integer("log_every", t.log_every, 1);
    r.integer("validate_every", t.validate_every, 0);
    r.integer("patience", t.patience, 0);
    r.choice("best_metric", t.best_metric, {"loss", "bleu", "chrf"});
    r.seed("seed", t.seed);
    r.integer("threads", t.threads, 1, 256);
    r.choice("parallel", t.parallel, {"data", "blas"});
    r.integer("max_valid_decode", t.max_valid_decode, 0);
    r.finish();
    return t;
}

// The "decode" section: every key it may hold, with its type and range, and the checks across keys.
DecodeConfig read_decode(const json& j, const std::string& source) {
    DecodeConfig d;
    SectionReader r(j, "decode", source);
    r.integer("beam_size", d.beam_size, 1, 256);
    r.number("alpha", d.alpha, 0, 10);
    r.choice("length_penalty", d.length_penalty, {"none", "average", "gnmt"});
    r.integer("max_length", d.max_length, 1);
    r.number("max_length_factor", d.max_length_factor, 0, 100);
    r.finish();
    return d;
}

// The "output" section: every key it may hold, with its type and range, and the checks across keys.
OutputConfig read_output(const json& j, const std::string& source) {
    OutputConfig o;
    SectionReader r(j, "output", source);
    r.string("run_dir", o.run_dir);
    r.integer("explore", o.explore, 0, 100000);
    r.finish();
    if (o.run_dir.empty())
        throw Error(fmt::format("{}: output.run_dir: expected a non-empty path", source));
    return o;
}

// Each section as the JSON object from_json reads back.
json as_json(const DataConfig& d) {
    return json{{"task", d.task},
                {"train", d.train},
                {"valid", d.valid},
                {"test", d.test},
                {"source_column", d.source_column},
                {"columns", d.columns},
                {"tokenizer", d.tokenizer},
                {"lowercase", d.lowercase},
                {"strip_accents", d.strip_accents},
                {"separate_punctuation", d.separate_punctuation},
                {"min_freq", d.min_freq},
                {"max_vocab", d.max_vocab},
                {"max_source_len", d.max_source_len},
                {"max_target_len", d.max_target_len},
                {"bad_lines", d.bad_lines},
                {"bpe_merges", d.bpe_merges},
                {"bpe_joint", d.bpe_joint},
                {"dates_train", d.dates_train},
                {"dates_valid", d.dates_valid},
                {"dates_test", d.dates_test},
                {"dates_seed", d.dates_seed}};
}

json as_json(const ModelConfig& m) {
    if (m.kind == "transformer")
        return json{{"kind", m.kind},
                    {"encoder_layers", m.encoder_layers},
                    {"decoder_layers", m.decoder_layers},
                    {"d_model", m.d_model},
                    {"heads", m.heads},
                    {"ff_size", m.ff_size},
                    {"norm_first", m.norm_first},
                    {"positional", m.positional},
                    {"max_positions", m.max_positions},
                    {"share_embeddings", m.share_embeddings},
                    {"activation", m.activation},
                    {"init", m.init},
                    {"dropout", m.dropout}};
    return json{{"cell", m.cell},
                {"embedding_size", m.embedding_size},
                {"hidden_size", m.hidden_size},
                {"encoder_hidden_size", m.encoder_hidden_size},
                {"encoder_layers", m.encoder_layers},
                {"decoder_layers", m.decoder_layers},
                {"bidirectional", m.bidirectional},
                {"attention", m.attention},
                {"attention_size", m.attention_size},
                {"luong_scaled", m.luong_scaled},
                {"input_feeding", m.input_feeding},
                {"attention_bias", m.attention_bias},
                {"output_layer", m.output_layer},
                {"init", m.init},
                {"dropout", m.dropout},
                {"attention_mask", m.attention_mask},
                {"position_bias", m.position_bias},
                {"position_bias_ratio", m.position_bias_ratio},
                {"coverage", m.coverage},
                {"coverage_weight", m.coverage_weight}};
}

json as_json(const TrainConfig& t) {
    return json{{"batch_size", t.batch_size},
                {"batch_tokens", t.batch_tokens},
                {"bucket_chunk", t.bucket_chunk},
                {"epochs", t.epochs},
                {"max_steps", t.max_steps},
                {"optimizer", t.optimizer},
                {"lr", t.lr},
                {"weight_decay", t.weight_decay},
                {"momentum", t.momentum},
                {"clip_norm", t.clip_norm},
                {"schedule", t.schedule},
                {"warmup_steps", t.warmup_steps},
                {"decay_steps", t.decay_steps},
                {"decay_factor", t.decay_factor},
                {"min_lr", t.min_lr},
                {"teacher_forcing", t.teacher_forcing},
                {"label_smoothing", t.label_smoothing},
                {"coverage_loss", t.coverage_loss},
                {"log_every", t.log_every},
                {"validate_every", t.validate_every},
                {"patience", t.patience},
                {"best_metric", t.best_metric},
                {"seed", t.seed},
                {"threads", t.threads},
                {"parallel", t.parallel},
                {"max_valid_decode", t.max_valid_decode}};
}

json as_json(const DecodeConfig& d) {
    return json{{"beam_size", d.beam_size},
                {"alpha", d.alpha},
                {"length_penalty", d.length_penalty},
                {"max_length", d.max_length},
                {"max_length_factor", d.max_length_factor}};
}

json as_json(const OutputConfig& o) {
    return json{{"run_dir", o.run_dir}, {"explore", o.explore}};
}

}  // namespace

Config Config::from_json(const json& j, const std::string& source) {
    if (!j.is_object()) throw Error(fmt::format("{}: expected a JSON object at the top", source));
    const std::set<std::string> sections{"data", "model", "train", "decode", "output"};
    for (auto it = j.begin(); it != j.end(); ++it)
        if (!sections.count(it.key()))
            throw Error(
                fmt::format("{}: {}: unknown section (expected data, model, train, "
                            "decode, output)",
                            source, it.key()));
    Config c;
    c.data = read_data(j, source);
    c.model = read_model(j, source);
    c.train = read_train(j, source);
    c.decode = read_decode(j, source);
    c.output = read_output(j, source);
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
    if (c.train.coverage_loss > 0 && c.model.coverage == "none")
        throw Error(fmt::format(
            "{}: train.coverage_loss {} needs a coverage vector: model.coverage is \"none\" "
            "(expected \"subtract\" or \"learned\"; or train.coverage_loss 0)",
            source, c.train.coverage_loss));
    return c;
}

json Config::to_json() const {
    return json{{"data", as_json(data)},
                {"model", as_json(model)},
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
    if (!in) throw Error(fmt::format("{}: cannot open the config file", path));
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

std::string Config::resolve(const std::string& p) const {
    if (p.empty() || p[0] == '/') return p;
    return base_dir + "/" + p;
}

}  // namespace seqgrad
