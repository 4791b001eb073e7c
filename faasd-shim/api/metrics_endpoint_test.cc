// metrics_endpoint_test.cc — GET /metrics through a real server and curl.
#include <gtest/gtest.h>

#include "faasd-shim/api/metrics.h"
#include "faasd-shim/api/router.h"
#include "faasd-shim/api/serve_for_test.h"
#include "faasd-shim/metrics/gateway_metrics.h"

namespace faasnode::api {
namespace {

TEST(MetricsEndpoint, ServesTheExpositionAndRefusesOtherMethods) {
  if (!testing::HaveCurl()) GTEST_SKIP() << "curl is not installed (scripts/setup.sh installs it)";
  metrics::GatewayMetrics gm(2, {});
  gm.Started("echo", "openfaas-fn");
  gm.Finished("echo", "openfaas-fn", 200, 0.01);
  metrics::Registry registry;
  registry.Add([&](metrics::MetricWriter& w) { gm.Collect(w); });
  Router router;
  testing::Served served([&](junction::net::Stack&) {
    router.Exact("/metrics", MakeMetricsHandler(&registry));
    return router.Handler();
  });
  ASSERT_TRUE(served.ok());
  auto r = served.Curl("-D - '" + served.Url("/metrics") + "'");
  EXPECT_NE(r.output.find("HTTP/1.1 200"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Content-Type: text/plain; version=0.0.4; charset=utf-8"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("gateway_function_invocation_total{function_name=\"echo.openfaas-fn\",code=\"200\"} 1\n"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(served.Curl("-o /dev/null -w '%{http_code}' -X POST '" + served.Url("/metrics") + "'").output, "405");
  EXPECT_EQ(served.Curl("-o /dev/null -w '%{http_code}' -I '" + served.Url("/metrics") + "'").output, "200");
}

}  // namespace
}  // namespace faasnode::api
