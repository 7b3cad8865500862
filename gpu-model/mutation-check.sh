#!/usr/bin/env bash
# Shows that the GPU tests can fail: runs NcclCollectiveCorrectnessTest (and NcclPointToPointTest for Send and
# Recv) against gpu-model/ with its mutation switch on, one switch at a time, and fails unless every switch makes
# at least one test fail. Prints, per switch, how many tests failed of how many.
#
#   gpu-model/mutation-check.sh [SWITCH...]    a SWITCH is COMMPLAN_MODEL_MUTATE's Collective[:rank[:element]];
#                                             default: AllReduce Broadcast Reduce AllGather ReduceScatter
#                                             Gather Scatter AlltoAll Send Recv
#   MUTATION_RANKS=2                          the world sizes (-Dcommplan.gpu.ranks), on as many devices
#
# Builds the model if needed. Runs offline, with the modules the runtime needs built from this checkout
# (-am), and writes its reports under runtime/target/gpu-model-mutation/ (not where bin/test's summary reads).
set -uo pipefail
cd "$(dirname "$0")/.."
. bin/env.sh
make -s -C gpu-model || exit 1
lib=$PWD/gpu-model/build/libcommplan_gpumodel.so
ranks=${MUTATION_RANKS:-2}
switches=("$@")
[ ${#switches[@]} -gt 0 ] || switches=(AllReduce Broadcast Reduce AllGather ReduceScatter Gather Scatter AlltoAll Send Recv)
bad=0
for sw in "${switches[@]}"; do
  case "${sw%%:*}" in Send|Recv) tests=NcclPointToPointTest ;; *) tests=NcclCollectiveCorrectnessTest ;; esac
  reports=runtime/target/gpu-model-mutation/$sw
  rm -rf "$reports"; mkdir -p "$(dirname "$reports")"
  COMMPLAN_MODEL_MUTATE=$sw mvn -o -B -q -pl runtime -am -Dmaven.javadoc.skip=true test -Dtest="$tests" \
    -Dsurefire.failIfNoSpecifiedTests=false -Dmaven.test.failure.ignore=true -Dcommplan.gpuModel="$lib" \
    -Dcommplan.gpuModel.devices="${ranks##*,}" -Dcommplan.gpu.ranks="$ranks" \
    -Dcommplan.gpuModel.reports="gpu-model-mutation/$sw" > "$reports.log" 2>&1
  counts=$(cat "$reports"/TEST-*.xml 2>/dev/null | sed -n 's/.*<testsuite [^>]*tests="\([0-9]*\)"[^>]*failures="\([0-9]*\)".*/\1 \2/p' | head -1)
  errors=$(cat "$reports"/TEST-*.xml 2>/dev/null | sed -n 's/.*<testsuite [^>]*errors="\([0-9]*\)".*/\1/p' | head -1)
  total=${counts%% *}; failed=${counts##* }
  if [ -z "$counts" ]; then
    echo "FAIL $sw: no report (see $reports.log)"; bad=$((bad + 1))
  elif [ $((failed + errors)) -gt 0 ]; then
    echo "ok   COMMPLAN_MODEL_MUTATE=$sw: $((failed + errors)) of $total tests of $tests failed, as they must"
  else
    echo "FAIL COMMPLAN_MODEL_MUTATE=$sw: all $total tests of $tests passed with a wrong element"; bad=$((bad + 1))
  fi
done
[ "$bad" = 0 ]
