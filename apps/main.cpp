// The `seqgrad` command line (sub-commands are added as they land).
#include <fmt/format.h>

int main(int argc, char** argv) {
    (void)argc;
    (void)argv;
    fmt::print("seqgrad: no sub-commands yet\n");
    return 0;
}
