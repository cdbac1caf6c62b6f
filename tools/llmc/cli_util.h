//===- cli_util.h - Small helpers shared by subcommands --------*- C++ -*-===//
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace llmc::cli {

/// "1,2,3" -> {1, 2, 3}; errors name `flag` and the bad item.
std::vector<int32_t> parseIds(const std::string &text, const std::string &flag);

/// Writes `bytes` to `path`, naming it in errors.
void writeFile(const std::string &path, const void *bytes, size_t size);

} // namespace llmc::cli
