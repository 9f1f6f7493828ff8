// The maths of every op the engine records: the comment above the op in autograd/ (its forward
// and its backward rule), as the explorer's tape view shows it when a node is chosen.
// The one table of them; tests/unit/test_explore_tape.cpp holds each entry equal to the comment
// in the file it names, and checks that every op name recorded in autograd/ has an entry.
#pragma once

#include <string>
#include <vector>

namespace seqgrad {

struct OpMathsBlock {
    const char* file;  // where the comment is, from the repository root
    const char* text;  // its lines without the leading "// ", joined by '\n'
};

struct OpMaths {
    const char* op;                    // the name the op records (Node::op)
    std::vector<OpMathsBlock> blocks;  // usually one line: "y = f(x);  dx += ..."
};

// Every entry, in the order of the files.
const std::vector<OpMaths>& op_maths_table();

// The entry of `op`, or nullptr.
const OpMaths* find_op_maths(const std::string& op);

}  // namespace seqgrad
