#include "thread_name.h"

#include <pthread.h>

namespace sharemgrd {

void NameThisThread(const char* name) {
  (void)pthread_setname_np(pthread_self(), name);
}

}  // namespace sharemgrd
