/*
 * mpi_allreduce: the C floor for dev.commplan.runtime.mpi.MpiAllReduceTiming (issue 24, part 3). Each call is
 * what the MPI backend issues for a one-field plan: an in-place F32 SUM all-reduce, MPI_Iallreduce(MPI_IN_PLACE)
 * then MPI_Wait, on a duplicate of MPI_COMM_WORLD.
 *
 * The steady-state method is the Java program's (dev.commplan.timing.SteadyState's rule), step for step, so the
 * two rows compare:
 *   - a unit is a batch of calls (500 up to 4 KiB, fewer above: about 2 MiB a batch, at least 5), timed as one;
 *     its time per call, and the time since the warm-up began, are averaged over the ranks after each unit (an
 *     MPI_Allreduce outside the timed calls), so every rank decides from the same numbers;
 *   - the warm-up ends when the median time per call of the last WINDOW units is within TOLERANCE of the median
 *     of the WINDOW before them and at least MIN_MS have passed (the Java rule also waits for the JIT to be
 *     quiet; C has none), or at MAX_MS ("cap");
 *   - then MEASURED units are timed; the row is the median, fastest and p90 unit's time per call.
 *
 * Build and run (bench/native/mpi_compare.sh does both, beside the Java program):
 *   mpicc -O2 -o /tmp/mpi_allreduce bench/native/mpi_allreduce.c -lm
 *   mpirun -np 2 /tmp/mpi_allreduce [count ...]      (default counts: 1 1024 65536 1048576 4194304)
 */
#define _POSIX_C_SOURCE 200112L /* clock_gettime under -std=c11 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WINDOW 10
#define TOLERANCE 0.05
#define MIN_MS 1000.0
#define MAX_MS 3000.0
#define MEASURED 30

#define MPI(call) do { int rc_ = (call); if (rc_ != MPI_SUCCESS) { char s_[MPI_MAX_ERROR_STRING]; int n_; \
  MPI_Error_string(rc_, s_, &n_); fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, s_); \
  MPI_Abort(MPI_COMM_WORLD, 1); } } while (0)

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

/* The median of n values (sorts them): the middle one, or the mean of the middle two. */
static double median(double *values, int n) {
  qsort(values, n, sizeof(double), by_value);
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

static void call(float *buf, int count, MPI_Comm comm) {
  MPI_Request request;
  MPI(MPI_Iallreduce(MPI_IN_PLACE, buf, count, MPI_FLOAT, MPI_SUM, comm, &request));
  MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
}

/* One unit: `calls` calls timed as one; returns {time per call, time since `start`} averaged over the ranks. */
static void unit(float *buf, int count, MPI_Comm comm, int calls, double start, int size, double agreed[2]) {
  double t0 = now_ns();
  for (int i = 0; i < calls; i++) {
    call(buf, count, comm);
  }
  double t1 = now_ns();
  double mine[2] = {(t1 - t0) / calls, t1 - start};
  MPI(MPI_Allreduce(mine, agreed, 2, MPI_DOUBLE, MPI_SUM, comm));
  agreed[0] /= size;
  agreed[1] /= size;
}

static void run(int count, MPI_Comm comm, int rank, int size) {
  long bytes = 4L * count;
  int calls = bytes <= 4096 ? 500 : (int) (2097152 / bytes);
  calls = calls < 5 ? 5 : calls;
  float *buf = aligned_alloc(256, (size_t) ((bytes + 255) / 256 * 256));
  for (int i = 0; i < count; i++) {
    buf[i] = 1.0f;
  }
  double first = now_ns();
  call(buf, count, comm);
  double first_us = (now_ns() - first) / 1e3;
  double ring[2 * WINDOW], a[WINDOW], b[WINDOW], agreed[2];
  long units = 0;
  const char *ending = "cap";
  double start = now_ns();
  while (1) {
    unit(buf, count, comm, calls, start, size, agreed);
    ring[units % (2 * WINDOW)] = agreed[0];
    units++;
    if (units >= 2 * WINDOW && agreed[1] >= MIN_MS * 1e6) {
      for (int i = 0; i < WINDOW; i++) {
        a[i] = ring[(units - 2 * WINDOW + i) % (2 * WINDOW)];
        b[i] = ring[(units - WINDOW + i) % (2 * WINDOW)];
      }
      double before = median(a, WINDOW), last = median(b, WINDOW);
      if (fabs(last - before) <= TOLERANCE * (last < before ? last : before)) {
        ending = "stable";
        break;
      }
    }
    if (agreed[1] >= MAX_MS * 1e6) {
      break;
    }
  }
  double warm_ms = agreed[1] / 1e6;
  double measured[MEASURED];
  double measure_start = now_ns();
  for (int u = 0; u < MEASURED; u++) {
    unit(buf, count, comm, calls, measure_start, size, agreed);
    measured[u] = agreed[0];
  }
  double med = median(measured, MEASURED); /* sorts */
  if (rank == 0) {
    printf("%10d %12ld %10.2f %10.2f %10.2f %8d %10ld %9.0f %10.1f %s\n", count, bytes, med / 1e3, measured[0] / 1e3,
        measured[(int) (MEASURED * 0.9)] / 1e3, calls, units * calls, warm_ms, first_us, ending);
  }
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
    printf("# warm-up: units (one batch of calls) until the median time per call of the last %d is within %.0f%% of"
        " the %d before; at least %.0f s, at most %.0f s (no JIT here); then %d batches timed; us per call, averaged"
        " over the ranks\n", WINDOW, TOLERANCE * 100, WINDOW, MIN_MS / 1e3, MAX_MS / 1e3, MEASURED);
    printf("%10s %12s %10s %10s %10s %8s %10s %9s %10s %s\n", "count", "bytes", "median_us", "min_us", "p90_us",
        "batch", "warm_calls", "warm_ms", "first_us", "warm-up");
  }
  static const int defaults[] = {1, 1024, 65536, 1048576, 4194304};
  if (argc > 1) {
    for (int i = 1; i < argc; i++) {
      run(atoi(argv[i]), comm, rank, size);
    }
  } else {
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++) {
      run(defaults[i], comm, rank, size);
    }
  }
  MPI(MPI_Comm_free(&comm));
  MPI(MPI_Finalize());
  return 0;
}
