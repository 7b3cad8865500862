/* Rule 5, the calls: every collective and send/receive at 1 to 4 ranks, in and out of place, rooted ones at
   every root; sends and receives in a group; calls that disagree across ranks; NCCL calls in a CUDA graph,
   and destroy waiting for such a graph. One thread per rank, as the runtime's clusters run. */
/* env: COMMPLAN_MODEL_DEVICES=4 */
/* env: COMMPLAN_MODEL_DEVICES=1 NCCL_MULTI_RANK_GPU_ENABLE=1 */
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { AR, BC, RED, AG, RS, GA, SC, A2A, NKINDS };
static const char *NAMES[] = {"AllReduce", "Broadcast", "Reduce", "AllGather", "ReduceScatter", "Gather",
                              "Scatter", "AlltoAll"};

static int devices;

typedef struct Job {
  int kind, n, rank, root, inPlace, count;
  comm_t comm;
  stream_t s;
  float *send, *recv;
} Job;

/* Rank r's input element i: distinct per rank and element, exact in float. */
static float input(int r, int i) {
  return (float)(100 * r + i);
}

static size_t send_elems(const Job *j) {
  int c = j->count, n = j->n;
  switch (j->kind) {
  case RS: case SC: case A2A: return (size_t)c * n;
  default: return (size_t)c;
  }
}

static size_t recv_elems(const Job *j) {
  int c = j->count, n = j->n;
  switch (j->kind) {
  case AG: case GA: case A2A: return (size_t)c * n;
  default: return (size_t)c;
  }
}

static int issue(const Job *j) {
  const float *s = j->send;
  float *r = j->recv;
  switch (j->kind) {
  case AR: return ncclAllReduce(s, r, j->count, F32, SUM, j->comm, j->s);
  case BC: return ncclBroadcast(s, r, j->count, F32, j->root, j->comm, j->s);
  case RED: return ncclReduce(s, r, j->count, F32, SUM, j->root, j->comm, j->s);
  case AG: return ncclAllGather(s, r, j->count, F32, j->comm, j->s);
  case RS: return ncclReduceScatter(s, r, j->count, F32, SUM, j->comm, j->s);
  case GA: return ncclGather(s, r, j->count, F32, j->root, j->comm, j->s);
  case SC: return ncclScatter(s, r, j->count, F32, j->root, j->comm, j->s);
  default: return ncclAlltoAll(s, r, j->count, F32, j->comm, j->s);
  }
}

/* What rank j->rank must hold in recv element i. */
static float expected(const Job *j, int i) {
  int c = j->count, n = j->n, me = j->rank;
  float sum = 0;
  switch (j->kind) {
  case AR: case RED:
    for (int p = 0; p < n; p++) sum += input(p, i);
    return sum;
  case BC: return input(j->root, i);
  case AG: case GA: return input(i / c, i % c);
  case RS:
    for (int p = 0; p < n; p++) sum += input(p, me * c + i);
    return sum;
  case SC: return input(j->root, me * c + i);
  default: return input(i / c, me * c + i % c); /* AlltoAll: block p from rank p's block me */
  }
}

static int recv_used(const Job *j) { /* Reduce and Gather write the root's buffer only */
  return !((j->kind == RED || j->kind == GA) && j->rank != j->root);
}

static int run_rank(void *p) {
  Job *j = p;
  cudaSetDevice(j->rank % devices);
  int rc = issue(j);
  return rc ? rc : cudaStreamSynchronize(j->s);
}

static int check_case(int kind, int n, int root, int inPlace, comm_t *comms, stream_t *streams) {
  Job jobs[4];
  Call *calls[4];
  int bad = 0;
  for (int r = 0; r < n; r++) {
    OK(cudaSetDevice(r % devices));
    Job *j = &jobs[r];
    *j = (Job){kind, n, r, root, inPlace, 5, comms[r], streams[r], NULL, NULL};
    size_t se = send_elems(j), re = recv_elems(j);
    size_t big = se > re ? se : re;
    float *host = malloc(sizeof(float) * big);
    float *buf = NULL;
    OK(cudaMalloc((void **)&buf, sizeof(float) * (big + re)));
    /* in place as nccl.h defines it: AllGather's and Gather's send is the rank's block of recv,
       ReduceScatter's and Scatter's recv is the rank's block of send */
    j->recv = buf;
    j->send = buf;
    if (inPlace && (kind == AG || kind == GA)) j->send = buf + (size_t)r * j->count;
    if (inPlace && (kind == RS || kind == SC)) j->recv = buf + (size_t)r * j->count;
    if (!inPlace) j->recv = buf + big;
    for (size_t i = 0; i < big + re; i++) host[i < big ? i : 0] = -1;
    float *fill = malloc(sizeof(float) * (big + re));
    for (size_t i = 0; i < big + re; i++) fill[i] = -1;
    for (size_t i = 0; i < se; i++) fill[(size_t)(j->send - buf) + i] = input(r, (int)i);
    dev_write(buf, fill, sizeof(float) * (big + re));
    free(fill);
    free(host);
  }
  for (int r = 0; r < n; r++) calls[r] = call_start(run_rank, &jobs[r]);
  for (int r = 0; r < n; r++) OK(call_join(calls[r]));
  for (int r = 0; r < n; r++) {
    Job *j = &jobs[r];
    OK(cudaSetDevice(r % devices));
    size_t re = recv_elems(j);
    float *got = malloc(sizeof(float) * re);
    dev_read(got, j->recv, sizeof(float) * re);
    if (recv_used(j)) {
      for (size_t i = 0; i < re; i++) {
        if (got[i] != expected(j, (int)i)) {
          if (!bad) {
            fprintf(stderr, "  %s at %d ranks, root %d, %s place: rank %d element %zu is %g, expected %g\n",
                    NAMES[kind], n, root, inPlace ? "in" : "out of", r, i, got[i], expected(j, (int)i));
          }
          bad = 1;
        }
      }
    }
    free(got);
    OK(cudaFree(j->recv < j->send ? j->recv : j->send));
  }
  OK(cudaSetDevice(0));
  return bad;
}

static void every_collective_at_one_to_four_ranks(void) {
  for (int n = 1; n <= 4; n++) {
    int dev[4];
    for (int r = 0; r < n; r++) dev[r] = r % devices;
    comm_t comms[4];
    stream_t streams[4];
    comms_make(comms, n, dev);
    for (int r = 0; r < n; r++) {
      OK(cudaSetDevice(dev[r]));
      OK(cudaStreamCreateWithFlags(&streams[r], NONBLOCKING));
    }
    OK(cudaSetDevice(0));
    for (int kind = 0; kind < NKINDS; kind++) {
      int rooted = kind == BC || kind == RED || kind == GA || kind == SC;
      for (int root = 0; root < (rooted ? n : 1); root++) {
        for (int inPlace = 0; inPlace < 2; inPlace++) {
          if (kind == A2A && inPlace) continue; /* NCCL's AlltoAll has no in-place form */
          CHECK(!check_case(kind, n, root, inPlace, comms, streams));
        }
      }
    }
    for (int r = 0; r < n; r++) {
      OK(ncclCommDestroy(comms[r]));
      OK(cudaStreamDestroy(streams[r]));
    }
  }
}

typedef struct Ring {
  comm_t comm;
  stream_t s;
  float *in, *out;
  int rank, n;
} Ring;

static int ring_step(void *p) { /* sends to the next rank and receives from the previous, in one group */
  Ring *x = p;
  cudaSetDevice(x->rank % devices);
  int rc = ncclGroupStart();
  if (!rc) rc = ncclSend(x->in, 8, F32, (x->rank + 1) % x->n, x->comm, x->s);
  if (!rc) rc = ncclRecv(x->out, 8, F32, (x->rank + x->n - 1) % x->n, x->comm, x->s);
  int end = ncclGroupEnd();
  if (!rc) rc = end;
  return rc ? rc : cudaStreamSynchronize(x->s);
}

/* A ring of sends and receives in one group each (every send waits for its receive: grouped, they progress
   together), and a send to oneself. */
static void sends_and_receives_in_a_ring(void) {
  int n = 4, dev[4];
  for (int r = 0; r < n; r++) dev[r] = r % devices;
  comm_t comms[4];
  comms_make(comms, n, dev);
  Ring x[4];
  Call *c[4];
  for (int r = 0; r < n; r++) {
    OK(cudaSetDevice(dev[r]));
    x[r] = (Ring){comms[r], 0, NULL, NULL, r, n};
    OK(cudaStreamCreateWithFlags(&x[r].s, NONBLOCKING));
    float h[8];
    for (int i = 0; i < 8; i++) h[i] = input(r, i);
    OK(cudaMalloc((void **)&x[r].in, sizeof h));
    OK(cudaMalloc((void **)&x[r].out, sizeof h));
    dev_write(x[r].in, h, sizeof h);
  }
  for (int r = 0; r < n; r++) c[r] = call_start(ring_step, &x[r]);
  for (int r = 0; r < n; r++) OK(call_join(c[r]));
  for (int r = 0; r < n; r++) {
    float h[8];
    OK(cudaSetDevice(dev[r]));
    dev_read(h, x[r].out, sizeof h);
    EQ(h[7], input((r + n - 1) % n, 7));
  }
  /* to oneself, in one group */
  OK(cudaSetDevice(dev[0]));
  OK(ncclGroupStart());
  OK(ncclSend(x[0].in, 8, F32, 0, comms[0], x[0].s));
  OK(ncclRecv(x[0].out, 8, F32, 0, comms[0], x[0].s));
  OK(ncclGroupEnd());
  OK(cudaStreamSynchronize(x[0].s));
  float h[8];
  dev_read(h, x[0].out, sizeof h);
  EQ(h[3], input(0, 3));
  for (int r = 0; r < n; r++) {
    OK(cudaSetDevice(dev[r]));
    OK(ncclCommDestroy(comms[r]));
    OK(cudaFree(x[r].in));
    OK(cudaFree(x[r].out));
    OK(cudaStreamDestroy(x[r].s));
  }
  OK(cudaSetDevice(0));
}

typedef struct Odd {
  comm_t comm;
  stream_t s;
  void *buf;
  int rank, count, dtype, op;
} Odd;

static int odd_rank(void *p) {
  Odd *o = p;
  cudaSetDevice(o->rank % devices);
  return ncclAllReduce(o->buf, o->buf, o->count, o->dtype, o->op, o->comm, o->s);
}

/* Calls that disagree are no error: counts that differ hang (until abort); types of one size and operators
   that differ compute, each rank with its own. */
static void calls_that_disagree_hang_or_compute(void) {
  int dev[2] = {0, 1 % devices};
  comm_t comms[2];
  comms_make(comms, 2, dev);
  Odd o[2];
  for (int r = 0; r < 2; r++) {
    OK(cudaSetDevice(dev[r]));
    o[r] = (Odd){comms[r], 0, NULL, r, 4, F32, SUM};
    OK(cudaStreamCreateWithFlags(&o[r].s, NONBLOCKING));
    float h[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    OK(cudaMalloc(&o[r].buf, sizeof h));
    dev_write(o[r].buf, h, sizeof h);
  }
  /* connect (the first collective's host calls meet) */
  Call *c = call_start(odd_rank, &o[1]);
  OK(odd_rank(&o[0]));
  OK(call_join(c));
  for (int r = 0; r < 2; r++) OK(cudaStreamSynchronize(o[r].s));
  o[1].dtype = I32; /* same size, another type: each rank reads the bytes as its own type */
  o[0].op = MAX;
  c = call_start(odd_rank, &o[1]);
  OK(odd_rank(&o[0]));
  OK(call_join(c));
  for (int r = 0; r < 2; r++) OK(cudaStreamSynchronize(o[r].s));
  float got[4];
  OK(cudaSetDevice(dev[0]));
  dev_read(got, o[0].buf, sizeof got);
  EQ(got[0], 2); /* max(2, 2) */
  o[1].count = 8; /* another count: the ring waits forever */
  o[1].dtype = F32;
  OK(odd_rank(&o[0]));
  OK(odd_rank(&o[1]));
  sleep_ms(100);
  EQ(cudaStreamQuery(o[0].s), 600);
  EQ(cudaStreamQuery(o[1].s), 600);
  for (int r = 0; r < 2; r++) OK(ncclCommAbort(comms[r])); /* both before any cudaFree, which waits for the device */
  for (int r = 0; r < 2; r++) {
    OK(cudaStreamSynchronize(o[r].s));
    OK(cudaFree(o[r].buf));
    OK(cudaStreamDestroy(o[r].s));
  }
  OK(cudaSetDevice(0));
}

typedef struct Cap {
  comm_t comm;
  stream_t s;
  float *buf;
  exec_t exec;
  int rank;
} Cap;

static int capture_rank(void *p) {
  Cap *x = p;
  cudaSetDevice(x->rank % devices);
  int rc = cudaStreamBeginCapture(x->s, 1);
  if (!rc) rc = ncclAllReduce(x->buf, x->buf, 4, F32, SUM, x->comm, x->s);
  graph_t graph = 0;
  int end = cudaStreamEndCapture(x->s, &graph);
  if (!rc) rc = end;
  if (!rc) rc = cudaGraphInstantiateWithFlags(&x->exec, graph, 0);
  if (graph) cudaGraphDestroy(graph);
  return rc;
}

static int launch_rank(void *p) {
  Cap *x = p;
  cudaSetDevice(x->rank % devices);
  int rc = cudaGraphLaunch(x->exec, x->s);
  return rc ? rc : cudaStreamSynchronize(x->s);
}

/* NCCL calls captured into a graph run at each launch, against the peers' launches; destroying the
   communicator waits until the graph is gone (NCCL 2.26's commDestroySync). */
static void nccl_calls_in_a_graph(void) {
  int dev[2] = {0, 1 % devices};
  comm_t comms[2];
  comms_make(comms, 2, dev);
  Cap x[2];
  Call *c[2];
  for (int r = 0; r < 2; r++) {
    OK(cudaSetDevice(dev[r]));
    x[r] = (Cap){comms[r], 0, NULL, 0, r};
    OK(cudaStreamCreateWithFlags(&x[r].s, NONBLOCKING));
    float h[4] = {1, 1, 1, 1};
    OK(cudaMalloc((void **)&x[r].buf, sizeof h));
    dev_write(x[r].buf, h, sizeof h);
  }
  for (int r = 0; r < 2; r++) c[r] = call_start(capture_rank, &x[r]);
  for (int r = 0; r < 2; r++) OK(call_join(c[r]));
  float got[4];
  OK(cudaSetDevice(dev[0]));
  dev_read(got, x[0].buf, sizeof got);
  EQ(got[0], 1); /* captured, not run */
  for (int launch = 0; launch < 3; launch++) {
    for (int r = 0; r < 2; r++) c[r] = call_start(launch_rank, &x[r]);
    for (int r = 0; r < 2; r++) OK(call_join(c[r]));
  }
  OK(cudaSetDevice(dev[0]));
  dev_read(got, x[0].buf, sizeof got);
  EQ(got[0], 8); /* doubled three times */
  Call *d = call_start((int (*)(void *))ncclCommDestroy, comms[0]);
  CHECK(!call_returns_within(d, 200)); /* the graph still holds the communicator */
  OK(cudaGraphExecDestroy(x[0].exec));
  OK(call_join(d));
  OK(cudaSetDevice(dev[1]));
  OK(cudaGraphExecDestroy(x[1].exec));
  OK(ncclCommDestroy(comms[1]));
  for (int r = 0; r < 2; r++) {
    OK(cudaFree(x[r].buf));
    OK(cudaStreamDestroy(x[r].s));
  }
  OK(cudaSetDevice(0));
}

int main(void) {
  devices = atoi(getenv("COMMPLAN_MODEL_DEVICES"));
  TEST(every_collective_at_one_to_four_ranks);
  TEST(sends_and_receives_in_a_ring);
  TEST(calls_that_disagree_hang_or_compute);
  TEST(nccl_calls_in_a_graph);
  return finish();
}
