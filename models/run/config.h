// Config: everything a training run needs, read from one JSON file with sections
// data / model / train / decode / output. Every key has a default (README, "Configuration"),
// unknown keys, wrong types and impossible values are errors naming the key path and what was
// expected, e.g.  model.hidden_size: expected a positive integer, got "big".
// Each section's keys are declared once, in a table (models/formats/config_fields.h): the model's
// with the models (models/model/model_config.h), the others below.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "seqgrad/models/formats/config_fields.h"
#include "seqgrad/models/model/model_config.h"

namespace seqgrad {

// clang-format off
#define SEQGRAD_DATA_FIELDS(FIELD)                                                                \
    FIELD(std::string, task, "dates", one_of({"dates", "tsv"}),                                   \
          "dates: generated dates; tsv: a parallel corpus")                                       \
    FIELD(std::string, train, "", any_value(), "TSV path (relative to the config file's folder)") \
    FIELD(std::string, valid, "", any_value(), "TSV path")                                        \
    FIELD(std::string, test, "", any_value(), "TSV path (optional)")                              \
    FIELD(int, source_column, 0, between(0, 1), "which TSV column is the source")                 \
    FIELD(int, columns, 2, between(2, 64),                                                        \
          "tab-separated columns on every TSV line; those after the 2nd are ignored")             \
    FIELD(std::string, tokenizer, "char", one_of({"char", "word", "bpe"}), "the tokenizer")       \
    FIELD(bool, lowercase, true, any_value(), "normaliser: lower-case (default false with bpe)")  \
    FIELD(bool, strip_accents, false, any_value(), "normaliser: strip accents")                   \
    FIELD(bool, separate_punctuation, false, any_value(), "normaliser: punctuation as tokens")    \
    FIELD(int, min_freq, 1, at_least(1), "vocabulary: the least frequency kept")                  \
    FIELD(int, max_vocab, 0, at_least(0), "vocabulary: the most entries; 0 = no limit")           \
    FIELD(int, max_source_len, 60, at_least(1), "longer pairs are dropped")                       \
    FIELD(int, max_target_len, 60, at_least(1), "longer pairs are dropped")                       \
    FIELD(std::string, bad_lines, "error", one_of({"error", "warn", "skip", "fail"}),             \
          "a bad TSV line, as pandas' on_bad_lines (\"fail\": the same as \"error\")")           \
    FIELD(int, bpe_merges, 8000, at_least(1), "tokenizer bpe: the number of merges")              \
    FIELD(bool, bpe_joint, true, any_value(), "tokenizer bpe: one set of codes for both sides")   \
    FIELD(int, dates_train, 20000, at_least(1), "generated dates: training pairs")                \
    FIELD(int, dates_valid, 1000, at_least(1), "generated dates: validation pairs")               \
    FIELD(int, dates_test, 2000, at_least(1), "generated dates: test pairs")                      \
    FIELD(uint64_t, dates_seed, 7, any_value(), "generated dates: the generator's seed")

#define SEQGRAD_TRAIN_FIELDS(FIELD)                                                               \
    FIELD(int, batch_size, 64, at_least(1), "sentence pairs per step")                            \
    FIELD(int, batch_tokens, 0, at_least(0),                                                      \
          "> 0: batches by tokens, sentences x their longest side (data/batching.h)")            \
    FIELD(int, bucket_chunk, 100, at_least(0),                                                    \
          "length bucketing: batches sorted together (data/batching.h); 0 = random")              \
    FIELD(int, epochs, 10, at_least(1), "passes over the training split")                         \
    FIELD(int64_t, max_steps, 0, at_least(0), "0 = no limit (epochs decide)")                     \
    FIELD(std::string, optimizer, "adam", one_of({"adam", "adamw", "sgd"}), "the optimizer")      \
    FIELD(double, lr, 1e-3, number_above(0), "the learning rate")                                 \
    FIELD(double, weight_decay, 0.0, number_at_least(0), "weight decay")                          \
    FIELD(double, momentum, 0.9, number_between(0, 1), "sgd only")                                \
    FIELD(double, clip_norm, 1.0, number_at_least(0), "global gradient-norm clipping; 0 = off")   \
    FIELD(std::string, schedule, "constant",                                                      \
          one_of({"constant", "step", "inverse_sqrt", "cosine", "plateau"}),                      \
          "the learning-rate schedule (optim/schedule.h)")                                        \
    FIELD(int64_t, warmup_steps, 0, at_least(0), "linear warm-up steps")                          \
    FIELD(int64_t, decay_steps, 1000, at_least(1),                                                \
          "step: decay every this many steps; cosine: total length")                              \
    FIELD(double, decay_factor, 0.5, number_between(0, 1, false), "step and plateau")             \
    FIELD(double, min_lr, 0.0, number_at_least(0), "the schedule's floor")                        \
    FIELD(double, teacher_forcing, 1.0, number_between(0, 1),                                     \
          "probability of feeding the gold previous token")                                       \
    FIELD(double, label_smoothing, 0.0, number_between(0, 1), "label smoothing")                  \
    FIELD(double, coverage_loss, 0.0, number_at_least(0),                                         \
          "lambda of See et al.'s coverage loss; needs model.coverage")                           \
    FIELD(int, log_every, 50, at_least(1), "steps between progress lines")                        \
    FIELD(int, validate_every, 0, at_least(0), "steps; 0 = once per epoch")                       \
    FIELD(int, patience, 3, at_least(0), "early stopping: validations without improvement")       \
    FIELD(std::string, best_metric, "loss", one_of({"loss", "bleu", "chrf"}),                     \
          "what best and early stopping go by: validation loss, or BLEU / chrF (text tasks)")    \
    FIELD(int, average_last, 0, between(0, 1000),                                                 \
          "> 0: keep the last N validations' checkpoints and average them at the end")            \
    FIELD(uint64_t, seed, 1, any_value(), "initialisation, dropout and shuffling seed")           \
    FIELD(int, threads, 1, between(1, 256),                                                       \
          "threads for a training step (and BLAS threads for decoding)")                          \
    FIELD(std::string, parallel, "data", one_of({"data", "blas"}),                                \
          "threads > 1: data splits the batch's rows (models/training/data_parallel.h), blas "    \
          "runs one step on multithreaded products")                                              \
    FIELD(int, max_valid_decode, 2000, at_least(0), "sentences decoded for the validation metric")

#define SEQGRAD_DECODE_FIELDS(FIELD)                                                              \
    FIELD(int, beam_size, 1, between(1, 256), "beam width; 1 = greedy")                           \
    FIELD(double, alpha, 0.6, number_between(0, 10), "the length penalty's exponent")             \
    FIELD(std::string, length_penalty, "gnmt", one_of({"none", "average", "gnmt"}),               \
          "the length penalty")                                                                   \
    FIELD(int, max_length, 60, at_least(1), "the longest output")                                 \
    FIELD(double, max_length_factor, 0.0, number_between(0, 100),                                 \
          "> 0: at most factor * source length tokens")

#define SEQGRAD_OUTPUT_FIELDS(FIELD)                                                              \
    FIELD(std::string, run_dir, "runs/run", any_value(), "where the run is written")              \
    FIELD(int, explore, 50, between(0, 100000),                                                   \
          "after training, RUN_DIR/explore.html of this many test sentences; 0 = none")
// clang-format on

// Each section's struct: its fields with their defaults, and its table.
struct DataConfig {
    SEQGRAD_DATA_FIELDS(SEQGRAD_DECLARE_FIELD)
    static const FieldTable<DataConfig>& fields();
};
struct TrainConfig {
    SEQGRAD_TRAIN_FIELDS(SEQGRAD_DECLARE_FIELD)
    static const FieldTable<TrainConfig>& fields();
};
struct DecodeConfig {
    SEQGRAD_DECODE_FIELDS(SEQGRAD_DECLARE_FIELD)
    static const FieldTable<DecodeConfig>& fields();
};
struct OutputConfig {
    SEQGRAD_OUTPUT_FIELDS(SEQGRAD_DECLARE_FIELD)
    static const FieldTable<OutputConfig>& fields();
};

struct Config {
    DataConfig data;
    ModelConfig model;
    TrainConfig train;
    DecodeConfig decode;
    OutputConfig output;
    std::string base_dir = ".";  // folder of the config file: relative data paths start here

    // Parses and validates; `source` names the file in error messages.
    static Config from_json(const nlohmann::json& j, const std::string& source = "config");
    // Reads a file, applies `--set key.path=value` overrides, validates.
    static Config load(const std::string& path, const std::vector<std::string>& overrides = {});
    nlohmann::json to_json() const;
    // A data path resolved against base_dir (absolute paths are kept).
    std::string resolve(const std::string& path) const;
    // Every key a config may hold, as "section.key" (the README's configuration table lists
    // these; tests/unit/test_config.cpp holds the two equal).
    static std::vector<std::string> keys();
};

// Applies one "section.key=value" override to a JSON config (value parsed as JSON when it
// parses, else taken as a string). Throws Error naming the key when the assignment is not
// UTF-8 or not section.key=value, or when the section is not an object.
void apply_override(nlohmann::json& j, const std::string& assignment);

}  // namespace seqgrad
