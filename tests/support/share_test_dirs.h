// Test helpers for the share table, store, loader and catalog tests: a
// temporary folder per test, directories to share inside it, batch
// builders, and SQL run on a store file behind its owner's back.
#ifndef TESTS_SUPPORT_SHARE_TEST_DIRS_H_
#define TESTS_SUPPORT_SHARE_TEST_DIRS_H_

#include <sqlite3.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "gtest/gtest.h"
#include "libshare/batch.h"

namespace libshare::testing {

// A fresh folder, removed with its content. It lives on a tmpfs
// (/dev/shm) when there is one: removing thousands of folders from the
// disk of the test machine (ext4 mounted with "discard") takes seconds.
class TempDir {
 public:
  TempDir() {
    const char* env = getenv("TMPDIR");
    std::string base = env && *env ? env : "/tmp";
    struct stat st;
    if (!(env && *env) && stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) &&
        access("/dev/shm", W_OK) == 0) {
      base = "/dev/shm";
    }
    std::string tmpl = base + "/libshare_test.XXXXXX";
    char* p = mkdtemp(tmpl.data());
    EXPECT_NE(p, nullptr) << tmpl;
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  // Creates `rel` (and its parents) below the folder; returns its path.
  std::string Mkdir(const std::string& rel) const {
    std::string p = path_ + "/" + rel;
    std::error_code ec;
    std::filesystem::create_directories(p, ec);
    EXPECT_FALSE(ec) << p << ": " << ec.message();
    return p;
  }

 private:
  std::string path_;
};

inline Operation CreateGroup(std::string group, std::string options = "") {
  Operation op;
  op.type = Operation::Type::kCreateGroup;
  op.group = std::move(group);
  op.options = std::move(options);
  return op;
}

inline Operation AddShare(std::string path, std::string group,
                          std::string options = "") {
  Operation op;
  op.type = Operation::Type::kAddShare;
  op.path = std::move(path);
  op.group = std::move(group);
  op.options = std::move(options);
  return op;
}

inline Operation RemoveShare(std::string path, std::string group = "") {
  Operation op;
  op.type = Operation::Type::kRemoveShare;
  op.path = std::move(path);
  op.group = std::move(group);
  return op;
}

inline Operation GroupOp(Operation::Type type, std::string group) {
  Operation op;
  op.type = type;
  op.group = std::move(group);
  return op;
}

// Runs `sql` on the store file `db` through a plain SQLite connection of
// its own (rows edited by hand, as an administrator or an older program
// would leave them).
inline void RawExec(const std::string& db, const std::string& sql) {
  sqlite3* conn = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &conn), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(conn, sql.c_str(), nullptr, nullptr, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(conn);
  sqlite3_close(conn);
}

}  // namespace libshare::testing

#endif  // TESTS_SUPPORT_SHARE_TEST_DIRS_H_
