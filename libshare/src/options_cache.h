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

}  // namespace libshare

#endif  // LIBSHARE_SRC_OPTIONS_CACHE_H_
