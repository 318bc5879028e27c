#!/usr/bin/env bash
# NCCLbpf's built-in telemetry against NCCL Inspector on the GPU machine (CUDA, MPI, NCCL in
# PyTorch's venv or NCCL_HOME). Builds this project, NVIDIA's NCCL Inspector (from an NCCL
# checkout: plugins/profiler/inspector) and nccl-tests' all_reduce_perf (MPI) under OUTDIR,
# then runs the same all_reduce_perf sweep without a profiler plugin, with Inspector and with
# ours, each loaded the way NCCL loads a profiler (NCCL_PROFILER_PLUGIN), interleaved REPS times
# in one call. Both write one JSON record per collective of at least 8 KiB (Inspector's default
# floor; ours: NCCLBPF_JSONL_DIR with NCCLBPF_JSONL_MIN_BYTES=8192; ours also writes its
# Prometheus textfile every second). scripts/gpu_inspector_report.py then compares the
# per-collective figures (per size, each plugin's median GPU time, Inspector's definition, over
# all_reduce_perf's time in the same run: within 5 %) and the added cost per collective
# (all_reduce_perf's time minus the plugin-less run of the same repetition).
# Ranks share one GPU (distinct NCCL_HOSTID, a private MPS daemon) when there are fewer GPUs
# than RANKS. Writes OUTDIR/summary.md and OUTDIR/gpu-inspector.tar.gz (runs and summary).
set -uo pipefail

usage() {
	cat <<'EOF'
usage: scripts/gpu-inspector.sh NCCL_TESTS_DIR NCCL_DIR [OUTDIR]
  NCCL_TESTS_DIR  a checkout of NVIDIA/nccl-tests (built under OUTDIR, never in place)
  NCCL_DIR        a checkout of NVIDIA/nccl (its plugins/profiler/inspector is built)
  OUTDIR          default /tmp/gpu-inspector
environment: RANKS (2) REPS (3) MINB (64K) MAXB (64M) ITERS (50) WARMUP (5) BUDGET_S (420)
  NCCL_HOME (else PyTorch's nvidia-nccl wheel) CUDA_HOME (/usr/local/cuda) MPS (1)
  NVCC_GENCODE (sm_90) SKIP_BUILD=1 (reuse OUTDIR/build and build-gpu)
exit status: 0 figures agree within 5 % and our added cost is not above Inspector's,
  1 they do not (or a step failed), 2 usage
EOF
}
case "${1:-}" in
-h | --help)
	usage
	exit 0
	;;
esac
if [ $# -lt 2 ] || [ $# -gt 3 ]; then
	usage >&2
	exit 2
fi
NT_SRC=$1 NCCL_SRC=$2 OUT=${3:-/tmp/gpu-inspector}
INSP_SRC=$NCCL_SRC/plugins/profiler/inspector
[ -f "$NT_SRC/src/all_reduce.cu" ] ||
	{ echo "gpu-inspector.sh: $NT_SRC: not an nccl-tests checkout (no src/all_reduce.cu)" >&2; exit 2; }
[ -f "$INSP_SRC/Makefile" ] ||
	{ echo "gpu-inspector.sh: $NCCL_SRC: no plugins/profiler/inspector/Makefile (an NCCL checkout?)" >&2; exit 2; }
NT_SRC=$(cd "$NT_SRC" && pwd) INSP_SRC=$(cd "$INSP_SRC" && pwd)

source "$(dirname "$0")/gpu-common.sh"
budget_init "${BUDGET_S:-420}"
mkdir -p "$OUT/build" && OUT=$(cd "$OUT" && pwd)
B=$OUT/build RUNS=$OUT/runs
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
JOBS=$(nproc)
RANKS=${RANKS:-2} REPS=${REPS:-3}

# NCCL as the two makefiles want it: include/ and lib/libnccl.so (the wheel has only
# libnccl.so.N).
nccl_home() {
	local nh=$B/nccl-home f
	mkdir -p "$nh/lib"
	ln -sfn "$NCCL_HOME/include" "$nh/include"
	for f in "$NCCL_HOME"/lib/libnccl.so*; do ln -sf "$f" "$nh/lib/"; done
	[ -e "$nh/lib/libnccl.so" ] || ln -sf "$(ls "$NCCL_HOME"/lib/libnccl.so.* | head -1)" "$nh/lib/libnccl.so"
	echo "$nh"
}

# MPI as nccl-tests wants it: MPI_HOME/include/mpi.h and MPI_HOME/lib.
mpi_home() {
	local mh=$B/mpi-home
	mkdir -p "$mh"
	ln -sfn "$(mpicc --showme:incdirs | awk '{print $1}')" "$mh/include"
	ln -sfn "$(mpicc --showme:libdirs | awk '{print $1}')" "$mh/lib"
	echo "$mh"
}

build_all() {
	gpu_build "$B/ncclbpf" || return 1
	local nh mh
	nh=$(nccl_home) mh=$(mpi_home)
	log "building NCCL Inspector from $INSP_SRC"
	rm -rf "$B/inspector" && cp -r "$INSP_SRC" "$B/inspector"
	make -C "$B/inspector" -j"$JOBS" CUDA_HOME="$CUDA_HOME" NCCL_HOME="$nh" >"$B/inspector.log" 2>&1 ||
		{ tail -20 "$B/inspector.log" >&2; return 1; }
	log "building nccl-tests from $NT_SRC (MPI=1)"
	rm -rf "$B/nccl-tests-src" && mkdir -p "$B/nccl-tests-src" &&
		(cd "$NT_SRC" && tar cf - --exclude=.git --exclude=build .) | (cd "$B/nccl-tests-src" && tar xf -)
	make -C "$B/nccl-tests-src" -j"$JOBS" MPI=1 MPI_HOME="$mh" CUDA_HOME="$CUDA_HOME" NCCL_HOME="$nh" \
		NVCC_GENCODE="${NVCC_GENCODE:--gencode=arch=compute_90,code=sm_90}" BUILDDIR="$B/nccl-tests" \
		>"$B/nccl-tests.log" 2>&1 || { grep -E "error" "$B/nccl-tests.log" | head -20 >&2; return 1; }
}

if [ "${SKIP_BUILD:-0}" != 1 ]; then
	build_all || { log "build failed"; exit 1; }
fi
INSPECTOR=$B/inspector/libnccl-profiler-inspector.so
ARP=$B/nccl-tests/all_reduce_perf
for f in "$INSPECTOR" "$ARP" "$PLUGIN"; do
	[ -e "$f" ] || { log "not built: $f"; exit 1; }
done
export LD_LIBRARY_PATH="$B/nccl-home/lib:$LD_LIBRARY_PATH"

GPUS=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
WRAP=$B/rank.sh
if [ "$GPUS" -lt "$RANKS" ]; then
	log "$RANKS ranks on $GPUS GPU(s): one GPU shared (NCCL_HOSTID per rank, MPS)"
	printf '#!/bin/sh\nexport NCCL_HOSTID=h$OMPI_COMM_WORLD_RANK NCCL_TESTS_DEVICE=0\nexec "$@"\n' >"$WRAP"
	mps_start
else
	printf '#!/bin/sh\nexec "$@"\n' >"$WRAP"
fi
chmod +x "$WRAP"

# run CONFIG REP: one all_reduce_perf job in RUNS/CONFIG.REP.
run() {
	local cfg=$1 rep=$2 d=$RUNS/$1.$2 env=()
	rm -rf "$d" && mkdir -p "$d"
	case $cfg in
	inspector)
		mkdir -p "$d/inspector"
		env=(NCCL_PROFILER_PLUGIN="$INSPECTOR" NCCL_INSPECTOR_ENABLE=1 NCCL_INSPECTOR_DUMP_DIR="$d/inspector"
			NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS=1000 NCCL_INSPECTOR_ENABLE_P2P=0) ;;
	ncclbpf)
		mkdir -p "$d/jsonl" "$d/prom"
		env=(NCCL_PROFILER_PLUGIN="$PLUGIN" NCCLBPF_JSONL_DIR="$d/jsonl" NCCLBPF_JSONL_MIN_BYTES=8192
			NCCLBPF_PROM_DIR="$d/prom" NCCLBPF_PROM_INTERVAL_MS=1000) ;;
	esac
	local xs=() e
	for e in "${env[@]}"; do xs+=(-x "$e"); done
	timeout 150 mpirun --allow-run-as-root --oversubscribe -np "$RANKS" -x LD_LIBRARY_PATH \
		-x NCCL_NVLS_ENABLE=0 ${CUDA_MPS_PIPE_DIRECTORY:+-x CUDA_MPS_PIPE_DIRECTORY} "${xs[@]}" \
		"$WRAP" "$ARP" -b "${MINB:-64K}" -e "${MAXB:-64M}" -f 4 -n "${ITERS:-50}" -w "${WARMUP:-5}" \
		-c 0 >"$d/out.txt" 2>"$d/err.txt"
	local rc=$?
	[ $rc -eq 0 ] || log "!! $cfg.$rep: rc=$rc: $(tail -3 "$d/err.txt" | tr '\n' ' ')"
	return $rc
}

rm -rf "$RUNS" && mkdir -p "$RUNS"
status=0
orders=("none inspector ncclbpf" "ncclbpf none inspector" "inspector ncclbpf none")
for rep in $(seq 1 "$REPS"); do
	if [ "$(budget_left)" -lt 60 ]; then
		log "budget: stopping after $((rep - 1)) repetition(s)"
		break
	fi
	for cfg in ${orders[$(((rep - 1) % 3))]}; do
		run "$cfg" "$rep" || status=1
	done
	log "repetition $rep done ($(budget_left)s of the budget left)"
done
mps_stop

{
	echo "# NCCL Inspector vs NCCLbpf telemetry: all_reduce_perf, $RANKS ranks on $GPUS GPU(s)"
	echo
	echo "commit $(git -C "$GPU_ROOT" rev-parse --short HEAD 2>/dev/null || echo -), NCCL $NCCL_HOME," \
		"sizes ${MINB:-64K}..${MAXB:-64M} x4, ${ITERS:-50} iterations, $REPS repetitions interleaved"
	echo "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
	echo
	python3 "$GPU_ROOT/scripts/gpu_inspector_report.py" report "$RUNS"
} >"$OUT/summary.md" 2>&1
rc=$?
tail -n +1 "$OUT/summary.md"
ls "$RUNS"/ncclbpf.*/prom/*.prom >/dev/null 2>&1 &&
	echo "note: a textfile was left behind (it must be removed at exit)" | tee -a "$OUT/summary.md"
tar czf "$OUT/gpu-inspector.tar.gz" -C "$OUT" summary.md runs
[ $status -eq 0 ] || rc=1
exit $rc
