#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Every man page renders, and groff has nothing to warn about.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
pages=("$repo"/userspace-tools/man/*.8)
[ -e "${pages[0]}" ] || { echo "no man pages"; exit 1; }
for p in "${pages[@]}"; do
	warn=$(groff -man -ww -z "$p" 2>&1)
	[ -z "$warn" ] || { echo "$p: $warn"; exit 1; }
	man -l "$p" 2>/dev/null | grep -q . || { echo "$p renders empty"; exit 1; }
	echo "$p ok"
done
