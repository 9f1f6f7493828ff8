// `seqgrad train`'s last line (issue 17: it printed "best validation loss inf" when no
// validation had run).
#include <doctest/doctest.h>

#include <cmath>

#include "apps/cli/commands.h"
#include "seqgrad/models/training/trainer.h"

using namespace seqgrad;

TEST_CASE("the summary line reports a validation loss only when one was measured") {
    TrainSummary s;
    s.steps = 3;
    s.epochs_completed = 0;
    s.seconds = 1.25;
    s.best_valid_loss = INFINITY;  // what the trainer reports when no validation ran
    s.interrupted = true;
    CHECK(train_summary_line(s) ==
          "3 steps, 0 epochs in 1.2s; no validation ran (interrupted: last.safetensors written)");
    s.best_valid_loss = 0.5;
    s.validations = 1;
    s.metric_name = "accuracy";
    s.last_valid_metric = 97.5;
    s.interrupted = false;
    CHECK(train_summary_line(s) ==
          "3 steps, 0 epochs in 1.2s; best validation loss 0.5000 (ppl 1.65); last validation "
          "accuracy 97.50");
}
