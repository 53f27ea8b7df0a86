#include "config.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharemgrd {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(ConfigTest, DefaultsMatchTheDesign) {
  absl::StatusOr<DaemonConfig> c = ParseCommandLine({});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->db_path, "/var/lib/sharemgr/shares.db");
  EXPECT_EQ(c->socket_path, "/run/sharemgr/sharemgrd.sock");
  EXPECT_EQ(c->sharetab_path, "/run/sharemgr/sharetab");
  EXPECT_EQ(c->pid_file, "/run/sharemgr/sharemgrd.pid");
  EXPECT_EQ(c->mount_port, 0);
  EXPECT_EQ(c->listen, (std::vector<std::string>{"0.0.0.0", "::"}));
  EXPECT_FALSE(c->foreground);
  EXPECT_FALSE(c->insecure);
}

TEST(ConfigTest, ValuesAreTakenSeparateOrAfterEquals) {
  absl::StatusOr<DaemonConfig> c = ParseCommandLine(
      {"--db", "/d", "--socket=/s", "--mount-port", "2049", "--foreground",
       "--threads=3", "--debug-resolver-delay", "127.0.0.9=500"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->db_path, "/d");
  EXPECT_EQ(c->socket_path, "/s");
  EXPECT_EQ(c->mount_port, 2049);
  EXPECT_TRUE(c->foreground);
  EXPECT_EQ(c->threads, 3);
  EXPECT_EQ(c->resolver_delays.at("127.0.0.9"), 500);
}

TEST(ConfigTest, BadValueNamesTheOption) {
  absl::StatusOr<DaemonConfig> c = ParseCommandLine({"--mount-port", "x"});
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("--mount-port"));
  EXPECT_THAT(c.status().message(), HasSubstr("\"x\""));
}

TEST(ConfigTest, UnknownOptionIsNamed) {
  absl::StatusOr<DaemonConfig> c = ParseCommandLine({"--frobnicate"});
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("--frobnicate"));
}

TEST(ConfigTest, MissingValueIsAnError) {
  EXPECT_FALSE(ParseCommandLine({"--db"}).ok());
}

TEST(ConfigTest, FlagWithValueIsAnError) {
  EXPECT_FALSE(ParseCommandLine({"--insecure=yes"}).ok());
}

TEST(ConfigTest, ConnectionLimitsAreOptions) {
  absl::StatusOr<DaemonConfig> c =
      ParseCommandLine({"--max-connections", "10000", "--idle-timeout=30",
                        "--mgmt-idle-timeout", "45"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->max_connections, 10000);
  EXPECT_EQ(c->idle_timeout_seconds, 30);
  EXPECT_EQ(c->mgmt_idle_timeout_seconds, 45);
}

TEST(ConfigTest, ConnectionLimitsHaveDefaults) {
  absl::StatusOr<DaemonConfig> c = ParseCommandLine({});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->max_connections, 4096);
  EXPECT_EQ(c->idle_timeout_seconds, 120);
  EXPECT_EQ(c->mgmt_idle_timeout_seconds, 600);
}

TEST(ConfigTest, ManagementConnectionLimitIsItsOwnOption) {
  absl::StatusOr<DaemonConfig> d = ParseCommandLine({});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->max_mgmt_connections, 256);
  absl::StatusOr<DaemonConfig> c =
      ParseCommandLine({"--max-mgmt-connections", "16"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->max_mgmt_connections, 16);
  EXPECT_EQ(c->max_connections, 4096);
}

TEST(ConfigTest, ZeroManagementConnectionsAreRefused) {
  absl::StatusOr<DaemonConfig> c =
      ParseCommandLine({"--max-mgmt-connections", "0"});
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()),
              HasSubstr("--max-mgmt-connections"));
}

TEST(ConfigTest, ZeroIdleTimeoutIsRefused) {
  absl::StatusOr<DaemonConfig> c = ParseCommandLine({"--idle-timeout", "0"});
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("--idle-timeout"));
}

TEST(ConfigTest, ListenIsRepeatableAndReplacesTheDefaults) {
  absl::StatusOr<DaemonConfig> c = ParseCommandLine(
      {"--listen", "127.0.0.1", "--listen", "[::1]", "--listen=fd00::5"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->listen,
            (std::vector<std::string>{"127.0.0.1", "::1", "fd00::5"}));
}

TEST(ConfigTest, ListenRefusesNamesAndRepeats) {
  absl::StatusOr<DaemonConfig> c = ParseCommandLine({"--listen", "host1"});
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("\"host1\""));
  c = ParseCommandLine({"--listen", "::1", "--listen", "[::1]"});
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("twice"));
}

TEST(ConfigTest, HelpListsEveryOption) {
  std::string help = UsageText();
  for (const char* o : {"--db",
                        "--socket",
                        "--sharetab",
                        "--foreground",
                        "--pid-file",
                        "--mount-port",
                        "--listen",
                        "--no-rpcbind",
                        "--insecure",
                        "--admin-group",
                        "--hosts",
                        "--netgroups",
                        "--auth-cache-max",
                        "--load-threads",
                        "--threads",
                        "--max-connections",
                        "--max-mgmt-connections",
                        "--idle-timeout",
                        "--mgmt-idle-timeout",
                        "--nfs-conf",
                        "--no-nfs-conf",
                        "--help",
                        "--version"}) {
    EXPECT_THAT(help, HasSubstr(o));
  }
}

TEST(ConfigTest, HelpLeavesOutTestOnlyOptionsTheParserStillTakes) {
  EXPECT_THAT(UsageText(), Not(HasSubstr("--debug-resolver-delay")));
  absl::StatusOr<DaemonConfig> c =
      ParseCommandLine({"--debug-resolver-delay", "127.0.0.9=500"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->resolver_delays.at("127.0.0.9"), 500);
}

TEST(ConfigTest, KernelModeIsAutoByDefaultAndTakesOnOff) {
  EXPECT_EQ(ParseCommandLine({})->kernel, KernelModeSetting::kAuto);
  EXPECT_FALSE(ParseCommandLine({})->manage_gids);
  EXPECT_EQ(ParseCommandLine({"--kernel=on"})->kernel, KernelModeSetting::kOn);
  EXPECT_EQ(ParseCommandLine({"--kernel", "off"})->kernel,
            KernelModeSetting::kOff);
  EXPECT_TRUE(ParseCommandLine({"--manage-gids"})->manage_gids);
}

TEST(ConfigTest, NfsConfIsReadFromEtcUnlessToldOtherwise) {
  absl::StatusOr<DaemonConfig> c = ParseCommandLine({});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->nfs_conf_path, "/etc/nfs.conf");
  EXPECT_FALSE(c->no_nfs_conf);
  EXPECT_EQ(ParseCommandLine({"--nfs-conf=/x/nfs.conf"})->nfs_conf_path,
            "/x/nfs.conf");
  EXPECT_TRUE(ParseCommandLine({"--no-nfs-conf"})->no_nfs_conf);
  EXPECT_FALSE(ParseCommandLine({"--nfs-conf="}).ok());
}

TEST(ConfigTest, GivenListsTheOptionsOnTheCommandLine) {
  absl::StatusOr<DaemonConfig> c =
      ParseCommandLine({"--threads", "3", "--manage-gids"});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->given, (std::set<std::string>{"threads", "manage-gids"}));
  EXPECT_TRUE(ParseCommandLine({})->given.empty());
}

TEST(ConfigTest, BadKernelModeNamesTheOptionAndTheChoices) {
  absl::StatusOr<DaemonConfig> c = ParseCommandLine({"--kernel=yes"});
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(),
            "option --kernel: \"yes\" is not auto, on or off");
}

}  // namespace
}  // namespace sharemgrd

namespace sharemgrd {
namespace {

TEST(ConfigLogFileTest, LogFileIsOffByDefaultAndTakesAnAbsolutePath) {
  absl::StatusOr<DaemonConfig> c = ParseCommandLine({});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->log_file, "");
  c = ParseCommandLine({"--log-file", "/var/log/sharemgrd.log"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->log_file, "/var/log/sharemgrd.log");
  c = ParseCommandLine({"--log-file=relative.log"});
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()),
              ::testing::HasSubstr("--log-file: \"relative.log\" is not an "
                                   "absolute path"));
}

}  // namespace
}  // namespace sharemgrd
