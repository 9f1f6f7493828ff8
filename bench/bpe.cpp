// BPE speed (data/bpe.h): learning N merges from a corpus, and applying the codes to it with a
// cold and a warm word cache.
//
//   build/bench/bpe [--corpus FILE] [--column C] [--sentences S] [--merges N] [--runs R]
//
// The corpus is a TSV file (or plain text with --column 0); S sentences are taken evenly spread
// over its lines (every line when S is 0 or more than it has), so the sample does not depend on
// the file's order. Times are medians of R runs, each from the sentences in memory: counting
// the words, learning (wall and CPU time), applying.
#include <fmt/format.h>

#include <time.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "seqgrad/data/bpe.h"

using namespace seqgrad;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// CPU time of the process: on a shared machine, wall time also counts the waits for a core.
double cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

std::vector<std::string> read_sentences(const std::string& path, int column, size_t wanted) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error(path + ": cannot open");
    std::vector<std::string> all;
    for (std::string line; std::getline(in, line);) {
        std::stringstream fields(line);
        std::string field;
        for (int c = 0; c <= column && std::getline(fields, field, '\t'); ++c) {
        }
        all.push_back(field);
    }
    if (wanted == 0 || wanted >= all.size()) return all;
    std::vector<std::string> sample;
    for (size_t i = 0; i < wanted; ++i) sample.push_back(all[i * all.size() / wanted]);
    return sample;
}

}  // namespace

int main(int argc, char** argv) {
    std::string corpus = "/work/shared/data/eng-deu.txt";
    int column = 0, merges = 10000, runs = 5;
    size_t sentences = 30000;
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string a = argv[i], v = argv[i + 1];
        if (a == "--corpus")
            corpus = v;
        else if (a == "--column")
            column = std::stoi(v);
        else if (a == "--sentences")
            sentences = size_t(std::stoll(v));
        else if (a == "--merges")
            merges = std::stoi(v);
        else if (a == "--runs")
            runs = std::stoi(v);
        else {
            fmt::print(stderr, "unknown option {}\n", a);
            return 2;
        }
    }
    std::vector<std::string> lines = read_sentences(corpus, column, sentences);
    size_t tokens = 0;
    for (const auto& l : lines) tokens += size_t(std::count(l.begin(), l.end(), ' ')) + 1;
    std::vector<double> count_s, learn_s, learn_cpu_s, apply_cold_s, apply_warm_s;
    size_t learned = 0, types = 0;
    for (int r = 0; r < runs; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        WordCounts counts;
        for (size_t i = 0; i < lines.size(); ++i) counts.add_line(lines[i], corpus, i + 1);
        count_s.push_back(seconds_since(t0));
        types = counts.size();
        t0 = std::chrono::steady_clock::now();
        const double cpu0 = cpu_seconds();
        BpeLearnResult result = learn_bpe(counts, {merges, 2});
        learn_s.push_back(seconds_since(t0));
        learn_cpu_s.push_back(cpu_seconds() - cpu0);
        learned = result.merges.size();
        Bpe bpe{BpeCodes(result.merges)};
        size_t out_bytes = 0;
        for (int pass = 0; pass < 2; ++pass) {
            t0 = std::chrono::steady_clock::now();
            for (const auto& l : lines) out_bytes += bpe.apply_line(l).size();
            (pass == 0 ? apply_cold_s : apply_warm_s).push_back(seconds_since(t0));
        }
        if (out_bytes == 0) fmt::print("(nothing segmented)\n");
    }
    fmt::print("corpus {} column {}: {} sentences, {} tokens, {} word types\n", corpus, column,
               lines.size(), tokens, types);
    fmt::print("learned {} merges (asked {}); medians of {} runs:\n", learned, merges, runs);
    fmt::print("  count words        {:8.4f} s\n", median(count_s));
    fmt::print("  learn merges       {:8.4f} s   (CPU time {:.4f} s)\n", median(learn_s),
               median(learn_cpu_s));
    fmt::print("  apply, cold cache  {:8.4f} s\n", median(apply_cold_s));
    fmt::print("  apply, warm cache  {:8.4f} s\n", median(apply_warm_s));
    return 0;
}
