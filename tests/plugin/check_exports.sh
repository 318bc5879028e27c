#!/bin/sh
# check_exports.sh LIB: fails unless LIB exports exactly NCCL's plugin tables
# (env v1, v2, net v11, v12, profiler v4..v6 and tuner v3..v6; nm -D --defined-only), needs nothing but libc, and is linked with -z nodelete.
set -eu
lib=$1
got=$(nm -D --defined-only "$lib" | awk '{print $NF}' | sort | tr '\n' ' ')
want="ncclEnvPlugin_v1 ncclEnvPlugin_v2 ncclNetPlugin_v11 ncclNetPlugin_v12 ncclProfiler_v4 ncclProfiler_v5 ncclProfiler_v6 ncclTunerPlugin_v3 ncclTunerPlugin_v4 ncclTunerPlugin_v5 ncclTunerPlugin_v6 "
if [ "$got" != "$want" ]; then
	echo "exported: $got"; echo "expected: $want"; exit 1
fi
needed=$(readelf -d "$lib" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' ')
if [ "$needed" != "libc.so.6 " ]; then
	echo "unexpected dependencies: $needed"; exit 1
fi
readelf -d "$lib" | grep -q NODELETE || { echo "not linked with -z nodelete"; exit 1; }
echo "exports: $got; needs: $needed; NODELETE"
