//===- step_message.h - What rank 0 tells its followers --------*- C++ -*-===//
//
// One message per device action of a tensor-parallel engine: run a step
// (its graph and metadata), copy a KV block, or stop. Bytes, so that any
// communicator's broadcast carries them. Engine-internal.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/runtime/step_batch.h"
#include "llmc/runtime/step_runner.h"

#include <cstdint>
#include <vector>

namespace llmc {

struct StepMessage {
  enum Kind : uint8_t { Execute = 1, CopyBlock = 2, Stop = 3 };
  Kind kind = Stop;
  StepBatch batch; // Execute
  BlockCopy copy;  // CopyBlock
};

/// The bytes of one message, written from what it carries (a step's batch
/// is not copied).
std::vector<uint8_t> encodeExecute(const StepBatch &batch);
std::vector<uint8_t> encodeCopyBlock(const BlockCopy &copy);
std::vector<uint8_t> encodeStop();
/// Throws llmc::Error on bytes the encoders did not write.
StepMessage decodeStepMessage(const std::vector<uint8_t> &bytes);

} // namespace llmc
