/* Rule 1: streams are asynchronous and in order; the legacy stream's implicit synchronization; the
   copies' and memsets' synchronization with the host. */
/* env: COMMPLAN_MODEL_DEVICES=2 */
#include <stdlib.h>
#include <string.h>

#include "check.h"

static Gate gate;

static unsigned char byte_at(const void *dev) {
  unsigned char b;
  dev_read(&b, dev, 1);
  return b;
}

/* A call returns before its work is done; the work runs when the stream reaches it. */
static void calls_return_before_the_work_runs(void) {
  stream_t s;
  OK(cudaStreamCreateWithFlags(&s, NONBLOCKING));
  void *a = dev_alloc(64, 0);
  gate_close(&gate, s);
  OK(cudaMemsetAsync(a, 7, 64, s));
  EQ(cudaStreamQuery(s), 600); /* cudaErrorNotReady */
  EQ(byte_at(a), 0);
  gate_open(&gate);
  OK(cudaStreamSynchronize(s));
  EQ(cudaStreamQuery(s), 0);
  EQ(byte_at(a), 7);
  OK(cudaFree(a));
  OK(cudaStreamDestroy(s));
}

/* Work of one stream runs in the order it was enqueued. */
static void a_stream_runs_in_order(void) {
  stream_t s;
  OK(cudaStreamCreateWithFlags(&s, NONBLOCKING));
  void *a = dev_alloc(16, 0), *b = dev_alloc(16, 0);
  unsigned char one[16];
  memset(one, 1, sizeof one);
  gate_close(&gate, s);
  OK(cudaMemcpyAsync(a, one, 16, H2D, s));
  OK(cudaMemcpyAsync(b, a, 16, D2D, s)); /* reads a after the copy above landed */
  OK(cudaMemsetAsync(a, 2, 16, s));
  gate_open(&gate);
  OK(cudaStreamSynchronize(s));
  EQ(byte_at(a), 2);
  EQ(byte_at(b), 1);
  OK(cudaFree(a));
  OK(cudaFree(b));
  OK(cudaStreamDestroy(s));
}

/* cudaMemcpyAsync from pageable memory stages the bytes at the call: the host buffer may change at once,
   and the device gets the bytes of the call, in stream order (late). */
static void a_host_to_device_copy_is_staged_and_lands_in_stream_order(void) {
  stream_t s;
  OK(cudaStreamCreateWithFlags(&s, NONBLOCKING));
  void *a = dev_alloc(8, 0);
  unsigned char host[8];
  memset(host, 5, sizeof host);
  gate_close(&gate, s);
  OK(cudaMemcpyAsync(a, host, 8, H2D, s));
  memset(host, 9, sizeof host); /* after the call: not what lands */
  EQ(byte_at(a), 0);            /* not landed: its stream is held */
  gate_open(&gate);
  OK(cudaStreamSynchronize(s));
  EQ(byte_at(a), 5);
  OK(cudaFree(a));
  OK(cudaStreamDestroy(s));
}

typedef struct CopyArg {
  void *dst;
  const void *src;
  size_t n;
  int kind;
  stream_t s;
} CopyArg;

static int copy_async(void *p) {
  CopyArg *a = p;
  return cudaMemcpyAsync(a->dst, a->src, a->n, a->kind, a->s);
}

/* "For transfers from device memory to pageable host memory, the function will return only once the copy
   has completed": it waits for the stream to reach it. */
static void a_device_to_host_copy_returns_once_done(void) {
  stream_t s;
  OK(cudaStreamCreateWithFlags(&s, NONBLOCKING));
  void *a = dev_alloc(4, 3);
  unsigned char host[4] = {0};
  gate_close(&gate, s);
  OK(cudaMemsetAsync(a, 4, 4, s));
  CopyArg arg = {host, a, 4, D2H, s};
  Call *c = call_start(copy_async, &arg);
  CHECK(!call_returns_within(c, 200)); /* cannot return: the stream is held */
  gate_open(&gate);
  OK(call_join(c));
  EQ(host[0], 4); /* the memset before it, in stream order */
  OK(cudaFree(a));
  OK(cudaStreamDestroy(s));
}

/* The legacy stream waits for the blocking streams, and blocking streams wait for it; non-blocking streams
   do neither ("Stream synchronization behavior"). */
static void the_legacy_stream_waits_for_blocking_streams(void) {
  stream_t blocking, other, nonblocking;
  OK(cudaStreamCreateWithFlags(&blocking, 0));
  OK(cudaStreamCreateWithFlags(&other, 0));
  OK(cudaStreamCreateWithFlags(&nonblocking, NONBLOCKING));
  void *a = dev_alloc(4, 0), *b = dev_alloc(4, 0), *c = dev_alloc(4, 0);
  gate_close(&gate, blocking);
  OK(cudaMemsetAsync(a, 1, 4, 0));          /* the legacy stream: waits for `blocking` */
  OK(cudaMemsetAsync(b, 2, 4, other));      /* a blocking stream: waits for the legacy stream */
  OK(cudaMemsetAsync(c, 3, 4, nonblocking)); /* waits for nothing */
  OK(cudaStreamSynchronize(nonblocking));
  EQ(byte_at(c), 3);
  EQ(cudaStreamQuery(0), 600);
  EQ(cudaStreamQuery(other), 600);
  EQ(byte_at(a), 0);
  EQ(byte_at(b), 0);
  gate_open(&gate);
  OK(cudaStreamSynchronize(other));
  EQ(byte_at(a), 1);
  EQ(byte_at(b), 2);
  OK(cudaFree(a));
  OK(cudaFree(b));
  OK(cudaFree(c));
  OK(cudaStreamDestroy(blocking));
  OK(cudaStreamDestroy(other));
  OK(cudaStreamDestroy(nonblocking));
}

/* Work on the legacy stream holds blocking streams, not non-blocking ones. */
static void a_held_legacy_stream_holds_blocking_streams_only(void) {
  stream_t blocking, nonblocking;
  OK(cudaStreamCreateWithFlags(&blocking, 0));
  OK(cudaStreamCreateWithFlags(&nonblocking, NONBLOCKING));
  void *a = dev_alloc(4, 0), *b = dev_alloc(4, 0);
  gate_close(&gate, 0);
  OK(cudaMemsetAsync(a, 1, 4, blocking));
  OK(cudaMemsetAsync(b, 2, 4, nonblocking));
  OK(cudaStreamSynchronize(nonblocking));
  EQ(byte_at(b), 2);
  EQ(cudaStreamQuery(blocking), 600);
  gate_open(&gate);
  OK(cudaStreamSynchronize(blocking));
  EQ(byte_at(a), 1);
  OK(cudaFree(a));
  OK(cudaFree(b));
  OK(cudaStreamDestroy(blocking));
  OK(cudaStreamDestroy(nonblocking));
}

static int memcpy_sync(void *p) {
  CopyArg *a = p;
  return cudaMemcpy(a->dst, a->src, a->n, a->kind);
}

/* cudaMemcpy: to the device, "a stream sync is performed before the copy is initiated"; from the device it
   returns once the copy completed. */
static void the_synchronous_copies_synchronize_as_documented(void) {
  void *a = dev_alloc(4, 0);
  unsigned char host[4] = {6, 6, 6, 6};
  gate_close(&gate, 0);
  CopyArg to = {a, host, 4, H2D, 0};
  Call *c = call_start(memcpy_sync, &to);
  CHECK(!call_returns_within(c, 200)); /* the legacy stream is held */
  gate_open(&gate);
  OK(call_join(c));
  unsigned char back[4] = {0};
  CopyArg from = {back, a, 4, D2H, 0};
  OK(memcpy_sync(&from));
  EQ(back[3], 6);
  OK(cudaFree(a));
}

/* cudaStreamDestroy returns at once; the work left in the stream still runs; the handle is gone. */
static void destroying_a_busy_stream_returns_at_once(void) {
  stream_t s;
  OK(cudaStreamCreateWithFlags(&s, NONBLOCKING));
  void *a = dev_alloc(4, 0);
  gate_close(&gate, s);
  OK(cudaMemsetAsync(a, 8, 4, s));
  OK(cudaStreamDestroy(s));
  EQ(cudaStreamQuery(s), 400); /* cudaErrorInvalidResourceHandle */
  EQ(cudaGetLastError(), 400);
  EQ(cudaGetLastError(), 0);
  gate_open(&gate);
  OK(cudaFree(a)); /* waits for the device: the destroyed stream's memset ran before */
  void *b = dev_alloc(4, 0);
  OK(cudaFree(b));
}

/* A copy to or from memory that is no device allocation is refused at the call. */
static void copies_check_their_device_pointers(void) {
  stream_t s;
  OK(cudaStreamCreateWithFlags(&s, NONBLOCKING));
  void *a = dev_alloc(8, 0);
  char host[16];
  EQ(cudaMemcpyAsync(host, host + 8, 8, H2D, s), 1);         /* dst is no device memory */
  EQ(cudaMemcpyAsync((char *)a + 4, host, 8, H2D, s), 1);    /* past the allocation's end */
  EQ(cudaMemsetAsync(host, 0, 8, s), 1);
  EQ(cudaGetLastError(), 1);
  OK(cudaFree(a));
  OK(cudaStreamDestroy(s));
}

int main(void) {
  gate_init(&gate, 0, 1);
  TEST(calls_return_before_the_work_runs);
  TEST(a_stream_runs_in_order);
  TEST(a_host_to_device_copy_is_staged_and_lands_in_stream_order);
  TEST(a_device_to_host_copy_returns_once_done);
  TEST(the_legacy_stream_waits_for_blocking_streams);
  TEST(a_held_legacy_stream_holds_blocking_streams_only);
  TEST(the_synchronous_copies_synchronize_as_documented);
  TEST(destroying_a_busy_stream_returns_at_once);
  TEST(copies_check_their_device_pointers);
  gate_free(&gate);
  return finish();
}
