#include "cmd/kcr/commands.h"

#include <iostream>
#include <string>

namespace kcr::scaffold {

int UsageError(const std::string& command, const std::string& why) {
  std::cerr << command << ": " << why << " (see " << command << " --help)\n";
  return 2;
}

int Finish(const char* command, const absl::StatusOr<Report>& report) {
  if (!report.ok()) {
    std::cerr << command << ": " << report.status().message() << "\n";
    return absl::IsInvalidArgument(report.status()) ? 2 : 1;
  }
  for (const std::string& line : *report) std::cout << line << "\n";
  return 0;
}

}  // namespace kcr::scaffold
