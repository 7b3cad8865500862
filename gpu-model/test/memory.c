/* Rule 3: device memory. cudaMalloc/cudaFree synchronize the device, the stream-ordered allocator does not;
   out of memory; a use after free faults. And run 11's hang: ranks of one process on one device, one frees
   while a peer's NCCL call waits for it (docs/perf/h100-11/README.md). */
/* env: COMMPLAN_MODEL_DEVICES=2 COMMPLAN_MODEL_DEVICE_MEMORY=64M NCCL_MULTI_RANK_GPU_ENABLE=1 */
/* env: COMMPLAN_MODEL_DEVICES=2 COMMPLAN_MODEL_DEVICE_MEMORY=64M NCCL_MULTI_RANK_GPU_ENABLE=1 COMMPLAN_MODEL_MALLOC_BARRIER=1 */
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define MIB (1024 * 1024)

static Gate gate;

static size_t free_bytes(void) {
  size_t f = 0, t = 0;
  OK(cudaMemGetInfo(&f, &t));
  EQ(t, 64 * MIB);
  return f;
}

static void allocations_count_against_the_device(void) {
  size_t before = free_bytes();
  void *p = NULL;
  OK(cudaMalloc(&p, 16 * MIB));
  EQ(free_bytes(), before - 16 * MIB);
  void *q = NULL;
  EQ(cudaMalloc(&q, 64 * MIB), 2); /* cudaErrorMemoryAllocation */
  EQ(cudaGetLastError(), 2);
  OK(cudaFree(p));
  EQ(free_bytes(), before);
  EQ(cudaFree(p), 1); /* freed twice: cudaErrorInvalidValue */
  OK(cudaFree(NULL));
}

static int free_it(void *p) {
  return cudaFree(p);
}

/* cudaFree waits for all work of every stream of its device ("causes the GPU to synchronize across all
   executing CUDA streams"), not for other devices. */
static void cuda_free_waits_for_every_stream_of_its_device(void) {
  stream_t s;
  OK(cudaStreamCreateWithFlags(&s, NONBLOCKING));
  void *p = dev_alloc(1024, 0);
  gate_close(&gate, s);
  Call *c = call_start(free_it, p);
  CHECK(!call_returns_within(c, 200));
  gate_open(&gate);
  OK(call_join(c));

  /* a held stream of device 1 does not hold a free on device 0 */
  Gate other;
  OK(cudaSetDevice(1));
  gate_init(&other, 1, 0);
  stream_t s1;
  OK(cudaStreamCreateWithFlags(&s1, NONBLOCKING));
  gate_close(&other, s1);
  OK(cudaSetDevice(0));
  void *q = dev_alloc(1024, 0);
  c = call_start(free_it, q);
  CHECK(call_returns_within(c, 5000));
  OK(call_join(c));
  gate_open(&other);
  OK(cudaSetDevice(1));
  OK(cudaStreamSynchronize(s1));
  OK(cudaStreamDestroy(s1));
  OK(cudaSetDevice(0));
  gate_free(&other);
  OK(cudaStreamDestroy(s));
}

/* cudaMallocAsync/cudaFreeAsync: no wait for other streams; the memory is freed when its stream reaches the
   free. */
static void the_stream_ordered_allocator_frees_in_stream_order(void) {
  stream_t s;
  OK(cudaStreamCreateWithFlags(&s, NONBLOCKING));
  size_t before = free_bytes();
  void *p = NULL;
  OK(cudaMallocAsync(&p, 8 * MIB, s));
  EQ(free_bytes(), before - 8 * MIB);
  gate_close(&gate, s);
  OK(cudaMemsetAsync(p, 1, 8 * MIB, s)); /* used before the free, in stream order: fine */
  OK(cudaFreeAsync(p, s));                /* returns at once */
  EQ(free_bytes(), before - 8 * MIB);     /* not reached yet */
  gate_open(&gate);
  OK(cudaStreamSynchronize(s));
  EQ(free_bytes(), before);
  OK(cudaStreamDestroy(s));
}

static int barrier(void) {
  return getenv("COMMPLAN_MODEL_MALLOC_BARRIER") && atoi(getenv("COMMPLAN_MODEL_MALLOC_BARRIER"));
}

/* cudaMalloc with COMMPLAN_MODEL_MALLOC_BARRIER=1: work enqueued after it on any stream of the device waits for
   the work enqueued before it. Without (the default, as the H100 of run 10 behaved): it orders nothing. */
static void cuda_malloc_orders_the_device_s_later_work_after_its_earlier_work(void) {
  stream_t held, later;
  OK(cudaStreamCreateWithFlags(&held, NONBLOCKING));
  OK(cudaStreamCreateWithFlags(&later, NONBLOCKING));
  void *a = dev_alloc(4, 0);
  gate_close(&gate, held);
  void *p = NULL;
  OK(cudaMalloc(&p, 4)); /* returns at once */
  OK(cudaMemsetAsync(a, 5, 4, later));
  if (barrier()) {
    EQ(cudaStreamQuery(later), 600);
  } else {
    OK(cudaStreamSynchronize(later));
  }
  gate_open(&gate);
  OK(cudaStreamSynchronize(later));
  OK(cudaFree(p));
  OK(cudaFree(a));
  OK(cudaStreamDestroy(held));
  OK(cudaStreamDestroy(later));
}

/* ---------------------------------------------------------------- run 11 */

typedef struct Pair {
  comm_t comm[2];
  stream_t stream[2];
  float *buf[2];
} Pair;

typedef struct Xfer {
  Pair *p;
  int rank, send;
} Xfer;

static int xfer(void *arg) {
  Xfer *x = arg;
  Pair *p = x->p;
  int peer = 1 - x->rank;
  if (x->send) return ncclSend(p->buf[x->rank], 1024, F32, peer, p->comm[x->rank], p->stream[x->rank]);
  return ncclRecv(p->buf[x->rank], 1024, F32, peer, p->comm[x->rank], p->stream[x->rank]);
}

/* Two ranks on device 0, connected by a first exchange (NCCL connects send/receive peers inside that call). */
static void pair_make(Pair *p) {
  int devices[2] = {0, 0};
  comms_make(p->comm, 2, devices);
  for (int r = 0; r < 2; r++) {
    OK(cudaStreamCreateWithFlags(&p->stream[r], NONBLOCKING));
    p->buf[r] = dev_alloc(4096, r);
  }
  Xfer send = {p, 0, 1}, recv = {p, 1, 0};
  Call *c = call_start(xfer, &send);
  OK(xfer(&recv));
  OK(call_join(c));
  OK(cudaStreamSynchronize(p->stream[0]));
  OK(cudaStreamSynchronize(p->stream[1]));
}

/* Rank 0 sends; rank 1 frees a block of its own with cudaFree before it posts the receive: cudaFree waits
   for the send, which waits for the receive that rank 1 can only post after cudaFree returns. The same hang
   as runs 10 and 11 on an H100; only aborting rank 0's communicator ends it. */
static void run_11_cuda_free_while_a_peer_waits_hangs(void) {
  Pair p;
  pair_make(&p);
  float *block = dev_alloc(MIB, 0);
  Xfer send = {&p, 0, 1};
  OK(xfer(&send));
  Call *c = call_start(free_it, block);
  CHECK(!call_returns_within(c, 300)); /* the deadlock: nothing on the device can move */
  EQ(cudaStreamQuery(p.stream[0]), 600);
  OK(ncclCommAbort(p.comm[0])); /* as the watchdog does: the send gives up, the free returns */
  OK(call_join(c));
  OK(ncclCommAbort(p.comm[1]));
  for (int r = 0; r < 2; r++) OK(cudaStreamDestroy(p.stream[r]));
}

/* The runtime's default where ranks share a device: cudaFreeAsync on the rank's own stream does not wait for
   the peer, so the receive is posted and both complete. */
static void run_11_passes_with_stream_ordered_memory(void) {
  Pair p;
  pair_make(&p);
  float *block = NULL;
  OK(cudaMallocAsync((void **)&block, MIB, p.stream[1]));
  float ones[1024];
  for (int i = 0; i < 1024; i++) ones[i] = 1;
  dev_write(p.buf[0], ones, sizeof ones);
  Xfer send = {&p, 0, 1}, recv = {&p, 1, 0};
  OK(xfer(&send));
  OK(cudaFreeAsync(block, p.stream[1])); /* returns at once */
  OK(xfer(&recv));
  OK(cudaStreamSynchronize(p.stream[1]));
  OK(cudaStreamSynchronize(p.stream[0]));
  float got[1024];
  dev_read(got, p.buf[1], sizeof got);
  CHECK(got[0] == 1 && got[1023] == 1);
  for (int r = 0; r < 2; r++) {
    OK(ncclCommDestroy(p.comm[r]));
    OK(cudaStreamDestroy(p.stream[r]));
  }
}

/* With cudaMalloc instead, and COMMPLAN_MODEL_MALLOC_BARRIER=1: it returns, but the receive enqueued after it
   waits for the send enqueued before it (the device-wide order of an allocation), and the send waits for the
   receive: the device hangs. Without the barrier both complete. */
static void cuda_malloc_while_a_peer_waits_hangs_the_device(void) {
  Pair p;
  pair_make(&p);
  Xfer send = {&p, 0, 1}, recv = {&p, 1, 0};
  OK(xfer(&send));
  void *block = NULL;
  OK(cudaMalloc(&block, MIB));
  OK(xfer(&recv));
  if (!barrier()) {
    for (int r = 0; r < 2; r++) OK(cudaStreamSynchronize(p.stream[r]));
    OK(cudaFree(block));
    for (int r = 0; r < 2; r++) {
      OK(ncclCommDestroy(p.comm[r]));
      OK(cudaStreamDestroy(p.stream[r]));
    }
    return;
  }
  sleep_ms(200);
  EQ(cudaStreamQuery(p.stream[1]), 600);
  EQ(cudaStreamQuery(p.stream[0]), 600);
  OK(ncclCommAbort(p.comm[0]));
  OK(ncclCommAbort(p.comm[1]));
  OK(cudaStreamSynchronize(p.stream[1]));
  OK(cudaFree(block));
  for (int r = 0; r < 2; r++) OK(cudaStreamDestroy(p.stream[r]));
}

/* Work that touches memory freed before it in stream order faults like a kernel's illegal address: the
   device's context returns cudaErrorIllegalAddress from then on (device 1 here; device 0 goes on). */
static void a_use_after_free_faults_the_device(void) {
  OK(cudaSetDevice(1));
  stream_t s;
  OK(cudaStreamCreateWithFlags(&s, NONBLOCKING));
  void *p = NULL;
  OK(cudaMallocAsync(&p, 4096, s));
  OK(cudaMemsetAsync(p, 0, 4096, s));
  OK(cudaFreeAsync(p, s));
  EQ(cudaMemsetAsync(p, 1, 4096, s), 1); /* after the free was enqueued: refused at the call */
  OK(cudaStreamSynchronize(s));
  void *q = NULL;
  OK(cudaMalloc(&q, 4096));
  stream_t t;
  OK(cudaStreamCreateWithFlags(&t, NONBLOCKING));
  OK(cudaMemsetAsync(q, 1, 4096, t));
  OK(cudaStreamSynchronize(t)); /* else the free on s may come first: a real use after free */
  OK(cudaFreeAsync(q, s));
  OK(cudaStreamSynchronize(s));
  unsigned char host[8];
  EQ(cudaMemcpyAsync(host, q, 8, D2H, t), 1); /* freed: refused at the call */
  OK(cudaStreamSynchronize(t));
  /* a stale copy enqueued before the free but run after it */
  void *r = NULL;
  OK(cudaMalloc(&r, 4096));
  Gate g1;
  gate_init(&g1, 1, 0);
  gate_close(&g1, t);
  OK(cudaMemsetAsync(r, 2, 4096, t)); /* runs after the gate */
  OK(cudaFreeAsync(r, s));            /* s is not held: r is freed first */
  OK(cudaStreamSynchronize(s));
  gate_open(&g1);
  EQ(cudaStreamSynchronize(t), 700); /* cudaErrorIllegalAddress */
  EQ(cudaGetLastError(), 700);       /* sticky */
  EQ(cudaStreamQuery(s), 700);
  OK(cudaSetDevice(0));
  void *fine = NULL;
  OK(cudaMalloc(&fine, 16));
  OK(cudaFree(fine));
}

int main(void) {
  gate_init(&gate, 0, 1);
  TEST(allocations_count_against_the_device);
  TEST(cuda_free_waits_for_every_stream_of_its_device);
  TEST(the_stream_ordered_allocator_frees_in_stream_order);
  TEST(cuda_malloc_orders_the_device_s_later_work_after_its_earlier_work);
  TEST(run_11_cuda_free_while_a_peer_waits_hangs);
  TEST(run_11_passes_with_stream_ordered_memory);
  TEST(cuda_malloc_while_a_peer_waits_hangs_the_device);
  TEST(a_use_after_free_faults_the_device);
  return finish();
}
