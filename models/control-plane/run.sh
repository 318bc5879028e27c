#!/usr/bin/env bash
# Runs one configuration of the control-plane model (cp.pml) with spin and prints spin's
# statistics. Usage: run.sh CONFIG [WORKDIR]   (run.sh --list: the configurations)
#
# WORKDIR (default: a fresh temp dir) receives pan.c, pan and any trail; never the source tree.
# Exit status: 0 when the result is the expected one (configurations that check the protocol:
# a complete search with "errors: 0"; bug_* and assume_* configurations: a counterexample),
# 1 otherwise, 2 for a usage error, 77 when spin or the C compiler is missing (CTest: skipped).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
model=$here/cp.pml

# name | spin -D flags | pan compile flags | pan run flags | expect (ok|error)
configs() {
	cat <<'EOF'
2x1|-DN=2 -DK=1 -DMAXSEQ=4 -DLOCALFAIL -DLOSTACK -DACK_SPLIT|-O2 -DSAFETY -DNOCLAIM -DVECTORSZ=256 -DMEMLIM=2048|-m100000 -w22|ok
2x1_live|-DN=2 -DK=1 -DMAXSEQ=4 -DLOCALFAIL -DLOSTACK -DACK_SPLIT -DNOSYM -DLIVE|-O2 -DNFAIR=3 -DVECTORSZ=256 -DMEMLIM=2048|-a -f -N wait0 -m200000 -w23|ok
2x2|-DN=2 -DK=2 -DMAXSEQ=4|-O2 -DSAFETY -DNOCLAIM -DCOLLAPSE -DVECTORSZ=256 -DMEMLIM=4096|-m200000 -w25|ok
3x1|-DN=3 -DK=1 -DMAXSEQ=4 -DLOCALFAIL -DLOSTACK -DACK_SPLIT|-O2 -DSAFETY -DNOCLAIM -DVECTORSZ=256 -DMEMLIM=2048|-m200000 -w24|ok
3x2|-DN=3 -DK=2 -DMAXSEQ=3|-O2 -DSAFETY -DNOCLAIM -DCOLLAPSE -DVECTORSZ=512 -DMEMLIM=8192|-m2000000 -w26|ok
3x2_seq4|-DN=3 -DK=2 -DMAXSEQ=4|-O2 -DSAFETY -DNOCLAIM -DCOLLAPSE -DVECTORSZ=512 -DMEMLIM=14000|-m3000000 -w27|ok
bug_no_fence|-DN=2 -DK=1 -DNOSYM -DBUG_NO_FENCE|-O0 -DSAFETY -DNOCLAIM|-m100000 -w20|error
bug_double_decide|-DN=2 -DK=1 -DNOSYM -DBUG_DOUBLE_DECIDE|-O0 -DSAFETY -DNOCLAIM|-m100000 -w20|error
bug_apply_after_call|-DN=2 -DK=1 -DNOSYM -DBUG_APPLY_AFTER_CALL|-O0 -DSAFETY -DNOCLAIM|-m100000 -w20|error
bug_no_reread|-DN=2 -DK=1 -DNOSYM -DBUG_NO_REREAD|-O0 -DSAFETY -DNOCLAIM|-m100000 -w20|error
bug_s_min|-DN=2 -DK=1 -DNOSYM -DBUG_S_MIN|-O0 -DSAFETY -DNOCLAIM|-m100000 -w20|error
bug_wait_forever|-DN=2 -DK=1 -DNOSYM -DLIVE -DBUG_WAIT_FOREVER|-O0 -DNFAIR=3|-a -f -N wait0 -m100000 -w20|error
assume_stale_reread|-DN=2 -DK=1 -DNOSYM -DSTALE_REREAD|-O0 -DSAFETY -DNOCLAIM|-m100000 -w20|error
assume_lost_decision|-DN=2 -DK=1 -DNOSYM -DLOST_DECISION|-O0 -DSAFETY -DNOCLAIM|-m100000 -w20|error
EOF
}

if [[ $# -lt 1 || $# -gt 2 ]]; then
	echo "usage: $0 CONFIG [WORKDIR]   ($0 --list)" >&2
	exit 2
fi
if [[ $1 == --list ]]; then
	configs | cut -d'|' -f1
	exit 0
fi
line=$(configs | awk -F'|' -v n="$1" '$1 == n')
if [[ -z $line ]]; then
	echo "$0: unknown configuration '$1' (have: $(configs | cut -d'|' -f1 | tr '\n' ' '))" >&2
	exit 2
fi
IFS='|' read -r name dflags cflags rflags expect <<<"$line"
SPIN=${SPIN:-spin}
for tool in "$SPIN" "${CC:-cc}"; do
	if ! command -v "$tool" >/dev/null; then
		# a missing model checker is a visible skip, or a failure where CI requires it
		case ",${NCCLBPF_REQUIRE_ORACLES:-}," in
		*,spin,*)
			echo "$0: $tool not found (Debian: apt-get install spin): required" >&2
			exit 1
			;;
		esac
		echo "$0: $tool not found (Debian: apt-get install spin): SKIPPED" >&2
		exit 77
	fi
done

work=${2:-$(mktemp -d)}
mkdir -p "$work"
cd "$work"
rm -f pan pan.* ./*.trail _spin_nvr.tmp
cp "$model" cp.pml # spin -t looks for cp.pml.trail next to the model
model=cp.pml

echo "== $name: spin $dflags -a cp.pml; ${CC:-cc} $cflags pan.c; ./pan $rflags (in $work)"
# shellcheck disable=SC2086
"$SPIN" $dflags -a "$model" >spin.out 2>&1 || { cat spin.out; exit 1; }
# shellcheck disable=SC2086
"${CC:-cc}" -w $cflags -o pan pan.c
t0=$(date +%s.%N)
set +e
# shellcheck disable=SC2086
./pan $rflags >pan.out 2>&1
rc=$?
set -e
t1=$(date +%s.%N)
# spin's statistics, without the list of unreached model lines.
sed -n '/^(Spin Version/,/^unreached in/p' pan.out | grep -v '^unreached in'
grep -E '^pan:.*(error|violated|acceptance|too small)' pan.out || true
awk -v n="$name" -v rc="$rc" -v a="$t0" -v b="$t1" 'BEGIN { printf "== %s: pan exit %d, %.1f s wall\n", n, rc, b - a }'

errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' pan.out | tail -n 1)
if [[ $expect == ok ]]; then
	if [[ $errors != 0 ]] || grep -qiE 'max search depth too small|search not completed|out of memory|resize hashtable' pan.out; then
		echo "== $name: FAILED (errors: ${errors:-?}, or incomplete search)"
		if ls ./*.trail >/dev/null 2>&1; then
			# shellcheck disable=SC2086
			"$SPIN" $dflags -t -p -g "$model" | tail -n 60 || true
		fi
		exit 1
	fi
	echo "== $name: complete search, errors: 0"
	exit 0
fi
# A bug or assumption variant: it must give a counterexample (the safety assertion on the
# version that ran a seq, or an acceptance cycle of the liveness claim). Show its end.
if [[ -n $errors && $errors != 0 ]] && grep -qE 'assertion violated|acceptance cycle' pan.out; then
	echo "== $name: counterexample found, as expected; its last steps:"
	# shellcheck disable=SC2086
	"$SPIN" $dflags -t -p "$model" 2>&1 | grep -E "proc|assert" | tail -n 30 || true
	exit 0
fi
echo "== $name: FAILED: no counterexample (errors: ${errors:-?})"
exit 1
