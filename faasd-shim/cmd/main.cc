// main.cc — the `faasnode` command line: subcommands, --help, and exit codes (2 = bad input).
#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <cstdio>

#include "faasd-shim/cmd/carbon_report.h"
#include "faasd-shim/cmd/serve_command.h"

int main(int argc, char** argv) {
  CLI::App app{"faasnode — a FaaS node with a kernel-bypass data path and a carbon bill per invocation"};
  app.require_subcommand(1);

  faasnode::ServeOptions serve;
  CLI::App* serve_cmd = app.add_subcommand("serve", "run the node");
  serve_cmd->add_option("--config,-c", serve.config_path, "node config (TOML); default: embedded defaults")
      ->check(CLI::ExistingFile);

  CLI::App* version_cmd = app.add_subcommand("version", "print the version");

  faasnode::CarbonReportOptions report;
  report.ledger_path = "faasnode-state/ledger.db";
  CLI::App* carbon_cmd = app.add_subcommand("carbon", "energy and carbon of past invocations");
  carbon_cmd->require_subcommand(1);
  CLI::App* report_cmd = carbon_cmd->add_subcommand("report", "joules and gCO2e per function or hour, from the ledger");
  report_cmd->add_option("--ledger", report.ledger_path, "the ledger (energy.ledger in the config)")
      ->capture_default_str();
  report_cmd->add_option("--function", report.function, "only this function");
  report_cmd->add_option("--since", report.since, "from this time (ISO 8601 or unix seconds)");
  report_cmd->add_option("--until", report.until, "until this time (ISO 8601 or unix seconds)");
  report_cmd->add_option("--group-by", report.group_by, "function or hour")->capture_default_str();
  report_cmd->add_option("--format", report.format, "table, csv, json or html (one self-contained page)")->capture_default_str();

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
  if (report_cmd->parsed()) return faasnode::RunCarbonReport(report);
  return 2;
}
