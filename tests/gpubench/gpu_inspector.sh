#!/usr/bin/env bash
# scripts/gpu-inspector.sh on a CPU: its usage (--help: exit 0; wrong arguments or a folder
# that is no checkout: exit 2, nothing run) and its report (scripts/gpu_inspector_report.py) on
# made-up runs with known answers: agreeing figures (each plugin's time over all_reduce_perf's
# in its own run) and a lower added cost pass with exact table lines, figures 10 % apart fail, a higher added cost fails, missing runs are bad input.
# Usage: gpu_inspector.sh SOURCE_DIR WORKDIR
set -u
SRC=$1 W=$2
rm -rf "$W"
mkdir -p "$W"
fail=0
bad() {
	echo "FAIL: $*" >&2
	fail=1
}
S=$SRC/scripts/gpu-inspector.sh
bash -n "$S" || bad "bash -n"
out=$(bash "$S" --help 2>"$W/err")
[ $? -eq 0 ] && [ "$(echo "$out" | head -1)" = "usage: scripts/gpu-inspector.sh NCCL_TESTS_DIR NCCL_DIR [OUTDIR]" ] &&
	[ ! -s "$W/err" ] || bad "--help: '$out'"
out=$(bash "$S" 2>"$W/err")
[ $? -eq 2 ] && [ -z "$out" ] && grep -q "^usage: scripts/gpu-inspector.sh" "$W/err" || bad "no arguments"
out=$(bash "$S" "$W" "$W" "$W/out" 2>&1)
[ $? -eq 2 ] && [ "$out" = "gpu-inspector.sh: $W: not an nccl-tests checkout (no src/all_reduce.cu)" ] &&
	[ ! -e "$W/out" ] || bad "not a checkout: '$out'"
mkdir -p "$W/nt/src" && : >"$W/nt/src/all_reduce.cu"
out=$(bash "$S" "$W/nt" "$W" 2>&1)
[ $? -eq 2 ] && [ "$out" = "gpu-inspector.sh: $W: no plugins/profiler/inspector/Makefile (an NCCL checkout?)" ] ||
	bad "not an NCCL checkout: '$out'"

# Made-up runs: rep r, 2 ranks; all_reduce_perf out-of-place times (us) for 8 KiB and 1 MiB.
# runs DIR OURS_1M_US OURS_8K_T OURS_1M_T: Inspector records 100 us (1 MiB) and 5 us (8 KiB);
# ours, longest channel (span 0.5 us more), 1 MiB OURS_1M_US, 8 KiB 5.5 us; all_reduce_perf's
# times: none 10 and 100+r, Inspector 12 and 103+r, ours OURS_8K_T and OURS_1M_T+r.
row() { printf '     %s  %s  float  sum  -1  %s  1.0  1.0  0  %s  1.0  1.0  0\n' "$1" $(($1 / 4)) "$2" "$2"; }
runs() {
	local d=$1 r k
	for r in 1 2 3; do
		mkdir -p "$d/none.$r" "$d/inspector.$r/inspector" "$d/ncclbpf.$r/jsonl"
		{ echo "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong"
		  row 8192 10; row 1048576 $((100 + r)); } >"$d/none.$r/out.txt"
		{ row 8192 12; row 1048576 $((103 + r)); } >"$d/inspector.$r/out.txt"
		{ row 8192 "$3"; row 1048576 $(($4 + r)); } >"$d/ncclbpf.$r/out.txt"
		for k in 0 1; do
			echo '{"header":{"rank":'$k'},"coll_perf":{"coll":"AllReduce","coll_msg_size_bytes":1048576,"coll_exec_time_us":100,"coll_busbw_gbs":10.0}}'
			echo '{"header":{"rank":'$k'},"coll_perf":{"coll":"AllReduce","coll_msg_size_bytes":8192,"coll_exec_time_us":5,"coll_busbw_gbs":1.0}}'
			echo '{"header":{"rank":'$k'},"p2p_perf":{"p2p":"Send"}}'
		done >"$d/inspector.$r/inspector/host-pid1.log"
		for k in 0 1; do
			echo '{"coll":"AllReduce","msg_size_bytes":1048576,"exec_time_us":'"$2"'.5,"channel_max_us":'"$2"',"busbw_gbs":10.2}'
			echo '{"coll":"AllReduce","msg_size_bytes":8192,"exec_time_us":6.0,"channel_max_us":5.5,"busbw_gbs":1.1}'
			echo '{"coll":"Broadcast","msg_size_bytes":8192,"exec_time_us":1,"busbw_gbs":1}'
		done >"$d/ncclbpf.$r/jsonl/ncclbpf_h_1.jsonl"
	done
}
R="python3 $SRC/scripts/gpu_inspector_report.py report"
has() { # file line
	grep -qxF -- "$2" "$1" || { bad "$1 lacks: $2"; sed 's/^/  | /' "$1" >&2; }
}
runs "$W/good" 102 11 102
$R "$W/good" >"$W/good.md" 2>&1
[ $? -eq 0 ] || bad "agreeing runs: status $?"
has "$W/good.md" "| 1 MiB | 6 | 6 | 100.0 | 102.0 | 102.5 | 0.952 | 0.981 | 1.030 | ok |"
has "$W/good.md" "| 8 KiB | 6 | 6 | 5.0 | 5.5 | 6.0 | 0.417 | 0.500 | 1.200 | not compared (< 20 us) |"
has "$W/good.md" "| 1 MiB | 102.00 | +3.00 | +2.00 | -1.00 ± 0.00 |"
has "$W/good.md" "| 8 KiB | 10.00 | +2.00 | +1.00 | -1.00 ± 0.00 |"
has "$W/good.md" "ncclbpf minus Inspector, all sizes and 3 repetition(s): -1.000 ± 0.000 us per collective: ok (not above Inspector)"
has "$W/good.md" "verdict: PASS"

runs "$W/apart" 110 11 102
$R "$W/apart" >"$W/apart.md" 2>&1
[ $? -eq 1 ] || bad "figures 10 % apart: status"
has "$W/apart.md" "| 1 MiB | 6 | 6 | 100.0 | 110.0 | 110.5 | 0.952 | 1.058 | 1.111 | FAIL (> 5%) |"
has "$W/apart.md" "verdict: FAIL"

runs "$W/costly" 102 13 106
$R "$W/costly" >"$W/costly.md" 2>&1
[ $? -eq 1 ] || bad "higher cost: status"
has "$W/costly.md" "ncclbpf minus Inspector, all sizes and 3 repetition(s): +2.000 ± 0.447 us per collective: FAIL (above Inspector)"

rm -rf "$W/good/inspector."*
out=$($R "$W/good" 2>&1)
[ $? -eq 2 ] && [ "$out" = "gpu_inspector_report: $W/good: no inspector.N run folders" ] || bad "missing runs: '$out'"

[ $fail -eq 0 ] && echo OK
exit $fail
