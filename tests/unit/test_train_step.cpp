// train_step against the loop it stands for, written out by hand (zero_grad, forward_loss,
// backward, clip_grad_norm, step); it stops on a non-finite loss or gradient norm before any
// update; the observer sees the gradients between clipping and the update.
#include <cmath>
#include <limits>

#include "batch_util.h"
#include "seqgrad/models/model/seq2seq.h"
#include "seqgrad/models/training/grad_norms.h"
#include "seqgrad/models/training/train_step.h"
#include "seqgrad/optim/adam.h"
#include "test_util.h"

using namespace seqgrad;

namespace {

std::vector<std::vector<real>> weights(const Seq2Seq& model) {
    std::vector<std::vector<real>> w;
    for (const Tensor& p : model.parameters()) w.push_back(p.to_vector());
    return w;
}

AdamOptions adam_options() {
    AdamOptions o;
    o.lr = 0.01;
    return o;
}

}  // namespace

TEST_CASE("train_step takes the steps of zero_grad, forward_loss, backward, clip, step") {
    // clipping fires on every step, or none; the optimizer zeroes the gradients in its update or
    // zero_grad does
    for (const auto& [clip_norm, zero_in_step] :
         std::vector<std::pair<double, bool>>{{0.05, true}, {0.0, true}, {0.05, false}}) {
        CAPTURE(clip_norm);
        CAPTURE(zero_in_step);
        Rng rng_a(5), rng_b(5);
        Seq2Seq a(testing::small_model_config("bahdanau"), 13, 13, rng_a);
        Seq2Seq b(testing::small_model_config("bahdanau"), 13, 13, rng_b);
        Adam adam_a(a.named_parameters(), adam_options()),
            adam_b(b.named_parameters(), adam_options());
        adam_a.set_zero_grads_in_step(zero_in_step);
        const Batch batch = testing::mixed_length_batch(3);
        const LossAndGradient gradient = [&](const Batch& x) { return forward_backward(a, x); };
        for (int step = 0; step < 3; ++step) {
            const TrainStepStats stats = train_step(adam_a, batch, gradient, clip_norm);

            adam_b.zero_grad();
            LossOutput out = b.forward_loss(batch);
            out.loss.backward();
            const double norm =
                clip_grad_norm(b.parameters(), clip_norm > 0 ? clip_norm : INFINITY);
            adam_b.step();

            CHECK(stats.loss == out.loss.item());
            CHECK(stats.tokens == out.num_tokens);
            CHECK(stats.grad_norm == norm);
            CHECK((stats.grad_scale < 1) == (clip_norm > 0));
            CHECK(weights(a) == weights(b));        // bit for bit (Adam without an L2 term)
            for (const Tensor& p : a.parameters())  // the update left every gradient at 0
                if (p.has_grad() && zero_in_step)
                    for (real g : p.grad().to_vector()) REQUIRE(g == 0);
        }
        CHECK(adam_a.step_count() == 3);
    }
}

TEST_CASE("train_step stops on a non-finite loss or gradient norm, before any update") {
    Rng rng(5);
    Seq2Seq model(testing::small_model_config("bahdanau"), 13, 13, rng);
    Adam adam(model.named_parameters(), adam_options());
    const Batch batch = testing::mixed_length_batch(3);
    const auto before = weights(model);
    const double nan = std::numeric_limits<double>::quiet_NaN();

    const LossAndGradient nan_loss = [&](const Batch&) {
        LossOutput out;
        out.loss = Tensor::scalar(real(nan));
        out.num_tokens = 4;
        return out;
    };
    CHECK_THROWS_WITH_AS(train_step(adam, batch, nan_loss, 1.0), "the loss became nan",
                         NonFiniteError);

    const LossAndGradient inf_gradient = [&](const Batch& x) {
        LossOutput out = forward_backward(model, x);
        model.parameters()[0].mutable_grad_data()[0] = std::numeric_limits<real>::infinity();
        return out;
    };
    CHECK_THROWS_WITH_AS(train_step(adam, batch, inf_gradient, 1.0), "the gradient norm became inf",
                         NonFiniteError);
    CHECK(adam.step_count() == 0);
    CHECK(weights(model) == before);
}

TEST_CASE("the observer sees the gradients between clipping and the update") {
    Rng rng(5);
    Seq2Seq model(testing::small_model_config("bahdanau"), 13, 13, rng);
    Adam adam(model.named_parameters(), adam_options());
    const Batch batch = testing::mixed_length_batch(3);
    int calls = 0;
    GroupGradNorms clipped;
    GradClip seen;
    const auto before = weights(model);
    const TrainStepStats stats = train_step(
        adam, batch, [&](const Batch& x) { return forward_backward(model, x); }, 0.05,
        [&](const GradClip& clip) {
            ++calls;
            seen = clip;
            clipped = group_grad_norms(model, clip.scale);
            CHECK(weights(model) == before);  // not yet updated
        });
    CHECK(calls == 1);
    CHECK(seen.norm == stats.grad_norm);
    REQUIRE(seen.clipped());
    CHECK(clipped.total == doctest::Approx(0.05).epsilon(1e-5));  // the clipped norm
    CHECK(weights(model) != before);
}
