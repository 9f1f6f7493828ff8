// The options shared by the commands that decode with a trained run (eval, translate,
// attention, saliency): which checkpoint to load, and the beam.
#pragma once

#include <string>
#include <vector>

#include "apps/cli/args.h"
#include "seqgrad/data/corpus.h"
#include "seqgrad/models/decoding/translator.h"
#include "seqgrad/models/run/run.h"

namespace seqgrad {

// The run in `run_dir` at the checkpoint --checkpoint names: best (the default; it falls back to
// last when there is no best yet), last, or another checkpoint of the run by name (averaged).
// Throws seqgrad::Error on a name that is not a plain file name or has no file.
LoadedRun load_run_from_args(const Args& args, const std::string& run_dir);

// The run's decoding options (config section "decode") with --beam K: K >= 1, by default
// `default_beam`, or decode.beam_size when that is 0. Throws seqgrad::Error on K < 1.
DecodeOptions decode_options_from_args(const Args& args, const LoadedRun& run,
                                       int default_beam = 0);

// How translate() treats a source longer than the model reads (models/decoding/translator.h):
// --long-input truncate (the default) or refuse; and the run's data.max_source_len, past which a
// Transformer's sinusoidal positions are noted. Throws seqgrad::Error on another value.
TranslateExtras input_extras_from_args(const Args& args, const LoadedRun& run);
// The --long-input option's help, for the commands' help texts.
extern const char* kLongInputHelp;

// Prints each translation's length note on stderr as "PREFIXN: note" (translation i is number
// first_line + i; PREFIX e.g. "stdin:" or "test pair ") and returns how many were refused.
size_t report_long_inputs(const std::vector<Translation>& translations, const std::string& prefix,
                          size_t first_line = 1);

// For the tools that read a sentence's text more than once (explore): each source longer than
// the model reads is cut to its longest prefix of whole words that fits (LongInput::truncate) or
// left out (refuse: its index is not among those returned; the caller drops its reference too).
// Each is reported on stderr as "NAME N: ..." (N counts from 1), as is a sinusoidal Transformer's
// source longer than training's. `refused` counts those left out.
std::vector<size_t> fit_sources(const LoadedRun& run, const TranslateExtras& extras,
                                std::vector<std::string>& sources, const std::string& name,
                                size_t& refused);

// The sentence of `seqgrad attention|saliency RUN_DIR word...`: the positional arguments after
// RUN_DIR joined by spaces. Throws seqgrad::Error when it is not valid UTF-8.
std::string sentence_from_args(const Args& args);

// The input, output and model lines those commands print for the best hypothesis of `t`;
// `model` describes the model (its attention), the decoding is greedy or beam K.
void print_translation(const std::string& sentence, const Translation& t, const std::string& model,
                       int beam_size);

// The test pairs of a run: --test FILE.tsv (columns as data.source_column says), else the date
// task's held-out split (generated as in training) or data.test of a TSV task. `origin` tells
// where they came from. Throws seqgrad::Error saying what to pass when there is none.
std::vector<SentencePair> load_test_set(const Args& args, const Config& config,
                                        std::string& origin);

}  // namespace seqgrad
