// OptionsCache: compiled share options by option text, so that many shares
// with one option string are parsed once and share one compiled value.
// Not thread-safe: one cache per thread or per batch.
//
// std::unordered_map, not absl::flat_hash_map: Abseil 20220623's
// raw_hash_set is not exception-safe (after a failed allocation in a
// resize its destructor frees a static sentinel or a stale pointer), and a
// batch must survive std::bad_alloc with a clean error (found by
// tests/reliability alloc_failure). Keys view texts_, so a lookup by
// string_view allocates nothing.
#ifndef LIBSHARE_SRC_OPTIONS_CACHE_H_
#define LIBSHARE_SRC_OPTIONS_CACHE_H_

#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "absl/status/statusor.h"
#include "libshare/options.h"
#include "libshare/share_table.h"

namespace libshare {

class OptionsCache {
 public:
  // The compiled form of `text`; the error is ParseOptions' own.
  absl::StatusOr<std::shared_ptr<const ShareOptions>> Get(
      std::string_view text) {
    auto it = cache_.find(text);
    if (it != cache_.end()) return it->second;
    absl::StatusOr<ShareOptions> parsed = ParseOptions(text);
    if (!parsed.ok()) return parsed.status();
    auto compiled = std::make_shared<const ShareOptions>(*std::move(parsed));
    // If emplace throws, texts_ keeps an unused string: harmless.
    const std::string& key = texts_.emplace_back(text);
    cache_.emplace(std::string_view(key), compiled);
    return compiled;
  }

 private:
  // Deque elements never move, so the views into them stay valid.
  std::deque<std::string> texts_;
  std::unordered_map<std::string_view, std::shared_ptr<const ShareOptions>>
      cache_;
};

// InheritedCache: a share's effective options by (group text, own text),
// so that 15,000 shares with one own text in one group merge once and share
// one value. Not thread-safe: one cache per thread or per batch.
class InheritedCache {
 public:
  // The effective options of a share whose own options are `own_text`
  // (compiled `own`, not null) in a group with options `group_text`
  // (compiled `group`). With `replaces_group` (a share stored before
  // per-property inheritance) the own options alone.
  std::shared_ptr<const InheritedOptions> Get(
      std::string_view group_text, const ShareOptions& group,
      std::string_view own_text, const std::shared_ptr<const ShareOptions>& own,
      bool replaces_group) {
    std::string key;
    key.reserve(group_text.size() + own_text.size() + 2);
    key.push_back(replaces_group ? 'r' : 'i');
    key.append(group_text);
    key.push_back('\0');
    key.append(own_text);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    auto out = std::make_shared<InheritedOptions>();
    ShareOptions merged = replaces_group ? *own : InheritOptions(group, *own);
    if (merged == *own) {
      out->text = std::string(own_text);
      out->compiled = own;
    } else {
      out->text = merged.Canonical();
      out->compiled = std::make_shared<const ShareOptions>(std::move(merged));
    }
    std::shared_ptr<const InheritedOptions> result = std::move(out);
    cache_.emplace(std::move(key), result);
    return result;
  }

 private:
  std::unordered_map<std::string, std::shared_ptr<const InheritedOptions>>
      cache_;
};

}  // namespace libshare

#endif  // LIBSHARE_SRC_OPTIONS_CACHE_H_
