// Config: everything a training run needs, read from one JSON file with sections
// data / model / train / decode / output. Every key has a default (README, "Configuration"),
// unknown keys, wrong types and impossible values are errors naming the key path and what was
// expected, e.g.  model.hidden_size: expected a positive integer, got "big".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace seqgrad {

struct DataConfig {
    std::string task = "dates";      // "dates": generated dates; "tsv": a parallel corpus
    std::string train, valid, test;  // TSV paths (relative to the config file's folder)
    int source_column = 0;           // which TSV column is the source (0 or 1)
    int columns = 2;  // tab-separated columns on every TSV line; those after the 2nd are ignored
    std::string tokenizer = "char";  // "char", "word" or "bpe"
    bool lowercase = true;           // default false with tokenizer "bpe"
    bool strip_accents = false;
    bool separate_punctuation = false;
    int min_freq = 1;
    int max_vocab = 0;  // 0 = no limit
    int max_source_len = 60;
    int max_target_len = 60;
    std::string bad_lines = "error";  // "error", "warn" or "skip" (pandas' on_bad_lines)
    // tokenizer "bpe": merges learned from the training split (data/bpe.h), one set of codes
    // for source and target together (joint) or one per side.
    int bpe_merges = 8000;
    bool bpe_joint = true;
    int dates_train = 20000, dates_valid = 1000, dates_test = 2000;
    uint64_t dates_seed = 7;
};

struct ModelConfig {
    // "rnn": Seq2Seq (models/model/seq2seq.h), the keys below down to position_bias_ratio;
    // "transformer": models/model/transformer.h, the keys from d_model on (and dropout, init)
    std::string kind = "rnn";
    std::string cell = "gru";  // the encoder's and decoder's cell: "gru", "lstm" or "rnn"
    int embedding_size = 64;
    int hidden_size = 128;        // the decoder's state size H
    int encoder_hidden_size = 0;  // per direction; 0 = hidden_size
    int encoder_layers = 1;
    int decoder_layers = 1;
    bool bidirectional = false;
    // "bahdanau", "luong_dot", "luong_general", "luong_concat" or "none"
    std::string attention = "bahdanau";
    int attention_size = 128;
    bool luong_scaled = false;   // luong_dot: divide scores by sqrt(d)
    bool input_feeding = false;  // Luong: feed the attentional vector into the next step
    bool attention_bias = true;  // Bahdanau: the key projection W_k has a bias
    // "plain": the output projection reads the decoder's output state o_t; "deep": it reads
    // [o_t; c_t; emb(y_{t-1})] (Bahdanau et al. 2015)
    std::string output_layer = "plain";
    // "pytorch": PyTorch's default initialisers; "normal": every weight N(0, 0.01), every bias 0
    std::string init = "pytorch";
    double dropout = 0.0;
    // Study switches (layers/attention.h; docs/claims.md): false lets attention weigh PAD
    // positions; β of the position bias −β·|t/r − s| with r the target/source length ratio.
    bool attention_mask = true;
    double position_bias = 0;
    double position_bias_ratio = 1;
    // Coverage inside the attention (layers/attention.h): "none", "subtract" (score −= β·c_s,
    // β = coverage_weight) or "learned" (Tu et al. 2016: a learned weight on c_s in the score).
    std::string coverage = "none";
    double coverage_weight = 1.0;  // β of "subtract"
    // How the layers compute, not what: the fused cell and attention ops (what training runs)
    // or, false, their composed twins (the textbook form); the same numbers either way. Not
    // part of a run's config.json: the commands set them from SEQGRAD_DISABLE
    // (apps/cli/model_switches.h).
    bool fused_cells = true;
    bool fused_attention = true;

    // kind "transformer" (encoder_layers / decoder_layers give the stacks' depths; "layers"
    // in a config file sets both)
    int d_model = 256;  // E, divisible by heads
    int heads = 8;
    int ff_size = 1024;                     // the feed-forward block's inner size F
    bool norm_first = false;                // pre-norm instead of the original post-norm
    std::string positional = "sinusoidal";  // or "learned"
    int max_positions = 256;  // learned positions: the table's rows (the longest sequence)
    // the target embedding and the output projection share one weight [V_t, E]
    bool share_embeddings = false;
    std::string activation = "relu";  // of the feed-forward block: "relu" or "gelu"

    int64_t encoder_size() const {
        return encoder_hidden_size > 0 ? encoder_hidden_size : hidden_size;
    }
};

struct TrainConfig {
    int batch_size = 64;
    // > 0: batches by tokens (data/batching.h): sentences × their longest side <= batch_tokens,
    // still length-bucketed; batch_size then only sizes the bucketing chunks.
    int batch_tokens = 0;
    // Length bucketing: this many batches' worth of examples are sorted by length together
    // (data/batching.h); 0 = batches mix lengths at random (less efficient: more padding).
    int bucket_chunk = 100;
    int epochs = 10;
    int64_t max_steps = 0;           // 0 = no limit (epochs decide)
    std::string optimizer = "adam";  // "adam", "adamw" or "sgd"
    double lr = 1e-3;
    double weight_decay = 0;
    double momentum = 0.9;              // sgd only
    double clip_norm = 1.0;             // 0 = no clipping
    std::string schedule = "constant";  // "constant", "step", "inverse_sqrt", "cosine", "plateau"
    int64_t warmup_steps = 0;
    int64_t decay_steps = 1000;  // step: decay every this many steps; cosine: total length
    double decay_factor = 0.5;   // step and plateau
    double min_lr = 0;
    double teacher_forcing = 1.0;
    double label_smoothing = 0;
    // λ of See et al.'s coverage loss λ·Σ_t Σ_s min(α_{t,s}, c_{t,s}), per real target token
    // like the cross-entropy; needs model.coverage "subtract" or "learned".
    double coverage_loss = 0;
    int log_every = 50;
    int validate_every = 0;  // steps; 0 = once per epoch
    int patience = 3;        // early stopping: validations without improvement; 0 = off
    // What `best` and early stopping go by: "loss" (validation cross-entropy, lower is better),
    // "bleu" or "chrf" (of the greedy validation output; text tasks only)
    std::string best_metric = "loss";
    uint64_t seed = 1;
    int threads = 1;  // threads for a training step (and BLAS threads for decoding)
    // How a step uses threads > 1: "data" splits the batch's rows over the threads
    // (models/training/data_parallel.h), "blas" runs one step on multithreaded BLAS products.
    std::string parallel = "data";
    int max_valid_decode = 2000;  // sentences decoded for the validation metric
};

struct DecodeConfig {
    int beam_size = 1;
    double alpha = 0.6;
    std::string length_penalty = "gnmt";  // "none", "average" or "gnmt"
    int max_length = 60;
    double max_length_factor = 0;  // > 0: at most factor * source length tokens
};

struct OutputConfig {
    std::string run_dir = "runs/run";
    // After training, `seqgrad explore` of this many test sentences is written to
    // RUN_DIR/explore.html; 0 = do not write it.
    int explore = 50;
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
};

// Applies one "section.key=value" override to a JSON config (value parsed as JSON when it
// parses, else taken as a string). Throws Error naming the key when the assignment is not
// UTF-8 or not section.key=value, or when the section is not an object.
void apply_override(nlohmann::json& j, const std::string& assignment);

}  // namespace seqgrad
