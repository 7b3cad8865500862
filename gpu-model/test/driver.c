/* The driver API of CommPlan's own kernels (driver.c): a module of PTX text, its functions by name, and the finite
   check's kernels launched on a stream, in stream order, with the arguments copied at the launch. */
/* env: COMMPLAN_MODEL_DEVICES=2 NCCL_MULTI_RANK_GPU_ENABLE=1 */
#include <string.h>

#include "check.h"

static Gate gate;

static const char PTX[] =
    ".version 9.0\n.target sm_75\n.address_size 64\n"
    ".visible .entry commplan_nonfinite_u32(\n.param .u64 a,\n.param .u64 b,\n.param .u32 c,\n.param .u64 d\n)\n{}\n"
    ".visible .entry commplan_nonfinite_value(\n.param .u64 a,\n.param .u32 b,\n.param .u64 c\n)\n{}\n";

static void a_module_has_the_entries_its_ptx_names(void) {
  OK(cuInit(0));
  void *m = NULL, *f = NULL;
  EQ(cuModuleLoadData(&m, "not ptx"), 200); /* CUDA_ERROR_INVALID_IMAGE */
  OK(cuModuleLoadData(&m, PTX));
  OK(cuModuleGetFunction(&f, m, "commplan_nonfinite_u32"));
  CHECK(f != NULL);
  EQ(cuModuleGetFunction(&f, m, "commplan_nonfinite_u16"), 500); /* not in this PTX: CUDA_ERROR_NOT_FOUND */
  const char *name = NULL, *text = NULL;
  OK(cuGetErrorName(500, &name));
  OK(cuGetErrorString(500, &text));
  CHECK(name && strcmp(name, "CUDA_ERROR_NOT_FOUND") == 0);
  CHECK(text != NULL);
}

static int launch_search(void *f, uint64_t data, uint64_t count, unsigned mask, uint64_t first, stream_t s) {
  void *params[] = {&data, &count, &mask, &first};
  return cuLaunchKernel(f, 4, 1, 1, 256, 1, 1, 0, s, params, NULL);
}

/* The search finds the first element whose masked bits are all ones, after the stream's earlier work (the
   memset), and the value kernel writes its bits; launched while the stream is held, they have not run. */
static void the_kernels_run_in_stream_order_with_the_arguments_of_the_launch(void) {
  void *m = NULL, *search = NULL, *value = NULL;
  OK(cuModuleLoadData(&m, PTX));
  OK(cuModuleGetFunction(&search, m, "commplan_nonfinite_u32"));
  OK(cuModuleGetFunction(&value, m, "commplan_nonfinite_value"));
  stream_t s;
  OK(cudaStreamCreateWithFlags(&s, NONBLOCKING));
  uint32_t host[1000];
  for (int i = 0; i < 1000; i++) host[i] = 0x3f800000u; /* 1.0f */
  host[700] = 0x7fc00000u;                                /* NaN */
  host[900] = 0xff800000u;                                /* -Infinity */
  void *data = dev_alloc(sizeof host, 0);
  dev_write(data, host, sizeof host);
  uint64_t *finding = dev_alloc(16, 0);
  gate_close(&gate, s);
  OK(cudaMemsetAsync(finding, 0xff, 16, s));
  uint64_t count = 1000;
  OK(launch_search(search, (uintptr_t)data, count, 0x7f800000u, (uintptr_t)finding, s));
  count = 0; /* the launch copied its arguments */
  uint64_t d = (uintptr_t)data, fp = (uintptr_t)finding;
  unsigned width = 4;
  void *vparams[] = {&d, &width, &fp};
  OK(cuLaunchKernel(value, 1, 1, 1, 1, 1, 1, 0, s, vparams, NULL));
  uint64_t out[2] = {0, 0};
  dev_read(out, finding, 16);
  EQ(out[0], 0); /* held: not even the memset has run */
  gate_open(&gate);
  OK(cudaStreamSynchronize(s));
  dev_read(out, finding, 16);
  EQ(out[0], 700);
  EQ(out[1], 0x7fc00000u);
  /* nothing to find: all ones and bits 0 */
  host[700] = host[900] = 0;
  dev_write(data, host, sizeof host);
  OK(cudaMemsetAsync(finding, 0xff, 16, s));
  OK(launch_search(search, (uintptr_t)data, 1000, 0x7f800000u, (uintptr_t)finding, s));
  OK(cuLaunchKernel(value, 1, 1, 1, 1, 1, 1, 0, s, vparams, NULL));
  OK(cudaStreamSynchronize(s));
  dev_read(out, finding, 16);
  CHECK(out[0] == ~0ull);
  EQ(out[1], 0);
  OK(cudaStreamDestroy(s));
}

/* A function of device 0's module, launched while device 1 is current: CUDA_ERROR_INVALID_CONTEXT. */
static void a_function_runs_in_its_module_s_context_only(void) {
  void *m = NULL, *search = NULL;
  OK(cudaSetDevice(0));
  OK(cuModuleLoadData(&m, PTX));
  OK(cuModuleGetFunction(&search, m, "commplan_nonfinite_u32"));
  OK(cudaSetDevice(1));
  stream_t s1;
  OK(cudaStreamCreateWithFlags(&s1, NONBLOCKING));
  EQ(launch_search(search, 0, 0, 0x7f800000u, 0, s1), 201);
  OK(cudaStreamDestroy(s1));
  OK(cudaSetDevice(0));
}

int main(void) {
  gate_init(&gate, 0, 0);
  TEST(a_module_has_the_entries_its_ptx_names);
  TEST(the_kernels_run_in_stream_order_with_the_arguments_of_the_launch);
  TEST(a_function_runs_in_its_module_s_context_only);
  return finish();
}
