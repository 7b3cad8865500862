#!/usr/bin/env bash
# The local figures of docs/performance.md, "Meshes": run from the project root after building the jar
# (bench/target/commplan-bench.jar); output: docs/perf/mesh-local.txt (round 1), mesh-local-2.txt (round 2, P=/tmp).
set -u
. bin/env.sh
J="java --enable-native-access=ALL-UNNAMED -jar bench/target/commplan-bench.jar"
P=${P:-docs/perf}  # where the CSVs go
run() { echo "\$ $*"; echo "# $(date -u +%H:%M:%S) load: $(cut -d' ' -f1-3 /proc/loadavg)"; "$@" 2>&1 | grep -v '^# progress'; echo "rc=${PIPESTATUS[0]}"; echo; }
echo "# commit $(git rev-parse --short HEAD), $(date -u), $(nproc) cores"
run $J sweep --mesh dp=2,tp=2 --over tp --coll all-reduce,all-gather --min 8 --max 1M --factor 32 --csv $P/sweep-local-mesh-2x2-tp.csv
run $J sweep --mesh dp=2,tp=2 --over dp --coll all-reduce,all-gather --min 8 --max 1M --factor 32 --csv $P/sweep-local-mesh-2x2-dp.csv
run $J sweep --ranks 2 --coll all-reduce,all-gather --min 8 --max 1M --factor 32 --csv $P/sweep-local-world-2.csv
run $J sweep --mesh dp=2,tp=4 --over tp --coll all-reduce --min 8 --max 1M --factor 32 --csv $P/sweep-local-mesh-2x4-tp.csv
run $J sweep --mesh dp=2,tp=4 --over dp --coll all-reduce --min 8 --max 1M --factor 32 --csv $P/sweep-local-mesh-2x4-dp.csv
run $J many --mesh dp=2,tp=2 --csv $P/many-local-mesh-2x2.csv
run $J many --mesh dp=2,tp=2 --axis-blocks --csv $P/many-local-mesh-2x2-blocks.csv
run $J mesh-cost --csv $P/mesh-cost-local.csv
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
run mpirun --oversubscribe -np 2 $J mesh-cost --backend mpi
