// probe.cc — test fixture: a C++ function that reports what it received and misbehaves on request.
//
// Body: one "key=value" line per request property. ?do=... selects a misbehaviour: throw,
// bad-status, bad-header, crlf, framing, big (2 KiB of body), fail (returns non-zero via a
// throw of a non-std type), energy (reports 1.25 + 0.5 J of GPU energy), bad-zone, bad-source,
// bad-joules (refused energy reports). The env var FAIL_INIT makes the constructor throw.
#include <atomic>
#include <stdexcept>
#include <string>

#include "faasnode/function.h"

namespace {

using faasnode::sdk::Env;
using faasnode::sdk::LogLevel;
using faasnode::sdk::Request;
using faasnode::sdk::Response;

class Probe {
 public:
  explicit Probe(const Env& env) : env_(env) {
    if (env.Var("FAIL_INIT")) throw std::runtime_error("FAIL_INIT is set");
    env.Log(LogLevel::kInfo, "init");
  }
  ~Probe() { env_.Log(LogLevel::kInfo, "fini"); }

  void Handle(const Request& req, Response& resp) {
    std::uint64_t n = ++calls_;
    std::string what = req.Query("do").value_or("");
    if (what == "throw") throw std::runtime_error("asked to throw");
    if (what == "fail") throw 42;
    if (what == "bad-status") resp.Status(99);
    if (what == "bad-header") resp.Header("Bad Name", "x");
    if (what == "crlf") resp.Header("X-Injected", "a\r\nSet-Cookie: x");
    if (what == "framing") resp.Header("content-length", "5");
    if (what == "big") resp.Write(std::string(2048, 'x'));
    if (what == "energy") {  // two reports that add up: 1.25 J + 0.5 J in zone gpu
      resp.ReportEnergy(FAASNODE_ENERGY_ZONE_GPU, 1.25, FAASNODE_ENERGY_SOURCE_NVML);
      resp.ReportEnergy(FAASNODE_ENERGY_ZONE_GPU, 0.5, FAASNODE_ENERGY_SOURCE_NVML);
    }
    if (what == "bad-zone") {
      resp.ReportEnergy(static_cast<faasnode_energy_zone>(7), 1.0, FAASNODE_ENERGY_SOURCE_NVML);
    }
    if (what == "bad-source") {
      resp.ReportEnergy(FAASNODE_ENERGY_ZONE_GPU, 1.0, static_cast<faasnode_energy_source>(9));
    }
    if (what == "bad-joules") {
      resp.ReportEnergy(FAASNODE_ENERGY_ZONE_GPU, -1.0, FAASNODE_ENERGY_SOURCE_NVML);
    }
    req.Log(LogLevel::kWarn, "handled");

    std::string out;
    auto line = [&](std::string_view k, std::string_view v) {
      out.append(k).append("=").append(v).append("\n");
    };
    line("call", std::to_string(n));
    line("method", req.method());
    line("path", req.path());
    line("query", req.query());
    line("headers", std::to_string(req.num_headers()));
    line("x-test", req.Header("x-TEST").value_or("<none>"));
    line("body", req.body());
    line("var", req.env().Var("MODE").value_or("<none>"));
    line("secret", req.env().Secret("api-key").value_or("<none>"));
    line("deadline", req.deadline_ns() == FAASNODE_NO_DEADLINE ? "none" : "set");
    line("remaining_ms", std::to_string(req.Remaining().count() / 1'000'000));
    resp.Status(203);
    resp.Header("X-Probe", "yes");
    resp.Write(out);
  }

 private:
  const Env& env_;
  std::atomic<std::uint64_t> calls_{0};
};

}  // namespace

FAASNODE_EXPORT_FUNCTION(Probe, "probe")
