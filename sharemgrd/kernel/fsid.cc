#include "fsid.h"

#include <arpa/inet.h>

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "line_format.h"

namespace sharemgrd::kernel {
namespace {

void Put32(std::string* out, uint32_t v) {
  char b[4];
  std::memcpy(b, &v, 4);
  out->append(b, 4);
}
void Put64(std::string* out, uint64_t v) {
  char b[8];
  std::memcpy(b, &v, 8);
  out->append(b, 8);
}
uint32_t Get32(std::string_view s, size_t at) {
  uint32_t v;
  std::memcpy(&v, s.data() + at, 4);
  return v;
}
uint32_t UuidWord(const Uuid& u, int i) {
  uint32_t v;
  std::memcpy(&v, u.data() + 4 * i, 4);
  return v;
}

}  // namespace

std::optional<std::string> EncodeFsid(int type, const FsIdentity& id) {
  std::string out;
  const uint32_t ino32 = static_cast<uint32_t>(id.inode);
  switch (type) {
    case kFsidDev:
      if (id.major > 255 || id.minor > 255) return std::nullopt;
      Put32(&out, htonl((id.major << 16) | id.minor));
      Put32(&out, ino32);
      return out;
    case kFsidMajorMinor:
      Put32(&out, htonl(id.major));
      Put32(&out, htonl(id.minor));
      Put32(&out, ino32);
      return out;
    case kFsidEncodeDev:
      Put32(&out,
            (id.minor & 0xff) | (id.major << 8) | ((id.minor & ~0xffu) << 12));
      Put32(&out, ino32);
      return out;
    case kFsidUuid4Inum:
      if (!id.uuid) return std::nullopt;
      Put32(&out, ino32);
      Put32(&out, UuidWord(*id.uuid, 0) ^ UuidWord(*id.uuid, 1) ^
                      UuidWord(*id.uuid, 2) ^ UuidWord(*id.uuid, 3));
      return out;
    case kFsidUuid8:
      if (!id.uuid) return std::nullopt;
      Put32(&out, UuidWord(*id.uuid, 0) ^ UuidWord(*id.uuid, 2));
      Put32(&out, UuidWord(*id.uuid, 1) ^ UuidWord(*id.uuid, 3));
      return out;
    case kFsidUuid16:
      if (!id.uuid) return std::nullopt;
      out.assign(reinterpret_cast<const char*>(id.uuid->data()), 16);
      return out;
    case kFsidUuid16Inum:
      if (!id.uuid) return std::nullopt;
      Put64(&out, id.inode);
      out.append(reinterpret_cast<const char*>(id.uuid->data()), 16);
      return out;
    default:
      return std::nullopt;
  }
}

std::string FsidNumBytes(uint32_t n) {
  std::string out;
  Put32(&out, n);
  return out;
}

std::vector<FsidKey> FsidKeys(const FsIdentity& id) {
  std::vector<FsidKey> keys;
  for (int type : {kFsidDev, kFsidMajorMinor, kFsidEncodeDev, kFsidUuid4Inum,
                   kFsidUuid16Inum, kFsidUuid8, kFsidUuid16}) {
    if ((type == kFsidUuid8 || type == kFsidUuid16) && !id.fs_root) continue;
    std::optional<std::string> b = EncodeFsid(type, id);
    if (b.has_value()) keys.push_back({type, *std::move(b)});
  }
  if (id.pseudo_uuid.has_value() && id.pseudo_uuid != id.uuid) {
    FsIdentity pseudo = id;
    pseudo.uuid = id.pseudo_uuid;
    for (int type : {kFsidUuid4Inum, kFsidUuid16Inum, kFsidUuid8,
                     kFsidUuid16}) {
      if ((type == kFsidUuid8 || type == kFsidUuid16) && !id.fs_root) {
        continue;
      }
      std::optional<std::string> b = EncodeFsid(type, pseudo);
      if (b.has_value()) keys.push_back({type, *std::move(b)});
    }
  }
  return keys;
}

Uuid UuidFromStatfsFsid(uint32_t word0, uint32_t word1) {
  Uuid u{};
  for (int i = 0; i < 4; ++i) {
    u[i] = static_cast<uint8_t>(word0 >> (24 - 8 * i));
    u[4 + i] = static_cast<uint8_t>(word1 >> (24 - 8 * i));
  }
  return u;
}

absl::StatusOr<DecodedFsid> DecodeFsid(int type, std::string_view bytes) {
  if (FsidLength(type) == 0) {
    return absl::InvalidArgumentError(absl::StrCat("unknown fsid type ", type));
  }
  if (static_cast<int>(bytes.size()) != FsidLength(type)) {
    return absl::InvalidArgumentError(
        absl::StrCat("fsid of type ", type, " has ", bytes.size(),
                     " bytes, not ", FsidLength(type)));
  }
  DecodedFsid d;
  d.type = type;
  switch (type) {
    case kFsidDev: {
      const uint32_t dev = ntohl(Get32(bytes, 0));
      d.major = dev >> 16;
      d.minor = dev & 0xffff;
      d.inode = Get32(bytes, 4);
      break;
    }
    case kFsidNum:
      d.number = Get32(bytes, 0);
      break;
    case kFsidMajorMinor:
      d.major = ntohl(Get32(bytes, 0));
      d.minor = ntohl(Get32(bytes, 4));
      d.inode = Get32(bytes, 8);
      break;
    case kFsidEncodeDev: {
      const uint32_t dev = Get32(bytes, 0);
      d.major = (dev & 0xfff00) >> 8;
      d.minor = (dev & 0xff) | ((dev >> 12) & 0xfff00);
      d.inode = Get32(bytes, 4);
      break;
    }
    case kFsidUuid4Inum:
      d.inode = Get32(bytes, 0);
      d.uuid_part = std::string(bytes.substr(4));
      break;
    case kFsidUuid8:
    case kFsidUuid16:
      d.uuid_part = std::string(bytes);
      break;
    case kFsidUuid16Inum:
      std::memcpy(&d.inode, bytes.data(), 8);
      d.uuid_part = std::string(bytes.substr(8));
      break;
  }
  return d;
}

std::string FsidMapKey(int type, std::string_view bytes) {
  std::string k(1, static_cast<char>(type));
  k.append(bytes.data(), bytes.size());
  return k;
}

}  // namespace sharemgrd::kernel
