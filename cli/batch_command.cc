// `sharectl batch FILE|-`: the file read (announced to the daemon first
// when it is big), parsed into one batch, -a expanded to the groups that
// exist at that point of it, and sent as one change with its warnings
// about options open to every client.
#include <sys/stat.h>

#include <algorithm>
#include <cstddef>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "batch_file.h"
#include "batch_report.h"
#include "input_file.h"
#include "option_report.h"
#include "runner.h"

namespace sharectl {
namespace {

using libshare::Batch;
using libshare::Client;
using libshare::Operation;

// A batch file this big or bigger is announced to the daemon before it is
// read (Runner::AnnounceBatch): about 45,000 add-share lines. Daemons
// before the batch arena warmed memory for it (this one changes nothing);
// measured with those: at 15,000
// (0.8 MB) announcing gained nothing end to end: the daemon's memory took
// 4 instead of 11 ms, but the client, faulting in its own memory while the
// daemon warmed, took 1-6 ms longer; at 100,000 (4.5 MB) a batch took 341
// instead of 414 ms (bench/JOURNAL.md, "A batch announced before it is
// parsed"). After the daemon idled 3 s (its freed memory gone back to the
// host), announcing at 15,000 cut the daemon's memory step from 28 to 8 ms
// (medians) but the batch only from 90 to 88 ms: 40 rounds each, "Announcing
// 15,000 adds after an idle spell".
constexpr std::size_t kAnnounceFileBytes = std::size_t{2} << 20;

// The options of `batch` that open to every client: one warning per
// operation and concern, the same text for the same concern so that
// FormatProblems collapses a table's worth of them.
std::vector<Problem> OpenWarnings(const Batch& batch, OriginOf origin_of) {
  std::vector<Problem> out;
  for (std::size_t i = 0; i < batch.ops.size(); ++i) {
    const Operation& op = batch.ops[i];
    const bool own_options =
        op.type == Operation::Type::kCreateGroup ||
        op.type == Operation::Type::kSetOptions ||
        ((op.type == Operation::Type::kAddShare ||
          (op.type == Operation::Type::kModifyShare && op.set_options)) &&
         !op.options.empty());
    if (!own_options) continue;
    for (const std::string& c : OpenConcerns(op.options)) {
      Problem& p = out.emplace_back();
      p.origin = origin_of(i);
      p.command = std::string(libshare::OperationName(op.type));
      p.index = i;
      p.message = absl::StrCat(
          "warning: ", c,
          op.type == Operation::Type::kCreateGroup && op.options.empty()
              ? " (no -o given; -o rw says so explicitly)"
              : "");
    }
  }
  return out;
}

}  // namespace

void Runner::AnnounceBatch(const std::string& file) {
  struct stat st;
  if (::stat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<std::size_t>(st.st_size) < kAnnounceFileBytes ||
      static_cast<std::size_t>(st.st_size) > env_.max_input_bytes) {
    return;
  }
  auto c = env_.connect ? env_.connect(socket_) : Client::Connect(socket_);
  if (!c.ok()) return;
  // An add-share line of a home folder (45 bytes) is about 64 bytes
  // encoded; shorter lines weigh more.
  const auto size = static_cast<std::size_t>(st.st_size);
  (void)(*c)->PrepareBatch(size + size / 2);
}

int Runner::RunBatch(const ParsedArgs& a) {
  std::string text;
  const std::string& file = a.args[0];
  batch_file_ = file;
  if (file == "-") {
    if (!ReadAll(*env_.in, &text, env_.max_input_bytes)) {
      return Refused("batch", TooLong("standard input", env_.max_input_bytes));
    }
  } else {
    AnnounceBatch(file);
    std::string error;
    if (!ReadWholeFile(file, &text, &error, env_.max_input_bytes)) {
      return Refused("batch", error);
    }
  }
  // Errors and the summary name lines as FILE:LINE.
  const std::string where = file == "-" ? "<stdin>" : file;
  BatchFile parsed = ParseBatchFile(text, where);
  // Said once the file is parsed (a few ms for 15,000 lines): the number
  // of commands is known only then.
  const bool progress =
      env_.interactive && parsed.commands > kProgressThreshold;
  if (progress) {
    err() << "sharectl: batch: parsing " << parsed.commands << " commands"
          << std::endl;
  }
  Batch batch;
  batch.dry_run = a.DryRun();
  // The audit log is read far from this folder: the file's absolute name.
  batch.origin =
      absl::StrCat("batch ", file == "-" ? where : AbsoluteName(file));
  batch.ops = std::move(parsed.ops);
  std::vector<int> op_lines = std::move(parsed.op_lines);
  BatchSummary summary;
  summary.label = absl::StrCat("batch ", where);
  summary.lines = parsed.commands;
  if (!parsed.all.empty()) {
    int rc = kExitOk;
    auto names = GroupNames("batch", &rc);
    if (!names.ok()) {
      if (!parsed.bad.empty()) ReportProblems(parsed.bad);
      return rc;
    }
    // -a means every group that exists at that point of the batch.
    std::vector<Operation> expanded;
    std::vector<int> expanded_lines;
    std::vector<std::string> known = *names;
    size_t next_all = 0;
    for (size_t i = 0; i < batch.ops.size(); ++i) {
      if (next_all < parsed.all.size() && parsed.all[next_all].first == i) {
        for (const auto& g : known) {
          Operation op;
          op.type = parsed.all[next_all].second;
          op.group = g;
          expanded.push_back(std::move(op));
          expanded_lines.push_back(op_lines[i]);
        }
        ++next_all;
        continue;
      }
      Operation& op = batch.ops[i];
      if (op.type == Operation::Type::kCreateGroup)
        known.push_back(op.group.str());
      if (op.type == Operation::Type::kDeleteGroup) {
        known.erase(std::remove(known.begin(), known.end(), op.group),
                    known.end());
      }
      expanded.push_back(std::move(op));
      expanded_lines.push_back(op_lines[i]);
    }
    batch.ops = std::move(expanded);
    op_lines = std::move(expanded_lines);
  }
  const auto origin_of = [&](std::size_t i) {
    return absl::StrCat(where, ":", op_lines[i]);
  };
  batch_warnings_ = OpenWarnings(batch, origin_of);
  return Apply("batch", std::move(batch), origin_of, progress,
               std::move(parsed.bad), &summary);
}

}  // namespace sharectl
