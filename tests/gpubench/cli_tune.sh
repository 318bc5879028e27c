#!/usr/bin/env bash
# `ncclbpf tune` end to end: a synthetic sweep with known winners per size (a winner that computed
# wrong results, repeated measurements averaged, a size where NCCL's default is within the 2 %
# margin, a policy run that is not a candidate) -> OUT.o, which must verify and must decide
# exactly the expected (algorithm, protocol, channels) per collective, rank count and size
# (checked with `ncclbpf test-run`, including the boundaries between table rows). Then bad input:
# each case's exit status and exact message, and no output object left behind; a link planted at
# the output's temporary name is not written through.
# Usage: cli_tune.sh NCCLBPF TUNED_TABLE.o WORKDIR
set -u
NCCLBPF=$1 TEMPLATE=$2 W=$3
rm -rf "$W"
mkdir -p "$W"
fail=0
bad() {
	echo "FAIL: $*" >&2
	fail=1
}
HDR="coll,bytes,count,type,ranks,inplace,config,iters,reps,time_us_mean,time_us_min,time_us_max,time_us_sd,algbw_gbs,busbw_gbs,busbw_min_gbs,busbw_max_gbs,algo,proto,channels,wrong"
row() { # coll bytes ranks config time [wrong]
	echo "$1,$2,$(($2 / 4)),float,$3,0,$4,20,1,$5,$5,$5,0.000,1.0,1.0,1.0,1.0,-,-,-,${6:-0}"
}
{
	echo "$HDR"
	# allreduce, 2 ranks
	row allreduce 1024 2 default 15
	row allreduce 1024 2 ring/ll/2 10
	row allreduce 1024 2 ring/ll/2 14 # averaged with the 10: 12, still the best
	row allreduce 1024 2 tree/ll128/4 13
	row allreduce 4096 2 default 12.2 # within 2 % of the best (12): the default stays
	row allreduce 4096 2 ring/ll/2 12
	row allreduce 65536 2 default 30
	row allreduce 65536 2 tree/ll128/4 20
	row allreduce 65536 2 ring/ll/2 25
	row allreduce 1048576 2 default 150
	row allreduce 1048576 2 ring/simple/8 100 5 # fastest but wrong: never chosen
	row allreduce 1048576 2 ring/ll128/4 120
	row allreduce 16777216 2 default 900
	row allreduce 16777216 2 ring/simple/8 1000
	row allreduce 16777216 2 policy:tuned.o 800 # a policy run: not a candidate
} >"$W/sweep_a.csv"
{
	echo "# a comment line"
	echo "$HDR"
	row allgather 1024 2 default 20
	row allgather 1024 2 ring/ll/- 8
	row allgather 1048576 2 default 50
	row allgather 1048576 2 ring/ll/- 60
} >"$W/sweep_b.csv"

out=$("$NCCLBPF" tune "$W/sweep_a.csv" "$W/sweep_b.csv" -o "$W/tuned.o" --template "$TEMPLATE" 2>&1)
rc=$?
echo "$out"
[ $rc -eq 0 ] || bad "tune rc=$rc"
echo "$out" | grep -q "^# .*tuned.o: 5 rows" || bad "expected 5 table rows"
echo "$out" | grep -q "19 measurements read (1 non-candidate rows ignored)" ||
	bad "expected 19 measurements, 1 ignored"
"$NCCLBPF" verify "$W/tuned.o" || bad "tuned.o does not verify"

decide() { # coll bytes ranks -> "algo proto channels" as test-run prints them
	"$NCCLBPF" test-run "$W/tuned.o" --prog tuned_table --quiet \
		--ctx "coll_type=$1,n_bytes=$2,n_ranks=$3" |
		awk '$1 == "algorithm" || $1 == "protocol" || $1 == "n_channels" { v = v sep $3; sep = " " }
		     END { print v }'
}
# coll bytes ranks -> expected algo proto channels (RING 1, TREE 0; LL 0, LL128 1; -1/0: NCCL's)
while read -r coll bytes ranks want; do
	got=$(decide "$coll" "$bytes" "$ranks")
	[ "$got" = "$want" ] || bad "$coll $bytes B $ranks ranks: got '$got', want '$want'"
done <<'EOF'
ALLREDUCE 8 2 1 0 2
ALLREDUCE 1024 2 1 0 2
ALLREDUCE 2048 2 1 0 2
ALLREDUCE 2049 2 -1 -1 0
ALLREDUCE 4096 2 -1 -1 0
ALLREDUCE 16384 2 -1 -1 0
ALLREDUCE 16385 2 0 1 4
ALLREDUCE 65536 2 0 1 4
ALLREDUCE 262144 2 0 1 4
ALLREDUCE 262145 2 1 1 4
ALLREDUCE 1048576 2 1 1 4
ALLREDUCE 4194304 2 1 1 4
ALLREDUCE 4194305 2 -1 -1 0
ALLREDUCE 16777216 2 -1 -1 0
ALLREDUCE 1073741824 2 -1 -1 0
ALLREDUCE 1024 4 -1 -1 0
ALLGATHER 1024 2 1 0 0
ALLGATHER 32768 2 1 0 0
ALLGATHER 32769 2 -1 -1 0
REDUCESCATTER 1024 2 -1 -1 0
BROADCAST 1024 2 -1 -1 0
EOF

# --any-ranks: the same table for every communicator size.
"$NCCLBPF" tune "$W/sweep_a.csv" -o "$W/any.o" --template "$TEMPLATE" --any-ranks --quiet \
	>/dev/null || bad "--any-ranks rc"
got=$("$NCCLBPF" test-run "$W/any.o" --prog tuned_table --quiet \
	--ctx coll_type=ALLREDUCE,n_bytes=65536,n_ranks=8 | awk '$1 == "algorithm" { print $3 }')
[ "$got" = 0 ] || bad "--any-ranks: 8 ranks got algorithm '$got', want 0 (tree)"
# --coll: only the allgather rows.
"$NCCLBPF" tune "$W/sweep_a.csv" "$W/sweep_b.csv" -o "$W/ag.o" --template "$TEMPLATE" \
	--coll allgather --quiet | grep -q "ag.o: 1 rows" || bad "--coll allgather: expected 1 row"

# Bad input: exit status, exact message (stderr), no object written.
: >"$W/empty.csv"
{
	echo "$HDR"
	row allreduce 1024 2 default 15
	echo "allreduce,2048,512,float,2,0,default,20"
} >"$W/short.csv"
{
	echo "$HDR"
	row allreduce 1024 2 ring/ll 15
} >"$W/badcfg.csv"
{
	echo "$HDR"
	row allreduce 1024 2 default -3
} >"$W/badtime.csv"
echo "coll,bytes,config" >"$W/badhdr.csv"
{
	echo "$HDR"
	row allreduce 1024 2 policy:x.o 15
} >"$W/nocand.csv"
{
	echo "$HDR"
	row allreduce 1024 2 default 15
	row allreduce 1024 4 default 15
} >"$W/tworanks.csv"
expect() { # rc message args...
	local want_rc=$1 want=$2
	shift 2
	rm -f "$W/bad.o"
	local msg rc
	msg=$("$NCCLBPF" tune "$@" -o "$W/bad.o" 2>&1 >/dev/null)
	rc=$?
	[ $rc -eq "$want_rc" ] || bad "tune $*: rc=$rc, want $want_rc ($msg)"
	# A usage error (2) ends with the synopsis: "...; usage: ncclbpf tune ...".
	[ $rc -ne 2 ] || [ "$msg" != "${msg%%; usage: ncclbpf tune *}" ] || bad "tune $*: no synopsis: '$msg'"
	[ "${msg%%; usage: ncclbpf tune *}" = "$want" ] || bad "tune $*: message '$msg', want '$want'"
	[ ! -e "$W/bad.o" ] || bad "tune $*: left $W/bad.o behind"
}
T=(--template "$TEMPLATE")
expect 1 "ncclbpf tune: $W/empty.csv:0: no header line (empty file?)" "$W/empty.csv" "${T[@]}"
expect 1 "ncclbpf tune: $W/short.csv:3: 8 fields, the header has 21" "$W/short.csv" "${T[@]}"
expect 1 "ncclbpf tune: $W/badcfg.csv:2: config 'ring/ll' is neither 'default' nor ALGO/PROTO/CHANNELS (e.g. ring/ll/2, tree/simple/-)" \
	"$W/badcfg.csv" "${T[@]}"
expect 1 "ncclbpf tune: $W/badtime.csv:2: time_us_mean '-3' is not a positive number" \
	"$W/badtime.csv" "${T[@]}"
expect 1 "ncclbpf tune: $W/badhdr.csv:1: header lacks column 'ranks' (is this ncclbpf-gpubench --csv output?)" \
	"$W/badhdr.csv" "${T[@]}"
expect 1 "ncclbpf tune: $W/missing.csv: cannot open: No such file or directory" "$W/missing.csv" "${T[@]}"
expect 1 "ncclbpf tune: no default or forced measurements in 1 file(s) (1 rows read)" \
	"$W/nocand.csv" "${T[@]}"
expect 1 "ncclbpf tune: --any-ranks needs one rank count; the sweep has 2 and 4" \
	"$W/tworanks.csv" "${T[@]}" --any-ranks
expect 1 "ncclbpf tune: $W/no-template.o: cannot open: No such file or directory" \
	"$W/sweep_a.csv" --template "$W/no-template.o"
expect 1 "ncclbpf tune: template $W/sweep_a.csv: not a little-endian ELF64 object" \
	"$W/sweep_a.csv" --template "$W/sweep_a.csv"
expect 2 "ncclbpf tune: --margin '1.5' is not a fraction in [0, 1)" "$W/sweep_a.csv" "${T[@]}" \
	--margin 1.5
expect 2 "ncclbpf tune: unknown collective 'alltoall'" "$W/sweep_a.csv" "${T[@]}" --coll alltoall
# No template given, none in the environment and none next to a copied program.
mkdir -p "$W/bin"
cp "$NCCLBPF" "$W/bin/ncclbpf"
msg=$(NCCLBPF_TUNE_TEMPLATE="" "$W/bin/ncclbpf" tune "$W/sweep_a.csv" -o "$W/bad.o" 2>&1)
rc=$?
[ $rc -eq 1 ] && [ "$msg" = "ncclbpf tune: no template object: pass --template tuned_table.o (built from policies/tuned_table.c)" ] ||
	bad "no template: rc=$rc '$msg'"
# OUT.o is written beside itself under a temporary name a local user can predict (the pid): a
# symbolic link planted there must not be written through (it was: fopen followed it and
# clobbered the file it named). Both the old and the current name are planted; exec keeps the
# shell's pid for ncclbpf.
echo "precious" >"$W/victim"
msg=$(sh -c 'ln -s "$1/victim" "$1/planted.o.tmp.$$"; ln -s "$1/victim" "$1/planted.o.ncclbpf-$$.tmp"
	exec "$2" tune "$1/sweep_a.csv" --template "$3" -o "$1/planted.o"' sh "$W" "$NCCLBPF" "$TEMPLATE" 2>&1)
rc=$?
[ "$(cat "$W/victim")" = "precious" ] || bad "tune -o wrote through a planted link: $(head -c 100 "$W/victim")"
[ $rc -eq 1 ] && [ ! -e "$W/planted.o" ] && echo "$msg" | grep -q "planted.o.ncclbpf-.*tmp: File exists" ||
	bad "planted link: rc=$rc '$msg'"
[ $fail -eq 0 ] && echo "cli_tune: OK"
exit $fail
