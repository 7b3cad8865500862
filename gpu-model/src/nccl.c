/*
 * NCCL, modelled on the CPU: communicators of ranks that are threads of this process, and their collectives
 * and transfers run for real on the streams' workers.
 *
 * Rules, each from NCCL's documentation or source (NVIDIA/nccl v2.30.7 unless said) or from our GPU runs:
 *  - Matching: a rank's k-th collective on a communicator meets every other rank's k-th collective (NCCL's
 *    user guide: every rank must issue the same collectives in the same order); the k-th send from a to b
 *    meets b's k-th receive from a. A collective holds its stream until every peer's matching call has
 *    arrived, so a peer that never comes hangs the others' streams until ncclCommAbort, as a kernel spins on
 *    the GPU. Calls that disagree across ranks are no error for NCCL: here a collective whose peers disagree
 *    on the collective, the root or the byte count hangs (as the ring would), and one that disagrees only on
 *    the type or the operator computes with each rank's own (as the same bytes would flow).
 *  - A communicator's operations run in the order they were issued, whatever streams they were given (NCCL
 *    orders every launch after the communicator's previous one through its internal device stream:
 *    src/enqueue.cc ncclLaunchPrepare, "userStream[0] waits on deviceStream").
 *  - Groups (ncclGroupStart/ncclGroupEnd, nested): calls are recorded and issued at the outermost
 *    ncclGroupEnd; a communicator's calls of one group run together as one operation, on the first call's
 *    stream, after the work of every stream the group gave it (src/enqueue.cc, "userStream[0] waits on each
 *    userStream[i]"), and the other streams wait for it; sends and receives inside one group all progress at
 *    once (so a ring of sends and receives does not deadlock); communicators are launched in ascending
 *    commHash order (src/group.cc ncclGroupCommJoin), which every rank shares. An argument error inside a
 *    group is returned by the call and again by ncclGroupEnd, which then issues nothing.
 *  - ncclCommInitRank/InitRankConfig: every rank of an id must call it (in one thread's group or in threads of
 *    their own); blocking by default (NCCL_COMM_BLOCKING, config.blocking); a non-blocking init returns
 *    ncclInProgress and ncclCommGetAsyncError says ncclInProgress until all ranks arrived. Two ranks on one
 *    device fail init with ncclInvalidUsage: before NCCL 2.30 always ("Duplicate GPU detected", src/init.cc of
 *    v2.28.3), from 2.30 unless NCCL_MULTI_RANK_GPU_ENABLE is non-zero at the process's first communicator
 *    (NCCL_PARAM reads it once).
 *  - NCCL_RUNTIME_CONNECT (default 1 since 2.22): a communicator's first collective connects its ranks inside
 *    the host call (ncclGroupEnd waits until every rank reached its own first collective); with 0 they connect
 *    at init. Send/receive peers always connect at their first transfer, inside the host call, both sides
 *    (docs/gpu.md, run 12; the NcclSharedGpuMemoryTest comment, run 11).
 *  - ncclCommSplit: collective over the parent; NCCL_SPLIT_NOCOLOR gives NULL; ranks ordered by key then
 *    parent rank; config NULL inherits the parent's; the child's commHash derives from the parent's, the
 *    split count and the color.
 *  - ncclCommAbort: stops the communicator's operations at once (a stream held in its collective moves on),
 *    does not wait for peers. ncclCommFinalize/ncclCommDestroy wait for the rank's issued operations.
 *    From NCCL 2.26 both destroy and abort wait until no CUDA graph that captured the communicator is left
 *    (src/init.cc commDestroySync: "keep polling until all graphs referencing us die"). The process's last
 *    ncclCommDestroy of a communicator's ranks frees their device memory and so waits for all work of the
 *    devices they share, as cudaFree does (docs/gpu.md, "Fences, where the ranks are threads of one process";
 *    seen where ranks share a GPU, so modelled there only).
 *  - ncclCommEnsureReady: using a communicator whose init is in progress is ncclInvalidArgument; one with an
 *    asynchronous error returns that error.
 *  - Arguments (src/misc/argcheck.cc ArgsCheck): root/peer, type and operator checked at the call, with
 *    NCCL's WARN texts (ncclGetLastError returns the last one); empty collectives are discarded
 *    (src/enqueue.cc taskAppend "Empty collectives can be discarded"); one-rank communicators refuse a
 *    PreMulSum on fp8 (ncclAvg on ncclFloat8e4m3/e5m2: src/device/onerank.cu has no fp8 case in host code).
 *  - Buffers outside a live device allocation fault the rank's device (cudaErrorIllegalAddress, sticky) and
 *    set the communicator's asynchronous error to ncclUnhandledCudaError; the peers keep waiting.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "model.h"

/* ---------------------------------------------------------------- structures */

typedef struct CollArg {
  enum Kind kind;
  const void *send;
  void *recv;
  size_t count;
  int dtype, op, root;
} CollArg;

typedef struct CollSlot {
  struct CollSlot *next;
  uint64_t seq;
  int arrived, read, left;
  int mismatch; /* -1 unknown, 0 agree, 1 disagree (hang) */
  CollArg *arg;
} CollSlot;

typedef struct Xfer {
  struct Xfer *next;
  uint64_t seq;
  int srcRank, dstRank, dtype;
  const void *src;
  size_t sendBytes;
  void *dst;
  size_t recvBytes;
  int sendPosted, recvPosted, done, seen;
} Xfer;

typedef struct Clique {
  int nranks;
  uint64_t hash;
  struct ncclComm **rank;
  CollSlot *slots;
  Xfer **chan;               /* [src * n + dst] */
  char *connColl;            /* [rank]: reached its first collective (runtime connect) */
  char *connSend, *connRecv; /* [src * n + dst]: the send side at src, the receive side at dst */
  struct Round *splits;
  int live;
} Clique;

enum CommState { COMM_PENDING, COMM_READY, COMM_FAILED };

struct ncclComm {
  uint32_t magic;
  Clique *cl;
  int rank, nranks, device, worldRank;
  int blocking, maxCtas;
  enum CommState state;
  int asyncError;
  int aborted, dead, finalizing;
  uint64_t collSeq;
  uint64_t *sendSeq, *recvSeq;
  Stream *lastStream;
  uint64_t lastSeq;
  uint64_t splitCount;
  int graphRefs;
  long batchesRun, batchesIssued;
  int running;
  int collConnected;
  char *sendConnected, *recvConnected;
};

enum RoundKind { ROUND_INIT, ROUND_SPLIT };

/* A host rendezvous: the ranks of an init (by unique id) or of a split (by parent and split count). */
typedef struct Round {
  struct Round *next;
  enum RoundKind kind;
  char id[NCCL_UNIQUE_ID_BYTES];
  uint64_t seq;
  int nranks, arrived, done;
  struct ncclComm **member; /* the new communicator of each (parent) rank, NULL for NCCL_SPLIT_NOCOLOR */
  int *color, *key, *device, *result;
  uint64_t parentHash;
  int *worldRank;
} Round;

static Round *initRounds;

/* ---------------------------------------------------------------- helpers */

static int version_at_least(int v) {
  return g.k.ncclVersion >= v;
}

static void read_nccl_env(void) { /* lock held; once, at the first communicator (NCCL_PARAM) */
  if (g.ncclEnvRead) return;
  g.ncclEnvRead = 1;
  g.multiRankGpu = (int)env_long("NCCL_MULTI_RANK_GPU_ENABLE", 0) != 0;
  g.runtimeConnect = (int)env_long("NCCL_RUNTIME_CONNECT", 1) != 0;
  g.commBlocking = (int)env_long("NCCL_COMM_BLOCKING", 1) != 0;
  trace("NCCL environment: NCCL_MULTI_RANK_GPU_ENABLE=%d NCCL_RUNTIME_CONNECT=%d", g.multiRankGpu,
        g.runtimeConnect);
}

static uint64_t fnv(const void *p, size_t n, uint64_t h) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}

static int comm_check(struct ncclComm *c, const char *op) { /* CommCheck */
  if (!c) {
    nccl_warn("%s : comm argument is NULL", op);
    return ncclInvalidArgument;
  }
  if (c->magic != MAGIC_COMM || c->dead) {
    nccl_warn("Error: corrupted comm object detected");
    return ncclInvalidArgument;
  }
  return ncclSuccess;
}

static int comm_async(struct ncclComm *c) { /* lock held */
  if (c->state == COMM_PENDING) return ncclInProgress;
  if (c->asyncError) return c->asyncError;
  if (c->state == COMM_READY && g.dev[c->device].sticky) return ncclUnhandledCudaError;
  if (c->finalizing && c->lastStream && c->lastStream->completed < c->lastSeq) return ncclInProgress;
  return ncclSuccess;
}

static int ensure_ready(struct ncclComm *c) { /* ncclCommEnsureReady; lock held */
  int rc = comm_async(c);
  if (rc == ncclInProgress) {
    nccl_warn("Attempt to use communicator before the previous operation returned ncclSuccess");
    return ncclInvalidArgument;
  }
  return rc;
}

int nccl_comm_live(struct ncclComm *c) {
  return c && c->magic == MAGIC_COMM && !c->dead && !c->aborted;
}

void nccl_comm_graph_ref(struct ncclComm *c, int delta) {
  c->graphRefs += delta;
  if (c->graphRefs <= 0) broadcast();
}

void nccl_comm_set_last(struct ncclComm *c, Stream *s, uint64_t seq) {
  c->lastStream = s;
  c->lastSeq = seq;
}

static struct ncclComm *comm_new(int device, int blocking, int maxCtas) {
  struct ncclComm *c = calloc(1, sizeof *c);
  c->magic = MAGIC_COMM;
  c->device = device;
  c->blocking = blocking;
  c->maxCtas = maxCtas;
  c->state = COMM_PENDING;
  return c;
}

static Clique *clique_new(int n, uint64_t hash) {
  Clique *cl = calloc(1, sizeof *cl);
  cl->nranks = n;
  cl->hash = hash;
  cl->rank = calloc((size_t)n, sizeof(struct ncclComm *));
  cl->chan = calloc((size_t)n * n, sizeof(Xfer *));
  cl->connColl = calloc((size_t)n, 1);
  cl->connSend = calloc((size_t)n * n, 1);
  cl->connRecv = calloc((size_t)n * n, 1);
  return cl;
}

static void comm_join(struct ncclComm *c, Clique *cl, int rank) {
  c->cl = cl;
  c->rank = rank;
  c->nranks = cl->nranks;
  c->sendSeq = calloc((size_t)cl->nranks, sizeof(uint64_t));
  c->recvSeq = calloc((size_t)cl->nranks, sizeof(uint64_t));
  c->sendConnected = calloc((size_t)cl->nranks, 1);
  c->recvConnected = calloc((size_t)cl->nranks, 1);
  c->collConnected = !g.runtimeConnect || cl->nranks == 1;
  cl->rank[rank] = c;
  cl->live++;
}

/* The duplicate-device rule of init; 0, or ncclInvalidUsage with NCCL's WARN. */
static int duplicate_gpu(const int *device, int n) {
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < i; j++) {
      if (device[i] != device[j]) continue;
      if (!version_at_least(23000)) {
        nccl_warn("Duplicate GPU detected : rank %d and rank %d both on CUDA device %x", j, i, 0x1d000 + device[i] * 0x1000);
        return ncclInvalidUsage;
      }
      if (!g.multiRankGpu) {
        nccl_warn("Multiple Ranks are using the same GPU/Partition. Set NCCL_MULTI_RANK_GPU_ENABLE=1 to enable "
                  "this configuration.");
        return ncclInvalidUsage;
      }
    }
  }
  return ncclSuccess;
}

/* ---------------------------------------------------------------- the thread's group */

typedef struct HostCall { /* an init or a split, deferred to ncclGroupEnd */
  enum RoundKind kind;
  struct ncclComm *comm; /* the new communicator (NULL for a split with no color) */
  struct ncclComm **out;
  char id[NCCL_UNIQUE_ID_BYTES];
  int nranks, rank;
  struct ncclComm *parent;
  int color, key;
  Round *round;
} HostCall;

typedef struct Group {
  int depth;
  int error;
  NcclOp *ops;
  int nops, capOps;
  HostCall *calls;
  int ncalls, capCalls;
} Group;

static __thread Group tg;

static void group_reset(void) {
  tg.error = 0;
  tg.nops = 0;
  tg.ncalls = 0;
}

/* ---------------------------------------------------------------- rounds (init, split) */

static Round *round_new(enum RoundKind kind, int n) {
  Round *r = calloc(1, sizeof *r);
  r->kind = kind;
  r->nranks = n;
  r->member = calloc((size_t)n, sizeof(struct ncclComm *));
  r->color = calloc((size_t)n, sizeof(int));
  r->key = calloc((size_t)n, sizeof(int));
  r->device = calloc((size_t)n, sizeof(int));
  r->result = calloc((size_t)n, sizeof(int));
  r->worldRank = calloc((size_t)n, sizeof(int));
  for (int i = 0; i < n; i++) r->device[i] = -1;
  return r;
}

static void finish_comm(struct ncclComm *c, int rc) {
  if (!c) return;
  if (rc) {
    c->state = COMM_FAILED;
    c->asyncError = rc;
  } else {
    c->state = COMM_READY;
  }
}

/* The last rank of an init arrived: one clique, or every rank fails. */
static void init_complete(Round *r) {
  int rc = duplicate_gpu(r->device, r->nranks);
  if (!rc) {
    Clique *cl = clique_new(r->nranks, fnv(r->id, sizeof r->id, 0xcbf29ce484222325ull));
    for (int i = 0; i < r->nranks; i++) {
      comm_join(r->member[i], cl, i);
      r->member[i]->worldRank = i;
    }
  }
  for (int i = 0; i < r->nranks; i++) {
    r->result[i] = rc;
    finish_comm(r->member[i], rc);
  }
  r->done = 1;
  Round **p = &initRounds;
  while (*p && *p != r) p = &(*p)->next;
  if (*p) *p = r->next;
  trace("init of %d ranks done: %d", r->nranks, rc);
  broadcast();
}

/* The last rank of a split arrived: a clique per color. */
static void split_complete(Round *r, Clique *parent) {
  int n = r->nranks;
  int *order = malloc(sizeof(int) * n);
  char *doneColor = calloc((size_t)n, 1);
  for (int i = 0; i < n; i++) {
    if (r->color[i] == NCCL_SPLIT_NOCOLOR || doneColor[i]) continue;
    int m = 0;
    for (int j = 0; j < n; j++) {
      if (r->color[j] == r->color[i]) {
        order[m++] = j;
        doneColor[j] = 1;
      }
    }
    for (int a = 1; a < m; a++) { /* by key, then parent rank (insertion sort keeps rank order for equal keys) */
      int x = order[a], b = a - 1;
      while (b >= 0 && r->key[order[b]] > r->key[x]) {
        order[b + 1] = order[b];
        b--;
      }
      order[b + 1] = x;
    }
    int *devs = malloc(sizeof(int) * m);
    for (int a = 0; a < m; a++) devs[a] = r->device[order[a]];
    int rc = duplicate_gpu(devs, m);
    free(devs);
    if (!rc) {
      uint64_t h = fnv(&r->seq, sizeof r->seq, parent->hash);
      h = fnv(&r->color[i], sizeof(int), h);
      Clique *cl = clique_new(m, h);
      for (int a = 0; a < m; a++) {
        comm_join(r->member[order[a]], cl, a);
        r->member[order[a]]->worldRank = r->worldRank[order[a]];
      }
    }
    for (int a = 0; a < m; a++) {
      r->result[order[a]] = rc;
      finish_comm(r->member[order[a]], rc);
    }
  }
  free(order);
  free(doneColor);
  r->done = 1;
  Round **p = &parent->splits;
  while (*p && *p != r) p = &(*p)->next;
  if (*p) *p = r->next;
  broadcast();
}

/* Posts a deferred init or split (lock held); returns 0 or an error for this call alone. */
static int host_post(HostCall *h) {
  if (h->kind == ROUND_INIT) {
    Round *r = initRounds;
    while (r && memcmp(r->id, h->id, sizeof r->id) != 0) r = r->next;
    if (!r) {
      r = round_new(ROUND_INIT, h->nranks);
      memcpy(r->id, h->id, sizeof r->id);
      r->next = initRounds;
      initRounds = r;
    }
    if (r->nranks != h->nranks || r->member[h->rank]) {
      nccl_warn("ncclCommInitRank: rank %d of %d joins an id that %s", h->rank, h->nranks,
                r->nranks != h->nranks ? "other ranks use with another rank count" : "another call already joined as that rank");
      return ncclInvalidUsage;
    }
    r->member[h->rank] = h->comm;
    r->device[h->rank] = h->comm->device;
    h->round = r;
    if (++r->arrived == r->nranks) init_complete(r);
    return ncclSuccess;
  }
  struct ncclComm *p = h->parent;
  Clique *cl = p->cl;
  uint64_t seq = ++p->splitCount;
  Round *r = cl->splits;
  while (r && r->seq != seq) r = r->next;
  if (!r) {
    r = round_new(ROUND_SPLIT, cl->nranks);
    r->seq = seq;
    r->next = cl->splits;
    cl->splits = r;
  }
  r->member[p->rank] = h->comm;
  r->color[p->rank] = h->color;
  r->key[p->rank] = h->key;
  r->device[p->rank] = p->device;
  r->worldRank[p->rank] = p->worldRank;
  h->round = r;
  if (++r->arrived == r->nranks) split_complete(r, cl);
  return ncclSuccess;
}

/* Waits for a posted init or split (lock held); a split's wait ends if its parent is aborted. */
static int host_wait(HostCall *h) {
  Round *r = h->round;
  while (!r->done) {
    if (h->kind == ROUND_SPLIT && h->parent->aborted) {
      nccl_warn("ncclCommSplit: the parent communicator was aborted");
      return ncclInternalError;
    }
    wait_cv();
  }
  int rank = h->kind == ROUND_INIT ? h->rank : h->parent->rank;
  return r->result[rank];
}

/* ---------------------------------------------------------------- config */

typedef struct Config {
  int blocking, maxCtas;
} Config;

/* ncclConfig_t as nccl.h lays it out (size, magic, version, blocking, cgaClusterSize, minCTAs, maxCTAs,
   netName, ...): NCCL reads min(config->size, sizeof its own) bytes (src/init.cc parseCommConfig). */
static int config_read(const void *p, Config *out, const Config *inherit) {
  *out = inherit ? *inherit : (Config){g.commBlocking, NCCL_CONFIG_UNDEF_INT};
  if (!p) return ncclSuccess;
  const unsigned char *b = p;
  size_t size;
  unsigned magic;
  memcpy(&size, b, sizeof size);
  memcpy(&magic, b + 8, sizeof magic);
  if (magic != NCCL_API_MAGIC) {
    nccl_warn("ncclConfig_t argument not initialized via NCCL_CONFIG_INITIALIZER");
    return ncclInvalidArgument;
  }
  int blocking = NCCL_CONFIG_UNDEF_INT, maxCtas = NCCL_CONFIG_UNDEF_INT;
  if (size >= 20) memcpy(&blocking, b + 16, sizeof(int));
  if (size >= 32) memcpy(&maxCtas, b + 28, sizeof(int));
  if (blocking != NCCL_CONFIG_UNDEF_INT) {
    if (blocking != 0 && blocking != 1) {
      nccl_warn("Invalid config blocking attribute value %d", blocking);
      return ncclInvalidArgument;
    }
    out->blocking = blocking;
  } else if (!inherit) {
    out->blocking = g.commBlocking;
  }
  if (maxCtas != NCCL_CONFIG_UNDEF_INT) {
    if (maxCtas <= 0) {
      nccl_warn("Invalid config max CTAs attribute value %d", maxCtas);
      return ncclInvalidArgument;
    }
    out->maxCtas = maxCtas;
  }
  return ncclSuccess;
}

/* ---------------------------------------------------------------- library, ids, init */

EXPORT int ncclGetVersion(int *version) {
  model_init();
  if (!version) return ncclInvalidArgument;
  *version = g.k.ncclVersion;
  return ncclSuccess;
}

EXPORT const char *ncclGetErrorString(int code) {
  switch (code) {
  case ncclSuccess: return "no error";
  case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
  case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
  case ncclInternalError: return "internal error - please report this issue to the NCCL developers";
  case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
  case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
  case ncclRemoteError: return "remote process exited or there was a network error";
  case ncclInProgress: return "NCCL operation in progress";
  case ncclTimeout: return "timeout";
  default: return "unknown result code";
  }
}

EXPORT const char *ncclGetLastError(void *comm) {
  (void)comm;
  return g.lastError;
}

EXPORT int ncclGetUniqueId(ncclUniqueId *id) {
  model_init();
  if (!id) {
    nccl_warn("ncclGetUniqueId : uniqueId argument is NULL");
    return ncclInvalidArgument;
  }
  static uint64_t counter;
  memset(id, 0, sizeof *id);
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  lock();
  uint64_t n = ++counter;
  unlock();
  uint64_t words[4] = {0x4d4c504d4f43ull /* "COMPLM" */, (uint64_t)getpid(), n,
                       (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec};
  memcpy(id->internal, words, sizeof words);
  return ncclSuccess;
}

/* An error of a call inside a group: ncclGroupEnd returns it too, and issues nothing. */
static int group_failed(int rc) {
  if (tg.depth > 0 && !tg.error) tg.error = rc;
  return rc;
}

static int init_rank(struct ncclComm **out, int nranks, ncclUniqueId id, int rank, const void *config) {
  model_init();
  if (!out) {
    nccl_warn("ncclCommInitRank : newcomm argument is NULL");
    return group_failed(ncclInvalidArgument);
  }
  if (nranks < 1 || rank < 0 || rank >= nranks) {
    nccl_warn("Invalid rank requested : %d/%d", rank, nranks);
    return group_failed(ncclInvalidArgument);
  }
  if (g.k.devices == 0) {
    nccl_warn("Cuda failure 'no CUDA-capable device is detected'");
    return group_failed(ncclUnhandledCudaError);
  }
  uint64_t words[2];
  memcpy(words, id.internal, sizeof words);
  if (words[0] != 0x4d4c504d4f43ull) {
    nccl_warn("ncclCommInitRank: the unique id was not made by ncclGetUniqueId of this model");
    return group_failed(ncclInvalidArgument);
  }
  if (words[1] != (uint64_t)getpid()) { /* ranks in other processes are not modelled (gpu-model/README.md) */
    nccl_warn("the CPU model runs ranks of one process only; this unique id comes from process %llu",
              (unsigned long long)words[1]);
    return group_failed(ncclSystemError);
  }
  lock();
  read_nccl_env();
  Config cfg;
  int rc = config_read(config, &cfg, NULL);
  if (rc) {
    if (tg.depth > 0 && !tg.error) tg.error = rc; /* ncclGroupEnd then issues nothing */
    unlock();
    return rc;
  }
  HostCall h = {.kind = ROUND_INIT, .out = out, .nranks = nranks, .rank = rank};
  memcpy(h.id, id.internal, sizeof h.id);
  h.comm = comm_new(current_device(), cfg.blocking, cfg.maxCtas);
  if (tg.depth > 0) { /* issued at ncclGroupEnd */
    if (tg.ncalls == tg.capCalls) {
      tg.capCalls = tg.capCalls ? 2 * tg.capCalls : 8;
      tg.calls = realloc(tg.calls, sizeof(HostCall) * tg.capCalls);
    }
    tg.calls[tg.ncalls++] = h;
    *out = h.comm;
    unlock();
    return ncclSuccess;
  }
  rc = host_post(&h);
  if (!rc && !cfg.blocking) {
    *out = h.comm;
    unlock();
    return ncclInProgress;
  }
  if (!rc) rc = host_wait(&h);
  if (rc) {
    h.comm->dead = 1;
    *out = NULL;
  } else {
    *out = h.comm;
  }
  unlock();
  return rc;
}

EXPORT int ncclCommInitRank(struct ncclComm **comm, int nranks, ncclUniqueId id, int rank) {
  return init_rank(comm, nranks, id, rank, NULL);
}

EXPORT int ncclCommInitRankConfig(struct ncclComm **comm, int nranks, ncclUniqueId id, int rank, void *config) {
  return init_rank(comm, nranks, id, rank, config);
}

EXPORT int ncclCommSplit(struct ncclComm *comm, int color, int key, struct ncclComm **newcomm, void *config) {
  model_init();
  lock();
  int rc = comm_check(comm, "ncclCommSplit");
  if (!rc) rc = ensure_ready(comm);
  if (!rc && !newcomm) {
    nccl_warn("ncclCommSplit : newcomm argument is NULL");
    rc = ncclInvalidArgument;
  }
  if (!rc && color < 0 && color != NCCL_SPLIT_NOCOLOR) {
    nccl_warn("ncclCommSplit : invalid color %d", color);
    rc = ncclInvalidArgument;
  }
  Config parent = {comm ? comm->blocking : 1, comm ? comm->maxCtas : 0}, cfg;
  if (!rc) rc = config_read(config, &cfg, &parent);
  if (rc) {
    if (tg.depth > 0 && !tg.error) tg.error = rc;
    unlock();
    return rc;
  }
  HostCall h = {.kind = ROUND_SPLIT, .out = newcomm, .parent = comm, .color = color, .key = key};
  if (color != NCCL_SPLIT_NOCOLOR) h.comm = comm_new(comm->device, cfg.blocking, cfg.maxCtas);
  *newcomm = h.comm;
  if (tg.depth > 0) {
    if (tg.ncalls == tg.capCalls) {
      tg.capCalls = tg.capCalls ? 2 * tg.capCalls : 8;
      tg.calls = realloc(tg.calls, sizeof(HostCall) * tg.capCalls);
    }
    tg.calls[tg.ncalls++] = h;
    unlock();
    return ncclSuccess;
  }
  rc = host_post(&h);
  if (!rc && !cfg.blocking) {
    unlock();
    return h.comm ? ncclInProgress : ncclSuccess;
  }
  if (!rc) rc = host_wait(&h);
  if (rc) {
    if (h.comm) h.comm->dead = 1;
    *newcomm = NULL;
  }
  unlock();
  return rc;
}

/* ---------------------------------------------------------------- asking communicators */

EXPORT int ncclCommCount(struct ncclComm *comm, int *count) {
  model_init();
  lock();
  int rc = comm_check(comm, "ncclCommCount");
  if (!rc) rc = ensure_ready(comm);
  if (!rc && !count) rc = ncclInvalidArgument;
  if (!rc) *count = comm->nranks;
  unlock();
  return rc;
}

EXPORT int ncclCommUserRank(struct ncclComm *comm, int *rank) {
  model_init();
  lock();
  int rc = comm_check(comm, "ncclCommUserRank");
  if (!rc) rc = ensure_ready(comm);
  if (!rc && !rank) rc = ncclInvalidArgument;
  if (!rc) *rank = comm->rank;
  unlock();
  return rc;
}

EXPORT int ncclCommCuDevice(struct ncclComm *comm, int *device) {
  model_init();
  lock();
  int rc = comm_check(comm, "ncclCommCuDevice");
  if (!rc) rc = ensure_ready(comm);
  if (!rc && !device) rc = ncclInvalidArgument;
  if (!rc) *device = comm->device;
  unlock();
  return rc;
}

EXPORT int ncclCommGetAsyncError(struct ncclComm *comm, int *asyncError) {
  model_init();
  lock();
  int rc = comm_check(comm, "ncclGetAsyncError");
  if (!rc && !asyncError) {
    nccl_warn("ncclGetAsyncError : asyncError argument is NULL");
    rc = ncclInvalidArgument;
  }
  if (!rc) *asyncError = comm_async(comm);
  unlock();
  return rc;
}

/* ---------------------------------------------------------------- ending communicators */

static void wait_issued(struct ncclComm *c) { /* lock held: the rank's issued operations are done */
  if (c->lastStream) wait_stream(c->lastStream, c->lastSeq);
}

static void wait_graphs(struct ncclComm *c) { /* NCCL 2.26's commDestroySync */
  if (!version_at_least(22600)) return;
  if (c->graphRefs > 0) trace("comm %p rank %d waits for %d graph references", (void *)c, c->rank, c->graphRefs);
  while (c->graphRefs > 0) wait_cv();
}

EXPORT int ncclCommFinalize(struct ncclComm *comm) {
  model_init();
  lock();
  int rc = comm_check(comm, "ncclCommFinalize");
  if (!rc) rc = ensure_ready(comm);
  if (!rc) {
    comm->finalizing = 1;
    if (comm->blocking) wait_issued(comm);
    else rc = comm_async(comm);
  }
  unlock();
  return rc;
}

EXPORT int ncclCommDestroy(struct ncclComm *comm) {
  model_init();
  if (!comm) return ncclSuccess;
  lock();
  int rc = comm_check(comm, "ncclCommDestroy");
  if (!rc) {
    if (comm->state == COMM_READY) {
      wait_issued(comm);
      wait_graphs(comm);
    }
    comm->dead = 1;
    broadcast();
    Clique *cl = comm->cl;
    if (cl && --cl->live == 0) {
      /* the process's last rank of the communicator frees the device memory of its ranks that share a device:
         waits for all work of that device, as cudaFree does (observed where ranks share a GPU, docs/gpu.md;
         not modelled for ranks on devices of their own, where no GPU run has shown it) */
      for (int i = 0; i < cl->nranks; i++) {
        int d = cl->rank[i]->device, seen = 0, shared = 0;
        for (int j = 0; j < cl->nranks; j++) {
          if (j != i && cl->rank[j]->device == d) {
            shared = 1;
            seen |= j < i;
          }
        }
        if (shared && !seen) device_synchronize_host(d);
      }
    }
  }
  unlock();
  return rc;
}

EXPORT int ncclCommAbort(struct ncclComm *comm) {
  model_init();
  if (!comm) return ncclSuccess;
  lock();
  int rc = comm_check(comm, "ncclCommAbort");
  if (!rc) {
    comm->aborted = 1;
    broadcast();
    while (comm->running > 0) wait_cv(); /* its kernels give up */
    wait_graphs(comm);
    comm->dead = 1;
    if (comm->cl) comm->cl->live--;
    broadcast();
    trace("comm %p rank %d aborted", (void *)comm, comm->rank);
  }
  unlock();
  return rc;
}

/* ---------------------------------------------------------------- collectives: checks and the group */

static int args_check(NcclOp *op, const char *name) { /* ArgsCheck; lock held */
  struct ncclComm *c = op->comm;
  int rc = comm_check(c, name);
  if (rc) return rc;
  rc = ensure_ready(c);
  if (rc) return rc;
  int rooted = op->kind == K_BROADCAST || op->kind == K_REDUCE || op->kind == K_GATHER || op->kind == K_SCATTER ||
               op->kind == K_SEND || op->kind == K_RECV;
  if (rooted && (op->root < 0 || op->root >= c->nranks)) {
    nccl_warn("%s : invalid root %d (root should be in the 0..%d range)", name, op->root, c->nranks);
    return ncclInvalidArgument;
  }
  if (op->dtype < 0 || op->dtype >= ncclNumTypes) {
    nccl_warn("%s : invalid type %d", name, op->dtype);
    return ncclInvalidArgument;
  }
  if (op->op < 0 || op->op >= ncclNumOps) {
    nccl_warn("%s : invalid reduction operation %d", name, op->op);
    return ncclInvalidArgument;
  }
  int reduces = op->kind == K_ALLREDUCE || op->kind == K_REDUCE || op->kind == K_REDUCESCATTER;
  if (reduces && op->op == ncclAvg && c->nranks == 1 &&
      (op->dtype == ncclFloat8e4m3 || op->dtype == ncclFloat8e5m2)) {
    /* ncclLaunchOneRank: PreMulSum of fp8 has no kernel in host code (src/device/onerank.cu) */
    nccl_warn("%s : no one-rank PreMulSum kernel for type %d", name, op->dtype);
    return ncclInvalidArgument;
  }
  return ncclSuccess;
}

static int group_end(void);

static int issue(NcclOp op) {
  model_init();
  const char *name = KIND_NAME[op.kind];
  char fname[32];
  snprintf(fname, sizeof fname, "nccl%s", name);
  lock();
  int rc = args_check(&op, fname);
  if (!rc) {
    Stream *s;
    rc = stream_resolve((uintptr_t)op.stream, &s);
    if (rc) {
      nccl_warn("%s : invalid stream", fname);
      rc = ncclInvalidArgument;
    } else {
      op.stream = s;
    }
  }
  if (rc) {
    if (tg.depth > 0 && !tg.error) tg.error = rc;
    unlock();
    return rc;
  }
  int collective = op.kind != K_SEND && op.kind != K_RECV;
  if (collective && op.count == 0) { /* "Empty collectives can be discarded" */
    unlock();
    return ncclSuccess;
  }
  if (tg.nops == tg.capOps) {
    tg.capOps = tg.capOps ? 2 * tg.capOps : 16;
    tg.ops = realloc(tg.ops, sizeof(NcclOp) * tg.capOps);
  }
  tg.ops[tg.nops++] = op;
  unlock();
  if (tg.depth > 0) return ncclSuccess;
  return group_end(); /* NCCL wraps an ungrouped call in a group of its own */
}

EXPORT int ncclGroupStart(void) {
  model_init();
  tg.depth++;
  return ncclSuccess;
}

EXPORT int ncclGroupEnd(void) {
  model_init();
  if (tg.depth <= 0) {
    lock();
    nccl_warn("ncclGroupEnd: not in a group call.");
    unlock();
    return ncclInvalidUsage;
  }
  if (--tg.depth > 0) return ncclSuccess;
  return group_end();
}

typedef struct Batching {
  struct ncclComm *comm;
  int first; /* index of its first op */
} Batching;

/* The runtime connections of a group's calls (lock held): posts this rank's side of each connection not
   made yet, then waits for every peer's side. */
static int connect_all(Batching *b, int nb) {
  for (int i = 0; i < nb; i++) {
    struct ncclComm *c = b[i].comm;
    Clique *cl = c->cl;
    int n = c->nranks;
    for (int k = 0; k < tg.nops; k++) {
      NcclOp *op = &tg.ops[k];
      if (op->comm != c) continue;
      if (op->kind == K_SEND && op->root != c->rank) cl->connSend[c->rank * n + op->root] = 1;
      else if (op->kind == K_RECV && op->root != c->rank) cl->connRecv[op->root * n + c->rank] = 1;
      else if (op->kind != K_SEND && op->kind != K_RECV && !c->collConnected) cl->connColl[c->rank] = 1;
    }
  }
  broadcast();
  for (int i = 0; i < nb; i++) {
    struct ncclComm *c = b[i].comm;
    Clique *cl = c->cl;
    int n = c->nranks;
    for (int k = 0; k < tg.nops; k++) {
      NcclOp *op = &tg.ops[k];
      if (op->comm != c) continue;
      for (;;) {
        int ok;
        if (op->kind == K_SEND) {
          ok = op->root == c->rank || c->sendConnected[op->root] || cl->connRecv[c->rank * n + op->root];
        } else if (op->kind == K_RECV) {
          ok = op->root == c->rank || c->recvConnected[op->root] || cl->connSend[op->root * n + c->rank];
        } else {
          ok = c->collConnected || memchr(cl->connColl, 0, (size_t)n) == NULL;
        }
        if (ok) break;
        if (c->aborted) {
          nccl_warn("%s : the communicator was aborted while connecting its peers", KIND_NAME[op->kind]);
          return ncclInternalError;
        }
        wait_cv();
      }
      if (op->kind == K_SEND) c->sendConnected[op->root] = 1;
      else if (op->kind == K_RECV) c->recvConnected[op->root] = 1;
      else c->collConnected = 1;
    }
  }
  return ncclSuccess;
}

/* Issues one communicator's calls of the group (lock held). */
static int launch_batch(struct ncclComm *c) {
  int nops = 0;
  for (int k = 0; k < tg.nops; k++) nops += tg.ops[k].comm == c;
  NcclOp *ops = malloc(sizeof(NcclOp) * nops);
  nops = 0;
  for (int k = 0; k < tg.nops; k++) {
    if (tg.ops[k].comm == c) ops[nops++] = tg.ops[k];
  }
  Stream *s0 = ops[0].stream;
  if (s0->cap) { /* captured: a graph node; sequence numbers come at each launch */
    for (int k = 1; k < nops; k++) {
      if (ops[k].stream->cap != s0->cap) {
        free(ops);
        nccl_warn("Streams given to a communicator within a NCCL group must either be all uncaptured or all "
                  "captured by the same graph.");
        return ncclInvalidUsage;
      }
    }
    Node node = {.kind = N_NCCL};
    node.u.nccl.comm = c;
    node.u.nccl.ops = ops;
    node.u.nccl.nops = nops;
    int rc = capture_add(s0, &node);
    if (rc) {
      free(ops);
      nccl_warn("Cuda failure '%s'", cudaGetErrorString(rc));
      return ncclUnhandledCudaError;
    }
    return ncclSuccess;
  }
  for (int k = 1; k < nops; k++) {
    if (ops[k].stream->cap) {
      free(ops);
      nccl_warn("Streams given to a communicator within a NCCL group must either be all uncaptured or all "
                "captured by the same graph.");
      return ncclInvalidUsage;
    }
  }
  if (g.dev[s0->device].sticky) {
    free(ops);
    nccl_warn("Cuda failure '%s'", cudaGetErrorString(g.dev[s0->device].sticky));
    return ncclUnhandledCudaError;
  }
  if (g.k.absentAfter >= 0 && c->worldRank == g.k.absentRank && c->batchesIssued >= g.k.absentAfter) {
    trace("rank %d never arrives (COMMPLAN_MODEL_ABSENT)", c->worldRank);
    free(ops);
    return ncclSuccess;
  }
  c->batchesIssued++;
  NcclBatch *b = calloc(1, sizeof *b);
  b->comm = c;
  b->ops = ops;
  b->nops = nops;
  b->seq = calloc((size_t)nops, sizeof(uint64_t));
  for (int k = 0; k < nops; k++) {
    if (ops[k].kind == K_SEND) b->seq[k] = ++c->sendSeq[ops[k].root];
    else if (ops[k].kind == K_RECV) b->seq[k] = ++c->recvSeq[ops[k].root];
    else b->seq[k] = ++c->collSeq;
  }
  Work *w = work_new(W_NCCL);
  w->u.batch = b;
  if (c->lastStream != s0) deplist_add(&w->deps, c->lastStream, c->lastSeq);
  for (int k = 1; k < nops; k++) {
    Stream *s = ops[k].stream;
    if (s != s0) deplist_add(&w->deps, s, s->enqueued);
  }
  stream_enqueue(s0, w);
  c->lastStream = s0;
  c->lastSeq = w->seq;
  for (int k = 1; k < nops; k++) {
    Stream *s = ops[k].stream;
    int seen = s == s0;
    for (int j = 1; j < k; j++) seen |= ops[j].stream == s;
    if (seen) continue;
    Work *after = work_new(W_NOP);
    deplist_add(&after->deps, s0, w->seq);
    stream_enqueue(s, after);
  }
  return ncclSuccess;
}

NcclBatch *nccl_batch_for_launch(struct ncclComm *c, NcclOp *ops, int nops, Dep *after) {
  NcclBatch *b = calloc(1, sizeof *b);
  b->comm = c;
  b->ops = ops;
  b->nops = nops;
  b->graphOwned = 1;
  b->seq = calloc((size_t)nops, sizeof(uint64_t));
  for (int k = 0; k < nops; k++) {
    if (ops[k].kind == K_SEND) b->seq[k] = ++c->sendSeq[ops[k].root];
    else if (ops[k].kind == K_RECV) b->seq[k] = ++c->recvSeq[ops[k].root];
    else b->seq[k] = ++c->collSeq;
  }
  after->s = c->lastStream;
  after->seq = c->lastSeq;
  return b;
}

void nccl_batch_free(NcclBatch *b) {
  if (!b) return;
  if (!b->graphOwned) free(b->ops);
  free(b->seq);
  free(b);
}

static int group_end(void) {
  lock();
  int rc = tg.error;
  if (rc) { /* a call of the group failed: nothing is issued */
    for (int i = 0; i < tg.ncalls; i++) {
      if (tg.calls[i].comm) tg.calls[i].comm->dead = 1;
      if (tg.calls[i].out) *tg.calls[i].out = NULL;
    }
    group_reset();
    unlock();
    return rc;
  }
  /* inits and splits: every one posted, then waited for, so that one thread can make every rank */
  int nonblockingOnly = tg.ncalls > 0;
  for (int i = 0; i < tg.ncalls && !rc; i++) rc = host_post(&tg.calls[i]);
  for (int i = 0; i < tg.ncalls && !rc; i++) {
    HostCall *h = &tg.calls[i];
    int blocking = h->comm ? h->comm->blocking : 1;
    nonblockingOnly &= !blocking;
    if (blocking) rc = host_wait(h);
  }
  if (rc) {
    for (int i = 0; i < tg.ncalls; i++) {
      if (tg.calls[i].comm && tg.calls[i].comm->state != COMM_READY) {
        tg.calls[i].comm->dead = 1;
        if (tg.calls[i].out) *tg.calls[i].out = NULL;
      }
    }
    group_reset();
    unlock();
    return rc;
  }
  /* collectives and transfers: per communicator, in ascending commHash order */
  Batching *b = malloc(sizeof(Batching) * (tg.nops ? tg.nops : 1));
  int nb = 0;
  for (int k = 0; k < tg.nops; k++) {
    struct ncclComm *c = tg.ops[k].comm;
    int seen = 0;
    for (int i = 0; i < nb; i++) seen |= b[i].comm == c;
    if (!seen) b[nb++] = (Batching){c, k};
  }
  for (int i = 1; i < nb; i++) {
    Batching x = b[i];
    int j = i - 1;
    while (j >= 0 && b[j].comm->cl->hash > x.comm->cl->hash) {
      b[j + 1] = b[j];
      j--;
    }
    b[j + 1] = x;
  }
  for (int i = 0; i < nb && !rc; i++) rc = ensure_ready(b[i].comm);
  if (!rc) rc = connect_all(b, nb);
  for (int i = 0; i < nb && !rc; i++) rc = launch_batch(b[i].comm);
  free(b);
  group_reset();
  unlock();
  if (!rc && nonblockingOnly) return ncclInProgress;
  return rc;
}

/* ---------------------------------------------------------------- the calls */

EXPORT int ncclAllReduce(const void *send, void *recv, size_t count, int dtype, int op, struct ncclComm *comm,
                         void *stream) {
  return issue((NcclOp){K_ALLREDUCE, send, recv, count, dtype, op, 0, comm, (Stream *)stream});
}

EXPORT int ncclBroadcast(const void *send, void *recv, size_t count, int dtype, int root, struct ncclComm *comm,
                         void *stream) {
  return issue((NcclOp){K_BROADCAST, send, recv, count, dtype, ncclSum, root, comm, (Stream *)stream});
}

EXPORT int ncclReduce(const void *send, void *recv, size_t count, int dtype, int op, int root,
                      struct ncclComm *comm, void *stream) {
  return issue((NcclOp){K_REDUCE, send, recv, count, dtype, op, root, comm, (Stream *)stream});
}

EXPORT int ncclAllGather(const void *send, void *recv, size_t sendcount, int dtype, struct ncclComm *comm,
                         void *stream) {
  return issue((NcclOp){K_ALLGATHER, send, recv, sendcount, dtype, ncclSum, 0, comm, (Stream *)stream});
}

EXPORT int ncclReduceScatter(const void *send, void *recv, size_t recvcount, int dtype, int op,
                             struct ncclComm *comm, void *stream) {
  return issue((NcclOp){K_REDUCESCATTER, send, recv, recvcount, dtype, op, 0, comm, (Stream *)stream});
}

EXPORT int ncclGather(const void *send, void *recv, size_t count, int dtype, int root, struct ncclComm *comm,
                      void *stream) {
  return issue((NcclOp){K_GATHER, send, recv, count, dtype, ncclSum, root, comm, (Stream *)stream});
}

EXPORT int ncclScatter(const void *send, void *recv, size_t count, int dtype, int root, struct ncclComm *comm,
                       void *stream) {
  return issue((NcclOp){K_SCATTER, send, recv, count, dtype, ncclSum, root, comm, (Stream *)stream});
}

EXPORT int ncclAlltoAll(const void *send, void *recv, size_t count, int dtype, struct ncclComm *comm,
                        void *stream) {
  return issue((NcclOp){K_ALLTOALL, send, recv, count, dtype, ncclSum, 0, comm, (Stream *)stream});
}

EXPORT int ncclSend(const void *send, size_t count, int dtype, int peer, struct ncclComm *comm, void *stream) {
  return issue((NcclOp){K_SEND, send, NULL, count, dtype, ncclSum, peer, comm, (Stream *)stream});
}

EXPORT int ncclRecv(void *recv, size_t count, int dtype, int peer, struct ncclComm *comm, void *stream) {
  return issue((NcclOp){K_RECV, NULL, recv, count, dtype, ncclSum, peer, comm, (Stream *)stream});
}

/* ---------------------------------------------------------------- running a batch (stream worker) */

/* The bytes of the send and receive buffers of op on its rank (0 where the rank does not use one). */
static void op_bytes(const NcclOp *op, int rank, int n, size_t *sendBytes, size_t *recvBytes) {
  size_t e = dtype_size(op->dtype), c = op->count * e;
  int root = rank == op->root;
  switch (op->kind) {
  case K_ALLREDUCE: *sendBytes = c; *recvBytes = c; break;
  case K_BROADCAST: *sendBytes = root ? c : 0; *recvBytes = c; break;
  case K_REDUCE: *sendBytes = c; *recvBytes = root ? c : 0; break;
  case K_ALLGATHER: *sendBytes = c; *recvBytes = c * n; break;
  case K_REDUCESCATTER: *sendBytes = c * n; *recvBytes = c; break;
  case K_GATHER: *sendBytes = c; *recvBytes = root ? c * n : 0; break;
  case K_SCATTER: *sendBytes = root ? c * n : 0; *recvBytes = c; break;
  case K_ALLTOALL: *sendBytes = c * n; *recvBytes = c * n; break;
  case K_SEND: *sendBytes = c; *recvBytes = 0; break;
  case K_RECV: *sendBytes = 0; *recvBytes = c; break;
  default: *sendBytes = *recvBytes = 0; break;
  }
}

static int rooted(enum Kind k) {
  return k == K_BROADCAST || k == K_REDUCE || k == K_GATHER || k == K_SCATTER;
}

static int overlaps(const void *a, size_t na, const void *b, size_t nb) {
  uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
  return na && nb && x < y + nb && y < x + na;
}

/* Waits (lock held) until cond holds or the communicator is aborted; returns 0 when aborted. */
#define WAIT_UNLESS_ABORTED(c, cond)                                                                         \
  ({                                                                                                         \
    while (!(cond) && !(c)->aborted) wait_cv();                                                              \
    !(c)->aborted;                                                                                           \
  })

/* Computes rank r's output of the collective in slot s into out (the peers' inputs are pinned). */
static void compute(CollSlot *s, int r, int n, void *out) {
  CollArg *me = &s->arg[r];
  size_t e = dtype_size(me->dtype), c = me->count * e;
  if (n == 1) { /* ncclLaunchOneRank: a copy (x * 1 or x / 1 for AVG) */
    if (out != me->send) memcpy(out, me->send, c);
    return;
  }
  const void **in = malloc(sizeof(void *) * n);
  switch (me->kind) {
  case K_ALLREDUCE:
  case K_REDUCE:
    for (int p = 0; p < n; p++) in[p] = s->arg[p].send;
    reduce_elems(me->dtype, me->op, n, (const void *const *)in, out, me->count);
    break;
  case K_REDUCESCATTER:
    for (int p = 0; p < n; p++) in[p] = (const char *)s->arg[p].send + (size_t)r * c;
    reduce_elems(me->dtype, me->op, n, (const void *const *)in, out, me->count);
    break;
  case K_BROADCAST: memcpy(out, s->arg[me->root].send, c); break;
  case K_ALLGATHER:
  case K_GATHER:
    for (int p = 0; p < n; p++) memcpy((char *)out + (size_t)p * c, s->arg[p].send, c);
    break;
  case K_SCATTER: memcpy(out, (const char *)s->arg[me->root].send + (size_t)r * c, c); break;
  case K_ALLTOALL:
    for (int p = 0; p < n; p++) memcpy((char *)out + (size_t)p * c, (const char *)s->arg[p].send + (size_t)r * c, c);
    break;
  default: break;
  }
  free(in);
}

static int disagree(CollSlot *s, int n) {
  CollArg *a = &s->arg[0];
  for (int p = 1; p < n; p++) {
    CollArg *b = &s->arg[p];
    if (b->kind != a->kind || b->count * dtype_size(b->dtype) != a->count * dtype_size(a->dtype)) return 1;
    if (rooted(a->kind) && b->root != a->root) return 1;
  }
  return 0;
}

static void run_collective(struct ncclComm *c, const NcclOp *op, uint64_t seq) {
  Clique *cl = c->cl;
  int n = c->nranks, r = c->rank;
  lock();
  CollSlot *s = cl->slots;
  while (s && s->seq != seq) s = s->next;
  if (!s) {
    s = calloc(1, sizeof *s);
    s->seq = seq;
    s->mismatch = -1;
    s->arg = calloc((size_t)n, sizeof(CollArg));
    s->next = cl->slots;
    cl->slots = s;
  }
  s->arg[r] = (CollArg){op->kind, op->send, op->recv, op->count, op->dtype, op->op, op->root};
  s->arrived++;
  broadcast();
  if (!WAIT_UNLESS_ABORTED(c, s->arrived == n)) {
    unlock();
    return;
  }
  if (s->mismatch < 0) s->mismatch = disagree(s, n);
  if (s->mismatch) { /* NCCL's kernels would wait for data that never comes */
    trace("rank %d: collective #%llu disagrees across ranks: it hangs", r, (unsigned long long)seq);
    while (!c->aborted) wait_cv();
    unlock();
    return;
  }
  /* pin the peers' inputs while reading them */
  Alloc **pins = calloc((size_t)n, sizeof(Alloc *));
  int ok = 1;
  for (int p = 0; p < n; p++) {
    size_t sb, rb;
    NcclOp peer = {.kind = s->arg[p].kind, .count = s->arg[p].count, .dtype = s->arg[p].dtype, .root = s->arg[p].root};
    op_bytes(&peer, p, n, &sb, &rb);
    if (!sb) continue;
    Alloc *a = alloc_find((uintptr_t)s->arg[p].send);
    if (!a) ok = 0;
    else {
      a->pins++;
      pins[p] = a;
    }
  }
  unlock();
  size_t sendBytes, recvBytes;
  op_bytes(op, r, n, &sendBytes, &recvBytes);
  void *out = NULL, *temp = NULL;
  if (recvBytes && ok) {
    int inPlace = 0;
    for (int p = 0; p < n; p++) {
      size_t sb, rb;
      NcclOp peer = {.kind = s->arg[p].kind, .count = s->arg[p].count, .dtype = s->arg[p].dtype, .root = s->arg[p].root};
      op_bytes(&peer, p, n, &sb, &rb);
      inPlace |= overlaps(op->recv, recvBytes, s->arg[p].send, sb);
    }
    if (n == 1 && op->recv == op->send) inPlace = 0; /* one rank in place: nothing to do */
    out = inPlace ? (temp = malloc(recvBytes)) : op->recv;
    compute(s, r, n, out);
    if (g.k.mutateKind == (int)op->kind && g.k.mutateRank == r) {
      size_t elems = recvBytes / dtype_size(op->dtype);
      size_t i = (size_t)g.k.mutateIndex < elems ? (size_t)g.k.mutateIndex : elems - 1;
      mutate_elem(op->dtype, (char *)out + i * dtype_size(op->dtype));
    }
  }
  for (int p = 0; p < n; p++) unpin(pins[p]);
  free(pins);
  lock();
  s->read++;
  broadcast();
  int alive = WAIT_UNLESS_ABORTED(c, s->read == n);
  unlock();
  if (temp && alive) memcpy(op->recv, temp, recvBytes);
  free(temp);
  lock();
  if (alive && ++s->left == n) {
    CollSlot **pp = &cl->slots;
    while (*pp && *pp != s) pp = &(*pp)->next;
    if (*pp) *pp = s->next;
    free(s->arg);
    free(s);
  }
  unlock();
}

static Xfer *xfer_of(Clique *cl, int src, int dst, uint64_t seq) { /* lock held */
  Xfer **head = &cl->chan[src * cl->nranks + dst];
  for (Xfer *x = *head; x; x = x->next) {
    if (x->seq == seq) return x;
  }
  Xfer *x = calloc(1, sizeof *x);
  x->seq = seq;
  x->srcRank = src;
  x->dstRank = dst;
  x->next = *head;
  *head = x;
  return x;
}

/* Both sides posted: the second poster copies (lock held on entry and exit). */
static void xfer_copy(Xfer *x) {
  if (x->sendBytes != x->recvBytes) return; /* sizes that disagree: neither side ever completes */
  Alloc *a = x->sendBytes ? alloc_find((uintptr_t)x->src) : NULL;
  Alloc *b = x->recvBytes ? alloc_find((uintptr_t)x->dst) : NULL;
  if (a) a->pins++;
  if (b) b->pins++;
  unlock();
  if (x->sendBytes && a && b) {
    memmove(x->dst, x->src, x->sendBytes);
    /* the mutation switch: the sender's data arrives wrong (Send), or the receiver's arrives wrong (Recv) */
    if ((g.k.mutateKind == K_SEND && g.k.mutateRank == x->srcRank) ||
        (g.k.mutateKind == K_RECV && g.k.mutateRank == x->dstRank)) {
      size_t e = dtype_size(x->dtype), elems = x->recvBytes / e;
      size_t i = (size_t)g.k.mutateIndex < elems ? (size_t)g.k.mutateIndex : elems - 1;
      mutate_elem(x->dtype, (char *)x->dst + i * e);
    }
  }
  unpin(a);
  unpin(b);
  lock();
  x->done = 1;
  broadcast();
}

static void xfer_leave(Clique *cl, int src, int dst, Xfer *x) { /* lock held */
  if (++x->seen < 2) return;
  Xfer **pp = &cl->chan[src * cl->nranks + dst];
  while (*pp && *pp != x) pp = &(*pp)->next;
  if (*pp) *pp = x->next;
  free(x);
}

/* Checks and pins the rank's own buffers of the batch; 0 when every one is device memory. */
static int pin_own(NcclBatch *b, Alloc **pins) {
  struct ncclComm *c = b->comm;
  for (int k = 0; k < b->nops; k++) {
    NcclOp *op = &b->ops[k];
    size_t sb, rb;
    op_bytes(op, c->rank, c->nranks, &sb, &rb);
    pins[2 * k] = pins[2 * k + 1] = NULL;
    if ((sb && pin_range(op->send, sb, &pins[2 * k])) || (rb && pin_range(op->recv, rb, &pins[2 * k + 1]))) {
      char what[200];
      snprintf(what, sizeof what, "nccl%s of rank %d reads %p (%zu bytes) and writes %p (%zu bytes)",
               KIND_NAME[op->kind], c->rank, op->send, sb, op->recv, rb);
      device_fault(c->device, what);
      return -1;
    }
  }
  return 0;
}

void nccl_run_batch(NcclBatch *b) {
  struct ncclComm *c = b->comm;
  lock();
  if (c->aborted || c->dead) {
    unlock();
    return;
  }
  c->running++;
  if (g.k.asyncErrorAfter >= 0 && c->worldRank == g.k.asyncErrorRank && c->batchesRun >= g.k.asyncErrorAfter) {
    /* an asynchronous error (a peer or the network failed): the operation never completes */
    trace("rank %d: asynchronous error %d (COMMPLAN_MODEL_ASYNC_ERROR)", c->rank, g.k.asyncErrorCode);
    c->asyncError = g.k.asyncErrorCode;
    broadcast();
    while (!c->aborted) wait_cv();
    c->running--;
    broadcast();
    unlock();
    return;
  }
  c->batchesRun++;
  unlock();
  Alloc **pins = calloc((size_t)(2 * b->nops), sizeof(Alloc *));
  if (pin_own(b, pins)) {
    lock();
    c->asyncError = ncclUnhandledCudaError;
    goto leave;
  }
  Clique *cl = c->cl;
  int r = c->rank;
  lock();
  /* every send and receive of the batch is posted first, so that they all progress together */
  for (int k = 0; k < b->nops; k++) {
    NcclOp *op = &b->ops[k];
    if (op->kind != K_SEND && op->kind != K_RECV) continue;
    int send = op->kind == K_SEND;
    Xfer *x = send ? xfer_of(cl, r, op->root, b->seq[k]) : xfer_of(cl, op->root, r, b->seq[k]);
    size_t bytes = op->count * dtype_size(op->dtype);
    if (send) {
      x->src = op->send;
      x->sendBytes = bytes;
      x->sendPosted = 1;
    } else {
      x->dst = op->recv;
      x->recvBytes = bytes;
      x->dtype = op->dtype;
      x->recvPosted = 1;
    }
    if (x->sendPosted && x->recvPosted) xfer_copy(x);
  }
  broadcast();
  unlock();
  for (int k = 0; k < b->nops; k++) {
    NcclOp *op = &b->ops[k];
    if (op->kind == K_SEND || op->kind == K_RECV) continue;
    run_collective(c, op, b->seq[k]);
    lock();
    int aborted = c->aborted;
    unlock();
    if (aborted) break;
  }
  lock();
  for (int k = 0; k < b->nops && !c->aborted; k++) {
    NcclOp *op = &b->ops[k];
    if (op->kind != K_SEND && op->kind != K_RECV) continue;
    int send = op->kind == K_SEND;
    int src = send ? r : op->root, dst = send ? op->root : r;
    Xfer *x = xfer_of(cl, src, dst, b->seq[k]);
    if (WAIT_UNLESS_ABORTED(c, x->done)) xfer_leave(cl, src, dst, x);
  }
leave:
  c->running--;
  broadcast();
  unlock();
  for (int k = 0; k < 2 * b->nops; k++) unpin(pins[k]);
  free(pins);
}
