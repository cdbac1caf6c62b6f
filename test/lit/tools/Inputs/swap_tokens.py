"""Swaps the ids of two vocabulary entries of DIR/tokenizer.json: the same
vocabulary size, another tokenizer."""
import json
import sys

path = sys.argv[1] + "/tokenizer.json"
tok = json.load(open(path))
vocab = tok["model"]["vocab"]
a, b = sorted(vocab, key=vocab.get)[100:102]
vocab[a], vocab[b] = vocab[b], vocab[a]
json.dump(tok, open(path, "w"), ensure_ascii=False)
