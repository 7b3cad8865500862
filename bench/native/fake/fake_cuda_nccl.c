/*
 * A stand-in for the CUDA runtime and NCCL on a machine without a GPU, for testing multirank_perf.c's own
 * logic (buffers, counts, in place, checks, groups, capture, the ranks' agreement, its output) on the CPU:
 * bench/native/fake/test.sh builds the program against the real cuda_runtime.h and nccl.h and links this
 * instead of libcudart and libnccl. It is no model of NCCL's speed: every call runs at once, on the host.
 *
 * Device memory is host memory. A collective is run by every rank's thread together: each publishes its
 * call, waits for the others, computes its own output into a temporary buffer from everyone's inputs,
 * waits again, and writes the output (so in-place calls read before anything is overwritten). Calls in a
 * group run at ncclGroupEnd, in order; calls on a capturing stream are recorded into the graph and run at
 * each cudaGraphLaunch. All ranks must make the same calls in the same order, as multirank_perf does.
 *
 * FAKE_NCCL_CORRUPT=<NCCL name, e.g. AllReduce, Gather> makes rank 0's output of that function wrong at
 * one element (every call), to show that the program's check fails.
 */
#define _GNU_SOURCE
#include <cuda_runtime.h>
#include <nccl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum Kind { K_AR, K_BC, K_RED, K_AG, K_RS, K_GA, K_SC, K_A2A, K_SEND, K_RECV };
static const char *KIND_NAME[] = {"AllReduce", "Broadcast", "Reduce", "AllGather", "ReduceScatter", "Gather",
                                  "Scatter", "AlltoAll", "Send", "Recv"};

/* The ranks of one communicator: the world's, or a split's (ncclCommSplit). */
typedef struct Group {
  pthread_barrier_t barrier;
  const struct Op *slot[64];
  const struct Op *sendbox[64];
  struct { int color, key; struct Group *made; } split[64]; /* ncclCommSplit's exchange */
} Group;

struct ncclComm {
  int rank, nranks;
  Group *g;
};

typedef struct Op {
  enum Kind kind;
  const float *send;
  float *recv;
  size_t count;
  int root; /* the root, or the peer of a send or receive */
  struct ncclComm *comm;
} Op;

typedef struct {
  Op *ops;
  int n, cap;
} OpList;

struct CUstream_st {
  int capturing;
  OpList captured;
};
struct CUgraph_st {
  OpList ops;
};
struct CUgraphExec_st {
  OpList ops;
};

static void push(OpList *l, Op op) {
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 16;
    l->ops = realloc(l->ops, sizeof(Op) * l->cap);
  }
  l->ops[l->n++] = op;
}

/* ---------------------------------------------------------------- the ranks */

static pthread_mutex_t initLock = PTHREAD_MUTEX_INITIALIZER;
static Group *world;
static int nranks;

static Group *newGroup(int n) {
  Group *g = calloc(1, sizeof(Group));
  pthread_barrier_init(&g->barrier, NULL, (unsigned) n);
  return g;
}

static float at(const Op *op, size_t i) { return op->send[i]; }

static void runOp(const Op *op) {
  int me = op->comm->rank, n = op->comm->nranks;
  Group *g = op->comm->g;
  const Op **slot = g->slot, **sendbox = g->sendbox;
  size_t c = op->count;
  if (op->kind == K_SEND) {
    sendbox[me] = op;
    pthread_barrier_wait(&g->barrier);
    pthread_barrier_wait(&g->barrier);
    return;
  }
  slot[me] = op;
  pthread_barrier_wait(&g->barrier);
  size_t outCount = 0;
  float *tmp = NULL;
  int writes = 1;
  switch (op->kind) {
    case K_AR: case K_BC: case K_RED: case K_RS: case K_SC: case K_RECV: outCount = c; break;
    case K_AG: case K_GA: case K_A2A: outCount = c * n; break;
    default: break;
  }
  tmp = malloc(sizeof(float) * (outCount ? outCount : 1));
  for (size_t i = 0; i < outCount; i++) {
    float v = 0;
    switch (op->kind) {
      case K_AR: for (int r = 0; r < n; r++) v += at(slot[r], i); break;
      case K_RED: for (int r = 0; r < n; r++) v += at(slot[r], i); break;
      case K_BC: v = at(slot[op->root], i); break;
      case K_AG: v = at(slot[i / c], i % c); break;
      case K_GA: v = at(slot[i / c], i % c); break;
      case K_RS: for (int r = 0; r < n; r++) v += at(slot[r], (size_t) me * c + i); break;
      case K_SC: v = at(slot[op->root], (size_t) me * c + i); break;
      case K_A2A: v = at(slot[i / c], (size_t) me * c + i % c); break;
      case K_RECV: {
        const Op *s = sendbox[op->root];
        if (!s || s->comm->rank != op->root || s->root != me || s->count != c) abort(); /* unmatched send */
        v = s->send[i];
        break;
      }
      default: break;
    }
    tmp[i] = v;
  }
  if ((op->kind == K_RED || op->kind == K_GA) && me != op->root) writes = 0; /* recvbuff unused off the root */
  const char *corrupt = getenv("FAKE_NCCL_CORRUPT");
  if (corrupt && strcmp(corrupt, KIND_NAME[op->kind]) == 0 && me == 0 && outCount) tmp[outCount - 1] += 1;
  pthread_barrier_wait(&g->barrier); /* everyone has read the inputs */
  if (writes) memcpy(op->recv, tmp, sizeof(float) * outCount);
  free(tmp);
}

static void runAll(const OpList *l) {
  for (int i = 0; i < l->n; i++) runOp(&l->ops[i]);
}

/* ---------------------------------------------------------------- NCCL */

static __thread int groupDepth;
static __thread OpList group;
static __thread cudaStream_t groupStream;

static void dispatch(const OpList *l, cudaStream_t s) {
  if (s->capturing) {
    for (int i = 0; i < l->n; i++) push(&s->captured, l->ops[i]);
  } else {
    runAll(l);
  }
}

static ncclResult_t submit(enum Kind k, const void *send, void *recv, size_t count, int root, ncclComm_t comm,
                           cudaStream_t s) {
  Op op = {k, send, recv, count, root, comm};
  if (groupDepth > 0) {
    push(&group, op);
    groupStream = s;
    return ncclSuccess;
  }
  OpList one = {&op, 1, 1};
  dispatch(&one, s);
  return ncclSuccess;
}

ncclResult_t ncclGetVersion(int *version) {
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}
ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
  memset(id, 0, sizeof *id);
  return ncclSuccess;
}
const char *ncclGetErrorString(ncclResult_t r) { return r == ncclSuccess ? "no error" : "fake NCCL error"; }
const char *ncclGetLastError(ncclComm_t comm) {
  (void) comm;
  return "";
}
ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int n, ncclUniqueId id, int rank, ncclConfig_t *config) {
  (void) id;
  (void) config;
  pthread_mutex_lock(&initLock);
  if (nranks == 0) {
    nranks = n;
    world = newGroup(n);
  }
  pthread_mutex_unlock(&initLock);
  if (n != nranks || rank < 0 || rank >= n) return ncclInvalidArgument;
  *comm = calloc(1, sizeof(struct ncclComm));
  (*comm)->rank = rank;
  (*comm)->nranks = n;
  (*comm)->g = world;
  return ncclSuccess;
}
/* Every rank of comm calls it: the ranks of one color, ordered by key then rank, make a new group. */
ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm, ncclConfig_t *config) {
  (void) config;
  Group *g = comm->g;
  int me = comm->rank, n = comm->nranks, rank = 0, size = 0, leader = -1;
  g->split[me].color = color;
  g->split[me].key = key;
  pthread_barrier_wait(&g->barrier);
  for (int r = 0; r < n; r++) {
    if (g->split[r].color != color) continue;
    if (leader < 0) leader = r;
    size++;
    if (g->split[r].key < key || (g->split[r].key == key && r < me)) rank++;
  }
  if (me == leader) g->split[me].made = newGroup(size);
  pthread_barrier_wait(&g->barrier);
  *newcomm = calloc(1, sizeof(struct ncclComm));
  (*newcomm)->rank = rank;
  (*newcomm)->nranks = size;
  (*newcomm)->g = g->split[leader].made;
  pthread_barrier_wait(&g->barrier); /* everyone has read the exchange before a next split writes it */
  return ncclSuccess;
}
ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  free(comm);
  return ncclSuccess;
}
ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *e) {
  (void) comm;
  *e = ncclSuccess;
  return ncclSuccess;
}
ncclResult_t ncclGroupStart(void) {
  groupDepth++;
  return ncclSuccess;
}
ncclResult_t ncclGroupEnd(void) {
  if (--groupDepth == 0 && group.n > 0) {
    dispatch(&group, groupStream);
    group.n = 0;
  }
  return ncclSuccess;
}
ncclResult_t ncclAllReduce(const void *s, void *r, size_t c, ncclDataType_t t, ncclRedOp_t o, ncclComm_t comm,
                           cudaStream_t st) {
  (void) t;
  (void) o;
  return submit(K_AR, s, r, c, 0, comm, st);
}
ncclResult_t ncclBroadcast(const void *s, void *r, size_t c, ncclDataType_t t, int root, ncclComm_t comm,
                           cudaStream_t st) {
  (void) t;
  return submit(K_BC, s, r, c, root, comm, st);
}
ncclResult_t ncclReduce(const void *s, void *r, size_t c, ncclDataType_t t, ncclRedOp_t o, int root, ncclComm_t comm,
                        cudaStream_t st) {
  (void) t;
  (void) o;
  return submit(K_RED, s, r, c, root, comm, st);
}
ncclResult_t ncclAllGather(const void *s, void *r, size_t c, ncclDataType_t t, ncclComm_t comm, cudaStream_t st) {
  (void) t;
  return submit(K_AG, s, r, c, 0, comm, st);
}
ncclResult_t ncclReduceScatter(const void *s, void *r, size_t c, ncclDataType_t t, ncclRedOp_t o, ncclComm_t comm,
                               cudaStream_t st) {
  (void) t;
  (void) o;
  return submit(K_RS, s, r, c, 0, comm, st);
}
ncclResult_t ncclAlltoAll(const void *s, void *r, size_t c, ncclDataType_t t, ncclComm_t comm, cudaStream_t st) {
  (void) t;
  return submit(K_A2A, s, r, c, 0, comm, st);
}
ncclResult_t ncclGather(const void *s, void *r, size_t c, ncclDataType_t t, int root, ncclComm_t comm,
                        cudaStream_t st) {
  (void) t;
  return submit(K_GA, s, r, c, root, comm, st);
}
ncclResult_t ncclScatter(const void *s, void *r, size_t c, ncclDataType_t t, int root, ncclComm_t comm,
                         cudaStream_t st) {
  (void) t;
  return submit(K_SC, s, r, c, root, comm, st);
}
ncclResult_t ncclSend(const void *s, size_t c, ncclDataType_t t, int peer, ncclComm_t comm, cudaStream_t st) {
  (void) t;
  return submit(K_SEND, s, NULL, c, peer, comm, st);
}
ncclResult_t ncclRecv(void *r, size_t c, ncclDataType_t t, int peer, ncclComm_t comm, cudaStream_t st) {
  (void) t;
  return submit(K_RECV, NULL, r, c, peer, comm, st);
}

/* ---------------------------------------------------------------- CUDA */

cudaError_t cudaSetDevice(int d) { return d == 0 ? cudaSuccess : cudaErrorInvalidDevice; }
const char *cudaGetErrorString(cudaError_t e) { return e == cudaSuccess ? "no error" : "fake CUDA error"; }
cudaError_t cudaRuntimeGetVersion(int *v) {
  *v = 13000;
  return cudaSuccess;
}
cudaError_t cudaDriverGetVersion(int *v) {
  *v = 13000;
  return cudaSuccess;
}
cudaError_t cudaMalloc(void **p, size_t n) {
  *p = aligned_alloc(256, (n + 255) / 256 * 256);
  return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
cudaError_t cudaFree(void *p) {
  free(p);
  return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t s) {
  if (s->capturing) return cudaErrorStreamCaptureUnsupported;
  memset(p, v, n);
  return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void *d, const void *src, size_t n, enum cudaMemcpyKind k, cudaStream_t s) {
  (void) k;
  if (s->capturing) return cudaErrorStreamCaptureUnsupported;
  memcpy(d, src, n);
  return cudaSuccess;
}
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags) {
  (void) flags;
  *s = calloc(1, sizeof(struct CUstream_st));
  return cudaSuccess;
}
cudaError_t cudaStreamDestroy(cudaStream_t s) {
  free(s->captured.ops);
  free(s);
  return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t s) {
  (void) s;
  return cudaSuccess;
}
cudaError_t cudaMallocHost(void **p, size_t n) { return cudaMalloc(p, n); }
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int flags) {
  (void) flags;
  *e = (cudaEvent_t) calloc(1, 1);
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
  (void) e;
  return s->capturing ? cudaErrorStreamCaptureUnsupported : cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t e) {
  (void) e;
  return cudaSuccess;
}
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int flags) {
  (void) s;
  (void) e;
  (void) flags;
  return cudaSuccess;
}
cudaError_t cudaStreamQuery(cudaStream_t s) {
  (void) s;
  return cudaSuccess;
}
cudaError_t cudaStreamBeginCapture(cudaStream_t s, enum cudaStreamCaptureMode mode) {
  (void) mode;
  if (s->capturing) return cudaErrorIllegalState;
  s->capturing = 1;
  s->captured.n = 0;
  return cudaSuccess;
}
cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *g) {
  if (!s->capturing) return cudaErrorIllegalState;
  *g = calloc(1, sizeof(struct CUgraph_st));
  for (int i = 0; i < s->captured.n; i++) push(&(*g)->ops, s->captured.ops[i]);
  s->capturing = 0;
  return cudaSuccess;
}
cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *e, cudaGraph_t g, unsigned long long flags) {
  (void) flags;
  *e = calloc(1, sizeof(struct CUgraphExec_st));
  for (int i = 0; i < g->ops.n; i++) push(&(*e)->ops, g->ops.ops[i]);
  return cudaSuccess;
}
cudaError_t cudaGraphDestroy(cudaGraph_t g) {
  free(g->ops.ops);
  free(g);
  return cudaSuccess;
}
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t e) {
  free(e->ops.ops);
  free(e);
  return cudaSuccess;
}
cudaError_t cudaGraphLaunch(cudaGraphExec_t e, cudaStream_t s) {
  if (s->capturing) return cudaErrorIllegalState;
  runAll(&e->ops);
  return cudaSuccess;
}
