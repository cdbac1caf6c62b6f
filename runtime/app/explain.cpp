//===- explain.cpp - Formatting StepTrace for llmc run --explain
//-----------===//

#include "llmc/runtime/explain.h"
#include "llmc/runtime/weight_traffic.h"

#include <cstdio>
#include <nlohmann/json.hpp>

namespace llmc {
namespace {

/// Token text made visible: control characters escaped, so that a newline
/// token does not break the table.
std::string visible(const std::string &s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += "\\t";
    else if (c == '\r')
      out += "\\r";
    else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else
      out += static_cast<char>(c);
  }
  return out;
}

std::string tokenText(const tok::Tokenizer *t, int32_t id) {
  return t ? t->decode({id}) : std::string();
}

std::string ms(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f ms", seconds * 1e3);
  return buf;
}

void table(std::string &out, const char *title,
           const std::vector<sample::TraceEntry> &entries,
           const tok::Tokenizer *t) {
  out += std::string("    ") + title + "\n";
  for (const auto &e : entries) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "      %8d  logit %9.4f  p %.4f  ", e.id,
                  static_cast<double>(e.logit), static_cast<double>(e.prob));
    out += buf;
    out += t ? "\"" + visible(tokenText(t, e.id)) + "\"" : "";
    out += "\n";
  }
}

nlohmann::json entriesJson(const std::vector<sample::TraceEntry> &entries,
                           const tok::Tokenizer *t) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto &e : entries) {
    nlohmann::json j = {{"id", e.id}, {"logit", e.logit}, {"prob", e.prob}};
    if (t)
      j["text"] = tokenText(t, e.id);
    a.push_back(std::move(j));
  }
  return a;
}

} // namespace

std::string finishReasonText(FinishReason reason) {
  switch (reason) {
  case FinishReason::Eos:
    return "an end-of-sequence token was chosen";
  case FinishReason::Length:
    return "--max-new-tokens tokens were generated";
  case FinishReason::Stop:
    return "a --stop string appeared in the text";
  case FinishReason::Context:
    return "the KV cache reached the context length";
  case FinishReason::Abort:
    return "the request was aborted";
  case FinishReason::None:
    break;
  }
  return "not finished";
}

std::string explainStepText(const StepTrace &s, const tok::Tokenizer *t) {
  std::string out = "step " + std::to_string(s.step) + "  " + s.phase + "\n";
  out += "  fed " + std::to_string(s.fedIds.size()) + " token" +
         (s.fedIds.size() == 1 ? "" : "s") + ":";
  const size_t shown = std::min<size_t>(s.fedIds.size(), 16);
  for (size_t i = 0; i < shown; ++i)
    out += " " + std::to_string(s.fedIds[i]);
  if (shown < s.fedIds.size())
    out += " ... (" + std::to_string(s.fedIds.size() - shown) + " more)";
  out += "\n";
  if (t)
    out += "  text: \"" + visible(s.fedText) + "\"\n";
  const int64_t first = s.cacheLength - static_cast<int64_t>(s.fedIds.size());
  out += "  KV cache: positions " + std::to_string(first) + ".." +
         std::to_string(s.cacheLength - 1) + " written this step, " +
         std::to_string(s.cacheLength) + " cached in all\n";
  if (s.chosenId < 0) {
    out += "  no token sampled\n";
  } else {
    table(out,
          "raw logits (top candidates, softmax over the vocabulary):", s.topRaw,
          t);
    for (const auto &p : s.processors) {
      table(out, (p.name + ": before").c_str(), p.topBefore, t);
      table(out, (p.name + ": after").c_str(), p.topAfter, t);
    }
    if (s.processors.empty())
      out += "    (no sampling processor is active: greedy takes the top "
             "raw logit)\n";
    out += "  chosen: " + std::to_string(s.chosenId);
    if (t)
      out += " \"" + visible(s.chosenText) + "\"";
    out += "\n";
  }
  if (s.finishReason != FinishReason::None)
    out += std::string("  finished: ") + finishReasonName(s.finishReason) +
           " (" + finishReasonText(s.finishReason) + ")\n";
  return out;
}

std::string explainStepJson(const StepTrace &s, const tok::Tokenizer *t) {
  nlohmann::json procs = nlohmann::json::array();
  for (const auto &p : s.processors)
    procs.push_back({{"name", p.name},
                     {"before", entriesJson(p.topBefore, t)},
                     {"after", entriesJson(p.topAfter, t)}});
  nlohmann::json j = {{"type", "step"},
                      {"step", s.step},
                      {"phase", s.phase},
                      {"fed_ids", s.fedIds},
                      {"cache_length", s.cacheLength},
                      {"positions",
                       {s.cacheLength - static_cast<int64_t>(s.fedIds.size()),
                        s.cacheLength - 1}},
                      {"top_raw", entriesJson(s.topRaw, t)},
                      {"processors", procs},
                      {"chosen_id", s.chosenId}};
  if (t) {
    j["fed_text"] = s.fedText;
    j["chosen_text"] = s.chosenText;
  }
  j["finish_reason"] = s.finishReason == FinishReason::None
                           ? nlohmann::json()
                           : nlohmann::json(finishReasonName(s.finishReason));
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string explainSummaryText(const GenerateResult &r, const Engine &e) {
  const PlanConfig &c = e.config();
  const GenerationMetrics &m = r.metrics;
  const int64_t tokens =
      std::max<int64_t>(0, m.promptTokens + m.generatedTokens - 1);
  const llmc_dtype kv = e.kvDtype();
  const bool scaled = kv == LLMC_I8 || kv == LLMC_FP8_E4M3;
  const int64_t rowBytes =
      int64_t(llmc_kv_block_bytes(kv, 1, 1, uint32_t(c.headDim)));
  std::string out = "summary\n";
  out += std::string("  finished: ") + finishReasonName(r.finishReason) + " (" +
         finishReasonText(r.finishReason) + ")\n";
  out += "  prompt " + std::to_string(m.promptTokens) + " tokens";
  if (m.droppedPromptTokens)
    out += " (" + std::to_string(m.droppedPromptTokens) +
           " dropped from the left by --truncate left)";
  out += ", generated " + std::to_string(m.generatedTokens) + "\n";
  out += "  TTFT " + ms(m.ttftSeconds) +
         " (start to first token, prefill included)\n";
  out +=
      "  TPOT " + ms(m.tpotSeconds) + " ((t_N - t_1) / (N - 1), decode only)\n";
  out += "  KV cache bytes = 2 (K and V) x " + std::to_string(c.numLayers) +
         " layers x " + std::to_string(c.numKVHeads) + " kv heads x " +
         std::to_string(rowBytes) + " bytes (" + std::to_string(c.headDim) +
         " head dim in " + llmc_kv_dtype_name(kv) +
         (scaled ? " + a 4-byte scale" : "") + ") x " + std::to_string(tokens) +
         " tokens = " + std::to_string(m.kvBytesPerToken * tokens) + "\n";
  if (m.kvBytesUsed != m.kvBytesPerToken * tokens)
    out += "  of which held: " + std::to_string(m.kvBytesUsed) + " (" +
           std::to_string(e.kvPool().sliding.count()) +
           " sliding layers keep only their last " +
           std::to_string(e.kvPool().sliding.window) + " positions)\n";
  const WeightTraffic w = weightTraffic(e.plan());
  out +=
      "  weights read per decode token: " + std::to_string(w.decodeBytes(1)) +
      " bytes of " + std::to_string(w.planBytes);
  if (c.numExperts > 0)
    out += " (" + std::to_string(c.expertsPerToken) + " of " +
           std::to_string(c.numExperts) + " experts per token in " +
           std::to_string(c.moeLayers) + " of " + std::to_string(c.numLayers) +
           " layers: " + std::to_string(c.activeParameters) + " of " +
           std::to_string(c.totalParameters) + " parameters active)";
  out += "\n";
  return out;
}

std::string explainSummaryJson(const GenerateResult &r, const Engine &e) {
  const PlanConfig &c = e.config();
  const GenerationMetrics &m = r.metrics;
  nlohmann::json j = {
      {"type", "summary"},
      {"finish_reason", finishReasonName(r.finishReason)},
      {"prompt_tokens", m.promptTokens},
      {"dropped_prompt_tokens", m.droppedPromptTokens},
      {"generated_tokens", m.generatedTokens},
      {"output_ids", r.outputIds},
      {"text", r.text},
      {"ttft_ms", m.ttftSeconds * 1e3},
      {"tpot_ms", m.tpotSeconds * 1e3},
      {"kv_cache",
       {{"formula", "2 * layers * kv_heads * (head_dim * dtype_bytes + "
                    "scale_bytes) * tokens"},
        {"dtype", llmc_kv_dtype_name(e.kvDtype())},
        {"scale_bytes",
         e.kvDtype() == LLMC_I8 || e.kvDtype() == LLMC_FP8_E4M3 ? 4 : 0},
        {"layers", c.numLayers},
        {"kv_heads", c.numKVHeads},
        {"head_dim", c.headDim},
        {"bytes_per_token", m.kvBytesPerToken},
        {"tokens",
         std::max<int64_t>(0, m.promptTokens + m.generatedTokens - 1)},
        {"bytes", m.kvBytesUsed}}}};
  const WeightTraffic w = weightTraffic(e.plan());
  j["weights"] = {{"decode_bytes_per_token", w.decodeBytes(1)},
                  {"plan_bytes", w.planBytes},
                  {"total_parameters", c.totalParameters},
                  {"active_parameters", c.activeParameters},
                  {"num_experts", c.numExperts},
                  {"experts_per_token", c.expertsPerToken},
                  {"moe_layers", c.moeLayers}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

} // namespace llmc
