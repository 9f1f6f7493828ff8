#include "apps/cli/args.h"

#include <fmt/format.h>

#include "seqgrad/autograd/tensor.h"

namespace seqgrad {

Args::Args(const std::vector<std::string>& argv, const std::set<std::string>& options,
           const std::set<std::string>& flags) {
    for (size_t i = 0; i < argv.size(); ++i) {
        const std::string& a = argv[i];
        if (a.size() > 2 && a.rfind("--", 0) == 0) {
            std::string name = a.substr(2), value;
            bool inline_value = false;
            if (size_t eq = name.find('='); eq != std::string::npos) {
                value = name.substr(eq + 1);
                name = name.substr(0, eq);
                inline_value = true;
            }
            if (flags.count(name) && !inline_value) {
                flags_set_.insert(name);
            } else if (options.count(name)) {
                if (!inline_value) {
                    if (i + 1 >= argv.size())
                        throw Error(fmt::format("option --{} needs a value", name));
                    value = argv[++i];
                }
                values_[name].push_back(value);
            } else {
                std::string known;
                for (const auto& o : options) known += " --" + o + " VALUE";
                for (const auto& f : flags) known += " --" + f;
                throw Error(fmt::format("unknown option --{} (known:{})", name, known));
            }
        } else {
            positional_.push_back(a);
        }
    }
}

bool Args::has(const std::string& name) const {
    return flags_set_.count(name) || values_.count(name);
}

std::string Args::get(const std::string& name, const std::string& fallback) const {
    auto it = values_.find(name);
    return it == values_.end() ? fallback : it->second.back();
}

std::vector<std::string> Args::all(const std::string& name) const {
    auto it = values_.find(name);
    return it == values_.end() ? std::vector<std::string>{} : it->second;
}

int Args::get_int(const std::string& name, int fallback) const {
    if (!values_.count(name)) return fallback;
    std::string v = get(name);
    try {
        size_t used = 0;
        int x = std::stoi(v, &used);
        if (used == v.size()) return x;
    } catch (const std::exception&) {
    }
    throw Error(fmt::format("option --{}: expected an integer, got \"{}\"", name, v));
}

double Args::get_double(const std::string& name, double fallback) const {
    if (!values_.count(name)) return fallback;
    std::string v = get(name);
    try {
        size_t used = 0;
        double x = std::stod(v, &used);
        if (used == v.size()) return x;
    } catch (const std::exception&) {
    }
    throw Error(fmt::format("option --{}: expected a number, got \"{}\"", name, v));
}

}  // namespace seqgrad
