#include "llmc/runtime/kv_manager.h"
#include "llmc/runtime/plan_info.h"
#include "llmc/runtime/sliding_layers.h"
#include "llmc/runtime/weight_traffic.h"

#include "llmc/support/error.h"
#include "llmc/support/half.h"
#include "llmc/support/kquant.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>

namespace llmc {
namespace {

using nlohmann::ordered_json;

constexpr uint64_t kGiB = uint64_t(1) << 30;

std::string humanBytes(uint64_t n) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[64];
  if (u == 0)
    std::snprintf(buf, sizeof(buf), "%" PRIu64 " B", n);
  else
    std::snprintf(buf, sizeof(buf), "%.2f %s", v, units[u]);
  return buf;
}

// Config values are bounded by the loader, but their products are not.
std::optional<uint64_t> mul(std::initializer_list<uint64_t> factors) {
  uint64_t r = 1;
  for (uint64_t f : factors)
    if (__builtin_mul_overflow(r, f, &r))
      return std::nullopt;
  return r;
}

ordered_json describeConfig(const PlanConfig &c) {
  ordered_json j;
  j["architecture"] = c.architecture;
  j["vocab_size"] = c.vocabSize;
  j["hidden_size"] = c.hiddenSize;
  j["num_layers"] = c.numLayers;
  j["num_heads"] = c.numHeads;
  j["num_kv_heads"] = c.numKVHeads;
  j["head_dim"] = c.headDim;
  j["intermediate_size"] = c.intermediateSize;
  j["context_length"] = c.contextLength;
  j["target"] = c.target;
  j["compute_dtype"] = c.computeDtype;
  j["quantization"] = c.quantization;
  j["kv_dtype"] = llmc_kv_dtype_name(c.kvDtype);
  j["num_experts"] = c.numExperts;
  j["experts_per_token"] = c.expertsPerToken;
  j["expert_intermediate_size"] = c.expertIntermediateSize;
  j["moe_layers"] = c.moeLayers;
  j["total_parameters"] = c.totalParameters;
  j["active_parameters"] = c.activeParameters;
  j["tp"] = c.tp;
  j["kv_heads_per_rank"] = c.rankKvHeads();
  j["bos_token_id"] = c.bosTokenId ? ordered_json(*c.bosTokenId) : nullptr;
  j["eos_token_ids"] = c.eosTokenIds;
  return j;
}

ordered_json describeGraph(const Graph &g) {
  ordered_json j;
  j["name"] = g.name;
  j["ops"] = g.ops.size();
  std::map<std::string, size_t> counts;
  for (const llmc_op_desc &op : g.ops)
    ++counts[opLabel(op)];
  // Most frequent first: that is what a reader scans for.
  std::vector<std::pair<std::string, size_t>> sorted(counts.begin(),
                                                     counts.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](auto &a, auto &b) { return a.second > b.second; });
  ordered_json byKind = ordered_json::object();
  for (const auto &[kind, n] : sorted)
    byKind[kind] = n;
  j["op_counts"] = byKind;
  j["buffers"] = g.buffers.size();
  j["logits_buffer"] = g.logitsBuffer;
  j["workspace"] = {{"t", g.workspaceT},
                    {"b", g.workspaceB},
                    {"c", g.workspaceC},
                    {"bytes_T512_B1", g.workspaceBytes(512, 1)},
                    {"bytes_T1_B64", g.workspaceBytes(1, 64)}};
  return j;
}

ordered_json describeWeights(const Plan &plan) {
  uint64_t total = 0;
  std::map<std::string, std::pair<size_t, uint64_t>> byDtype;
  for (const WeightInfo &w : plan.weights()) {
    total += w.nbytes;
    auto &entry = byDtype[dtypeName(w.dtype)];
    ++entry.first;
    entry.second += w.nbytes;
  }
  ordered_json j;
  j["count"] = plan.weights().size();
  j["bytes"] = total;
  // What one decode step reads: the dense weights, a row of the embedding
  // table, and k of E experts per MoE layer (null without a decode graph).
  j["decode_bytes_per_token"] = nullptr;
  j["expert_bytes"] = 0;
  if (plan.graph("decode")) {
    const WeightTraffic traffic = weightTraffic(plan);
    j["decode_bytes_per_token"] = traffic.decodeBytes(1);
    j["expert_bytes"] = traffic.expertBytes;
  }
  ordered_json d = ordered_json::object();
  for (const auto &[name, entry] : byDtype)
    d[name] = {{"count", entry.first}, {"bytes", entry.second}};
  j["by_dtype"] = d;
  return j;
}

/// Per layer, what the prefill graph's attention does: its window (0 =
/// full) and score soft-cap (0 = none); and the final-logit soft-cap. Read
/// from the ops themselves, the truth a backend runs.
ordered_json describeAttention(const Plan &plan) {
  ordered_json j;
  ordered_json windows = ordered_json::array(), caps = ordered_json::array();
  double finalCap = 0;
  if (const Graph *g = plan.graph("prefill"))
    for (const llmc_op_desc &op : g->ops) {
      if (op.kind == LLMC_OP_PREFILL_ATTENTION) {
        windows.push_back(op.i[4]);
        caps.push_back(op.f[1]);
      } else if (op.kind == LLMC_OP_SOFTCAP) {
        finalCap = op.f[0];
      }
    }
  j["window_per_layer"] = windows;
  j["score_softcap_per_layer"] = caps;
  j["final_logit_softcap"] = finalCap;
  return j;
}

/// Whole blocks of `blockSize` tokens in `bytes`, as tokens.
uint64_t tokensIn(uint64_t bytes, uint64_t perToken, uint64_t blockSize) {
  return perToken ? bytes / (perToken * blockSize) * blockSize : 0;
}

/// What the sliding layers save: each sequence keeps only their window
/// (KvManager's rule, blocks of kDescribeBlockSize), so a full context
/// takes fewer bytes and a budget holds more of them.
ordered_json describeSliding(const Plan &plan, llmc_dtype dtype,
                             int64_t context, const DescribeOptions &o) {
  const SlidingLayers s = slidingLayers(plan, context);
  if (s.count() == 0 || context <= 0)
    return nullptr;
  const PlanConfig &c = plan.config();
  const uint64_t layerToken = kvBytesPerToken(c, dtype) / uint64_t(c.numLayers);
  const int64_t bs = int64_t(kDescribeBlockSize);
  const uint64_t blocks = uint64_t((context + bs - 1) / bs);
  const uint64_t held = uint64_t(slidingBlocksHeld(context, s.window, bs));
  const uint64_t perSeq =
      uint64_t(bs) * layerToken *
      (blocks * uint64_t(c.numLayers - s.count()) + held * uint64_t(s.count()));
  const uint64_t before =
      uint64_t(bs) * layerToken * blocks * uint64_t(c.numLayers);
  ordered_json j = {{"layers", s.count()},
                    {"window", s.window},
                    {"bytes_for_context", perSeq},
                    {"bytes_for_context_without", before}};
  if (o.kvCacheBytes > 0)
    j["memory"] = {
        {"full_contexts", uint64_t(o.kvCacheBytes) / perSeq},
        {"full_contexts_without", uint64_t(o.kvCacheBytes) / before}};
  return j;
}

ordered_json describeKVCache(const Plan &plan, const DescribeOptions &o) {
  const PlanConfig &c = plan.config();
  const llmc_dtype dtype = o.kvDtype ? *o.kvDtype : c.kvDtype;
  const uint64_t perToken = kvBytesPerToken(c, dtype);
  const int64_t contextLength =
      o.contextLength > 0 ? o.contextLength : c.contextLength;
  ordered_json j;
  j["dtype"] = llmc_kv_dtype_name(dtype);
  j["plan_dtype"] = llmc_kv_dtype_name(c.kvDtype);
  j["bytes_per_token"] = perToken;
  std::optional<uint64_t> context = mul({perToken, uint64_t(contextLength)});
  j["context_length"] = contextLength;
  j["bytes_for_context"] = context ? ordered_json(*context) : nullptr;
  j["tokens_per_gib"] =
      perToken > 0 ? ordered_json(kGiB / perToken) : ordered_json(nullptr);
  if (o.kvCacheBytes > 0) {
    const uint64_t tokens =
        tokensIn(uint64_t(o.kvCacheBytes), perToken, kDescribeBlockSize);
    j["memory"] = {{"bytes", o.kvCacheBytes},
                   {"tokens", tokens},
                   {"full_contexts",
                    contextLength > 0 ? tokens / uint64_t(contextLength) : 0}};
  }
  j["sliding"] = describeSliding(plan, dtype, contextLength, o);
  ordered_json all = ordered_json::object();
  for (llmc_dtype d : {LLMC_F32, LLMC_BF16, LLMC_F16, LLMC_I8, LLMC_FP8_E4M3}) {
    const uint64_t b = kvBytesPerToken(c, d);
    ordered_json e = {{"bytes_per_token", b}};
    if (o.kvCacheBytes > 0)
      e["tokens"] = tokensIn(uint64_t(o.kvCacheBytes), b, kDescribeBlockSize);
    all[llmc_kv_dtype_name(d)] = e;
  }
  j["by_dtype"] = all;
  return j;
}

ordered_json describeJson(const Plan &plan, const DescribeOptions &o) {
  ordered_json j;
  j["path"] = plan.path();
  j["file_bytes"] = plan.fileSize();
  j["format"] = std::to_string(plan.formatMajor()) + "." +
                std::to_string(plan.formatMinor());
  j["compiler_version"] = plan.config().compilerVersion;
  j["config"] = describeConfig(plan.config());
  const PlanTokenizer &t = plan.tokenizer();
  j["tokenizer"] = {{"kind", t.kind},
                    {"bytes", t.bytes().size()},
                    {"has_config", !t.configJson.empty()},
                    {"has_chat_template", !t.chatTemplate.empty()}};
  ordered_json graphs = ordered_json::array();
  for (const Graph &g : plan.graphs())
    graphs.push_back(describeGraph(g));
  j["graphs"] = graphs;
  j["attention"] = describeAttention(plan);
  j["weights"] = describeWeights(plan);
  j["kv_cache"] = describeKVCache(plan, o);
  return j;
}

/// 549.66M
std::string millions(const ordered_json &v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fM", double(v.get<int64_t>()) / 1e6);
  return buf;
}

std::string orNone(const ordered_json &v) {
  return v.is_null() ? "none" : v.dump();
}

std::string bytesText(const ordered_json &v) {
  if (v.is_null())
    return "overflow";
  uint64_t n = v.get<uint64_t>();
  std::string exact = std::to_string(n) + " B";
  return n < 1024 ? exact : exact + " (" + humanBytes(n) + ")";
}

std::string renderText(const ordered_json &j) {
  std::string s;
  auto line = [&](const std::string &text) { s += text + "\n"; };
  const auto &c = j["config"];
  auto str = [](const ordered_json &v) { return v.get<std::string>(); };
  auto num = [](const ordered_json &v) { return v.dump(); };

  line("plan: " + str(j["path"]) + " (" + bytesText(j["file_bytes"]) +
       ", format " + str(j["format"]) + ", compiled by " +
       (str(j["compiler_version"]).empty() ? "unknown"
                                           : str(j["compiler_version"])) +
       ")");
  line("config:");
  line("  architecture: " + str(c["architecture"]));
  line("  vocab " + num(c["vocab_size"]) + ", hidden " + num(c["hidden_size"]) +
       ", layers " + num(c["num_layers"]) + ", heads " + num(c["num_heads"]) +
       ", kv heads " + num(c["num_kv_heads"]) + ", head dim " +
       num(c["head_dim"]) + ", intermediate " + num(c["intermediate_size"]));
  if (c["num_experts"].get<int64_t>() > 0)
    line("  experts: " + num(c["num_experts"]) + ", " +
         num(c["experts_per_token"]) + " per token, width " +
         num(c["expert_intermediate_size"]) + ", in " + num(c["moe_layers"]) +
         " of " + num(c["num_layers"]) + " layers");
  if (c["total_parameters"].get<int64_t>() > 0)
    line("  parameters: " + millions(c["total_parameters"]) + ", " +
         millions(c["active_parameters"]) + " active per token");
  if (c["tp"].get<int64_t>() > 1)
    line("  tensor parallel: " + num(c["tp"]) + " ranks (mpirun -n " +
         num(c["tp"]) + "), " + num(c["kv_heads_per_rank"]) +
         " kv heads cached per rank; the weights and sizes below are rank "
         "0's");
  line("  context length: " + num(c["context_length"]));
  line("  target: " + str(c["target"]) + ", compute dtype " +
       str(c["compute_dtype"]) + ", quantization " + str(c["quantization"]) +
       ", kv dtype " + str(c["kv_dtype"]));
  std::string eos;
  for (const auto &e : c["eos_token_ids"])
    eos += (eos.empty() ? "" : ", ") + e.dump();
  line("  bos: " + orNone(c["bos_token_id"]) +
       ", eos: " + (eos.empty() ? "none" : eos));

  const auto &t = j["tokenizer"];
  line("tokenizer: " + str(t["kind"]) + " (" + bytesText(t["bytes"]) +
       "), tokenizer config: " + (t["has_config"].get<bool>() ? "yes" : "no") +
       ", chat template: " +
       (t["has_chat_template"].get<bool>() ? "yes" : "no"));

  line("graphs: " + std::to_string(j["graphs"].size()));
  for (const auto &g : j["graphs"]) {
    line("  " + str(g["name"]) + ": " + num(g["ops"]) + " ops, " +
         num(g["buffers"]) + " buffers, logits in buffer " +
         num(g["logits_buffer"]));
    std::string counts;
    for (const auto &[kind, n] : g["op_counts"].items())
      counts += (counts.empty() ? "" : ", ") + kind + " " + n.dump();
    line("    ops: " + (counts.empty() ? "none" : counts));
    const auto &w = g["workspace"];
    line("    workspace: " + num(w["t"]) + "*T + " + num(w["b"]) + "*B + " +
         num(w["c"]) + " bytes; T=512,B=1: " + bytesText(w["bytes_T512_B1"]) +
         "; T=1,B=64: " + bytesText(w["bytes_T1_B64"]));
  }

  // "window 16 on layers 0, 2; full on 1", or one phrase when all agree.
  const auto &a = j["attention"];
  std::map<int64_t, std::string> layersByWindow;
  for (size_t i = 0; i < a["window_per_layer"].size(); ++i) {
    std::string &l = layersByWindow[a["window_per_layer"][i].get<int64_t>()];
    l += (l.empty() ? "" : ", ") + std::to_string(i);
  }
  std::string att;
  for (const auto &[window, layers] : layersByWindow)
    att += (att.empty() ? "" : "; ") +
           (window ? "window " + std::to_string(window) : std::string("full")) +
           (layersByWindow.size() == 1              ? ""
            : layers.find(',') == std::string::npos ? " on layer " + layers
                                                    : " on layers " + layers);
  std::vector<double> caps;
  for (const auto &c2 : a["score_softcap_per_layer"])
    if (double v = c2.get<double>();
        v > 0 && std::find(caps.begin(), caps.end(), v) == caps.end())
      caps.push_back(v);
  for (double v : caps)
    att += "; scores soft-capped at " + ordered_json(v).dump();
  if (double v = a["final_logit_softcap"].get<double>(); v > 0)
    att += "; logits soft-capped at " + ordered_json(v).dump();
  line("attention: " + (att.empty() ? "none" : att));

  const auto &w = j["weights"];
  line("weights: " + num(w["count"]) + ", " + bytesText(w["bytes"]));
  if (!w["decode_bytes_per_token"].is_null())
    line("  a decode step reads " + bytesText(w["decode_bytes_per_token"]) +
         (w["expert_bytes"].get<uint64_t>() > 0
              ? " (the chosen experts only: " + num(c["experts_per_token"]) +
                    " of " + num(c["num_experts"]) + " per layer)"
              : std::string()));
  for (const auto &[dtype, e] : w["by_dtype"].items())
    line("  " + dtype + ": " + num(e["count"]) + ", " + bytesText(e["bytes"]));

  const auto &kv = j["kv_cache"];
  const bool chosen = kv["dtype"] != kv["plan_dtype"];
  line("kv cache (" + str(kv["dtype"]) +
       (chosen
            ? ", chosen by --kv-dtype; the plan's is " + str(kv["plan_dtype"])
            : std::string()) +
       "): " + bytesText(kv["bytes_per_token"]) + " per token");
  line("  full context (" + num(kv["context_length"]) +
       " tokens): " + bytesText(kv["bytes_for_context"]));
  line("  tokens per GiB: " + orNone(kv["tokens_per_gib"]));
  if (kv.contains("memory"))
    line("  in --kv-cache-memory " + bytesText(kv["memory"]["bytes"]) + ": " +
         num(kv["memory"]["tokens"]) + " tokens in blocks of " +
         std::to_string(kDescribeBlockSize) + ", " +
         num(kv["memory"]["full_contexts"]) + " full contexts");
  if (const auto &sl = kv["sliding"]; !sl.is_null()) {
    line("  sliding layers: " + num(sl["layers"]) + " of " +
         num(c["num_layers"]) + " keep only their last " + num(sl["window"]) +
         " positions: a full context holds " +
         bytesText(sl["bytes_for_context"]) + " (" +
         bytesText(sl["bytes_for_context_without"]) + " if they kept all)");
    if (sl.contains("memory"))
      line("  in --kv-cache-memory: " + num(sl["memory"]["full_contexts"]) +
           " full contexts (" + num(sl["memory"]["full_contexts_without"]) +
           " if they kept all)");
  }
  std::string other;
  for (const auto &[name, e] : kv["by_dtype"].items())
    other += (other.empty() ? "" : ", ") + name + " " +
             num(e["bytes_per_token"]) +
             (e.contains("tokens") ? " (" + num(e["tokens"]) + " tokens)"
                                   : std::string());
  line("  per token by --kv-dtype: " + other);
  return s;
}

} // namespace

std::string describeWeight(const Plan &plan, const std::string &name,
                           size_t count) {
  const auto &ws = plan.weights();
  for (uint32_t i = 0; i < ws.size(); ++i) {
    const WeightInfo &w = ws[i];
    if (w.name != name)
      continue;
    std::string shape;
    int64_t n = 1;
    for (int64_t d : w.shape) {
      shape += (shape.empty() ? "" : ", ") + std::to_string(d);
      n *= d;
    }
    std::string s = "weight " + std::to_string(i) + " '" + w.name +
                    "': " + dtypeName(w.dtype) + " [" + shape + "], " +
                    std::to_string(w.nbytes) + " bytes\n";
    const uint8_t *data = plan.weightData(i);
    const bool isFloat =
        w.dtype == LLMC_F32 || w.dtype == LLMC_BF16 || w.dtype == LLMC_F16;
    // A K-quant's values, decoded as ggml decodes them, with its headers
    // (the kq_header weight of the same name).
    std::vector<float> decoded;
    if (const auto f = kquant::formatOfDtype(w.dtype)) {
      for (uint32_t h = 0; h < ws.size() && decoded.empty(); ++h)
        if (ws[h].name == name && ws[h].dtype == LLMC_KQ_HEADER) {
          decoded.resize(size_t(n));
          const kquant::Layout l = kquant::layout(*f);
          for (int64_t b = 0; b < n / kquant::kBlock; ++b)
            kquant::decode(*f, plan.weightData(h) + b * l.headerBytes,
                           data + b * l.codeBytes,
                           decoded.data() + b * kquant::kBlock);
        }
      s += "  (ggml's " + std::string(kquant::layout(*f).ggml) +
           " super-blocks, decoded with their headers)\n";
    } else if (!isFloat) {
      return s + "  (quantized: the values are its integers times its "
                 "scales, a weight of its own)\n";
    }
    auto value = [&](int64_t k) {
      if (!decoded.empty())
        return decoded[size_t(k)];
      if (w.dtype == LLMC_F32) {
        float f;
        std::memcpy(&f, data + 4 * k, 4);
        return f;
      }
      uint16_t h;
      std::memcpy(&h, data + 2 * k, 2);
      return w.dtype == LLMC_BF16 ? bf16ToFloat(h) : f16ToFloat(h);
    };
    double sum = 0, lo = INFINITY, hi = -INFINITY;
    for (int64_t k = 0; k < n; ++k) {
      double v = value(k);
      sum += v;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", n ? sum / double(n) : 0.0);
    s += std::string("  mean ") + buf;
    std::snprintf(buf, sizeof buf, "%.9g", lo);
    s += std::string(", min ") + buf;
    std::snprintf(buf, sizeof buf, "%.9g", hi);
    s += std::string(", max ") + buf + "\n  first:";
    for (int64_t k = 0; k < std::min<int64_t>(n, int64_t(count)); ++k) {
      std::snprintf(buf, sizeof buf, " %.9g", double(value(k)));
      s += buf;
    }
    return s + "\n";
  }
  // Suggest names sharing the request's last part ("norm" of
  // "model.norm.weight"), else the first few.
  std::string key = name;
  if (key.ends_with(".weight"))
    key.resize(key.size() - 7);
  key = key.substr(key.rfind('.') + 1);
  std::string some;
  int shown = 0;
  for (const WeightInfo &w : ws)
    if (shown < 8 && !key.empty() && w.name.find(key) != std::string::npos) {
      some += (some.empty() ? "" : ", ") + w.name;
      ++shown;
    }
  if (some.empty())
    for (const WeightInfo &w : ws)
      if (shown++ < 8)
        some += (some.empty() ? "" : ", ") + w.name;
  throw Error(plan.path() + ": no weight named '" + name + "' (of " +
              std::to_string(ws.size()) + "; e.g. " + some + ")");
}

std::string describePlan(const Plan &plan, bool json,
                         const DescribeOptions &options) {
  ordered_json j = describeJson(plan, options);
  // Names come from the file and need not be UTF-8; JSON must be.
  return json ? j.dump(2, ' ', false, ordered_json::error_handler_t::replace) +
                    "\n"
              : renderText(j);
}

} // namespace llmc
