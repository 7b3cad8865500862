/*
 * multirank_graph: do CUDA graphs that captured NCCL calls complete when several ranks of one process share
 * one GPU (NCCL >= 2.30, NCCL_MULTI_RANK_GPU_ENABLE=1)? The question behind issue 31's hang of captured
 * plans (run 12: every rank launched, no kernel finished), asked in C, without CommPlan.
 *
 * One thread per rank, every rank on device 0, one stream each, communicators made by
 * ncclCommInitRankConfig with maxCTAs -c. Each rank:
 *   1. makes its communicators: the world; with -s also the two axes of a 2 x (n/2) mesh by ncclCommSplit
 *      (row: color rank / (n/2); column: color rank % (n/2)), as CommPlan's meshes do;
 *   2. runs each call once directly (not captured) and checks it: the control;
 *   3. captures -k in-place all-reduces (one buffer each) in one graph on its stream, in thread-local mode as
 *      CommPlan captures; with -s the graph holds one all-reduce over the row, then one over the column, so
 *      that the graph spans two communicators (the 4-rank mesh hang of run 12);
 *   4. -l times: writes its input from the host (cudaMemcpyAsync on the stream; with -x through a second
 *      stream and an event, as CommPlan's copy stream does), waits for every rank (-b 0: does not), launches
 *      the graph, copies the result back, waits for the stream and checks every element.
 * A watchdog ends the program when no rank made progress for -t seconds, printing where each rank is.
 *
 * Rank r's input in launch L at index i is r + 1 + (L + i) % 5; every call sums over its communicator, so the
 * world's and the mesh's (row, then column) results are both the sum over all ranks.
 *
 * Build and run on the GPU machine (LIB: the libnccl.so.2 that bin/nccl-build prints):
 *   nvcc -O2 -I$(dirname LIB)/../include -o /tmp/multirank_graph bench/native/multirank_graph.c -Xlinker LIB -lpthread
 *   NCCL_MULTI_RANK_GPU_ENABLE=1 LD_LIBRARY_PATH=$(dirname LIB) /tmp/multirank_graph -n 8 -c 2
 *
 * Prints one line per phase from rank 0 and a last line "ok ..." or "HUNG ...". Exit status: 0 right,
 * 1 a wrong element, 2 a bad option, 3 a CUDA or NCCL error, 4 no progress for -t seconds.
 */
#define _GNU_SOURCE
#include <cuda_runtime.h>
#include <nccl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_RANKS 64

static void fail(int status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fflush(stdout);
  fprintf(stderr, "multirank_graph: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  _exit(status); /* other ranks may spin inside NCCL: no joins, no atexit */
}

#define CUDA(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) \
  fail(3, "%s:%d %s: %s", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); } while (0)
#define NCCL(rank, call) do { ncclResult_t r_ = (call); if (r_ != ncclSuccess) \
  fail(3, "rank %d: %s:%d %s: %s", (rank), __FILE__, __LINE__, #call, ncclGetErrorString(r_)); } while (0)

static struct {
  int ranks, ctas, calls, launches, split, copyStream, barrier, stallS;
  size_t count;
} opt = {8, 2, 1, 20, 0, 0, 1, 20, 1024};

static ncclUniqueId worldId;
static pthread_barrier_t everyone;

/* Where each rank is, for the watchdog: a phase and a counter that moves on progress. */
static const char *PHASE[] = {"init", "split", "direct calls", "capture", "host write", "waiting for the others",
                              "launch", "wait for the stream", "done"};
enum { P_INIT, P_SPLIT, P_DIRECT, P_CAPTURE, P_WRITE, P_BARRIER, P_LAUNCH, P_SYNC, P_DONE };
static volatile int phase[MAX_RANKS], launchNo[MAX_RANKS];
static volatile long progress;

static void at(int rank, int p) {
  phase[rank] = p;
  __sync_fetch_and_add(&progress, 1);
}

static float input(int rank, int launch, size_t i) { return (float) (rank + 1 + (launch + i) % 5); }

static float expected(int launch, size_t i) {
  float s = 0;
  for (int r = 0; r < opt.ranks; r++) s += input(r, launch, i);
  return s;
}

typedef struct {
  int rank;
  ncclComm_t world, row, column;
  cudaStream_t stream, copy;
  cudaEvent_t written;
  float *host;
  float **bufs; /* opt.calls buffers of opt.count floats (with -s: two) */
  int nbufs;
} Rank;

/* The calls a graph holds (and the control runs directly): -k all-reduces on the world, or row then column. */
static void calls(Rank *R) {
  if (opt.split) {
    NCCL(R->rank, ncclAllReduce(R->bufs[0], R->bufs[0], opt.count, ncclFloat32, ncclSum, R->row, R->stream));
    NCCL(R->rank, ncclAllReduce(R->bufs[0], R->bufs[0], opt.count, ncclFloat32, ncclSum, R->column, R->stream));
    return;
  }
  NCCL(R->rank, ncclGroupStart());
  for (int k = 0; k < opt.calls; k++)
    NCCL(R->rank, ncclAllReduce(R->bufs[k], R->bufs[k], opt.count, ncclFloat32, ncclSum, R->world, R->stream));
  NCCL(R->rank, ncclGroupEnd());
}

static void writeInputs(Rank *R, int launch) {
  for (size_t i = 0; i < opt.count; i++) R->host[i] = input(R->rank, launch, i);
  cudaStream_t s = opt.copyStream ? R->copy : R->stream;
  for (int b = 0; b < R->nbufs; b++)
    CUDA(cudaMemcpyAsync(R->bufs[b], R->host, opt.count * sizeof(float), cudaMemcpyHostToDevice, s));
  if (opt.copyStream) {
    /* the host buffer is reused at once: wait for the copy, then order the stream after it */
    CUDA(cudaEventRecord(R->written, R->copy));
    CUDA(cudaEventSynchronize(R->written));
    CUDA(cudaStreamWaitEvent(R->stream, R->written, 0));
  } else {
    CUDA(cudaStreamSynchronize(R->stream));
  }
}

static long check(Rank *R, int launch, const char *what) {
  long wrong = 0;
  for (int b = 0; b < R->nbufs; b++) {
    CUDA(cudaMemcpyAsync(R->host, R->bufs[b], opt.count * sizeof(float), cudaMemcpyDeviceToHost, R->stream));
    CUDA(cudaStreamSynchronize(R->stream));
    for (size_t i = 0; i < opt.count; i++) {
      if (R->host[i] != expected(launch, i)) {
        if (wrong++ < 3)
          fprintf(stderr, "rank %d: %s, launch %d, buffer %d: element %zu is %g, expected %g\n", R->rank, what,
                  launch, b, i, R->host[i], expected(launch, i));
      }
    }
  }
  return wrong;
}

static long wrongTotal;

/* Adds this rank's wrong elements to the total and returns the total once every rank has: all ranks stop
 * together, so that no rank waits in a collective for one that stopped. */
static long agreeWrong(long wrong) {
  __sync_fetch_and_add(&wrongTotal, wrong);
  pthread_barrier_wait(&everyone);
  long total = wrongTotal;
  pthread_barrier_wait(&everyone);
  return total;
}

static void *rankMain(void *arg) {
  Rank *R = arg;
  int r = R->rank, n = opt.ranks, half = n / 2;
  CUDA(cudaSetDevice(0));
  CUDA(cudaStreamCreateWithFlags(&R->stream, cudaStreamNonBlocking));
  CUDA(cudaStreamCreateWithFlags(&R->copy, cudaStreamNonBlocking));
  CUDA(cudaEventCreateWithFlags(&R->written, cudaEventDisableTiming));
  CUDA(cudaMallocHost((void **) &R->host, opt.count * sizeof(float)));
  R->nbufs = opt.split ? 1 : opt.calls;
  R->bufs = calloc(R->nbufs, sizeof(float *));
  for (int b = 0; b < R->nbufs; b++) CUDA(cudaMalloc((void **) &R->bufs[b], opt.count * sizeof(float)));
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  if (opt.ctas > 0) config.maxCTAs = opt.ctas;
  at(r, P_INIT);
  NCCL(r, ncclCommInitRankConfig(&R->world, n, worldId, r, &config));
  if (opt.split) {
    at(r, P_SPLIT);
    NCCL(r, ncclCommSplit(R->world, r / half, r, &R->row, &config));
    NCCL(r, ncclCommSplit(R->world, r % half, r, &R->column, &config));
  }
  pthread_barrier_wait(&everyone);

  at(r, P_DIRECT);
  writeInputs(R, 0);
  pthread_barrier_wait(&everyone);
  calls(R);
  CUDA(cudaStreamSynchronize(R->stream));
  long wrong = agreeWrong(check(R, 0, "direct"));

  at(r, P_CAPTURE);
  pthread_barrier_wait(&everyone);
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CUDA(cudaStreamBeginCapture(R->stream, cudaStreamCaptureModeThreadLocal));
  calls(R);
  CUDA(cudaStreamEndCapture(R->stream, &graph));
  CUDA(cudaGraphInstantiateWithFlags(&exec, graph, 0));
  CUDA(cudaGraphDestroy(graph));
  if (r == 0) {
    printf("# direct calls checked; graphs captured (%s)\n",
           opt.split ? "row then column all-reduce" : "world all-reduces in one group");
    fflush(stdout);
  }

  for (int l = 1; l <= opt.launches && wrong == 0; l++) {
    launchNo[r] = l;
    at(r, P_WRITE);
    writeInputs(R, l);
    if (opt.barrier) {
      at(r, P_BARRIER);
      pthread_barrier_wait(&everyone);
    }
    at(r, P_LAUNCH);
    CUDA(cudaGraphLaunch(exec, R->stream));
    at(r, P_SYNC);
    CUDA(cudaStreamSynchronize(R->stream));
    wrong = agreeWrong(check(R, l, "captured"));
  }
  at(r, P_DONE);
  CUDA(cudaGraphExecDestroy(exec));
  return NULL;
}

static void usage(void) {
  fprintf(stderr, "usage: multirank_graph [-n ranks] [-c maxCTAs, 0: NCCL's] [-k calls] [-e count] [-l launches]"
                  " [-s (2 x n/2 mesh: row then column)] [-x (host writes through a copy stream)]"
                  " [-b 0|1 (all ranks meet before each launch)] [-t stall seconds]\n");
  exit(2);
}

int main(int argc, char **argv) {
  int c;
  while ((c = getopt(argc, argv, "n:c:k:e:l:sxb:t:")) != -1) {
    switch (c) {
      case 'n': opt.ranks = atoi(optarg); break;
      case 'c': opt.ctas = atoi(optarg); break;
      case 'k': opt.calls = atoi(optarg); break;
      case 'e': opt.count = strtoull(optarg, NULL, 10); break;
      case 'l': opt.launches = atoi(optarg); break;
      case 's': opt.split = 1; break;
      case 'x': opt.copyStream = 1; break;
      case 'b': opt.barrier = atoi(optarg); break;
      case 't': opt.stallS = atoi(optarg); break;
      default: usage();
    }
  }
  if (opt.ranks < 1 || opt.ranks > MAX_RANKS || opt.calls < 1 || opt.count < 1 || opt.launches < 0 ||
      (opt.split && (opt.ranks < 2 || opt.ranks % 2)))
    usage();
  const char *env[] = {"CUDA_DEVICE_MAX_CONNECTIONS", "NCCL_RUNTIME_CONNECT", "NCCL_GRAPH_STREAM_ORDERING",
                       "NCCL_LAUNCH_ORDER_IMPLICIT", "NCCL_P2P_LEVEL", "NCCL_SHM_DISABLE", NULL};
  printf("# multirank_graph: %d ranks on device 0, maxCTAs %d, %s, %d launches of %zu floats, %s, %s\n#", opt.ranks,
         opt.ctas, opt.split ? "2 x n/2 mesh (-s)" : "world", opt.launches, opt.count,
         opt.copyStream ? "host writes through a copy stream" : "host writes on the stream",
         opt.barrier ? "ranks meet before each launch" : "no meeting");
  for (int i = 0; env[i]; i++) printf(" %s=%s", env[i], getenv(env[i]) ? getenv(env[i]) : "(unset)");
  printf("\n");
  fflush(stdout);
  NCCL(-1, ncclGetUniqueId(&worldId));
  pthread_barrier_init(&everyone, NULL, opt.ranks);
  Rank ranks[MAX_RANKS];
  pthread_t threads[MAX_RANKS];
  memset(ranks, 0, sizeof ranks);
  double t0 = 0;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  t0 = ts.tv_sec + ts.tv_nsec / 1e9;
  for (int r = 0; r < opt.ranks; r++) {
    ranks[r].rank = r;
    pthread_create(&threads[r], NULL, rankMain, &ranks[r]);
  }
  /* the watchdog: progress moves on every phase change; none for stallS seconds is a hang */
  long seen = -1;
  int still = 0;
  for (;;) {
    int done = 0;
    for (int r = 0; r < opt.ranks; r++) done += phase[r] == P_DONE;
    if (done == opt.ranks) break;
    long p = progress;
    if (p == seen) {
      if (++still >= opt.stallS * 10) {
        printf("HUNG: no progress for %d s. Where each rank is:\n", opt.stallS);
        for (int r = 0; r < opt.ranks; r++) printf("  rank %d: %s, launch %d\n", r, PHASE[phase[r]], launchNo[r]);
        fflush(stdout);
        _exit(4);
      }
    } else {
      seen = p;
      still = 0;
    }
    usleep(100000);
  }
  for (int r = 0; r < opt.ranks; r++) pthread_join(threads[r], NULL);
  clock_gettime(CLOCK_MONOTONIC, &ts);
  double took = ts.tv_sec + ts.tv_nsec / 1e9 - t0;
  /* no ncclCommDestroy: a question about launches should not end in a hang of the teardown; exit frees all */
  if (wrongTotal) {
    printf("WRONG: %ld elements\n", wrongTotal);
    return 1;
  }
  printf("ok: %d ranks, %d launches each, every element right, %.1f s\n", opt.ranks, opt.launches, took);
  return 0;
}
