//===- cmd_backends.cpp - llmc backends
//------------------------------------===//

#include "commands.h"
#include "llmc/runtime/backend_registry.h"

#include <cstdio>

namespace llmc::cli {

Action addBackends(CLI::App &) {
  return []() -> int {
    BackendRegistry registry = BackendRegistry::discover();
    std::printf("search path:");
    for (const std::string &dir : BackendRegistry::searchPath())
      std::printf(" %s", dir.c_str());
    std::printf("\n");
    if (registry.backends().empty())
      std::printf("no backends found\n");
    for (const LoadedBackend &b : registry.backends()) {
      std::printf("%-6s %s (ABI %u.%u, score %d)\n", b.name.c_str(),
                  b.path.c_str(), b.api->abi_major, b.api->abi_minor,
                  b.score());
      for (size_t i = 0; i < b.devices().size(); ++i) {
        const llmc_device_info &d = b.devices()[i];
        std::printf("       device %zu: %s: %s%s%s\n", i, d.name,
                    d.usable ? "usable" : "not usable", d.usable ? "" : ": ",
                    d.usable ? "" : d.reason);
      }
    }
    for (const std::string &p : registry.problems())
      std::printf("refused: %s\n", p.c_str());
    return 0;
  };
}

} // namespace llmc::cli
