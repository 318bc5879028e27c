#!/bin/bash
# Records a 2-rank ring over the real net plugin (loopback) with NCCLBPF_TRACE and checks the
# net records it wrote (net_trace_check.py). OUT is left for the replay tests.
#   net_trace_record.sh TEST_NET PLUGIN POLICY OUT [OP_WITH_PROGRAM...]
set -u
test_net=$1 lib=$2 policy=$3 out=$4
shift 4
rm -f "$out"
log=$(NCCLBPF_TRACE=$out NCCLBPF_POLICY=$policy NCCLBPF_WATCH=0 NCCL_SOCKET_IFNAME=lo \
	"$test_net" "$lib" ring 2 12 2>&1) || { echo "$log" | tail -20; echo "FAIL: test_net"; exit 1; }
echo "$log" | tail -1 | grep -qx OK || { echo "$log" | tail -20; echo "FAIL: test_net"; exit 1; }
python3 "$(dirname "$0")/net_trace_check.py" "$out" "$@" || exit 1
echo "net_trace_record: OK"
