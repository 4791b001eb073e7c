// main.cc — the `faasnode` command line: subcommands, --help, and exit codes (2 = bad input).
#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <cstdio>

#include "faasd-shim/cmd/serve_command.h"

int main(int argc, char** argv) {
  CLI::App app{"faasnode — a FaaS node with a kernel-bypass data path and a carbon bill per invocation"};
  app.require_subcommand(1);

  faasnode::ServeOptions serve;
  CLI::App* serve_cmd = app.add_subcommand("serve", "run the node");
  serve_cmd->add_option("--config,-c", serve.config_path, "node config (TOML); default: embedded defaults")
      ->check(CLI::ExistingFile);

  CLI::App* version_cmd = app.add_subcommand("version", "print the version");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "faasnode: %s; run 'faasnode --help'\n", e.what());
    return 2;
  }
  if (version_cmd->parsed()) {
    std::printf("faasnode %s\n", FAASNODE_VERSION);
    return 0;
  }
  if (serve_cmd->parsed()) return faasnode::RunServe(serve);
  return 2;
}
