// MetricsLog: RUN_DIR/metrics.jsonl, one JSON record per line, appended as training goes.
//
// The guarantee: every line in the file is a complete record, and the file never claims a step
// the run did not reach. Each record is written with one checked write(); a write that fails
// (a full disk, even for a moment) cuts the file back to its last complete record and throws an
// Error naming the file, which stops the run. A resumed run first cuts the file after the
// records of the checkpoint it resumes from (see open_for_resume), so the steps it runs again
// are not recorded twice.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace seqgrad {

class MetricsLog {
  public:
    // A new run: the file is emptied (created if missing).
    static MetricsLog create(const std::string& path);
    // A run resumed from a checkpoint at `step`: keeps the records of steps <= step, up to the
    // first "test" record, record of a later step or line that is not a complete JSON record,
    // and cuts the file there (the test split is evaluated again at the end of the run).
    static MetricsLog open_for_resume(const std::string& path, int64_t step);

    MetricsLog(MetricsLog&& other) noexcept;
    MetricsLog& operator=(MetricsLog&& other) noexcept;
    MetricsLog(const MetricsLog&) = delete;
    MetricsLog& operator=(const MetricsLog&) = delete;
    ~MetricsLog();

    // Appends `record` as one line. Throws Error naming the file when it cannot be written.
    void append(const nlohmann::json& record);
    // fsync: the records so far survive a power cut. Throws Error naming the file.
    void sync();

    const std::string& path() const { return path_; }

  private:
    MetricsLog(const std::string& path, int fd, int64_t size);

    std::string path_;
    int fd_ = -1;
    int64_t size_ = 0;  // bytes of complete records
};

}  // namespace seqgrad
