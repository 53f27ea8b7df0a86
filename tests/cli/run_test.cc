// sharectl's runner against a fake client: what it sends and what it
// prints for the answers a test chooses. The real daemon is exercised by
// the integration tests.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <regex>
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
using ::testing::MatchesRegex;
using ::testing::Not;
using ::testing::StartsWith;

struct FakeDaemon {
  std::vector<Batch> batches;
  std::vector<libshare::OperationError> errors;  // answer to Apply
  std::vector<libshare::GroupInfo> groups;
  std::vector<libshare::ShareInfo> shares;
  std::string connected_to;           // the socket of the last connection
  std::vector<std::size_t> prepared;  // PREPARE_BATCH calls, bytes each
  absl::Status prepare_answer;        // their answer
  std::string kernel_mode = "off";    // stats' kernel.mode
  absl::Status apply_answer;          // a failure of the Apply call itself
  libshare::CheckResult check_answer;
  int stats_calls = 0;
};

class FakeClient : public libshare::Client {
 public:
  explicit FakeClient(FakeDaemon* d) : d_(d) {}
  absl::StatusOr<BatchResult> Apply(const Batch& batch) override {
    if (!d_->apply_answer.ok()) return d_->apply_answer;
    d_->batches.push_back(batch);
    BatchResult r;
    r.errors = d_->errors;
    if (r.errors.empty() && !batch.dry_run) r.applied = batch.ops.size();
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
                                              const std::string&,
                                              const std::string&) override {
    return d_->check_answer;
  }
  absl::StatusOr<libshare::DaemonStats> Stats() override {
    ++d_->stats_calls;
    libshare::DaemonStats s;
    s.kernel.mode = d_->kernel_mode;
    return s;
  }
  absl::Status FlushCache() override { return absl::OkStatus(); }
  absl::Status PrepareBatch(std::size_t call_bytes) override {
    d_->prepared.push_back(call_bytes);
    return d_->prepare_answer;
  }

 private:
  FakeDaemon* d_;
};

std::string ManyAdds(int n) {
  std::string text;
  for (int i = 0; i < n; ++i) {
    text += "add-share -s /export/home/u" + std::to_string(i) + " homes\n";
  }
  return text;
}

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
    env.max_input_bytes = max_input_bytes_;
    env.connect = [this](const std::string& socket)
        -> absl::StatusOr<std::unique_ptr<libshare::Client>> {
      if (!reachable_) {
        return absl::UnavailableError("connect " + socket + ": refused");
      }
      if (!socket_allowed_) {
        return absl::PermissionDeniedError("connect " + socket +
                                           ": Permission denied");
      }
      daemon_.connected_to = socket;
      return std::make_unique<FakeClient>(&daemon_);
    };
    return sharectl::Run(args, env);
  }

  FakeDaemon daemon_;
  bool reachable_ = true;
  bool socket_allowed_ = true;
  bool interactive_ = false;
  std::size_t max_input_bytes_ = kMaxInputBytes;
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

TEST_F(RunTest, BatchMapsDaemonErrorsBackToFileAndLine) {
  daemon_.errors = {{2, "/b: no such directory"}};
  const std::string text =
      "create g\n# comment\n\nadd-share -s /a g\nadd-share \\\n -s /b g\n";
  EXPECT_EQ(Run({"batch", "-"}, text), kExitRefused);
  EXPECT_THAT(err_.str(),
              StartsWith("<stdin>:5: add-share: /b: no such directory\n"));
  ASSERT_EQ(daemon_.batches.size(), 1u);
  EXPECT_EQ(daemon_.batches[0].ops.size(), 3u);
  EXPECT_FALSE(daemon_.batches[0].dry_run);
  EXPECT_EQ(daemon_.batches[0].origin, "batch <stdin>");
}

TEST_F(RunTest, BatchWithParseErrorsSendsTheRestAsADryRunAndReportsBothKinds) {
  // Operation 1 of what is sent (line 5's create h) is refused too.
  daemon_.errors = {{1, "group h: refused"}};
  const std::string text =
      "create g\nadd-share -s /a\nlist\nadd-share -x -s /b g\ncreate h\n";
  EXPECT_EQ(Run({"batch", "-"}, text), kExitRefused);
  ASSERT_EQ(daemon_.batches.size(), 1u);
  EXPECT_TRUE(daemon_.batches[0].dry_run);  // nothing may be committed
  EXPECT_EQ(daemon_.batches[0].ops.size(), 2u);
  const std::string err = err_.str();
  const auto l2 = err.find("<stdin>:2: add-share: ");
  const auto l3 = err.find("<stdin>:3: list: not a changing command");
  const auto l4 = err.find("<stdin>:4: add-share: unknown option \"-x\"");
  const auto l5 = err.find("<stdin>:5: create: group h: refused");
  ASSERT_NE(l2, std::string::npos);
  ASSERT_NE(l3, std::string::npos);
  ASSERT_NE(l4, std::string::npos);
  ASSERT_NE(l5, std::string::npos);
  EXPECT_TRUE(l2 < l3 && l3 < l4 && l4 < l5) << err;  // sorted by line
  EXPECT_THAT(err, HasSubstr("5 lines, 4 refused, 4 errors"));
}

TEST_F(RunTest, BatchWithParseErrorsReportsThemWhenTheDaemonIsDown) {
  reachable_ = false;
  EXPECT_EQ(Run({"batch", "-"}, "create g\nlist\n"), kExitRefused);
  EXPECT_THAT(err_.str(), HasSubstr("<stdin>:2: list: "));
}

TEST_F(RunTest, ErrorsOfOneKindAreShownFiveTimesThenCounted) {
  for (std::size_t i = 0; i < 10; ++i) {
    daemon_.errors.push_back({i, "group hmoes does not exist"});
  }
  EXPECT_EQ(Run({"batch", "-"}, ManyAdds(10)), kExitRefused);
  const std::string err = err_.str();
  EXPECT_THAT(err, HasSubstr("<stdin>:5: add-share: group hmoes"));
  EXPECT_THAT(err, Not(HasSubstr("<stdin>:7: add-share")));
  EXPECT_THAT(err, HasSubstr("<stdin>:6: ... and 5 more lines with the same "
                             "error: add-share: group hmoes does not exist; "
                             "--all-errors lists every line\n"));
  EXPECT_THAT(err, HasSubstr("10 lines, 10 refused, 10 errors"));
  EXPECT_EQ(Run({"batch", "--all-errors", "-"}, ManyAdds(10)), kExitRefused);
  EXPECT_THAT(err_.str(), HasSubstr("<stdin>:10: add-share: group hmoes"));
  EXPECT_THAT(err_.str(), Not(HasSubstr("more lines")));
}

TEST_F(RunTest, ACommandWithoutAllErrorsDoesNotOfferIt) {
  for (std::size_t i = 0; i < 8; ++i) {
    daemon_.errors.push_back({i, "group g" + std::to_string(i) + " is busy"});
  }
  EXPECT_EQ(Run({"enable", "a", "b", "c", "d", "e", "f", "g", "h"}),
            kExitRefused);
  EXPECT_THAT(err_.str(), HasSubstr("... and 3 more lines with this kind of "
                                    "error: enable: group GROUP is busy\n"));
}

TEST_F(RunTest, BatchDryRunSendsADryRunAndSaysNothingChanged) {
  EXPECT_EQ(Run({"batch", "-n", "-"}, ManyAdds(3)), kExitOk);
  ASSERT_EQ(daemon_.batches.size(), 1u);
  EXPECT_TRUE(daemon_.batches[0].dry_run);
  EXPECT_THAT(err_.str(), HasSubstr("dry run passed"));
  EXPECT_THAT(err_.str(), HasSubstr("3 operations would apply"));
}

TEST_F(RunTest, DryRunInsideABatchLineIsRefused) {
  EXPECT_EQ(Run({"batch", "-"}, "create -n g\n"), kExitRefused);
  EXPECT_THAT(err_.str(), HasSubstr("<stdin>:1: create: -n applies to the "
                                    "whole batch"));
}

TEST_F(RunTest, EveryChangingCommandTakesDryRun) {
  const std::vector<std::vector<std::string>> commands = {
      {"create", "-n", "g"},
      {"delete", "--dry-run", "g"},
      {"enable", "-n", "g"},
      {"disable", "-n", "g"},
      {"add-share", "-n", "-s", "/a", "g"},
      {"remove-share", "-n", "-s", "/a"},
      {"move-share", "-n", "-s", "/a", "g"},
      {"set", "-n", "-o", "ro", "g"}};
  for (const auto& c : commands) {
    daemon_.batches.clear();
    EXPECT_EQ(Run(c), kExitOk) << c[0] << ": " << err_.str();
    ASSERT_EQ(daemon_.batches.size(), 1u) << c[0];
    EXPECT_TRUE(daemon_.batches[0].dry_run) << c[0];
    EXPECT_EQ(daemon_.batches[0].origin, c[0]);
    EXPECT_THAT(err_.str(), HasSubstr("dry run passed, nothing changed"));
  }
}

TEST_F(RunTest, RefusedDryRunExitsOne) {
  daemon_.errors = {{0, "group g does not exist"}};
  EXPECT_EQ(Run({"add-share", "-n", "-s", "/a", "g"}), kExitRefused);
  EXPECT_THAT(err_.str(), HasSubstr("group g does not exist"));
}

TEST_F(RunTest, MistypedGroupGetsTheClosestName) {
  daemon_.groups = {{"homes", true, "", 3}, {"lab", true, "", 0}};
  daemon_.errors = {{0, "group hmoes does not exist"}};
  EXPECT_EQ(Run({"add-share", "-s", "/a", "hmoes"}), kExitRefused);
  EXPECT_THAT(err_.str(),
              HasSubstr("group hmoes does not exist; did you mean \"homes\"?"));
  // Reading commands say it in the same words.
  EXPECT_EQ(Run({"show", "hmoes"}), kExitRefused);
  EXPECT_THAT(err_.str(),
              HasSubstr("group hmoes does not exist; did you mean \"homes\"?"));
  EXPECT_EQ(Run({"show", "zzzzzz"}), kExitRefused);
  EXPECT_THAT(err_.str(), HasSubstr("group zzzzzz does not exist\n"));
}

TEST_F(RunTest, GlobalDryRunIsTheCommandsOwn) {
  EXPECT_EQ(Run({"-n", "create", "g"}), kExitOk);
  ASSERT_EQ(daemon_.batches.size(), 1u);
  EXPECT_TRUE(daemon_.batches[0].dry_run);
  EXPECT_EQ(Run({"--dry-run", "batch", "-"}, "create h\n"), kExitOk);
  ASSERT_EQ(daemon_.batches.size(), 2u);
  EXPECT_TRUE(daemon_.batches[1].dry_run);
  // Before a command that changes nothing: a usage error naming it.
  EXPECT_EQ(Run({"-n", "list"}), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("\"-n\" (dry run) goes with a changing "
                                    "command, batch or import; \"list\""));
  EXPECT_EQ(daemon_.batches.size(), 2u);
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

TEST_F(RunTest, LargeBatchOnATerminalShowsProgressAndSummary) {
  interactive_ = true;
  EXPECT_EQ(Run({"batch", "-"}, ManyAdds(2001)), kExitOk);
  EXPECT_THAT(err_.str(), HasSubstr("parsing"));
  EXPECT_THAT(err_.str(), HasSubstr("sending 2001 operations"));
  EXPECT_THAT(err_.str(), HasSubstr("committed"));
  EXPECT_THAT(err_.str(), HasSubstr("2001 operations applied in "));
}

TEST_F(RunTest, LargeBatchOffATerminalPrintsOnlyItsSummary) {
  EXPECT_EQ(Run({"batch", "-"}, ManyAdds(2001)), kExitOk);
  EXPECT_THAT(err_.str(),
              MatchesRegex("sharectl: batch <stdin>: 2001 operations applied "
                           "in [0-9]+ ms: 2001 lines, 0 refused, generation "
                           "0\n"));
  EXPECT_EQ(out_.str(), "");
}

TEST_F(RunTest, SmallBatchOnATerminalShowsNoProgressButItsSummary) {
  interactive_ = true;
  EXPECT_EQ(Run({"batch", "-"}, ManyAdds(10)), kExitOk);
  EXPECT_THAT(err_.str(), Not(HasSubstr("sending")));
  EXPECT_THAT(err_.str(), HasSubstr("10 operations applied in "));
}

// A batch file of 2 MiB or more is announced (PREPARE_BATCH) before it
// is sent; a small file or standard input is not; what the daemon answers
// the announcement changes nothing of the batch, its output or exit code.
TEST_F(RunTest, BigBatchFileIsAnnouncedAndTheAnswerChangesNothing) {
  const std::string file = ::testing::TempDir() + "/run_test_announced." +
                           std::to_string(::getpid()) + ".batch";
  // 4,000 adds and comments: over the 2 MiB that are announced.
  std::string text = ManyAdds(4000);
  while (text.size() < (std::size_t{2} << 20)) {
    text += "# " + std::string(1000, 'x') + "\n";
  }
  {
    std::ofstream f(file);
    f << text;
  }
  EXPECT_EQ(Run({"batch", file}), kExitOk);
  EXPECT_EQ(daemon_.prepared,
            (std::vector<std::size_t>{text.size() + text.size() / 2}));
  ASSERT_EQ(daemon_.batches.size(), 1u);
  EXPECT_EQ(daemon_.batches[0].ops.size(), 4000u);
  const std::string said = err_.str();
  for (const absl::Status& answer :
       {absl::UnavailableError("procedure 11 not offered"),
        absl::PermissionDeniedError("permission denied")}) {
    daemon_.prepare_answer = answer;
    EXPECT_EQ(Run({"batch", file}), kExitOk) << answer;
    EXPECT_EQ(std::regex_replace(err_.str(), std::regex("in [0-9]+ ms"), ""),
              std::regex_replace(said, std::regex("in [0-9]+ ms"), ""))
        << answer;
  }
  EXPECT_EQ(daemon_.batches.size(), 3u);
  daemon_.prepared.clear();
  EXPECT_EQ(Run({"batch", "-"}, text), kExitOk);
  EXPECT_TRUE(daemon_.prepared.empty()) << "standard input announced";
  {
    std::ofstream f(file);
    f << text.substr(0, (std::size_t{2} << 20) - 1);  // just under
  }
  EXPECT_EQ(Run({"batch", file}), kExitOk);
  EXPECT_TRUE(daemon_.prepared.empty()) << "a smaller file announced";
  std::remove(file.c_str());
}

TEST_F(RunTest, UnreachableDaemonExitsThreeAndNamesTheSocket) {
  reachable_ = false;
  EXPECT_EQ(Run({"--socket", "/tmp/nowhere.sock", "list"}), kExitUnreachable);
  EXPECT_THAT(err_.str(), HasSubstr("/tmp/nowhere.sock"));
}

TEST_F(RunTest, ASocketTheCallerMayNotUseIsARefusalNotAnOutage) {
  socket_allowed_ = false;
  EXPECT_EQ(Run({"list"}), kExitRefused);
  EXPECT_THAT(err_.str(), HasSubstr("Permission denied"));
  EXPECT_EQ(Run({"--json", "list"}), kExitRefused);
  EXPECT_THAT(out_.str(), HasSubstr("\"permission\""));
}

TEST_F(RunTest, AnOptionGivenTwiceIsAUsageErrorAndNothingIsSent) {
  EXPECT_EQ(Run({"add-share", "-s", "/a", "-s", "/b", "g"}), kExitUsage);
  EXPECT_THAT(err_.str(),
              HasSubstr("option \"-s\" given twice (\"/a\" and \"/b\")"));
  EXPECT_EQ(Run({"create", "-o", "ro", "-o", "rw", "g"}), kExitUsage);
  EXPECT_EQ(Run({"batch", "-"}, "create -o ro -o rw g\n"), kExitRefused);
  EXPECT_THAT(err_.str(), HasSubstr("<stdin>:1: create: option \"-o\" given"));
  EXPECT_EQ(Run({"--socket", "/a", "--socket=/b", "list"}), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("\"--socket\" given twice"));
  EXPECT_TRUE(daemon_.batches.empty());
  // What is said to be repeatable still is.
  EXPECT_NE(Run({"show", "-s", "/a", "-s", "/b"}), kExitUsage);
}

TEST_F(RunTest, ControlBytesTheUserGaveAreEscapedInErrors) {
  EXPECT_EQ(Run({"cr\x1b[31meate"}), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("unknown command \"cr\\x1b[31meate\""));
  EXPECT_THAT(err_.str(), Not(HasSubstr("\x1b")));
  EXPECT_EQ(Run({"batch", "-"}, "cr\x1b]0;title\x07" "eate g\n"), kExitRefused);
  EXPECT_THAT(err_.str(), HasSubstr("\\x1b]0;title\\x07"));
  EXPECT_THAT(err_.str(), Not(HasSubstr("\x1b")));
  EXPECT_THAT(err_.str(), Not(HasSubstr("\x07")));
}

TEST_F(RunTest, ALongUnknownWordIsCutShortInItsError) {
  const std::string junk(100000, 'x');
  EXPECT_EQ(Run({"batch", "-"}, junk + " g\n"), kExitRefused);
  EXPECT_LT(err_.str().size(), 1000u) << err_.str().substr(0, 300);
  EXPECT_THAT(err_.str(), HasSubstr("xxx...\""));
}

TEST_F(RunTest, InputLongerThanTheLimitIsRefusedBeforeItIsParsed) {
  max_input_bytes_ = 4096;
  const std::string text = ManyAdds(200);  // about 7 KiB
  ASSERT_GT(text.size(), max_input_bytes_);
  EXPECT_EQ(Run({"batch", "-"}, text), kExitRefused);
  EXPECT_THAT(err_.str(), HasSubstr("standard input: longer than 4096 bytes"));
  EXPECT_TRUE(daemon_.batches.empty());
  const std::string file = ::testing::TempDir() + "/run_test_long.batch";
  {
    std::ofstream f(file);
    f << text;
  }
  EXPECT_EQ(Run({"batch", file}), kExitRefused);
  EXPECT_THAT(err_.str(), HasSubstr(file + ": longer than 4096 bytes"));
  EXPECT_TRUE(daemon_.batches.empty());
  std::remove(file.c_str());
  max_input_bytes_ = 8192;
  EXPECT_EQ(Run({"batch", "-"}, text), kExitOk);
}

TEST_F(RunTest, ANulLineIsReportedBesideTheDaemonsRefusalsOfTheOthers) {
  // Of what is sent, operation 0 (line 2) is refused by the daemon.
  daemon_.errors = {{0, "group nosuch does not exist"}};
  const std::string text = std::string("add-share -d \"a") + '\0' +
                           "b\" -s /a g\nadd-share -s /b nosuch\n";
  EXPECT_EQ(Run({"batch", "-"}, text), kExitRefused);
  ASSERT_EQ(daemon_.batches.size(), 1u);
  EXPECT_TRUE(daemon_.batches[0].dry_run);
  ASSERT_EQ(daemon_.batches[0].ops.size(), 1u);
  EXPECT_EQ(daemon_.batches[0].ops[0].path, "/b");
  EXPECT_THAT(err_.str(),
              HasSubstr("<stdin>:1: add-share: description (-d) contains a "
                        "NUL byte\n<stdin>:2: add-share: group nosuch does "
                        "not exist\n"));
  EXPECT_THAT(err_.str(), HasSubstr("2 lines, 2 refused, 2 errors"));
}

TEST_F(RunTest, MovingAShareIntoAnOpenGroupWarns) {
  libshare::ShareInfo s;
  s.path = "/a";
  s.group = "open";
  s.effective_options = "rw";
  daemon_.shares = {s};
  EXPECT_EQ(Run({"move-share", "-s", "/a", "open"}), kExitOk);
  EXPECT_THAT(err_.str(),
              HasSubstr("move-share: warning: /a: read-write to every client "
                        "(group open's options)"));
  daemon_.shares[0].effective_options = "rw=@10.0.0.0/8";
  EXPECT_EQ(Run({"move-share", "-s", "/a", "open"}), kExitOk);
  EXPECT_THAT(err_.str(), Not(HasSubstr("warning")));
}

TEST_F(RunTest, ImportRefusesAPatternThatMatchesNothingAndABadGroupUpFront) {
  EXPECT_EQ(Run({"import", "--exports", "/nonexistent-sharectl-dir/*.exports"}),
            kExitRefused);
  EXPECT_THAT(err_.str(), HasSubstr("no file matches"));
  const std::string file = ::testing::TempDir() + "/run_test.exports";
  {
    std::ofstream f(file);
    f << "/export/a *(rw)\n";
  }
  EXPECT_EQ(Run({"import", "-g", "bad name", "--exports", file}), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("import: -g: group name \"bad name\""));
  EXPECT_EQ(Run({"import", "--exports", file, "--dfstab", file}), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("not both"));
  EXPECT_TRUE(daemon_.batches.empty());
  std::remove(file.c_str());
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

TEST_F(RunTest, HelpIsTheSameAsDashDashHelp) {
  EXPECT_EQ(Run({"--help"}), kExitOk);
  const std::string global = out_.str();
  EXPECT_EQ(Run({"help"}), kExitOk);
  EXPECT_EQ(out_.str(), global);
  EXPECT_THAT(global, HasSubstr("COMMAND --help | help [COMMAND]\n"));
  EXPECT_EQ(Run({"add-share", "--help"}), kExitOk);
  const std::string command = out_.str();
  EXPECT_EQ(Run({"help", "add-share"}), kExitOk);
  EXPECT_EQ(out_.str(), command);
  EXPECT_EQ(Run({"help", "add-shar"}), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("help: unknown command \"add-shar\"; did "
                                    "you mean \"add-share\"?"));
  EXPECT_EQ(Run({"help", "a", "b"}), kExitUsage);
  EXPECT_TRUE(daemon_.batches.empty());
}

TEST_F(RunTest, DryRunDeleteSaysHowManySharesItWouldRemove) {
  daemon_.groups = {{"homes", true, "", 12}, {"empty", true, "", 0}};
  EXPECT_EQ(Run({"delete", "-n", "-f", "homes"}), kExitOk);
  EXPECT_THAT(err_.str(), HasSubstr("dry run passed, nothing changed (1 "
                                    "operation would apply)\n"));
  EXPECT_THAT(err_.str(), HasSubstr("sharectl: delete: dry run: would remove "
                                    "group homes and its 12 shares\n"));
  EXPECT_EQ(Run({"delete", "--dry-run", "empty"}), kExitOk);
  EXPECT_THAT(err_.str(), HasSubstr("would remove group empty, which has no "
                                    "shares\n"));
  EXPECT_EQ(Run({"delete", "-f", "homes"}), kExitOk);  // not a dry run
  EXPECT_THAT(err_.str(), Not(HasSubstr("would remove")));
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
  EXPECT_THAT(err_.str(), HasSubstr("group --json does not exist"));
  EXPECT_EQ(out_.str(), "");
}

TEST_F(RunTest, RemoveSharePathWithoutDashSIsAUsageError) {
  EXPECT_EQ(Run({"remove-share", "/export/a"}), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("give the path \"/export/a\" with -s"));
  EXPECT_EQ(Run({"move-share", "/export/a", "g"}), kExitUsage);
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
  EXPECT_THAT(out_.str(), HasSubstr("\"error\":{\"kind\":\"usage\","
                                    "\"command\":\"add-share\",\"message\":"));
  EXPECT_THAT(out_.str(), StartsWith("{\"ok\":false,"));
  EXPECT_EQ(Run({"nosuch", "--json"}), kExitUsage);
  EXPECT_THAT(out_.str(),
              HasSubstr("{\"error\":{\"kind\":\"usage\",\"command\":null,"));
}

TEST_F(RunTest, RefusedCheckWithJsonHasAnErrorMember) {
  daemon_.check_answer.client = "10.1.2.3";
  daemon_.check_answer.access = "none";
  daemon_.check_answer.reason = "10.1.2.3 matches no entry of rw=@10/8";
  EXPECT_EQ(Run({"--json", "check", "10.1.2.3", "/a"}), kExitRefused);
  EXPECT_THAT(out_.str(), HasSubstr("\"access\":\"none\""));
  EXPECT_THAT(out_.str(),
              HasSubstr("\"error\":{\"kind\":\"refused\",\"command\":"
                        "\"check\",\"message\":\"10.1.2.3 matches no entry "
                        "of rw=@10/8\"}}\n"));
  daemon_.check_answer.access = "ro";
  EXPECT_EQ(Run({"--json", "check", "10.1.2.3", "/a"}), kExitOk);
  EXPECT_THAT(out_.str(), Not(HasSubstr("\"error\"")));
}

TEST_F(RunTest, PermissionRefusedChangeWithJsonKeepsTheChangeDocument) {
  daemon_.apply_answer =
      absl::PermissionDeniedError("uid 1000 may not change shares");
  for (const std::vector<std::string>& c :
       {std::vector<std::string>{"--json", "create", "g"},
        std::vector<std::string>{"--json", "batch", "-"}}) {
    EXPECT_EQ(Run(c, "create g\n"), kExitRefused) << c[1];
    EXPECT_THAT(out_.str(), StartsWith("{\"ok\":false,\"dry_run\":false,"))
        << c[1];
    EXPECT_THAT(out_.str(),
                HasSubstr("\"errors\":[{\"index\":null,\"origin\":null,"
                          "\"command\":\"" +
                          c[1] +
                          "\",\"message\":\"uid 1000 may not change "
                          "shares\"}]"))
        << c[1];
    EXPECT_THAT(out_.str(), HasSubstr("\"error\":{\"kind\":\"permission\","
                                      "\"command\":\"" +
                                      c[1] + "\""))
        << c[1];
    EXPECT_EQ(err_.str(),
              "sharectl: " + c[1] + ": uid 1000 may not change shares\n");
  }
  // A socket the caller may not open: the same shape, one document.
  daemon_.apply_answer = absl::OkStatus();
  socket_allowed_ = false;
  EXPECT_EQ(Run({"--json", "delete", "-n", "g"}), kExitRefused);
  EXPECT_THAT(out_.str(), StartsWith("{\"ok\":false,\"dry_run\":true,"));
  EXPECT_THAT(out_.str(), HasSubstr("\"kind\":\"permission\""));
  const std::string out = out_.str();
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
}

TEST_F(RunTest, BatchWithBadLinesAndNoDaemonPrintsOneJsonDocument) {
  reachable_ = false;
  EXPECT_EQ(Run({"--json", "batch", "-"}, "create g\nlist\n"), kExitRefused);
  const std::string out = out_.str();
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  EXPECT_THAT(out, HasSubstr("\"line\":2},\"command\":\"list\""));
}

TEST_F(RunTest, DryRunWithJsonSaysHowManyOperationsWouldApply) {
  EXPECT_EQ(Run({"--json", "batch", "-n", "-"}, ManyAdds(3)), kExitOk);
  EXPECT_THAT(out_.str(), HasSubstr("{\"ok\":true,\"dry_run\":true,"
                                    "\"applied\":0,\"would_apply\":3,"));
  daemon_.errors = {{1, "/export/home/u1: no such directory"}};
  EXPECT_EQ(Run({"--json", "batch", "-n", "-"}, ManyAdds(3)), kExitRefused);
  EXPECT_THAT(out_.str(), HasSubstr("\"would_apply\":0,"));
  daemon_.errors.clear();
  EXPECT_EQ(Run({"--json", "batch", "-"}, ManyAdds(3)), kExitOk);
  EXPECT_THAT(out_.str(), HasSubstr("\"applied\":3,\"would_apply\":null,"));
}

TEST_F(RunTest, ExportfsWithJsonNamesTheCommandInItsError) {
  EXPECT_EQ(Run({"--json", "exportfs", "-v"}), kExitUsage);
  EXPECT_THAT(out_.str(), HasSubstr("{\"error\":{\"kind\":\"usage\","
                                    "\"command\":\"exportfs\","));
  EXPECT_THAT(err_.str(), StartsWith("sharectl: exportfs: --json is not "
                                     "supported"));
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
              HasSubstr("\"index\":1,\"origin\":{\"file\":\"<stdin>\",\"line\":2},"
                        "\"command\":\"add-share\""));
  EXPECT_THAT(out_.str(), HasSubstr("\"error\":{\"kind\":\"refused\""));
}

TEST_F(RunTest, EmptyBatchWithJsonStillPrintsADocument) {
  EXPECT_EQ(Run({"--json", "batch", "-"}, "# nothing\n\n"), kExitOk);
  EXPECT_THAT(out_.str(), HasSubstr("{\"ok\":true,\"dry_run\":false,\"applied\":0,"));
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
  // Named twice, however spelled: listed once.
  EXPECT_EQ(Run({"show", "-s", "/export/home/b", "-s", "/export/home//b/"}),
            kExitOk);
  EXPECT_EQ(out_.str(), "homes\n    /export/home/b\n");
  EXPECT_EQ(Run({"show", "-s", "/export/home/a/x"}), kExitRefused);
  EXPECT_THAT(err_.str(), HasSubstr("/export/home/a/x: no such share (it is "
                                    "inside share /export/home/a of group "
                                    "homes)"));
}

TEST_F(RunTest, ShowVerboseNamesKernelOnlyOptionsOnlyInKernelMode) {
  daemon_.groups = {{"g", true, "", 1}};
  libshare::ShareInfo s;
  s.path = "/export/a";
  s.group = "g";
  s.options = "rw,nosuid";
  s.effective_options = "rw,nosuid";
  daemon_.shares = {s};
  for (const auto& args :
       {std::vector<std::string>{"show", "-v"},
        std::vector<std::string>{"show", "-v", "g"},
        std::vector<std::string>{"show", "-v", "-s", "/export/a"}}) {
    daemon_.kernel_mode = "off";
    EXPECT_EQ(Run(args), kExitOk);
    EXPECT_THAT(out_.str(), HasSubstr("/export/a: effective nfs=(rw,nosuid)"));
    EXPECT_THAT(out_.str(), Not(HasSubstr("no effect in kernel mode")));
    daemon_.kernel_mode = "on";
    EXPECT_EQ(Run(args), kExitOk);
    EXPECT_THAT(out_.str(),
                HasSubstr("/export/a: no effect in kernel mode: nosuid"));
  }
  // Without -v nothing is asked of the daemon's mode.
  daemon_.stats_calls = 0;
  EXPECT_EQ(Run({"show"}), kExitOk);
  EXPECT_EQ(daemon_.stats_calls, 0);
}

}  // namespace
TEST_F(RunTest, BigBatchKeepsOrderAndEveryLinesError) {
  // 5,000 lines: errors near the start, the middle and the end, operations
  // in file order, origins by line.
  std::string text;
  const int n = 5000;
  for (int i = 1; i <= n; ++i) {
    if (i == 7 || i == n / 2 || i == n / 2 + 1 || i == n - 1) {
      // A different unknown option each: identical errors are counted.
      const char opt = i == 7 ? 'w' : i == n / 2 ? 'x' : i == n - 1 ? 'z' : 'y';
      text += std::string("add-share -") + opt + " -s /export/u" +
              std::to_string(i) + " homes\n";
    } else if (i == 3000) {
      text += "add-share -s 'unterminated homes\n";
    } else {
      text += "add-share -s /export//u" + std::to_string(i) + " homes\n";
    }
  }
  EXPECT_EQ(Run({"batch", "-"}, text), kExitRefused);
  ASSERT_EQ(daemon_.batches.size(), 1u);
  const auto& ops = daemon_.batches[0].ops;
  ASSERT_EQ(ops.size(), static_cast<std::size_t>(n - 5));
  EXPECT_TRUE(daemon_.batches[0].dry_run);
  // Normalized paths, in file order, skipping the refused lines.
  std::vector<int> want;
  for (int i = 1; i <= n; ++i) {
    if (i != 7 && i != n / 2 && i != n / 2 + 1 && i != n - 1 && i != 3000) {
      want.push_back(i);
    }
  }
  for (std::size_t k = 0; k < ops.size(); ++k) {
    ASSERT_EQ(ops[k].path, "/export/u" + std::to_string(want[k])) << k;
    ASSERT_EQ(ops[k].group, "homes");
  }
  const std::string err = err_.str();
  std::size_t at = 0;
  for (const std::string& line :
       {std::string("<stdin>:7: add-share: unknown option \"-w\""),
        std::string("<stdin>:2500: add-share: unknown option \"-x\""),
        std::string("<stdin>:2501: add-share: unknown option \"-y\""),
        std::string("<stdin>:3000: add-share: unterminated single quote"),
        std::string("<stdin>:4999: add-share: unknown option \"-z\"")}) {
    std::size_t found = err.find(line, at);
    ASSERT_NE(found, std::string::npos) << line << "\n" << err;
    at = found;
  }
}

}  // namespace sharectl
