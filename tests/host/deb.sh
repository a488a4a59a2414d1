#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/host/deb.sh [--build-only]: rdmx's Debian packages (debian/), end
# to end, without ever breaking the host.
#
#   1. builds rdmx-dkms, rdmxctl and rdmx-dev (dpkg-buildpackage -b) in a
#      copy of the checkout, which stays clean, and puts them in
#      .build/deb/ (with --build-only, what `make deb` runs, it stops here);
#   2. lintian: no error (warnings and the rest are listed as comments);
#   3. DKMS in throwaway trees (--dkmstree, --sourcetree, --installtree):
#      add, build, install and remove for Debian's 6.1 and 6.12 headers
#      (tests/vm/build-kernel --linux LINE headers), the module naming the
#      kernel in its vermagic;
#   4. failing soft: dkms skips (status 77) kernels older than 6.1;
#      `dkms autoinstall` leaves rdmx alone; the postinst, the prerm and
#      the kernel hook report a failed dkms step and still succeed;
#   5. installs the three packages into the host (dpkg -i; without
#      headers for the running kernel, as on the test host, dkms builds
#      nothing; with them it builds and installs rdmx.ko, which the purge
#      removes; nothing is ever loaded), checks them, purges them and
#      checks nothing is left; a trap purges on any failure or signal.
#      Skipped when not root, and refused when rdmx is already there.
#
# Prints "ok - ..." or "not ok - ..." per check; exit status 1 when any
# failed. Needs what tests/deps.sh installs (debhelper, dh-dkms, dkms,
# lintian, dwarves, ...) and the kernel headers build-kernel fetches.
#
# shellcheck disable=SC2317 # the checks are functions run through check()
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
build_only=0
case "${1:-}" in
--build-only) build_only=1 ;;
"") ;;
*) echo "usage: $0 [--build-only]" >&2; exit 2 ;;
esac

start=$SECONDS
pkgs=(rdmx-dkms rdmxctl rdmx-dev)
out=$repo/.build/deb
mkdir -p "$out"
# One run at a time: the host install goes through dpkg and /usr/src.
exec 9>"$repo/.build/deb.lock"
flock 9
tree=$(mktemp -d "${TMPDIR:-/tmp}/rdmx-deb.XXXXXX")
failed=0 host_installed=0

cleanup() {
	if [ "$host_installed" = 1 ]; then
		echo "# purging the packages from the host" >&2
		dpkg --purge "${pkgs[@]}" >&2 || true
	fi
	rm -rf "$tree"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

ok() { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; failed=1; }
comment() { sed 's/^/# /'; }
# check NAME CMD...: CMD's output goes to $tree/last.log, shown when it
# fails. CMD may be a function: errexit is off in it, so each of its steps
# has to return its own failure.
check() {
	local name=$1
	shift
	if "$@" >"$tree/last.log" 2>&1; then
		ok "$name"
	else
		not_ok "$name"
		tail -n 25 "$tree/last.log" | comment
	fi
}

# Tools.
missing=()
for t in git dpkg-buildpackage dh dh_dkms fakeroot lintian dkms pahole modinfo; do
	command -v "$t" >/dev/null || missing+=("$t")
done
if [ ${#missing[@]} -gt 0 ]; then
	not_ok "packaging tools installed (missing: ${missing[*]}; run tests/deps.sh)"
	exit 1
fi

version=$(dpkg-parsechangelog -l "$repo/debian/changelog" -S Version)
arch=$(dpkg --print-architecture)
declare -A deb=(
	[rdmx-dkms]=rdmx-dkms_${version}_all.deb
	[rdmxctl]=rdmxctl_${version}_$arch.deb
	[rdmx-dev]=rdmx-dev_${version}_all.deb
)
changes=rdmx_${version}_$arch.changes

# 1. Build, in a copy of the files git knows of (tracked, and untracked
# ones not ignored, so that uncommitted work is packaged as it stands).
mkdir -p "$tree/src"
(cd "$repo" && git ls-files -z --cached --others --exclude-standard |
	while IFS= read -r -d '' f; do
		if [ -e "$f" ] || [ -L "$f" ]; then printf '%s\0' "$f"; fi
	done | xargs -0 cp -a --parents -t "$tree/src")
t0=$SECONDS
if (cd "$tree/src" && dpkg-buildpackage -us -uc -b) >"$tree/build.log" 2>&1; then
	ok "packages build (dpkg-buildpackage -b, $((SECONDS - t0))s)"
else
	not_ok "packages build (dpkg-buildpackage -b)"
	tail -n 40 "$tree/build.log" | comment
	exit 1
fi
rm -f "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo
cp "$tree"/*.deb "$tree/$changes" "$tree"/*.buildinfo "$out/"
for p in "${pkgs[@]}"; do
	[ -f "$out/${deb[$p]}" ] || not_ok "built ${deb[$p]}"
done
echo "# packages in $out:"
(cd "$out" && ls -1 ./*.deb) | comment
if [ "$build_only" = 1 ]; then
	exit "$failed"
fi

leftovers() {
	local f bad=0
	for f in debian/files debian/.debhelper debian/debhelper-build-stamp \
		 debian/tmp debian/rdmx-dkms debian/rdmxctl debian/rdmx-dev; do
		[ ! -e "$repo/$f" ] || { echo "left in the checkout: $f"; bad=1; }
	done
	return "$bad"
}
check "the package build leaves the checkout alone" leftovers

mkdir -p "$tree/x" "$tree/ctl"
for p in "${pkgs[@]}"; do
	dpkg -x "$out/${deb[$p]}" "$tree/x/$p"
	dpkg-deb -e "$out/${deb[$p]}" "$tree/ctl/$p"
done
src=$tree/x/rdmx-dkms/usr/src/rdmx-$version

versions_agree() {
	local mk conf
	mk=$(sed -n 's/^VERSION := //p' "$repo/Makefile")
	conf=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$src/dkms.conf")
	echo "debian/changelog $version, Makefile $mk, dkms.conf $conf"
	[ "$mk" = "$version" ] && [ "$conf" = "$version" ]
}
check "versions agree: debian/changelog, Makefile, dkms.conf ($version)" versions_agree

contents_dkms() {
	local f bad=0
	for f in Kbuild dkms.conf uapi/linux/rdmx.h "$repo"/kmod/*.c "$repo"/kmod/*/*.[ch]; do
		f=${f#"$repo/"}
		[ -s "$src/$f" ] || { echo "missing: usr/src/rdmx-$version/$f"; bad=1; }
	done
	for f in postinst.d header_postinst.d; do
		[ -x "$tree/x/rdmx-dkms/etc/kernel/$f/rdmx-dkms" ] ||
			{ echo "missing: etc/kernel/$f/rdmx-dkms"; bad=1; }
	done
	f=$(cd "$tree/x/rdmx-dkms" && find . -type f ! -path './usr/src/*' \
		! -path './usr/share/doc/*' ! -path './etc/kernel/*')
	[ -z "$f" ] || { echo "unexpected: $f"; bad=1; }
	f=$(find "$src" -name '*.o' -o -name '*.ko' -o -name '*.cmd')
	[ -z "$f" ] || { echo "build products: $f"; bad=1; }
	dpkg-deb -f "$out/${deb[rdmx-dkms]}" Depends | grep -q '\bdkms\b' ||
		{ echo "no Depends on dkms"; bad=1; }
	return "$bad"
}
check "rdmx-dkms: Kbuild, kmod/, uapi/ and dkms.conf in /usr/src/rdmx-$version, kernel hooks" \
	contents_dkms

contents_ctl() {
	local x=$tree/x/rdmxctl m bad=0
	[ -x "$x/usr/sbin/rdmxctl" ] || { echo "missing: usr/sbin/rdmxctl"; bad=1; }
	cmp "$repo/userspace-tools/udev/60-rdmx.rules" "$x/usr/lib/udev/rules.d/60-rdmx.rules" || bad=1
	cmp "$repo/userspace-tools/completion/rdmxctl" "$x/usr/share/bash-completion/completions/rdmxctl" || bad=1
	for m in "$repo"/userspace-tools/systemd/*.service; do
		cmp "$m" "$x/usr/lib/systemd/system/${m##*/}" || bad=1
	done
	for m in "$repo"/userspace-tools/man/*.8; do
		[ -s "$x/usr/share/man/man8/${m##*/}.gz" ] ||
			{ echo "missing: man page ${m##*/}"; bad=1; }
	done
	if dpkg-deb -f "$out/${deb[rdmxctl]}" Depends | grep -Eq 'rdmacm|ibverbs'; then
		echo "rdmxctl depends on librdmacm or libibverbs"
		bad=1
	fi
	return "$bad"
}
check "rdmxctl: /usr/sbin/rdmxctl, man pages, udev rule in /usr/lib/udev/rules.d, systemd units" contents_ctl
check "rdmx-dev: /usr/include/linux/rdmx.h is uapi/linux/rdmx.h" \
	cmp "$repo/uapi/linux/rdmx.h" "$tree/x/rdmx-dev/usr/include/linux/rdmx.h"

# 2. lintian: errors fail, the rest is listed.
t0=$SECONDS
lrc=0
lintian -I --pedantic --tag-display-limit 0 "$out/$changes" >"$tree/lintian.log" 2>&1 || lrc=$?
grep -v 'running with root privileges' "$tree/lintian.log" >"$tree/lintian.tags" || true
nerr=$(grep -c '^E:' "$tree/lintian.tags" || true)
nwarn=$(grep -c '^W:' "$tree/lintian.tags" || true)
nother=$(grep -c '^[IPX]:' "$tree/lintian.tags" || true)
if [ "$lrc" = 0 ] && [ "$nerr" = 0 ]; then
	ok "lintian -I --pedantic: no error ($nwarn warnings, $nother info/pedantic/experimental; $((SECONDS - t0))s)"
else
	not_ok "lintian -I --pedantic: no error ($nerr errors, status $lrc)"
fi
comment <"$tree/lintian.tags"

# 3. DKMS in throwaway trees. sign_file names no program, so that dkms
# neither signs nor makes a signing key (in /var/lib/dkms) on any host.
mkdir -p "$tree/dkms" "$tree/modules"
dk=(--dkmstree "$tree/dkms" --sourcetree "$tree/x/rdmx-dkms/usr/src"
    --installtree "$tree/modules")
rdkms() { sign_file=$tree/no-sign-file dkms "$@" "${dk[@]}"; }

check "dkms add (throwaway trees)" rdkms add -m rdmx -v "$version"

declare -A kdir kver
for line in 6.1 6.12; do
	if d=$("$repo/tests/vm/build-kernel" --linux "$line" headers 2>"$tree/build-kernel.log"); then
		kdir[$line]=$d/obj
		kver[$line]=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' \
			"$d/obj/include/generated/utsrelease.h")
	fi
	if [ -z "${kver[$line]:-}" ]; then
		not_ok "Debian's Linux $line headers (tests/vm/build-kernel --linux $line headers)"
		tail -n 10 "$tree/build-kernel.log" | comment
	fi
done

# 4. Failing soft, while rdmx is added.
regex_sound() {
	local re k bad=0
	re=$(bash -c '. "$1" && printf %s "$BUILD_EXCLUSIVE_KERNEL"' _ "$src/dkms.conf") || return 1
	echo "BUILD_EXCLUSIVE_KERNEL=$re"
	for k in 6.1 6.1.0-56-amd64 6.1.192 6.2.0-1-amd64 6.9.12 6.10.0 \
		 6.12.117+deb12-amd64 6.19.0-rc1 7.0 7.3.4+deb13-amd64 8.1.0 \
		 10.0.0 12.5.1-1-cloud-amd64; do
		[[ $k =~ $re ]] || { echo "rejects $k"; bad=1; }
	done
	for k in 6.0 6.0.0-1-amd64 6.0.19 5.10.0-99-amd64 5.19.17 \
		 4.19.0-27-amd64 3.16.0-11-amd64 2.6.32 1.0; do
		! [[ $k =~ $re ]] || { echo "accepts $k"; bad=1; }
	done
	return "$bad"
}
check "dkms.conf's BUILD_EXCLUSIVE_KERNEL takes 6.1 and later (6.10, 7.x, 10.x), not 6.0, 5.x, 4.x" \
	regex_sound

# excluded KVER: dkms build skips KVER, exit status 77, and says why.
excluded() {
	local o rc=0
	o=$(rdkms build -m rdmx -v "$version" -k "$1" --kernelsourcedir "${kdir[6.1]}" 2>&1) || rc=$?
	printf '%s\n' "$o"
	echo "dkms exit status $rc"
	[ "$rc" = 77 ] && [[ $o == *"BUILD_EXCLUSIVE directive which does not match this kernel"* ]]
}
if [ -n "${kver[6.1]:-}" ]; then
	for k in 5.10.0-99-amd64 6.0.0-1-amd64; do
		check "dkms build for $k: skipped with a message (status 77, which the postinst reports as Skipped.)" \
			excluded "$k"
	done
fi

# dkms autoinstall for an excluded kernel: dkms 3.0.10 would exit 11 for a
# module marked AUTOINSTALL, failing the kernel package (see dkms.conf).
autoinstall_spares() {
	mkdir -p "$tree/modules/$1"
	rdkms autoinstall -k "$1" --kernelsourcedir "${kdir[6.1]}" --no-depmod
}
[ -z "${kver[6.1]:-}" ] ||
	check "dkms autoinstall for 5.10.0-99-amd64 succeeds: rdmx is not AUTOINSTALL" \
		autoinstall_spares 5.10.0-99-amd64

# 3, continued: build, install for each kernel line.
built() { # LINE
	local rc=0
	rdkms build -m rdmx -v "$version" -k "${kver[$1]}" --kernelsourcedir "${kdir[$1]}" || rc=$?
	if [ "$rc" != 0 ]; then
		tail -n 30 "$tree/dkms/rdmx/$version/build/make.log" 2>/dev/null
		return 1
	fi
}
installed() { # LINE
	local k=${kver[$1]} ko vm
	mkdir -p "$tree/modules/$k"
	rdkms install -m rdmx -v "$version" -k "$k" --kernelsourcedir "${kdir[$1]}" --no-depmod || return 1
	rdkms status -m rdmx -v "$version" -k "$k" | grep -q ': installed$' || return 1
	ko=$(find "$tree/modules/$k" -name 'rdmx.ko*' | head -n1)
	[ -n "$ko" ] || { echo "no rdmx.ko under $tree/modules/$k"; return 1; }
	vm=$(modinfo -F vermagic "$ko")
	echo "$ko: vermagic $vm"
	[ "${vm%% *}" = "$k" ]
}
for line in 6.1 6.12; do
	[ -n "${kver[$line]:-}" ] || continue
	t0=$SECONDS
	check "dkms build for Linux $line headers (${kver[$line]})" built "$line"
	took=$((SECONDS - t0))
	check "dkms install for ${kver[$line]}: rdmx.ko in the install tree, vermagic ${kver[$line]} (build ${took}s)" \
		installed "$line"
done

# The postinst, prerm and kernel hook through stand-ins for dkms.
mkdir -p "$tree/bin" "$tree/stub"
# A dkms that runs the real one in the throwaway trees, logging its calls;
# RDMX_TEST_KSRC is the kernel source dir to give it.
cat >"$tree/bin/dkms" <<EOF
#!/bin/sh
echo "dkms \$*" >>"$tree/dkms-calls.log"
exec env sign_file="$tree/no-sign-file" $(command -v dkms) "\$@" ${dk[*]} --no-depmod \${RDMX_TEST_KSRC:+--kernelsourcedir "\$RDMX_TEST_KSRC"}
EOF
# A dkms whose every action fails, after saying rdmx is there.
cat >"$tree/stub/dkms" <<'EOF'
#!/bin/sh
if [ "$1" = status ]; then echo "rdmx/0.1.0: added"; exit 0; fi
echo "dkms $1: failing on purpose" >&2
exit 10
EOF
# A common.postinst whose module build fails.
cat >"$tree/stub/common.postinst" <<'EOF'
#!/bin/sh
echo "Building initial module for 6.1.0-56-amd64"
echo "Error! Bad return status for module build on kernel: 6.1.0-56-amd64 (x86_64)" >&2
exit 10
EOF
chmod +x "$tree/bin/dkms" "$tree/stub/dkms" "$tree/stub/common.postinst"
# A kernel whose headers build nothing.
mkdir -p "$tree/broken/include"
printf 'modules clean:\n\t@echo "broken headers: failing on purpose" >&2; exit 2\n' >"$tree/broken/Makefile"
hook=$tree/x/rdmx-dkms/etc/kernel/header_postinst.d/rdmx-dkms

postinst_fails_soft() {
	local o rc=0
	sed "s|/usr/lib/dkms/common.postinst|$tree/stub/common.postinst|" \
		"$tree/ctl/rdmx-dkms/postinst" >"$tree/postinst"
	grep -q "$tree/stub/common.postinst" "$tree/postinst" || { echo "no common.postinst call"; return 1; }
	o=$(sh "$tree/postinst" configure "" 2>&1) || rc=$?
	printf '%s\n' "$o"
	echo "postinst exit status $rc"
	[ "$rc" = 0 ] && [[ $o == *"WARNING: the rdmx module was not built"* ]]
}
check "postinst configure: a failed module build is a warning, the package configures" \
	postinst_fails_soft

prerm_fails_soft() {
	local o rc=0
	o=$(PATH="$tree/stub:$PATH" sh "$tree/ctl/rdmx-dkms/prerm" remove 2>&1) || rc=$?
	printf '%s\n' "$o"
	echo "prerm exit status $rc"
	[ "$rc" = 0 ] && [[ $o == *"failing on purpose"* ]] && [[ $o == *WARNING* ]]
}
check "prerm remove: a failed dkms remove is a warning, the package goes" prerm_fails_soft

hook_run() { # KVER KSRC|"": the hook for KVER, whose build dir is KSRC
	local m=$tree/kmods
	rm -rf "$m" "$tree/dkms-calls.log"
	mkdir -p "$m"
	if [ -n "$2" ]; then
		mkdir -p "$m/$1" "$tree/modules/$1"
		ln -s "$2" "$m/$1/build"
	fi
	RDMX_MODULES_DIR=$m RDMX_TEST_KSRC=$2 PATH="$tree/bin:$PATH" sh "$hook" "$1" 2>&1
}
hook_broken() {
	local o rc=0
	o=$(hook_run 10.0.0-broken "$tree/broken") || rc=$?
	printf '%s\n' "$o"
	echo "hook exit status $rc"
	[ "$rc" = 0 ] && [[ $o == *"WARNING: rdmx $version was not built"* ]] &&
		grep -q "install -m rdmx -v $version -k 10.0.0-broken" "$tree/dkms-calls.log"
}
check "kernel hook: a kernel (10.0) rdmx fails to build for (real dkms) is a warning, status 0" hook_broken
hook_old() {
	local o rc=0
	o=$(hook_run 5.10.0-99-amd64 "${kdir[6.1]}") || rc=$?
	printf '%s\n' "$o"
	echo "hook exit status $rc"
	[ "$rc" = 0 ] && [[ $o == *"skipped for kernel 5.10.0-99-amd64"* ]]
}
[ -z "${kver[6.1]:-}" ] ||
	check "kernel hook: a kernel older than 6.1 (real dkms) is skipped, status 0" hook_old
hook_noheaders() {
	hook_run 6.5.0-1-amd64 "" || return 1
	[ ! -s "$tree/dkms-calls.log" ] || { cat "$tree/dkms-calls.log"; return 1; }
}
check "kernel hook: a kernel without headers is left alone" hook_noheaders
hook_installed() {
	local o
	o=$(hook_run "${kver[6.12]}" "${kdir[6.12]}") || return 1
	printf '%s\n' "$o"
	[[ $o != *WARNING* ]] && [[ $o == *"already installed"* ]]
}
[ -z "${kver[6.12]:-}" ] ||
	check "kernel hook: a kernel rdmx is installed for already is a no-op" hook_installed

removed() {
	rdkms remove -m rdmx -v "$version" --all --no-depmod || return 1
	[ -z "$(rdkms status -m rdmx)" ] || { rdkms status; return 1; }
	[ -z "$(find "$tree/modules" -name 'rdmx.ko*')" ] || { find "$tree/modules"; return 1; }
}
check "dkms remove --all: no rdmx left in the DKMS and install trees" removed

# 5. The host, for real.
host_name="dpkg -i of the three packages into this host, then dpkg --purge"
rdmx_in_dpkg() { dpkg-query -W -f='${Package} ${Status}\n' 'rdmx*' 2>/dev/null | grep -v 'not-installed$' || true; }
if [ "$(id -u)" != 0 ]; then
	ok "$host_name # SKIP not root"
elif [ -n "$(rdmx_in_dpkg)" ] || [ -e "/usr/src/rdmx-$version" ] || [ -e /var/lib/dkms/rdmx ]; then
	not_ok "$host_name: rdmx is already on this host (packages or /usr/src/rdmx-$version or /var/lib/dkms/rdmx); left alone"
	rdmx_in_dpkg | comment
else
	t0=$SECONDS
	host_installed=1
	if dpkg -i "$out/${deb[rdmx-dkms]}" "$out/${deb[rdmxctl]}" "$out/${deb[rdmx-dev]}" \
		>"$tree/dpkg-i.log" 2>&1; then
		ok "dpkg -i rdmx-dkms rdmxctl rdmx-dev ($((SECONDS - t0))s)"
	else
		not_ok "dpkg -i rdmx-dkms rdmxctl rdmx-dev"
	fi
	grep -Ei 'dkms|kernel|build|skip|warning|error' "$tree/dpkg-i.log" | comment || true
	status_ok() {
		local p s bad=0
		for p in "${pkgs[@]}"; do
			s=$(dpkg-query -W -f='${Status}' "$p" 2>&1) || true
			echo "$p: $s"
			[ "$s" = "install ok installed" ] || bad=1
		done
		return "$bad"
	}
	check "dpkg-query: install ok installed for ${pkgs[*]}" status_ok
	tool_runs() {
		local o
		o=$(/usr/sbin/rdmxctl --version 2>&1) || return 1
		printf '%s\n' "$o"
		[[ $o == *"$version"* ]]
	}
	check "rdmxctl --version runs and says $version" tool_runs
	header_compiles() {
		printf '#include <linux/rdmx.h>\nunsigned long x = RDMX_IOC_GET_INFO;\n' |
			cc -x c -fsyntax-only -Wall -Werror -
	}
	check "<linux/rdmx.h> from rdmx-dev compiles (cc, system include path)" header_compiles
	host_files() {
		local f bad=0
		for f in "/usr/src/rdmx-$version/dkms.conf" /usr/lib/udev/rules.d/60-rdmx.rules \
			 /usr/share/man/man8/rdmxctl.8.gz /etc/kernel/postinst.d/rdmx-dkms \
			 /etc/kernel/header_postinst.d/rdmx-dkms; do
			[ -e "$f" ] || { echo "missing: $f"; bad=1; }
		done
		dkms status -m rdmx
		dkms status -m rdmx | grep -q "^rdmx/${version}[:,]" || bad=1
		return "$bad"
	}
	check "files in place; dkms has rdmx/$version" host_files
	t0=$SECONDS
	if dpkg --purge "${pkgs[@]}" >"$tree/dpkg-purge.log" 2>&1; then
		host_installed=0
		ok "dpkg --purge rdmx-dkms rdmxctl rdmx-dev ($((SECONDS - t0))s)"
	else
		not_ok "dpkg --purge rdmx-dkms rdmxctl rdmx-dev"
		tail -n 20 "$tree/dpkg-purge.log" | comment
	fi
	nothing_left() {
		local f l bad=0
		l=$(dpkg -l | grep rdmx || true)
		[ -z "$l" ] || { echo "dpkg -l: $l"; bad=1; }
		for f in "/usr/src/rdmx-$version" /var/lib/dkms/rdmx /usr/sbin/rdmxctl \
			 /usr/include/linux/rdmx.h /usr/lib/udev/rules.d/60-rdmx.rules \
			 /usr/share/man/man8/rdmxctl.8.gz /etc/kernel/postinst.d/rdmx-dkms \
			 /etc/kernel/header_postinst.d/rdmx-dkms; do
			[ ! -e "$f" ] || { echo "left: $f"; bad=1; }
		done
		l=$(dkms status | grep rdmx || true)
		[ -z "$l" ] || { echo "dkms status: $l"; bad=1; }
		return "$bad"
	}
	check "after the purge: no rdmx in dpkg -l, dkms status, /usr/src, /etc/kernel, /usr" nothing_left
fi

echo "# deb.sh took $((SECONDS - start))s"
exit "$failed"
