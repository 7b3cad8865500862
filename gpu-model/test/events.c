/* Rule 2: events (record, query, synchronize, wait on another stream, elapsed time, destroy). */
/* env: COMMPLAN_MODEL_DEVICES=2 COMMPLAN_MODEL_DELAY_US=20000 */
#include <stdlib.h>

#include "check.h"

static Gate gate;

static unsigned char byte_at(const void *dev) {
  unsigned char b;
  dev_read(&b, dev, 1);
  return b;
}

/* An event never recorded is complete; a recorded one completes when its stream reaches the record. */
static void query_follows_the_last_record(void) {
  stream_t s;
  event_t e;
  OK(cudaStreamCreateWithFlags(&s, NONBLOCKING));
  OK(cudaEventCreate(&e));
  EQ(cudaEventQuery(e), 0);
  gate_close(&gate, s);
  OK(cudaEventRecord(e, s));
  EQ(cudaEventQuery(e), 600);
  gate_open(&gate);
  OK(cudaEventSynchronize(e));
  EQ(cudaEventQuery(e), 0);
  OK(cudaEventDestroy(e));
  EQ(cudaEventQuery(e), 400);
  OK(cudaStreamDestroy(s));
}

typedef struct SyncArg {
  event_t e;
} SyncArg;

static int event_sync(void *p) {
  return cudaEventSynchronize(((SyncArg *)p)->e);
}

/* cudaEventSynchronize blocks until the record is reached. */
static void synchronize_waits_for_the_record(void) {
  stream_t s;
  event_t e;
  OK(cudaStreamCreateWithFlags(&s, NONBLOCKING));
  OK(cudaEventCreate(&e));
  gate_close(&gate, s);
  OK(cudaEventRecord(e, s));
  SyncArg a = {e};
  Call *c = call_start(event_sync, &a);
  CHECK(!call_returns_within(c, 200));
  gate_open(&gate);
  OK(call_join(c));
  OK(cudaEventDestroy(e));
  OK(cudaStreamDestroy(s));
}

/* cudaStreamWaitEvent: the waiting stream's later work runs after the record; re-recording the event after
   the wait changes nothing for it ("will wait only for the completion of the most recent host call to
   cudaEventRecord"). */
static void a_stream_waits_for_an_event_of_another(void) {
  stream_t producer, consumer;
  event_t e;
  OK(cudaStreamCreateWithFlags(&producer, NONBLOCKING));
  OK(cudaStreamCreateWithFlags(&consumer, NONBLOCKING));
  OK(cudaEventCreateWithFlags(&e, 2)); /* cudaEventDisableTiming */
  void *a = dev_alloc(4, 0), *b = dev_alloc(4, 0);
  gate_close(&gate, producer);
  OK(cudaMemsetAsync(a, 1, 4, producer));
  OK(cudaEventRecord(e, producer));
  OK(cudaStreamWaitEvent(consumer, e, 0));
  OK(cudaMemcpyAsync(b, a, 4, D2D, consumer));
  stream_t idle;
  OK(cudaStreamCreateWithFlags(&idle, NONBLOCKING));
  OK(cudaEventRecord(e, idle)); /* a later record: the consumer still waits for the first */
  OK(cudaStreamSynchronize(idle));
  EQ(cudaStreamQuery(consumer), 600);
  EQ(byte_at(b), 0);
  gate_open(&gate);
  OK(cudaStreamSynchronize(consumer));
  EQ(byte_at(b), 1);
  OK(cudaFree(a));
  OK(cudaFree(b));
  OK(cudaEventDestroy(e));
  OK(cudaStreamDestroy(producer));
  OK(cudaStreamDestroy(consumer));
  OK(cudaStreamDestroy(idle));
}

/* Waiting on an event never recorded is a no-op. */
static void waiting_on_an_unrecorded_event_is_a_no_op(void) {
  stream_t s;
  event_t e;
  OK(cudaStreamCreateWithFlags(&s, NONBLOCKING));
  OK(cudaEventCreate(&e));
  OK(cudaStreamWaitEvent(s, e, 0));
  OK(cudaStreamSynchronize(s));
  EQ(cudaStreamWaitEvent(s, e, 7), 1); /* flags: cudaEventWaitDefault or cudaEventWaitExternal only */
  OK(cudaEventDestroy(e));
  OK(cudaStreamDestroy(s));
}

/* Elapsed time between two completed records: at least the work between them (each operation starts
   COMMPLAN_MODEL_DELAY_US late here); not ready while pending; refused without timing or a record. */
static void elapsed_time_between_two_records(void) {
  stream_t s;
  event_t start, end, untimed, never;
  OK(cudaStreamCreateWithFlags(&s, NONBLOCKING));
  OK(cudaEventCreate(&start));
  OK(cudaEventCreate(&end));
  OK(cudaEventCreateWithFlags(&untimed, 2));
  OK(cudaEventCreate(&never));
  void *a = dev_alloc(4, 0);
  gate_close(&gate, s);
  OK(cudaEventRecord(start, s));
  OK(cudaMemsetAsync(a, 1, 4, s));
  OK(cudaMemsetAsync(a, 2, 4, s));
  OK(cudaEventRecord(end, s));
  OK(cudaEventRecord(untimed, s));
  float ms = -1;
  EQ(cudaEventElapsedTime(&ms, start, end), 600);
  gate_open(&gate);
  OK(cudaStreamSynchronize(s));
  OK(cudaEventElapsedTime(&ms, start, end));
  CHECK(ms >= 3 * 20.0f * 0.99f); /* the two memsets and the end's record, 20 ms late each */
  EQ(cudaEventElapsedTime(&ms, start, untimed), 400);
  EQ(cudaEventElapsedTime(&ms, start, never), 400);
  OK(cudaFree(a));
  OK(cudaEventDestroy(start));
  OK(cudaEventDestroy(end));
  OK(cudaEventDestroy(untimed));
  OK(cudaEventDestroy(never));
  OK(cudaStreamDestroy(s));
}

/* Destroying an event whose record is pending is allowed; the stream goes on. */
static void destroying_a_pending_event(void) {
  stream_t s;
  event_t e;
  OK(cudaStreamCreateWithFlags(&s, NONBLOCKING));
  OK(cudaEventCreate(&e));
  gate_close(&gate, s);
  OK(cudaEventRecord(e, s));
  OK(cudaEventDestroy(e));
  gate_open(&gate);
  OK(cudaStreamSynchronize(s));
  OK(cudaStreamDestroy(s));
}

int main(void) {
  gate_init(&gate, 0, 1);
  TEST(query_follows_the_last_record);
  TEST(synchronize_waits_for_the_record);
  TEST(a_stream_waits_for_an_event_of_another);
  TEST(waiting_on_an_unrecorded_event_is_a_no_op);
  TEST(elapsed_time_between_two_records);
  TEST(destroying_a_pending_event);
  gate_free(&gate);
  return finish();
}
