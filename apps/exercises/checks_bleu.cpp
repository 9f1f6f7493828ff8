// Exercise 15: corpus BLEU.
#include <fmt/format.h>

#include <cmath>
#include <map>

#include "apps/exercises/grader.h"
#include "seqgrad/data/bleu.h"

namespace seqgrad::grading {
namespace {

using practice::Tokens;

// ---- 15 ----

double bleu_variant(const std::vector<Tokens>& hyps, const std::vector<Tokens>& refs, bool clip,
                    bool bp_on) {
    double correct[4] = {}, total[4] = {}, hl = 0, rl = 0;
    for (size_t s = 0; s < hyps.size(); ++s) {
        hl += double(hyps[s].size()), rl += double(refs[s].size());
        for (size_t n = 1; n <= 4; ++n) {
            std::map<Tokens, int> h, r;
            for (size_t i = 0; i + n <= hyps[s].size(); ++i)
                ++h[Tokens(hyps[s].begin() + long(i), hyps[s].begin() + long(i + n))];
            for (size_t i = 0; i + n <= refs[s].size(); ++i)
                ++r[Tokens(refs[s].begin() + long(i), refs[s].begin() + long(i + n))];
            for (auto& [gram, c] : h) {
                int in_ref = r.count(gram) ? r[gram] : 0;
                correct[n - 1] += clip ? std::min(c, in_ref) : (in_ref ? c : 0);
                total[n - 1] += c;
            }
        }
    }
    double log_sum = 0;
    for (int n = 0; n < 4; ++n) {
        if (correct[n] == 0 || total[n] == 0) return 0;
        log_sum += std::log(correct[n] / total[n]);
    }
    double bp = !bp_on || hl >= rl ? 1 : std::exp(1 - rl / hl);
    return 100 * bp * std::exp(log_sum / 4);
}

double library_bleu(const std::vector<Tokens>& hyps, const std::vector<Tokens>& refs) {
    BleuOptions options;
    options.tokenize = "none";
    options.smooth_method = "none";
    std::vector<std::string> h, r;
    for (const auto& t : hyps) h.push_back(fmt::format("{}", fmt::join(t, " ")));
    for (const auto& t : refs) r.push_back(fmt::format("{}", fmt::join(t, " ")));
    return seqgrad::corpus_bleu(h, {r}, options).score;
}

struct BleuCase {
    std::string label;
    std::vector<Tokens> hyps, refs;
};

// Two random corpora from `rng`: hypotheses a few words shorter than their references (the
// brevity penalty applies), and one word longer.
std::vector<BleuCase> random_bleu_cases(Rng& rng) {
    const std::vector<std::string> words = {"the", "cat", "sat", "on", "mat", "a", "dog"};
    auto sentence = [&](size_t lo, size_t hi) {
        Tokens t;
        size_t n = lo + size_t(rng.below(hi - lo + 1));
        for (size_t i = 0; i < n; ++i) t.push_back(words[rng.below(words.size())]);
        return t;
    };
    auto near = [&](const Tokens& ref, size_t drop) {  // a hypothesis close to the reference
        Tokens t = ref;
        for (size_t i = 0; i < drop && !t.empty(); ++i)
            t.erase(t.begin() + long(rng.below(t.size())));
        return t;
    };
    BleuCase shorter{"random corpus (shorter hypotheses: brevity penalty)", {}, {}};
    for (int i = 0; i < 12; ++i) {
        Tokens ref = sentence(6, 12);
        shorter.refs.push_back(ref), shorter.hyps.push_back(near(ref, rng.below(3)));
    }
    BleuCase longer{"random corpus (longer hypotheses)", {}, {}};
    for (int i = 0; i < 10; ++i) {
        Tokens ref = sentence(5, 10), hyp = ref;
        hyp.push_back(words[rng.below(words.size())]);
        longer.refs.push_back(ref), longer.hyps.push_back(hyp);
    }
    return {shorter, longer};
}

// The corner cases, written out.
std::vector<BleuCase> written_bleu_cases() {
    return {{"repeated words (clipped counts)",
             {{"the", "the", "the", "the", "cat", "sat", "on", "the", "mat"},
              {"a", "dog", "sat", "on", "a", "mat", "a", "a"}},
             {{"the", "cat", "sat", "on", "the", "mat"}, {"a", "dog", "sat", "on", "a", "mat"}}},
            {"an empty hypothesis among others",
             {{}, {"the", "cat", "sat", "on", "the", "mat"}},
             {{"a", "dog"}, {"the", "cat", "sat", "on", "the", "mat", "today"}}},
            {"every hypothesis empty", {{}, {}}, {{"the", "cat"}, {"a", "dog", "sat"}}},
            {"identical corpus",
             {{"the", "cat", "sat", "on", "the", "mat"}},
             {{"the", "cat", "sat", "on", "the", "mat"}}},
            {"no 4-gram matches",
             {{"the", "cat", "on", "sat", "mat"}},
             {{"the", "cat", "sat", "on", "mat"}}}};
}

// What a wrong score `got` (expected `want`) most likely missed.
std::string diagnose_bleu(const BleuCase& k, double got, double want) {
    std::string text = fmt::format("BLEU {:.6f}, expected {:.6f}", got, want);
    if (std::isnan(got))
        return text + "; NaN: log(0) or 0/0 (an empty hypothesis has length 0: BP = 0, BLEU = 0)";
    double no_bp = bleu_variant(k.hyps, k.refs, true, false);
    double unclipped = bleu_variant(k.hyps, k.refs, false, true);
    if (std::fabs(got - no_bp) < 1e-9 * std::max(1.0, no_bp) && no_bp != want)
        return text +
               "; missing brevity penalty: BP = exp(1 − ref_len / hyp_len) when hyp_len < "
               "ref_len";
    if (std::fabs(got - unclipped) < 1e-9 * std::max(1.0, unclipped) && unclipped != want)
        return text +
               "; counts not clipped: an n-gram counts at most as often as the reference "
               "has it";
    if (want != 0 && std::fabs(got / want - 0.01) < 1e-9)
        return text + "; off by a factor of 100 (BLEU is in 0..100)";
    return text;
}

void grade_bleu(Grader& g) {
    Rng rng = g.rng(15);
    std::vector<BleuCase> cases = random_bleu_cases(rng);
    for (BleuCase& k : written_bleu_cases()) cases.push_back(std::move(k));
    for (const BleuCase& k : cases) {
        g.check(k.label, [&]() -> std::string {
            g.phase("scoring");
            double got = g.t.corpus_bleu(k.hyps, k.refs);
            double want = library_bleu(k.hyps, k.refs);
            g.phase("checking");
            if (std::fabs(got - want) <= 1e-9 * std::max(1.0, std::fabs(want))) return "";
            return diagnose_bleu(k, got, want);
        });
    }
}

}  // namespace

void add_bleu_exercise(std::vector<Exercise>& out) {
    out.push_back({15, "15_corpus_bleu", "corpus BLEU: clipped n-gram precisions, brevity penalty",
                   "30-45",
                   "data/bleu.h (the definition) and data/bleu.cpp: bleu_segment_stats(), "
                   "bleu_from_stats()",
                   grade_bleu});
}

}  // namespace seqgrad::grading
