// `seqgrad gradflow --task adding|copy_memory`: the gradient-flow study and the training
// comparison on the long-range tasks (apps/studies/longrange_tasks.h) with the small models of
// apps/studies/longrange_model.h. Called by run_gradflow (apps/studies/gradflow.h).
#pragma once

#include "apps/studies/gradflow.h"

namespace seqgrad {

// For each cell × attention × T × seed: a fresh model of matched parameter count, measured
// ("fresh"), trained to the threshold (options.train_steps > 0; one ThresholdRun each) and
// measured again ("trained"). Curves are averaged over the seeds.
void run_long_range_study(const GradflowOptions& options, GradflowReport& report);

// The training comparison as a Markdown table: per task cell, attention and T, the parameter
// count, the median and min–max steps to the threshold over the seeds that reached it, and
// how many seeds did not within the budget.
std::string threshold_table(const std::vector<ThresholdRun>& runs, int max_steps);

}  // namespace seqgrad
