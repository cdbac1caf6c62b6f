//===- kernels_embedding.cpp - Table lookup
//--------------------------------===//
#include "ref.h"

#include "common/op_checks.h"

namespace llmc::ref {

// EMBEDDING: out[t] = table[ids[t]], ids being the step's tokens or
// positions (GPT-2's learned position table uses the latter); an i8 table
// is scaled per group of columns, a K-quant one decoded row by row.
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
    if (common::isKQuant(table.dtype)) {
      common::kquantRow(table, step.weight(op, 2), ids[t], dim, out.row(t));
      continue;
    }
    if (op.num_operands == 3) { // i8 rows, a scale per group of columns
      const auto *q = static_cast<const int8_t *>(table.data) + ids[t] * dim;
      const llmc_weight_desc &scales = step.weight(op, 2);
      int64_t group = op.i[0], groups = dim / group;
      std::vector<float> s(static_cast<size_t>(groups));
      loadWeight(scales, ids[t] * groups, groups, s.data());
      for (int64_t c = 0; c < dim; ++c)
        out.row(t)[c] = float(q[c]) * s[size_t(c / group)];
      continue;
    }
    loadWeight(table, ids[t] * dim, dim, out.row(t));
  }
}

} // namespace llmc::ref
