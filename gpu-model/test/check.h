/*
 * The model's own tests: the API they call (declared here with the model's ABI types: no CUDA or NCCL
 * header), checks, and two tools that keep the tests deterministic:
 *
 *  - a gate: a collective of a two-rank communicator whose second rank is held back by the test. Enqueued
 *    on a stream, it holds that stream until the test opens the gate, however long the test takes; so a
 *    test can say "this work cannot have run yet" without timing anything.
 *  - a call in a thread of its own, to show that it blocks (it cannot return while the gate is closed) and
 *    that it returns once the gate opens. Only a broken model makes such a test wait for its bound.
 */
#ifndef CHECK_H
#define CHECK_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef uintptr_t stream_t;
typedef uintptr_t event_t;
typedef uintptr_t graph_t;
typedef uintptr_t exec_t;
typedef struct ncclComm *comm_t;
typedef struct { char internal[128]; } ncclUniqueId;

/* CUDA */
int cudaGetDeviceCount(int *);
int cudaSetDevice(int);
int cudaGetDevice(int *);
int cudaDeviceGetPCIBusId(char *, int, int);
int cudaDriverGetVersion(int *);
int cudaRuntimeGetVersion(int *);
int cudaGetLastError(void);
const char *cudaGetErrorName(int);
const char *cudaGetErrorString(int);
int cudaMalloc(void **, size_t);
int cudaFree(void *);
int cudaMallocAsync(void **, size_t, stream_t);
int cudaFreeAsync(void *, stream_t);
int cudaMemGetInfo(size_t *, size_t *);
int cudaMemcpyAsync(void *, const void *, size_t, int, stream_t);
int cudaMemcpy(void *, const void *, size_t, int);
int cudaMemsetAsync(void *, int, size_t, stream_t);
int cudaMemset(void *, int, size_t);
int cudaStreamCreateWithFlags(stream_t *, unsigned);
int cudaStreamDestroy(stream_t);
int cudaStreamSynchronize(stream_t);
int cudaStreamQuery(stream_t);
int cudaStreamWaitEvent(stream_t, event_t, unsigned);
int cudaEventCreate(event_t *);
int cudaEventCreateWithFlags(event_t *, unsigned);
int cudaEventRecord(event_t, stream_t);
int cudaEventQuery(event_t);
int cudaEventSynchronize(event_t);
int cudaEventElapsedTime(float *, event_t, event_t);
int cudaEventDestroy(event_t);
int cudaStreamBeginCapture(stream_t, int);
int cudaStreamEndCapture(stream_t, graph_t *);
int cudaStreamIsCapturing(stream_t, int *);
int cudaGraphInstantiateWithFlags(exec_t *, graph_t, unsigned long long);
int cudaGraphLaunch(exec_t, stream_t);
int cudaGraphExecDestroy(exec_t);
int cudaGraphDestroy(graph_t);

/* NCCL */
int ncclGetVersion(int *);
const char *ncclGetErrorString(int);
const char *ncclGetLastError(comm_t);
int ncclGetUniqueId(ncclUniqueId *);
int ncclCommInitRank(comm_t *, int, ncclUniqueId, int);
int ncclCommInitRankConfig(comm_t *, int, ncclUniqueId, int, void *);
int ncclCommSplit(comm_t, int, int, comm_t *, void *);
int ncclCommDestroy(comm_t);
int ncclCommFinalize(comm_t);
int ncclCommAbort(comm_t);
int ncclCommGetAsyncError(comm_t, int *);
int ncclCommCount(comm_t, int *);
int ncclCommCuDevice(comm_t, int *);
int ncclCommUserRank(comm_t, int *);
int ncclGroupStart(void);
int ncclGroupEnd(void);
int ncclAllReduce(const void *, void *, size_t, int, int, comm_t, stream_t);
int ncclBroadcast(const void *, void *, size_t, int, int, comm_t, stream_t);
int ncclReduce(const void *, void *, size_t, int, int, int, comm_t, stream_t);
int ncclAllGather(const void *, void *, size_t, int, comm_t, stream_t);
int ncclReduceScatter(const void *, void *, size_t, int, int, comm_t, stream_t);
int ncclGather(const void *, void *, size_t, int, int, comm_t, stream_t);
int ncclScatter(const void *, void *, size_t, int, int, comm_t, stream_t);
int ncclAlltoAll(const void *, void *, size_t, int, comm_t, stream_t);
int ncclSend(const void *, size_t, int, int, comm_t, stream_t);
int ncclRecv(void *, size_t, int, int, comm_t, stream_t);

enum { H2D = 1, D2H = 2, D2D = 3 };
enum { NONBLOCKING = 1 };
enum { I8 = 0, U8 = 1, I32 = 2, U32 = 3, I64 = 4, U64 = 5, F16 = 6, F32 = 7, F64 = 8, BF16 = 9, E4M3 = 10, E5M2 = 11 };
enum { SUM = 0, PROD = 1, MAX = 2, MIN = 3, AVG = 4 };

/* ---------------------------------------------------------------- checks */

extern int failures;
extern const char *current_test;

#define CHECK(cond)                                                                                          \
  do {                                                                                                       \
    if (!(cond)) {                                                                                           \
      failures++;                                                                                            \
      fprintf(stderr, "FAIL %s (%s:%d): %s\n", current_test, __FILE__, __LINE__, #cond);                     \
    }                                                                                                        \
  } while (0)

#define EQ(a, b)                                                                                             \
  do {                                                                                                       \
    long long a_ = (long long)(a), b_ = (long long)(b);                                                      \
    if (a_ != b_) {                                                                                          \
      failures++;                                                                                            \
      fprintf(stderr, "FAIL %s (%s:%d): %s is %lld, expected %s = %lld\n", current_test, __FILE__, __LINE__, \
              #a, a_, #b, b_);                                                                               \
    }                                                                                                        \
  } while (0)

#define OK(call) EQ((call), 0)

/* Runs one test function, naming it in failures. */
#define TEST(fn)                                                                                             \
  do {                                                                                                       \
    current_test = #fn;                                                                                      \
    int before_ = failures;                                                                                  \
    fn();                                                                                                    \
    printf("%s %s\n", failures == before_ ? "ok  " : "FAIL", #fn);                                           \
    fflush(stdout);                                                                                          \
  } while (0)

/* Ends main: 0 when every check held. */
int finish(void);

/* ---------------------------------------------------------------- threads */

typedef struct Call {
  pthread_t thread;
  int (*fn)(void *);
  void *arg;
  int rc;
  volatile int done;
} Call;

/* Starts fn(arg) on a thread of its own. */
Call *call_start(int (*fn)(void *), void *arg);
/* Whether it returned within ms (then its result is in rc). */
int call_returns_within(Call *c, int ms);
/* Waits for it (at most 20 s: beyond that the model is broken), returns its result. */
int call_join(Call *c);

void sleep_ms(int ms);

/* ---------------------------------------------------------------- communicators and the gate */

/* n communicators of one clique, made by this thread in one group: rank r on device devices[r]. */
void comms_make(comm_t *comms, int n, const int *devices);
/* The same with one thread per rank (ncclCommInitRank without a group). */
void comms_make_threads(comm_t *comms, int n, const int *devices);

typedef struct Gate {
  comm_t comm[2];
  void *buf[2];
  stream_t other; /* rank 1's stream */
  int device[2];
} Gate;

/* A gate whose holding rank is on device d0 and whose opening rank is on device d1 (d1 may equal d0 where
   NCCL_MULTI_RANK_GPU_ENABLE is set). */
void gate_init(Gate *g, int d0, int d1);
/* Holds stream s (of device d0) until gate_open. */
void gate_close(Gate *g, stream_t s);
void gate_open(Gate *g);
void gate_free(Gate *g);

/* Device memory of n bytes filled with byte v (through a synchronous copy). */
void *dev_alloc(size_t n, int v);
/* Reads n bytes of device memory into host memory, through a stream of its own (non-blocking). */
void dev_read(void *host, const void *dev, size_t n);
void dev_write(void *dev, const void *host, size_t n);

#endif
