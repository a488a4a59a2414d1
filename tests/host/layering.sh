#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/host/layering.sh TREE: check the module's layers
# (Documentation/architecture.rst) in TREE, a copy of the sources in which
# the module has been built (tests/host/build-warnings.sh runs it):
#   - kmod/core includes no header of kmod/msg or kmod/blk, and neither
#     service includes the other's;
#   - no object of kmod/core refers to a symbol that an object of kmod/msg
#     or kmod/blk defines, and neither service refers to the other's.
# The services may use the core; kmod/module.c, which ties the layers
# together, may use all three.
set -euo pipefail
tree=${1:?usage: layering.sh TREE}
cd "$tree"
fail=0

# Includes: what a layer's files name with "DIR/..." or "../".
for pair in "core:msg blk" "msg:blk" "blk:msg"; do
	layer=${pair%%:*}
	for other in ${pair#*:}; do
		hits=$(grep -nE "^#include \"(\\.\\./)*(kmod/)?$other/" kmod/"$layer"/*.[ch] || true)
		hits+=$(grep -nE '^#include "\.\./' kmod/"$layer"/*.[ch] || true)
		if [ -n "$hits" ]; then
			echo "kmod/$layer includes kmod/$other:"
			echo "$hits"
			fail=1
		fi
	done
done

# Symbols: undefined in one layer's objects, defined in a forbidden one.
defined() { nm --defined-only -g "kmod/$1"/*.o | awk 'NF == 3 { print $3 }' | sort -u; }
undefined() { nm -u "kmod/$1"/*.o | awk 'NF == 2 { print $2 }' | sort -u; }
ls kmod/core/*.o kmod/msg/*.o kmod/blk/*.o >/dev/null
for pair in "core:msg blk" "msg:blk" "blk:msg"; do
	layer=${pair%%:*}
	for other in ${pair#*:}; do
		hits=$(comm -12 <(undefined "$layer") <(defined "$other"))
		if [ -n "$hits" ]; then
			echo "kmod/$layer uses symbols of kmod/$other:"
			echo "$hits" | sed 's/^/  /'
			fail=1
		fi
	done
done

for layer in core msg blk; do
	printf 'kmod/%s: %d files, %d lines, %d symbols used from other layers\n' \
		"$layer" "$(ls kmod/"$layer"/*.[ch] | wc -l)" \
		"$(cat kmod/"$layer"/*.[ch] | wc -l)" \
		"$(comm -12 <(undefined "$layer") <( (for o in core msg blk; do [ "$o" = "$layer" ] || defined "$o"; done) | sort -u) | wc -l)"
done
[ "$fail" = 0 ] && echo "layering: core uses no service; services use only the core"
exit "$fail"
