// `seqgrad gradcheck`: the double-precision gradient checks of every op, layer and small model
// (apps/gradcheck/gradcheck_suite.h), printed as a table.
//
// Finite differences need double precision. This command is built twice: in `seqgrad-f64`
// (real = double) it runs the suite itself; in `seqgrad` (real = float) it hands over to the
// `seqgrad-f64` executable next to it (same arguments), or, with --float or when that binary is
// missing, runs the suite in float with loose tolerances and says so.
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <type_traits>

#include "apps/cli/args.h"
#include "apps/cli/commands.h"
#include "apps/gradcheck/gradcheck_suite.h"

namespace seqgrad {
namespace {

const char* kHelp =
    R"(usage: seqgrad gradcheck [--only SUBSTRING] [--eps E] [--atol A] [--rtol R] [--list]
                         [--float] [--verbose]

Compares the analytic gradient (backward) of every op, layer and small model (Seq2Seq and
Transformer) with central finite differences, (L(x+eps) - L(x-eps)) / 2 eps, for every input
and parameter, and prints one line per check: inputs checked, elements, max absolute error,
max relative error, PASS/FAIL. An element passes when |analytic - numeric| <= atol + rtol |numeric|.
Exits with status 1 if any check fails.

  --only SUBSTRING   run the checks whose name contains SUBSTRING (e.g. "luong", "model/")
  --list             list the checks' names and exit
  --eps E            finite-difference step (default 1e-6 in double)
  --atol A --rtol R  tolerances (default 1e-7 and 1e-6 in double)
  --float            run in this binary's float precision instead of handing over to
                     seqgrad-f64 (defaults then eps 1e-2, atol 1e-3, rtol 1e-2: a coarse check)
  --verbose          also print, for each failure, the worst element
)";

// Re-runs this command in the double-precision executable `seqgrad-f64` that sits next to the
// running one. Returns only if there is no such executable (or exec fails).
void exec_double_binary(const Argv& argv) {
    std::error_code ec;
    std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) return;
    std::filesystem::path f64 = self.parent_path() / "seqgrad-f64";
    if (!std::filesystem::exists(f64) || std::filesystem::equivalent(f64, self, ec)) return;
    std::vector<std::string> args{f64.string(), "gradcheck"};
    args.insert(args.end(), argv.begin(), argv.end());
    std::vector<char*> c_args;
    for (std::string& a : args) c_args.push_back(a.data());
    c_args.push_back(nullptr);
    std::fflush(stdout);
    execv(f64.c_str(), c_args.data());
    fmt::print(stderr, "seqgrad gradcheck: could not run {}; checking in float instead\n",
               f64.string());
}

// Runs every entry, one table row each as it finishes; returns the rows that failed.
std::vector<GradcheckRow> run_and_print(const std::vector<GradcheckEntry>& entries,
                                        const GradcheckOptions& options, double& total_seconds) {
    size_t width = 5;
    for (const GradcheckEntry& e : entries) width = std::max(width, e.name.size());
    fmt::print("{:<{}}  {:>6} {:>8} {:>11} {:>11} {:>7}  {}\n", "check", width, "inputs",
               "elements", "max abs err", "max rel err", "time", "result");
    std::vector<GradcheckRow> failed;
    for (const GradcheckEntry& e : entries) {
        GradcheckRow row = run_gradcheck_entry(e, options);
        total_seconds += row.seconds;
        const GradcheckResult& r = row.result;
        fmt::print("{:<{}}  {:>6} {:>8} {:>11.2e} {:>11.2e} {:>6.2f}s  {}\n", row.name, width,
                   r.inputs_checked, r.elements_checked, r.max_abs_error, r.max_rel_error,
                   row.seconds, row.passed() ? "PASS" : "FAIL");
        std::fflush(stdout);
        if (!row.passed()) failed.push_back(row);
    }
    return failed;
}

}  // namespace

int cmd_gradcheck(const Argv& argv) {
    Args args(argv, {"only", "eps", "atol", "rtol"}, {"list", "float", "verbose", "help"});
    if (args.has("help")) {
        fmt::print("{}", kHelp);
        return 0;
    }
    if (!args.positional().empty()) {
        fmt::print(stderr, "{}", kHelp);
        return 2;
    }
    const bool is_double = std::is_same_v<real, double>;
    if (!is_double && !args.has("float")) exec_double_binary(argv);

    const std::string only = args.get("only");
    std::vector<GradcheckEntry> entries;
    for (GradcheckEntry& e : gradcheck_entries())
        if (only.empty() || e.name.find(only) != std::string::npos) entries.push_back(std::move(e));
    if (entries.empty())
        throw Error(fmt::format("no check name contains \"{}\" (see --list)", only));
    if (args.has("list")) {
        for (const GradcheckEntry& e : entries) fmt::print("{}\n", e.name);
        return 0;
    }

    GradcheckOptions options = default_gradcheck_options();
    options.eps = args.get_double("eps", options.eps);
    options.atol = args.get_double("atol", options.atol);
    options.rtol = args.get_double("rtol", options.rtol);
    if (!(options.eps > 0) || !(options.atol >= 0) || !(options.rtol >= 0))
        throw Error("--eps must be > 0, --atol and --rtol >= 0");
    if (!is_double)
        fmt::print(
            "NOTE: this build computes in float; finite differences in float are dominated by "
            "rounding, so this is a coarse check. Run `seqgrad-f64 gradcheck` for the sharp "
            "one.\n");
    fmt::print(
        "gradient checks in {} precision: eps {:g}, pass when |analytic - numeric| <= "
        "{:g} + {:g} |numeric|\n\n",
        real_type_name(), options.eps, options.atol, options.rtol);

    double total_seconds = 0;
    const std::vector<GradcheckRow> failed = run_and_print(entries, options, total_seconds);
    fmt::print(
        "\nmax rel err = max |analytic - numeric| / max(|analytic|, |numeric|) over elements whose "
        "gradient exceeds 1e-10: a tiny gradient can make it large without failing, since an "
        "element fails only when |analytic - numeric| > atol + rtol |numeric|.\n");
    fmt::print("\n{} checks, {} passed, {} failed, {:.1f}s\n", entries.size(),
               entries.size() - failed.size(), failed.size(), total_seconds);
    for (const GradcheckRow& row : failed) {
        if (!row.error.empty())
            fmt::print("FAIL {}: error: {}\n", row.name, row.error);
        else if (args.has("verbose") || failed.size() <= 10)
            fmt::print("FAIL {}: worst element: {}\n", row.name, row.result.worst);
    }
    return failed.empty() ? 0 : 1;
}

}  // namespace seqgrad
