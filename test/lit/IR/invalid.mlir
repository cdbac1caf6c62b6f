// RUN: llmc-opt %s -split-input-file -verify-diagnostics

// One case per verifier branch of every llmc op and type; each message is
// checked verbatim.

func.func @case0() {
  // expected-error @+1 {{'llmc.param' op name must not be empty}}
  %0 = llmc.param "" : tensor<4xf32>
  return
}

// -----

func.func @case1() {
  // expected-error @+1 {{'llmc.param' op weights must have a static shape, got 'tensor<?x4xf32>'}}
  %0 = llmc.param "w" : tensor<?x4xf32>
  return
}

// -----

func.func @case2() {
  // expected-error @+1 {{'llmc.param' op transposed requires a 2-D weight (or stacked experts, each transposed), got rank 1}}
  %0 = llmc.param "w" {transposed} : tensor<4xf32>
  return
}

// -----

func.func @case3() {
  // expected-error @+1 {{'llmc.param' op rope_unpermute_heads (3) must divide the weight's rows (64)}}
  %0 = llmc.param "w" {rope_unpermute_heads = 3 : i64} : tensor<64x64xf32>
  return
}

// -----

func.func @case4(%t: tensor<8xf32>, %i: tensor<?xi32>) {
  // expected-error @+1 {{'llmc.embedding' op table must have rank 2, got rank 1}}
  %0 = llmc.embedding %t, %i : (tensor<8xf32>, tensor<?xi32>) -> tensor<?x8xf32>
  return
}

// -----

func.func @case5(%t: tensor<8x4xf32>, %i: tensor<?xi32>) {
  // expected-error @+1 {{'llmc.embedding' op result rank (1) must be ids rank + 1 (2)}}
  %0 = llmc.embedding %t, %i : (tensor<8x4xf32>, tensor<?xi32>) -> tensor<4xf32>
  return
}

// -----

func.func @case6(%t: tensor<8x4xf32>, %i: tensor<?xi32>) {
  // expected-error @+1 {{'llmc.embedding' op result last dimension (5) must match table width (4)}}
  %0 = llmc.embedding %t, %i : (tensor<8x4xf32>, tensor<?xi32>) -> tensor<?x5xf32>
  return
}

// -----

func.func @case7(%t: tensor<8x4xf32>, %i: tensor<?xi32>) {
  // expected-error @+1 {{'llmc.embedding' op result element type ('f16') must match table element type ('f32')}}
  %0 = llmc.embedding %t, %i : (tensor<8x4xf32>, tensor<?xi32>) -> tensor<?x4xf16>
  return
}

// -----

func.func @case8(%x: tensor<?x4xf32>, %w: tensor<4xf32>) {
  // expected-error @+1 {{'llmc.rms_norm' op eps must be positive, got 0}}
  %0 = llmc.rms_norm %x, %w {eps = 0.0 : f64} : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @case9(%x: tensor<?x4xf32>, %w: tensor<2x4xf32>) {
  // expected-error @+1 {{'llmc.rms_norm' op weight must have rank 1, got rank 2}}
  %0 = llmc.rms_norm %x, %w {eps = 1.0e-5 : f64} : (tensor<?x4xf32>, tensor<2x4xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @case10(%x: tensor<?x4xf32>, %w: tensor<5xf32>) {
  // expected-error @+1 {{'llmc.rms_norm' op input last dimension (4) must match weight size (5)}}
  %0 = llmc.rms_norm %x, %w {eps = 1.0e-5 : f64} : (tensor<?x4xf32>, tensor<5xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @case11(%x: tensor<?x4xf32>, %w: tensor<4xf32>) {
  // expected-error @+1 {{'llmc.rms_norm' op input rank (2) must match result rank (1)}}
  %0 = llmc.rms_norm %x, %w {eps = 1.0e-5 : f64} : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @case12(%x: tensor<3x4xf32>, %w: tensor<4xf32>) {
  // expected-error @+1 {{'llmc.rms_norm' op input dimension 0 (3) must match result dimension 0 (2)}}
  %0 = llmc.rms_norm %x, %w {eps = 1.0e-5 : f64} : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @case13(%x: tensor<f32>, %w: tensor<4xf32>) {
  // expected-error @+1 {{'llmc.rms_norm' op input must not be a scalar}}
  %0 = llmc.rms_norm %x, %w {eps = 1.0e-5 : f64} : (tensor<f32>, tensor<4xf32>) -> tensor<f32>
  return
}

// -----

func.func @case14(%x: tensor<?x4xf32>, %w: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'llmc.layer_norm' op eps must be positive, got -1}}
  %0 = llmc.layer_norm %x, %w, %b {eps = -1.0 : f64} : (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @case15(%x: tensor<?x4xf32>, %w: tensor<4xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'llmc.layer_norm' op bias dimension 0 (3) must match weight dimension 0 (4)}}
  %0 = llmc.layer_norm %x, %w, %b {eps = 1.0e-5 : f64} : (tensor<?x4xf32>, tensor<4xf32>, tensor<3xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @case16(%x: tensor<?x4xf32>, %w: tensor<4xf32>) {
  // expected-error @+1 {{'llmc.linear' op weight must have rank 2, got rank 1}}
  %0 = llmc.linear %x, %w : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @case17(%x: tensor<?x4xf32>, %w: tensor<8x5xf32>) {
  // expected-error @+1 {{'llmc.linear' op input features (4) must match weight input features (5)}}
  %0 = llmc.linear %x, %w : (tensor<?x4xf32>, tensor<8x5xf32>) -> tensor<?x8xf32>
  return
}

// -----

func.func @case18(%x: tensor<?x4xf32>, %w: tensor<8x4xf32>, %b: tensor<8x1xf32>) {
  // expected-error @+1 {{'llmc.linear' op bias must have rank 1, got rank 2}}
  %0 = llmc.linear %x, %w, %b : (tensor<?x4xf32>, tensor<8x4xf32>, tensor<8x1xf32>) -> tensor<?x8xf32>
  return
}

// -----

func.func @case19(%x: tensor<?x4xf32>, %w: tensor<8x4xf32>, %b: tensor<7xf32>) {
  // expected-error @+1 {{'llmc.linear' op bias size (7) must match weight output features (8)}}
  %0 = llmc.linear %x, %w, %b : (tensor<?x4xf32>, tensor<8x4xf32>, tensor<7xf32>) -> tensor<?x8xf32>
  return
}

// -----

func.func @case20(%x: tensor<?x4xf32>, %w: tensor<8x4xf32>) {
  // expected-error @+1 {{'llmc.linear' op result rank (1) must match input rank (2)}}
  %0 = llmc.linear %x, %w : (tensor<?x4xf32>, tensor<8x4xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @case21(%x: tensor<3x4xf32>, %w: tensor<8x4xf32>) {
  // expected-error @+1 {{'llmc.linear' op result dimension 0 (2) must match input dimension 0 (3)}}
  %0 = llmc.linear %x, %w : (tensor<3x4xf32>, tensor<8x4xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @case22(%x: tensor<?x4xf32>, %w: tensor<8x4xf32>) {
  // expected-error @+1 {{'llmc.linear' op result features (9) must match weight output features (8)}}
  %0 = llmc.linear %x, %w : (tensor<?x4xf32>, tensor<8x4xf32>) -> tensor<?x9xf32>
  return
}

// -----

func.func @case23(%x: tensor<f32>, %w: tensor<8x4xf32>) {
  // expected-error @+1 {{'llmc.linear' op input must have rank >= 1}}
  %0 = llmc.linear %x, %w : (tensor<f32>, tensor<8x4xf32>) -> tensor<f32>
  return
}

// -----

func.func @case24(%x: tensor<?x64xf32>, %p: tensor<?xi32>) {
  // expected-error @+1 {{'llmc.rope' op input must have rank 3, got rank 2}}
  %0 = llmc.rope %x, %p {theta = 1.0e4 : f64, rotary_dim = 16 : i64, style = "half"} : (tensor<?x64xf32>, tensor<?xi32>) -> tensor<?x64xf32>
  return
}

// -----

func.func @case25(%x: tensor<?x4x16xf32>, %p: tensor<?x1xi32>) {
  // expected-error @+1 {{'llmc.rope' op positions must have rank 1, got rank 2}}
  %0 = llmc.rope %x, %p {theta = 1.0e4 : f64, rotary_dim = 16 : i64, style = "half"} : (tensor<?x4x16xf32>, tensor<?x1xi32>) -> tensor<?x4x16xf32>
  return
}

// -----

func.func @case26(%x: tensor<?x4x16xf32>, %p: tensor<?xi32>) {
  // expected-error @+1 {{'llmc.rope' op input dimension 2 (16) must match result dimension 2 (8)}}
  %0 = llmc.rope %x, %p {theta = 1.0e4 : f64, rotary_dim = 16 : i64, style = "half"} : (tensor<?x4x16xf32>, tensor<?xi32>) -> tensor<?x4x8xf32>
  return
}

// -----

func.func @case27(%x: tensor<3x4x16xf32>, %p: tensor<2xi32>) {
  // expected-error @+1 {{'llmc.rope' op positions (2) must match tokens (3)}}
  %0 = llmc.rope %x, %p {theta = 1.0e4 : f64, rotary_dim = 16 : i64, style = "half"} : (tensor<3x4x16xf32>, tensor<2xi32>) -> tensor<3x4x16xf32>
  return
}

// -----

func.func @case28(%x: tensor<?x4x16xf32>, %p: tensor<?xi32>) {
  // expected-error @+1 {{'llmc.rope' op rotary_dim (15) must be even, positive and at most head_dim (16)}}
  %0 = llmc.rope %x, %p {theta = 1.0e4 : f64, rotary_dim = 15 : i64, style = "half"} : (tensor<?x4x16xf32>, tensor<?xi32>) -> tensor<?x4x16xf32>
  return
}

// -----

func.func @case29(%x: tensor<?x4x16xf32>, %p: tensor<?xi32>) {
  // expected-error @+1 {{'llmc.rope' op theta must be positive}}
  %0 = llmc.rope %x, %p {theta = 0.0 : f64, rotary_dim = 16 : i64, style = "half"} : (tensor<?x4x16xf32>, tensor<?xi32>) -> tensor<?x4x16xf32>
  return
}

// -----

func.func @case30(%x: tensor<?x4x16xf32>, %p: tensor<?xi32>) {
  // expected-error @+1 {{'llmc.rope' op style must be "half" or "interleaved", got "neox"}}
  %0 = llmc.rope %x, %p {theta = 1.0e4 : f64, rotary_dim = 16 : i64, style = "neox"} : (tensor<?x4x16xf32>, tensor<?xi32>) -> tensor<?x4x16xf32>
  return
}

// -----

func.func @case31(%x: tensor<?x4x16xf32>, %p: tensor<?xi32>) {
  // expected-error @+1 {{'llmc.rope' op scaling needs a string 'type'}}
  %0 = llmc.rope %x, %p {theta = 1.0e4 : f64, rotary_dim = 16 : i64, style = "half", scaling = {factor = 2.0 : f64}} : (tensor<?x4x16xf32>, tensor<?xi32>) -> tensor<?x4x16xf32>
  return
}

// -----

func.func @case32(%x: tensor<?x4x16xf32>, %p: tensor<?xi32>) {
  // expected-error @+1 {{'llmc.rope' op unsupported rope scaling type 'ntk' (supported: linear, dynamic, llama3, yarn, freq_factors, longrope)}}
  %0 = llmc.rope %x, %p {theta = 1.0e4 : f64, rotary_dim = 16 : i64, style = "half", scaling = {type = "ntk", factor = 2.0 : f64}} : (tensor<?x4x16xf32>, tensor<?xi32>) -> tensor<?x4x16xf32>
  return
}

// -----

func.func @case32b(%x: tensor<?x4x16xf32>, %p: tensor<?xi32>) {
  // expected-error @+1 {{'llmc.rope' op rope scaling 'longrope' needs 'long_factor': 8 positive values, one per rotary pair}}
  %0 = llmc.rope %x, %p {theta = 1.0e4 : f64, rotary_dim = 16 : i64, style = "half", scaling = {type = "longrope", factor = 2.0 : f64, original_max_position_embeddings = 4 : i64, attention_factor = 1.1 : f64, short_factor = array<f64: 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0>, long_factor = array<f64: 2.0>}} : (tensor<?x4x16xf32>, tensor<?xi32>) -> tensor<?x4x16xf32>
  return
}

// -----

func.func @case32c(%x: tensor<?x4x16xf32>, %p: tensor<?xi32>) {
  // expected-error @+1 {{'llmc.rope' op rope scaling 'longrope' needs a positive 'original_max_position_embeddings' (where the long factors take over)}}
  %0 = llmc.rope %x, %p {theta = 1.0e4 : f64, rotary_dim = 4 : i64, style = "half", scaling = {type = "longrope", factor = 2.0 : f64, attention_factor = 1.1 : f64, short_factor = array<f64: 1.0, 1.0>, long_factor = array<f64: 2.0, 2.0>}} : (tensor<?x4x16xf32>, tensor<?xi32>) -> tensor<?x4x16xf32>
  return
}

// -----

func.func @case33b(%x: tensor<?x4x16xf32>, %p: tensor<?xi32>) {
  // expected-error @+1 {{'llmc.rope' op rope scaling 'freq_factors' needs 'factors': 8 positive values, one per rotary pair}}
  %0 = llmc.rope %x, %p {theta = 1.0e4 : f64, rotary_dim = 16 : i64, style = "half", scaling = {type = "freq_factors", factor = 1.0 : f64, factors = array<f64: 1.0, 2.0>}} : (tensor<?x4x16xf32>, tensor<?xi32>) -> tensor<?x4x16xf32>
  return
}

// -----

func.func @case33(%x: tensor<?x4x16xf32>, %p: tensor<?xi32>) {
  // expected-error @+1 {{'llmc.rope' op rope scaling 'linear' needs a positive 'factor'}}
  %0 = llmc.rope %x, %p {theta = 1.0e4 : f64, rotary_dim = 16 : i64, style = "half", scaling = {type = "linear"}} : (tensor<?x4x16xf32>, tensor<?xi32>) -> tensor<?x4x16xf32>
  return
}

// -----

func.func @case34(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'llmc.matmul' op operands and result must have the same rank >= 2, got 1, 1 and 1}}
  %0 = llmc.matmul %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @case35(%a: tensor<2x3x4xf32>, %b: tensor<3x4x5xf32>) {
  // expected-error @+1 {{'llmc.matmul' op batch dimension 0 must agree}}
  %0 = llmc.matmul %a, %b : (tensor<2x3x4xf32>, tensor<3x4x5xf32>) -> tensor<2x3x5xf32>
  return
}

// -----

func.func @case36(%a: tensor<3x4xf32>, %b: tensor<5x6xf32>) {
  // expected-error @+1 {{'llmc.matmul' op contraction dimensions differ: lhs has 4, rhs has 5}}
  %0 = llmc.matmul %a, %b : (tensor<3x4xf32>, tensor<5x6xf32>) -> tensor<3x6xf32>
  return
}

// -----

func.func @case37(%a: tensor<3x4xf32>, %b: tensor<4x6xf32>) {
  // expected-error @+1 {{'llmc.matmul' op result must be [.., 3, 6]}}
  %0 = llmc.matmul %a, %b : (tensor<3x4xf32>, tensor<4x6xf32>) -> tensor<3x7xf32>
  return
}

// -----

func.func @case38(%x: tensor<4xf32>) {
  // expected-error @+1 {{'llmc.scale' op factor must be finite}}
  %0 = llmc.scale %x {factor = 0x7FF0000000000000 : f64} : tensor<4xf32>
  return
}

// -----

func.func @case39(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'llmc.softmax' op only the last axis is supported, got axis 0 of a rank-2 tensor}}
  %0 = llmc.softmax %x {axis = 0 : i64} : tensor<4x4xf32>
  return
}

// -----

func.func @case40(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'llmc.causal_mask' op scores must have rank 3, got rank 2}}
  %0 = llmc.causal_mask %x : tensor<4x4xf32>
  return
}

// -----

func.func @case41(%x: tensor<2x5x4xf32>) {
  // expected-error @+1 {{'llmc.causal_mask' op queries (5) must not outnumber keys (4)}}
  %0 = llmc.causal_mask %x : tensor<2x5x4xf32>
  return
}

// -----

func.func @case42(%x: tensor<2x?x?xf32>) {
  // expected-error @+1 {{'llmc.causal_mask' op window must be >= 0 (0 = no window), got -2}}
  %0 = llmc.causal_mask %x {window = -2 : i64} : tensor<2x?x?xf32>
  return
}

// -----

func.func @case43(%x: tensor<4xf32>) {
  // expected-error @+1 {{'llmc.gelu' op approximate must be "none" or "tanh", got "fast"}}
  %0 = llmc.gelu %x {approximate = "fast"} : tensor<4xf32>
  return
}

// -----

func.func @case44(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'llmc.reshape' op element type must not change}}
  %0 = llmc.reshape %x : (tensor<4x4xf32>) -> tensor<16xf16>
  return
}

// -----

func.func @case45(%x: tensor<?x64xf32>) {
  // expected-error @+1 {{'llmc.reshape' op at most one result dimension may be dynamic, got 2}}
  %0 = llmc.reshape %x : (tensor<?x64xf32>) -> tensor<?x?x16xf32>
  return
}

// -----

func.func @case46(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'llmc.reshape' op element count changes from 16 to 15}}
  %0 = llmc.reshape %x : (tensor<4x4xf32>) -> tensor<15xf32>
  return
}

// -----

func.func @case47(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'llmc.reshape' op element count 16 is not divisible by the static result dims (5)}}
  %0 = llmc.reshape %x : (tensor<4x4xf32>) -> tensor<?x5xf32>
  return
}

// -----

func.func @case48(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'llmc.transpose' op permutation size (1) must equal the rank (2)}}
  %0 = llmc.transpose %x {permutation = array<i64: 0>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @case49(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'llmc.transpose' op permutation must be a permutation of [0, 2)}}
  %0 = llmc.transpose %x {permutation = array<i64: 0, 0>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @case50(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'llmc.transpose' op result dimension 0 (3) must equal input dimension 1 (4)}}
  %0 = llmc.transpose %x {permutation = array<i64: 1, 0>} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return
}

// -----

func.func @case51(%x: tensor<?x2x16xf32>) {
  // expected-error @+1 {{'llmc.repeat_kv' op repeats must be >= 1, got 0}}
  %0 = llmc.repeat_kv %x {repeats = 0 : i64} : (tensor<?x2x16xf32>) -> tensor<?x2x16xf32>
  return
}

// -----

func.func @case52(%x: tensor<?x32xf32>) {
  // expected-error @+1 {{'llmc.repeat_kv' op input must have rank 3, got rank 2}}
  %0 = llmc.repeat_kv %x {repeats = 2 : i64} : (tensor<?x32xf32>) -> tensor<?x64xf32>
  return
}

// -----

func.func @case53(%x: tensor<?x2x16xf32>) {
  // expected-error @+1 {{'llmc.repeat_kv' op result heads (6) must be input heads (2) times repeats (2)}}
  %0 = llmc.repeat_kv %x {repeats = 2 : i64} : (tensor<?x2x16xf32>) -> tensor<?x6x16xf32>
  return
}

// -----

func.func @case54(%x: tensor<?x2x16xf32>) {
  // expected-error @+1 {{'llmc.repeat_kv' op tokens and head_dim must not change}}
  %0 = llmc.repeat_kv %x {repeats = 2 : i64} : (tensor<?x2x16xf32>) -> tensor<?x4x8xf32>
  return
}

// -----

func.func @case55(%x: tensor<?x4x4xf32>) {
  // expected-error @+1 {{'llmc.take_last' op input must have rank 2, got rank 3}}
  %0 = llmc.take_last %x : (tensor<?x4x4xf32>) -> tensor<1x4xf32>
  return
}

// -----

func.func @case56(%x: tensor<?x4xf32>, %i: tensor<?x1xi32>) {
  // expected-error @+1 {{'llmc.take_last' op indices must have rank 1, got rank 2}}
  %0 = llmc.take_last %x, %i : (tensor<?x4xf32>, tensor<?x1xi32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @case57(%x: tensor<?x4xf32>, %i: tensor<3xi32>) {
  // expected-error @+1 {{'llmc.take_last' op result rows (2) must match indices (3)}}
  %0 = llmc.take_last %x, %i : (tensor<?x4xf32>, tensor<3xi32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @case58(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{'llmc.take_last' op result must have one row without indices, got 2}}
  %0 = llmc.take_last %x : (tensor<?x4xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @case59(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{'llmc.take_last' op result last dimension (5) must match input width (4)}}
  %0 = llmc.take_last %x : (tensor<?x4xf32>) -> tensor<1x5xf32>
  return
}

// -----

func.func @case60(%q: tensor<?x8x16xf32>, %k: tensor<?x3x16xf32>, %v: tensor<?x3x16xf32>) {
  // expected-error @+1 {{'llmc.attention' op query heads (8) must be a multiple of kv heads (3)}}
  %0 = llmc.attention %q, %k, %v {causal, scale = 0.25 : f64} : (tensor<?x8x16xf32>, tensor<?x3x16xf32>, tensor<?x3x16xf32>) -> tensor<?x8x16xf32>
  return
}

// -----

func.func @case61(%q: tensor<?x128xf32>, %k: tensor<?x2x16xf32>, %v: tensor<?x2x16xf32>) {
  // expected-error @+1 {{'llmc.attention' op query must have rank 3, got rank 2}}
  %0 = llmc.attention %q, %k, %v {causal, scale = 0.25 : f64} : (tensor<?x128xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>) -> tensor<?x8x16xf32>
  return
}

// -----

func.func @case62(%q: tensor<?x8x16xf32>, %k: tensor<?x2x16xf32>, %v: tensor<?x4x16xf32>) {
  // expected-error @+1 {{'llmc.attention' op key heads (2) must match value heads (4)}}
  %0 = llmc.attention %q, %k, %v {causal, scale = 0.25 : f64} : (tensor<?x8x16xf32>, tensor<?x2x16xf32>, tensor<?x4x16xf32>) -> tensor<?x8x16xf32>
  return
}

// -----

func.func @case63(%q: tensor<?x8x16xf32>, %k: tensor<?x2x8xf32>, %v: tensor<?x2x16xf32>) {
  // expected-error @+1 {{'llmc.attention' op query head_dim (16) must match key head_dim (8)}}
  %0 = llmc.attention %q, %k, %v {causal, scale = 0.25 : f64} : (tensor<?x8x16xf32>, tensor<?x2x8xf32>, tensor<?x2x16xf32>) -> tensor<?x8x16xf32>
  return
}

// -----

func.func @case64(%q: tensor<?x8x16xf32>, %k: tensor<5x2x16xf32>, %v: tensor<6x2x16xf32>) {
  // expected-error @+1 {{'llmc.attention' op key and value must have the same length}}
  %0 = llmc.attention %q, %k, %v {causal, scale = 0.25 : f64} : (tensor<?x8x16xf32>, tensor<5x2x16xf32>, tensor<6x2x16xf32>) -> tensor<?x8x16xf32>
  return
}

// -----

func.func @case65(%q: tensor<?x8x16xf32>, %k: tensor<?x2x16xf32>, %v: tensor<?x2x16xf32>) {
  // expected-error @+1 {{'llmc.attention' op result must be [query tokens, query heads, value head_dim]}}
  %0 = llmc.attention %q, %k, %v {causal, scale = 0.25 : f64} : (tensor<?x8x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>) -> tensor<?x4x16xf32>
  return
}

// -----

func.func @case66(%q: tensor<?x8x16xf32>, %k: tensor<?x2x16xf32>, %v: tensor<?x2x16xf32>) {
  // expected-error @+1 {{'llmc.attention' op scale must be positive, got 0}}
  %0 = llmc.attention %q, %k, %v {causal, scale = 0.0 : f64} : (tensor<?x8x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>) -> tensor<?x8x16xf32>
  return
}

// -----

func.func @case67(%q: tensor<?x8x16xf32>, %k: tensor<?x2x16xf32>, %v: tensor<?x2x16xf32>) {
  // expected-error @+1 {{'llmc.attention' op a window requires causal attention}}
  %0 = llmc.attention %q, %k, %v {scale = 0.25 : f64, window = 4 : i64} : (tensor<?x8x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>) -> tensor<?x8x16xf32>
  return
}

// -----

func.func @case68(%q: tensor<?x8x16xf32>, %k: tensor<?x2x16xf32>, %v: tensor<?x2x16xf32>) {
  // expected-error @+1 {{'llmc.attention' op window must be >= 0 (0 = no window), got -1}}
  %0 = llmc.attention %q, %k, %v {causal, scale = 0.25 : f64, window = -1 : i64} : (tensor<?x8x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>) -> tensor<?x8x16xf32>
  return
}

// -----

// expected-error @+1 {{kv_cache layers must be positive, got 0}}
func.func @case69(%c: !llmc.kv_cache<layers = 0, kv_heads = 2, head_dim = 16, dtype = f32>) {
  return
}

// -----

// expected-error @+1 {{kv_cache kv_heads must be positive, got -1}}
func.func @case70(%c: !llmc.kv_cache<layers = 1, kv_heads = -1, head_dim = 16, dtype = f32>) {
  return
}

// -----

// expected-error @+1 {{kv_cache head_dim must be positive, got 0}}
func.func @case71(%c: !llmc.kv_cache<layers = 1, kv_heads = 1, head_dim = 0, dtype = f32>) {
  return
}

// -----

// expected-error @+1 {{kv_cache dtype must be f32, bf16, f16, i8 or f8E4M3FN, got 'i32'}}
func.func @case72(%c: !llmc.kv_cache<layers = 1, kv_heads = 1, head_dim = 16, dtype = i32>) {
  return
}

// -----

func.func @case73(%c: !llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>, %k: tensor<?x2x16xf32>, %v: tensor<?x2x16xf32>, %s: tensor<?xi32>) {
  // expected-error @+1 {{'llmc.kv_write' op layer 2 is out of range for a 2-layer cache}}
  %0 = llmc.kv_write %c, %k, %v, %s {layer = 2 : i64} : (!llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?xi32>) -> !llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>
  return
}

// -----

func.func @case74(%c: !llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>, %k: tensor<?x2x16xf32>, %v: tensor<?x2x16xf32>, %s: tensor<?xi32>) {
  // expected-error @+1 {{'llmc.kv_write' op result cache type must equal the input cache type}}
  %0 = llmc.kv_write %c, %k, %v, %s {layer = 0 : i64} : (!llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?xi32>) -> !llmc.kv_cache<layers = 3, kv_heads = 2, head_dim = 16, dtype = f32>
  return
}

// -----

func.func @case75(%c: !llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>, %k: tensor<?x4x16xf32>, %v: tensor<?x2x16xf32>, %s: tensor<?xi32>) {
  // expected-error @+1 {{'llmc.kv_write' op key heads (4) must match the cache's kv heads (2)}}
  %0 = llmc.kv_write %c, %k, %v, %s {layer = 0 : i64} : (!llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>, tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?xi32>) -> !llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>
  return
}

// -----

func.func @case76(%c: !llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>, %k: tensor<?x2x16xf32>, %v: tensor<?x2x8xf32>, %s: tensor<?xi32>) {
  // expected-error @+1 {{'llmc.kv_write' op value head_dim (8) must match the cache's head_dim (16)}}
  %0 = llmc.kv_write %c, %k, %v, %s {layer = 0 : i64} : (!llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>, tensor<?x2x16xf32>, tensor<?x2x8xf32>, tensor<?xi32>) -> !llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>
  return
}

// -----

func.func @case77(%c: !llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>, %k: tensor<?x32xf32>, %v: tensor<?x2x16xf32>, %s: tensor<?xi32>) {
  // expected-error @+1 {{'llmc.kv_write' op key must have rank 3, got rank 2}}
  %0 = llmc.kv_write %c, %k, %v, %s {layer = 0 : i64} : (!llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>, tensor<?x32xf32>, tensor<?x2x16xf32>, tensor<?xi32>) -> !llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>
  return
}

// -----

func.func @case78(%c: !llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>, %k: tensor<3x2x16xf32>, %v: tensor<3x2x16xf32>, %s: tensor<4xi32>) {
  // expected-error @+1 {{'llmc.kv_write' op key, value and slots must cover the same tokens}}
  %0 = llmc.kv_write %c, %k, %v, %s {layer = 0 : i64} : (!llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>, tensor<3x2x16xf32>, tensor<3x2x16xf32>, tensor<4xi32>) -> !llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>
  return
}

// -----

func.func @case79(%c: !llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>, %k: tensor<?x2x16xf32>, %v: tensor<?x2x16xf32>, %s: tensor<?x1xi32>) {
  // expected-error @+1 {{'llmc.kv_write' op slots must have rank 1, got rank 2}}
  %0 = llmc.kv_write %c, %k, %v, %s {layer = 0 : i64} : (!llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?x1xi32>) -> !llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>
  return
}

// -----

func.func @case80(%c: !llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>, %t: tensor<?x?xi32>, %l: tensor<?xi32>) {
  // expected-error @+1 {{'llmc.kv_read' op layer -1 is out of range for a 2-layer cache}}
  %0, %1 = llmc.kv_read %c, %t, %l {layer = -1 : i64} : (!llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>, tensor<?x?xi32>, tensor<?xi32>) -> (tensor<?x2x16xf32>, tensor<?x2x16xf32>)
  return
}

// -----

func.func @case81(%c: !llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>, %t: tensor<?x?xi32>, %l: tensor<?xi32>) {
  // expected-error @+1 {{'llmc.kv_read' op value heads (3) must match the cache's kv heads (2)}}
  %0, %1 = llmc.kv_read %c, %t, %l {layer = 0 : i64} : (!llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>, tensor<?x?xi32>, tensor<?xi32>) -> (tensor<?x2x16xf32>, tensor<?x3x16xf32>)
  return
}

// -----

func.func @case82(%c: !llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>, %t: tensor<?xi32>, %l: tensor<?xi32>) {
  // expected-error @+1 {{'llmc.kv_read' op block_tables must have rank 2, got rank 1}}
  %0, %1 = llmc.kv_read %c, %t, %l {layer = 0 : i64} : (!llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>, tensor<?xi32>, tensor<?xi32>) -> (tensor<?x2x16xf32>, tensor<?x2x16xf32>)
  return
}

// -----

func.func @case83(%c: !llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>, %t: tensor<?x?xi32>, %l: tensor<i32>) {
  // expected-error @+1 {{'llmc.kv_read' op context_lens must have rank 1, got rank 0}}
  %0, %1 = llmc.kv_read %c, %t, %l {layer = 0 : i64} : (!llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>, tensor<?x?xi32>, tensor<i32>) -> (tensor<?x2x16xf32>, tensor<?x2x16xf32>)
  return
}

// -----

func.func @case84(%q: tensor<?x8x16xf32>, %c: !llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>, %t: tensor<?x?xi32>, %l: tensor<?xi32>) {
  // expected-error @+1 {{'llmc.paged_attention' op layer 5 is out of range for a 2-layer cache}}
  %0 = llmc.paged_attention %q, %c, %t, %l {layer = 5 : i64, scale = 0.25 : f64} : (tensor<?x8x16xf32>, !llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>, tensor<?x?xi32>, tensor<?xi32>) -> tensor<?x8x16xf32>
  return
}

// -----

func.func @case85(%q: tensor<?x7x16xf32>, %c: !llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>, %t: tensor<?x?xi32>, %l: tensor<?xi32>) {
  // expected-error @+1 {{'llmc.paged_attention' op query heads (7) must be a multiple of kv heads (2)}}
  %0 = llmc.paged_attention %q, %c, %t, %l {layer = 0 : i64, scale = 0.25 : f64} : (tensor<?x7x16xf32>, !llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>, tensor<?x?xi32>, tensor<?xi32>) -> tensor<?x7x16xf32>
  return
}

// -----

func.func @case86(%q: tensor<?x8x8xf32>, %c: !llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>, %t: tensor<?x?xi32>, %l: tensor<?xi32>) {
  // expected-error @+1 {{'llmc.paged_attention' op query head_dim (8) must match the cache's head_dim (16)}}
  %0 = llmc.paged_attention %q, %c, %t, %l {layer = 0 : i64, scale = 0.25 : f64} : (tensor<?x8x8xf32>, !llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>, tensor<?x?xi32>, tensor<?xi32>) -> tensor<?x8x8xf32>
  return
}

// -----

func.func @case87(%q: tensor<?x8x16xf32>, %c: !llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>, %t: tensor<?xi32>, %l: tensor<?xi32>) {
  // expected-error @+1 {{'llmc.paged_attention' op block_tables must have rank 2, got rank 1}}
  %0 = llmc.paged_attention %q, %c, %t, %l {layer = 0 : i64, scale = 0.25 : f64} : (tensor<?x8x16xf32>, !llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>, tensor<?xi32>, tensor<?xi32>) -> tensor<?x8x16xf32>
  return
}

// -----

func.func @case88(%q: tensor<2x8x16xf32>, %c: !llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>, %t: tensor<3x?xi32>, %l: tensor<?xi32>) {
  // expected-error @+1 {{'llmc.paged_attention' op query, block_tables and context_lens must cover the same sequences}}
  %0 = llmc.paged_attention %q, %c, %t, %l {layer = 0 : i64, scale = 0.25 : f64} : (tensor<2x8x16xf32>, !llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>, tensor<3x?xi32>, tensor<?xi32>) -> tensor<2x8x16xf32>
  return
}

// -----

func.func @case89(%q: tensor<?x8x16xf32>, %c: !llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>, %t: tensor<?x?xi32>, %l: tensor<?xi32>) {
  // expected-error @+1 {{'llmc.paged_attention' op query dimension 1 (8) must match result dimension 1 (4)}}
  %0 = llmc.paged_attention %q, %c, %t, %l {layer = 0 : i64, scale = 0.25 : f64} : (tensor<?x8x16xf32>, !llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>, tensor<?x?xi32>, tensor<?xi32>) -> tensor<?x4x16xf32>
  return
}

// -----

func.func @case90(%q: tensor<?x8x16xf32>, %c: !llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>, %t: tensor<?x?xi32>, %l: tensor<?xi32>) {
  // expected-error @+1 {{'llmc.paged_attention' op scale must be positive, got -1}}
  %0 = llmc.paged_attention %q, %c, %t, %l {layer = 0 : i64, scale = -1.0 : f64} : (tensor<?x8x16xf32>, !llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>, tensor<?x?xi32>, tensor<?xi32>) -> tensor<?x8x16xf32>
  return
}

// -----

func.func @case91(%q: tensor<?x8x16xf32>, %c: !llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>, %t: tensor<?x?xi32>, %l: tensor<?xi32>) {
  // expected-error @+1 {{'llmc.paged_attention' op window must be >= 0 (0 = no window), got -3}}
  %0 = llmc.paged_attention %q, %c, %t, %l {layer = 0 : i64, scale = 0.25 : f64, window = -3 : i64} : (tensor<?x8x16xf32>, !llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>, tensor<?x?xi32>, tensor<?xi32>) -> tensor<?x8x16xf32>
  return
}

// -----

func.func @case92(%q: tensor<?x8x16xf32>, %c: !llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>, %t: tensor<?x?xi32>, %l: tensor<?x?xi32>) {
  // expected-error @+1 {{'llmc.paged_attention' op context_lens must have rank 1, got rank 2}}
  %0 = llmc.paged_attention %q, %c, %t, %l {layer = 0 : i64, scale = 0.25 : f64} : (tensor<?x8x16xf32>, !llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>, tensor<?x?xi32>, tensor<?x?xi32>) -> tensor<?x8x16xf32>
  return
}

// -----

func.func @case93(%x: tensor<?x7xf32>) {
  // expected-error @+1 {{'llmc.swiglu' op input width (7) must be even: gate and up halves}}
  %0 = llmc.swiglu %x : (tensor<?x7xf32>) -> tensor<?x3xf32>
  return
}

// -----

func.func @case94(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{'llmc.swiglu' op result width (8) must be half the input width (8)}}
  %0 = llmc.swiglu %x : (tensor<?x8xf32>) -> tensor<?x8xf32>
  return
}

// -----

func.func @case95(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{'llmc.swiglu' op input and result must have the same rank >= 1}}
  %0 = llmc.swiglu %x : (tensor<?x8xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @case96(%x: tensor<?x4xf32>, %r: tensor<?x4xf32>, %w: tensor<4xf32>) {
  // expected-error @+1 {{'llmc.add_rms_norm' op eps must be positive, got 0}}
  %0, %1 = llmc.add_rms_norm %x, %r, %w {eps = 0.0 : f64} : (tensor<?x4xf32>, tensor<?x4xf32>, tensor<4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>)
  return
}

// -----

func.func @case97(%x: tensor<?x4xf32>, %r: tensor<?x5xf32>, %w: tensor<4xf32>) {
  // expected-error @+1 {{'llmc.add_rms_norm' op input dimension 1 (4) must match residual dimension 1 (5)}}
  %0, %1 = llmc.add_rms_norm %x, %r, %w {eps = 1.0e-5 : f64} : (tensor<?x4xf32>, tensor<?x5xf32>, tensor<4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>)
  return
}

// -----

func.func @case98(%x: tensor<?x4xf32>, %r: tensor<?x4xf32>, %w: tensor<4xf32>) {
  // expected-error @+1 {{'llmc.add_rms_norm' op input rank (2) must match sum rank (1)}}
  %0, %1 = llmc.add_rms_norm %x, %r, %w {eps = 1.0e-5 : f64} : (tensor<?x4xf32>, tensor<?x4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<?x4xf32>)
  return
}

// -----

func.func @case99(%x: tensor<?x4xf32>, %r: tensor<?x4xf32>, %w: tensor<6xf32>) {
  // expected-error @+1 {{'llmc.add_rms_norm' op input last dimension (4) must match weight size (6)}}
  %0, %1 = llmc.add_rms_norm %x, %r, %w {eps = 1.0e-5 : f64} : (tensor<?x4xf32>, tensor<?x4xf32>, tensor<6xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>)
  return
}

// -----

func.func @case100(%x: tensor<?x64xf32>, %w: tensor<8x64xi8>, %s: tensor<8x1xf32>) {
  // expected-error @+1 {{'llmc.quantized_linear' op bits must be 8, 6, 5 or 4, got 3}}
  %0 = llmc.quantized_linear %x, %w, %s {bits = 3 : i64, group_size = 64 : i64} : (tensor<?x64xf32>, tensor<8x64xi8>, tensor<8x1xf32>) -> tensor<?x8xf32>
  return
}

// -----

func.func @case101(%x: tensor<?x64xf32>, %w: tensor<8x64xi8>, %s: tensor<8x1xf32>) {
  // expected-error @+1 {{'llmc.quantized_linear' op group_size (48) must divide the input features (64)}}
  %0 = llmc.quantized_linear %x, %w, %s {bits = 8 : i64, group_size = 48 : i64} : (tensor<?x64xf32>, tensor<8x64xi8>, tensor<8x1xf32>) -> tensor<?x8xf32>
  return
}

// -----

func.func @case102(%x: tensor<?x64xf32>, %w: tensor<8x64xi8>, %s: tensor<8x2xf32>) {
  // expected-error @+1 {{'llmc.quantized_linear' op scales must be [8, 1], got [8, 2]}}
  %0 = llmc.quantized_linear %x, %w, %s {bits = 8 : i64, group_size = 64 : i64} : (tensor<?x64xf32>, tensor<8x64xi8>, tensor<8x2xf32>) -> tensor<?x8xf32>
  return
}

// -----

func.func @case103(%x: tensor<?x32xf32>, %w: tensor<8x32xi8>, %s: tensor<8x2xf32>) {
  // expected-error @+1 {{'llmc.quantized_linear' op input features (32) must match weight input features (64)}}
  %0 = llmc.quantized_linear %x, %w, %s {bits = 4 : i64, group_size = 32 : i64} : (tensor<?x32xf32>, tensor<8x32xi8>, tensor<8x2xf32>) -> tensor<?x8xf32>
  return
}

// -----

func.func @case104(%x: tensor<?x64xf32>, %w: tensor<64xi8>, %s: tensor<8x1xf32>) {
  // expected-error @+1 {{'llmc.quantized_linear' op weight must have rank 2, got rank 1}}
  %0 = llmc.quantized_linear %x, %w, %s {bits = 8 : i64, group_size = 64 : i64} : (tensor<?x64xf32>, tensor<64xi8>, tensor<8x1xf32>) -> tensor<?x8xf32>
  return
}

// -----

func.func @case105(%x: tensor<?x64xf32>, %w: tensor<8x64xi8>, %s: tensor<8xf32>) {
  // expected-error @+1 {{'llmc.quantized_linear' op scales must have rank 2, got rank 1}}
  %0 = llmc.quantized_linear %x, %w, %s {bits = 8 : i64, group_size = 64 : i64} : (tensor<?x64xf32>, tensor<8x64xi8>, tensor<8xf32>) -> tensor<?x8xf32>
  return
}

// -----

func.func @slice_case(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{'llmc.slice' op input and result must have the same rank >= 1}}
  %0 = llmc.slice %x {start = 0 : i64, size = 4 : i64} : (tensor<?x8xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @slice_case(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{'llmc.slice' op slice [6, 10) is out of bounds of width 8}}
  %0 = llmc.slice %x {start = 6 : i64, size = 4 : i64} : (tensor<?x8xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @slice_case(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{'llmc.slice' op result width (5) must equal size (4)}}
  %0 = llmc.slice %x {start = 0 : i64, size = 4 : i64} : (tensor<?x8xf32>) -> tensor<?x5xf32>
  return
}

// -----

func.func @slice_case(%x: tensor<3x8xf32>) {
  // expected-error @+1 {{'llmc.slice' op only the last dimension may change}}
  %0 = llmc.slice %x {start = 0 : i64, size = 4 : i64} : (tensor<3x8xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @case_more() {
  // expected-error @+1 {{'llmc.param' op quant must be "int8", "int4", "mxfp4", "q4_k", "q5_k" or "q6_k", got "int3"}}
  %0 = llmc.param "w" {quant = "int3", quant_part = "weight", group_size = 32 : i64} : tensor<4x4xi8>
  return
}

// -----

func.func @case_more() {
  // expected-error @+1 {{'llmc.param' op quant needs quant_part = "weight" or "scales"}}
  %0 = llmc.param "w" {quant = "int8", group_size = 32 : i64} : tensor<4x4xi8>
  return
}

// -----

func.func @case_more() {
  // expected-error @+1 {{'llmc.param' op quant needs a positive group_size}}
  %0 = llmc.param "w" {quant = "int8", quant_part = "scales"} : tensor<4x1xf32>
  return
}

// -----

func.func @case_more() {
  // expected-error @+1 {{'llmc.param' op sources must not be empty}}
  %0 = llmc.param "w" {sources = []} : tensor<4x4xf32>
  return
}

// -----

func.func @case_more(%q: tensor<?x8x16xf32>, %k: tensor<?x2x16xf32>, %v: tensor<?x2x16xf32>, %s: tensor<?xi32>) {
  // expected-error @+1 {{'llmc.attention' op segments must be (query_start, context_lens), got 1 operands}}
  %0 = llmc.attention %q, %k, %v, %s {causal, scale = 0.25 : f64} : (tensor<?x8x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?xi32>) -> tensor<?x8x16xf32>
  return
}

// -----

func.func @case_more(%q: tensor<?x8x16xf32>, %k: tensor<?x2x16xf32>, %v: tensor<?x2x16xf32>, %s: tensor<?xi32>, %t: tensor<?x1xi32>) {
  // expected-error @+1 {{'llmc.attention' op segments must have rank 1, got rank 2}}
  %0 = llmc.attention %q, %k, %v, %s, %t {causal, scale = 0.25 : f64} : (tensor<?x8x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?xi32>, tensor<?x1xi32>) -> tensor<?x8x16xf32>
  return
}

// -----

func.func @quantized_embedding_group(%t: tensor<8x6xi8>, %s: tensor<8x1xf32>, %i: tensor<?xi32>) {
  // expected-error @+1 {{'llmc.quantized_embedding' op group_size (4) must divide the table width (6)}}
  %0 = llmc.quantized_embedding %t, %s, %i {group_size = 4 : i64} : (tensor<8x6xi8>, tensor<8x1xf32>, tensor<?xi32>) -> tensor<?x6xf32>
  return
}

// -----

func.func @quantized_embedding_scales(%t: tensor<8x6xi8>, %s: tensor<8x2xf32>, %i: tensor<?xi32>) {
  // expected-error @+1 {{'llmc.quantized_embedding' op scales must be [8, 1], got [8, 2]}}
  %0 = llmc.quantized_embedding %t, %s, %i {group_size = 6 : i64} : (tensor<8x6xi8>, tensor<8x2xf32>, tensor<?xi32>) -> tensor<?x6xf32>
  return
}

// -----

func.func @quantized_embedding_result(%t: tensor<8x6xi8>, %s: tensor<8x1xf32>, %i: tensor<?xi32>) {
  // expected-error @+1 {{'llmc.quantized_embedding' op result must be f32, got 'f16'}}
  %0 = llmc.quantized_embedding %t, %s, %i {group_size = 6 : i64} : (tensor<8x6xi8>, tensor<8x1xf32>, tensor<?xi32>) -> tensor<?x6xf16>
  return
}

// -----

func.func @softcap_zero(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{'llmc.softcap' op cap must be finite and positive, got 0}}
  %0 = llmc.softcap %x {cap = 0.0 : f64} : tensor<?x8xf32>
  return
}

// -----

func.func @attention_softcap_negative(%q: tensor<?x8x16xf32>, %k: tensor<?x2x16xf32>, %v: tensor<?x2x16xf32>) {
  // expected-error @+1 {{'llmc.attention' op softcap must be finite and >= 0 (0 = none), got -5}}
  %0 = llmc.attention %q, %k, %v {causal, scale = 0.25 : f64, softcap = -5.0 : f64} : (tensor<?x8x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>) -> tensor<?x8x16xf32>
  return
}

// -----

!cache = !llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>
func.func @paged_attention_softcap_inf(%q: tensor<?x8x16xf32>, %c: !cache, %t: tensor<?x?xi32>, %l: tensor<?xi32>) {
  // expected-error @+1 {{'llmc.paged_attention' op softcap must be finite and >= 0 (0 = none), got INF}}
  %0 = llmc.paged_attention %q, %c, %t, %l {layer = 0 : i64, scale = 0.25 : f64, softcap = 0x7FF0000000000000 : f64} : (tensor<?x8x16xf32>, !cache, tensor<?x?xi32>, tensor<?xi32>) -> tensor<?x8x16xf32>
  return
}

// -----

func.func @geglu_odd(%x: tensor<?x7xf32>) {
  // expected-error @+1 {{'llmc.geglu' op input width (7) must be even: gate and up halves}}
  %0 = llmc.geglu %x : (tensor<?x7xf32>) -> tensor<?x3xf32>
  return
}

// -----

func.func @param_offset_quantized() {
  // expected-error @+1 {{'llmc.param' op offset applies to a plain weight (no quant, no sources)}}
  %0 = llmc.param "w" {offset = 1.0 : f64, quant = "int8", quant_part = "weight", group_size = 4 : i64} : tensor<4x4xi8>
  return
}

// -----

func.func @topk_k_too_large(%l: tensor<?x4xf32>) {
  // expected-error @+1 {{'llmc.topk_gating' op k (5) must be in 1..4 (the experts)}}
  %w, %e = llmc.topk_gating %l {k = 5 : i64} : (tensor<?x4xf32>) -> (tensor<?x5xf32>, tensor<?x5xi32>)
  return
}

// -----

func.func @topk_k_zero(%l: tensor<?x4xf32>) {
  // expected-error @+1 {{'llmc.topk_gating' op k (0) must be in 1..4 (the experts)}}
  %w, %e = llmc.topk_gating %l {k = 0 : i64} : (tensor<?x4xf32>) -> (tensor<?x0xf32>, tensor<?x0xi32>)
  return
}

// -----

func.func @topk_scoring(%l: tensor<?x4xf32>) {
  // expected-error @+1 {{'llmc.topk_gating' op scoring must be "softmax_topk" or "topk_softmax", got "sigmoid"}}
  %w, %e = llmc.topk_gating %l {k = 2 : i64, scoring = "sigmoid"} : (tensor<?x4xf32>) -> (tensor<?x2xf32>, tensor<?x2xi32>)
  return
}

// -----

func.func @topk_softmax_normalize(%l: tensor<?x4xf32>) {
  // expected-error @+1 {{'llmc.topk_gating' op normalize is implied by topk_softmax (its weights already sum to 1)}}
  %w, %e = llmc.topk_gating %l {k = 2 : i64, normalize, scoring = "topk_softmax"} : (tensor<?x4xf32>) -> (tensor<?x2xf32>, tensor<?x2xi32>)
  return
}

// -----

func.func @topk_result_shape(%l: tensor<?x4xf32>) {
  // expected-error @+1 {{'llmc.topk_gating' op experts must be [?, 2], got [?, 3]}}
  %w, %e = llmc.topk_gating %l {k = 2 : i64} : (tensor<?x4xf32>) -> (tensor<?x2xf32>, tensor<?x3xi32>)
  return
}

// -----

func.func @expert_linear_weight_rank(%x: tensor<?x64xf32>, %e: tensor<?x2xi32>) {
  %w = llmc.param "w" : tensor<96x64xf32>
  // expected-error @+1 {{'llmc.expert_linear' op weight must have rank 3, got rank 2}}
  %h = llmc.expert_linear %x, %w, %e : (tensor<?x64xf32>, tensor<96x64xf32>, tensor<?x2xi32>) -> tensor<?x2x96xf32>
  return
}

// -----

func.func @expert_linear_features(%x: tensor<?x32xf32>, %e: tensor<?x2xi32>) {
  %w = llmc.param "w" : tensor<4x96x64xf32>
  // expected-error @+1 {{'llmc.expert_linear' op input features (32) must match the experts' input features (64)}}
  %h = llmc.expert_linear %x, %w, %e : (tensor<?x32xf32>, tensor<4x96x64xf32>, tensor<?x2xi32>) -> tensor<?x2x96xf32>
  return
}

// -----

func.func @expert_linear_slots(%x: tensor<?x3x64xf32>, %e: tensor<?x2xi32>) {
  %w = llmc.param "w" : tensor<4x96x64xf32>
  // expected-error @+1 {{'llmc.expert_linear' op input slots (3) must match the experts per token (2)}}
  %h = llmc.expert_linear %x, %w, %e : (tensor<?x3x64xf32>, tensor<4x96x64xf32>, tensor<?x2xi32>) -> tensor<?x2x96xf32>
  return
}

// -----

func.func @expert_linear_result(%x: tensor<?x64xf32>, %e: tensor<?x2xi32>) {
  %w = llmc.param "w" : tensor<4x96x64xf32>
  // expected-error @+1 {{'llmc.expert_linear' op result features (48) must match the experts' output features (96)}}
  %h = llmc.expert_linear %x, %w, %e : (tensor<?x64xf32>, tensor<4x96x64xf32>, tensor<?x2xi32>) -> tensor<?x2x48xf32>
  return
}

// -----

func.func @expert_linear_ids(%x: tensor<?x64xf32>, %e: tensor<?xi32>) {
  %w = llmc.param "w" : tensor<4x96x64xf32>
  // expected-error @+1 {{'llmc.expert_linear' op experts must have rank 2, got rank 1}}
  %h = llmc.expert_linear %x, %w, %e : (tensor<?x64xf32>, tensor<4x96x64xf32>, tensor<?xi32>) -> tensor<?x2x96xf32>
  return
}

// -----

func.func @quantized_expert_scales(%x: tensor<?x64xf32>, %e: tensor<?x2xi32>) {
  %q = llmc.param "q" : tensor<4x96x32xi8>
  %s = llmc.param "s" : tensor<4x96x1xf32>
  // expected-error @+1 {{'llmc.quantized_expert_linear' op scales must be [4, 96, 2], got [4, 96, 1]}}
  %h = llmc.quantized_expert_linear %x, %q, %s, %e {bits = 4 : i64, group_size = 32 : i64} : (tensor<?x64xf32>, tensor<4x96x32xi8>, tensor<4x96x1xf32>, tensor<?x2xi32>) -> tensor<?x2x96xf32>
  return
}

// -----

func.func @quantized_expert_bits(%x: tensor<?x64xf32>, %e: tensor<?x2xi32>) {
  %q = llmc.param "q" : tensor<4x96x64xi8>
  %s = llmc.param "s" : tensor<4x96x1xf32>
  // expected-error @+1 {{'llmc.quantized_expert_linear' op bits must be 8, 6, 5 or 4, got 2}}
  %h = llmc.quantized_expert_linear %x, %q, %s, %e {bits = 2 : i64, group_size = 64 : i64} : (tensor<?x64xf32>, tensor<4x96x64xi8>, tensor<4x96x1xf32>, tensor<?x2xi32>) -> tensor<?x2x96xf32>
  return
}

// -----

func.func @moe_combine_slots(%y: tensor<?x2x64xf32>, %w: tensor<?x3xf32>) {
  // expected-error @+1 {{'llmc.moe_combine' op input slots (2) must match the weights' (3)}}
  %o = llmc.moe_combine %y, %w : (tensor<?x2x64xf32>, tensor<?x3xf32>) -> tensor<?x64xf32>
  return
}

// -----

func.func @moe_combine_width(%y: tensor<?x2x64xf32>, %w: tensor<?x2xf32>) {
  // expected-error @+1 {{'llmc.moe_combine' op result last dimension (32) must match input features (64)}}
  %o = llmc.moe_combine %y, %w : (tensor<?x2x64xf32>, tensor<?x2xf32>) -> tensor<?x32xf32>
  return
}

// -----

func.func @param_per_expert_rank() {
  // expected-error @+1 {{'llmc.param' op a weight named per expert ({e}) stacks the experts: it must be [experts, rows, cols], got 'tensor<96x64xf32>'}}
  %0 = llmc.param "experts.{e}.w1.weight" : tensor<96x64xf32>
  return
}

// -----

func.func @softmax_sinks_heads(%s: tensor<4x?x?xf32>) {
  %k = llmc.param "sinks" : tensor<3xf32>
  // expected-error @+1 {{'llmc.softmax' op sinks must hold one logit per query head (4), got 3}}
  %p = llmc.softmax %s sinks %k : tensor<3xf32> : tensor<4x?x?xf32>
  return
}

// -----

func.func @softmax_sinks_rank(%s: tensor<?x?xf32>) {
  %k = llmc.param "sinks" : tensor<4xf32>
  // expected-error @+1 {{'llmc.softmax' op sinks need [heads, queries, keys] scores, got rank 2}}
  %p = llmc.softmax %s sinks %k : tensor<4xf32> : tensor<?x?xf32>
  return
}

// -----

func.func @attention_sinks_heads(%q: tensor<?x4x16xf32>, %k: tensor<?x2x16xf32>) {
  %s = llmc.param "sinks" : tensor<2xf32>
  // expected-error @+1 {{'llmc.attention' op sinks must hold one logit per query head (4), got 2}}
  %o = llmc.attention %q, %k, %k sinks %s {causal, scale = 0.25 : f64} : (tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<2xf32>) -> tensor<?x4x16xf32>
  return
}

// -----

func.func @clamped_swiglu_limit(%x: tensor<?x128xf32>) {
  // expected-error @+1 {{'llmc.clamped_swiglu' op limit must be finite and > 0 and alpha finite, got 0.000000e+00 and 1.702000e+00}}
  %a = llmc.clamped_swiglu %x {alpha = 1.702 : f64, limit = 0.0 : f64} : (tensor<?x128xf32>) -> tensor<?x64xf32>
  return
}

// -----

func.func @expert_bias_width(%y: tensor<?x2x128xf32>, %e: tensor<?x2xi32>) {
  %b = llmc.param "b" : tensor<8x64xf32>
  // expected-error @+1 {{'llmc.expert_bias' op bias rows (64) must match the input's width (128)}}
  %o = llmc.expert_bias %y, %b, %e : (tensor<?x2x128xf32>, tensor<8x64xf32>, tensor<?x2xi32>) -> tensor<?x2x128xf32>
  return
}

// -----

func.func @mxfp4_group(%x: tensor<?x64xf32>) {
  %q = llmc.param "w" {quant = "mxfp4", quant_part = "weight", group_size = 32 : i64} : tensor<96x32xi8>
  %s = llmc.param "w" {quant = "mxfp4", quant_part = "scales", group_size = 32 : i64} : tensor<96x1xi8>
  // expected-error @+1 {{'llmc.quantized_linear' op mxfp4 needs bits 4, group_size 32 and i8 (E8M0) scales}}
  %y = llmc.quantized_linear %x, %q, %s {bits = 4 : i64, format = "mxfp4", group_size = 64 : i64} : (tensor<?x64xf32>, tensor<96x32xi8>, tensor<96x1xi8>) -> tensor<?x96xf32>
  return
}

// -----

func.func @int8_activations_int(%x: tensor<?x64xf32>) {
  %q = llmc.param "w" {quant = "int4", quant_part = "weight", group_size = 32 : i64} : tensor<96x32xi8>
  %s = llmc.param "w" {quant = "int4", quant_part = "scales", group_size = 32 : i64} : tensor<96x2xf32>
  // expected-error @+1 {{'llmc.quantized_linear' op int8_activations applies to mxfp4 and K-quant weights (int weights always round them)}}
  %y = llmc.quantized_linear %x, %q, %s {bits = 4 : i64, group_size = 32 : i64, int8_activations} : (tensor<?x64xf32>, tensor<96x32xi8>, tensor<96x2xf32>) -> tensor<?x96xf32>
  return
}

// -----

func.func @param_mxfp4_group() {
  // expected-error @+1 {{'llmc.param' op mxfp4 has groups of 32}}
  %0 = llmc.param "w" {quant = "mxfp4", quant_part = "weight", group_size = 16 : i64} : tensor<96x32xi8>
  return
}

// -----

func.func @kquant_bits(%x: tensor<?x256xf32>) {
  %q = llmc.param "w" {quant = "q4_k", quant_part = "weight", group_size = 256 : i64} : tensor<8x128xi8>
  %s = llmc.param "w" {quant = "q4_k", quant_part = "scales", group_size = 256 : i64} : tensor<8x16xi8>
  // expected-error @+1 {{'llmc.quantized_linear' op q4_k needs bits 4, group_size 256 and i8 (header) scales}}
  %y = llmc.quantized_linear %x, %q, %s {bits = 8 : i64, format = "q4_k", group_size = 256 : i64} : (tensor<?x256xf32>, tensor<8x128xi8>, tensor<8x16xi8>) -> tensor<?x8xf32>
  return
}

// -----

func.func @kquant_headers(%x: tensor<?x256xf32>) {
  %q = llmc.param "w" {quant = "q6_k", quant_part = "weight", group_size = 256 : i64} : tensor<8x192xi8>
  %s = llmc.param "w" {quant = "q6_k", quant_part = "scales", group_size = 256 : i64} : tensor<8x16xi8>
  // expected-error @+1 {{'llmc.quantized_linear' op scales must be [8, 18], got [8, 16]}}
  %y = llmc.quantized_linear %x, %q, %s {bits = 6 : i64, format = "q6_k", group_size = 256 : i64} : (tensor<?x256xf32>, tensor<8x192xi8>, tensor<8x16xi8>) -> tensor<?x8xf32>
  return
}

// -----

func.func @kquant_codes(%x: tensor<?x256xf32>) {
  %q = llmc.param "w" {quant = "q5_k", quant_part = "weight", group_size = 256 : i64} : tensor<8x128xi8>
  %s = llmc.param "w" {quant = "q5_k", quant_part = "scales", group_size = 256 : i64} : tensor<8x16xi8>
  // expected-error @+1 {{'llmc.quantized_linear' op the weight's last dimension (128) is not whole q5_k blocks (160 bytes each)}}
  %y = llmc.quantized_linear %x, %q, %s {bits = 5 : i64, format = "q5_k", group_size = 256 : i64} : (tensor<?x256xf32>, tensor<8x128xi8>, tensor<8x16xi8>) -> tensor<?x8xf32>
  return
}

// -----

func.func @kquant_table(%ids: tensor<?xi32>) {
  %t = llmc.param "t" {quant = "q4_k", quant_part = "weight", group_size = 256 : i64} : tensor<16x128xi8>
  %s = llmc.param "t" {quant = "q4_k", quant_part = "scales", group_size = 256 : i64} : tensor<16x1xf32>
  // expected-error @+1 {{'llmc.quantized_embedding' op q4_k needs i8 (header) scales}}
  %h = llmc.quantized_embedding %t, %s, %ids {format = "q4_k", group_size = 256 : i64} : (tensor<16x128xi8>, tensor<16x1xf32>, tensor<?xi32>) -> tensor<?x256xf32>
  return
}

// -----

func.func @param_kquant_group() {
  // expected-error @+1 {{'llmc.param' op q6_k has groups of 256}}
  %0 = llmc.param "w" {quant = "q6_k", quant_part = "weight", group_size = 32 : i64} : tensor<8x192xi8>
  return
}

// -----

func.func @param_shard_alone() {
  // expected-error @+1 {{'llmc.param' op shard_dim and shard_starts go together}}
  %0 = llmc.param "w" {shard_dim = 0 : i64} : tensor<8x8xf32>
  return
}

// -----

func.func @param_shard_dim() {
  // expected-error @+1 {{'llmc.param' op shard_dim 2 is not a dimension of 'tensor<8x8xf32>'}}
  %0 = llmc.param "w" {shard_dim = 2 : i64, shard_starts = array<i64: 0, 8>} : tensor<8x8xf32>
  return
}

// -----

func.func @param_shard_starts() {
  // expected-error @+1 {{'llmc.param' op shard_starts must be non-negative (or -1: zeros), one run or more per rank}}
  %0 = llmc.param "w" {shard_dim = 0 : i64, shard_starts = array<i64: 0, -8>} : tensor<8x8xf32>
  return
}

// -----

func.func @all_reduce_types(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{'llmc.all_reduce' op requires the same type for all operands and results}}
  %0 = "llmc.all_reduce"(%x) : (tensor<?x8xf32>) -> tensor<?x4xf32>
  return
}
