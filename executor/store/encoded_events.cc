#include "executor/store/encoded_events.h"

namespace berth {

void EncodedEvents::Append(const berth::v1::Event& event) {
  event.AppendToString(&buffer_);
  entries_.push_back(Entry{event.revision(), buffer_.size()});
}

absl::string_view EncodedEvents::bytes(size_t i) const {
  const size_t begin = i == 0 ? 0 : entries_[i - 1].end;
  return absl::string_view(buffer_).substr(begin, entries_[i].end - begin);
}

berth::v1::Event EncodedEvents::Decode(size_t i) const {
  berth::v1::Event event;
  const absl::string_view b = bytes(i);
  // The bytes were serialized by Append from an Event: they parse.
  (void)event.ParseFromArray(b.data(), static_cast<int>(b.size()));
  return event;
}

}  // namespace berth
