//===- kernels_embedding.cpp - Table lookup
//--------------------------------===//
#include "ref.h"

namespace llmc::ref {

// EMBEDDING: out[t] = table[ids[t]], ids being the step's tokens or
// positions (GPT-2's learned position table uses the latter).
void runEmbedding(const llmc_op_desc &op, Step &step) {
  const llmc_weight_desc &table = step.weight(op, 0);
  const int32_t *ids = step.input(op, 1);
  Matrix out = step.result(op, 0);
  int64_t rows = table.shape[0], dim = table.shape[1];
  expectRows(out, step.args.num_tokens, "the result");
  for (int64_t t = 0; t < out.rows; ++t) {
    if (ids[t] < 0 || ids[t] >= rows)
      throw InvalidArgument("id " + std::to_string(ids[t]) + " at row " +
                            std::to_string(t) + " is outside the table of " +
                            std::to_string(rows) + " rows");
    loadWeight(table, ids[t] * dim, dim, out.row(t));
  }
}

} // namespace llmc::ref
