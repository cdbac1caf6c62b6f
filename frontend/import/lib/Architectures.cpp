//===- Architectures.cpp - Which builder makes which family ---------------===//
#include "Architectures.h"

#include <utility>

namespace llmc::import {

BuildFn builderFor(ArchFamily family) {
  static constexpr std::pair<ArchFamily, BuildFn> kBuilders[] = {
      {ArchFamily::Llama, buildLlama},
      {ArchFamily::GPT2, buildGPT2},
      {ArchFamily::Gemma2, buildGemma2},
  };
  for (const auto &[f, build] : kBuilders)
    if (f == family)
      return build;
  return nullptr;
}

} // namespace llmc::import
