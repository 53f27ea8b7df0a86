#include "libshare/sharetab.h"

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "libshare/sharetab_lines.h"

namespace libshare {
namespace {

using ::testing::HasSubstr;

SharetabEntry MakeEntry(std::string path, std::string resource,
                        std::string options, std::string description) {
  SharetabEntry e;
  e.path = std::move(path);
  e.resource = std::move(resource);
  e.options = std::move(options);
  e.description = std::move(description);
  return e;
}

// A fresh folder per test, removed with its files afterwards.
class SharetabFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "sharetab_test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/sharetab";
  }
  void TearDown() override {
    for (const std::string& f : Files()) ::unlink((dir_ + "/" + f).c_str());
    ::rmdir(dir_.c_str());
  }
  std::vector<std::string> Files() const {
    std::vector<std::string> out;
    DIR* d = ::opendir(dir_.c_str());
    if (d == nullptr) return out;
    while (dirent* ent = ::readdir(d)) {
      std::string name = ent->d_name;
      if (name != "." && name != "..") out.push_back(name);
    }
    ::closedir(d);
    return out;
  }
  static std::string ReadFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  std::string dir_;
  std::string path_;
};

TEST(FormatSharetabLine, TabSeparatedWithNewline) {
  EXPECT_EQ(FormatSharetabLine(
                MakeEntry("/export/a", "res", "rw,nosuid", "home of a")),
            "/export/a\tres\tnfs\trw,nosuid\thome of a\n");
}

TEST(FormatSharetabLine, EmptyResourceIsDash) {
  EXPECT_EQ(FormatSharetabLine(MakeEntry("/export/a", "", "rw", "")),
            "/export/a\t-\tnfs\trw\t\n");
}

TEST(ParseSharetabLine, ParsesWithAndWithoutNewline) {
  SharetabEntry want = MakeEntry("/a", "r", "ro", "d e");
  EXPECT_EQ(*ParseSharetabLine("/a\tr\tnfs\tro\td e\n"), want);
  EXPECT_EQ(*ParseSharetabLine("/a\tr\tnfs\tro\td e"), want);
}

TEST(ParseSharetabLine, DashIsEmptyResource) {
  absl::StatusOr<SharetabEntry> e = ParseSharetabLine("/a\t-\tnfs\t\t\n");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->resource, "");
  EXPECT_EQ(e->options, "");
  EXPECT_EQ(e->description, "");
}

TEST(ParseSharetabLine, KeepsFstype) {
  EXPECT_EQ(ParseSharetabLine("/a\t-\tsmb\trw\t")->fstype, "smb");
}

TEST(ParseSharetabLine, WrongFieldCountIsRefused) {
  absl::StatusOr<SharetabEntry> few = ParseSharetabLine("/a\t-\tnfs\trw\n");
  ASSERT_FALSE(few.ok());
  EXPECT_THAT(std::string(few.status().message()),
              HasSubstr("4 tab-separated fields, want 5"));
  absl::StatusOr<SharetabEntry> many =
      ParseSharetabLine("/a\t-\tnfs\trw\td\textra");
  ASSERT_FALSE(many.ok());
  EXPECT_THAT(std::string(many.status().message()),
              HasSubstr("6 tab-separated fields"));
  EXPECT_FALSE(ParseSharetabLine("").ok());
}

TEST(ParseSharetabLine, RelativePathAndEmptyFstypeAreRefused) {
  EXPECT_FALSE(ParseSharetabLine("a\t-\tnfs\trw\t").ok());
  EXPECT_FALSE(ParseSharetabLine("\t-\tnfs\trw\t").ok());
  EXPECT_FALSE(ParseSharetabLine("/a\t-\t\trw\t").ok());
}

TEST(ParseSharetabLine, TwoLinesAreRefused) {
  EXPECT_FALSE(ParseSharetabLine("/a\t-\tnfs\trw\t\n/b\t-\tnfs\trw\t\n").ok());
}

TEST(ParseSharetab, FormatThenParseRoundTrips) {
  std::vector<SharetabEntry> entries = {
      MakeEntry("/export/a", "", "rw", ""),
      MakeEntry("/export/b", "bres", "sec=krb5,rw=@10.0.0.0/8",
                "desc, with comma"),
      MakeEntry("/", "root", "", "x:y=z")};
  std::string text;
  for (const SharetabEntry& e : entries) text += FormatSharetabLine(e);
  absl::StatusOr<std::vector<SharetabEntry>> back = ParseSharetab(text);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, entries);
}

TEST(ParseSharetab, EmptyTextIsNoEntries) {
  absl::StatusOr<std::vector<SharetabEntry>> e = ParseSharetab("");
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE(e->empty());
}

TEST(ParseSharetab, LastLineWithoutNewlineIsRead) {
  absl::StatusOr<std::vector<SharetabEntry>> e =
      ParseSharetab("/a\t-\tnfs\trw\t\n/b\t-\tnfs\tro\t");
  ASSERT_TRUE(e.ok());
  ASSERT_EQ(e->size(), 2u);
  EXPECT_EQ((*e)[1].path, "/b");
}

TEST(ParseSharetab, ErrorNamesTheLineNumber) {
  absl::StatusOr<std::vector<SharetabEntry>> e =
      ParseSharetab("/a\t-\tnfs\trw\t\n/b\tbroken\n");
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(std::string(e.status().message()), HasSubstr("line 2: "));
}

TEST_F(SharetabFileTest, WriteThenReadBack) {
  std::vector<SharetabEntry> entries = {MakeEntry("/export/a", "", "rw", "a"),
                                        MakeEntry("/export/b", "b", "ro", "")};
  ASSERT_TRUE(WriteSharetab(path_, entries).ok());
  EXPECT_EQ(ReadFile(path_),
            "/export/a\t-\tnfs\trw\ta\n/export/b\tb\tnfs\tro\t\n");
  EXPECT_EQ(*ParseSharetab(ReadFile(path_)), entries);
}

TEST_F(SharetabFileTest, EmptyListWritesEmptyFile) {
  ASSERT_TRUE(WriteSharetab(path_, {MakeEntry("/a", "", "", "")}).ok());
  ASSERT_TRUE(WriteSharetab(path_, {}).ok());
  EXPECT_EQ(ReadFile(path_), "");
}

TEST_F(SharetabFileTest, FileIsWorldReadableAndNoTemporaryIsLeft) {
  ASSERT_TRUE(WriteSharetab(path_, {MakeEntry("/a", "", "rw", "")}).ok());
  struct stat st;
  ASSERT_EQ(::stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  EXPECT_THAT(Files(), ::testing::ElementsAre("sharetab"));
}

TEST_F(SharetabFileTest, FieldWithTabOrNewlineIsRefusedAndFileUnchanged) {
  ASSERT_TRUE(WriteSharetab(path_, {MakeEntry("/a", "", "rw", "old")}).ok());
  absl::Status tab =
      WriteSharetab(path_, {MakeEntry("/b", "", "rw", "has\ttab")});
  EXPECT_EQ(tab.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(tab.message()),
              HasSubstr("sharetab entry \"/b\": description contains a tab"));
  absl::Status nl = WriteSharetab(path_, {MakeEntry("/b", "r\nx", "rw", "")});
  EXPECT_THAT(std::string(nl.message()),
              HasSubstr("resource contains a newline"));
  SharetabEntry bad_path = MakeEntry("/b\nc", "", "", "");
  EXPECT_THAT(std::string(WriteSharetab(path_, {bad_path}).message()),
              HasSubstr("path contains a newline"));
  EXPECT_EQ(ReadFile(path_), "/a\t-\tnfs\trw\told\n");
  EXPECT_THAT(Files(), ::testing::ElementsAre("sharetab"));
}

TEST_F(SharetabFileTest, MissingFolderIsAnErrorNamingThePath) {
  std::string p = dir_ + "/no/such/sharetab";
  absl::Status st = WriteSharetab(p, {MakeEntry("/a", "", "", "")});
  EXPECT_FALSE(st.ok());
  EXPECT_THAT(std::string(st.message()), HasSubstr(p));
}

// A reader that reads the file over and over while a writer replaces it
// must only ever see one of the complete versions.
TEST_F(SharetabFileTest, ReaderNeverSeesAPartialFile) {
  constexpr int kVersions = 6;
  constexpr int kWrites = 150;
  std::vector<std::vector<SharetabEntry>> versions(kVersions);
  for (int v = 0; v < kVersions; ++v) {
    // Different lengths (v * 300 + 50 lines, up to ~100 KiB) so that a
    // torn or truncated read cannot look complete.
    for (int i = 0; i < v * 300 + 50; ++i) {
      versions[v].push_back(MakeEntry("/export/home/user" + std::to_string(i),
                                      i % 3 ? "" : "r",
                                      "rw=@10.0.0.0/8:host" + std::to_string(v),
                                      "version " + std::to_string(v)));
    }
  }
  ASSERT_TRUE(WriteSharetab(path_, versions[0]).ok());

  std::atomic<bool> done{false};
  std::atomic<int> reads{0};
  std::atomic<int> bad{0};
  std::thread reader([&] {
    while (!done.load()) {
      absl::StatusOr<std::vector<SharetabEntry>> got =
          ParseSharetab(ReadFile(path_));
      bool match = false;
      if (got.ok()) {
        for (const auto& v : versions) match = match || *got == v;
      }
      if (!match) bad.fetch_add(1);
      reads.fetch_add(1);
    }
  });
  for (int w = 1; w <= kWrites; ++w) {
    ASSERT_TRUE(WriteSharetab(path_, versions[w % kVersions]).ok());
  }
  // Let the reader finish at least a few reads even on a slow machine.
  while (reads.load() < 20) std::this_thread::yield();
  done = true;
  reader.join();
  EXPECT_EQ(bad.load(), 0) << "of " << reads.load() << " reads";
  EXPECT_EQ(*ParseSharetab(ReadFile(path_)), versions[kWrites % kVersions]);
  EXPECT_THAT(Files(), ::testing::ElementsAre("sharetab"));
}

// The daemon's view file is written from SharetabLines: sorted, one line
// a path, the lines a filter keeps, byte for byte what WriteSharetab writes
// from the same entries.
TEST_F(SharetabFileTest, LinesWriteWhatEntriesWrite) {
  SharetabLines lines;
  lines.Reserve(4);
  lines.Add("/export/b", "", "rw", "", false);
  lines.Add("/export/a", "res", "ro,mountpoint", "home of a", true);
  lines.Add("/export/c", "", "rw", "", false);
  lines.Add("/export/b", "", "rw", "", false);  // seen twice by a walk
  lines.SortUnique();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines.path(0), "/export/a");
  EXPECT_EQ(lines.path(1), "/export/b");
  EXPECT_TRUE(lines.mountpoint(0));
  EXPECT_FALSE(lines.mountpoint(1));

  ASSERT_TRUE(lines
                  .Write(path_, [](std::string_view path,
                                   bool) { return path != "/export/c"; })
                  .ok());
  const std::string from_lines = ReadFile(path_);
  ASSERT_TRUE(WriteSharetab(path_, {MakeEntry("/export/a", "res",
                                              "ro,mountpoint", "home of a"),
                                    MakeEntry("/export/b", "", "rw", "")})
                  .ok());
  EXPECT_EQ(from_lines, ReadFile(path_));
  EXPECT_EQ(from_lines,
            "/export/a\tres\tnfs\tro,mountpoint\thome of a\n"
            "/export/b\t-\tnfs\trw\t\n");
}

TEST_F(SharetabFileTest, LinesRefuseAFieldSharetabCannotHoldAndKeepTheFile) {
  ASSERT_TRUE(
      WriteSharetab(path_, {MakeEntry("/export/a", "", "rw", "")}).ok());
  SharetabLines lines;
  lines.Add("/export/a", "", "rw", "", false);
  lines.Add("/export/b", "", "rw", "two\nlines", false);
  lines.SortUnique();
  absl::Status s =
      lines.Write(path_, [](std::string_view, bool) { return true; });
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("description contains a newline"));
  EXPECT_EQ(ReadFile(path_), "/export/a\t-\tnfs\trw\t\n");
  lines.Clear();
  EXPECT_EQ(lines.size(), 0u);
  EXPECT_TRUE(
      lines.Write(path_, [](std::string_view, bool) { return true; }).ok());
  EXPECT_EQ(ReadFile(path_), "");
}

}  // namespace
}  // namespace libshare
