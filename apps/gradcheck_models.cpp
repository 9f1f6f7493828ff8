// The `seqgrad gradcheck` entries of whole Seq2Seq models beyond the attention kinds of
// add_models (apps/gradcheck_suite.cpp): every cell (gru, lstm, rnn) as encoder and decoder,
// and the model options of models/config.h (a stacked decoder, the deep output layer, an
// encoder narrower than the decoder through the bridge, Bahdanau without the key bias).
#include <string>
#include <vector>

#include "apps/gradcheck_registry.h"
#include "seqgrad/data/batching.h"
#include "seqgrad/models/seq2seq.h"

namespace seqgrad::gradcheck_suite {

namespace {

struct ModelOptionCase {
    std::string name;
    std::string cell = "gru";
    std::string attention = "bahdanau";
    int decoder_layers = 1;
    std::string output_layer = "plain";
    bool bidirectional = false;
    int encoder_hidden_size = 0;  // 0 = the decoder's H
    bool attention_bias = true;
    bool input_feeding = false;
};

std::vector<ModelOptionCase> model_option_cases() {
    std::vector<ModelOptionCase> cases;
    auto add = [&](ModelOptionCase c) { cases.push_back(std::move(c)); };
    add({"Seq2Seq bahdanau, 2 decoder layers, deep output", "gru", "bahdanau", 2, "deep"});
    add({"Seq2Seq luong_general, bidirectional encoder of 3, 2 decoder layers, deep output",
         "gru", "luong_general", 2, "deep", true, 3});
    add({"Seq2Seq none, deep output", "gru", "none", 1, "deep"});
    add({"Seq2Seq bahdanau without key bias, encoder 3 -> decoder 4", "gru", "bahdanau", 1,
         "plain", false, 3, false});
    for (const char* cell : {"lstm", "rnn"}) {
        const std::string c = cell;
        add({"Seq2Seq " + c + " bahdanau", c, "bahdanau"});
        add({"Seq2Seq " + c + " luong_general with input feeding", c, "luong_general", 1,
             "plain", false, 0, true, true});
        add({"Seq2Seq " + c + " none", c, "none"});
        // (h, c) through both bridges, a stacked decoder, the deep output
        add({"Seq2Seq " + c + " bahdanau, bidirectional encoder, 2 decoder layers, deep output",
             c, "bahdanau", 2, "deep", true});
    }
    return cases;
}

}  // namespace

// The tiny model and batch of add_models: vocabularies of 7, E = 3, H = 4, A = 4, two pairs of
// source lengths {3, 2} and target lengths {3, 2}; every parameter is checked.
void add_model_options(Registry& r) {
    for (const ModelOptionCase& c : model_option_cases())
        r.add("model", c.name, [c](const GradcheckOptions& o) {
            ModelConfig config;
            config.cell = c.cell;
            config.embedding_size = 3;
            config.hidden_size = 4;
            config.attention_size = 4;
            config.attention = c.attention;
            config.decoder_layers = c.decoder_layers;
            config.output_layer = c.output_layer;
            config.bidirectional = c.bidirectional;
            config.encoder_hidden_size = c.encoder_hidden_size;
            config.attention_bias = c.attention_bias;
            config.input_feeding = c.input_feeding;
            Rng rng(81);
            Seq2Seq model(config, 7, 7, rng);
            model.eval();
            const std::vector<EncodedPair> pairs{{{4, 5, 2}, {6, 4, 2}}, {{6, 4}, {5, 2}}};
            const Batch batch = make_batch(pairs, {0, 1});
            return gradcheck([&](const Inputs&) { return model.forward_loss(batch).loss; },
                             model.parameters(), o);
        });
}

}  // namespace seqgrad::gradcheck_suite
