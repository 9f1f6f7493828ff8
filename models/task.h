// Task: the data side of a run, prepared from the config — sentence pairs (generated dates or a
// TSV corpus), the text pipeline (normalise, tokenize) and the two vocabularies.
#pragma once

#include <string>
#include <vector>

#include "data/batching.h"
#include "data/corpus.h"
#include "data/text.h"
#include "data/vocab.h"
#include "models/config.h"

namespace seqgrad {

struct TextPipeline {
    NormalizeOptions normalize;
    TokenizerKind tokenizer = TokenizerKind::character;

    std::vector<std::string> tokens(const std::string& text) const;
    std::string join(const std::vector<std::string>& tokens) const;
};

struct Task {
    std::string name;  // "dates" or the training file
    TextPipeline pipeline;
    Vocab source_vocab, target_vocab;
    std::vector<SentencePair> train, valid, test;

    // Source and target tokenized and mapped to ids; the target ends with EOS.
    std::vector<EncodedPair> encode(const std::vector<SentencePair>& pairs) const;
    std::vector<int32_t> encode_source(const std::string& text) const;
    std::string decode_target(const std::vector<int32_t>& ids) const;
    bool is_dates() const { return name == "dates"; }
};

TextPipeline make_pipeline(const DataConfig& data);
// Reads or generates the data and builds the vocabularies from the training split. Bad lines
// and dropped pairs are reported on `log` (stderr by default).
Task prepare_task(const Config& config, bool quiet = false);
// The same data, with vocabularies loaded from a run directory (resume, translate, eval).
Task prepare_task_with_vocabs(const Config& config, const std::string& run_dir, bool load_data,
                              bool quiet = false);

}  // namespace seqgrad
