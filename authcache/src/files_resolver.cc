// The files resolver: a hosts(5) file and a netgroup(5) file, held in
// memory and swapped whole on Reload(), so lookups never see half a file.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "authcache/resolver.h"

namespace authcache {
namespace {

using libshare::IpAddress;

std::string AddressKey(const IpAddress& a) {
  return std::string(a.bytes.begin(), a.bytes.end());
}

struct Netgroup {
  // Host fields of the triples: nullopt is an empty field (any host), ""
  // is "-" (no valid host).
  std::vector<std::optional<std::string>> hosts;
  std::vector<std::string> members;  // nested netgroup names
};

struct FilesData {
  absl::flat_hash_map<std::string, std::vector<std::string>> names_by_address;
  absl::flat_hash_map<std::string, std::vector<IpAddress>> addresses_by_name;
  absl::flat_hash_map<std::string, Netgroup> netgroups;
};

absl::StatusOr<std::vector<std::string>> ReadLines(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    const int e = errno;
    return absl::NotFoundError(absl::StrCat("cannot read \"", path, "\": ",
                                            e != 0 ? std::strerror(e)
                                                   : "cannot open"));
  }
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  if (in.bad()) {
    return absl::DataLossError(absl::StrCat("error reading \"", path, "\""));
  }
  return lines;
}

absl::string_view StripComment(absl::string_view line) {
  size_t hash = line.find('#');
  if (hash != absl::string_view::npos) line = line.substr(0, hash);
  return absl::StripAsciiWhitespace(line);
}

absl::Status ParseHosts(const std::string& path, FilesData& data) {
  absl::StatusOr<std::vector<std::string>> lines = ReadLines(path);
  if (!lines.ok()) return lines.status();
  for (size_t i = 0; i < lines->size(); ++i) {
    absl::string_view line = StripComment((*lines)[i]);
    if (line.empty()) continue;
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    std::optional<IpAddress> addr =
        IpAddress::Parse(std::string_view(fields[0].data(), fields[0].size()));
    if (!addr.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ":", i + 1, ": \"", fields[0], "\" is not an address"));
    }
    if (fields.size() < 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ":", i + 1, ": no host name after \"", fields[0], "\""));
    }
    std::vector<std::string>& names = data.names_by_address[AddressKey(*addr)];
    for (size_t f = 1; f < fields.size(); ++f) {
      std::string name = absl::AsciiStrToLower(fields[f]);
      bool seen = false;
      for (const std::string& n : names) seen = seen || n == name;
      if (!seen) names.push_back(name);
      std::vector<IpAddress>& addrs = data.addresses_by_name[name];
      bool have = false;
      for (const IpAddress& a : addrs) have = have || a == *addr;
      if (!have) addrs.push_back(*addr);
    }
  }
  return absl::OkStatus();
}

absl::Status ParseNetgroups(const std::string& path, FilesData& data) {
  absl::StatusOr<std::vector<std::string>> lines = ReadLines(path);
  if (!lines.ok()) return lines.status();
  size_t i = 0;
  while (i < lines->size()) {
    const size_t first_line = i + 1;
    // A line ending in "\" continues on the next.
    std::string joined;
    while (i < lines->size()) {
      absl::string_view l = StripComment((*lines)[i]);
      ++i;
      if (absl::ConsumeSuffix(&l, "\\")) {
        absl::StrAppend(&joined, l, " ");
        continue;
      }
      absl::StrAppend(&joined, l);
      break;
    }
    absl::string_view rest = absl::StripAsciiWhitespace(joined);
    if (rest.empty()) continue;
    auto error = [&](absl::string_view what) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", first_line, ": ", what));
    };
    size_t sp = rest.find_first_of(" \t");
    std::string name(rest.substr(0, sp));
    if (name.find('(') != std::string::npos) {
      return error("a line must start with a netgroup name");
    }
    rest = sp == absl::string_view::npos ? "" : rest.substr(sp);
    Netgroup& group = data.netgroups[name];
    while (true) {
      rest = absl::StripLeadingAsciiWhitespace(rest);
      if (rest.empty()) break;
      if (rest[0] == '(') {
        size_t close = rest.find(')');
        if (close == absl::string_view::npos) {
          return error(
              absl::StrCat("unterminated triple in netgroup \"", name, "\""));
        }
        std::vector<absl::string_view> parts =
            absl::StrSplit(rest.substr(1, close - 1), ',');
        if (parts.size() != 3) {
          return error(absl::StrCat("triple \"", rest.substr(0, close + 1),
                                    "\" needs (host,user,domain)"));
        }
        absl::string_view host = absl::StripAsciiWhitespace(parts[0]);
        if (host.empty()) {
          group.hosts.push_back(std::nullopt);
        } else if (host == "-") {
          group.hosts.push_back(std::string());
        } else {
          group.hosts.push_back(absl::AsciiStrToLower(host));
        }
        rest = rest.substr(close + 1);
      } else {
        size_t end = rest.find_first_of(" \t(");
        group.members.emplace_back(rest.substr(0, end));
        rest = end == absl::string_view::npos ? "" : rest.substr(end);
      }
    }
  }
  return absl::OkStatus();
}

class FilesResolver : public Resolver {
 public:
  FilesResolver(std::string hosts_path, std::string netgroup_path)
      : hosts_path_(std::move(hosts_path)),
        netgroup_path_(std::move(netgroup_path)) {}

  absl::Status Reload() override {
    auto data = std::make_shared<FilesData>();
    if (!hosts_path_.empty()) {
      absl::Status s = ParseHosts(hosts_path_, *data);
      if (!s.ok()) return s;
    }
    if (!netgroup_path_.empty()) {
      absl::Status s = ParseNetgroups(netgroup_path_, *data);
      if (!s.ok()) return s;
    }
    absl::MutexLock lock(&mu_);
    data_ = std::move(data);
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<std::string>> NamesOf(
      const IpAddress& address) override {
    std::shared_ptr<const FilesData> d = Data();
    auto it = d->names_by_address.find(AddressKey(address));
    if (it == d->names_by_address.end()) return std::vector<std::string>{};
    return it->second;
  }

  absl::StatusOr<std::vector<IpAddress>> AddressesOf(
      std::string_view name) override {
    std::shared_ptr<const FilesData> d = Data();
    auto it = d->addresses_by_name.find(
        absl::AsciiStrToLower(absl::string_view(name.data(), name.size())));
    if (it == d->addresses_by_name.end()) return std::vector<IpAddress>{};
    return it->second;
  }

  absl::StatusOr<bool> InNetgroup(std::string_view netgroup,
                                  std::string_view host) override {
    std::shared_ptr<const FilesData> d = Data();
    std::string h =
        absl::AsciiStrToLower(absl::string_view(host.data(), host.size()));
    // Depth-first over nested groups; `visited` breaks cycles.
    absl::flat_hash_set<std::string> visited;
    std::vector<std::string> todo{std::string(netgroup)};
    while (!todo.empty()) {
      std::string g = std::move(todo.back());
      todo.pop_back();
      if (!visited.insert(g).second) continue;
      auto it = d->netgroups.find(g);
      if (it == d->netgroups.end()) continue;
      for (const std::optional<std::string>& th : it->second.hosts) {
        if (!th.has_value() || (!h.empty() && *th == h)) return true;
      }
      for (const std::string& m : it->second.members) todo.push_back(m);
    }
    return false;
  }

 private:
  std::shared_ptr<const FilesData> Data() {
    absl::MutexLock lock(&mu_);
    return data_;
  }

  const std::string hosts_path_;
  const std::string netgroup_path_;
  absl::Mutex mu_;
  std::shared_ptr<const FilesData> data_ ABSL_GUARDED_BY(mu_) =
      std::make_shared<FilesData>();
};

}  // namespace

absl::StatusOr<std::unique_ptr<Resolver>> MakeFilesResolver(
    const std::string& hosts_path, const std::string& netgroup_path) {
  auto r = std::make_unique<FilesResolver>(hosts_path, netgroup_path);
  absl::Status s = r->Reload();
  if (!s.ok()) return s;
  return std::unique_ptr<Resolver>(std::move(r));
}

}  // namespace authcache
