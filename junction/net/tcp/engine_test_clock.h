// engine_test_clock.h — the fake clock and the two addresses the engine tests share (tests only).
#pragma once

#include <cstdint>

#include "junction/net/endpoint.h"

namespace junction::net::tcp::engine_test {

// The engines under test read time from here (EngineOptions::clock_ns = &FakeNow); a test moves
// it forward by hand. One per test binary, reset by each fixture.
inline std::int64_t g_now = 1'000'000'000;
inline std::int64_t FakeNow() { return g_now; }
inline constexpr std::int64_t kMs = 1'000'000;

inline const Ipv4Addr kUs(10, 0, 0, 1);
inline const Ipv4Addr kPeer(10, 0, 0, 2);

}  // namespace junction::net::tcp::engine_test
