// node_config_test.cc — config parsing: defaults, overrides, and one-line errors naming keys.
#include "faasd-shim/config/node_config.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>

namespace faasnode {
namespace {

std::string ErrorOf(std::string_view text) {
  auto c = ParseNodeConfig(text, "test.toml");
  EXPECT_FALSE(c.has_value());
  return c.has_value() ? "" : c.error().message();
}

TEST(NodeConfig, EmptyTextGivesTheEmbeddedDefaults) {
  auto c = ParseNodeConfig("", "test.toml");
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_EQ(c->runtime.cores, junction::sched::AllowedCpus());
  EXPECT_EQ(c->runtime.stack_size, 64u * 1024);
  EXPECT_EQ(c->runtime.stack_prealloc, 128u) << "a node maps its stacks at start";
  EXPECT_EQ(c->runtime.heap_prealloc, 4u << 20) << "and 4 MiB of heap per core";
  EXPECT_EQ(c->net.prime_connections, 128u);
  EXPECT_EQ(c->net.prime_ring_bytes, 16u * 1024);
}

TEST(NodeConfig, PreallocationKeys) {
  auto c = ParseNodeConfig("[runtime]\nheap_prealloc_kib = 0\n[net]\nprime_connections = 8\nprime_ring_kib = 64\n", "t");
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_EQ(c->runtime.heap_prealloc, 0u);
  EXPECT_EQ(c->net.prime_connections, 8u);
  EXPECT_EQ(c->net.prime_ring_bytes, 64u * 1024);
  EXPECT_NE(ErrorOf("[runtime]\nheap_prealloc_kib = -4\n").find("runtime.heap_prealloc_kib"), std::string::npos);
  EXPECT_NE(ErrorOf("[net]\nprime_connections = \"all\"\n").find("net.prime_connections"), std::string::npos);
  EXPECT_NE(ErrorOf("[net]\nprime = 1\n").find("prime_connections, prime_ring_kib"), std::string::npos);
}

TEST(NodeConfig, OverridesRuntimeKeys) {
  auto c = ParseNodeConfig("[runtime]\ncores = [0]\nstack_size_kib = 32\nidle_spin_us = 10\n", "t");
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_EQ(c->runtime.cores, std::vector<int>{0});
  EXPECT_EQ(c->runtime.stack_size, 32u * 1024);
  EXPECT_EQ(c->runtime.idle_spin_us, 10u);
  auto none = ParseNodeConfig("[runtime]\nstack_prealloc = 0\n", "t");
  ASSERT_TRUE(none.has_value()) << none.error().message();
  EXPECT_EQ(none->runtime.stack_prealloc, 0u);
  EXPECT_NE(ErrorOf("[runtime]\nstack_prealloc = -1\n").find("runtime.stack_prealloc"), std::string::npos);
  auto park = ParseNodeConfig("[runtime]\npark_poll_us = 0\n", "t");
  ASSERT_TRUE(park.has_value()) << park.error().message();
  EXPECT_EQ(park->runtime.park_poll_us, 0u);
  EXPECT_EQ(junction::sched::RuntimeConfig{}.park_poll_us, 10u);
  EXPECT_NE(ErrorOf("[runtime]\npark_poll_us = 5000\n").find("runtime.park_poll_us"), std::string::npos);
}

TEST(NodeConfig, ErrorsNameTheKeyAndTheProblem) {
  EXPECT_NE(ErrorOf("[runtime]\ncores = [4000]\n").find("runtime.cores: CPU 4000 is not available"), std::string::npos);
  EXPECT_NE(ErrorOf("[runtime]\nstack_size_kib = 8\n").find("runtime.stack_size_kib: 8 KiB is below the 16 KiB minimum"), std::string::npos);
  EXPECT_NE(ErrorOf("[runtime]\nstack_size = 8\n").find("runtime.stack_size: unknown key"), std::string::npos);
  EXPECT_NE(ErrorOf("[runtim]\n").find("runtim: unknown section"), std::string::npos);
  EXPECT_NE(ErrorOf("[runtime]\ncores = \"0\"\n").find("runtime.cores: expected an array"), std::string::npos);
  EXPECT_NE(ErrorOf("[runtime\n").find("test.toml:1:"), std::string::npos);
  for (auto text : {"[runtime]\ncores = [4000]\n", "[x]\n", "[runtime]\nstack_guard = 3\n"}) {
    EXPECT_EQ(ErrorOf(text).find('\n'), std::string::npos) << "one line, please: " << ErrorOf(text);
  }
}

TEST(NodeConfig, NetAndHttpSections) {
  auto c = ParseNodeConfig("[net]\nbackend = \"kernel\"\nlisten = \"127.0.0.1:9090\"\n"
                           "[http]\nmax_body_bytes = 1024\nread_timeout_ms = 500\n", "t");
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_EQ(c->net.listen, "127.0.0.1:9090");
  EXPECT_EQ(c->http.max_body_bytes, 1024u);
  EXPECT_EQ(c->http.read_timeout, std::chrono::milliseconds(500));
  EXPECT_NE(ErrorOf("[net]\nbackend = \"rdma\"\n").find("net.backend: \"rdma\" is not a backend"), std::string::npos);
  EXPECT_NE(ErrorOf("[net]\nlisten = \"8080\"\n").find("net.listen"), std::string::npos);
  EXPECT_NE(ErrorOf("[http]\ntimeout = 3\n").find("http.timeout: unknown key"), std::string::npos);
}

TEST(NodeConfig, FunctionsDefaultToTheSamplesAndADeclaredSetReplacesThem) {
  auto d = ParseNodeConfig("", "t");
  ASSERT_TRUE(d.has_value());
  ASSERT_GE(d->functions.functions.size(), 6u);
  EXPECT_EQ(d->functions.functions[0].name, "echo");
  std::vector<std::string> names;
  for (const auto& f : d->functions.functions) names.push_back(f.name);
  for (const char* n : {"echo", "hello", "json-stats", "sha256", "sleep", "cpu-burn", "cat", "wc", "sha512sum"}) {
    EXPECT_NE(std::ranges::find(names, n), names.end()) << n << " is not a default function";
  }
  auto c = ParseNodeConfig("[functions]\nstore = \"/srv/fn\"\n[functions.greet]\nartifact = \"hello\"\n"
                           "replicas = 2\nmax_inflight = 8\nidle_timeout_ms = 1000\nenv = { A = \"b\" }\n", "t");
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_EQ(c->functions.store_dir, "/srv/fn");
  ASSERT_EQ(c->functions.functions.size(), 1u);
  const FunctionConfig& f = c->functions.functions[0];
  EXPECT_EQ(f.name, "greet");
  EXPECT_EQ(f.artifact, "hello");
  EXPECT_EQ(f.replicas, 2);
  EXPECT_EQ(f.max_inflight, 8);
  EXPECT_EQ(f.idle_timeout, std::chrono::milliseconds(1000));
  ASSERT_EQ(f.env.size(), 1u);
  EXPECT_NE(ErrorOf("[functions.x]\nreplicas = 0\n").find("functions.x.replicas"), std::string::npos);
}

// min_warm: instances started with the node (default 0: the first call cold-starts one).
TEST(NodeConfig, FunctionsMinWarm) {
  auto c = ParseNodeConfig("[functions.a]\n[functions.b]\nreplicas = 3\nmin_warm = 2\n", "t");
  ASSERT_TRUE(c.has_value()) << c.error().message();
  ASSERT_EQ(c->functions.functions.size(), 2u);
  EXPECT_EQ(c->functions.functions[0].min_warm, 0) << "cold on first use unless asked";
  EXPECT_EQ(c->functions.functions[1].min_warm, 2);
  const std::string over = ErrorOf("[functions.b]\nmin_warm = 2\n");
  EXPECT_NE(over.find("functions.b.min_warm: 2 instances kept warm is more than replicas = 1"), std::string::npos)
      << over;
  EXPECT_NE(ErrorOf("[functions.b]\nmin_warm = -1\n").find("functions.b.min_warm"), std::string::npos);
  EXPECT_NE(ErrorOf("[functions.b]\nwarm = 1\n").find("min_warm"), std::string::npos) << "listed among known keys";
}

// The configs the repository ships load as they are (README and scripts start the node with them).
TEST(NodeConfig, ShippedConfigsLoad) {
  auto dev = LoadNodeConfig(FAASNODE_SOURCE_DIR "/configs/dev.toml");
  ASSERT_TRUE(dev.has_value()) << dev.error().message();
  EXPECT_EQ(dev->net.backend, "kernel");
  EXPECT_EQ(dev->net.listen, "127.0.0.1:8080");
  std::vector<std::string> names;
  for (const auto& f : dev->functions.functions) names.push_back(f.name);
  for (const char* n : {"echo", "hello", "json-stats", "sha256", "sleep", "cpu-burn", "cat", "wc", "sha512sum"}) {
    EXPECT_NE(std::ranges::find(names, n), names.end()) << n << " is not declared in configs/dev.toml";
  }
  auto tap = LoadNodeConfig(FAASNODE_SOURCE_DIR "/configs/dpdk-tap.toml");
  ASSERT_TRUE(tap.has_value()) << tap.error().message();
  EXPECT_EQ(tap->net.backend, "dpdk");
  EXPECT_NE(std::ranges::find(tap->net.dpdk.eal_args, "--vdev=net_tap0,iface=fntap0"), tap->net.dpdk.eal_args.end());
}

TEST(NodeConfig, ExecFunctions) {
  auto d = ParseNodeConfig("", "t");
  ASSERT_TRUE(d.has_value());
  std::map<std::string, std::string> exec;
  for (const auto& f : d->functions.functions) {
    if (f.kind == "exec") exec[f.name] = f.fprocess;
  }
  EXPECT_EQ(exec, (std::map<std::string, std::string>{{"cat", "cat"}, {"wc", "wc -l"}, {"sha512sum", "sha512sum"}}));
  EXPECT_EQ(d->functions.exec_user, "nobody");
  auto c = ParseNodeConfig("[functions]\nexec_user = \"daemon\"\n[functions.lines]\nfprocess = \"wc -l\"\n"
                           "exec_timeout_ms = 500\nmemory_limit_mib = 64\ncombine_output = false\nmax_inflight = 4\n", "t");
  ASSERT_TRUE(c.has_value()) << c.error().message();
  ASSERT_EQ(c->functions.functions.size(), 1u);
  const FunctionConfig& f = c->functions.functions[0];
  EXPECT_EQ(f.kind, "exec");
  EXPECT_EQ(f.fprocess, "wc -l");
  EXPECT_EQ(f.exec_timeout, std::chrono::milliseconds(500));
  EXPECT_EQ(f.memory_limit_mib, 64u);
  EXPECT_FALSE(f.combine_output);
  EXPECT_EQ(f.max_inflight, 4);
  EXPECT_EQ(c->functions.exec_user, "daemon");
  EXPECT_NE(ErrorOf("[functions.cat]\nkind = \"exec\"\n").find("functions.cat.fprocess: an exec function needs"),
            std::string::npos);
  EXPECT_NE(ErrorOf("[functions.x]\nkind = \"native\"\nfprocess = \"cat\"\n").find("a native function has no fprocess"),
            std::string::npos);
  EXPECT_NE(ErrorOf("[functions.x]\nkind = \"shell\"\n").find("functions.x.kind"), std::string::npos);
  EXPECT_NE(ErrorOf("[functions.x]\nfprocess = \"cat\"\nexec_timeout_ms = -1\n").find("functions.x.exec_timeout_ms"),
            std::string::npos);
}

TEST(NodeConfig, EnergySection) {
  auto c = ParseNodeConfig("[energy]\ninterval_ms = 5\nledger = \"/tmp/l.db\"\ncarbon_g_per_kwh = 250\n"
                           "idle_watts_per_core = 1\nmax_watts_per_core = 4.5\n", "t");
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_EQ(c->energy.interval, std::chrono::milliseconds(5));
  EXPECT_EQ(c->energy.ledger, "/tmp/l.db");
  EXPECT_DOUBLE_EQ(c->energy.carbon_g_per_kwh, 250.0);
  EXPECT_DOUBLE_EQ(c->energy.max_watts_per_core, 4.5);
  EXPECT_NE(ErrorOf("[energy]\ninterval_ms = 0\n").find("energy.interval_ms"), std::string::npos);
  EXPECT_NE(ErrorOf("[energy]\nidle_watts_per_core = 9\n").find("above max_watts_per_core"), std::string::npos);
  EXPECT_NE(ErrorOf("[energy]\nrapl = true\n").find("energy.rapl: unknown key"), std::string::npos);
  auto m = ParseNodeConfig("[energy]\nmeter = \"model\"\ngpu_meter = \"off\"\nresponse_headers = false\n"
                           "share_idle = true\n", "t");
  ASSERT_TRUE(m.has_value()) << m.error().message();
  EXPECT_EQ(m->energy.meter, "model");
  EXPECT_EQ(m->energy.gpu_meter, "off");
  EXPECT_FALSE(m->energy.response_headers);
  EXPECT_TRUE(m->energy.share_idle);
  EXPECT_FALSE(m->energy.share_overhead);
  EXPECT_NE(ErrorOf("[energy]\nmeter = \"nvml\"\n").find("use auto, rapl or model"), std::string::npos);
}

TEST(NodeConfig, EnergyCarbonKeys) {
  const NodeConfig d = DefaultNodeConfig();
  EXPECT_EQ(d.energy.carbon_gaps, "interpolate");
  EXPECT_DOUBLE_EQ(d.energy.embodied_g_per_core_second, 0.0);
  auto c = ParseNodeConfig("[energy]\ncarbon_gaps = \"hold\"\nembodied_g_per_core_second = 1.5e-4\n", "t");
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_EQ(c->energy.carbon_gaps, "hold");
  EXPECT_DOUBLE_EQ(c->energy.embodied_g_per_core_second, 1.5e-4);
  auto i = ParseNodeConfig("[energy]\ncarbon_gaps = \"interpolate\"\nembodied_g_per_core_second = 0\n", "t");
  ASSERT_TRUE(i.has_value()) << i.error().message();
  EXPECT_EQ(i->energy.carbon_gaps, "interpolate");
  const std::string bad_gaps = ErrorOf("[energy]\ncarbon_gaps = \"nearest\"\n");
  EXPECT_NE(bad_gaps.find("energy.carbon_gaps: \"nearest\" is not a gap policy; use \"hold\" or \"interpolate\""),
            std::string::npos) << bad_gaps;
  EXPECT_EQ(bad_gaps.find('\n'), std::string::npos);  // one line
  EXPECT_NE(ErrorOf("[energy]\ncarbon_gaps = 1\n").find("energy.carbon_gaps: expected a string"), std::string::npos);
  EXPECT_NE(ErrorOf("[energy]\nembodied_g_per_core_second = -1\n").find("energy.embodied_g_per_core_second: -1 is out of range"),
            std::string::npos);
  EXPECT_NE(ErrorOf("[energy]\nembodied_g_per_core_second = \"x\"\n").find("energy.embodied_g_per_core_second: expected a number"),
            std::string::npos);
  EXPECT_NE(ErrorOf("[energy]\nembodied_g_per_core_second = 2\n").find("out of range [0, 1]"), std::string::npos);
}

TEST(NodeConfig, MissingFileIsAClearError) {
  auto c = LoadNodeConfig("/nonexistent/dev.toml");
  ASSERT_FALSE(c.has_value());
  EXPECT_NE(c.error().message().find("/nonexistent/dev.toml cannot be read"), std::string::npos);
}

TEST(NodeConfig, NetDpdkKeys) {
  auto c = ParseNodeConfig(R"([net]
backend = "dpdk"
[net.dpdk]
eal_args = ["--no-pci", "--vdev=net_tap0,iface=fn0"]
hugepages = "off"
port = "net_tap0"
ip = "10.1.2.3"
prefix_len = 16
gateway = "10.1.0.1"
burst = 16
idle_poll_max_us = 500
[net.dpdk.faults]
drop = 0.05
reorder = 0.1
seed = 9
tx = true
)", "t");
  ASSERT_TRUE(c.has_value()) << c.error().message();
  const junction::net::DpdkOptions& d = c->net.dpdk;
  EXPECT_EQ(d.eal_args.size(), 2u);
  EXPECT_EQ(d.eal_args[1], "--vdev=net_tap0,iface=fn0");
  EXPECT_EQ(d.hugepages, "off");
  EXPECT_EQ(d.port, "net_tap0");
  EXPECT_EQ(d.ip, junction::net::Ipv4Addr(10, 1, 2, 3));
  EXPECT_EQ(d.prefix_len, 16);
  EXPECT_EQ(d.gateway, junction::net::Ipv4Addr(10, 1, 0, 1));
  EXPECT_EQ(d.burst, 16);
  EXPECT_EQ(d.idle_poll_max_us, 500u);
  EXPECT_DOUBLE_EQ(d.faults.drop, 0.05);
  EXPECT_DOUBLE_EQ(d.faults.reorder, 0.1);
  EXPECT_EQ(d.faults.seed, 9u);
  EXPECT_TRUE(d.faults.tx);

  auto bad = [](const char* text) {
    auto r = ParseNodeConfig(text, "t");
    return r ? std::string("accepted") : std::string(r.error().message());
  };
  EXPECT_NE(bad("[net.dpdk]\nip = \"10.1\"\n").find("net.dpdk.ip"), std::string::npos);
  EXPECT_NE(bad("[net.dpdk]\nburst = 0\n").find("net.dpdk.burst"), std::string::npos);
  EXPECT_NE(bad("[net.dpdk]\nhugepages = \"maybe\"\n").find("net.dpdk.hugepages"),
            std::string::npos);
  EXPECT_NE(bad("[net.dpdk]\nqueues = 2\n").find("unknown key"), std::string::npos);
  EXPECT_NE(bad("[net.dpdk.faults]\ndrop = 1.5\n").find("net.dpdk.faults.drop"),
            std::string::npos);
  EXPECT_NE(bad("[net.dpdk.faults]\ndrop = 0.6\nreorder = 0.6\n").find("at most 1"),
            std::string::npos);
}

}  // namespace
}  // namespace faasnode
