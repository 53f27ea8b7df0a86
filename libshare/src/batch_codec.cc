#include "batch_codec.h"

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace libshare {
namespace internal {
namespace {

constexpr std::string_view kMagic = "SMB1";
// kFsIdentity: an add-share's recorded identity follows its five texts
// (records written before identities were recorded have no such flag).
constexpr uint8_t kForce = 1, kSetOptions = 2, kSetDescription = 4,
                  kSetResource = 8, kFsIdentity = 16;
constexpr uint8_t kLastType = static_cast<uint8_t>(Operation::Type::kManageGroup);

void PutU32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
void PutText(std::string& out, std::string_view t) {
  PutU32(out, static_cast<uint32_t>(t.size()));
  out.append(t);
}

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool U8(uint8_t* v) {
    if (pos_ + 1 > in_.size()) return false;
    *v = static_cast<uint8_t>(in_[pos_++]);
    return true;
  }
  bool U32(uint32_t* v) {
    if (pos_ + 4 > in_.size()) return false;
    *v = 0;
    for (int i = 0; i < 4; ++i)
      *v |= uint32_t{static_cast<uint8_t>(in_[pos_ + i])} << (8 * i);
    pos_ += 4;
    return true;
  }
  // Into a std::string or a libshare::Text.
  template <typename T>
  bool Str(T* t) {
    uint32_t n = 0;
    if (!U32(&n) || n > in_.size() - pos_) return false;
    *t = in_.substr(pos_, n);
    pos_ += n;
    return true;
  }
  std::size_t pos() const { return pos_; }
  bool done() const { return pos_ == in_.size(); }

 private:
  std::string_view in_;
  std::size_t pos_ = 0;
};

}  // namespace

std::string EncodeBatch(const Batch& batch, std::size_t begin,
                        std::size_t end, std::string_view manager,
                        std::string_view origin,
                        const std::function<std::string_view(std::size_t)>&
                            identity_of) {
  std::string out(kMagic);
  PutText(out, manager);
  PutText(out, origin);
  PutU32(out, static_cast<uint32_t>(end - begin));
  for (std::size_t i = begin; i < end; ++i) {
    const Operation& op = batch.ops[i];
    const std::string_view fs_identity =
        op.type != Operation::Type::kAddShare ? std::string_view()
        : identity_of                          ? identity_of(i)
                                               : std::string_view(op.fs_identity);
    out.push_back(static_cast<char>(op.type));
    out.push_back(static_cast<char>((op.force ? kForce : 0) |
                                    (op.set_options ? kSetOptions : 0) |
                                    (op.set_description ? kSetDescription : 0) |
                                    (op.set_resource ? kSetResource : 0) |
                                    (fs_identity.empty() ? 0 : kFsIdentity)));
    PutText(out, op.group);
    PutText(out, op.path);
    PutText(out, op.options);
    PutText(out, op.description);
    PutText(out, op.resource);
    if (!fs_identity.empty()) PutText(out, fs_identity);
  }
  return out;
}

absl::StatusOr<Batch> DecodeBatch(std::string_view bytes) {
  Batch b;
  if (bytes.substr(0, kMagic.size()) != kMagic) {
    return absl::DataLossError("change record: not a batch (bad magic)");
  }
  Reader r(bytes.substr(kMagic.size()));
  auto bad = [&r](std::string_view what) {
    return absl::DataLossError(absl::StrCat("change record: ", std::string(what),
                                            " cut short or damaged at byte ",
                                            r.pos() + kMagic.size()));
  };
  uint32_t n = 0;
  if (!r.Str(&b.manager) || !r.Str(&b.origin) || !r.U32(&n)) {
    return bad("header");
  }
  // Each operation takes at least 22 bytes: no count may promise more.
  if (n > bytes.size() / 22) return bad("operation count");
  b.ops.resize(n);
  for (Operation& op : b.ops) {
    uint8_t type = 0, flags = 0;
    if (!r.U8(&type) || !r.U8(&flags) || type > kLastType) {
      return bad("operation");
    }
    op.type = static_cast<Operation::Type>(type);
    op.force = flags & kForce;
    op.set_options = flags & kSetOptions;
    op.set_description = flags & kSetDescription;
    op.set_resource = flags & kSetResource;
    if (!r.Str(&op.group) || !r.Str(&op.path) || !r.Str(&op.options) ||
        !r.Str(&op.description) || !r.Str(&op.resource) ||
        ((flags & kFsIdentity) != 0 && !r.Str(&op.fs_identity))) {
      return bad("operation text");
    }
  }
  if (!r.done()) return bad("end");
  return b;
}

}  // namespace internal
}  // namespace libshare
