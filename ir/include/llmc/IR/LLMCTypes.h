//===- LLMCTypes.h - llmc dialect types ----------------------*- C++ -*-===//
#pragma once

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Types.h"

#define GET_TYPEDEF_CLASSES
#include "llmc/IR/LLMCTypes.h.inc"
