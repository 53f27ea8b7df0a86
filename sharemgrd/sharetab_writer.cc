#include "sharetab_writer.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "log.h"
#include "thread_name.h"

namespace sharemgrd {
namespace {

// Background rewrites of the view start at least this long after the last
// one ended, and at least kSharetabGapFactor times its duration: at most
// about a tenth of a core goes to the view however fast changes come.
constexpr absl::Duration kSharetabMinGap = absl::Milliseconds(20);
constexpr int kSharetabGapFactor = 10;
// A rewrite a change asks for starts at least this long after it (unless
// someone waits for the view): the caller's next steps do not share the
// cores with an O(N) write (fs_watch.cc, kBatchRoundSettle).
constexpr absl::Duration kSharetabSettle = absl::Milliseconds(50);

}  // namespace

SharetabWriter::SharetabWriter(
    std::string path, authcache::AuthCache* cache,
    std::function<absl::Status(const std::string& file)> write)
    : path_(std::move(path)), cache_(cache), write_(std::move(write)) {}

SharetabWriter::~SharetabWriter() { Stop(); }

void SharetabWriter::Stop() {
  {
    absl::MutexLock l(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void SharetabWriter::StartThread() {
  if (!thread_.joinable()) {
    thread_ = std::thread([this] {
      NameThisThread("sm-sharetab");
      Loop();
    });
  }
}

void SharetabWriter::Request(uint64_t generation, bool wait) {
  absl::MutexLock l(&mu_);
  if (stopping_) return;
  StartThread();
  if (requested_ <= written_ && !refresh_) {
    due_ = absl::Now() + kSharetabSettle;  // nothing pending before
  }
  if (generation > requested_) requested_ = generation;
  if (!wait) return;
  auto done = [this, generation]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return written_ >= generation;
  };
  ++waiting_;
  mu_.Await(absl::Condition(&done));
  --waiting_;
}

void SharetabWriter::RequestRefresh() {
  absl::MutexLock l(&mu_);
  if (stopping_) return;
  StartThread();
  refresh_ = true;
}

void SharetabWriter::SweepCacheAfterNextWrite() {
  absl::MutexLock l(&mu_);
  cache_sweep_ = true;
}

std::string SharetabWriter::error() const {
  absl::MutexLock l(&mu_);
  return error_;
}

void SharetabWriter::Loop() {
  absl::MutexLock l(&mu_);
  absl::Time next_write = absl::InfinitePast();
  for (;;) {
    auto work = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return requested_ > written_ || refresh_ || stopping_;
    };
    mu_.Await(absl::Condition(&work));
    if (requested_ <= written_ && !refresh_) {
      return;  // stopping
    }
    // Pacing: a rewrite of a big table costs O(N) CPU (100 ms at 100,000
    // shares), so a script changing one share at a time would spend a core
    // on views nobody reads in between. Changes arriving during the gap are
    // folded into one write; on stop the latest state is written at once.
    // Settling: a change's rewrite waits kSharetabSettle, unless a
    // caller waits for the view (Request with wait).
    auto hurry = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return stopping_ || waiting_ > 0;
    };
    if (!hurry()) {
      mu_.AwaitWithDeadline(absl::Condition(&hurry),
                            std::max(next_write, due_));
    }
    if (!stopping_ && absl::Now() < next_write) {
      auto stopping = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_;
      };
      mu_.AwaitWithDeadline(absl::Condition(&stopping), next_write);
    }
    uint64_t target = requested_;
    refresh_ = false;  // this write shows the table as it is now
    const bool sweep = cache_sweep_;
    cache_sweep_ = false;
    mu_.Unlock();
    // Writes the table as it is now: at least generation `target`.
    const absl::Time start = absl::Now();
    Write();
    // Paced with the view: a script removing shares one by one sweeps the
    // cache once per write, not once per change.
    if (sweep) cache_->DropUnused();
    const absl::Time end = absl::Now();
    mu_.Lock();
    next_write =
        end + std::max(kSharetabMinGap, (end - start) * kSharetabGapFactor);
    if (target > written_) written_ = target;
  }
}

void SharetabWriter::Clear() {
  absl::MutexLock write(&write_mu_);  // after any write under way
  absl::Status s = libshare::WriteSharetab(path_, {});
  if (!s.ok()) {
    LogLine(absl::StrCat("cannot empty the sharetab view ", path_, ": ",
                         s.message()));
  }
}

void SharetabWriter::Write() {
  absl::MutexLock write(&write_mu_);
  absl::Status s = write_(path_);
  absl::MutexLock l(&mu_);
  if (s.ok()) {
    if (!error_.empty()) {
      // The failure was logged: so is its end.
      LogLine(absl::StrCat("the sharetab view ", path_, " is written again"));
    }
    error_.clear();
    return;
  }
  error_ = std::string(s.message());
  LogLine(absl::StrCat("cannot write the sharetab view ", path_,
                       " (will retry after the next change): ", s.message()));
}

}  // namespace sharemgrd
