// Fuzz target: the share_nfs option grammar (libshare::ParseOptions).
//
// Properties, beyond "no crash, no sanitizer report":
//  - an option string that parses has a Canonical() text that parses to an
//    equal value, and that text is a fixed point of Canonical();
//  - a refusal carries a message (errors must name the culprit);
//  - IpAddress::Parse: an address that parses prints (ToString) as text
//    that parses to the same address.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "fuzz_check.h"
#include "libshare/options.h"

namespace {

using fuzz::Escape;
using libshare::IpAddress;
using libshare::ParseOptions;
using libshare::SecFlavor;
using libshare::ShareOptions;

void CheckAddress(std::string_view text) {
  std::optional<IpAddress> a = IpAddress::Parse(text);
  if (!a) return;
  const std::string printed = a->ToString();
  std::optional<IpAddress> b = IpAddress::Parse(printed);
  FUZZ_CHECK(b.has_value(), "address \"" + Escape(text) + "\" prints as \"" +
                                Escape(printed) + "\" which does not parse");
  FUZZ_CHECK(*a == *b, "address \"" + Escape(text) + "\" prints as \"" +
                           Escape(printed) + "\" which parses differently");
  FUZZ_CHECK(a->InNetwork(*b, 128), "address not in its own /128");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  CheckAddress(text);

  absl::StatusOr<ShareOptions> parsed = ParseOptions(text);
  if (!parsed.ok()) {
    FUZZ_CHECK(!parsed.status().message().empty(),
               "refusal without a message for \"" + Escape(text) + "\"");
    return 0;
  }
  FUZZ_CHECK(!parsed->scopes.empty(), "no scope for \"" + Escape(text) + "\"");
  for (const auto& scope : parsed->scopes) {
    FUZZ_CHECK(!scope.flavors.empty(),
               "scope without flavors for \"" + Escape(text) + "\"");
  }

  const std::string canonical = parsed->Canonical();
  absl::StatusOr<ShareOptions> again = ParseOptions(canonical);
  FUZZ_CHECK(again.ok(), "\"" + Escape(text) + "\" has canonical form \"" +
                             Escape(canonical) + "\" which is refused: " +
                             std::string(again.status().message()));
  FUZZ_CHECK(*again == *parsed,
             "\"" + Escape(text) + "\" has canonical form \"" +
                 Escape(canonical) + "\" which parses to a different value");
  const std::string canonical2 = again->Canonical();
  FUZZ_CHECK(canonical2 == canonical, "canonical form not a fixed point: \"" +
                                          Escape(canonical) + "\" -> \"" +
                                          Escape(canonical2) + "\"");

  // The readers the access checks use must cope with any parsed value.
  (void)parsed->RpcFlavors();
  (void)parsed->NeedsNames();
  for (SecFlavor f : {SecFlavor::kSys, SecFlavor::kNone, SecFlavor::kDh,
                      SecFlavor::kKrb5, SecFlavor::kKrb5i, SecFlavor::kKrb5p}) {
    (void)parsed->ScopeFor(f);
  }
  return 0;
}
