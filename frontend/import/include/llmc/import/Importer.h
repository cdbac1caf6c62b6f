//===- Importer.h - Checkpoint -> llmc IR ----------------------*- C++ -*-===//
//
// The importer turns a checkpoint a user already has into the decomposed llmc
// IR: one `llmc.param` per weight (no weight data inline), the model's math
// spelled out op by op, the config as the module attribute `llmc.config`, and
// where the weights and tokenizer live as `llmc.source` / `llmc.tokenizer`.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>

namespace llmc::import {

/// MODEL is a checkpoint's config.json, its folder, or a .gguf file. Bad input
/// (missing files, malformed JSON, unsupported architecture, missing or
/// mis-shaped tensors, unsupported dtypes) throws llmc::Error with a message
/// naming the file and the tensor or key.
mlir::OwningOpRef<mlir::ModuleOp> importModel(mlir::MLIRContext &context,
                                              const std::string &modelPath);

} // namespace llmc::import
