/*
 * The CPU model of the CUDA runtime and NCCL: shared declarations. See gpu-model/README.md for what is
 * modelled, why, and what is not.
 *
 * ABI: no CUDA or NCCL header is used. cudaError_t, ncclResult_t and the enums are ints; every handle
 * (cudaStream_t, cudaEvent_t, cudaGraph_t, cudaGraphExec_t, ncclComm_t) is an opaque pointer to a struct
 * of this model; ncclUniqueId is 128 bytes passed by value; ncclConfig_t is read field by field at nccl.h's
 * offsets (model_config_read in nccl.c).
 *
 * Concurrency: one mutex (g.mu) guards all model state; one condition variable (g.cv) is broadcast on every
 * change that a waiter may be waiting for (work completed, a rank arrived, an abort). Stream workers sleep on
 * their stream's own condition variable while their queue is empty. Work itself (copies, reductions) runs
 * without the lock. Handles are never freed, only marked dead (a use after destroy returns an error
 * instead of reading freed memory), which also keeps (stream, sequence) dependencies valid forever.
 */
#ifndef GPU_MODEL_H
#define GPU_MODEL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define EXPORT __attribute__((visibility("default")))

/* ---------------------------------------------------------------- CUDA's codes and constants (CUDA 13) */

enum {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInitializationError = 3,
  cudaErrorInsufficientDriver = 35,
  cudaErrorNoDevice = 100,
  cudaErrorInvalidDevice = 101,
  cudaErrorInvalidResourceHandle = 400,
  cudaErrorIllegalState = 401,
  cudaErrorNotReady = 600,
  cudaErrorIllegalAddress = 700,
  cudaErrorNotSupported = 801,
  cudaErrorStreamCaptureUnsupported = 900,
  cudaErrorStreamCaptureInvalidated = 901,
  cudaErrorStreamCaptureMerge = 902,
  cudaErrorStreamCaptureUnmatched = 903,
  cudaErrorStreamCaptureUnjoined = 904,
  cudaErrorStreamCaptureIsolation = 905,
  cudaErrorStreamCaptureImplicit = 906,
  cudaErrorCapturedEvent = 907,
  cudaErrorStreamCaptureWrongThread = 908,
  cudaErrorUnknown = 999,
};

#define CUDA_STREAM_NON_BLOCKING 0x1u
#define CUDA_EVENT_BLOCKING_SYNC 0x1u
#define CUDA_EVENT_DISABLE_TIMING 0x2u
#define CUDA_EVENT_INTERPROCESS 0x4u
#define CUDA_EVENT_WAIT_EXTERNAL 0x1u
#define CUDA_STREAM_LEGACY ((uintptr_t)0x1)
#define CUDA_STREAM_PER_THREAD ((uintptr_t)0x2)

enum { MEMCPY_H2H = 0, MEMCPY_H2D = 1, MEMCPY_D2H = 2, MEMCPY_D2D = 3, MEMCPY_DEFAULT = 4 };
enum { CAPTURE_MODE_GLOBAL = 0, CAPTURE_MODE_THREAD_LOCAL = 1, CAPTURE_MODE_RELAXED = 2 };
enum { CAPTURE_STATUS_NONE = 0, CAPTURE_STATUS_ACTIVE = 1, CAPTURE_STATUS_INVALIDATED = 2 };

/* ---------------------------------------------------------------- NCCL's codes and constants (nccl.h) */

enum {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
  ncclInProgress = 7,
  ncclTimeout = 8,
  ncclNumResults = 9,
};

enum { ncclSum = 0, ncclProd = 1, ncclMax = 2, ncclMin = 3, ncclAvg = 4, ncclNumOps = 5 };
enum {
  ncclInt8 = 0, ncclUint8 = 1, ncclInt32 = 2, ncclUint32 = 3, ncclInt64 = 4, ncclUint64 = 5,
  ncclFloat16 = 6, ncclFloat32 = 7, ncclFloat64 = 8, ncclBfloat16 = 9, ncclFloat8e4m3 = 10,
  ncclFloat8e5m2 = 11, ncclNumTypes = 12,
};
#define NCCL_UNIQUE_ID_BYTES 128
#define NCCL_SPLIT_NOCOLOR (-1)
#define NCCL_CONFIG_UNDEF_INT ((int)0x80000000)
#define NCCL_API_MAGIC 0xcafebeefu

typedef struct { char internal[NCCL_UNIQUE_ID_BYTES]; } ncclUniqueId;

/* The NCCL calls a stream can carry. */
enum Kind {
  K_ALLREDUCE, K_BROADCAST, K_REDUCE, K_ALLGATHER, K_REDUCESCATTER, K_GATHER, K_SCATTER, K_ALLTOALL,
  K_SEND, K_RECV, K_NUM
};
extern const char *const KIND_NAME[K_NUM];

/* ---------------------------------------------------------------- model state */

#define MAX_DEVICES 64
#define MAGIC_STREAM 0x5354524du
#define MAGIC_EVENT 0x45564e54u
#define MAGIC_GRAPH 0x47524148u
#define MAGIC_EXEC 0x47455843u
#define MAGIC_COMM 0x434f4d4du

struct Stream;
struct Work;
struct Capture;
struct ncclComm;

/* Work waits for the work of sequence number seq of stream s (1-based; seq 0 is "nothing"). */
typedef struct Dep {
  struct Stream *s;
  uint64_t seq;
} Dep;

typedef struct DepList {
  Dep *v;
  int n, cap;
} DepList;

enum StreamKind { STREAM_USER, STREAM_LEGACY, STREAM_PER_THREAD };

typedef struct Stream {
  uint32_t magic;
  int device;
  unsigned flags;
  enum StreamKind kind;
  int destroyed;
  int id; /* for traces */
  pthread_cond_t wake;
  struct Work *head, *tail;
  uint64_t enqueued, completed;
  struct Stream *nextOfDevice;
  /* capture: the capture sequence this stream is part of (NULL: none), and the nodes the next node
     captured on this stream depends on */
  struct Capture *cap;
  int *front;
  int nfront, capFront;
} Stream;

/* One device's memory accounting and streams (one CUDA context per device and process: the runtime API's
   primary context). */
typedef struct Device {
  size_t total, used;
  Stream *streams; /* every stream of the device, dead ones included */
  Stream *legacy;
  int sticky; /* a sticky error (cudaErrorIllegalAddress): the context is unusable */
  DepList barrier; /* cudaMalloc's "the GPU synchronizes across all streams": later work waits for these */
  uint64_t allocations;
} Device;

/* Knobs (environment variables, read once, at the first call into the model). */
typedef struct Knobs {
  int devices;
  size_t deviceMemory;
  int ncclVersion;
  long delayUs;     /* every stream operation starts this late */
  long copyDelayUs; /* a host-to-device copy (staged at the call) lands this much later in its stream */
  long failAllocAt; /* the n-th allocation (1-based) fails; 0: never */
  long asyncErrorAfter; int asyncErrorRank; int asyncErrorCode; /* -1: off */
  long absentAfter; int absentRank;                             /* -1: off */
  int mutateKind; int mutateRank; long mutateIndex;             /* -1: off */
  int mallocBarrier;
  int trace;
  int fill; /* byte new allocations are filled with, -1: left as the host gives them (zero) */
} Knobs;

typedef struct Global {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  Knobs k;
  Device dev[MAX_DEVICES];
  int nextStreamId;
  uint64_t allocCount;
  /* NCCL's environment, read at the first communicator as NCCL_PARAM does */
  int ncclEnvRead;
  int multiRankGpu;
  int runtimeConnect;
  int commBlocking;
  char lastError[1024]; /* ncclGetLastError */
  struct Capture *captures; /* active capture sequences */
} Global;

extern Global g;

/* ---------------------------------------------------------------- core.c */

void model_init(void);
void lock(void);
void unlock(void);
void wait_cv(void);
void broadcast(void);
double now_ms(void);
void trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int current_device(void);
int cuda_return(int code); /* records the thread's last error */
void nccl_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void deplist_add(DepList *l, Stream *s, uint64_t seq);
void deplist_free(DepList *l);
long env_long(const char *name, long dflt);
size_t env_size(const char *name, size_t dflt);

/* ---------------------------------------------------------------- memory (stream.c) */

typedef struct Alloc {
  uintptr_t base;
  size_t size;
  int device;
  int freeing; /* cudaFreeAsync enqueued, or freed */
  int dead;    /* freed: no work may touch it */
  int pins;    /* work using it right now; unmapped once dead and unpinned */
  void *map;
  size_t mapped;
} Alloc;

Alloc *alloc_find(uintptr_t p); /* the live allocation holding p, or NULL; lock held */
/* Pins [p, p + n) for work that is about to touch it: 0 when it lies in one live allocation, else -1. */
int pin_range(const void *p, size_t n, Alloc **out);
void unpin(Alloc *a);
void device_fault(int device, const char *what);

/* ---------------------------------------------------------------- streams and work (stream.c) */

enum WorkKind {
  W_NOP, W_EVENT, W_H2D, W_D2H, W_D2D, W_MEMSET, W_FREE, W_NCCL, W_GRAPH, W_FN
};

struct NcclBatch;
struct GraphLaunch;

typedef struct Work {
  struct Work *next;
  uint64_t seq;
  enum WorkKind kind;
  DepList deps;
  int device;
  union {
    struct { void *dst; const void *src; size_t n; void *staging; } copy;
    struct { void *dst; int value; size_t n; } memset;
    struct { struct Event *ev; uint64_t gen; } event;
    struct { Alloc *a; } free;
    struct NcclBatch *batch;
    struct GraphLaunch *launch;
    struct { void (*run)(void *arg, int device); void *arg; } fn; /* a kernel of another library (cublas.c) */
  } u;
} Work;

typedef struct Event {
  uint32_t magic;
  unsigned flags;
  int destroyed;
  int device;
  Stream *s; /* the stream of the last record outside capture; NULL: never recorded */
  uint64_t seq;
  uint64_t gen;
  double stamp;
  uint64_t stampGen;
  struct Capture *cap; /* recorded in this capture sequence (and not since outside it) */
  int *front;
  int nfront;
} Event;

Work *work_new(enum WorkKind kind);
void work_free(Work *w);
int stream_resolve(uintptr_t handle, Stream **out); /* lock held; cudaError_t */
void stream_enqueue(Stream *s, Work *w);            /* lock held */
int stream_done(Stream *s, uint64_t seq);
int deps_done(const DepList *l);
void wait_stream(Stream *s, uint64_t seq); /* lock held */
void device_synchronize_host(int device);  /* lock held: waits for all work enqueued so far */
int legacy_capture_conflict(Stream *s);    /* lock held: 906 where s is the legacy stream and a blocking
                                              stream of its device captures (invalidates it) */
void run_copy(Work *w);
void run_memset(Work *w);

/* ---------------------------------------------------------------- capture and graphs (graph.c) */

enum NodeKind { N_D2D, N_MEMSET, N_NCCL, N_EXTWAIT };

struct NcclOp;

typedef struct Node {
  enum NodeKind kind;
  int *deps;
  int ndeps;
  union {
    struct { void *dst; const void *src; size_t n; } copy;
    struct { void *dst; int value; size_t n; } memset;
    struct { struct ncclComm *comm; struct NcclOp *ops; int nops; } nccl;
    struct { Event *ev; } ext;
  } u;
} Node;

typedef struct NodeList {
  Node *v;
  int n, cap;
} NodeList;

typedef struct Capture {
  struct Capture *next;
  int mode;
  pthread_t owner;
  Stream *origin;
  int invalidated;
  int device;
  NodeList nodes;
  Stream **streams; /* every stream joined to it, origin first */
  int nstreams, capStreams;
} Capture;

/* The streams' captures: whether an unsafe call (cudaMalloc, cudaFree) from this thread is prohibited, and
   if so the capture it invalidates. Lock held. */
Capture *capture_forbidding_unsafe(void);
void capture_invalidate(Capture *c);
/* Adds a node to s's capture; returns 0 or a cudaError_t (901 where the capture was invalidated). */
int capture_add(Stream *s, Node *node);
void graph_run_launch(Work *w);
void node_free(Node *n);

/* ---------------------------------------------------------------- NCCL (nccl.c) */

typedef struct NcclOp {
  enum Kind kind;
  const void *send;
  void *recv;
  size_t count;
  int dtype;
  int op;
  int root; /* root, or the peer of a send or receive */
  struct ncclComm *comm;
  Stream *stream;
} NcclOp;

typedef struct NcclBatch {
  struct ncclComm *comm;
  NcclOp *ops;
  int nops;
  uint64_t *seq; /* per op: the collective's sequence on the communicator, or the transfer's on its pair */
  int graphOwned; /* ops belong to a graph node (not freed with the batch) */
} NcclBatch;

void nccl_run_batch(NcclBatch *b); /* on a stream's worker, without the lock */
void nccl_batch_free(NcclBatch *b);
/* A graph launch's NCCL node: gives it its sequence numbers in host order. Lock held. */
NcclBatch *nccl_batch_for_launch(struct ncclComm *comm, NcclOp *ops, int nops, Dep *after);
void nccl_comm_graph_ref(struct ncclComm *c, int delta); /* lock held */
int nccl_comm_live(struct ncclComm *c);
void nccl_comm_set_last(struct ncclComm *c, Stream *s, uint64_t seq); /* lock held */

/* exported functions the model calls itself */
const char *cudaGetErrorString(int code);

/* ---------------------------------------------------------------- reductions (reduce.c) */

size_t dtype_size(int dtype);
int dtype_is_float(int dtype);
/* out[i] = op over inputs[0..n)[i], in rank order, rounded as NCCL rounds (see reduce.c). */
void reduce_elems(int dtype, int op, int nranks, const void *const *inputs, void *out, size_t count);
void mutate_elem(int dtype, void *elem);
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);
float bf16_to_float(uint16_t b);
uint16_t float_to_bf16(float f);
float fp8_to_float(uint8_t v, int e5m2);
uint8_t float_to_fp8(float f, int e5m2);

#endif
