// intensity.h — grid carbon intensity (gCO2e/kWh): a constant, or a CSV time series with gaps
// held or interpolated; every lookup says which (measured, held, interpolated, constant). And
// the CarbonModel that prices joules: grams = J / 3.6e6 × intensity, plus optional embodied
// carbon per core-second.
//
//   auto ci = energy::carbon::IntensitySource::FromCsvFile("configs/carbon/us-ca-2022-hourly.csv",
//                                                            {.gaps = GapPolicy::kInterpolate});
//   energy::carbon::CarbonModel model(std::move(*ci), {.embodied_g_per_core_second = 0.0});
//   auto price = model.PriceInterval(Joules{12.5}, begin_ns, end_ns, /*core_seconds=*/0.02);
//
// Trace format (the files in configs/carbon/): a header line, then `timestamp,gco2e_per_kwh`
// rows in increasing time order. timestamp: ISO 8601 (`2022-01-01 00:00:00+00:00`,
// `2022-01-01T00:00:00Z`, an offset or none = UTC) or integer Unix seconds. An empty value is
// a gap. A row's value holds from its timestamp for one step (the smallest spacing between
// rows, e.g. one hour); time not covered by a measured row is a gap too (a missing row).
// Gaps are either held (the last measured value before it, or the first after it at the
// start) or interpolated linearly between the timestamps of the measured rows either side.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "energy/sensors/units.h"
#include "junction/base/error.h"

namespace energy::carbon {

enum class IntensityKind : uint8_t { kMeasured, kHeld, kInterpolated, kConstant };
// "measured", "held", "interpolated", "constant".
std::string_view IntensityKindName(IntensityKind kind);
// The less trustworthy of two kinds, for a figure combining both: held > interpolated >
// measured; constant combines only with constant.
IntensityKind WorseKind(IntensityKind a, IntensityKind b);

struct Intensity {
  double g_per_kwh = 0.0;
  IntensityKind kind = IntensityKind::kConstant;
};

enum class GapPolicy : uint8_t { kHold, kInterpolate };
enum class OutOfRangePolicy : uint8_t {
  kError,   // a time outside the trace is an error (kNotFound)
  kRepeat,  // the trace repeats itself (a year's trace stands for any year), figures keep kinds
};

struct TraceOptions {
  GapPolicy gaps = GapPolicy::kHold;
  OutOfRangePolicy out_of_range = OutOfRangePolicy::kError;
};

// Immutable after construction; safe to share between threads.
class IntensitySource {
 public:
  // Errors: kInvalidArgument when g_per_kwh is negative or not finite.
  static junction::Status<IntensitySource> Constant(double g_per_kwh);
  // Errors: kInvalidArgument naming the line (bad timestamp or value, time going backwards, no
  // measured row); `origin` names the text in messages.
  static junction::Status<IntensitySource> FromCsvText(std::string_view text,
                                                       const TraceOptions& options,
                                                       std::string_view origin = "trace");
  // As FromCsvText; kIo when the file cannot be read.
  static junction::Status<IntensitySource> FromCsvFile(const std::string& path,
                                                       const TraceOptions& options);

  // Intensity at UTC time t. Errors: kNotFound outside the trace with OutOfRangePolicy::kError.
  junction::Status<Intensity> At(int64_t t_ns) const;
  // Time-weighted mean intensity over [begin_ns, end_ns) (exact for the step and linear pieces;
  // At(begin_ns) when end_ns <= begin_ns), with the worst kind of the pieces it covers.
  junction::Status<Intensity> MeanOver(int64_t begin_ns, int64_t end_ns) const;

  bool is_constant() const { return constant_; }
  int64_t begin_ns() const;  // first row's time (0 for a constant)
  int64_t end_ns() const;    // last row's time + step (0 for a constant)
  int64_t step_ns() const { return step_ns_; }
  size_t rows() const { return rows_.size(); }

 private:
  struct Row {
    int64_t t_ns;
    double value;
    bool measured;
  };
  IntensitySource() = default;
  // Maps t into the trace's span (OutOfRangePolicy); kNotFound outside it otherwise.
  junction::Status<int64_t> Map(int64_t t_ns) const;
  Intensity AtMapped(int64_t t_ns) const;
  // The smallest piece boundary strictly after mapped time t (rows' starts and ends).
  int64_t NextBreak(int64_t mapped_t) const;

  bool constant_ = false;
  double constant_value_ = 0.0;
  TraceOptions options_;
  std::vector<Row> rows_;
  std::vector<int> prev_measured_;  // per row: index of the last measured row <= i, or -1
  std::vector<int> next_measured_;  // per row: index of the first measured row > i, or -1
  std::vector<int64_t> breaks_;     // sorted piece boundaries
  int64_t step_ns_ = 0;
};

// grams of CO2e for `j` at `g_per_kwh`: J / 3.6e6 × intensity.
inline double Grams(Joules j, double g_per_kwh) {
  return j.value / 3.6e6 * g_per_kwh;
}

struct CarbonOptions {
  // Embodied (manufacturing) carbon per core-second, in gCO2e; 0 = not reported. Example:
  // a 1,200 kgCO2e server with 64 cores over 4 years: 1.2e6 / (64 × 4 × 365 × 86400) ≈ 1.5e-4.
  double embodied_g_per_core_second = 0.0;
};

struct CarbonPrice {
  double grams = 0.0;           // operational
  double embodied_grams = 0.0;  // per core-second, if configured
  Intensity intensity;          // the (mean) intensity used
};

// Prices energy in carbon. Immutable; safe to share between threads.
class CarbonModel {
 public:
  // Errors: kInvalidArgument for a negative or non-finite embodied rate.
  static junction::Status<CarbonModel> Create(IntensitySource intensity,
                                              const CarbonOptions& options);

  // Prices energy spent uniformly over [begin_ns, end_ns) by `core_seconds` of CPU.
  // Errors: those of IntensitySource::MeanOver.
  junction::Status<CarbonPrice> PriceInterval(Joules j, int64_t begin_ns, int64_t end_ns,
                                              double core_seconds) const;

  const IntensitySource& intensity() const { return intensity_; }
  const CarbonOptions& options() const { return options_; }

 private:
  CarbonModel(IntensitySource intensity, const CarbonOptions& options)
      : intensity_(std::move(intensity)), options_(options) {}
  IntensitySource intensity_;
  CarbonOptions options_;
};

// Parses an ISO 8601 UTC/offset timestamp or integer Unix seconds into UTC nanoseconds.
junction::Status<int64_t> ParseTimestamp(std::string_view s);

}  // namespace energy::carbon
