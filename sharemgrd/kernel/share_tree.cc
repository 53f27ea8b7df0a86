#include "share_tree.h"

#include <deque>

namespace sharemgrd::kernel {

std::vector<std::string> ShareTree::Ancestors(const std::string& path) {
  std::vector<std::string> out;
  if (path.empty() || path == "/") return out;
  std::string p = path;
  while (true) {
    const size_t slash = p.rfind('/');
    if (slash == std::string::npos) break;
    p.resize(slash == 0 ? 1 : slash);
    out.push_back(p);
    if (p == "/") break;
  }
  return out;
}

std::vector<std::string> ShareTree::Add(const std::string& share_path) {
  std::vector<std::string> created;
  absl::MutexLock lock(&mu_);
  Node& n = nodes_[share_path];
  if (!n.share) ++shares_;
  n.share = true;
  std::string child = share_path;
  for (const std::string& up : Ancestors(share_path)) {
    auto [it, inserted] = nodes_.try_emplace(up);
    if (inserted) created.push_back(up);
    it->second.children.insert(child);
    if (!inserted) break;  // the rest of the chain is already linked
    child = up;
  }
  return created;
}

std::vector<std::string> ShareTree::Remove(const std::string& share_path) {
  std::vector<std::string> gone;
  absl::MutexLock lock(&mu_);
  auto it = nodes_.find(share_path);
  if (it == nodes_.end() || !it->second.share) return gone;
  it->second.share = false;
  --shares_;
  std::string child = share_path;
  while (true) {
    auto c = nodes_.find(child);
    if (c == nodes_.end() || c->second.share || !c->second.children.empty()) {
      break;
    }
    nodes_.erase(c);
    if (child != share_path) gone.push_back(child);
    if (child == "/") break;
    const std::vector<std::string> ups = Ancestors(child);
    auto p = nodes_.find(ups.front());
    if (p == nodes_.end()) break;
    p->second.children.erase(child);
    child = ups.front();
  }
  return gone;
}

bool ShareTree::IsShare(const std::string& path) const {
  absl::MutexLock lock(&mu_);
  auto it = nodes_.find(path);
  return it != nodes_.end() && it->second.share;
}

bool ShareTree::IsAbove(const std::string& path) const {
  absl::MutexLock lock(&mu_);
  auto it = nodes_.find(path);
  return it != nodes_.end() && !it->second.children.empty();
}

bool ShareTree::AnyShareBelow(
    const std::string& dir,
    const std::function<bool(const std::string&)>& fn) const {
  // Children are copied a few at a time, so a directory with 15,000
  // shares below costs a handful of copies when one of the first is
  // visible, and no lock is held while fn runs.
  constexpr size_t kChunk = 32;
  std::deque<std::string> todo{dir};
  while (!todo.empty()) {
    const std::string d = std::move(todo.front());
    todo.pop_front();
    std::string after;
    bool first = true;
    while (true) {
      std::vector<std::pair<std::string, bool>> children;
      {
        absl::MutexLock lock(&mu_);
        auto it = nodes_.find(d);
        if (it == nodes_.end()) break;
        const absl::btree_set<std::string>& c = it->second.children;
        auto ci = first ? c.begin() : c.upper_bound(after);
        for (; ci != c.end() && children.size() < kChunk; ++ci) {
          auto n = nodes_.find(*ci);
          if (n == nodes_.end()) continue;
          children.emplace_back(*ci, n->second.share);
        }
      }
      if (children.empty()) break;
      first = false;
      after = children.back().first;
      for (auto& [c, share] : children) {
        if (share && fn(c)) return true;
        todo.push_back(std::move(c));
      }
    }
  }
  return false;
}

std::size_t ShareTree::share_count() const {
  absl::MutexLock lock(&mu_);
  return shares_;
}

}  // namespace sharemgrd::kernel
