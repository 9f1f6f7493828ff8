// The definitions of BLEU and chrF that published numbers use, each a sacreBLEU option set
// with a short label, so that a score can be printed next to the one a paper or tutorial gives,
// labelled with what it is:
//   bleu           BLEU cased 13a       sacreBLEU's default: cased, 13a tokens, exp smoothing;
//                                       what papers report (detokenised output, raw references)
//   bleu-lc        BLEU lower-cased     the same lower-cased (case:lc; JoeyNMT's benchmarks)
//   bleu-intl      BLEU intl            cased, mteval-v14's international tokenisation
//   bleu-tutorial  BLEU tutorial        the tutorials' protocol (e.g. the PyTorch seq2seq
//                  protocol             notebooks): lower-cased tokens, corpus BLEU-4 with no
//                                       smoothing. The notebooks tokenise with spaCy, which
//                                       seqgrad does not have: here sacreBLEU's 13a tokeniser
//                                       makes the tokens (punctuation split off; "don't" and
//                                       "well-known" stay whole, where spaCy splits them), so
//                                       the number is close to, not equal to, the notebooks'.
//   chrf           chrF2                character 1..6-grams, beta 2 (sacreBLEU's chrF)
//   chrf++         chrF++               chrF2 plus word 1..2-grams (word_order 2)
#pragma once

#include <string>
#include <vector>

#include "seqgrad/data/bleu.h"
#include "seqgrad/data/chrf.h"

namespace seqgrad {

struct ScoreDefinition {
    std::string name;   ///< "bleu-lc", as --metrics names it
    std::string label;  ///< "BLEU lower-cased"
    bool is_bleu = true;
    BleuOptions bleu;  ///< when is_bleu
    ChrfOptions chrf;  ///< otherwise
};

/// The six definitions above, in that order.
const std::vector<ScoreDefinition>& score_definitions();

/// The definition called `name`; throws std::invalid_argument naming the known ones.
const ScoreDefinition& score_definition(const std::string& name);

/// A comma-separated list of definition names ("bleu,chrf++"), "all" standing for every one.
/// Throws std::invalid_argument on an unknown or empty name.
std::vector<ScoreDefinition> parse_score_definitions(const std::string& list);

/// One definition's corpus score, as a number and as one labelled line with sacreBLEU's
/// signature:
///   "BLEU lower-cased      BLEU|nrefs:1|case:lc|eff:no|tok:13a|smooth:exp|version:... = 35.12
///   66.0/41.1/27.9/19.2 (BP = 0.973 ratio = 0.973 hyp_len = 9881 ref_len = 10151)"
struct DefinedScore {
    double score = 0.0;
    std::string line;
};
DefinedScore defined_score(const ScoreDefinition& definition,
                           const std::vector<std::string>& hypotheses,
                           const std::vector<std::vector<std::string>>& references, int width = 2);

}  // namespace seqgrad
