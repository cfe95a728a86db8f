#!/usr/bin/env bash
# alternate: before (base tree), after (worktree), real gt4py; per-call figures only
set -u
R=${1:?rep}
D=/tmp/percall/vs$R
B=/work/wt-percall/benchmarks/cartesian_vs_gt4py.py
PY=/work/main/.venv/bin/python
G=/tmp/gt4py-percall-venv/bin/python
BU=${BUILDS:-0}
mkdir -p $D
echo "rep $R start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a $D/log
(cd /tmp/percall/base && STENCILKIT_CACHE_DIR=/tmp/sk-cache-percall-base PYTHONPATH=/tmp/percall/base/src $PY $B run --impl stencilkit --dir $D/before --builds $BU > $D/before.log 2>&1)
echo "before done $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a $D/log
(cd /work/wt-percall && STENCILKIT_CACHE_DIR=/tmp/sk-cache-percall PYTHONPATH=/work/wt-percall/src $PY $B run --impl stencilkit --dir $D/after --builds $BU > $D/after.log 2>&1)
echo "after done $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a $D/log
(cd /tmp && OMP_NUM_THREADS=1 $G $B run --impl gt4py --dir $D/g --builds $BU > $D/gt4py.log 2>&1)
echo "gt4py done $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a $D/log
