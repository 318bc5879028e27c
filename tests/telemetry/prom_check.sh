#!/usr/bin/env bash
# scripts/gpu-e2e.sh's Prometheus check without GPUs: the textfile text the plugin really writes
# (telem_sample: one AllReduce of 1 MiB, 90 us on the GPU, on a communicator of 2) before and
# after that collective, and gpu_e2e_check.py prom must accept it against a gpubench time of
# 100 us, and name what is wrong when a rank's file is missing, the bytes do not add up, the
# GPU time is far from gpubench's or nothing was counted between the two copies.
# Usage: prom_check.sh SOURCE_DIR TELEM_SAMPLE WORKDIR
set -u
SRC=$1 SAMPLE=$2 W=$3
rm -rf "$W"
mkdir -p "$W/before" "$W/after" "$W/tampered"
"$SAMPLE" >"$W/after/ncclbpf_h_1.prom" || { echo "FAIL: telem_sample"; exit 1; }
grep -q '^ncclbpf_coll_exec_seconds_count{.*coll="AllReduce",size="1048576"} 1$' \
	"$W/after/ncclbpf_h_1.prom" || { echo "FAIL: telem_sample printed no 1 MiB AllReduce"; exit 1; }
grep -v 'coll="AllReduce"' "$W/after/ncclbpf_h_1.prom" >"$W/before/ncclbpf_h_1.prom"
sed -E 's/^(ncclbpf_coll_bytes_total\{.*coll="AllReduce".*\}) 1048576$/\1 2097152/' \
	"$W/after/ncclbpf_h_1.prom" >"$W/tampered/ncclbpf_h_1.prom"
printf 'bytes,time_us_mean\n1048576,100\n' >"$W/bench.csv"
printf 'bytes,time_us_mean\n1048576,10\n' >"$W/fast.csv"
fails=0
expect() { # WANT_RC WANT_LINE ARGS...
	local want=$1 line=$2
	shift 2
	local out rc
	out=$(python3 "$SRC/scripts/gpu_e2e_check.py" prom "$@")
	rc=$?
	echo "$out"
	if [ $rc -ne "$want" ] || ! grep -qF -- "$line" <<<"$out"; then
		echo "FAIL: prom $*: exit $rc, want $want and '$line'"
		fails=$((fails + 1))
	fi
}
expect 0 "OK prom" "$W/before" "$W/after" "$W/bench.csv" 1048576 1
expect 0 "1 collectives, 1048576 bytes, 1048576 bus bytes (comm size 2)" \
	"$W/before" "$W/after" "$W/bench.csv" 1048576 1
expect 1 "FAIL prom: 1 textfiles in $W/after, want one per rank (2)" \
	"$W/before" "$W/after" "$W/bench.csv" 1048576 2
expect 1 "FAIL prom: ncclbpf_h_1.prom: 2097152 bytes for 1 collectives of 1048576 B" \
	"$W/before" "$W/tampered" "$W/bench.csv" 1048576 1
expect 1 "outside [0.25, 1.10]" "$W/before" "$W/after" "$W/fast.csv" 1048576 1
expect 1 "no AllReduce of 1048576 B counted between the two copies" \
	"$W/after" "$W/after" "$W/bench.csv" 1048576 1
[ $fails -eq 0 ] || exit 1
echo "prom_check: OK"
