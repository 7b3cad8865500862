/* Rule 7, faults on demand, one knob a run; and rule 6, the devices. */
/* env: COMMPLAN_MODEL_DEVICES=3 */
/* env: COMMPLAN_MODEL_DEVICES=0 */
/* env: COMMPLAN_MODEL_DEVICES=2 COMMPLAN_MODEL_FAIL_ALLOC=3 */
/* env: COMMPLAN_MODEL_DEVICES=2 COMMPLAN_MODEL_ASYNC_ERROR=2:1 */
/* env: COMMPLAN_MODEL_DEVICES=2 COMMPLAN_MODEL_ABSENT=1:2 */
/* env: COMMPLAN_MODEL_DEVICES=2 COMMPLAN_MODEL_MUTATE=AllReduce:1:2 */
/* env: COMMPLAN_MODEL_DEVICES=2 COMMPLAN_MODEL_MUTATE=Send:0:5 */
/* env: COMMPLAN_MODEL_DEVICES=2 COMMPLAN_MODEL_COPY_DELAY_US=1000000 */
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int knob(const char *name) {
  return getenv(name) != NULL;
}

static void devices_as_configured(void) {
  int n = -1, d = -1;
  OK(cudaGetDeviceCount(&n));
  EQ(n, 3);
  OK(cudaSetDevice(2));
  OK(cudaGetDevice(&d));
  EQ(d, 2);
  EQ(cudaSetDevice(3), 101); /* cudaErrorInvalidDevice */
  CHECK(strcmp(cudaGetErrorName(101), "cudaErrorInvalidDevice") == 0);
  CHECK(strcmp(cudaGetErrorString(101), "invalid device ordinal") == 0);
  EQ(cudaGetLastError(), 101);
  EQ(cudaGetLastError(), 0);
  char bus[32];
  OK(cudaDeviceGetPCIBusId(bus, sizeof bus, 1));
  CHECK(strcmp(bus, "0000:1e:00.0") == 0);
  int v;
  OK(cudaDriverGetVersion(&v));
  EQ(v, 13000);
  OK(cudaRuntimeGetVersion(&v));
  EQ(v, 13000);
  OK(cudaSetDevice(0));
}

static void no_device(void) {
  int n = -1;
  EQ(cudaGetDeviceCount(&n), 100); /* cudaErrorNoDevice */
  EQ(n, 0);
  EQ(cudaSetDevice(0), 100);
  ncclUniqueId id;
  OK(ncclGetUniqueId(&id));
  comm_t c;
  EQ(ncclCommInitRank(&c, 1, id, 0), 1); /* ncclUnhandledCudaError */
}

static void the_nth_allocation_fails(void) {
  void *p[4] = {NULL};
  stream_t s;
  OK(cudaStreamCreateWithFlags(&s, NONBLOCKING));
  OK(cudaMalloc(&p[0], 16));
  OK(cudaMallocAsync(&p[1], 16, s));
  EQ(cudaMallocAsync(&p[2], 16, s), 2); /* the third */
  OK(cudaMalloc(&p[3], 16));
  OK(cudaFree(p[0]));
  OK(cudaFreeAsync(p[1], s));
  OK(cudaFree(p[3]));
  OK(cudaStreamDestroy(s));
}

typedef struct Rank {
  comm_t comm;
  stream_t s;
  float *buf;
  int rank;
} Rank;

static Rank ranks[2];

static void ranks_make(void) {
  comm_t comms[2];
  int dev[2] = {0, 1};
  comms_make(comms, 2, dev);
  for (int r = 0; r < 2; r++) {
    OK(cudaSetDevice(r));
    ranks[r] = (Rank){comms[r], 0, NULL, r};
    OK(cudaStreamCreateWithFlags(&ranks[r].s, NONBLOCKING));
    float h[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    OK(cudaMalloc((void **)&ranks[r].buf, sizeof h));
    dev_write(ranks[r].buf, h, sizeof h);
  }
  OK(cudaSetDevice(0));
}

static int allreduce(void *p) {
  Rank *r = p;
  cudaSetDevice(r->rank);
  return ncclAllReduce(r->buf, r->buf, 8, F32, SUM, r->comm, r->s);
}

/* Both ranks issue one all-reduce each, from their own threads. */
static void both(void) {
  Call *c = call_start(allreduce, &ranks[1]);
  OK(allreduce(&ranks[0]));
  OK(call_join(c));
}

static void abort_both(void) {
  for (int r = 0; r < 2; r++) OK(ncclCommAbort(ranks[r].comm));
  for (int r = 0; r < 2; r++) {
    OK(cudaSetDevice(r));
    OK(cudaStreamSynchronize(ranks[r].s));
  }
  OK(cudaSetDevice(0));
}

/* COMMPLAN_MODEL_ASYNC_ERROR=2:1: rank 1's third operation never completes and its communicator reports
   ncclRemoteError; its peer waits for it; only abort ends both. */
static void an_asynchronous_error_after_two_operations(void) {
  ranks_make();
  both();
  both();
  for (int r = 0; r < 2; r++) OK(cudaStreamSynchronize(ranks[r].s));
  int e = -1;
  OK(ncclCommGetAsyncError(ranks[1].comm, &e));
  EQ(e, 0);
  both();
  for (int i = 0; i < 400 && e == 0; i++) {
    OK(ncclCommGetAsyncError(ranks[1].comm, &e));
    if (e == 0) sleep_ms(5);
  }
  EQ(e, 6); /* ncclRemoteError */
  OK(ncclCommGetAsyncError(ranks[0].comm, &e));
  EQ(e, 0);
  EQ(cudaStreamQuery(ranks[0].s), 600);
  EQ(cudaStreamQuery(ranks[1].s), 600);
  abort_both();
}

/* COMMPLAN_MODEL_ABSENT=1:2: from its third operation on, rank 1's calls never arrive: its peer waits. */
static void a_rank_that_never_arrives(void) {
  ranks_make();
  both();
  both();
  both();
  OK(cudaSetDevice(1));
  OK(cudaStreamSynchronize(ranks[1].s)); /* its own stream moves on */
  OK(cudaSetDevice(0));
  sleep_ms(100);
  EQ(cudaStreamQuery(ranks[0].s), 600);
  abort_both();
}

static int send_or_recv(void *p) {
  Rank *r = p;
  cudaSetDevice(r->rank);
  return r->rank == 0 ? ncclSend(r->buf, 8, F32, 1, r->comm, r->s) : ncclRecv(r->buf, 8, F32, 0, r->comm, r->s);
}

/* COMMPLAN_MODEL_MUTATE=AllReduce:1:2: rank 1's all-reduce output is wrong at element 2, nothing else.
   COMMPLAN_MODEL_MUTATE=Send:0:5: what rank 0 sends arrives wrong at element 5. */
static void the_mutation_switch(void) {
  ranks_make();
  if (strncmp(getenv("COMMPLAN_MODEL_MUTATE"), "Send", 4) == 0) {
    Call *c = call_start(send_or_recv, &ranks[1]);
    OK(send_or_recv(&ranks[0]));
    OK(call_join(c));
    float h[8];
    OK(cudaSetDevice(1));
    OK(cudaStreamSynchronize(ranks[1].s));
    dev_read(h, ranks[1].buf, sizeof h);
    for (int i = 0; i < 8; i++) {
      if (i == 5) CHECK(h[i] != 1);
      else EQ(h[i], 1);
    }
    OK(cudaSetDevice(0));
    for (int r = 0; r < 2; r++) OK(ncclCommDestroy(ranks[r].comm));
    return;
  }
  both();
  for (int r = 0; r < 2; r++) {
    float h[8];
    OK(cudaSetDevice(r));
    OK(cudaStreamSynchronize(ranks[r].s));
    dev_read(h, ranks[r].buf, sizeof h);
    for (int i = 0; i < 8; i++) {
      if (r == 1 && i == 2) CHECK(h[i] != 2);
      else EQ(h[i], 2);
    }
  }
  OK(cudaSetDevice(0));
  for (int r = 0; r < 2; r++) OK(ncclCommDestroy(ranks[r].comm));
}

/* COMMPLAN_MODEL_COPY_DELAY_US=1000000: a host-to-device copy lands a second late, so that work on
   another stream that does not wait for it reads the old bytes (an ordering bug shows). */
static void a_late_copy_shows_an_ordering_bug(void) {
  stream_t copy, other;
  OK(cudaStreamCreateWithFlags(&copy, NONBLOCKING));
  OK(cudaStreamCreateWithFlags(&other, NONBLOCKING));
  unsigned char *a = NULL, *b = NULL;
  OK(cudaMalloc((void **)&a, 4));
  OK(cudaMalloc((void **)&b, 4));
  OK(cudaMemsetAsync(b, 0, 4, other));
  OK(cudaStreamSynchronize(other));
  unsigned char host[4] = {9, 9, 9, 9};
  OK(cudaMemcpyAsync(a, host, 4, 1, copy));
  OK(cudaMemcpyAsync(b, a, 4, 3, other)); /* the bug: no wait for `copy` */
  unsigned char got[4] = {1, 1, 1, 1};
  OK(cudaMemcpyAsync(got, b, 4, 2, other));
  CHECK(got[0] != 9);
  OK(cudaStreamSynchronize(copy)); /* the fix: wait for the copy first */
  OK(cudaMemcpyAsync(b, a, 4, 3, other));
  OK(cudaMemcpyAsync(got, b, 4, 2, other));
  EQ(got[0], 9);
  OK(cudaStreamDestroy(copy));
  OK(cudaStreamDestroy(other));
}

int main(void) {
  int devices = atoi(getenv("COMMPLAN_MODEL_DEVICES"));
  if (devices == 0) TEST(no_device);
  else if (knob("COMMPLAN_MODEL_FAIL_ALLOC")) TEST(the_nth_allocation_fails);
  else if (knob("COMMPLAN_MODEL_ASYNC_ERROR")) TEST(an_asynchronous_error_after_two_operations);
  else if (knob("COMMPLAN_MODEL_ABSENT")) TEST(a_rank_that_never_arrives);
  else if (knob("COMMPLAN_MODEL_MUTATE")) TEST(the_mutation_switch);
  else if (knob("COMMPLAN_MODEL_COPY_DELAY_US")) TEST(a_late_copy_shows_an_ordering_bug);
  else TEST(devices_as_configured);
  return finish();
}
