#include "batch_report.h"

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "json_writer.h"
#include "output.h"

namespace sharectl {
namespace {

// ("FILE", LINE) of "FILE:LINE"; (origin, 0) without a numeric ":LINE".
std::pair<std::string, uint64_t> SortKey(const std::string& origin) {
  std::size_t colon = origin.rfind(':');
  uint64_t line = 0;
  if (colon != std::string::npos &&
      absl::SimpleAtoi(absl::string_view(origin).substr(colon + 1), &line)) {
    return {origin.substr(0, colon), line};
  }
  if (absl::SimpleAtoi(origin, &line)) return {"", line};
  return {origin == "sharectl" ? "" : origin, 0};
}

std::string Ms(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", ms);
  return buf;
}

std::string Time(int64_t t) {
  time_t tt = static_cast<time_t>(t);
  struct tm tm;
  char buf[32];
  if (::localtime_r(&tt, &tm) == nullptr ||
      std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm) == 0) {
    return std::to_string(t);
  }
  return buf;
}

}  // namespace

void SortProblems(std::vector<Problem>* problems) {
  std::stable_sort(problems->begin(), problems->end(),
                   [](const Problem& a, const Problem& b) {
                     return SortKey(a.origin) < SortKey(b.origin);
                   });
}

std::string FormatProblems(const std::vector<Problem>& problems,
                           std::string_view kind) {
  std::map<std::pair<std::string, std::string>, std::size_t> total, seen;
  for (const Problem& p : problems) ++total[{p.command, p.message}];
  std::string out;
  for (const Problem& p : problems) {
    const std::pair<std::string, std::string> key{p.command, p.message};
    const std::size_t n = ++seen[key];
    if (n > kSameErrorShown + 1) continue;
    // One line each, whatever the file held: control bytes escaped, and
    // the command word (the line's first) cut short.
    const std::string what =
        p.command.empty()
            ? ShownForTerminal(p.message)
            : absl::StrCat(ShownWord(p.command), ": ",
                           ShownForTerminal(p.message));
    const std::string origin = ShownForTerminal(p.origin);
    if (n <= kSameErrorShown) {
      absl::StrAppend(&out, origin.empty() ? "sharectl" : origin, ": ", what,
                      "\n");
    } else {
      absl::StrAppend(
          &out, origin, ": ... and ", total[key] - kSameErrorShown,
          " more lines with the same ",
          absl::string_view(kind.data(), kind.size()), ": ", what, "\n");
    }
  }
  return out;
}

std::size_t RefusedLines(const std::vector<Problem>& problems) {
  std::set<std::string> origins;
  for (const Problem& p : problems) origins.insert(p.origin);
  return origins.size();
}

std::string FormatSummary(const BatchSummary& s) {
  std::string out = absl::StrCat("sharectl: ", s.label, ": ");
  if (s.committed) {
    absl::StrAppend(&out, s.operations, " operations applied in ", Ms(s.ms),
                    " ms: ", s.lines, " lines, 0 refused, generation ",
                    s.generation);
  } else if (s.errors == 0 && s.commit_error.empty()) {
    absl::StrAppend(&out,
                    s.dry_run ? "dry run passed in " : "nothing to do in ",
                    Ms(s.ms), " ms, nothing changed: ", s.lines, " lines, ",
                    s.operations, " operations would apply");
  } else {
    absl::StrAppend(&out, s.dry_run ? "dry run refused in " : "refused in ",
                    Ms(s.ms), " ms, nothing ",
                    s.dry_run ? "changed" : "applied", ": ", s.lines,
                    " lines, ", s.refused_lines, " refused, ", s.errors,
                    s.errors == 1 ? " error" : " errors");
    if (!s.commit_error.empty()) {
      absl::StrAppend(&out, s.errors == 0 ? "" : "; ",
                      "commit failed: ", s.commit_error);
    }
  }
  out += "\n";
  return out;
}

std::string FormatChanges(const libshare::ChangeList& c) {
  std::string out;
  for (const libshare::ChangeRecord& b : c.batches) {
    // The origin and summary are what a client said (an admin-group
    // member's batch origin could carry terminal controls that rewrite
    // the lines above it): escaped as paths are, as the log does.
    absl::StrAppend(&out, "generation ", b.generation, "  ", Time(b.time),
                    "  uid ", b.uid, " pid ", b.pid,
                    b.origin.empty() ? "" : "  ", ShownForTerminal(b.origin),
                    "  ", b.operations,
                    b.operations == 1 ? " operation" : " operations", ": ",
                    ShownForTerminal(b.summary), "\n");
    for (const libshare::ShareChange& s : b.shares) {
      absl::StrAppend(
          &out, "  ", std::string(libshare::ShareChangeKindName(s.kind)), " ",
          ShownForTerminal(s.path),
          s.active || s.kind == libshare::ShareChange::Kind::kRemoved
              ? ""
              : " (inactive)",
          "\n");
    }
  }
  return out;
}

std::string FormatChangesJson(const libshare::ChangeList& c) {
  JsonWriter w;
  w.BeginObject();
  w.Key("generation");
  w.Uint(c.generation);
  w.Key("oldest");
  w.Uint(c.oldest);
  w.Key("batches");
  w.BeginArray();
  for (const libshare::ChangeRecord& b : c.batches) {
    w.BeginObject();
    w.Key("generation");
    w.Uint(b.generation);
    w.Key("time");
    w.Int(b.time);
    w.Key("uid");
    w.Uint(b.uid);
    w.Key("pid");
    w.Int(b.pid);
    w.StringMember("origin", b.origin);
    w.Key("operations");
    w.Uint(b.operations);
    w.Key("summary");
    w.String(b.summary);
    w.Key("shares");
    w.BeginArray();
    for (const libshare::ShareChange& s : b.shares) {
      w.BeginObject();
      w.Key("change");
      w.String(libshare::ShareChangeKindName(s.kind));
      w.StringMember("path", s.path);
      w.Key("id");
      w.Uint(s.id);
      w.Key("active");
      w.Bool(s.active);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.str() + "\n";
}

}  // namespace sharectl
