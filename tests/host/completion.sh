#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The bash completion (userspace-tools/completion/rdmxctl) completes
# objects, commands, options and the names a (fake) sysfs holds.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/rdmx-compl.XXXXXX")
trap 'rm -rf "$T"' EXIT
# shellcheck source=userspace-tools/completion/rdmxctl
. "$repo/userspace-tools/completion/rdmxctl"
mkdir -p "$T/sys/kernel/rdmx/exports/db" "$T/sys/kernel/rdmx/exports/logs" \
	"$T/sys/block/rdmxb0" "$T/sys/block/sda"
export RDMX_SYSFS=$T/sys
failed=0 n=0

# complete WANT WORD...: completing the last WORD (the line so far) offers
# exactly WANT (space-separated, in any order).
complete_is() {
	local want got
	want=$(printf '%s\n' $1 | sort | tr '\n' ' ' | sed 's/ $//')
	shift
	COMP_WORDS=(rdmxctl "$@")
	COMP_CWORD=$#
	_rdmxctl
	got=$(printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//')
	n=$((n + 1))
	if [ "$got" = "$want" ]; then
		echo "ok $n - rdmxctl $*: $want"
	else
		echo "not ok $n - rdmxctl $*: got '$got', want '$want'"
		failed=1
	fi
}

complete_is "config" co
complete_is "map monitor msg mr" m
complete_is "add del list resize show help" export ""
complete_is "db" export del d
complete_is "db logs --force" export show ""
complete_is "--shared" export add x /dev/null --sh
complete_is "rdmxb0" map show rdmxb
complete_is "rdmxb0 --force" unmap ""
complete_is "--loss-timeout" map host db --loss
complete_is "forever" map host db --loss-timeout f
complete_is "apply" config ap
complete_is "--retry" config apply --re
complete_is "cas" rma host c
exit "$failed"
