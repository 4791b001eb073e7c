// pack.cc — encoding and decoding of pack bodies (format 1, pack.h).
#include "energy/ledger/pack.h"

#include <algorithm>
#include <cstring>

namespace energy {
namespace {

template <typename T>
bool Get(std::string_view in, size_t* at, T* v) {
  if (in.size() - *at < sizeof(T)) return false;
  std::memcpy(v, in.data() + *at, sizeof(T));
  *at += sizeof(T);
  return true;
}

}  // namespace

void PackBuilder::Reset(const InvocationRecord& first) {
  function_ = first.function;
  ns_ = first.ns;
  sources_ = first.joules.sources;
  hour_ = PackHour(first.end_ns);
  records_ = 0;
  min_seq_ = max_seq_ = 0;
  first_start_ns_ = first.start_ns;
  last_end_ns_ = first.end_ns;
  total_j_ = grams_ = embodied_grams_ = 0.0;
  kinds_ = 0;
  body_.clear();
}

void PackBuilder::Append(uint64_t seq, const InvocationRecord& r) {
  if (records_ == 0) {
    min_seq_ = max_seq_ = seq;
  } else {
    min_seq_ = std::min(min_seq_, seq);
    max_seq_ = std::max(max_seq_, seq);
  }
  ++records_;
  first_start_ns_ = std::min(first_start_ns_, r.start_ns);
  last_end_ns_ = std::max(last_end_ns_, r.end_ns);
  total_j_ += r.joules.NodeTotal().value;
  grams_ += r.grams;
  embodied_grams_ += r.embodied_grams;
  kinds_ |= static_cast<uint8_t>(1u << static_cast<unsigned>(r.intensity_kind));

  // One resize for the record's largest size, trimmed at the end, instead of one per field.
  const size_t at = body_.size();
  const std::string_view id = r.call_id.view();
  body_.resize(at + 8 * 4 + 1 + 8 * kZoneCount + 8 * 2 + 1 + 8 + 4 + 8 * 2 + 1 + id.size());
  char* p = body_.data() + at;
  auto put = [&p](const auto& v) {
    std::memcpy(p, &v, sizeof(v));
    p += sizeof(v);
  };
  put(seq);
  put(r.start_ns);
  put(r.end_ns);
  put(r.cycles);
  put(r.joules.present);
  for (size_t z = 0; z < kZoneCount; ++z) {
    if ((r.joules.present >> z) & 1) put(r.joules.by_zone[z].value);
  }
  put(r.grams);
  put(r.intensity_g_per_kwh);
  put(static_cast<uint8_t>(r.intensity_kind));
  put(r.embodied_grams);
  put(r.status);
  put(r.bytes_in);
  put(r.bytes_out);
  put(static_cast<uint8_t>(id.size()));
  std::memcpy(p, id.data(), id.size());
  p += id.size();
  body_.resize(static_cast<size_t>(p - body_.data()));
}

std::string PackBuilder::IntensityKinds() const {
  std::string out;
  for (auto k : {carbon::IntensityKind::kMeasured, carbon::IntensityKind::kHeld,
                 carbon::IntensityKind::kInterpolated, carbon::IntensityKind::kConstant}) {
    if (!((kinds_ >> static_cast<unsigned>(k)) & 1)) continue;
    if (!out.empty()) out += ',';
    out += carbon::IntensityKindName(k);
  }
  return out;
}

bool DecodePacked(std::string_view body, size_t* at, uint64_t* seq, InvocationRecord* r) {
  uint8_t present = 0, kind = 0, id_size = 0;
  if (!Get(body, at, seq) || !Get(body, at, &r->start_ns) || !Get(body, at, &r->end_ns) ||
      !Get(body, at, &r->cycles) || !Get(body, at, &present)) {
    return false;
  }
  if (present >> kZoneCount) return false;
  r->joules = ZoneJoules{};
  for (size_t z = 0; z < kZoneCount; ++z) {
    if (!((present >> z) & 1)) continue;
    double j = 0;
    if (!Get(body, at, &j)) return false;
    r->joules.Set(kAllZones[z], Joules{j});
  }
  if (!Get(body, at, &r->grams) || !Get(body, at, &r->intensity_g_per_kwh) || !Get(body, at, &kind) ||
      !Get(body, at, &r->embodied_grams) || !Get(body, at, &r->status) || !Get(body, at, &r->bytes_in) ||
      !Get(body, at, &r->bytes_out) || !Get(body, at, &id_size)) {
    return false;
  }
  if (kind > static_cast<uint8_t>(carbon::IntensityKind::kConstant) || id_size > 64 ||
      body.size() - *at < id_size) {
    return false;
  }
  r->intensity_kind = static_cast<carbon::IntensityKind>(kind);
  r->call_id.Assign(body.substr(*at, id_size));
  *at += id_size;
  return true;
}

}  // namespace energy
