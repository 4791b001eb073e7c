// pack.cc — encoding and decoding of pack bodies (format 1, pack.h).
#include "energy/ledger/pack.h"

#include "junction/base/uuid.h"

#include <algorithm>
#include <bit>
#include <cstring>

namespace energy {
namespace {

constexpr uint8_t kKindMask = 0x03;
constexpr uint8_t kSameIntensity = 0x04;
constexpr uint8_t kNoEmbodied = 0x08;
constexpr uint8_t kUuidCallId = 0x10;
constexpr size_t kMaxVarint = 10;

uint64_t ZigZag(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }
// a - b without signed overflow (wraps; the decoder's wrapping add restores a exactly).
int64_t Delta(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)); }
int64_t Plus(int64_t a, int64_t d) { return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(d)); }
int64_t UnZigZag(uint64_t v) { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }

char* PutVarint(char* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<char>(v);
  return p;
}

template <typename T>
char* PutRaw(char* p, T v) {
  std::memcpy(p, &v, sizeof(T));
  return p + sizeof(T);
}

class Reader {
 public:
  Reader(std::string_view in, size_t at) : in_(in), at_(at) {}
  size_t at() const { return at_; }
  bool Varint(uint64_t* v) {
    uint64_t out = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (at_ >= in_.size()) return false;
      const auto b = static_cast<uint8_t>(in_[at_++]);
      out |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) {
        *v = out;
        return true;
      }
    }
    return false;
  }
  bool Signed(int64_t* v) {
    uint64_t u = 0;
    if (!Varint(&u)) return false;
    *v = UnZigZag(u);
    return true;
  }
  template <typename T>
  bool Raw(T* v) {
    if (in_.size() - at_ < sizeof(T)) return false;
    std::memcpy(v, in_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return true;
  }
  bool Bytes(size_t n, std::string_view* v) {
    if (in_.size() - at_ < n) return false;
    *v = in_.substr(at_, n);
    at_ += n;
    return true;
  }

 private:
  std::string_view in_;
  size_t at_;
};

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
  prev_seq_ = 0;
  prev_start_ns_ = 0;
  prev_intensity_ = 0.0;
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

  const std::string_view id = r.call_id.view();
  uint8_t uuid[16];
  const bool is_uuid = junction::ParseUuid(id, uuid);
  const bool same_intensity =
      std::bit_cast<uint64_t>(r.intensity_g_per_kwh) == std::bit_cast<uint64_t>(prev_intensity_);
  const bool no_embodied = std::bit_cast<uint64_t>(r.embodied_grams) == 0;
  const uint8_t flags = static_cast<uint8_t>((static_cast<uint8_t>(r.intensity_kind) & kKindMask) |
                                             (same_intensity ? kSameIntensity : 0) |
                                             (no_embodied ? kNoEmbodied : 0) | (is_uuid ? kUuidCallId : 0));
  // One resize for the record's largest size, written in place and trimmed to what was used
  // (resize_and_overwrite: no zero-filling of the ~170 bytes first, as resize did per record;
  // it grows the capacity geometrically, as resize does).
  const size_t at = body_.size();
  const size_t most = 4 * kMaxVarint + 2 + 8 * kZoneCount + 8 * 3 + 3 * kMaxVarint + 1 + std::max<size_t>(id.size(), 16);
  body_.resize_and_overwrite(at + most, [&](char* data, size_t) {
    char* p = data + at;
    p = PutVarint(p, ZigZag(static_cast<int64_t>(seq - prev_seq_)));
    p = PutVarint(p, ZigZag(Delta(r.start_ns, prev_start_ns_)));
    p = PutVarint(p, ZigZag(Delta(r.end_ns, r.start_ns)));
    p = PutVarint(p, r.cycles);
    *p++ = static_cast<char>(r.joules.present);
    *p++ = static_cast<char>(flags);
    for (size_t z = 0; z < kZoneCount; ++z) {
      if ((r.joules.present >> z) & 1) p = PutRaw(p, r.joules.by_zone[z].value);
    }
    p = PutRaw(p, r.grams);
    if (!same_intensity) p = PutRaw(p, r.intensity_g_per_kwh);
    if (!no_embodied) p = PutRaw(p, r.embodied_grams);
    p = PutVarint(p, ZigZag(r.status));
    p = PutVarint(p, r.bytes_in);
    p = PutVarint(p, r.bytes_out);
    if (is_uuid) {
      std::memcpy(p, uuid, 16);
      p += 16;
    } else {
      *p++ = static_cast<char>(id.size());
      std::memcpy(p, id.data(), id.size());
      p += id.size();
    }
    return static_cast<size_t>(p - data);
  });
  prev_seq_ = seq;
  prev_start_ns_ = r.start_ns;
  prev_intensity_ = r.intensity_g_per_kwh;
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

bool DecodePacked(std::string_view body, PackCursor* c, InvocationRecord* r) {
  Reader in(body, c->at);
  int64_t seq_delta = 0, start_delta = 0, wall = 0, status = 0;
  uint64_t cycles = 0;
  uint8_t present = 0, flags = 0;
  if (!in.Signed(&seq_delta) || !in.Signed(&start_delta) || !in.Signed(&wall) || !in.Varint(&cycles) ||
      !in.Raw(&present) || !in.Raw(&flags)) {
    return false;
  }
  if (present >> kZoneCount || flags >> 5) return false;
  r->joules = ZoneJoules{};
  for (size_t z = 0; z < kZoneCount; ++z) {
    if (!((present >> z) & 1)) continue;
    double j = 0;
    if (!in.Raw(&j)) return false;
    r->joules.Set(kAllZones[z], Joules{j});
  }
  double intensity = c->intensity, embodied = 0.0;
  if (!in.Raw(&r->grams) || (!(flags & kSameIntensity) && !in.Raw(&intensity)) ||
      (!(flags & kNoEmbodied) && !in.Raw(&embodied)) || !in.Signed(&status) || !in.Varint(&r->bytes_in) ||
      !in.Varint(&r->bytes_out)) {
    return false;
  }
  if (status < INT32_MIN || status > INT32_MAX) return false;
  std::string_view id;
  if (flags & kUuidCallId) {
    std::string_view raw;
    if (!in.Bytes(16, &raw)) return false;
    uint8_t bytes[16];
    std::memcpy(bytes, raw.data(), 16);
    char text[junction::kUuidTextSize];
    junction::FormatUuid(bytes, text);
    r->call_id.Assign(std::string_view(text, junction::kUuidTextSize));
  } else {
    uint8_t n = 0;
    if (!in.Raw(&n) || n > 64 || !in.Bytes(n, &id)) return false;
    r->call_id.Assign(id);
  }
  c->seq += static_cast<uint64_t>(seq_delta);
  c->start_ns = Plus(c->start_ns, start_delta);
  c->intensity = intensity;
  c->at = in.at();
  r->start_ns = c->start_ns;
  r->end_ns = Plus(c->start_ns, wall);
  r->cycles = cycles;
  r->intensity_g_per_kwh = intensity;
  r->intensity_kind = static_cast<carbon::IntensityKind>(flags & kKindMask);
  r->embodied_grams = embodied;
  r->status = static_cast<int32_t>(status);
  return true;
}

}  // namespace energy
