// OptionsCache: compiled share options by option text, so that many shares
// with one option string are parsed once and share one compiled value.
// Not thread-safe: one cache per thread or per batch.
#ifndef LIBSHARE_SRC_OPTIONS_CACHE_H_
#define LIBSHARE_SRC_OPTIONS_CACHE_H_

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "libshare/options.h"

namespace libshare {

class OptionsCache {
 public:
  // The compiled form of `text`; the error is ParseOptions' own.
  absl::StatusOr<std::shared_ptr<const ShareOptions>> Get(
      std::string_view text) {
    auto it = cache_.find(absl::string_view(text.data(), text.size()));
    if (it != cache_.end()) return it->second;
    absl::StatusOr<ShareOptions> parsed = ParseOptions(text);
    if (!parsed.ok()) return parsed.status();
    auto compiled = std::make_shared<const ShareOptions>(*std::move(parsed));
    cache_.emplace(std::string(text), compiled);
    return compiled;
  }

 private:
  absl::flat_hash_map<std::string, std::shared_ptr<const ShareOptions>> cache_;
};

}  // namespace libshare

#endif  // LIBSHARE_SRC_OPTIONS_CACHE_H_
