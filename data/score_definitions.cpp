#include "seqgrad/data/score_definitions.h"

#include <fmt/format.h>

#include <stdexcept>

namespace seqgrad {

namespace {

ScoreDefinition bleu_definition(const std::string& name, const std::string& label, bool lowercase,
                                const std::string& tokenize, const std::string& smooth_method) {
    ScoreDefinition d;
    d.name = name;
    d.label = label;
    d.bleu.lowercase = lowercase;
    d.bleu.tokenize = tokenize;
    d.bleu.smooth_method = smooth_method;
    return d;
}

ScoreDefinition chrf_definition(const std::string& name, const std::string& label, int word_order) {
    ScoreDefinition d;
    d.name = name;
    d.label = label;
    d.is_bleu = false;
    d.chrf.word_order = word_order;
    return d;
}

std::string known_names() {
    std::string names;
    for (const ScoreDefinition& d : score_definitions()) names += d.name + ", ";
    return names + "all";
}

}  // namespace

const std::vector<ScoreDefinition>& score_definitions() {
    static const std::vector<ScoreDefinition> definitions = {
        bleu_definition("bleu", "BLEU cased 13a", false, "13a", "exp"),
        bleu_definition("bleu-lc", "BLEU lower-cased", true, "13a", "exp"),
        bleu_definition("bleu-intl", "BLEU intl", false, "intl", "exp"),
        bleu_definition("bleu-tutorial", "BLEU tutorial protocol", true, "13a", "none"),
        chrf_definition("chrf", "chrF2", 0),
        chrf_definition("chrf++", "chrF++", 2),
    };
    return definitions;
}

const ScoreDefinition& score_definition(const std::string& name) {
    for (const ScoreDefinition& d : score_definitions())
        if (d.name == name) return d;
    throw std::invalid_argument(
        fmt::format("unknown metric \"{}\" (known: {})", name, known_names()));
}

std::vector<ScoreDefinition> parse_score_definitions(const std::string& list) {
    std::vector<ScoreDefinition> out;
    size_t start = 0;
    while (start <= list.size()) {
        size_t comma = list.find(',', start);
        if (comma == std::string::npos) comma = list.size();
        const std::string name = list.substr(start, comma - start);
        if (name == "all")
            out.insert(out.end(), score_definitions().begin(), score_definitions().end());
        else
            out.push_back(score_definition(name));
        start = comma + 1;
    }
    return out;
}

DefinedScore defined_score(const ScoreDefinition& definition,
                           const std::vector<std::string>& hypotheses,
                           const std::vector<std::vector<std::string>>& references, int width) {
    const int num_refs = int(references.size());
    DefinedScore out;
    std::string score_line;
    if (definition.is_bleu) {
        const BleuScore s = corpus_bleu(hypotheses, references, definition.bleu);
        out.score = s.score;
        score_line = s.format(width, bleu_signature(definition.bleu, num_refs));
    } else {
        const ChrfScore s = corpus_chrf(hypotheses, references, definition.chrf);
        out.score = s.score;
        score_line = s.format(width, chrf_signature(definition.chrf, num_refs));
    }
    out.line = fmt::format("{:<23} {}", definition.label, score_line);
    return out;
}

}  // namespace seqgrad
