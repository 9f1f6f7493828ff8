#include "apps/cli/model_switches.h"

#include "seqgrad/layers/recurrent.h"

namespace seqgrad {

void apply_switches(ModelConfig& model, const Switches& s) {
    switch (parse_cell_type(model.cell)) {
        case CellType::rnn:
            model.fused_cells = s.fused_rnn;
            break;
        case CellType::gru:
            model.fused_cells = s.fused_gru;
            break;
        case CellType::lstm:
            model.fused_cells = s.fused_lstm;
            break;
    }
    model.fused_attention = s.fused_attention;
}

}  // namespace seqgrad
