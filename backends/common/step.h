//===- step.h - Checking a step's metadata and placing its buffers -*- C++
//-*-===//
//
// Before any kernel runs, every index in llmc_step_args is checked against
// the graph and the KV pool, so a bad scheduler gets LLMC_INVALID_ARGUMENT
// and a message, never a read outside the pool. Then each buffer is placed
// in the workspace for the step's T and B, and each op's results are checked
// not to overlap its operands except where the op may run in place.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/graph.h"

#include <vector>

namespace llmc::common {

/// Throws InvalidArgument ("step: ...") naming the first bad field. `kv` is
/// the pool's descriptor, or null when none was given.
void checkStepArgs(const Graph &g, const llmc_kv_cache_desc *kv,
                   const llmc_step_args &args);

/// Throws InvalidArgument for a KV pool descriptor no backend can make.
void checkKvCacheDesc(const llmc_kv_cache_desc &desc);

/// Step-time checks every backend makes: a buffer has `expected` rows in
/// this step; an attention op's layer and heads exist in the pool.
void expectRows(int64_t actual, int64_t expected, const char *what);
struct AttentionShape;
void expectCacheFits(const llmc_kv_cache_desc &kv, const AttentionShape &s);

/// kv_copy_block's (or, `sliding`, kv_copy_sliding_block's) arguments name
/// blocks of that pool.
void checkBlockCopy(const llmc_kv_cache_desc &kv, int32_t src, int32_t dst,
                    bool sliding);

int64_t evalRows(const llmc_rows &r, int64_t T, int64_t B);

/// Per token: 1 where it rotates with LongRoPE's long table (its sequence's
/// rope_long; without query_start, as in a decode graph, token b is
/// sequence b). Empty when the step marks no sequence long.
std::vector<uint8_t> longRopeTokens(const llmc_step_args &a);

/// A buffer's place for one step: a byte offset in the workspace and its
/// shape (f32, row-major).
struct Span {
  int64_t offset, rows, cols;
  int64_t end() const { return offset + rows * cols * 4; }
};

/// Every buffer's span at (T, B) and the workspace bytes they need: the
/// planned affine offsets, or, for a graph without a memory plan, one region
/// each, each starting at a multiple of `align` bytes.
std::vector<Span> placeBuffers(const Graph &g, int64_t T, int64_t B,
                               int64_t align, int64_t &bytes);

/// Row-wise ops read all of a row before writing it, so their result may be
/// one of their operands (exactly, not partly); nothing else may overlap.
bool mayRunInPlace(uint32_t kind);
void checkAliasing(const llmc_op_desc &op, const std::vector<Span> &spans);

/// num_logits fits the logits buffer at this step's size.
void checkLogitRows(const Graph &g, const std::vector<Span> &spans,
                    const llmc_step_args &args);

} // namespace llmc::common
