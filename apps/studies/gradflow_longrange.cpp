// The long-range part of `seqgrad gradflow`: see apps/studies/gradflow_longrange.h.
#include "apps/studies/gradflow_longrange.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "apps/studies/longrange_model.h"

namespace seqgrad {

namespace {

// Curves summed over seeds, per (model index, stage, T).
using CurveSums = std::map<std::tuple<size_t, std::string, int>, FlowCurveSum>;

template <typename Number>
double median(std::vector<Number> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Trains `model` (seed index s) on its task at length T until the threshold or
// o.train_steps steps; every step's loss and gradient norms go to `training`.
ThresholdRun train_to_threshold(const GradflowOptions& o, double threshold, const std::string& name,
                                int s, int T, LongRangeModel& model,
                                std::vector<TrainRecord>& training) {
    LongRangeTrainOptions t;
    t.length = T;
    t.batch_size = o.batch_size;
    t.max_steps = o.train_steps;
    t.window = o.window;
    t.threshold = threshold;
    t.lr = o.lr;
    t.clip_norm = o.clip_norm;
    t.data_seed = o.seed * 7 + uint64_t(s) * 131 + uint64_t(T);
    LongRangeTraining trained = train_long_range(model, t, [&](int step, double loss) {
        training.push_back({name, s, step, T, loss, group_grad_norms(model)});
    });
    ThresholdRun run;
    run.cell = model.cell();
    run.attention = model.attention_kind();
    run.length = T;
    run.seed = s;
    run.hidden_size = model.hidden_size();
    run.parameters = model.num_parameters();
    run.reached_at = trained.reached_at;
    run.steps_run = trained.steps_run;
    run.final_loss = trained.final_loss;
    return run;
}

// One studied model at every T and seed: a fresh model of matched parameter count, measured,
// trained to the threshold and measured again; the curves summed into `sums` (key: index).
void study_long_range_model(const GradflowOptions& o, double threshold, size_t index,
                            const StudiedModel& studied, CurveSums& sums, GradflowReport& report) {
    const std::string &cell = studied.cell, &attention = studied.attention, &name = studied.name;
    // the parameter budget: a GRU of the given hidden size without attention
    Rng budget_rng(1);
    const int64_t budget =
        LongRangeModel(o.task, "gru", "none", o.model.hidden_size, budget_rng).num_parameters();
    const int64_t H =
        cell == "gru" && attention == "none"
            ? o.model.hidden_size
            : matched_hidden_size(o.task, cell, attention, budget, o.heads, o.transformer_layers);
    for (int T : o.lengths)
        for (int s = 0; s < o.seeds; ++s) {
            if (o.seed_index >= 0 && s != o.seed_index) continue;
            Rng rng(o.seed + uint64_t(s));
            LongRangeModel model(o.task, cell, attention, H, rng, o.heads, o.transformer_layers);
            // the same measurement batch for every model and seed at this T
            Rng data_rng(o.seed * 1000003 + uint64_t(T));
            const LongRangeBatch batch = long_range_batch(o.task, T, o.batch_size, data_rng);
            model.eval();
            auto measure = [&](const std::string& stage) {
                FlowCurveSum& sum = sums[{index, stage, T}];
                sum.curve.model = name;
                sum.curve.stage = stage;
                sum.curve.length = T;
                sum.add(measure_long_range_flow(model, batch));
            };
            measure("fresh");
            if (o.train_steps == 0) continue;
            report.threshold_runs.push_back(
                train_to_threshold(o, threshold, name, s, T, model, report.training));
            const ThresholdRun& run = report.threshold_runs.back();
            measure("trained");
            if (!o.quiet)
                fmt::print(stderr, "{} {} T={} seed {} (H {}, {} parameters): {}\n", o.task, name,
                           T, s, H, run.parameters,
                           run.reached_at > 0
                               ? fmt::format("loss < {:.4g} at step {}", threshold, run.reached_at)
                               : fmt::format("not below {:.4g} in {} steps (loss {:.4g})",
                                             threshold, run.steps_run, run.final_loss));
        }
}

}  // namespace

void run_long_range_study(const GradflowOptions& o, GradflowReport& report) {
    const double threshold = o.threshold > 0 ? o.threshold : long_range_baseline(o.task) / 10;
    CurveSums sums;
    const std::vector<StudiedModel> models = studied_models(o, /*short_names=*/false);
    for (size_t index = 0; index < models.size(); ++index)
        study_long_range_model(o, threshold, index, models[index], sums, report);
    for (const auto& [key, sum] : sums) report.curves.push_back(sum.mean());
}

std::string threshold_table(const std::vector<ThresholdRun>& runs, int max_steps) {
    // groups in first-seen order
    std::vector<std::tuple<std::string, std::string, int>> order;
    std::map<std::tuple<std::string, std::string, int>, std::vector<const ThresholdRun*>> groups;
    for (const ThresholdRun& r : runs) {
        auto key = std::make_tuple(r.cell, r.attention, r.length);
        if (!groups.count(key)) order.push_back(key);
        groups[key].push_back(&r);
    }
    std::string out =
        "| cell | attention | T | H | parameters | median steps | min–max | not reached "
        "| final loss (median) |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const auto& key : order) {
        const auto& g = groups[key];
        std::vector<int> reached;
        std::vector<double> finals;
        for (const ThresholdRun* r : g) {
            if (r->reached_at > 0) reached.push_back(r->reached_at);
            finals.push_back(r->final_loss);
        }
        std::string steps = "–", range = "–";
        if (!reached.empty()) {
            // seeds that never reached count as "> budget": the median is over all seeds
            std::vector<int> all = reached;
            for (size_t i = reached.size(); i < g.size(); ++i) all.push_back(max_steps + 1);
            const double m = median(all);
            steps = m > max_steps ? fmt::format("> {}", max_steps) : fmt::format("{:g}", m);
            range = fmt::format("{}–{}", *std::min_element(reached.begin(), reached.end()),
                                *std::max_element(reached.begin(), reached.end()));
        } else {
            steps = fmt::format("> {}", max_steps);
        }
        out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} of {} | {:.3g} |\n",
                           std::get<0>(key), std::get<1>(key), std::get<2>(key),
                           g.front()->hidden_size, g.front()->parameters, steps, range,
                           g.size() - reached.size(), g.size(), median(finals));
    }
    return out;
}

}  // namespace seqgrad
