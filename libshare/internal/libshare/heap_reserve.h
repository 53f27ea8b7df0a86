// Heap memory made resident before a burst of allocations (a big batch,
// decoded or parsed).
//
// Where a page fault is expensive, a batch that allocates tens of megabytes
// spends more time taking faults than doing its own work: on this
// project's VMs the first touch of a page costs 9-12 us, while the kernel
// populates a range at about half that per page, or less, when asked in
// one call (bench/JOURNAL.md, "Page faults"; `scale_probe fault-cost`).
// Even populated, a page's first write costs about 5 us more there (the
// hypervisor maps each page the guest maps), and a transparent huge page
// is one such mapping for 512 pages: where the kernel makes them on
// request (MADV_COLLAPSE, Linux 6.1), the whole huge pages of a range are
// made huge pages and only the rest is populated page by page
// (bench/JOURNAL.md, "Huge pages").
//
// A HeapReserve asks the calling thread's malloc arena for about `bytes`
// in chunks, has the kernel make them resident as above (madvise
// MADV_COLLAPSE, and MADV_POPULATE_WRITE, Linux 5.14), and frees every
// chunk but the last. The freed chunks become
// one free block that is not at the arena's top (the last chunk stands
// between), so free() does not give it back to the kernel, and the
// allocations that follow on this thread are carved from resident pages.
// Allocations above malloc's mmap threshold are served from it too when
// they fit (malloc looks in its free lists before it maps). Destroying the
// reserve frees the last chunk: what the burst left unused can then be
// trimmed as usual.
//
// Best effort: with another allocator than glibc's (AddressSanitizer's
// too), on an older kernel, or when memory is short, less or nothing is
// reserved, and the program only takes the faults it would have taken
// anyway. Not thread-safe: a reserve serves the thread that made it, and
// is destroyed there.
//
//   {
//     libshare::HeapReserve reserve(16 * record_bytes);
//     ... decode and apply the batch ...
//   }  // the unused part may be trimmed from here on
#ifndef LIBSHARE_HEAP_RESERVE_H_
#define LIBSHARE_HEAP_RESERVE_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>

namespace libshare {

// Makes the whole pages of [p, p + bytes) resident and writable, its whole
// huge pages as huge pages where the kernel can (see above), for a buffer
// just allocated that is about to be filled. The contents are unchanged.
// A buffer of 64 MiB or more never written, outside the main arena's heap
// (glibc maps such a buffer on its own), is populated on two threads
// instead, its huge pages advised (MADV_HUGEPAGE) and taken on the
// populating faults where transparent huge pages allow: made resident by
// both cores at once.
// False where the kernel cannot (older than 5.14, or out of memory): the
// pages then fault in as usual.
bool PopulateForWrite(void* p, std::size_t bytes);

// Below this, AdviseHugePages does nothing.
inline constexpr std::size_t kAdviseHugeBytes = std::size_t{8} << 20;

// For a big buffer just mapped and not written yet (a vector reserved for
// a batch's entries, beyond what a HeapReserve holds): its whole huge pages
// are marked MADV_HUGEPAGE, so that each first write there takes a 2 MiB
// page in one fault instead of 512 (transparent huge pages in "madvise"
// mode). Nothing for a buffer under kAdviseHugeBytes, or whose first whole
// huge page is already resident (carved from a reserve). Best effort.
void AdviseHugePages(void* p, std::size_t bytes);

// Reserves room for n elements of `v` (a std::vector) and, for a big
// vector mapped afresh, asks that its first writes take huge pages
// (AdviseHugePages).
template <typename Vector>
void ReserveHuge(Vector& v, std::size_t n) {
  v.reserve(n);
  AdviseHugePages(v.data(), n * sizeof(typename Vector::value_type));
}

// For a buffer just allocated, HeapReserve::kMinBytes or bigger: unless
// its first whole page is resident already (carved from memory written
// before), makes it resident as PopulateForWrite does. Returns `bytes`
// when the buffer is resident, found so or made so; 0 when it is small or
// the kernel could not populate it.
std::size_t PopulateIfFresh(void* p, std::size_t bytes);

// Reserves room for n elements of `v` (a std::vector) and makes the first
// `max_bytes` of that room resident if it is fresh (PopulateIfFresh),
// before a burst fills it: a vector bigger than a thread's malloc arena
// holds in one piece (64 MiB) is mapped afresh beside any HeapReserve made
// on that thread. Returns the bytes of the room that are resident (0 if
// none), so that a HeapReserve made next can hold the rest.
template <typename Vector>
std::size_t ReserveResident(Vector& v, std::size_t n,
                            std::size_t max_bytes = ~std::size_t{0}) {
  v.reserve(n);
  const std::size_t bytes = n * sizeof(typename Vector::value_type);
  return PopulateIfFresh(v.data(), bytes < max_bytes ? bytes : max_bytes);
}

class MemoryWarmer;

class HeapReserve {
 public:
  // Below this, nothing is reserved: a few faults cost less than the calls.
  static constexpr std::size_t kMinBytes = std::size_t{1} << 20;
  // A bigger request reserves this much: a huge burst's transient memory
  // stays in proportion, and a reserve never asks for more than a machine
  // has.
  static constexpr std::size_t kMaxBytes = std::size_t{256} << 20;

  // With a `donor`, a warm going on for this burst (MemoryWarmer::Stream),
  // the reserve takes the memory the donor has made ready one huge page at
  // a time, while the donor goes on making more ready on another core.
  explicit HeapReserve(std::size_t bytes, MemoryWarmer* donor = nullptr);
  ~HeapReserve();
  HeapReserve(const HeapReserve&) = delete;
  HeapReserve& operator=(const HeapReserve&) = delete;

  // Bytes the kernel made resident (0 when nothing was reserved).
  std::size_t populated() const { return populated_; }

 private:
  void* last_ = nullptr;
  std::size_t populated_ = 0;
};

// Memory made quick to take again, ahead of a burst that is announced
// before it comes (a batch whose client says its size first,
// MGMTPROC_PREPARE_BATCH, while it still reads and parses its file).
//
// On a VM whose guest hands pages it has not used for about 2 s back to the
// host (free page reporting), the first touch of such a page waits for the
// host to map it again: that is most of what a big batch's memory costs
// there, 2-3 ms per MiB on one core (bench/JOURNAL.md, "Huge pages", and
// "A batch announced before it is parsed"). A warm maps up to `bytes` on a
// thread of its own ("sm-warm"), populates them 2 MiB at a time (as huge
// pages where transparent huge pages allow), and holds them until the
// burst takes them (GiveBack, a step at a time) or the warm ends (done
// before its burst came, stopped, or a pause not followed by its burst;
// then all it holds is unmapped): the pages it freed are mapped in the
// host again, and the next allocations (of this process or another) take
// them at the cost of a page zeroed in the guest, until the guest reports
// them free again. Once the burst has come (Stream) the warm goes on
// beside it: 100,000 adds after 3 s idle took 8-64 ms for their memory
// against 33-150 ms when the warm stopped as the burst came
// (bench/JOURNAL.md, "A warm that goes on beside the batch").
//
// Best effort: nothing where the kernel cannot populate (older than 5.14)
// or no thread can start. At most one warm at a time.
class MemoryWarmer {
 public:
  // A warm maps at most this much, and at most a quarter of what the
  // kernel says is available and of what the process's memory cgroup
  // still allows.
  static constexpr std::size_t kMaxBytes = std::size_t{1} << 30;
  // A warm that ended (done, or asked to stop) longer ago than this is not
  // reported by Stop() or Stream(): its pages have likely been given back
  // to the host again.
  static constexpr std::chrono::seconds kKeptWarm{2};

  MemoryWarmer() = default;
  ~MemoryWarmer() { Stop(); }
  MemoryWarmer(const MemoryWarmer&) = delete;
  MemoryWarmer& operator=(const MemoryWarmer&) = delete;

  // Starts warming `bytes`, bounded as above and rounded down to whole
  // 2 MiB steps, unless a warm is in progress. Returns the bytes it will
  // warm (at least one step whatever Stop() says), 0 when none was
  // started. (A warm that ended by itself is done with: the next Start
  // starts another.)
  std::size_t Start(std::size_t bytes);
  // Bytes the current (or last) warm has populated so far.
  std::size_t warmed() const { return warmed_.load(); }
  // Asks the warm in progress, if any, to stop after its current step and
  // give its memory back, without waiting for it (Stop() waits).
  void RequestStop();
  // RequestStop(), unless a burst has streamed the warm (Stream()): for a
  // burst that fails before it asks, whose warm another burst may be
  // taking meanwhile.
  void RequestStopUnlessStreamed();
  // Says the burst is arriving, without waiting: the warm populates no
  // more, beside the burst's transfer, but holds what it has until the
  // burst says what it needs (Stream()), for at most kKeptWarm; then it
  // ends.
  void RequestPause() { pause_.store(true); }
  // The burst the warm is for has come, and takes about `need` bytes. The
  // warm in progress, if any, goes on beside it, a step at a time, until
  // it has populated `need` (or what it was asked, if less) or is asked to
  // stop (what it populated past `need` it gives back itself, at once);
  // it holds the rest until the burst takes it (GiveBack;
  // HeapReserve with a donor) or it is asked to stop (RequestStop() or
  // Stop(), which the burst must call once it is done): memory the
  // guest handed back to the host is then made ready on two cores at
  // once, where the burst alone would take it at its own, cold, speed.
  // From here its steps are taken by page faults, which need not wait for
  // the burst's collapses (see TouchPages in the .cc). Returns the bytes
  // populated so far ("warmed ahead"), at least one step (it waits for the
  // first): 0 if there was no warm, if it ended more than kKeptWarm ago, if
  // Stream() was called for it before (each warm is for one burst; the
  // burst that got 0 must not stop it), or if it populated nothing (the
  // kernel could not, or a pause ended it first).
  std::size_t Stream(std::size_t need);
  // Gives back, on the calling thread, `bytes` rounded up to whole steps
  // (or less, as far as it holds them) of what the warm populated and has
  // not given back yet, first steps first: a
  // huge page freed on a CPU tends to be the next one handed out there.
  // Returns the bytes given back (0 when none is held: the warm has not got
  // that far, or has ended and given back all it held).
  std::size_t GiveBack(std::size_t bytes);
  // Whether the warm's memory is mapped (from its start until it ends):
  // GiveBack may give some, now or once it is populated.
  bool Holds();
  // Bytes the current (or last) warm has given back through GiveBack.
  std::size_t given();
  // Stops the warm in progress, if any, and returns once its memory is
  // unmapped (within one 2 MiB step). Returns the bytes the warm since the
  // last Stop populated: 0 if there was none, or if it ended more than
  // kKeptWarm ago.
  std::size_t Stop();

 private:
  // The warm's thread.
  void Run(std::size_t bytes);
  // Whether the warm ended by itself more than kKeptWarm ago.
  bool EndedLongAgo() const;

  std::mutex mu_;
  std::thread thread_;  // guarded by mu_
  std::atomic<bool> stop_{false};
  std::atomic<bool> pause_{false};
  // Set by Stream() (under give_mu_) for this warm: its burst has come,
  // needing limit_ (whole steps; SIZE_MAX before); the warm holds what it
  // populated up to there until stopped.
  std::atomic<bool> stream_{false};
  std::atomic<std::size_t> limit_{SIZE_MAX};
  // The warm's first step while its mapping is there (0 before and after),
  // how much of it GiveBack has given back, and whether the warm populates
  // no more; step_cv_ says the first step is populated, or the loop over.
  std::mutex give_mu_;
  std::condition_variable step_cv_;
  std::uintptr_t steps_ = 0;       // guarded by give_mu_
  std::size_t given_ = 0;          // guarded by give_mu_
  bool loop_over_ = false;         // it populates no more; give_mu_
  std::atomic<bool> done_{false};  // the thread has unmapped its memory
  std::chrono::steady_clock::time_point ended_;  // set before done_
  std::atomic<std::size_t> warmed_{0};
};

}  // namespace libshare

#endif  // LIBSHARE_HEAP_RESERVE_H_
