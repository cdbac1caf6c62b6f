#include "WeightSource.h"
#include "llmc/support/error.h"

namespace llmc::import {
namespace {
bool convertible(weights::DType t) {
  using weights::DType;
  return t == DType::F32 || t == DType::F16 || t == DType::BF16 ||
         weights::isGgmlBlockFormat(t);
}
} // namespace

WeightSource WeightSource::safetensors(const std::string &dir) {
  WeightSource ws;
  ws.checkpoint_.emplace(weights::Checkpoint::open(dir));
  ws.location_ = dir;
  return ws;
}

WeightSource WeightSource::gguf(std::shared_ptr<weights::GGUFFile> file) {
  WeightSource ws;
  ws.location_ = file->fileName();
  ws.gguf_ = std::move(file);
  return ws;
}

void WeightSource::useTextModel(std::string modelPrefix, std::string head) {
  textPrefix_ = std::move(modelPrefix);
  textHead_ = std::move(head);
}

std::string WeightSource::stored(const std::string &name) const {
  if (textPrefix_.empty())
    return name;
  if (name == "lm_head.weight")
    return textHead_;
  if (name.rfind("model.", 0) == 0)
    return textPrefix_ + name.substr(6);
  return name;
}

const weights::TensorRef *WeightSource::find(const std::string &name) const {
  const std::string s = stored(name);
  return gguf_ ? gguf_->find(s) : checkpoint_->find(s);
}

bool WeightSource::contains(const std::string &name) const {
  return find(name) != nullptr;
}

std::vector<std::string> WeightSource::names() const {
  if (checkpoint_)
    return checkpoint_->names();
  std::vector<std::string> out;
  for (const auto &t : gguf_->tensors())
    out.push_back(t.name);
  return out;
}

const weights::TensorRef &
WeightSource::require(const std::string &name,
                      const std::vector<int64_t> &shape) {
  const weights::TensorRef *t = find(name);
  if (!t)
    throw Error("missing tensor '" + stored(name) + "' in " + location_);
  if (t->shape != shape)
    throw Error("tensor '" + stored(name) + "' in " + t->file + " has shape " +
                weights::shapeString(t->shape) + ", expected " +
                weights::shapeString(shape));
  if (!convertible(t->dtype))
    throw Error("tensor '" + stored(name) + "' in " + t->file +
                " has unsupported dtype " + weights::dtypeName(t->dtype) +
                " (supported: F32, F16, BF16, MXFP4 as _blocks + _scales" +
                (gguf_ ? ", the ggml block formats" : "") + ")");
  used_.insert(stored(name));
  if (t->scales) { // MXFP4 joined from its blocks and scales
    used_.insert(stored(name) + "_blocks");
    used_.insert(stored(name) + "_scales");
  }
  return *t;
}

void WeightSource::checkAllUsed(const std::string &architecture,
                                bool (*ignorable)(const std::string &)) const {
  for (const auto &name : names())
    if (!used_.count(name) && !ignorable(name) &&
        (textPrefix_.empty() || name.rfind(textPrefix_, 0) == 0))
      throw Error("unexpected tensor '" + name + "' in " + location_ + ": " +
                  architecture + " with this config does not use it");
}

} // namespace llmc::import
