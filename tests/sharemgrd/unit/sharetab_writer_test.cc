#include "sharetab_writer.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "authcache/auth_cache.h"
#include "authcache/resolver.h"
#include "gtest/gtest.h"
#include "libshare/sharetab.h"

namespace sharemgrd {
namespace {

// A SharetabWriter of a view in a temporary folder, whose entries are the
// fixture's `entries_` (one share, "/a", until a test changes them).
class SharetabWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/sharemgrd_sharetab_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    auto resolver = authcache::MakeFilesResolver("", "");
    ASSERT_TRUE(resolver.ok());
    cache_ = std::make_unique<authcache::AuthCache>(
        std::shared_ptr<authcache::Resolver>(std::move(*resolver)),
        authcache::AuthCacheConfig{});
    SetEntries({"/a"});
  }
  void TearDown() override {
    std::string cmd = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(system(cmd.c_str()), 0);
  }

  std::unique_ptr<SharetabWriter> MakeWriter(const std::string& path) {
    return std::make_unique<SharetabWriter>(
        path, cache_.get(), [this](const std::string& file) {
          absl::MutexLock l(&mu_);
          return libshare::WriteSharetab(file, entries_);
        });
  }
  void SetEntries(const std::vector<std::string>& paths) {
    absl::MutexLock l(&mu_);
    entries_.clear();
    for (const std::string& p : paths) {
      libshare::SharetabEntry e;
      e.path = p;
      e.options = "rw";
      entries_.push_back(e);
    }
  }
  // The view's paths; {"<missing>"} when there is no file.
  std::vector<std::string> ViewPaths(const std::string& path) {
    std::ifstream in(path);
    if (!in) return {"<missing>"};
    std::stringstream text;
    text << in.rdbuf();
    auto parsed = libshare::ParseSharetab(text.str());
    EXPECT_TRUE(parsed.ok()) << parsed.status();
    std::vector<std::string> paths;
    if (parsed.ok()) {
      for (const libshare::SharetabEntry& e : *parsed) paths.push_back(e.path);
    }
    return paths;
  }

  std::string dir_;
  std::unique_ptr<authcache::AuthCache> cache_;
  absl::Mutex mu_;
  std::vector<libshare::SharetabEntry> entries_ ABSL_GUARDED_BY(mu_);
};

using Paths = std::vector<std::string>;

TEST_F(SharetabWriterTest, WriteWritesTheEntriesOnTheCallersThread) {
  const std::string tab = dir_ + "/sharetab";
  auto writer = MakeWriter(tab);
  writer->Write();
  EXPECT_EQ(ViewPaths(tab), Paths({"/a"}));
  EXPECT_EQ(writer->error(), "");
}

TEST_F(SharetabWriterTest, RequestWithWaitReturnsOnceTheViewIsWritten) {
  const std::string tab = dir_ + "/sharetab";
  auto writer = MakeWriter(tab);
  writer->Request(1, /*wait=*/true);
  EXPECT_EQ(ViewPaths(tab), Paths({"/a"}));
}

TEST_F(SharetabWriterTest, EachWriteShowsTheEntriesAsTheyAreThen) {
  const std::string tab = dir_ + "/sharetab";
  auto writer = MakeWriter(tab);
  writer->Request(1, /*wait=*/true);
  SetEntries({"/a", "/b"});
  writer->Request(2, /*wait=*/true);
  EXPECT_EQ(ViewPaths(tab), Paths({"/a", "/b"}));
}

TEST_F(SharetabWriterTest, StopWritesWhatWasAsked) {
  const std::string tab = dir_ + "/sharetab";
  auto writer = MakeWriter(tab);
  writer->Request(1, /*wait=*/false);
  writer->Stop();
  EXPECT_EQ(ViewPaths(tab), Paths({"/a"}));
}

TEST_F(SharetabWriterTest, RefreshAfterStopWritesNothing) {
  const std::string tab = dir_ + "/sharetab";
  auto writer = MakeWriter(tab);
  writer->Stop();
  writer->RequestRefresh();
  writer->Request(1, /*wait=*/false);
  writer->Stop();
  EXPECT_EQ(ViewPaths(tab), Paths({"<missing>"}));
}

TEST_F(SharetabWriterTest, ClearWritesAnEmptyView) {
  const std::string tab = dir_ + "/sharetab";
  auto writer = MakeWriter(tab);
  writer->Write();
  writer->Stop();
  writer->Clear();
  EXPECT_EQ(ViewPaths(tab), Paths());
}

TEST_F(SharetabWriterTest, AFailedWriteIsKeptUntilAWriteSucceeds) {
  const std::string tab = dir_ + "/missing/sharetab";
  auto writer = MakeWriter(tab);
  writer->Write();
  EXPECT_NE(writer->error(), "");
  ASSERT_EQ(mkdir((dir_ + "/missing").c_str(), 0755), 0);
  writer->Write();
  EXPECT_EQ(writer->error(), "");
  EXPECT_EQ(ViewPaths(tab), Paths({"/a"}));
}

}  // namespace
}  // namespace sharemgrd
