#include "runtime/metrics/process_collector.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"

namespace kcr::metrics {
namespace {

std::string ReadFile(const char* path) {
  std::ifstream in(path);
  std::stringstream all;
  all << in.rdbuf();
  return all.str();
}

prometheus::MetricFamily Family(const char* name, const char* help,
                                prometheus::MetricType type, double value) {
  prometheus::MetricFamily family;
  family.name = name;
  family.help = help;
  family.type = type;
  prometheus::ClientMetric metric;
  if (type == prometheus::MetricType::Counter) {
    metric.counter.value = value;
  } else {
    metric.gauge.value = value;
  }
  family.metric.push_back(std::move(metric));
  return family;
}

double Limit(int resource, bool soft) {
  rlimit limit{};
  if (getrlimit(resource, &limit) != 0) return -1;
  const rlim_t v = soft ? limit.rlim_cur : limit.rlim_max;
  return v == RLIM_INFINITY ? -1 : static_cast<double>(v);
}

// Seconds since the epoch at which the system booted, from /proc/stat.
bool BootTime(double* seconds) {
  std::istringstream stat(ReadFile("/proc/stat"));
  std::string line;
  while (std::getline(stat, line)) {
    if (line.rfind("btime ", 0) == 0) {
      return absl::SimpleAtod(line.substr(6), seconds);
    }
  }
  return false;
}

}  // namespace

std::vector<prometheus::MetricFamily> ProcessCollector::Collect() const {
  using prometheus::MetricType;
  std::vector<prometheus::MetricFamily> families;
  const std::string stat = ReadFile("/proc/self/stat");
  // The command name, in parentheses, may hold spaces: fields count from
  // the last ')', which ends it; after it comes field 3 (state).
  const size_t paren = stat.rfind(')');
  if (paren != std::string::npos) {
    std::vector<std::string> f =
        absl::StrSplit(stat.substr(paren + 1), ' ', absl::SkipWhitespace());
    // f[0] is field 3, so field N is f[N - 3].
    const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
    const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
    double utime, stime, start, vsize, rss, boot;
    if (f.size() > 21 && absl::SimpleAtod(f[11], &utime) &&
        absl::SimpleAtod(f[12], &stime) && absl::SimpleAtod(f[19], &start) &&
        absl::SimpleAtod(f[20], &vsize) && absl::SimpleAtod(f[21], &rss)) {
      families.push_back(Family("process_cpu_seconds_total",
                                "Total user and system CPU time spent in "
                                "seconds.",
                                MetricType::Counter, (utime + stime) / ticks));
      families.push_back(Family("process_resident_memory_bytes",
                                "Resident memory size in bytes.",
                                MetricType::Gauge, rss * page));
      families.push_back(Family("process_virtual_memory_bytes",
                                "Virtual memory size in bytes.",
                                MetricType::Gauge, vsize));
      if (BootTime(&boot)) {
        families.push_back(
            Family("process_start_time_seconds",
                   "Start time of the process since unix epoch in seconds.",
                   MetricType::Gauge, boot + start / ticks));
      }
    }
  }
  families.push_back(Family("process_virtual_memory_max_bytes",
                            "Maximum amount of virtual memory available in "
                            "bytes.",
                            MetricType::Gauge, Limit(RLIMIT_AS, true)));
  if (DIR* dir = opendir("/proc/self/fd")) {
    double open = 0;
    while (const dirent* entry = readdir(dir)) {
      if (entry->d_name[0] != '.') ++open;
    }
    closedir(dir);
    // Less the descriptor that reads the directory.
    families.push_back(Family("process_open_fds",
                              "Number of open file descriptors.",
                              MetricType::Gauge, open - 1));
  }
  families.push_back(Family("process_max_fds",
                            "Maximum number of open file descriptors.",
                            MetricType::Gauge, Limit(RLIMIT_NOFILE, true)));
  return families;
}

}  // namespace kcr::metrics
