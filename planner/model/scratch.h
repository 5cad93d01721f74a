// ScratchBuffers: memory a ranking policy may reuse from one Plan() call to
// the next (a Planner keeps one), so that repeated plans of a large queue do
// not page-fault fresh buffers on every call.
//
// Buffers are lent, not kept: Plan() lends buffer 0 first to preparation
// (ids' hashes, the duplicate-id table) and then to the ranking policy, so a
// fresh plan faults those pages once. Contents never carry over from one
// user to the next.
//
// Not thread-safe: one per Planner / thread.
#ifndef BERTH_PLANNER_MODEL_SCRATCH_H_
#define BERTH_PLANNER_MODEL_SCRATCH_H_

#include <cstddef>
#include <memory>
#include <type_traits>
#include <vector>

namespace berth::planner {

class ScratchBuffers {
 public:
  // An array of `n` uninitialised Ts: buffer number `slot` of the caller's
  // choosing, grown as needed. Valid until the next Get() of the same slot.
  // REQUIRES: T is trivially copyable and no more aligned than max_align_t.
  template <typename T>
  T* Get(size_t slot, size_t n) {
    static_assert(std::is_trivially_copyable_v<T>);
    static_assert(alignof(T) <= alignof(std::max_align_t));
    if (slot >= buffers_.size()) buffers_.resize(slot + 1);
    Buffer& b = buffers_[slot];
    const size_t bytes = n * sizeof(T);
    if (b.bytes < bytes) {
      b.data.reset(new std::max_align_t[(bytes + sizeof(std::max_align_t) - 1) /
                                        sizeof(std::max_align_t)]);
      b.bytes = bytes;
    }
    return reinterpret_cast<T*>(b.data.get());
  }

 private:
  struct Buffer {
    std::unique_ptr<std::max_align_t[]> data;
    size_t bytes = 0;
  };
  std::vector<Buffer> buffers_;
};

}  // namespace berth::planner

#endif  // BERTH_PLANNER_MODEL_SCRATCH_H_
