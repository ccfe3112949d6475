// Command-line flags for programs built on kcr, read the way kubectl and
// kube-controller-manager read theirs: `--help` (or -h) prints the
// program's own flags, one per line with type and default, and exits 0; a
// flag that does not exist, a bad value or a missing value is one line on
// stderr ("<program>: unknown flag: --bogus (see <program> --help)") and
// exit code 2.
//
// Flags are gflags DEFINE_*s, in the program's main file. Both `--name=value`
// and
// `--name value` are accepted, `--flag`/`--noflag` for booleans, and both
// dashes and underscores in names (`--cert-dir` is `--cert_dir`), as
// Kubernetes spells its flags with dashes. `--` ends the flags.
#ifndef KCR_BASE_FLAGS_H_
#define KCR_BASE_FLAGS_H_

#include <string>
#include <vector>

namespace kcr {

struct ProgramInfo {
  std::string name;   // "local-apiserver"
  std::string usage;  // "local-apiserver [flags]"
  std::string about;  // a paragraph saying what it does
  // The source files (suffixes of gflags' file names) whose flags are the
  // program's own, shown by --help; glog's -v and --vmodule are added.
  std::vector<std::string> flag_files;
};

// Parses argv's flags into the gflags variables, or exits as above;
// returns the arguments that are not flags (without argv[0]).
std::vector<std::string> ParseFlagsOrExit(const ProgramInfo& program, int argc,
                                          char** argv);

// The --help text (exposed for tests).
std::string HelpText(const ProgramInfo& program);

}  // namespace kcr

#endif  // KCR_BASE_FLAGS_H_
