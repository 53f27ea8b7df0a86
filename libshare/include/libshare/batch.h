// A batch: an ordered list of share-table changes applied as one
// transaction (all or nothing). Plain values; not synchronized.
#ifndef LIBSHARE_BATCH_H_
#define LIBSHARE_BATCH_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "libshare/text.h"

namespace libshare {

struct Operation {
  enum class Type : uint8_t {
    kCreateGroup,   // group, options (group defaults)
    kDeleteGroup,   // group, force (-f: also remove its shares)
    kEnableGroup,   // group
    kDisableGroup,  // group
    kAddShare,      // path, group, options ("" inherits), description,
                    // resource
    kRemoveShare,   // path, group ("" = any group)
    kMoveShare,     // path, group (destination)
    kSetOptions,    // group, options; with path: that share's own options
                    // ("" returns the share to its group's defaults)
    // path, group ("" = any group); each field whose set_* flag is true:
    // options (own text, "" inherits all), description, resource. The
    // share keeps its id.
    kModifyShare = 8,
    // group, options = one property name ("nosuid", "rw", "sec=krb5");
    // with path: removed from that share's own options ("all": every one,
    // the share inherits all), else from the group's. Refused if it is
    // not set there, or if removing it would open the group read-write to
    // every client.
    kUnsetOption = 9,
    // group, path: marks the group as managed by the exports file `path`
    // ("" clears the mark). Only the daemon's own batches carry it (the
    // management protocol refuses it).
    kManageGroup = 10,
  };
  Type type = Type::kCreateGroup;
  // Text (text.h): read as a std::string_view, assigned from any string.
  Text group;
  Text path;
  Text options;
  Text description;
  Text resource;
  bool force = false;
  // kModifyShare: which fields it changes.
  bool set_options = false;
  bool set_description = false;
  bool set_resource = false;
  // kAddShare: the file-system identity to record for the share ("uuid:"
  // and 32 hex digits: an import's uuid=, or a cluster's change record);
  // "" records the one its file system has when the batch is applied.
  // The kernel mode answers with the recorded identity (sharemgrd(8)).
  Text fs_identity{};
};

// Every text field of `op` is free of NUL bytes. The management protocol
// carries C strings, so text after a NUL would be dropped without a word
// (`-o "rw\0,none=HOST"` would arrive as "rw"); senders refuse it first.
// The error names the field: `description (-d) contains a NUL byte`.
[[nodiscard]] absl::Status CheckOperationText(const Operation& op);

// "create", "delete", "enable", "disable", "add-share", "remove-share",
// "move-share", "set", "set-share", "unset": the sharectl command that makes
// the operation.
std::string_view OperationName(Operation::Type t);

// The sharectl command words that make `op` ("add-share", "-o", "rw",
// "-s", "/export/a", "homes"): what `sharectl batch` and `dump` write and
// what the daemon's audit log quotes. kManageGroup gives its name and
// group only, "release GROUP" when it clears the mark (it is never in a
// batch file).
std::vector<std::string> OperationWords(const Operation& op);

struct Batch {
  std::vector<Operation> ops;
  // The exports file this batch comes from (sharemgrd --follow-exports), or
  // "" for a batch by hand. A batch may change the shares, options or
  // existence of a managed group only if it comes from the group's file:
  // any other operation on it is refused with a message naming the file
  // (enabling and disabling stay allowed). Not carried by the protocol.
  std::string manager;
  // Validate only: every operation is checked against the live table as
  // for a real batch (same errors), then nothing is committed or changed;
  // the result's `applied` is 0 and its generation the current one.
  bool dry_run = false;
  // What made the batch, for the daemon's audit log: "batch FILE",
  // "import --exports FILE", "add-share". Free text; may be empty.
  std::string origin;
};

// Why operation `index` (0-based, in batch order) was refused.
struct OperationError {
  std::size_t index = 0;
  std::string
      message;  // names the culprit: "/export/a: path is inside share /export"
};

// One share a committed batch touched, as the batch left it. Group
// operations are expanded to the shares of the group: enabling, disabling
// or changing a group's options reports each of its shares (options: those
// that inherit them). The sharetab view, the EXPORT cache and the kernel
// pusher all read this one list rather than rediscover it.
struct ShareChange {
  enum class Kind : uint8_t {
    kAdded,    // not in the table before the batch
    kRemoved,  // not in the table after it
    kChanged,  // options, group, or its group's state changed
  };
  Kind kind = Kind::kChanged;
  std::string path;
  uint64_t id = 0;      // the share's id (for kRemoved, the id it had)
  bool active = false;  // exported after the batch (kRemoved: false)
};

// "added", "removed" or "changed" (sharectl changes, CHANGES_SINCE).
std::string_view ShareChangeKindName(ShareChange::Kind k);

struct BatchResult {
  // Empty when the batch committed.
  std::vector<OperationError> errors;
  // Set when the batch was valid but could not be committed (disk full,
  // I/O error); nothing changed.
  std::string commit_error;
  // With commit_error: the table's engine (several heads, sharemgrd
  // --store postgresql://...) could not be reached; this head serves its
  // copy and takes no change until it is back (sharectl exits 3).
  bool store_unreachable = false;
  uint64_t generation = 0;  // table generation after the batch
  std::size_t applied = 0;  // operations applied (0 unless committed)
  // The batch committed and changed the table: `generation` is its own.
  // False for one whose every operation changed nothing (enabling an
  // enabled group, setting the options a share has): it keeps the
  // generation before it. Set by the Catalog; the client API leaves it
  // false (as it leaves `changes` empty).
  bool changed = false;
  // The shares the batch touched, each once, in path order (empty unless
  // committed). A share removed and added again in one batch is kChanged.
  std::vector<ShareChange> changes;
  // False when the batch committed but its change list could not be built
  // (out of memory): readers of `changes` must then assume every share
  // may have changed.
  bool changes_complete = true;
  // Where the time of a committed batch went in the catalog, in ms (the
  // daemon logs it for big batches): validation (with the directory
  // checks and, for a big batch alone, the store writes that overlap it),
  // the commit (the remaining writes and the sync), linking into the
  // table, and the change list. A group commit's batches share them.
  struct Times {
    double validate_ms = 0;
    double commit_ms = 0;
    double link_ms = 0;
    double changes_ms = 0;
  };
  Times times;

  bool ok() const { return errors.empty() && commit_error.empty(); }
};

}  // namespace libshare

#endif  // LIBSHARE_BATCH_H_
