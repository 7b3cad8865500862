/*
 * graph_probe: issue 18's floor for target (a), in C. On one GPU (1 rank), out of place, times
 *
 *   raw    one ncclAllReduce over N floats, then cudaStreamSynchronize
 *   graph  the same call captured once into a CUDA graph (cudaStreamCaptureModeThreadLocal, as CommPlan
 *          captures), then cudaGraphLaunch + cudaStreamSynchronize
 *   group  K ncclAllReduce of N/K floats in one ncclGroupStart/End (the 200-call group)
 *   ggraph the same group captured, cudaGraphLaunch
 *
 * and prints median, min and p90 (us) of REPS after WARM warm-ups, the enqueue alone (the calls, before
 * the wait), and the ratios graph/raw and ggraph/raw. CommPlan's Java figures for the same rows come from
 * dev.commplan.runtime.nccl.NcclGraphProbe; target (a) is the captured plan at most 0.75x one raw call.
 *
 * Build and run on the GPU machine (docs/gpu.md, "CUDA graphs"; bin/gpu-run does it when nvcc is there):
 *
 *   nvcc -O2 -o /tmp/graph_probe bench/native/graph_probe.c -lnccl
 *   (where only libnccl.so.2 is installed, no libnccl.so: ... -Xlinker /path/to/libnccl.so.2 instead of -lnccl)
 *   /tmp/graph_probe [N=51200] [K=200] [REPS=200] [WARM=2000]
 *
 * (or: cc -O2 -I/usr/local/cuda/include bench/native/graph_probe.c -L/usr/local/cuda/lib64 -lcudart -lnccl)
 */
#define _POSIX_C_SOURCE 200112L /* clock_gettime under -std=c11 */
#include <cuda_runtime.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CUDA(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); exit(1); } } while (0)
#define NCCL(call) do { ncclResult_t r_ = (call); if (r_ != ncclSuccess) { \
  fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, ncclGetErrorString(r_)); exit(1); } } while (0)

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

typedef struct {
  ncclComm_t comm;
  cudaStream_t stream;
  float *send, *recv;
  size_t n;
  int k;
  cudaGraphExec_t exec;
} Ctx;

static void raw(Ctx *c) {
  NCCL(ncclAllReduce(c->send, c->recv, c->n, ncclFloat32, ncclSum, c->comm, c->stream));
}

static void group(Ctx *c) {
  size_t each = c->n / c->k;
  NCCL(ncclGroupStart());
  for (int i = 0; i < c->k; i++) {
    NCCL(ncclAllReduce(c->send + i * each, c->recv + i * each, each, ncclFloat32, ncclSum, c->comm, c->stream));
  }
  NCCL(ncclGroupEnd());
}

static void launch(Ctx *c) {
  CUDA(cudaGraphLaunch(c->exec, c->stream));
}

static cudaGraphExec_t capture(Ctx *c, void (*body)(Ctx *)) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CUDA(cudaStreamBeginCapture(c->stream, cudaStreamCaptureModeThreadLocal));
  body(c);
  CUDA(cudaStreamEndCapture(c->stream, &graph));
  CUDA(cudaGraphInstantiateWithFlags(&exec, graph, 0));
  CUDA(cudaGraphDestroy(graph));
  return exec;
}

/* Times body + cudaStreamSynchronize; prints a row; returns the median of the whole. */
static double row(const char *name, Ctx *c, void (*body)(Ctx *), int reps, int warm) {
  double *total = malloc(sizeof(double) * reps), *enq = malloc(sizeof(double) * reps);
  for (int i = 0; i < warm; i++) {
    body(c);
    CUDA(cudaStreamSynchronize(c->stream));
  }
  for (int i = 0; i < reps; i++) {
    double t0 = now_us();
    body(c);
    double t1 = now_us();
    CUDA(cudaStreamSynchronize(c->stream));
    double t2 = now_us();
    total[i] = t2 - t0;
    enq[i] = t1 - t0;
  }
  qsort(total, reps, sizeof(double), cmp);
  qsort(enq, reps, sizeof(double), cmp);
  double median = total[reps / 2];
  printf("%-52s %9.1f %9.1f %9.1f %10.1f\n", name, median, total[0], total[(int) (reps * 0.9)], enq[reps / 2]);
  free(total);
  free(enq);
  return median;
}

int main(int argc, char **argv) {
  size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 51200;
  int k = argc > 2 ? atoi(argv[2]) : 200;
  int reps = argc > 3 ? atoi(argv[3]) : 200;
  int warm = argc > 4 ? atoi(argv[4]) : 2000;
  int version, device = 0;
  Ctx c;
  memset(&c, 0, sizeof c);
  c.n = n;
  c.k = k;
  NCCL(ncclGetVersion(&version));
  CUDA(cudaSetDevice(device));
  NCCL(ncclCommInitAll(&c.comm, 1, &device));
  CUDA(cudaStreamCreateWithFlags(&c.stream, cudaStreamNonBlocking));
  CUDA(cudaMalloc((void **) &c.send, n * sizeof(float)));
  CUDA(cudaMalloc((void **) &c.recv, n * sizeof(float)));
  CUDA(cudaMemset(c.send, 0, n * sizeof(float)));
  CUDA(cudaDeviceSynchronize());
  printf("# graph_probe: NCCL %d, 1 rank, %zu floats out of place (group: %d x %zu); median of %d after %d warm-ups;"
         " cudaStreamSynchronize wait\n", version, n, k, n / k, reps, warm);
  printf("%-52s %9s %9s %9s %10s\n", "variant", "median_us", "min_us", "p90_us", "enqueue_us");
  double r = row("C: one ncclAllReduce", &c, raw, reps, warm);
  c.exec = capture(&c, raw);
  double g = row("C: the same call captured, cudaGraphLaunch", &c, launch, reps, warm);
  CUDA(cudaGraphExecDestroy(c.exec));
  double gr = row("C: K ncclAllReduce in one group", &c, group, reps, warm);
  c.exec = capture(&c, group);
  double gg = row("C: the same group captured, cudaGraphLaunch", &c, launch, reps, warm);
  CUDA(cudaGraphExecDestroy(c.exec)); /* before ncclCommDestroy, which waits for graphs that captured it */
  printf("# graph/raw %.2f (one call); group graph/raw call %.2f; group graph/group %.2f\n", g / r, gg / r, gg / gr);
  CUDA(cudaStreamSynchronize(c.stream));
  CUDA(cudaFree(c.send));
  CUDA(cudaFree(c.recv));
  CUDA(cudaStreamDestroy(c.stream));
  NCCL(ncclCommDestroy(c.comm));
  return 0;
}
