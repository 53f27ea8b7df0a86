#include "mgmt_audit.h"

#include <pwd.h>

#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "log.h"

namespace sharemgrd {

using libshare::Operation;

std::string Caller(const CallContext& ctx) {
  if (!ctx.has_peer_cred) return "unknown caller";
  std::string out = absl::StrCat("uid ", ctx.peer_uid);
  std::vector<char> buf(16384);
  passwd pw;
  passwd* found = nullptr;
  if (::getpwuid_r(ctx.peer_uid, &pw, buf.data(), buf.size(), &found) == 0 &&
      found != nullptr) {
    absl::StrAppend(&out, " (", EscapeForLog(found->pw_name, 64), ")");
  }
  absl::StrAppend(&out, " pid ", ctx.peer_pid);
  return out;
}

std::string DescribeOperation(const Operation& op) {
  std::vector<std::string> words = libshare::OperationWords(op);
  std::string out = std::move(words[0]);
  bool value_next = false;  // the word after -o, -d, -r, -s, -p is a value
  for (std::size_t i = 1; i < words.size(); ++i) {
    const std::string& w = words[i];
    const bool takes_value = w == "-o" || w == "-d" || w == "-r" || w == "-s" ||
                             w == "-p" ||
                             w == "--";  // "--" precedes a group named "-..."
    if (!value_next && (takes_value || w == "-f")) {
      absl::StrAppend(&out, " ", w);
      value_next = takes_value;
      continue;
    }
    value_next = false;
    absl::StrAppend(&out, " \"",
                    absl::StrReplaceAll(EscapeForLog(w), {{"\"", "\\\""}}),
                    "\"");
  }
  return out;
}

std::string CountOperations(const libshare::Batch& batch) {
  std::vector<std::size_t> counts;
  for (const Operation& op : batch.ops) {
    auto t = static_cast<std::size_t>(op.type);
    if (counts.size() <= t) counts.resize(t + 1);
    ++counts[t];
  }
  std::vector<std::string> parts;
  for (std::size_t t = 0; t < counts.size(); ++t) {
    if (counts[t] == 0) continue;
    std::string_view name =
        libshare::OperationName(static_cast<Operation::Type>(t));
    parts.push_back(absl::StrCat(absl::string_view(name.data(), name.size()),
                                 " ", counts[t]));
  }
  return absl::StrJoin(parts, ", ");
}

}  // namespace sharemgrd
