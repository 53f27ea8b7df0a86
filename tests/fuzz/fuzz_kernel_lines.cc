// Fuzz target: the kernel channel text (sharemgrd/kernel/line_format.h).
//
// Input: one line as the kernel could write it to a cache channel.
// Properties: SplitLine never crashes; the fields it returns, written back
// with LineWriter (text for each), split again to the same fields; every
// upcall parser either refuses the line or returns fields that, formatted
// into a downcall, split back to the same key; a parsed fsid decodes; the
// export_features and filehandle readers never crash.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_check.h"
#include "kernel/channel.h"
#include "kernel/export_entry.h"
#include "kernel/fsid.h"
#include "kernel/line_format.h"

namespace k = sharemgrd::kernel;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string line(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<std::vector<std::string>> fields = k::SplitLine(line);
  if (fields.ok()) {
    k::LineWriter w;
    for (const std::string& f : *fields) {
      if (!f.empty()) w.Text(f);
    }
    std::vector<std::string> nonempty;
    for (const std::string& f : *fields) {
      if (!f.empty()) nonempty.push_back(f);
    }
    absl::StatusOr<std::vector<std::string>> again =
        k::SplitLine(std::move(w).Finish());
    FUZZ_CHECK(again.ok(), "a written line does not split");
    FUZZ_CHECK(*again == nonempty, "fields changed through LineWriter");
  }
  if (auto ip = k::ParseIpUpcall(line); ip.ok() && !ip->cls.empty()) {
    auto back = k::SplitLine(
        k::IpDowncall(ip->cls, ip->address_text, 1, "$" + ip->address_text));
    FUZZ_CHECK(back.ok() && back->size() == 4, "ip downcall does not split");
    FUZZ_CHECK((*back)[1] == ip->address_text, "ip address changed");
  }
  if (auto fh = k::ParseFhUpcall(line); fh.ok() && !fh->domain.empty()) {
    FUZZ_CHECK(
        static_cast<int>(fh->fsid.size()) == k::FsidLength(fh->fsid_type),
        "fsid length does not match its type");
    FUZZ_CHECK(k::DecodeFsid(fh->fsid_type, fh->fsid).ok(),
               "a parsed fsid does not decode");
    auto back = k::SplitLine(
        k::FhDowncall(fh->domain, fh->fsid_type, fh->fsid, 1, "/"));
    FUZZ_CHECK(back.ok() && back->size() == 5 && (*back)[2] == fh->fsid,
               "fh downcall does not split back");
  }
  if (auto ex = k::ParseExportUpcall(line);
      ex.ok() && !ex->domain.empty() && !ex->path.empty()) {
    auto back = k::SplitLine(
        k::ExportDowncall(ex->domain, ex->path, 1, k::ExportEntry{}));
    FUZZ_CHECK(back.ok() && back->size() == 7 && (*back)[1] == ex->path,
               "export downcall does not split back");
  }
  (void)k::ParseGidUpcall(line);
  (void)k::ParseExportFeatures(line);
  (void)k::ParseFileHandleReply(line);
  return 0;
}
