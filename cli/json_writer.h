// JsonWriter: builds one JSON document in memory, for sharectl's --json
// output. Strings are escaped per RFC 8259; bytes that are not valid UTF-8
// become U+FFFD so the document always parses. Not thread-safe.
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

  // The document so far; complete once every Begin has its End.
  const std::string& str() const { return out_; }

 private:
  void BeforeValue();

  std::string out_;
  // One entry per open container: true once it holds a member.
  std::vector<bool> has_member_;
  bool after_key_ = false;
};

// Appends `s` as a quoted, escaped JSON string.
void AppendJsonString(std::string_view s, std::string* out);

}  // namespace sharectl

#endif  // SHARECTL_JSON_WRITER_H_
