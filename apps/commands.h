// The sub-commands of `seqgrad`. Each takes the arguments after its name and returns the exit
// status; errors are thrown as exceptions and printed by main.
#pragma once

#include <string>
#include <vector>

namespace seqgrad {

using Argv = std::vector<std::string>;

int cmd_train(const Argv& args);
int cmd_gradcheck(const Argv& args);
int cmd_gradflow(const Argv& args);

// Redraws RUN_DIR/loss.svg from RUN_DIR/metrics.jsonl.
void write_loss_plot(const std::string& run_dir);

}  // namespace seqgrad
