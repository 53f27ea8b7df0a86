// cluster_follow: how long after a change commits on one head another
// head serves it (issue 46's benchmark; bench/cluster_bench.sh runs it).
//
//   cluster_follow --a SOCK --b SOCK --dir DIR --size N --changes K
//
// Makes N folders under DIR and, K times, adds them all in one batch on
// head A, then removes them all in one batch (2K changes of N
// operations). Each change's time is from A's reply until head B's
// generation (its STATS, polled every 100 us through one connection)
// reaches the generation A's reply names. Prints one JSON line: the
// commit times on A (p50, p99) and the visibility on B (p50, p99, max),
// in ms.
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "libshare/batch.h"
#include "libshare/client.h"

namespace {

using Clock = std::chrono::steady_clock;

double Ms(Clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

double Pct(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>((v.size() - 1) * p / 100)];
}

int Usage() {
  std::fprintf(stderr,
               "usage: cluster_follow --a SOCK --b SOCK --dir DIR --size N "
               "--changes K [--group G]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string a_sock, b_sock, dir, group = "bench";
  long size = 0, changes = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--a") a_sock = v;
    else if (k == "--b") b_sock = v;
    else if (k == "--dir") dir = v;
    else if (k == "--size") size = std::atol(v.c_str());
    else if (k == "--changes") changes = std::atol(v.c_str());
    else if (k == "--group") group = v;
    else return Usage();
  }
  if (a_sock.empty() || b_sock.empty() || dir.empty() || size < 1 ||
      changes < 1) {
    return Usage();
  }
  auto a = libshare::Client::Connect(a_sock);
  auto b = libshare::Client::Connect(b_sock);
  if (!a.ok() || !b.ok()) {
    std::fprintf(stderr, "cluster_follow: cannot connect: %s\n",
                 std::string((a.ok() ? b.status() : a.status()).message())
                     .c_str());
    return 1;
  }
  libshare::Batch add, remove;
  for (long i = 0; i < size; ++i) {
    std::string p = dir + "/s" + std::to_string(i);
    ::mkdir(p.c_str(), 0755);
    libshare::Operation op;
    op.type = libshare::Operation::Type::kAddShare;
    op.path = p;
    op.group = group;
    add.ops.push_back(op);
    op.type = libshare::Operation::Type::kRemoveShare;
    op.group.clear();
    remove.ops.push_back(op);
  }
  std::vector<double> commit, visible;
  for (long k = 0; k < 2 * changes; ++k) {
    const libshare::Batch& batch = k % 2 == 0 ? add : remove;
    const Clock::time_point t0 = Clock::now();
    auto r = (*a)->Apply(batch);
    const Clock::time_point t1 = Clock::now();
    if (!r.ok() || !r->ok()) {
      std::fprintf(stderr, "cluster_follow: change %ld refused: %s%s\n", k,
                   r.ok() ? r->commit_error.c_str()
                          : std::string(r.status().message()).c_str(),
                   r.ok() && !r->errors.empty() ? r->errors[0].message.c_str()
                                                : "");
      return 1;
    }
    commit.push_back(Ms(t1 - t0));
    for (;;) {
      auto st = (*b)->Stats();
      if (!st.ok()) {
        std::fprintf(stderr, "cluster_follow: head b: %s\n",
                     std::string(st.status().message()).c_str());
        return 1;
      }
      if (st->generation >= r->generation) break;
      if (Clock::now() - t1 > std::chrono::seconds(30)) {
        std::fprintf(stderr, "cluster_follow: head b not at %llu after 30 s\n",
                     static_cast<unsigned long long>(r->generation));
        return 1;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    visible.push_back(Ms(Clock::now() - t1));
  }
  std::printf(
      "{\"size\":%ld,\"changes\":%zu,\"commit_p50_ms\":%.2f,"
      "\"commit_p99_ms\":%.2f,\"visible_p50_ms\":%.2f,\"visible_p99_ms\":%.2f,"
      "\"visible_max_ms\":%.2f}\n",
      size, visible.size(), Pct(commit, 50), Pct(commit, 99),
      Pct(visible, 50), Pct(visible, 99), Pct(visible, 100));
  return 0;
}
