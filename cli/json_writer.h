// JsonWriter: builds one JSON document in memory, for sharectl's --json
// output. Strings are escaped per RFC 8259; bytes that are not valid UTF-8
// become U+FFFD so the document always parses. Text that may hold such
// bytes (a path, a description, a message naming them) is written with
// StringMember, which then adds a member KEY_b64 holding the exact bytes
// in base64 (RFC 4648), so that any path round-trips (sharectl(8)).
// Not thread-safe.
//
//   JsonWriter w;
//   w.BeginObject();
//   w.Key("access"); w.String("rw");
//   w.Key("root");   w.Bool(false);
//   w.EndObject();
//   std::cout << w.str() << "\n";
#ifndef SHARECTL_JSON_WRITER_H_
#define SHARECTL_JSON_WRITER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sharectl {

class JsonWriter {
 public:
  void BeginObject();
  void EndObject();
  void BeginArray();
  void EndArray();
  // Inside an object, names the next value.
  void Key(std::string_view key);
  void String(std::string_view s);
  void Int(int64_t v);
  void Uint(uint64_t v);
  // Non-finite values are written as null (JSON has no NaN).
  void Double(double v);
  void Bool(bool v);
  void Null();

  // Key(key) and String(s), and when `s` is not valid UTF-8 also the
  // member key + "_b64" with base64 of its bytes.
  void StringMember(std::string_view key, std::string_view s);
  // As StringMember, but null when `s` is empty (no value).
  void OptionalStringMember(std::string_view key, std::string_view s);

  // The document so far; complete once every Begin has its End.
  const std::string& str() const { return out_; }

 private:
  void BeforeValue();

  std::string out_;
  // One entry per open container: true once it holds a member.
  std::vector<bool> has_member_;
  bool after_key_ = false;
};

// True if `s` is valid UTF-8 (no overlong forms, surrogates or values
// past U+10FFFF).
bool IsValidUtf8(std::string_view s);

// Appends `s` as a quoted, escaped JSON string.
void AppendJsonString(std::string_view s, std::string* out);

}  // namespace sharectl

#endif  // SHARECTL_JSON_WRITER_H_
