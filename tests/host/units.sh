#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The systemd units (userspace-tools/systemd) pass systemd-analyze verify,
# with rdmxctl where systemd would find it (the units name it bare: systemd
# looks in /usr/local/sbin, where make install puts it, and /usr/sbin,
# where the package does).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
bin=$repo/userspace-tools/rdmxctl/rdmxctl
[ -x "$bin" ] || { echo "build rdmxctl first (make rdmxctl)"; exit 1; }
command -v systemd-analyze >/dev/null || { echo "no systemd-analyze"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rdmx-units.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for u in "$repo"/userspace-tools/systemd/*.service; do
	sed "s#^\(Exec[A-Za-z]*=\)rdmxctl #\1$bin #" "$u" >"$tmp/${u##*/}"
	grep -q '^ExecStart=.*rdmxctl config apply' "$tmp/${u##*/}"
done
out=$(systemd-analyze verify --man=no "$tmp"/*.service 2>&1) || true
if [ -n "$out" ]; then
	echo "$out"
	exit 1
fi
grep -q -- '--client --retry forever' "$tmp/rdmx-client.service"
grep -q '^Before=remote-fs-pre.target' "$tmp/rdmx-client.service"
echo "units ok: $(cd "$tmp" && echo *.service)"
