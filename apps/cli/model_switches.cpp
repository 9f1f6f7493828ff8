#include "apps/cli/model_switches.h"

#include "seqgrad/layers/recurrent.h"

namespace seqgrad {

FusedLayers fused_layers(const std::string& cell, const Switches& s) {
    FusedLayers fused;
    switch (parse_cell_type(cell)) {
        case CellType::rnn:
            fused.cells = s.fused_rnn;
            break;
        case CellType::gru:
            fused.cells = s.fused_gru;
            break;
        case CellType::lstm:
            fused.cells = s.fused_lstm;
            break;
    }
    fused.attention = s.fused_attention;
    return fused;
}

}  // namespace seqgrad
