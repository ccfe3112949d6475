#include "base/flags.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gflags/gflags.h"

namespace kcr {
namespace {

[[noreturn]] void Fail(const ProgramInfo& program, const std::string& why) {
  std::cerr << program.name << ": " << why << " (see " << program.name
            << " --help)\n";
  std::exit(2);
}

std::string Dashed(const std::string& name) {
  return absl::StrReplaceAll(name, {{"_", "-"}});
}

std::optional<gflags::CommandLineFlagInfo> Lookup(const std::string& name) {
  gflags::CommandLineFlagInfo info;
  if (!gflags::GetCommandLineFlagInfo(
          absl::StrReplaceAll(name, {{"-", "_"}}).c_str(), &info)) {
    return std::nullopt;
  }
  return info;
}

bool IsOwn(const ProgramInfo& program, const gflags::CommandLineFlagInfo& f) {
  if (f.name == "v" || f.name == "vmodule") return true;
  return std::any_of(program.flag_files.begin(), program.flag_files.end(),
                     [&](const std::string& file) {
                       return absl::EndsWith(f.filename, file);
                     });
}

// pflag's names for gflags' types.
std::string TypeName(const std::string& type) {
  if (type == "int32" || type == "int64" || type == "uint32" ||
      type == "uint64") {
    return "int";
  }
  if (type == "double") return "float";
  return type;
}

}  // namespace

std::string HelpText(const ProgramInfo& program) {
  std::vector<gflags::CommandLineFlagInfo> all;
  gflags::GetAllFlags(&all);
  std::vector<std::pair<std::string, std::string>> rows;
  size_t width = 0;
  for (const gflags::CommandLineFlagInfo& f : all) {
    if (!IsOwn(program, f)) continue;
    std::string left = absl::StrCat("      --", Dashed(f.name));
    if (f.type != "bool") absl::StrAppend(&left, " ", TypeName(f.type));
    std::string right = f.description;
    if (f.type == "string") {
      if (!f.default_value.empty()) {
        absl::StrAppend(&right, " (default \"", f.default_value, "\")");
      }
    } else if (f.default_value != "false" && f.default_value != "0") {
      absl::StrAppend(&right, " (default ", f.default_value, ")");
    }
    width = std::max(width, left.size());
    rows.emplace_back(std::move(left), std::move(right));
  }
  std::sort(rows.begin(), rows.end());
  std::string out = absl::StrCat(program.about, "\n\nUsage:\n  ", program.usage,
                                 "\n\nFlags:\n");
  rows.emplace_back("  -h, --help", absl::StrCat("help for ", program.name));
  width = std::max(width, rows.back().first.size());
  for (const auto& [left, right] : rows) {
    absl::StrAppend(&out, left, std::string(width - left.size() + 3, ' '),
                    right, "\n");
  }
  return out;
}

std::vector<std::string> ParseFlagsOrExit(const ProgramInfo& program, int argc,
                                          char** argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") {
      for (++i; i < argc; ++i) args.emplace_back(argv[i]);
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      args.push_back(std::move(arg));
      continue;
    }
    if (arg == "-h" || arg == "--help" || arg == "-help") {
      std::cout << HelpText(program);
      std::exit(0);
    }
    std::string body = arg.substr(arg[1] == '-' ? 2 : 1);
    std::optional<std::string> value;
    if (const size_t eq = body.find('='); eq != std::string::npos) {
      value = body.substr(eq + 1);
      body.resize(eq);
    }
    std::optional<gflags::CommandLineFlagInfo> flag = Lookup(body);
    if (!flag && !value && absl::StartsWith(body, "no")) {
      flag = Lookup(body.substr(2));
      if (flag && flag->type == "bool") value = "false";
      if (flag && flag->type != "bool") flag.reset();
    }
    // glog's own switches for where logs go are accepted, not listed.
    const bool log_switch = flag && (flag->name == "logtostderr" ||
                                     flag->name == "alsologtostderr" ||
                                     flag->name == "stderrthreshold");
    if (!flag || (!IsOwn(program, *flag) && !log_switch)) {
      Fail(program, absl::StrCat("unknown flag: --", Dashed(body)));
    }
    if (!value) {
      if (flag->type == "bool") {
        value = "true";
      } else if (i + 1 < argc) {
        value = argv[++i];
      } else {
        Fail(program,
             absl::StrCat("flag needs an argument: --", Dashed(flag->name)));
      }
    }
    if (gflags::SetCommandLineOption(flag->name.c_str(), value->c_str())
            .empty()) {
      Fail(program, absl::StrCat("invalid argument \"", *value, "\" for \"--",
                                 Dashed(flag->name), "\" flag: not a valid ",
                                 TypeName(flag->type)));
    }
  }
  return args;
}

}  // namespace kcr
