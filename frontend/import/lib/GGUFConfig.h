//===- GGUFConfig.h - ModelConfig from GGUF metadata ----------*- C++ -*-===//
#pragma once

#include "llmc/config/model_config.h"
#include "llmc/weights/gguf.h"

namespace llmc::import {

/// Reads `general.architecture` (llama, qwen2) and its hyper-parameters.
ModelConfig configFromGGUF(const weights::GGUFFile &file);

} // namespace llmc::import
