/* Rule 4: stream capture and CUDA graphs. */
/* env: COMMPLAN_MODEL_DEVICES=2 */
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { GLOBAL = 0, THREAD_LOCAL = 1, RELAXED = 2 };
enum { NONE = 0, ACTIVE = 1, INVALIDATED = 2 };

static Gate gate;

static unsigned char byte_at(const void *dev) {
  unsigned char b;
  dev_read(&b, dev, 1);
  return b;
}

static int capture_status(stream_t s) {
  int st = -1;
  OK(cudaStreamIsCapturing(s, &st));
  return st;
}

/* Captured work is recorded, not run; each launch replays it in order. */
static void a_graph_replays_what_was_captured(void) {
  stream_t s;
  OK(cudaStreamCreateWithFlags(&s, NONBLOCKING));
  void *a = dev_alloc(16, 0), *b = dev_alloc(16, 0);
  OK(cudaStreamBeginCapture(s, THREAD_LOCAL));
  EQ(capture_status(s), ACTIVE);
  OK(cudaMemsetAsync(a, 3, 16, s));
  OK(cudaMemcpyAsync(b, a, 16, D2D, s));
  EQ(byte_at(b), 0); /* recorded, not run */
  graph_t graph = 0;
  OK(cudaStreamEndCapture(s, &graph));
  CHECK(graph != 0);
  EQ(capture_status(s), NONE);
  exec_t exec = 0;
  OK(cudaGraphInstantiateWithFlags(&exec, graph, 0));
  OK(cudaGraphDestroy(graph)); /* the executable graph does not need it */
  OK(cudaGraphLaunch(exec, s));
  OK(cudaStreamSynchronize(s));
  EQ(byte_at(b), 3);
  unsigned char zeros[16] = {0};
  dev_write(b, zeros, 16);
  OK(cudaGraphLaunch(exec, s));
  OK(cudaStreamSynchronize(s));
  EQ(byte_at(b), 3);
  OK(cudaGraphExecDestroy(exec));
  OK(cudaFree(a));
  OK(cudaFree(b));
  OK(cudaStreamDestroy(s));
}

/* Synchronizing or querying a capturing stream is refused and invalidates the capture, which then ends with
   cudaErrorStreamCaptureInvalidated and no graph. */
static void synchronizing_a_capturing_stream_invalidates_the_capture(void) {
  stream_t s;
  OK(cudaStreamCreateWithFlags(&s, NONBLOCKING));
  void *a = dev_alloc(4, 0);
  OK(cudaStreamBeginCapture(s, GLOBAL));
  OK(cudaMemsetAsync(a, 1, 4, s));
  EQ(cudaStreamSynchronize(s), 900); /* cudaErrorStreamCaptureUnsupported */
  EQ(capture_status(s), INVALIDATED);
  EQ(cudaMemsetAsync(a, 2, 4, s), 901); /* cudaErrorStreamCaptureInvalidated */
  graph_t graph = 1;
  EQ(cudaStreamEndCapture(s, &graph), 901);
  EQ(graph, 0);
  EQ(capture_status(s), NONE);
  OK(cudaStreamSynchronize(s)); /* usable again */

  OK(cudaStreamBeginCapture(s, GLOBAL));
  EQ(cudaStreamQuery(s), 900);
  EQ(cudaStreamEndCapture(s, &graph), 901);
  EQ(byte_at(a), 0); /* nothing captured ever ran */
  OK(cudaFree(a));
  OK(cudaStreamDestroy(s));
}

typedef struct MallocArg {
  void *p;
} MallocArg;

static int malloc_it(void *arg) {
  return cudaMalloc(&((MallocArg *)arg)->p, 64);
}

static int malloc_and_free(void *arg) {
  int rc = malloc_it(arg);
  return rc ? rc : cudaFree(((MallocArg *)arg)->p);
}

/* cudaMalloc is a "potentially unsafe" call: refused to the capturing thread (global and thread-local
   modes), and to every thread while a global-mode capture runs; a thread-local capture leaves other
   threads alone; relaxed refuses nobody. */
static void unsafe_calls_follow_the_capture_mode(void) {
  stream_t s;
  OK(cudaStreamCreateWithFlags(&s, NONBLOCKING));
  graph_t graph;
  MallocArg m = {NULL};

  OK(cudaStreamBeginCapture(s, THREAD_LOCAL));
  Call *c = call_start(malloc_and_free, &m); /* another thread: allowed */
  OK(call_join(c));
  EQ(capture_status(s), ACTIVE);
  EQ(malloc_it(&m), 900); /* this thread */
  EQ(capture_status(s), INVALIDATED);
  EQ(cudaStreamEndCapture(s, &graph), 901);

  OK(cudaStreamBeginCapture(s, GLOBAL));
  c = call_start(malloc_it, &m); /* another thread, under a global capture: refused */
  EQ(call_join(c), 900);
  EQ(cudaStreamEndCapture(s, &graph), 901);

  OK(cudaStreamBeginCapture(s, RELAXED));
  OK(malloc_it(&m));
  OK(cudaFree(m.p));
  OK(cudaStreamEndCapture(s, &graph));
  OK(cudaGraphDestroy(graph));
  OK(cudaStreamDestroy(s));
}

/* The legacy stream may not be used while a blocking stream of its device captures
   (cudaErrorStreamCaptureImplicit); a non-blocking one leaves it alone. */
static void the_legacy_stream_conflicts_with_a_blocking_capture(void) {
  stream_t blocking, nonblocking;
  OK(cudaStreamCreateWithFlags(&blocking, 0));
  OK(cudaStreamCreateWithFlags(&nonblocking, NONBLOCKING));
  void *a = dev_alloc(4, 0);
  graph_t graph;
  OK(cudaStreamBeginCapture(nonblocking, THREAD_LOCAL));
  OK(cudaMemsetAsync(a, 1, 4, 0));
  OK(cudaStreamSynchronize(0));
  OK(cudaStreamEndCapture(nonblocking, &graph));
  OK(cudaGraphDestroy(graph));
  OK(cudaStreamBeginCapture(blocking, THREAD_LOCAL));
  EQ(cudaMemsetAsync(a, 1, 4, 0), 906);
  int st;
  EQ(cudaStreamIsCapturing(0, &st), 906);
  EQ(cudaStreamEndCapture(blocking, &graph), 901);
  OK(cudaFree(a));
  OK(cudaStreamDestroy(blocking));
  OK(cudaStreamDestroy(nonblocking));
}

/* A fork onto another stream through an event, joined back: one graph. Not joined back:
   cudaErrorStreamCaptureUnjoined. Waiting on an event recorded outside the capture:
   cudaErrorStreamCaptureIsolation. */
static void cross_stream_capture_must_join_back(void) {
  stream_t origin, side;
  event_t fork, join, outside;
  OK(cudaStreamCreateWithFlags(&origin, NONBLOCKING));
  OK(cudaStreamCreateWithFlags(&side, NONBLOCKING));
  OK(cudaEventCreate(&fork));
  OK(cudaEventCreate(&join));
  OK(cudaEventCreate(&outside));
  void *a = dev_alloc(4, 0), *b = dev_alloc(4, 0);
  graph_t graph;

  OK(cudaStreamBeginCapture(origin, GLOBAL));
  OK(cudaMemsetAsync(a, 1, 4, origin));
  OK(cudaEventRecord(fork, origin));
  OK(cudaStreamWaitEvent(side, fork, 0)); /* side joins the capture */
  EQ(capture_status(side), ACTIVE);
  OK(cudaMemcpyAsync(b, a, 4, D2D, side));
  OK(cudaEventRecord(join, side));
  OK(cudaStreamWaitEvent(origin, join, 0));
  OK(cudaStreamEndCapture(origin, &graph));
  EQ(capture_status(side), NONE);
  exec_t exec;
  OK(cudaGraphInstantiateWithFlags(&exec, graph, 0));
  OK(cudaGraphLaunch(exec, origin));
  OK(cudaStreamSynchronize(origin));
  EQ(byte_at(b), 1);
  OK(cudaGraphExecDestroy(exec));
  OK(cudaGraphDestroy(graph));

  OK(cudaStreamBeginCapture(origin, GLOBAL));
  OK(cudaEventRecord(fork, origin));
  OK(cudaStreamWaitEvent(side, fork, 0));
  OK(cudaMemsetAsync(b, 2, 4, side)); /* never joined back */
  EQ(cudaStreamEndCapture(origin, &graph), 904);
  EQ(capture_status(side), NONE);

  OK(cudaEventRecord(outside, side));
  OK(cudaStreamBeginCapture(origin, GLOBAL));
  EQ(cudaStreamWaitEvent(origin, outside, 0), 905);
  EQ(cudaStreamEndCapture(origin, &graph), 901);
  OK(cudaStreamBeginCapture(origin, GLOBAL));
  OK(cudaStreamWaitEvent(origin, outside, 1)); /* cudaEventWaitExternal */
  OK(cudaStreamEndCapture(origin, &graph));
  OK(cudaGraphDestroy(graph));

  OK(cudaFree(a));
  OK(cudaFree(b));
  OK(cudaEventDestroy(fork));
  OK(cudaEventDestroy(join));
  OK(cudaEventDestroy(outside));
  OK(cudaStreamDestroy(origin));
  OK(cudaStreamDestroy(side));
}

typedef struct EndArg {
  stream_t s;
  graph_t graph;
} EndArg;

static int end_it(void *p) {
  EndArg *e = p;
  return cudaStreamEndCapture(e->s, &e->graph);
}

/* A capture not begun relaxed is ended by the thread that began it. */
static void another_thread_cannot_end_the_capture(void) {
  stream_t s;
  OK(cudaStreamCreateWithFlags(&s, NONBLOCKING));
  OK(cudaStreamBeginCapture(s, THREAD_LOCAL));
  EndArg e = {s, 0};
  Call *c = call_start(end_it, &e);
  EQ(call_join(c), 908);
  OK(end_it(&e));
  OK(cudaGraphDestroy(e.graph));
  EQ(cudaStreamBeginCapture(0, GLOBAL), 1); /* not on the legacy stream */
  OK(cudaStreamDestroy(s));
}

/* "Each launch is ordered behind both any previous work in stream and any previous launches of graphExec." */
static void launches_of_one_graph_are_ordered(void) {
  stream_t s, t, capture;
  OK(cudaStreamCreateWithFlags(&s, NONBLOCKING));
  OK(cudaStreamCreateWithFlags(&t, NONBLOCKING));
  OK(cudaStreamCreateWithFlags(&capture, NONBLOCKING));
  void *a = dev_alloc(4, 0);
  OK(cudaStreamBeginCapture(capture, GLOBAL));
  OK(cudaMemsetAsync(a, 4, 4, capture));
  graph_t graph;
  OK(cudaStreamEndCapture(capture, &graph));
  exec_t exec;
  OK(cudaGraphInstantiateWithFlags(&exec, graph, 0));
  gate_close(&gate, s);
  OK(cudaGraphLaunch(exec, s));
  OK(cudaGraphLaunch(exec, t)); /* waits for the launch on s */
  EQ(cudaStreamQuery(t), 600);
  EQ(byte_at(a), 0);
  OK(cudaGraphExecDestroy(exec)); /* with launches in flight: they still run */
  gate_open(&gate);
  OK(cudaStreamSynchronize(t));
  EQ(byte_at(a), 4);
  OK(cudaGraphDestroy(graph));
  OK(cudaFree(a));
  OK(cudaStreamDestroy(s));
  OK(cudaStreamDestroy(t));
  OK(cudaStreamDestroy(capture));
}

int main(void) {
  gate_init(&gate, 0, 1);
  TEST(a_graph_replays_what_was_captured);
  TEST(synchronizing_a_capturing_stream_invalidates_the_capture);
  TEST(unsafe_calls_follow_the_capture_mode);
  TEST(the_legacy_stream_conflicts_with_a_blocking_capture);
  TEST(cross_stream_capture_must_join_back);
  TEST(another_thread_cannot_end_the_capture);
  TEST(launches_of_one_graph_are_ordered);
  gate_free(&gate);
  return finish();
}
