// Fuzz target: the Solaris dfstab importer of libshare (ImportDfstab).
// Properties: see fuzz_import.h.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<libshare::SourceFile> files(1);
  files[0].name = "/etc/dfs/dfstab";
  files[0].text.assign(reinterpret_cast<const char*>(data), size);
  const std::string group = "imported";
  fuzz::CheckImportPlan(libshare::ImportDfstab(files, group), group);
  return 0;
}
