#include "llmc/runtime/kv_blocks.h"
#include "llmc/support/error.h"

namespace llmc {

BlockAllocator::BlockAllocator(int32_t numBlocks) : refs_(numBlocks, 0) {
  free_.reserve(numBlocks);
  // Hand out low block numbers first: easier to read in --explain output.
  for (int32_t b = numBlocks - 1; b >= 0; --b)
    free_.push_back(b);
}

int32_t BlockAllocator::allocate(int32_t blockSize) {
  if (free_.empty())
    throw Error("KV cache is full: all " + std::to_string(refs_.size()) +
                " blocks of " + std::to_string(blockSize) +
                " tokens are in use (raise --max-seqs or the context length "
                "budget, or shorten the prompt)");
  int32_t b = free_.back();
  free_.pop_back();
  refs_[b] = 1;
  return b;
}

void BlockAllocator::retain(int32_t block) { ++refs_.at(block); }

void BlockAllocator::release(int32_t block) {
  if (refs_.at(block) <= 0)
    throw Error("internal error: KV block " + std::to_string(block) +
                " released twice");
  if (--refs_[block] == 0)
    free_.push_back(block);
}

} // namespace llmc
