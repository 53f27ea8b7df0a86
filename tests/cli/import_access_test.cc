// `sharectl import --exports` gives every client the access Linux gives
// it: each exports(5) line is imported, the options are evaluated for a
// set of clients by the daemon's own evaluator (authcache::Evaluate), and
// the answer is compared with what rpc.mountd and nfsd decide, written by
// hand from nfs-utils' rules:
//  - the client's entry is the first match in a fixed order of types
//    (support/include/exportfs.h MCL_*: hosts and single addresses, then
//    networks, then wildcards, then @netgroups, then "*"), and within a type
//    the first in the file (support/export/export.c export_add() appends;
//    lookup_export() keeps the first) -- not the longest prefix;
//  - that entry's options decide everything: ro (the default) or rw per
//    sec= flavor, root_squash (the default) or not, and its own
//    anonuid/anongid (65534 by default) for squashed users;
//  - a flavor the entry does not list gets no access, even if a later
//    entry lists it.
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "authcache/evaluate.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "libshare/import.h"
#include "libshare/options.h"

namespace sharectl {
namespace {

using authcache::Access;
using libshare::SecFlavor;
using ::testing::HasSubstr;

// A client of the test network: an address, its names and its netgroups.
class Host : public authcache::ClientIdentity {
 public:
  Host(std::string_view addr, std::vector<std::string> names,
       std::set<std::string> netgroups)
      : address_(*libshare::IpAddress::Parse(addr)),
        names_(std::move(names)),
        netgroups_(std::move(netgroups)) {}
  const libshare::IpAddress& address() const override { return address_; }
  absl::StatusOr<std::vector<std::string>> Names() override { return names_; }
  absl::StatusOr<bool> InNetgroup(std::string_view netgroup) override {
    return netgroups_.count(std::string(netgroup)) > 0;
  }

 private:
  libshare::IpAddress address_;
  std::vector<std::string> names_;
  std::set<std::string> netgroups_;
};

// The test network.
Host MakeHost(std::string_view which) {
  if (which == "ws3") {  // a lab workstation inside 10.1/16, an engineer
    return Host("10.1.2.3", {"ws3.lab.example.com"}, {"engineers"});
  }
  if (which == "build1") {  // inside 10.1/16, an engineer
    return Host("10.1.9.9", {"build1.example.com"}, {"engineers"});
  }
  if (which == "net2") return Host("10.2.0.5", {}, {});
  if (which == "net3") return Host("10.3.0.5", {}, {});
  if (which == "net5") return Host("10.5.0.1", {}, {});
  if (which == "ws1") {  // a lab workstation outside 10/8
    return Host("192.168.7.7", {"ws1.lab.example.com"}, {});
  }
  if (which == "stranger") {
    return Host("203.0.113.9", {"stranger.example.org"}, {});
  }
  if (which == "v6host") return Host("fe80::1", {}, {});
  if (which == "v6other") return Host("fe80::2", {}, {});
  ADD_FAILURE() << "no host " << which;
  return Host("0.0.0.0", {}, {});
}

struct Linux {
  Access access;
  bool root = false;     // uid 0 keeps root
  int64_t anon = 65534;  // the uid squashed users act as
};

struct Case {
  const char* exports;  // lines for path /x
  const char* client;
  SecFlavor flavor;
  Linux want;
};

constexpr SecFlavor kSys = SecFlavor::kSys;
constexpr SecFlavor kKrb5p = SecFlavor::kKrb5p;
constexpr SecFlavor kKrb5 = SecFlavor::kKrb5;

const Case kCases[] = {
    // The finding: the single host is tried before the network.
    {"/x 10.1.0.0/16(rw) 10.1.2.3(ro)", "ws3", kSys, {Access::kRo}},
    {"/x 10.1.0.0/16(rw) 10.1.2.3(ro)", "build1", kSys, {Access::kRw}},
    {"/x 10.1.0.0/16(rw) 10.1.2.3(ro)", "net2", kSys, {Access::kNone}},
    // A host by name, too; its root_squash holds though the network keeps
    // root.
    {"/x 10.1.0.0/16(rw,no_root_squash) ws3.lab.example.com(ro)",
     "ws3",
     kSys,
     {Access::kRo, false}},
    {"/x 10.1.0.0/16(rw,no_root_squash) ws3.lab.example.com(ro)",
     "build1",
     kSys,
     {Access::kRw, true}},
    // Overlapping networks: the first listed wins, not the longest prefix.
    {"/x 10.0.0.0/8(ro) 10.1.0.0/16(rw)", "ws3", kSys, {Access::kRo}},
    {"/x 10.0.0.0/8(ro) 10.1.0.0/16(rw)", "net5", kSys, {Access::kRo}},
    {"/x 10.1.0.0/16(rw) 10.0.0.0/8(ro)", "ws3", kSys, {Access::kRw}},
    {"/x 10.1.0.0/16(rw) 10.0.0.0/8(ro)", "net5", kSys, {Access::kRo}},
    {"/x 10.0.0.0/255.0.0.0(ro) 10.1.0.0/16(rw,no_root_squash)",
     "build1",
     kSys,
     {Access::kRo, false}},
    // A network is tried before a wildcard, wherever each is written.
    {"/x *.lab.example.com(rw) 10.1.0.0/16(ro)", "ws3", kSys, {Access::kRo}},
    {"/x *.lab.example.com(rw) 10.1.0.0/16(ro)", "ws1", kSys, {Access::kRw}},
    // Wildcard, then netgroup, then "*".
    {"/x *(ro) @engineers(rw) *.lab.example.com(ro,no_root_squash)",
     "ws3",
     kSys,
     {Access::kRo, true}},
    {"/x *(ro) @engineers(rw) *.lab.example.com(ro,no_root_squash)",
     "build1",
     kSys,
     {Access::kRw, false}},
    {"/x *(ro) @engineers(rw) *.lab.example.com(ro,no_root_squash)",
     "ws1",
     kSys,
     {Access::kRo, true}},
    {"/x *(ro) @engineers(rw) *.lab.example.com(ro,no_root_squash)",
     "stranger",
     kSys,
     {Access::kRo, false}},
    // A netgroup narrows "*": bare rw with ro= for the netgroup.
    {"/x @engineers(ro) *(rw)", "build1", kSys, {Access::kRo}},
    {"/x @engineers(ro) *(rw)", "stranger", kSys, {Access::kRw}},
    // A host narrows its netgroup.
    {"/x @engineers(rw) build1.example.com(ro)", "build1", kSys, {Access::kRo}},
    {"/x @engineers(rw) build1.example.com(ro)", "ws3", kSys, {Access::kRw}},
    // A later line for the same path: the host still comes first.
    {"/x 10.0.0.0/8(ro)\n/x 10.1.2.3(rw)", "ws3", kSys, {Access::kRw}},
    {"/x 10.0.0.0/8(ro)\n/x 10.1.2.3(rw)", "net5", kSys, {Access::kRo}},
    // A client named twice: the first entry counts.
    {"/x 10.1.2.3(ro) 10.1.2.3(rw)", "ws3", kSys, {Access::kRo}},
    // No client: "*" with the defaults (ro, root_squash).
    {"/x", "stranger", kSys, {Access::kRo, false}},
    // Default options ("-OPTS") apply to the clients after them.
    {"/x -rw,no_root_squash 10.1.0.0/16 10.1.2.3(ro)",
     "ws3",
     kSys,
     {Access::kRo, true}},
    {"/x -rw,no_root_squash 10.1.0.0/16 10.1.2.3(ro)",
     "build1",
     kSys,
     {Access::kRw, true}},
    // One anonuid for every squashing client: anon=.
    {"/x 10.2.0.0/16(rw,anonuid=1000,anongid=1000) "
     "10.3.0.0/16(ro,anonuid=1000,anongid=1000)",
     "net3",
     kSys,
     {Access::kRo, false, 1000}},
    // The anonuid of a client that keeps root does not matter.
    {"/x 10.2.0.0/16(rw,anonuid=1000,anongid=1000) 10.3.0.0/16(rw,"
     "no_root_squash)",
     "net2",
     kSys,
     {Access::kRw, false, 1000}},
    {"/x 10.2.0.0/16(rw,anonuid=1000,anongid=1000) 10.3.0.0/16(rw,"
     "no_root_squash)",
     "net3",
     kSys,
     {Access::kRw, true}},
    {"/x *(ro,anonuid=0,anongid=0) 10.1.0.0/16(rw,no_root_squash)",
     "ws3",
     kSys,
     {Access::kRw, true}},
    {"/x *(ro,anonuid=0,anongid=0) 10.1.0.0/16(rw,no_root_squash)",
     "stranger",
     kSys,
     {Access::kRo, false, 0}},
    // sec=: the deciding entry's flavors only.
    {"/x 10.1.0.0/16(sec=krb5p,rw) *(ro)", "ws3", kSys, {Access::kNone}},
    {"/x 10.1.0.0/16(sec=krb5p,rw) *(ro)", "ws3", kKrb5p, {Access::kRw}},
    {"/x 10.1.0.0/16(sec=krb5p,rw) *(ro)", "stranger", kSys, {Access::kRo}},
    {"/x 10.1.0.0/16(sec=krb5p,rw) *(ro)", "stranger", kKrb5p, {Access::kNone}},
    // Flags after a sec= apply to its flavors; a flavor starts from the
    // flags of the moment it is named.
    {"/x *(sec=krb5p,rw,sec=sys,ro)", "stranger", kKrb5p, {Access::kRw}},
    {"/x *(sec=krb5p,rw,sec=sys,ro)", "stranger", kSys, {Access::kRo}},
    {"/x *(sec=sys,rw,sec=krb5)", "stranger", kKrb5, {Access::kRw}},
    {"/x *(sec=sys,no_root_squash,rw,sec=krb5,ro,root_squash)",
     "stranger",
     kSys,
     {Access::kRw, true}},
    {"/x *(sec=sys,no_root_squash,rw,sec=krb5,ro,root_squash)",
     "stranger",
     kKrb5,
     {Access::kRo}},
    // IPv6: the host before the network.
    {"/x fe80::/10(rw) fe80::1(ro)", "v6host", kSys, {Access::kRo}},
    {"/x fe80::/10(rw) fe80::1(ro)", "v6other", kSys, {Access::kRw}},
};

TEST(ImportAccessTest, ImportedOptionsGiveEveryClientWhatLinuxGivesIt) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(absl::StrCat("exports \"", c.exports, "\", client ", c.client,
                              ", sec=", std::string(SecFlavorName(c.flavor))));
    libshare::ImportPlan plan =
        libshare::ImportExports({{"exports", c.exports}}, "g");
    ASSERT_TRUE(plan.problems.empty())
        << plan.problems[0].where << ": " << plan.problems[0].message;
    ASSERT_EQ(plan.ops.size(), 1u);
    absl::StatusOr<libshare::ShareOptions> opts =
        libshare::ParseOptions(plan.ops[0].options);
    ASSERT_TRUE(opts.ok()) << plan.ops[0].options << ": " << opts.status();
    SCOPED_TRACE(
        absl::StrCat("imported as \"", plan.ops[0].options.str(), "\""));
    Host host = MakeHost(c.client);
    authcache::Decision d = authcache::Evaluate(*opts, host, c.flavor, 0);
    EXPECT_EQ(authcache::AccessName(d.access),
              authcache::AccessName(c.want.access))
        << d.reason;
    if (c.want.access == Access::kNone) continue;
    if (c.flavor == kSys) {
      EXPECT_EQ(d.root, c.want.root) << d.reason;
    }
    if (!c.want.root) {
      EXPECT_EQ(opts->anon.value_or(65534), c.want.anon);
    }
  }
}

// Lines sharemgr cannot say exactly, and would say more generously if the
// difference were dropped: the import stops, naming the line and why.
// (anonuid alone: Linux keeps anongid=65534, sharemgr's anon= would make the
// group 1000 too.)
struct Refusal {
  const char* exports;
  const char* message;
};

const Refusal kRefusals[] = {
    {"/x 10.2.0.0/16(rw,anonuid=1000) 10.3.0.0/16(rw)",
     "exports:1: anonuid=1000 applies to 10.2.0.0/16 only (10.3.0.0/16 has "
     "anonuid=65534,anongid=65534); sharemgr's anon= is per share: refusing "
     "(split the share or use one anonuid)"},
    {"/x 10.1.0.0/16(rw)\n/x *(ro,anonuid=0)",
     "exports:2: anonuid=0 applies to * only"},
    {"/x *(ro,anonuid=1000)", "anonuid=1000,anongid=65534 for *"},
    {"/x *(ro,all_squash)", "all_squash for \"*\""},
    {"/x 10.1.0.0/16(rw) @engineers(ro,all_squash)", "all_squash"},
    {"/x *(rw,no_root_squash) @engineers(rw)",
     "tries netgroups after \"*\" in root="},
    {"/x node?.lab(ro) *(rw)", "fall through to \"*\""},
    {"/x *(rw,mp=/y)", "sharemgr's mountpoint checks the share's own path"},
    {"/x *(rw,xprtsec=mtls)", "without TLS: refusing"},
    {"/x *(sec=lkey,rw)", "unknown security flavor \"lkey\""},
};

TEST(ImportAccessTest, LinesThatWouldGrantMoreAreRefused) {
  for (const Refusal& r : kRefusals) {
    SCOPED_TRACE(r.exports);
    libshare::ImportPlan plan =
        libshare::ImportExports({{"exports", r.exports}}, "g");
    std::string all;
    bool stops = false;
    for (const libshare::ImportProblem& p : plan.problems) {
      absl::StrAppend(&all, p.where, ": ", p.message, "\n");
      stops |= !p.unsupported;
    }
    // sharectl applies nothing when a problem stops the import.
    EXPECT_TRUE(stops) << all;
    EXPECT_THAT(all, HasSubstr(r.message));
  }
}

// Random exports lines over the test network, each compared with a model
// of rpc.mountd written from the rules above (type order, file order,
// first match, the entry's own flags and ids). Lines the import refuses
// are skipped, but most must be accepted.
struct Spec {
  const char* text;
  int type;  // rpc.mountd's order: 0 host, 1 network, 2 wildcard, 3
             // netgroup, 4 anyone
  bool (*matches)(const char* host);
};

bool In(const char* host, std::initializer_list<const char*> hosts) {
  for (const char* h : hosts) {
    if (std::string_view(h) == host) return true;
  }
  return false;
}

const Spec kSpecs[] = {
    {"10.1.2.3", 0, [](const char* h) { return In(h, {"ws3"}); }},
    {"build1.example.com", 0, [](const char* h) { return In(h, {"build1"}); }},
    {"10.1.0.0/16", 1,
     [](const char* h) {
       return In(h, {"ws3", "build1"});
     }},
    {"10.0.0.0/8", 1,
     [](const char* h) {
       return In(h, {"ws3", "build1", "net2", "net3", "net5"});
     }},
    {"10.2.0.0/255.255.0.0", 1, [](const char* h) { return In(h, {"net2"}); }},
    {"192.168.0.0/16", 1, [](const char* h) { return In(h, {"ws1"}); }},
    {"*.lab.example.com", 2,
     [](const char* h) {
       return In(h, {"ws3", "ws1"});
     }},
    {"@engineers", 3,
     [](const char* h) {
       return In(h, {"ws3", "build1"});
     }},
    {"*", 4, [](const char*) { return true; }},
};

const char* const kHosts[] = {"ws3",  "build1", "net2",    "net3",
                              "net5", "ws1",    "stranger"};

struct ModelFlavor {
  SecFlavor flavor;
  bool rw;
  bool root;  // no_root_squash (sys only)
};

struct ModelClient {
  const Spec* spec;
  std::vector<ModelFlavor> flavors;
  int64_t anon;  // anonuid = anongid
};

TEST(ImportAccessTest, RandomLinesGiveWhatTheRpcMountdModelGives) {
  std::mt19937 rng(20261201);
  const auto pick = [&](int n) {
    return std::uniform_int_distribution<int>(0, n - 1)(rng);
  };
  int accepted = 0, decisions = 0;
  constexpr int kLines = 3000;
  for (int round = 0; round < kLines; ++round) {
    std::vector<ModelClient> clients;
    std::string line = "/x";
    const int n = 1 + pick(4);
    for (int i = 0; i < n; ++i) {
      ModelClient c;
      c.spec = &kSpecs[pick(std::size(kSpecs))];
      const int64_t anons[] = {65534, 65534, 1000, 0};
      c.anon = anons[pick(4)];
      std::vector<std::string> opts;
      const int which = pick(3);  // sys, krb5, both
      if (which != 1) c.flavors.push_back({kSys, pick(2) == 1, pick(3) == 0});
      if (which != 0) c.flavors.push_back({kKrb5, pick(2) == 1, false});
      if (which == 0 && pick(2) == 0) {
        opts.push_back(c.flavors[0].rw ? "rw" : "ro");
        if (c.flavors[0].root) opts.push_back("no_root_squash");
      } else {
        for (const ModelFlavor& f : c.flavors) {
          opts.push_back(
              absl::StrCat("sec=", f.flavor == kSys ? "sys" : "krb5"));
          opts.push_back(f.rw ? "rw" : "ro");
          opts.push_back(f.root ? "no_root_squash" : "root_squash");
        }
      }
      if (c.anon != 65534) {
        opts.push_back(absl::StrCat("anonuid=", c.anon, ",anongid=", c.anon));
      }
      absl::StrAppend(&line, " ", c.spec->text, "(", absl::StrJoin(opts, ","),
                      ")");
      clients.push_back(std::move(c));
    }
    libshare::ImportPlan plan =
        libshare::ImportExports({{"exports", line}}, "g");
    bool stops = false;
    for (const libshare::ImportProblem& p : plan.problems)
      stops |= !p.unsupported;
    if (stops) continue;
    ASSERT_TRUE(plan.problems.empty()) << line;
    ASSERT_EQ(plan.ops.size(), 1u) << line;
    absl::StatusOr<libshare::ShareOptions> opts =
        libshare::ParseOptions(plan.ops[0].options);
    ASSERT_TRUE(opts.ok()) << line << " -> " << plan.ops[0].options;
    ++accepted;
    // rpc.mountd's order; a client named twice keeps its first entry.
    std::vector<const ModelClient*> order;
    for (int type = 0; type <= 4; ++type) {
      for (const ModelClient& c : clients) {
        if (c.spec->type != type) continue;
        bool dup = false;
        for (const ModelClient* o : order) dup |= o->spec == c.spec;
        if (!dup) order.push_back(&c);
      }
    }
    for (const char* h : kHosts) {
      const ModelClient* d = nullptr;
      for (const ModelClient* c : order) {
        if (c->spec->matches(h)) {
          d = c;
          break;
        }
      }
      for (SecFlavor f : {kSys, kKrb5}) {
        const ModelFlavor* mf = nullptr;
        if (d != nullptr) {
          for (const ModelFlavor& x : d->flavors) {
            if (x.flavor == f) mf = &x;
          }
        }
        Host host = MakeHost(h);
        authcache::Decision got = authcache::Evaluate(*opts, host, f, 0);
        SCOPED_TRACE(absl::StrCat(line, " -> \"", plan.ops[0].options.str(),
                                  "\", client ", h,
                                  ", sec=", std::string(SecFlavorName(f))));
        ++decisions;
        if (mf == nullptr) {
          ASSERT_EQ(got.access, Access::kNone) << got.reason;
          continue;
        }
        ASSERT_EQ(got.access, mf->rw ? Access::kRw : Access::kRo) << got.reason;
        const bool root = f == kSys && mf->root;
        if (f == kSys) {
          ASSERT_EQ(got.root, root) << got.reason;
        }
        if (!root) {
          ASSERT_EQ(opts->anon.value_or(65534), d->anon);
        }
      }
    }
  }
  EXPECT_GT(accepted, kLines / 3);
  EXPECT_GT(decisions, 10000);
}

}  // namespace
}  // namespace sharectl
