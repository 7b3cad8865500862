#!/usr/bin/env bash
# Tests bench/native/multirank_perf.c on a machine without a GPU: builds it with the real cuda_runtime.h and
# NCCL's nccl.h, linked to fake_cuda_nccl.c (the collectives computed on the host), and checks what the GPU
# machine cannot afford to find out late: every collective's counts, in place and out of place, groups and
# capture give 0 wrong at several rank counts; a wrong result fails the program; the deadline and the
# command-line errors work; and bin/gpu-multirank-perf's dry run lists its steps within its deadline.
#
#   bench/native/fake/test.sh [NCCL_INCLUDE]    NCCL_INCLUDE: a folder with nccl.h (2.28 or later); by default
#                                               one is made from .device/nccl-src.tgz or NCCL_SRC
# Needs gcc and CUDA's headers (CUDA_HOME, default /usr/local/cuda). Writes under a temporary folder.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
inc=${1:-}
if [ -z "$inc" ]; then
  src=${NCCL_SRC:-$root/.device/nccl-src.tgz}
  [ -f "$src" ] || { echo "no nccl.h: pass a folder holding one, or set NCCL_SRC to NCCL's source .tar.gz" >&2; exit 2; }
  mkdir "$work/nccl" "$work/inc"
  tar -xzf "$src" -C "$work/nccl" --wildcards '*src/nccl.h.in' '*makefiles/version.mk' || exit 2
  in=$(find "$work/nccl" -name nccl.h.in | head -1)
  vm=$(find "$work/nccl" -name version.mk | head -1)
  v() { awk -F':= *' -v k="$1" '$1 ~ "^"k" " {print $2}' "$vm"; }
  sed -e "s/\${nccl:Major}/$(v NCCL_MAJOR)/g" -e "s/\${nccl:Minor}/$(v NCCL_MINOR)/g" \
      -e "s/\${nccl:Patch}/$(v NCCL_PATCH)/g" -e "s/\${nccl:Suffix}//g" \
      -e "s/\${nccl:Version}/$(printf '%d%02d%02d' "$(v NCCL_MAJOR)" "$(v NCCL_MINOR)" "$(v NCCL_PATCH)")/g" \
      "$in" > "$work/inc/nccl.h"
  inc=$work/inc
fi
CFLAGS="-std=gnu11 -O2 -Wall -Wextra -Werror -I$CUDA_HOME/include -I$inc"
gcc $CFLAGS -fPIC -shared -o "$work/libfake.so" "$here/fake_cuda_nccl.c" -lpthread || exit 1
gcc $CFLAGS -o "$work/multirank_perf" "$root/bench/native/multirank_perf.c" -L"$work" -lfake -lpthread \
  -Wl,-rpath,"$work" || exit 1
gcc $CFLAGS -o "$work/multirank_graph" "$root/bench/native/multirank_graph.c" -L"$work" -lfake -lpthread \
  -Wl,-rpath,"$work" || exit 1

pass=0 failed=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { failed=$((failed + 1)); echo "FAIL $1"; [ -f "$work/out" ] && tail -20 "$work/out"; }
run() { "$work/multirank_perf" "$@" > "$work/out" 2> "$work/err"; }

# every collective, both placements, several rank counts (3: counts per rank that need rounding), a root
# other than 0, many-buffers small enough to be quick
for args in "-n 1" "-n 2" "-n 3 -r 2" "-n 4 -r 1" "-n 8"; do
  if run $args -b 8 -e 256K -f 4 -i 2 -B 3 -w 0 -W 0 -m 1 -k 20x64 --reps 5 --many-warmup-ms 0; then
    rows=$(grep -cE '^ +[0-9]+ +[0-9]+ +float ' "$work/out")
    colls=$(grep -cE '^# [A-Za-z]+  backend c  ranks ' "$work/out")
    if [ "$colls" = 9 ] && [ "$rows" -ge 60 ] && grep -q ', 0 wrong elements, .*: ok$' "$work/out" \
       && [ "$(grep -c '^C: ' "$work/out")" = 4 ]; then
      ok "$args: 9 collectives, $rows rows, 4 many-buffers ways, 0 wrong"
    else
      bad "$args: colls=$colls rows=$rows"
    fi
  else
    bad "$args: exit $?"; cat "$work/err"
  fi
done

# the rows' #wrong columns are all 0 (and N/A where unchecked)
run -n 4 -e 64K -i 1 -B 1 -w 0 -W 0 -p sweep
if awk '/^ +[0-9]/ {if ($9 != "0" || ($13 != "0" && $13 != "N/A")) bad=1} END {exit bad}' "$work/out"; then
  ok "every row's #wrong is 0"; else bad "a row's #wrong is not 0"; fi

# a wrong result fails the program, with the element named, for a collective and for the many-buffers part
for f in AllReduce Gather Scatter AlltoAll Recv ReduceScatter; do
  if FAKE_NCCL_CORRUPT=$f run -n 3 -e 4K -i 1 -B 1 -w 0 -W 0 -k 4x16 --reps 2 --many-warmup-ms 0; then
    bad "corrupt $f: exit 0"
  elif [ $? = 1 ] && grep -q 'FAILED$' "$work/out" && grep -q 'expected' "$work/err"; then
    ok "corrupt $f: exit 1, FAILED"
  else
    bad "corrupt $f"; cat "$work/err"
  fi
done

# the deadline: only the first row runs, then a stopped line; the many-buffers part runs first anyway
if run -n 2 -e 1M -i 1 -B 1 -w 0 -W 0 -d 0.000001 -k 4x16 --reps 2 --many-warmup-ms 0 \
   && [ "$(grep -cE '^ +[0-9]+ +[0-9]+ +float ' "$work/out")" = 1 ] && grep -q '^# stopped: the deadline' "$work/out" \
   && grep -q '^C: the group captured' "$work/out"; then ok "deadline: one row, then stopped"; else bad "deadline"; fi

# command-line mistakes: exit 2 with one line
for args in "" "-n 0" "-n 2 -r 2" "-n 2 -t nosuch" "-n 2 -e 12Q" "-n 2 -b 1M -e 1K" "-n 2 -k 200" "-n 2 -p none" "-n 2 extra"; do
  run $args; rc=$?
  if [ "$rc" = 2 ] && [ -s "$work/err" ]; then ok "usage error: '$args'"; else bad "usage error '$args': rc=$rc"; fi
done

# the output parses as our sweep's (size, count, and times in columns 6 and 10): a smoke test of the layout
run -n 2 -b 1K -e 1K -t all-reduce,alltoall -i 1 -B 1 -w 0 -W 0 -p sweep
if grep -E '^ +1024 +256 +float +sum +-1 ' "$work/out" >/dev/null \
   && awk '/^ +[0-9]+ +[0-9]+ +float +none/ {if ($10 != "N/A") exit 1}' "$work/out"; then
  ok "layout: all-reduce 1 KiB is 256 floats, alltoall has no in-place time"; else bad "layout"; fi

# bin/gpu-multirank-perf's dry run: every step, with limits that fit its deadline, and nothing run
dry=$(cd "$root" && DRY_RUN=1 NCCL_LIB=/nowhere/lib/libnccl.so.2 OUT="$work/gpu-out" bin/gpu-multirank-perf)
limits=$(echo "$dry" | sed -n 's/^\[limit *\([0-9]*\) s.*/\1/p')
if [ "$(echo "$limits" | wc -l)" = 10 ] && ! echo "$limits" | grep -qE '^(0|1[0-4]|[0-9])$' \
   && echo "$dry" | grep -q 'multirank_perf -n 4 -c 4 ' && echo "$dry" | grep -q 'agreementCheck=false.*--ranks 4 --modes plan' \
   && echo "$dry" | grep -q 'report --multirank' && [ ! -e "$work/gpu-out" ]; then
  ok "gpu-multirank-perf's dry run: 10 steps, none under 15 s, nothing written"
else
  bad "gpu-multirank-perf's dry run"; echo "$dry"
fi

# multirank_graph: captured launches right on the world and across a mesh's two axes; a wrong result, a bad
# option and a hang each end it with their own status
graph() { "$work/multirank_graph" "$@" > "$work/out" 2> "$work/err"; }
for args in "-n 1" "-n 2 -k 3" "-n 4 -s" "-n 8 -s -x" "-n 8 -b 0 -l 50"; do
  if graph $args && grep -q '^ok: ' "$work/out"; then ok "multirank_graph $args"; else bad "multirank_graph $args: exit $?"; cat "$work/err"; fi
done
FAKE_NCCL_CORRUPT=AllReduce graph -n 4 -s; rc=$?
if [ $rc = 1 ] && grep -q 'expected' "$work/err"; then ok "multirank_graph: a wrong element exits 1"; else bad "multirank_graph corrupt: rc=$rc"; fi
for args in "-n 3 -s" "-n 0" "-q"; do
  graph $args; rc=$?
  if [ $rc = 2 ]; then ok "multirank_graph usage error: '$args'"; else bad "multirank_graph usage '$args': rc=$rc"; fi
done

echo "$pass passed, $failed failed"
[ "$failed" = 0 ]
