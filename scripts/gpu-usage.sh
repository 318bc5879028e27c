# Sourced first by every scripts/gpu-*.sh: `SCRIPT -h|--help` prints the script's leading
# comment (its usage) on stdout and exits 0 before anything is built, started or written.
case "${1:-}" in
-h | --help)
	sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"
	exit 0
	;;
esac
