//===- LLMCOps.h - llmc dialect operations -------------------*- C++ -*-===//
#pragma once

#include "llmc/IR/LLMCDialect.h"
#include "llmc/IR/LLMCTypes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "llmc/IR/LLMCOps.h.inc"
