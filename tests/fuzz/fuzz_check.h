// FUZZ_CHECK: the property checks of the fuzz targets. A violated property
// must stop the fuzzer like a crash does (libFuzzer saves the input), so it
// prints what was expected and aborts; it is active in every build type.
#ifndef TESTS_FUZZ_FUZZ_CHECK_H_
#define TESTS_FUZZ_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace fuzz {

// `text` with control and non-ASCII bytes as \xNN, so a report is one line.
inline std::string Escape(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      char buf[5];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

[[noreturn]] inline void Fail(const char* file, int line, const char* cond,
                              const std::string& detail) {
  std::fprintf(stderr, "%s:%d: property violated: %s\n  %s\n", file, line, cond,
               detail.c_str());
  std::abort();
}

}  // namespace fuzz

#define FUZZ_CHECK(cond, detail)                                    \
  do {                                                              \
    if (!(cond)) ::fuzz::Fail(__FILE__, __LINE__, #cond, (detail)); \
  } while (0)

#endif  // TESTS_FUZZ_FUZZ_CHECK_H_
