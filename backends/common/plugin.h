//===- plugin.h - The C entries of a backend, written once ------*- C++ -*-===//
//
// A backend implements the C++ classes below; pluginApi() turns them into
// the llmc_backend_api table of backend.h. Every entry it generates checks
// its pointers, calls Backend::enter() (a CUDA backend selects its device
// there), and catches whatever the backend throws:
//
//   InvalidArgument -> LLMC_INVALID_ARGUMENT
//   OutOfMemory, std::bad_alloc -> LLMC_OUT_OF_MEMORY
//   Unimplemented -> LLMC_UNIMPLEMENTED
//   anything else -> LLMC_ERROR
//
// keeping "<name>: <message>" for last_error. Nothing unwinds across the C
// ABI. The kit is linked into each plugin with hidden visibility, so every
// plugin has its own copy and its own table.
//
// Threading: as backend.h says, one host thread uses a backend object at a
// time; the message of a failed create is kept per thread.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/graph.h"

#include <memory>

namespace llmc::common {

/// Device or host memory exhausted (or over the memory_fraction budget).
struct OutOfMemory : Error {
  using Error::Error;
};
/// An entry this backend does not implement (yet).
struct Unimplemented : Error {
  using Error::Error;
};

/// A graph ready to run; what it holds is the backend's business.
class PreparedGraph {
public:
  virtual ~PreparedGraph() = default;
};

/// The device-side KV pool.
class KvPool {
public:
  virtual ~KvPool() = default;
};

/// One backend object on one device, made by PluginDesc::create.
class Backend {
public:
  virtual ~Backend() = default;
  /// Called before every entry that touches this backend, destruction of
  /// its graphs and pools included.
  virtual void enter() {}
  /// Default: the op passes the checks of op_checks.h with f32 buffers.
  virtual bool supports(const llmc_op_desc &op, const llmc_graph_desc &graph);
  virtual std::unique_ptr<PreparedGraph>
  prepare(const llmc_graph_desc &graph) = 0;
  virtual std::unique_ptr<KvPool>
  createKvCache(const llmc_kv_cache_desc &desc) = 0;
  /// `sliding`: a block of the sliding pool (llmc_kv_cache_desc), which
  /// only backends whose PluginDesc says slidingPool are given.
  virtual void copyKvBlock(KvPool &pool, int32_t src, int32_t dst,
                           bool sliding) = 0;
  /// `pool` is null when the caller gave none.
  virtual void execute(PreparedGraph &graph, KvPool *pool,
                       const llmc_step_args &args) = 0;
  /// The host's collectives for ALL_REDUCE (ABI 1.9); the default refuses
  /// (Unimplemented): the backend runs no tensor-parallel plan.
  virtual void setCommunicator(const llmc_communicator &comm);
};

/// What a plugin tells the kit about itself. Static storage.
struct PluginDesc {
  const char *name; // "ref", "cpu", ...
  int32_t (*deviceCount)();
  /// Fills `info` (zeroed by the kit) for a device in [0, deviceCount());
  /// throws InvalidArgument for one that does not exist.
  void (*deviceInfo)(int32_t device, llmc_device_info &info);
  int32_t (*score)(); // optional: several builds of one backend
  /// A backend for options.device (options zeroed when the host gave none).
  std::unique_ptr<Backend> (*create)(const llmc_backend_options &options);
  /// Whether its pools take sliding-window layers apart (ABI 1.6).
  bool slidingPool = false;
  /// Whether it runs ALL_REDUCE with a host communicator (ABI 1.9).
  bool communicator = false;
};

/// The ABI table built from `desc`; what llmc_backend_query returns.
const llmc_backend_api *pluginApi(const PluginDesc &desc);

} // namespace llmc::common

/// Defines the plugin's one exported symbol for `desc`.
#define LLMC_DEFINE_BACKEND_PLUGIN(desc)                                       \
  extern "C" LLMC_BACKEND_EXPORT const llmc_backend_api *llmc_backend_query(   \
      uint32_t max_abi_major, void *) {                                        \
    return max_abi_major >= LLMC_BACKEND_ABI_MAJOR                             \
               ? ::llmc::common::pluginApi(desc)                               \
               : nullptr;                                                      \
  }
