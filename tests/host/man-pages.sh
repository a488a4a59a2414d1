#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Every man page renders, and groff has nothing to warn about. Every object
# of rdmxctl's command table (but help and version, which rdmxctl.8 covers)
# has its page rdmxctl-OBJECT.8, named in rdmxctl.8's OBJECT list and SEE
# ALSO.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
man=$repo/userspace-tools/man
pages=("$man"/*.8)
[ -e "${pages[0]}" ] || { echo "no man pages"; exit 1; }
for p in "${pages[@]}"; do
	warn=$(groff -man -ww -z "$p" 2>&1)
	[ -z "$warn" ] || { echo "$p: $warn"; exit 1; }
	man -l "$p" 2>/dev/null | grep -q . || { echo "$p renders empty"; exit 1; }
	echo "$p ok"
done

objs=$(sed -n 's/^\t{ "\([a-z]*\)",\tcmd_.*/\1/p' \
	"$repo/userspace-tools/rdmxctl/rdmxctl.c" | grep -vxE 'help|version')
[ -n "$objs" ] || { echo "no commands found in rdmxctl.c"; exit 1; }
main=$man/rdmxctl.8
objline=$(sed -n '/^\.IR OBJECT/{n;p}' "$main")
for o in $objs; do
	[ -s "$man/rdmxctl-$o.8" ] || { echo "rdmxctl $o: no rdmxctl-$o.8"; exit 1; }
	grep -q "^\.TH RDMXCTL\\\\-${o^^} 8 " "$man/rdmxctl-$o.8" ||
		{ echo "rdmxctl-$o.8: .TH is not RDMXCTL\\-${o^^} 8"; exit 1; }
	echo "$objline" | grep -qw -- "$o" ||
		{ echo "rdmxctl.8: $o missing from OBJECT := { ... }"; exit 1; }
	sed -n '/^\.SH "SEE ALSO"/,$p' "$main" | grep -q "^\.BR rdmxctl\\\\-$o (8)" ||
		{ echo "rdmxctl.8: SEE ALSO lacks rdmxctl-$o(8)"; exit 1; }
	echo "rdmxctl $o: page ok"
done
