#include "apiserver/auth/token_file.h"

#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/strings/str_split.h"
#include "base/str_cat.h"
#include "glog/logging.h"

namespace kcr {
namespace apiserver {
namespace auth {
namespace {

// One CSV record as Go's encoding/csv reads it with TrimLeadingSpace:
// fields split at commas, a field may be quoted ("" inside is a quote).
absl::StatusOr<std::vector<std::string>> ParseCsvLine(std::string_view line) {
  std::vector<std::string> fields;
  size_t i = 0;
  while (true) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    std::string field;
    if (i < line.size() && line[i] == '"') {
      ++i;
      bool closed = false;
      while (i < line.size()) {
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            field.push_back('"');
            i += 2;
            continue;
          }
          closed = true;
          ++i;
          break;
        }
        field.push_back(line[i++]);
      }
      if (!closed) {
        return absl::InvalidArgumentError("extraneous or missing \" in field");
      }
      if (i < line.size() && line[i] != ',') {
        return absl::InvalidArgumentError(
            "extraneous or missing \" in quoted-field");
      }
    } else {
      while (i < line.size() && line[i] != ',') {
        if (line[i] == '"') {
          return absl::InvalidArgumentError("bare \" in non-quoted-field");
        }
        field.push_back(line[i++]);
      }
    }
    fields.push_back(std::move(field));
    if (i >= line.size()) break;
    ++i;  // the comma
  }
  return fields;
}

}  // namespace

absl::StatusOr<std::map<std::string, UserInfo>> ParseTokenFile(
    std::string_view text, const std::string& path) {
  std::map<std::string, UserInfo> tokens;
  int line_number = 0;
  for (absl::string_view raw :
       absl::StrSplit(absl::string_view(text.data(), text.size()), '\n')) {
    ++line_number;
    std::string line(raw);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    auto fields = ParseCsvLine(line);
    if (!fields.ok()) {
      return absl::InvalidArgumentError(Cat("token file ", path, " line ",
                                            line_number, ": ",
                                            fields.status().message()));
    }
    if (fields->size() < 3) {
      return absl::InvalidArgumentError(
          Cat("token file ", path, " line ", line_number,
              ": must have at least 3 columns (token, user name, user uid), "
              "found ",
              fields->size()));
    }
    const std::vector<std::string>& f = *fields;
    if (f[0].empty()) {
      LOG(WARNING) << "empty token in token file " << path << " line "
                   << line_number << ", skipped";
      continue;
    }
    if (f[1].empty()) {
      return absl::InvalidArgumentError(
          Cat("token file ", path, " line ", line_number, ": empty user name"));
    }
    UserInfo user;
    user.name = f[1];
    user.uid = f[2];
    if (f.size() >= 4 && !f[3].empty()) {
      for (absl::string_view g : absl::StrSplit(f[3], ',')) {
        user.groups.emplace_back(g);
      }
    }
    if (tokens.count(f[0]) > 0) {
      LOG(WARNING) << "duplicate token in token file " << path << " line "
                   << line_number;
    }
    tokens[f[0]] = std::move(user);
  }
  return tokens;
}

absl::StatusOr<std::map<std::string, UserInfo>> ReadTokenFile(
    const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(Cat("cannot read token file ", path));
  std::stringstream text;
  text << in.rdbuf();
  return ParseTokenFile(text.str(), path);
}

}  // namespace auth
}  // namespace apiserver
}  // namespace kcr
