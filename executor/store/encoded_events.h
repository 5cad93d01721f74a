// EncodedEvents: the new events of one change set, serialized as they are
// appended. One buffer and one small entry per event instead of a protobuf
// object (and its strings) per event: a first sync of a million jobs appends
// a million events, which used to be held as objects until the write and
// then destroyed before the answer.
//
// Not thread-safe (owned by one ChangeSet).
#ifndef BERTH_EXECUTOR_STORE_ENCODED_EVENTS_H_
#define BERTH_EXECUTOR_STORE_ENCODED_EVENTS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "berth/v1/event.pb.h"

namespace berth {

class EncodedEvents {
 public:
  // Serializes `event` after the events appended before.
  // REQUIRES: event.revision() is set and greater than every revision
  // appended before (a change set's revisions are contiguous).
  void Append(const berth::v1::Event& event);

  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  // The revision of the i-th event appended. REQUIRES: i < size().
  uint64_t revision(size_t i) const { return entries_[i].revision; }
  // The serialized berth.v1.Event of the i-th event appended (exactly what
  // the store persists): valid until the next Append. REQUIRES: i < size().
  absl::string_view bytes(size_t i) const;
  // The i-th event appended, parsed back. REQUIRES: i < size().
  berth::v1::Event Decode(size_t i) const;
  // The sum of every bytes(i).size().
  size_t byte_size() const { return buffer_.size(); }

 private:
  struct Entry {
    uint64_t revision;
    size_t end;  // one past the event's last byte in buffer_
  };
  std::string buffer_;
  std::vector<Entry> entries_;
};

}  // namespace berth

#endif  // BERTH_EXECUTOR_STORE_ENCODED_EVENTS_H_
