// Task: the data side of a run, prepared from the config — sentence pairs (generated dates or a
// TSV corpus), the text pipeline (normalise, tokenize; or pre-tokenise reversibly and segment
// into BPE subwords) and the two vocabularies.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "seqgrad/data/batching.h"
#include "seqgrad/data/bpe.h"
#include "seqgrad/data/corpus.h"
#include "seqgrad/data/text.h"
#include "seqgrad/data/vocab.h"
#include "seqgrad/models/run/config.h"

namespace seqgrad {

// How text becomes tokens and tokens become text again.
//   char / word:  normalize() (e.g. lower-case, punctuation split off), then tokenize(); join()
//                 gives normalised text.
//   bpe:          (optionally lower-case,) reversible_tokenize() (data/reversible_tokenizer.h),
//                 then BPE segments with "@@" (data/bpe.h); join() undoes both and gives real,
//                 detokenised text: join(tokens(x)) is x up to white space.
struct TextPipeline {
    NormalizeOptions normalize;
    TokenizerKind tokenizer = TokenizerKind::character;
    bool bpe = false;
    bool bpe_joint = true;  // one set of codes for both sides
    // Segmenters of each side (the same codes when joint, each with its side's vocabulary as
    // subword-nmt's vocabulary filter); set once the codes are learned or loaded.
    std::shared_ptr<Bpe> source_bpe, target_bpe;

    // The target side's tokens (the side the model writes, and references are compared in).
    std::vector<std::string> tokens(const std::string& text) const;
    std::vector<std::string> source_tokens(const std::string& text) const;
    std::string join(const std::vector<std::string>& tokens) const;
    // True when join(tokens(x)) gives x back (BPE without lower-casing or accent stripping):
    // the model's output can then be scored against raw references.
    bool reversible() const;
};

// A corpus line left out under data.bad_lines "warn" or "skip".
struct SkippedLine {
    std::string split;  // "train", "valid" or "test"
    std::string file;
    BadLine bad;
};

struct Task {
    std::string name;  // "dates" or the training file
    TextPipeline pipeline;
    Vocab source_vocab, target_vocab;
    std::vector<SentencePair> train, valid, test;
    std::vector<SkippedLine> skipped;  // every bad line left out, split by split

    // Source and target tokenized and mapped to ids; the target ends with EOS.
    std::vector<EncodedPair> encode(const std::vector<SentencePair>& pairs) const;
    std::vector<int32_t> encode_source(const std::string& text) const;
    std::string decode_target(const std::vector<int32_t>& ids) const;
    bool is_dates() const { return name == "dates"; }
};

TextPipeline make_pipeline(const DataConfig& data);
// Reads or generates the data and builds the vocabularies from the training split (with
// tokenizer "bpe", first learns the merges from it). Bad lines, dropped pairs and a BPE learner
// that stopped early are reported on stderr unless `quiet`: with data.bad_lines "skip" the
// count of each file, with "warn" every line; lines left out of the valid or test split are
// reported apart, as they change the scores.
Task prepare_task(const Config& config, bool quiet = false);
// The same data, with vocabularies (and BPE codes) loaded from a run directory (resume,
// translate, eval).
Task prepare_task_with_vocabs(const Config& config, const std::string& run_dir, bool load_data,
                              bool quiet = false);
// Writes every skipped line of `task` into RUN_DIR/skipped_lines.tsv (columns split, file,
// line, reason, under a header line), or removes an older run's file when none was skipped.
void save_skipped_lines(const Task& task, const std::string& run_dir);

// Writes the BPE codes of `pipeline` into `run_dir` in subword-nmt's format: bpe.codes (joint)
// or bpe.source.codes and bpe.target.codes. Does nothing for char / word pipelines.
void save_bpe_codes(const TextPipeline& pipeline, const std::string& run_dir);

}  // namespace seqgrad
