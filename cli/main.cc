// sharectl: administers sharemgrd's share table. See sharectl(8).
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "exportfs.h"
#include "sharectl.h"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  sharectl::Environment env;
  env.out = &std::cout;
  env.err = &std::cerr;
  env.in = &std::cin;
  env.interactive = isatty(STDOUT_FILENO) && isatty(STDERR_FILENO);
  if (const char* s = std::getenv("SHARECTL_SOCKET")) env.socket_from_env = s;
  std::vector<std::string> args(argv + 1, argv + argc);
  // Run as `exportfs` (a symlink, or a dpkg-divert of /usr/sbin/exportfs):
  // `sharectl exportfs ARGS` on $SHARECTL_SOCKET or the default socket.
  const char* slash = argc > 0 ? std::strrchr(argv[0], '/') : nullptr;
  const char* name = argc > 0 ? (slash ? slash + 1 : argv[0]) : "";
  int rc = std::strcmp(name, "exportfs") == 0
               ? sharectl::RunExportfs(args, env,
                                       env.socket_from_env.empty()
                                           ? libshare::kDefaultSocketPath
                                           : env.socket_from_env)
               : sharectl::Run(args, env);
  std::cout.flush();
  return rc;
}
