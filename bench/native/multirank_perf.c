/*
 * multirank_perf: the C baseline for several NCCL ranks on one GPU (NCCL >= 2.30 with
 * NCCL_MULTI_RANK_GPU_ENABLE=1; bin/gpu-multirank-perf builds and runs it). One thread per rank, every
 * rank on device 0, each communicator made by ncclCommInitRankConfig with the maxCTAs our runtime gives
 * it (-c). nccl-tests cannot be this baseline: it refuses two ranks on one GPU (common.cu) before it
 * calls NCCL.
 *
 * Two parts, each rank's figures averaged over ranks (nccl-tests' default, -a 1, and what our bench does;
 * the largest rank's figure is printed beside it):
 *
 *   sweep  the nine collectives of nccl-tests (all-reduce, broadcast, all-gather, reduce-scatter, reduce,
 *          gather, scatter, alltoall, sendrecv as a ring), float32 sum, sizes -b .. -e by factor -f with
 *          nccl-tests' counts per rank, out of place and in place where the collective has both. Timed as
 *          nccl-tests and our sweep time: a batch is -i calls back to back and one wait for the stream;
 *          the ranks start each batch together; the time is the median per call of -B batches (at most
 *          -m seconds of them), after a warm-up of whole batches (at least -w ms, and -W ms on each
 *          collective's first size). Printed in the layout of our sweep (bench's SweepOutput, which is
 *          nccl-tests' 13 columns), so that `commplan-bench report` reads both the same way.
 *   many   K all-reduces of COUNT floats (-k, default 200x256, the bench's `many` case), out of place:
 *          K separate calls, one ncclGroupStart/End around them, one flat call over the same bytes, and
 *          the group captured once into a CUDA graph and launched with cudaGraphLaunch; time per step
 *          (the calls and one wait), median of --reps steps after --many-warmup-ms.
 *
 * Every row is then checked once on fresh inputs, element by element (the bench's Pattern: rank r's
 * input at index i is (7 i + 3 r) mod 11 + 1); any wrong element makes the program exit 1. No row starts
 * after the deadline (-d, the first always runs), and an alarm ends the program at --hard-limit (a hang).
 *
 * Build and run on the GPU machine (NCCL built by bin/nccl-build, whose last line is LIB):
 *
 *   nvcc -O2 -I$(dirname LIB)/../include -o /tmp/multirank_perf bench/native/multirank_perf.c \
 *       -Xlinker LIB -lpthread
 *   NCCL_MULTI_RANK_GPU_ENABLE=1 LD_LIBRARY_PATH=$(dirname LIB) /tmp/multirank_perf -n 4 -c 4 -e 64M -d 60
 *
 * Exit status: 0 all rows right, 1 a wrong element, 2 a mistake on the command line, 3 a CUDA or NCCL
 * error, 4 the hard limit.
 */
#define _GNU_SOURCE /* clock_gettime, getopt_long, sched_yield */
#include <cuda_runtime.h>
#include <nccl.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_RANKS 64

/* ------------------------------------------------------------------ errors */

static void fail(int status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fflush(stdout);
  fprintf(stderr, "multirank_perf: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  fflush(stderr);
  _exit(status); /* other ranks may be blocked inside NCCL: no atexit handlers, no joins */
}

#define CUDA(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) \
  fail(3, "%s:%d %s: %s", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); } while (0)
#define NCCLR(rank, comm, call) do { ncclResult_t r_ = (call); if (r_ != ncclSuccess) \
  fail(3, "rank %d: %s:%d %s: %s (%s)", (rank), __FILE__, __LINE__, #call, ncclGetErrorString(r_), \
       ncclGetLastError(comm)); } while (0)

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

/* ------------------------------------------------------------------ options */

typedef struct {
  int ranks, maxCtas, root, iters, batches, check, reps, k;
  long factor;
  size_t minBytes, maxBytes, checkMaxBytes, count;
  double warmMs, warmFirstMs, measureMaxS, deadlineS, hardLimitS, manyWarmMs;
  int runSweep, runMany;
  unsigned colls; /* bit per collective */
} Options;

static Options opt;
static double started;

/* ------------------------------------------------------------------ collectives (nccl-tests' counts) */

enum { AR, BC, AG, RS, RED, GA, SC, A2A, SR, NCOLL };
/* ours (bench's Coll.label), nccl-tests' name in its output (bench's Coll.ncclName) */
static const char *LABEL[NCOLL] = {"all-reduce", "broadcast", "all-gather", "reduce-scatter", "reduce",
                                   "gather", "scatter", "alltoall", "sendrecv"};
static const char *NAME[NCOLL] = {"AllReduce", "Broadcast", "AllGather", "ReduceScatter", "Reduce",
                                  "Gather", "Scatter", "AlltoAll", "SendRecv"};

/* The count argument is per rank (a slice per rank on one side or both). */
static int perRank(int c) { return c == AG || c == RS || c == GA || c == SC || c == A2A; }
static int hasInPlace(int c) { return c != A2A && c != SR; }
static int reduces(int c) { return c == AR || c == RS || c == RED; }
static int rooted(int c) { return c == BC || c == RED || c == GA || c == SC; }
/* In place, the send buffer is the rank's slice of the receive buffer (gathers). */
static int sendInRecv(int c) { return c == AG || c == GA; }
/* In place, the receive buffer is the rank's slice of the send buffer (scatters). */
static int recvInSend(int c) { return c == RS || c == SC; }

/* NCCL's count for a size of `total` floats: per rank a multiple of 16 bytes (4 floats), else the whole. */
static size_t paramCount(int c, size_t total, int n) { return perRank(c) ? (total / n) & ~(size_t) 3 : total; }
static size_t sendCount(int c, size_t p, int n) { return (c == RS || c == SC || c == A2A) ? p * n : p; }
static size_t recvCount(int c, size_t p, int n) { return (c == AG || c == GA || c == A2A) ? p * n : p; }
static double busFactor(int c, int n) {
  switch (c) {
    case AR: return 2.0 * (n - 1) / n;
    case AG: case RS: case GA: case SC: case A2A: return (double) (n - 1) / n;
    default: return 1.0;
  }
}

/* ------------------------------------------------------------------ the ranks' agreement */

static pthread_barrier_t barrier;
static double slots[MAX_RANKS][2];

static void await_all(void) { pthread_barrier_wait(&barrier); }

/* Every rank's `value`: the average and the largest over ranks (every rank gets them). */
static void agree(int rank, double value, double *avg, double *max) {
  slots[rank][0] = value;
  await_all();
  double sum = 0, hi = -1e300;
  for (int r = 0; r < opt.ranks; r++) {
    sum += slots[r][0];
    if (slots[r][0] > hi) hi = slots[r][0];
  }
  await_all();
  *avg = sum / opt.ranks;
  if (max) *max = hi;
}

/* Rank 0's `decision`, on every rank: the ranks must take the same branch, or their collectives would not pair. */
static int rank0(int rank, int decision) {
  if (rank == 0) slots[0][1] = decision;
  await_all();
  int d = (int) slots[0][1];
  await_all();
  return d;
}

static long long sumOver(int rank, long long value) {
  double avg;
  agree(rank, (double) value, &avg, NULL);
  return (long long) (avg * opt.ranks + 0.5);
}

/* ------------------------------------------------------------------ one rank */

typedef struct {
  int rank;
  ncclComm_t comm;
  cudaStream_t stream;
  float *sendAll, *recvAll; /* the sweep's buffers, of its largest size */
  float *host;              /* staging for fills and checks */
  size_t hostFloats;
} Rank;

static float input(int rank, size_t index) { return (float) ((index * 7 + (size_t) rank * 3) % 11 + 1); }

static float sumOfInputs(size_t index) {
  float s = 0;
  for (int r = 0; r < opt.ranks; r++) s += input(r, index);
  return s;
}

/* nccl-tests' wait: poll the stream, watch the communicator's asynchronous error. */
static void waitStream(Rank *R) {
  for (unsigned polls = 1;; polls++) {
    cudaError_t e = cudaStreamQuery(R->stream);
    if (e == cudaSuccess) return;
    if (e != cudaErrorNotReady) fail(3, "rank %d: cudaStreamQuery: %s", R->rank, cudaGetErrorString(e));
    if ((polls & 0xff) == 0) {
      ncclResult_t async;
      NCCLR(R->rank, R->comm, ncclCommGetAsyncError(R->comm, &async));
      if (async != ncclSuccess && async != ncclInProgress)
        fail(3, "rank %d: NCCL asynchronous error: %s (%s)", R->rank, ncclGetErrorString(async),
             ncclGetLastError(R->comm));
      sched_yield();
    }
  }
}

typedef struct {
  int c, inPlace;
  size_t p;
  const float *send;
  float *recv;
} Call;

static Call makeCall(Rank *R, int c, size_t p, int inPlace) {
  Call k = {c, inPlace, p, R->sendAll, R->recvAll};
  if (inPlace) {
    size_t slice = (size_t) R->rank * p;
    k.send = R->recvAll;
    k.recv = R->recvAll;
    if (sendInRecv(c)) k.send = R->recvAll + slice;
    if (recvInSend(c)) k.recv = R->recvAll + slice;
  }
  return k;
}

static void issue(Rank *R, const Call *k) {
  int n = opt.ranks, root = opt.root, me = R->rank;
  ncclComm_t comm = R->comm;
  cudaStream_t s = R->stream;
  switch (k->c) {
    case AR: NCCLR(me, comm, ncclAllReduce(k->send, k->recv, k->p, ncclFloat32, ncclSum, comm, s)); break;
    case BC: NCCLR(me, comm, ncclBroadcast(k->send, k->recv, k->p, ncclFloat32, root, comm, s)); break;
    case AG: NCCLR(me, comm, ncclAllGather(k->send, k->recv, k->p, ncclFloat32, comm, s)); break;
    case RS: NCCLR(me, comm, ncclReduceScatter(k->send, k->recv, k->p, ncclFloat32, ncclSum, comm, s)); break;
    case RED: NCCLR(me, comm, ncclReduce(k->send, k->recv, k->p, ncclFloat32, ncclSum, root, comm, s)); break;
    case GA: NCCLR(me, comm, ncclGather(k->send, k->recv, k->p, ncclFloat32, root, comm, s)); break;
    case SC: NCCLR(me, comm, ncclScatter(k->send, k->recv, k->p, ncclFloat32, root, comm, s)); break;
    case A2A: NCCLR(me, comm, ncclAlltoAll(k->send, k->recv, k->p, ncclFloat32, comm, s)); break;
    case SR: /* nccl-tests' sendrecv: a ring, in one group */
      NCCLR(me, comm, ncclGroupStart());
      NCCLR(me, comm, ncclSend(k->send, k->p, ncclFloat32, (me + 1) % n, comm, s));
      NCCLR(me, comm, ncclRecv(k->recv, k->p, ncclFloat32, (me - 1 + n) % n, comm, s));
      NCCLR(me, comm, ncclGroupEnd());
      break;
  }
}

/*
 * Copies between host and device go on the rank's own stream, then it waits: the NCCL calls run on that
 * non-blocking stream, which the legacy default stream (cudaMemcpy, cudaMemset) would not order against;
 * and never cudaDeviceSynchronize, which would also wait for the other ranks' kernels, which wait for this one.
 */
static void upload(Rank *R, void *device, size_t floats) {
  CUDA(cudaMemcpyAsync(device, R->host, floats * sizeof(float), cudaMemcpyHostToDevice, R->stream));
  waitStream(R);
}

static void download(Rank *R, const void *device, size_t floats) {
  CUDA(cudaMemcpyAsync(R->host, device, floats * sizeof(float), cudaMemcpyDeviceToHost, R->stream));
  waitStream(R);
}

static void zero(Rank *R, void *device, size_t floats) {
  CUDA(cudaMemsetAsync(device, 0, floats * sizeof(float), R->stream));
  waitStream(R);
}

/* Fresh inputs and a zeroed output, as nccl-tests' InitData and our sweep's init. */
static void initData(Rank *R, const Call *k) {
  int n = opt.ranks;
  size_t sc = sendCount(k->c, k->p, n), rc = recvCount(k->c, k->p, n);
  if (!k->inPlace || sendInRecv(k->c)) zero(R, k->recv, rc);
  for (size_t i = 0; i < sc; i++) R->host[i] = input(R->rank, i);
  upload(R, (void *) k->send, sc);
}

/* The expected output at index i (float sums of small whole numbers are exact). */
static float expected(const Call *k, int rank, size_t i) {
  int n = opt.ranks, root = opt.root, isRoot = rank == root;
  size_t p = k->p;
  switch (k->c) {
    case AR: return sumOfInputs(i);
    case RS: return sumOfInputs((size_t) rank * p + i);
    case BC: return input(root, i);
    case AG: return input((int) (i / p), i % p);
    case RED: return isRoot ? sumOfInputs(i) : k->inPlace ? input(rank, i) : 0;
    case GA: return isRoot ? input((int) (i / p), i % p)
                           : (k->inPlace && (int) (i / p) == rank) ? input(rank, i % p) : 0;
    case SC: return input(root, (size_t) rank * p + i);
    case A2A: return input((int) (i / p), (size_t) rank * p + i % p);
    case SR: return input((rank - 1 + n) % n, i);
  }
  return -1;
}

static long long checkOutput(Rank *R, const Call *k) {
  size_t rc = recvCount(k->c, k->p, opt.ranks);
  download(R, k->recv, rc);
  long long wrong = 0;
  for (size_t i = 0; i < rc; i++) {
    if (R->host[i] != expected(k, R->rank, i)) {
      if (wrong < 3)
        fprintf(stderr, "rank %d: %s %s count %zu: element %zu is %g, expected %g\n", R->rank, LABEL[k->c],
                k->inPlace ? "in place" : "out of place", k->p, i, R->host[i], expected(k, R->rank, i));
      wrong++;
    }
  }
  return wrong;
}

/* ------------------------------------------------------------------ timing */

static int cmpDouble(const void *a, const void *b) {
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, n, sizeof(double), cmpDouble);
  return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

typedef struct {
  double timeUs, maxUs, algbw, busbw;
  long long wrong;  /* -1: not checked */
  long warmCalls;
  double warmMs;
  int batches;
  int ran;
} Result;

/* One row's placement: warm-up, timed batches, the check. Every rank calls it with the same arguments. */
static Result bench(Rank *R, int c, size_t p, int inPlace, int check, double warmMs) {
  Result res = {0};
  Call k = makeCall(R, c, p, inPlace);
  int n = opt.ranks;
  if (check) initData(R, &k);
  /* warm-up: whole batches until both the calls and the time are reached (rank 0's clock decides) */
  double w0 = now_s();
  long calls = 0;
  for (;;) {
    for (int i = 0; i < opt.iters; i++) issue(R, &k);
    waitStream(R);
    calls += opt.iters;
    if (rank0(R->rank, (now_s() - w0) * 1e3 >= warmMs)) break;
  }
  res.warmCalls = calls;
  res.warmMs = (now_s() - w0) * 1e3;
  /* timed batches: the ranks start each one together */
  double *avg = malloc(sizeof(double) * opt.batches), *max = malloc(sizeof(double) * opt.batches);
  double m0 = now_s();
  int b = 0;
  while (b < opt.batches) {
    await_all();
    double t0 = now_s();
    for (int i = 0; i < opt.iters; i++) issue(R, &k);
    waitStream(R);
    double perCall = (now_s() - t0) / opt.iters;
    agree(R->rank, perCall, &avg[b], &max[b]);
    b++;
    if (rank0(R->rank, now_s() - m0 >= opt.measureMaxS)) break;
  }
  res.batches = b;
  res.timeUs = median(avg, b) * 1e6;
  res.maxUs = median(max, b) * 1e6;
  free(avg);
  free(max);
  double algBytes = (double) p * sizeof(float) * (perRank(c) ? n : 1);
  res.algbw = algBytes / 1e9 / (res.timeUs / 1e6);
  res.busbw = res.algbw * busFactor(c, n);
  res.wrong = -1;
  if (check) {
    initData(R, &k);
    await_all();
    issue(R, &k);
    waitStream(R);
    res.wrong = sumOver(R->rank, checkOutput(R, &k));
  }
  res.ran = 1;
  return res;
}

static const char *fmtTime(char *buf, double us) {
  if (us >= 10000.0) snprintf(buf, 16, "%7.0f", us);
  else if (us >= 100.0) snprintf(buf, 16, "%7.1f", us);
  else snprintf(buf, 16, "%7.2f", us);
  return buf;
}

static void cells(const Result *r) {
  char t[16];
  if (!r->ran) {
    printf("  %7s  %6s  %6s  %6s", "N/A", "N/A", "N/A", "N/A");
    return;
  }
  char wrong[24];
  if (r->wrong < 0) snprintf(wrong, sizeof wrong, "N/A");
  else snprintf(wrong, sizeof wrong, "%lld", r->wrong);
  printf("  %7s  %6.2f  %6.2f  %6s", fmtTime(t, r->timeUs), r->algbw, r->busbw, wrong);
}

static void warmText(char *buf, size_t len, const Result *r) {
  if (!r->ran) snprintf(buf, len, "N/A");
  else snprintf(buf, len, "%ld calls, %.1f ms, fixed%s", r->warmCalls, r->warmMs,
                r->batches < opt.batches ? " (timed fewer batches: the row's time was up)" : "");
}

static const char *bytesText(char *buf, size_t b) {
  const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && b % 1024 == 0 && u < 4) {
    b /= 1024;
    u++;
  }
  snprintf(buf, 32, "%zu %s", b, unit[u]);
  return buf;
}

static void sweepHeader(int c) {
  char check[64], cm[32], root[32] = "";
  if (!opt.check) snprintf(check, sizeof check, "0");
  else if (opt.checkMaxBytes < opt.maxBytes) snprintf(check, sizeof check, "1 (sizes up to %s)", bytesText(cm, opt.checkMaxBytes));
  else snprintf(check, sizeof check, "1");
  if (rooted(c)) snprintf(root, sizeof root, "root %d  ", opt.root);
  printf("# %s  backend c  ranks %d  type float  %s%siters %d  batches %d  check %s\n", NAME[c], opt.ranks,
         reduces(c) ? "op sum  " : "", root, opt.iters, opt.batches, check);
  printf("# time: per call, the median of %d timed units (one batch of %d calls back to back and one wait for the"
         " stream; wall time / %d, averaged over ranks; the largest rank's on the line after); at most %g s of"
         " them per row\n", opt.batches, opt.iters, opt.iters, opt.measureMaxS);
  printf("# warm-up: whole batches until at least %g ms have passed (%g ms on the first size)\n", opt.warmMs,
         opt.warmFirstMs);
  printf("#%51s%s%s\n", "", "           out-of-place           ", "             in-place");
  printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n", "size", "count", "type", "redop",
         "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong");
  printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s\n", "(B)", "(elements)", "", "", "",
         "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)");
  fflush(stdout);
}

static int pastDeadline(void) { return opt.deadlineS > 0 && now_s() - started > opt.deadlineS; }

/* rank 0's tallies */
static int rowsRun;
static int stopped;
static long long wrongTotal;

static void sweep(Rank *R) {
  int n = opt.ranks, first = 1;
  for (int c = 0; c < NCOLL; c++) {
    if (!(opt.colls >> c & 1)) continue;
    if (R->rank == 0) sweepHeader(c);
    int firstSize = 1;
    double busSum = 0;
    int busCount = 0;
    for (size_t size = opt.minBytes; size <= opt.maxBytes; size *= opt.factor) {
      size_t p = paramCount(c, size / sizeof(float), n);
      if (p == 0) continue; /* fewer elements than ranks: nothing to send */
      if (rank0(R->rank, !first && pastDeadline())) {
        if (R->rank == 0) {
          char b[32];
          printf("# stopped: the deadline (-d %g s) passed before %s %s; %d rows were run\n", opt.deadlineS,
                 LABEL[c], bytesText(b, size), rowsRun);
          fflush(stdout);
        }
        if (R->rank == 0) stopped = 1;
        return;
      }
      first = 0;
      int check = opt.check && size <= opt.checkMaxBytes;
      double warm = firstSize ? opt.warmFirstMs : opt.warmMs;
      firstSize = 0;
      Result oop = bench(R, c, p, 0, check, warm);
      Result ip = {0};
      if (hasInPlace(c)) ip = bench(R, c, p, 1, check, warm);
      if (R->rank == 0) {
        wrongTotal += (oop.wrong > 0 ? oop.wrong : 0) + (ip.wrong > 0 ? ip.wrong : 0);
        size_t bytes = (sendCount(c, p, n) > recvCount(c, p, n) ? sendCount(c, p, n) : recvCount(c, p, n))
                       * sizeof(float);
        printf("%12zu  %12zu  %8s  %6s  %6d", bytes, p, "float", reduces(c) ? "sum" : "none",
               rooted(c) ? opt.root : -1);
        cells(&oop);
        cells(&ip);
        printf("\n");
        char wo[96], wi[96];
        warmText(wo, sizeof wo, &oop);
        warmText(wi, sizeof wi, &ip);
        printf("#   warm-up  out-of-place: %s   in-place: %s\n", wo, wi);
        char a[16], b[16];
        printf("#   largest rank  out-of-place: %s us   in-place: %s us\n", fmtTime(a, oop.maxUs),
               ip.ran ? fmtTime(b, ip.maxUs) : "N/A");
        fflush(stdout);
        busSum += oop.busbw + (ip.ran ? ip.busbw : 0);
        busCount += ip.ran ? 2 : 1;
        rowsRun++;
      }
    }
    if (R->rank == 0) {
      printf("# Avg bus bandwidth    : %g\n#\n", busCount ? busSum / busCount : 0.0);
      fflush(stdout);
    }
  }
}

/* ------------------------------------------------------------------ many buffers */

typedef struct {
  Rank *R;
  float *send, *recv; /* K x COUNT floats each */
  cudaGraphExec_t exec;
} Many;

enum { SEPARATE, GROUP, FLAT, GRAPH, NWAYS };
static const char *WAY[NWAYS] = {"separate", "group", "flat", "graph"};

static void manyBody(Many *m, int way) {
  Rank *R = m->R;
  size_t each = opt.count, total = (size_t) opt.k * opt.count;
  switch (way) {
    case SEPARATE:
    case GROUP:
      if (way == GROUP) NCCLR(R->rank, R->comm, ncclGroupStart());
      for (int i = 0; i < opt.k; i++)
        NCCLR(R->rank, R->comm, ncclAllReduce(m->send + i * each, m->recv + i * each, each, ncclFloat32, ncclSum,
                                              R->comm, R->stream));
      if (way == GROUP) NCCLR(R->rank, R->comm, ncclGroupEnd());
      break;
    case FLAT:
      NCCLR(R->rank, R->comm, ncclAllReduce(m->send, m->recv, total, ncclFloat32, ncclSum, R->comm, R->stream));
      break;
    case GRAPH:
      CUDA(cudaGraphLaunch(m->exec, R->stream));
      break;
  }
}

typedef struct {
  double median, min, p90, enqueue, maxMedian, warmMs;
  long warmSteps;
  int steps;
  long long wrong;
} WayResult;

static WayResult manyWay(Many *m, int way) {
  Rank *R = m->R;
  WayResult w = {0};
  double w0 = now_s();
  long steps = 0;
  for (;;) {
    await_all();
    manyBody(m, way);
    waitStream(R);
    steps++;
    if (rank0(R->rank, steps >= 20 && (now_s() - w0) * 1e3 >= opt.manyWarmMs)) break;
  }
  w.warmSteps = steps;
  w.warmMs = (now_s() - w0) * 1e3;
  double *total = malloc(sizeof(double) * opt.reps), *enq = malloc(sizeof(double) * opt.reps),
         *max = malloc(sizeof(double) * opt.reps);
  double m0 = now_s();
  int n = 0;
  while (n < opt.reps) {
    await_all();
    double t0 = now_s();
    manyBody(m, way);
    double t1 = now_s();
    waitStream(R);
    double t2 = now_s();
    agree(R->rank, (t2 - t0) * 1e6, &total[n], &max[n]);
    agree(R->rank, (t1 - t0) * 1e6, &enq[n], NULL);
    n++;
    if (rank0(R->rank, now_s() - m0 >= opt.measureMaxS)) break;
  }
  w.steps = n;
  w.median = median(total, n);
  w.min = total[0];
  w.p90 = total[(int) (n * 0.9)];
  w.enqueue = median(enq, n);
  w.maxMedian = median(max, n);
  free(total);
  free(enq);
  free(max);
  /* the check, on fresh inputs */
  size_t all = (size_t) opt.k * opt.count;
  for (size_t i = 0; i < all; i++) R->host[i] = input(R->rank, i);
  upload(R, m->send, all);
  zero(R, m->recv, all);
  await_all();
  manyBody(m, way);
  waitStream(R);
  download(R, m->recv, all);
  long long wrong = 0;
  for (size_t i = 0; i < all; i++) {
    if (R->host[i] != sumOfInputs(i)) {
      if (wrong < 3)
        fprintf(stderr, "rank %d: many %s: element %zu is %g, expected %g\n", R->rank, WAY[way], i, R->host[i],
                sumOfInputs(i));
      wrong++;
    }
  }
  w.wrong = sumOver(R->rank, wrong);
  return w;
}

static void many(Rank *R) {
  Many m = {R, NULL, NULL, NULL};
  size_t all = (size_t) opt.k * opt.count;
  CUDA(cudaMalloc((void **) &m.send, all * sizeof(float)));
  CUDA(cudaMalloc((void **) &m.recv, all * sizeof(float)));
  zero(R, m.send, all);
  zero(R, m.recv, all);
  if (R->rank == 0) {
    printf("# many  ranks %d  %d x %zu float all-reduce sum, out of place (%zu floats): time per step (the calls and"
           " one wait for the stream, the ranks starting each step together), averaged over ranks; median, min and"
           " p90 of at most %d steps (%g s) after at least 20 steps and %g ms\n",
           opt.ranks, opt.k, opt.count, all, opt.reps, opt.measureMaxS, opt.manyWarmMs);
    printf("%-52s %9s %9s %9s %10s\n", "variant", "median_us", "min_us", "p90_us", "enqueue_us");
    fflush(stdout);
  }
  char name[NWAYS][96];
  snprintf(name[SEPARATE], 96, "C: %d separate ncclAllReduce", opt.k);
  snprintf(name[GROUP], 96, "C: %d ncclAllReduce in one group", opt.k);
  snprintf(name[FLAT], 96, "C: one ncclAllReduce over %zu floats", all);
  snprintf(name[GRAPH], 96, "C: the group captured, cudaGraphLaunch");
  for (int way = 0; way < NWAYS; way++) {
    if (way == GRAPH) {
      /* captured once, on this rank's stream, as CommPlan captures (thread-local mode) */
      cudaGraph_t graph;
      await_all();
      CUDA(cudaStreamBeginCapture(R->stream, cudaStreamCaptureModeThreadLocal));
      manyBody(&m, GROUP);
      CUDA(cudaStreamEndCapture(R->stream, &graph));
      CUDA(cudaGraphInstantiateWithFlags(&m.exec, graph, 0));
      CUDA(cudaGraphDestroy(graph));
    }
    WayResult w = manyWay(&m, way);
    if (R->rank == 0) {
      wrongTotal += w.wrong;
      printf("%-52s %9.1f %9.1f %9.1f %10.1f\n", name[way], w.median, w.min, w.p90, w.enqueue);
      printf("#   %s: warm-up %ld steps, %.1f ms, fixed; %d steps timed; largest rank's median %.1f us; #wrong %lld\n",
             WAY[way], w.warmSteps, w.warmMs, w.steps, w.maxMedian, w.wrong);
      fflush(stdout);
    }
  }
  CUDA(cudaGraphExecDestroy(m.exec)); /* before ncclCommDestroy, which waits for graphs that captured it */
  CUDA(cudaFree(m.send));
  CUDA(cudaFree(m.recv));
}

/* ------------------------------------------------------------------ threads and main */

static ncclUniqueId uid;
static Rank ranks[MAX_RANKS];

static void *rankMain(void *arg) {
  Rank *R = arg;
  CUDA(cudaSetDevice(0));
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  if (opt.maxCtas > 0) config.maxCTAs = opt.maxCtas;
  double t0 = now_s();
  ncclResult_t r = ncclCommInitRankConfig(&R->comm, opt.ranks, uid, R->rank, &config);
  if (r != ncclSuccess)
    fail(3, "rank %d: ncclCommInitRankConfig: %s (%s)%s", R->rank, ncclGetErrorString(r), ncclGetLastError(NULL),
         opt.ranks > 1 ? "; several ranks on one GPU need NCCL >= 2.30 and NCCL_MULTI_RANK_GPU_ENABLE=1" : "");
  double initMs = (now_s() - t0) * 1e3;
  CUDA(cudaStreamCreateWithFlags(&R->stream, cudaStreamNonBlocking));
  size_t sweepFloats = opt.runSweep ? opt.maxBytes / sizeof(float) : 0;
  size_t manyFloats = opt.runMany ? (size_t) opt.k * opt.count : 0;
  size_t checkFloats = opt.check ? (opt.checkMaxBytes < opt.maxBytes ? opt.checkMaxBytes : opt.maxBytes) / sizeof(float) : 0;
  R->hostFloats = checkFloats > manyFloats ? checkFloats : manyFloats;
  R->host = malloc(R->hostFloats * sizeof(float) + 64);
  if (!R->host) fail(3, "rank %d: cannot allocate %zu bytes of host memory", R->rank, R->hostFloats * sizeof(float));
  if (sweepFloats) {
    CUDA(cudaMalloc((void **) &R->sendAll, sweepFloats * sizeof(float)));
    CUDA(cudaMalloc((void **) &R->recvAll, sweepFloats * sizeof(float)));
    zero(R, R->sendAll, sweepFloats);
    zero(R, R->recvAll, sweepFloats);
  }
  double avgInit, maxInit;
  agree(R->rank, initMs, &avgInit, &maxInit);
  if (R->rank == 0) {
    printf("# communicators: %d ranks on device 0, ncclCommInitRankConfig %.1f ms on average, %.1f ms the longest\n",
           opt.ranks, avgInit, maxInit);
    fflush(stdout);
  }
  if (opt.runMany) many(R);
  if (opt.runSweep) sweep(R);
  await_all();
  if (sweepFloats) {
    CUDA(cudaFree(R->sendAll));
    CUDA(cudaFree(R->recvAll));
  }
  CUDA(cudaStreamDestroy(R->stream));
  NCCLR(R->rank, R->comm, ncclCommDestroy(R->comm));
  free(R->host);
  return NULL;
}

static void onAlarm(int sig) {
  (void) sig;
  static const char msg[] = "multirank_perf: the hard limit (--hard-limit) passed: a rank hangs, or the run is too"
                            " long for its limits\n";
  ssize_t ignored = write(2, msg, sizeof msg - 1);
  (void) ignored;
  _exit(4);
}

static void usage(int status) {
  fprintf(status ? stderr : stdout,
          "usage: multirank_perf -n RANKS [options]\n"
          "  -n, --ranks N          ranks (threads), all on device 0 (1..%d)\n"
          "  -c, --max-ctas K       ncclConfig_t.maxCTAs of every communicator: what CommPlan's runtime gives\n"
          "                         each rank when ranks share a GPU (0: leave NCCL's default; default 0)\n"
          "  -b, --min SIZE         first size (default 8); sizes take K, M, G (1024-based)\n"
          "  -e, --max SIZE         last size (default 1G)\n"
          "  -f, --factor F         size step factor (default 2)\n"
          "  -t, --coll LIST        all (default) or some of all-reduce, broadcast, all-gather, reduce-scatter,\n"
          "                         reduce, gather, scatter, alltoall, sendrecv\n"
          "  -r, --root R           root of broadcast, reduce, gather, scatter (default 0)\n"
          "  -i, --iters N          calls per timed batch (default 20, nccl-tests' -n)\n"
          "  -B, --batches N        timed batches per row, their median is the time (default 20)\n"
          "  -m, --measure-max S    at most S seconds of timed batches (or steps) per row (default 2)\n"
          "  -w, --warmup-ms MS     warm-up of each row, in whole batches (default 20)\n"
          "  -W, --warmup-first-ms MS  warm-up of each collective's first size (default 200)\n"
          "  -C, --check-max SIZE   check rows up to this size (default 64M); --no-check: none\n"
          "  -k, --many KxCOUNT     the many-buffers case (default 200x256)\n"
          "      --reps N           timed steps per many-buffers way (default 200)\n"
          "      --many-warmup-ms MS  warm-up of each many-buffers way, and at least 20 steps (default 300)\n"
          "  -p, --parts LIST       sweep,many (default both; many runs first)\n"
          "  -d, --deadline S       start no new row after S seconds from the start (default 0: none)\n"
          "      --hard-limit S     end the program (exit 4) after S seconds: a hang (default: deadline + 120)\n",
          MAX_RANKS);
  exit(status);
}

static size_t parseSize(const char *s, const char *what) {
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  size_t mult = 1;
  if (*end == 'K' || *end == 'k') mult = 1ull << 10, end++;
  else if (*end == 'M' || *end == 'm') mult = 1ull << 20, end++;
  else if (*end == 'G' || *end == 'g') mult = 1ull << 30, end++;
  if (end == s || *end || v == 0) {
    fprintf(stderr, "multirank_perf: %s '%s' is not a size such as 8, 64K, 64M, 1G\n", what, s);
    exit(2);
  }
  return (size_t) v * mult;
}

static long parseLong(const char *s, const char *what, long lo, long hi) {
  char *end;
  long v = strtol(s, &end, 10);
  if (end == s || *end || v < lo || v > hi) {
    fprintf(stderr, "multirank_perf: %s '%s' is not a whole number in %ld..%ld\n", what, s, lo, hi);
    exit(2);
  }
  return v;
}

static double parseDouble(const char *s, const char *what) {
  char *end;
  double v = strtod(s, &end);
  if (end == s || *end || v < 0) {
    fprintf(stderr, "multirank_perf: %s '%s' is not a number of at least 0\n", what, s);
    exit(2);
  }
  return v;
}

static unsigned parseColls(const char *list) {
  if (strcmp(list, "all") == 0) return (1u << NCOLL) - 1;
  unsigned bits = 0;
  char *copy = strdup(list), *save = NULL;
  for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    int found = -1;
    for (int c = 0; c < NCOLL; c++)
      if (strcmp(tok, LABEL[c]) == 0 || strcasecmp(tok, NAME[c]) == 0) found = c;
    if (found < 0) {
      fprintf(stderr, "multirank_perf: --coll: '%s' is none of all-reduce, broadcast, all-gather, reduce-scatter,"
                      " reduce, gather, scatter, alltoall, sendrecv\n", tok);
      exit(2);
    }
    bits |= 1u << found;
  }
  free(copy);
  return bits;
}

static void parseArgs(int argc, char **argv) {
  opt = (Options) {.ranks = 0, .maxCtas = 0, .root = 0, .iters = 20, .batches = 20, .check = 1, .reps = 200,
                   .k = 200, .factor = 2, .minBytes = 8, .maxBytes = 1ull << 30, .checkMaxBytes = 64ull << 20,
                   .count = 256, .warmMs = 20, .warmFirstMs = 200, .measureMaxS = 2, .deadlineS = 0,
                   .hardLimitS = -1, .manyWarmMs = 300, .runSweep = 1, .runMany = 1, .colls = (1u << NCOLL) - 1};
  enum { REPS = 1000, MANY_WARM, HARD, NO_CHECK };
  static const struct option longs[] = {
      {"ranks", 1, 0, 'n'}, {"max-ctas", 1, 0, 'c'}, {"min", 1, 0, 'b'}, {"max", 1, 0, 'e'},
      {"factor", 1, 0, 'f'}, {"coll", 1, 0, 't'}, {"root", 1, 0, 'r'}, {"iters", 1, 0, 'i'},
      {"batches", 1, 0, 'B'}, {"measure-max", 1, 0, 'm'}, {"warmup-ms", 1, 0, 'w'},
      {"warmup-first-ms", 1, 0, 'W'}, {"check-max", 1, 0, 'C'}, {"no-check", 0, 0, NO_CHECK},
      {"many", 1, 0, 'k'}, {"reps", 1, 0, REPS}, {"many-warmup-ms", 1, 0, MANY_WARM}, {"parts", 1, 0, 'p'},
      {"deadline", 1, 0, 'd'}, {"hard-limit", 1, 0, HARD}, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
  int ch;
  while ((ch = getopt_long(argc, argv, "n:c:b:e:f:t:r:i:B:m:w:W:C:k:p:d:h", longs, NULL)) != -1) {
    switch (ch) {
      case 'n': opt.ranks = (int) parseLong(optarg, "--ranks", 1, MAX_RANKS); break;
      case 'c': opt.maxCtas = (int) parseLong(optarg, "--max-ctas", 0, 1024); break;
      case 'b': opt.minBytes = parseSize(optarg, "--min"); break;
      case 'e': opt.maxBytes = parseSize(optarg, "--max"); break;
      case 'f': opt.factor = parseLong(optarg, "--factor", 2, 1024); break;
      case 't': opt.colls = parseColls(optarg); break;
      case 'r': opt.root = (int) parseLong(optarg, "--root", 0, MAX_RANKS - 1); break;
      case 'i': opt.iters = (int) parseLong(optarg, "--iters", 1, 1000000); break;
      case 'B': opt.batches = (int) parseLong(optarg, "--batches", 1, 1000000); break;
      case 'm': opt.measureMaxS = parseDouble(optarg, "--measure-max"); break;
      case 'w': opt.warmMs = parseDouble(optarg, "--warmup-ms"); break;
      case 'W': opt.warmFirstMs = parseDouble(optarg, "--warmup-first-ms"); break;
      case 'C': opt.checkMaxBytes = parseSize(optarg, "--check-max"); break;
      case NO_CHECK: opt.check = 0; break;
      case 'k': {
        char *x = strchr(optarg, 'x');
        if (!x) {
          fprintf(stderr, "multirank_perf: --many '%s' is not KxCOUNT, such as 200x256\n", optarg);
          exit(2);
        }
        *x = 0;
        opt.k = (int) parseLong(optarg, "--many's K", 1, 1000000);
        opt.count = (size_t) parseLong(x + 1, "--many's COUNT", 1, LONG_MAX);
        break;
      }
      case REPS: opt.reps = (int) parseLong(optarg, "--reps", 1, 10000000); break;
      case MANY_WARM: opt.manyWarmMs = parseDouble(optarg, "--many-warmup-ms"); break;
      case 'p':
        opt.runSweep = strstr(optarg, "sweep") != NULL;
        opt.runMany = strstr(optarg, "many") != NULL;
        if (!opt.runSweep && !opt.runMany) {
          fprintf(stderr, "multirank_perf: --parts '%s' names neither sweep nor many\n", optarg);
          exit(2);
        }
        break;
      case 'd': opt.deadlineS = parseDouble(optarg, "--deadline"); break;
      case HARD: opt.hardLimitS = parseDouble(optarg, "--hard-limit"); break;
      case 'h': usage(0); break;
      default: usage(2);
    }
  }
  if (optind < argc) {
    fprintf(stderr, "multirank_perf: unexpected argument '%s'\n", argv[optind]);
    usage(2);
  }
  if (opt.ranks == 0) {
    fprintf(stderr, "multirank_perf: give the number of ranks, -n N\n");
    usage(2);
  }
  if (opt.root >= opt.ranks) {
    fprintf(stderr, "multirank_perf: --root %d is not a rank of %d\n", opt.root, opt.ranks);
    exit(2);
  }
  if (opt.minBytes > opt.maxBytes) {
    fprintf(stderr, "multirank_perf: --min %zu is larger than --max %zu\n", opt.minBytes, opt.maxBytes);
    exit(2);
  }
  if (opt.hardLimitS < 0) opt.hardLimitS = opt.deadlineS > 0 ? opt.deadlineS + 120 : 0;
}

int main(int argc, char **argv) {
  parseArgs(argc, argv);
  started = now_s();
  if (opt.hardLimitS > 0) {
    signal(SIGALRM, onAlarm);
    alarm((unsigned) (opt.hardLimitS + 0.999));
  }
  int nccl = 0, rt = 0, drv = 0;
  NCCLR(-1, NULL, ncclGetVersion(&nccl));
  CUDA(cudaRuntimeGetVersion(&rt));
  CUDA(cudaDriverGetVersion(&drv));
  const char *multi = getenv("NCCL_MULTI_RANK_GPU_ENABLE"), *envCtas = getenv("NCCL_MAX_CTAS");
  char ctas[48];
  if (opt.maxCtas > 0) snprintf(ctas, sizeof ctas, "%d (ncclConfig_t)", opt.maxCtas);
  else snprintf(ctas, sizeof ctas, "NCCL's default");
  printf("# multirank_perf: NCCL %d (header %d), CUDA runtime %d, driver %d; %d ranks, one thread each, all on"
         " device 0; maxCTAs %s; NCCL_MULTI_RANK_GPU_ENABLE=%s\n",
         nccl, NCCL_VERSION_CODE, rt, drv, opt.ranks, ctas, multi ? multi : "(unset)");
  if (envCtas) printf("#   note: NCCL_MAX_CTAS=%s is set: NCCL takes it over ncclConfig_t.maxCTAs\n", envCtas);
  if (opt.ranks > 1 && (!multi || strcmp(multi, "1") != 0))
    printf("#   note: NCCL refuses several ranks on one GPU unless NCCL_MULTI_RANK_GPU_ENABLE=1\n");
  fflush(stdout);
  CUDA(cudaSetDevice(0));
  NCCLR(-1, NULL, ncclGetUniqueId(&uid));
  pthread_barrier_init(&barrier, NULL, (unsigned) opt.ranks);
  pthread_t threads[MAX_RANKS];
  for (int r = 0; r < opt.ranks; r++) {
    ranks[r].rank = r;
    if (pthread_create(&threads[r], NULL, rankMain, &ranks[r]) != 0) fail(3, "cannot start the thread of rank %d", r);
  }
  for (int r = 0; r < opt.ranks; r++) pthread_join(threads[r], NULL);
  long long wrong = wrongTotal;
  printf("# multirank_perf: %d ranks, %d sweep rows%s, %lld wrong elements, %.1f s: %s\n", opt.ranks, rowsRun,
         stopped ? " (stopped at the deadline)" : "", wrong, now_s() - started, wrong ? "FAILED" : "ok");
  return wrong ? 1 : 0;
}
