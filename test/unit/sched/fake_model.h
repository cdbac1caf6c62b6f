//===- fake_model.h - A model the scheduler can be tested against -*- C++
//-*-===//
//
// A StepRunner whose "KV cache" stores the token written at each slot and
// whose logits for a sequence are a function of every token read back
// through its block table. So a wrong position, slot, block table,
// copy-on-write or logits row changes a sequence's output, and "batched
// equals solo" checks the scheduling end to end without a compiled model.
// Every step is recorded for the policy tests.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/runtime/step_runner.h"

#include <chrono>
#include <cmath>
#include <thread>
#include <vector>

namespace llmc::test {

class FakeModel : public StepRunner {
public:
  struct Options {
    int32_t blocks = 64, blockSize = 4;
    bool prefixCaching = false;
    int64_t context = 512, vocab = 50;
    /// Another seed is another model over the same vocabulary (a draft
    /// that disagrees with its target).
    uint64_t seed = 1469598103934665603ull;
  };
  explicit FakeModel(Options o)
      : StepRunner({o.blocks, o.blockSize, o.prefixCaching}, o.context),
        vocab_(o.vocab), seed_(o.seed),
        slots_(static_cast<size_t>(o.blocks) * o.blockSize, -1) {}

  int64_t vocabSize() const override { return vocab_; }
  int64_t kvBytesPerToken() const override { return 8; }

  /// What each step ran.
  struct Record {
    std::string graph;
    std::vector<int32_t> seqLens;  // new tokens per sequence, in work order
    std::vector<int32_t> contexts; // context_lens
    int32_t logitRows = 0;
  };
  std::vector<Record> steps;
  int64_t copies = 0;
  /// Slows every step down, to hold requests in flight (server tests).
  std::chrono::microseconds stepDelay{0};

protected:
  void copyBlock(const BlockCopy &c) override {
    const int32_t bs = blockSize();
    for (int32_t i = 0; i < bs; ++i)
      slots_[static_cast<size_t>(c.dst * bs + i)] =
          slots_[static_cast<size_t>(c.src * bs + i)];
    ++copies;
  }

  void execute(const StepBatch &b, std::span<const StepWork> work,
               float *logits) override {
    if (stepDelay.count() > 0)
      std::this_thread::sleep_for(stepDelay);
    Record r;
    r.graph = b.graph;
    r.contexts = b.contextLens;
    for (size_t t = 0; t < b.tokens.size(); ++t)
      slots_.at(static_cast<size_t>(b.slots[t])) = b.tokens[t];
    const int32_t bs = blockSize();
    int64_t out = 0;
    for (size_t i = 0; i < work.size(); ++i) {
      r.seqLens.push_back(static_cast<int32_t>(work[i].tokens.size()));
      const int32_t end = b.queryStart[i + 1];
      for (int32_t k = 0; k < work[i].logitRows; ++k) {
        // The context of the token at row end - logitRows + k.
        const int32_t len = b.contextLens[i] - work[i].logitRows + 1 + k;
        uint64_t h = seed_;
        for (int32_t p = 0; p < len; ++p) {
          int32_t block = b.blockTables[i * static_cast<size_t>(b.maxBlocks) +
                                        static_cast<size_t>(p / bs)];
          h = (h ^
               static_cast<uint64_t>(
                   slots_.at(static_cast<size_t>(block * bs + p % bs)) + 1)) *
              1099511628211ull;
        }
        (void)end;
        const int64_t peak =
            static_cast<int64_t>(h % static_cast<uint64_t>(vocab_));
        float *row = logits + out * vocab_;
        for (int64_t v = 0; v < vocab_; ++v) {
          int64_t d = (v - peak + vocab_) % vocab_;
          row[v] = -0.35f * static_cast<float>(d) +
                   0.01f * static_cast<float>((h >> (v % 48)) & 7);
        }
        ++out;
      }
      r.logitRows += work[i].logitRows;
    }
    steps.push_back(std::move(r));
  }

private:
  int64_t vocab_;
  uint64_t seed_;
  std::vector<int32_t> slots_;
};

} // namespace llmc::test
