// Fuzz target: the exports(5) importer of libshare (ImportExports).
// Properties: see fuzz_import.h; and the options of every planned share
// parse (the importer writes them itself, unlike dfstab's, which are
// copied as written), so an accepted import never fails at the daemon for
// its options.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_import.h"
#include "libshare/options.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<libshare::SourceFile> files(1);
  files[0].name = "/etc/exports";
  files[0].text.assign(reinterpret_cast<const char*>(data), size);
  const std::string group = "imported";
  const libshare::ImportPlan plan = libshare::ImportExports(files, group);
  fuzz::CheckImportPlan(plan, group);
  for (const libshare::Operation& op : plan.ops) {
    absl::StatusOr<libshare::ShareOptions> parsed =
        libshare::ParseOptions(op.options);
    FUZZ_CHECK(parsed.ok(),
               "imported options do not parse: " + fuzz::ShowOperation(op) +
                   ": " + std::string(parsed.status().message()));
  }
  return 0;
}
