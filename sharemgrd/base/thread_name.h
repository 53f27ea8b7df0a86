// Names the calling thread (as `ps -L`, top, perf and
// /proc/PID/task/TID/comm show it), for the daemon's housekeeping threads:
// sm-fswatch (the file-system round), sm-sharetab (the view),
// sm-mountflush (the mount-record writes). Best effort.
//
// Their priority is left as it is: lowered (nice 19) they gained nothing
// measurable once their work starts 50 ms after the change that asks for
// it, and two of them hold the catalog's read lock while they copy the
// table (a slice of shares at a time), so a starved one would hold up a
// commit and, behind it, MNT. Nice 10 (2026-12-06, one add right after a
// batch of 1,000,000 adds, 3 runs each): p50 0.51-0.68 ms against
// 0.56-0.97, within the noise.
#ifndef SHAREMGRD_THREAD_NAME_H_
#define SHAREMGRD_THREAD_NAME_H_

namespace sharemgrd {

// `name`: at most 15 characters (the kernel's limit).
void NameThisThread(const char* name);

}  // namespace sharemgrd

#endif  // SHAREMGRD_THREAD_NAME_H_
