#include "json_writer.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/escaping.h"

namespace sharectl {
namespace {

// Length of the valid UTF-8 sequence at s[i], or 0 if it is not valid
// (overlong forms, surrogates and values past U+10FFFF are invalid).
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = b(i);
  size_t len;
  uint32_t cp;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
    cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
      (cp >= 0xD800 && cp <= 0xDFFF)) {
    return 0;
  }
  return len;
}

}  // namespace

bool IsValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t len = Utf8SequenceLength(s, i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

void AppendJsonString(std::string_view s, std::string* out) {
  out->push_back('"');
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"':
        out->append("\\\"");
        ++i;
        continue;
      case '\\':
        out->append("\\\\");
        ++i;
        continue;
      case '\b':
        out->append("\\b");
        ++i;
        continue;
      case '\f':
        out->append("\\f");
        ++i;
        continue;
      case '\n':
        out->append("\\n");
        ++i;
        continue;
      case '\r':
        out->append("\\r");
        ++i;
        continue;
      case '\t':
        out->append("\\t");
        ++i;
        continue;
      default:
        break;
    }
    if (c < 0x20 || c == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out->append(buf);
      ++i;
      continue;
    }
    size_t len = Utf8SequenceLength(s, i);
    if (len == 0) {
      out->append("\\ufffd");
      ++i;
      continue;
    }
    out->append(s.substr(i, len));
    i += len;
  }
  out->push_back('"');
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!has_member_.empty()) {
    if (has_member_.back()) out_.push_back(',');
    has_member_.back() = true;
  }
}

void JsonWriter::BeginObject() {
  BeforeValue();
  out_.push_back('{');
  has_member_.push_back(false);
}

void JsonWriter::EndObject() {
  out_.push_back('}');
  has_member_.pop_back();
}

void JsonWriter::BeginArray() {
  BeforeValue();
  out_.push_back('[');
  has_member_.push_back(false);
}

void JsonWriter::EndArray() {
  out_.push_back(']');
  has_member_.pop_back();
}

void JsonWriter::Key(std::string_view key) {
  BeforeValue();
  AppendJsonString(key, &out_);
  out_.push_back(':');
  after_key_ = true;
}

void JsonWriter::String(std::string_view s) {
  BeforeValue();
  AppendJsonString(s, &out_);
}

void JsonWriter::StringMember(std::string_view key, std::string_view s) {
  Key(key);
  String(s);
  if (IsValidUtf8(s)) return;
  Key(std::string(key) + "_b64");
  String(absl::Base64Escape(absl::string_view(s.data(), s.size())));
}

void JsonWriter::OptionalStringMember(std::string_view key,
                                      std::string_view s) {
  if (s.empty()) {
    Key(key);
    Null();
    return;
  }
  StringMember(key, s);
}

void JsonWriter::Int(int64_t v) {
  BeforeValue();
  out_.append(std::to_string(v));
}

void JsonWriter::Uint(uint64_t v) {
  BeforeValue();
  out_.append(std::to_string(v));
}

void JsonWriter::Double(double v) {
  BeforeValue();
  if (!std::isfinite(v)) {
    out_.append("null");
    return;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  // Shortest text that reads back as the same double.
  for (int prec = 1; prec <= 17; ++prec) {
    char shorter[64];
    std::snprintf(shorter, sizeof shorter, "%.*g", prec, v);
    if (std::strtod(shorter, nullptr) == v) {
      std::snprintf(buf, sizeof buf, "%s", shorter);
      break;
    }
  }
  out_.append(buf);
}

void JsonWriter::Bool(bool v) {
  BeforeValue();
  out_.append(v ? "true" : "false");
}

void JsonWriter::Null() {
  BeforeValue();
  out_.append("null");
}

}  // namespace sharectl
