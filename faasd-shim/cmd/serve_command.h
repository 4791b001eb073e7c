// serve_command.h — `faasnode serve`: bring the node up from its config and run it.
#pragma once

#include <string>

namespace faasnode {

struct ServeOptions {
  std::string config_path;  // empty: the embedded defaults
};

// Returns the process exit code: 0 on a clean stop, 2 on bad input (config), 1 on a
// failure at start-up. Logs through spdlog.
int RunServe(const ServeOptions& options);

}  // namespace faasnode
