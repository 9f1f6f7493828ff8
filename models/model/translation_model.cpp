#include "seqgrad/models/model/translation_model.h"

#include "seqgrad/models/model/seq2seq.h"
#include "seqgrad/models/model/transformer.h"

namespace seqgrad {

std::unique_ptr<TranslationModel> make_model(const ModelConfig& config, int64_t source_vocab,
                                             int64_t target_vocab, Rng& rng, FusedLayers fused) {
    if (config.kind == "transformer")
        return std::make_unique<Transformer>(config, source_vocab, target_vocab, rng, fused);
    return std::make_unique<Seq2Seq>(config, source_vocab, target_vocab, rng, fused);
}

}  // namespace seqgrad
