#include "json_writer.h"

#include <cmath>
#include <limits>
#include <string>

#include "gtest/gtest.h"

namespace sharectl {
namespace {

std::string Json(std::string_view s) {
  std::string out;
  AppendJsonString(s, &out);
  return out;
}

TEST(JsonWriterTest, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(Json("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(Json("\n\t\r\b\f"), R"("\n\t\r\b\f")");
  EXPECT_EQ(Json(std::string("\x01\x1f\x7f", 3)), R"("\u0001\u001f\u007f")");
  EXPECT_EQ(Json(std::string("a\0b", 3)), R"("a\u0000b")");
}

TEST(JsonWriterTest, KeepsValidUtf8) {
  EXPECT_EQ(Json("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
            "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
}

TEST(JsonWriterTest, ReplacesInvalidUtf8) {
  EXPECT_EQ(Json("a\xff"), R"("a\ufffd")");
  EXPECT_EQ(Json("\xc3"), R"("\ufffd")");                      // truncated
  EXPECT_EQ(Json("\xc0\xaf"), R"("\ufffd\ufffd")");            // overlong
  EXPECT_EQ(Json("\xed\xa0\x80"), R"("\ufffd\ufffd\ufffd")");  // surrogate
}

TEST(JsonWriterTest, StringMemberAddsExactBytesOnlyForInvalidUtf8) {
  JsonWriter w;
  w.BeginObject();
  w.StringMember("path", "/export/Jos\xe9");  // Latin-1 e-acute
  w.StringMember("group", "caf\xc3\xa9");     // valid UTF-8: no companion
  w.EndObject();
  EXPECT_EQ(w.str(),
            R"({"path":"/export/Jos\ufffd","path_b64":"L2V4cG9ydC9Kb3Pp",)"
            "\"group\":\"caf\xc3\xa9\"}");
}

TEST(JsonWriterTest, OptionalStringMemberIsNullWhenEmpty) {
  JsonWriter w;
  w.BeginObject();
  w.OptionalStringMember("resource", "");
  w.OptionalStringMember("description", "x");
  w.EndObject();
  EXPECT_EQ(w.str(), R"({"resource":null,"description":"x"})");
}

TEST(JsonWriterTest, SeparatesMembersAndNestsContainers) {
  JsonWriter w;
  w.BeginObject();
  w.Key("a");
  w.Int(-1);
  w.Key("b");
  w.BeginArray();
  w.Uint(1);
  w.Bool(true);
  w.Null();
  w.BeginObject();
  w.EndObject();
  w.EndArray();
  w.Key("c");
  w.String("x");
  w.EndObject();
  EXPECT_EQ(w.str(), R"({"a":-1,"b":[1,true,null,{}],"c":"x"})");
}

TEST(JsonWriterTest, DoublesAreShortAndNonFiniteIsNull) {
  JsonWriter w;
  w.BeginArray();
  w.Double(0.1);
  w.Double(63.5);
  w.Double(2);
  w.Double(std::numeric_limits<double>::quiet_NaN());
  w.Double(std::numeric_limits<double>::infinity());
  w.EndArray();
  EXPECT_EQ(w.str(), "[0.1,63.5,2,null,null]");
}

}  // namespace
}  // namespace sharectl
