#include "llmc/runtime/graph.h"
#include "llmc/support/error.h"
#include "llmc/support/kquant.h"

namespace llmc {

const char *opKindName(llmc_op_kind kind) {
  switch (kind) {
  case LLMC_OP_EMBEDDING:
    return "embedding";
  case LLMC_OP_RMS_NORM:
    return "rms_norm";
  case LLMC_OP_ADD_RMS_NORM:
    return "add_rms_norm";
  case LLMC_OP_LAYER_NORM:
    return "layer_norm";
  case LLMC_OP_LINEAR:
    return "linear";
  case LLMC_OP_ROPE:
    return "rope";
  case LLMC_OP_ADD:
    return "add";
  case LLMC_OP_MUL:
    return "mul";
  case LLMC_OP_SILU:
    return "silu";
  case LLMC_OP_GELU:
    return "gelu";
  case LLMC_OP_SWIGLU:
    return "swiglu";
  case LLMC_OP_SLICE:
    return "slice";
  case LLMC_OP_KV_WRITE:
    return "kv_write";
  case LLMC_OP_PREFILL_ATTENTION:
    return "prefill_attention";
  case LLMC_OP_DECODE_ATTENTION:
    return "decode_attention";
  case LLMC_OP_TAKE_ROWS:
    return "take_rows";
  case LLMC_OP_SCALE:
    return "scale";
  case LLMC_OP_SOFTCAP:
    return "softcap";
  case LLMC_OP_MOE_GATING:
    return "moe_gating";
  case LLMC_OP_EXPERT_LINEAR:
    return "expert_linear";
  case LLMC_OP_MOE_COMBINE:
    return "moe_combine";
  case LLMC_OP_EXPERT_BIAS:
    return "expert_bias";
  case LLMC_OP_ALL_REDUCE:
    return "all_reduce";
  case LLMC_OP_COUNT:
    break;
  }
  return "unknown";
}

const char *opLabel(const llmc_op_desc &op) {
  if (op.kind == LLMC_OP_SWIGLU && op.i[0] == 1)
    return "geglu";
  if (op.kind == LLMC_OP_SWIGLU && op.i[0] == 2)
    return "clamped_swiglu";
  return opKindName(llmc_op_kind(op.kind));
}

AbiNeed abiNeeded(const llmc_op_desc &op) {
  switch (op.kind) {
  case LLMC_OP_RMS_NORM:
    if (op.i[0] != 0)
      return {1, "RMS_NORM over each head (i0)"};
    break;
  case LLMC_OP_SWIGLU:
    if (op.i[0] == 2 || op.i[2] != 0)
      return {7, "gpt-oss's clamped SWIGLU (i0 = 2, i2)"};
    if (op.i[1] > 1)
      return {4, "SWIGLU over one run per expert (i1)"};
    if (op.i[0] != 0)
      return {2, "SWIGLU with the GELU activation (i0)"};
    break;
  case LLMC_OP_EXPERT_BIAS:
    return {7, "expert biases (op expert_bias)"};
  case LLMC_OP_ALL_REDUCE:
    return {9, "tensor parallelism (op all_reduce)"};
  case LLMC_OP_MOE_GATING:
  case LLMC_OP_EXPERT_LINEAR:
  case LLMC_OP_MOE_COMBINE:
    return {4, std::string("mixture of experts (op ") +
                   opKindName(llmc_op_kind(op.kind)) + ")"};
  case LLMC_OP_PREFILL_ATTENTION:
  case LLMC_OP_DECODE_ATTENTION:
    if (op.num_operands > 1)
      return {7, "attention sinks (operand 1)"};
    if (op.f[1] != 0)
      return {2, "attention logit soft-capping (f1)"};
    break;
  case LLMC_OP_SCALE:
  case LLMC_OP_SOFTCAP:
    return {2, std::string("op ") + opKindName(llmc_op_kind(op.kind))};
  case LLMC_OP_ROPE:
    if (op.i[4] > 0)
      return {5, "ROPE with LongRoPE's long table (i4)"};
    break;
  default:
    break;
  }
  return {0, ""};
}

AbiNeed abiNeeded(const Graph &g) {
  AbiNeed need{0, ""};
  for (const llmc_op_desc &op : g.ops)
    if (AbiNeed n = abiNeeded(op); n.minor > need.minor)
      need = n;
  return need;
}

const char *dtypeName(llmc_dtype dtype) { return llmc_dtype_name(dtype); }

size_t dtypeBytes(llmc_dtype dtype, int64_t elements) {
  if (elements < 0)
    throw Error("negative element count " + std::to_string(elements));
  auto n = static_cast<size_t>(elements);
  switch (dtype) {
  case LLMC_F32:
  case LLMC_I32:
    return n * 4;
  case LLMC_F16:
  case LLMC_BF16:
    return n * 2;
  case LLMC_I8:
  case LLMC_FP8_E4M3:
  case LLMC_E8M0:
  case LLMC_KQ_HEADER:
    return n;
  case LLMC_Q4_K:
  case LLMC_Q5_K:
  case LLMC_Q6_K: {
    // The codes of whole super-blocks (their headers are another weight).
    const kquant::Format f = *kquant::formatOfDtype(dtype);
    if (n % kquant::kBlock)
      throw Error(std::string(kquant::layout(f).ggml) +
                  " holds whole blocks of 256 values, not " +
                  std::to_string(n));
    return n / kquant::kBlock * size_t(kquant::layout(f).codeBytes);
  }
  case LLMC_I4:
  case LLMC_MXFP4:
    // Two per byte; an odd count leaves the last high nibble unused.
    return n / 2 + n % 2;
  }
  throw Error("unknown dtype " + std::to_string(static_cast<int>(dtype)));
}

} // namespace llmc
