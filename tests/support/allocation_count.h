// Counting the allocations of a stretch of code, for tests that assert a
// path allocates nothing (or at most so much). Linking this library
// replaces the global operator new and delete of the whole test binary
// (every unaligned form, so that whatever frees a block matches what
// allocated it, also under ASan); they count only on a thread that asked.
//
//   StartCountingAllocations();
//   cache.Check(...);
//   EXPECT_EQ(StopCountingAllocations(), 0);
#ifndef TESTS_SUPPORT_ALLOCATION_COUNT_H_
#define TESTS_SUPPORT_ALLOCATION_COUNT_H_

namespace sharemgr_testing {

// Starts counting this thread's allocations, from 0.
void StartCountingAllocations();
// Stops counting and returns how many there were since the start.
int StopCountingAllocations();

}  // namespace sharemgr_testing

#endif  // TESTS_SUPPORT_ALLOCATION_COUNT_H_
