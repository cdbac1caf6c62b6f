#include "llmc/weights/safetensors.h"

#include "json_util.h"
#include "llmc/support/error.h"
#include "llmc/support/mapped_file.h"

#include <algorithm>
#include <filesystem>
#include <set>

namespace llmc::weights {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Shard names come from the index; keep them inside the checkpoint folder.
void checkShardName(const std::string &shard, const std::string &index) {
  fs::path p(shard);
  bool escapes = shard.empty() || p.is_absolute();
  for (const auto &part : p)
    escapes |= part == "..";
  if (escapes)
    throw Error(index + ": shard file name '" + shard +
                "' must be a plain file name inside the checkpoint folder");
}

} // namespace

Checkpoint Checkpoint::open(const std::string &dir) {
  Checkpoint ck;
  std::error_code ec;
  if (fs::is_regular_file(dir, ec)) {
    ck.files_.push_back(std::make_unique<SafetensorsFile>(dir));
  } else {
    fs::path index = fs::path(dir) / "model.safetensors.index.json";
    fs::path single = fs::path(dir) / "model.safetensors";
    if (fs::exists(index, ec)) {
      std::string indexName = index.string();
      json j = detail::parseJson(readFile(indexName), indexName);
      auto wm = j.is_object() ? j.find("weight_map") : j.end();
      if (wm == j.end() || !wm->is_object())
        throw Error(indexName + ": expected an object 'weight_map' mapping "
                                "tensor names to shard files");
      std::map<std::string, std::string> shardOf;
      std::set<std::string> shards;
      for (const auto &[name, file] : wm->items()) {
        if (!file.is_string())
          throw Error(indexName + ": weight_map entry for '" + name +
                      "' must be a file name string, got " +
                      detail::jsonTypeName(file));
        std::string shard = file.get<std::string>();
        checkShardName(shard, indexName);
        if (shards.insert(shard).second && !fs::exists(fs::path(dir) / shard))
          throw Error(indexName + " lists shard '" + shard + "' (tensor '" +
                      name + "'), but " + (fs::path(dir) / shard).string() +
                      " does not exist");
        shardOf[name] = shard;
      }
      std::map<std::string, const SafetensorsFile *> loaded;
      for (const auto &shard : shards) {
        ck.files_.push_back(std::make_unique<SafetensorsFile>(
            (fs::path(dir) / shard).string()));
        loaded[shard] = ck.files_.back().get();
      }
      for (const auto &[name, shard] : shardOf)
        if (!loaded[shard]->find(name))
          throw Error(indexName + " maps tensor '" + name + "' to '" + shard +
                      "', but " + loaded[shard]->path() +
                      " has no tensor of that name");
      for (const auto &f : ck.files_)
        for (const auto &t : f->tensors())
          if (!shardOf.count(t.name))
            throw Error(f->path() + " holds tensor '" + t.name + "', which " +
                        indexName + "'s weight_map does not list");
    } else if (fs::exists(single, ec)) {
      ck.files_.push_back(std::make_unique<SafetensorsFile>(single.string()));
    } else {
      throw Error("no checkpoint weights in '" + dir + "': neither " +
                  single.string() + " nor " + index.string() + " exists");
    }
  }
  for (const auto &f : ck.files_)
    for (const auto &t : f->tensors()) {
      auto [it, inserted] = ck.byName_.emplace(t.name, &t);
      if (!inserted)
        throw Error("tensor '" + t.name + "' is in two shards: " +
                    it->second->file + " and " + t.file);
    }
  ck.joinMxfp4Pairs();
  return ck;
}

std::vector<std::unique_ptr<TensorRef>> joinMxfp4Pairs(
    const std::map<std::string, const TensorRef *, std::less<>> &byName) {
  const std::string suffix = "_blocks";
  std::vector<std::unique_ptr<TensorRef>> joined;
  for (const auto &[name, blocks] : byName) {
    if (name.size() <= suffix.size() ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    const std::string base = name.substr(0, name.size() - suffix.size());
    auto it = byName.find(base + "_scales");
    if (it == byName.end())
      throw Error("tensor '" + name + "' in " + blocks->file + " has no '" +
                  base + "_scales' beside it (MXFP4 blocks need their scales)");
    const TensorRef *scales = it->second;
    const std::string both = "tensors '" + blocks->name + "' " +
                             shapeString(blocks->shape) + " and '" +
                             scales->name + "' " + shapeString(scales->shape);
    if (blocks->dtype != DType::U8 || scales->dtype != DType::U8)
      throw Error(both + ": MXFP4 blocks and scales must both be U8, got " +
                  dtypeName(blocks->dtype) + " and " +
                  dtypeName(scales->dtype));
    const auto &bs = blocks->shape, &ss = scales->shape;
    if (bs.size() < 2 || bs.back() != 16)
      throw Error(both + ": MXFP4 blocks must end in a dimension of 16 bytes "
                         "(32 values of 4 bits)");
    if (ss.size() + 1 != bs.size() ||
        !std::equal(ss.begin(), ss.end(), bs.begin()))
      throw Error(both + ": MXFP4 scales must hold one byte per block (the "
                         "blocks' shape without its last dimension)");
    if (scales->nbytes != dtypeBytes(DType::U8, scales->numElements()))
      throw Error(both + ": the scales hold " + std::to_string(scales->nbytes) +
                  " bytes");
    auto t = std::make_unique<TensorRef>();
    t->name = base;
    t->dtype = DType::MXFP4;
    t->shape.assign(ss.begin(), ss.end());
    t->shape.back() *= 32;
    t->data = blocks->data;
    t->nbytes = blocks->nbytes;
    t->scales = scales->data;
    t->file = blocks->file;
    checkMxfp4(*t);
    if (byName.count(base))
      throw Error(both + ": the checkpoint also holds a tensor '" + base + "'");
    joined.push_back(std::move(t));
  }
  return joined;
}

void Checkpoint::joinMxfp4Pairs() {
  for (auto &t : weights::joinMxfp4Pairs(byName_)) {
    byName_.emplace(t->name, t.get());
    joined_.push_back(std::move(t));
  }
}

const TensorRef *Checkpoint::find(std::string_view name) const {
  auto it = byName_.find(name);
  return it == byName_.end() ? nullptr : it->second;
}

std::vector<std::string> Checkpoint::names() const {
  std::vector<std::string> out;
  out.reserve(byName_.size());
  for (const auto &kv : byName_)
    out.push_back(kv.first);
  return out;
}

std::vector<std::string> Checkpoint::files() const {
  std::vector<std::string> out;
  for (const auto &f : files_)
    out.push_back(f->path());
  return out;
}

} // namespace llmc::weights
