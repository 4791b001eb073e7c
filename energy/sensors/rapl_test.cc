// rapl_test.cc — the libpowercap path for real, against a fake powercap tree served from a
// tmpfs mounted over /sys/class in a private mount namespace of a forked child.
//
// The child writes the files libpowercap reads (intel-rapl/enabled, intel-rapl:N/{name,
// enabled,energy_uj,max_energy_range_uj}, sub-zones intel-rapl:N:M/), advances energy_uj,
// including wraps past max_energy_range_uj, and reports failures to the parent through a pipe.
// Package 1 has no dram zone. Needs root (CAP_SYS_ADMIN) for unshare and mount; skips if not.
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "energy/sensors/rapl.h"
#include "energy/sensors/reader.h"

namespace energy {
namespace {

constexpr int kSkipExit = 77;
const std::string kBase = "/sys/class/powercap/intel-rapl";

// Collects failures inside the child (gtest assertions there would not reach the parent).
class Checker {
 public:
  void Check(bool ok, const std::string& what) {
    if (!ok) failures_ += what + "\n";
  }
  const std::string& failures() const { return failures_; }

 private:
  std::string failures_;
};

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text << "\n";
}

struct FakeZone {
  std::string dir;  // relative to kBase
  std::string name;
  uint64_t range;
  uint64_t value = 0;

  void Write() const { WriteFile(kBase + "/" + dir + "/energy_uj", std::to_string(value)); }
  // Advances by `uj`, wrapping the way the kernel counter does (modulo the range).
  bool Advance(uint64_t uj) {
    value += uj;
    bool wrapped = false;
    if (value > range) {
      value -= range;
      wrapped = true;
    }
    Write();
    return wrapped;
  }
};

void MakeZone(FakeZone& z) {
  std::string d = kBase + "/" + z.dir;
  mkdir(d.c_str(), 0755);
  WriteFile(d + "/name", z.name);
  WriteFile(d + "/enabled", "1");
  WriteFile(d + "/max_energy_range_uj", std::to_string(z.range));
  z.Write();
}

// The tree used by the tests: package 0 with core, uncore and dram; package 1 with core only.
struct FakeTree {
  FakeZone pkg0{"intel-rapl:0", "package-0", 1'000'000, 900'000};
  FakeZone core0{"intel-rapl:0/intel-rapl:0:0", "core", 262'143'328'850, 5'000};
  FakeZone uncore0{"intel-rapl:0/intel-rapl:0:1", "uncore", 262'143'328'850, 0};
  FakeZone dram0{"intel-rapl:0/intel-rapl:0:2", "dram", 65'712'999'613, 100};
  FakeZone pkg1{"intel-rapl:1", "package-1", 262'143'328'850, 262'143'000'000};
  FakeZone core1{"intel-rapl:1/intel-rapl:1:0", "core", 262'143'328'850, 1};

  void Create() {
    mkdir("/sys/class/powercap", 0755);
    mkdir(kBase.c_str(), 0755);
    WriteFile(kBase + "/enabled", "1");
    for (FakeZone* z : {&pkg0, &core0, &uncore0, &dram0, &pkg1, &core1}) MakeZone(*z);
  }
};

struct ChildOutcome {
  bool skipped = false;
  std::string message;
};

// Runs `body` in a forked child with a fresh tmpfs over /sys/class in a private mount
// namespace; `body` returns its failures ("" for none).
ChildOutcome RunWithFakeSysClass(const std::function<std::string()>& body) {
  if (geteuid() != 0) return {true, "needs root for unshare(CLONE_NEWNS) and mount"};
  int fds[2];
  if (pipe(fds) != 0) return {false, fmt::format("pipe: {}", std::strerror(errno))};
  pid_t pid = fork();
  if (pid < 0) return {false, fmt::format("fork: {}", std::strerror(errno))};
  if (pid == 0) {
    close(fds[0]);
    std::string out;
    int code = 0;
    if (unshare(CLONE_NEWNS) != 0) {
      out = fmt::format("unshare(CLONE_NEWNS) refused: {}", std::strerror(errno));
      code = kSkipExit;
    } else if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
      out = fmt::format("making mounts private refused: {}", std::strerror(errno));
      code = kSkipExit;
    } else if (mount("none", "/sys/class", "tmpfs", 0, nullptr) != 0) {
      out = fmt::format("mounting a tmpfs over /sys/class refused: {}", std::strerror(errno));
      code = kSkipExit;
    } else {
      out = body();
      code = out.empty() ? 0 : 1;
    }
    size_t off = 0;
    while (off < out.size()) {
      ssize_t n = write(fds[1], out.data() + off, out.size() - off);
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
    _exit(code);
  }
  close(fds[1]);
  std::string msg;
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof(buf))) > 0) msg.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == kSkipExit) return {true, msg};
  if (!WIFEXITED(status)) return {false, "child died: " + msg};
  if (WEXITSTATUS(status) != 0 && msg.empty()) msg = "child failed without a message";
  return {false, msg};
}

#define RUN_IN_FAKE_SYSFS(...)                               \
  do {                                                       \
    ChildOutcome outcome = RunWithFakeSysClass(__VA_ARGS__); \
    if (outcome.skipped) GTEST_SKIP() << outcome.message;    \
    EXPECT_EQ(outcome.message, "");                          \
  } while (0)

TEST(RaplSensorTest, NoPowercapTreeIsUnavailable) {
  RUN_IN_FAKE_SYSFS([] {
    Checker c;
    auto s = RaplSensor::Open();
    c.Check(!s, "Open() succeeded on an empty /sys/class");
    if (!s) {
      c.Check(s.error().code() == junction::ErrorCode::kUnavailable,
              "wrong error code: " + s.error().message());
      c.Check(s.error().message().find("power model") != std::string::npos,
              "message does not say what to do: " + s.error().message());
    }
    return c.failures();
  });
}

TEST(RaplSensorTest, FindsEveryPackageAndZoneAndNoMissingDram) {
  RUN_IN_FAKE_SYSFS([] {
    Checker c;
    FakeTree tree;
    tree.Create();
    auto s = RaplSensor::Open();
    if (!s) return "Open failed: " + s.error().message();
    std::string got;
    for (const RaplZoneInfo& z : s->zones()) {
      got += fmt::format("{}:{}:{}:{};", z.domain, ZoneName(z.zone), z.name, z.max_range.value);
    }
    c.Check(got ==
                "0:package:package-0:1000000;0:core:core:262143328850;"
                "0:uncore:uncore:262143328850;0:dram:dram:65712999613;"
                "1:package:package-1:262143328850;1:core:core:262143328850;",
            "zones: " + got);
    auto snap = s->Read();
    if (!snap) return "Read failed: " + snap.error().message();
    c.Check(snap->readings.size() == 6, fmt::format("{} readings", snap->readings.size()));
    c.Check(snap->readings.size() > 3 && snap->readings[3].cumulative.value == 100,
            "dram value not read");
    return c.failures();
  });
}

// Real client and server machines often have a top-level `psys` instance (intel-rapl:N named
// psys, no sub-zones) beside the packages: it is the platform zone, labelled psys (not a
// package), and the node total counts it instead of the packages, not on top of them.
TEST(RaplSensorTest, TopLevelPsysIsThePlatformZoneAndCountedOnce) {
  RUN_IN_FAKE_SYSFS([] {
    Checker c;
    FakeTree tree;
    tree.Create();
    FakeZone psys{"intel-rapl:2", "psys", 262'143'328'850, 1'000};
    MakeZone(psys);
    auto s = RaplSensor::Open();
    if (!s) return "Open failed: " + s.error().message();
    std::string got;
    for (const RaplZoneInfo& z : s->zones()) {
      if (z.domain == 2) got += fmt::format("{}:{}:{};", ZoneName(z.zone), z.name, z.max_range.value);
    }
    c.Check(got == "psys:psys:262143328850;", "intel-rapl:2 zones: " + got);
    IntervalMeter meter;
    auto base = meter.Add(*s->Read());
    if (!base) return "baseline: " + base.error().message();
    tree.pkg0.Advance(10'000);  // package-0: 10 mJ
    tree.pkg1.Advance(20'000);  // package-1: 20 mJ
    tree.dram0.Advance(5'000);  // dram: 5 mJ
    psys.Advance(50'000);       // the platform: 50 mJ, which covers the packages and dram
    auto snap = s->Read();
    if (!snap) return "Read: " + snap.error().message();
    auto iv = meter.Add(*snap);
    if (!iv || !iv->has_value()) return std::string("interval missing or failed");
    const ZoneJoules& j = (**iv).joules;
    c.Check(std::llround(j[Zone::kPackage].value * 1e6) == 30'000,
            fmt::format("package {} J: the psys instance is not a package", j[Zone::kPackage].value));
    c.Check(j.Has(Zone::kPsys) && std::llround(j[Zone::kPsys].value * 1e6) == 50'000,
            fmt::format("psys {} J", j[Zone::kPsys].value));
    c.Check(std::llround(j.NodeTotal().value * 1e6) == 50'000,
            fmt::format("node total {} J: psys once, packages and dram not added to it", j.NodeTotal().value));
    return c.failures();
  });
}

TEST(RaplSensorTest, DeltasAcrossWrapsLoseNoInterval) {
  RUN_IN_FAKE_SYSFS([] {
    Checker c;
    FakeTree tree;
    tree.Create();
    auto s = RaplSensor::Open();
    if (!s) return "Open failed: " + s.error().message();
    IntervalMeter meter;
    auto base = meter.Add(*s->Read());
    if (!base) return "baseline: " + base.error().message();
    uint64_t expect_pkg = 0, got_wraps = 0, expect_wraps = 0;
    double got_pkg = 0, got_dram = 0;
    uint64_t expect_dram = 0;
    // Steps chosen so package-0 (range 1e6) wraps several times and package-1 (near its range)
    // wraps once.
    const uint64_t steps[] = {150'000, 420'000, 999'999, 1, 600'000, 333'333, 250'000};
    for (uint64_t step : steps) {
      expect_wraps += tree.pkg0.Advance(step);
      expect_wraps += tree.pkg1.Advance(step * 2);
      tree.dram0.Advance(step / 10);
      expect_pkg += step * 3;
      expect_dram += step / 10;
      auto snap = s->Read();
      if (!snap) return "Read: " + snap.error().message();
      auto iv = meter.Add(*snap);
      if (!iv || !iv->has_value()) return std::string("interval missing or failed");
      const IntervalEnergy& e = **iv;
      c.Check(
          std::llround(e.joules[Zone::kPackage].value * 1e6) == static_cast<long long>(step * 3),
          fmt::format("step {}: package {} J", step, e.joules[Zone::kPackage].value));
      got_pkg += e.joules[Zone::kPackage].value;
      got_dram += e.joules[Zone::kDram].value;
      got_wraps += e.wraps;
    }
    c.Check(expect_wraps >= 4, fmt::format("test tree wrapped only {} times", expect_wraps));
    c.Check(got_wraps == expect_wraps, fmt::format("wraps {} != {}", got_wraps, expect_wraps));
    c.Check(std::llround(got_pkg * 1e6) == static_cast<long long>(expect_pkg),
            fmt::format("package total {} J, expected {} uJ", got_pkg, expect_pkg));
    c.Check(std::llround(got_dram * 1e6) == static_cast<long long>(expect_dram),
            "dram total mismatch");
    return c.failures();
  });
}

TEST(RaplSensorTest, PeriodicReaderAtOneMillisecondCountsEveryMicrojoule) {
  RUN_IN_FAKE_SYSFS([] {
    Checker c;
    FakeTree tree;
    tree.Create();
    auto s = RaplSensor::Open();
    if (!s) return "Open failed: " + s.error().message();
    auto too_fast = PeriodicReader::Start({&*s}, {std::chrono::microseconds(500)},
                                          [](const junction::Status<IntervalEnergy>&) {});
    c.Check(!too_fast && too_fast.error().code() == junction::ErrorCode::kInvalidArgument,
            "a 500 us interval was accepted");
    // The callback runs on the reader thread between reads, so advancing the files there is
    // race-free: what callback i writes, read i+1 sees.
    uint64_t advanced = 0, last_advance = 0, callbacks = 0, expect_wraps = 0, got_wraps = 0;
    uint64_t errors = 0;
    double read_j = 0;
    std::atomic<uint64_t> done{0};
    auto reader = PeriodicReader::Start({&*s}, {std::chrono::milliseconds(1)},
                                        [&](const junction::Status<IntervalEnergy>& iv) {
                                          if (!iv) {
                                            ++errors;
                                            return;
                                          }
                                          read_j += iv->joules[Zone::kPackage].value;
                                          got_wraps += iv->wraps;
                                          ++callbacks;
                                          last_advance = 370'001 + callbacks % 7;
                                          expect_wraps += tree.pkg0.Advance(last_advance);
                                          advanced += last_advance;
                                          done.store(callbacks, std::memory_order_release);
                                        });
    if (!reader) return "Start: " + reader.error().message();
    while (done.load(std::memory_order_acquire) < 300) usleep(1000);
    (*reader)->Stop();
    c.Check(errors == 0, fmt::format("{} read errors", errors));
    c.Check((*reader)->intervals() == callbacks, "intervals != callbacks");
    // Every advance but the last has been read.
    c.Check(std::llround(read_j * 1e6) == static_cast<long long>(advanced - last_advance),
            fmt::format("read {} uJ, advanced {} uJ before the last read", read_j * 1e6,
                        advanced - last_advance));
    // The last advance may itself have wrapped, unread.
    c.Check(got_wraps + 1 >= expect_wraps && got_wraps <= expect_wraps && got_wraps > 50,
            fmt::format("wraps read {} vs written {}", got_wraps, expect_wraps));
    return c.failures();
  });
}

TEST(ReaderTest, RejectsIntervalsBelowOneMillisecond) {
  auto bad = ValidateSampleInterval(std::chrono::microseconds(999));
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("1 ms"), std::string::npos);
  EXPECT_TRUE(ValidateSampleInterval(std::chrono::milliseconds(1)));
  EXPECT_TRUE(ValidateSampleInterval(kDefaultSampleInterval));
}

}  // namespace
}  // namespace energy
