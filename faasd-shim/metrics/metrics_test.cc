// metrics_test.cc — the exposition format, per-core gateway counters and the invoke wrapper.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "faasd-shim/metrics/cold_start_metrics.h"
#include "faasd-shim/metrics/gateway_metrics.h"
#include "faasd-shim/metrics/instrument.h"
#include "faasd-shim/metrics/registry.h"
#include "faasd-shim/metrics/runtime_metrics.h"
#include "junction/sched/sched.h"
#include "junction/sched/test_util.h"

namespace faasnode::metrics {
namespace {

bool Has(const std::string& text, const std::string& line) {
  return text.find(line + "\n") != std::string::npos;
}

TEST(MetricWriter, WritesHelpTypeAndEscapedLabels) {
  Registry r;
  r.Add([](MetricWriter& w) {
    w.Family("x_total", "counter", "An x.\nSecond line");
    w.Sample({{"a", "q\"uote\\back\nnl"}}, 3);
    w.Sample({}, 0.25);
    w.Family("x_total", "counter", "again");  // a duplicate family: dropped
    w.Sample({{"a", "dup"}}, 1);
  });
  const std::string t = r.Render();
  EXPECT_TRUE(Has(t, "# HELP x_total An x.\\nSecond line")) << t;
  EXPECT_TRUE(Has(t, "# TYPE x_total counter")) << t;
  EXPECT_TRUE(Has(t, R"(x_total{a="q\"uote\\back\nnl"} 3)")) << t;
  EXPECT_TRUE(Has(t, "x_total 0.25")) << t;
  EXPECT_EQ(t.find("dup"), std::string::npos) << t;
  EXPECT_EQ(t.find("again"), std::string::npos) << t;
}

TEST(MetricWriter, Values) {
  std::string s;
  AppendValue(s, 12);
  s += ' ';
  AppendValue(s, 0.005);
  s += ' ';
  AppendValue(s, 1.0 / 0.0);
  s += ' ';
  AppendValue(s, 1e20);
  EXPECT_EQ(s, "12 0.005 +Inf 1e+20");
}

TEST(GatewayMetrics, CountsOffRuntimeWithGatewayNames) {
  GatewayMetrics m(2, [] { return std::vector<ServiceCount>{{"echo.openfaas-fn", 2}}; });
  m.Started("echo", "openfaas-fn");
  m.Finished("echo", "openfaas-fn", 200, 0.003);
  m.Started("echo", "openfaas-fn");
  m.Finished("echo", "openfaas-fn", 500, 0.3);
  m.Started("echo", "openfaas-fn");  // still running
  Registry r;
  r.Add([&](MetricWriter& w) { m.Collect(w); });
  const std::string t = r.Render();
  EXPECT_TRUE(Has(t, R"(gateway_function_invocation_started{function_name="echo.openfaas-fn"} 3)")) << t;
  EXPECT_TRUE(Has(t, R"(gateway_function_invocation_total{function_name="echo.openfaas-fn",code="200"} 1)")) << t;
  EXPECT_TRUE(Has(t, R"(gateway_function_invocation_total{function_name="echo.openfaas-fn",code="500"} 1)")) << t;
  EXPECT_TRUE(Has(t, "# TYPE gateway_functions_seconds histogram")) << t;
  EXPECT_TRUE(Has(t, R"(gateway_functions_seconds_bucket{function_name="echo.openfaas-fn",le="0.005"} 1)")) << t;
  EXPECT_TRUE(Has(t, R"(gateway_functions_seconds_bucket{function_name="echo.openfaas-fn",le="0.25"} 1)")) << t;
  EXPECT_TRUE(Has(t, R"(gateway_functions_seconds_bucket{function_name="echo.openfaas-fn",le="0.5"} 2)")) << t;
  EXPECT_TRUE(Has(t, R"(gateway_functions_seconds_bucket{function_name="echo.openfaas-fn",le="+Inf"} 2)")) << t;
  EXPECT_TRUE(Has(t, R"(gateway_functions_seconds_count{function_name="echo.openfaas-fn"} 2)")) << t;
  EXPECT_TRUE(Has(t, R"(gateway_functions_seconds_sum{function_name="echo.openfaas-fn"} 0.303)")) << t;
  EXPECT_TRUE(Has(t, R"(gateway_service_count{function_name="echo.openfaas-fn"} 2)")) << t;
}

// Every core counts into its own slots; the scrape sums them exactly.
TEST(GatewayMetrics, PerCoreCountsAddUp) {
  const auto cpus = junction::sched::testing::FirstCpus(2);
  GatewayMetrics m(static_cast<int>(cpus.size()), {});
  constexpr int kPerThread = 5000;
  junction::sched::testing::RunOnCores(2, [&] {
    std::vector<junction::sched::JoinHandle> hs;
    for (int t = 0; t < 8; ++t) {
      hs.push_back(*junction::sched::Spawn([&, t] {
        for (int i = 0; i < kPerThread; ++i) {
          m.Started("f", "ns");
          m.Finished("f", "ns", t % 2 ? 200 : 404, 0.001);
          if (i % 100 == 0) junction::sched::Yield();
        }
      }));
    }
    for (auto& h : hs) h.Join();
  });
  Registry r;
  r.Add([&](MetricWriter& w) { m.Collect(w); });
  const std::string t = r.Render();
  EXPECT_TRUE(Has(t, R"(gateway_function_invocation_started{function_name="f.ns"} 40000)")) << t;
  EXPECT_TRUE(Has(t, R"(gateway_function_invocation_total{function_name="f.ns",code="200"} 20000)")) << t;
  EXPECT_TRUE(Has(t, R"(gateway_function_invocation_total{function_name="f.ns",code="404"} 20000)")) << t;
  EXPECT_TRUE(Has(t, R"(gateway_functions_seconds_count{function_name="f.ns"} 40000)")) << t;
}

TEST(Instrument, CountsDeployedFunctionsOnly) {
  GatewayMetrics m(1, {});
  auto route = Instrument(
      [](const junction::http::Request&, std::string_view rest, junction::http::Reply& reply) {
        reply.status = rest.starts_with("echo") ? 201 : 404;
      },
      &m, [](std::string_view name, std::string_view ns) { return name == "echo" && ns == "openfaas-fn"; });
  junction::http::Request req;
  junction::http::Reply reply;
  route(req, "echo/some/path", reply);
  route(req, "echo.openfaas-fn", reply);
  route(req, "nope", reply);
  route(req, "echo.other", reply);
  Registry r;
  r.Add([&](MetricWriter& w) { m.Collect(w); });
  const std::string t = r.Render();
  EXPECT_TRUE(Has(t, R"(gateway_function_invocation_total{function_name="echo.openfaas-fn",code="201"} 2)")) << t;
  EXPECT_EQ(t.find("nope"), std::string::npos) << t;
  EXPECT_EQ(t.find("echo.other"), std::string::npos) << t;
}

TEST(SplitFunctionName, LastDotSplits) {
  EXPECT_EQ(SplitFunctionName("a.b.c"), (std::pair<std::string_view, std::string_view>("a.b", "c")));
  EXPECT_EQ(SplitFunctionName("echo"), (std::pair<std::string_view, std::string_view>("echo", "openfaas-fn")));
}

TEST(RuntimeCollector, CyclesSchedulerAndNet) {
  const auto cpus = junction::sched::testing::FirstCpus(2);
  const int n = static_cast<int>(cpus.size());
  CycleTotals cycles(n);
  junction::net::NetCounterSet net(n);
  std::string text;
  junction::sched::testing::RunOnCores(2, [&] {
    net.Add(junction::net::Counter::kBytesIn, 42);
    junction::sched::SleepFor(std::chrono::milliseconds(20));
    auto* rt = junction::sched::Runtime::Current();
    Registry r;
    r.Add(MakeRuntimeCollector({.runtime = rt, .cycles = &cycles, .net = &net,
                                .http = [] { return junction::http::ServerStats{.connections_open = 3}; },
                                .before_scrape = [&] { ASSERT_TRUE(cycles.CloseAndObserve(rt).has_value()); }}));
    text = r.Render();
  });
  EXPECT_TRUE(Has(text, "# TYPE faasnode_core_idle_seconds_total counter")) << text;
  EXPECT_NE(text.find("faasnode_core_busy_seconds_total{core=\"0\"} "), std::string::npos) << text;
  EXPECT_NE(text.find("faasnode_sched_switches_total{core=\"0\"} "), std::string::npos) << text;
  EXPECT_TRUE(Has(text, "faasnode_http_connection_uthreads 3")) << text;
  // 42 bytes on whichever core ran it: the per-core lines add up to 42.
  double sum = 0;
  for (std::size_t p = text.find("faasnode_net_bytes_received_total{"); p != std::string::npos;
       p = text.find("faasnode_net_bytes_received_total{", p + 1)) {
    sum += std::stod(text.substr(text.find("} ", p) + 2));
  }
  EXPECT_EQ(sum, 42);
  // The idle seconds of core 0 are plausible: at most the ~20 ms + start-up it ran.
  const auto p = text.find("faasnode_core_idle_seconds_total{core=\"0\"} ");
  ASSERT_NE(p, std::string::npos);
  const double idle = std::stod(text.substr(text.find("} ", p) + 2));
  EXPECT_GT(idle, 0.0);
  EXPECT_LT(idle, 5.0);
}

TEST(ColdStartCollector, CountsAndHistogramPerFunction) {
  static constexpr double kBounds[] = {0.001, 0.01};
  Registry r;
  r.Add(MakeColdStartCollector([] {
    return std::vector<ColdStartSeries>{{"echo.openfaas-fn", kBounds, {1, 2}, 3, 0.5}};
  }));
  const std::string t = r.Render();
  EXPECT_TRUE(Has(t, "# TYPE faasnode_cold_starts_total counter")) << t;
  EXPECT_TRUE(Has(t, R"(faasnode_cold_starts_total{function_name="echo.openfaas-fn"} 3)")) << t;
  EXPECT_TRUE(Has(t, "# TYPE faasnode_cold_start_seconds histogram")) << t;
  EXPECT_TRUE(Has(t, R"(faasnode_cold_start_seconds_bucket{function_name="echo.openfaas-fn",le="0.001"} 1)")) << t;
  EXPECT_TRUE(Has(t, R"(faasnode_cold_start_seconds_bucket{function_name="echo.openfaas-fn",le="0.01"} 2)")) << t;
  EXPECT_TRUE(Has(t, R"(faasnode_cold_start_seconds_bucket{function_name="echo.openfaas-fn",le="+Inf"} 3)")) << t;
  EXPECT_TRUE(Has(t, R"(faasnode_cold_start_seconds_sum{function_name="echo.openfaas-fn"} 0.5)")) << t;
  EXPECT_TRUE(Has(t, R"(faasnode_cold_start_seconds_count{function_name="echo.openfaas-fn"} 3)")) << t;
}

}  // namespace
}  // namespace faasnode::metrics
