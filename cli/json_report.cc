// The JSON documents sharectl prints with --json for a failure
// (ErrorJson) and for a changing command (Runner::ChangeJson), and the
// parts they share: an error's "error" member and an origin's
// {"file", "line"}.
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "json_writer.h"
#include "runner.h"

namespace sharectl {
namespace {

// An origin as JSON: {"file", "line"} (either may be null), or null for
// an operation sharectl made itself or one from the command line.
// `batch_file` is the file that a bare line number refers to.
void WriteOrigin(const std::string& origin, const std::string& batch_file,
                 JsonWriter* w) {
  const auto digits = [](std::string_view t) {
    return !t.empty() && t.size() < 10 &&
           t.find_first_not_of("0123456789") == std::string_view::npos;
  };
  w->Key("origin");
  if (origin.empty() || origin == "sharectl") {
    w->Null();
    return;
  }
  std::string file;
  std::string line;
  if (digits(origin)) {
    file = batch_file;
    line = origin;
  } else if (size_t colon = origin.rfind(':');
             colon != std::string::npos && digits(origin.substr(colon + 1))) {
    file = origin.substr(0, colon);
    line = origin.substr(colon + 1);
  } else {
    file = origin;
  }
  w->BeginObject();
  w->OptionalStringMember("file", file);
  w->Key("line");
  if (line.empty()) {
    w->Null();
  } else {
    w->Uint(std::stoul(line));
  }
  w->EndObject();
}

}  // namespace

void WriteErrorMember(std::string_view kind, std::string_view command,
                      std::string_view message, JsonWriter* w) {
  w->Key("error");
  w->BeginObject();
  w->Key("kind");
  w->String(kind);
  w->OptionalStringMember("command", command);
  w->StringMember("message", message);
  w->EndObject();
}

std::string ErrorJson(std::string_view kind, std::string_view command,
                      std::string_view message) {
  JsonWriter w;
  w.BeginObject();
  WriteErrorMember(kind, command, message, &w);
  w.EndObject();
  return w.str() + "\n";
}

std::string Runner::ChangeJson(const ChangeOutcome& o,
                               const std::vector<Problem>& problems) const {
  JsonWriter w;
  w.BeginObject();
  if (json_batch_text_) w.StringMember("batch", *json_batch_text_);
  w.Key("ok");
  w.Bool(o.ok);
  w.Key("dry_run");
  w.Bool(o.dry_run);
  w.Key("applied");
  w.Uint(o.applied);
  w.Key("would_apply");
  if (o.dry_run && o.would_apply.has_value()) {
    w.Uint(*o.would_apply);
  } else {
    w.Null();  // not a dry run, or none the daemon checked
  }
  w.Key("generation");
  if (o.generation > 0) {
    w.Uint(o.generation);
  } else {
    w.Null();  // the daemon was not asked (nothing to send)
  }
  w.Key("errors");
  w.BeginArray();
  for (const auto& p : problems) {
    w.BeginObject();
    w.Key("index");
    if (p.index) {
      w.Uint(*p.index);
    } else {
      w.Null();
    }
    WriteOrigin(p.origin, batch_file_, &w);
    w.OptionalStringMember("command", p.command);
    w.StringMember("message", p.message);
    w.EndObject();
  }
  w.EndArray();
  w.Key("warnings");
  w.BeginArray();
  for (const auto& warning : warnings_) {
    w.BeginObject();
    WriteOrigin(warning.origin, batch_file_, &w);
    w.StringMember("message", warning.message);
    w.EndObject();
  }
  w.EndArray();
  w.OptionalStringMember("commit_error", o.commit_error);
  if (!o.ok) {
    std::string message = o.error_message;
    if (message.empty()) message = o.commit_error;
    if (message.empty()) {
      message = absl::StrCat(problems.size(),
                             problems.size() == 1 ? " problem" : " problems",
                             ", nothing applied");
    }
    WriteErrorMember(o.error_kind, command_, message, &w);
  }
  w.EndObject();
  return w.str() + "\n";
}

}  // namespace sharectl
