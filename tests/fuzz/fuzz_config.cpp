// libFuzzer harness: the config parser and validator, with --set overrides
// (models/run/config.h). The input is a config file, then optionally a line "--set" followed by one
// override per line. A config that loads must also survive its own to_json() round trip.
#include <string>
#include <vector>

#include "seqgrad/models/run/config.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace seqgrad;
    std::string text(reinterpret_cast<const char*>(data), size);
    std::vector<std::string> overrides;
    const size_t mark = text.find("\n--set\n");
    if (mark != std::string::npos) {
        std::string rest = text.substr(mark + 7);
        text.resize(mark);
        for (size_t begin = 0; begin <= rest.size();) {
            size_t end = rest.find('\n', begin);
            if (end == std::string::npos) end = rest.size();
            overrides.push_back(rest.substr(begin, end - begin));
            begin = end + 1;
        }
    }
    const std::string path =
        fuzz::input_file(reinterpret_cast<const uint8_t*>(text.data()), text.size(), ".json");
    Config config;
    bool loaded = false;
    try {
        config = Config::load(path, overrides);
        loaded = true;
    } catch (const nlohmann::json::exception& e) {
        fuzz::broken("no raw nlohmann exception escapes", e.what());
    } catch (const std::runtime_error& e) {  // names the file, or the --set key
        const std::string message = e.what();
        if (message.find(path) == std::string::npos && message.find("--set") == std::string::npos)
            fuzz::broken("the error names the file or the --set key", message);
    }
    if (loaded) {
        try {
            Config again = Config::from_json(nlohmann::json::parse(config.to_json().dump()));
            if (again.to_json() != config.to_json())
                fuzz::broken("to_json round trip", config.to_json().dump());
        } catch (const std::exception& e) {
            fuzz::broken("a loaded config survives to_json", e.what());
        }
    }
    return 0;
}
