/*
 * The model's state, its knobs, CUDA's error texts and the device queries.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "model.h"

Global g = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

const char *const KIND_NAME[K_NUM] = {"AllReduce", "Broadcast", "Reduce", "AllGather", "ReduceScatter",
                                      "Gather", "Scatter", "AlltoAll", "Send", "Recv"};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static __thread int tlDevice;
static __thread int tlLastError;

long env_long(const char *name, long dflt) {
  const char *v = getenv(name);
  if (!v || !*v) return dflt;
  char *end;
  errno = 0;
  long x = strtol(v, &end, 0);
  if (errno || *end) {
    fprintf(stderr, "[gpu-model] %s=%s is not a number; using %ld\n", name, v, dflt);
    return dflt;
  }
  return x;
}

/* A size: a number with an optional K, M, G or T suffix (powers of 1024). */
size_t env_size(const char *name, size_t dflt) {
  const char *v = getenv(name);
  if (!v || !*v) return dflt;
  char *end;
  double x = strtod(v, &end);
  switch (*end) {
  case 'k': case 'K': x *= 1024.0; end++; break;
  case 'm': case 'M': x *= 1024.0 * 1024; end++; break;
  case 'g': case 'G': x *= 1024.0 * 1024 * 1024; end++; break;
  case 't': case 'T': x *= 1024.0 * 1024 * 1024 * 1024; end++; break;
  default: break;
  }
  if (*end == 'i') end++;
  if (*end == 'B') end++;
  if (*end || x < 0) {
    fprintf(stderr, "[gpu-model] %s=%s is not a size; using %zu\n", name, v, dflt);
    return dflt;
  }
  return (size_t)x;
}

static int kind_by_name(const char *name) {
  for (int k = 0; k < K_NUM; k++) {
    if (strcasecmp(name, KIND_NAME[k]) == 0) return k;
  }
  return -1;
}

/* "after[:rank[:code]]" style knobs: fills up to three longs, returns how many were given. */
static int parse_triple(const char *v, long out[3]) {
  int n = 0;
  while (v && *v && n < 3) {
    char *end;
    out[n++] = strtol(v, &end, 0);
    if (*end != ':') break;
    v = end + 1;
  }
  return n;
}

static void read_knobs(void) {
  Knobs *k = &g.k;
  k->devices = (int)env_long("COMMPLAN_MODEL_DEVICES", 1);
  if (k->devices < 0) k->devices = 0;
  if (k->devices > MAX_DEVICES) k->devices = MAX_DEVICES;
  k->deviceMemory = env_size("COMMPLAN_MODEL_DEVICE_MEMORY", (size_t)80 << 30);
  k->ncclVersion = (int)env_long("COMMPLAN_MODEL_NCCL_VERSION", 23007);
  k->delayUs = env_long("COMMPLAN_MODEL_DELAY_US", 0);
  k->copyDelayUs = env_long("COMMPLAN_MODEL_COPY_DELAY_US", 0);
  k->failAllocAt = env_long("COMMPLAN_MODEL_FAIL_ALLOC", 0);
  k->mallocBarrier = (int)env_long("COMMPLAN_MODEL_MALLOC_BARRIER", 0);
  k->trace = (int)env_long("COMMPLAN_MODEL_TRACE", 0);
  k->fill = (int)env_long("COMMPLAN_MODEL_FILL", -1);
  long t[3];
  k->asyncErrorAfter = -1;
  const char *v = getenv("COMMPLAN_MODEL_ASYNC_ERROR");
  if (v && *v) {
    int n = parse_triple(v, t);
    k->asyncErrorAfter = t[0];
    k->asyncErrorRank = n > 1 ? (int)t[1] : 0;
    k->asyncErrorCode = n > 2 ? (int)t[2] : ncclRemoteError;
  }
  k->absentAfter = -1;
  v = getenv("COMMPLAN_MODEL_ABSENT");
  if (v && *v) {
    int n = parse_triple(v, t);
    k->absentRank = (int)t[0];
    k->absentAfter = n > 1 ? t[1] : 0;
  }
  k->mutateKind = -1;
  v = getenv("COMMPLAN_MODEL_MUTATE");
  if (v && *v) {
    char name[64];
    size_t len = strcspn(v, ":");
    if (len >= sizeof name) len = sizeof name - 1;
    memcpy(name, v, len);
    name[len] = 0;
    k->mutateKind = kind_by_name(name);
    if (k->mutateKind < 0) fprintf(stderr, "[gpu-model] COMMPLAN_MODEL_MUTATE=%s: no such collective\n", v);
    k->mutateRank = 0;
    k->mutateIndex = 0;
    if (v[len] == ':') {
      int n = parse_triple(v + len + 1, t);
      if (n > 0) k->mutateRank = (int)t[0];
      if (n > 1) k->mutateIndex = t[1];
    }
  }
  for (int d = 0; d < k->devices; d++) g.dev[d].total = k->deviceMemory;
  if (k->trace) {
    fprintf(stderr, "[gpu-model] %d device(s) of %zu bytes, NCCL version %d\n", k->devices, k->deviceMemory,
            k->ncclVersion);
  }
}

void model_init(void) {
  pthread_once(&once, read_knobs);
}

void lock(void) {
  pthread_mutex_lock(&g.mu);
}

void unlock(void) {
  pthread_mutex_unlock(&g.mu);
}

void wait_cv(void) {
  pthread_cond_wait(&g.cv, &g.mu);
}

void broadcast(void) {
  pthread_cond_broadcast(&g.cv);
}

double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

void trace(const char *fmt, ...) {
  if (!g.k.trace) return;
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "[gpu-model] ");
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

/* NCCL's WARN: the text ncclGetLastError returns (src/debug.cc keeps the last WARN in ncclLastError). */
void nccl_warn(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g.lastError, sizeof g.lastError, fmt, ap);
  va_end(ap);
  if (g.k.trace) fprintf(stderr, "[gpu-model] NCCL WARN %s\n", g.lastError);
}

int current_device(void) {
  return tlDevice;
}

/* Every runtime call's code becomes the thread's last error (cudaGetLastError), success excepted. */
int cuda_return(int code) {
  if (code != cudaSuccess && code != cudaErrorNotReady) tlLastError = code;
  return code;
}

void deplist_add(DepList *l, Stream *s, uint64_t seq) {
  if (!s || seq == 0) return;
  for (int i = 0; i < l->n; i++) {
    if (l->v[i].s == s) {
      if (l->v[i].seq < seq) l->v[i].seq = seq;
      return;
    }
  }
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 4;
    l->v = realloc(l->v, sizeof(Dep) * l->cap);
  }
  l->v[l->n++] = (Dep){s, seq};
}

void deplist_free(DepList *l) {
  free(l->v);
  l->v = NULL;
  l->n = l->cap = 0;
}

/* ---------------------------------------------------------------- errors */

typedef struct {
  int code;
  const char *name, *text;
} ErrorText;

/* cudaGetErrorName / cudaGetErrorString (driver_types.h's descriptions). */
static const ErrorText ERRORS[] = {
  {cudaSuccess, "cudaSuccess", "no error"},
  {cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
  {cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
  {cudaErrorInitializationError, "cudaErrorInitializationError", "initialization error"},
  {cudaErrorInsufficientDriver, "cudaErrorInsufficientDriver",
   "CUDA driver version is insufficient for CUDA runtime version"},
  {cudaErrorNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected"},
  {cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
  {cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
  {cudaErrorIllegalState, "cudaErrorIllegalState", "the operation cannot be performed in the present state"},
  {cudaErrorNotReady, "cudaErrorNotReady", "device not ready"},
  {cudaErrorIllegalAddress, "cudaErrorIllegalAddress", "an illegal memory access was encountered"},
  {cudaErrorNotSupported, "cudaErrorNotSupported", "operation not supported"},
  {cudaErrorStreamCaptureUnsupported, "cudaErrorStreamCaptureUnsupported",
   "operation not permitted when stream is capturing"},
  {cudaErrorStreamCaptureInvalidated, "cudaErrorStreamCaptureInvalidated",
   "operation failed due to a previous error during capture"},
  {cudaErrorStreamCaptureMerge, "cudaErrorStreamCaptureMerge", "operation would result in a merge of separate capture sequences"},
  {cudaErrorStreamCaptureUnmatched, "cudaErrorStreamCaptureUnmatched", "capture was not ended in the same stream as it began"},
  {cudaErrorStreamCaptureUnjoined, "cudaErrorStreamCaptureUnjoined", "capturing stream has unjoined work"},
  {cudaErrorStreamCaptureIsolation, "cudaErrorStreamCaptureIsolation",
   "dependency created on uncaptured work in another stream"},
  {cudaErrorStreamCaptureImplicit, "cudaErrorStreamCaptureImplicit",
   "operation would make the legacy stream depend on a capturing blocking stream"},
  {cudaErrorCapturedEvent, "cudaErrorCapturedEvent", "operation not permitted on an event last recorded in a capturing stream"},
  {cudaErrorStreamCaptureWrongThread, "cudaErrorStreamCaptureWrongThread",
   "attempt to terminate a thread-local capture sequence from another thread"},
  {cudaErrorUnknown, "cudaErrorUnknown", "unknown error"},
};

static const ErrorText *error_of(int code) {
  for (size_t i = 0; i < sizeof ERRORS / sizeof ERRORS[0]; i++) {
    if (ERRORS[i].code == code) return &ERRORS[i];
  }
  return NULL;
}

EXPORT const char *cudaGetErrorName(int code) {
  const ErrorText *e = error_of(code);
  return e ? e->name : "cudaErrorUnknown";
}

EXPORT const char *cudaGetErrorString(int code) {
  const ErrorText *e = error_of(code);
  return e ? e->text : "unrecognized error code";
}

/* Returns and clears the thread's last error; a sticky error (the device faulted) stays. */
EXPORT int cudaGetLastError(void) {
  model_init();
  int e = tlLastError;
  tlLastError = cudaSuccess;
  lock();
  int d = tlDevice;
  if (d < g.k.devices && g.dev[d].sticky) e = g.dev[d].sticky;
  unlock();
  return e;
}

EXPORT int cudaPeekAtLastError(void) {
  return tlLastError;
}

/* ---------------------------------------------------------------- devices, versions */

EXPORT int cudaDriverGetVersion(int *v) {
  model_init();
  if (!v) return cuda_return(cudaErrorInvalidValue);
  *v = 13000;
  return cudaSuccess;
}

EXPORT int cudaRuntimeGetVersion(int *v) {
  if (!v) return cuda_return(cudaErrorInvalidValue);
  *v = 13000;
  return cudaSuccess;
}

EXPORT int cudaGetDeviceCount(int *count) {
  model_init();
  if (!count) return cuda_return(cudaErrorInvalidValue);
  if (g.k.devices == 0) {
    *count = 0;
    return cuda_return(cudaErrorNoDevice);
  }
  *count = g.k.devices;
  return cudaSuccess;
}

EXPORT int cudaSetDevice(int device) {
  model_init();
  if (g.k.devices == 0) return cuda_return(cudaErrorNoDevice);
  if (device < 0 || device >= g.k.devices) return cuda_return(cudaErrorInvalidDevice);
  tlDevice = device;
  return cudaSuccess;
}

EXPORT int cudaGetDevice(int *device) {
  model_init();
  if (!device) return cuda_return(cudaErrorInvalidValue);
  if (g.k.devices == 0) return cuda_return(cudaErrorNoDevice);
  *device = tlDevice;
  return cudaSuccess;
}

/* A PCI address per device, the same in every process of the machine ("0000:1d:00.0" for device 0). */
EXPORT int cudaDeviceGetPCIBusId(char *buf, int len, int device) {
  model_init();
  if (!buf || len <= 0) return cuda_return(cudaErrorInvalidValue);
  if (device < 0 || device >= g.k.devices) return cuda_return(cudaErrorInvalidDevice);
  snprintf(buf, (size_t)len, "0000:%02x:00.0", 0x1d + device);
  return cudaSuccess;
}

EXPORT int cudaDeviceSynchronize(void) {
  model_init();
  lock();
  int d = tlDevice;
  if (capture_forbidding_unsafe()) {
    Capture *c = capture_forbidding_unsafe();
    capture_invalidate(c);
    unlock();
    return cuda_return(cudaErrorStreamCaptureUnsupported);
  }
  device_synchronize_host(d);
  int sticky = g.dev[d].sticky;
  unlock();
  return cuda_return(sticky);
}

/* Not CUDA's or NCCL's: says that this library is the CPU model (tests that need a real GPU's speed ask for
   it by name and skip themselves). */
EXPORT const char *commplanGpuModel(void) {
  return "CommPlan's CPU model of the CUDA runtime and NCCL (gpu-model/README.md)";
}
