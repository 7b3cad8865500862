/*
 * The few CUDA driver API functions CommPlan calls (runtime/.../nccl/binding/raw/CudaDriver.java, loaded through
 * -Dcommplan.cuda.driver.library): loading the PTX of its own kernels (runtime/src/main/cuda/nonfinite.cu, the
 * finite check's) and launching them. The model compiles no PTX: it knows those kernels by name and runs their C
 * equivalent, as cublas.c runs cuBLAS's.
 *
 * Rules (CUDA Driver API, "Module Management" and "Execution Control"):
 *  - cuModuleLoadData loads an image into the calling thread's current context (here: its current device, the
 *    runtime's primary context) and returns once it is loaded; an image that is no PTX is CUDA_ERROR_INVALID_IMAGE;
 *  - cuModuleGetFunction finds an entry of the module by name, CUDA_ERROR_NOT_FOUND otherwise;
 *  - cuLaunchKernel copies the arguments (kernelParams: one pointer per parameter) when it is called, enqueues the
 *    kernel on the stream and returns before it runs: stream order puts it after the stream's earlier work; the
 *    function must belong to the current context (CUDA_ERROR_INVALID_CONTEXT), the stream to that device;
 *  - a kernel that touches memory that is no device allocation faults the device (a sticky illegal address);
 *  - launches into a stream capture are not modelled (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED).
 */
#include <stdlib.h>
#include <string.h>

#include "model.h"

enum {
  CUDA_SUCCESS = 0, CUDA_ERROR_INVALID_VALUE = 1, CUDA_ERROR_NO_DEVICE = 100, CUDA_ERROR_INVALID_IMAGE = 200,
  CUDA_ERROR_INVALID_CONTEXT = 201, CUDA_ERROR_INVALID_HANDLE = 400, CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_ILLEGAL_ADDRESS = 700, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
};

#define MAGIC_MODULE 0x4d4f444cu
#define MAGIC_FUNCTION 0x46554e43u
#define KERNELS 5

/* The kernels the model knows: a search per element width (1, 2, 4, 8 bytes), and the value kernel. */
static const char *const KERNEL_NAME[KERNELS] = {
  "commplan_nonfinite_u8", "commplan_nonfinite_u16", "commplan_nonfinite_u32", "commplan_nonfinite_u64",
  "commplan_nonfinite_value",
};

struct Module;

typedef struct Function {
  uint32_t magic;
  int kernel; /* index into KERNEL_NAME */
  struct Module *module;
} Function;

typedef struct Module {
  uint32_t magic;
  int device;
  int has[KERNELS];
  Function fn[KERNELS];
} Module;

typedef struct KernelCall {
  int kernel;
  uint64_t data, count, mask, first;
  unsigned width;
} KernelCall;

EXPORT int cuInit(unsigned flags) {
  model_init();
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  return g.k.devices == 0 ? CUDA_ERROR_NO_DEVICE : CUDA_SUCCESS;
}

EXPORT int cuModuleLoadData(Module **out, const void *image) {
  model_init();
  if (!out || !image) return CUDA_ERROR_INVALID_VALUE;
  if (g.k.devices == 0) return CUDA_ERROR_NO_DEVICE;
  const char *ptx = image;
  if (!strstr(ptx, ".version") || !strstr(ptx, ".entry")) return CUDA_ERROR_INVALID_IMAGE;
  Module *m = calloc(1, sizeof *m); /* never freed: CommPlan keeps its modules for the process's life */
  m->magic = MAGIC_MODULE;
  m->device = current_device();
  char entry[128];
  for (int k = 0; k < KERNELS; k++) {
    snprintf(entry, sizeof entry, ".entry %s(", KERNEL_NAME[k]);
    m->has[k] = strstr(ptx, entry) != NULL;
    m->fn[k] = (Function){.magic = MAGIC_FUNCTION, .kernel = k, .module = m};
  }
  *out = m;
  return CUDA_SUCCESS;
}

EXPORT int cuModuleGetFunction(Function **out, Module *m, const char *name) {
  if (!out || !name) return CUDA_ERROR_INVALID_VALUE;
  if (!m || m->magic != MAGIC_MODULE) return CUDA_ERROR_INVALID_HANDLE;
  for (int k = 0; k < KERNELS; k++) {
    if (m->has[k] && strcmp(name, KERNEL_NAME[k]) == 0) {
      *out = &m->fn[k];
      return CUDA_SUCCESS;
    }
  }
  return CUDA_ERROR_NOT_FOUND;
}

static uint64_t element(const unsigned char *p, unsigned width) {
  uint64_t bits = 0;
  for (unsigned b = 0; b < width; b++) bits |= (uint64_t)p[b] << (8 * b); /* little-endian, as CUDA's */
  return bits;
}

/* The kernels' C equivalents, on the stream's worker (nonfinite.cu says what each does). */
static void run_kernel(void *arg, int device) {
  KernelCall *c = arg;
  Alloc *first = NULL, *data = NULL;
  int value = c->kernel == KERNELS - 1;
  if (pin_range((void *)(uintptr_t)c->first, (value ? 2 : 1) * sizeof(uint64_t), &first)) {
    device_fault(device, "a CommPlan kernel's result is no device memory");
    return;
  }
  uint64_t *out = (uint64_t *)(uintptr_t)c->first;
  const unsigned char *base = (const unsigned char *)(uintptr_t)c->data;
  if (value) {
    uint64_t index = out[0], bits = 0;
    if (index != ~0ull) {
      if (pin_range(base + index * c->width, c->width, &data)) {
        device_fault(device, "commplan_nonfinite_value read no device memory");
        unpin(first);
        return;
      }
      bits = element(base + index * c->width, c->width);
    }
    out[1] = bits;
  } else if (c->count > 0) {
    if (pin_range(base, c->count * c->width, &data)) {
      device_fault(device, "a commplan_nonfinite search read no device memory");
      unpin(first);
      return;
    }
    for (uint64_t i = 0; i < c->count && i < out[0]; i++) { /* atomicMin: the lowest index wins */
      if ((element(base + i * c->width, c->width) & c->mask) == c->mask) {
        out[0] = i;
        break;
      }
    }
  }
  unpin(data);
  unpin(first);
}

EXPORT int cuLaunchKernel(Function *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                          unsigned bz, unsigned shared, uintptr_t stream, void **params, void **extra) {
  model_init();
  if (!f || f->magic != MAGIC_FUNCTION) return CUDA_ERROR_INVALID_HANDLE;
  if (!gx || !gy || !gz || !bx || !by || !bz || bx * by * bz > 1024 || !params || extra) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  KernelCall *c = calloc(1, sizeof *c); /* the arguments, copied now */
  c->kernel = f->kernel;
  c->data = *(uint64_t *)params[0];
  if (f->kernel == KERNELS - 1) {
    c->width = *(unsigned *)params[1];
    c->first = *(uint64_t *)params[2];
  } else {
    c->width = 1u << f->kernel;
    c->count = *(uint64_t *)params[1];
    c->mask = c->width == 8 ? *(uint64_t *)params[2] : *(unsigned *)params[2];
    c->first = *(uint64_t *)params[3];
  }
  lock();
  int rc = current_device() != f->module->device ? CUDA_ERROR_INVALID_CONTEXT : CUDA_SUCCESS;
  Stream *s = NULL;
  if (!rc) rc = stream_resolve(stream, &s) ? CUDA_ERROR_INVALID_HANDLE : CUDA_SUCCESS;
  if (!rc && s->device != f->module->device) rc = CUDA_ERROR_INVALID_HANDLE;
  if (!rc && s->cap) rc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  if (!rc && legacy_capture_conflict(s)) rc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  if (!rc && g.dev[s->device].sticky) rc = CUDA_ERROR_ILLEGAL_ADDRESS;
  if (rc) {
    unlock();
    free(c);
    return rc;
  }
  Work *w = work_new(W_FN);
  w->u.fn.run = run_kernel;
  w->u.fn.arg = c;
  stream_enqueue(s, w);
  unlock();
  return CUDA_SUCCESS;
}

static const char *name_of(int code) {
  switch (code) {
  case CUDA_SUCCESS: return "CUDA_SUCCESS";
  case CUDA_ERROR_INVALID_VALUE: return "CUDA_ERROR_INVALID_VALUE";
  case CUDA_ERROR_NO_DEVICE: return "CUDA_ERROR_NO_DEVICE";
  case CUDA_ERROR_INVALID_IMAGE: return "CUDA_ERROR_INVALID_IMAGE";
  case CUDA_ERROR_INVALID_CONTEXT: return "CUDA_ERROR_INVALID_CONTEXT";
  case CUDA_ERROR_INVALID_HANDLE: return "CUDA_ERROR_INVALID_HANDLE";
  case CUDA_ERROR_NOT_FOUND: return "CUDA_ERROR_NOT_FOUND";
  case CUDA_ERROR_ILLEGAL_ADDRESS: return "CUDA_ERROR_ILLEGAL_ADDRESS";
  case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED: return "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED";
  default: return NULL;
  }
}

static const char *text_of(int code) {
  switch (code) {
  case CUDA_SUCCESS: return "no error";
  case CUDA_ERROR_INVALID_VALUE: return "invalid argument";
  case CUDA_ERROR_NO_DEVICE: return "no CUDA-capable device is detected";
  case CUDA_ERROR_INVALID_IMAGE: return "device kernel image is invalid";
  case CUDA_ERROR_INVALID_CONTEXT: return "invalid device context";
  case CUDA_ERROR_INVALID_HANDLE: return "invalid resource handle";
  case CUDA_ERROR_NOT_FOUND: return "named symbol not found";
  case CUDA_ERROR_ILLEGAL_ADDRESS: return "an illegal memory access was encountered";
  case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED: return "operation not permitted when stream is capturing";
  default: return NULL;
  }
}

EXPORT int cuGetErrorName(int code, const char **out) {
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  *out = name_of(code);
  return *out ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

EXPORT int cuGetErrorString(int code, const char **out) {
  if (!out) return CUDA_ERROR_INVALID_VALUE;
  *out = text_of(code);
  return *out ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
