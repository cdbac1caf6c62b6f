#!/usr/bin/python3
"""Writes reference outputs for the bundled demo model from its checkpoint.

Loads config.json + model.safetensors with train.py's PyTorch Llama (not
llmc's code), and writes reference/ in the format of ../shared/models
(last-position logits, all-position logits for one prompt, 16-token greedy
continuations recomputed without a cache), so that llmc's reference e2e
test covers the bundled model too. Also re-measures heldout.txt's perplexity
from the saved weights and checks it against training.json.
"""

import argparse
import json
import math
import os
import struct
import sys

import numpy as np
import sentencepiece as spm
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train  # noqa: E402


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        assert info["dtype"] == "F32", name
        b, e = info["data_offsets"]
        out[name] = torch.from_numpy(np.frombuffer(data[b:e], dtype=np.float32).copy()).view(info["shape"])
    return out


def load(model_dir):
    with open(os.path.join(model_dir, "config.json")) as f:
        c = json.load(f)
    model = train.Llama(c)
    state = {}
    for name, t in read_safetensors(os.path.join(model_dir, "model.safetensors")).items():
        k = name[len("model."):]
        k = k.replace(".self_attn.", ".").replace(".mlp.", ".")
        state[k] = t
    model.load_state_dict(state, strict=True)
    model.eval()
    return model, c


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("model_dir")
    a = p.parse_args()
    torch.set_num_threads(1)
    model, c = load(a.model_dir)
    sp = spm.SentencePieceProcessor(model_file=os.path.join(a.model_dir, "tokenizer.model"))
    bos = sp.bos_id()
    ref_dir = os.path.join(a.model_dir, "reference")
    os.makedirs(ref_dir, exist_ok=True)

    with open(os.path.join(a.model_dir, "heldout.txt"), encoding="utf-8") as f:
        heldout = f.read()
    prompts = [
        ("len1", [bos], "the BOS token id"),
        ("english", [bos] + sp.encode("A journey of a thousand miles"), "BOS + 'A journey of a thousand miles'"),
        ("chinese", [bos] + sp.encode(train.POEM_PROMPT), "BOS + the poem prompt"),
        ("len40", [bos] + sp.encode(heldout)[:39], "BOS + the first 39 tokens of heldout.txt"),
    ]
    entries = []
    with torch.no_grad():
        for name, ids, source in prompts:
            logits = model(torch.tensor([ids]))[0]
            last = logits[-1].numpy().astype(np.float32)
            last.tofile(os.path.join(ref_dir, f"{name}.last_logits.f32.bin"))
            e = {"name": name, "input_ids": ids, "source": source,
                 "last_logits": {"file": f"{name}.last_logits.f32.bin", "dtype": "float32",
                                 "shape": [c["vocab_size"]]},
                 "argmax_last": int(last.argmax())}
            if name == "len40":
                logits.numpy().astype(np.float32).tofile(os.path.join(ref_dir, f"{name}.all_logits.f32.bin"))
                e["all_logits"] = {"file": f"{name}.all_logits.f32.bin", "dtype": "float32",
                                   "shape": [len(ids), c["vocab_size"]]}
            seq, margin = list(ids), math.inf
            for _ in range(16):
                row = model(torch.tensor([seq]))[0, -1]
                top = torch.topk(row, 2).values
                margin = min(margin, (top[0] - top[1]).item())
                seq.append(int(row.argmax()))
            out = seq[len(ids):]
            e["greedy"] = {"max_new_tokens": 16, "output_ids": out, "output_ids_no_cache": out,
                           "min_top2_margin": round(margin, 6)}
            entries.append(e)

    ppl, scored = train.perplexity(model, sp.encode(heldout), 256, bos)
    with open(os.path.join(a.model_dir, "training.json")) as f:
        recorded = json.load(f)["heldout_txt"]["perplexity"]["256"]
    print(f"heldout.txt perplexity (ctx 256) from the saved weights: {ppl:.6f}; training.json: {recorded:.6f}")
    assert abs(ppl / recorded - 1) < 1e-4, "saved weights do not reproduce the recorded perplexity"

    ref = {"format_version": 1, "model": os.path.basename(os.path.abspath(a.model_dir)),
           "architecture": "LlamaForCausalLM", "vocab_size": c["vocab_size"],
           "weights_dtype": "float32", "compute_dtype": "float32",
           "tolerance": {"logits_max_abs_diff": 2e-4,
                         "applies_to": "float32 compute over the stored weights",
                         "greedy": "output_ids must match exactly"},
           "generated_by": "tools/demo-model/reference.py (train.py's PyTorch Llama)",
           "prompts": entries}
    with open(os.path.join(ref_dir, "reference.json"), "w") as f:
        json.dump(ref, f, indent=2, ensure_ascii=False)
        f.write("\n")
    print(f"wrote {ref_dir}")


if __name__ == "__main__":
    main()
