#include "seqgrad/data/accuracy.h"

#include <stdexcept>

namespace seqgrad {

double exact_match_accuracy(const std::vector<std::string>& hypotheses,
                            const std::vector<std::string>& references) {
    if (hypotheses.size() != references.size()) {
        throw std::invalid_argument("exact_match_accuracy: " + std::to_string(hypotheses.size()) +
                                    " hypotheses but " + std::to_string(references.size()) +
                                    " references");
    }
    if (hypotheses.empty()) return 0.0;
    size_t correct = 0;
    for (size_t i = 0; i < hypotheses.size(); ++i) correct += hypotheses[i] == references[i];
    return static_cast<double>(correct) / static_cast<double>(hypotheses.size());
}

}  // namespace seqgrad
