//===- EmitPlan.cpp - Lowered module + checkpoint -> plan file
//-------------===//

#include "llmc/Passes/EmitPlan.h"

#include "llmc/config/json_file.h"
#include "llmc/runtime/plan.h"
#include "llmc/support/error.h"
#include "llmc/support/half.h"
#include "llmc/support/kquant.h"
#include "llmc/support/mapped_file.h"
#include "llmc/tokenizer/tokenizer.h"
#include "llmc/weights/gguf.h"
#include "llmc/weights/rope_permute.h"
#include "llmc/weights/safetensors.h"
#include "llmc/weights/tensor.h"

#include "llmc/IR/LLMCOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

namespace mlir::llmc {
namespace {

using ::llmc::Error;

/// The checkpoint a module was imported from.
class Source {
public:
  explicit Source(DictionaryAttr attr) {
    std::string format = attr.getAs<StringAttr>("format").str();
    std::string path = attr.getAs<StringAttr>("path").str();
    if (format == "gguf")
      gguf_ = std::make_shared<::llmc::weights::GGUFFile>(path);
    else
      checkpoint_.emplace(::llmc::weights::Checkpoint::open(path));
  }
  const ::llmc::weights::TensorRef &tensor(const std::string &name) const {
    const ::llmc::weights::TensorRef *t =
        gguf_ ? gguf_->find(name) : checkpoint_->find(name);
    if (!t)
      throw Error("checkpoint tensor '" + name + "' disappeared since import");
    return *t;
  }
  const ::llmc::weights::GGUFFile *gguf() const { return gguf_.get(); }

private:
  std::optional<::llmc::weights::Checkpoint> checkpoint_;
  std::shared_ptr<::llmc::weights::GGUFFile> gguf_;
};

/// Runs body(begin, end) over [0, n) split across the machine's cores:
/// conversion is compute-bound once the reads and writes are fast.
template <typename Body> void parallelFor(int64_t n, Body body) {
  const int64_t threads = std::clamp<int64_t>(
      static_cast<int64_t>(std::thread::hardware_concurrency()), 1,
      std::max<int64_t>(n / 64, 1));
  if (threads == 1)
    return body(0, n);
  std::vector<std::thread> pool;
  const int64_t per = (n + threads - 1) / threads;
  for (int64_t t = 1; t < threads; ++t)
    pool.emplace_back(body, std::min(n, t * per), std::min(n, (t + 1) * per));
  body(0, std::min(n, per));
  for (std::thread &t : pool)
    t.join();
}

/// weights::toFloat32 split by rows across the cores (dequantizing GGUF
/// blocks is the slow part of compiling a GGUF).
void toFloat32Parallel(const ::llmc::weights::TensorRef &t, float *dst) {
  const int64_t rows = t.shape.size() > 1 ? t.shape[0] : 1;
  const int64_t cols = rows > 0 ? t.numElements() / rows : 0;
  if (rows < 2 ||
      t.nbytes != ::llmc::weights::dtypeBytes(t.dtype, t.numElements()))
    return ::llmc::weights::toFloat32(t, dst); // it reports what is wrong
  parallelFor(rows, [&](int64_t begin, int64_t end) {
    ::llmc::weights::TensorRef part = t;
    part.shape = {end - begin, cols};
    part.data = t.data + ::llmc::weights::dtypeBytes(t.dtype, begin * cols);
    part.nbytes = ::llmc::weights::dtypeBytes(t.dtype, (end - begin) * cols);
    ::llmc::weights::toFloat32(part, dst + begin * cols);
  });
}

/// A float buffer reused from weight to weight, never value-initialized:
/// fresh pages cost a fault and a clear each, and the largest tensor sets
/// its size.
class FloatBuffer {
public:
  float *resize(size_t n) {
    if (n > capacity_) {
      data_.reset(new float[n]);
      capacity_ = n;
    }
    return data_.get();
  }

private:
  std::unique_ptr<float[]> data_;
  size_t capacity_ = 0;
};

/// The checkpoint tensors whose rows, in order, make a spec's values: its
/// sources, or for stacked experts each source's rows of expert 0, then of
/// expert 1, ... (a source is one tensor per expert, "{e}" in its name, or
/// one tensor stacking them, cut here into per-expert views).
std::vector<::llmc::weights::TensorRef> parts(const Source &src,
                                              const WeightSpec &w) {
  std::vector<::llmc::weights::TensorRef> out;
  if (w.experts == 0) {
    for (const std::string &name : w.sources)
      out.push_back(src.tensor(name));
    return out;
  }
  for (int64_t e = 0; e < w.experts; ++e)
    for (const std::string &name : w.sources) {
      if (size_t at = name.find("{e}"); at != std::string::npos) {
        std::string one = name;
        out.push_back(src.tensor(one.replace(at, 3, std::to_string(e))));
        continue;
      }
      ::llmc::weights::TensorRef t = src.tensor(name);
      // [E, rows, cols], or [E, cols]: one row per expert (a bias).
      if ((t.shape.size() != 3 && t.shape.size() != 2) ||
          t.shape[0] != w.experts)
        throw Error("checkpoint tensor '" + name + "' does not stack " +
                    std::to_string(w.experts) + " experts");
      if (t.shape.size() == 2)
        t.shape = {w.experts, 1, t.shape[1]};
      const int64_t per = t.shape[1] * t.shape[2];
      t.shape = {t.shape[1], t.shape[2]};
      if (t.scales) { // MXFP4 in Hugging Face's two tensors
        t.data += e * per / 2;
        t.scales += e * per / 32;
        t.nbytes = static_cast<size_t>(per / 2);
      } else {
        t.data += ::llmc::weights::dtypeBytes(t.dtype, e * per);
        t.nbytes = ::llmc::weights::dtypeBytes(t.dtype, per);
      }
      out.push_back(t);
    }
  return out;
}

/// A spec's logical [rows, cols] f32 values, sources stacked: the mapped
/// checkpoint itself when it holds them as they are (one aligned F32
/// source), else converted into `buffer`. The sources' pages are dropped
/// from memory when the values are no longer needed.
class LogicalValues {
public:
  LogicalValues(const Source &src, const WeightSpec &w, FloatBuffer &buffer,
                FloatBuffer &tmp)
      : parts_(parts(src, w)) {
    if (w.transposed && w.ropeUnpermuteHeads > 0)
      throw Error("weight '" + w.name +
                  "': both transposed and rope-permuted (no importer makes "
                  "such a weight)");
    for (const ::llmc::weights::TensorRef &t : parts_) {
      sources_.push_back(&t);
      size_ += static_cast<size_t>(t.numElements());
    }
    const bool transformed = w.transposed || w.ropeUnpermuteHeads > 0;
    const bool offset = w.offset != 0;
    const auto &first = *sources_.front();
    if (sources_.size() == 1 && !transformed && !offset &&
        first.dtype == ::llmc::weights::DType::F32 &&
        first.nbytes == size_ * sizeof(float) &&
        reinterpret_cast<uintptr_t>(first.data) % alignof(float) == 0) {
      data_ = reinterpret_cast<const float *>(first.data);
      return;
    }
    float *dst = buffer.resize(size_);
    data_ = dst;
    for (const ::llmc::weights::TensorRef *t : sources_) {
      const auto n = static_cast<size_t>(t->numElements());
      float *v = transformed ? tmp.resize(n) : dst;
      toFloat32Parallel(*t, v);
      if (w.transposed) {
        int64_t r = t->shape[0], c = t->shape[1];
        for (int64_t i = 0; i < r; ++i)
          for (int64_t j = 0; j < c; ++j)
            dst[j * r + i] = v[i * c + j];
      } else if (w.ropeUnpermuteHeads > 0) {
        int64_t rows = t->shape[0],
                cols = t->shape.size() > 1 ? t->shape[1] : 1;
        ::llmc::weights::unpermuteGGUFRope(v, dst, rows, cols,
                                           w.ropeUnpermuteHeads);
      }
      if (offset)
        for (size_t i = 0; i < n; ++i)
          dst[i] += w.offset;
      dst += n;
    }
  }
  ~LogicalValues() {
    for (const ::llmc::weights::TensorRef *t : sources_)
      ::llmc::dropMappedPages(t->data, t->nbytes);
  }
  LogicalValues(const LogicalValues &) = delete;
  LogicalValues &operator=(const LogicalValues &) = delete;

  const float *data() const { return data_; }
  size_t size() const { return size_; }

private:
  std::vector<::llmc::weights::TensorRef> parts_;
  std::vector<const ::llmc::weights::TensorRef *> sources_;
  const float *data_ = nullptr;
  size_t size_ = 0;
};

/// Symmetric quantization of row-major [n, k] in groups of `group` columns:
/// q = round(w / scale), scale from weights::symmetricScale (exact for the
/// blocks of Q4_0, Q5_0 and Q8_0 GGUFs), into `dst` (zeroed) and `scales`
/// ([n, k / group]). Returns the largest |w - q·scale|.
float quantize(const float *w, int64_t n, int64_t k, int64_t group, bool int4,
               uint8_t *dst, float *scales) {
  const float qmax = int4 ? 7.0f : 127.0f;
  const int64_t groups = k / group;
  std::mutex m;
  float maxError = 0;
  parallelFor(n, [&](int64_t begin, int64_t end) {
    float error = 0;
    for (int64_t r = begin; r < end; ++r) {
      for (int64_t g = 0; g < groups; ++g) {
        const float *x = &w[r * k + g * group];
        const float scale = ::llmc::weights::symmetricScale(x, group, int4);
        scales[r * groups + g] = scale;
        for (int64_t i = 0; i < group; ++i) {
          float q = ::llmc::weights::roundToInt(x[i] / scale);
          q = std::clamp(q, int4 ? -8.0f : -127.0f, qmax);
          error = std::max(error, std::fabs(x[i] - q * scale));
          auto qi = static_cast<int8_t>(q);
          int64_t col = g * group + i;
          if (!int4) {
            dst[r * k + col] = static_cast<uint8_t>(qi);
          } else {
            uint8_t &byte = dst[(r * k + col) / 2];
            uint8_t nib = static_cast<uint8_t>(qi) & 0x0f;
            byte = col % 2 ? static_cast<uint8_t>((byte & 0x0f) | (nib << 4))
                           : static_cast<uint8_t>((byte & 0xf0) | nib);
          }
        }
      }
    }
    std::lock_guard<std::mutex> lock(m);
    maxError = std::max(maxError, error);
  });
  return maxError;
}

float maxAbs(const float *v, size_t n) {
  float m = 0;
  for (size_t i = 0; i < n; ++i)
    m = std::max(m, std::fabs(v[i]));
  return m;
}

template <uint16_t (*Convert)(float)>
void convertHalf(const float *v, size_t n, uint8_t *dst) {
  parallelFor(static_cast<int64_t>(n), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      uint16_t h = Convert(v[i]);
      std::memcpy(dst + 2 * i, &h, 2);
    }
  });
}

/// An MXFP4 spec's half (codes or E8M0 scales) copied from its sources,
/// whichever layout they store: no rounding, the checkpoint's own bits.
/// A split spec (`tp` ranks) copies rank `rank`'s blocks only: its rows
/// (shardDim 1 of [E, N, K]) or its whole blocks of columns (shardDim 2).
void copyMxfp4(const Source &src, const WeightSpec &w, uint8_t *dst,
               size_t nbytes, int64_t rank = 0, int64_t tp = 1) {
  size_t at = 0;
  std::vector<int64_t> runs; // this rank's run starts, logical units
  int64_t len = 0;
  if (w.shardDim >= 0) {
    if (w.shardDim != 1 && w.shardDim != 2)
      throw Error("weight '" + w.name + "': MXFP4 split along dimension " +
                  std::to_string(w.shardDim));
    const auto s = static_cast<int64_t>(w.shardStarts.size()) / tp;
    runs.assign(w.shardStarts.begin() + rank * s,
                w.shardStarts.begin() + (rank + 1) * s);
    // The scales half's last dimension counts blocks of 32 columns.
    len = w.shape[size_t(w.shardDim)] *
          (w.shardDim == 2 && w.quantScales ? 32 : 1) / s;
  }
  auto kept = [&](int64_t row, int64_t col) {
    if (runs.empty())
      return true;
    const int64_t at = w.shardDim == 1 ? row : col;
    for (int64_t start : runs)
      if (at >= start && at < start + len)
        return true;
    return false;
  };
  for (const ::llmc::weights::TensorRef &t : parts(src, w)) {
    if (t.dtype != ::llmc::weights::DType::MXFP4)
      throw Error("weight '" + w.name + "': tensor '" + t.name + "' in " +
                  t.file + " is " + ::llmc::weights::dtypeName(t.dtype) +
                  ", not MXFP4");
    ::llmc::weights::checkMxfp4(t);
    const int64_t blocks = t.numElements() / 32;
    const size_t per = w.quantScales ? 1 : 16;
    if (runs.empty() && at + static_cast<size_t>(blocks) * per > nbytes)
      throw Error("weight '" + w.name +
                  "': its sources hold more MXFP4 "
                  "blocks than its shape");
    const int64_t perRow = t.shape.back() / 32;
    for (int64_t b = 0; b < blocks; ++b) {
      if (!kept(b / perRow, b % perRow * 32))
        continue;
      uint8_t codes[16], scale;
      ::llmc::weights::mxfp4Block(t, b, codes, scale);
      if (w.quantScales)
        dst[at++] = scale;
      else
        for (uint8_t c : codes)
          dst[at++] = c;
    }
    ::llmc::dropMappedPages(t.data, t.nbytes);
  }
  if (at != nbytes)
    throw Error("weight '" + w.name + "': its sources hold " +
                std::to_string(at) + " bytes of MXFP4, expected " +
                std::to_string(nbytes));
}

/// A K-quant spec's half (codes or headers) copied from its sources: each
/// super-block's bytes as the GGUF holds them, rows unpermuted for rope as
/// whole rows of blocks.
void copyKQuant(const Source &src, const WeightSpec &w,
                ::llmc::kquant::Format f, uint8_t *dst, size_t nbytes) {
  const ::llmc::kquant::Layout l = ::llmc::kquant::layout(f);
  using ::llmc::weights::DType;
  const DType want = f == ::llmc::kquant::Format::Q4_K   ? DType::Q4_K
                     : f == ::llmc::kquant::Format::Q5_K ? DType::Q5_K
                                                         : DType::Q6_K;
  if (w.transposed)
    throw Error("weight '" + w.name + "': a transposed " + std::string(l.ggml) +
                " weight is not supported");
  const int per = w.quantScales ? l.headerBytes : l.codeBytes;
  const int at = w.quantScales ? l.headerAt : l.codesAt;
  const int block = ::llmc::kquant::blockBytes(f);
  std::vector<uint8_t> unpermuted;
  size_t out = 0;
  for (const ::llmc::weights::TensorRef &t : parts(src, w)) {
    if (t.dtype != want)
      throw Error("weight '" + w.name + "': tensor '" + t.name + "' in " +
                  t.file + " is " + ::llmc::weights::dtypeName(t.dtype) +
                  ", not " + std::string(l.ggml));
    const int64_t blocks = t.numElements() / ::llmc::kquant::kBlock;
    if (t.nbytes < size_t(blocks) * size_t(block) ||
        out + size_t(blocks) * size_t(per) > nbytes)
      throw Error("weight '" + w.name + "': tensor '" + t.name + "' in " +
                  t.file + " does not hold its shape's " + std::string(l.ggml) +
                  " blocks");
    const uint8_t *blocksAt = t.data;
    if (w.ropeUnpermuteHeads > 0) {
      const int64_t rows = t.shape[0];
      unpermuted.resize(size_t(blocks) * size_t(block));
      ::llmc::weights::unpermuteGGUFRope(t.data, unpermuted.data(), rows,
                                         size_t(blocks / rows) * size_t(block),
                                         w.ropeUnpermuteHeads);
      blocksAt = unpermuted.data();
    }
    for (int64_t b = 0; b < blocks; ++b, out += size_t(per))
      std::memcpy(dst + out, blocksAt + b * block + at, size_t(per));
    ::llmc::dropMappedPages(t.data, t.nbytes);
  }
  if (out != nbytes)
    throw Error("weight '" + w.name + "': its sources hold " +
                std::to_string(out) + " bytes of " + std::string(l.ggml) + " " +
                (w.quantScales ? "headers" : "codes") + ", expected " +
                std::to_string(nbytes));
}

/// Converts and writes one weight at a time, on the thread that writes the
/// plan. A quantized weight's two halves are separate specs; the weight half
/// keeps its scales for the scales half, which follows it.
class Filler {
public:
  Filler(std::shared_ptr<Source> src, const EmitOptions &o, int64_t tp)
      : src_(std::move(src)), o_(o), tp_(tp) {}

  /// Writes weight `w` (rank `rank`'s slice of a split one).
  void operator()(const WeightSpec &w, int64_t rank, uint8_t *dst,
                  size_t nbytes) {
    if (!w.data.empty()) {
      std::memcpy(dst, w.data.data(), nbytes);
      return;
    }
    if (w.quantScales && scalesKey_ == key(w, rank)) {
      std::memcpy(dst, scales_.data(), nbytes);
      return;
    }
    if (w.shardDim >= 0 && ::llmc::kquant::formatNamed(w.quant))
      throw Error("weight '" + w.name + "': " + w.quant +
                  " blocks are not split over tensor-parallel ranks yet "
                  "(compile with --quant int8, int4 or none)");
    if (w.quant == "mxfp4")
      return copyMxfp4(*src_, w, dst, nbytes, rank, tp_);
    if (auto f = ::llmc::kquant::formatNamed(w.quant))
      return copyKQuant(*src_, w, *f, dst, nbytes);
    LogicalValues whole(*src_, w, values_, tmp_);
    const Values v = w.shardDim >= 0 ? slice(w, rank, whole)
                                     : Values{whole.data(), whole.size()};
    // Rows: every dimension but the last (stacked experts' rows follow one
    // another).
    int64_t n = 1;
    for (size_t d = 0; d + 1 < w.shape.size(); ++d)
      n *= w.shape[d];
    // The logical width: a scales spec's own shape is [n, k / group].
    int64_t k = static_cast<int64_t>(v.size()) / n;
    if (!w.quant.empty()) {
      const bool int4 = w.quant == "int4";
      scales_.resize(static_cast<size_t>(n * (k / w.groupSize)));
      uint8_t *q = dst;
      if (w.quantScales) { // its weight half was not just written
        q_.assign(static_cast<size_t>(int4 ? n * k / 2 : n * k), 0);
        q = q_.data();
      } else {
        std::memset(dst, 0, nbytes);
      }
      float error =
          quantize(v.data(), n, k, w.groupSize, int4, q, scales_.data());
      if (w.quantScales) {
        std::memcpy(dst, scales_.data(), nbytes);
        return;
      }
      scalesKey_ = key(w, rank);
      if (!w.ggmlType.empty() && o_.converted)
        o_.converted(Conversion{w.name, w.ggmlType, w.quant, error,
                                maxAbs(v.data(), v.size())});
      return;
    }
    scalesKey_.clear();
    switch (w.dtype) {
    case LLMC_F32:
      std::memcpy(dst, v.data(), nbytes);
      break;
    case LLMC_BF16:
      convertHalf<::llmc::floatToBf16>(v.data(), v.size(), dst);
      break;
    case LLMC_F16:
      convertHalf<::llmc::floatToF16>(v.data(), v.size(), dst);
      break;
    default:
      throw Error("weight '" + w.name + "': unexpected dtype");
    }
  }

private:
  struct Values {
    const float *p;
    size_t n;
    const float *data() const { return p; }
    size_t size() const { return n; }
  };

  /// Rank `rank`'s runs of dimension shardDim of the whole logical tensor.
  Values slice(const WeightSpec &w, int64_t rank, const LogicalValues &whole) {
    const auto d = static_cast<size_t>(w.shardDim);
    int64_t outer = 1, inner = 1;
    for (size_t i = 0; i < w.shape.size(); ++i)
      (i < d ? outer : inner) *= i == d ? 1 : w.shape[i];
    const int64_t full = static_cast<int64_t>(whole.size()) / (outer * inner);
    const auto runs = static_cast<int64_t>(w.shardStarts.size()) / tp_;
    const int64_t len = w.shape[d] / runs;
    float *out = slice_.resize(size_t(outer * w.shape[d] * inner));
    const float *in = whole.data();
    size_t at = 0;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t r = 0; r < runs; ++r) {
        const int64_t start = w.shardStarts[size_t(rank * runs + r)];
        if (start < 0) { // zeros on this rank
          std::fill(out + at, out + at + size_t(len * inner), 0.0f);
          at += size_t(len * inner);
          continue;
        }
        if (start + len > full)
          throw Error("weight '" + w.name + "': rank " + std::to_string(rank) +
                      "'s slice " + std::to_string(start) + ".." +
                      std::to_string(start + len) + " passes its " +
                      std::to_string(full));
        std::memcpy(out + at, in + (o * full + start) * inner,
                    size_t(len * inner) * sizeof(float));
        at += size_t(len * inner);
      }
    return {out, at};
  }

  /// What makes two specs the same tensor quantized the same way.
  static std::string key(const WeightSpec &w, int64_t rank) {
    std::string k =
        std::to_string(rank) + "|" + w.name + "|" + w.quant + "|" +
        std::to_string(w.groupSize) + "|" + std::to_string(w.transposed) + "|" +
        std::to_string(w.ropeUnpermuteHeads) + "|" + std::to_string(w.offset);
    for (const std::string &s : w.sources)
      k += "|" + s;
    return k;
  }

  std::shared_ptr<Source> src_;
  const EmitOptions &o_;
  int64_t tp_;
  FloatBuffer values_, tmp_, slice_;
  std::vector<float> scales_;
  std::vector<uint8_t> q_;
  std::string scalesKey_;
};

int64_t i64(DictionaryAttr d, StringRef key) {
  auto a = d.getAs<IntegerAttr>(key);
  return a ? a.getInt() : 0;
}

/// "ggml (Q4_K->int4, Q6_K->int8)": which block format became which.
std::string ggmlQuantization(const LoweredModule &lowered) {
  std::map<std::string, std::string> formats;
  for (const WeightSpec &w : lowered.weights)
    if (!w.ggmlType.empty())
      formats[w.ggmlType] = !w.quant.empty()       ? w.quant
                            : w.dtype == LLMC_F16  ? "f16"
                            : w.dtype == LLMC_BF16 ? "bf16"
                                                   : "f32";
  std::string out = "ggml (";
  for (const auto &[type, format] : formats)
    out += (out.back() == '(' ? "" : ", ") + type + "->" + format;
  return out + ")";
}

/// The storage dtype of the cache llmc-insert-kv-cache made (f32 for a
/// module without one).
llmc_dtype kvDtypeOf(ModuleOp module) {
  llmc_dtype dtype = LLMC_F32;
  module.walk([&](func::FuncOp f) {
    for (Type t : f.getArgumentTypes())
      if (auto kv = dyn_cast<KVCacheType>(t)) {
        Type d = kv.getDtype();
        dtype = d.isBF16()               ? LLMC_BF16
                : d.isF16()              ? LLMC_F16
                : d.isSignlessInteger(8) ? LLMC_I8
                : d.isFloat8E4M3FN()     ? LLMC_FP8_E4M3
                                         : LLMC_F32;
      }
  });
  return dtype;
}

/// The checkpoint values behind the plan's weights, each counted once
/// (a tied table, or a weight kept in two formats, is one set of values):
/// a stacked expert weight counts k / experts of its values as active.
void countParameters(const LoweredModule &lowered, ::llmc::PlanConfig &p) {
  std::set<std::string> seen;
  for (const WeightSpec &w : lowered.weights) {
    if (!w.data.empty() || w.quantScales)
      continue; // compiler tables and quantization scales are not parameters
    std::string key;
    for (const std::string &s : w.sources)
      key += s + "|";
    if (!seen.insert(key).second)
      continue;
    int64_t n = 1;
    for (int64_t d : w.shape)
      n *= d;
    if (w.shardDim >= 0) { // a rank's slice: the distinct slices make it
      const size_t runs = w.shardStarts.size() / size_t(p.tp);
      std::set<std::vector<int64_t>> slices;
      for (size_t r = 0; r < size_t(p.tp); ++r)
        if (w.shardStarts[r * runs] >= 0) // -1: zeros, not parameters
          slices.emplace(w.shardStarts.begin() + long(r * runs),
                         w.shardStarts.begin() + long((r + 1) * runs));
      n *= static_cast<int64_t>(slices.size());
    }
    p.totalParameters += n;
    p.activeParameters += w.experts > 0 && p.numExperts > 0
                              ? n / w.experts * p.expertsPerToken
                              : n;
  }
}

::llmc::PlanConfig planConfig(ModuleOp module, const LoweredModule &lowered,
                              const EmitOptions &o) {
  auto c = module->getAttrOfType<DictionaryAttr>("llmc.config");
  if (!c)
    throw Error("the module has no llmc.config (was it made by llmc import?)");
  ::llmc::PlanConfig p;
  p.architecture = c.getAs<StringAttr>("architecture").str();
  p.vocabSize = i64(c, "vocab_size");
  p.hiddenSize = i64(c, "hidden_size");
  p.numLayers = i64(c, "num_layers");
  p.numHeads = i64(c, "num_heads");
  p.numKVHeads = i64(c, "num_kv_heads");
  p.kvHeadsPerRank = p.numKVHeads;
  if (auto tp = module->getAttrOfType<IntegerAttr>("llmc.tp")) {
    p.tp = tp.getInt();
    // Each rank's cache: the kv_heads of the graphs' (split) cache type.
    module.walk([&](func::FuncOp f) {
      for (Type t : f.getArgumentTypes())
        if (auto cache = dyn_cast<KVCacheType>(t))
          p.kvHeadsPerRank = cache.getKvHeads();
    });
  }
  p.headDim = i64(c, "head_dim");
  p.intermediateSize = i64(c, "intermediate_size");
  p.contextLength = i64(c, "context_length");
  if (c.get("bos_token_id"))
    p.bosTokenId = i64(c, "bos_token_id");
  if (auto eos = c.getAs<DenseI64ArrayAttr>("eos_token_ids"))
    p.eosTokenIds.assign(eos.asArrayRef().begin(), eos.asArrayRef().end());
  p.numExperts = i64(c, "num_experts");
  p.expertsPerToken = i64(c, "experts_per_token");
  p.expertIntermediateSize = i64(c, "expert_intermediate_size");
  p.moeLayers = i64(c, "moe_layers");
  countParameters(lowered, p);
  p.target = o.target;
  p.computeDtype = o.dtype;
  p.quantization = o.quant == "ggml" ? ggmlQuantization(lowered) : o.quant;
  p.kvDtype = kvDtypeOf(module);
  p.compilerVersion = LLMC_VERSION_STRING;
  return p;
}

/// The chat template of tokenizer_config.json: a string, or a list of
/// {name, template} where "default" wins.
std::string chatTemplateOf(const std::string &configJson,
                           const std::string &origin) {
  if (configJson.empty())
    return "";
  nlohmann::json j = ::llmc::parseJson(configJson, origin);
  if (!j.is_object() || !j.contains("chat_template"))
    return "";
  const auto &t = j["chat_template"];
  if (t.is_string())
    return t.get<std::string>();
  if (t.is_array())
    for (const auto &e : t)
      if (e.is_object() && e.value("name", "") == "default")
        return e.value("template", "");
  return "";
}

::llmc::PlanTokenizer planTokenizer(ModuleOp module, const Source &src) {
  ::llmc::PlanTokenizer t;
  auto attr = module->getAttrOfType<DictionaryAttr>("llmc.tokenizer");
  if (!attr)
    return t;
  t.kind = attr.getAs<StringAttr>("kind").str();
  if (auto cfg = attr.getAs<StringAttr>("config")) {
    t.configJson = ::llmc::readFile(cfg.str());
    t.chatTemplate = chatTemplateOf(t.configJson, cfg.str());
  }
  if (auto file = attr.getAs<StringAttr>("chat_template"))
    t.chatTemplate = ::llmc::readFile(file.str());
  if (t.kind == "hf-json") {
    // Stored compiled: a plan's tokenizer loads without parsing JSON.
    const std::string path = attr.getAs<StringAttr>("path").str();
    t.kind = "hf-tables";
    t.fileBytes =
        ::llmc::tok::compileTokenizerJson(::llmc::readFile(path), path);
    t.configJson =
        ::llmc::tok::compactTokenizerConfig(t.configJson, t.fileBytes);
  } else if (t.kind == "sentencepiece") {
    t.fileBytes = ::llmc::readFile(attr.getAs<StringAttr>("path").str());
  } else if (t.kind == "gguf" && src.gguf()) {
    const auto &g = *src.gguf();
    if (!g.has("tokenizer.ggml.model")) {
      t.kind = "none";
      return t;
    }
    nlohmann::json v;
    v["model"] = g.getString("tokenizer.ggml.model");
    v["tokens"] = g.getStringArray("tokenizer.ggml.tokens");
    if (g.has("tokenizer.ggml.scores"))
      v["scores"] = g.getFloatArray("tokenizer.ggml.scores");
    if (g.has("tokenizer.ggml.token_type"))
      v["token_types"] = g.getIntArray("tokenizer.ggml.token_type");
    if (g.has("tokenizer.ggml.merges"))
      v["merges"] = g.getStringArray("tokenizer.ggml.merges");
    for (const char *k : {"bos", "eos", "unk"})
      if (auto id = g.findInt(std::string("tokenizer.ggml.") + k + "_token_id"))
        v[k] = *id;
    v["add_bos"] = g.findBool("tokenizer.ggml.add_bos_token").value_or(false);
    v["pre"] = g.findString("tokenizer.ggml.pre").value_or("");
    v["add_space_prefix"] =
        g.findBool("tokenizer.ggml.add_space_prefix").value_or(true);
    t.fileBytes = v.dump();
    t.chatTemplate = g.findString("tokenizer.chat_template").value_or("");
  }
  return t;
}

} // namespace

void emitPlan(ModuleOp module, const LoweredModule &lowered,
              const EmitOptions &options, const std::string &path) {
  auto sourceAttr = module->getAttrOfType<DictionaryAttr>("llmc.source");
  if (!sourceAttr)
    throw Error("the module has no llmc.source (was it made by llmc import?)");
  auto src = std::make_shared<Source>(sourceAttr);

  ::llmc::PlanWriter writer;
  writer.setConfig(planConfig(module, lowered, options));
  writer.setTokenizer(planTokenizer(module, *src));
  auto tpAttr = module->getAttrOfType<IntegerAttr>("llmc.tp");
  const int64_t tp = tpAttr ? tpAttr.getInt() : 1;
  auto filler = std::make_shared<Filler>(src, options, tp);
  for (const WeightSpec &w : lowered.weights) {
    int64_t elements = 1;
    for (int64_t d : w.shape)
      elements *= d;
    uint64_t nbytes = ::llmc::dtypeBytes(w.dtype, elements);
    std::vector<int64_t> shape = w.shape;
    if (w.shardDim >= 0)
      writer.addSplitWeight(w.name, w.dtype, shape, nbytes, tp,
                            [filler, &w, nbytes](int64_t rank, uint8_t *dst) {
                              (*filler)(w, rank, dst, nbytes);
                            });
    else
      writer.addWeight(
          w.name, w.dtype, shape, nbytes,
          [filler, &w, nbytes](uint8_t *dst) { (*filler)(w, 0, dst, nbytes); });
  }
  for (const ::llmc::Graph &g : lowered.graphs)
    writer.addGraph(g);
  writer.write(path, options.progress);
}

} // namespace mlir::llmc
