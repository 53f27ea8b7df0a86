#include "libshare/batch.h"

#include <string>

#include "gtest/gtest.h"

namespace libshare {
namespace {

Operation AddShare() {
  Operation op;
  op.type = Operation::Type::kAddShare;
  op.group = "g";
  op.path = "/a";
  op.options = "rw";
  op.description = "d";
  op.resource = "r";
  return op;
}

TEST(CheckOperationText, PlainTextPasses) {
  EXPECT_TRUE(CheckOperationText(AddShare()).ok());
}

TEST(CheckOperationText, NulInOptionsIsRefusedNamingTheField) {
  Operation op = AddShare();
  op.options = std::string("rw\0,none=@127.0.0.9/32", 23);
  EXPECT_EQ(CheckOperationText(op).message(),
            "options (-o) contains a NUL byte");
}

TEST(CheckOperationText, NulInDescriptionIsRefusedNamingTheField) {
  Operation op = AddShare();
  op.description = std::string("a\0b", 3);
  EXPECT_EQ(CheckOperationText(op).message(),
            "description (-d) contains a NUL byte");
}

TEST(CheckOperationText, NulInResourceIsRefusedNamingTheField) {
  Operation op = AddShare();
  op.resource = std::string("\0", 1);
  EXPECT_EQ(CheckOperationText(op).message(),
            "resource (-r) contains a NUL byte");
}

}  // namespace
}  // namespace libshare
