#include "nfs_conf.h"

#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <climits>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "config.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharemgrd {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::StartsWith;

// Files in a temporary folder: DIR/nfs.conf and DIR/nfs.conf.d/.
class NfsConfFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/sharemgrd_nfsconf_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    main_ = dir_ + "/nfs.conf";
  }
  void TearDown() override {
    std::string cmd = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(system(cmd.c_str()), 0);
  }

  // Writes `text` to DIR/name (folders made as needed); returns the path.
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    for (std::size_t s = path.find('/', dir_.size() + 1);
         s != std::string::npos; s = path.find('/', s + 1)) {
      mkdir(path.substr(0, s).c_str(), 0755);
    }
    std::ofstream(path) << text;
    return path;
  }

  absl::StatusOr<NfsConf> Load() { return NfsConf::Load(main_); }

  // The daemon's configuration from `args` plus --nfs-conf DIR/nfs.conf.
  absl::StatusOr<DaemonConfig> Apply(std::vector<std::string> args,
                                     NfsConfReport* report = nullptr) {
    args.push_back("--nfs-conf");
    args.push_back(main_);
    absl::StatusOr<DaemonConfig> c = ParseCommandLine(args);
    if (!c.ok()) return c.status();
    absl::StatusOr<NfsConfReport> r = ApplyNfsConf(&*c);
    if (!r.ok()) return r.status();
    if (report != nullptr) *report = *r;
    return c;
  }

  std::string dir_;
  std::string main_;
};

// --- The file format ---

TEST_F(NfsConfFiles, KeysAreFoundInTheirSectionWithFileAndLine) {
  Write("nfs.conf",
        "# comment\n"
        "[general]\n"
        "pipefs-directory=/run/rpc_pipefs\n"
        "  [ MountD ]  trailing text\n"
        "  Port = 2049   # a comment\n"
        "threads\t=\t4;another\n");
  absl::StatusOr<NfsConf> conf = Load();
  ASSERT_TRUE(conf.ok()) << conf.status();
  const NfsConfEntry* port = conf->Find("mountd", "port");
  ASSERT_NE(port, nullptr);
  EXPECT_EQ(port->value, "2049");
  EXPECT_EQ(port->key, "Port");
  EXPECT_EQ(port->Where(), main_ + ":5");
  EXPECT_EQ(conf->Find("MOUNTD", "PORT"), port);  // case-insensitive
  ASSERT_NE(conf->Find("mountd", "threads"), nullptr);
  EXPECT_EQ(conf->Find("mountd", "threads")->value, "4");
  EXPECT_EQ(conf->Find("general", "port"), nullptr);
  EXPECT_EQ(conf->Find("general", "pipefs-directory")->value,
            "/run/rpc_pipefs");
  EXPECT_THAT(conf->files(), ElementsAre(main_));
  EXPECT_THAT(conf->warnings(), IsEmpty());
}

TEST_F(NfsConfFiles, SubsectionsAreKeptApart) {
  Write("nfs.conf",
        "[mountd \"Lab\"]\nport=1\n"
        "[mountd]\nport=2\n");
  absl::StatusOr<NfsConf> conf = Load();
  ASSERT_TRUE(conf.ok()) << conf.status();
  EXPECT_EQ(conf->Find("mountd", "port")->value, "2");
  ASSERT_NE(conf->Find("mountd", "port", "lab"), nullptr);
  EXPECT_EQ(conf->Find("mountd", "port", "lab")->value, "1");
  EXPECT_EQ(conf->Find("mountd", "port", "lab")->subsection, "Lab");
  EXPECT_EQ(conf->Section("mountd").size(), 2u);
}

TEST_F(NfsConfFiles, QuotesKeepWhatTheyHold) {
  Write("nfs.conf",
        "[s]\n"
        "a = \"x # y; z\" ignored after the quote\n"
        "b = ' padded '\n");
  absl::StatusOr<NfsConf> conf = Load();
  ASSERT_TRUE(conf.ok()) << conf.status();
  EXPECT_EQ(conf->Find("s", "a")->value, "x # y; z");
  EXPECT_EQ(conf->Find("s", "b")->value, " padded ");
}

TEST_F(NfsConfFiles, LaterAssignmentWinsAndAnEmptyOneAssignsNothing) {
  Write("nfs.conf", "[mountd]\nport=1\nport=2\nport=\nport=\"\"\n");
  absl::StatusOr<NfsConf> conf = Load();
  ASSERT_TRUE(conf.ok()) << conf.status();
  EXPECT_EQ(conf->Find("mountd", "port")->value, "2");
  EXPECT_EQ(conf->Find("mountd", "port")->line, 3);
}

TEST_F(NfsConfFiles, BackslashJoinsLinesAndLinesStayCounted) {
  Write("nfs.conf", "[s]\na = one\\\ntwo\nb = 3\n");
  absl::StatusOr<NfsConf> conf = Load();
  ASSERT_TRUE(conf.ok()) << conf.status();
  EXPECT_EQ(conf->Find("s", "a")->value, "one  two");
  EXPECT_EQ(conf->Find("s", "a")->line, 2);
  EXPECT_EQ(conf->Find("s", "b")->line, 4);
}

TEST_F(NfsConfFiles, LastLineWithoutNewlineIsIgnoredAsNfsUtilsDoes) {
  Write("nfs.conf", "[mountd]\nthreads=2\nport=1");
  absl::StatusOr<NfsConf> conf = Load();
  ASSERT_TRUE(conf.ok()) << conf.status();
  EXPECT_EQ(conf->Find("mountd", "port"), nullptr);
  EXPECT_NE(conf->Find("mountd", "threads"), nullptr);
  EXPECT_THAT(conf->warnings(),
              ElementsAre(StartsWith(main_ + ":3: last line has no newline")));
}

TEST_F(NfsConfFiles, IncludeReadsTheFileInPlaceInTheCurrentSection) {
  Write("nfs.conf",
        "[mountd]\nport=1\nthreads=1\n"
        "include = sub/inc.conf\n"
        "threads=9\n");
  const std::string inc =
      Write("sub/inc.conf", "port=2\nthreads=3\n[general]\nx=1\n");
  absl::StatusOr<NfsConf> conf = Load();
  ASSERT_TRUE(conf.ok()) << conf.status();
  EXPECT_EQ(conf->Find("mountd", "port")->value, "2");
  EXPECT_EQ(conf->Find("mountd", "port")->Where(), inc + ":1");
  // The included file's [general] does not carry back.
  EXPECT_EQ(conf->Find("mountd", "threads")->value, "9");
  EXPECT_EQ(conf->Find("mountd", "threads")->Where(), main_ + ":5");
  EXPECT_EQ(conf->Find("general", "x")->value, "1");
  EXPECT_EQ(conf->Find("general", "threads"), nullptr);
  EXPECT_THAT(conf->files(), ElementsAre(main_, inc));
}

TEST_F(NfsConfFiles, MissingIncludeWarnsUnlessOptional) {
  Write("nfs.conf",
        "[mountd]\ninclude = -/nonexistent/optional.conf\n"
        "include = nope.conf\nport=3\n");
  absl::StatusOr<NfsConf> conf = Load();
  ASSERT_TRUE(conf.ok()) << conf.status();
  EXPECT_EQ(conf->Find("mountd", "port")->value, "3");
  EXPECT_THAT(conf->warnings(),
              ElementsAre(StartsWith(main_ + ":3: include " + dir_ +
                                     "/nope.conf: no such file")));
}

TEST_F(NfsConfFiles, IncludeLoopIsAnErrorNamingTheLine) {
  Write("nfs.conf", "[mountd]\ninclude = nfs.conf\n");
  absl::StatusOr<NfsConf> conf = Load();
  ASSERT_FALSE(conf.ok());
  EXPECT_EQ(conf.status().message(),
            absl::StrCat(main_, ":2: include ", main_,
                         ": already being read (an include loop)"));
}

TEST_F(NfsConfFiles, IncludesNestedTooDeepAreAnError) {
  Write("nfs.conf", "[mountd]\ninclude = 1\n");
  for (int i = 1; i <= 17; ++i) {
    Write(std::to_string(i), absl::StrCat("include = ", i + 1, "\n"));
  }
  Write("18", "port=1\n");
  absl::StatusOr<NfsConf> conf = Load();
  ASSERT_FALSE(conf.ok());
  EXPECT_THAT(std::string(conf.status().message()),
              StartsWith(main_ + ":2: include: "));
  EXPECT_THAT(std::string(conf.status().message()),
              HasSubstr("nested more than 16 deep"));
}

TEST_F(NfsConfFiles, ConfDFilesComeAfterInVersionOrderAndWin) {
  Write("nfs.conf", "[mountd]\nport=1\nthreads=1\n");
  const std::string nine = Write("nfs.conf.d/9.conf", "[mountd]\nport=9\n");
  const std::string ten = Write("nfs.conf.d/10.conf", "[mountd]\nport=10\n");
  Write("nfs.conf.d/.hidden.conf", "[mountd]\nport=98\n");
  Write("nfs.conf.d/local.txt", "[mountd]\nport=99\n");
  Write("nfs.conf.d/.conf", "[mountd]\nport=97\n");
  absl::StatusOr<NfsConf> conf = Load();
  ASSERT_TRUE(conf.ok()) << conf.status();
  EXPECT_EQ(conf->Find("mountd", "port")->value, "10");
  EXPECT_EQ(conf->Find("mountd", "port")->Where(), ten + ":2");
  EXPECT_EQ(conf->Find("mountd", "threads")->value, "1");
  EXPECT_THAT(conf->files(), ElementsAre(main_, nine, ten));
}

TEST_F(NfsConfFiles, ConfDIsReadWithoutTheMainFile) {
  Write("nfs.conf.d/local.conf", "[mountd]\nport=4\n");
  absl::StatusOr<NfsConf> conf = Load();
  ASSERT_TRUE(conf.ok()) << conf.status();
  EXPECT_EQ(conf->Find("mountd", "port")->value, "4");
}

TEST_F(NfsConfFiles, MissingFileIsNotAnError) {
  absl::StatusOr<NfsConf> conf = Load();
  ASSERT_TRUE(conf.ok()) << conf.status();
  EXPECT_THAT(conf->files(), IsEmpty());
  EXPECT_EQ(conf->Find("mountd", "port"), nullptr);
}

TEST_F(NfsConfFiles, AFolderInPlaceOfTheFileIsAnError) {
  mkdir(main_.c_str(), 0755);
  absl::StatusOr<NfsConf> conf = Load();
  ASSERT_FALSE(conf.ok());
  EXPECT_EQ(conf.status().message(), main_ + ": not a regular file");
}

TEST_F(NfsConfFiles, BadSyntaxNamesFileAndLine) {
  struct Case {
    const char* text;
    const char* error;  // after "FILE:"
  };
  for (const Case& c : std::vector<Case>{
           {"[mountd\nport=1\n", "1: section header without a closing ']'"},
           {"[mountd \"x]\n", "1: subsection name without a closing '\"'"},
           {"[ ]\n", "1: section header without a name"},
           {"[mountd]\n\njunk\n",
            "3: not a [section] header, a KEY = VALUE assignment or a "
            "comment"},
           {"port=1\n[mountd]\n",
            "1: assignment before the first [section] header"},
           {"[mountd]\nport=\"2049\n", "2: value without its closing '\"'"},
           {"[mountd]\n = 5\n", "2: assignment without a key before '='"},
           {"[mountd]\ninclude = -\n", "2: include without a file name"},
       }) {
    Write("nfs.conf", c.text);
    absl::StatusOr<NfsConf> conf = Load();
    ASSERT_FALSE(conf.ok()) << c.text;
    EXPECT_EQ(conf.status().message(), absl::StrCat(main_, ":", c.error))
        << c.text;
  }
}

TEST_F(NfsConfFiles, BadLineInAnIncludedFileNamesThatFile) {
  Write("nfs.conf", "[mountd]\ninclude = inc\n");
  const std::string inc = Write("inc", "ok=1\nbroken\n");
  absl::StatusOr<NfsConf> conf = Load();
  ASSERT_FALSE(conf.ok());
  EXPECT_THAT(std::string(conf.status().message()),
              StartsWith(main_ + ":2: include: "));
  EXPECT_THAT(std::string(conf.status().message()),
              HasSubstr(inc + ":2: not a [section]"));
}

TEST_F(NfsConfFiles, DollarValuesComeFromTheEnvironmentOrItsSection) {
  Write("nfs.conf",
        "[environment]\nPORT=$OTHER\nOTHER=2049\n"
        "[mountd]\nport=$PORT\nthreads=$THREADS\nttl=$NOWHERE\n");
  absl::StatusOr<NfsConf> conf = Load();
  ASSERT_TRUE(conf.ok()) << conf.status();
  auto env = [](const char* name) -> const char* {
    return std::string(name) == "THREADS" ? "6" : nullptr;
  };
  EXPECT_EQ(conf->Expand(*conf->Find("mountd", "port"), env), "2049");
  EXPECT_EQ(conf->Expand(*conf->Find("mountd", "threads"), env), "6");
  EXPECT_EQ(conf->Expand(*conf->Find("mountd", "ttl"), env), std::nullopt);
}

// --- Applied to the daemon's configuration ---

TEST_F(NfsConfFiles, MountdSettingsAreTaken) {
  Write("nfs.conf",
        "[mountd]\n"
        "manage-gids = yes\n"
        "port = 20048\n"
        "threads = 8\n"
        "ttl = 600\n"
        "descriptors = 0\n");
  NfsConfReport report;
  absl::StatusOr<DaemonConfig> c = Apply({}, &report);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->manage_gids);
  EXPECT_EQ(c->mount_port, 20048);
  EXPECT_EQ(c->threads, 8);
  EXPECT_EQ(c->ttl, 600);
  EXPECT_EQ(c->descriptors, 0);
  EXPECT_THAT(
      report.taken,
      ElementsAre(
          absl::StrCat("descriptors=0 (", main_,
                       ":6) -> descriptor limit unchanged"),
          absl::StrCat("manage-gids=yes (", main_,
                       ":2) -> --manage-gids (kernel mode only)"),
          absl::StrCat("port=20048 (", main_, ":3) -> --mount-port 20048"),
          absl::StrCat("threads=8 (", main_, ":4) -> --threads 8"),
          absl::StrCat("ttl=600 (", main_,
                       ":5) -> the kernel mode's positive "
                       "answers live 600 s")));
  std::vector<std::string> lines = report.LogLines();
  ASSERT_EQ(lines.size(), 1u);  // nothing ignored
  EXPECT_THAT(lines[0], StartsWith("nfs.conf: took descriptors=0 ("));
  EXPECT_THAT(lines[0], HasSubstr("; read " + main_));
}

TEST_F(NfsConfFiles, ManageGidsNoIsTakenToo) {
  Write("nfs.conf", "[mountd]\nmanage-gids=Off\n");
  absl::StatusOr<DaemonConfig> c = Apply({});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(c->manage_gids);
}

TEST_F(NfsConfFiles, ConfDOverridesTheMainFileWhenApplied) {
  Write("nfs.conf", "[mountd]\nport=1\n");
  const std::string local =
      Write("nfs.conf.d/local.conf", "[mountd]\n\nport=2\n");
  NfsConfReport report;
  absl::StatusOr<DaemonConfig> c = Apply({}, &report);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->mount_port, 2);
  EXPECT_THAT(report.taken, ElementsAre(absl::StrCat("port=2 (", local,
                                                     ":3) -> --mount-port 2")));
}

TEST_F(NfsConfFiles, FlagsGivenWinOverTheFile) {
  Write("nfs.conf", "[mountd]\nport=5\nthreads=9\nmanage-gids=n\nttl=60\n");
  NfsConfReport report;
  absl::StatusOr<DaemonConfig> c =
      Apply({"--mount-port", "111", "--threads=2", "--manage-gids"}, &report);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->mount_port, 111);
  EXPECT_EQ(c->threads, 2);
  EXPECT_TRUE(c->manage_gids);
  EXPECT_EQ(c->ttl, 60);  // no flag for it
  ASSERT_EQ(report.ignored.size(), 1u);
  EXPECT_EQ(report.ignored[0].first, "[mountd]");
  EXPECT_THAT(
      report.ignored[0].second,
      ElementsAre(
          absl::StrCat("manage-gids (", main_, ":4: --manage-gids given)"),
          absl::StrCat("port (", main_, ":2: --mount-port given)"),
          absl::StrCat("threads (", main_, ":3: --threads given)")));
}

TEST_F(NfsConfFiles, BadBooleanNamesFileLineAndKeyAndChangesNothing) {
  Write("nfs.conf", "[mountd]\nport=5\nmanage-gids = maybe\n");
  absl::StatusOr<DaemonConfig> c = ParseCommandLine({"--nfs-conf", main_});
  ASSERT_TRUE(c.ok()) << c.status();
  absl::StatusOr<NfsConfReport> r = ApplyNfsConf(&*c);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            absl::StrCat(main_,
                         ":3: [mountd] manage-gids: \"maybe\" is not a "
                         "boolean (y, yes, true, on, 1 or n, no, false, off, "
                         "0)"));
  EXPECT_EQ(c->mount_port, 0);  // the good line before it is not applied
}

TEST_F(NfsConfFiles, BadNumbersNameFileLineAndKey) {
  struct Case {
    const char* line;
    const char* error;  // after "FILE:2: "
  };
  for (const Case& k : std::vector<Case>{
           {"port = 70000", "[mountd] port: \"70000\" is not a port number"},
           {"Threads = many",
            "[mountd] Threads: \"many\" is not a number from 1 to 1024"},
           {"ttl = 0", "[mountd] ttl: \"0\" is not a number of seconds"},
           {"descriptors = -1",
            "[mountd] descriptors: \"-1\" is not a number of descriptors"},
           {"reverse-lookup = sometimes",
            "[mountd] reverse-lookup: \"sometimes\" is not a boolean"},
       }) {
    Write("nfs.conf", absl::StrCat("[mountd]\n", k.line, "\n"));
    absl::StatusOr<DaemonConfig> c = Apply({});
    ASSERT_FALSE(c.ok()) << k.line;
    EXPECT_THAT(std::string(c.status().message()),
                StartsWith(absl::StrCat(main_, ":2: ", k.error)));
  }
}

TEST_F(NfsConfFiles, BadValueIsAnErrorEvenWhenAFlagOverridesIt) {
  Write("nfs.conf", "[mountd]\nport=x\n");
  absl::StatusOr<DaemonConfig> c = Apply({"--mount-port", "5"});
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()),
              StartsWith(main_ + ":2: [mountd] port:"));
}

TEST_F(NfsConfFiles, DescriptorsAboveTheHardLimitAreRefused) {
  rlimit rl{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &rl), 0);
  if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= INT_MAX) {
    GTEST_SKIP() << "no hard limit below INT_MAX";
  }
  Write("nfs.conf", absl::StrCat("[mountd]\ndescriptors=", INT_MAX, "\n"));
  absl::StatusOr<DaemonConfig> c = Apply({});
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()),
              StartsWith(main_ + ":2: [mountd] descriptors: "));
  EXPECT_THAT(std::string(c.status().message()),
              HasSubstr("above the hard RLIMIT_NOFILE"));
  Write("nfs.conf", "[mountd]\ndescriptors=64\n");
  c = Apply({});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->descriptors, 64);
}

TEST_F(NfsConfFiles, KeysWithoutAnEquivalentAreNamedInOneLine) {
  Write("nfs.conf",
        "[general]\npipefs-directory=/run/rpc_pipefs\n"
        "[mountd]\n"
        "debug = all\n"
        "reverse-lookup = y\n"
        "state-directory-path = /var/lib/nfs\n"
        "ha-callout = /bin/true\n"
        "cache-use-ipaddr = y\n"
        "frobnicate = 1\n"
        "[mountd \"x\"]\nport=9\n"
        "[nfsd]\nudp=y\nthreads=8\n");
  NfsConfReport report;
  absl::StatusOr<DaemonConfig> c = Apply({}, &report);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->mount_port, 0);  // the subsection is not [mountd]
  std::vector<std::string> lines = report.LogLines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "nfs.conf: took nothing; read " + main_);
  EXPECT_THAT(lines[1], StartsWith("nfs.conf: ignored [mountd] "));
  for (const char* k :
       {"cache-use-ipaddr (", "debug (", "frobnicate (", "ha-callout (",
        "reverse-lookup (", "state-directory-path (", "; [mountd \"x\"] port (",
        "; [general] pipefs-directory (", "; [nfsd] udp ("}) {
    EXPECT_THAT(lines[1], HasSubstr(k));
  }
  EXPECT_THAT(lines[1], HasSubstr(absl::StrCat("frobnicate (", main_,
                                               ":9: not an rpc.mountd "
                                               "setting)")));
  EXPECT_THAT(lines[1], HasSubstr("sharemgrd keeps its state in --db "));
  EXPECT_THAT(lines[1], Not(HasSubstr("threads")));  // [nfsd] threads
}

TEST_F(NfsConfFiles, NoNfsConfReadsNothing) {
  Write("nfs.conf", "[mountd]\nport=5\n");
  absl::StatusOr<DaemonConfig> c = ParseCommandLine({"--no-nfs-conf"});
  ASSERT_TRUE(c.ok()) << c.status();
  c->nfs_conf_path = main_;
  absl::StatusOr<NfsConfReport> r = ApplyNfsConf(&*c);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(c->mount_port, 0);
  EXPECT_THAT(r->LogLines(), ElementsAre("nfs.conf: not read (--no-nfs-conf)"));
}

TEST_F(NfsConfFiles, NfsConfAndNoNfsConfExcludeEachOther) {
  absl::StatusOr<DaemonConfig> c =
      ParseCommandLine({"--no-nfs-conf", "--nfs-conf", main_});
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()),
              HasSubstr("exclude each other"));
}

TEST_F(NfsConfFiles, MissingDefaultFileTakesNothingButAGivenOneIsAnError) {
  absl::StatusOr<DaemonConfig> c = ParseCommandLine({});
  ASSERT_TRUE(c.ok()) << c.status();
  c->nfs_conf_path = main_;  // as the default, not given
  absl::StatusOr<NfsConfReport> r = ApplyNfsConf(&*c);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->LogLines(),
              ElementsAre(absl::StrCat("nfs.conf: took nothing: no ", main_,
                                       " nor ", main_, ".d/*.conf")));
  absl::StatusOr<DaemonConfig> given = Apply({});
  ASSERT_FALSE(given.ok());
  EXPECT_EQ(given.status().message(),
            absl::StrCat("--nfs-conf ", main_, ": no such file"));
}

TEST_F(NfsConfFiles, WarningsAreLoggedAfterTheSummary) {
  Write("nfs.conf", "[mountd]\ninclude = gone.conf\n");
  NfsConfReport report;
  ASSERT_TRUE(Apply({}, &report).ok());
  std::vector<std::string> lines = report.LogLines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_THAT(lines[1], StartsWith("nfs.conf: " + main_ + ":2: include "));
}

}  // namespace
}  // namespace sharemgrd
