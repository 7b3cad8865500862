/* Rule 5, communicators: unique ids, init (blocking, in a group, non-blocking), split, finalize, destroy,
   abort, groups, the runtime connection, and rule 6: ranks sharing a device. */
/* env: COMMPLAN_MODEL_DEVICES=4 */
/* env: COMMPLAN_MODEL_DEVICES=1 NCCL_MULTI_RANK_GPU_ENABLE=1 */
/* env: COMMPLAN_MODEL_DEVICES=1 */
/* env: COMMPLAN_MODEL_DEVICES=1 COMMPLAN_MODEL_NCCL_VERSION=22803 NCCL_MULTI_RANK_GPU_ENABLE=1 */
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int devices;   /* COMMPLAN_MODEL_DEVICES */
static int shareOk;   /* whether ranks may share a device here */
static int dev[8];    /* rank r's device: r % devices */

static float *ones(int n) {
  float *h = malloc(sizeof(float) * n);
  for (int i = 0; i < n; i++) h[i] = 1;
  float *d = NULL;
  OK(cudaMalloc((void **)&d, sizeof(float) * n));
  dev_write(d, h, sizeof(float) * n);
  free(h);
  return d;
}

typedef struct Rank {
  comm_t comm;
  int rank, n;
  float *buf;
  stream_t s;
  int rc;
} Rank;

static int allreduce_and_sync(void *p) {
  Rank *r = p;
  cudaSetDevice(dev[r->rank]);
  int rc = ncclAllReduce(r->buf, r->buf, 4, F32, SUM, r->comm, r->s);
  return rc ? rc : cudaStreamSynchronize(r->s);
}

/* Every rank of n all-reduces ones on its own thread; returns the first failure. */
static void allreduce_all(comm_t *comms, int n, float want) {
  Rank r[8];
  Call *c[8];
  for (int i = 0; i < n; i++) {
    OK(cudaSetDevice(dev[i]));
    r[i] = (Rank){comms[i], i, n, ones(4), 0, 0};
    OK(cudaStreamCreateWithFlags(&r[i].s, NONBLOCKING));
    c[i] = call_start(allreduce_and_sync, &r[i]);
  }
  for (int i = 0; i < n; i++) OK(call_join(c[i]));
  for (int i = 0; i < n; i++) {
    float got[4];
    OK(cudaSetDevice(dev[i]));
    dev_read(got, r[i].buf, sizeof got);
    EQ(got[3], want);
    OK(cudaFree(r[i].buf));
    OK(cudaStreamDestroy(r[i].s));
  }
  OK(cudaSetDevice(0));
}

static void ids_versions_and_texts(void) {
  ncclUniqueId a, b;
  OK(ncclGetUniqueId(&a));
  OK(ncclGetUniqueId(&b));
  CHECK(memcmp(&a, &b, sizeof a) != 0);
  int v = 0;
  OK(ncclGetVersion(&v));
  const char *want = getenv("COMMPLAN_MODEL_NCCL_VERSION");
  EQ(v, want ? atoi(want) : 23007);
  CHECK(strcmp(ncclGetErrorString(4), "invalid argument (run with NCCL_DEBUG=WARN for details)") == 0);
  CHECK(strcmp(ncclGetErrorString(7), "NCCL operation in progress") == 0);
}

/* Four ranks, one thread each (blocking ncclCommInitRank), and four made by one thread in a group. */
static void init_in_threads_and_in_one_group(void) {
  if (!shareOk && devices < 4) return;
  comm_t comms[4];
  comms_make_threads(comms, 4, dev);
  for (int r = 0; r < 4; r++) {
    int n = -1, rank = -1, d = -1;
    OK(ncclCommCount(comms[r], &n));
    OK(ncclCommUserRank(comms[r], &rank));
    OK(ncclCommCuDevice(comms[r], &d));
    EQ(n, 4);
    EQ(rank, r);
    EQ(d, dev[r]);
  }
  allreduce_all(comms, 4, 4);
  for (int r = 0; r < 4; r++) OK(ncclCommDestroy(comms[r]));
  comms_make(comms, 4, dev);
  allreduce_all(comms, 4, 4);
  for (int r = 0; r < 4; r++) OK(ncclCommDestroy(comms[r]));
}

/* ncclConfig_t as nccl.h lays it out; blocking 0: ncclInProgress, then ncclCommGetAsyncError until done. */
typedef struct {
  size_t size;
  unsigned magic, version;
  int blocking, cgaClusterSize, minCTAs, maxCTAs;
  const char *netName;
} Config;

static void a_non_blocking_init_is_polled(void) {
  if (!shareOk && devices < 2) return;
  ncclUniqueId id;
  OK(ncclGetUniqueId(&id));
  Config cfg = {sizeof cfg, 0xcafebeef, 21700, 0, (int)0x80000000, (int)0x80000000, 4, NULL};
  comm_t c0 = NULL, c1 = NULL;
  OK(cudaSetDevice(dev[0]));
  EQ(ncclCommInitRankConfig(&c0, 2, id, 0, &cfg), 7); /* ncclInProgress */
  CHECK(c0 != NULL);
  int state = -1;
  OK(ncclCommGetAsyncError(c0, &state));
  EQ(state, 7);
  int n;
  EQ(ncclCommCount(c0, &n), 4); /* used before it is ready: ncclInvalidArgument */
  CHECK(strstr(ncclGetLastError(NULL), "before the previous operation returned ncclSuccess") != NULL);
  OK(cudaSetDevice(dev[1]));
  EQ(ncclCommInitRankConfig(&c1, 2, id, 1, &cfg), 7);
  OK(ncclCommGetAsyncError(c0, &state));
  EQ(state, 0);
  OK(ncclCommCount(c0, &n));
  EQ(n, 2);
  Config bad = cfg;
  bad.magic = 0;
  comm_t c2 = NULL;
  EQ(ncclCommInitRankConfig(&c2, 1, id, 0, &bad), 4);
  OK(cudaSetDevice(0));
  OK(ncclCommDestroy(c0));
  OK(ncclCommDestroy(c1));
}

/* Two ranks on one device: refused as NCCL refuses them (2.28: "Duplicate GPU detected"; 2.30 without
   NCCL_MULTI_RANK_GPU_ENABLE: "Multiple Ranks are using the same GPU"), else they run. */
static void ranks_sharing_a_device(void) {
  int same[2] = {0, 0};
  ncclUniqueId id;
  OK(ncclGetUniqueId(&id));
  comm_t comms[2] = {NULL, NULL};
  OK(ncclGroupStart());
  for (int r = 0; r < 2; r++) OK(ncclCommInitRank(&comms[r], 2, id, r));
  int rc = ncclGroupEnd();
  if (shareOk) {
    OK(rc);
    int saved[8];
    memcpy(saved, dev, sizeof saved);
    dev[1] = 0;
    allreduce_all(comms, 2, 2);
    memcpy(dev, saved, sizeof saved);
    for (int r = 0; r < 2; r++) OK(ncclCommDestroy(comms[r]));
  } else {
    EQ(rc, 5); /* ncclInvalidUsage */
    CHECK(comms[0] == NULL && comms[1] == NULL);
    const char *want = atoi(getenv("COMMPLAN_MODEL_NCCL_VERSION") ? getenv("COMMPLAN_MODEL_NCCL_VERSION") : "23007") < 23000
                           ? "Duplicate GPU detected : rank 0 and rank 1 both on CUDA device"
                           : "Multiple Ranks are using the same GPU/Partition. Set NCCL_MULTI_RANK_GPU_ENABLE=1";
    CHECK(strstr(ncclGetLastError(NULL), want) != NULL);
  }
  (void)same;
}

/* ncclCommSplit: by color, ordered by key then parent rank; NCCL_SPLIT_NOCOLOR gives NULL. */
static void split_by_color_and_key(void) {
  if (!shareOk && devices < 4) return;
  comm_t world[4], child[4];
  comms_make(world, 4, dev);
  typedef struct {
    comm_t parent;
    comm_t *out;
    int color, key, rank;
  } SplitArg;
  SplitArg args[4];
  Call *c[4];
  int split_one(void *p);
  for (int r = 0; r < 4; r++) {
    args[r] = (SplitArg){world[r], &child[r], r == 3 ? -1 : r % 2, -r, r};
    c[r] = call_start(split_one, &args[r]);
  }
  for (int r = 0; r < 4; r++) OK(call_join(c[r]));
  CHECK(child[3] == NULL);
  int n, rank;
  OK(ncclCommCount(child[0], &n));
  EQ(n, 2); /* ranks 0 and 2 */
  OK(ncclCommUserRank(child[0], &rank));
  EQ(rank, 1); /* keys 0 and -2: rank 2 first */
  OK(ncclCommUserRank(child[2], &rank));
  EQ(rank, 0);
  OK(ncclCommCount(child[1], &n));
  EQ(n, 1);
  comm_t evens[2] = {child[2], child[0]};
  int saved[8];
  memcpy(saved, dev, sizeof saved);
  dev[0] = saved[2];
  dev[1] = saved[0];
  allreduce_all(evens, 2, 2);
  memcpy(dev, saved, sizeof saved);
  for (int r = 0; r < 3; r++) OK(ncclCommDestroy(child[r]));
  for (int r = 0; r < 4; r++) OK(ncclCommDestroy(world[r]));
}

int split_one(void *p) {
  struct {
    comm_t parent;
    comm_t *out;
    int color, key, rank;
  } *a = p;
  cudaSetDevice(dev[a->rank]);
  return ncclCommSplit(a->parent, a->color, a->key, a->out, NULL);
}

static int destroy_it(void *p) {
  return ncclCommDestroy((comm_t)p);
}

static int finalize_it(void *p) {
  return ncclCommFinalize((comm_t)p);
}

/* Finalize and destroy wait for the rank's issued operations (which wait for the peer); abort does not, and
   releases a stream held in a collective whose peer never comes. */
static void destroy_waits_and_abort_releases(void) {
  if (!shareOk && devices < 2) return;
  comm_t comms[2];
  comms_make_threads(comms, 2, dev);
  Rank r0 = {comms[0], 0, 2, NULL, 0, 0}, r1 = {comms[1], 1, 2, NULL, 0, 0};
  OK(cudaSetDevice(dev[0]));
  r0.buf = ones(4);
  OK(cudaStreamCreateWithFlags(&r0.s, NONBLOCKING));
  OK(cudaSetDevice(dev[1]));
  r1.buf = ones(4);
  OK(cudaStreamCreateWithFlags(&r1.s, NONBLOCKING));
  /* connect first (the first collective's host call waits for the peer's) */
  Call *c = call_start(allreduce_and_sync, &r1);
  OK(allreduce_and_sync(&r0));
  OK(call_join(c));
  OK(cudaSetDevice(dev[0]));
  OK(ncclAllReduce(r0.buf, r0.buf, 4, F32, SUM, comms[0], r0.s));
  Call *fin = call_start(finalize_it, comms[0]);
  CHECK(!call_returns_within(fin, 200));
  OK(allreduce_and_sync(&r1));
  OK(call_join(fin));
  OK(ncclCommDestroy(comms[0]));

  /* abort: rank 1 waits in an all-reduce for a peer that is gone */
  OK(ncclAllReduce(r1.buf, r1.buf, 4, F32, SUM, comms[1], r1.s));
  EQ(cudaStreamQuery(r1.s), 600);
  c = call_start(destroy_it, comms[1]);
  CHECK(!call_returns_within(c, 200)); /* destroy would wait forever */
  OK(ncclCommAbort(comms[1]));
  call_join(c);
  OK(cudaStreamSynchronize(r1.s)); /* the stream moved on */
  int e;
  EQ(ncclCommGetAsyncError(comms[1], &e), 4); /* the handle is gone */
  OK(cudaFree(r0.buf));
  OK(cudaFree(r1.buf));
  OK(cudaStreamDestroy(r0.s));
  OK(cudaStreamDestroy(r1.s));
  OK(cudaSetDevice(0));
}

/* Nested groups issue at the outermost ncclGroupEnd; an argument error inside a group is returned by the call
   and by ncclGroupEnd, which then issues nothing. */
static void groups_nest_and_fail_together(void) {
  comm_t c;
  int d0 = 0;
  comms_make(&c, 1, &d0);
  stream_t s;
  OK(cudaStreamCreateWithFlags(&s, NONBLOCKING));
  float *a = ones(4), *b = NULL;
  OK(cudaMalloc((void **)&b, 16));
  OK(cudaMemsetAsync(b, 0, 16, s));
  OK(cudaStreamSynchronize(s));
  OK(ncclGroupStart());
  OK(ncclGroupStart());
  OK(ncclAllReduce(a, b, 4, F32, SUM, c, s));
  OK(ncclGroupEnd());
  OK(cudaStreamSynchronize(s));
  float got[4];
  dev_read(got, b, 16);
  EQ(got[0], 0); /* not issued yet */
  OK(ncclGroupEnd());
  OK(cudaStreamSynchronize(s));
  dev_read(got, b, 16);
  EQ(got[0], 1);

  OK(cudaMemsetAsync(b, 0, 16, s));
  OK(ncclGroupStart());
  OK(ncclAllReduce(a, b, 4, F32, SUM, c, s));
  EQ(ncclAllReduce(a, b, 4, 99, SUM, c, s), 4);
  CHECK(strstr(ncclGetLastError(NULL), "invalid type 99") != NULL);
  EQ(ncclGroupEnd(), 4);
  OK(cudaStreamSynchronize(s));
  dev_read(got, b, 16);
  EQ(got[0], 0); /* nothing issued */
  EQ(ncclGroupEnd(), 5); /* not in a group */
  EQ(ncclBroadcast(a, b, 4, F32, 1, c, s), 4); /* root 1 of 1 rank */
  OK(ncclCommDestroy(c));
  OK(cudaFree(a));
  OK(cudaFree(b));
  OK(cudaStreamDestroy(s));
}

static int allreduce_only(void *p) {
  Rank *r = p;
  cudaSetDevice(dev[r->rank]);
  return ncclAllReduce(r->buf, r->buf, 4, F32, SUM, r->comm, r->s);
}

static int send_only(void *p) {
  Rank *r = p;
  cudaSetDevice(dev[r->rank]);
  return ncclSend(r->buf, 4, F32, 1 - r->rank, r->comm, r->s);
}

/* NCCL_RUNTIME_CONNECT (default 1): the first collective's host call waits until every rank made its own;
   a pair's first send waits in the host call until the peer's first receive from it. */
static void the_first_calls_connect_the_ranks(void) {
  if (!shareOk && devices < 2) return;
  comm_t comms[2];
  comms_make(comms, 2, dev);
  Rank r[2];
  for (int i = 0; i < 2; i++) {
    OK(cudaSetDevice(dev[i]));
    r[i] = (Rank){comms[i], i, 2, ones(4), 0, 0};
    OK(cudaStreamCreateWithFlags(&r[i].s, NONBLOCKING));
  }
  Call *c = call_start(allreduce_only, &r[0]);
  CHECK(!call_returns_within(c, 200));
  OK(allreduce_only(&r[1]));
  OK(call_join(c));
  OK(allreduce_only(&r[0])); /* connected: both return at once */
  OK(allreduce_only(&r[1]));
  c = call_start(send_only, &r[0]);
  CHECK(!call_returns_within(c, 200));
  OK(cudaSetDevice(dev[1]));
  OK(ncclRecv(r[1].buf, 4, F32, 0, comms[1], r[1].s));
  OK(call_join(c));
  for (int i = 0; i < 2; i++) {
    OK(cudaStreamSynchronize(r[i].s));
    OK(ncclCommDestroy(comms[i]));
    OK(cudaFree(r[i].buf));
    OK(cudaStreamDestroy(r[i].s));
  }
  OK(cudaSetDevice(0));
}

/* The process's last ncclCommDestroy of a communicator whose ranks share a device frees their device memory and
   so waits for all work of that device (docs/gpu.md, "Fences"): here, another communicator's all-reduce that
   waits for its peer. Ranks on devices of their own: no such wait. */
static void the_last_destroy_waits_for_a_shared_device(void) {
  if (!shareOk && devices < 2) return;
  int shared = shareOk && devices == 1;
  comm_t x[2], y[2];
  int xdev[2] = {0, shared ? 0 : 1};
  comms_make(x, 2, xdev);
  comms_make(y, 2, dev);
  Rank r0 = {y[0], 0, 2, NULL, 0, 0}, r1 = {y[1], 1, 2, NULL, 0, 0};
  OK(cudaSetDevice(dev[0]));
  r0.buf = ones(4);
  OK(cudaStreamCreateWithFlags(&r0.s, NONBLOCKING));
  OK(cudaSetDevice(dev[1]));
  r1.buf = ones(4);
  OK(cudaStreamCreateWithFlags(&r1.s, NONBLOCKING));
  Call *c = call_start(allreduce_only, &r1); /* connect y */
  OK(allreduce_only(&r0));
  OK(call_join(c));
  OK(cudaStreamSynchronize(r0.s));
  OK(cudaSetDevice(dev[0]));
  OK(allreduce_only(&r0)); /* waits on device 0 for rank 1 of y */
  OK(ncclCommDestroy(x[0]));
  c = call_start(destroy_it, x[1]);
  if (shared) {
    CHECK(!call_returns_within(c, 200));
    OK(allreduce_only(&r1));
  } else {
    CHECK(call_returns_within(c, 5000));
    OK(allreduce_only(&r1));
  }
  OK(call_join(c));
  OK(cudaStreamSynchronize(r0.s));
  OK(cudaStreamSynchronize(r1.s));
  for (int i = 0; i < 2; i++) OK(ncclCommDestroy(y[i]));
  OK(cudaFree(r0.buf));
  OK(cudaFree(r1.buf));
  OK(cudaStreamDestroy(r0.s));
  OK(cudaStreamDestroy(r1.s));
  OK(cudaSetDevice(0));
}

/* One thread splits every rank in one group (ncclCommSplit inside ncclGroupStart/End is issued at the end);
   a non-blocking split returns ncclInProgress until every rank has called it. */
static void splits_in_a_group_and_non_blocking(void) {
  if (!shareOk && devices < 2) return;
  comm_t world[2], child[2] = {NULL, NULL};
  comms_make(world, 2, dev);
  OK(ncclGroupStart());
  for (int r = 0; r < 2; r++) {
    OK(cudaSetDevice(dev[r]));
    OK(ncclCommSplit(world[r], 0, r, &child[r], NULL));
  }
  OK(ncclGroupEnd());
  OK(cudaSetDevice(0));
  int n = 0;
  OK(ncclCommCount(child[1], &n));
  EQ(n, 2);
  Config cfg = {sizeof cfg, 0xcafebeef, 21700, 0, (int)0x80000000, (int)0x80000000, (int)0x80000000, NULL};
  comm_t grand[2] = {NULL, NULL};
  EQ(ncclCommSplit(child[0], 5, 0, &grand[0], &cfg), 7); /* ncclInProgress */
  int state = -1;
  OK(ncclCommGetAsyncError(grand[0], &state));
  EQ(state, 7);
  EQ(ncclCommSplit(child[1], 5, 0, &grand[1], &cfg), 7);
  OK(ncclCommGetAsyncError(grand[0], &state));
  EQ(state, 0);
  OK(ncclCommCount(grand[0], &n));
  EQ(n, 2);
  for (int r = 0; r < 2; r++) {
    OK(ncclCommDestroy(grand[r]));
    OK(ncclCommDestroy(child[r]));
    OK(ncclCommDestroy(world[r]));
  }
}

typedef struct Pair2 {
  comm_t comm;
  stream_t s;
  float *a, *b;
  int rank;
} Pair2;

static int rank1_exchange(void *p) { /* a send and a receive in one group: they progress together */
  Pair2 *x = p;
  cudaSetDevice(dev[1]);
  int rc = ncclGroupStart();
  if (!rc) rc = ncclRecv(x->a, 4, F32, 0, x->comm, x->s);
  if (!rc) rc = ncclSend(x->b, 4, F32, 0, x->comm, x->s);
  int end = ncclGroupEnd();
  return rc ? rc : end;
}

/* A communicator's operations run in issue order even on different streams (NCCL orders each launch after the
   communicator's previous one): rank 0's receive on an idle stream waits for its send, issued first on a held
   stream, although the peer's matching send is there. */
static void a_communicator_s_operations_run_in_issue_order_across_streams(void) {
  if (devices < 3 && !shareOk) return;
  Gate g;
  int gdev = shareOk ? 0 : 2;
  gate_init(&g, dev[0], shareOk ? 0 : gdev);
  comm_t comms[2];
  comms_make(comms, 2, dev);
  Pair2 x[2];
  for (int r = 0; r < 2; r++) {
    OK(cudaSetDevice(dev[r]));
    x[r] = (Pair2){comms[r], 0, ones(4), ones(4), r};
    OK(cudaStreamCreateWithFlags(&x[r].s, NONBLOCKING));
  }
  /* connect the pair both ways first (their first transfers meet inside the host calls) */
  Call *c = call_start(rank1_exchange, &x[1]);
  OK(cudaSetDevice(dev[0]));
  OK(ncclGroupStart());
  OK(ncclSend(x[0].a, 4, F32, 1, comms[0], x[0].s));
  OK(ncclRecv(x[0].b, 4, F32, 1, comms[0], x[0].s));
  OK(ncclGroupEnd());
  OK(call_join(c));
  OK(cudaStreamSynchronize(x[0].s));
  stream_t held, idle;
  OK(cudaStreamCreateWithFlags(&held, NONBLOCKING));
  OK(cudaStreamCreateWithFlags(&idle, NONBLOCKING));
  gate_close(&g, held);
  OK(ncclSend(x[0].a, 4, F32, 1, comms[0], held)); /* held behind the gate */
  OK(ncclRecv(x[0].b, 4, F32, 1, comms[0], idle)); /* issued after it: runs after it */
  OK(rank1_exchange(&x[1]));
  sleep_ms(100);
  EQ(cudaStreamQuery(idle), 600);
  gate_open(&g);
  OK(cudaStreamSynchronize(idle));
  OK(cudaStreamSynchronize(held));
  OK(cudaSetDevice(dev[1]));
  OK(cudaStreamSynchronize(x[1].s));
  for (int r = 0; r < 2; r++) {
    OK(ncclCommDestroy(comms[r]));
    OK(cudaFree(x[r].a));
    OK(cudaFree(x[r].b));
    OK(cudaStreamDestroy(x[r].s));
  }
  OK(cudaSetDevice(0));
  OK(cudaStreamDestroy(held));
  OK(cudaStreamDestroy(idle));
  gate_free(&g);
}

int main(void) {
  devices = atoi(getenv("COMMPLAN_MODEL_DEVICES"));
  shareOk = getenv("NCCL_MULTI_RANK_GPU_ENABLE") != NULL &&
            !(getenv("COMMPLAN_MODEL_NCCL_VERSION") && atoi(getenv("COMMPLAN_MODEL_NCCL_VERSION")) < 23000);
  for (int r = 0; r < 8; r++) dev[r] = r % devices;
  TEST(ids_versions_and_texts);
  TEST(init_in_threads_and_in_one_group);
  TEST(a_non_blocking_init_is_polled);
  TEST(ranks_sharing_a_device);
  TEST(split_by_color_and_key);
  TEST(destroy_waits_and_abort_releases);
  TEST(groups_nest_and_fail_together);
  TEST(the_first_calls_connect_the_ranks);
  TEST(the_last_destroy_waits_for_a_shared_device);
  TEST(splits_in_a_group_and_non_blocking);
  TEST(a_communicator_s_operations_run_in_issue_order_across_streams);
  return finish();
}
