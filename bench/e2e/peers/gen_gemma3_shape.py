#!/usr/bin/python3
"""A random-weight checkpoint with Gemma-3-4B's KV cache shape, for sizing.

34 layers, 8 heads and 4 KV heads of 256, a 1024-position window on five of
every six layers (sliding_window_pattern 6): what the KV cache holds is
Gemma-3-4B's exactly, at the context asked for (Gemma 3's own is 131072).
Everything else is small (hidden 256, ff 512, the gemma3-text fixture's
2000-token vocabulary), so it compiles in seconds: KV sizes do not depend
on it. Written by gen_gemma2.py's layer_shapes and write_random.

usage: gen_gemma3_shape.py OUT_DIR TOKENIZER_DIR CONTEXT  (numpy: Debian python3-numpy)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_gemma2 import layer_shapes, write_random  # noqa: E402

out, tok, context = sys.argv[1], sys.argv[2], int(sys.argv[3])
H, L, NH, KV, HD, FF, V = 256, 34, 8, 4, 256, 512, 2000
config = {
    "architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text",
    "bos_token_id": 2, "eos_token_id": 1, "head_dim": HD,
    "hidden_activation": "gelu_pytorch_tanh", "hidden_size": H,
    "intermediate_size": FF, "max_position_embeddings": context,
    "num_attention_heads": NH, "num_hidden_layers": L,
    "num_key_value_heads": KV, "query_pre_attn_scalar": HD,
    "rms_norm_eps": 1e-06, "rope_theta": 1000000.0,
    "rope_local_base_freq": 10000.0, "sliding_window": 1024,
    "sliding_window_pattern": 6, "torch_dtype": "float32", "vocab_size": V,
}
write_random(out, config, tok,
             layer_shapes(H, L, NH, KV, HD, FF, V, qk_norm=True), 3)
