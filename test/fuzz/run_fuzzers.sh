#!/usr/bin/env bash
# Runs every libFuzzer target of a fuzz build for a bounded time each, seeded
# from the test data. Usage: run_fuzzers.sh BUILD_DIR SECONDS
# Each fuzzer is single-threaded, so LLMC_FUZZ_JOBS of them (default: the
# number of cores) run at once; each still gets its full SECONDS.
set -euo pipefail
build=$1
seconds=$2
jobs=${LLMC_FUZZ_JOBS:-$(nproc)}
root=$(cd "$(dirname "$0")/../.." && pwd)
data=$root/test/data
work=$build/fuzz-work
mkdir -p "$work"

seed() { # seed NAME FILES...
  local dir=$work/$1-corpus
  mkdir -p "$dir"
  shift
  # Seeds keep their folder in the name (every checkpoint's file is called
  # model.safetensors); files over 2 MB would only be truncated by -max_len.
  for f in "$@"; do
    [ -f "$f" ] && [ "$(stat -c %s "$f")" -le 2097152 ] || continue
    cp "$f" "$dir/$(basename "$(dirname "$f")")-$(basename "$f")"
  done
  echo "$dir"
}

# Waits for the running fuzzers and prints each one's log in launch order (the
# whole log of one that failed, the last lines of one that passed).
pids=()
names=()
failed=0
finish_batch() {
  local i
  for i in "${!pids[@]}"; do
    if wait "${pids[$i]}"; then
      head -n 1 "$work/${names[$i]}.log"
      tail -n 4 "$work/${names[$i]}.log"
    else
      cat "$work/${names[$i]}.log"
      echo "-- ${names[$i]}: FAILED" >&2
      failed=$((failed + 1))
    fi
  done
  pids=()
  names=()
}

found=0
for fuzzer in "$build"/bin/*_fuzzer; do
  [ -x "$fuzzer" ] || continue
  found=1
  name=$(basename "$fuzzer" _fuzzer)
  name=${name#llmc_}
  case "$name" in
    safetensors) corpus=$(seed "$name" "$data"/models/*/model*.safetensors) ;;
    gguf)
      corpus=$(seed "$name")
      if [ -x "$build/bin/llmc-make-gguf" ]; then
        for t in f32 q8_0 q4_0; do
          "$build/bin/llmc-make-gguf" "$data/models/llama-mqa" -o "$corpus/llama-mqa-$t.gguf" --type "$t" >/dev/null
        done
      fi ;;
    tokenizer_json) corpus=$(seed "$name" "$data"/models/tokenizers/*/tokenizer.json) ;;
    template) corpus=$(seed "$name" "$data"/chat-templates/*.jinja) ;;
    openai_request)
      corpus=$(seed "$name")
      printf '%s' '{"model": "m", "prompt": "hi", "max_tokens": 5, "temperature": 0.7, "top_p": 0.9, "stop": ["x"], "n": 2, "logprobs": 1, "stream": true, "stream_options": {"include_usage": true}}' >"$corpus/completion.json"
      printf '%s' '{"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": [{"type": "text", "text": "hi"}]}], "logprobs": true, "top_logprobs": 2, "seed": 3, "max_completion_tokens": 4}' >"$corpus/chat.json"
      printf '%s' '{"prompt": [1, 2, 3], "echo": true, "ignore_eos": true, "top_k": -1, "min_p": 0.1}' >"$corpus/ids.json"
      printf '%s' '{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"a\": 1}"}}]}, {"role": "tool", "tool_call_id": "c1", "content": "ok"}], "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}}}}], "tool_choice": "required"}' >"$corpus/tools.json"
      printf '%s' '{"input": [{"role": "user", "content": "hi"}, {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}, {"type": "function_call_output", "call_id": "c", "output": "x"}], "tools": [{"type": "function", "name": "f"}], "instructions": "s"}' >"$corpus/responses.json" ;;
    reply_parser)
      corpus=$(seed "$name")
      printf '%s' $'\x04<think>hm</think>\n\nok <tool_call>\n{"name": "f", "arguments": {"a": [1, "}"]}}\n</tool_call>' >"$corpus/hermes"
      printf '%s' $'\x01[TOOL_CALLS][{"name": "f", "arguments": {}, "id": "abcdefghi"}, {"name": "g", "arguments": {"x": 1}, "id": "123456789"}]' >"$corpus/mistral"
      printf '%s' $'\x02{"name": "f", "parameters": {"a": 1}}' >"$corpus/llama" ;;
    gbnf) corpus=$(seed "$name" "$data"/grammars/*.gbnf) ;;
    json_schema)
      corpus=$(seed "$name" "$data"/schemas/*.json)
      # Open objects: literal-prefix and disjoint patternProperties (too
      # open for the structured-output suite's random models).
      printf '%s' '{"type": "object", "properties": {"icons": {"type": "object", "properties": {"P": {"type": "object"}}, "patternProperties": {"^/": {"type": "string"}, "^[^/]": {"type": "object", "patternProperties": {"^/": {"type": "string"}}}}}}, "patternProperties": {"^x-": {"type": "integer"}, "^x-y": {"minimum": 3}}}' >"$corpus/pattern_keys.json"
      # MaskBench's keywords: merged allOf, counts of members, draft 4
      # tuples and exclusive bounds, number bounds, dependencies, type beside
      # oneOf, formats, lengths with a pattern, annotations and vendor
      # keywords ignored, and what is refused (not, if, uniqueItems).
      printf '%s' '{"id": "x", "x-vendor": 1, "allOf": [{"type": "object", "properties": {"a": {"type": "integer", "minimum": 0, "exclusiveMaximum": 9}}, "required": ["a"]}, {"properties": {"b": {"type": "number", "minimum": -2, "maximum": 3, "multipleOf": 0.01}}}], "minProperties": 1, "maxProperties": 3, "dependencies": {"b": ["a"]}}' >"$corpus/allof_counts.json"
      printf '%s' '{"$schema": "http://json-schema.org/draft-04/schema#", "type": "array", "items": [{"type": "integer", "minimum": 2, "exclusiveMinimum": true}, {"type": "string", "format": "date-time"}, {"type": "string", "minLength": 1, "maxLength": 5}], "additionalItems": {"type": "string", "format": "uri"}, "minItems": 1, "maxItems": 4}' >"$corpus/tuple_formats.json"
      printf '%s' '{"type": "object", "oneOf": [{"properties": {"k": {"const": "a"}, "e": {"type": "string", "format": "email"}}, "required": ["k"]}, {"properties": {"k": {"const": "b"}, "h": {"type": "string", "format": "hostname"}, "v6": {"type": "string", "format": "ipv6"}}, "required": ["k"]}], "properties": {"s": {"type": "string", "minLength": 2, "maxLength": 8, "pattern": "^[a-z]+$"}}}' >"$corpus/oneof_type_formats.json"
      printf '%s' '{"type": "object", "properties": {"n": {"not": {"type": "string"}}, "i": {"if": {"minimum": 1}, "then": {"maximum": 3}}, "u": {"type": "array", "uniqueItems": true}}}' >"$corpus/refused.json" ;;
    *) corpus=$(seed "$name") ;;
  esac
  echo "-- $name: ${seconds}s, $(ls "$corpus" | wc -l) seeds" >"$work/$name.log"
  # -rss_limit_mb keeps a runaway allocation a finding rather than an OOM kill.
  "$fuzzer" "$corpus" -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=1048576 \
    -print_final_stats=1 -artifact_prefix="$work/$name-" >>"$work/$name.log" 2>&1 &
  pids+=($!)
  names+=("$name")
  [ ${#pids[@]} -lt "$jobs" ] || finish_batch
done
finish_batch
[ "$found" -eq 1 ] || { echo "no fuzzers found in $build/bin" >&2; exit 1; }
[ "$failed" -eq 0 ] || { echo "fuzzing found $failed failure(s); inputs under $work" >&2; exit 1; }
