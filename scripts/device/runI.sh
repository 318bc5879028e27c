#!/bin/bash
# Device run I (2026-12-03, second session; runH without its GPU part, for a short budget): the
# runtime entry with the one-word TLS epoch record (jit_bench_word) against the two-field record
# (jit_bench), alternating; the profiler event cost with the final library.
set -u
B=$PWD/gpu-carry/bench; P=$PWD/gpu-carry/policies
lscpu | grep -E "Model name"
for i in 1 2 3; do
  echo "== two-field"; $B/jit_bench $B/jit_kernels $P 2>&1 | sed -n '/runtime entry, /,/hook through/p' | tail -3
  echo "== one-word"; $B/jit_bench_word $B/jit_kernels $P 2>&1 | sed -n '/runtime entry, /,/hook through/p' | tail -3
done
$B/jit_bench_word $B/jit_kernels $P 2>&1 | sed -n '/^4\./,$p' | grep profiler_latency
for i in 1 2 3; do $B/profiler_bench $B/libnccl-ncclbpf.so $P/noop.o $B/prof_noop.o $P/profiler_latency.o 200000 2>&1 | tail -6; done
