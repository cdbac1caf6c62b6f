// STREAM-like memory bandwidth probe (ours). Build:
//   gcc -O3 -march=native -fopenmp -o /tmp/llmc-bench/peer/membw bench-peers/membw.c
// Run:  OMP_NUM_THREADS=2 OMP_PROC_BIND=close /tmp/llmc-bench/peer/membw [MiB=2048] [reps=10]
// Kernels (each rep timed separately; prints best and median in GB/s, 1 GB = 1e9 B):
//   read : s += a[i]        (bytes = N*8)           <- what LLM decode does with weights
//   copy : c[i] = a[i]      (bytes = 2*N*8, no write-allocate accounting)
//   triad: c[i] = a[i] + k*b[i] (bytes = 3*N*8)
// Also a read sweep over buffer sizes to show cache levels.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}
static int cmpd(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double read_sum(const double *a, size_t n) {
    double s = 0;
#pragma omp parallel for simd reduction(+ : s) schedule(static)
    for (size_t i = 0; i < n; i++) s += a[i];
    return s;
}

static void report(const char *name, double *gbs, int reps, double mib) {
    qsort(gbs, reps, sizeof(double), cmpd);
    printf("%-6s %9.1f MiB  best %7.2f GB/s  median %7.2f GB/s\n", name, mib, gbs[reps - 1], gbs[reps / 2]);
    fflush(stdout);
}

int main(int argc, char **argv) {
    double mib = argc > 1 ? atof(argv[1]) : 2048;
    int reps = argc > 2 ? atoi(argv[2]) : 10;
    size_t n = (size_t)(mib * 1024 * 1024 / 8);
    double *a = aligned_alloc(64, n * 8), *b = aligned_alloc(64, n * 8), *c = aligned_alloc(64, n * 8);
    if (!a || !b || !c) { fprintf(stderr, "alloc failed\n"); return 1; }
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) { a[i] = 1.0; b[i] = 2.0; c[i] = 0.0; }
    printf("threads=%d buffer=%.0f MiB per array\n", omp_get_max_threads(), mib);
    double *g = malloc(sizeof(double) * (reps > 64 ? reps : 64)), sink = 0;

    for (int r = 0; r < reps; r++) { double t = now(); sink += read_sum(a, n); g[r] = n * 8 / (now() - t) / 1e9; }
    report("read", g, reps, mib);
    for (int r = 0; r < reps; r++) {
        double t = now();
#pragma omp parallel for simd schedule(static)
        for (size_t i = 0; i < n; i++) c[i] = a[i];
        g[r] = 2.0 * n * 8 / (now() - t) / 1e9;
    }
    report("copy", g, reps, mib);
    for (int r = 0; r < reps; r++) {
        double t = now();
#pragma omp parallel for simd schedule(static)
        for (size_t i = 0; i < n; i++) c[i] = a[i] + 3.0 * b[i];
        g[r] = 3.0 * n * 8 / (now() - t) / 1e9;
    }
    report("triad", g, reps, mib);

    // read sweep (cache levels); inner repeat so each timing is >= ~20 ms
    double sizes[] = {0.5, 1, 2, 8, 32, 64, 128, 256, 512, 1024, 2048};
    for (int k = 0; k < (int)(sizeof sizes / sizeof *sizes); k++) {
        if (sizes[k] > mib) break;
        size_t m = (size_t)(sizes[k] * 1024 * 1024 / 8);
        int inner = (int)(2048.0 / sizes[k]); if (inner < 1) inner = 1; if (inner > 4096) inner = 4096;
        int rr = 7;
        for (int r = 0; r < rr; r++) {
            double t = now();
            for (int j = 0; j < inner; j++) sink += read_sum(a, m);
            g[r] = (double)inner * m * 8 / (now() - t) / 1e9;
        }
        char nm[16]; snprintf(nm, sizeof nm, "rd");
        report(nm, g, rr, sizes[k]);
    }
    if (sink == 42) printf("%f\n", sink);
    return 0;
}
