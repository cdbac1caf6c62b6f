//===- LLMCTypes.td - llmc dialect types ------------------*- tablegen -*-===//

#ifndef LLMC_TYPES_TD
#define LLMC_TYPES_TD

include "llmc/IR/LLMCDialect.td"
include "mlir/IR/AttrTypeBase.td"

def LLMC_KVCacheType : TypeDef<LLMC_Dialect, "KVCache"> {
  let mnemonic = "kv_cache";
  let summary = "The paged key/value cache of every layer";
  let description = [{
    A handle to the runtime's paged KV cache: for each of `layers` layers,
    keys and values of `kv_heads` heads of `head_dim` elements per token, stored
    in `dtype`: f32, bf16, f16, or i8 / f8E4M3FN with an f32 scale per token
    and kv head. Blocks, block size and block tables belong to the runtime; the
    IR only threads the handle so cache reads are ordered after writes.

    ```mlir
    !llmc.kv_cache<layers = 2, kv_heads = 4, head_dim = 16, dtype = f32>
    ```
  }];
  let parameters = (ins "int64_t":$layers, "int64_t":$kv_heads,
                        "int64_t":$head_dim, "::mlir::Type":$dtype);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Bytes of K and V one token occupies across all layers.
    int64_t bytesPerToken() const;
  }];
}

#endif // LLMC_TYPES_TD
