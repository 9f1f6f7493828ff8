// A date task with long inputs (docs/claims.md, claim 3): each source is several human-readable
// dates joined by " ; ", each target their ISO forms joined by a space, e.g.
//   "march 3 2001 ; 12.05.79 ; sat, jan 1st, 2000"  ->  "2001-03-03 1979-05-12 2000-01-01"
// A target source length L is drawn uniformly from [--min-len, --max-len] characters and dates
// are appended until the source is at least L long (so lengths spread evenly over the range,
// up to one date past it). Writes train.tsv, valid.tsv and test.tsv (source TAB target) into
// --out; the dates come from the date task's generator, so every source date is new.
//
// usage: concat_dates --out DIR [--train N] [--valid N] [--test N] [--min-len 20]
//                     [--max-len 100] [--seed S]
#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "apps/cli/args.h"
#include "seqgrad/autograd/rng.h"
#include "seqgrad/autograd/tensor.h"
#include "seqgrad/data/dates.h"

using namespace seqgrad;

int main(int argc, char** argv) try {
    Args args(std::vector<std::string>(argv + 1, argv + argc),
              {"out", "train", "valid", "test", "min-len", "max-len", "seed"}, {});
    if (!args.has("out")) throw Error("--out DIR is required");
    const std::string dir = args.get("out");
    const int sizes[3] = {args.get_int("train", 10000), args.get_int("valid", 500),
                          args.get_int("test", 1000)};
    const int min_len = args.get_int("min-len", 20), max_len = args.get_int("max-len", 100);
    if (min_len < 1 || max_len < min_len) throw Error("--min-len / --max-len: 1 <= min <= max");
    const uint64_t seed = uint64_t(args.get_int("seed", 3));
    // Enough distinct dates for every source (a date is ~17 characters long).
    size_t needed = 0;
    for (int n : sizes) needed += size_t(n) * size_t(max_len / 10 + 2);
    const std::vector<SentencePair> dates = generate_dates(needed, seed);
    std::filesystem::create_directories(dir);
    Rng rng(seed + 1);
    size_t next = 0;
    const char* names[3] = {"train.tsv", "valid.tsv", "test.tsv"};
    for (int split = 0; split < 3; ++split) {
        const std::string path = dir + "/" + names[split];
        std::ofstream out(path + ".tmp");
        for (int i = 0; i < sizes[split]; ++i) {
            const size_t length = size_t(min_len) + rng.below(uint64_t(max_len - min_len + 1));
            std::string source, target;
            while (source.size() < length) {
                if (next == dates.size()) throw Error("concat_dates: ran out of dates");
                const SentencePair& d = dates[next++];
                source += (source.empty() ? "" : " ; ") + d.source;
                target += (target.empty() ? "" : " ") + d.target;
            }
            out << source << '\t' << target << '\n';
        }
        out.close();
        if (!out) throw Error(fmt::format("concat_dates: cannot write {}", path));
        std::filesystem::rename(path + ".tmp", path);
    }
    fmt::print("wrote {} / {} / {} pairs to {}\n", sizes[0], sizes[1], sizes[2], dir);
    return 0;
} catch (const std::exception& e) {
    fmt::print(stderr, "concat_dates: {}\n", e.what());
    return 1;
}
