//===- generation_test.cpp - llmc run --truncate/--explain, llmc chat -----===//
//
// Runs the llmc binary on test/data/models/gpt2 (context 256, gpt2-2k
// tokenizer) and llama-mha (SentencePiece, where a re-tokenized assistant
// reply differs from the sampled tokens, so chat falls back to the longest
// common prefix). Neither plan carries a chat template, so chat tests pass
// one from test/data/chat-templates.
//
//===----------------------------------------------------------------------===//

#include "e2e_util.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <unistd.h>

using nlohmann::json;

namespace {

using namespace llmc::e2e;

std::string temp(const std::string &name) { return tempPath("gen-" + name); }

std::string plan(const std::string &model) { return compilePlan(model); }

std::string repeatIds(int id, int n) {
  std::string s;
  for (int i = 0; i < n; ++i)
    s += (i ? "," : "") + std::to_string(id);
  return s;
}

std::vector<json> jsonLines(const std::string &text) {
  std::vector<json> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    json j = json::parse(line, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "not JSON: " << line;
    out.push_back(j);
  }
  return out;
}

TEST(Truncate, TooLongPromptIsAnErrorNamingBothLengths) {
  Command c = runCommand(kBin + "/llmc run " + plan("gpt2") + " --prompt-ids " +
                         repeatIds(5, 300) + " --max-new-tokens 2");
  EXPECT_NE(c.status, 0);
  EXPECT_NE(c.out.find("300 tokens"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("context length is 256"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("--truncate left"), std::string::npos) << c.out;
}

TEST(Truncate, LeftKeepsTheLastTokensAndSaysHowManyWereDropped) {
  std::string ids;
  for (int i = 0; i < 300; ++i)
    ids += (i ? "," : "") + std::to_string(i);
  Command c = runCommand(kBin + "/llmc run " + plan("gpt2") + " --prompt-ids " +
                             ids + " --max-new-tokens 3 --truncate left --json",
                         false);
  ASSERT_EQ(c.status, 0) << c.out;
  json j = json::parse(c.out);
  EXPECT_EQ(j["stats"]["dropped_prompt_tokens"], 300 - 255);
  ASSERT_EQ(j["prompt_ids"].size(), 255u);
  EXPECT_EQ(j["prompt_ids"][0], 45);
  EXPECT_EQ(j["prompt_ids"][254], 299);
  // Position 255 is left for the first new token; the second is sampled
  // from its logits, and then the window is full.
  EXPECT_EQ(j["output_ids"].size(), 2u);
  EXPECT_EQ(j["finish_reason"], "context");
  // The same as running the kept tokens directly.
  std::string kept;
  for (int i = 45; i < 300; ++i)
    kept += (i > 45 ? "," : "") + std::to_string(i);
  Command d = runCommand(kBin + "/llmc run " + plan("gpt2") + " --prompt-ids " +
                             kept + " --max-new-tokens 3 --json",
                         false);
  ASSERT_EQ(d.status, 0) << d.out;
  EXPECT_EQ(json::parse(d.out)["output_ids"], j["output_ids"]);
  Command s = runCommand(kBin + "/llmc run " + plan("gpt2") + " --prompt-ids " +
                         ids + " --max-new-tokens 1 --truncate left --stats");
  EXPECT_NE(s.out.find("45 prompt tokens dropped"), std::string::npos) << s.out;
}

TEST(Explain, TextShowsPhasesPositionsProcessorsAndTheSummary) {
  Command c = runCommand(kBin + "/llmc run " + plan("gpt2") +
                         " --prompt 'Hello world' --max-new-tokens 3 "
                         "--temperature 0.8 --top-k 20 --top-p 0.9 --seed 1 "
                         "--explain");
  ASSERT_EQ(c.status, 0) << c.out;
  for (const char *s :
       {"step 0  prefill", "step 1  decode", "step 2  decode",
        "KV cache: positions 0..3", "KV cache: positions 4..4", "raw logits",
        "temperature: before", "top_k: after", "top_p: before",
        "chosen:", "finished: length", "TTFT", "TPOT",
        "KV cache bytes = 2 (K and V) x 2 layers x 4 kv heads x 64 bytes (16 "
        "head dim in f32) x 6 tokens = 6144"})
    EXPECT_NE(c.out.find(s), std::string::npos) << s << "\n" << c.out;
}

TEST(Explain, JsonLinesParseAndAgreeWithTheRun) {
  std::string common = kBin + "/llmc run " + plan("gpt2") +
                       " --prompt 'Hello world' --max-new-tokens 4 "
                       "--temperature 0.8 --top-k 20 --seed 3";
  Command c = runCommand(common + " --explain=json", false);
  ASSERT_EQ(c.status, 0) << c.out;
  std::vector<json> lines = jsonLines(c.out);
  ASSERT_EQ(lines.size(), 5u) << c.out;
  std::vector<int> chosen;
  for (size_t i = 0; i < 4; ++i) {
    const json &s = lines[i];
    EXPECT_EQ(s["type"], "step");
    EXPECT_EQ(s["phase"], i == 0 ? "prefill" : "decode");
    EXPECT_EQ(s["cache_length"], 4 + static_cast<int>(i));
    ASSERT_EQ(s["processors"].size(), 2u);
    EXPECT_EQ(s["processors"][0]["name"], "temperature");
    EXPECT_EQ(s["processors"][1]["name"], "top_k");
    EXPECT_FALSE(s["top_raw"].empty());
    chosen.push_back(s["chosen_id"].get<int>());
    if (i > 0) {
      EXPECT_EQ(s["fed_ids"][0], chosen[i - 1]);
    }
    EXPECT_EQ(s["finish_reason"].is_null(), i < 3);
  }
  EXPECT_EQ(lines[4]["type"], "summary");
  EXPECT_EQ(lines[4]["kv_cache"]["bytes"], 7 * 1024);
  Command plain = runCommand(common + " --json", false);
  EXPECT_EQ(json::parse(plain.out)["output_ids"], json(chosen));
}

/// Chat over a pipe, then `llmc run` on each turn's full rendering: greedy,
/// the outputs must be identical, so the reused cache is exact.
void chatMatchesRun(const std::string &model, const std::string &tmpl) {
  std::string in = temp("chat-in.txt");
  std::ofstream(in) << "Hello there\nTell me more\n/exit\nnot read\n";
  Command c = runCommand(kBin + "/llmc chat " + plan(model) +
                             " --chat-template " + kData + "/chat-templates/" +
                             tmpl + ".jinja --max-new-tokens 8 --json < " + in,
                         false);
  ASSERT_EQ(c.status, 0) << c.out;
  std::vector<json> turns = jsonLines(c.out);
  ASSERT_EQ(turns.size(), 2u) << c.out;
  EXPECT_EQ(turns[0]["reused_tokens"], 0);
  EXPECT_GT(turns[1]["reused_tokens"].get<int>(), 0);
  EXPECT_EQ(turns[1]["reused_tokens"].get<int>() +
                turns[1]["prefilled_tokens"].get<int>(),
            static_cast<int>(turns[1]["prompt_ids"].size()));
  for (const json &t : turns) {
    Command r =
        runCommand(kBin + "/llmc run " + plan(model) + " --prompt-ids " +
                       joinIds(t["prompt_ids"]) + " --max-new-tokens 8 --json",
                   false);
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_EQ(json::parse(r.out)["output_ids"], t["output_ids"])
        << model << " turn " << t["turn"];
  }
}

TEST(Chat, PipeTwoTurnsMatchesRunOnTheRenderingGpt2) {
  chatMatchesRun("gpt2", "smollm2-instruct");
}

TEST(Chat, PipeTwoTurnsMatchesRunOnTheRenderingSentencePiece) {
  chatMatchesRun("llama-mha", "zephyr-7b-beta");
}

TEST(Chat, StatsShowTheEosUnionAndCacheReuse) {
  std::string in = temp("chat-in2.txt");
  std::ofstream(in) << "Hi\nAgain\n";
  Command c = runCommand(kBin + "/llmc chat " + plan("gpt2") +
                         " --chat-template " + kData +
                         "/chat-templates/smollm2-instruct.jinja "
                         "--max-new-tokens 4 --stats < " +
                         in);
  ASSERT_EQ(c.status, 0) << c.out;
  EXPECT_NE(c.out.find("eos ids: 2047"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("turn 1: prefilled"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("turn 2: prefilled"), std::string::npos) << c.out;
  EXPECT_EQ(c.out.find("turn 2: prefilled 0"), std::string::npos) << c.out;
}

TEST(Chat, WithoutATemplateIsAnError) {
  Command c = runCommand(kBin + "/llmc chat " + plan("gpt2") + " < /dev/null");
  EXPECT_NE(c.status, 0);
  EXPECT_NE(c.out.find("no chat template"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("--chat-template"), std::string::npos) << c.out;
}

TEST(Chat, ATemplateThatFailsNamesTheConstruct) {
  std::string t = temp("bad.jinja");
  std::ofstream(t) << "{{ messages | wordwrap }}";
  Command c = runCommand(kBin + "/llmc chat " + plan("gpt2") +
                         " --chat-template " + t + " < " + t);
  EXPECT_NE(c.status, 0);
  EXPECT_NE(c.out.find("wordwrap"), std::string::npos) << c.out;
}

} // namespace
