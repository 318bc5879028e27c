#!/usr/bin/env bash
# Shared set-up of the GPU scripts (gpu-sweep.sh, gpu-compare.sh, gpu-overhead.sh); source it.
# - NCCL_HOME: from the environment, else PyTorch's nvidia-nccl wheel (python3 -c 'import
#   nvidia.nccl'); LD_LIBRARY_PATH gets $NCCL_HOME/lib.
# - gpu_build: configures and builds build-gpu (no policies, no tests, no sanitizers).
# - NCCL_NVLS_ENABLE=0 always (several ranks share one GPU; NVLS needs one rank per GPU).
# - mps_start / mps_stop: a private CUDA MPS daemon (pipe and log directories under a temp dir),
#   so that the rank processes sharing a GPU run concurrently instead of time-slicing (which
#   quantises every collective to ~4 ms). MPS=0 turns it off. Nothing else about the GPU is
#   changed. For timing only: under MPS, NCCL 2.28.9 itself gave wrong results at 1-4 MiB with
#   ranks sharing the GPU (docs/gpu-results.md), so scripts that judge results (gpu-split.sh)
#   run without it.
# - gb_run NAME TIMEOUT ARGS...: one ncclbpf-gpubench run with --timeout, its output in
#   $RUNDIR/NAME.{txt,err}; returns gpubench's status.
# - budget_init SECONDS / budget_left: a wall-clock budget for a whole script.
# - run_reps REPS RUNS: REPS repetitions of the runs listed in the file RUNS (a line each: NAME
#   and gb_run's arguments after "${COMMON[@]}"), the order reversed every other repetition,
#   each into $OUT/repN/NAME.csv; stops early when the budget would not hold another
#   repetition, and lists the runs it had no budget for in $OUT/skipped.txt.
# - tune_policy SWEEP.csv OUT.o LOG: `ncclbpf tune` with margin MARGIN (0.02); when the table
#   does not fit the template (64 rows: noisy sweeps flip between near-equal configurations),
#   again with 0.05, 0.1 and 0.2 (more sizes keep NCCL's default).
# Policy objects (built with clang elsewhere) come from POLICY_DIR (default gpu-carry/policies).

GPU_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export NCCL_NVLS_ENABLE=0
if [ -z "${NCCL_HOME:-}" ]; then
	NCCL_HOME=$(python3 -c 'import nvidia.nccl as n; print(list(n.__path__)[0])' 2>/dev/null)
fi
export NCCL_HOME
export LD_LIBRARY_PATH="${NCCL_HOME:+$NCCL_HOME/lib:}${LD_LIBRARY_PATH:-}"
BUILD_DIR=${BUILD_DIR:-$GPU_ROOT/build-gpu}
BENCH=$BUILD_DIR/bin/ncclbpf-gpubench
NCCLBPF=$BUILD_DIR/bin/ncclbpf
PLUGIN=$BUILD_DIR/lib/libnccl-ncclbpf.so
POLICY_DIR=${POLICY_DIR:-$GPU_ROOT/gpu-carry/policies}
export REPORT="python3 $GPU_ROOT/scripts/gpubench_report.py"

log() { echo "[$(date -u +%H:%M:%S)] $*" >&2; }

# gpu_build LOGDIR: builds ncclbpf, the plugin and ncclbpf-gpubench into BUILD_DIR.
gpu_build() {
	local logdir=$1
	mkdir -p "$logdir"
	if [ -z "$NCCL_HOME" ] || [ ! -d "$NCCL_HOME/lib" ]; then
		log "NCCL_HOME not found (set NCCL_HOME, or install PyTorch's nvidia-nccl wheel)"
		return 1
	fi
	log "NCCL_HOME=$NCCL_HOME; building $BUILD_DIR"
	cmake -S "$GPU_ROOT" -B "$BUILD_DIR" -DNCCLBPF_BUILD_POLICIES=OFF -DBUILD_TESTING=OFF \
		-DNCCLBPF_SANITIZERS=OFF -DNCCL_HOME="$NCCL_HOME" >"$logdir/cmake.log" 2>&1 ||
		{ tail -20 "$logdir/cmake.log" >&2; return 1; }
	cmake --build "$BUILD_DIR" -j"$(nproc)" >"$logdir/build.log" 2>&1 ||
		{ grep -E "error" "$logdir/build.log" | head -20 >&2; return 1; }
	local f
	for f in "$BENCH" "$NCCLBPF" "$PLUGIN"; do
		[ -e "$f" ] || { log "not built: $f"; grep -i gpubench "$logdir/cmake.log" >&2; return 1; }
	done
	nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >&2 || true
}

# need_policy NAME: the path of POLICY_DIR/NAME.o, or an error.
need_policy() {
	local p=$POLICY_DIR/$1.o
	[ -r "$p" ] || { log "missing policy object $p (build policies with clang; carry gpu-carry)"; return 1; }
	echo "$p"
}

MPS_DIR=""
mps_start() {
	if [ "${MPS:-1}" = 0 ]; then
		log "MPS=0: ranks sharing a GPU time-slice (collectives quantised to ~4 ms)"
		return 0
	fi
	if ! command -v nvidia-cuda-mps-control >/dev/null; then
		log "nvidia-cuda-mps-control not found: running without MPS"
		return 0
	fi
	MPS_DIR=$(mktemp -d /tmp/ncclbpf-mps-XXXXXX)
	mkdir -p "$MPS_DIR/pipe" "$MPS_DIR/log"
	export CUDA_MPS_PIPE_DIRECTORY=$MPS_DIR/pipe CUDA_MPS_LOG_DIRECTORY=$MPS_DIR/log
	if nvidia-cuda-mps-control -d; then
		log "MPS daemon started ($MPS_DIR)"
		trap mps_stop EXIT
		# A client that cannot reach the server fails: probe with two ranks, else go on
		# without MPS.
		if [ -x "$BENCH" ] && ! timeout 90 "$BENCH" -n 2 -b 8 -e 8 -i 1 -w 1 --no-plugin \
			--timeout 60 >"$MPS_DIR/probe.txt" 2>&1; then
			log "a 2-rank probe fails under MPS ($(tail -2 "$MPS_DIR/probe.txt" | tr '\n' ' ')):" \
				"running without MPS"
			mps_stop
			unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
		fi
	else
		log "MPS daemon did not start: running without MPS"
		unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
		rm -rf "$MPS_DIR"
		MPS_DIR=""
	fi
}

mps_stop() {
	[ -n "$MPS_DIR" ] || return 0
	echo quit | nvidia-cuda-mps-control >/dev/null 2>&1 || true
	for _ in $(seq 50); do # up to 5 s for the server to go
		pgrep -f "nvidia-cuda-mps-server" >/dev/null 2>&1 || break
		sleep 0.1
	done
	log "MPS daemon stopped"
	rm -rf "$MPS_DIR"
	MPS_DIR=""
}

BUDGET_END=0
budget_init() { BUDGET_END=$(($(date +%s) + $1)); }
budget_left() { echo $((BUDGET_END - $(date +%s))); }

run_reps() {
	local reps=$1 runs=$2 rep rep_wall="" left t t0 name args order nruns
	nruns=$(wc -l <"$runs")
	for rep in $(seq 1 "$reps"); do
		left=$(budget_left)
		if [ -n "$rep_wall" ] && [ "$left" -lt "$rep_wall" ]; then
			log "budget: ${left}s left, a repetition takes ~${rep_wall}s: stopping after $((rep - 1))"
			break
		fi
		RUNDIR=$OUT/rep$rep
		mkdir -p "$RUNDIR"
		t0=$(date +%s)
		order=(cat)
		[ $((rep % 2)) -eq 0 ] && order=(tac)
		while read -r name args; do
			t=$(budget_left)
			if [ "$t" -lt 5 ]; then
				echo "rep$rep $name (budget spent)" >>"$OUT/skipped.txt"
				continue
			fi
			[ "$t" -gt "$RUN_TIMEOUT_S" ] && t=$RUN_TIMEOUT_S
			# shellcheck disable=SC2086 # args are words by construction
			gb_run "$name" "$t" "${COMMON[@]}" $args --csv "$RUNDIR/$name.csv"
		done < <("${order[@]}" "$runs")
		rep_wall=$(($(date +%s) - t0))
		log "repetition $rep: $nruns runs in ${rep_wall}s"
	done
}

# gb_run NAME TIMEOUT ARGS...: writes RUNDIR/NAME.txt (rank 0's table) and NAME.err.
gb_run() {
	local name=$1 t=$2
	shift 2
	local t0 rc
	t0=$(date +%s.%N)
	timeout $((t + 30)) "$BENCH" --timeout "$t" "$@" >"$RUNDIR/$name.txt" 2>"$RUNDIR/$name.err"
	rc=$?
	GB_LAST_WALL=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
	if [ $rc -ne 0 ]; then
		log "!! $name: rc=$rc after ${GB_LAST_WALL}s: $(tail -3 "$RUNDIR/$name.err" | tr '\n' ' ')"
	else
		log "$name: ${GB_LAST_WALL}s"
	fi
	echo "$name rc=$rc wall_s=$GB_LAST_WALL args: $*" >>"$RUNDIR/runs.log"
	return $rc
}

tune_policy() {
	local sweep=$1 out=$2 logf=$3 m template
	template=$(need_policy tuned_table) || return 1
	for m in "${MARGIN:-0.02}" 0.05 0.1 0.2; do
		if "$NCCLBPF" tune "$sweep" -o "$out" --template "$template" --margin "$m" >"$logf" 2>&1; then
			log "tuned policy $out (margin $m): $(grep -o '[0-9]* rows' "$logf" | head -1)"
			return 0
		fi
		grep -q "do not fit" "$logf" || break
		log "table too large at margin $m: retrying with a larger margin"
	done
	cat "$logf" >&2
	return 1
}
