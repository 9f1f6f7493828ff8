// What `seqgrad gradflow` writes (write_gradflow_outputs, gradflow_summary_table; see
// apps/studies/gradflow.h): the CSV files behind every picture, the plots of each stage, the
// long-range tasks' threshold table and the training phase's curves.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>

#include "apps/plot/plot.h"
#include "apps/studies/gradflow.h"
#include "apps/studies/gradflow_longrange.h"
#include "apps/studies/longrange_tasks.h"
#include "seqgrad/data/file_io.h"

namespace seqgrad {
namespace {

// write(name, contents): one file of the output folder
using Write = std::function<void(const std::string&, const std::string&)>;

// a CSV cell: 6 significant digits, empty for NaN and infinity
std::string csv_number(double x) {
    return std::isfinite(x) ? fmt::format("{:.6g}", x) : "";
}

// For plot titles: "fresh models", "trained runs", "after 150 training steps", ...
std::string stage_label(const std::string& stage, int train_steps) {
    if (stage == "fresh") return "fresh models";
    if (stage == "run") return "trained runs";
    if (stage == "trained") return fmt::format("after {} training steps", train_steps);
    if (stage.rfind("step", 0) == 0) return fmt::format("after {} training steps", stage.substr(4));
    return stage;
}

std::vector<std::string> stages_of(const GradflowReport& report) {
    std::vector<std::string> stages;
    for (const FlowCurve& c : report.curves)
        if (std::find(stages.begin(), stages.end(), c.stage) == stages.end())
            stages.push_back(c.stage);
    return stages;
}

// gradflow.csv (every number behind the plots) and summary.csv (one row per curve).
void write_curve_tables(const GradflowReport& report, const Write& write) {
    std::vector<std::vector<std::string>> rows;
    for (const FlowCurve& c : report.curves)
        for (size_t t = 0; t < c.hidden.size(); ++t)
            rows.push_back({c.model, c.stage, std::to_string(c.length), std::to_string(t + 1),
                            csv_number(c.hidden[t]), csv_number(c.embedding[t]),
                            csv_number(c.direct[t]), csv_number(c.recurrent[t])});
    write("gradflow.csv",
          plot::to_csv({"model", "stage", "L", "t", "grad_norm_hidden", "grad_norm_embedding",
                        "grad_norm_direct", "grad_norm_recurrent"},
                       rows));
    rows.clear();
    for (const FlowCurve& c : report.curves) {
        const double first = c.hidden.front(), last = c.hidden.back();
        rows.push_back({c.model, c.stage, std::to_string(c.length), csv_number(first),
                        csv_number(last), csv_number(first / last), csv_number(c.embedding.front()),
                        csv_number(c.embedding.back()), csv_number(c.loss),
                        csv_number(c.groups.encoder), csv_number(c.groups.attention),
                        csv_number(c.groups.decoder), csv_number(c.groups.output),
                        csv_number(c.groups.total), csv_number(c.saturation), csv_number(c.entropy),
                        csv_number(c.entropy_ratio)});
    }
    write("summary.csv", plot::to_csv({"model", "stage", "L", "grad_hidden_t1", "grad_hidden_tL",
                                       "ratio_t1_over_tL", "grad_embedding_t1", "grad_embedding_tL",
                                       "loss", "grad_encoder", "grad_attention", "grad_decoder",
                                       "grad_output", "grad_total", "tanh_saturation",
                                       "attention_entropy", "attention_entropy_ratio"},
                                      rows));
}

// The four plots of one stage, titled, still without their series.
struct StagePlots {
    plot::LinePlot position;  // ‖dL/dh_t‖ against t, at the largest length
    plot::LinePlot relative;  // the same divided by the last step's
    plot::LinePlot first;     // ‖dL/dh_1‖ against the length
    plot::LinePlot split;     // dL/dh_t's direct and recurrent parts (attention models only)
};

StagePlots titled_stage_plots(const GradflowOptions& o, const std::string& stage, int largest) {
    // the long-range tasks' length is T (the input has T + 20 steps for copy_memory)
    const bool long_range = is_long_range_task(o.task);
    const char* length_name = long_range ? "T" : "L";
    // the long-range models train until the threshold, at most train_steps steps
    const std::string label = long_range && stage == "trained"
                                  ? fmt::format("trained, ≤ {} steps", o.train_steps)
                                  : stage_label(stage, o.train_steps);
    StagePlots p;
    p.position.title = fmt::format("gradient reaching encoder step t, {} = {} ({}, {})",
                                   length_name, largest, label, o.task);
    p.position.x_label = long_range ? "step t" : "encoder position t";
    p.position.y_label = "mean ‖dL/dh_t‖";
    p.position.log_y = true;
    p.relative = p.position;
    p.relative.title = fmt::format("the same relative to the last step, {} = {} ({}, {})",
                                   length_name, largest, label, o.task);
    p.relative.y_label = "mean ‖dL/dh_t‖ / mean ‖dL/dh_L‖";
    p.first.title =
        fmt::format("gradient reaching {} ({}, {})",
                    long_range ? "step 1 vs T" : "encoder step 1 vs source length", label, o.task);
    p.first.x_label = long_range ? "T" : "source length L";
    p.first.y_label = "mean ‖dL/dh_1‖";
    p.first.log_y = true;
    p.first.markers = true;
    p.split = p.position;
    p.split.title =
        fmt::format("split of dL/dh_t, {} = {} ({}, {})", length_name, largest, label, o.task);
    p.split.y_label = "mean norm of the part of dL/dh_t";
    return p;
}

// The series of the curves at the largest length: position, relative and split.
void add_position_series(const FlowCurve& c, StagePlots& p) {
    plot::Series s{c.model, {}, {}}, r{c.model, {}, {}};
    for (size_t t = 0; t < c.hidden.size(); ++t) {
        s.x.push_back(double(t + 1));
        s.y.push_back(c.hidden[t]);
        r.x.push_back(double(t + 1));
        r.y.push_back(c.hidden[t] / c.hidden.back());
    }
    p.position.series.push_back(s);
    p.relative.series.push_back(r);
    const bool has_attention =
        std::any_of(c.direct.begin(), c.direct.end(), [](double x) { return x > 0; });
    if (has_attention) {
        p.split.series.push_back({c.model + " direct", s.x, c.direct});
        p.split.series.push_back({c.model + " recurrent", s.x, c.recurrent});
    }
}

// The plots of one stage, with every curve of that stage drawn in.
StagePlots stage_plots(const GradflowReport& report, const GradflowOptions& o,
                       const std::string& stage) {
    const int largest = *std::max_element(o.lengths.begin(), o.lengths.end());
    StagePlots p = titled_stage_plots(o, stage, largest);
    // a Transformer's "h_t": its encoder's output at t (apps/studies/gradflow.h), or on the
    // long-range tasks its first layer's input (apps/studies/longrange_model.h)
    if (std::any_of(report.curves.begin(), report.curves.end(),
                    [](const FlowCurve& c) { return c.model.rfind("transformer", 0) == 0; })) {
        for (plot::LinePlot* plot : {&p.position, &p.relative, &p.first})
            plot->y_label += is_long_range_task(o.task) ? " (transformer: first layer's input)"
                                                        : " (transformer: encoder output)";
        p.split.title += "; the transformer has no recurrence to split by";
    }
    std::map<std::string, plot::Series> by_model;  // ‖dL/dh_1‖ against the length
    std::vector<std::string> order;
    for (const FlowCurve& c : report.curves) {
        if (c.stage != stage) continue;
        if (!by_model.count(c.model)) {
            order.push_back(c.model);
            by_model[c.model].name = c.model;
        }
        by_model[c.model].x.push_back(c.length);
        by_model[c.model].y.push_back(c.hidden.front());
        if (c.length == largest) add_position_series(c, p);
    }
    for (const std::string& name : order) {
        const plot::Series& s = by_model[name];
        // lengths in increasing order
        std::vector<size_t> idx(s.x.size());
        for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
        std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return s.x[a] < s.x[b]; });
        plot::Series sorted{s.name, {}, {}};
        for (size_t i : idx) {
            sorted.x.push_back(s.x[i]);
            sorted.y.push_back(s.y[i]);
        }
        p.first.series.push_back(sorted);
    }
    return p;
}

void write_stage_plots(const GradflowReport& report, const GradflowOptions& o, const Write& write) {
    for (const std::string& stage : stages_of(report)) {
        const StagePlots p = stage_plots(report, o, stage);
        write(fmt::format("grad_vs_position_{}.svg", stage), plot::line_plot_svg(p.position));
        write(fmt::format("grad_vs_position_relative_{}.svg", stage),
              plot::line_plot_svg(p.relative));
        write(fmt::format("grad_first_step_vs_length_{}.svg", stage), plot::line_plot_svg(p.first));
        if (!p.split.series.empty())
            write(fmt::format("grad_split_{}.svg", stage), plot::line_plot_svg(p.split));
    }
}

// threshold_runs.csv and threshold_table.md (the long-range tasks).
void write_threshold_outputs(const GradflowReport& report, const GradflowOptions& o,
                             const Write& write) {
    std::vector<std::vector<std::string>> rows;
    for (const ThresholdRun& r : report.threshold_runs)
        rows.push_back({r.cell, r.attention, std::to_string(r.length), std::to_string(r.seed),
                        std::to_string(r.hidden_size), std::to_string(r.parameters),
                        std::to_string(r.reached_at), std::to_string(r.steps_run),
                        csv_number(r.final_loss)});
    write("threshold_runs.csv",
          plot::to_csv({"cell", "attention", "T", "seed", "hidden_size", "parameters", "reached_at",
                        "steps_run", "final_window_loss"},
                       rows));
    write("threshold_table.md", threshold_table(report.threshold_runs, o.train_steps));
}

void write_training_csv(const GradflowReport& report, const Write& write) {
    std::vector<std::vector<std::string>> rows;
    for (const TrainRecord& r : report.training)
        rows.push_back({r.model, std::to_string(r.seed), std::to_string(r.step),
                        std::to_string(r.length), csv_number(r.loss), csv_number(r.groups.encoder),
                        csv_number(r.groups.attention), csv_number(r.groups.decoder),
                        csv_number(r.groups.output), csv_number(r.groups.total)});
    write("training.csv",
          plot::to_csv({"model", "seed", "step", "L", "loss", "grad_encoder", "grad_attention",
                        "grad_decoder", "grad_output", "grad_total"},
                       rows));
}

// Each model's encoder-group gradient norm and loss, averaged over the seeds and over windows
// of `window` consecutive steps, as (mean step, mean value) series.
void add_windowed_series(const GradflowReport& report, int window, int only_length,
                         plot::LinePlot& norms, plot::LinePlot& losses) {
    struct Sums {
        double norm = 0, loss = 0, steps = 0;
        int count = 0;
    };
    std::vector<std::string> order;
    std::map<std::string, std::map<int, Sums>> sums;  // model -> window -> sums
    for (const TrainRecord& r : report.training) {
        if (only_length > 0 && r.length != only_length) continue;
        if (!sums.count(r.model)) order.push_back(r.model);
        Sums& s = sums[r.model][(r.step - 1) / window];
        s.norm += r.groups.encoder;
        s.loss += r.loss;
        s.steps += r.step;
        s.count++;
    }
    for (const std::string& name : order) {
        plot::Series n{name, {}, {}}, l{name, {}, {}};
        for (const auto& [w, s] : sums[name]) {
            n.x.push_back(s.steps / s.count);  // the window's mean step
            n.y.push_back(s.norm / s.count);
            l.x.push_back(s.steps / s.count);
            l.y.push_back(s.loss / s.count);
        }
        norms.series.push_back(n);
        losses.series.push_back(l);
    }
}

// training.csv and the plots of the training phase: the encoder-group gradient norm and the
// loss, in windows of steps (each step has its own random L: single steps are noisy). The
// long-range tasks train each T on its own: the plots show the largest T.
void write_training_outputs(const GradflowReport& report, const GradflowOptions& o,
                            const Write& write) {
    write_training_csv(report, write);
    const int largest = *std::max_element(o.lengths.begin(), o.lengths.end());
    const bool one_length = is_long_range_task(o.task);
    const std::string at_length = one_length ? fmt::format(", T = {}", largest) : "";
    int last_step = 0;
    for (const TrainRecord& r : report.training) last_step = std::max(last_step, r.step);
    const int window = std::max(1, (last_step + 99) / 100);
    plot::LinePlot norms, losses;
    norms.title =
        fmt::format("encoder gradient norm in training (mean over seeds, {}-step windows{})",
                    window, at_length);
    norms.x_label = "step";
    norms.y_label = "‖dL/dθ_encoder‖";
    norms.log_y = true;
    losses.title =
        fmt::format("training loss (mean over seeds, {}-step windows{})", window, at_length);
    losses.x_label = "step";
    losses.y_label = "loss";
    losses.log_y = true;
    add_windowed_series(report, window, one_length ? largest : 0, norms, losses);
    write("training_encoder_grad_norm.svg", plot::line_plot_svg(norms));
    write("training_loss.svg", plot::line_plot_svg(losses));
}

}  // namespace

std::vector<std::string> write_gradflow_outputs(const GradflowReport& report,
                                                const GradflowOptions& o) {
    std::filesystem::create_directories(o.out_dir);
    std::vector<std::string> written;
    const Write write = [&](const std::string& name, const std::string& contents) {
        std::string path = (std::filesystem::path(o.out_dir) / name).string();
        write_file_atomically(path, contents);
        written.push_back(path);
    };
    write_curve_tables(report, write);
    write_stage_plots(report, o, write);
    if (!report.threshold_runs.empty()) write_threshold_outputs(report, o, write);
    if (!report.training.empty()) write_training_outputs(report, o, write);
    return written;
}

std::string gradflow_summary_table(const GradflowReport& report) {
    size_t model_width = 5, stage_width = 5;
    for (const FlowCurve& c : report.curves) {
        model_width = std::max(model_width, c.model.size());
        stage_width = std::max(stage_width, c.stage.size());
    }
    std::string out =
        fmt::format("{:<{}} {:<{}} {:>4} {:>11} {:>11} {:>10} {:>11} {:>7} {:>7} {:>8}\n", "model",
                    model_width, "stage", stage_width, "L", "|dL/dh_1|", "|dL/dh_L|", "h_1/h_L",
                    "|dL/de_1|", "loss", "tanh>3", "H/lnL");
    auto opt = [](double x) { return std::isfinite(x) ? fmt::format("{:.3f}", x) : "-"; };
    for (const FlowCurve& c : report.curves) {
        const double first = c.hidden.front(), last = c.hidden.back();
        out += fmt::format(
            "{:<{}} {:<{}} {:>4} {:>11.3e} {:>11.3e} {:>10.2e} {:>11.3e} {:>7.3f} {:>7} {:>8}\n",
            c.model, model_width, c.stage, stage_width, c.length, first, last, first / last,
            c.embedding.front(), c.loss, opt(c.saturation), opt(c.entropy_ratio));
    }
    return out;
}

}  // namespace seqgrad
