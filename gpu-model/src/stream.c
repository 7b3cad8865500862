/*
 * Streams, events and device memory.
 *
 * A stream is a worker thread that runs its queue in order; every call that enqueues returns before the work
 * is done ("Asynchronous concurrent execution", CUDA C++ Programming Guide). Work waits, before it starts, for
 * the dependencies recorded when it was enqueued: the last work of another stream (an event), the implicit
 * ones of the legacy stream, and cudaMalloc's device-wide barrier.
 *
 * Rules, each from CUDA's documentation:
 *  - Legacy default stream (Runtime API, "Stream synchronization behavior"): "When an action is taken in the
 *    legacy stream such as a kernel launch or cudaStreamWaitEvent(), the legacy stream first waits on all
 *    blocking streams, the action is queued in the legacy stream, and then all blocking streams wait on the
 *    legacy stream." Streams made with cudaStreamNonBlocking do neither.
 *  - cudaMemcpyAsync ("API synchronization behavior"): from pageable host memory to the device the bytes are
 *    staged at the call and land in stream order, possibly long after the call returned
 *    (COMMPLAN_MODEL_COPY_DELAY_US makes each land that much later); "for transfers from device memory to pageable host
 *    memory, the function will return only once the copy has completed"; host to host is synchronous. Every
 *    host pointer is pageable here (no pinned-memory call is bound), so a device-to-host copy always waits.
 *  - cudaMemcpy: "for transfers from pageable host memory to device memory, a stream sync is performed
 *    before the copy is initiated. The function will return once the pageable buffer has been copied to the
 *    staging memory ... but the DMA to final destination may not have completed"; device to host returns
 *    once the copy completed; device to device does not synchronize the host. They run on the legacy stream.
 *  - cudaMemset and cudaMemsetAsync: asynchronous with respect to the host (device memory).
 *  - cudaMalloc/cudaFree (Programming Guide, "Stream-Ordered Memory Allocator": "Managing memory allocations
 *    using cudaMalloc and cudaFree causes the GPU to synchronize across all executing CUDA streams"):
 *    cudaFree waits on the host for all work enqueued on every stream of the device (what made runs 10 and
 *    11 hang: ranks of one process on one GPU, one freeing while a peer's NCCL kernel waited for it,
 *    docs/perf/h100-11/README.md). cudaMalloc waits for nothing by default: on the H100 of runs 10 and 11 the
 *    agreement check allocated and zeroed its buffers with cudaMalloc while a peer's mismatched broadcast
 *    spun on the same GPU, and went on (the agreement test passed); COMMPLAN_MODEL_MALLOC_BARRIER=1 makes
 *    work enqueued after a cudaMalloc on any stream of the device start only after all work enqueued before
 *    it, the guide's worst case.
 *  - cudaMallocAsync/cudaFreeAsync: no wait for other streams; the free happens when its stream reaches it
 *    ("The allocation must not be accessed after stream execution reaches the free").
 *  - A stream's work that touches device memory outside a live allocation faults like a kernel's illegal
 *    address: the device's context gets the sticky cudaErrorIllegalAddress, which every later call returns.
 *  - cudaStreamDestroy: "in case the device is still doing work in the stream stream when
 *    cudaStreamDestroy() is called, the function will return immediately and the resources associated with
 *    stream will be released automatically once the device has completed all work in stream."
 *  - Events: cudaEventQuery of an event never recorded is cudaSuccess; cudaStreamWaitEvent waits for "the most
 *    recent host call to cudaEventRecord"; and for an event never recorded it "acts as if the record has
 *    already completed"; cudaEventElapsedTime needs two events with timing that both completed
 *    (cudaErrorNotReady otherwise, cudaErrorInvalidResourceHandle for cudaEventDisableTiming or an event never
 *    recorded).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "model.h"

/* ---------------------------------------------------------------- allocation table */

static Alloc **table; /* sorted by base */
static int ntable, captable;

static int table_index(uintptr_t p) { /* last index with base <= p, or -1 */
  int lo = 0, hi = ntable - 1, found = -1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (table[mid]->base <= p) {
      found = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return found;
}

static void table_insert(Alloc *a) {
  if (ntable == captable) {
    captable = captable ? 2 * captable : 64;
    table = realloc(table, sizeof(Alloc *) * captable);
  }
  int i = table_index(a->base) + 1;
  memmove(table + i + 1, table + i, sizeof(Alloc *) * (ntable - i));
  table[i] = a;
  ntable++;
}

static void table_remove(Alloc *a) {
  int i = table_index(a->base);
  if (i >= 0 && table[i] == a) {
    memmove(table + i, table + i + 1, sizeof(Alloc *) * (ntable - i - 1));
    ntable--;
  }
}

Alloc *alloc_find(uintptr_t p) {
  int i = table_index(p);
  if (i < 0) return NULL;
  Alloc *a = table[i];
  return p < a->base + (a->size ? a->size : 1) && !a->dead ? a : NULL;
}

/* The allocation holding all of [p, p + n), or NULL; with freeingOk, also one whose cudaFreeAsync is
   enqueued but not yet reached. */
static Alloc *range_find(const void *p, size_t n, int freeingOk) {
  uintptr_t u = (uintptr_t)p;
  Alloc *a = alloc_find(u);
  if (!a || (a->freeing && !freeingOk)) return NULL;
  if (n > a->size || u - a->base > a->size - n) return NULL;
  return a;
}

int pin_range(const void *p, size_t n, Alloc **out) {
  lock();
  Alloc *a = range_find(p, n, 1);
  if (a) a->pins++;
  unlock();
  *out = a;
  return a ? 0 : -1;
}

static void alloc_release(Alloc *a) { /* lock held; a is dead */
  if (a->pins == 0) {
    if (a->map) munmap(a->map, a->mapped);
    free(a);
  }
}

void unpin(Alloc *a) {
  if (!a) return;
  lock();
  a->pins--;
  if (a->dead) alloc_release(a);
  unlock();
}

void device_fault(int device, const char *what) {
  lock();
  if (!g.dev[device].sticky) {
    g.dev[device].sticky = cudaErrorIllegalAddress;
    fprintf(stderr, "[gpu-model] device %d: illegal address: %s; the device's context now returns "
                    "cudaErrorIllegalAddress (700) from every call\n", device, what);
  }
  broadcast();
  unlock();
}

/* Frees an allocation (lock held): from now on no work may touch it. */
static void alloc_free(Alloc *a) {
  a->dead = 1;
  a->freeing = 1;
  g.dev[a->device].used -= a->size;
  table_remove(a);
  alloc_release(a);
}

static int alloc_new(int device, size_t size, void **out) { /* lock held; a cudaError_t */
  Device *d = &g.dev[device];
  g.allocCount++;
  if (g.k.failAllocAt > 0 && g.allocCount == (uint64_t)g.k.failAllocAt) {
    trace("allocation %llu fails (COMMPLAN_MODEL_FAIL_ALLOC)", (unsigned long long)g.allocCount);
    return cudaErrorMemoryAllocation;
  }
  if (size > d->total - d->used) return cudaErrorMemoryAllocation;
  if (size == 0) {
    *out = NULL;
    return cudaSuccess;
  }
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size_t mapped = (size + page - 1) / page * page;
  void *m = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) return cudaErrorMemoryAllocation;
  if (g.k.fill >= 0) memset(m, g.k.fill, size);
  Alloc *a = calloc(1, sizeof *a);
  a->base = (uintptr_t)m;
  a->size = size;
  a->device = device;
  a->map = m;
  a->mapped = mapped;
  d->used += size;
  d->allocations++;
  table_insert(a);
  *out = m;
  return cudaSuccess;
}

/* ---------------------------------------------------------------- work */

Work *work_new(enum WorkKind kind) {
  Work *w = calloc(1, sizeof *w);
  w->kind = kind;
  return w;
}

void work_free(Work *w) {
  deplist_free(&w->deps);
  if (w->kind == W_H2D) free(w->u.copy.staging);
  if (w->kind == W_NCCL) nccl_batch_free(w->u.batch);
  if (w->kind == W_FN) free(w->u.fn.arg);
  free(w);
}

int stream_done(Stream *s, uint64_t seq) {
  return s->completed >= seq;
}

int deps_done(const DepList *l) {
  for (int i = 0; i < l->n; i++) {
    if (l->v[i].s->completed < l->v[i].seq) return 0;
  }
  return 1;
}

void wait_stream(Stream *s, uint64_t seq) {
  while (s->completed < seq) wait_cv();
}

static void sleep_us(long us) {
  if (us > 0) usleep((useconds_t)us);
}

void run_copy(Work *w) {
  Alloc *a = NULL, *b = NULL;
  const void *src = w->kind == W_H2D ? w->u.copy.staging : w->u.copy.src;
  int bad = 0;
  if (w->kind == W_H2D || w->kind == W_D2D) bad |= pin_range(w->u.copy.dst, w->u.copy.n, &a);
  if (w->kind == W_D2H || w->kind == W_D2D) bad |= pin_range(src, w->u.copy.n, &b);
  if (bad) {
    char what[160];
    snprintf(what, sizeof what, "a copy of %zu bytes from %p to %p", w->u.copy.n, src, w->u.copy.dst);
    device_fault(w->device, what);
  } else {
    memmove(w->u.copy.dst, src, w->u.copy.n);
  }
  unpin(a);
  unpin(b);
}

void run_memset(Work *w) {
  Alloc *a;
  if (pin_range(w->u.memset.dst, w->u.memset.n, &a)) {
    char what[128];
    snprintf(what, sizeof what, "a memset of %zu bytes at %p", w->u.memset.n, w->u.memset.dst);
    device_fault(w->device, what);
    return;
  }
  memset(w->u.memset.dst, w->u.memset.value, w->u.memset.n);
  unpin(a);
}

static void run_work(Stream *s, Work *w) {
  sleep_us(g.k.delayUs);
  if (w->kind == W_H2D) sleep_us(g.k.copyDelayUs); /* the staged bytes land late */
  lock();
  int sticky = g.dev[s->device].sticky;
  unlock();
  /* after a fault the context runs nothing more (a collective that does not run leaves its peers waiting) */
  if (sticky && w->kind != W_EVENT && w->kind != W_FREE && w->kind != W_NOP && w->kind != W_GRAPH) return;
  switch (w->kind) {
  case W_NOP: break;
  case W_EVENT:
    lock();
    if (w->u.event.ev->gen == w->u.event.gen) {
      w->u.event.ev->stamp = now_ms();
      w->u.event.ev->stampGen = w->u.event.gen;
    }
    unlock();
    break;
  case W_H2D: case W_D2H: case W_D2D: run_copy(w); break;
  case W_MEMSET: run_memset(w); break;
  case W_FREE:
    lock();
    alloc_free(w->u.free.a);
    unlock();
    break;
  case W_NCCL: nccl_run_batch(w->u.batch); break;
  case W_GRAPH: graph_run_launch(w); break;
  case W_FN: w->u.fn.run(w->u.fn.arg, w->device); break;
  }
}

static void *worker(void *arg) {
  Stream *s = arg;
  lock();
  for (;;) {
    while (!s->head && !s->destroyed) pthread_cond_wait(&s->wake, &g.mu);
    Work *w = s->head;
    if (!w) break;
    while (!deps_done(&w->deps)) wait_cv();
    unlock();
    run_work(s, w);
    lock();
    s->head = w->next;
    if (!s->head) s->tail = NULL;
    s->completed = w->seq;
    broadcast();
    unlock();
    work_free(w);
    lock();
  }
  /* destroyed and drained: no longer one of the device's streams (the struct stays, for dependencies on it) */
  for (Stream **p = &g.dev[s->device].streams; *p; p = &(*p)->nextOfDevice) {
    if (*p == s) {
      *p = s->nextOfDevice;
      break;
    }
  }
  unlock();
  return NULL;
}

static Stream *stream_new(int device, unsigned flags, enum StreamKind kind) { /* lock held */
  Stream *s = calloc(1, sizeof *s);
  s->magic = MAGIC_STREAM;
  s->device = device;
  s->flags = flags;
  s->kind = kind;
  s->id = ++g.nextStreamId;
  pthread_cond_init(&s->wake, NULL);
  s->nextOfDevice = g.dev[device].streams;
  g.dev[device].streams = s;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, 1 << 20);
  pthread_t t;
  if (pthread_create(&t, &attr, worker, s) != 0) {
    pthread_attr_destroy(&attr);
    return NULL;
  }
  pthread_attr_destroy(&attr);
  return s;
}

static __thread Stream *tlPerThread[MAX_DEVICES];

int stream_resolve(uintptr_t h, Stream **out) {
  int d = current_device();
  if (g.k.devices == 0) return cudaErrorNoDevice;
  if (h == 0 || h == CUDA_STREAM_LEGACY) {
    if (!g.dev[d].legacy) g.dev[d].legacy = stream_new(d, 0, STREAM_LEGACY);
    *out = g.dev[d].legacy;
    return cudaSuccess;
  }
  if (h == CUDA_STREAM_PER_THREAD) {
    if (!tlPerThread[d]) tlPerThread[d] = stream_new(d, 0, STREAM_PER_THREAD);
    *out = tlPerThread[d];
    return cudaSuccess;
  }
  Stream *s = (Stream *)h;
  if (s->magic != MAGIC_STREAM || s->destroyed) return cudaErrorInvalidResourceHandle;
  *out = s;
  return cudaSuccess;
}

int legacy_capture_conflict(Stream *s) {
  if (s->kind != STREAM_LEGACY) return 0;
  int conflict = 0;
  for (Stream *b = g.dev[s->device].streams; b; b = b->nextOfDevice) {
    if (b != s && b->cap && !(b->flags & CUDA_STREAM_NON_BLOCKING)) {
      capture_invalidate(b->cap);
      conflict = 1;
    }
  }
  return conflict ? cudaErrorStreamCaptureImplicit : 0;
}

/* Enqueues w on s with the legacy stream's implicit dependencies and cudaMalloc's barrier. Lock held. */
void stream_enqueue(Stream *s, Work *w) {
  Device *d = &g.dev[s->device];
  w->device = s->device;
  if (s->kind == STREAM_LEGACY) { /* "the legacy stream first waits on all blocking streams" */
    for (Stream *b = d->streams; b; b = b->nextOfDevice) {
      if (b != s && !(b->flags & CUDA_STREAM_NON_BLOCKING) && b->enqueued > b->completed) {
        deplist_add(&w->deps, b, b->enqueued);
      }
    }
  } else if (!(s->flags & CUDA_STREAM_NON_BLOCKING) && d->legacy) { /* "all blocking streams wait on it" */
    Stream *l = d->legacy;
    if (l->enqueued > l->completed) deplist_add(&w->deps, l, l->enqueued);
  }
  if (d->barrier.n) {
    int keep = 0;
    for (int i = 0; i < d->barrier.n; i++) {
      Dep b = d->barrier.v[i];
      if (b.s->completed >= b.seq) continue;
      d->barrier.v[keep++] = b;
      if (b.s != s) deplist_add(&w->deps, b.s, b.seq);
    }
    d->barrier.n = keep;
  }
  w->seq = ++s->enqueued;
  if (s->tail) s->tail->next = w;
  else s->head = w;
  s->tail = w;
  pthread_cond_signal(&s->wake);
}

void device_synchronize_host(int device) {
  int n = 0;
  for (Stream *s = g.dev[device].streams; s; s = s->nextOfDevice) n++;
  Dep *snap = malloc(sizeof(Dep) * (n ? n : 1));
  n = 0;
  for (Stream *s = g.dev[device].streams; s; s = s->nextOfDevice) snap[n++] = (Dep){s, s->enqueued};
  for (int i = 0; i < n; i++) wait_stream(snap[i].s, snap[i].seq);
  free(snap);
}

/* ---------------------------------------------------------------- streams */

EXPORT int cudaStreamCreateWithFlags(uintptr_t *out, unsigned flags) {
  model_init();
  if (!out || (flags & ~CUDA_STREAM_NON_BLOCKING)) return cuda_return(cudaErrorInvalidValue);
  if (g.k.devices == 0) return cuda_return(cudaErrorNoDevice);
  lock();
  Stream *s = stream_new(current_device(), flags, STREAM_USER);
  unlock();
  if (!s) return cuda_return(cudaErrorMemoryAllocation);
  *out = (uintptr_t)s;
  trace("stream %d made on device %d (%s)", s->id, s->device, flags ? "non-blocking" : "blocking");
  return cudaSuccess;
}

EXPORT int cudaStreamCreate(uintptr_t *out) {
  return cudaStreamCreateWithFlags(out, 0);
}

EXPORT int cudaStreamDestroy(uintptr_t h) {
  model_init();
  if (h == 0 || h == CUDA_STREAM_LEGACY || h == CUDA_STREAM_PER_THREAD) {
    return cuda_return(cudaErrorInvalidResourceHandle);
  }
  lock();
  Stream *s;
  int rc = stream_resolve(h, &s);
  if (rc == cudaSuccess) {
    if (s->cap) capture_invalidate(s->cap);
    s->destroyed = 1;
    pthread_cond_signal(&s->wake);
  }
  unlock();
  return cuda_return(rc);
}

EXPORT int cudaStreamSynchronize(uintptr_t h) {
  model_init();
  lock();
  Stream *s;
  int rc = stream_resolve(h, &s);
  if (rc == cudaSuccess) rc = legacy_capture_conflict(s);
  if (rc == cudaSuccess && s->cap) { /* "It is invalid to synchronize ... a stream which is being captured" */
    capture_invalidate(s->cap);
    rc = cudaErrorStreamCaptureUnsupported;
  }
  if (rc == cudaSuccess) {
    wait_stream(s, s->enqueued);
    rc = g.dev[s->device].sticky;
  }
  unlock();
  return cuda_return(rc);
}

EXPORT int cudaStreamQuery(uintptr_t h) {
  model_init();
  lock();
  Stream *s;
  int rc = stream_resolve(h, &s);
  if (rc == cudaSuccess) rc = legacy_capture_conflict(s);
  if (rc == cudaSuccess && s->cap) { /* "... or query the execution status of a stream which is being captured" */
    capture_invalidate(s->cap);
    rc = cudaErrorStreamCaptureUnsupported;
  }
  if (rc == cudaSuccess) {
    rc = g.dev[s->device].sticky ? g.dev[s->device].sticky
                                 : (s->completed >= s->enqueued ? cudaSuccess : cudaErrorNotReady);
  }
  unlock();
  return cuda_return(rc);
}

/* ---------------------------------------------------------------- events */

static int event_resolve(uintptr_t h, Event **out) {
  Event *e = (Event *)h;
  if (!e || e->magic != MAGIC_EVENT || e->destroyed) return cudaErrorInvalidResourceHandle;
  *out = e;
  return cudaSuccess;
}

/* Whether e was last recorded in a capture that is still going on (it then stands for graph nodes). */
static int event_captured(Event *e) {
  if (e->cap && e->cap->origin == NULL) e->cap = NULL; /* that capture ended */
  return e->cap != NULL;
}

EXPORT int cudaEventCreateWithFlags(uintptr_t *out, unsigned flags) {
  model_init();
  if (!out || (flags & ~(CUDA_EVENT_BLOCKING_SYNC | CUDA_EVENT_DISABLE_TIMING | CUDA_EVENT_INTERPROCESS))) {
    return cuda_return(cudaErrorInvalidValue);
  }
  Event *e = calloc(1, sizeof *e);
  e->magic = MAGIC_EVENT;
  e->flags = flags;
  e->device = current_device();
  *out = (uintptr_t)e;
  return cudaSuccess;
}

EXPORT int cudaEventCreate(uintptr_t *out) {
  return cudaEventCreateWithFlags(out, 0);
}

EXPORT int cudaEventDestroy(uintptr_t h) {
  model_init();
  lock();
  Event *e;
  int rc = event_resolve(h, &e);
  if (rc == cudaSuccess) e->destroyed = 1; /* a record still pending completes as if it were alive */
  unlock();
  return cuda_return(rc);
}

EXPORT int cudaEventRecord(uintptr_t eh, uintptr_t sh) {
  model_init();
  lock();
  Event *e;
  Stream *s;
  int rc = event_resolve(eh, &e);
  if (rc == cudaSuccess) rc = stream_resolve(sh, &s);
  if (rc == cudaSuccess) rc = legacy_capture_conflict(s);
  if (rc == cudaSuccess && s->cap) {
    if (s->cap->invalidated) {
      rc = cudaErrorStreamCaptureInvalidated;
    } else { /* a captured record: the event now stands for the nodes s's next node would depend on */
      e->cap = s->cap;
      free(e->front);
      e->front = malloc(sizeof(int) * (s->nfront ? s->nfront : 1));
      if (s->nfront) memcpy(e->front, s->front, sizeof(int) * s->nfront);
      e->nfront = s->nfront;
    }
  } else if (rc == cudaSuccess) {
    e->cap = NULL;
    e->gen++;
    e->s = s;
    e->device = s->device;
    Work *w = work_new(W_EVENT);
    w->u.event.ev = e;
    w->u.event.gen = e->gen;
    stream_enqueue(s, w);
    e->seq = w->seq;
  }
  unlock();
  return cuda_return(rc);
}

EXPORT int cudaEventRecordWithFlags(uintptr_t eh, uintptr_t sh, unsigned flags) {
  if (flags) return cuda_return(cudaErrorNotSupported);
  return cudaEventRecord(eh, sh);
}

static int event_state(Event *e, int wait) { /* lock held */
  if (event_captured(e)) { /* "It is invalid to ... query ... a captured event" */
    capture_invalidate(e->cap);
    return cudaErrorCapturedEvent;
  }
  if (!e->s) return cudaSuccess;
  if (wait) wait_stream(e->s, e->seq);
  if (g.dev[e->s->device].sticky) return g.dev[e->s->device].sticky;
  return e->s->completed >= e->seq ? cudaSuccess : cudaErrorNotReady;
}

EXPORT int cudaEventQuery(uintptr_t h) {
  model_init();
  lock();
  Event *e;
  int rc = event_resolve(h, &e);
  if (rc == cudaSuccess) rc = event_state(e, 0);
  unlock();
  return cuda_return(rc);
}

EXPORT int cudaEventSynchronize(uintptr_t h) {
  model_init();
  lock();
  Event *e;
  int rc = event_resolve(h, &e);
  if (rc == cudaSuccess) rc = event_state(e, 1);
  unlock();
  return cuda_return(rc);
}

EXPORT int cudaEventElapsedTime(float *ms, uintptr_t start, uintptr_t end) {
  model_init();
  if (!ms) return cuda_return(cudaErrorInvalidValue);
  lock();
  Event *a, *b;
  int rc = event_resolve(start, &a);
  if (rc == cudaSuccess) rc = event_resolve(end, &b);
  if (rc == cudaSuccess && ((a->flags | b->flags) & CUDA_EVENT_DISABLE_TIMING)) rc = cudaErrorInvalidResourceHandle;
  if (rc == cudaSuccess && (event_captured(a) || event_captured(b))) rc = cudaErrorCapturedEvent;
  if (rc == cudaSuccess && (!a->s || !b->s)) rc = cudaErrorInvalidResourceHandle;
  if (rc == cudaSuccess && (a->s->completed < a->seq || b->s->completed < b->seq)) rc = cudaErrorNotReady;
  if (rc == cudaSuccess) *ms = (float)(b->stamp - a->stamp);
  unlock();
  return cuda_return(rc);
}

static void front_merge(Stream *s, const int *nodes, int n) {
  for (int i = 0; i < n; i++) {
    int seen = 0;
    for (int j = 0; j < s->nfront; j++) seen |= s->front[j] == nodes[i];
    if (seen) continue;
    if (s->nfront == s->capFront) {
      s->capFront = s->capFront ? 2 * s->capFront : 4;
      s->front = realloc(s->front, sizeof(int) * s->capFront);
    }
    s->front[s->nfront++] = nodes[i];
  }
}

EXPORT int cudaStreamWaitEvent(uintptr_t sh, uintptr_t eh, unsigned flags) {
  model_init();
  if (flags & ~CUDA_EVENT_WAIT_EXTERNAL) return cuda_return(cudaErrorInvalidValue);
  lock();
  Stream *s;
  Event *e;
  int rc = stream_resolve(sh, &s);
  if (rc == cudaSuccess) rc = event_resolve(eh, &e);
  if (rc == cudaSuccess) rc = legacy_capture_conflict(s);
  if (rc != cudaSuccess) {
    unlock();
    return cuda_return(rc);
  }
  int captured = event_captured(e);
  if (s->cap) {
    if (s->cap->invalidated) {
      rc = cudaErrorStreamCaptureInvalidated;
    } else if (captured && e->cap == s->cap) { /* a dependency inside the graph */
      front_merge(s, e->front, e->nfront);
    } else if (captured) { /* "Merging two separate capture graphs ... is invalid" */
      capture_invalidate(s->cap);
      capture_invalidate(e->cap);
      rc = cudaErrorStreamCaptureMerge;
    } else if (!e->s) {
      /* never recorded: a no-op */
    } else if (flags & CUDA_EVENT_WAIT_EXTERNAL) {
      Node n = {.kind = N_EXTWAIT};
      n.u.ext.ev = e;
      rc = capture_add(s, &n);
    } else { /* "Waiting on a non-captured event from a stream which is being captured without specifying
                the cudaEventWaitExternal flag is invalid" */
      capture_invalidate(s->cap);
      rc = cudaErrorStreamCaptureIsolation;
    }
  } else if (captured) { /* s joins the capture (a fork of the captured work onto another stream) */
    Capture *c = e->cap;
    if (c->invalidated) {
      rc = cudaErrorStreamCaptureInvalidated;
    } else {
      s->cap = c;
      s->nfront = 0;
      front_merge(s, e->front, e->nfront);
      if (c->nstreams == c->capStreams) {
        c->capStreams = c->capStreams ? 2 * c->capStreams : 4;
        c->streams = realloc(c->streams, sizeof(Stream *) * c->capStreams);
      }
      c->streams[c->nstreams++] = s;
    }
  } else if (e->s) {
    Work *w = work_new(W_NOP);
    deplist_add(&w->deps, e->s, e->seq);
    stream_enqueue(s, w);
  }
  unlock();
  return cuda_return(rc);
}

/* ---------------------------------------------------------------- memory */

static int unsafe_in_capture(void) { /* lock held */
  Capture *c = capture_forbidding_unsafe();
  if (!c) return 0;
  capture_invalidate(c);
  return cudaErrorStreamCaptureUnsupported;
}

EXPORT int cudaMalloc(void **p, size_t size) {
  model_init();
  if (!p) return cuda_return(cudaErrorInvalidValue);
  if (g.k.devices == 0) return cuda_return(cudaErrorNoDevice);
  lock();
  int d = current_device();
  int rc = unsafe_in_capture();
  if (!rc) rc = g.dev[d].sticky;
  if (!rc) rc = alloc_new(d, size, p);
  if (!rc && g.k.mallocBarrier) { /* later work on the device waits for all work enqueued before */
    for (Stream *s = g.dev[d].streams; s; s = s->nextOfDevice) {
      if (s->enqueued > s->completed) deplist_add(&g.dev[d].barrier, s, s->enqueued);
    }
  }
  unlock();
  if (!rc) trace("cudaMalloc(%zu) on device %d = %p", size, d, *p);
  return cuda_return(rc);
}

EXPORT int cudaFree(void *p) {
  model_init();
  if (!p) return cudaSuccess;
  lock();
  int rc = unsafe_in_capture();
  Alloc *a = NULL;
  if (!rc) {
    a = alloc_find((uintptr_t)p);
    if (!a || a->base != (uintptr_t)p || a->freeing) rc = cudaErrorInvalidValue;
  }
  if (!rc) {
    int device = a->device;
    a->freeing = 1; /* this free's: no other call may free it or enqueue work on it meanwhile */
    trace("cudaFree(%p): waits for every stream of device %d", p, device);
    device_synchronize_host(device); /* the implicit device synchronization */
    alloc_free(a);                   /* a is gone from here on */
    rc = g.dev[device].sticky;
  }
  unlock();
  return cuda_return(rc);
}

EXPORT int cudaMallocAsync(void **p, size_t size, uintptr_t sh) {
  model_init();
  if (!p) return cuda_return(cudaErrorInvalidValue);
  lock();
  Stream *s;
  int rc = stream_resolve(sh, &s);
  if (!rc) rc = legacy_capture_conflict(s);
  if (!rc && s->cap) { /* graph memory nodes are not modelled */
    capture_invalidate(s->cap);
    rc = cudaErrorStreamCaptureUnsupported;
  }
  if (!rc) rc = g.dev[s->device].sticky;
  if (!rc) rc = alloc_new(s->device, size, p);
  unlock();
  return cuda_return(rc);
}

EXPORT int cudaFreeAsync(void *p, uintptr_t sh) {
  model_init();
  if (!p) return cudaSuccess;
  lock();
  Stream *s;
  int rc = stream_resolve(sh, &s);
  if (!rc) rc = legacy_capture_conflict(s);
  if (!rc && s->cap) {
    capture_invalidate(s->cap);
    rc = cudaErrorStreamCaptureUnsupported;
  }
  Alloc *a = NULL;
  if (!rc) {
    a = alloc_find((uintptr_t)p);
    if (!a || a->base != (uintptr_t)p || a->freeing) rc = cudaErrorInvalidValue;
  }
  if (!rc) {
    a->freeing = 1;
    Work *w = work_new(W_FREE);
    w->u.free.a = a;
    stream_enqueue(s, w);
  }
  unlock();
  return cuda_return(rc);
}

EXPORT int cudaMemGetInfo(size_t *freeBytes, size_t *totalBytes) {
  model_init();
  if (!freeBytes || !totalBytes) return cuda_return(cudaErrorInvalidValue);
  if (g.k.devices == 0) return cuda_return(cudaErrorNoDevice);
  lock();
  Device *d = &g.dev[current_device()];
  *freeBytes = d->total - d->used;
  *totalBytes = d->total;
  unlock();
  return cudaSuccess;
}

/* Classifies and checks a copy; fills *kind with the resolved direction. Lock held. */
static int copy_check(void *dst, const void *src, size_t n, int *kind) {
  int dstDev = range_find(dst, n, 0) != NULL;
  int srcDev = range_find(src, n, 0) != NULL;
  int dstAny = alloc_find((uintptr_t)dst) != NULL, srcAny = alloc_find((uintptr_t)src) != NULL;
  if (*kind == MEMCPY_DEFAULT) { /* unified addressing: the pointers say */
    *kind = srcAny ? (dstAny ? MEMCPY_D2D : MEMCPY_D2H) : (dstAny ? MEMCPY_H2D : MEMCPY_H2H);
  }
  switch (*kind) {
  case MEMCPY_H2H: return dstAny || srcAny ? cudaErrorInvalidValue : cudaSuccess;
  case MEMCPY_H2D: return dstDev && !srcAny ? cudaSuccess : cudaErrorInvalidValue;
  case MEMCPY_D2H: return srcDev && !dstAny ? cudaSuccess : cudaErrorInvalidValue;
  case MEMCPY_D2D: return dstDev && srcDev ? cudaSuccess : cudaErrorInvalidValue;
  default: return cudaErrorInvalidValue;
  }
}

static int memcpy_on(Stream *s, void *dst, const void *src, size_t n, int kind, int sync) { /* lock held */
  int rc = copy_check(dst, src, n, &kind);
  if (rc) return rc;
  if (s->cap) {
    if (kind != MEMCPY_D2D) { /* the model captures no copy of pageable host memory */
      capture_invalidate(s->cap);
      return cudaErrorStreamCaptureUnsupported;
    }
    Node node = {.kind = N_D2D};
    node.u.copy.dst = dst;
    node.u.copy.src = src;
    node.u.copy.n = n;
    return capture_add(s, &node);
  }
  if (g.dev[s->device].sticky) return g.dev[s->device].sticky;
  switch (kind) {
  case MEMCPY_H2H:
    memmove(dst, src, n);
    return cudaSuccess;
  case MEMCPY_H2D: {
    if (sync) wait_stream(s, s->enqueued); /* cudaMemcpy: "a stream sync is performed before the copy" */
    Work *w = work_new(W_H2D);
    w->u.copy.dst = dst;
    w->u.copy.n = n;
    w->u.copy.staging = malloc(n);
    memcpy(w->u.copy.staging, src, n); /* staged now: the caller may reuse its buffer at once */
    stream_enqueue(s, w);
    return cudaSuccess;
  }
  case MEMCPY_D2H: {
    Work *w = work_new(W_D2H);
    w->u.copy.dst = dst;
    w->u.copy.src = src;
    w->u.copy.n = n;
    stream_enqueue(s, w);
    uint64_t seq = w->seq;
    wait_stream(s, seq); /* "will return only once the copy has completed" */
    return g.dev[s->device].sticky;
  }
  default: {
    Work *w = work_new(W_D2D);
    w->u.copy.dst = dst;
    w->u.copy.src = src;
    w->u.copy.n = n;
    stream_enqueue(s, w);
    return cudaSuccess;
  }
  }
}

EXPORT int cudaMemcpyAsync(void *dst, const void *src, size_t n, int kind, uintptr_t sh) {
  model_init();
  if (n == 0) return cudaSuccess;
  lock();
  Stream *s;
  int rc = stream_resolve(sh, &s);
  if (!rc) rc = legacy_capture_conflict(s);
  if (!rc) rc = memcpy_on(s, dst, src, n, kind, 0);
  unlock();
  return cuda_return(rc);
}

EXPORT int cudaMemcpy(void *dst, const void *src, size_t n, int kind) {
  model_init();
  if (n == 0) return cudaSuccess;
  lock();
  Stream *s;
  int rc = unsafe_in_capture();
  if (!rc) rc = stream_resolve(0, &s);
  if (!rc) rc = legacy_capture_conflict(s);
  if (!rc) rc = memcpy_on(s, dst, src, n, kind, 1);
  unlock();
  return cuda_return(rc);
}

static int memset_on(Stream *s, void *p, int value, size_t n) { /* lock held */
  if (!range_find(p, n, 0)) return cudaErrorInvalidValue;
  if (s->cap) {
    Node node = {.kind = N_MEMSET};
    node.u.memset.dst = p;
    node.u.memset.value = value;
    node.u.memset.n = n;
    return capture_add(s, &node);
  }
  if (g.dev[s->device].sticky) return g.dev[s->device].sticky;
  Work *w = work_new(W_MEMSET);
  w->u.memset.dst = p;
  w->u.memset.value = value;
  w->u.memset.n = n;
  stream_enqueue(s, w);
  return cudaSuccess;
}

EXPORT int cudaMemsetAsync(void *p, int value, size_t n, uintptr_t sh) {
  model_init();
  if (n == 0) return cudaSuccess;
  lock();
  Stream *s;
  int rc = stream_resolve(sh, &s);
  if (!rc) rc = legacy_capture_conflict(s);
  if (!rc) rc = memset_on(s, p, value, n);
  unlock();
  return cuda_return(rc);
}

EXPORT int cudaMemset(void *p, int value, size_t n) {
  model_init();
  if (n == 0) return cudaSuccess;
  lock();
  Stream *s;
  int rc = stream_resolve(0, &s);
  if (!rc) rc = legacy_capture_conflict(s);
  if (!rc) rc = memset_on(s, p, value, n);
  unlock();
  return cuda_return(rc);
}
