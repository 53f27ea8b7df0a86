// The checks common to the exports(5) and dfstab importer fuzz targets.
#ifndef TESTS_FUZZ_FUZZ_IMPORT_H_
#define TESTS_FUZZ_FUZZ_IMPORT_H_

#include <string>

#include "libshare/import.h"
#include "libshare/path.h"
#include "operation_words.h"

namespace fuzz {

// Every planned operation is an add-share into `group` of a valid path
// with an origin, and its dry-run batch line reads back as the same
// operation; every problem says where and what. (Options are not checked:
// dfstab options are copied as written and the daemon refuses bad ones,
// naming the origin line.)
inline void CheckImportPlan(const libshare::ImportPlan& plan,
                            const std::string& group) {
  FUZZ_CHECK(plan.origins.size() == plan.ops.size(),
             std::to_string(plan.ops.size()) + " operations but " +
                 std::to_string(plan.origins.size()) + " origins");
  for (const libshare::Operation& op : plan.ops) {
    FUZZ_CHECK(
        op.type == libshare::Operation::Type::kAddShare && op.group == group,
        "unexpected operation " + ShowOperation(op));
    absl::Status st = libshare::ValidatePath(op.path);
    FUZZ_CHECK(st.ok(), "import plans invalid path: " + ShowOperation(op) +
                            ": " + std::string(st.message()));
    CheckOperationRoundTrip(op);
  }
  for (const libshare::ImportProblem& p : plan.problems) {
    FUZZ_CHECK(!p.where.empty() && !p.message.empty(),
               "problem without place or message: \"" + Escape(p.where) +
                   "\" \"" + Escape(p.message) + "\"");
  }
}

}  // namespace fuzz

#endif  // TESTS_FUZZ_FUZZ_IMPORT_H_
