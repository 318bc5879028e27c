#!/bin/sh
# Plugin wrapper for the public bpf_conformance suite (github.com/Alan-Jowett/bpf_conformance),
# which runs its plugin as `PLUGIN [MEMORY-HEX] [PLUGIN-OPTIONS...] [--elf]` with the program's
# hex bytes on stdin. Our binary wants the sub-command first, hence this wrapper:
#
#   bpf_conformance_runner --test_file_directory tests --cpu_version v4 \
#       --plugin_path tests/conformance/bpf_conformance_plugin.sh --plugin_options --interp
#
# NCCLBPF selects the binary (default: build/bin/ncclbpf next to this checkout).
here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
exec "${NCCLBPF:-$here/../../build/bin/ncclbpf}" exec "$@"
