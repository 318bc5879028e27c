# An installation stands alone: `cmake --install` into a scratch prefix, the prefix copied to
# another place (so nothing can be found through the path it was installed to), then the
# layout, no path of the source or build tree in any installed file, and the commands users run
# first (demo, bench, test-run) working from the copy.
# usage: install.sh CMAKE BUILD_DIR SOURCE_DIR
set -u
cmake=$1 build=$2 src=$3
. "$(dirname "$0")/../cli/common.sh"

"$cmake" --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" 2>&1 ||
	{ cat "$tmp/install.log"; fail "cmake --install"; finish install; }
cp -a "$tmp/prefix" "$tmp/moved"
rm -rf "$tmp/prefix"
p=$tmp/moved
bin=$p/bin/ncclbpf

for f in bin/ncclbpf lib/libnccl-ncclbpf.so lib/libnccl-tuner-ncclbpf.so \
	lib/libnccl-net-ncclbpf.so include/ncclbpf.h share/ncclbpf/policies/size_aware.o \
	share/ncclbpf/policies/unsafe/div_zero.o share/ncclbpf/policies/tuned_table.o \
	share/ncclbpf/bench/two_lookups.o share/ncclbpf/traces/dgx-h100-8gpu.trace; do
	[ -e "$p/$f" ] || fail "layout: $f is not installed"
done
[ -L "$p/lib/libnccl-tuner-ncclbpf.so" ] || fail "layout: lib/libnccl-tuner-ncclbpf.so is not a link"
ls "$p"/lib/ncclbpf-bench/*.so >/dev/null 2>&1 || fail "layout: no bench baselines in lib/ncclbpf-bench"

# No installed file names the tree it was built from (assertions' __FILE__, debug info, BTF).
real_src=$(cd "$src" && pwd -P) real_build=$(cd "$build" && pwd -P)
while IFS= read -r -d '' f; do
	for tree in "$real_src" "$real_build"; do
		if strings -a "$f" | grep -qF "$tree"; then
			fail "${f#"$p"/} contains the path $tree: $(strings -a "$f" | grep -F "$tree" | head -2 | tr '\n' ' ')"
		fi
	done
done < <(find "$p" -type f -print0)

# The commands run from the copy, in a working directory that is neither tree, and find what
# they need beside themselves.
cd "$tmp" || exit 1
unset NCCLBPF_PLUGIN NCCLBPF_POLICY NCCLBPF_TUNE_TEMPLATE
run_cmd 0 "test-run" test-run --prog size_aware --ctx n_bytes=1048576 --quiet \
	"$p/share/ncclbpf/policies/size_aware.o"
run_cmd 0 "bench" bench --calls 2000 --rounds 2
grep -q "ours" "$tmp/out" || fail "bench: no result line: $(head -c 300 "$tmp/out")"
run_cmd 0 "demo" demo
grep -qF "($p/share/ncclbpf/policies)" "$tmp/out" ||
	fail "demo: policies not found in the installed tree: $(head -3 "$tmp/out")"
grep -q "unsafe/div_zero *rejected" "$tmp/out" || fail "demo: unsafe policy not rejected"
if grep -qF -e "$real_src" -e "$real_build" "$tmp/out" "$tmp/err"; then
	fail "the installed commands named the source or build tree"
fi
finish install
