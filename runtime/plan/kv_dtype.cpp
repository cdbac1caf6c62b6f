//===- kv_dtype.cpp - What a KV-cache dtype costs per token ---------------===//
#include "llmc/runtime/plan.h"

#include "llmc/support/error.h"

namespace llmc {

uint64_t kvBytesPerToken(const PlanConfig &c, llmc_dtype kvDtype) {
  return 2 * uint64_t(c.numLayers) *
         llmc_kv_block_bytes(kvDtype, 1, uint32_t(c.rankKvHeads()),
                             uint32_t(c.headDim));
}

llmc_dtype parseKvDtype(const std::string &value, const std::string &flag) {
  for (llmc_dtype d : {LLMC_F32, LLMC_BF16, LLMC_F16, LLMC_I8, LLMC_FP8_E4M3})
    if (value == llmc_kv_dtype_name(d))
      return d;
  throw Error(flag + ": '" + value +
              "' is not a KV-cache dtype (f32, bf16, f16, int8, fp8)");
}

} // namespace llmc
