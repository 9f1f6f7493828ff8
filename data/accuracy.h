// Exact-match accuracy: the share of hypotheses identical to their reference, the natural
// metric of tasks with one right answer (the date task).
#pragma once

#include <string>
#include <vector>

namespace seqgrad {

/// The fraction (0..1) of positions i where hypotheses[i] == references[i], byte for byte.
/// 0 for empty inputs. Throws std::invalid_argument if the sizes differ, naming both.
double exact_match_accuracy(const std::vector<std::string>& hypotheses,
                            const std::vector<std::string>& references);

}  // namespace seqgrad
