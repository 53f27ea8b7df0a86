// Marks the calling thread as one of the daemon's background workers:
// names it (as `ps -L`, top and /proc/PID/task/TID/comm show it) and
// lowers its CPU priority to nice 19, so O(N) housekeeping (the
// fs_watch round, the sharetab view, the mount-record flush) yields the
// cores to replies: a change's reply and the caller's exit are not
// preempted by the rounds that change wakes. Best effort: a failure
// changes nothing but speed.
#ifndef SHAREMGRD_BACKGROUND_THREAD_H_
#define SHAREMGRD_BACKGROUND_THREAD_H_

namespace sharemgrd {

// `name`: at most 15 characters (the kernel's limit), e.g. "sm-fswatch".
void BecomeBackgroundThread(const char* name);

}  // namespace sharemgrd

#endif  // SHAREMGRD_BACKGROUND_THREAD_H_
