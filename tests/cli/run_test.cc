// sharectl's runner against a fake client: what it sends and what it
// prints for the answers a test chooses. The real daemon is exercised by
// the integration tests.
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sharectl.h"

namespace sharectl {
namespace {

using libshare::Batch;
using libshare::BatchResult;
using libshare::Operation;
using ::testing::HasSubstr;
using ::testing::Not;

struct FakeDaemon {
  std::vector<Batch> batches;
  std::vector<libshare::OperationError> errors;  // answer to Apply
  std::vector<libshare::GroupInfo> groups;
  std::vector<libshare::ShareInfo> shares;
  std::string connected_to;  // the socket of the last connection
};

class FakeClient : public libshare::Client {
 public:
  explicit FakeClient(FakeDaemon* d) : d_(d) {}
  absl::StatusOr<BatchResult> Apply(const Batch& batch) override {
    d_->batches.push_back(batch);
    BatchResult r;
    r.errors = d_->errors;
    if (r.errors.empty()) r.applied = batch.ops.size();
    return r;
  }
  absl::StatusOr<std::vector<libshare::GroupInfo>> ListGroups() override {
    return d_->groups;
  }
  absl::StatusOr<std::vector<libshare::ShareInfo>> ListShares(
      const std::vector<std::string>&) override {
    return d_->shares;
  }
  absl::StatusOr<std::vector<libshare::SharetabEntry>> Sharetab() override {
    return std::vector<libshare::SharetabEntry>{};
  }
  absl::StatusOr<libshare::CheckResult> Check(const std::string&,
                                              const std::string&) override {
    return libshare::CheckResult{};
  }
  absl::StatusOr<libshare::DaemonStats> Stats() override {
    return libshare::DaemonStats{};
  }
  absl::Status FlushCache() override { return absl::OkStatus(); }

 private:
  FakeDaemon* d_;
};

class RunTest : public ::testing::Test {
 protected:
  int Run(std::vector<std::string> args, const std::string& input = "") {
    out_.str("");
    err_.str("");
    in_.str(input);
    in_.clear();
    Environment env;
    env.out = &out_;
    env.err = &err_;
    env.in = &in_;
    env.interactive = interactive_;
    env.connect = [this](const std::string& socket)
        -> absl::StatusOr<std::unique_ptr<libshare::Client>> {
      if (!reachable_) {
        return absl::UnavailableError("connect " + socket + ": refused");
      }
      daemon_.connected_to = socket;
      return std::make_unique<FakeClient>(&daemon_);
    };
    return sharectl::Run(args, env);
  }

  FakeDaemon daemon_;
  bool reachable_ = true;
  bool interactive_ = false;
  std::ostringstream out_, err_;
  std::istringstream in_;
};

TEST_F(RunTest, SingleAddShareIsABatchOfOne) {
  EXPECT_EQ(Run({"add-share", "-s", "/a", "g"}), kExitOk);
  ASSERT_EQ(daemon_.batches.size(), 1u);
  ASSERT_EQ(daemon_.batches[0].ops.size(), 1u);
  EXPECT_EQ(daemon_.batches[0].ops[0].type, Operation::Type::kAddShare);
}

TEST_F(RunTest, RefusedOperationNamesCommandAndCulprit) {
  daemon_.errors = {{0, "/export/a: path is inside share /export"}};
  EXPECT_EQ(Run({"add-share", "-s", "/export/a", "g"}), kExitRefused);
  EXPECT_EQ(err_.str(),
            "sharectl: add-share: /export/a: path is inside share /export\n");
}

TEST_F(RunTest, BatchMapsDaemonErrorsBackToLineNumbers) {
  daemon_.errors = {{2, "/b: no such directory"}};
  const std::string text =
      "create g\n# comment\n\nadd-share -s /a g\nadd-share \\\n -s /b g\n";
  EXPECT_EQ(Run({"batch", "-"}, text), kExitRefused);
  EXPECT_EQ(err_.str(), "5: add-share: /b: no such directory\n");
  ASSERT_EQ(daemon_.batches.size(), 1u);
  EXPECT_EQ(daemon_.batches[0].ops.size(), 3u);
}

TEST_F(RunTest, BatchWithABadLineSendsNothingAndReportsEveryBadLine) {
  const std::string text =
      "create g\nadd-share -s /a\nlist\nadd-share -d 'x -s /b g\ncreate h\n";
  EXPECT_EQ(Run({"batch", "-"}, text), kExitRefused);
  EXPECT_TRUE(daemon_.batches.empty());
  EXPECT_THAT(err_.str(), HasSubstr("2: add-share: "));
  EXPECT_THAT(err_.str(), HasSubstr("3: list: not a changing command"));
  EXPECT_THAT(err_.str(), HasSubstr("4: add-share: unterminated"));
  EXPECT_THAT(err_.str(), Not(HasSubstr("5:")));
}

TEST_F(RunTest, EnableAllUsesTheDaemonsGroupsAndThoseCreatedBefore) {
  daemon_.groups = {{"old", false, "", 0}};
  EXPECT_EQ(Run({"batch", "-"}, "create new\nenable -a\n"), kExitOk);
  ASSERT_EQ(daemon_.batches.size(), 1u);
  const auto& ops = daemon_.batches[0].ops;
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[1].group, "old");
  EXPECT_EQ(ops[2].group, "new");
  EXPECT_EQ(ops[2].type, Operation::Type::kEnableGroup);
}

std::string ManyAdds(int n) {
  std::string text;
  for (int i = 0; i < n; ++i) {
    text += "add-share -s /export/home/u" + std::to_string(i) + " homes\n";
  }
  return text;
}

TEST_F(RunTest, LargeBatchOnATerminalShowsProgressAndSummary) {
  interactive_ = true;
  EXPECT_EQ(Run({"batch", "-"}, ManyAdds(2001)), kExitOk);
  EXPECT_THAT(err_.str(), HasSubstr("parsing"));
  EXPECT_THAT(err_.str(), HasSubstr("sending 2001 operations"));
  EXPECT_THAT(err_.str(), HasSubstr("committed"));
  EXPECT_THAT(err_.str(), HasSubstr("2001 operations applied in "));
}

TEST_F(RunTest, LargeBatchOffATerminalIsSilent) {
  EXPECT_EQ(Run({"batch", "-"}, ManyAdds(2001)), kExitOk);
  EXPECT_EQ(err_.str(), "");
  EXPECT_EQ(out_.str(), "");
}

TEST_F(RunTest, SmallBatchOnATerminalIsSilent) {
  interactive_ = true;
  EXPECT_EQ(Run({"batch", "-"}, ManyAdds(10)), kExitOk);
  EXPECT_EQ(err_.str(), "");
}

TEST_F(RunTest, UnreachableDaemonExitsThreeAndNamesTheSocket) {
  reachable_ = false;
  EXPECT_EQ(Run({"--socket", "/tmp/nowhere.sock", "list"}), kExitUnreachable);
  EXPECT_THAT(err_.str(), HasSubstr("/tmp/nowhere.sock"));
}

TEST_F(RunTest, UsageErrorsExitTwo) {
  EXPECT_EQ(Run({}), kExitUsage);
  EXPECT_EQ(Run({"nosuch"}), kExitUsage);
  EXPECT_EQ(Run({"--bogus", "list"}), kExitUsage);
  EXPECT_EQ(Run({"check", "onlyone"}), kExitUsage);
  EXPECT_EQ(Run({"cache", "empty"}), kExitUsage);
  EXPECT_EQ(Run({"import", "-g", "x"}), kExitUsage);
  EXPECT_TRUE(daemon_.batches.empty());
}

TEST_F(RunTest, CommandHelpPrintsItsSynopsis) {
  EXPECT_EQ(Run({"add-share", "--help"}), kExitOk);
  EXPECT_THAT(out_.str(), HasSubstr("add-share [-o OPTS]"));
}

TEST_F(RunTest, JsonAfterTheCommandIsAccepted) {
  EXPECT_EQ(Run({"check", "--json", "h", "/a"}), kExitOk);
  EXPECT_THAT(out_.str(), HasSubstr("\"access\""));
}

TEST_F(RunTest, SocketAfterTheCommandIsAccepted) {
  EXPECT_EQ(Run({"list", "--socket", "/tmp/a.sock"}), kExitOk);
  EXPECT_EQ(daemon_.connected_to, "/tmp/a.sock");
  EXPECT_EQ(Run({"add-share", "-s", "/a", "--socket=/tmp/b.sock", "g"}),
            kExitOk);
  EXPECT_EQ(daemon_.connected_to, "/tmp/b.sock");
  ASSERT_EQ(daemon_.batches.size(), 1u);
  EXPECT_EQ(daemon_.batches[0].ops[0].group, "g");
}

TEST_F(RunTest, GlobalOptionsAfterDoubleDashAreArguments) {
  EXPECT_EQ(Run({"show", "--", "--json"}), kExitRefused);
  EXPECT_THAT(err_.str(), HasSubstr("--json: no such group"));
  EXPECT_EQ(out_.str(), "");
}

TEST_F(RunTest, RemoveSharePathWithoutDashSIsAUsageError) {
  EXPECT_EQ(Run({"remove-share", "/export/a"}), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("give the path \"/export/a\" with -s"));
  EXPECT_TRUE(daemon_.batches.empty());
}

TEST_F(RunTest, MistypedCommandGetsASuggestion) {
  EXPECT_EQ(Run({"add-shar", "-s", "/a", "g"}), kExitUsage);
  EXPECT_EQ(err_.str(),
            "sharectl: unknown command \"add-shar\"; did you mean "
            "\"add-share\"?\n");
  EXPECT_EQ(Run({"add-share", "-S", "/a", "g"}), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("did you mean \"-s\"?"));
}

TEST_F(RunTest, UsageErrorWithJsonPrintsAnErrorDocument) {
  EXPECT_EQ(Run({"--json", "add-share", "g"}), kExitUsage);
  EXPECT_THAT(out_.str(), HasSubstr("{\"error\":{\"kind\":\"usage\","
                                    "\"command\":\"add-share\",\"message\":"));
  EXPECT_EQ(Run({"nosuch", "--json"}), kExitUsage);
  EXPECT_THAT(out_.str(),
              HasSubstr("{\"error\":{\"kind\":\"usage\",\"command\":null,"));
}

TEST_F(RunTest, UnreachableWithJsonPrintsAnErrorDocument) {
  reachable_ = false;
  EXPECT_EQ(Run({"--json", "stats"}), kExitUnreachable);
  EXPECT_THAT(out_.str(), HasSubstr("\"kind\":\"unreachable\""));
}

TEST_F(RunTest, RefusedBatchJsonHasStructuredOriginAndError) {
  daemon_.errors = {{1, "/b: no such directory"}};
  EXPECT_EQ(Run({"--json", "batch", "-"}, "create g\nadd-share -s /b g\n"),
            kExitRefused);
  EXPECT_THAT(out_.str(),
              HasSubstr("\"index\":1,\"origin\":{\"file\":\"-\",\"line\":2},"
                        "\"command\":\"add-share\""));
  EXPECT_THAT(out_.str(), HasSubstr("\"error\":{\"kind\":\"refused\""));
}

TEST_F(RunTest, EmptyBatchWithJsonStillPrintsADocument) {
  EXPECT_EQ(Run({"--json", "batch", "-"}, "# nothing\n\n"), kExitOk);
  EXPECT_THAT(out_.str(), HasSubstr("{\"ok\":true,\"applied\":0,"));
  EXPECT_TRUE(daemon_.batches.empty());
}

TEST_F(RunTest, ShowDashSPrintsOneShareAndNamesTheEnclosingOne) {
  daemon_.groups = {{"homes", true, "", 2}, {"lab", true, "", 0}};
  libshare::ShareInfo a;
  a.path = "/export/home/a";
  a.group = "homes";
  libshare::ShareInfo b = a;
  b.path = "/export/home/b";
  daemon_.shares = {a, b};
  EXPECT_EQ(Run({"show", "-s", "/export/home//b/"}), kExitOk);
  EXPECT_EQ(out_.str(), "homes\n    /export/home/b\n");
  EXPECT_EQ(Run({"show", "-s", "/export/home/a/x"}), kExitRefused);
  EXPECT_THAT(err_.str(), HasSubstr("/export/home/a/x: no such share (it is "
                                    "inside share /export/home/a of group "
                                    "homes)"));
}

}  // namespace
}  // namespace sharectl
