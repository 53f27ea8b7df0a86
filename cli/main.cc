// sharectl: administers sharemgrd's share table. See sharectl(8).
#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "sharectl.h"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  sharectl::Environment env;
  env.out = &std::cout;
  env.err = &std::cerr;
  env.in = &std::cin;
  env.interactive = isatty(STDOUT_FILENO) && isatty(STDERR_FILENO);
  if (const char* s = std::getenv("SHARECTL_SOCKET")) env.socket_from_env = s;
  int rc = sharectl::Run(std::vector<std::string>(argv + 1, argv + argc), env);
  std::cout.flush();
  return rc;
}
