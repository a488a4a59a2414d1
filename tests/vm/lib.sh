# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers for scripts that tests/vm/run starts in a guest. Source it:
#   . "$RDMX_REPO/tests/vm/lib.sh"
#
# Results are TAP-like lines, "ok - NAME" / "not ok - NAME" /
# "ok - NAME # SKIP reason", appended to $RDMX_OUT/results.tap and echoed;
# tests/check counts them. rdmx_done exits 1 when any failed. Each result
# is also written to $RDMX_OUT/times.txt after the guest's uptime in
# seconds, so that what a test costs can be read off a run.

RDMX_RESULTS=${RDMX_OUT:?}/results.tap
rdmx_failed=0

# Under TCG, with the debug kernel, starting any program costs about a
# third of a second of a vCPU: the helpers below wait and record with the
# shell's builtins only. rdmx_sleep SECS is sleep(1) without the program:
# a read that times out on a pipe of our own that nobody writes to (or
# sleep(1) itself, where bash cannot open one: no /dev/fd).
rdmx_sleep_fd=
exec {rdmx_sleep_fd}<> <(:) || rdmx_sleep_fd=
rdmx_sleep() {
	if [ -n "$rdmx_sleep_fd" ]; then
		read -rt "$1" -u "$rdmx_sleep_fd" _ || :
	else
		sleep "$1"
	fi
}

# rdmx_result LINE: record one result line.
rdmx_result() {
	local up
	read -r up _ </proc/uptime
	printf '%s %s\n' "$up" "$1" >>"$RDMX_OUT/times.txt"
	printf '%s\n' "$1" >>"$RDMX_RESULTS"
	printf '%s\n' "$1"
}

# rdmx_pass NAME / rdmx_fail NAME [DETAIL] / rdmx_skip NAME REASON
rdmx_pass() { rdmx_result "ok - $1"; }
rdmx_fail() {
	rdmx_result "not ok - $1${2:+ ($2)}"
	rdmx_failed=1
}
rdmx_skip() { rdmx_result "ok - $1 # SKIP $2"; }

# rdmx_check NAME CMD...: pass when CMD exits 0; its output goes to the log.
rdmx_check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		rdmx_pass "$name"
	else
		rdmx_fail "$name" "exit $?"
		printf '%s\n' "$out" | sed 's/^/    # /'
	fi
}

# rdmx_check_fails NAME CMD...: pass when CMD exits non-zero.
rdmx_check_fails() {
	local name=$1
	shift
	if "$@" >/dev/null 2>&1; then
		rdmx_fail "$name" "succeeded"
	else
		rdmx_pass "$name"
	fi
}

rdmx_done() {
	exit "$rdmx_failed"
}

# rdmx_barrier NAME [TIMEOUT]: wait until every node has reached NAME. A
# node killed with rdmx_kill_node never will: it is not waited for.
# TIMEOUT counts twice by this guest's clock: under TCG the other node's
# work takes longer the busier the host is, and a barrier that gives up
# early fails a run that was only slow (the harness's timeout still ends
# one that hangs).
rdmx_barrier() {
	local name=$1 limit=${2:-300} n end

	: >"$RDMX_SYNC/$name.$RDMX_NODE"
	end=$((SECONDS + 2 * limit))
	for ((n = 1; n <= RDMX_NODES; n++)); do
		while [ ! -e "$RDMX_SYNC/$name.$n" ] &&
		      [ ! -e "$RDMX_SYNC/kill/$n.killed" ]; do
			if [ "$SECONDS" -ge "$end" ]; then
				echo "barrier $name: node $n did not arrive in $((2 * limit))s" >&2
				return 1
			fi
			rdmx_sleep 0.5
		done
	done
}

# rdmx_kill_node N [TIMEOUT]: have the host kill node N's QEMU with SIGKILL,
# like a power cut: no shutdown, nothing flushed, no disconnect; N's end of
# the link just goes quiet. Returns 0 once the host confirms that the QEMU
# is gone (it waits up to TIMEOUT s, default 30), 1 if the host refused
# (the reason is printed) or did not answer. The request and the answer are
# files in $RDMX_SYNC/kill/, served by tests/vm/run. The harness counts a
# node killed this way as passed if none of the results it reported before
# the kill failed; rdmx_barrier stops waiting for it.
rdmx_kill_node() {
	rdmx_node_request kill "$@"
}

# rdmx_restart_node N [TIMEOUT]: have the host kill node N's QEMU with
# SIGKILL and boot it again (tests/vm/run --restart N). Node N runs its
# script again from the top, with RDMX_BOOT=2; it keeps its disk, /dev/vda.
# Returns 0 once the host has started the new QEMU (not once its script
# runs: wait for that with a barrier), 1 as rdmx_kill_node does. Barriers
# wait for a restarted node: its second boot must arrive at them.
rdmx_restart_node() {
	rdmx_node_request restart "$@"
}

# rdmx_node_request kill|restart N [TIMEOUT]: the request and its answer.
rdmx_node_request() {
	local what=$1 n=$2 limit=${3:-30} i f="$RDMX_SYNC/kill/$2" req ans end

	req=request ans=killed
	[ "$what" = restart ] && req=restart ans=restarted
	case "$n" in
	''|*[!0-9]*|0) echo "rdmx_${what}_node: bad node '$n'" >&2; return 1 ;;
	esac
	if [ "$n" = "$RDMX_NODE" ] || [ "$n" -gt "$RDMX_NODES" ]; then
		echo "rdmx_${what}_node: node $n is not another node of this run" >&2
		return 1
	fi
	[ -e "$f.$ans" ] && return 0
	[ ! -e "$f.failed" ] || rm -f "$f.failed"
	# The request, named N.request.FROM (N.restart.FROM), is an empty
	# file: created without a fork, and seen by the host whole. Over 9p
	# (cache=loose) a create in the directory the host just renamed in can
	# fail with ENOENT: retry.
	local sent=no
	for ((i = 0; i < 50; i++)); do
		if : 2>/dev/null >"$f.$req.$RDMX_NODE"; then
			sent=yes
			break
		fi
		rdmx_sleep 0.1
	done
	if [ "$sent" = no ]; then
		echo "rdmx_${what}_node: cannot write $f.$req.$RDMX_NODE" >&2
		return 1
	fi
	end=$((SECONDS + limit))
	while [ "$SECONDS" -lt "$end" ]; do
		[ -e "$f.$ans" ] && return 0
		if [ -e "$f.failed" ]; then
			echo "rdmx_${what}_node: node $n not ${ans}: $(cat "$f.failed")" >&2
			return 1
		fi
		rdmx_sleep 0.1
	done
	[ -e "$f.$ans" ] && return 0
	echo "rdmx_${what}_node: the host did not answer in ${limit}s" >&2
	return 1
}

# rdmx_await_kill [TIMEOUT]: for the node another kills with rdmx_kill_node
# (or restarts with rdmx_restart_node): wait to be killed. Returns 1 if this guest is still alive after TIMEOUT s
# (default 120), or at once if the host refused to kill it.
rdmx_await_kill() {
	local limit=${1:-120} f="$RDMX_SYNC/kill/$RDMX_NODE" end

	end=$((SECONDS + limit))
	while [ "$SECONDS" -lt "$end" ]; do
		if [ -e "$f.failed" ]; then
			echo "rdmx_await_kill: the host did not kill this node: $(cat "$f.failed")" >&2
			return 1
		fi
		rdmx_sleep 0.5
	done
	echo "rdmx_await_kill: still alive after ${limit}s" >&2
	return 1
}

# rdmx_kmemleak_check TAG: two kmemleak scans now, as the harness does
# after the script (a node killed with rdmx_kill_node never gets there);
# the report goes to $RDMX_OUT/kmemleak-TAG.txt, which the harness scans
# as well. Records the result "kmemleak: nothing unreferenced after TAG",
# skipped on a kernel without kmemleak.
rdmx_kmemleak_check() {
	local name="kmemleak: nothing unreferenced after $1" f="$RDMX_OUT/kmemleak-$1.txt"

	if [ ! -w /sys/kernel/debug/kmemleak ]; then
		rdmx_skip "$name" "no kmemleak in this kernel"
		return 0
	fi
	# An object is reported once it has been unreferenced for a full
	# scan and is older than the minimum age (5 s).
	echo scan >/sys/kernel/debug/kmemleak
	rdmx_sleep 6
	echo scan >/sys/kernel/debug/kmemleak
	cat /sys/kernel/debug/kmemleak >"$f"
	if [ -s "$f" ]; then
		rdmx_fail "$name" "see $(basename "$f")"
		grep 'unreferenced object' "$f" | head -n 5 | sed 's/^/    # /'
	else
		rdmx_pass "$name"
	fi
	# For guest-init's scan after the script: none is needed when this
	# was the script's last result.
	wc -l <"$RDMX_RESULTS" >"$RDMX_OUT/.kmemleak-results"
}

# rdmx_wait_port RDMADEV [STATE]: wait (60 s by the clock) for port 1 to
# reach STATE.
rdmx_wait_port() {
	local dev=$1 want=${2:-ACTIVE} state end=$((SECONDS + 60))

	while :; do
		read -r state <"/sys/class/infiniband/$dev/ports/1/state" 2>/dev/null
		[[ ${state:-} == *"$want"* ]] && return 0
		[ "$SECONDS" -lt "$end" ] || return 1
		rdmx_sleep 0.2
	done
}

# rdmx_poll SECS CMD...: CMD succeeds within SECS seconds (tried every
# 0.2 s, and once more at the end). The time is the clock's, not a count
# of tries: a CMD that takes seconds itself (python under the debug
# kernel) must not stretch the wait.
rdmx_poll() {
	local end=$((SECONDS + $1))

	shift
	while [ "$SECONDS" -lt "$end" ]; do
		"$@" && return 0
		rdmx_sleep 0.2
	done
	"$@"
}

# rdmx_nullb N MIB [ATTR=VALUE...]: a memory-backed null_blk of MIB MiB
# with 512-byte blocks and the given configfs attributes, /dev/nullbN.
rdmx_nullb() {
	local n=nullb$1 d=/sys/kernel/config/nullb/nullb$1 a

	modprobe null_blk nr_devices=0 || return 1
	mkdir "$d" || return 1
	echo "$2" >"$d/size" && echo 1 >"$d/memory_backed" &&
		echo 512 >"$d/blocksize" || return 1
	shift 2
	for a in "$@"; do
		echo "${a#*=}" >"$d/${a%%=*}" || return 1
	done
	echo 1 >"$d/power" || return 1
	rdmx_poll 10 test -b "/dev/$n"
}

# rdmx_tap_absorb PREFIX FILE: a C test tool's "ok N - x", "not ok N - x"
# and "ok N - x # SKIP why" lines become results, named PREFIX x.
rdmx_tap_absorb() {
	local l

	while IFS= read -r l; do
		case "$l" in
		"not ok "*) rdmx_fail "$1${l#not ok * - }" ;;
		"ok "*"# SKIP"*) l=${l#ok * - }; rdmx_skip "$1${l%% # SKIP*}" "${l#* # SKIP }" ;;
		"ok "*) rdmx_pass "$1${l#ok * - }" ;;
		esac
	done <"$2"
}

# rdmx_export_json NAME EXPR: EXPR over export NAME's JSON (as j), on the
# node that serves it.
rdmx_export_json() {
	rdmxctl -j export show "$1" | rdmx_json "len(j) == 1 and ($2)" 2>/dev/null
}

# rdmx_json EXPR: evaluate a Python expression over JSON on stdin (as j).
# Python runs with -S here and in every test script: without the site
# module it starts in half the time (about 2.5 s instead of 5 under TCG on
# the debug kernel), and the scripts use only the standard library.
rdmx_json() {
	python3 -S -c "import json,sys; j=json.load(sys.stdin); r=($1); sys.exit(0 if r else 1)"
}

# rdmx_kunit_collect SUITE...: turn each suite's KTAP results into results
# lines, one per test case; a missing suite or crashed case fails.
rdmx_kunit_collect() {
	local suite f line status name

	for suite in "$@"; do
		f=/sys/kernel/debug/kunit/$suite/results
		if [ ! -r "$f" ]; then
			rdmx_fail "kunit $suite ran" "no $f"
			continue
		fi
		cp "$f" "$RDMX_OUT/kunit-$suite.ktap"
		# Case results are the lines "ok N NAME" / "not ok N NAME" at the
		# suite's own indentation (one level in from the suite line).
		while IFS= read -r line; do
			case "$line" in
			"    ok "*|"    not ok "*) ;;
			*) continue ;;
			esac
			line=${line#    }
			status=${line%% *}
			[ "$status" = not ] && status="not ok"
			name=$(echo "$line" | sed -E 's/^(not )?ok [0-9]+ //')
			case "$status:$name" in
			"ok:"*"# SKIP"*) rdmx_skip "kunit $suite.${name%% #*}" "${name#*# SKIP }" ;;
			"ok:"*) rdmx_pass "kunit $suite.$name" ;;
			*) rdmx_fail "kunit $suite.$name" ;;
			esac
		done <"$f"
		# The suite's own verdict, last: present only if it ran to the end.
		grep -Eq "^ok [0-9]+ $suite( #.*)?\$" "$f" ||
			rdmx_fail "kunit $suite completed" "no passing suite verdict"
	done
}

# rdmx_wait_cm_listen PORT [TIMEOUT]: wait until an rdma_cm listener on
# PORT exists in this guest (as "rdma resource show cm_id" reports it), up
# to TIMEOUT s by the clock (default 120).
rdmx_wait_cm_listen() {
	local port=$1 end=$((SECONDS + ${2:-120}))

	while :; do
		rdma resource show cm_id 2>/dev/null | grep LISTEN | grep -q ":$port\b" &&
			return 0
		[ "$SECONDS" -lt "$end" ] || return 1
		rdmx_sleep 0.2
	done
}

# rdmx_pair_run TAG PORT OUTFILE SERVER-CMD... -- CLIENT-CMD...: run a
# server in node 1 and a client in node 2, the client started once the
# server's rdma_cm listener on PORT exists; each is killed after
# RDMX_PAIR_TIMEOUT seconds (default 300). Returns this node's status.
rdmx_pair_run() {
	local tag=$1 port=$2 outf=$3 srv rc=1 server=() client=()
	shift 3
	while [ "$1" != -- ]; do server+=("$1"); shift; done
	shift
	client=("$@")

	if [ "$RDMX_NODE" = 1 ]; then
		timeout "${RDMX_PAIR_TIMEOUT:-300}" "${server[@]}" >"$outf" 2>&1 &
		srv=$!
		rdmx_wait_cm_listen "$port" ||
			echo "server not listening on $port after 60 s" >>"$outf"
		rdmx_barrier "$tag-server-up"
		wait "$srv"
		rc=$?
	else
		rdmx_barrier "$tag-server-up"
		timeout "${RDMX_PAIR_TIMEOUT:-300}" "${client[@]}" >"$outf" 2>&1
		rc=$?
	fi
	rdmx_barrier "$tag-done"
	return "$rc"
}

# rdmx_rping_pair OUTFILE COUNT SIZE: rping between the guests over rdma_cm
# (RDMA READ and WRITE of a known pattern, validated with -V).
rdmx_rping_pair() {
	rdmx_pair_run "rping-$RDMX_RDMA_DEV" 7174 "$1" \
		rping -s -V -C "$2" -S "$3" -a "$RDMX_ADDR_1" -- \
		rping -c -V -C "$2" -S "$3" -a "$RDMX_ADDR_1"
}

# rdmx_perftest_pair TOOL OUTFILE ARGS...: a perftest TOOL between the
# guests over rdma_cm. Benchmarks only: perftest calibrates the CPU clock
# and refuses to report on a noisy emulated CPU.
rdmx_perftest_pair() {
	local tool=$1 outf=$2
	shift 2
	rdmx_pair_run "$tool-$RDMX_RDMA_DEV" 18515 "$outf" \
		"$tool" -R -d "$RDMX_RDMA_DEV" "$@" -- \
		"$tool" -R -d "$RDMX_RDMA_DEV" "$@" "$RDMX_ADDR_1"
}
