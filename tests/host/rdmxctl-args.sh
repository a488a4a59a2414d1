#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rdmxctl-args.sh BINARY: host test of rdmxctl, needing neither the rdmx
# module nor RDMA hardware. Checks the command line (help, unknown words,
# exit statuses), "version" and "dev" without a module, and "doctor" against
# fake sysfs trees built here (RDMX_SYSFS). If a C compiler is present, "dev"
# is also run against a fake module: an LD_PRELOAD shim answering the ioctls.
#
# Prints "ok N - ..." or "not ok N - ..." per check, then "N passed, N failed";
# exits 1 if any check failed, 2 on bad usage.

set -u

if [ $# -ne 1 ] || [ ! -x "$1" ]; then
	echo "usage: $0 BINARY  (path to a built rdmxctl)" >&2
	exit 2
fi
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
HDR_DIR=$(cd "$(dirname "$0")/../../uapi" 2>/dev/null && pwd)

T=$(mktemp -d "${TMPDIR:-/tmp}/rdmxctl-test.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT

# Never find a real module or sysfs by accident.
export RDMX_DEVNODE="$T/no-such-devnode"
export RDMX_SYSFS="$T/empty-sys"
unset LD_PRELOAD
mkdir -p "$RDMX_SYSFS"

n=0
passed=0
failed=0

# check DESCRIPTION COMMAND...: one test; passes if COMMAND succeeds
check() {
	local desc=$1
	shift
	n=$((n + 1))
	if "$@"; then
		echo "ok $n - $desc"
		passed=$((passed + 1))
	else
		echo "not ok $n - $desc"
		failed=$((failed + 1))
	fi
}

skip() {
	n=$((n + 1))
	echo "ok $n - # SKIP $1"
	passed=$((passed + 1))
}

# run ARGS...: run the binary; sets $rc, output in $T/out and $T/err
run() {
	"$BIN" "$@" >"$T/out" 2>"$T/err"
	rc=$?
}

rc_is() { [ "$rc" -eq "$1" ]; }
out_has() { grep -qE -- "$1" "$T/out"; }
not_out_has() { ! out_has "$1"; }
err_has() { grep -qE -- "$1" "$T/err"; }
out_empty() { [ ! -s "$T/out" ]; }
is_json() { python3 -m json.tool "$T/out" >/dev/null 2>&1; }

# json_true EXPR: EXPR, in Python over the output parsed as d, is true
json_true() {
	python3 - "$T/out" "$1" <<'EOF' 2>/dev/null
import json, sys
d = json.load(open(sys.argv[1]))
def level(check):
    return [f["level"] for f in d["findings"] if f["check"] == check]
sys.exit(0 if eval(sys.argv[2]) else 1)
EOF
}

# Counts in doctor's JSON agree with its findings
COUNTS_AGREE='all(d[k] == sum(f["level"] == l for f in d["findings"])
	for k, l in (("ok", "ok"), ("warnings", "warn"), ("errors", "error")))'
COUNTS_AGREE=$(echo "$COUNTS_AGREE" | tr -d '\n\t')

# The last line of doctor's text output is its summary
ends_with_summary() {
	tail -n 1 "$T/out" | grep -qE '^[0-9]+ ok, [0-9]+ warnings, [0-9]+ errors$'
}

# put FILE CONTENT: write one fake sysfs attribute
put() {
	mkdir -p "$(dirname "$1")"
	printf '%s\n' "$2" >"$1"
}

# fake_netdev ROOT NAME FLAGS OPERSTATE MTU TYPE
fake_netdev() {
	local d=$1/class/net/$2
	put "$d/flags" "$3"
	put "$d/operstate" "$4"
	put "$d/mtu" "$5"
	put "$d/type" "$6"
}

# fake_port ROOT DEV PORT STATE LINK_LAYER NETDEV GID...
fake_port() {
	local root=$1 dev=$2 port=$3 state=$4 ll=$5 nd=$6 i=0 gid
	local p=$root/class/infiniband/$dev/ports/$port
	shift 6
	put "$root/class/infiniband/$dev/node_type" "1: CA"
	put "$p/state" "$state"
	put "$p/link_layer" "$ll"
	[ -n "$nd" ] && put "$p/gid_attrs/ndevs/0" "$nd"
	mkdir -p "$p/gids"
	for gid in "$@"; do
		put "$p/gids/$i" "$gid"
		i=$((i + 1))
	done
}

ZERO_GID=0000:0000:0000:0000:0000:0000:0000:0000
LL_GID=fe80:0000:0000:0000:0250:56ff:fe8a:1234
V4_GID=0000:0000:0000:0000:0000:ffff:c0a8:0101

# ---- command line ----

run help
check "help exits 0" rc_is 0
check "help prints usage" out_has '^Usage: rdmxctl'
run -h
check "-h exits 0" rc_is 0
run --help
check "--help exits 0" rc_is 0
run dev help
check "dev help exits 0" rc_is 0
run doctor help
check "doctor help exits 0" rc_is 0

run frobnicate
check "unknown command exits 2" rc_is 2
check "unknown command: stderr names it" err_has frobnicate
check "unknown command: stderr hints at help" err_has "rdmxctl help"
check "unknown command: nothing on stdout" out_empty

run -x version
check "unknown option exits 2" rc_is 2
check "unknown option: stderr names it" err_has "'-x'"
run --frob version
check "unknown long option exits 2" rc_is 2
check "unknown long option: stderr names it" err_has "--frob"

run d s
check "ambiguous prefix 'd' exits 2" rc_is 2
check "ambiguous prefix: stderr lists dev and doctor" err_has "dev doctor"
run dev frob
check "unknown dev command exits 2" rc_is 2
run version extra
check "extra word after version exits 2" rc_is 2
run
check "no command exits 2" rc_is 2

# ---- version without the module ----

run version
check "version exits 0 without the module" rc_is 0
check "version prints the tool's version" out_has '^rdmxctl [0-9]+\.[0-9]+'
check "version says the module is not loaded" out_has 'module: not loaded'
run ver
check "prefix 'ver' runs version" rc_is 0
run -V
check "-V exits 0" rc_is 0
check "-V prints the version" out_has '^rdmxctl [0-9]'
run -j version
check "-j version exits 0" rc_is 0
check "-j version is JSON" is_json
check "-j version: module is null" json_true 'd["module"] is None and d["rdmxctl"]'
run -j -p version
check "-j -p version is JSON" is_json

# ---- dev without the module ----

run dev
check "dev without the module exits 1" rc_is 1
check "dev without the module names the devnode" err_has "$RDMX_DEVNODE"
check "dev without the module suggests modprobe" err_has "modprobe rdmx"
run -j dev
check "-j dev without the module prints no JSON" out_empty
RDMX_DEVNODE=/dev/null run dev
check "dev on a non-rdmx node exits 1" rc_is 1
check "dev on a non-rdmx node says so" err_has "not an rdmx device"

# ---- doctor: nothing present ----

run doctor
check "doctor with nothing exits 1" rc_is 1
check "doctor: module error" out_has '^error +module: '
check "doctor: module fix is modprobe" out_has 'fix: modprobe rdmx'
check "doctor: devnode error" out_has '^error +devnode: '
check "doctor: rdma_core error" out_has '^error +rdma_core: no RDMA core'
check "doctor: uverbs warning explains error -38" out_has '^warn +uverbs: .*-38'
check "doctor: devices error with rxe fix" out_has 'fix: modprobe rdma_rxe && rdma link add rxe0 type rxe netdev ETH$'
check "doctor: ends with the summary" ends_with_summary
run -j doctor
check "-j doctor is JSON" is_json
check "-j doctor: 4 errors" json_true 'd["errors"] == 4'
check "-j doctor: counts agree with findings" json_true "$COUNTS_AGREE"
check "-j doctor: ok findings have fix null" json_true 'all((f["fix"] is None) == (f["level"] == "ok") for f in d["findings"])'

# A host with an up Ethernet netdev: the fix names it, not lo or a down one
S=$T/sys-net
fake_netdev "$S" lo 0x9 unknown 65536 772
fake_netdev "$S" eth0 0x1002 down 1500 1
fake_netdev "$S" eth1 0x1003 up 1500 1
RDMX_SYSFS=$S run doctor
check "doctor: rxe fix names the up netdev" out_has 'rdma link add rxe0 type rxe netdev eth1$'

# ---- doctor: a healthy soft-RoCE port, module without devnode ----

S=$T/sys-rxe
mkdir -p "$S/module/rdmx" "$S/class/infiniband_verbs/uverbs0"
fake_netdev "$S" lo 0x9 unknown 65536 772
fake_netdev "$S" eth0 0x1003 up 1500 1
fake_port "$S" rxe0 1 "4: ACTIVE" Ethernet eth0 "$V4_GID" "$ZERO_GID" "$ZERO_GID"
put "$S/class/infiniband/rxe0/ports/1/active_mtu" "1024"

RDMX_SYSFS=$S run doctor
check "doctor rxe0: exits 1 (devnode missing)" rc_is 1
check "doctor rxe0: module ok" out_has '^ok +module: '
check "doctor rxe0: devnode error although module loaded" out_has '^error +devnode: .*although the rdmx module is loaded'
check "doctor rxe0: port ok" out_has '^ok +port: rxe0 port 1 is ACTIVE: RoCE, netdev eth0'
check "doctor rxe0: gid ok" out_has '^ok +gid: rxe0 port 1: GIDs: 1 set, 1 routable'
check "doctor rxe0: mtu ok" out_has '^ok +mtu: rxe0 port 1: eth0 mtu 1500 carries RoCE MTU 1024'
check "doctor rxe0: no devices error" not_out_has '^error +devices'
RDMX_SYSFS=$S run -j doctor
check "-j doctor rxe0: is JSON" is_json
check "-j doctor rxe0: exactly 1 error" json_true 'd["errors"] == 1'
check "-j doctor rxe0: counts agree with findings" json_true "$COUNTS_AGREE"
check "-j doctor rxe0: devnode is the error" json_true 'level("devnode") == ["error"]'
check "-j doctor rxe0: device findings ok" json_true 'level("port") == level("gid") == level("mtu") == ["ok"] and level("rdma_core") == level("uverbs") == ["ok"]'
RDMX_SYSFS=$S run -j -p doctor
check "-j -p doctor is JSON" is_json

# ---- doctor: broken ports ----

S=$T/sys-bad
fake_netdev "$S" eth0 0x1002 down 1500 1
fake_netdev "$S" eth1 0x1003 up 1000 1
fake_port "$S" rxe0 1 "1: DOWN" Ethernet eth0 "$ZERO_GID"
fake_port "$S" rxe1 1 "4: ACTIVE" Ethernet eth1 "$LL_GID"
fake_port "$S" mlx4_0 1 "2: INIT" InfiniBand ""

RDMX_SYSFS=$S run doctor
check "doctor bad: DOWN port on a down netdev: ip link set up" out_has '^error +port: rxe0 port 1 is DOWN: netdev eth0 is down'
check "doctor bad: fix ip link set eth0 up" out_has 'fix: ip link set eth0 up$'
check "doctor bad: no GID error with ip addr fix" out_has '^error +gid: rxe0 port 1: no GID: the netdev eth0 has no IP address'
check "doctor bad: fix ip addr add" out_has 'fix: ip addr add ADDR/PREFIX dev eth0$'
check "doctor bad: link-local only GID warns" out_has '^warn +gid: rxe1 port 1: only link-local'
check "doctor bad: small MTU warns of 512" out_has '^warn +mtu: rxe1 port 1: eth1 mtu 1000 limits the RoCE path MTU to 512'
check "doctor bad: IB port in INIT wants a subnet manager" out_has '^warn +port: mlx4_0 port 1 is INIT: no subnet manager'

# ---- doctor: two RDMA devices on one netdev ----

# fake_shared ROOT NETDEV: healthy rxe0 (RoCE) on eth0, siw0 (iWARP) on NETDEV
fake_shared() {
	mkdir -p "$1/module/rdmx" "$1/class/infiniband_verbs/uverbs0"
	fake_netdev "$1" eth0 0x1003 up 1500 1
	fake_netdev "$1" eth1 0x1003 up 1500 1
	fake_port "$1" rxe0 1 "4: ACTIVE" Ethernet eth0 "$V4_GID"
	fake_port "$1" siw0 1 "4: ACTIVE" Ethernet "$2" "$V4_GID"
	put "$1/class/infiniband/siw0/node_type" "4: RNIC"
}

S=$T/sys-shared
fake_shared "$S" eth0
RDMX_SYSFS=$S run doctor
check "doctor shared: warns that rxe0 and siw0 share eth0" out_has '^warn +shared_netdev: rxe0 and siw0 both use eth0: '
check "doctor shared: fix deletes the later device" out_has 'fix: rdma link del siw0$'
RDMX_SYSFS=$S run -j doctor
check "-j doctor shared: is JSON" is_json
check "-j doctor shared: one shared_netdev warning" json_true 'level("shared_netdev") == ["warn"]'
check "-j doctor shared: counts agree with findings" json_true "$COUNTS_AGREE"
check "-j doctor shared: the devnode is the only error" json_true 'd["errors"] == 1 and level("devnode") == ["error"]'

S=$T/sys-split
fake_shared "$S" eth1
RDMX_SYSFS=$S run -j doctor
check "-j doctor eth0 and eth1: no shared_netdev finding" json_true 'level("shared_netdev") == []'
check "-j doctor eth0 and eth1: siw0 port ok" json_true 'level("port") == ["ok", "ok"]'

# ---- dev against a fake module (LD_PRELOAD shim) ----

# The shim answers rdmx's ioctls on any fd; point RDMX_DEVNODE at /dev/null.
write_shim() {
	cat >"$T/shim.c" <<'EOF'
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/rdmx.h>

static void port(struct rdmx_device_info *d, const char *name, unsigned int idx,
		 unsigned int state, const char *netdev)
{
	memset(d, 0, sizeof(*d));
	strcpy((char *)d->name, name);
	strcpy((char *)d->netdev, netdev);
	d->node_guid = 0x025056fffe8a1234ULL;
	d->index = idx;
	d->port = 1;
	d->transport = RDMX_TRANSPORT_ROCE;
	d->port_state = state;
	d->phys_state = state == RDMX_PORT_ACTIVE ? RDMX_PHYS_STATE_LINK_UP : RDMX_PHYS_STATE_DISABLED;
	d->atomic_cap = RDMX_ATOMIC_HCA;
	d->active_mtu = 1024;
	d->max_mtu = 4096;
	d->max_qp = 1048576;
	d->max_mr_size = ~0ULL;
	d->cap_flags = RDMX_DEV_CAP_MEM_MGT_EXTENSIONS;
}

/* Two ports; SHIM_GROW adds a third between the count and the fetch. */
int ioctl(int fd, unsigned long req, ...)
{
	static int calls;
	unsigned int i, n = 2;
	va_list ap;
	void *arg;

	(void)fd;
	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (req == RDMX_IOC_GET_INFO) {
		struct rdmx_info *info = arg;

		if (info->size < RDMX_INFO_SIZE_VER0 || info->flags)
			return errno = EINVAL, -1;
		info->abi_version = RDMX_ABI_VERSION;
		info->nr_ports = n;
		info->features = RDMX_FEATURE_LIST_DEVICES;
		strcpy((char *)info->version, "9.9.9");
		return 0;
	}
	if (req == RDMX_IOC_LIST_DEVICES) {
		struct rdmx_list_devices *ld = arg;
		struct rdmx_device_info *out = (void *)(uintptr_t)ld->devices;

		if (ld->size != sizeof(*ld) || ld->flags ||
		    ld->entry_size != sizeof(*out) || (ld->count && !out))
			return errno = EINVAL, -1;
		if (getenv("SHIM_GROW") && ++calls >= 2)
			n++;
		for (i = 0; i < n && i < ld->count; i++)
			port(&out[i], i ? "mlx5_0" : "rxe0", i,
			     i ? RDMX_PORT_DOWN : RDMX_PORT_ACTIVE, i ? "" : "eth0");
		ld->count = n;
		return 0;
	}
	return errno = ENOTTY, -1;
}
EOF
}

build_shim() {
	command -v "$CC" >/dev/null 2>&1 && [ -n "$HDR_DIR" ] && write_shim &&
		"$CC" -shared -fPIC -I"$HDR_DIR" -o "$T/shim.so" "$T/shim.c" 2>"$T/cc.err"
}

CC=${CC:-cc}
if build_shim; then
	shim() { RDMX_DEVNODE=/dev/null LD_PRELOAD="$T/shim.so" run "$@"; }
	shim version
	check "shim: version shows the module" out_has '^module: 9\.9\.9 abi 1 features list_devices$'
	shim dev
	check "shim: dev exits 0" rc_is 0
	check "shim: dev line like rdma dev" out_has '^0/1: rxe0 port 1 roce ACTIVE phys LINK_UP netdev eth0 mtu 1024/4096 guid 0250:56ff:fe8a:1234$'
	check "shim: dev limits line" out_has '^    max_qp 1048576 .* max_mr_size 0xffffffffffffffff atomics hca caps mem_mgt_extensions$'
	check "shim: second port without netdev" out_has '^1/1: mlx5_0 port 1 roce DOWN phys DISABLED mtu'
	shim dev show mlx5_0
	check "shim: dev show NAME shows that device" out_has '^1/1: mlx5_0'
	check "shim: dev show NAME hides the others" not_out_has rxe0
	shim dev show nosuch0
	check "shim: dev show unknown NAME exits 1" rc_is 1
	check "shim: dev show unknown NAME names it" err_has nosuch0
	# With the module answering, a shared netdev is only a warning.
	RDMX_SYSFS=$T/sys-shared shim -j doctor
	check "shim: doctor shared: no errors, shared_netdev warns" json_true 'd["errors"] == 0 and level("shared_netdev") == ["warn"]'
	RDMX_SYSFS=$T/sys-shared shim doctor
	check "shim: doctor shared: exits 0 on warnings alone" rc_is 0
	SHIM_GROW=1 shim -j dev
	check "shim: list that grows is fetched whole" json_true 'len(d) == 3'
	shim -j dev
	check "shim: -j dev is a JSON array" json_true 'isinstance(d, list) and len(d) == 2'
	check "shim: -j dev keys" json_true 'd[0]["name"] == "rxe0" and d[0]["state"] == "ACTIVE" and d[0]["phys_state"] == "LINK_UP" and d[0]["atomics"] == "hca" and d[0]["caps"] == ["mem_mgt_extensions"] and d[1]["netdev"] is None'
else
	skip "no C compiler or uapi headers: dev against a fake module not tested"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
