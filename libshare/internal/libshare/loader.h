// Loader: fills a ShareTable from the Store at start-up, several groups at
// once.
//
// The rows are read in one sequential scan (per-group queries would make
// every thread read nearly every page when a group's rows are spread over
// the file) and sorted into their groups. Then each of N threads takes one
// group at a time: it parses and compiles the options (an option text
// shared by many shares is parsed once per thread), builds the Share
// objects, and links them into the table under a lock held only for the
// linking. The table is pre-sized from the share count so linking never
// rehashes. Device numbers come from the store: loading never stat()s share
// folders.
//
// Thread-safety: LoadShareTable must have the table to itself; nobody may
// write the store while it runs.
#ifndef LIBSHARE_LOADER_H_
#define LIBSHARE_LOADER_H_

#include "absl/status/statusor.h"
#include "libshare/catalog.h"
#include "libshare/share_table.h"
#include "libshare/store.h"

namespace libshare {

// Loads every group and share of `store` into `table`, which must be empty,
// with `threads` threads (at least 1; more than the number of groups is
// pointless). Every loaded share gets the table's generation, which is set
// to 1 if it was 0. The result is the same whatever `threads`. Fails if a
// stored option text does not parse (the error names the share or group),
// or if a share row breaks a rule add-share applies without the disk
// (path text, control characters in resource or description, a share
// inside another on the same stored device): the error names the row id,
// so a row written behind the daemon's back is never served.
[[nodiscard]] absl::StatusOr<LoadStats> LoadShareTable(Store& store,
                                                       int threads,
                                                       ShareTable* table);

}  // namespace libshare

#endif  // LIBSHARE_LOADER_H_
