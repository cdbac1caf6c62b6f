// oneDNN matmul throughput probe: the prefill (compute) ceiling of this
// machine, independent of llmc's backend. For f32, bf16 and int8 (u8 x s8 ->
// f32) it times an M x N x K matmul with weights in oneDNN's preferred (packed)
// layout, the way a prefill linear runs, and prints one JSON line with GFLOP/s
// (median and best of the reps) and the implementation oneDNN chose (e.g.
// brg:avx512_core_amx, or gemm:jit for AVX2; "ref" would mean no fast kernel,
// so that number is no ceiling). Build: g++ -O2 -std=c++17 -o matmul_probe
// matmul_probe.cpp -ldnnl Run:   OMP_NUM_THREADS=2 ./matmul_probe [M=512]
// [N=2048] [K=768] [reps=10]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

using namespace dnnl;
using dt = memory::data_type;
using tag = memory::format_tag;

static double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Result {
  std::string name, impl;
  double median = 0, best = 0;
  bool ok = false;
};

static Result probe(engine &eng, stream &s, const char *name, dt src_dt,
                    dt wei_dt, memory::dim M, memory::dim N, memory::dim K,
                    int reps) {
  Result r;
  r.name = name;
  try {
    memory::desc src({M, K}, src_dt, tag::ab),
        wei_any({K, N}, wei_dt, tag::any), wei_plain({K, N}, wei_dt, tag::ab),
        dst({M, N}, dt::f32, tag::ab);
    matmul::primitive_desc pd(matmul::desc(src, wei_any, dst), eng);
    r.impl = pd.impl_info_str();
    memory src_m(src, eng), wei_plain_m(wei_plain, eng),
        wei_m(pd.weights_desc(), eng), dst_m(dst, eng);
    // Non-zero, finite contents (zeros could hit shortcuts; NaNs slow some
    // paths).
    auto fill = [](memory &m) {
      auto *p = static_cast<unsigned char *>(m.get_data_handle());
      for (size_t i = 0; i < m.get_desc().get_size(); ++i)
        p[i] = static_cast<unsigned char>(0x3c + (i % 3));
    };
    fill(src_m);
    fill(wei_plain_m);
    reorder(wei_plain_m, wei_m)
        .execute(s, wei_plain_m, wei_m); // pack once, as a plan load would
    matmul mm(pd);
    auto run = [&] {
      mm.execute(s, {{DNNL_ARG_SRC, src_m},
                     {DNNL_ARG_WEIGHTS, wei_m},
                     {DNNL_ARG_DST, dst_m}});
      s.wait();
    };
    run(); // warm-up
    std::vector<double> g;
    for (int i = 0; i < reps; ++i) {
      double t = now();
      run();
      g.push_back(2.0 * M * N * K / (now() - t) / 1e9);
    }
    std::sort(g.begin(), g.end());
    r.median = g[g.size() / 2];
    r.best = g.back();
    r.ok = true;
  } catch (const dnnl::error &e) {
    r.impl = std::string("unsupported: ") + e.what();
  }
  return r;
}

int main(int argc, char **argv) {
  memory::dim M = argc > 1 ? atol(argv[1]) : 512,
              N = argc > 2 ? atol(argv[2]) : 2048,
              K = argc > 3 ? atol(argv[3]) : 768;
  int reps = argc > 4 ? atoi(argv[4]) : 10;
  engine eng(engine::kind::cpu, 0);
  stream s(eng);
  Result rs[] = {probe(eng, s, "f32", dt::f32, dt::f32, M, N, K, reps),
                 probe(eng, s, "bf16", dt::bf16, dt::bf16, M, N, K, reps),
                 probe(eng, s, "int8", dt::u8, dt::s8, M, N, K, reps)};
  printf("{\"M\":%ld,\"N\":%ld,\"K\":%ld,\"reps\":%d", (long)M, (long)N,
         (long)K, reps);
  for (const Result &r : rs) {
    std::string impl = r.impl;
    std::replace(impl.begin(), impl.end(), '"', '\'');
    printf(",\"%s\":{\"ok\":%s,\"gflops_median\":%.1f,\"gflops_best\":%.1f,"
           "\"impl\":\"%s\"}",
           r.name.c_str(), r.ok ? "true" : "false", r.median, r.best,
           impl.c_str());
  }
  printf("}\n");
  return 0;
}
