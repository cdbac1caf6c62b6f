#include "llmc/weights/safetensors.h"

#include "json_util.h"
#include "llmc/support/error.h"
#include "llmc/support/mapped_file.h"

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
  return ck;
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
