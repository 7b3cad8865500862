#!/usr/bin/env bash
# The MPI backend's all-reduce beside C's, in one command (issue 24, part 3; docs/mpi/figures.md, "Measured figures"):
# for each process count, bench/native/mpi_allreduce.c (MPI_Iallreduce + MPI_Wait) and then
# dev.commplan.runtime.mpi.MpiAllReduceTiming (a plan's execute + synchronize), the same counts and the same
# steady-state method; then one table per process count with the ratio and the issue's target
# (<= 2x C up to 4 KiB, <= 1.1x from 256 KiB).
#
#   bench/native/mpi_compare.sh [NP ...]          (default: 2 4; NP above the core count adds --oversubscribe)
#
# Here (after `mvn -pl runtime test-compile` and
# `mvn -pl runtime dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile=/tmp/cp.txt`):
#   bench/native/mpi_compare.sh 2 4
# On the GPU machine (no C compiler there: build the C program here first, into what travels):
#   mpicc -O2 -o .device/mpi_allreduce bench/native/mpi_allreduce.c -lm     (then ../shared/device/pack)
#   JAVA=.device/run bash bench/native/mpi_compare.sh 2 4
# Environment: JAVA (the java command with the class path; default: this checkout's classes and /tmp/cp.txt),
# C_BIN (the C program; default: built with mpicc into $TMPDIR, else .device/mpi_allreduce), COUNTS (default
# 1 1024 65536 1048576 4194304), MPIRUN_ARGS (extra mpirun options, e.g. "--bind-to none").
set -uo pipefail
cd "$(dirname "$0")/../.."
NPS=${*:-2 4}
COUNTS=${COUNTS:-1 1024 65536 1048576 4194304}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if [ -z "${JAVA:-}" ]; then
  CP_FILE=${CP_FILE:-/tmp/cp.txt}
  if [ ! -f "$CP_FILE" ] || [ ! -d runtime/target/test-classes ]; then
    echo "no class path: run mvn -pl runtime test-compile and mvn -pl runtime dependency:build-classpath" \
      "-Dmdep.includeScope=test -Dmdep.outputFile=$CP_FILE first, or set JAVA" >&2
    exit 2
  fi
  . bin/env.sh # JDK 25
  JAVA="java --enable-native-access=ALL-UNNAMED -cp runtime/target/test-classes:runtime/target/classes:$(cat "$CP_FILE")"
fi
if [ -z "${C_BIN:-}" ]; then
  if command -v mpicc >/dev/null; then
    C_BIN=${TMPDIR:-/tmp}/mpi_allreduce
    mpicc -O2 -std=c11 -Wall -o "$C_BIN" bench/native/mpi_allreduce.c -lm || exit 2
  else
    C_BIN=.device/mpi_allreduce
  fi
fi
[ -x "$C_BIN" ] || { echo "no C program at $C_BIN and no mpicc to build it (see the top of $0)" >&2; exit 2; }
echo "# $(date -u '+%F %T') UTC, $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)," \
  "commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), load $(cut -d' ' -f1-3 /proc/loadavg)"
out=$(mktemp -d)
for np in $NPS; do
  over=""; [ "$np" -gt "$(nproc)" ] && over="--oversubscribe"
  echo "\$ mpirun $over ${MPIRUN_ARGS:-} -np $np $C_BIN $COUNTS"
  timeout 90 mpirun $over ${MPIRUN_ARGS:-} -np "$np" "$C_BIN" $COUNTS | tee "$out/c$np.txt"; echo "rc=$?"
  echo "\$ mpirun $over ${MPIRUN_ARGS:-} -np $np \$JAVA dev.commplan.runtime.mpi.MpiAllReduceTiming $COUNTS"
  timeout 120 mpirun $over ${MPIRUN_ARGS:-} -np "$np" $JAVA dev.commplan.runtime.mpi.MpiAllReduceTiming $COUNTS \
    | tee "$out/java$np.txt"; echo "rc=$?"
done
for np in $NPS; do
  echo
  echo "# $np processes: median us per call (averaged over the ranks), steady state"
  awk -v np="$np" '
    FNR == 1 { file++ }
    /^#/ || $1 == "count" { next }
    file == 1 { c[$1] = $3; next }
    { java[$1] = $3; bytes[$1] = $2; order[++n] = $1 }
    END {
      printf "%12s %12s %10s %10s %7s %s\n", "count", "bytes", "c_us", "java_us", "java/c", "target"
      for (i = 1; i <= n; i++) {
        k = order[i]; base = k; sub(/^direct-/, "", base)
        if (!(base in c)) { printf "%12s %12s %10s %10.2f\n", k, bytes[k], "-", java[k]; continue }
        r = java[k] / c[base]
        t = bytes[k] <= 4096 ? 2 : (bytes[k] >= 262144 ? 1.1 : 0)
        verdict = t == 0 ? "-" : (r <= t ? sprintf("<= %.1fx: met", t) : sprintf("<= %.1fx: MISSED", t))
        printf "%12s %12s %10.2f %10.2f %7.2f %s\n", k, bytes[k], c[base], java[k], r, verdict
      }
    }' "$out/c$np.txt" "$out/java$np.txt"
done
rm -rf "$out"
