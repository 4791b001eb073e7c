// http_parser_bench.cc — ns per request to parse a 200-byte GET, a 1 KB POST; to write a reply.
#include <benchmark/benchmark.h>

#include <string>

#include "junction/http/request_parser.h"
#include "junction/http/response_writer.h"

namespace junction::http {
namespace {

std::string TypicalGet() {
  std::string s =
      "GET /function/echo?name=world HTTP/1.1\r\n"
      "Host: 127.0.0.1:8080\r\n"
      "User-Agent: curl/7.88.1\r\n"
      "Accept: */*\r\n"
      "X-Call-Id: 6a1b2c3d-4e5f-6789-abcd-ef0123456789\r\n";
  // Pad to 200 bytes with a realistic header.
  std::string pad = "X-Trace: ";
  std::size_t need = 200 - s.size() - pad.size() - 4;
  s += pad + std::string(need, 't') + "\r\n\r\n";
  return s;
}

std::string Post1K() {
  std::string body(1024, 'b');
  return "POST /function/sha256 HTTP/1.1\r\n"
         "Host: 127.0.0.1:8080\r\n"
         "User-Agent: faas-cli/0.16\r\n"
         "Content-Type: application/octet-stream\r\n"
         "Content-Length: 1024\r\n"
         "\r\n" +
         body;
}

void ParseLoop(benchmark::State& state, const std::string& request) {
  RequestParser parser;
  for (auto _ : state) {
    parser.Feed(request);
    auto r = parser.Next();
    if (!r || *r == nullptr) {
      state.SkipWithError("parse failed");
      break;
    }
    benchmark::DoNotOptimize((*r)->body.data());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(request.size()));
  state.SetLabel(std::to_string(request.size()) + " B/request");
}

void BM_ParseGet200B(benchmark::State& state) {
  ParseLoop(state, TypicalGet());
}
BENCHMARK(BM_ParseGet200B);

void BM_ParsePost1K(benchmark::State& state) {
  ParseLoop(state, Post1K());
}
BENCHMARK(BM_ParsePost1K);

// Ten pipelined GETs per Feed: the per-request cost without one Feed per request.
void BM_ParseGet200BPipelined10(benchmark::State& state) {
  std::string ten;
  for (int i = 0; i < 10; ++i) ten += TypicalGet();
  RequestParser parser;
  for (auto _ : state) {
    parser.Feed(ten);
    for (int i = 0; i < 10; ++i) {
      auto r = parser.Next();
      benchmark::DoNotOptimize(r);
    }
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * 10);
}
BENCHMARK(BM_ParseGet200BPipelined10);

void BM_WriteSmallResponse(benchmark::State& state) {
  std::string out;
  for (auto _ : state) {
    out.clear();
    ResponseWriter w(out, {});
    w.Start(200);
    (void)w.AddHeader("Content-Type", "text/plain");
    w.Finish("Hello, world!\n");
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_WriteSmallResponse);

}  // namespace
}  // namespace junction::http

BENCHMARK_MAIN();
