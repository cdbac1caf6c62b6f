#!/usr/bin/python3
"""Makes a bundled-model-sized mixture of experts from the trained demo model.

test/data/models/fortune-llama's dense SwiGLU MLP becomes, in every layer, 4
experts (top 2, renormalised: MixtralForCausalLM), each a copy of the MLP
with every weight multiplied by (1 + 0.1 * N(0, 1)), and a random router
(N(0, 1 / hidden)). "Sparse upcycling" without the fine-tuning: the experts
differ, so routing matters to every logit, but each is close to the trained
MLP, so the model still writes fortune-shaped text and a router near-tie
(which any two implementations may break differently) moves the logits a
little rather than to another model. What the llama.cpp comparison of MoE
GGUFs runs on (test/data/gguf-llamacpp/make.sh); nothing in the build or the
tests calls this.

  /usr/bin/python3 tools/demo-model/upcycle_moe.py [OUT_DIR]   (default /tmp/fortune-moe)
"""
import json
import os
import shutil
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, '..', '..', 'test', 'data', 'models', 'fortune-llama')
EXPERTS, TOP_K, NOISE, SEED = 4, 2, 0.1, 1234


def read(path):
    raw = open(path, 'rb').read()
    n = struct.unpack('<Q', raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    out = {}
    for k, v in header.items():
        if k != '__metadata__':
            a, b = v['data_offsets']
            out[k] = np.frombuffer(raw[8 + n + a:8 + n + b], dtype=np.float32).reshape(v['shape'])
    return out


def write(path, tensors):
    header, offset, blobs = {'__metadata__': {'format': 'pt'}}, 0, []
    for name in sorted(tensors):
        data = np.ascontiguousarray(tensors[name], dtype=np.float32).tobytes()
        header[name] = {'dtype': 'F32', 'shape': list(tensors[name].shape),
                        'data_offsets': [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    h = json.dumps(header, separators=(',', ':')).encode()
    h += b' ' * (-len(h) % 8)
    with open(path, 'wb') as f:
        f.write(struct.pack('<Q', len(h)) + h + b''.join(blobs))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else '/tmp/fortune-moe'
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(SEED)
    dense = read(os.path.join(SRC, 'model.safetensors'))
    config = json.load(open(os.path.join(SRC, 'config.json')))
    hidden, layers = config['hidden_size'], config['num_hidden_layers']
    moe = {}
    for name, w in dense.items():
        if '.mlp.' not in name:
            moe[name] = w
    for layer in range(layers):
        p = f'model.layers.{layer}.'
        moe[p + 'block_sparse_moe.gate.weight'] = rng.normal(
            0, 1 / np.sqrt(hidden), (EXPERTS, hidden)).astype(np.float32)
        for e in range(EXPERTS):
            for hf, mix in (('gate_proj', 'w1'), ('up_proj', 'w3'), ('down_proj', 'w2')):
                w = dense[p + 'mlp.' + hf + '.weight']
                moe[f'{p}block_sparse_moe.experts.{e}.{mix}.weight'] = (
                    w * (1 + NOISE * rng.standard_normal(w.shape))).astype(np.float32)
    write(os.path.join(out, 'model.safetensors'), moe)
    config.update({'architectures': ['MixtralForCausalLM'], 'model_type': 'mixtral',
                   'num_local_experts': EXPERTS, 'num_experts_per_tok': TOP_K,
                   'output_router_logits': False, 'router_aux_loss_coef': 0.02,
                   'router_jitter_noise': 0.0, 'sliding_window': None})
    config.pop('mlp_bias', None)
    config.pop('pretraining_tp', None)
    json.dump(config, open(os.path.join(out, 'config.json'), 'w'), indent=2, sort_keys=True)
    for f in ('generation_config.json', 'special_tokens_map.json', 'tokenizer.model',
              'tokenizer_config.json'):
        shutil.copy(os.path.join(SRC, f), os.path.join(out, f))
    n = sum(w.size for w in moe.values())
    print(f'{out}: MixtralForCausalLM, {EXPERTS} experts, top {TOP_K}, {n:,} parameters')


if __name__ == '__main__':
    main()
