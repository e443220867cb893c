#!/usr/bin/env bash
# The device checks of issues 33 and 34 as one run, for a session lent the GPU machine
# (one GPU, 16 cores, no network): the 16-core scaling table (bench_threads.py) and the
# exact CUDA bits of the torchmetrics face (check_device.py). Results go to $OUT (or ./out).
#
# Prepare here, then carry the folder `wheelhouse` (an ignored path):
#   python -m pip wheel --no-deps -w wheelhouse . polars polars-runtime-32 threadpoolctl \
#       pytrec-eval-terrier torchmetrics lightning-utilities
# (scipy, numpy and torch are on the machine; check `du -sh wheelhouse` stays under the
# 64 MiB a run carries). Then, with the device tool:
#   run  command="bash benchmarks/device_session.sh"  carry=["wheelhouse"]  timeout_s=590
# Each step has its own time limit so that a slow one leaves the others their turn.
set -u
OUT=${OUT:-out}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
{
  date -u; nproc; "$PY" -c "import platform; print(platform.processor() or platform.machine())"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
} > "$OUT/machine.txt"
"$PY" -m pip install -q --no-index --find-links wheelhouse --no-deps wheelhouse/*.whl \
  > "$OUT/install.log" 2>&1 || { echo "install failed: see install.log"; exit 1; }

# CUDA bits first (short): every class and functional form against torchmetrics, float.hex.
timeout 100 "$PY" benchmarks/check_device.py --device cuda --cases torchmetrics,fractional \
  --rounds 10 --seed 5 > "$OUT/check_device_cuda.txt" 2>&1
echo "check_device rc=$?" >> "$OUT/check_device_cuda.txt"

# The 16-core table: statistics and grid (one round each), then the 7M-line file.
timeout 150 "$PY" benchmarks/bench_threads.py --threads 1,2,4,8,16 --repeat 1 \
  --cases grid,randomization,bootstrap,swap,rank_intervals > "$OUT/bench_threads.md" 2>&1
echo "bench_threads rc=$?" >> "$OUT/bench_threads.md"
DATA=$(mktemp -d)
timeout 90 "$PY" benchmarks/generate.py --seed 42 --queries 7000 --out "$DATA" > "$OUT/generate.log" 2>&1 \
  && timeout 100 "$PY" benchmarks/bench_threads.py --threads 1,4,16 --repeat 1 --cases eval \
       --eval-data "$DATA" > "$OUT/bench_threads_eval.md" 2>&1
echo "eval rc=$?" >> "$OUT/bench_threads_eval.md"

# The statistics at a size where two cores give 1.7-1.96x (docs/performance.md, session 16),
# and the grid at 250 topics: last, so that a slow machine still returns the rest.
timeout 130 "$PY" benchmarks/bench_threads.py --threads 1,2,4,8,16 --repeat 1 \
  --cases tukey,power,agreement,randomization,bootstrap,grid --topics 1000 --systems 40 \
  --grid-topics 250 > "$OUT/bench_threads_large.md" 2>&1
echo "bench_threads large rc=$?" >> "$OUT/bench_threads_large.md"
tail -n 40 "$OUT"/*.md "$OUT/check_device_cuda.txt"
