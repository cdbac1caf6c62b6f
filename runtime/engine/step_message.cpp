//===- step_message.cpp - A step's metadata as bytes ----------------------===//
#include "step_message.h"

#include "llmc/support/error.h"

#include <cstring>

namespace llmc {
namespace {

struct Writer {
  std::vector<uint8_t> out;
  void raw(const void *p, size_t n) {
    const auto *b = static_cast<const uint8_t *>(p);
    out.insert(out.end(), b, b + n);
  }
  template <typename T> void value(T v) { raw(&v, sizeof v); }
  template <typename T> void vec(const std::vector<T> &v) {
    value<uint64_t>(v.size());
    raw(v.data(), v.size() * sizeof(T));
  }
};

struct Reader {
  const std::vector<uint8_t> &in;
  size_t at = 0;
  void raw(void *p, size_t n) {
    if (n == 0) // an empty vector's data() may be null
      return;
    if (n > in.size() - at)
      throw Error("step message: truncated (" + std::to_string(in.size()) +
                  " bytes)");
    std::memcpy(p, in.data() + at, n);
    at += n;
  }
  template <typename T> T value() {
    T v;
    raw(&v, sizeof v);
    return v;
  }
  template <typename T> void vec(std::vector<T> &v) {
    const auto n = value<uint64_t>();
    if (n > (in.size() - at) / sizeof(T))
      throw Error("step message: a vector of " + std::to_string(n) +
                  " past its end");
    v.resize(size_t(n));
    raw(v.data(), size_t(n) * sizeof(T));
  }
};

} // namespace

std::vector<uint8_t> encodeStop() { return {StepMessage::Stop}; }

std::vector<uint8_t> encodeCopyBlock(const BlockCopy &copy) {
  Writer w;
  w.value<uint8_t>(StepMessage::CopyBlock);
  w.value(copy.src);
  w.value(copy.dst);
  w.value<uint8_t>(copy.sliding);
  return std::move(w.out);
}

std::vector<uint8_t> encodeExecute(const StepBatch &b) {
  Writer w;
  w.value<uint8_t>(StepMessage::Execute);
  w.value<uint64_t>(b.graph.size());
  w.raw(b.graph.data(), b.graph.size());
  for (const std::vector<int32_t> *v :
       {&b.tokens, &b.positions, &b.slots, &b.queryStart, &b.contextLens,
        &b.blockTables, &b.logitsRows, &b.slidingSlots, &b.slidingTables})
    w.vec(*v);
  w.vec(b.ropeLong);
  w.value(b.maxBlocks);
  w.value(b.outputRows);
  return std::move(w.out);
}

StepMessage decodeStepMessage(const std::vector<uint8_t> &bytes) {
  Reader r{bytes};
  StepMessage m;
  const auto kind = r.value<uint8_t>();
  if (kind < StepMessage::Execute || kind > StepMessage::Stop)
    throw Error("step message: unknown kind " + std::to_string(kind));
  m.kind = StepMessage::Kind(kind);
  if (m.kind == StepMessage::CopyBlock) {
    m.copy.src = r.value<int32_t>();
    m.copy.dst = r.value<int32_t>();
    m.copy.sliding = r.value<uint8_t>() != 0;
  }
  if (m.kind == StepMessage::Execute) {
    StepBatch &b = m.batch;
    std::vector<char> graph; // as a vector: its length checked the same way
    r.vec(graph);
    b.graph.assign(graph.begin(), graph.end());
    for (std::vector<int32_t> *v :
         {&b.tokens, &b.positions, &b.slots, &b.queryStart, &b.contextLens,
          &b.blockTables, &b.logitsRows, &b.slidingSlots, &b.slidingTables})
      r.vec(*v);
    r.vec(b.ropeLong);
    b.maxBlocks = r.value<int32_t>();
    b.outputRows = r.value<int32_t>();
  }
  if (r.at != bytes.size())
    throw Error("step message: " + std::to_string(bytes.size() - r.at) +
                " bytes past its end");
  return m;
}

} // namespace llmc
