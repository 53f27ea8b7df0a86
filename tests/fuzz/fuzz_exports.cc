// Fuzz target: the exports(5) importer of sharectl (ImportExports).
// Properties: see fuzz_import.h.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<sharectl::SourceFile> files(1);
  files[0].name = "/etc/exports";
  files[0].text.assign(reinterpret_cast<const char*>(data), size);
  const std::string group = "imported";
  fuzz::CheckImportPlan(sharectl::ImportExports(files, group), group);
  return 0;
}
