#include "check.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int failures;
const char *current_test = "setup";

int finish(void) {
  if (failures) printf("%d check(s) failed\n", failures);
  return failures ? 1 : 0;
}

void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
  }
}

static void *trampoline(void *p) {
  Call *c = p;
  c->rc = c->fn(c->arg);
  __atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
  return NULL;
}

Call *call_start(int (*fn)(void *), void *arg) {
  Call *c = calloc(1, sizeof *c);
  c->fn = fn;
  c->arg = arg;
  pthread_create(&c->thread, NULL, trampoline, c);
  return c;
}

int call_returns_within(Call *c, int ms) {
  for (int waited = 0; waited < ms; waited += 5) {
    if (__atomic_load_n(&c->done, __ATOMIC_ACQUIRE)) return 1;
    sleep_ms(5);
  }
  return __atomic_load_n(&c->done, __ATOMIC_ACQUIRE);
}

int call_join(Call *c) {
  if (!call_returns_within(c, 20000)) {
    fprintf(stderr, "FAIL %s: a call did not return within 20 s; giving up\n", current_test);
    fflush(stderr);
    _Exit(2);
  }
  pthread_join(c->thread, NULL);
  int rc = c->rc;
  free(c);
  return rc;
}

/* ---------------------------------------------------------------- communicators */

void comms_make(comm_t *comms, int n, const int *devices) {
  ncclUniqueId id;
  OK(ncclGetUniqueId(&id));
  OK(ncclGroupStart());
  for (int r = 0; r < n; r++) {
    OK(cudaSetDevice(devices[r]));
    OK(ncclCommInitRank(&comms[r], n, id, r));
  }
  OK(ncclGroupEnd());
  OK(cudaSetDevice(0));
}

typedef struct InitArg {
  comm_t *out;
  int n, rank, device;
  ncclUniqueId id;
} InitArg;

static int init_one(void *p) {
  InitArg *a = p;
  cudaSetDevice(a->device);
  return ncclCommInitRank(a->out, a->n, a->id, a->rank);
}

void comms_make_threads(comm_t *comms, int n, const int *devices) {
  ncclUniqueId id;
  OK(ncclGetUniqueId(&id));
  InitArg *args = calloc((size_t)n, sizeof *args);
  Call **calls = calloc((size_t)n, sizeof *calls);
  for (int r = 0; r < n; r++) {
    args[r] = (InitArg){&comms[r], n, r, devices[r], id};
    calls[r] = call_start(init_one, &args[r]);
  }
  for (int r = 0; r < n; r++) OK(call_join(calls[r]));
  free(args);
  free(calls);
}

typedef struct ReduceArg {
  Gate *g;
  int rank;
  stream_t s;
} ReduceArg;

static int one_reduce(void *p) {
  ReduceArg *a = p;
  cudaSetDevice(a->g->device[a->rank]);
  return ncclAllReduce(a->g->buf[a->rank], a->g->buf[a->rank], 1, F32, SUM, a->g->comm[a->rank], a->s);
}

void gate_init(Gate *g, int d0, int d1) {
  int devices[2] = {d0, d1};
  g->device[0] = d0;
  g->device[1] = d1;
  comms_make(g->comm, 2, devices);
  OK(cudaSetDevice(d1));
  OK(cudaStreamCreateWithFlags(&g->other, NONBLOCKING));
  g->buf[1] = dev_alloc(4, 0);
  OK(cudaSetDevice(d0));
  g->buf[0] = dev_alloc(4, 0);
  /* a first collective on both ranks at once: NCCL connects them there (NCCL_RUNTIME_CONNECT), so that
     later ones return at once */
  stream_t s0;
  OK(cudaStreamCreateWithFlags(&s0, NONBLOCKING));
  ReduceArg a0 = {g, 0, s0}, a1 = {g, 1, g->other};
  Call *c1 = call_start(one_reduce, &a1);
  OK(one_reduce(&a0));
  OK(call_join(c1));
  OK(cudaStreamSynchronize(s0));
  OK(cudaStreamSynchronize(g->other));
  OK(cudaStreamDestroy(s0));
}

void gate_close(Gate *g, stream_t s) {
  OK(ncclAllReduce(g->buf[0], g->buf[0], 1, F32, SUM, g->comm[0], s));
}

void gate_open(Gate *g) {
  int d;
  OK(cudaGetDevice(&d));
  OK(cudaSetDevice(g->device[1]));
  OK(ncclAllReduce(g->buf[1], g->buf[1], 1, F32, SUM, g->comm[1], g->other));
  OK(cudaStreamSynchronize(g->other));
  OK(cudaSetDevice(d));
}

void gate_free(Gate *g) {
  OK(ncclCommDestroy(g->comm[0]));
  OK(ncclCommDestroy(g->comm[1]));
  OK(cudaStreamDestroy(g->other));
}

void *dev_alloc(size_t n, int v) {
  void *p = NULL;
  OK(cudaMalloc(&p, n));
  unsigned char *h = malloc(n);
  memset(h, v, n);
  dev_write(p, h, n);
  free(h);
  return p;
}

void dev_read(void *host, const void *dev, size_t n) {
  stream_t s;
  OK(cudaStreamCreateWithFlags(&s, NONBLOCKING));
  OK(cudaMemcpyAsync(host, dev, n, D2H, s)); /* returns once the copy completed */
  OK(cudaStreamDestroy(s));
}

void dev_write(void *dev, const void *host, size_t n) {
  stream_t s;
  OK(cudaStreamCreateWithFlags(&s, NONBLOCKING));
  OK(cudaMemcpyAsync(dev, host, n, H2D, s));
  OK(cudaStreamSynchronize(s));
  OK(cudaStreamDestroy(s));
}
