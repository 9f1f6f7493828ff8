// A small command-line parser: positional arguments, `--name value` options (repeatable) and
// `--flag` switches, each declared by the command so that a typo is an error, not ignored.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

namespace seqgrad {

class Args {
  public:
    // `options` take a value, `flags` do not. Throws seqgrad::Error on an unknown --name or a
    // missing value.
    Args(const std::vector<std::string>& argv, const std::set<std::string>& options,
         const std::set<std::string>& flags);

    const std::vector<std::string>& positional() const { return positional_; }
    bool has(const std::string& name) const;
    std::string get(const std::string& name, const std::string& fallback = "") const;
    std::vector<std::string> all(const std::string& name) const;
    int get_int(const std::string& name, int fallback) const;
    double get_double(const std::string& name, double fallback) const;

  private:
    std::vector<std::string> positional_;
    std::map<std::string, std::vector<std::string>> values_;
    std::set<std::string> flags_set_;
};

}  // namespace seqgrad
