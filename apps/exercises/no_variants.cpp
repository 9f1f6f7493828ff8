// The learner's graders have no replacement variants (the test build links its own list).
#include "apps/exercises/table.h"

namespace seqgrad::grading {

const std::vector<Variant>& variants() {
    static const std::vector<Variant> none;
    return none;
}

}  // namespace seqgrad::grading
