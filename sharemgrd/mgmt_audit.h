// How the management service names callers and batches in the audit log
// (mgmt_service.cc): texts only, no state.
#ifndef SHAREMGRD_MGMT_AUDIT_H_
#define SHAREMGRD_MGMT_AUDIT_H_

#include <string>

#include "libshare/batch.h"
#include "rpc_server.h"

namespace sharemgrd {

// "uid 0 (root) pid 4242": who called, from SO_PEERCRED.
std::string Caller(const CallContext& ctx);

// One operation for the audit log, as sharectl words (libshare's
// OperationWords) with every value quoted ("\"" inside one escaped):
//   add-share -o "rw" -d "x" -s "/export/a" "homes"
std::string DescribeOperation(const libshare::Operation& op);

// "add-share 14990, create 1": operations counted by type, in type order.
std::string CountOperations(const libshare::Batch& batch);

}  // namespace sharemgrd

#endif  // SHAREMGRD_MGMT_AUDIT_H_
