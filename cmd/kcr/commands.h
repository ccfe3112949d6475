// The subcommands of kcr, each parsing its own flags (its --help lists
// them) and returning the process's exit code: 0 done, 1 failed (e.g. a
// file it refuses to overwrite), 2 bad usage (a bad flag, name or
// argument: one line on stderr).
#ifndef KCR_CMD_KCR_COMMANDS_H_
#define KCR_CMD_KCR_COMMANDS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cmd/kcr/scaffold.h"

namespace kcr::scaffold {

// argv[0] is the command's name as typed ("kcr init").
int RunInit(int argc, char** argv);
int RunCreate(Model model, int argc, char** argv);

// One line "<command>: <why> (see <command> --help)" on stderr; returns 2.
int UsageError(const std::string& command, const std::string& why);

// Prints a command's report, or its error as one line; the exit code.
int Finish(const char* command, const absl::StatusOr<Report>& report);

}  // namespace kcr::scaffold

#endif  // KCR_CMD_KCR_COMMANDS_H_
