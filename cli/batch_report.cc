#include "batch_report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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

// What a ChangesView shows of a change list: the first `batches` batches,
// the last of them cut after `cut_shown` shares when `last_cut`; what is
// left out, counted.
struct ChangesCut {
  std::size_t batches = 0;
  bool last_cut = false;
  std::size_t cut_shown = 0;
  std::size_t omitted_batches = 0;  // not listed at all
  std::size_t omitted_shares = 0;   // of those and of the cut batch
  std::size_t omitted_lines = 0;    // the lines the text leaves out
};

ChangesCut CutChanges(const libshare::ChangeList& c, const ChangesView& v) {
  ChangesCut cut;
  std::size_t lines = 0;
  for (const libshare::ChangeRecord& b : c.batches) {
    if (v.limit != 0 && lines >= v.limit) {
      ++cut.omitted_batches;
      cut.omitted_shares += b.shares.size();
      cut.omitted_lines += 1 + (v.summary ? 0 : b.shares.size());
      continue;
    }
    ++lines;
    ++cut.batches;
    if (v.summary) continue;
    const std::size_t room = v.limit == 0
                                 ? b.shares.size()
                                 : std::min(b.shares.size(), v.limit - lines);
    lines += room;
    if (room < b.shares.size()) {
      cut.last_cut = true;
      cut.cut_shown = room;
      cut.omitted_shares += b.shares.size() - room;
      cut.omitted_lines += b.shares.size() - room;
    }
  }
  return cut;
}

struct ShareCounts {
  std::size_t added = 0, removed = 0, changed = 0;
};

ShareCounts CountShares(const libshare::ChangeRecord& b) {
  ShareCounts n;
  for (const libshare::ShareChange& s : b.shares) {
    switch (s.kind) {
      case libshare::ShareChange::Kind::kAdded:
        ++n.added;
        break;
      case libshare::ShareChange::Kind::kRemoved:
        ++n.removed;
        break;
      case libshare::ShareChange::Kind::kChanged:
        ++n.changed;
        break;
    }
  }
  return n;
}

// "; shares: 3 added, 1 removed" (kinds with none left out), "; no shares".
std::string ShareCountsText(const ShareCounts& n) {
  std::string out;
  for (const auto& [count, kind] :
       {std::pair{n.added, "added"}, std::pair{n.removed, "removed"},
        std::pair{n.changed, "changed"}}) {
    if (count == 0) continue;
    absl::StrAppend(&out, out.empty() ? "; shares: " : ", ", count, " ", kind);
  }
  return out.empty() ? "; no shares" : out;
}

}  // namespace

void SortProblems(std::vector<Problem>* problems) {
  std::stable_sort(problems->begin(), problems->end(),
                   [](const Problem& a, const Problem& b) {
                     return SortKey(a.origin) < SortKey(b.origin);
                   });
}

std::string ErrorKind(std::string_view m) {
  const auto at_word = [&m](std::size_t i) {
    return i == 0 || m[i - 1] == ' ' || m[i - 1] == '(' || m[i - 1] == ',';
  };
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  const auto name_char = [&digit](char c) {
    return digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           c == '_' || c == '-';
  };
  std::string out;
  std::size_t i = 0;
  while (i < m.size()) {
    const char c = m[i];
    if (c == '"') {  // to the closing quote; a backslash escapes one
      std::size_t j = i + 1;
      while (j < m.size() && m[j] != '"') j += m[j] == '\\' ? 2 : 1;
      out += "\"...\"";
      i = std::min(j + 1, m.size());
    } else if (c == '/' && at_word(i)) {
      // A message that starts with its path ("PATH: why") may have
      // spaces in it; elsewhere a path ends at a space or a separator.
      std::size_t j = i;
      if (i == 0 && m.find(": ") != std::string_view::npos) {
        j = m.find(": ");
      } else {
        while (j < m.size() && m[j] != ' ' && m[j] != ':' && m[j] != ',' &&
               m[j] != ')' && m[j] != ';') {
          ++j;
        }
      }
      out += "PATH";
      i = j;
    } else if (digit(c) && at_word(i)) {
      while (i < m.size() && digit(m[i])) ++i;
      out += "N";
    } else if (at_word(i) && m.substr(i, 6) == "group " && i + 6 < m.size() &&
               name_char(m[i + 6])) {
      std::size_t j = i + 6;
      while (j < m.size() && name_char(m[j])) ++j;
      out += "group GROUP";
      i = j;
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

std::string FormatProblems(const std::vector<Problem>& problems,
                           std::string_view kind, std::size_t shown_per_kind,
                           std::string_view all_option) {
  // Per kind (command, ErrorKind): how many, and whether their messages
  // are all the one of its first line.
  struct Kind {
    std::size_t total = 0;
    std::size_t seen = 0;
    const std::string* first_message = nullptr;
    bool same = true;
  };
  using Kinds = std::map<std::pair<std::string, std::string>, Kind>;
  Kinds kinds;
  std::vector<Kinds::value_type*> kind_of;  // each problem's
  kind_of.reserve(problems.size());
  for (const Problem& p : problems) {
    auto& entry = *kinds.try_emplace({p.command, ErrorKind(p.message)}).first;
    Kind& k = entry.second;
    ++k.total;
    if (k.first_message == nullptr) {
      k.first_message = &p.message;
    } else if (k.same && *k.first_message != p.message) {
      k.same = false;
    }
    kind_of.push_back(&entry);
  }
  const auto show_all = [shown_per_kind](const Kind& k) {
    return shown_per_kind == 0 || k.total <= shown_per_kind + 1;
  };
  std::string out;
  for (std::size_t i = 0; i < problems.size(); ++i) {
    const Problem& p = problems[i];
    Kind& k = kind_of[i]->second;
    const std::size_t n = ++k.seen;
    if (!show_all(k) && n > shown_per_kind + 1) continue;
    // One line each, whatever the file held: control bytes escaped, and
    // the command word (the line's first) cut short.
    const auto what = [&p](std::string_view message) {
      return p.command.empty() ? ShownForTerminal(message)
                               : absl::StrCat(ShownWord(p.command), ": ",
                                              ShownForTerminal(message));
    };
    const std::string origin =
        p.origin.empty() ? "sharectl" : ShownForTerminal(p.origin);
    if (show_all(k) || n <= shown_per_kind) {
      absl::StrAppend(&out, origin, ": ", what(p.message), "\n");
      continue;
    }
    const std::string kind_word(kind);
    absl::StrAppend(
        &out, origin, ": ... and ", k.total - shown_per_kind, " more lines ",
        k.same
            ? absl::StrCat("with the same ", kind_word, ": ", what(p.message))
            : absl::StrCat("with this kind of ", kind_word, ": ",
                           what(kind_of[i]->first.second)),
        all_option.empty()
            ? std::string()
            : absl::StrCat("; ", std::string(all_option), " lists every line"),
        "\n");
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
  const std::string lines = Counted(s.lines, "line", "lines");
  const std::string operations =
      Counted(s.operations, "operation", "operations");
  if (s.committed) {
    absl::StrAppend(&out, operations, " applied in ", Ms(s.ms), " ms: ", lines,
                    ", 0 refused, generation ", s.generation);
  } else if (s.errors == 0 && s.commit_error.empty()) {
    absl::StrAppend(
        &out, s.dry_run ? "dry run passed in " : "nothing to do in ", Ms(s.ms),
        " ms, nothing changed: ", lines, ", ", operations, " would apply");
  } else {
    absl::StrAppend(
        &out, s.dry_run ? "dry run refused in " : "refused in ", Ms(s.ms),
        " ms, nothing ", s.dry_run ? "changed" : "applied", ": ", lines, ", ",
        s.refused_lines, " refused, ", Counted(s.errors, "error", "errors"));
    if (!s.commit_error.empty()) {
      absl::StrAppend(&out, s.errors == 0 ? "" : "; ",
                      "commit failed: ", s.commit_error);
    }
  }
  out += "\n";
  return out;
}

std::string FormatChanges(const libshare::ChangeList& c,
                          const ChangesView& view) {
  const ChangesCut cut = CutChanges(c, view);
  std::string out;
  for (std::size_t i = 0; i < cut.batches; ++i) {
    const libshare::ChangeRecord& b = c.batches[i];
    // The origin and summary are what a client said (an admin-group
    // member's batch origin could carry terminal controls that rewrite
    // the lines above it): escaped as paths are, as the log does.
    absl::StrAppend(&out, "generation ", b.generation, "  ", IsoTime(b.time),
                    "  uid ", b.uid, " pid ", b.pid,
                    b.origin.empty() ? "" : "  ", ShownForTerminal(b.origin),
                    "  ", Counted(b.operations, "operation", "operations"),
                    ": ", ShownForTerminal(b.summary),
                    view.summary ? ShareCountsText(CountShares(b)) : "", "\n");
    if (view.summary) continue;
    const bool cut_here = cut.last_cut && i + 1 == cut.batches;
    const std::size_t shown = cut_here ? cut.cut_shown : b.shares.size();
    for (std::size_t j = 0; j < shown; ++j) {
      const libshare::ShareChange& s = b.shares[j];
      absl::StrAppend(
          &out, "  ", std::string(libshare::ShareChangeKindName(s.kind)), " ",
          ShownForTerminal(s.path),
          s.active || s.kind == libshare::ShareChange::Kind::kRemoved
              ? ""
              : " (inactive)",
          "\n");
    }
    if (cut_here) {
      absl::StrAppend(
          &out, "  ... and ",
          Counted(b.shares.size() - shown, "more share", "more shares"), "\n");
    }
  }
  if (cut.omitted_lines == 0) return out;
  std::vector<std::string> what;
  if (cut.last_cut) {
    const libshare::ChangeRecord& b = c.batches[cut.batches - 1];
    what.push_back(absl::StrCat(
        Counted(b.shares.size() - cut.cut_shown, "more share", "more shares"),
        " of generation ", b.generation));
  }
  if (cut.omitted_batches > 0) {
    what.push_back(
        absl::StrCat(Counted(cut.omitted_batches, "more batch", "more batches"),
                     ", up to generation ", c.batches.back().generation));
  }
  absl::StrAppend(
      &out, "... ", Counted(cut.omitted_lines, "more line", "more lines"),
      " not shown: ", absl::StrJoin(what, " and "), "; --limit 0 shows all",
      view.summary ? "" : ", --summary one line per batch");
  const std::size_t whole = cut.batches - (cut.last_cut ? 1 : 0);
  if (whole > 0) {
    absl::StrAppend(&out, ", --since ", c.batches[whole - 1].generation,
                    " starts after the last batch shown whole");
  }
  out += "\n";
  return out;
}

std::string FormatChangesJson(const libshare::ChangeList& c,
                              const ChangesView& view) {
  const ChangesCut cut = CutChanges(c, view);
  JsonWriter w;
  w.BeginObject();
  w.Key("generation");
  w.Uint(c.generation);
  w.Key("oldest");
  w.Uint(c.oldest);
  w.Key("limit");
  if (view.limit == 0) {
    w.Null();
  } else {
    w.Uint(view.limit);
  }
  w.Key("batches");
  w.BeginArray();
  for (std::size_t i = 0; i < cut.batches; ++i) {
    const libshare::ChangeRecord& b = c.batches[i];
    w.BeginObject();
    w.Key("generation");
    w.Uint(b.generation);
    w.Key("time");
    w.String(IsoTime(b.time));
    w.Key("time_unix");
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
    const ShareCounts n = CountShares(b);
    w.Key("share_counts");
    w.BeginObject();
    w.Key("added");
    w.Uint(n.added);
    w.Key("removed");
    w.Uint(n.removed);
    w.Key("changed");
    w.Uint(n.changed);
    w.EndObject();
    const bool cut_here = cut.last_cut && i + 1 == cut.batches;
    const std::size_t shown = cut_here ? cut.cut_shown : b.shares.size();
    w.Key("shares");
    if (view.summary) {
      w.Null();
    } else {
      w.BeginArray();
      for (std::size_t j = 0; j < shown; ++j) {
        const libshare::ShareChange& s = b.shares[j];
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
    }
    w.Key("shares_omitted");
    w.Uint(view.summary ? 0 : b.shares.size() - shown);
    w.EndObject();
  }
  w.EndArray();
  w.Key("more");
  if (cut.omitted_batches == 0 && !cut.last_cut) {
    w.Null();
  } else {
    w.BeginObject();
    w.Key("batches");
    w.Uint(cut.omitted_batches);
    w.Key("shares");
    w.Uint(cut.omitted_shares);
    w.EndObject();
  }
  w.EndObject();
  return w.str() + "\n";
}

}  // namespace sharectl
