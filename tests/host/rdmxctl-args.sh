#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rdmxctl-args.sh BINARY: host test of rdmxctl, needing neither the rdmx
# module nor RDMA hardware. Checks the command line (help, unknown words,
# exit statuses), "version" and "dev" without a module, and "doctor" against
# fake sysfs trees built here (RDMX_SYSFS); the arguments of "listen",
# "session", "msg", "ping", "mr", "rma", "export", "map" and "unmap", and
# "session", "listen list", "export list" and "map list" against a fake
# sysfs. If a C compiler is present, "dev", the message
# service and one-sided access are also run against a fake module: an
# LD_PRELOAD shim answering the ioctls, with a fake peer behind it (echo,
# sink, source, and memory served for "rma"), and the block service's
# ioctls checked and logged.
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

# doctor reads /proc, /lib/modules, /usr/src and /etc/os-release under
# RDMX_ROOT: a fake Debian host whose kernel loads modules and has the RDMA
# core, rxe and an rdmx module, so that no host's own state shows through.
# fake_root DIR: that host.
fake_root() {
	local m=$1/lib/modules/$(uname -r)
	mkdir -p "$1/proc/sys/kernel" "$m/build" "$1/etc"
	: >"$1/proc/modules"
	echo 0 >"$1/proc/sys/kernel/modules_disabled"
	printf '%s\n' 'kernel/drivers/infiniband/core/ib_core.ko:' \
		'kernel/drivers/infiniband/sw/rxe/rdma_rxe.ko: kernel/drivers/infiniband/core/ib_core.ko' \
		'updates/dkms/rdmx.ko: kernel/drivers/infiniband/core/ib_core.ko' >"$m/modules.dep"
	printf 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\n' >"$1/etc/os-release"
}
fake_root "$T/root"
export RDMX_ROOT=$T/root

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
not_err_has() { ! err_has "$1"; }
first_line_is() { [ "$(head -n 1 "$T/out")" = "$1" ]; }
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

# put FILE TEXT: write one fake sysfs attribute, whole, as sysfs gives it
# (a monitor that reads while it changes never sees it empty).
put() {
	mkdir -p "$(dirname "$1")"
	printf '%s\n' "$2" >"$1.new" && mv -f "$1.new" "$1"
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

# ---- listen, session, msg, ping: the command line ----

run help
check "help lists bench, config, export, listen, map, mr, msg, ping, rma, session and unmap" \
	eval 'out_has "OBJECT := \{ bench \| config \| dev \| doctor \| export \| listen \| map \| monitor \|\$" &&
	      out_has "^ +mr \| msg \| ping \| rma \| session \| unmap \| version \}\$"'
for obj in bench config listen session msg ping mr rma export map monitor unmap; do
	run "$obj" help
	check "$obj help exits 0" rc_is 0
	check "$obj help prints usage" out_has "^Usage: rdmxctl $obj"
done
run msg send -h
check "msg send -h exits 0 with its usage" eval 'rc_is 0 && out_has "^Usage: rdmxctl msg send"'
run msg recv --help
check "msg recv --help exits 0 with its usage" eval 'rc_is 0 && out_has "^Usage: rdmxctl msg recv"'
run ping -h
check "ping -h exits 0 with its usage" eval 'rc_is 0 && out_has "^Usage: rdmxctl ping"'
run listen del -h
check "listen del -h exits 0" rc_is 0
run bench -h
check "bench -h exits 0 with its usage" eval 'rc_is 0 && out_has "^Usage: rdmxctl bench"'
run bench -t read -a host1 --help
check "bench ... --help exits 0 with its usage" eval 'rc_is 0 && out_has "^Usage: rdmxctl bench"'
run mr serve --help
check "mr serve --help exits 0 with its usage" eval 'rc_is 0 && out_has "^Usage: rdmxctl mr serve"'
run rma -h
check "rma -h exits 0 with its usage" eval 'rc_is 0 && out_has "^Usage: rdmxctl rma"'
run rma host1 read 0 1 --help
check "rma ... --help exits 0 with its usage" eval 'rc_is 0 && out_has "^Usage: rdmxctl rma"'

# usage_err DESC ARGS...: exits 2, says why on stderr, hints at help, no stdout
usage_err() {
	local desc=$1
	shift
	run "$@"
	check "$desc: exits 2" rc_is 2
	check "$desc: hints at help" err_has "^Try 'rdmxctl [a-z]+ help'"
	check "$desc: nothing on stdout" out_empty
}

usage_err "listen unknown command" listen frob
check "listen unknown command: names it" err_has "unknown listen command 'frob'"
usage_err "listen with options but no command" listen -p 7000
check "listen with options but no command: says add is explicit" err_has "'-p' without a command: 'listen add -p \.\.\.' adds a listener"
usage_err "listen port 0" listen add -p 0
check "listen port 0: says bad port" err_has "bad port '0'"
usage_err "listen port 65536" listen add --port 65536
usage_err "listen port not a number" listen add -p 7471x
usage_err "listen port negative" listen add -p -1
usage_err "listen port empty" listen add --port=
usage_err "listen -p without value" listen add -p
check "listen -p without value: says so" err_has "'-p' needs a value"
usage_err "listen bad address" listen add -a 10.0.0.300
check "listen bad address: names it" err_has "bad address '10.0.0.300'"
usage_err "listen address is no name" listen add -a localhost
usage_err "listen unknown option" listen add -x
check "listen unknown option: names it" err_has "unknown option '-x'"
usage_err "listen add extra word" listen add 7471
usage_err "listen del extra word" listen del -p 7471 now
usage_err "listen list extra word" listen list all

usage_err "session unknown command" session frob
usage_err "session show bad id" session show abc
check "session show bad id: names it" err_has "bad session id 'abc'"
usage_err "session show id 0" session show 0
usage_err "session show id too big" session show 4294967296
usage_err "session show two ids" session show 1 2
usage_err "session close without id" session close
usage_err "session close bad id" session close -3
usage_err "session close extra word" session close 3 4
usage_err "session list extra word" session list 3

usage_err "msg without command" msg
check "msg without command: says send or recv" err_has 'send or recv'
usage_err "msg unknown command" msg frob
usage_err "msg send without HOST" msg send
check "msg send without HOST: says so" err_has 'missing HOST'
usage_err "msg send without SERVICE" msg send host1
check "msg send without SERVICE: says so" err_has 'missing SERVICE'
usage_err "msg send without FILE" msg send host1 files
check "msg send without FILE: says so" err_has 'missing FILE'
usage_err "msg send bad service" msg send host1 'my files' /etc/hostname
check "msg send bad service: names it" err_has "bad service name 'my files'"
usage_err "msg send service of 64 bytes" msg send host1 "$(printf 'x%.0s' $(seq 64))" /etc/hostname
usage_err "msg send bad port" msg send -p 0 host1 files /etc/hostname
usage_err "msg send bad timeout" msg send --timeout 0 host1 files /etc/hostname
usage_err "msg send timeout not a number" msg send --timeout 1.5 host1 files /etc/hostname
usage_err "msg send stdin twice" msg send host1 files - -
check "msg send stdin twice: says so" err_has "standard input"
usage_err "msg recv without SERVICE" msg recv --count 1 --dir "$T"
usage_err "msg recv without --count" msg recv files --dir "$T"
check "msg recv without --count: says so" err_has 'missing --count'
usage_err "msg recv without --dir" msg recv files --count 1
check "msg recv without --dir: says so" err_has 'missing --dir'
usage_err "msg recv count 0" msg recv files --count 0 --dir "$T"
check "msg recv count 0: says bad count" err_has "bad count '0'"
usage_err "msg recv count not a number" msg recv files -c ten -d "$T"
usage_err "msg recv count too big" msg recv files -c 4294967296 -d "$T"
usage_err "msg recv two services" msg recv files more -c 1 -d "$T"
usage_err "msg recv bad port" msg recv -p 99999 files -c 1 -d "$T"
usage_err "msg recv bad address" msg recv -a ::g files -c 1 -d "$T"

usage_err "ping without HOST" ping
check "ping without HOST: says so" err_has 'missing HOST'
usage_err "ping two hosts" ping host1 host2
usage_err "ping count 0" ping -c 0 host1
check "ping count 0: says bad count" err_has "bad count '0'"
usage_err "ping count not a number" ping -c many host1
usage_err "ping count too big" ping -c 10000001 host1
usage_err "ping size too big" ping -s 4194305 host1
check "ping size too big: says bad size" err_has "bad size '4194305'"
usage_err "ping bad interval" ping -i -5 host1
usage_err "ping bad port" ping -p 65536 host1
usage_err "ping bad timeout" ping --timeout 0 host1
usage_err "ping unknown option" ping -f host1

usage_err "bench unknown test" bench -t atomic host1
check "bench unknown test: lists the tests" err_has "bad test 'atomic': expected send, write, read, cas or fadd"
usage_err "bench unknown mode" bench -m both host1
check "bench unknown mode: says bw or lat" err_has "bad mode 'both': expected bw or lat"
usage_err "bench size 0" bench -s 0 host1
check "bench size 0: says bad size" err_has "bad size '0'"
usage_err "bench size over 8 MiB" bench -s 8388609 host1
usage_err "bench send over RDMX_MSG_MAX" bench -t send -s 5M host1
check "bench send over RDMX_MSG_MAX: names the bound" err_has 'expected 1 to 4194304 bytes'
usage_err "bench atomic of 16 bytes" bench -t fadd -s 16 host1
check "bench atomic of 16 bytes: atomics are 8" err_has 'atomics are 8 bytes'
usage_err "bench -s with -a" bench -s 4K -a host1
usage_err "bench -n with -D" bench -n 10 -D 2 host1
usage_err "bench iterations 0" bench -n 0 host1
usage_err "bench iterations over 2^32" bench -n 4294967297 host1
usage_err "bench duration 0" bench -D 0 host1
usage_err "bench duration over an hour" bench -D 3601 host1
usage_err "bench depth 0" bench -d 0 host1
usage_err "bench depth over 1024" bench -d 1025 host1
usage_err "bench depth in lat mode" bench -m lat -d 4 host1
usage_err "bench depth of send" bench -t send -d 4 host1
check "bench depth of send: says where -d applies" err_has '-d applies to bw mode'
usage_err "bench two hosts" bench host1 host2
usage_err "bench bad port" bench -p 0 host1
usage_err "bench serving with a test" bench -t read
check "bench serving with a test: needs HOST" err_has 'need a HOST'
usage_err "bench --once with HOST" bench --once host1
usage_err "bench serving on a bad address" bench --addr ::g
usage_err "bench unknown option" bench -q host1
run bench host1
check "bench without a module: exits 1" rc_is 1

usage_err "mr without command" mr
check "mr without command: says serve" err_has 'missing command: serve'
usage_err "mr unknown command" mr frob
check "mr unknown command: names it" err_has "unknown mr command 'frob'"
usage_err "mr serve without --size" mr serve
check "mr serve without --size: says so" err_has 'missing --size SIZE'
usage_err "mr serve size 0" mr serve --size 0
check "mr serve size 0: says bad size" err_has "bad size '0'"
usage_err "mr serve size over RDMX_MR_MAX" mr serve --size 1073741825
usage_err "mr serve size 2G" mr serve -s 2G
usage_err "mr serve size with a bad suffix" mr serve --size 10X
usage_err "mr serve size negative" mr serve --size -4K
usage_err "mr serve size empty" mr serve --size=
usage_err "mr serve bad access letter" mr serve --size 4K --access rx
check "mr serve bad access letter: names it" err_has "bad access 'rx'"
usage_err "mr serve access letter twice" mr serve --size 4K --access rwr
usage_err "mr serve access empty" mr serve --size 4K --access=
usage_err "mr serve --fill with --seed" mr serve --size 4K --fill /etc/hostname --seed 1
check "mr serve --fill with --seed: says so" err_has 'exclude each other'
usage_err "mr serve bad seed" mr serve --size 4K --seed -1
usage_err "mr serve seed not a number" mr serve --size 4K --seed abc
usage_err "mr serve count 0" mr serve --size 4K --count 0
check "mr serve count 0: says bad count" err_has "bad count '0'"
usage_err "mr serve count not a number" mr serve --size 4K -c ten
usage_err "mr serve bad port" mr serve --size 4K -p 0
usage_err "mr serve bad service" mr serve --size 4K -S 'my mem'
check "mr serve bad service: names it" err_has "bad service name 'my mem'"
usage_err "mr serve bad address" mr serve --size 4K -a 10.0.0.300
usage_err "mr serve empty --dump" mr serve --size 4K --dump=
usage_err "mr serve extra word" mr serve --size 4K now
check "mr serve extra word: names it" err_has "unexpected argument 'now'"

usage_err "rma without HOST" rma
check "rma without HOST: says so" err_has 'missing HOST'
usage_err "rma without operation" rma host1
check "rma without operation: lists them" err_has 'missing operation: read, write, cas, fadd or writeimm'
usage_err "rma unknown operation" rma host1 frob
check "rma unknown operation: names it" err_has "unknown operation 'frob'"
usage_err "rma ambiguous operation" rma host1 w 0 /etc/hostname
check "rma ambiguous operation: says so" err_has "ambiguous operation 'w'"
usage_err "rma read without OFFSET" rma host1 read
check "rma read without OFFSET: says so" err_has 'rma read: missing OFFSET'
usage_err "rma read without LENGTH" rma host1 read 0
check "rma read without LENGTH: says so" err_has 'rma read: missing LENGTH'
usage_err "rma read length 0" rma host1 read 0 0
check "rma read length 0: says bad length" err_has "bad length '0'"
usage_err "rma read length over RDMX_RMA_LEN_MAX" rma host1 read 0 1073741825
usage_err "rma read bad offset" rma host1 read 1x 4
check "rma read bad offset: names it" err_has "bad offset '1x'"
usage_err "rma read offset over 2^64" rma host1 read 18446744073709551616 4
usage_err "rma read offset with a suffix over 2^64" rma host1 read 17179869184G 4
usage_err "rma read extra word" rma host1 read 0 4K more
check "rma read extra word: names it" err_has "unexpected argument 'more'"
usage_err "rma write without FILE" rma host1 write 0
check "rma write without FILE: says so" err_has 'rma write: missing FILE'
usage_err "rma write with -o" rma host1 write 0 /etc/hostname -o "$T/x"
check "rma write with -o: says -o is for read" err_has '-o FILE is for read only'
usage_err "rma read with -o and an empty name" rma host1 read 0 1 -o ''
usage_err "rma -j read -o -" -j rma host1 read 0 1 -o -
usage_err "rma cas without SWAP" rma host1 cas 0 1
check "rma cas without SWAP: says so" err_has 'rma cas: missing SWAP'
usage_err "rma cas bad swap value" rma host1 cas 0 1 x
check "rma cas bad swap value: names it" err_has "bad swap value 'x'"
usage_err "rma cas compare over 2^64" rma host1 cas 0 18446744073709551616 1
usage_err "rma fadd without ADDEND" rma host1 fadd 8
usage_err "rma fadd addend -0" rma host1 fadd 8 -0
usage_err "rma fadd addend below -2^63" rma host1 fadd 8 -9223372036854775809
check "rma fadd addend below -2^63: says bad addend" err_has "bad addend"
usage_err "rma writeimm without IMM" rma host1 writeimm 0 /etc/hostname
usage_err "rma writeimm immediate over 2^32" rma host1 writeimm 0 /etc/hostname 4294967296
check "rma writeimm immediate over 2^32: says so" err_has "bad immediate '4294967296'"
usage_err "rma bad port" rma -p 0 host1 read 0 1
usage_err "rma bad timeout" rma --timeout 0 host1 read 0 1
usage_err "ping --timeout 500ms (no whole second)" ping --timeout 500ms host1
check "ping --timeout 500ms: says seconds, names the units" err_has "expected 1 to [0-9]+ seconds \(a bare number, or with s, m or h\)"
usage_err "msg --timeout 2d" msg send --timeout 2d host1 svc /dev/null
run ping --timeout 2m host1
check "ping --timeout 2m is taken (no usage error: exits 1 without the module)" rc_is 1
run rma --timeout 1m host1 read 0 1
check "rma --timeout 1m is taken (exits 1 without the module)" rc_is 1
usage_err "rma bad service" rma -S '' host1 read 0 1
usage_err "rma unknown option" rma -x host1 read 0 1

usage_err "export unknown command" export frob
check "export unknown command: names it" err_has "unknown export command 'frob'"
usage_err "export add without NAME" export add
check "export add without NAME: says so" err_has 'export add: missing NAME'
usage_err "export add without PATH" export add disk1
check "export add without PATH: says so" err_has 'export add: missing PATH'
usage_err "export add bad name" export add 'my disk' ram:1M
check "export add bad name: names it" err_has "bad export name 'my disk'"
usage_err "export add name of 64 bytes" export add "$(printf 'x%.0s' $(seq 64))" ram:1M
check "export add name of 64 bytes: says how long" err_has 'expected 1 to 63 characters'
usage_err "export add name '..'" export add .. ram:1M
usage_err "export add name with a slash" export add a/b ram:1M
usage_err "export add ram:0" export add disk1 ram:0
check "export add ram:0: says bad size" err_has "bad size in 'ram:0'"
usage_err "export add ram: without size" export add disk1 ram:
usage_err "export add ram:1000 (no multiple of 4 KiB)" export add disk1 ram:1000
usage_err "export add ram:6K (no multiple of 4 KiB)" export add disk1 ram:6K
usage_err "export add ram with a bad suffix" export add disk1 ram:1X
usage_err "export add ram over 2^64" export add disk1 ram:17179869184G
usage_err "export add extra word" export add disk1 ram:1M more
check "export add extra word: names it" err_has "unexpected argument 'more'"
usage_err "export add --uuid of RAM" export add disk1 ram:1M --uuid 0f4e2a6c-1d3b-4c5e-9a7b-2c1d0e9f8a7b
check "export add --uuid of RAM: says why not" err_has "--uuid does not apply to RAM"
usage_err "export add --uuid all zero" export add disk1 /dev/null --uuid 00000000-0000-0000-0000-000000000000
check "export add --uuid all zero: names it" err_has "bad --uuid '00000000-0000-0000-0000-000000000000'"
usage_err "export add --uuid short" export add disk1 /dev/null --uuid 0f4e2a6c-1d3b-4c5e-9a7b-2c1d0e9f8a7
usage_err "export add --uuid misplaced dash" export add disk1 /dev/null --uuid 0f4e2a6c1-d3b-4c5e-9a7b-2c1d0e9f8a7b
usage_err "export add --uuid not hex" export add disk1 /dev/null --uuid 0f4e2a6c-1d3b-4c5e-9a7b-2c1d0e9f8a7g
printf '%s\n' '# a comment' '' 'set loss_timeout_ms 60000' 'listen -a 198.18.0.1 -p 7471   # trailing' \
	'export db /dev/vdb --uuid 0f4e2a6c-1d3b-4c5e-9a7b-2c1d0e9f8a7b' \
	'map -p 7471 198.18.0.1 db --loss-timeout forever' >"$T/rdmx.conf"
run config show -f "$T/rdmx.conf"
check "config show: the file's four commands, comments gone" \
	eval 'rc_is 0 && [ "$(cat "$T/out")" = "$(printf "%s\n" "set loss_timeout_ms 60000" "listen -a 198.18.0.1 -p 7471" "export db /dev/vdb --uuid 0f4e2a6c-1d3b-4c5e-9a7b-2c1d0e9f8a7b" "map -p 7471 198.18.0.1 db --loss-timeout forever")" ]'
RDMX_CONFIG=$T/rdmx.conf run -j config
check "-j config (show, RDMX_CONFIG): commands and their words" \
	json_true 'len(d) == 4 and d[0] == {"command": "set", "args": ["loss_timeout_ms", "60000"]} and d[3]["args"][-1] == "forever"'
printf 'frob x\n' >"$T/bad.conf"
run config show -f "$T/bad.conf"
check "config show of an unknown command: exits 1, names the line" \
	eval 'rc_is 1 && err_has "bad\.conf:1: unknown command .frob."'
printf '\nset no_such 1\n' >"$T/bad.conf"
run config show -f "$T/bad.conf"
check "config show of an unknown tunable: exits 1, names the line" \
	eval 'rc_is 1 && err_has "bad\.conf:2: expected .set NAME VALUE."'
printf 'export onlyname\n' >"$T/bad.conf"
run config show -f "$T/bad.conf"
check "config show of an export without PATH: exits 1" eval 'rc_is 1 && err_has "bad\.conf:1: expected .export NAME PATH"'
printf 'map 198.18.0.1\n' >"$T/bad.conf"
run config show -f "$T/bad.conf"
check "config show of a map without NAME: exits 1, map's reason and the line" \
	eval 'rc_is 1 && err_has "missing NAME" && err_has "bad\.conf:1: expected .map \[-p PORT\] HOST NAME"'
printf 'listen -a 198.18.0.1\nlisten -p 0\n' >"$T/bad.conf"
run config show -f "$T/bad.conf"
check "config show of a listen with a bad port: exits 1, names line 2" \
	eval 'rc_is 1 && err_has "bad port .0." && err_has "bad\.conf:2: expected .listen"'
printf 'map -p 7471 198.18.0.1 db --loss-timeout 2d\n' >"$T/bad.conf"
run config show -f "$T/bad.conf"
check "config show of a map with a bad option value: exits 1" \
	eval 'rc_is 1 && err_has "bad loss timeout .2d." && err_has "bad\.conf:1:"'
run config show -f "$T/no-such.conf"
check "config show of a missing file: exits 1, says so" eval 'rc_is 1 && err_has "no-such\.conf: No such file"'
usage_err "config apply --server --client" config apply --server --client
usage_err "config apply --retry 5x" config apply --retry 5x
usage_err "config show --retry" config show --retry 5s
usage_err "config show extra word" config show more
run config save -f "$T/saved.conf"
check "config save without a module: exits 1, writes nothing" \
	eval 'rc_is 1 && err_has "no rdmx module loaded" && [ ! -e "$T/saved.conf" ]'
usage_err "export add --lbs 1024" export add disk1 ram:1M --lbs 1024
check "export add --lbs 1024: says 512 or 4096" err_has "bad --lbs '1024': expected 512 or 4096"
usage_err "export add --lbs empty" export add disk1 ram:1M --lbs=
usage_err "export add --lbs without value" export add disk1 ram:1M --lbs
usage_err "export add --ro with a value" export add disk1 ram:1M --ro=1
check "export add --ro with a value: says so" err_has "option '--ro=1' takes no value"
usage_err "export add bad --allow address" export add disk1 ram:1M --allow 10.0.0.300
check "export add bad --allow address: names it" err_has "bad --allow '10.0.0.300'"
usage_err "export add --allow host name" export add disk1 ram:1M --allow localhost
usage_err "export add --allow IPv4 prefix 33" export add disk1 ram:1M --allow 10.0.0.0/33
usage_err "export add --allow IPv6 prefix 129" export add disk1 ram:1M --allow fd00::/129
usage_err "export add --allow empty prefix" export add disk1 ram:1M --allow 10.0.0.0/
usage_err "export add --allow negative prefix" export add disk1 ram:1M --allow 10.0.0.0/-1
usage_err "export add --allow 17 entries" export add disk1 ram:1M \
	$(for i in $(seq 17); do echo "--allow 10.0.0.$i"; done)
check "export add --allow 17 entries: says at most 16" err_has 'too many --allow: at most 16'
usage_err "export add unknown option" export add disk1 ram:1M --rw
usage_err "export del without NAME" export del
check "export del without NAME: says so" err_has 'export del: missing NAME'
usage_err "export del bad name" export del 'a b'
usage_err "export del two names" export del disk1 disk2
usage_err "export del unknown option" export del disk1 --now
usage_err "export resize without NAME" export resize
check "export resize without NAME: says so" err_has 'export resize: missing NAME'
usage_err "export resize bad name" export resize 'a b'
usage_err "export resize SIZE 1000 (no multiple of 4 KiB)" export resize disk1 1000
check "export resize SIZE 1000: names it" err_has "bad SIZE '1000': expected a non-zero multiple of 4096"
usage_err "export resize SIZE 0" export resize disk1 0
usage_err "export resize SIZE with a bad suffix" export resize disk1 1X
usage_err "export resize SIZE over 2^64" export resize disk1 17179869184G
usage_err "export resize extra word" export resize disk1 1G more
check "export resize extra word: names it" err_has "unexpected argument 'more'"
usage_err "export resize unknown option" export resize disk1 --force
run export resize -h
check "export resize -h: exits 0, shows its usage" eval 'rc_is 0 && out_has "export resize NAME \[ SIZE \]"'
usage_err "export list extra word" export list disk1
usage_err "export show bad name" export show 'a b'
usage_err "export show two names" export show disk1 disk2

usage_err "map without HOST" map
check "map without HOST: says so" err_has 'missing HOST'
usage_err "map without NAME" map host1
check "map without NAME: says so" err_has 'missing NAME'
usage_err "map bad export name" map host1 'a b'
check "map bad export name: names it" err_has "bad export name 'a b'"
usage_err "map extra word" map host1 disk1 more
check "map extra word: names it" err_has "unexpected argument 'more'"
usage_err "map bad port" map -p 0 host1 disk1
check "map bad port: says bad port" err_has "bad port '0'"
usage_err "map queues 0" map host1 disk1 --queues 0
check "map queues 0: names the bounds" err_has "bad queue count '0': expected 1 to 64"
usage_err "map queues 65" map host1 disk1 --queues 65
usage_err "map depth 0" map host1 disk1 --depth 0
usage_err "map depth 1025" map host1 disk1 --depth 1025
check "map depth 1025: names the bounds" err_has "bad depth '1025': expected 1 to 1024"
usage_err "map depth not a number" map host1 disk1 -d many
usage_err "map loss timeout 0" map host1 disk1 --loss-timeout 0
usage_err "map loss timeout over an hour" map host1 disk1 --loss-timeout 3601
check "map loss timeout over an hour: names the bounds" err_has "bad loss timeout '3601': expected 1ms to 1h, or forever \(a bare number is seconds"
usage_err "map HOST:PORT with a bad port" map host1:99999 disk1
check "map HOST:PORT with a bad port: names the forms" err_has "expected HOST, HOST:PORT or \[ADDR\]:PORT"
usage_err "map loss timeout with an unknown unit" map host1 disk1 --loss-timeout 5d
usage_err "map loss timeout of 61m" map host1 disk1 --loss-timeout 61m
usage_err "map loss timeout -1" map host1 disk1 --loss-timeout -1
usage_err "map timeout 2h" map host1 disk1 --timeout 2h
usage_err "map timeout 0" map host1 disk1 --timeout 0
usage_err "map timeout 1.5" map host1 disk1 --timeout 1.5
usage_err "map --ro with a value" map host1 disk1 --ro=yes
usage_err "map unknown option" map host1 disk1 --force
usage_err "map list extra word" map list all
usage_err "map show bad device" map show sda
check "map show bad device: names it" err_has "bad device 'sda'"
usage_err "map show two devices" map show 1 2

usage_err "unmap without DEV" unmap
check "unmap without DEV: says so" err_has 'missing DEV'
usage_err "unmap bad device" unmap /dev/sda
check "unmap bad device: names it and the forms" err_has "bad device '/dev/sda': expected /dev/rdmxbN, rdmxbN or N"
usage_err "unmap rdmxb without a number" unmap rdmxb
usage_err "unmap leading zero" unmap rdmxb01
usage_err "unmap negative" unmap -1
usage_err "unmap over 2^32" unmap 4294967296
usage_err "unmap two devices" unmap 1 2
usage_err "unmap unknown option" unmap 1 --now
usage_err "unmap --force with a value" unmap 1 --force=1

# ---- listen, session, msg, ping without the module ----

run listen add
check "listen add without the module exits 1" rc_is 1
check "listen add without the module suggests modprobe" err_has "modprobe rdmx"
run listen
check "listen without the module exits 1" rc_is 1
check "listen without the module suggests modprobe" err_has "modprobe rdmx"
run session close 3
check "session close without the module exits 1" rc_is 1
run ping -c 1 127.0.0.1
check "ping without the module exits 1" rc_is 1
check "ping without the module suggests modprobe" err_has "modprobe rdmx"
run -j ping 127.0.0.1
check "-j ping without the module prints no JSON" out_empty
run msg send 127.0.0.1 files /etc/hostname
check "msg send without the module exits 1" rc_is 1
run msg send 127.0.0.1 files "$T/no-such-file"
check "msg send of a missing file exits 1" rc_is 1
check "msg send of a missing file names it" err_has "no-such-file: No such file"
run msg send 127.0.0.1 files "$T"
check "msg send of a directory exits 1" rc_is 1
check "msg send of a directory says so" err_has "Is a directory"
truncate -s $((4 * 1024 * 1024 + 1)) "$T/big"
run msg send 127.0.0.1 files /etc/hostname "$T/big"
check "msg send of a file over RDMX_MSG_MAX exits 1" rc_is 1
check "msg send of a file over RDMX_MSG_MAX says so" err_has "big: 4194305 bytes, more than the largest message \(4194304 bytes\)"
check "msg send of a file over RDMX_MSG_MAX fails before the module" not_err_has 'modprobe'
run msg recv files --count 1 --dir "$T/no-such-dir"
check "msg recv into a missing dir exits 1" rc_is 1
check "msg recv into a missing dir names it" err_has "no-such-dir: No such file"
run msg recv files --count 1 --dir "$T"
check "msg recv without the module exits 1" rc_is 1
run rma 127.0.0.1 read 0 16
check "rma without the module exits 1" rc_is 1
check "rma without the module suggests modprobe" err_has "modprobe rdmx"
run -j rma 127.0.0.1 read 0 16
check "-j rma without the module prints no JSON" out_empty
run rma 127.0.0.1 write 0 "$T/no-such-file"
check "rma write of a missing file exits 1" rc_is 1
check "rma write of a missing file names it, before the module" eval 'err_has "no-such-file: No such file" && not_err_has modprobe'
: >"$T/empty"
run rma 127.0.0.1 write 0 "$T/empty"
check "rma write of an empty file exits 1" rc_is 1
check "rma write of an empty file says so" err_has 'empty: a write moves at least 1 byte'
run mr serve --size 4K
check "mr serve without the module exits 1" rc_is 1
check "mr serve without the module suggests modprobe" err_has "modprobe rdmx"
run mr serve --fill "$T/no-such-file"
check "mr serve --fill of a missing file exits 1" rc_is 1
check "mr serve --fill of a missing file names it" err_has "no-such-file: No such file"
run mr serve --fill "$T/empty"
check "mr serve --fill of an empty file without --size exits 1" eval 'rc_is 1 && err_has "empty, and no --size given"'
printf '0123456789' >"$T/ten"
run mr serve --size 9 --fill "$T/ten"
check "mr serve --fill of a file bigger than --size exits 1" eval 'rc_is 1 && err_has "more than the region.s 9 bytes" && not_err_has modprobe'
run listen list
check "listen list without the module exits 1" rc_is 1
check "listen list without the module suggests modprobe" err_has "modprobe rdmx"
run session
check "session without the module exits 1" rc_is 1
run -j session list
check "-j session list without the module prints no JSON" out_empty
S=$T/sys-nomsg
mkdir -p "$S/kernel/rdmx" "$S/module/rdmx"
RDMX_SYSFS=$S run session list
check "session list, module without sessions in sysfs: exits 1" rc_is 1
check "session list, module without sessions in sysfs: says no message service" err_has "no message service"
run export add disk1 ram:64M
check "export add without the module exits 1" rc_is 1
check "export add without the module suggests modprobe" err_has "modprobe rdmx"
run export add disk1 "$T/no-such-file"
check "export add of a missing file exits 1, naming it, before the module" \
	eval 'rc_is 1 && err_has "no-such-file: No such file" && not_err_has modprobe'
run export add disk1 "$T"
check "export add of a directory exits 1, saying what PATH must be" \
	eval 'rc_is 1 && err_has "neither a block device nor a regular file" && not_err_has modprobe'
run export add disk1 "$T/empty"
check "export add of an empty file exits 1, saying so" \
	eval 'rc_is 1 && err_has "empty: empty file" && not_err_has modprobe'
run export del disk1
check "export del without the module exits 1" eval 'rc_is 1 && err_has "modprobe rdmx"'
run export resize disk1 1G
check "export resize without the module exits 1" eval 'rc_is 1 && err_has "modprobe rdmx"'
run map 127.0.0.1 disk1
check "map without the module exits 1" eval 'rc_is 1 && err_has "modprobe rdmx"'
run -j map 127.0.0.1 disk1
check "-j map without the module prints no JSON" out_empty
run unmap 0
check "unmap without the module exits 1" eval 'rc_is 1 && err_has "modprobe rdmx"'
run export list
check "export list without the module exits 1" eval 'rc_is 1 && err_has "modprobe rdmx"'
run map list
check "map list without the module exits 1" eval 'rc_is 1 && err_has "modprobe rdmx" && out_empty'
S=$T/sys-noblk
mkdir -p "$S/kernel/rdmx/sessions"
RDMX_SYSFS=$S run export list
check "export list, module without exports in sysfs: exits 1, says no block service" \
	eval 'rc_is 1 && err_has "no block service"'
RDMX_SYSFS=$S run map list
check "map list without any rdmx disk: exits 0, prints nothing" eval 'rc_is 0 && out_empty'
RDMX_SYSFS=$S run -j map list
check "-j map list without any rdmx disk: []" json_true 'd == []'

# ---- monitor: events from a fake sysfs that changes under it ----

not_grep_sda() { ! grep -q sda "$T/mon.txt"; }

S=$T/sys-mon
mkdir -p "$S/kernel/rdmx/sessions/3" "$S/block/rdmxb0/rdmx" "$S/block/sda"
put "$S/kernel/rdmx/sessions/3/peer" 198.18.0.2:7471
put "$S/kernel/rdmx/sessions/3/state" connected
put "$S/block/rdmxb0/rdmx/server" 198.18.0.1:7471
put "$S/block/rdmxb0/rdmx/export" db
put "$S/block/rdmxb0/rdmx/state" live
RDMX_SYSFS=$S "$BIN" monitor --interval 100ms --duration 3s >"$T/mon.txt" 2>&1 &
mon=$!
RDMX_SYSFS=$S "$BIN" -j monitor -i 100ms -d 3 >"$T/mon.json" 2>&1 &
monj=$!
sleep 1
# Each change at once, as sysfs makes it: a directory goes or comes whole.
put "$S/block/rdmxb0/rdmx/state" reconnecting
mv "$S/kernel/rdmx/sessions/3" "$T/session-3-gone"
put "$T/export-e1/path" ram:4096
mkdir -p "$S/kernel/rdmx/exports"
mv "$T/export-e1" "$S/kernel/rdmx/exports/e1"
wait "$mon"
rc=$?
wait "$monj"
check "monitor --duration 3s exits 0" rc_is 0
check "monitor: what runs at the start is new" eval 'grep -Eq "^[0-9:.]+ session 3 198\.18\.0\.2:7471: new, connected$" "$T/mon.txt" && grep -Eq "^[0-9:.]+ map rdmxb0 198\.18\.0\.1:7471 db: new, live$" "$T/mon.txt"'
check "monitor: a state change, a session gone, an export new" eval 'grep -Eq " map rdmxb0 .*: live -> reconnecting$" "$T/mon.txt" && grep -Eq " session 3 .*: gone" "$T/mon.txt" && grep -Eq " export e1 ram:4096: new$" "$T/mon.txt"'
check "monitor: no line for sda" not_grep_sda
check "-j monitor: one JSON object per line, the events" python3 -c '
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
sys.exit(0 if len(ev) == 5 and {(e["kind"], e["event"]) for e in ev} == {("session", "new"), ("map", "new"), ("map", "state"), ("session", "gone"), ("export", "new")} and [e for e in ev if e["event"] == "state"][0]["from"] == "live" else 1)' "$T/mon.json"
usage_err "monitor --interval 0" monitor --interval 0
usage_err "monitor --interval 3601 (seconds: over an hour)" monitor --interval 3601
usage_err "monitor extra word" monitor now

# ---- session and listen list from a fake sysfs ----

# fake_session ROOT ID ROLE STATE LOCAL PEER DEVICE: with every counter
fake_session() {
	local d=$1/kernel/rdmx/sessions/$2 a v=1
	put "$d/role" "$3"
	put "$d/state" "$4"
	put "$d/local" "$5"
	put "$d/peer" "$6"
	put "$d/device" "$7"
	for a in generation qps queue_depth credits channels msgs_tx msgs_rx \
		 bytes_tx bytes_rx retransmits reconnects hb_misses unacked \
		 max_qps sq_stalls; do
		put "$d/$a" "$v"
		v=$((v + 1))
	done
}

S=$T/sys-sess
fake_session "$S" 1 client connected 10.0.0.1:40000 10.0.0.2:7471 rxe0
fake_session "$S" 10 server closing 10.0.0.2:7471 10.0.0.3:40001 siw0
fake_session "$S" 2 server reconnecting '[fe80::1]:7471' '[fe80::2]:51000' ""
put "$S/kernel/rdmx/sessions/1/bytes_tx" 12345678901234
rm "$S/kernel/rdmx/sessions/10/credits"
put "$S/kernel/rdmx/sessions/10/local" ""
mkdir -p "$S/kernel/rdmx/sessions/.hidden" "$S/kernel/rdmx/sessions/notanid"
put "$S/kernel/rdmx/listeners/1/addr" '[::]:7471'
put "$S/kernel/rdmx/listeners/1/persistent" 1
put "$S/kernel/rdmx/listeners/1/device" ""
put "$S/kernel/rdmx/listeners/3/addr" 10.0.0.1:9000
put "$S/kernel/rdmx/listeners/3/persistent" 0
put "$S/kernel/rdmx/listeners/3/device" rxe0

RDMX_SYSFS=$S run session list
check "session list exits 0" rc_is 0
check "session list: first line of session 1" out_has '^1: client connected local 10\.0\.0\.1:40000 peer 10\.0\.0\.2:7471 device rxe0 generation 1$'
check "session list: counters of session 1" out_has '^    qps 2 max_qps 14 queue_depth 3 credits 4 channels 5 msgs_tx 6 msgs_rx 7 bytes_tx 12345678901234 bytes_rx 9 retransmits 10 reconnects 11 hb_misses 12 sq_stalls 15 unacked 13$'
check "session list: an empty address is '-'" out_has '^10: server closing local - peer 10\.0\.0\.3:40001 device siw0'
check "session list: IPv6 session without device" out_has '^2: server reconnecting local \[fe80::1\]:7471 peer \[fe80::2\]:51000 generation 1$'
check "session list: a missing counter is '-'" out_has '^    qps 2 max_qps 14 queue_depth 3 credits - channels 5'
check "session list: in id order, 1 2 10" eval '[ "$(grep -oE "^[0-9]+:" "$T/out" | tr -d "\n")" = "1:2:10:" ]'
check "session list: entries not named by an id are left out" not_out_has 'notanid|hidden'
RDMX_SYSFS=$S run session
check "session alone lists too" out_has '^10: server closing'
RDMX_SYSFS=$S run -j session list
check "-j session list is JSON" is_json
check "-j session list: an array of 3 in id order" json_true '[s["id"] for s in d] == [1, 2, 10]'
check "-j session list: keys" json_true 'set(d[0]) == {"id", "role", "state", "local", "peer", "device", "generation", "qps", "max_qps", "queue_depth", "credits", "channels", "msgs_tx", "msgs_rx", "bytes_tx", "bytes_rx", "retransmits", "reconnects", "hb_misses", "sq_stalls", "unacked"}'
check "-j session list: values" json_true 'd[0]["role"] == "client" and d[0]["state"] == "connected" and d[0]["peer"] == "10.0.0.2:7471" and d[0]["device"] == "rxe0" and d[0]["bytes_tx"] == 12345678901234 and d[0]["hb_misses"] == 12 and d[0]["sq_stalls"] == 15'
check "-j session list: no device is null, IPv6 kept" json_true 'd[1]["device"] is None and d[1]["local"] == "[fe80::1]:7471"'
check "-j session list: a missing counter is null" json_true 'd[2]["credits"] is None and d[2]["channels"] == 5'
check "-j session list: an empty address is null" json_true 'd[2]["local"] is None and d[2]["peer"] == "10.0.0.3:40001"'
RDMX_SYSFS=$S run -j -p session list
check "-j -p session list is JSON" is_json
RDMX_SYSFS=$S run -j session show 10
check "-j session show 10: only session 10" json_true 'len(d) == 1 and d[0]["id"] == 10'
RDMX_SYSFS=$S run session show 2
check "session show 2: only session 2" eval 'out_has "^2: " && not_out_has "^1: |^10: "'
RDMX_SYSFS=$S run session show 99
check "session show of an unknown id exits 1" rc_is 1
check "session show of an unknown id says so" err_has 'no session 99'
S2=$T/sys-nosess
mkdir -p "$S2/kernel/rdmx/sessions" "$S2/kernel/rdmx/listeners"
RDMX_SYSFS=$S2 run -j session list
check "-j session list with no sessions: []" json_true 'd == []'
RDMX_SYSFS=$S2 run session list
check "session list with no sessions: exits 0, prints nothing" eval 'rc_is 0 && out_empty'

RDMX_SYSFS=$S run listen list
check "listen list exits 0" rc_is 0
check "listen list: the wildcard persistent one" out_has '^1: \[::\]:7471 persistent$'
check "listen list: the implicit one with its device" out_has '^3: 10\.0\.0\.1:9000 implicit device rxe0$'
RDMX_SYSFS=$S run -j listen list
check "-j listen list is JSON" is_json
check "-j listen list: values" json_true 'd == [{"id": 1, "addr": "[::]:7471", "persistent": True, "device": None}, {"id": 3, "addr": "10.0.0.1:9000", "persistent": False, "device": "rxe0"}]'
RDMX_SYSFS=$S run listen show
check "listen show is listen list" out_has '^3: '

# ---- export and map list from a fake sysfs ----

# fake_export ROOT NAME PATH SIZE LBS RO ALLOW [SECURE [ACCESS]]: with
# every counter and no map; SECURE defaults to 1, ACCESS to exclusive
fake_export() {
	local d=$1/kernel/rdmx/exports/$2 a v=1
	put "$d/path" "$3"
	put "$d/size" "$4"
	put "$d/logical_block_size" "$5"
	put "$d/read_only" "$6"
	put "$d/allow" "$7"
	put "$d/secure" "${8:-1}"
	put "$d/access" "${9:-exclusive}"
	put "$d/uuid" "${10:-5a1c8e2f-3b4d-8e6f-9a0b-1c2d3e4f5a6b}"
	put "$d/identity" "${11:-file}"
	: >"$d/maps"
	for a in clients reads writes read_bytes write_bytes errors; do
		put "$d/$a" "$v"
		v=$((v + 1))
	done
}

# fake_disk ROOT N SERVER EXPORT STATE SECTORS RO: with every counter
fake_disk() {
	local b=$1/block/rdmxb$2 a v=1
	local d=$b/rdmx
	put "$b/size" "$6"
	put "$b/ro" "$7"
	put "$d/server" "$3"
	put "$d/export" "$4"
	put "$d/state" "$5"
	for a in nr_queues queue_depth loss_timeout_ms reconnects reads writes \
		 read_bytes write_bytes in_flight errors timeouts slow requeues \
		 inline_reads cmd_batched cmd_batches imm_writes staged_writes; do
		put "$d/$a" "$v"
		v=$((v + 1))
	done
}

S=$T/sys-blk
fake_export "$S" ram ram:67108864 67108864 512 0 "" 0 shared
printf '%s\n' '198.18.0.2 0f4e2a6c-1d3b-4c5e-9a7b-2c1d0e9f8a7b rw 2' \
	'fd00::2 7d1c9b8a-0e2f-4a3b-8c4d-5e6f7a8b9c0d ro 1' \
	>"$S/kernel/rdmx/exports/ram/maps"
fake_export "$S" file /var/tmp/disk.img 1048576 4096 1 "198.18.0.0/24 ::1/128"
fake_export "$S" nullb /dev/nullb0 268435456 512 0 "198.18.0.2/32"
put "$S/kernel/rdmx/exports/file/write_bytes" 12345678901234
rm "$S/kernel/rdmx/exports/nullb/errors" "$S/kernel/rdmx/exports/nullb/allow" \
	"$S/kernel/rdmx/exports/nullb/secure" "$S/kernel/rdmx/exports/nullb/access" \
	"$S/kernel/rdmx/exports/nullb/maps" "$S/kernel/rdmx/exports/nullb/uuid" \
	"$S/kernel/rdmx/exports/nullb/identity"
fake_disk "$S" 0 198.18.0.1:7471 ram live 131072 0
fake_disk "$S" 10 '[fe80::1]:7471' file reconnecting 2048 1
fake_disk "$S" 2 198.18.0.1:7000 nullb dead 524288 0
put "$S/block/rdmxb0/rdmx/read_bytes" 12345678901234
rm "$S/block/rdmxb2/rdmx/requeues" "$S/block/rdmxb2/ro"
mkdir -p "$S/block/sda" "$S/block/rdmxb3" "$S/block/rdmxbx/rdmx"

RDMX_SYSFS=$S run export list
check "export list exits 0" rc_is 0
check "export list: the ram export" out_has '^ram: ram:67108864 size 67108864 lbs 512 rw insecure access shared allow any$'
check "export list: the read-only file with two prefixes" out_has '^file: /var/tmp/disk\.img size 1048576 lbs 4096 ro secure access exclusive allow 198\.18\.0\.0/24,::1/128$'
check "export list: uuid and counters" out_has '^    uuid 5a1c8e2f-3b4d-8e6f-9a0b-1c2d3e4f5a6b identity file clients 1 reads 2 writes 3 read_bytes 4 write_bytes 12345678901234 errors 6$'
check "export list: a line per map" eval 'out_has "^    map 198\.18\.0\.2 0f4e2a6c-1d3b-4c5e-9a7b-2c1d0e9f8a7b rw queues 2$" && out_has "^    map fd00::2 7d1c9b8a-0e2f-4a3b-8c4d-5e6f7a8b9c0d ro queues 1$"'
check "export list: a missing file is '-'" eval 'out_has "^nullb: /dev/nullb0 size 268435456 lbs 512 rw - access - allow -$" && out_has "^    uuid - identity - clients 1 .* errors -$"'
check "export list: in name order" eval '[ "$(grep -oE "^[a-z]+:" "$T/out" | tr -d "\n")" = "file:nullb:ram:" ]'
RDMX_SYSFS=$S run export
check "export alone lists too" out_has '^ram: '
RDMX_SYSFS=$S run -j export list
check "-j export list is JSON" is_json
check "-j export list: keys" json_true 'set(d[0]) == {"name", "path", "size", "logical_block_size", "read_only", "secure", "access", "allow", "uuid", "identity", "clients", "reads", "writes", "read_bytes", "write_bytes", "errors", "maps"}'
check "-j export list: access and maps" json_true 'd[2]["access"] == "shared" and d[0]["access"] == "exclusive" and d[1]["access"] is None and d[0]["maps"] == [] and d[1]["maps"] is None and d[2]["maps"] == [{"host": "198.18.0.2", "map": "0f4e2a6c-1d3b-4c5e-9a7b-2c1d0e9f8a7b", "mode": "rw", "queues": 2}, {"host": "fd00::2", "map": "7d1c9b8a-0e2f-4a3b-8c4d-5e6f7a8b9c0d", "mode": "ro", "queues": 1}]'
check "-j export list: values" json_true 'd[0]["name"] == "file" and d[0]["read_only"] is True and d[0]["allow"] == ["198.18.0.0/24", "::1/128"] and d[0]["write_bytes"] == 12345678901234 and d[0]["logical_block_size"] == 4096'
check "-j export list: empty allow-list is [], a missing one null" json_true 'd[2]["allow"] == [] and d[1]["allow"] is None and d[1]["errors"] is None and d[2]["read_only"] is False'
check "-j export list: secure, insecure, missing" json_true 'd[0]["secure"] is True and d[2]["secure"] is False and d[1]["secure"] is None'
check "-j export list: uuid, or null" json_true 'd[0]["uuid"] == "5a1c8e2f-3b4d-8e6f-9a0b-1c2d3e4f5a6b" and d[1]["uuid"] is None'
RDMX_SYSFS=$S run -j export show ram
check "-j export show ram: only that one" json_true 'len(d) == 1 and d[0]["name"] == "ram" and d[0]["size"] == 67108864'
RDMX_SYSFS=$S run export show nosuch
check "export show of an unknown export: exits 1, says so" eval 'rc_is 1 && err_has "no export nosuch"'
S2=$T/sys-noexp
mkdir -p "$S2/kernel/rdmx/exports"
RDMX_SYSFS=$S2 run -j export list
check "-j export list with no exports: []" json_true 'd == []'

RDMX_SYSFS=$S run map list
check "map list exits 0" rc_is 0
check "map list: first line of rdmxb0" out_has '^rdmxb0: /dev/rdmxb0 server 198\.18\.0\.1:7471 export ram state live size 67108864 rw$'
check "map list: counters of rdmxb0" out_has '^    nr_queues 1 queue_depth 2 loss_timeout_ms 3 reconnects 4 reads 5 writes 6 read_bytes 12345678901234 write_bytes 8 in_flight 9 errors 10 timeouts 11 slow 12 requeues 13 inline_reads 14 cmd_batched 15 cmd_batches 16 imm_writes 17 staged_writes 18$'
check "map list: IPv6 server, read-only" out_has '^rdmxb10: /dev/rdmxb10 server \[fe80::1\]:7471 export file state reconnecting size 1048576 ro$'
check "map list: a missing file is '-'" eval 'out_has "^rdmxb2: .* state dead size 268435456 -$" && out_has "timeouts 11 slow 12 requeues - inline_reads 14 cmd_batched 15 cmd_batches 16 imm_writes 17 staged_writes 18$"'
check "map list: in number order, 0 2 10" eval '[ "$(grep -oE "^rdmxb[0-9]+:" "$T/out" | tr -d "\n")" = "rdmxb0:rdmxb2:rdmxb10:" ]'
check "map list: other disks, and rdmxb without rdmx/, left out" not_out_has 'sda|rdmxb3|rdmxbx'
RDMX_SYSFS=$S run config save -f "$T/saved-maps.conf"
check "config save: a map's loss timeout in milliseconds, with the unit" \
	eval 'rc_is 0 && grep -qx "map -p 7471 198.18.0.1 ram --queues 1 --depth 2 --loss-timeout 3ms" "$T/saved-maps.conf"'
put "$S/block/rdmxb0/rdmx/loss_timeout_ms" 4294967295
RDMX_SYSFS=$S run config save -f "$T/saved-maps.conf"
check "config save: a loss timeout of forever" \
	grep -qx "map -p 7471 198.18.0.1 ram --queues 1 --depth 2 --loss-timeout forever" "$T/saved-maps.conf"
put "$S/block/rdmxb0/rdmx/loss_timeout_ms" 3
printf '%s\n' 'map 198.18.0.1:7471 ram' 'map -p 7000 198.18.0.1 nullb --ro' \
	'map -p 7471 [fe80::1] file' >"$T/present.conf"
RDMX_SYSFS=$S run config apply --client -f "$T/present.conf"
check "config apply: maps there already (HOST:PORT, -p, [ADDR]) are left alone" \
	eval 'rc_is 0 && [ ! -s "$T/out" ] && [ ! -s "$T/err" ]'
RDMX_SYSFS=$S run -j map list
check "-j map list is JSON" is_json
check "-j map list: keys" json_true 'set(d[0]) == {"name", "index", "dev", "server", "export", "state", "size", "read_only", "nr_queues", "queue_depth", "loss_timeout_ms", "reconnects", "reads", "writes", "read_bytes", "write_bytes", "in_flight", "errors", "timeouts", "slow", "requeues", "inline_reads", "cmd_batched", "cmd_batches", "imm_writes", "staged_writes"}'
check "-j map list: values" json_true '[x["index"] for x in d] == [0, 2, 10] and d[0]["dev"] == "/dev/rdmxb0" and d[0]["size"] == 67108864 and d[0]["read_bytes"] == 12345678901234 and d[2]["read_only"] is True and d[2]["server"] == "[fe80::1]:7471"'
check "-j map list: missing is null" json_true 'd[1]["read_only"] is None and d[1]["requeues"] is None'
for dev in /dev/rdmxb10 rdmxb10 10; do
	RDMX_SYSFS=$S run -j map show "$dev"
	check "-j map show $dev: only rdmxb10" json_true 'len(d) == 1 and d[0]["index"] == 10'
done
RDMX_SYSFS=$S run map show 3
check "map show of a disk without rdmx/: exits 1, says so" eval 'rc_is 1 && err_has "no /dev/rdmxb3 mapped"'

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

# ---- map -s: the serial, per-queue counters, latency ----

S=$T/sys-stats
mkdir -p "$S/kernel/rdmx"
fake_disk "$S" 0 198.18.0.1:7471 ram live 2048 0
put "$S/block/rdmxb0/rdmx/nr_queues" 2
put "$S/block/rdmxb0/rdmx/serial" 5a1c8e2f-3b4d-8e6f-9a0b-1c2d3e4f5a6b
put "$S/block/rdmxb0/rdmx/lat_hist" "0 0 0 0 0 0 10 80 5 4 1 0 0 0 0 0 0 0 0 0 0 0 0 0"
for q in 0 1; do
	mkdir -p "$S/block/rdmxb0/rdmx/queues/$q"
	put "$S/block/rdmxb0/rdmx/queues/$q/reads" $((q + 40))
	put "$S/block/rdmxb0/rdmx/queues/$q/lat_hist" "0 0 0 0 0 0 0 0 0 0 100 0 0 0 0 0 0 0 0 0 0 0 0 0"
done
RDMX_SYSFS=$S run -s map list
check "-s map list: serial, latency bounds and histogram" \
	out_has '^    serial 5a1c8e2f-3b4d-8e6f-9a0b-1c2d3e4f5a6b latency p50 <256 us p99 <1024 us hist 0 0 0 0 0 0 10 80 5 4 1 0( 0)+$'
check "-s map list: a line per queue" \
	eval 'out_has "^    queue 0: reads 40 .* latency p50 <2048 us p99 <2048 us$" && out_has "^    queue 1: reads 41 "'
RDMX_SYSFS=$S run map list
check "map list without -s: no queue lines" not_out_has '^    queue '
RDMX_SYSFS=$S run -s -j map show 0
check "-s -j map show: serial, latency, two queues" \
	json_true 'd[0]["serial"].startswith("5a1c") and d[0]["latency"]["p50_us_under"] == 256 and len(d[0]["latency"]["hist"]) == 24 and [q["queue"] for q in d[0]["queues"]] == [0, 1] and d[0]["queues"][1]["reads"] == 41'

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

# ---- doctor: exports without a listener, disks not live or quick to fail ----

S=$T/sys-docblk
mkdir -p "$S/module/rdmx" "$S/kernel/rdmx/exports/db" "$S/kernel/rdmx/listeners"
fake_disk "$S" 0 198.18.0.1:7471 db dead 2048 0
fake_disk "$S" 1 198.18.0.1:7471 logs live 2048 0
put "$S/block/rdmxb1/rdmx/loss_timeout_ms" 3000
fake_disk "$S" 2 198.18.0.1:7471 home live 2048 0
put "$S/block/rdmxb2/rdmx/loss_timeout_ms" 600000
RDMX_SYSFS=$S run doctor
check "doctor: an export without a listener, fix listen add" \
	eval 'out_has "^warn +exports: 1 export but no listener: no peer can map it" && out_has "fix: rdmxctl listen add$"'
check "doctor: a dead disk is an error, fix unmap and map again" \
	eval 'out_has "^error +map: rdmxb0 \(export db of 198\.18\.0\.1:7471\) is dead" && out_has "fix: rdmxctl unmap --force rdmxb0 && rdmxctl map 198\.18\.0\.1:7471 db$"'
check "doctor: a 3 s loss timeout is a warning" out_has '^warn +map: rdmxb1 .*fails its I/O after 3000 ms'
check "doctor: a live disk with a 10 min loss timeout is ok" out_has '^ok +map: rdmxb2 \(export home of 198\.18\.0\.1:7471\) is live$'

# ---- doctor: listeners and exports, on a soft-RoCE port of eth0 ----

S=$T/sys-doclisten
mkdir -p "$S/module/rdmx" "$S/kernel/rdmx/listeners/1" "$S/kernel/rdmx/listeners/2" \
	"$S/kernel/rdmx/listeners/3"
fake_netdev "$S" eth0 0x1003 up 1500 1
fake_port "$S" rxe0 1 "4: ACTIVE" Ethernet eth0 "$V4_GID"
put "$S/kernel/rdmx/listeners/1/addr" "0.0.0.0:7471"
put "$S/kernel/rdmx/listeners/2/addr" "127.0.0.1:7000"
put "$S/kernel/rdmx/listeners/3/addr" "[2001:db8::7]:7471"
fake_export "$S" open /srv/open.img 1048576 512 0 ""
fake_export "$S" closed /srv/closed.img 1048576 512 0 "198.18.0.0/24"
fake_export "$S" failing /dev/sdz 1048576 512 0 "198.18.0.2/32"
put "$S/kernel/rdmx/exports/closed/errors" 0
put "$S/kernel/rdmx/exports/open/errors" 0
put "$S/kernel/rdmx/exports/failing/errors" 7
fake_export "$S" scratch ram:1048576 1048576 512 0 "" 1 exclusive 5a1c8e2f-3b4d-8e6f-9a0b-1c2d3e4f5a6c new
put "$S/kernel/rdmx/exports/scratch/errors" 0
RDMX_SYSFS=$S run -j doctor
check "-j doctor: a RAM export open to any host: a warning without a fix (adding it again loses its data)" \
	json_true '[f["fix"] for f in d["findings"] if f["check"] == "export" and "scratch" in f["message"] and f["level"] == "warn"] == [None]'
RDMX_SYSFS=$S run doctor
check "doctor: a wildcard listener is ok" out_has '^ok +listener: listener 0\.0\.0\.0:7471: every IPv4 address of this host$'
check "doctor: a listener on lo, which no RDMA device uses, is a warning" \
	eval 'out_has "^warn +listener: listener 127\.0\.0\.1:7000: 127\.0\.0\.1 is on lo, which no RDMA device uses" && out_has "fix: rdma link add rxe0 type rxe netdev lo$"'
check "doctor: a listener on an address this host no longer has is a warning" \
	eval 'out_has "^warn +listener: listener \[2001:db8::7\]:7471: no interface of this host has 2001:db8::7 now" && out_has "fix: rdmxctl listen del -a 2001:db8::7 -p 7471 && rdmxctl listen add -a ADDR -p 7471$"'
check "doctor: an export open to any host is a warning, fix names --allow" \
	eval 'out_has "^warn +export: export open \(/srv/open\.img\): any host that reaches this one may map it \(no --allow\)" && out_has "fix: rdmxctl export del open && rdmxctl export add open /srv/open\.img --lbs 512 --allow PREFIX$"'
check "doctor: an export with an allow-list is ok" out_has '^ok +export: export closed \(/srv/closed\.img\): allow 198\.18\.0\.0/24$'
check "doctor: an export whose store failed I/O is a warning" \
	eval 'out_has "^warn +export: export failing \(/dev/sdz\): 7 I/O errors on its backing store" && out_has "fix: dmesg \| grep -w failing$"'
fake_port "$S" mlx5_0 1 "4: ACTIVE" InfiniBand "" "$LL_GID"
RDMX_SYSFS=$S run doctor
check "doctor: with an InfiniBand port (IPoIB netdevs unknown), lo is not judged" \
	not_out_has 'listener 127\.0\.0\.1:7000: .* which no RDMA device uses'

# ---- doctor: the root causes, each one error and its consequences ----

R=$T/root-nomod; fake_root "$R"; rm "$R/proc/modules"
RDMX_ROOT=$R RDMX_SYSFS=$T/empty-sys run doctor
check "doctor, a kernel without modules: exits 1" rc_is 1
check "doctor, a kernel without modules: the root cause first, Debian's fix" \
	eval 'head -n 1 "$T/out" | grep -q "^error kernel: kernel .* cannot load modules (no /proc/modules" && out_has "fix: boot a Debian kernel \(apt-get install linux-image-amd64\)"'
check "doctor, a kernel without modules: no modprobe fix" not_out_has 'fix: modprobe'
check "doctor, a kernel without modules: module, devnode, rdma_core, devices follow from it" \
	eval '(for c in module devnode rdma_core devices soft_roce; do out_has "^warn +$c: .*follows from the kernel error above" || exit 1; done)'
RDMX_ROOT=$R RDMX_SYSFS=$T/empty-sys run -j doctor
check "-j doctor, a kernel without modules: exactly one error, the kernel's" \
	json_true 'd["errors"] == 1 and level("kernel") == ["error"]'
check "-j doctor, a kernel without modules: counts agree with findings" json_true "$COUNTS_AGREE"
R=$T/root-disabled; fake_root "$R"; echo 1 >"$R/proc/sys/kernel/modules_disabled"
RDMX_ROOT=$R RDMX_SYSFS=$T/empty-sys run doctor
check "doctor, modules_disabled 1: the root cause, reboot" \
	eval 'rc_is 1 && out_has "^error kernel: .*kernel.modules_disabled is 1" && out_has "fix: reboot without setting kernel.modules_disabled"'
R=$T/root-nordma; fake_root "$R"; sed -i '/ib_core\.ko:/d' "$R/lib/modules/$(uname -r)/modules.dep"
printf 'ID=ubuntu\n' >"$R/etc/os-release"
RDMX_ROOT=$R RDMX_SYSFS=$T/empty-sys run doctor
check "doctor, no RDMA core: the root cause, Ubuntu's fix" \
	eval 'rc_is 1 && out_has "^error kernel: .*has no RDMA core" && out_has "fix: apt-get install linux-modules-extra-"'
R=$T/root-nordmx; fake_root "$R"; sed -i '/rdmx\.ko/d' "$R/lib/modules/$(uname -r)/modules.dep"
RDMX_ROOT=$R RDMX_SYSFS=$T/empty-sys run doctor
check "doctor, rdmx not installed: install rdmx-dkms" \
	eval 'rc_is 1 && out_has "^error kernel: no rdmx module for kernel .*: rdmx is not installed" && out_has "fix: apt-get install rdmx-dkms"'
mkdir -p "$R/usr/src/rdmx-0.1.0"
RDMX_ROOT=$R RDMX_SYSFS=$T/empty-sys run doctor
check "doctor, DKMS did not build rdmx: dkms install for this kernel" \
	eval 'rc_is 1 && out_has "DKMS has rdmx 0\.1\.0 but did not build it" && out_has "fix: dkms install rdmx/0\.1\.0 -k $(uname -r)\$"'
rmdir "$R/lib/modules/$(uname -r)/build"
RDMX_ROOT=$R RDMX_SYSFS=$T/empty-sys run doctor
check "doctor, DKMS without the kernel's headers: install them first" \
	eval 'rc_is 1 && out_has "cannot build it without the kernel.s headers" && out_has "fix: apt-get install linux-headers-$(uname -r) && dkms install rdmx/0\.1\.0"'

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
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
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

/* SHIM_LOG: one line per message-service ioctl, for the test to grep. */
static void shim_log(const char *fmt, ...)
{
	const char *path = getenv("SHIM_LOG");
	va_list ap;
	FILE *f;

	if (!path || !(f = fopen(path, "a")))
		return;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fclose(f);
}

/* SHIM_FAIL=NAME:ERRNO makes ioctl NAME fail with ERRNO. */
static int shim_fail(const char *name)
{
	const char *f = getenv("SHIM_FAIL");
	size_t len = strlen(name);

	if (!f || strncmp(f, name, len) || f[len] != ':')
		return 0;
	errno = atoi(f + len + 1);
	shim_log("%s failed %d", name, errno);
	return 1;
}

static const char *shim_addr(const struct rdmx_sockaddr *sa)
{
	static char buf[64];

	if (!inet_ntop(sa->family, sa->addr, buf, sizeof(buf)))
		strcpy(buf, "?");
	return buf;
}

static int shim_sockaddr_ok(const struct rdmx_sockaddr *sa)
{
	return (sa->family == AF_INET || sa->family == AF_INET6) && sa->port;
}

static int shim_service_ok(const __u8 *s)
{
	size_t len = strnlen((const char *)s, RDMX_SERVICE_LEN);

	return len && len < RDMX_SERVICE_LEN;
}

/*
 * The fake peer. CONNECT to rdmx.echo: RECV returns what SEND sent
 * (SHIM_CORRUPT flips a byte of the third echo). CONNECT to another
 * service: SEND writes messages to SHIM_OUT/1, 2, ... (SHIM_SEND_MAX takes
 * at most that many per call); RECV ends the stream once SHUTDOWN was
 * called (after one 5000-byte reply with SHIM_REPLY; never with SHIM_HANG).
 * LISTEN: RECV gives messages of the sizes in SHIM_RECV_SIZES, byte j of
 * message k being 'a' + (k + j) % 26, then ends the stream.
 *
 * One-sided access. CONNECT to rdmx.mr or a service named mr-*: the peer
 * serves a region of MR_SIZE bytes, byte j being (7 j + 3) & 0xff. RECV
 * gives the token MR_TOKEN first (SHIM_TOKEN=big: a 5000-byte message;
 * =eos: the end of the stream; =imm: an immediate), the end of the stream
 * after SHUTDOWN. RMA checks everything rdmxctl passes, runs the operation
 * on the region and writes the region to SHIM_OUT/region after a write;
 * SHIM_NO_ATOMIC answers atomics with EOPNOTSUPP, SHIM_RMA_STATUS=E
 * completes the operation with -E. MR_REG (on an accepted channel) writes
 * the registered bytes to SHIM_OUT/mr-reg-N and returns a 16-byte token;
 * after it, RECV first gives an immediate SHIM_IMM (if set), and
 * SHIM_MR_POKE writes "PEER WAS HERE" at offset 4 of the region, as a
 * peer's WRITE would.
 */
enum { NONE, ECHO, SINK, SOURCE, MRPEER };
static int mode, shut, replied;
static unsigned int sent, echoes, produced;
#define MR_SIZE 4096
#define MR_TOKEN "SHIMTOKEN-v1"
static unsigned char region[MR_SIZE];
static int token_given, imm_given, poked, nr_regs;
static unsigned char *reg_buf;
static __u64 reg_len;
static __u32 reg_id;
static struct { char *buf; __u32 len; } queue[64];
static unsigned int q_head, q_tail;

static int shim_size(unsigned int k, __u32 *size)
{
	const char *s = getenv("SHIM_RECV_SIZES");
	unsigned int i;

	for (i = 0; s && *s; i++) {
		if (i == k) {
			*size = strtoul(s, NULL, 10);
			return 1;
		}
		s = strchr(s, ',');
		s = s ? s + 1 : NULL;
	}
	return 0;
}

static int shim_xfer_ok(const struct rdmx_ep_xfer *x)
{
	const struct rdmx_msg_vec *v = (const void *)(uintptr_t)x->msgs;
	unsigned int i;

	if (x->size != sizeof(*x) || (x->flags & ~RDMX_XFER_NONBLOCK) ||
	    x->vec_size != sizeof(*v) || !x->count ||
	    x->count > RDMX_XFER_MAX || !v)
		return 0;
	for (i = 0; i < x->count; i++)
		if (v[i].flags || v[i].imm || v[i].status ||
		    (v[i].len && !v[i].addr))
			return 0;
	return 1;
}

static int shim_send(struct rdmx_ep_xfer *x)
{
	struct rdmx_msg_vec *v = (void *)(uintptr_t)x->msgs;
	const char *max = getenv("SHIM_SEND_MAX"), *out = getenv("SHIM_OUT");
	unsigned int i, n = x->count;
	char path[4096];
	FILE *f;

	if (max && n > strtoul(max, NULL, 10))
		n = strtoul(max, NULL, 10);
	shim_log("SEND count=%u took=%u", x->count, n);
	for (i = 0; i < n; i++) {
		if (v[i].len > RDMX_MSG_MAX)
			return errno = EMSGSIZE, -1;
		if (mode == ECHO) {
			char *b = malloc(v[i].len + 1);

			memcpy(b, (void *)(uintptr_t)v[i].addr, v[i].len);
			if (getenv("SHIM_CORRUPT") && ++echoes == 3 && v[i].len)
				b[v[i].len / 2] ^= 1;
			queue[q_tail % 64].buf = b;
			queue[q_tail % 64].len = v[i].len;
			q_tail++;
			continue;
		}
		sent++;
		if (!out)
			continue;
		snprintf(path, sizeof(path), "%s/%u", out, sent);
		f = fopen(path, "w");
		fwrite((void *)(uintptr_t)v[i].addr, 1, v[i].len, f);
		fclose(f);
	}
	x->count = n;
	return n;
}

static int shim_recv(struct rdmx_ep_xfer *x)
{
	struct rdmx_msg_vec *v = (void *)(uintptr_t)x->msgs;
	int nonblock = x->flags & RDMX_XFER_NONBLOCK;
	unsigned int i;
	__u32 size, j;

	shim_log("RECV count=%u%s", x->count, nonblock ? " nonblock" : "");
	if (mode == MRPEER) {
		const char *t = getenv("SHIM_TOKEN");

		if (token_given)
			return shut ? (x->count = 0) : (errno = EAGAIN, -1);
		token_given = 1;
		if (t && !strcmp(t, "eos"))
			return x->count = 0;
		if (t && !strcmp(t, "imm")) {
			v[0].flags = RDMX_MSG_IMM;
			v[0].imm = 42;
			v[0].len = 0;
			return x->count = 1;
		}
		if (t && !strcmp(t, "big")) {
			v[0].len = 5000;
			return errno = EMSGSIZE, -1;
		}
		if (v[0].len < sizeof(MR_TOKEN) - 1)
			return errno = EINVAL, -1;
		memcpy((void *)(uintptr_t)v[0].addr, MR_TOKEN, sizeof(MR_TOKEN) - 1);
		v[0].len = sizeof(MR_TOKEN) - 1;
		return x->count = 1;
	}
	if (mode == SOURCE && reg_buf && getenv("SHIM_MR_POKE") && !poked) {
		memcpy(reg_buf + 4, "PEER WAS HERE", 13);
		poked = 1;
	}
	if (mode == SOURCE && reg_buf && getenv("SHIM_IMM") && !imm_given) {
		imm_given = 1;
		v[0].flags = RDMX_MSG_IMM;
		v[0].imm = strtoul(getenv("SHIM_IMM"), NULL, 0);
		v[0].len = 0;
		return x->count = 1;
	}
	if (mode == ECHO) {
		if (q_head == q_tail)
			return nonblock ? (errno = EAGAIN, -1) : 0;
		if (queue[q_head % 64].len > v[0].len) {
			v[0].len = queue[q_head % 64].len;
			return errno = EMSGSIZE, -1;
		}
		memcpy((void *)(uintptr_t)v[0].addr, queue[q_head % 64].buf,
		       queue[q_head % 64].len);
		v[0].len = queue[q_head % 64].len;
		free(queue[q_head++ % 64].buf);
		return x->count = 1;
	}
	if (mode == SINK) {
		if (getenv("SHIM_HANG") || !shut)
			return errno = EAGAIN, -1;
		if (getenv("SHIM_REPLY") && !replied) {
			if (v[0].len < 5000) {
				v[0].len = 5000;
				shim_log("RECV emsgsize 5000");
				return errno = EMSGSIZE, -1;
			}
			memset((void *)(uintptr_t)v[0].addr, 'r', 5000);
			v[0].len = 5000;
			replied = 1;
			return x->count = 1;
		}
		return x->count = 0;
	}
	for (i = 0; i < x->count && shim_size(produced, &size); i++) {
		if (size > v[i].len) {
			v[i].len = size;
			shim_log("RECV emsgsize %u at %u", size, i);
			if (!i)
				return errno = EMSGSIZE, -1;
			v[i].status = -EMSGSIZE;
			break;
		}
		produced++;
		for (j = 0; j < size; j++)
			((char *)(uintptr_t)v[i].addr)[j] = 'a' + (produced + j) % 26;
		v[i].len = size;
	}
	return x->count = i;
}

/*
 * The block service: EXPORT_ADD, EXPORT_DEL, EXPORT_RESIZE, MAP and UNMAP
 * check their argument as the kernel would and log it; MAP makes
 * /dev/rdmxb3.
 */
static int shim_export_name_ok(const __u8 *s)
{
	size_t len = strnlen((const char *)s, RDMX_EXPORT_NAME_LEN), i;

	if (!len || len >= RDMX_EXPORT_NAME_LEN)
		return 0;
	for (i = len; i < RDMX_EXPORT_NAME_LEN; i++)
		if (s[i])
			return 0;
	return 1;
}

static int shim_export_add(struct rdmx_export_add *ea)
{
	int ram = !!(ea->flags & RDMX_EXPORT_RAM);
	char allow[1024] = "", ip[64], uuid[16] = "";
	unsigned int i;

	if ((ea->size != sizeof(*ea) &&
	     (ea->size != RDMX_EXPORT_ADD_SIZE_VER0 ||
	      ea->flags & RDMX_EXPORT_UUID)) ||
	    (ea->flags & ~(RDMX_EXPORT_RO | RDMX_EXPORT_RAM |
			   RDMX_EXPORT_INSECURE | RDMX_EXPORT_UUID)) ||
	    ((ea->flags & RDMX_EXPORT_UUID) && (ram || !ea->uuid[0])) ||
	    !shim_export_name_ok(ea->name) || ea->reserved0 ||
	    ea->nr_allow > RDMX_EXPORT_ALLOW_MAX ||
	    (ram && (ea->path || ea->path_len || !ea->ram_size ||
		     ea->ram_size % 4096)) ||
	    (!ram && (!ea->path || !ea->path_len || ea->path_len > 4095 ||
		      ea->ram_size)) ||
	    (ea->logical_block_size && ea->logical_block_size != 512 &&
	     ea->logical_block_size != 4096))
		return errno = EINVAL, -1;
	for (i = 0; i < 4; i++)
		if (ea->reserved[i])
			return errno = EINVAL, -1;
	for (i = 0; i < ea->nr_allow; i++) {
		const struct rdmx_export_allow *a = &ea->allow[i];

		if ((a->family != AF_INET && a->family != AF_INET6) ||
		    a->prefix_len > (a->family == AF_INET ? 32 : 128) ||
		    a->reserved0 || a->reserved1 ||
		    !inet_ntop(a->family, a->addr, ip, sizeof(ip)))
			return errno = EINVAL, -1;
		snprintf(allow + strlen(allow), sizeof(allow) - strlen(allow),
			 "%s%s/%u", i ? "," : "", ip, a->prefix_len);
	}
	/* A uuid given: its first and last byte. */
	if (ea->flags & RDMX_EXPORT_UUID)
		snprintf(uuid, sizeof(uuid), " uuid=%02x%02x", ea->uuid[0],
			 ea->uuid[15]);
	shim_log("EXPORT_ADD name=%s flags=%u path=%.*s ram=%llu lbs=%u allow=%s%s",
		 ea->name, ea->flags, (int)ea->path_len,
		 ram ? "" : (const char *)(uintptr_t)ea->path,
		 (unsigned long long)ea->ram_size, ea->logical_block_size,
		 allow, uuid);
	if (shim_fail("EXPORT_ADD"))
		return -1;
	/* The identity it got: the caller's, or the module's own. */
	if (ea->size == sizeof(*ea) && !(ea->flags & RDMX_EXPORT_UUID))
		memset(ea->uuid, ram ? 0xee : 0xf1, sizeof(ea->uuid));
	return 0;
}

/*
 * Every export is of 1 MiB: grown to new_size if that is larger (a RAM
 * export), else refused; with new_size 0, a file that grew to 2 MiB.
 */
static int shim_export_resize(struct rdmx_export_resize *er)
{
	if (er->size != sizeof(*er) || er->flags || er->old_size ||
	    !shim_export_name_ok(er->name) || er->new_size % 4096)
		return errno = EINVAL, -1;
	shim_log("EXPORT_RESIZE name=%s new_size=%llu", er->name,
		 (unsigned long long)er->new_size);
	if (shim_fail("EXPORT_RESIZE"))
		return -1;
	if (er->new_size && er->new_size < (1 << 20))
		return errno = EINVAL, -1;
	er->old_size = 1 << 20;
	if (!er->new_size)
		er->new_size = 2 << 20;
	return 0;
}

static int shim_map(struct rdmx_map *m)
{
	unsigned int i;

	if (m->size != sizeof(*m) || (m->flags & ~RDMX_MAP_RO) ||
	    !shim_sockaddr_ok(&m->addr) || !shim_export_name_ok(m->name) ||
	    m->nr_queues > RDMX_MAP_QUEUES_MAX ||
	    m->queue_depth > RDMX_MAP_DEPTH_MAX ||
	    (m->loss_timeout_ms > RDMX_MAP_LOSS_TIMEOUT_MAX_MS &&
	     m->loss_timeout_ms != RDMX_MAP_LOSS_TIMEOUT_FOREVER) || m->index ||
	    m->reserved0)
		return errno = EINVAL, -1;
	for (i = 0; i < 4; i++)
		if (m->reserved[i])
			return errno = EINVAL, -1;
	shim_log("MAP family=%u port=%u addr=%s name=%s flags=%u queues=%u depth=%u loss=%u timeout=%u",
		 m->addr.family, m->addr.port, shim_addr(&m->addr), m->name,
		 m->flags, m->nr_queues, m->queue_depth, m->loss_timeout_ms,
		 m->timeout_ms);
	if (shim_fail("MAP"))
		return -1;
	m->index = 3;
	return 0;
}

static int shim_mr_reg(struct rdmx_mr_reg *r)
{
	const char *out = getenv("SHIM_OUT");
	char path[4096];
	FILE *f;

	if (r->size != sizeof(*r) || r->flags || r->reserved || !r->addr ||
	    !r->length || r->length > RDMX_MR_MAX || !r->access ||
	    (r->access & ~7u) || !r->token || r->token_len < 16 ||
	    mode != SOURCE || reg_buf)
		return errno = EINVAL, -1;
	shim_log("MR_REG len=%llu access=%u", (unsigned long long)r->length,
		 r->access);
	if (shim_fail("MR_REG"))
		return -1;
	reg_buf = (void *)(uintptr_t)r->addr;
	reg_len = r->length;
	reg_id = 7 + nr_regs++;
	if (out) {
		snprintf(path, sizeof(path), "%s/mr-reg-%d", out, nr_regs);
		f = fopen(path, "w");
		fwrite(reg_buf, 1, reg_len, f);
		fclose(f);
	}
	memcpy((void *)(uintptr_t)r->token, "SRVTOKEN", 8);
	memcpy((char *)(uintptr_t)r->token + 8, &reg_id, 4);
	memset((char *)(uintptr_t)r->token + 12, 0xee, 4);
	r->token_len = 16;
	r->mr_id = reg_id;
	return 0;
}

/* Check one operation and run it on the region; Return: 0 or -errno. */
static int shim_rma_op(struct rdmx_rma_op *op)
{
	const char *out = getenv("SHIM_OUT");
	void *local = (void *)(uintptr_t)op->local_addr;
	char path[4096];
	__u64 old;
	FILE *f;

	shim_log("RMA opcode=%u off=%llu len=%llu token_len=%u imm=%u cmp=%llu swap=%llu",
		 op->opcode, (unsigned long long)op->remote_offset,
		 (unsigned long long)op->length, op->token_len, op->imm,
		 (unsigned long long)op->compare_add,
		 (unsigned long long)op->swap);
	if (op->flags || op->reserved || op->status || op->user_data ||
	    op->token_len != sizeof(MR_TOKEN) - 1 || !op->token ||
	    memcmp((void *)(uintptr_t)op->token, MR_TOKEN, op->token_len) ||
	    (op->length && !local))
		return -EINVAL;
	if (op->opcode != RDMX_RMA_WRITE_IMM && op->imm)
		return -EINVAL;
	switch (op->opcode) {
	case RDMX_RMA_READ:
	case RDMX_RMA_WRITE:
	case RDMX_RMA_WRITE_IMM:
		if (op->compare_add || op->swap ||
		    (!op->length && op->opcode != RDMX_RMA_WRITE_IMM))
			return -EINVAL;
		if (op->remote_offset > MR_SIZE || op->length > MR_SIZE - op->remote_offset)
			return -ERANGE;
		if (op->opcode == RDMX_RMA_READ) {
			memcpy(local, region + op->remote_offset, op->length);
			return 0;
		}
		memcpy(region + op->remote_offset, local, op->length);
		if (out) {
			snprintf(path, sizeof(path), "%s/region", out);
			f = fopen(path, "w");
			fwrite(region, 1, MR_SIZE, f);
			fclose(f);
		}
		return 0;
	case RDMX_RMA_CMP_SWAP:
	case RDMX_RMA_FETCH_ADD:
		if (getenv("SHIM_NO_ATOMIC"))
			return -EOPNOTSUPP;
		if (op->length != 8 || op->remote_offset % 8 ||
		    (op->opcode == RDMX_RMA_FETCH_ADD && op->swap))
			return -EINVAL;
		if (op->remote_offset > MR_SIZE - 8)
			return -ERANGE;
		memcpy(&old, region + op->remote_offset, 8);
		memcpy(local, &old, 8);
		if (op->opcode == RDMX_RMA_FETCH_ADD)
			old += op->compare_add;
		else if (old == op->compare_add)
			old = op->swap;
		memcpy(region + op->remote_offset, &old, 8);
		return 0;
	}
	return -EINVAL;
}

static int shim_rma(struct rdmx_rma *r)
{
	struct rdmx_rma_op *op = (void *)(uintptr_t)r->ops;
	const char *st = getenv("SHIM_RMA_STATUS");
	int err;

	if (r->size != sizeof(*r) || r->flags || r->count != 1 ||
	    r->op_size != sizeof(*op) || !op || mode != MRPEER || shut)
		return errno = EINVAL, -1;
	if (shim_fail("RMA"))
		return -1;
	err = shim_rma_op(op);
	op->status = err;
	if (err)
		return errno = -err, -1;
	if (st)
		op->status = -atoi(st);
	return r->count = 1;
}

/* Two ports; SHIM_GROW adds a third between the count and the fetch. */
int ioctl(int fd, unsigned long req, ...)
{
	static int calls;
	unsigned int i, n = 2;
	va_list ap;
	void *arg;

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
		if (!getenv("SHIM_NO_MSG"))
			info->features |= RDMX_FEATURE_MSG;
		if (!getenv("SHIM_NO_RMA"))
			info->features |= RDMX_FEATURE_RMA;
		if (!getenv("SHIM_NO_BLOCK"))
			info->features |= RDMX_FEATURE_BLOCK;
		if (!getenv("SHIM_NO_BLOCK") && !getenv("SHIM_NO_RESIZE"))
			info->features |= RDMX_FEATURE_BLOCK_RESIZE;
		if (!getenv("SHIM_NO_BLOCK") && !getenv("SHIM_NO_SECURE"))
			info->features |= RDMX_FEATURE_BLOCK_SECURE;
		if (!getenv("SHIM_NO_BLOCK") && !getenv("SHIM_NO_IDENTITY"))
			info->features |= RDMX_FEATURE_BLOCK_IDENTITY;
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
	if (req == RDMX_IOC_EP_CONNECT || req == RDMX_IOC_EP_LISTEN) {
		struct rdmx_ep_addr *ea = arg;
		int listen = req == RDMX_IOC_EP_LISTEN;

		if (ea->size != sizeof(*ea) || ea->flags ||
		    !shim_sockaddr_ok(&ea->addr) || !shim_service_ok(ea->service) ||
		    ea->backlog || (listen && ea->timeout_ms))
			return errno = EINVAL, -1;
		shim_log("%s family=%u port=%u addr=%s service=%s timeout=%u",
			 listen ? "LISTEN" : "CONNECT", ea->addr.family,
			 ea->addr.port, shim_addr(&ea->addr), ea->service,
			 ea->timeout_ms);
		if (shim_fail(listen ? "LISTEN" : "CONNECT"))
			return -1;
		mode = listen ? SOURCE :
		       !strcmp((char *)ea->service, RDMX_SERVICE_ECHO) ? ECHO :
		       !strcmp((char *)ea->service, "rdmx.mr") ||
		       !strncmp((char *)ea->service, "mr-", 3) ? MRPEER : SINK;
		for (i = 0; i < MR_SIZE; i++)
			region[i] = (7 * i + 3) & 0xff;
		return 0;
	}
	if (req == RDMX_IOC_EP_ACCEPT) {
		struct rdmx_ep_accept *acc = arg;

		if (acc->size != sizeof(*acc) ||
		    (acc->flags & ~(RDMX_ACCEPT_NONBLOCK | RDMX_ACCEPT_CLOEXEC)) ||
		    acc->reserved || acc->fd || mode != SOURCE)
			return errno = EINVAL, -1;
		shim_log("ACCEPT");
		if (shim_fail("ACCEPT"))
			return -1;
		produced = imm_given = poked = shut = 0;
		memset(&acc->peer, 0, sizeof(acc->peer));
		acc->peer.family = AF_INET;
		acc->peer.port = 40000;
		inet_pton(AF_INET, "192.0.2.7", acc->peer.addr);
		acc->fd = dup(fd);
		return acc->fd;
	}
	if (req == RDMX_IOC_EP_SEND || req == RDMX_IOC_EP_RECV) {
		int send = req == RDMX_IOC_EP_SEND;

		if (!shim_xfer_ok(arg) || mode == NONE || (send && shut))
			return errno = EINVAL, -1;
		if (shim_fail(send ? "SEND" : "RECV"))
			return -1;
		return send ? shim_send(arg) : shim_recv(arg);
	}
	if (req == RDMX_IOC_EP_SHUTDOWN) {
		shim_log("SHUTDOWN");
		if (shim_fail("SHUTDOWN"))
			return -1;
		shut = 1;
		return 0;
	}
	if (req == RDMX_IOC_LISTENER_ADD || req == RDMX_IOC_LISTENER_DEL) {
		struct rdmx_listener_arg *la = arg;
		int add = req == RDMX_IOC_LISTENER_ADD;

		if (la->size != sizeof(*la) || la->flags ||
		    !shim_sockaddr_ok(&la->addr))
			return errno = EINVAL, -1;
		shim_log("%s family=%u port=%u addr=%s",
			 add ? "LISTENER_ADD" : "LISTENER_DEL", la->addr.family,
			 la->addr.port, shim_addr(&la->addr));
		return shim_fail(add ? "LISTENER_ADD" : "LISTENER_DEL") ? -1 : 0;
	}
	if (req == RDMX_IOC_SESS_CLOSE) {
		struct rdmx_sess_close *sc = arg;

		if (sc->size != sizeof(*sc) || sc->flags || sc->reserved ||
		    !sc->sess_id)
			return errno = EINVAL, -1;
		shim_log("SESS_CLOSE id=%u", sc->sess_id);
		return shim_fail("SESS_CLOSE") ? -1 : 0;
	}
	if (req == RDMX_IOC_EXPORT_ADD)
		return shim_export_add(arg);
	if (req == RDMX_IOC_EXPORT_DEL) {
		struct rdmx_export_del *ed = arg;

		if (ed->size != sizeof(*ed) ||
		    (ed->flags & ~RDMX_EXPORT_DEL_FORCE) ||
		    !shim_export_name_ok(ed->name))
			return errno = EINVAL, -1;
		shim_log("EXPORT_DEL name=%s flags=%u", ed->name, ed->flags);
		return shim_fail("EXPORT_DEL") ? -1 : 0;
	}
	if (req == RDMX_IOC_EXPORT_RESIZE)
		return shim_export_resize(arg);
	if (req == RDMX_IOC_MAP)
		return shim_map(arg);
	if (req == RDMX_IOC_UNMAP) {
		struct rdmx_unmap *um = arg;

		if (um->size != sizeof(*um) ||
		    (um->flags & ~RDMX_UNMAP_FORCE) || um->reserved)
			return errno = EINVAL, -1;
		shim_log("UNMAP index=%u flags=%u", um->index, um->flags);
		return shim_fail("UNMAP") ? -1 : 0;
	}
	if (req == RDMX_IOC_MR_REG)
		return shim_mr_reg(arg);
	if (req == RDMX_IOC_MR_DEREG) {
		struct rdmx_mr_dereg *d = arg;

		if (d->size != sizeof(*d) || d->flags || d->reserved ||
		    !reg_buf || d->mr_id != reg_id)
			return errno = EINVAL, -1;
		shim_log("MR_DEREG id=%u", d->mr_id);
		reg_buf = NULL;
		return shim_fail("MR_DEREG") ? -1 : 0;
	}
	if (req == RDMX_IOC_RMA)
		return shim_rma(arg);
	return errno = ENOTTY, -1;
}

/* Readable at once; with SHIM_HANG, nothing ever comes. */
int poll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	struct timespec ts = { timeout / 1000, (timeout % 1000) * 1000000L };
	nfds_t i;

	if (getenv("SHIM_HANG")) {
		if (timeout >= 0)
			nanosleep(&ts, NULL);
		return 0;
	}
	for (i = 0; i < nfds; i++)
		fds[i].revents = fds[i].events & (POLLIN | POLLOUT);
	return nfds;
}

int __poll_chk(struct pollfd *fds, nfds_t nfds, int timeout, size_t len)
{
	(void)len;
	return poll(fds, nfds, timeout);
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
	check "shim: version shows the module" out_has '^module: 9\.9\.9 abi 1 features list_devices,msg,rma,block,block_resize,block_secure,block_identity$'
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

	# ---- the message service against the fake module ----

	export SHIM_LOG=$T/shim.log
	log_has() { grep -qE -- "$1" "$SHIM_LOG"; }
	not_log_has() { ! log_has "$1"; }
	# mshim ARGS...: shim with a fresh log
	mshim() { : >"$SHIM_LOG"; shim "$@"; }

	SHIM_NO_MSG=1 mshim ping 127.0.0.1
	check "shim: ping on a module without RDMX_FEATURE_MSG exits 1" rc_is 1
	check "shim: ... says it has no message service" err_has 'no message service'

	mshim listen add
	check "shim: listen add exits 0" rc_is 0
	check "shim: listen add adds the IPv4 wildcard on port 7471" log_has '^LISTENER_ADD family=2 port=7471 addr=0\.0\.0\.0$'
	mshim listen
	check "shim: a bare listen adds nothing" not_log_has LISTENER_ADD
	mshim listen add -a 10.1.2.3 -p 9000
	check "shim: listen add -a -p passes them on" log_has '^LISTENER_ADD family=2 port=9000 addr=10\.1\.2\.3$'
	mshim listen add -p 9001 -a '[fe80::1]'
	check "shim: listen add -a ::" eval 'shim listen add -a :: && log_has "^LISTENER_ADD family=10 port=7471 addr=::$"'
	check "shim: listen add -a [ADDR]" log_has '^LISTENER_ADD family=10 port=9001 addr=fe80::1$'
	mshim listen del -p 9000
	check "shim: listen del exits 0" rc_is 0
	check "shim: listen del deletes" log_has '^LISTENER_DEL family=2 port=9000 addr=0\.0\.0\.0$'
	SHIM_FAIL=LISTENER_ADD:98 mshim listen add
	check "shim: listen add EADDRINUSE exits 1" rc_is 1
	check "shim: listen add EADDRINUSE: strerror" err_has 'Address already in use'
	check "shim: listen add EADDRINUSE: hint" err_has "^hint: .*rdmxctl listen list"
	SHIM_FAIL=LISTENER_ADD:1 mshim listen add
	check "shim: listen add EPERM: hint names CAP_NET_ADMIN" err_has '^hint: .*CAP_NET_ADMIN'
	SHIM_FAIL=LISTENER_DEL:2 mshim listen del -a 0.0.0.0
	check "shim: listen del of none exits 1" rc_is 1
	check "shim: listen del of none says so" err_has 'no listener on 0\.0\.0\.0:7471'

	mshim session close 3
	check "shim: session close exits 0" rc_is 0
	check "shim: session close passes the id" log_has '^SESS_CLOSE id=3$'
	SHIM_FAIL=SESS_CLOSE:2 mshim session close 3
	check "shim: session close of an unknown id exits 1" rc_is 1
	check "shim: session close of an unknown id says so" err_has 'no session 3'
	SHIM_FAIL=SESS_CLOSE:1 mshim session close 3
	check "shim: session close EPERM: strerror and hint" eval 'err_has "Operation not permitted" && err_has "^hint: .*CAP_NET_ADMIN"'

	# ping against the fake echo service
	PING_HEAD=' #bytes   #iterations   t_min[usec]   t_max[usec]   t_typical[usec]   t_avg[usec]   t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec]'
	mshim ping -c 50 -s 100 127.0.0.1
	check "shim: ping exits 0" rc_is 0
	check "shim: ping prints two lines" eval '[ "$(wc -l <"$T/out")" -eq 2 ]'
	check "shim: ping header as ib_send_lat's" first_line_is "$PING_HEAD"
	check "shim: ping data row" eval 'tail -n 1 "$T/out" | grep -qE "^ 100 +50 +([0-9]+\.[0-9]{2} +){6}[0-9]+\.[0-9]{2}$"'
	check "shim: ping connects to rdmx.echo on 7471" log_has '^CONNECT family=2 port=7471 addr=127\.0\.0\.1 service=rdmx\.echo timeout=30000$'
	check "shim: ping sends 50, one at a time" eval '[ "$(grep -c "^SEND count=1 " "$SHIM_LOG")" -eq 50 ]'
	check "shim: ping shuts down at the end" log_has '^SHUTDOWN$'
	mshim -j ping -c 200 -s 0 -p 9000 --timeout 5 '[::1]'
	check "shim: -j ping exits 0" rc_is 0
	check "shim: -j ping is JSON" is_json
	check "shim: -j ping keys are floats" json_true 'all(isinstance(d[k], float) for k in ("min", "max", "p50", "avg", "stdev", "p99", "p99_9"))'
	check "shim: -j ping stats in order" json_true 'd["min"] <= d["p50"] <= d["p99"] <= d["p99_9"] <= d["max"] and d["min"] <= d["avg"] <= d["max"] and d["stdev"] >= 0'
	check "shim: -j ping size, count, peer" json_true 'd["bytes"] == 0 and d["iterations"] == 200 and d["peer"] == "[::1]:9000" and d["host"] == "[::1]"'
	check "shim: ping -p --timeout to IPv6" log_has '^CONNECT family=10 port=9000 addr=::1 service=rdmx\.echo timeout=5000$'
	mshim ping -c 3 -i 10 127.0.0.1
	check "shim: ping -i exits 0" rc_is 0
	SHIM_CORRUPT=1 mshim ping -c 10 127.0.0.1
	check "shim: ping with a corrupt echo exits 1" rc_is 1
	check "shim: ping with a corrupt echo says which" err_has 'echo 3 .* differs from the message sent, first at byte 32'
	check "shim: ping with a corrupt echo prints no result" out_empty
	SHIM_FAIL=CONNECT:111 mshim ping 127.0.0.1
	check "shim: ping refused exits 1" rc_is 1
	check "shim: ping refused: strerror" err_has 'Connection refused'
	check "shim: ping refused: hint to add a listener" err_has "^hint: nothing listens on 127\.0\.0\.1 port 7471: run 'rdmxctl listen add -p 7471' there"
	SHIM_FAIL=CONNECT:110 mshim ping 127.0.0.1
	check "shim: ping timed out: strerror and hint" eval 'err_has "Connection timed out" && err_has "^hint: .*did not answer in time"'
	SHIM_FAIL=RECV:104 mshim ping 127.0.0.1
	check "shim: ping reset exits 1" rc_is 1
	check "shim: ping reset: strerror and hint" eval 'err_has "Connection reset by peer" && err_has "^hint: .*session list"'

	# msg send to the fake receiver
	mkdir -p "$T/sent"
	printf 'hello' >"$T/f1"
	: >"$T/f2"
	head -c 100000 /dev/urandom >"$T/f3"
	printf 'from stdin' >"$T/stdin"
	SHIM_OUT=$T/sent mshim msg send 127.0.0.1 files "$T/f1" "$T/f2" - "$T/f3" <"$T/stdin"
	check "shim: msg send exits 0" rc_is 0
	check "shim: msg send summary" out_has '^sent 4 messages, 100015 bytes, to 127\.0\.0\.1:7471 service files in [0-9.]+ s$'
	check "shim: msg send: messages are the files, in order" eval 'cmp -s "$T/sent/1" "$T/f1" && cmp -s "$T/sent/2" "$T/f2" && cmp -s "$T/sent/3" "$T/stdin" && cmp -s "$T/sent/4" "$T/f3"'
	check "shim: msg send: connect, send, shut down, wait" eval '[ "$(cut -d" " -f1 "$SHIM_LOG" | uniq | tr "\n" " ")" = "CONNECT SEND SHUTDOWN RECV " ]'
	check "shim: msg send waits without blocking in RECV" log_has '^RECV count=1 nonblock$'
	mshim -j msg send --port=9000 -t 7 localhost files "$T/f1" "$T/f3"
	check "shim: -j msg send is JSON" is_json
	check "shim: -j msg send summary" json_true 'd["messages"] == 2 and d["bytes"] == 100005 and d["host"] == "localhost" and d["peer"].endswith(":9000") and d["service"] == "files" and isinstance(d["seconds"], float)'
	check "shim: msg send -p -t reach CONNECT" log_has '^CONNECT family=[0-9]+ port=9000 .* service=files timeout=7000$'

	# 150 files, the fake kernel taking at most 7 per SEND
	rm -rf "$T/sent" "$T/many"
	mkdir -p "$T/sent" "$T/many"
	for i in $(seq 150); do echo "file $i" >"$T/many/$i"; done
	SHIM_OUT=$T/sent SHIM_SEND_MAX=7 mshim msg send 127.0.0.1 files $(seq -f "$T/many/%g" 150)
	check "shim: msg send of 150 files exits 0" rc_is 0
	check "shim: msg send of 150 files: all there, in order" eval 'for i in $(seq 150); do cmp -s "$T/sent/$i" "$T/many/$i" || exit 1; done'
	check "shim: msg send batches up to 64 per SEND" log_has '^SEND count=64 took=7$'
	check "shim: msg send resumes after a short SEND" log_has '^SEND count=57 took=7$'

	truncate -s $((4 * 1024 * 1024)) "$T/max"
	mshim msg send 127.0.0.1 files "$T/max"
	check "shim: msg send of exactly RDMX_MSG_MAX bytes exits 0" rc_is 0
	mshim msg send 127.0.0.1 files "$T/f1" "$T/big"
	check "shim: msg send of a file too big exits 1" rc_is 1
	check "shim: msg send of a file too big does not connect" not_log_has CONNECT
	head -c $((4 * 1024 * 1024 + 1)) /dev/zero >"$T/bigstdin"
	mshim msg send 127.0.0.1 files - <"$T/bigstdin"
	check "shim: msg send of stdin (a file) too big exits 1" rc_is 1
	check "shim: msg send of stdin (a file) too big says so" err_has '\(standard input\): 4194305 bytes, more than the largest message'
	check "shim: msg send of stdin (a file) too big does not connect" not_log_has CONNECT
	mshim msg send 127.0.0.1 files - < <(cat "$T/bigstdin")
	check "shim: msg send of stdin (a pipe) too big exits 1" rc_is 1
	check "shim: msg send of stdin (a pipe) too big says so" err_has '\(standard input\): more than the largest message'
	check "shim: msg send of stdin (a pipe) too big does not connect" not_log_has CONNECT
	mshim msg send 127.0.0.1 files - < <(cat "$T/f3")
	check "shim: msg send of stdin (a pipe) exits 0" eval 'rc_is 0 && out_has "^sent 1 messages?, 100000 bytes"'

	SHIM_FAIL=CONNECT:111 mshim msg send 127.0.0.1 files "$T/f1"
	check "shim: msg send refused exits 1" rc_is 1
	check "shim: msg send refused: hint names the receiver command" err_has "^hint: nothing on 127\.0\.0\.1 port 7471 serves 'files': run 'rdmxctl msg recv -p 7471 files \.\.\.' there"
	SHIM_FAIL=SEND:104 mshim -j msg send 127.0.0.1 files "$T/f1"
	check "shim: msg send reset exits 1" rc_is 1
	check "shim: msg send reset: names the file, strerror, hint" eval 'err_has "send .*f1 \(message 1\).*Connection reset by peer" && err_has "^hint: "'
	check "shim: msg send reset: no summary" out_empty
	SHIM_HANG=1 mshim msg send --timeout 1 127.0.0.1 files "$T/f1"
	check "shim: msg send, receiver never ends its stream: exits 1" rc_is 1
	check "shim: msg send, receiver never ends its stream: says so" err_has 'did not end its stream within 1 s'
	SHIM_REPLY=1 mshim msg send 127.0.0.1 files "$T/f1"
	check "shim: msg send, receiver replies: exits 0" rc_is 0
	check "shim: msg send, receiver replies: warns" err_has 'sent 1 message back; dropped'
	check "shim: msg send, receiver replies: grows the buffer" log_has '^RECV emsgsize 5000$'

	# msg recv from the fake sender
	# recv_ok DIR SIZE...: DIR holds 000001... of those sizes, as the shim makes them
	recv_ok() {
		python3 - "$@" <<'EOF'
import os, sys
d, sizes = sys.argv[1], [int(s) for s in sys.argv[2:]]
names = sorted(os.listdir(d))
if names != ["%06d" % (k + 1) for k in range(len(sizes))]:
    sys.exit(1)
for k, size in enumerate(sizes, 1):
    want = bytes(ord("a") + (k + j) % 26 for j in range(size))
    if open(os.path.join(d, "%06d" % k), "rb").read() != want:
        sys.exit(1)
EOF
	}
	mkdir -p "$T/in"
	SHIM_RECV_SIZES=5,70000,0,3 mshim msg recv files --count 4 --dir "$T/in"
	check "shim: msg recv exits 0" rc_is 0
	check "shim: msg recv summary" out_has "^received 4 messages, 70008 bytes, from 192\.0\.2\.7:40000 service files into $T/in\$"
	check "shim: msg recv writes 000001..000004, whole, no temporary files left" recv_ok "$T/in" 5 70000 0 3
	check "shim: msg recv listens on the IPv4 wildcard, port 7471" log_has '^LISTEN family=2 port=7471 addr=0\.0\.0\.0 service=files timeout=0$'
	check "shim: msg recv grows its buffer on EMSGSIZE" log_has '^RECV emsgsize 70000 at 0$'
	check "shim: msg recv shuts down after the last" log_has '^SHUTDOWN$'
	rm -rf "$T/in"; mkdir -p "$T/in"
	SHIM_RECV_SIZES=1,2,3,4 mshim -j msg recv -a 10.1.2.3 -p 9000 -c 2 -d "$T/in" files
	check "shim: -j msg recv is JSON" is_json
	check "shim: -j msg recv summary" json_true 'd == {"messages": 2, "bytes": 3, "peer": "192.0.2.7:40000", "service": "files", "dir": "'"$T/in"'"}'
	check "shim: msg recv -c 2 takes 2 of 4" recv_ok "$T/in" 1 2
	check "shim: msg recv -a -p reach LISTEN" log_has '^LISTEN family=2 port=9000 addr=10\.1\.2\.3 service=files'
	rm -rf "$T/in"; mkdir -p "$T/in"
	SHIM_RECV_SIZES=5,6 mshim msg recv files -c 3 -d "$T/in"
	check "shim: msg recv, stream ends early: exits 1" rc_is 1
	check "shim: msg recv, stream ends early: says after how many" err_has 'ended the stream after 2 of 3 messages'
	check "shim: msg recv, stream ends early: the 2 are written" recv_ok "$T/in" 5 6
	SHIM_FAIL=LISTEN:98 mshim msg recv files -c 1 -d "$T/in"
	check "shim: msg recv, service taken: exits 1 with strerror" eval 'rc_is 1 && err_has "Address already in use"'
	SHIM_FAIL=LISTEN:13 mshim msg recv -p 80 files -c 1 -d "$T/in"
	check "shim: msg recv on a port below 1024 without the right: hint" eval 'rc_is 1 && err_has "^hint: ports below 1024 need CAP_NET_BIND_SERVICE"'
	SHIM_FAIL=RECV:104 mshim msg recv files -c 1 -d "$T/in"
	check "shim: msg recv reset: strerror and hint" eval 'rc_is 1 && err_has "Connection reset by peer" && err_has "^hint: "'

	# ---- one-sided access against the fake module ----

	# region_bytes OFF LEN: the fake peer's region, bytes OFF to OFF + LEN
	region_bytes() {
		python3 -c 'import sys; o, n = int(sys.argv[1]), int(sys.argv[2]); sys.stdout.buffer.write(bytes((7 * j + 3) & 255 for j in range(o, o + n)))' "$1" "$2"
	}
	# region_word OFF: the little-endian 64-bit word at OFF of the fresh region
	region_word() {
		python3 -c 'import sys; o = int(sys.argv[1]); print(int.from_bytes(bytes((7 * j + 3) & 255 for j in range(o, o + 8)), "little"))' "$1"
	}
	# seed_bytes SEED LEN: the --seed pattern (splitmix64, little-endian)
	seed_bytes() {
		python3 - "$1" "$2" <<'EOF'
import sys
s, n, m = int(sys.argv[1]), int(sys.argv[2]), (1 << 64) - 1
out = bytearray()
while len(out) < n:
    s = (s + 0x9e3779b97f4a7c15) & m
    z = s
    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & m
    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & m
    out += (z ^ (z >> 31)).to_bytes(8, "little")
sys.stdout.buffer.write(bytes(out[:n]))
EOF
	}
	rm -rf "$T/rma"; mkdir -p "$T/rma"

	SHIM_NO_RMA=1 mshim rma 127.0.0.1 read 0 16
	check "shim: rma on a module without RDMX_FEATURE_RMA exits 1" rc_is 1
	check "shim: ... says it has no one-sided access" err_has 'no one-sided access'
	check "shim: ... and does not connect" not_log_has CONNECT
	SHIM_NO_RMA=1 mshim mr serve --size 4K
	check "shim: mr serve on a module without RDMX_FEATURE_RMA exits 1, does not listen" eval 'rc_is 1 && err_has "no one-sided access" && not_log_has LISTEN'

	mshim rma 127.0.0.1 read 0 20
	check "shim: rma read exits 0" rc_is 0
	check "shim: rma read summary" out_has '^read 20 bytes at offset 0 of 127\.0\.0\.1:7471 service rdmx\.mr in [0-9]+\.[0-9]{3} us$'
	check "shim: rma read: hex dump of the region" out_has '^00000000  03 0a 11 18 1f 26 2d 34  3b 42 49 50 57 5e 65 6c  \|\.\.\.\.\.&-4;BIPW\^el\|$'
	check "shim: rma read: hex dump's short last line" out_has '^00000010  73 7a 81 88              +\|sz\.\.\|$'
	check "shim: rma read connects to rdmx.mr on 7471" log_has '^CONNECT family=2 port=7471 addr=127\.0\.0\.1 service=rdmx\.mr timeout=30000$'
	check "shim: rma read passes the token, offset and length" log_has '^RMA opcode=1 off=0 len=20 token_len=12 imm=0 cmp=0 swap=0$'
	check "shim: rma read: connect, token, operation, shut down" eval '[ "$(cut -d" " -f1 "$SHIM_LOG" | uniq | tr "\n" " ")" = "CONNECT RECV RMA SHUTDOWN " ]'
	mshim -j rma -p 9000 -S mr-x --timeout 5 127.0.0.1 read 0x10 8
	check "shim: -j rma read is JSON" is_json
	check "shim: -j rma read: data in hex, and the figures" json_true 'd["op"] == "read" and d["data"] == "737a81888f969da4" and d["bytes"] == 8 and d["offset"] == 16 and d["token_len"] == 12 and d["peer"] == "127.0.0.1:9000" and d["service"] == "mr-x" and d["output"] is None and isinstance(d["usec"], float)'
	check "shim: rma -p -S --timeout reach CONNECT" log_has '^CONNECT family=2 port=9000 .* service=mr-x timeout=5000$'
	mshim rma 127.0.0.1 read 1K 3K -o "$T/rma/read.out"
	check "shim: rma read -o exits 0" rc_is 0
	check "shim: rma read -o: FILE holds the bytes" eval 'region_bytes 1024 3072 | cmp -s - "$T/rma/read.out"'
	check "shim: rma read -o: summary names FILE, no hex dump" eval 'out_has "into $T/rma/read.out\$" && [ "$(wc -l <"$T/out")" -eq 1 ]'
	mshim rma 127.0.0.1 read 4000 96 -o -
	check "shim: rma read -o -: the bytes alone on stdout" eval 'rc_is 0 && region_bytes 4000 96 | cmp -s - "$T/out"'
	mshim rma 127.0.0.1 read 4090 16
	check "shim: rma read past the region exits 1" rc_is 1
	check "shim: ... strerror (ERANGE) and hint" eval 'err_has "read at offset 4090 of 127\.0\.0\.1:7471 service rdmx\.mr: Numerical result out of range" && err_has "^hint: OFFSET and the length reach past the end"'
	check "shim: ... prints no result" out_empty
	check "shim: ... still shuts down" log_has '^SHUTDOWN$'

	printf 'hello' >"$T/rma/hello"
	SHIM_OUT=$T/rma mshim rma 127.0.0.1 write 100 "$T/rma/hello"
	check "shim: rma write exits 0" rc_is 0
	check "shim: rma write summary" out_has '^wrote 5 bytes at offset 100 to 127\.0\.0\.1:7471 service rdmx\.mr in [0-9]+\.[0-9]{3} us$'
	check "shim: rma write passes FILE's bytes" eval '{ region_bytes 0 100; printf hello; region_bytes 105 3991; } | cmp -s - "$T/rma/region"'
	SHIM_OUT=$T/rma mshim -j rma 127.0.0.1 write 4093 - <"$T/rma/hello"
	check "shim: rma write past the region (stdin) exits 1 with ERANGE" eval 'rc_is 1 && err_has "Numerical result out of range" && out_empty'
	check "shim: rma write reads stdin" log_has '^RMA opcode=2 off=4093 len=5 '
	SHIM_OUT=$T/rma mshim -j rma 127.0.0.1 writeimm 8 "$T/empty" 0x2a
	check "shim: rma writeimm of an empty file exits 0" rc_is 0
	check "shim: -j rma writeimm: imm and bytes" json_true 'd["op"] == "writeimm" and d["imm"] == 42 and d["bytes"] == 0'
	check "shim: rma writeimm passes the immediate" log_has '^RMA opcode=3 off=8 len=0 token_len=12 imm=42 '
	mshim rma 127.0.0.1 writeimm 0 "$T/rma/hello" 4294967295
	check "shim: rma writeimm summary" out_has '^wrote 5 bytes at offset 0 with immediate 4294967295 \(0xffffffff\) to 127\.0\.0\.1:7471'

	old8=$(region_word 8)
	mshim -j rma 127.0.0.1 fadd 8 5
	check "shim: rma fadd exits 0" rc_is 0
	check "shim: -j rma fadd: the old value, and old + 5" json_true "d['op'] == 'fadd' and d['old'] == $old8 and d['new'] == $old8 + 5 and d['addend'] == 5"
	mshim rma 127.0.0.1 fadd 8 -1
	check "shim: rma fadd -1 adds 2^64 - 1" log_has '^RMA opcode=5 off=8 len=8 token_len=12 imm=0 cmp=18446744073709551615 swap=0$'
	check "shim: rma fadd -1: new value is one less" out_has "old value $old8 \(0x[0-9a-f]{16}\), new value $((old8 - 1)) "
	mshim -j rma 127.0.0.1 cas 8 "$old8" 0x77
	check "shim: -j rma cas that matches: swapped" json_true "d['op'] == 'cas' and d['old'] == $old8 and d['swapped'] is True and d['compare'] == $old8 and d['swap'] == 119"
	mshim rma 127.0.0.1 cas 8 1 2
	check "shim: rma cas that does not match: not swapped" out_has "^cas at offset 8 of 127\.0\.0\.1:7471: old value $old8 \(0x[0-9a-f]{16}\), not swapped \(compare 1, swap 2\) in "
	mshim rma 127.0.0.1 fadd 4 1
	check "shim: rma fadd at a misaligned offset: EINVAL and the alignment hint" eval 'rc_is 1 && err_has "Invalid argument" && err_has "^hint: an atomic needs an OFFSET that is a multiple of 8"'
	SHIM_NO_ATOMIC=1 mshim rma 127.0.0.1 cas 8 1 2
	check "shim: rma cas without atomics: EOPNOTSUPP and the siw hint" eval 'rc_is 1 && err_has "Operation not supported" && err_has "^hint: .*no atomics \(siw has none\)"'
	SHIM_FAIL=RMA:13 mshim rma 127.0.0.1 write 0 "$T/rma/hello"
	check "shim: rma refused (EACCES): strerror and the rights hint" eval 'rc_is 1 && err_has "Permission denied" && err_has "^hint: the region does not grant this access"'
	SHIM_RMA_STATUS=5 mshim -j rma 127.0.0.1 read 0 8
	check "shim: rma completing with -EIO exits 1, hint, no JSON" eval 'rc_is 1 && err_has "Input/output error" && err_has "^hint: the peer.s RDMA device refused" && out_empty'
	SHIM_TOKEN=big mshim rma 127.0.0.1 read 0 8
	check "shim: rma, first message too big for a token: says so" eval 'rc_is 1 && err_has "has 5000 bytes: more than a token \(at most 4096\)" && not_log_has "^RMA"'
	SHIM_TOKEN=eos mshim rma 127.0.0.1 read 0 8
	check "shim: rma, stream ends before a token: says so" eval 'rc_is 1 && err_has "ended the stream without sending a token"'
	SHIM_TOKEN=imm mshim rma 127.0.0.1 read 0 8
	check "shim: rma, an immediate instead of a token: says so" eval 'rc_is 1 && err_has "is an immediate, not a token"'
	SHIM_FAIL=CONNECT:111 mshim rma -p 7500 -S mr-files 127.0.0.1 read 0 8
	check "shim: rma refused: hint names mr serve" err_has "^hint: nothing on 127\.0\.0\.1 port 7500 serves 'mr-files': run 'rdmxctl mr serve -p 7500 -S mr-files --size SIZE' there"

	# mr serve: a region per channel, the token first, held until the end of the stream
	SHIM_OUT=$T/rma mshim mr serve --size 8K --seed 5
	check "shim: mr serve exits 0" rc_is 0
	check "shim: mr serve: region line" out_has '^mr 7: 8192 bytes, access rw, token 16 bytes, for 192\.0\.2\.7:40000 service rdmx\.mr$'
	check "shim: mr serve: end line" out_has '^mr 7: end of stream after [0-9.]+ s, 0 immediates, 0 messages dropped$'
	check "shim: mr serve listens for rdmx.mr on 7471" log_has '^LISTEN family=2 port=7471 addr=0\.0\.0\.0 service=rdmx\.mr timeout=0$'
	check "shim: mr serve registers 8 KiB, read and write" log_has '^MR_REG len=8192 access=3$'
	check "shim: mr serve: --seed 5 fills the region with the pattern" eval 'seed_bytes 5 8192 | cmp -s - "$T/rma/mr-reg-1"'
	check "shim: mr serve: the first message is the token" eval '[ "$(head -c 8 "$T/rma/1")" = SRVTOKEN ] && [ "$(stat -c %s "$T/rma/1")" -eq 16 ]'
	check "shim: mr serve: accept, register, token, wait, deregister, shut down" eval '[ "$(cut -d" " -f1 "$SHIM_LOG" | uniq | tr "\n" " ")" = "LISTEN ACCEPT MR_REG SEND RECV SHUTDOWN MR_DEREG " ]'
	rm -f "$T/rma"/*
	head -c 1000 /dev/urandom >"$T/rma/fill"
	SHIM_OUT=$T/rma SHIM_MR_POKE=1 SHIM_IMM=42 SHIM_RECV_SIZES=3,70000 mshim -j mr serve -p 9000 -S mr-files --fill "$T/rma/fill" --access war --dump "$T/rma/dump"
	check "shim: -j mr serve exits 0" rc_is 0
	check "shim: -j mr serve is a JSON array of one channel" json_true 'isinstance(d, list) and len(d) == 1'
	check "shim: -j mr serve: the region" json_true 'len(d[0]) == 12 and d[0]["mr_id"] == 7 and d[0]["length"] == 1000 and d[0]["access"] == ["read", "write", "atomic"] and d[0]["token_len"] == 16 and d[0]["peer"] == "192.0.2.7:40000" and d[0]["service"] == "mr-files"'
	check "shim: -j mr serve: immediates, dropped messages, end" json_true 'd[0]["immediates"] == [42] and d[0]["immediates_received"] == 1 and d[0]["messages"] == 2 and d[0]["ended"] is True and isinstance(d[0]["seconds"], float)'
	check "shim: -j mr serve: no key twice" eval '[ "$(grep -o "\"mr_id\"" "$T/out" | wc -l)" -eq 1 ]'
	check "shim: -j mr serve: names the dump" json_true "d[0]['dump'] == '$T/rma/dump'"
	check "shim: mr serve --fill: the region starts as FILE, size from FILE" eval 'cmp -s "$T/rma/fill" "$T/rma/mr-reg-1" && log_has "^MR_REG len=1000 access=7$"'
	check "shim: mr serve --dump: the region after the peer wrote to it" eval '{ head -c 4 "$T/rma/fill"; printf "PEER WAS HERE"; tail -c +18 "$T/rma/fill"; } | cmp -s - "$T/rma/dump"'
	check "shim: mr serve --dump leaves no temporary file" eval '[ ! -e "$T/rma/dump.tmp" ]'
	SHIM_IMM=7 mshim mr serve --size 64 --count 2 --dump "$T/rma/two"
	check "shim: mr serve --count 2 exits 0" rc_is 0
	check "shim: mr serve --count 2: two channels, each registered and deregistered" eval '[ "$(grep -c "^ACCEPT$" "$SHIM_LOG")" -eq 2 ] && [ "$(grep -c "^MR_REG " "$SHIM_LOG")" -eq 2 ] && [ "$(grep -c "^MR_DEREG " "$SHIM_LOG")" -eq 2 ]'
	check "shim: mr serve --count 2: dumps FILE.1 and FILE.2" eval '[ "$(stat -c %s "$T/rma/two.1")" -eq 64 ] && [ "$(stat -c %s "$T/rma/two.2")" -eq 64 ] && [ ! -e "$T/rma/two" ]'
	check "shim: mr serve --count 2: text names the immediate" out_has '^mr 8: immediate 7 \(0x00000007\)$'
	check "shim: mr serve --count 2: end lines name the dumps" eval 'out_has "^mr 7: end of stream after .*, 1 immediate, 0 messages dropped, written to $T/rma/two\.1\$" && out_has "written to $T/rma/two\.2\$"'
	SHIM_FAIL=MR_REG:95 mshim mr serve --size 4K --access rwa
	check "shim: mr serve, no atomics on the device: exits 1, hint to drop 'a'" eval 'rc_is 1 && err_has "Operation not supported" && err_has "^hint: .*drop .a. from --access"'
	SHIM_FAIL=RECV:104 mshim mr serve --size 4K --dump "$T/rma/reset"
	check "shim: mr serve, channel reset: exits 1 with strerror and hint" eval 'rc_is 1 && err_has "Connection reset by peer" && err_has "^hint: "'
	check "shim: mr serve, channel reset: still deregisters and dumps" eval 'log_has "^MR_DEREG id=7$" && [ -s "$T/rma/reset" ]'
	check "shim: mr serve, channel reset: says it failed" out_has '^mr 7: failed after '

	# ---- the block service against the fake module ----

	SHIM_NO_BLOCK=1 mshim export add disk1 ram:1M
	check "shim: export add on a module without RDMX_FEATURE_BLOCK: exits 1, says so" \
		eval 'rc_is 1 && err_has "has no block service" && not_log_has EXPORT_ADD'
	SHIM_NO_BLOCK=1 mshim map 127.0.0.1 disk1
	check "shim: map on a module without RDMX_FEATURE_BLOCK: exits 1" \
		eval 'rc_is 1 && err_has "has no block service"'
	mshim export add disk1 ram:1G
	check "shim: export add ram:1G exits 0, prints nothing" eval 'rc_is 0 && out_empty'
	check "shim: export add ram:1G passes RDMX_EXPORT_RAM and the size" \
		log_has '^EXPORT_ADD name=disk1 flags=2 path= ram=1073741824 lbs=0 allow=$'
	mshim export add big ram:2T --ro --lbs 4096
	check "shim: export add ram:2T --ro --lbs 4096" \
		log_has '^EXPORT_ADD name=big flags=3 path= ram=2199023255552 lbs=4096 allow=$'
	truncate -s 1M "$T/disk.img"
	(cd "$T" && mshim export add f.1 disk.img --allow 198.18.0.2 --allow 10.1.2.3/8 \
		--allow '[fd00::5]/64' --allow ::1 --allow=0.0.0.0/0)
	check "shim: export add FILE: absolute path, allow-list with host bits cleared" \
		log_has "^EXPORT_ADD name=f\\.1 flags=0 path=$T/disk\\.img ram=0 lbs=0 allow=198\\.18\\.0\\.2/32,10\\.0\\.0\\.0/8,fd00::/64,::1/128,0\\.0\\.0\\.0/0\$"
	mshim export add open ram:1M --insecure
	check "shim: export add --insecure passes RDMX_EXPORT_INSECURE" \
		log_has '^EXPORT_ADD name=open flags=6 path= ram=1048576 lbs=0 allow=$'
	SHIM_NO_SECURE=1 mshim export add open ram:1M --insecure
	check "shim: export add --insecure on a module without RDMX_FEATURE_BLOCK_SECURE: exits 1, says so" \
		eval 'rc_is 1 && err_has "has no source port check \(--insecure\): upgrade the module" && not_log_has EXPORT_ADD'
	mshim export add nb /dev/null
	check "shim: export add of a character device: exits 1 before the module" \
		eval 'rc_is 1 && err_has "neither a block device nor a regular file" && not_log_has EXPORT_ADD'
	mshim export add pinned "$T/disk.img" --uuid 0F4E2A6C-1D3B-4C5E-9A7B-2C1D0E9F8A7B
	check "shim: export add --uuid passes RDMX_EXPORT_UUID and the uuid" \
		eval 'rc_is 0 && out_empty && log_has "^EXPORT_ADD name=pinned flags=16 path=$T/disk\\.img ram=0 lbs=0 allow= uuid=0f7b\$"'
	mshim -j export add pinned "$T/disk.img" --uuid 0f4e2a6c-1d3b-4c5e-9a7b-2c1d0e9f8a7b
	check "shim: -j export add --uuid: name, uuid, where it came from" \
		json_true 'd == {"export": "pinned", "uuid": "0f4e2a6c-1d3b-4c5e-9a7b-2c1d0e9f8a7b", "identity": "--uuid"}'
	mshim -j export add r ram:1M
	check "shim: -j export add ram: the module's new uuid" \
		json_true 'd == {"export": "r", "uuid": "eeeeeeee-eeee-eeee-eeee-eeeeeeeeeeee", "identity": "new for RAM"}'
	mshim -j export add f "$T/disk.img"
	check "shim: -j export add of a file: the module's uuid, from its filesystem and inode" \
		json_true 'd["uuid"] == "f1f1f1f1-f1f1-f1f1-f1f1-f1f1f1f1f1f1" and d["identity"] == "its filesystem and inode"'
	SHIM_NO_IDENTITY=1 mshim -j export add f "$T/disk.img"
	check "shim: export add on a module without RDMX_FEATURE_BLOCK_IDENTITY: the old argument, uuid unknown" \
		eval 'rc_is 0 && json_true "d[\"uuid\"] == \"unknown\"" && log_has "^EXPORT_ADD name=f flags=0 "'
	SHIM_NO_IDENTITY=1 mshim export add pinned "$T/disk.img" --uuid 0f4e2a6c-1d3b-4c5e-9a7b-2c1d0e9f8a7b
	check "shim: export add --uuid on a module without RDMX_FEATURE_BLOCK_IDENTITY: exits 1, says so" \
		eval 'rc_is 1 && err_has "has no export uuids \(--uuid\): upgrade the module" && not_log_has EXPORT_ADD'
	SHIM_FAIL=EXPORT_ADD:17 mshim export add disk1 ram:1M
	check "shim: export add EEXIST: exits 1, says it exists" eval 'rc_is 1 && err_has "export disk1 exists already"'
	SHIM_FAIL=EXPORT_ADD:1 mshim export add disk1 ram:1M
	check "shim: export add EPERM: names CAP_SYS_ADMIN" eval 'rc_is 1 && err_has "^hint: .*CAP_SYS_ADMIN"'
	SHIM_FAIL=EXPORT_ADD:16 mshim export add disk1 "$T/disk.img"
	check "shim: export add EBUSY: says the path is in use" eval 'rc_is 1 && err_has "disk\.img is busy"'
	SHIM_FAIL=EXPORT_ADD:12 mshim export add disk1 ram:1T
	check "shim: export add ENOMEM of ram: says so" eval 'rc_is 1 && err_has "out of memory: is ram:SIZE more"'

	mshim export del disk1
	check "shim: export del exits 0" eval 'rc_is 0 && log_has "^EXPORT_DEL name=disk1 flags=0$"'
	mshim export del --force disk1
	check "shim: export del --force passes RDMX_EXPORT_DEL_FORCE" log_has '^EXPORT_DEL name=disk1 flags=1$'
	SHIM_FAIL=EXPORT_DEL:16 mshim export del disk1
	check "shim: export del EBUSY: exits 1, says mapped, suggests --force" \
		eval 'rc_is 1 && err_has "export disk1 busy: mapped by a client, or queues of a client that unmapped it still finishing their requests \(retry, or use --force"'
	SHIM_FAIL=EXPORT_DEL:2 mshim export del disk1
	check "shim: export del ENOENT: says there is none" eval 'rc_is 1 && err_has "no export disk1"'
	SHIM_FAIL=EXPORT_DEL:1 mshim export del disk1
	check "shim: export del EPERM: names CAP_SYS_ADMIN" \
		eval 'rc_is 1 && err_has "^rdmxctl: delete export disk1: Operation not permitted: needs CAP_SYS_ADMIN"'

	SHIM_NO_RESIZE=1 mshim export resize disk1 1G
	check "shim: export resize on a module without RDMX_FEATURE_BLOCK_RESIZE: exits 1, says so" \
		eval 'rc_is 1 && err_has "rdmx module 9\.9\.9 has no export resize: upgrade the module" && not_log_has EXPORT_RESIZE && out_empty'
	SHIM_NO_BLOCK=1 mshim export resize disk1
	check "shim: export resize on a module without RDMX_FEATURE_BLOCK: says no block service" \
		eval 'rc_is 1 && err_has "has no block service" && not_log_has EXPORT_RESIZE'
	mshim export resize disk1
	check "shim: export resize without SIZE passes new_size=0" \
		eval 'rc_is 0 && log_has "^EXPORT_RESIZE name=disk1 new_size=0$"'
	check "shim: export resize without SIZE: old and new size" \
		eval '[ "$(cat "$T/out")" = "disk1: 1048576 -> 2097152 bytes" ]'
	mshim export resize disk1 1G
	check "shim: export resize 1G passes the bytes" \
		eval 'rc_is 0 && log_has "^EXPORT_RESIZE name=disk1 new_size=1073741824$"'
	check "shim: export resize 1G: one line, old and new size" \
		eval '[ "$(cat "$T/out")" = "disk1: 1048576 -> 1073741824 bytes" ]'
	mshim -j export resize disk1 1G
	check "shim: -j export resize: name, old_size and size" \
		json_true 'd == {"name": "disk1", "old_size": 1048576, "size": 1073741824}'
	mshim export resize disk1 512K
	check "shim: export resize smaller: EINVAL, exits 1, says exports only grow, no stdout" \
		eval 'rc_is 1 && err_has "resize export disk1 to 512K: refused as invalid: exports only grow, SIZE is for ram exports only, and must be a multiple of 4096 and of the export.s block size" && err_has "^hint: see .rdmxctl export show disk1.$" && out_empty'
	SHIM_FAIL=EXPORT_RESIZE:22 mshim -j export resize disk1
	check "shim: export resize EINVAL without SIZE: says a ram export needs SIZE, no JSON" \
		eval 'rc_is 1 && err_has "exports only grow \(did its file or device shrink\?\), and a ram export needs SIZE" && out_empty'
	SHIM_FAIL=EXPORT_RESIZE:2 mshim export resize disk1 1G
	check "shim: export resize ENOENT: exits 1, says there is none" \
		eval 'rc_is 1 && err_has "^rdmxctl: no export disk1 \(see .rdmxctl export list.\)$"'
	for e in 1 13; do
		SHIM_FAIL=EXPORT_RESIZE:$e mshim export resize disk1 1G
		check "shim: export resize errno $e: exits 1, names CAP_SYS_ADMIN" \
			eval 'rc_is 1 && err_has "^rdmxctl: resize export disk1: .*: needs CAP_SYS_ADMIN, run as root$"'
	done
	SHIM_FAIL=EXPORT_RESIZE:12 mshim export resize disk1 1G
	check "shim: export resize ENOMEM: exits 1 with strerror" \
		eval 'rc_is 1 && err_has "^rdmxctl: resize export disk1: Cannot allocate memory$"'

	mshim map 127.0.0.1 disk1
	check "shim: map exits 0, prints the device" eval 'rc_is 0 && [ "$(cat "$T/out")" = /dev/rdmxb3 ]'
	check "shim: map passes address, port and name, defaults 0" \
		log_has '^MAP family=2 port=7471 addr=127\.0\.0\.1 name=disk1 flags=0 queues=0 depth=0 loss=0 timeout=0$'
	mshim -j map -p 9000 '[::1]' disk1 --queues 4 --depth 64 --ro --loss-timeout 30 --timeout 5
	check "shim: map with every option passes them, bare numbers in seconds" \
		log_has '^MAP family=10 port=9000 addr=::1 name=disk1 flags=1 queues=4 depth=64 loss=30000 timeout=5000$'
	check "shim: -j map: the device, index, server and export" \
		json_true 'd == {"dev": "/dev/rdmxb3", "index": 3, "server": "[::1]:9000", "export": "disk1", "read_only": True}'
	mshim map 127.0.0.1:9000 disk1
	check "shim: map HOST:PORT, as map list prints it: that port" \
		eval 'rc_is 0 && log_has "^MAP family=2 port=9000 addr=127\.0\.0\.1 name=disk1 "'
	mshim map '[::1]:9001' disk1
	check "shim: map [ADDR]:PORT: IPv6 and that port" \
		eval 'rc_is 0 && log_has "^MAP family=10 port=9001 addr=::1 name=disk1 "'
	mshim map ::1 disk1
	check "shim: map of a bare IPv6 address: the default port" \
		eval 'rc_is 0 && log_has "^MAP family=10 port=7471 addr=::1 name=disk1 "'
	mshim map 127.0.0.1 disk1 --loss-timeout 2m --timeout 1500ms
	check "shim: map --loss-timeout 2m --timeout 1500ms: in milliseconds" \
		log_has ' loss=120000 timeout=1500$'
	mshim map 127.0.0.1 disk1 --loss-timeout forever --timeout 1h
	check "shim: map --loss-timeout forever passes RDMX_MAP_LOSS_TIMEOUT_FOREVER" \
		log_has ' loss=4294967295 timeout=3600000$'
	SHIM_NO_IDENTITY=1 mshim map 127.0.0.1 disk1 --loss-timeout forever
	check "shim: map --loss-timeout forever on a module without RDMX_FEATURE_BLOCK_IDENTITY: exits 1, says so" \
		eval 'rc_is 1 && err_has "has no loss timeout forever: upgrade the module" && not_log_has MAP'
	SHIM_FAIL=MAP:13 mshim map 127.0.0.1 disk1
	check "shim: map EACCES: exits 1, says read-only or allow-list, no stdout" \
		eval 'rc_is 1 && err_has "refused export disk1: read-only export \(map it with --ro\), or this host is not on its allow-list" && err_has "^hint: see .rdmxctl export show disk1. on 127\.0\.0\.1" && out_empty'
	SHIM_FAIL=MAP:13 mshim map --ro 127.0.0.1 disk1
	check "shim: map --ro EACCES: says allow-list" \
		eval 'rc_is 1 && err_has "not on its allow-list" && not_err_has "map it with --ro"'
	SHIM_FAIL=MAP:2 mshim map 127.0.0.1 disk1
	check "shim: map ENOENT: says no such export" eval 'rc_is 1 && err_has "no export disk1 on 127\.0\.0\.1"'
	SHIM_FAIL=MAP:111 mshim map -p 7000 127.0.0.1 disk1
	check "shim: map ECONNREFUSED: hint to listen on the port" \
		eval 'rc_is 1 && err_has "no listener an administrator added on port 7000" && err_has "^hint: run .rdmxctl listen add -p 7000. on 127\.0\.0\.1"'
	SHIM_FAIL=MAP:71 mshim map 127.0.0.1 disk1
	check "shim: map EPROTO: says incompatible server" eval 'rc_is 1 && err_has "incompatible server"'
	SHIM_FAIL=MAP:110 mshim map 127.0.0.1 disk1
	check "shim: map ETIMEDOUT: hint at --timeout" eval 'rc_is 1 && err_has "^hint: .*--timeout"'

	for dev in /dev/rdmxb7 rdmxb7 7; do
		mshim unmap "$dev"
		check "shim: unmap $dev exits 0" eval 'rc_is 0 && log_has "^UNMAP index=7 flags=0$"'
	done
	mshim unmap --force 0
	check "shim: unmap --force passes RDMX_UNMAP_FORCE" log_has '^UNMAP index=0 flags=1$'
	SHIM_FAIL=UNMAP:16 mshim unmap 7
	check "shim: unmap EBUSY: exits 1, says open, suggests --force" \
		eval 'rc_is 1 && err_has "/dev/rdmxb7 busy: open by a user.*--force"'
	SHIM_FAIL=UNMAP:2 mshim unmap 7
	check "shim: unmap ENOENT: says not mapped" eval 'rc_is 1 && err_has "no /dev/rdmxb7 mapped"'
	unset SHIM_LOG
elif command -v "$CC" >/dev/null 2>&1 && [ -n "$HDR_DIR" ]; then
	# A compiler is there: a shim that does not build is a broken test
	# (say, one the uapi outgrew), not a reason to skip.
	check "the fake module (LD_PRELOAD shim) compiles" false
	sed 's/^/    # /' "$T/cc.err"
else
	skip "no C compiler or uapi headers: dev and the message service against a fake module not tested"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
