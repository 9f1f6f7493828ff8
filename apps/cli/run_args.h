// The options shared by the commands that decode with a trained run (eval, translate,
// attention): which checkpoint to load, and the beam.
#pragma once

#include <string>
#include <vector>

#include "apps/cli/args.h"
#include "seqgrad/data/corpus.h"
#include "seqgrad/models/run/run.h"
#include "seqgrad/models/decoding/translator.h"

namespace seqgrad {

// The run in `run_dir` at the checkpoint --checkpoint names: best (the default; it falls back to
// last when there is no best yet) or last. Throws seqgrad::Error on any other value.
LoadedRun load_run_from_args(const Args& args, const std::string& run_dir);

// The run's decoding options (config section "decode") with --beam K: K >= 1, by default
// `default_beam`, or decode.beam_size when that is 0. Throws seqgrad::Error on K < 1.
DecodeOptions decode_options_from_args(const Args& args, const LoadedRun& run,
                                       int default_beam = 0);

// The test pairs of a run: --test FILE.tsv (columns as data.source_column says), else the date
// task's held-out split (generated as in training) or data.test of a TSV task. `origin` tells
// where they came from. Throws seqgrad::Error saying what to pass when there is none.
std::vector<SentencePair> load_test_set(const Args& args, const Config& config,
                                        std::string& origin);

}  // namespace seqgrad
