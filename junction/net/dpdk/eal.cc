// eal.cc — starting the EAL once per process (see eal.h).
#include "junction/net/dpdk/eal.h"

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

namespace junction::net::dpdk {
namespace {

// What the EAL needs at least to hold one stack's pools (see port.cc's pool sizing).
constexpr std::uint64_t kMinHugeBytes = 256ull << 20;

bool HasArg(const std::vector<std::string>& args, std::string_view prefix) {
  for (const auto& a : args) {
    if (a.starts_with(prefix)) return true;
  }
  return false;
}

struct EalState {
  std::mutex mu;
  bool tried = false;
  Status<EalInfo> result = MakeError(ErrorCode::kUnavailable, "EAL not started");
};
EalState& State() {
  static EalState* s = new EalState();
  return *s;
}

}  // namespace

std::uint64_t FreeHugepageBytes() {
  std::ifstream in("/proc/meminfo");
  std::string line;
  std::uint64_t free_pages = 0, page_kib = 0;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string key;
    std::uint64_t v = 0;
    ls >> key >> v;
    if (key == "HugePages_Free:") free_pages = v;
    if (key == "Hugepagesize:") page_kib = v;
  }
  return free_pages * page_kib * 1024;
}

bool HugetlbfsMounted() {
  std::ifstream in("/proc/mounts");
  std::string dev, dir, type;
  while (in >> dev >> dir >> type) {
    if (type == "hugetlbfs") return true;
    in.ignore(1 << 16, '\n');
  }
  return false;
}

Status<EalInfo> StartEal(const DpdkOptions& options) {
  EalState& st = State();
  std::lock_guard lock(st.mu);
  if (st.tried) return st.result;

  if (options.hugepages != "auto" && options.hugepages != "on" && options.hugepages != "off") {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("dpdk hugepages = \"{}\": use \"auto\", \"on\" or \"off\"",
                                 options.hugepages));
  }
  EalInfo info;
  info.args = options.eal_args;
  const bool have_huge = HugetlbfsMounted() && FreeHugepageBytes() >= kMinHugeBytes;
  if (options.hugepages == "on" && !have_huge) {
    return MakeError(ErrorCode::kUnavailable,
                     fmt::format("dpdk hugepages = \"on\" but {} MiB are free{} (need {} MiB): "
                                 "echo 512 > /proc/sys/vm/nr_hugepages and mount hugetlbfs, or "
                                 "set hugepages = \"auto\"",
                                 FreeHugepageBytes() >> 20,
                                 HugetlbfsMounted() ? "" : " and no hugetlbfs is mounted",
                                 kMinHugeBytes >> 20));
  }
  info.hugepages = options.hugepages != "off" && have_huge && !HasArg(info.args, "--no-huge");
  if (!info.hugepages && !HasArg(info.args, "--no-huge")) {
    info.args.push_back("--no-huge");
    if (!HasArg(info.args, "-m") && !HasArg(info.args, "--socket-mem")) {
      info.args.push_back("-m");
      info.args.push_back("256");
    }
  }
  if (info.hugepages && !HasArg(info.args, "--in-memory") && !HasArg(info.args, "--huge-unlink")) {
    info.args.push_back("--huge-unlink");  // no hugepage files left behind after exit
  }
  if (!HasArg(info.args, "--file-prefix")) {
    static std::atomic<int> n{0};
    info.args.push_back(fmt::format("--file-prefix=faasnode-{}-{}", ::getpid(), n++));
  }
  if (!HasArg(info.args, "-l") && !HasArg(info.args, "-c") && !HasArg(info.args, "--lcores")) {
    info.args.push_back("-l");
    info.args.push_back("0");
  }

  std::vector<std::string> argv_s;
  argv_s.push_back("faasnode");
  for (const auto& a : info.args) argv_s.push_back(a);
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);

  // rte_eal_init pins its caller to the main lcore's CPU: run it on a thread of its own.
  int rc = 0, err = 0;
  std::thread t([&] {
    rc = rte_eal_init(static_cast<int>(argv_s.size()), argv.data());
    err = rte_errno;
  });
  t.join();
  st.tried = true;
  if (rc < 0) {
    st.result = MakeError(ErrorCode::kUnavailable,
                          fmt::format("DPDK EAL init failed ({}) with arguments [{}]: check "
                                      "net.dpdk.eal_args (and that this runs as root)",
                                      rte_strerror(err), fmt::join(info.args, " ")));
  } else {
    spdlog::info("dpdk: EAL started ({}) with [{}]", info.hugepages ? "hugepages" : "no hugepages",
                 fmt::join(info.args, " "));
    st.result = info;
  }
  return st.result;
}

Status<void> RegisterThisThread() {
  if (rte_lcore_id() != LCORE_ID_ANY) return {};
  if (rte_thread_register() != 0) {
    return MakeError(ErrorCode::kUnavailable,
                     fmt::format("dpdk: registering a worker thread with the EAL failed ({})",
                                 rte_strerror(rte_errno)));
  }
  return {};
}

}  // namespace junction::net::dpdk
