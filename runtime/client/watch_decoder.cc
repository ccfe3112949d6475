#include "runtime/client/watch_decoder.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/errors/errors.h"
#include "api/json/json_util.h"
#include "api/json_limits.h"
#include "base/string_view.h"
#include "rapidjson/document.h"

namespace kcr::client {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

bool ParseEventType(absl::string_view name, EventType* type) {
  if (name == "ADDED") {
    *type = EventType::kAdded;
  } else if (name == "MODIFIED") {
    *type = EventType::kModified;
  } else if (name == "DELETED") {
    *type = EventType::kDeleted;
  } else if (name == "BOOKMARK") {
    *type = EventType::kBookmark;
  } else if (name == "ERROR") {
    *type = EventType::kError;
  } else {
    return false;
  }
  return true;
}

}  // namespace

WatchDecoder::WatchDecoder(WatchDecoderOptions options)
    : options_(std::move(options)) {}

absl::Status WatchDecoder::Fail(absl::Status status) {
  error_ = status;
  pending_.clear();
  pending_.shrink_to_fit();
  return status;
}

absl::Status WatchDecoder::Feed(std::string_view chunk,
                                std::vector<WatchEvent>* events) {
  if (!error_.ok()) return error_;
  const char* data = chunk.data();
  const size_t n = chunk.size();
  size_t start = 0;  // where the current event's bytes begin in `chunk`
  // The first newline at or after the last event start that looked for
  // one (n: none); unknown until then.
  size_t newline = 0;
  bool newline_known = false;
  for (size_t i = 0; i < n; ++i) {
    const char c = data[i];
    if (!in_event_) {
      if (IsSpace(c)) continue;
      if (c != '{') {
        return Fail(absl::InvalidArgumentError(absl::StrCat(
            "watch stream: unexpected byte 0x",
            absl::Hex(static_cast<unsigned char>(c), absl::kZeroPad2),
            " at offset ", offset_ + static_cast<int64_t>(i),
            " where an event should start")));
      }
      // kube-apiserver ends each event with a newline, and a raw newline
      // cannot occur inside a JSON string: when the line from here parses
      // as a whole event, the event is exactly that line, and its bytes
      // need no framing byte by byte.
      if (line_fast_) {
        if (!newline_known || newline < i) {
          const char* nl =
              static_cast<const char*>(std::memchr(data + i, '\n', n - i));
          newline = nl == nullptr ? n : nl - data;
          newline_known = true;
        }
        if (newline < n) {
          size_t last = newline;
          while (last > i && IsSpace(data[last - 1])) --last;
          if (last - i <= options_.max_event_bytes) {
            const Fast fast =
                DecodeFast(std::string_view(data + i, last - i), events);
            if (fast == Fast::kDecoded) {
              ++events_decoded_;
              i = newline;  // the loop's ++i steps past it
              continue;
            }
            // Not one event per line (events run together): framing byte by
            // byte finds them; stop parsing lines twice.
            if (fast == Fast::kParseFailed) line_fast_ = false;
          }
        }
      }
      in_event_ = true;
      depth_ = 1;
      in_string_ = false;
      escaped_ = false;
      start = i;
      continue;
    }
    if (in_string_) {
      if (escaped_) {
        escaped_ = false;
        continue;
      }
      // Most of an object's bytes are inside strings: jump to the next
      // quote with memchr, stepping over escapes on the way.
      const char* quote =
          static_cast<const char*>(std::memchr(data + i, '"', n - i));
      const size_t limit = quote == nullptr ? n : quote - data;
      const char* backslash =
          static_cast<const char*>(std::memchr(data + i, '\\', limit - i));
      if (backslash != nullptr) {
        i = backslash - data;  // the loop's ++i steps onto the escaped byte
        escaped_ = true;
        continue;
      }
      if (quote == nullptr) {
        i = n - 1;  // the string goes on in the next chunk
        continue;
      }
      i = limit;
      in_string_ = false;
      continue;
    }
    switch (c) {
      case '"':
        in_string_ = true;
        break;
      case '{':
      case '[':
        // The envelope adds one level above the object.
        if (++depth_ > api::kMaxJsonDepth + 1) {
          return Fail(absl::InvalidArgumentError(absl::StrCat(
              "watch stream: event ", events_decoded_ + 1,
              " nests deeper than ", api::kMaxJsonDepth, " levels")));
        }
        break;
      case '}':
      case ']':
        if (--depth_ == 0) {
          in_event_ = false;
          std::string_view text;
          if (pending_.empty()) {
            text = std::string_view(data + start, i + 1 - start);
          } else {
            pending_.append(data + start, i + 1 - start);
            text = pending_;
          }
          if (text.size() > options_.max_event_bytes) {
            return Fail(absl::ResourceExhaustedError(absl::StrCat(
                "watch stream: event ", events_decoded_ + 1, " is ",
                text.size(), " bytes, more than the limit of ",
                options_.max_event_bytes)));
          }
          absl::Status status = Decode(text, events);
          pending_.clear();
          if (!status.ok()) return Fail(status);
        }
        break;
      default:
        break;
    }
  }
  if (in_event_) {
    const size_t tail = n - start;
    if (pending_.size() + tail > options_.max_event_bytes) {
      return Fail(absl::ResourceExhaustedError(absl::StrCat(
          "watch stream: event ", events_decoded_ + 1, " exceeds the limit of ",
          options_.max_event_bytes, " bytes")));
    }
    pending_.append(data + start, tail);
  }
  offset_ += static_cast<int64_t>(n);
  return absl::OkStatus();
}

absl::Status WatchDecoder::Finish() {
  if (!error_.ok()) return error_;
  if (in_event_) {
    return Fail(absl::DataLossError(absl::StrCat(
        "watch stream ended in the middle of an event after ", pending_.size(),
        " bytes (", events_decoded_, " complete events before it)")));
  }
  return absl::OkStatus();
}

WatchDecoder::Fast WatchDecoder::DecodeFast(
    std::string_view text, std::vector<WatchEvent>* events) const {
  // kube-apiserver writes every event as {"type":"T","object":{...}}, with
  // no space: the object's bytes go straight to Object::Parse (its in-situ
  // path), instead of a DOM of the event and then a copy of the object.
  // Anything else, and every error, takes the general path.
  constexpr std::string_view kType = "{\"type\":\"";
  constexpr std::string_view kObject = "\",\"object\":";
  if (text.size() < kType.size() + kObject.size() + 3 ||
      text.substr(0, kType.size()) != kType || text.back() != '}') {
    return Fast::kDeclined;
  }
  const size_t type_end = text.find('"', kType.size());
  if (type_end == std::string_view::npos) return Fast::kDeclined;
  const std::string_view type_name =
      text.substr(kType.size(), type_end - kType.size());
  WatchEvent event;
  if (!ParseEventType(ToAbsl(type_name), &event.type) ||
      event.type == EventType::kError) {
    return Fast::kDeclined;
  }
  if (text.substr(type_end, kObject.size()) != kObject) return Fast::kDeclined;
  const size_t object_start = type_end + kObject.size();
  const std::string_view object_text =
      text.substr(object_start, text.size() - 1 - object_start);
  if (object_text.empty() || object_text.front() != '{') return Fast::kDeclined;
  auto object = api::Object::Parse(object_text, options_.parse_options);
  if (!object.ok()) return Fast::kParseFailed;
  event.object = *std::move(object);
  events->push_back(std::move(event));
  return Fast::kDecoded;
}

WatchDecoder::LineDecode WatchDecoder::DecodeLine(std::string_view line,
                                                  WatchEvent* event) const {
  if (line.size() > options_.max_event_bytes) return LineDecode::kDeclined;
  std::vector<WatchEvent> one;
  const LineDecode result = DecodeFast(line, &one);
  if (result == LineDecode::kDecoded) *event = std::move(one.front());
  return result;
}

absl::Status WatchDecoder::Decode(std::string_view text,
                                  std::vector<WatchEvent>* events) {
  if (DecodeFast(text, events) == Fast::kDecoded) {
    ++events_decoded_;
    return absl::OkStatus();
  }
  const int64_t index = events_decoded_ + 1;
  rapidjson::Document doc;
  // The event's object sits one level down.
  if (absl::Status s = json::ParseJson(text, &doc, api::kMaxJsonDepth + 1);
      !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "watch stream: event ", index, " is not valid JSON: ", s.message()));
  }
  auto type_it = doc.FindMember("type");
  if (type_it == doc.MemberEnd() || !type_it->value.IsString()) {
    return absl::InvalidArgumentError(
        absl::StrCat("watch stream: event ", index, " has no string \"type\""));
  }
  absl::string_view type_name(type_it->value.GetString(),
                              type_it->value.GetStringLength());
  WatchEvent event;
  if (!ParseEventType(type_name, &event.type)) {
    std::string shown(type_name.substr(0, 64));
    return absl::InvalidArgumentError(absl::StrCat(
        "watch stream: event ", index, " has unknown type \"", shown, "\""));
  }
  auto object_it = doc.FindMember("object");
  if (object_it == doc.MemberEnd() || !object_it->value.IsObject()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "watch stream: event ", index, " (", type_name, ") has no \"object\""));
  }
  if (event.type == EventType::kError) {
    event.error = api::StatusFromObject(object_it->value);
    if (event.error.ok()) {
      event.error =
          absl::InternalError("watch ERROR event with a Success status");
    }
    auto object =
        api::Object::FromValue(object_it->value, options_.parse_options);
    if (object.ok()) event.object = *std::move(object);
  } else {
    auto object =
        api::Object::FromValue(object_it->value, options_.parse_options);
    if (!object.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("watch stream: event ", index, " (", type_name,
                       "): object: ", object.status().message()));
    }
    event.object = *std::move(object);
  }
  events->push_back(std::move(event));
  ++events_decoded_;
  return absl::OkStatus();
}

}  // namespace kcr::client
