#!/usr/bin/env bash
# Issue 13's GPU checks as one command, for a machine with an NVIDIA GPU (the device tool's H200):
#   1. the CUDA backend's tests (tests/test_jit_cuda_sim.py) on the device instead of the simulator;
#   2. bench_fusion.py's GPU section: the fused GELU against a device-to-device copy, and chapter 9's
#      compiled training step (backend="cuda") against the CPU backends and PyTorch on the same GPU;
#   3. chapter 9's solution notebook executed there, so that its CUDA cells take their GPU branch.
#
#   bash tools/gpu_wheels.sh                                     # here, first: .whl/ (what the image lacks)
#   run(command="bash tools/gpu_check.sh", carry=[".whl"], timeout_s=590)   # the device tool
#   bash tools/gpu_check.sh --simulator                          # a dry run here, on Numba's CUDA simulator
#
# Results in $OUT (./gpu_check_out/ when OUT is unset): summary.txt (each step's verdict and time, the
# machine, the headline figures), bench.jsonl, pytest.log, ch09.log and ch09_fusion.ipynb (executed,
# with its outputs). Each step has its own time limit and a failed step does not stop the next; the
# exit status is the number of failed steps.
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
simulator=0
if [[ "${1:-}" == "--simulator" ]]; then simulator=1; fi
OUT=${OUT:-$repo/gpu_check_out}
mkdir -p "$OUT"
summary=$OUT/summary.txt
: > "$summary"
say() { echo "$*" | tee -a "$summary"; }

export PYTHONUNBUFFERED=1 MPLBACKEND=Agg
export MINIGRAD_CACHE_DIR=/tmp/minigrad-gpu-check-kernels  # not under $OUT: only a few files come back
export PYTHONPATH=$repo${PYTHONPATH:+:$PYTHONPATH}
if [[ $simulator == 1 ]]; then
    python=$repo/.venv/bin/python
    export NUMBA_ENABLE_CUDASIM=1
    cuda_tests=simulator
    bench_flags=(--gpu-only --gpu-simulator)
else
    python=python3
    export NUMBA_ENABLE_CUDASIM=0
    cuda_tests=gpu
    bench_flags=(--gpu-only)
    if [[ -d .whl ]]; then
        "$python" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/gpu-check-site .whl/*.whl \
            || { say "FAIL installing .whl/ (made by tools/gpu_wheels.sh)"; exit 1; }
        export PYTHONPATH=$PYTHONPATH:/tmp/gpu-check-site
    fi
fi

say "# tools/gpu_check.sh $(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
say "gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo none)"
say "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores"
say "python: $("$python" -c 'import sys, importlib.metadata as m
names = ("numpy", "numba", "numba-cuda", "torch", "nbclient", "ipykernel")
def version(n):
    try:
        return m.version(n)
    except m.PackageNotFoundError:
        return "absent"
print(sys.version.split()[0], *(f"{n} {version(n)}" for n in names))' 2>&1)"

failed=0
step() {  # step NAME LIMIT_SECONDS LOG COMMAND...: run COMMAND under a time limit, its output into LOG
    local name=$1 limit=$2 log=$3 start=$SECONDS status
    shift 3
    timeout "$limit" "$@" > "$log" 2>&1
    status=$?
    if [[ $status == 0 ]]; then
        say "PASS $name ($((SECONDS - start)) s)"
    else
        failed=$((failed + 1))
        say "FAIL $name (exit $status$([[ $status == 124 ]] && echo ", over its ${limit} s limit"), $((SECONDS - start)) s): the end of $(basename "$log"):"
        tail -n 25 "$log" | sed 's/^/    /' | tee -a "$summary"
    fi
}

step "CUDA backend tests on the $cuda_tests" 180 "$OUT/pytest.log" \
    env MINIGRAD_CUDA_TESTS=$cuda_tests "$python" -m pytest -q -p no:cacheprovider tests/test_jit_cuda_sim.py
step "bench_fusion.py ${bench_flags[*]}" 150 "$OUT/bench.jsonl" "$python" benchmarks/bench_fusion.py "${bench_flags[@]}"
step "chapter 9 executed" 200 "$OUT/ch09.log" "$python" - "$OUT/ch09_fusion.ipynb" <<'PY'
"""Execute chapter 9's solution notebook top to bottom in a kernel; keep it, outputs and all."""
import sys

import nbformat
from nbclient import NotebookClient

notebook = nbformat.read("solutions/ch09_fusion/ch09_fusion.ipynb", as_version=4)
client = NotebookClient(notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": "solutions/ch09_fusion"}})
try:
    client.execute()
finally:
    nbformat.write(notebook, sys.argv[1])
    for cell in notebook.cells:  # what the CUDA cells printed, for the summary
        if cell.cell_type == "code" and "cuda" in cell.source.lower():
            for output in cell.get("outputs", []):
                if output.get("name") == "stdout":
                    print("".join(output["text"]).rstrip())
PY

if [[ -s "$OUT/bench.jsonl" ]]; then
    "$python" - "$OUT/bench.jsonl" <<'PY' | tee -a "$summary"
import json
import sys

for line in open(sys.argv[1]):
    record = json.loads(line)
    if record.get("benchmark") == "gpu_gelu" and "skipped" not in record:
        print(f"fused GELU on {record['device']}: {record['fused_GB_per_s']:.0f} GB/s, device copy "
              f"{record['copy_GB_per_s']:.0f} GB/s: {record['fused_fraction_of_copy_bandwidth']:.0%} of the copy")
    elif record.get("benchmark") == "gpu_training_step" and "skipped" not in record:
        times = ", ".join(f"{name} {seconds * 1e3:.2f} ms" for name, seconds in record["seconds_min"].items())
        print(f"chapter 9's training step {record['shapes'][:3]}: {times}; {record['transfers_per_call']} host/device copies a call")
    elif "skipped" in record:
        print(f"{record['benchmark']}: skipped, {record['skipped']}")
PY
fi
if [[ $simulator == 0 ]] && grep -q '"skipped"' "$OUT/bench.jsonl" 2>/dev/null; then
    failed=$((failed + 1))
    say "FAIL the GPU section of bench_fusion.py found no GPU"
fi
grep -E "^(ran on|GPU:|[0-9]+ host/device)" "$OUT/ch09.log" 2>/dev/null | sed 's/^/chapter 9: /' | tee -a "$summary"
say "$failed step(s) failed"
exit "$failed"
