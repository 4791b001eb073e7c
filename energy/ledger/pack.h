// pack.h — invocation packs: the records of one ledger batch that share a function, namespace,
// source set and hour of their end, kept as one SQLite row (the totals the reports read, and a
// compact body of the records) while the ledger writer is behind. The ledger expands a pack
// into its `invocations` rows later, in one transaction with the pack's deletion, so a record
// is always in exactly one place (ledger.h, "Packs").
//
// Body format 1 (the ledger refuses a format it does not know), per record, with the deltas
// taken from the previous record of the pack (0 for the first) and varints as in protobuf
// (zigzag for signed values):
//   zigzag seq delta, zigzag start_ns delta, zigzag wall ns (end - start), varint cycles,
//   u8 zones present, u8 flags (intensity kind in bits 0-1; bit 2: intensity as the previous
//   record's; bit 3: no embodied grams; bit 4: the call id is a lowercase UUID), f64 joules
//   per present zone (kAllZones order), f64 grams, [f64 intensity_g_per_kwh], [f64
//   embodied_grams], zigzag status, varint bytes_in, varint bytes_out, the call id (16 bytes
//   for a UUID, else u8 length and its bytes). Doubles are stored whole (host byte order), so
//   an expanded row is bit for bit what a direct write stores.
// About 50 bytes for an echo call (one zone, a UUID), against ~340 in memory: the writer's
// cost per packed record is mostly SQLite writing these bytes to the WAL and checkpointing them.
//
// Not thread-safe: one builder per thread (the ledger writer's).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "energy/ledger/record.h"
#include "junction/base/error.h"

namespace energy {

inline constexpr int kPackFormat = 1;

// The hour (since the epoch) a record's end falls in: records of different hours never share
// a pack, so `faasnode carbon report --group-by hour` places every packed call exactly.
inline int64_t PackHour(int64_t end_ns) {
  constexpr int64_t kHourNs = 3'600'000'000'000;
  return end_ns >= 0 ? end_ns / kHourNs : (end_ns - kHourNs + 1) / kHourNs;
}

class PackBuilder {
 public:
  // Empties the builder (keeping the body's capacity) for records with `first`'s key.
  void Reset(const InvocationRecord& first);
  // Whether `r` has this pack's key (function, namespace, source set, hour of its end).
  bool Matches(const InvocationRecord& r) const {
    return r.joules.sources == sources_ && PackHour(r.end_ns) == hour_ && r.function == function_ &&
           r.ns == ns_;
  }
  // Appends one record (it must match) under its sequence number.
  void Append(uint64_t seq, const InvocationRecord& r);

  std::string_view function() const { return function_.view(); }
  std::string_view ns() const { return ns_.view(); }
  SourceSet sources() const { return sources_; }
  uint64_t records() const { return records_; }
  uint64_t min_seq() const { return min_seq_; }
  uint64_t max_seq() const { return max_seq_; }
  int64_t first_start_ns() const { return first_start_ns_; }
  int64_t last_end_ns() const { return last_end_ns_; }
  double total_j() const { return total_j_; }
  double grams() const { return grams_; }
  double embodied_grams() const { return embodied_grams_; }
  // The intensity kinds of the records, comma-separated in enum order ("measured,held").
  std::string IntensityKinds() const;
  std::string_view body() const { return body_; }

 private:
  FixedString<64> function_;
  FixedString<64> ns_;
  SourceSet sources_;
  int64_t hour_ = 0;
  uint64_t records_ = 0;
  uint64_t min_seq_ = 0;
  uint64_t max_seq_ = 0;
  int64_t first_start_ns_ = 0;
  int64_t last_end_ns_ = 0;
  double total_j_ = 0.0;
  double grams_ = 0.0;
  double embodied_grams_ = 0.0;
  uint8_t kinds_ = 0;  // bit k: IntensityKind k present
  std::string body_;
  // The previous record's values the next one is encoded against.
  uint64_t prev_seq_ = 0;
  int64_t prev_start_ns_ = 0;
  double prev_intensity_ = 0.0;
};

// What a body decoder carries from one record to the next (see the format above).
struct PackCursor {
  size_t at = 0;
  uint64_t seq = 0;
  int64_t start_ns = 0;
  double intensity = 0.0;
};

// Decodes a pack body of `format`, calling fn(seq, record) for each record in order; the
// records get `function`, `ns` and `sources` from the pack's row. Errors: kUnavailable for a
// format this build does not know; kIo for a truncated or malformed body (the pack is then left
// in place: nothing is half-expanded).
template <typename Fn>
junction::Status<void> ForEachPacked(std::string_view body, int format, std::string_view function,
                                     std::string_view ns, SourceSet sources, Fn&& fn);

// Implementation detail of ForEachPacked: decodes the record at the cursor, advancing it; false
// when the body ends inside the record or a field is out of range.
bool DecodePacked(std::string_view body, PackCursor* cursor, InvocationRecord* r);

template <typename Fn>
junction::Status<void> ForEachPacked(std::string_view body, int format, std::string_view function,
                                     std::string_view ns, SourceSet sources, Fn&& fn) {
  if (format != kPackFormat) {
    return junction::MakeError(junction::ErrorCode::kUnavailable,
                               "ledger pack body format " + std::to_string(format) +
                                   " is unknown to this node (it knows 1): open the ledger with the "
                                   "node version that wrote it");
  }
  InvocationRecord r;
  r.function.Assign(function);
  r.ns.Assign(ns);
  PackCursor cursor;
  while (cursor.at < body.size()) {
    if (!DecodePacked(body, &cursor, &r)) {
      return junction::MakeError(junction::ErrorCode::kIo,
                                 "ledger pack body is truncated or malformed at byte " + std::to_string(cursor.at) +
                                     ": the database file is damaged; restore it from a backup");
    }
    r.joules.sources = sources;
    fn(cursor.seq, r);
  }
  return {};
}

}  // namespace energy
