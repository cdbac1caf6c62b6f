#!/usr/bin/python3
"""Trains llmc's bundled demo model: a small Llama on Debian's fortune files.

Writes a Hugging Face checkpoint (config.json, model.safetensors,
tokenizer.model, tokenizer_config.json, ...) and the held-out text and
perplexity that llmc's end-to-end test compares against. See README.md in
this folder for the exact command, the data and the measured results.

Needs: python3-torch python3-sentencepiece sentencepiece fortunes fortunes-zh
(and libopenblas0-pthread: with Debian's reference BLAS, torch is ~40x slower).
"""

import argparse
import json
import math
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import time

import sentencepiece as spm
import torch
import torch.nn as nn
import torch.nn.functional as F

FORTUNE_DIR = "/usr/share/games/fortunes"
ZH_FILES = ["chinese", "tang300", "song100"]
POEM_FILES = {"tang300", "song100"}
POEM_PROMPT = "请写一首诗：\n"
ANSI = re.compile(r"\x1b\[[0-9;]*m")
OVERSTRIKE = re.compile(r".\x08")

# ---------------------------------------------------------------------------
# Data


def english_files():
    """The text files of Debian's `fortunes` package (not the .dat indexes)."""
    out = subprocess.run(["dpkg", "-L", "fortunes"], check=True,
                         capture_output=True, text=True).stdout.split()
    files = []
    for path in out:
        if not path.startswith(FORTUNE_DIR + "/"):
            continue
        if path.endswith(".dat") or path.endswith(".u8"):
            continue
        if os.path.isfile(path) and not os.path.islink(path):
            files.append(os.path.basename(path))
    return sorted(files)


def read_fortunes(name):
    with open(os.path.join(FORTUNE_DIR, name), "rb") as f:
        text = f.read().decode("utf-8", errors="replace")
    text = OVERSTRIKE.sub("", ANSI.sub("", text))
    docs = []
    for raw in re.split(r"\n%\n", text):
        lines = [l.rstrip() for l in raw.strip("\n").split("\n")]
        doc = "\n".join(lines).strip("\n")
        if not doc.strip() or doc.strip() == "%":
            continue
        if name in POEM_FILES:
            doc = POEM_PROMPT + doc
        docs.append(doc)
    return docs


def load_corpus(heldout_fraction, seed):
    sources = [(n, "en") for n in english_files()] + [(n, "zh") for n in ZH_FILES]
    rng = random.Random(seed)
    train, heldout, stats = [], [], {}
    for name, _ in sources:
        docs = read_fortunes(name)
        stats[name] = len(docs)
        for d in docs:
            (heldout if rng.random() < heldout_fraction else train).append(d)
    return train, heldout, stats


# ---------------------------------------------------------------------------
# Tokenizer


def train_tokenizer(train_docs, out_dir, vocab_size):
    corpus = os.path.join(out_dir, "spm-corpus.txt")
    with open(corpus, "w", encoding="utf-8") as f:
        for d in train_docs:
            for line in d.split("\n"):
                if line.strip():
                    f.write(line + "\n")
    prefix = os.path.join(out_dir, "tokenizer")
    cmd = ["spm_train", f"--input={corpus}", f"--model_prefix={prefix}",
           f"--vocab_size={vocab_size}", "--model_type=bpe",
           "--character_coverage=0.9995", "--byte_fallback=true",
           "--normalization_rule_name=identity",
           "--remove_extra_whitespaces=false", "--split_digits=true",
           "--allow_whitespace_only_pieces=true",
           "--unk_id=0", "--bos_id=1", "--eos_id=2", "--pad_id=-1",
           "--num_threads=2", "--max_sentence_length=16384",
           "--minloglevel=1"]
    subprocess.run(cmd, check=True)
    os.remove(corpus)
    os.remove(prefix + ".vocab")
    return " ".join(cmd[:1] + [c for c in cmd[1:] if not c.startswith(("--input", "--model_prefix"))])


# ---------------------------------------------------------------------------
# Model: the Hugging Face Llama computation, written out.


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        var = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(var + self.eps))


def rotate_half(x):
    a, b = x.chunk(2, dim=-1)
    return torch.cat((-b, a), dim=-1)


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        d, hd = c["hidden_size"], c["head_dim"]
        self.nh, self.nkv, self.hd = c["num_attention_heads"], c["num_key_value_heads"], hd
        self.input_layernorm = RMSNorm(d, c["rms_norm_eps"])
        self.q_proj = nn.Linear(d, self.nh * hd, bias=False)
        self.k_proj = nn.Linear(d, self.nkv * hd, bias=False)
        self.v_proj = nn.Linear(d, self.nkv * hd, bias=False)
        self.o_proj = nn.Linear(self.nh * hd, d, bias=False)
        self.post_attention_layernorm = RMSNorm(d, c["rms_norm_eps"])
        i = c["intermediate_size"]
        self.gate_proj = nn.Linear(d, i, bias=False)
        self.up_proj = nn.Linear(d, i, bias=False)
        self.down_proj = nn.Linear(i, d, bias=False)

    def forward(self, x, cos, sin):
        B, T, _ = x.shape
        h = self.input_layernorm(x)
        q = self.q_proj(h).view(B, T, self.nh, self.hd).transpose(1, 2)
        k = self.k_proj(h).view(B, T, self.nkv, self.hd).transpose(1, 2)
        v = self.v_proj(h).view(B, T, self.nkv, self.hd).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        rep = self.nh // self.nkv
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)
        att = (q @ k.transpose(-1, -2)) / math.sqrt(self.hd)
        mask = torch.ones(T, T, dtype=torch.bool).triu(1)
        att = att.masked_fill(mask, float("-inf")).softmax(-1)
        a = att @ v
        x = x + self.o_proj(a.transpose(1, 2).reshape(B, T, -1))
        h = self.post_attention_layernorm(x)
        return x + self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h))


class Llama(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.embed_tokens = nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.layers = nn.ModuleList(Block(c) for _ in range(c["num_hidden_layers"]))
        self.norm = RMSNorm(c["hidden_size"], c["rms_norm_eps"])
        hd = c["head_dim"]
        inv = 1.0 / (c["rope_theta"] ** (torch.arange(0, hd, 2, dtype=torch.int64).float() / hd))
        t = torch.arange(c["max_position_embeddings"]).float()
        freqs = torch.outer(t, inv)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos", emb.cos(), persistent=False)
        self.register_buffer("sin", emb.sin(), persistent=False)
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)
        scale = 0.02 / math.sqrt(2 * c["num_hidden_layers"])
        for b in self.layers:
            nn.init.normal_(b.o_proj.weight, std=scale)
            nn.init.normal_(b.down_proj.weight, std=scale)

    def forward(self, ids):
        T = ids.shape[1]
        cos, sin = self.cos[:T], self.sin[:T]
        x = self.embed_tokens(ids)
        for b in self.layers:
            x = b(x, cos, sin)
        # Tied embeddings: the LM head is the embedding matrix.
        return self.norm(x) @ self.embed_tokens.weight.t()


# ---------------------------------------------------------------------------
# Perplexity, exactly as `llmc perplexity` computes it: the file is one text,
# encoded without special tokens and cut into windows of ctx-1 tokens; each
# window is scored after a BOS, every token of it predicted from its prefix.


def perplexity(model, ids, ctx, bos):
    model.eval()
    nll, count = 0.0, 0
    with torch.no_grad():
        for start in range(0, len(ids), ctx - 1):
            window = ids[start:start + ctx - 1]
            x = torch.tensor([[bos] + window])
            logits = model(x)[0, :-1].double()
            lp = torch.log_softmax(logits, dim=-1)
            tgt = torch.tensor(window)
            nll -= lp[torch.arange(len(window)), tgt].sum().item()
            count += len(window)
    model.train()
    return math.exp(nll / count), count


# ---------------------------------------------------------------------------
# Checkpoint


def write_safetensors(path, tensors):
    header, offset, blobs = {}, 0, []
    for name in sorted(tensors):
        t = tensors[name].detach().contiguous().float()
        data = t.numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "{% if message['role'] == 'user' %}{{ message['content'] + '\\n' }}"
    "{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token + bos_token }}"
    "{% endif %}{% endfor %}")


def save_checkpoint(model, c, out):
    state = model.state_dict()
    tensors = {}
    for k, v in state.items():
        name = k
        if k.startswith("layers."):
            idx, rest = k[len("layers."):].split(".", 1)
            group = "self_attn" if rest.split(".")[0] in ("q_proj", "k_proj", "v_proj", "o_proj") else \
                "mlp" if rest.split(".")[0] in ("gate_proj", "up_proj", "down_proj") else None
            name = f"model.layers.{idx}." + (f"{group}.{rest}" if group else rest)
        else:
            name = "model." + k
        tensors[name] = v
    write_safetensors(os.path.join(out, "model.safetensors"), tensors)
    config = {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama",
        "attention_bias": False, "attention_dropout": 0.0, "mlp_bias": False,
        "bos_token_id": 1, "eos_token_id": 2, "hidden_act": "silu",
        "initializer_range": 0.02, "pretraining_tp": 1, "rope_scaling": None,
        "tie_word_embeddings": True, "torch_dtype": "float32",
        "transformers_version": "4.46.3", "use_cache": True,
        **{k: c[k] for k in ("hidden_size", "intermediate_size", "num_hidden_layers",
                             "num_attention_heads", "num_key_value_heads", "head_dim",
                             "max_position_embeddings", "rms_norm_eps", "rope_theta",
                             "vocab_size")},
    }
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=2, sort_keys=True)
        f.write("\n")
    with open(os.path.join(out, "generation_config.json"), "w") as f:
        json.dump({"bos_token_id": 1, "eos_token_id": 2}, f, indent=2)
        f.write("\n")
    with open(os.path.join(out, "tokenizer_config.json"), "w") as f:
        json.dump({"tokenizer_class": "LlamaTokenizer", "add_bos_token": True,
                   "add_eos_token": False, "bos_token": "<s>", "eos_token": "</s>",
                   "unk_token": "<unk>", "pad_token": None, "legacy": True,
                   "model_max_length": c["max_position_embeddings"],
                   "clean_up_tokenization_spaces": False,
                   "chat_template": CHAT_TEMPLATE}, f, indent=2, ensure_ascii=False)
        f.write("\n")
    with open(os.path.join(out, "special_tokens_map.json"), "w") as f:
        json.dump({"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}, f, indent=2)
        f.write("\n")


# ---------------------------------------------------------------------------


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                                 "test", "data", "models", "fortune-llama"))
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--vocab", type=int, default=6000)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--kv-heads", type=int, default=2)
    p.add_argument("--intermediate", type=int, default=688)
    p.add_argument("--seq", type=int, default=256)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--heldout-fraction", type=float, default=0.01)
    p.add_argument("--eval-tokens", type=int, default=4096,
                   help="size of heldout.txt, the held-out text llmc's test scores")
    p.add_argument("--time-only", type=int, default=0, help="time N steps and exit")
    p.add_argument("--tokenizer-from", default="",
                   help="reuse this checkpoint's tokenizer.model instead of training one "
                        "(a draft model must share its target's tokenizer)")
    a = p.parse_args()

    torch.manual_seed(a.seed)
    random.seed(a.seed)
    torch.set_num_threads(a.threads)
    os.makedirs(a.out, exist_ok=True)
    t0 = time.time()

    train_docs, held_docs, stats = load_corpus(a.heldout_fraction, a.seed)
    print(f"documents: {len(train_docs)} train, {len(held_docs)} held out", flush=True)
    if a.tokenizer_from:
        shutil.copy(os.path.join(a.tokenizer_from, "tokenizer.model"), a.out)
        spm_cmd = "copied from " + a.tokenizer_from
    else:
        spm_cmd = train_tokenizer(train_docs, a.out, a.vocab)
    sp = spm.SentencePieceProcessor(model_file=os.path.join(a.out, "tokenizer.model"))
    bos, eos = sp.bos_id(), sp.eos_id()

    def stream(docs):
        ids = []
        for d in docs:
            ids += [bos] + sp.encode(d) + [eos]
        return ids

    train_ids = torch.tensor(stream(train_docs))
    held_ids = torch.tensor(stream(held_docs))
    print(f"tokens: {len(train_ids)} train, {len(held_ids)} held out", flush=True)

    # heldout.txt: whole held-out documents, separated by blank lines, until
    # about eval_tokens tokens.
    chosen, n = [], 0
    for d in held_docs:
        if n >= a.eval_tokens:
            break
        chosen.append(d)
        n += len(sp.encode(d)) + 1
    heldout_text = "\n\n".join(chosen) + "\n"
    with open(os.path.join(a.out, "heldout.txt"), "w", encoding="utf-8") as f:
        f.write(heldout_text)

    c = {"vocab_size": sp.get_piece_size(), "hidden_size": a.hidden,
         "intermediate_size": a.intermediate, "num_hidden_layers": a.layers,
         "num_attention_heads": a.heads, "num_key_value_heads": a.kv_heads,
         "head_dim": a.hidden // a.heads, "max_position_embeddings": 2 * a.seq,
         "rms_norm_eps": 1e-5, "rope_theta": 10000.0}
    model = Llama(c)
    nparams = sum(p.numel() for p in model.parameters())
    print(f"parameters: {nparams}", flush=True)

    decay = [p for n_, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n_, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=a.lr, betas=(0.9, 0.95))
    warmup = max(1, a.steps // 30)

    def lr_at(step):
        if step < warmup:
            return a.lr * (step + 1) / warmup
        prog = (step - warmup) / max(1, a.steps - warmup)
        return a.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * prog)))

    gen = torch.Generator().manual_seed(a.seed)
    span = a.seq + 1

    def batch(ids):
        starts = torch.randint(0, len(ids) - span, (a.batch,), generator=gen)
        x = torch.stack([ids[s:s + span] for s in starts.tolist()])
        return x[:, :-1], x[:, 1:]

    def heldout_loss():
        model.eval()
        tot, cnt = 0.0, 0
        with torch.no_grad():
            for s in range(0, len(held_ids) - span, a.seq):
                x = held_ids[s:s + span].unsqueeze(0)
                logits = model(x[:, :-1])
                tot += F.cross_entropy(logits[0], x[0, 1:], reduction="sum").item()
                cnt += a.seq
        model.train()
        return tot / cnt

    train_start = time.time()
    steps = a.time_only or a.steps
    ema = None
    for step in range(steps):
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        x, y = batch(train_ids)
        loss = F.cross_entropy(model(x).view(-1, c["vocab_size"]), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        ema = loss.item() if ema is None else 0.98 * ema + 0.02 * loss.item()
        if step % 100 == 0 or step == steps - 1:
            el = time.time() - train_start
            print(f"step {step} loss {loss.item():.4f} ema {ema:.4f} "
                  f"lr {lr_at(step):.2e} {el:.0f}s ({(step + 1) * a.batch * a.seq / el:.0f} tok/s)",
                  flush=True)
    train_seconds = time.time() - train_start
    if a.time_only:
        return

    # Final train loss over a fixed sample of windows, same measure as held-out.
    model.eval()
    with torch.no_grad():
        g2 = torch.Generator().manual_seed(a.seed + 1)
        starts = torch.randint(0, len(train_ids) - span, (64,), generator=g2).tolist()
        tl = sum(F.cross_entropy(model(train_ids[s:s + a.seq].unsqueeze(0))[0],
                                 train_ids[s + 1:s + span]).item() for s in starts) / len(starts)
    hl = heldout_loss()
    eval_ids = sp.encode(heldout_text)
    ppl = {}
    for ctx in (128, 256):
        ppl[ctx], scored = perplexity(model, eval_ids, ctx, bos)
    save_checkpoint(model, c, a.out)

    result = {
        "seed": a.seed, "parameters": nparams, "steps": a.steps,
        "batch": a.batch, "seq": a.seq, "lr": a.lr,
        "train_tokens": len(train_ids), "heldout_tokens": len(held_ids),
        "documents": {"train": len(train_docs), "heldout": len(held_docs)},
        "files": stats, "spm_train": spm_cmd,
        "train_seconds": round(train_seconds, 1), "total_seconds": round(time.time() - t0, 1),
        "final_train_loss": round(tl, 4), "final_heldout_loss": round(hl, 4),
        "heldout_txt": {"tokens": len(eval_ids),
                        "perplexity": {str(k): v for k, v in ppl.items()}},
        "torch": torch.__version__, "threads": a.threads,
        "command": " ".join([os.path.basename(sys.argv[0])] + sys.argv[1:]),
    }
    with open(os.path.join(a.out, "training.json"), "w") as f:
        json.dump(result, f, indent=2, ensure_ascii=False)
        f.write("\n")
    print(json.dumps(result, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
