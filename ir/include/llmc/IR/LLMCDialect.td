//===- LLMCDialect.td - The llmc dialect ------------------*- tablegen -*-===//
//
// The llmc dialect describes decoder-only language models. The importer emits
// a plain decomposed graph that mirrors the reference math of an architecture;
// passes rewrite it into fused attention, KV-cache traffic and per-phase graphs.
//
//===----------------------------------------------------------------------===//

#ifndef LLMC_DIALECT_TD
#define LLMC_DIALECT_TD

include "mlir/IR/OpBase.td"

def LLMC_Dialect : Dialect {
  let name = "llmc";
  let cppNamespace = "::mlir::llmc";
  let summary = "Decoder-only language models, from checkpoint import to plans";
  let description = [{
    Weights are referenced by name through `llmc.param`; they never live inline.
    Dimensions that vary per step (new tokens T, sequences B) are dynamic.
    Model hyper-parameters are module attributes (`llmc.config`).
  }];
  let useDefaultTypePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerTypes();
  }];
}

class LLMC_Op<string mnemonic, list<Trait> traits = []>
    : Op<LLMC_Dialect, mnemonic, traits>;

#endif // LLMC_DIALECT_TD
