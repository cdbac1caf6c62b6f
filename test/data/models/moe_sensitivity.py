#!/usr/bin/env python3
"""How sensitive the MoE reference checkpoints' routing is, measured with an
implementation independent of llmc (numpy, float32; its logits match
reference/ to 3e-6).

A router is a discontinuity: a token whose k-th and (k+1)-th expert
probabilities are within a perturbation of each other swaps an expert, and
its output changes by O(1), not O(perturbation). The random-weight
checkpoints have such near-ties (top-k margins down to 1e-4), so a bf16 or
quantized run can legitimately differ from the f32 reference by more than
the dense models' bounds. This script records, per checkpoint, what an exact
implementation of each perturbation does, so the tests can tell a routing
flip from a bug: llmc must land where this simulation lands.

Writes <model>/reference/moe_sensitivity.json for mixtral-moe and qwen3-moe:
  prompts.<name>.min_router_margin       smallest (k-th - (k+1)-th) router
                                         probability over tokens and layers
  prompts.<name>.bf16_weights            every matrix but the router rounded
                                         to bf16 (RNE; llmc keeps routers in
                                         f32) and K/V in bf16 (a bf16 plan's
                                         cache), float32 compute: routing_changes
                                         (tokens x layers whose experts
                                         differ) and last_logits_max_diff
                                         against reference/
  len40.kv.<int8|fp8>                    K/V rounded as llmc's cache stores
                                         them (a scale per token and kv head:
                                         max|x|/127, round half even; fp8
                                         e4m3 of x / (max|x|/448)):
                                         routing_changes, top1_agreement and
                                         max_diff over the 40 rows, against
                                         the f32 run
  len40.weights.<int8|int4>              weights quantized as llmc does
                                         (int8 per row, int4 per group of 32
                                         with weights::symmetricScale's
                                         amax / 7, int8 per row where 32 does
                                         not divide K; the embedding table
                                         int8 per row; the router f32): the
                                         same measures

Run from the repository root: python3 test/data/models/moe_sensitivity.py
"""
import json
import os
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def load(path):
    raw = open(path, 'rb').read()
    n = struct.unpack('<Q', raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    out = {}
    for k, v in header.items():
        if k == '__metadata__':
            continue
        a, b = v['data_offsets']
        out[k] = np.frombuffer(raw[8 + n + a:8 + n + b], dtype=np.float32).reshape(v['shape']).copy()
    return out


def bf16(w):
    u = w.astype(np.float32).view(np.uint32)
    return ((u + 0x7fff + ((u >> 16) & 1)) & 0xffff0000).astype(np.uint32).view(np.float32)


def quantize(w, bits):
    rows, cols = w.shape
    group = cols if bits == 8 or cols % 32 else 32  # int4 falls back to int8 per row
    bits = 8 if group == cols else bits
    g = w.reshape(rows, cols // group, group)
    scale = np.abs(g).max(-1, keepdims=True) / (127.0 if bits == 8 else 7.0)
    scale = np.where(scale == 0, 1.0, scale)
    q = np.clip(np.round(g / scale), -127 if bits == 8 else -8, 127 if bits == 8 else 7)
    return (q * scale).reshape(rows, cols).astype(np.float32)


def e4m3(x):
    a = np.abs(x)
    e = np.floor(np.log2(np.maximum(a, 1e-30)))
    step = np.where(a >= 2.0 ** -6, 2.0 ** (e - 3), 2.0 ** -9)
    return np.sign(x) * np.minimum(np.round(a / step) * step, 448.0)


def kv_round(kind):
    def f(t):  # [T, kv heads, head_dim]
        amax = np.abs(t).max(-1, keepdims=True)
        scale = amax / (127.0 if kind == 'int8' else 448.0)
        safe = np.where(scale == 0, 1.0, scale)
        q = np.round(t / safe) if kind == 'int8' else e4m3(t / safe)
        return (q * scale).astype(np.float32)
    return f


def rms(x, w, eps):
    return (x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w).astype(np.float32)


def forward(model, ids, weights=None, kv=None):
    """Logits [T, vocab] and the experts chosen [layers][T, k] and router
    margins [layers][T]."""
    cfg = json.load(open(os.path.join(model, 'config.json')))
    W = load(os.path.join(model, 'model.safetensors'))
    mixtral = cfg['architectures'][0] == 'MixtralForCausalLM'
    if weights:  # every matrix but the router, as llmc converts them
        W = {n: (weights(v, 'embed' in n) if v.ndim == 2 and not n.endswith('gate.weight') else v)
             for n, v in W.items()}
    H, nh, nkv = cfg['hidden_size'], cfg['num_attention_heads'], cfg['num_key_value_heads']
    hd = cfg.get('head_dim') or H // nh
    eps, theta = cfg['rms_norm_eps'], cfg['rope_theta']
    k = cfg['num_experts_per_tok']
    norm = mixtral or cfg.get('norm_topk_prob', False)
    T = len(ids)
    x = W['model.embed_tokens.weight'][ids]
    inv = 1.0 / theta ** (np.arange(0, hd, 2) / hd)
    ang = np.arange(T)[:, None] * inv[None]
    cos, sin = np.cos(ang)[:, None].astype(np.float32), np.sin(ang)[:, None].astype(np.float32)

    def rope(v):
        a, b = v[..., :hd // 2], v[..., hd // 2:]
        return np.concatenate([a * cos - b * sin, b * cos + a * sin], -1)

    chosen, margins = [], []
    for layer in range(cfg['num_hidden_layers']):
        p = f'model.layers.{layer}.'
        n = rms(x, W[p + 'input_layernorm.weight'], eps)
        q = (n @ W[p + 'self_attn.q_proj.weight'].T).reshape(T, nh, hd)
        kk = (n @ W[p + 'self_attn.k_proj.weight'].T).reshape(T, nkv, hd)
        v = (n @ W[p + 'self_attn.v_proj.weight'].T).reshape(T, nkv, hd)
        if not mixtral:
            q = rms(q, W[p + 'self_attn.q_norm.weight'], eps)
            kk = rms(kk, W[p + 'self_attn.k_norm.weight'], eps)
        q, kk = rope(q), rope(kk)
        if kv:
            kk, v = kv(kk), kv(v)
        kk, v = np.repeat(kk, nh // nkv, 1), np.repeat(v, nh // nkv, 1)
        s = np.einsum('thd,shd->hts', q, kk) / np.float32(np.sqrt(hd))
        s = s + np.triu(np.full((T, T), -np.inf, dtype=np.float32), 1)
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        x = x + np.einsum('hts,shd->thd', s, v).reshape(T, nh * hd) @ W[p + 'self_attn.o_proj.weight'].T
        m = rms(x, W[p + 'post_attention_layernorm.weight'], eps)
        mp = p + ('block_sparse_moe.' if mixtral else 'mlp.')
        logits = m @ W[mp + 'gate.weight'].T
        prob = np.exp(logits - logits.max(-1, keepdims=True))
        prob /= prob.sum(-1, keepdims=True)
        top = np.argsort(-prob, -1, kind='stable')[:, :k]
        ranked = -np.sort(-prob, -1)
        margins.append(ranked[:, k - 1] - ranked[:, k])
        chosen.append(top)
        w = np.take_along_axis(prob, top, -1)
        if norm:
            w = w / w.sum(-1, keepdims=True)
        y = np.zeros_like(x)
        names = ('w1', 'w3', 'w2') if mixtral else ('gate_proj', 'up_proj', 'down_proj')
        for t in range(T):
            for j in range(k):
                g, u, d = (W[f'{mp}experts.{top[t, j]}.{nm}.weight'] for nm in names)
                a = m[t] @ g.T
                y[t] += w[t, j] * ((a / (1 + np.exp(-a)) * (m[t] @ u.T)) @ d.T)
        x = x + y
    x = rms(x, W['model.norm.weight'], eps)
    return x @ W['lm_head.weight'].T, chosen, margins


def changes(a, b):
    return int(sum((x != y).any(-1).sum() for x, y in zip(a, b)))


def main():
    for name in ('mixtral-moe', 'qwen3-moe'):
        model = os.path.join(HERE, name)
        ref = json.load(open(os.path.join(model, 'reference', 'reference.json')))
        out = {'made_by': 'test/data/models/moe_sensitivity.py (numpy float32, independent of llmc)',
               'prompts': {}}
        for p in ref['prompts']:
            logits, chosen, margins = forward(model, p['input_ids'])
            expected = np.fromfile(os.path.join(model, 'reference', p['last_logits']['file']), dtype=np.float32)
            assert np.abs(logits[-1] - expected).max() < 2e-5, 'the simulation disagrees with reference/'
            bl, bc, _ = forward(model, p['input_ids'], weights=lambda w, embed: bf16(w), kv=bf16)
            out['prompts'][p['name']] = {
                'min_router_margin': float(min(m.min() for m in margins)),
                'bf16_weights': {'routing_changes': changes(chosen, bc),
                                 'last_logits_max_diff': float(np.abs(bl[-1] - expected).max())}}
            if 'all_logits' not in p:
                continue
            len40 = {'kv': {}, 'weights': {}}
            for group, kinds, kw in (('kv', ('int8', 'fp8'), lambda kd: {'kv': kv_round(kd)}),
                                     ('weights', ('int8', 'int4'),
                                      lambda kd: {'weights': lambda w, embed, b=8 if kd == 'int8' else 4:
                                                  quantize(w, 8 if embed else b)})):
                for kind in kinds:
                    ql, qc, _ = forward(model, p['input_ids'], **kw(kind))
                    len40[group][kind] = {
                        'routing_changes': changes(chosen, qc),
                        'top1_agreement': float((ql.argmax(-1) == logits.argmax(-1)).mean()),
                        'max_diff': float(np.abs(ql - logits).max())}
            out[p['name']] = len40
        path = os.path.join(model, 'reference', 'moe_sensitivity.json')
        json.dump(out, open(path, 'w'), indent=1, sort_keys=True)
        print(path)
        print(json.dumps(out, indent=1, sort_keys=True))


if __name__ == '__main__':
    sys.exit(main())
