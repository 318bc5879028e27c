#!/bin/bash
# Another local user against the CLI and the plugin (docs/security.md). Two unprivileged users
# are created for the test (useradd) and removed at the end: an attacker who prepares files,
# and a victim who runs `ncclbpf ps`, `ncclbpf reload --job` and the plugin as usual. Root plays
# the victim in the last case (`--dir` on a directory a user prepared). Skipped (77) where users
# cannot be created (not root, no useradd).
#
# usage: other_users.sh NCCLBPF_CLI PLUGIN TRACE
set -u
cli_src=$1 plugin_src=$2 trace_src=$3

if [ "$(id -u)" -ne 0 ] || ! command -v useradd >/dev/null || ! command -v setpriv >/dev/null; then
	echo "SKIP: needs root with useradd and setpriv to create two users"
	exit 77
fi
a=nbpfa$$ v=nbpfv$$
if ! useradd -M -N -s /bin/sh "$a" 2>/dev/null; then
	echo "SKIP: useradd failed"
	exit 77
fi
if ! useradd -M -N -s /bin/sh "$v" 2>/dev/null; then
	userdel "$a" 2>/dev/null
	echo "SKIP: useradd failed"
	exit 77
fi
ua=$(id -u "$a") uv=$(id -u "$v")
shm=/dev/shm/ncclbpf-$uv
work=$(mktemp -d /tmp/ncclbpf-users-XXXXXX)
cleanup() {
	rm -rf "$shm" "$work" /dev/shm/ncclbpf-"$ua"
	userdel "$a" 2>/dev/null
	userdel "$v" 2>/dev/null
}
trap cleanup EXIT
failures=0
fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}
# Runs a command as user $1 (no groups, its own uid and gid).
as() {
	local u=$1
	shift
	setpriv --reuid="$u" --regid="$(id -g "$u")" --clear-groups env -i PATH=/usr/bin:/bin "$@"
}

# Everything the users run is copied where both can read it.
chmod 0755 "$work"
mkdir "$work/bin"
cp "$cli_src" "$work/bin/ncclbpf"
cp "$plugin_src" "$work/bin/libnccl-ncclbpf.so"
cp "$trace_src" "$work/bin/calls.trace"
cp "$trace_src" "$work/bin/bundle.o" # any bytes: the controller refuses before it proposes
chmod -R a+rX "$work/bin"
cli=$work/bin/ncclbpf
rm -rf "$shm"

# The victim's files, which the attacker wants removed.
vhome=$work/victim
mkdir -m 0700 "$vhome"
echo precious >"$vhome/precious"
mkdir "$vhome/keep" && echo kept >"$vhome/keep/file"
chown -R "$v" "$vhome"

# --- 1. A pre-created /dev/shm/ncclbpf-<victim> whose record names the victim's file -------
as "$a" mkdir -m 0777 "$shm" "$shm/procs"
# The host name as the CLI matches records by (the runtime's one rule): top --json of an empty
# directory reports it.
mkdir -m 700 "$work/empty"
host=$("$cli" top --count 1 --json --dir "$work/empty" | python3 -c 'import json, sys; print(json.load(sys.stdin)["host"])')
as "$a" sh -c "printf 'pid=999999\nhost=$host\nuid=$uv\njob=x\nrank=0\nsock=$vhome/precious\n' \
	>$shm/procs/$host.999999; chmod 0666 $shm/procs/$host.999999"
out=$(as "$v" "$cli" ps 2>&1)
echo "victim's ps: $out"
[ -e "$vhome/precious" ] || fail "ps removed the file a planted record named"
echo "$out" | grep -q "$shm is owned by uid $ua, not by uid $uv or root" ||
	fail "ps did not name the foreign directory: $out"

# The plugin refuses it too, with one WARN naming it, and creates nothing inside.
out=$(as "$v" "$cli" replay "$work/bin/calls.trace" --plugin "$work/bin/libnccl-ncclbpf.so" \
	--policy none 2>&1)
echo "$out" | grep -q "live inspection off ($shm is owned by uid $ua" ||
	fail "plugin: no WARN for the foreign directory: $out"
[ "$(ls "$shm/procs")" = "$host.999999" ] || fail "plugin registered in a foreign directory"
rm -rf "$shm"

# --- 2. /dev/shm/ncclbpf-<victim> a symbolic link to the attacker's directory -------------
adir=$work/attacker
mkdir -m 0755 "$adir" && chown "$a" "$adir"
as "$a" ln -s "$adir" "$shm"
out=$(as "$v" "$cli" replay "$work/bin/calls.trace" --plugin "$work/bin/libnccl-ncclbpf.so" \
	--policy none 2>&1)
echo "$out" | grep -q "live inspection off ($shm is a symbolic link in a directory others can write" ||
	fail "plugin: no WARN for the symlinked directory: $out"
[ -z "$(ls "$adir")" ] || fail "plugin created $(ls "$adir") in the link's target"
out=$(as "$v" "$cli" ps 2>&1)
echo "$out" | grep -q "symbolic link" || fail "ps followed the planted link: $out"
rm -f "$shm"

# --- 3. reload --job in a directory others can write: a planted reload entry links to the
# victim's files. Refused before anything is read or removed there. ------------------------
cp_dir=$work/cp
mkdir -m 0777 "$cp_dir" && chown "$v" "$cp_dir"
as "$a" mkdir -p "$cp_dir/comms/00000000000000aa/reloads" "$cp_dir/comms/00000000000000aa/members"
as "$a" ln -s "$vhome/keep" "$cp_dir/comms/00000000000000aa/reloads/0000000000000000001-h-1"
out=$(as "$v" "$cli" reload --job --dir "$cp_dir" --timeout 1 "$work/bin/bundle.o" 2>&1)
echo "victim's reload --job: $out"
[ -e "$vhome/keep/file" ] || fail "reload --job emptied the directory a planted link named"
echo "$out" | grep -q "$cp_dir is writable by its group and others" ||
	fail "reload --job did not refuse the foreign-writable directory: $out"

# --- 4. the victim's own directory: an old reload entry that is a link is removed as a link,
# its target kept (only root or the victim could have placed it there). ----------------------
chmod 0700 "$cp_dir"
chown -R "$v" "$cp_dir"
out=$(as "$v" "$cli" reload --job --dir "$cp_dir" --timeout 1 "$work/bin/bundle.o" 2>&1)
[ -e "$vhome/keep/file" ] || fail "cleanup followed a link in the victim's own directory"
[ "$(ls -A "$vhome/keep")" = file ] || fail "cleanup wrote into a link's target: $(ls -A "$vhome/keep")"
[ ! -L "$cp_dir/comms/00000000000000aa/reloads/0000000000000000001-h-1" ] ||
	fail "the old reload entry (a link) was not removed: $out"

# --- 5. root with --dir on a directory a user prepared: refused, nothing of root's removed --
rootkeep=$work/rootkeep
mkdir -m 0700 "$rootkeep" && echo r >"$rootkeep/file"
udir=$work/userdir
mkdir -m 0700 "$udir" && chown "$a" "$udir"
as "$a" mkdir -p "$udir/comms/00000000000000bb/reloads" "$udir/comms/00000000000000bb/members"
as "$a" ln -s "$rootkeep" "$udir/comms/00000000000000bb/reloads/0000000000000000001-h-1"
out=$("$cli" reload --job --dir "$udir" --timeout 1 "$work/bin/bundle.o" 2>&1)
echo "root's reload --job: $out"
[ -e "$rootkeep/file" ] || fail "root's reload --job wiped a directory it did not create"
echo "$out" | grep -q "$udir is owned by uid $ua, not by uid 0 or root" ||
	fail "root's reload --job did not refuse the user's directory: $out"

if [ $failures -ne 0 ]; then
	echo "other_users: $failures failure(s)"
	exit 1
fi
echo "other_users: all checks passed"
