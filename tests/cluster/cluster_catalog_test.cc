// Catalogs of two or three heads that share one table through a real
// PostgreSQL (tests/support/pg_server.sh starts one for this binary, in a
// folder of its own, and stops it): batches on any head reach the others
// at the same generation; concurrent batches on two heads are serialized,
// never merged wrongly; without the engine a head serves its copy and
// refuses changes; a generation that went backwards or a table edited
// behind the heads' backs makes a resynchronization; a single server's
// table seeds an empty engine.
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "libshare/catalog.h"
#include "libshare/cluster_engine.h"
#include "libshare/fs_identity.h"
#include "pg_engine.h"
#include "share_test_dirs.h"

namespace libshare {
namespace {

using ::libshare::testing::AddShare;
using ::libshare::testing::CreateGroup;
using ::libshare::testing::RemoveShare;
using ::libshare::testing::TempDir;
using ::testing::HasSubstr;

std::string Run(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int rc = pclose(p);
  EXPECT_EQ(rc, 0) << cmd << "\n" << out;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

// The engine: one PostgreSQL for the whole binary, a database per test.
class PgServer {
 public:
  static PgServer& Get() {
    static PgServer server;  // stopped at exit
    return server;
  }
  std::string Sql(const std::string& sql, const std::string& db = "postgres") {
    return Run(absl::StrCat("PGDATABASE=", db, " ", PG_SERVER_SH, " psql ",
                            dir_.path(), "/pg \"", sql, "\""));
  }
  // A fresh database; its connection string.
  std::string NewDatabase() {
    const std::string name = absl::StrCat("t", next_++);
    Sql(absl::StrCat("CREATE DATABASE ", name));
    return absl::StrCat("host=", dir_.path(), "/pg port=5432 dbname=", name,
                        " user=postgres");
  }
  // The server's data folder (pg_hba.conf).
  std::string DataDir() const { return dir_.path() + "/pg/pgdata"; }
  void Stop() { Run(absl::StrCat(PG_SERVER_SH, " stop ", dir_.path(), "/pg immediate")); }
  void Start() { Run(absl::StrCat(PG_SERVER_SH, " start ", dir_.path(), "/pg")); }
  ~PgServer() { Stop(); }

 private:
  PgServer() {
    chmod(dir_.path().c_str(), 0755);
    Start();
  }
  TempDir dir_;
  int next_ = 0;
};

struct Head {
  std::unique_ptr<Catalog> catalog;
  std::atomic<int> replicated{0};
  std::atomic<int> identified{0};  // identities it found itself
  std::vector<std::string> log;
};

class ClusterTest : public ::testing::Test {
 protected:
  void SetUp() override { url_ = PgServer::Get().NewDatabase(); }

  std::unique_ptr<Head> OpenHead(const std::string& name) {
    auto head = std::make_unique<Head>();
    Catalog::Config c;
    c.db_path = absl::StrCat(dir_.path(), "/", name, ".db");
    c.head_name = name;
    c.follow_interval_ms = 100;
    const std::string url = url_;
    c.engine = [url, name]() { return ConnectPostgres(url, name); };
    c.engine_where = DescribePostgresUrl(url);
    Head* h = head.get();
    c.on_replicated = [h](const Batch&, BatchResult&, std::string_view) {
      h->replicated.fetch_add(1);
    };
    c.log = [](std::string_view line) {
      fprintf(stderr, "catalog: %.*s\n", static_cast<int>(line.size()),
              line.data());
    };
    // Each head sees its own copy of the file systems (a replica: another
    // uuid): the identity a share records is the committing head's, and
    // every head must keep that one.
    c.identify = [h, name](const std::string&, uint64_t) {
      h->identified.fetch_add(1);
      Catalog::Config::FsIdentityAnswer a;
      FsUuid u{};
      for (std::size_t i = 0; i < name.size() && i < u.size(); ++i) {
        u[i] = static_cast<uint8_t>(name[i]);
      }
      a.uuid = u;
      return a;
    };
    absl::StatusOr<std::unique_ptr<Catalog>> cat = Catalog::Open(c);
    EXPECT_TRUE(cat.ok()) << cat.status();
    if (cat.ok()) head->catalog = *std::move(cat);
    return head;
  }

  // Waits (at most 20 s) until `head` is at `generation`.
  static bool WaitFor(const Catalog& head, uint64_t generation) {
    for (int i = 0; i < 2000; ++i) {
      if (head.generation() == generation) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

  static std::string Table(const Catalog& c) {
    std::string out;
    for (const GroupInfo& g : c.ListGroups()) {
      absl::StrAppend(&out, "group ", g.name, " ", g.enabled, " ", g.options,
                      "\n");
    }
    absl::StatusOr<std::vector<ShareInfo>> shares = c.ListShares({});
    EXPECT_TRUE(shares.ok());
    for (const ShareInfo& s : *shares) {
      absl::StrAppend(&out, s.path, " ", s.group, " ", s.options, " ",
                      s.description, " ", s.resource, " ", s.fs_identity,
                      "\n");
    }
    return out;
  }

  // The test's database, as its connection string names it.
  std::string DbName() const {
    const std::size_t at = url_.find("dbname=") + 7;
    return url_.substr(at, url_.find(' ', at) - at);
  }

  TempDir dir_;
  std::string url_;
};

TEST_F(ClusterTest, BatchOnOneHeadIsServedByTheOtherAtTheSameGeneration) {
  auto a = OpenHead("a");
  auto b = OpenHead("b");
  Batch batch;
  batch.ops.push_back(CreateGroup("homes", "rw"));
  for (int i = 0; i < 2000; ++i) {
    batch.ops.push_back(
        AddShare(dir_.Mkdir(absl::StrCat("homes/u", i)), "homes"));
  }
  BatchResult r = a->catalog->Apply(batch);
  ASSERT_TRUE(r.ok()) << r.commit_error;
  ASSERT_TRUE(WaitFor(*b->catalog, r.generation));
  EXPECT_EQ(b->catalog->share_count(), 2000u);
  EXPECT_EQ(Table(*a->catalog), Table(*b->catalog));
  EXPECT_EQ(b->replicated.load(), 1);
  // Every share has A's identity on both heads (recorded once, by A, and
  // carried in the change record: B examined nothing of its own).
  absl::StatusOr<std::vector<ShareInfo>> on_b = b->catalog->ListShares({});
  ASSERT_TRUE(on_b.ok());
  for (const ShareInfo& s : *on_b) {
    ASSERT_EQ(s.fs_identity, "uuid:61000000000000000000000000000000") << s.path;
  }
  EXPECT_EQ(a->identified.load(), 1);  // one device: asked once
  EXPECT_EQ(b->identified.load(), 0);
  // The engine's table holds it too (what a resynchronizing head reads).
  const std::string db = DbName();
  EXPECT_EQ(PgServer::Get().Sql(
                "SELECT count(*) FROM sharemgr_shares WHERE fs_identity = "
                "'uuid:61000000000000000000000000000000'",
                db),
            "2000");
  // A change on B comes back to A.
  Batch rm;
  rm.ops.push_back(RemoveShare(dir_.path() + "/homes/u7"));
  BatchResult r2 = b->catalog->Apply(rm);
  ASSERT_TRUE(r2.ok()) << r2.commit_error;
  EXPECT_EQ(r2.generation, r.generation + 1);
  ASSERT_TRUE(WaitFor(*a->catalog, r2.generation));
  EXPECT_FALSE(a->catalog->FindNearest(dir_.path() + "/homes/u7/x").has_value());
  EXPECT_EQ(Table(*a->catalog), Table(*b->catalog));
  // The replayed change lists only what changed.
  EXPECT_EQ(a->replicated.load(), 1);
}

TEST_F(ClusterTest, ConcurrentBatchesOnTwoHeadsConverge) {
  auto a = OpenHead("a");
  auto b = OpenHead("b");
  Batch g;
  g.ops.push_back(CreateGroup("g"));
  ASSERT_TRUE(a->catalog->Apply(g).ok());
  std::vector<std::string> dirs;
  for (int i = 0; i < 40; ++i) dirs.push_back(dir_.Mkdir(absl::StrCat("d", i)));
  std::atomic<int> committed{0}, refused{0};
  auto worker = [&](Catalog* c, unsigned seed) {
    std::mt19937 rng(seed);
    for (int round = 0; round < 200; ++round) {
      Batch b;
      const int n = 1 + rng() % 4;
      for (int k = 0; k < n; ++k) {
        const std::string& d = dirs[rng() % dirs.size()];
        b.ops.push_back(rng() % 2 ? AddShare(d, "g") : RemoveShare(d));
      }
      BatchResult r = c->Apply(b);
      ASSERT_TRUE(r.commit_error.empty()) << r.commit_error;
      if (r.ok()) {
        committed.fetch_add(r.changed ? 1 : 0);
      } else {
        refused.fetch_add(1);
        EXPECT_FALSE(r.errors.empty());
      }
    }
  };
  std::thread ta(worker, a->catalog.get(), 1);
  std::thread tb(worker, b->catalog.get(), 2);
  ta.join();
  tb.join();
  EXPECT_GT(committed.load(), 50);
  EXPECT_GT(refused.load(), 10);
  // One generation per committed batch, across both heads.
  const uint64_t gen = 2 + committed.load();
  ASSERT_TRUE(WaitFor(*a->catalog, gen)) << a->catalog->generation();
  ASSERT_TRUE(WaitFor(*b->catalog, gen)) << b->catalog->generation();
  EXPECT_EQ(Table(*a->catalog), Table(*b->catalog));
  // The engine's rows are the heads' table.
  const std::string rows = PgServer::Get().Sql(
      "SELECT count(*) FROM sharemgr_shares", DbName());
  EXPECT_EQ(rows, absl::StrCat(a->catalog->share_count()));
}

TEST_F(ClusterTest, EngineAwayHeadServesItsCopyAndRefusesChanges) {
  auto a = OpenHead("a");
  Batch batch;
  batch.ops.push_back(CreateGroup("g"));
  batch.ops.push_back(AddShare(dir_.Mkdir("x"), "g"));
  BatchResult first = a->catalog->Apply(batch);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first.generation, 2u);  // a new table's is 1
  PgServer::Get().Stop();
  Batch more;
  more.ops.push_back(AddShare(dir_.Mkdir("y"), "g"));
  BatchResult r = a->catalog->Apply(more);
  PgServer::Get().Start();
  EXPECT_THAT(r.commit_error, HasSubstr("engine is unreachable"));
  EXPECT_THAT(r.commit_error, HasSubstr("serves its copy at generation 2"));
  EXPECT_TRUE(a->catalog->FindNearest(dir_.path() + "/x").has_value());
  EXPECT_FALSE(a->catalog->FindNearest(dir_.path() + "/y").has_value());
  // Once it is back, the same batch goes through.
  BatchResult again = a->catalog->Apply(more);
  EXPECT_TRUE(again.ok()) << again.commit_error;
  EXPECT_EQ(again.generation, 3u);
  EXPECT_TRUE(a->catalog->store_status().reachable);
}

TEST_F(ClusterTest, HeadStartedWithoutEngineServesItsCopyThenCatchesUp) {
  {
    auto a = OpenHead("a");
    Batch batch;
    batch.ops.push_back(CreateGroup("g"));
    batch.ops.push_back(AddShare(dir_.Mkdir("x"), "g"));
    ASSERT_TRUE(a->catalog->Apply(batch).ok());
  }
  auto b = OpenHead("b");
  ASSERT_TRUE(WaitFor(*b->catalog, 2));
  b.reset();  // closes b's copy at generation 1
  {
    auto a = OpenHead("a");
    Batch batch;
    batch.ops.push_back(AddShare(dir_.Mkdir("y"), "g"));
    ASSERT_TRUE(a->catalog->Apply(batch).ok());
  }
  PgServer::Get().Stop();
  b = OpenHead("b");
  PgServer::Get().Start();
  // Its copy, at once.
  EXPECT_TRUE(b->catalog->FindNearest(dir_.path() + "/x").has_value());
  const StoreStatus down = b->catalog->store_status();
  EXPECT_EQ(down.kind, "postgresql");
  // Then what it missed.
  ASSERT_TRUE(WaitFor(*b->catalog, 3));
  EXPECT_TRUE(b->catalog->FindNearest(dir_.path() + "/y").has_value());
  EXPECT_TRUE(b->catalog->store_status().reachable);
}

TEST_F(ClusterTest, GenerationGoingBackwardsResynchronizes) {
  auto a = OpenHead("a");
  auto b = OpenHead("b");
  Batch batch;
  batch.ops.push_back(CreateGroup("g"));
  batch.ops.push_back(AddShare(dir_.Mkdir("x"), "g"));
  batch.ops.push_back(AddShare(dir_.Mkdir("y"), "g"));
  ASSERT_TRUE(a->catalog->Apply(batch).ok());
  Batch rm;
  rm.ops.push_back(RemoveShare(dir_.path() + "/y"));
  ASSERT_TRUE(a->catalog->Apply(rm).ok());
  ASSERT_TRUE(WaitFor(*b->catalog, 3));
  a.reset();
  // An older copy of the engine: generation 2, y still there.
  const std::string db = DbName();
  PgServer::Get().Sql(
      absl::StrCat("BEGIN; DELETE FROM sharemgr_changes WHERE generation = 3; "
                   "UPDATE sharemgr_cluster SET generation = 2; "
                   "INSERT INTO sharemgr_shares SELECT convert_to('",
                   dir_.path(),
                   "/y', 'UTF8'), grp, resource, description, options FROM "
                   "sharemgr_shares LIMIT 1; SELECT pg_notify('sharemgr', "
                   "'2'); COMMIT"),
      db);
  ASSERT_TRUE(WaitFor(*b->catalog, 2));
  EXPECT_TRUE(b->catalog->FindNearest(dir_.path() + "/y").has_value());
  EXPECT_EQ(b->catalog->store_status().resyncs, 1u);
}

TEST_F(ClusterTest, SingleServerTableSeedsAnEmptyEngine) {
  {
    Catalog::Config c;
    c.db_path = absl::StrCat(dir_.path(), "/a.db");
    absl::StatusOr<std::unique_ptr<Catalog>> alone = Catalog::Open(c);
    ASSERT_TRUE(alone.ok());
    Batch batch;
    batch.ops.push_back(CreateGroup("g", "ro"));
    batch.ops.push_back(AddShare(dir_.Mkdir("x"), "g"));
    ASSERT_TRUE((*alone)->Apply(batch).ok());
  }
  auto a = OpenHead("a");
  EXPECT_TRUE(a->catalog->FindNearest(dir_.path() + "/x").has_value());
  auto b = OpenHead("b");
  ASSERT_TRUE(WaitFor(*b->catalog, a->catalog->generation()));
  EXPECT_EQ(Table(*a->catalog), Table(*b->catalog));
  EXPECT_EQ(b->catalog->share_count(), 1u);
}

TEST(PostgresUrl, PasswordOnTheCommandLineIsRefused) {
  absl::Status s =
      CheckPostgresUrl("postgresql://sharemgr:secret@db.example/shares");
  EXPECT_THAT(std::string(s.message()), HasSubstr("password"));
  EXPECT_THAT(std::string(s.message()), HasSubstr(".pgpass"));
  EXPECT_TRUE(CheckPostgresUrl("postgresql://sharemgr@db.example/shares").ok());
  EXPECT_FALSE(CheckPostgresUrl("host=x port=").ok() &&
               CheckPostgresUrl("nonsense=1").ok());
}

TEST(PostgresUrl, UnreachableEngineIsNamed) {
  absl::StatusOr<std::unique_ptr<ClusterEngine>> e = ConnectPostgres(
      "host=/nonexistent/socket/dir port=5999 dbname=x connect_timeout=2", "t");
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(std::string(e.status().message()),
              HasSubstr("PostgreSQL at /nonexistent/socket/dir:5999"));
}

TEST_F(ClusterTest, NewerSchemaIsRefused) {
  auto a = OpenHead("a");
  a.reset();
  const std::string db = DbName();
  PgServer::Get().Sql("UPDATE sharemgr_cluster SET schema_version = 99", db);
  absl::StatusOr<std::unique_ptr<ClusterEngine>> e = ConnectPostgres(url_, "t");
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(std::string(e.status().message()),
              HasSubstr("schema version 99, newer than this program's 2"));
}

// An engine made by the first version (no recorded identities) is brought
// to the second by the first head that connects: the column is added, the
// shares it held keep "" (none recorded), new adds record theirs.
TEST_F(ClusterTest, FirstSchemaGainsRecordedIdentities) {
  auto a = OpenHead("a");
  Batch batch;
  batch.ops.push_back(CreateGroup("g"));
  batch.ops.push_back(AddShare(dir_.Mkdir("old"), "g"));
  ASSERT_TRUE(a->catalog->Apply(batch).ok());
  a.reset();
  const std::string db = DbName();
  PgServer::Get().Sql(
      "ALTER TABLE sharemgr_shares DROP COLUMN fs_identity; "
      "UPDATE sharemgr_cluster SET schema_version = 1",
      db);
  auto b = OpenHead("b");
  ASSERT_NE(b->catalog, nullptr);
  EXPECT_EQ(PgServer::Get().Sql("SELECT schema_version FROM sharemgr_cluster",
                                db),
            "2");
  Batch add;
  add.ops.push_back(AddShare(dir_.Mkdir("new"), "g"));
  ASSERT_TRUE(b->catalog->Apply(add).ok());
  EXPECT_EQ(PgServer::Get().Sql(
                "SELECT string_agg(convert_from(path, 'UTF8') || '=' || "
                "fs_identity, ',' ORDER BY path) "
                "FROM sharemgr_shares",
                db),
            absl::StrCat(dir_.path(), "/new=uuid:62000000000000000000000000000000,",
                         dir_.path(), "/old="));
}

}  // namespace
}  // namespace libshare

namespace libshare {
namespace {

// Credentials come from libpq's files: a wrong password in PGPASSFILE is
// refused naming the engine and the role, and nothing is made; the right
// one connects.
TEST_F(ClusterTest, WrongPasswordIsRefusedClearlyAndTheRightOneConnects) {
  PgServer& pg = PgServer::Get();
  pg.Sql("DROP ROLE IF EXISTS pwuser; "
         "CREATE ROLE pwuser LOGIN SUPERUSER PASSWORD 'right-one'");
  const std::string hba = pg.DataDir() + "/pg_hba.conf";
  libshare::Run(absl::StrCat("grep -q '^local all pwuser' ", hba,
                   " || sed -i '1i local all pwuser scram-sha-256' ", hba));
  pg.Sql("SELECT pg_reload_conf()");
  const std::string pass = dir_.path() + "/pgpass";
  auto connect_with = [&](const std::string& password) {
    libshare::Run(absl::StrCat("printf '*:*:*:pwuser:%s\\n' '", password, "' > ", pass,
                     " && chmod 600 ", pass));
    setenv("PGPASSFILE", pass.c_str(), 1);
    absl::StatusOr<std::unique_ptr<ClusterEngine>> e =
        ConnectPostgres(url_ + " user=pwuser", "t");
    unsetenv("PGPASSFILE");
    return e;
  };
  absl::StatusOr<std::unique_ptr<ClusterEngine>> e = connect_with("wrong");
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(std::string(e.status().message()), HasSubstr("PostgreSQL at"));
  EXPECT_THAT(std::string(e.status().message()),
              HasSubstr("password authentication failed for user \"pwuser\""));
  const std::string db = DbName();
  EXPECT_EQ(pg.Sql("SELECT count(*) FROM pg_tables WHERE tablename LIKE "
                   "'sharemgr%'",
                   db),
            "0");
  e = connect_with("right-one");
  ASSERT_TRUE(e.ok()) << e.status();
}

TEST_F(ClusterTest, UnknownRoleAndForeignSchemaAreRefusedClearly) {
  absl::StatusOr<std::unique_ptr<ClusterEngine>> e =
      ConnectPostgres(url_ + " user=nosuch", "t");
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(std::string(e.status().message()), HasSubstr("nosuch"));
  EXPECT_THAT(std::string(e.status().message()), HasSubstr("PostgreSQL at"));
  // A database whose sharemgr_cluster is something else.
  const std::string db = DbName();
  PgServer::Get().Sql("CREATE TABLE sharemgr_cluster (x int)", db);
  e = ConnectPostgres(url_, "t");
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(std::string(e.status().message()),
              HasSubstr("not a sharemgr database"));
  // Nothing was made in it.
  EXPECT_EQ(PgServer::Get().Sql(
                "SELECT count(*) FROM pg_tables WHERE tablename LIKE "
                "'sharemgr%'",
                db),
            "1");
}

TEST_F(ClusterTest, EngineTableEditedBehindTheHeadsRefusesTheBatchWhole) {
  auto a = OpenHead("a");
  Batch batch;
  batch.ops.push_back(CreateGroup("g"));
  batch.ops.push_back(AddShare(dir_.Mkdir("x"), "g"));
  batch.ops.push_back(AddShare(dir_.Mkdir("y"), "g"));
  ASSERT_TRUE(a->catalog->Apply(batch).ok());
  const std::string db = DbName();
  // Someone deletes y's row by hand (the generation unchanged).
  PgServer::Get().Sql(
      absl::StrCat("DELETE FROM sharemgr_shares WHERE path = convert_to('",
                   dir_.path(), "/y', 'UTF8')"),
      db);
  Batch rm;
  rm.ops.push_back(RemoveShare(dir_.path() + "/x"));
  rm.ops.push_back(RemoveShare(dir_.path() + "/y"));
  BatchResult r = a->catalog->Apply(rm);
  EXPECT_THAT(r.commit_error, HasSubstr("differs from this head's"));
  // Nothing changed, here or in the engine.
  EXPECT_TRUE(a->catalog->FindNearest(dir_.path() + "/x").has_value());
  EXPECT_EQ(PgServer::Get().Sql("SELECT count(*) FROM sharemgr_shares", db),
            "1");
  EXPECT_EQ(PgServer::Get().Sql("SELECT generation FROM sharemgr_cluster", db),
            "2");
}

}  // namespace
}  // namespace libshare
