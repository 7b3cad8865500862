/*
 * Stream capture and CUDA graphs.
 *
 * Rules (CUDA C++ Programming Guide, "CUDA Graphs" > "Stream Capture", and the Runtime API's reference):
 *  - cudaStreamBeginCapture: work pushed into a capturing stream "will not be executed, but will instead be
 *    captured into a graph"; not on the legacy stream; not on a stream already capturing; with a mode other
 *    than relaxed, cudaStreamEndCapture must come from the same thread (cudaErrorStreamCaptureWrongThread).
 *  - Cross-stream dependencies: a stream that waits on an event recorded in a capture joins it (a fork);
 *    every stream that joined must be joined back into the origin stream before cudaStreamEndCapture
 *    (cudaErrorStreamCaptureUnjoined).
 *  - Prohibited operations ("Prohibited and Unhandled Operations"): synchronizing or querying a capturing
 *    stream or a captured event (cudaErrorStreamCaptureUnsupported, cudaErrorCapturedEvent); using the
 *    legacy stream while a blocking stream of the device captures (cudaErrorStreamCaptureImplicit); merging
 *    two capture graphs (cudaErrorStreamCaptureMerge); waiting on a non-captured event without
 *    cudaEventWaitExternal (cudaErrorStreamCaptureIsolation); "potentially unsafe API calls" such as
 *    cudaMalloc, cudaFree and the synchronous cudaMemcpy, from the capturing thread (global and thread-local
 *    modes) or from any thread while a global-mode capture runs (cudaThreadExchangeStreamCaptureMode). Each
 *    invalidates the capture: "further use of any streams which are being captured ... will return an error,
 *    until stream capture is ended with cudaStreamEndCapture(). This call will take the associated streams
 *    out of capture mode, but will also return an error value and a NULL graph."
 *  - cudaGraphLaunch: "Each launch is ordered behind both any previous work in stream and any previous
 *    launches of graphExec"; the launch replays the recorded work (here: the nodes in capture order, which is
 *    a topological order of the graph).
 *  - cudaGraphExecDestroy: a launch in flight is not stopped; the graph is freed when it completes.
 *
 * Not modelled: graph memory nodes (cudaMallocAsync/cudaFreeAsync while capturing), captured copies of
 * pageable host memory, graph launches captured into another graph (each returns
 * cudaErrorStreamCaptureUnsupported and invalidates the capture), and concurrency between a graph's
 * independent branches (they run one after another, in capture order).
 */
#include <stdlib.h>
#include <string.h>

#include "model.h"

typedef struct Graph {
  uint32_t magic;
  int destroyed;
  Node *nodes;
  int nnodes;
} Graph;

typedef struct GraphExec {
  uint32_t magic;
  int destroyed;
  Node *nodes;
  int nnodes;
  Stream *lastStream; /* the previous launch, which the next one waits for */
  uint64_t lastSeq;
  int inflight;
  int released;
} GraphExec;

typedef struct GraphLaunch {
  GraphExec *exec;
  NcclBatch **batches; /* per node: its NCCL batch (with this launch's sequence numbers), or NULL */
} GraphLaunch;

static void nodes_ref(Node *nodes, int n, int delta) { /* lock held */
  for (int i = 0; i < n; i++) {
    if (nodes[i].kind == N_NCCL) nccl_comm_graph_ref(nodes[i].u.nccl.comm, delta);
  }
}

void node_free(Node *n) {
  free(n->deps);
  if (n->kind == N_NCCL) free(n->u.nccl.ops);
}

static void nodes_free(Node *nodes, int n) {
  for (int i = 0; i < n; i++) node_free(&nodes[i]);
  free(nodes);
}

static Node *nodes_copy(const Node *src, int n) {
  Node *dst = calloc((size_t)(n ? n : 1), sizeof(Node));
  for (int i = 0; i < n; i++) {
    dst[i] = src[i];
    dst[i].deps = malloc(sizeof(int) * (src[i].ndeps ? src[i].ndeps : 1));
    if (src[i].ndeps) memcpy(dst[i].deps, src[i].deps, sizeof(int) * src[i].ndeps);
    if (src[i].kind == N_NCCL) {
      dst[i].u.nccl.ops = malloc(sizeof(NcclOp) * src[i].u.nccl.nops);
      memcpy(dst[i].u.nccl.ops, src[i].u.nccl.ops, sizeof(NcclOp) * src[i].u.nccl.nops);
    }
  }
  return dst;
}

/* ---------------------------------------------------------------- capture sequences */

Capture *capture_forbidding_unsafe(void) {
  pthread_t self = pthread_self();
  for (Capture *c = g.captures; c; c = c->next) {
    if (c->mode == CAPTURE_MODE_GLOBAL) return c;
    if (c->mode == CAPTURE_MODE_THREAD_LOCAL && pthread_equal(c->owner, self)) return c;
  }
  return NULL;
}

void capture_invalidate(Capture *c) {
  if (c && !c->invalidated) {
    c->invalidated = 1;
    trace("a capture on stream %d is invalidated", c->origin ? c->origin->id : -1);
  }
}

int capture_add(Stream *s, Node *node) {
  Capture *c = s->cap;
  if (c->invalidated) return cudaErrorStreamCaptureInvalidated;
  if (c->nodes.n == c->nodes.cap) {
    c->nodes.cap = c->nodes.cap ? 2 * c->nodes.cap : 16;
    c->nodes.v = realloc(c->nodes.v, sizeof(Node) * c->nodes.cap);
  }
  node->ndeps = s->nfront;
  node->deps = malloc(sizeof(int) * (s->nfront ? s->nfront : 1));
  if (s->nfront) memcpy(node->deps, s->front, sizeof(int) * s->nfront);
  int index = c->nodes.n++;
  c->nodes.v[index] = *node;
  if (s->capFront < 1) {
    s->capFront = 4;
    s->front = realloc(s->front, sizeof(int) * s->capFront);
  }
  s->front[0] = index;
  s->nfront = 1;
  return cudaSuccess;
}

EXPORT int cudaStreamBeginCapture(uintptr_t sh, int mode) {
  model_init();
  if (mode < CAPTURE_MODE_GLOBAL || mode > CAPTURE_MODE_RELAXED) return cuda_return(cudaErrorInvalidValue);
  lock();
  Stream *s;
  int rc = stream_resolve(sh, &s);
  if (!rc && s->kind == STREAM_LEGACY) rc = cudaErrorInvalidValue; /* "may not be initiated if stream is cudaStreamLegacy" */
  if (!rc && s->cap) rc = cudaErrorIllegalState;
  if (!rc) {
    Capture *c = calloc(1, sizeof *c);
    c->mode = mode;
    c->owner = pthread_self();
    c->origin = s;
    c->device = s->device;
    c->capStreams = 4;
    c->streams = malloc(sizeof(Stream *) * c->capStreams);
    c->streams[c->nstreams++] = s;
    c->next = g.captures;
    g.captures = c;
    s->cap = c;
    s->nfront = 0;
    trace("stream %d begins a capture (mode %d)", s->id, mode);
  }
  unlock();
  return cuda_return(rc);
}

/* Whether every node in `nodes` is the origin's frontier or one of its ancestors. */
static int joined(Capture *c, const int *front, int nfront, const int *nodes, int n) {
  if (n == 0) return 1;
  char *seen = calloc((size_t)(c->nodes.n ? c->nodes.n : 1), 1);
  int *todo = malloc(sizeof(int) * (c->nodes.n + nfront + 1));
  int ntodo = 0;
  for (int i = 0; i < nfront; i++) todo[ntodo++] = front[i];
  while (ntodo) {
    int x = todo[--ntodo];
    if (seen[x]) continue;
    seen[x] = 1;
    for (int i = 0; i < c->nodes.v[x].ndeps; i++) todo[ntodo++] = c->nodes.v[x].deps[i];
  }
  int ok = 1;
  for (int i = 0; i < n; i++) ok &= seen[nodes[i]];
  free(seen);
  free(todo);
  return ok;
}

static void capture_end(Capture *c) { /* lock held */
  for (int i = 0; i < c->nstreams; i++) {
    c->streams[i]->cap = NULL;
    c->streams[i]->nfront = 0;
  }
  Capture **p = &g.captures;
  while (*p && *p != c) p = &(*p)->next;
  if (*p) *p = c->next;
  c->origin = NULL; /* ended: events recorded in it no longer stand for nodes */
}

EXPORT int cudaStreamEndCapture(uintptr_t sh, uintptr_t *graphOut) {
  model_init();
  if (!graphOut) return cuda_return(cudaErrorInvalidValue);
  *graphOut = 0;
  lock();
  Stream *s;
  int rc = stream_resolve(sh, &s);
  Capture *c = NULL;
  if (!rc && !s->cap) rc = cudaErrorIllegalState;
  if (!rc) {
    c = s->cap;
    if (c->origin != s) {
      capture_invalidate(c);
      rc = cudaErrorStreamCaptureUnmatched;
    } else if (c->mode != CAPTURE_MODE_RELAXED && !pthread_equal(c->owner, pthread_self())) {
      rc = cudaErrorStreamCaptureWrongThread;
    }
  }
  if (!rc) {
    if (!c->invalidated) {
      for (int i = 1; i < c->nstreams; i++) {
        Stream *j = c->streams[i];
        if (!joined(c, s->front, s->nfront, j->front, j->nfront)) {
          capture_invalidate(c);
          rc = cudaErrorStreamCaptureUnjoined;
          break;
        }
      }
    }
    capture_end(c);
    if (!rc && c->invalidated) rc = cudaErrorStreamCaptureInvalidated;
    if (!rc) {
      Graph *gr = calloc(1, sizeof *gr);
      gr->magic = MAGIC_GRAPH;
      gr->nodes = c->nodes.v;
      gr->nnodes = c->nodes.n;
      nodes_ref(gr->nodes, gr->nnodes, +1);
      *graphOut = (uintptr_t)gr;
      trace("stream %d ends its capture: a graph of %d nodes", s->id, gr->nnodes);
    } else {
      nodes_free(c->nodes.v, c->nodes.n);
    }
    c->nodes.v = NULL;
    c->nodes.n = 0;
  }
  unlock();
  return cuda_return(rc);
}

EXPORT int cudaStreamIsCapturing(uintptr_t sh, int *status) {
  model_init();
  if (!status) return cuda_return(cudaErrorInvalidValue);
  lock();
  Stream *s;
  int rc = stream_resolve(sh, &s);
  if (!rc) rc = legacy_capture_conflict(s);
  if (!rc) {
    *status = !s->cap ? CAPTURE_STATUS_NONE
                      : (s->cap->invalidated ? CAPTURE_STATUS_INVALIDATED : CAPTURE_STATUS_ACTIVE);
  }
  unlock();
  return cuda_return(rc);
}

/* ---------------------------------------------------------------- graphs */

static int graph_resolve(uintptr_t h, Graph **out) {
  Graph *gr = (Graph *)h;
  if (!gr || gr->magic != MAGIC_GRAPH || gr->destroyed) return cudaErrorInvalidValue;
  *out = gr;
  return cudaSuccess;
}

static int exec_resolve(uintptr_t h, GraphExec **out) {
  GraphExec *x = (GraphExec *)h;
  if (!x || x->magic != MAGIC_EXEC || x->destroyed) return cudaErrorInvalidValue;
  *out = x;
  return cudaSuccess;
}

EXPORT int cudaGraphDestroy(uintptr_t h) {
  model_init();
  lock();
  Graph *gr;
  int rc = graph_resolve(h, &gr);
  if (!rc) {
    gr->destroyed = 1;
    nodes_ref(gr->nodes, gr->nnodes, -1);
    nodes_free(gr->nodes, gr->nnodes);
    gr->nodes = NULL;
    broadcast();
  }
  unlock();
  return cuda_return(rc);
}

EXPORT int cudaGraphInstantiateWithFlags(uintptr_t *execOut, uintptr_t h, unsigned long long flags) {
  (void)flags;
  model_init();
  if (!execOut) return cuda_return(cudaErrorInvalidValue);
  lock();
  Graph *gr;
  int rc = graph_resolve(h, &gr);
  if (!rc) {
    GraphExec *x = calloc(1, sizeof *x);
    x->magic = MAGIC_EXEC;
    x->nodes = nodes_copy(gr->nodes, gr->nnodes);
    x->nnodes = gr->nnodes;
    nodes_ref(x->nodes, x->nnodes, +1);
    *execOut = (uintptr_t)x;
  }
  unlock();
  return cuda_return(rc);
}

EXPORT int cudaGraphInstantiate(uintptr_t *execOut, uintptr_t h, unsigned long long flags) {
  return cudaGraphInstantiateWithFlags(execOut, h, flags);
}

static void exec_release(GraphExec *x) { /* lock held: destroyed and no launch in flight */
  if (x->released) return;
  x->released = 1;
  nodes_ref(x->nodes, x->nnodes, -1);
  nodes_free(x->nodes, x->nnodes);
  x->nodes = NULL;
  broadcast();
}

EXPORT int cudaGraphExecDestroy(uintptr_t h) {
  model_init();
  lock();
  GraphExec *x;
  int rc = exec_resolve(h, &x);
  if (!rc) {
    x->destroyed = 1;
    if (x->inflight == 0) exec_release(x);
  }
  unlock();
  return cuda_return(rc);
}

EXPORT int cudaGraphLaunch(uintptr_t h, uintptr_t sh) {
  model_init();
  lock();
  GraphExec *x;
  Stream *s;
  int rc = exec_resolve(h, &x);
  if (!rc) rc = stream_resolve(sh, &s);
  if (!rc) rc = legacy_capture_conflict(s);
  if (!rc && s->cap) {
    capture_invalidate(s->cap);
    rc = cudaErrorStreamCaptureUnsupported;
  }
  if (!rc) rc = g.dev[s->device].sticky;
  if (!rc) {
    for (int i = 0; i < x->nnodes; i++) {
      if (x->nodes[i].kind == N_NCCL && !nccl_comm_live(x->nodes[i].u.nccl.comm)) rc = cudaErrorIllegalState;
    }
  }
  if (!rc) {
    Work *w = work_new(W_GRAPH);
    GraphLaunch *l = calloc(1, sizeof *l);
    l->exec = x;
    l->batches = calloc((size_t)(x->nnodes ? x->nnodes : 1), sizeof(NcclBatch *));
    w->u.launch = l;
    deplist_add(&w->deps, x->lastStream, x->lastSeq);
    for (int i = 0; i < x->nnodes; i++) {
      Node *n = &x->nodes[i];
      if (n->kind == N_NCCL) {
        Dep after = {0};
        l->batches[i] = nccl_batch_for_launch(n->u.nccl.comm, n->u.nccl.ops, n->u.nccl.nops, &after);
        if (after.s != s) deplist_add(&w->deps, after.s, after.seq);
      } else if (n->kind == N_EXTWAIT && n->u.ext.ev->s) {
        deplist_add(&w->deps, n->u.ext.ev->s, n->u.ext.ev->seq);
      }
    }
    stream_enqueue(s, w);
    x->inflight++;
    x->lastStream = s;
    x->lastSeq = w->seq;
    for (int i = 0; i < x->nnodes; i++) {
      if (l->batches[i]) { /* the communicator's next call runs after this launch */
        nccl_comm_set_last(x->nodes[i].u.nccl.comm, s, w->seq);
      }
    }
  }
  unlock();
  return cuda_return(rc);
}

void graph_run_launch(Work *w) {
  GraphLaunch *l = w->u.launch;
  GraphExec *x = l->exec;
  for (int i = 0; i < x->nnodes; i++) {
    lock();
    int sticky = g.dev[w->device].sticky;
    unlock();
    Node *n = &x->nodes[i];
    if (n->kind == N_NCCL) {
      if (!sticky) nccl_run_batch(l->batches[i]);
      nccl_batch_free(l->batches[i]);
      continue;
    }
    if (sticky) continue;
    Work tmp = {.device = w->device};
    if (n->kind == N_D2D) {
      tmp.kind = W_D2D;
      tmp.u.copy.dst = n->u.copy.dst;
      tmp.u.copy.src = n->u.copy.src;
      tmp.u.copy.n = n->u.copy.n;
      run_copy(&tmp);
    } else if (n->kind == N_MEMSET) {
      tmp.kind = W_MEMSET;
      tmp.u.memset.dst = n->u.memset.dst;
      tmp.u.memset.value = n->u.memset.value;
      tmp.u.memset.n = n->u.memset.n;
      run_memset(&tmp);
    }
  }
  lock();
  x->inflight--;
  if (x->destroyed && x->inflight == 0) exec_release(x);
  unlock();
  free(l->batches);
  free(l);
}
