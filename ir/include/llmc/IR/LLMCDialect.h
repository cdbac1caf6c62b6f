//===- LLMCDialect.h - The llmc dialect ----------------------*- C++ -*-===//
#pragma once

#include "mlir/IR/Dialect.h"

#include "llmc/IR/LLMCDialect.h.inc"
