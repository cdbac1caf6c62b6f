//===- op_graph.cpp - Hand-built graphs for backend tests
//------------------===//
#include "op_graph.h"

#include "llmc/support/half.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace llmc::testing {

llmc_op_desc makeOp(llmc_op_kind kind, std::initializer_list<llmc_operand> in,
                    std::initializer_list<uint32_t> out,
                    std::initializer_list<int64_t> ints,
                    std::initializer_list<double> floats) {
  llmc_op_desc op;
  std::memset(&op, 0, sizeof op);
  op.kind = kind;
  op.num_operands = uint32_t(in.size());
  op.num_results = uint32_t(out.size());
  std::copy(in.begin(), in.end(), op.operands);
  std::copy(out.begin(), out.end(), op.results);
  std::copy(ints.begin(), ints.end(), op.i);
  std::copy(floats.begin(), floats.end(), op.f);
  return op;
}

std::vector<uint8_t> encode(llmc_dtype dtype, const std::vector<float> &v) {
  std::vector<uint8_t> bytes;
  if (dtype == LLMC_F32) {
    bytes.resize(v.size() * 4);
    std::memcpy(bytes.data(), v.data(), bytes.size());
    return bytes;
  }
  bytes.resize(v.size() * 2);
  for (size_t i = 0; i < v.size(); ++i) {
    uint16_t h = dtype == LLMC_BF16 ? floatToBf16(v[i]) : floatToF16(v[i]);
    std::memcpy(&bytes[i * 2], &h, 2);
  }
  return bytes;
}

float roundTo(llmc_dtype dtype, float v) {
  if (dtype == LLMC_BF16)
    return bf16ToFloat(floatToBf16(v));
  if (dtype == LLMC_F16)
    return f16ToFloat(floatToF16(v));
  return v;
}

namespace {
// The finite e4m3 value nearest x >= 0, ties to the even mantissa.
double nearestE4M3(double x) {
  double best = 0;
  int bestBits = 0;
  for (int b = 0; b < 0x7f; ++b) {
    int e = b >> 3, m = b & 7;
    double v =
        e == 0 ? std::ldexp(m / 8.0, -6) : std::ldexp(1 + m / 8.0, e - 7);
    double d = std::fabs(v - x), dBest = std::fabs(best - x);
    if (d < dBest || (d == dBest && (b & 1) == 0 && (bestBits & 1) == 1))
      best = v, bestBits = b;
  }
  return best;
}
} // namespace

std::vector<float> roundKv(llmc_dtype dtype, const std::vector<float> &x,
                           int64_t headDim) {
  std::vector<float> out(x.size());
  if (dtype != LLMC_I8 && dtype != LLMC_FP8_E4M3) {
    for (size_t i = 0; i < x.size(); ++i)
      out[i] = roundTo(dtype, x[i]);
    return out;
  }
  for (size_t r = 0; r < x.size(); r += size_t(headDim)) {
    float amax = 0;
    for (int64_t d = 0; d < headDim; ++d)
      amax = std::max(amax, std::fabs(x[r + d]));
    const float scale = amax / (dtype == LLMC_I8 ? 127.0f : 448.0f);
    for (int64_t d = 0; d < headDim; ++d) {
      const float v = scale > 0 ? x[r + d] / scale : 0.0f;
      double q = dtype == LLMC_I8
                     ? std::nearbyint(double(v))
                     : std::copysign(nearestE4M3(std::fabs(double(v))), v);
      out[r + d] = float(q) * scale;
    }
  }
  return out;
}

Quantized quantize(llmc_dtype dtype, const std::vector<float> &w, int64_t n,
                   int64_t k, int64_t group) {
  Quantized q;
  int qmax = dtype == LLMC_I8 ? 127 : 7;
  q.scales.resize(size_t(n * (k / group)));
  q.dequantized.resize(size_t(n * k));
  q.bytes.assign(size_t(dtype == LLMC_I8 ? n * k : n * k / 2), 0);
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t g = 0; g < k / group; ++g) {
      float amax = 0.0f;
      for (int64_t c = g * group; c < (g + 1) * group; ++c)
        amax = std::max(amax, std::fabs(w[size_t(r * k + c)]));
      float scale = amax > 0 ? amax / float(qmax) : 1.0f;
      q.scales[size_t(r * (k / group) + g)] = scale;
      for (int64_t c = g * group; c < (g + 1) * group; ++c) {
        int v = int(std::lround(w[size_t(r * k + c)] / scale));
        // i4 uses the full -8..7 range: push a few values to -8.
        v = std::clamp(v, -qmax - 1, qmax);
        q.dequantized[size_t(r * k + c)] = float(v) * scale;
        if (dtype == LLMC_I8) {
          q.bytes[size_t(r * k + c)] = uint8_t(int8_t(v));
        } else {
          uint8_t nibble = uint8_t(v) & 0xf;
          q.bytes[size_t(r * (k / 2) + c / 2)] |=
              c % 2 == 0 ? nibble : uint8_t(nibble << 4);
        }
      }
    }
  }
  return q;
}

uint32_t OpGraph::buffer(llmc_rows rows, int64_t cols) {
  llmc_buffer_desc b;
  std::memset(&b, 0, sizeof b);
  b.rows = rows;
  b.cols = cols;
  b.dtype = LLMC_F32;
  buffers_.push_back(b);
  return uint32_t(buffers_.size() - 1);
}

uint32_t OpGraph::weight(llmc_dtype dtype, std::vector<int64_t> shape,
                         std::vector<uint8_t> bytes) {
  data_.push_back(std::move(bytes));
  llmc_weight_desc w;
  std::memset(&w, 0, sizeof w);
  w.name = "w";
  w.dtype = dtype;
  w.rank = uint32_t(shape.size());
  std::copy(shape.begin(), shape.end(), w.shape);
  w.data = data_.back().data();
  w.nbytes = data_.back().size();
  weights_.push_back(w);
  return uint32_t(weights_.size() - 1);
}

uint32_t OpGraph::feed(const std::vector<float> &table, int64_t cols) {
  uint32_t w = weight(LLMC_F32, {int64_t(table.size()) / cols, cols}, table);
  uint32_t out = buffer(rowsT(), cols);
  add(makeOp(LLMC_OP_EMBEDDING, {wt(w), tokensInput()}, {out}));
  return out;
}

llmc_graph_desc OpGraph::desc(uint32_t logitsBuffer, const char *name) {
  llmc_graph_desc d;
  std::memset(&d, 0, sizeof d);
  d.name = name;
  d.num_ops = uint32_t(ops_.size());
  d.num_buffers = uint32_t(buffers_.size());
  d.num_weights = uint32_t(weights_.size());
  d.ops = ops_.data();
  d.buffers = buffers_.data();
  d.weights = weights_.data();
  d.logits_buffer = logitsBuffer;
  return d;
}

StepData StepData::simple(int32_t tokens, int32_t logits) {
  StepData s;
  for (int32_t t = 0; t < tokens; ++t) {
    s.tokens.push_back(t);
    s.positions.push_back(t);
    s.slots.push_back(t);
  }
  s.queryStart = {0, tokens};
  s.contextLens = {tokens};
  s.numLogits = logits;
  for (int32_t i = 0; i < logits; ++i)
    s.logitsRows.push_back(i);
  return s;
}

llmc_step_args StepData::args(int64_t vocab) {
  logits.assign(size_t(numLogits * vocab), 0.0f);
  llmc_step_args a;
  std::memset(&a, 0, sizeof a);
  a.num_tokens = int32_t(tokens.size());
  a.num_seqs = numSeqs;
  a.tokens = tokens.data();
  a.positions = positions.data();
  a.slot_mapping = slots.empty() ? nullptr : slots.data();
  a.query_start = queryStart.empty() ? nullptr : queryStart.data();
  a.context_lens = contextLens.empty() ? nullptr : contextLens.data();
  a.block_tables = blockTables.empty() ? nullptr : blockTables.data();
  a.max_blocks = maxBlocks;
  a.num_logits = numLogits;
  a.logits_rows = logitsRows.empty() ? nullptr : logitsRows.data();
  a.logits = logits.data();
  return a;
}

std::vector<float> runGraph(const BackendInstance &backend, OpGraph &graph,
                            uint32_t logitsBuffer, StepData &step,
                            DeviceKvCache *cache) {
  llmc_graph_desc desc = graph.desc(logitsBuffer);
  PreparedGraph prepared = backend.prepare(desc);
  llmc_step_args args = step.args(graph.bufferDesc(logitsBuffer).cols);
  backend.execute(prepared, cache, args);
  return step.logits;
}

std::vector<float> randomVector(std::mt19937 &rng, size_t n, float lo,
                                float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(rng);
  return v;
}

double maxRelativeError(const std::vector<float> &a,
                        const std::vector<double> &b) {
  if (a.size() != b.size())
    return INFINITY;
  double scale = 1.0, err = 0.0;
  for (size_t i = 0; i < b.size(); ++i)
    scale = std::max(scale, std::fabs(b[i]));
  for (size_t i = 0; i < b.size(); ++i) {
    if (!std::isfinite(a[i]))
      return INFINITY;
    err = std::max(err, std::fabs(double(a[i]) - b[i]));
  }
  return err / scale;
}

const BackendRegistry &registry() {
  static const BackendRegistry r = BackendRegistry::discover();
  return r;
}

} // namespace llmc::testing
