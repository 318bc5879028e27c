# Sourced first by the scripts/gpu-*.sh that take no options (the others, gpu-ab.sh,
# gpu-inspector.sh and gpu-native.sh, parse their own and print their own usage):
# `SCRIPT -h|--help` prints the script's leading comment (its usage) on stdout and exits 0
# before anything is built, started or written. tests/gpubench/gpu_scripts.sh checks them all.
case "${1:-}" in
-h | --help)
	sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"
	exit 0
	;;
esac
