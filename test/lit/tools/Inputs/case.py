#!/usr/bin/env python3
"""Renders case N of a chat-template fixture with `llmc chat-template`:
writes OUT.expected (Hugging Face's text) and OUT.out (llmc's), for diff.

usage: case.py TEMPLATE CASES_JSON N OUT
"""
import json
import subprocess
import sys

template, cases, index, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
doc = json.load(open(cases, encoding="utf-8"))
case = doc["cases"][index]
json.dump(case["messages"], open(out + ".messages.json", "w", encoding="utf-8"), ensure_ascii=False)
flags = []
if case.get("add_generation_prompt"):
    flags.append("--add-generation-prompt")
extra = case.get("extra_context", {})
for key in ("bos_token", "eos_token"):
    value = extra.get(key, doc.get(key))
    if value is not None:
        flags += ["--" + key.replace("_", "-"), value]
for key, value in extra.items():
    if key not in ("bos_token", "eos_token"):
        flags += ["--var", key + "=" + json.dumps(value)]
if "tools" in case:
    json.dump(case["tools"], open(out + ".tools.json", "w", encoding="utf-8"), ensure_ascii=False)
    flags += ["--tools", out + ".tools.json"]
open(out + ".expected", "w", encoding="utf-8", newline="").write(case["expected"])
cmd = ["llmc", "chat-template", template, "--messages", out + ".messages.json",
       "--now", "2024-07-26T00:00:00"] + flags
with open(out + ".out", "wb") as f:
    sys.exit(subprocess.run(cmd, stdout=f).returncode)
