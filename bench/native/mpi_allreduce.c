/*
 * mpi_allreduce: the C floor for dev.commplan.runtime.mpi.MpiAllReduceTiming (issue 24, part 3). Each call is
 * what the MPI backend issues for a one-field plan: an in-place F32 SUM all-reduce, MPI_Iallreduce(MPI_IN_PLACE)
 * then MPI_Wait, on a duplicate of MPI_COMM_WORLD.
 *
 * The steady-state method is the Java program's, step for step, so the two rows compare:
 *   - warm up in batches; a batch's time is the median of its calls; the warm-up ends when it has run at least
 *     MIN_WARM_MS and MIN_WARM_CALLS calls (the JVM's JIT thresholds; or CALLS_OR_MS, for large messages) and the
 *     last STABLE_BATCHES batch medians lie within STABLE_SPREAD of their smallest, on every
 *     rank (an MPI_Allreduce MIN of each rank's verdict after every batch, outside the timed calls), or gives up
 *     after MAX_WARM_MS and says "not stable";
 *   - then MEASURE_BATCHES batches are timed call by call; the row is the slowest rank's median (and p10, p90).
 * A batch is 500 calls up to 4 KiB, fewer above (the calls of a batch move about 2 MiB, at least 5 calls).
 *
 * Build and run (bench/native/mpi_compare.sh does both, beside the Java program):
 *   mpicc -O2 -o /tmp/mpi_allreduce bench/native/mpi_allreduce.c
 *   mpirun -np 2 /tmp/mpi_allreduce [count ...]      (default counts: 1 1024 65536 1048576 4194304)
 */
#define _POSIX_C_SOURCE 200112L /* clock_gettime under -std=c11 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MIN_WARM_MS 1000.0
#define MIN_WARM_CALLS 20000
#define CALLS_OR_MS 5000.0
#define MAX_WARM_MS 10000.0
#define STABLE_BATCHES 5
#define STABLE_SPREAD 0.05
#define MEASURE_BATCHES 10

#define MPI(call) do { int rc_ = (call); if (rc_ != MPI_SUCCESS) { char s_[MPI_MAX_ERROR_STRING]; int n_; \
  MPI_Error_string(rc_, s_, &n_); fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, s_); \
  MPI_Abort(MPI_COMM_WORLD, 1); } } while (0)

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

/* The calls of one batch, each timed; returns their median (us) and leaves them sorted in times. */
static double batch(float *buf, int count, MPI_Comm comm, int calls, double *times) {
  for (int i = 0; i < calls; i++) {
    double t0 = now_us();
    MPI_Request request;
    MPI(MPI_Iallreduce(MPI_IN_PLACE, buf, count, MPI_FLOAT, MPI_SUM, comm, &request));
    MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
    times[i] = now_us() - t0;
  }
  qsort(times, calls, sizeof(double), by_value);
  return times[calls / 2];
}

/* Whether the last STABLE_BATCHES medians lie within STABLE_SPREAD of their smallest. */
static int stable(const double *medians, int n) {
  if (n < STABLE_BATCHES) {
    return 0;
  }
  double lo = medians[n - 1], hi = medians[n - 1];
  for (int i = n - STABLE_BATCHES; i < n; i++) {
    lo = medians[i] < lo ? medians[i] : lo;
    hi = medians[i] > hi ? medians[i] : hi;
  }
  return hi <= lo * (1 + STABLE_SPREAD);
}

static void run(int count, MPI_Comm comm, int rank) {
  long bytes = 4L * count;
  int calls = bytes <= 4096 ? 500 : (int) (2097152 / bytes);
  calls = calls < 5 ? 5 : calls;
  float *buf = aligned_alloc(256, (size_t) ((bytes + 255) / 256 * 256));
  for (int i = 0; i < count; i++) {
    buf[i] = 1.0f;
  }
  double *times = malloc(sizeof(double) * calls * MEASURE_BATCHES);
  int cap = 1024, n = 0, done = 0;
  long warm_calls = 0;
  double *medians = malloc(sizeof(double) * cap);
  double first = now_us();
  MPI_Request request;
  MPI(MPI_Iallreduce(MPI_IN_PLACE, buf, count, MPI_FLOAT, MPI_SUM, comm, &request));
  MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
  double first_us = now_us() - first;
  double start = now_us();
  while (!done) {
    if (n == cap) {
      cap *= 2;
      medians = realloc(medians, sizeof(double) * cap);
    }
    medians[n] = batch(buf, count, comm, calls, times);
    n++;
    warm_calls += calls;
    double elapsed_ms = (now_us() - start) / 1e3;
    int long_enough = elapsed_ms >= MIN_WARM_MS && (warm_calls >= MIN_WARM_CALLS || elapsed_ms >= CALLS_OR_MS);
    int mine = (long_enough && stable(medians, n)) || elapsed_ms >= MAX_WARM_MS ? 1 : 0;
    MPI(MPI_Allreduce(&mine, &done, 1, MPI_INT, MPI_MIN, comm));
  }
  double warm_ms = (now_us() - start) / 1e3;
  int was_stable = stable(medians, n), all_stable;
  MPI(MPI_Allreduce(&was_stable, &all_stable, 1, MPI_INT, MPI_MIN, comm));
  for (int b = 0; b < MEASURE_BATCHES; b++) {
    batch(buf, count, comm, calls, times + (long) b * calls);
  }
  int total = calls * MEASURE_BATCHES;
  qsort(times, total, sizeof(double), by_value);
  double mine[3] = {times[total / 10], times[total / 2], times[total * 9 / 10]}, slowest[3];
  MPI(MPI_Reduce(mine, slowest, 3, MPI_DOUBLE, MPI_MAX, 0, comm));
  if (rank == 0) {
    printf("%10d %12ld %10.2f %10.2f %10.2f %8d %9ld %9.0f %10.1f %s\n", count, bytes, slowest[1], slowest[0],
        slowest[2], total, warm_calls, warm_ms, first_us, all_stable ? "stable" : "not-stable");
  }
  free(medians);
  free(times);
  free(buf);
}

int main(int argc, char **argv) {
  MPI(MPI_Init(&argc, &argv));
  MPI_Comm comm;
  MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
  MPI(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
  int rank, size;
  MPI(MPI_Comm_rank(comm, &rank));
  MPI(MPI_Comm_size(comm, &size));
  if (rank == 0) {
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int length;
    MPI_Get_library_version(version, &length);
    char *newline = strchr(version, '\n');
    if (newline != NULL) {
      *newline = '\0';
    }
    printf("# c mpi_allreduce: in-place F32 SUM, MPI_Iallreduce + MPI_Wait, %d processes, %s\n", size, version);
    printf("# steady state: batches until %.0f ms, %d calls (or %.0f ms) and %d batch medians within %.0f%%; then "
        "%d batches timed; us, slowest rank\n", MIN_WARM_MS, MIN_WARM_CALLS, CALLS_OR_MS, STABLE_BATCHES,
        STABLE_SPREAD * 100, MEASURE_BATCHES);
    printf("%10s %12s %10s %10s %10s %8s %9s %9s %10s %s\n", "count", "bytes", "median_us", "p10_us", "p90_us",
        "calls", "warm_calls", "warm_ms", "first_us", "warm-up");
  }
  static const int defaults[] = {1, 1024, 65536, 1048576, 4194304};
  if (argc > 1) {
    for (int i = 1; i < argc; i++) {
      run(atoi(argv[i]), comm, rank);
    }
  } else {
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++) {
      run(defaults[i], comm, rank);
    }
  }
  MPI(MPI_Comm_free(&comm));
  MPI(MPI_Finalize());
  return 0;
}
