#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# One guest, debug kernel: KUnit suites, rdmxctl against the live module,
# bad ioctls, the ioctl fuzzer (FUZZ_SECS as root and as user nobody; the
# argument, default 30), devices coming and going under a loaded rdmx,
# load/unload loops with and without RDMA devices, and last the KUnit
# suites that need a device over soft-iWARP. Run by tests/check
# through
#   tests/vm/run --nodes 1 tests/integration/basic.sh [FUZZ_SECS]
set -u
. "$RDMX_REPO/tests/vm/lib.sh"

fuzz_secs=${1:-30}

dev=$RDMX_RDMA_DEV
abuse=$RDMX_REPO/tests/integration/rdmx-abuse

# Whether rdmx tracks a device: "rdmxctl dev show NAME" fails for a name
# it does not know.
devs_json() { rdmxctl -j dev show; }
tracked() { rdmxctl dev show "$1" >/dev/null 2>&1; }
not_tracked() { ! tracked "$1"; }

# Poll until a device shows up in (or leaves) rdmx's table: removal and
# creation run in the RDMA core's context, not ours.
wait_tracked() {
	local i
	for i in $(seq 50); do "$1" "$2" && return 0; sleep 0.2; done
	return 1
}

test_kunit() {
	if ! insmod "$RDMX_TEST_KO"; then
		rdmx_fail "kunit module loads"
		return
	fi
	rdmx_kunit_collect rdmx_uapi rdmx_device rdmx_proto rdmx_state \
		rdmx_sess rdmx_listener rdmx_token rdmx_rma rdmx_bench rdmx_blk
	# With a device present the tracking case must really run.
	if grep -Eq '^    ok [0-9]+ rdmx_device_tracking_test$' \
		"$RDMX_OUT/kunit-rdmx_device.ktap"; then
		rdmx_pass "kunit device tracking ran against $dev"
	else
		rdmx_fail "kunit device tracking ran against $dev"
	fi
	# ... and so must the sessions suite, over it.
	if grep -Eq '^    ok [0-9]+ rdmx_sess_sizes_test$' \
		"$RDMX_OUT/kunit-rdmx_sess.ktap"; then
		rdmx_pass "kunit sessions connected to this host over $dev"
	else
		rdmx_fail "kunit sessions connected to this host over $dev"
	fi
	# ... and the listeners' port rules, on its address.
	if grep -Eq '^    ok [0-9]+ rdmx_listener_port_test$' \
		"$RDMX_OUT/kunit-rdmx_listener.ktap"; then
		rdmx_pass "kunit listener port rules ran on $dev's address"
	else
		rdmx_fail "kunit listener port rules ran on $dev's address"
	fi
	# ... and one-sided access, over it (atomics may skip, on siw).
	if grep -Eq '^    ok [0-9]+ rdmx_rma_rw_test$' \
		"$RDMX_OUT/kunit-rdmx_rma.ktap"; then
		rdmx_pass "kunit one-sided access ran over $dev"
	else
		rdmx_fail "kunit one-sided access ran over $dev"
	fi
	rdmx_check "kunit module unloads" rmmod rdmx_test
}

test_rdmxctl() {
	local j guid

	rdmx_check "rdmxctl version sees the module" \
		sh -c 'rdmxctl -j version | python3 -S -c "import json,sys; j=json.load(sys.stdin); sys.exit(0 if j[\"module\"] and j[\"module\"][\"abi\"] == 1 else 1)"'
	rdmx_check "rdmxctl dev lists $dev" sh -c "rdmxctl dev | grep -q '$dev'"
	j=$(devs_json)
	printf '%s\n' "$j" >"$RDMX_OUT/dev.json"
	rdmx_check "rdmxctl -j dev: $dev is roce, ACTIVE, on eth0" \
		rdmx_json "any(d['name'] == '$dev' and d['transport'] == 'roce' and d['state'] == 'ACTIVE' and d['netdev'] == 'eth0' for d in j)" <<<"$j"

	# Cross-check with what libibverbs reports for the same device.
	guid=$(ibv_devinfo -d "$dev" 2>/dev/null | awk '/node_guid/ { print $2 }')
	if [ -n "$guid" ]; then
		rdmx_check "node GUID matches ibv_devinfo ($guid)" \
			rdmx_json "any(d['name'] == '$dev' and d['node_guid'] == '$guid' for d in j)" <<<"$j"
	else
		rdmx_fail "ibv_devinfo reports $dev"
	fi
	rdmx_check "max_qp_wr matches ibv_devinfo -v" \
		rdmx_json "any(d['name'] == '$dev' and d['max_qp_wr'] == $(ibv_devinfo -v -d "$dev" | awk '/max_qp_wr/ { print $2 }') for d in j)" <<<"$j"

	rdmxctl doctor >"$RDMX_OUT/doctor.txt" 2>&1
	rdmx_check "rdmxctl doctor finds nothing wrong" test $? -eq 0
	rdmx_check "rdmxctl -j doctor: zero errors" \
		sh -c 'rdmxctl -j doctor | python3 -S -c "import json,sys; sys.exit(json.load(sys.stdin)[\"errors\"])"'
	rdmx_check_fails "rdmxctl dev show of an unknown device fails" \
		rdmxctl dev show no-such-dev
}

# Turn a C test tool's "ok N - x" lines into results; it must have finished.
absorb_tap() { # $1 = prefix, $2 = file
	local line
	while IFS= read -r line; do
		case "$line" in
		"ok "*) rdmx_pass "$1$(echo "$line" | sed -E 's/^ok [0-9]+ - //')" ;;
		"not ok "*) rdmx_fail "$1$(echo "$line" | sed -E 's/^not ok [0-9]+ - //')" ;;
		esac
	done <"$2"
	grep -q ' 0 failed$' "$2" || rdmx_fail "$1$(basename "$2") completed"
}

test_abuse() {
	"$abuse" >"$RDMX_OUT/abuse.txt" 2>&1
	absorb_tap "ioctl: " "$RDMX_OUT/abuse.txt"
}

test_devices_come_and_go() {
	local i

	# siw next to rxe, while rdmx is loaded.
	modprobe -d "$RDMX_MODROOT" siw
	rdma link add siw0 type siw netdev eth0
	rdmx_check "siw0 created under a loaded rdmx is tracked" wait_tracked tracked siw0
	rdmx_check "siw0 shows as iwarp" \
		sh -c "rdmxctl -j dev show siw0 | python3 -S -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)[0][\"transport\"] == \"iwarp\" else 1)'"
	rdma link del siw0
	rdmx_check "siw0 deleted under a loaded rdmx is dropped" wait_tracked not_tracked siw0

	# The test device itself, deleted and created again.
	rdma link del "$dev"
	rdmx_check "$dev deleted is dropped" wait_tracked not_tracked "$dev"
	rdma link add "$dev" type "$RDMX_RDMA" netdev eth0
	rdmx_check "$dev re-created is tracked" wait_tracked tracked "$dev"

	# A rename under a loaded rdmx: found by the new name, not the old.
	rdma dev set "$dev" name rdmxren0
	rdmx_check "$dev renamed is listed by its new name" wait_tracked tracked rdmxren0
	rdmx_check "$dev renamed is not listed by its old name" not_tracked "$dev"
	rdma dev set rdmxren0 name "$dev"
	rdmx_check "renamed back to $dev" wait_tracked tracked "$dev"

	# Listing while devices churn: the table lock against add/remove.
	( for i in $(seq 60); do rdmxctl dev >/dev/null 2>&1; done ) &
	for i in $(seq 8); do
		rdma link add siw1 type siw netdev eth0
		rdma link del siw1
	done
	wait
	rdmx_check "listing survives devices churning" wait_tracked not_tracked siw1

	# Removing the driver removes its devices through rdmx's remove callback.
	rdma link add siw2 type siw netdev eth0
	wait_tracked tracked siw2
	rmmod siw
	rdmx_check "unloading the siw driver drops its device" wait_tracked not_tracked siw2
	rdmx_wait_port "$dev"
}

# The device events reach the trace buffer, with the device's name.
test_tracepoints() {
	local t=/sys/kernel/tracing

	if [ ! -d "$t/events/rdmx" ]; then
		rdmx_fail "rdmx trace events registered"
		return
	fi
	echo >"$t/trace"
	echo 1 >"$t/events/rdmx/enable"
	modprobe siw
	rdma link add siw9 type siw netdev eth0
	wait_tracked tracked siw9
	rdma link del siw9
	wait_tracked not_tracked siw9
	echo 0 >"$t/events/rdmx/enable"
	cp "$t/trace" "$RDMX_OUT/trace.txt"
	rdmx_check "trace event rdmx_device_add for siw9" \
		grep -q 'rdmx_device_add: device=siw9 index=' "$RDMX_OUT/trace.txt"
	rdmx_check "trace event rdmx_device_remove for siw9" \
		grep -q 'rdmx_device_remove: device=siw9 index=' "$RDMX_OUT/trace.txt"
	rmmod siw
}

test_load_unload() {
	local i ok=1

	for i in $(seq 10); do
		rmmod rdmx && insmod "$RDMX_KO" || { ok=0; break; }
	done
	rdmx_check "10 unload/load cycles with $dev present" test "$ok" = 1
	rdmx_check "$dev tracked after reload" wait_tracked tracked "$dev"

	# rdmx before any RDMA device, then one appears.
	rmmod rdmx
	rdma link del "$dev"
	ok=1
	for i in $(seq 5); do
		insmod "$RDMX_KO" && rmmod rdmx || { ok=0; break; }
	done
	rdmx_check "5 load/unload cycles with no RDMA device" test "$ok" = 1
	insmod "$RDMX_KO"
	rdmx_check "rdmx with no devices lists none" \
		sh -c 'rdmxctl -j dev | python3 -S -c "import json,sys; sys.exit(len(json.load(sys.stdin)))"'
	rdma link add "$dev" type "$RDMX_RDMA" netdev eth0
	rdmx_check "$dev created after rdmx loaded is tracked" wait_tracked tracked "$dev"
	rdmx_wait_port "$dev"

	# An open /dev/rdmx pins the module.
	exec 3</dev/rdmx
	rdmx_check_fails "rmmod refused while /dev/rdmx is open" rmmod rdmx
	exec 3<&-
	rdmx_check "rmmod succeeds once it is closed" rmmod rdmx
	rdmx_check "insmod again" insmod "$RDMX_KO"
}

# Every allocation of a module load, and of a device listing, failing in
# turn (fault injection through /proc/thread-self/fail-nth).
test_fault_injection() {
	local d=/sys/kernel/debug
	local failnth=$RDMX_REPO/tests/integration/fail-nth

	if [ ! -d "$d/failslab" ]; then
		rdmx_skip "fault injection" "kernel without FAILSLAB"
		return
	fi
	# kmalloc allocations only (the harness flags the kmalloc caches for
	# failslab's cache filter): that is what rdmx allocates with. Other
	# subsystems' caches are spared: the tracing core, for one, WARNs when
	# a module's trace event fields cannot be allocated, which is its own
	# business. Page allocations are spared too: failing them mostly
	# exercises the module loader's vmalloc paths, slowly.
	echo N >"$d/failslab/ignore-gfp-wait"
	echo 0 >"$d/failslab/verbose"
	echo Y >"$d/failslab/cache-filter"

	rmmod rdmx
	"$failnth" load "$RDMX_KO" rdmx >"$RDMX_OUT/fail-nth-load.txt" 2>&1
	rdmx_check "rdmx loads after the fault sweep" insmod "$RDMX_KO"
	"$failnth" list /dev/rdmx >"$RDMX_OUT/fail-nth-list.txt" 2>&1
	echo Y >"$d/failslab/ignore-gfp-wait"
	echo N >"$d/failslab/cache-filter"
	absorb_tap "fault injection: " "$RDMX_OUT/fail-nth-load.txt"
	absorb_tap "fault injection: " "$RDMX_OUT/fail-nth-list.txt"
	rdmx_check "$dev still tracked after the fault sweep" wait_tracked tracked "$dev"
}

# The ioctl fuzzer, briefly: FUZZ_SECS as root and as user nobody (make
# fuzz runs it for long).
test_ioctl_fuzz() {
	"$RDMX_REPO/tests/integration/ioctl-fuzz.sh" "$fuzz_secs" || rdmx_failed=1
}

# Last, the KUnit suites that need a device once more, over soft-iWARP
# instead of soft-RoCE (tests/integration/kunit-siw.sh).
test_kunit_siw() {
	if [ "$RDMX_RDMA" = siw ]; then
		rdmx_skip "kunit over siw" "test_kunit ran over siw already"
		return
	fi
	rdma link del "$dev"
	if ! modprobe -d "$RDMX_MODROOT" siw ||
	   ! rdma link add siw0 type siw netdev eth0; then
		rdmx_fail "siw0 created for the KUnit suites over siw"
		return
	fi
	rdmx_wait_port siw0
	RDMX_RDMA_DEV=siw0 "$RDMX_REPO/tests/integration/kunit-siw.sh" ||
		rdmx_failed=1
	rdma link del siw0
}

test_kunit
test_fault_injection
test_rdmxctl
test_abuse
test_ioctl_fuzz
test_devices_come_and_go
test_tracepoints
test_load_unload
rdmx_check "rdmxctl dev after all that: $dev ACTIVE" wait_tracked tracked "$dev"
test_kunit_siw
rdmx_done
