// The sub-commands of `seqgrad`. Each takes the arguments after its name and returns the exit
// status; errors are thrown as exceptions and printed by main.
#pragma once

#include <cstddef>
#include <istream>
#include <string>
#include <vector>

namespace seqgrad {

struct TrainSummary;
using Argv = std::vector<std::string>;

int cmd_train(const Argv& args);
int cmd_gradcheck(const Argv& args);
int cmd_gradflow(const Argv& args);
int cmd_translate(const Argv& args);
int cmd_eval(const Argv& args);
int cmd_attention(const Argv& args);
int cmd_bleu(const Argv& args);

// translate: the lines of `in`, without line ends; throws naming `name` and the 1-based line
// number on a line that is not valid UTF-8.
std::vector<std::string> read_utf8_lines(std::istream& in, const std::string& name);

// bleu: everything `seqgrad bleu ARGS` prints for the hypotheses on `hypotheses`.
std::string bleu_command_output(const Argv& args, std::istream& hypotheses);
// bleu: throws seqgrad::Error naming both counts and files when they differ.
void check_line_counts(const std::string& hyp_name, size_t hyp_lines, const std::string& ref_name,
                       size_t ref_lines);
// bleu --score-only: the score with `width` decimals, e.g. "48.5" for width 1.
std::string format_score_only(double score, int width);

// Redraws RUN_DIR/loss.svg from RUN_DIR/metrics.jsonl.
void write_loss_plot(const std::string& run_dir);
// train: the line printed at the end of a run (no validation loss when none ran).
std::string train_summary_line(const TrainSummary& summary);

}  // namespace seqgrad
