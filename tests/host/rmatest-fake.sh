#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# rmatest-fake.sh: rdmx-rmatest against a fake /dev/rdmx (fake-rdmx.c, an
# LD_PRELOAD library that runs one-sided access between processes of this
# host). Every case must pass against a fake that behaves, and each must
# fail against a fake with a misbehaviour it exists to catch (FAKE_BUG):
# this checks the test program, that it works and that it can fail, not
# the module, which only the guests run. Then tests/integration/rma.sh
# itself runs on two pretend nodes (two processes here) against the fake,
# for rxe and siw, and against broken fakes.
#
# Prints "ok N - ..." or "not ok N - ..." per check, then "N passed, N
# failed"; exits 1 if any check failed.
set -u

repo=$(cd "$(dirname "$0")/../.." && pwd)
RT=$repo/tests/integration/rdmx-rmatest
CC=${CC:-cc}
T=$(mktemp -d "${TMPDIR:-/tmp}/rmatest-fake.XXXXXX") || exit 1
export FAKE_TAG=$$
trap 'rm -rf "$T"; rm -f /dev/shm/rdmxfake.$FAKE_TAG.*' EXIT

n=0 passed=0 failed=0
check() { # DESC CMD...
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

if [ ! -x "$RT" ]; then
	make -s -C "$repo" tools >&2 || { echo "not ok 1 - build rdmx-rmatest"; exit 1; }
fi
if ! "$CC" -shared -fPIC -O2 -Wall -Wextra -Werror -I"$repo/uapi" -o "$T/fake.so" \
	"$repo/tests/host/fake-rdmx.c" 2>"$T/cc.err"; then
	check "the fake rdmx compiles" false
	sed 's/^/    # /' "$T/cc.err"
	echo "$passed passed, $failed failed"
	exit 1
fi

# Ports of the fake are names, not sockets: any number will do.
port=$((20000 + $$ % 20000))

# pair NAME BUG ATOMICS CASE [USER-ARGS...]: an owner and a user, the fake
# misbehaving as BUG ("" for none); ATOMICS yes or no. Sets orc and urc;
# the logs and JSON are $T/NAME-{owner,user}.{log,json}.
pair() {
	local name=$1 bug=$2 atomics=$3 tcase=$4 p=$port p2=$((port + 1)) opid
	local -a env=(env FAKE_BUG="$bug" LD_PRELOAD="$T/fake.so")
	shift 4
	port=$((port + 2))
	[ "$atomics" = no ] && env+=(FAKE_NO_ATOMICS=1)
	"${env[@]}" timeout 300 "$RT" owner -p "$p" -P "$p2" -S fake --dev /dev/rdmx-fake \
		--idle-timeout 20 --json "$T/$name-owner.json" >"$T/$name-owner.log" 2>&1 &
	opid=$!
	"${env[@]}" timeout 300 "$RT" user -p "$p" -P "$p2" -S fake --dev /dev/rdmx-fake \
		--atomics "$atomics" --idle-timeout 20 --wait 10 --json "$T/$name-user.json" \
		"$@" 127.0.0.1 "$tcase" >"$T/$name-user.log" 2>&1
	urc=$?
	wait "$opid"
	orc=$?
}

# json FILE EXPR: EXPR, in Python over the JSON in FILE as j, is true
json() {
	python3 -c "import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1" 2>/dev/null
}

# passes NAME: both sides exited 0 and say so in their JSON
passes() {
	if [ "$urc" = 0 ] && [ "$orc" = 0 ] &&
		json "$T/$1-user.json" 'j["ok"] and j["errors"] == 0 and j["checks"] > 0' &&
		json "$T/$1-owner.json" 'j["ok"] and j["errors"] == 0'; then
		return 0
	fi
	tail -n 5 "$T/$1-user.log" "$T/$1-owner.log" | sed 's/^/    # /'
	return 1
}

# catches NAME REGEX: a side failed, and the failures say REGEX
catches() {
	if [ "$urc" = 0 ] && [ "$orc" = 0 ]; then
		echo "    # $1: both sides passed"
		return 1
	fi
	grep -qE -- "$2" "$T/$1-user.log" "$T/$1-owner.log" || {
		echo "    # $1: failed, but not with /$2/:"
		grep -h FAIL "$T/$1-user.log" "$T/$1-owner.log" | head -n 3 | sed 's/^/    # /'
		return 1
	}
}

# ---- a fake that behaves ----

pair pattern "" yes pattern
check "pattern passes" passes pattern
check "pattern: figures" json "$T/pattern-user.json" 'j["ops"] > 100 and j["bytes"] > 40 << 20 and j["regs"] == 2'
pair imm "" yes imm -n 60
check "imm passes" passes imm
check "imm: the user made 60 immediates" json "$T/imm-user.json" 'j["imms"] == 60'
check "imm: the owner received 60 immediates" json "$T/imm-owner.json" 'j["imms"] == 60'
pair errors "" yes errors
check "errors passes (atomics)" passes errors
check "errors: stale and foreign tokens refused" json "$T/errors-user.json" 'len(j["stale"]) == 5 and set(j["stale"]) <= {"EINVAL", "EACCES", "EIO", "ECONNRESET"}'
pair errors-na "" no errors
check "errors passes (no atomics)" passes errors-na
pair inflight "" yes inflight
check "inflight passes" passes inflight
check "inflight: 64 operations accounted for" json "$T/inflight-user.json" 'j["inflight_done"] + j["inflight_failed"] == 64 and j["events"] == 64'
pair async "" yes async
check "async passes (atomics)" passes async
check "async: every event" json "$T/async-user.json" 'j["events"] == 256 + 2 + 32'
pair async-na "" no async
check "async passes (no atomics)" passes async-na
pair none "" no atomic-none
check "atomic-none passes" passes none
check "atomic-none: 4 EOPNOTSUPP, and says why it skips" json "$T/none-user.json" 'j["eopnotsupp"] == 4 and "EOPNOTSUPP" in j["skipped"]'

# atomic: two users at once on the same word
atomic_pair() { # NAME BUG
	local p=$port opid u1 env=(env FAKE_BUG="$2" LD_PRELOAD="$T/fake.so")
	port=$((port + 2))
	"${env[@]}" timeout 300 "$RT" owner -p "$p" -S fake --dev /dev/rdmx-fake --channels 2 \
		--idle-timeout 20 --json "$T/$1-owner.json" >"$T/$1-owner.log" 2>&1 &
	opid=$!
	"${env[@]}" timeout 300 "$RT" user -p "$p" -S fake --dev /dev/rdmx-fake --atomics yes \
		-n 3000 --slot 1 --peers 2 --idle-timeout 20 --wait 10 \
		--json "$T/$1-user1.json" 127.0.0.1 atomic >"$T/$1-user1.log" 2>&1 &
	u1=$!
	"${env[@]}" timeout 300 "$RT" user -p "$p" -S fake --dev /dev/rdmx-fake --atomics yes \
		-n 3000 --slot 2 --peers 2 --idle-timeout 20 --wait 10 \
		--json "$T/$1-user.json" 127.0.0.1 atomic >"$T/$1-user.log" 2>&1
	urc=$?
	wait "$u1" || urc=1
	cat "$T/$1-user1.log" >>"$T/$1-user.log"
	wait "$opid"
	orc=$?
}
atomic_pair atomic ""
check "atomic passes (two users at once)" passes atomic
check "atomic: the word went up 2 x (3000 + 750)" json "$T/atomic-owner.json" 'j["atomic_total"] == 7500'

# ---- a fake that misbehaves: each case must notice ----

pair m-wd write-drop yes pattern
check "pattern catches a WRITE that did nothing" catches m-wd 'differ|differs'
pair m-rs read-short yes pattern
check "pattern catches a short READ" catches m-rs 'differs'
pair m-wdi write-drop yes imm -n 30
check "imm catches a WRITE missing at its immediate" catches m-wdi "at immediate"
pair m-il imm-late yes imm -n 30
check "imm catches an immediate after a later message" catches m-il "came before its immediate|came in state"
pair m-so stale-ok yes errors
check "errors catches a deregistered region still reachable" catches m-so "deregistered region's token: expected EACCES or EIO or ECONNRESET, got success"
pair m-nc token-nocrc yes errors
check "errors catches a corrupt token taken" catches m-nc "token byte [0-9]+ of [0-9]+ (inverted|flipped): expected EINVAL"
pair m-ri rights yes errors
check "errors catches a WRITE to a read-only region" catches m-ri "WRITE to a read-only region: expected EACCES, got success"
pair m-bo bounds yes errors
check "errors catches an access 1 byte past the end" catches m-bo "1 byte past the end: expected ERANGE, got (success|EIO)"
pair m-wde write-drop yes async
check "async catches a WRITE that did nothing" catches m-wde "differ"
pair m-ed event-dup yes async
check "async catches an event that came twice" catches m-ed "seen before|unknown"
pair m-el event-lose yes async
check "async catches an event that never came" catches m-el "EP_EVENTS after|EINVAL|HANG"
pair m-ar atomic-reg no atomic-none
check "atomic-none catches MR_REG taking the atomic right without atomics" catches m-ar "expected EOPNOTSUPP, got success"
atomic_pair m-na nonatomic
check "atomic catches increments that are not atomic" catches m-na "increment was (seen twice|lost)|the word is|not above|went down"
pair m-ria rights yes atomic
check "atomic catches an atomic on a region without the right" catches m-ria "without the atomic right: expected EACCES, got success"

# ---- rma.sh itself, on two pretend nodes ----

# The guest script runs here as node 1 and node 2 at once, against the fake:
# a copy of lib.sh whose rdmx_wait_cm_listen looks for the fake's
# listeners, rmmod a stub early on PATH, /dev/rdmx the fake. The sysfs
# settings it makes fail harmlessly (there is no /sys/kernel/rdmx here).
sim() { # NAME RDMA [BUG]: sets rc1, rc2; results in $T/NAME/nodeN/results.tap
	local d=$T/$1 k
	local -a pids extra=(FAKE_BUG="${3:-}")

	case "$d" in "$T"/?*) ;; *) echo "sim: bad directory '$d'" >&2; return 1 ;; esac
	mkdir -p "$d/repo/tests/vm" "$d/repo/tests/integration" "$d/bin" "$d/sync" || return 1
	cp "$repo/tests/vm/lib.sh" "$d/repo/tests/vm/lib.sh"
	# shellcheck disable=SC2016  # these lines are code, for the copy of lib.sh
	printf '%s\n' 'rdmx_wait_cm_listen() {' '	local i' \
		'	for i in $(seq 150); do' \
		'		ss -xl | grep -q "@rdmxfake\.$(id -u)\.$1\." && return 0' \
		'		sleep 0.2' '	done' '	return 1' '}' >>"$d/repo/tests/vm/lib.sh"
	ln -sf "$RT" "$d/repo/tests/integration/rdmx-rmatest"
	ln -sf "$repo/userspace-tools/rdmxctl/rdmxctl" "$d/bin/rdmxctl"
	printf '#!/bin/sh\necho "rmmod $* (not here)"\n' >"$d/bin/rmmod"
	chmod +x "$d/bin/rmmod"
	[ "$2" = siw ] && extra+=(FAKE_NO_ATOMICS=1)
	for k in 1 2; do
		mkdir -p "$d/node$k"
		env PATH="$d/bin:$PATH" RDMX_NODE=$k RDMX_NODES=2 RDMX_ADDR_1=198.18.0.1 \
			RDMX_ADDR_2=198.18.0.2 RDMX_ADDR=198.18.0.$k RDMX_RDMA="$2" \
			RDMX_RDMA_DEV="${2}0" RDMX_OUT="$d/node$k" RDMX_SYNC="$d/sync" \
			RDMX_REPO="$d/repo" LD_PRELOAD="$T/fake.so" FAKE_RDMX_PATH=/dev/rdmx \
			RDMX_DEVNODE=/dev/rdmx "${extra[@]}" \
			timeout 600 bash "$repo/tests/integration/rma.sh" 40 500 \
			>"$d/node$k/script.log" 2>&1 &
		pids[k]=$!
	done
	wait "${pids[1]}"
	rc1=$?
	wait "${pids[2]}"
	rc2=$?
}

# sim_clean NAME: both nodes exited 0, with no failed result
sim_clean() {
	if [ "$rc1" = 0 ] && [ "$rc2" = 0 ] &&
		! grep -q '^not ok' "$T/$1"/node*/results.tap; then
		return 0
	fi
	grep -h '^not ok' "$T/$1"/node*/results.tap | head -n 5 | sed 's/^/    # /'
	return 1
}

# sim_fails NAME REGEX: a node failed, with a failed result matching REGEX
sim_fails() {
	[ "$rc1" != 0 ] || [ "$rc2" != 0 ] || return 1
	grep -h '^not ok' "$T/$1"/node*/results.tap | grep -qE -- "$2"
}

sim rxe rxe
check "rma.sh (rxe) passes on two pretend nodes" sim_clean rxe
check "rma.sh (rxe): at least 50 results from the two nodes" \
	test "$(cat "$T"/rxe/node*/results.tap | wc -l)" -ge 50
sim siw siw
check "rma.sh (siw) passes on two pretend nodes" sim_clean siw
check "rma.sh (siw): skips the atomics, saying why" \
	grep -q '^ok - atomic (siw0): .* # SKIP .*EOPNOTSUPP (checked)' "$T/siw/node2/results.tap"
sim siw-bad siw atomic-reg
check "rma.sh (siw) fails, not skips, when MR_REG takes the atomic right" \
	sim_fails siw-bad 'atomic-none|refuses atomics'
sim drop rxe write-drop
check "rma.sh fails when WRITEs get lost" sim_fails drop 'pattern .*every check passed'

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
