//===- plan_tokenizer.h - The tokenizer a plan carries ----------*- C++ -*-===//
#pragma once

#include "llmc/runtime/plan.h"
#include "llmc/tokenizer/tokenizer.h"

#include <memory>

namespace llmc {

/// The tokenizer a plan carries, or null if it has none. Throws llmc::Error
/// naming the plan when the stored tokenizer is damaged.
std::unique_ptr<tok::Tokenizer> tokenizerFromPlan(const Plan &plan);

} // namespace llmc
