// The `seqgrad gradcheck` entries of whole Seq2Seq models: every attention kind, every cell
// (gru, lstm, rnn) as encoder and decoder, and the model options of models/run/config.h (stacked
// encoder and decoder, the deep output layer, an encoder narrower than the decoder through the
// bridge, Bahdanau without the key bias, label smoothing).
#include <string>
#include <vector>

#include "apps/gradcheck/gradcheck_registry.h"
#include "seqgrad/data/batching.h"
#include "seqgrad/models/model/seq2seq.h"

namespace seqgrad::gradcheck_suite {

namespace {

// One model: a name and the ModelConfig fields that differ from the tiny defaults below.
struct ModelCase {
    std::string name;
    std::string attention = "bahdanau";
    std::string cell = "gru";
    bool bidirectional = false;
    int encoder_layers = 1;
    int decoder_layers = 1;
    int encoder_hidden_size = 0;  // 0 = the decoder's H
    std::string output_layer = "plain";
    bool input_feeding = false;
    bool attention_bias = true;
    double label_smoothing = 0;
    std::string coverage = "none";
    double coverage_weight = 1;
    double coverage_loss = 0;  // λ > 0: the model runs in training mode, where the loss adds it
};

// Appends the case "Seq2Seq <name>": the defaults, changed by `edit`.
template <class Edit>
void add_case(std::vector<ModelCase>& cases, const std::string& name, Edit&& edit) {
    ModelCase c;
    c.name = "Seq2Seq " + name;
    edit(c);
    cases.push_back(c);
}

// The LSTM and Elman cells, each in the shapes that reach every part of a cell's state.
void add_cell_cases(std::vector<ModelCase>& cases) {
    auto add = [&](const std::string& name, auto&& edit) { add_case(cases, name, edit); };
    for (const std::string cell : {"lstm", "rnn"}) {
        add(cell + " bahdanau", [&](ModelCase& c) { c.cell = cell; });
        add(cell + " luong_general with input feeding", [&](ModelCase& c) {
            c.cell = cell;
            c.attention = "luong_general";
            c.input_feeding = true;
        });
        add(cell + " none", [&](ModelCase& c) {
            c.cell = cell;
            c.attention = "none";
        });
        // (h, c) through both bridges, a stacked decoder, the deep output
        add(cell + " bahdanau, bidirectional encoder, 2 decoder layers, deep output",
            [&](ModelCase& c) {
                c.cell = cell;
                c.bidirectional = true;
                c.decoder_layers = 2;
                c.output_layer = "deep";
            });
    }
}

std::vector<ModelCase> model_cases() {
    std::vector<ModelCase> cases;
    for (const char* attention :
         {"none", "bahdanau", "luong_dot", "luong_general", "luong_concat"}) {
        ModelCase c;
        c.name = std::string("Seq2Seq attention ") + attention;
        c.attention = attention;
        cases.push_back(c);
    }
    auto add = [&](const std::string& name, auto&& edit) { add_case(cases, name, edit); };
    add("bahdanau, bidirectional 2-layer encoder, label smoothing 0.1", [](ModelCase& c) {
        c.bidirectional = true;
        c.encoder_layers = 2;
        c.label_smoothing = 0.1;
    });
    add("luong_general with input feeding", [](ModelCase& c) {
        c.attention = "luong_general";
        c.input_feeding = true;
    });
    add("bahdanau, 2 decoder layers, deep output", [](ModelCase& c) {
        c.decoder_layers = 2;
        c.output_layer = "deep";
    });
    add("luong_general, bidirectional encoder of 3, 2 decoder layers, deep output",
        [](ModelCase& c) {
            c.attention = "luong_general";
            c.bidirectional = true;
            c.encoder_hidden_size = 3;
            c.decoder_layers = 2;
            c.output_layer = "deep";
        });
    add("none, deep output", [](ModelCase& c) {
        c.attention = "none";
        c.output_layer = "deep";
    });
    add("bahdanau without key bias, encoder 3 -> decoder 4", [](ModelCase& c) {
        c.encoder_hidden_size = 3;
        c.attention_bias = false;
    });
    // coverage inside the attention: c_s runs through every step's score; See et al.'s loss
    add("bahdanau, coverage subtract", [](ModelCase& c) {
        c.coverage = "subtract";
        c.coverage_weight = 0.7;
    });
    add("bahdanau, coverage learned, coverage loss 1", [](ModelCase& c) {
        c.coverage = "learned";
        c.coverage_loss = 1;
    });
    add("luong_general, coverage learned, coverage loss 1", [](ModelCase& c) {
        c.attention = "luong_general";
        c.coverage = "learned";
        c.coverage_loss = 1;
    });
    add_cell_cases(cases);
    return cases;
}

}  // namespace

// A tiny Seq2Seq: vocabularies of 7 ids (4 reserved + 3 tokens), E = 3, H = 4, attention size
// 4, a batch of 2 pairs with source lengths {3, 2} and target lengths {3, 2} (EOS included), so
// padding is in play on both sides. The loss is the model's own forward_loss (teacher forcing);
// every parameter is checked.
void add_models(Registry& r) {
    for (const ModelCase& c : model_cases())
        r.add("model", c.name, [c](const GradcheckOptions& o) {
            ModelConfig config;
            config.embedding_size = 3;
            config.hidden_size = 4;
            config.attention_size = 4;
            config.attention = c.attention;
            config.cell = c.cell;
            config.bidirectional = c.bidirectional;
            config.encoder_layers = c.encoder_layers;
            config.decoder_layers = c.decoder_layers;
            config.encoder_hidden_size = c.encoder_hidden_size;
            config.output_layer = c.output_layer;
            config.input_feeding = c.input_feeding;
            config.attention_bias = c.attention_bias;
            config.coverage = c.coverage;
            config.coverage_weight = c.coverage_weight;
            Rng rng(80);
            Seq2Seq model(config, 7, 7, rng);
            LossOptions options;
            options.label_smoothing = c.label_smoothing;
            options.coverage_loss = c.coverage_loss;
            // no dropout (there is none anyway: dropout 0); the coverage loss is a training term
            model.train(c.coverage_loss > 0);
            // source ids 4..6 (EOS = 2 ends the longer one); targets end with EOS
            const std::vector<EncodedPair> pairs{{{4, 5, 2}, {6, 4, 2}}, {{6, 4}, {5, 2}}};
            const Batch batch = make_batch(pairs, {0, 1});
            return gradcheck(
                [&](const Inputs&) {
                    return model.forward_loss(batch, options).loss;
                },
                model.parameters(), o);
        });
}

}  // namespace seqgrad::gradcheck_suite
