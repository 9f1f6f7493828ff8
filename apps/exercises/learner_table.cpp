// The table of the learner's functions (apps/exercises/table.h).
#include "apps/exercises/table.h"

namespace seqgrad::grading {

ExerciseTable learner_table() {
    ExerciseTable table;
#define SEQGRAD_TABLE_FILL(number, name) table.name = &exercises::name;
    SEQGRAD_EXERCISE_FUNCTIONS(SEQGRAD_TABLE_FILL)
#undef SEQGRAD_TABLE_FILL
    return table;
}

}  // namespace seqgrad::grading
