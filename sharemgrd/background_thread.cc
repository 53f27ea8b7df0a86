#include "background_thread.h"

#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace sharemgrd {

void BecomeBackgroundThread(const char* name) {
  (void)pthread_setname_np(pthread_self(), name);
  // On Linux PRIO_PROCESS with a thread id sets that thread's nice value.
  (void)setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), 19);
}

}  // namespace sharemgrd
