// Fakes of the kernel's files for the front's tests: a cache channel the
// test queues requests on and reads replies from, and the nfsd files.
#ifndef TESTS_SHAREMGRD_KERNEL_FAKE_CHANNEL_H_
#define TESTS_SHAREMGRD_KERNEL_FAKE_CHANNEL_H_

#include <sys/eventfd.h>
#include <unistd.h>

#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "kernel/channel.h"
#include "kernel/line_format.h"

namespace sharemgrd::kernel::testing {

// The auth domains the fake kernel knows. When strict, nfsd.export and
// nfsd.fh replies for a domain no auth.unix.ip reply created fail with
// NotFound (ENOENT), as after someone runs `exportfs -f`.
class FakeDomains {
 public:
  void SetStrict(bool strict) {
    absl::MutexLock lock(&mu_);
    strict_ = strict;
    known_.clear();
  }
  bool Allows(const std::string& domain) {
    absl::MutexLock lock(&mu_);
    return !strict_ || known_.contains(domain);
  }
  void Learn(const std::string& domain) {
    absl::MutexLock lock(&mu_);
    known_.insert(domain);
  }

 private:
  absl::Mutex mu_;
  bool strict_ ABSL_GUARDED_BY(mu_) = false;
  absl::flat_hash_set<std::string> known_ ABSL_GUARDED_BY(mu_);
};

// Requests queued with Upcall() poll readable through an eventfd, as the
// kernel's queue does; replies are kept in order. A domain can be made
// "unknown" (writes fail with ENOENT's NotFound until the ip entry for it
// is written), as after someone runs `exportfs -f`.
class FakeChannel : public CacheChannel {
 public:
  FakeChannel(std::string cache, FakeDomains* domains)
      : cache_(std::move(cache)),
        domains_(domains),
        fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {}
  ~FakeChannel() override { close(fd_); }
  const std::string& cache() const override { return cache_; }
  int fd() const override { return fd_; }

  absl::StatusOr<std::string> Read() override {
    absl::MutexLock lock(&mu_);
    if (queue_.empty()) {
      uint64_t v;
      (void)!read(fd_, &v, sizeof v);
      return std::string();
    }
    std::string line = std::move(queue_.front());
    queue_.pop_front();
    return line;
  }

  absl::Status Write(std::string_view line) override {
    absl::StatusOr<std::vector<std::string>> f = SplitLine(line);
    if (!f.ok() || f->empty()) return absl::InvalidArgumentError("bad line");
    if (cache_ == kIpCache) {
      if (f->size() == 4) domains_->Learn((*f)[3]);
    } else if (cache_ != kGidCache && !domains_->Allows((*f)[0])) {
      return absl::NotFoundError("write: No such file or directory");
    }
    std::function<void(const std::string&)> hook;
    {
      absl::MutexLock lock(&mu_);
      written_.emplace_back(line);
      hook = on_write_;
    }
    if (hook) hook(std::string(line));
    return absl::OkStatus();
  }
  // Runs after each accepted reply (as the kernel acts on it), on the
  // writing thread.
  void OnWrite(std::function<void(const std::string&)> hook) {
    absl::MutexLock lock(&mu_);
    on_write_ = std::move(hook);
  }

  void Upcall(const std::string& line) {
    absl::MutexLock lock(&mu_);
    queue_.push_back(line);
    uint64_t one = 1;
    (void)!write(fd_, &one, sizeof one);
  }
  std::vector<std::string> written() {
    absl::MutexLock lock(&mu_);
    return written_;
  }
  void ClearWritten() {
    absl::MutexLock lock(&mu_);
    written_.clear();
  }
  // Waits until at least n replies were written.
  bool WaitWritten(size_t n, absl::Duration timeout = absl::Seconds(10)) {
    absl::MutexLock lock(&mu_);
    auto enough = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return written_.size() >= n;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&enough), timeout);
  }

 private:
  const std::string cache_;
  FakeDomains* const domains_;
  const int fd_;
  absl::Mutex mu_;
  std::deque<std::string> queue_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> written_ ABSL_GUARDED_BY(mu_);
  std::function<void(const std::string&)> on_write_ ABSL_GUARDED_BY(mu_);
};

class FakeNfsdFiles : public NfsdFiles {
 public:
  absl::StatusOr<std::string> FileHandle(const std::string& domain,
                                         const std::string& path,
                                         int max_size) override {
    std::function<void()> hook;
    {
      absl::MutexLock lock(&mu_);
      handle_requests_.push_back(
          absl::StrCat(domain, " ", path, " ", max_size));
      hook = on_handle_;
    }
    if (hook) hook();
    return std::string("\x01\x00\x01\x00", 4) + path.substr(0, 4);
  }
  absl::Status Flush(const std::string& cache) override {
    absl::MutexLock lock(&mu_);
    flushed_.push_back(cache);
    return absl::OkStatus();
  }
  absl::StatusOr<int64_t> FlushTime(const std::string&) override {
    absl::MutexLock lock(&mu_);
    return flush_time_;
  }
  void SetFlushTime(int64_t t) {
    absl::MutexLock lock(&mu_);
    flush_time_ = t;
  }
  // Runs while the kernel resolves a file handle request.
  void OnHandle(std::function<void()> hook) {
    absl::MutexLock lock(&mu_);
    on_handle_ = std::move(hook);
  }
  absl::Status UnlockFilesystem(const std::string& path) override {
    absl::MutexLock lock(&mu_);
    unlocked_.push_back(path);
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> ExportFeatures() override {
    return std::string("0x3feff 0xf\n");
  }
  std::vector<std::string> flushed() {
    absl::MutexLock lock(&mu_);
    return flushed_;
  }
  std::vector<std::string> unlocked() {
    absl::MutexLock lock(&mu_);
    return unlocked_;
  }
  std::vector<std::string> handle_requests() {
    absl::MutexLock lock(&mu_);
    return handle_requests_;
  }

 private:
  absl::Mutex mu_;
  std::vector<std::string> flushed_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> unlocked_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> handle_requests_ ABSL_GUARDED_BY(mu_);
  std::function<void()> on_handle_ ABSL_GUARDED_BY(mu_);
  int64_t flush_time_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace sharemgrd::kernel::testing

#endif  // TESTS_SHAREMGRD_KERNEL_FAKE_CHANNEL_H_
