// json_stats.cc — the json-stats function: count/min/max/mean/stddev/median of a JSON number array.
//
// POST a body such as [1, 2, 3.5]; the answer is application/json (see StatsJson in stats.h).
// A body that is not a JSON array of finite numbers gets 400 with {"error": "..."}.
#include "faasnode/function.h"
#include "stats.h"

namespace {

using faasnode::functions::ComputeStats;
using faasnode::functions::ErrorJson;
using faasnode::functions::ParseNumberArray;
using faasnode::functions::StatsJson;

class JsonStats {
 public:
  void Handle(const faasnode::sdk::Request& req, faasnode::sdk::Response& resp) const {
    resp.Header("Content-Type", "application/json");
    auto values = ParseNumberArray(req.body());
    if (!values) {
      resp.Status(400);
      resp.Write(ErrorJson(values.error()));
      return;
    }
    resp.Write(StatsJson(ComputeStats(*values)));
  }
};

}  // namespace

FAASNODE_EXPORT_FUNCTION(JsonStats, "json-stats")
