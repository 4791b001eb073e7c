// runtime_metrics.cc — collectors over the runtime's, the stack's and the server's counters.
#include "faasd-shim/metrics/runtime_metrics.h"

#include <string>

#include "junction/sched/core.h"

namespace faasnode::metrics {

CycleTotals::CycleTotals(int num_cores) : cores_(num_cores < 1 ? 1 : num_cores) {}

void CycleTotals::Observe(const junction::sched::IntervalSnapshot& snap) {
  if (snap.tsc_hz > 0) tsc_hz_.store(snap.tsc_hz, std::memory_order_relaxed);
  for (const auto& c : snap.cores) {
    if (c.core < 0 || c.core >= static_cast<int>(cores_.size())) continue;
    Core& t = cores_[c.core];
    t.busy.store(t.busy.load(std::memory_order_relaxed) + c.busy_total(), std::memory_order_relaxed);
    t.overhead.store(t.overhead.load(std::memory_order_relaxed) + c.overhead(), std::memory_order_relaxed);
    t.idle.store(t.idle.load(std::memory_order_relaxed) + c.idle, std::memory_order_relaxed);
  }
}

junction::Status<void> CycleTotals::CloseAndObserve(junction::sched::Runtime* rt) {
  auto snap = rt->CloseInterval(std::chrono::milliseconds(200));
  if (!snap) return std::unexpected(snap.error());
  Observe(*snap);
  return {};
}

void CycleTotals::Collect(MetricWriter& w) const {
  const double hz = tsc_hz_.load(std::memory_order_relaxed);
  if (hz <= 0) return;  // nothing observed yet
  struct Series {
    const char* name;
    const char* help;
    std::atomic<std::uint64_t> Core::*field;
  };
  static constexpr Series kSeries[] = {
      {"faasnode_core_busy_seconds_total", "Seconds each core ran invocations and the network stack (cycle accounts).",
       &Core::busy},
      {"faasnode_core_overhead_seconds_total", "Seconds each core spent scheduling and polling (cycle accounts).",
       &Core::overhead},
      {"faasnode_core_idle_seconds_total", "Seconds each core's kthread was blocked idle (cycle accounts).",
       &Core::idle},
  };
  for (const auto& s : kSeries) {
    w.Family(s.name, "counter", s.help);
    for (std::size_t i = 0; i < cores_.size(); ++i) {
      const std::string core = std::to_string(i);
      w.Sample({{"core", core}}, static_cast<double>((cores_[i].*s.field).load(std::memory_order_relaxed)) / hz);
    }
  }
}

Collector MakeRuntimeCollector(RuntimeSources src) {
  return [src = std::move(src)](MetricWriter& w) {
    if (src.before_scrape) src.before_scrape();
    if (src.cycles != nullptr) src.cycles->Collect(w);
    if (src.runtime != nullptr) {
      const int n = src.runtime->num_cores();
      std::vector<junction::sched::CoreCounters> cc;
      for (int i = 0; i < n; ++i) cc.push_back(src.runtime->counters(i));
      struct Series {
        const char* name;
        const char* help;
        std::uint64_t junction::sched::CoreCounters::*field;
      };
      static constexpr Series kSeries[] = {
          {"faasnode_sched_switches_total", "Uthread switches per core.", &junction::sched::CoreCounters::switches},
          {"faasnode_sched_steals_total", "Uthreads a core stole from others.", &junction::sched::CoreCounters::stolen},
          {"faasnode_sched_remote_wakes_total", "Uthreads woken from another core.",
           &junction::sched::CoreCounters::remote_wakes},
          {"faasnode_sched_idle_blocks_total", "Times a core's kthread blocked idle.",
           &junction::sched::CoreCounters::blocks},
          {"faasnode_sched_timers_fired_total", "Uthread timers fired per core.",
           &junction::sched::CoreCounters::timers_fired},
      };
      for (const auto& s : kSeries) {
        w.Family(s.name, "counter", s.help);
        for (int i = 0; i < n; ++i) {
          const std::string core = std::to_string(i);
          w.Sample({{"core", core}}, static_cast<double>(cc[i].*s.field));
        }
      }
    }
    if (src.net != nullptr) {
      const int n = src.net->num_cores();
      std::vector<junction::net::NetCounters> nc;
      for (int i = 0; i < n; ++i) nc.push_back(src.net->Read(i));
      nc.push_back(src.net->Read(-1));
      struct Series {
        const char* name;
        const char* help;
        std::uint64_t junction::net::NetCounters::*field;
      };
      using NC = junction::net::NetCounters;
      static constexpr Series kSeries[] = {
          {"faasnode_net_conns_accepted_total", "TCP connections accepted.", &NC::conns_accepted},
          {"faasnode_net_conns_connected_total", "TCP connections opened by the node.", &NC::conns_connected},
          {"faasnode_net_bytes_received_total", "TCP and UDP payload bytes received.", &NC::bytes_in},
          {"faasnode_net_bytes_sent_total", "TCP and UDP payload bytes sent.", &NC::bytes_out},
          {"faasnode_net_datagrams_received_total", "UDP datagrams received.", &NC::datagrams_in},
          {"faasnode_net_datagrams_sent_total", "UDP datagrams sent.", &NC::datagrams_out},
          {"faasnode_net_timeouts_total", "Socket operations that timed out.", &NC::timeouts},
          {"faasnode_net_errors_total", "Socket operations that failed otherwise.", &NC::errors},
      };
      for (const auto& s : kSeries) {
        w.Family(s.name, "counter", s.help);
        for (int i = 0; i <= n; ++i) {
          const std::string core = i < n ? std::to_string(i) : std::string("external");
          w.Sample({{"core", core}}, static_cast<double>(nc[i].*s.field));
        }
      }
    }
    if (src.http) {
      const junction::http::ServerStats st = src.http();
      w.Family("faasnode_http_connection_uthreads", "gauge", "Open HTTP connections, one uthread each.");
      w.Sample({}, static_cast<double>(st.connections_open));
      w.Family("faasnode_http_requests_total", "counter", "HTTP requests answered by the node.");
      w.Sample({}, static_cast<double>(st.requests));
      w.Family("faasnode_http_responses_total", "counter", "HTTP error responses by class.");
      w.Sample({{"class", "4xx"}}, static_cast<double>(st.responses_4xx));
      w.Sample({{"class", "5xx"}}, static_cast<double>(st.responses_5xx));
      w.Family("faasnode_http_timeouts_total", "counter", "HTTP read, idle and write timeouts.");
      w.Sample({}, static_cast<double>(st.timeouts));
    }
  };
}

}  // namespace faasnode::metrics
