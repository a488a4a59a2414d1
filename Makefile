# SPDX-License-Identifier: GPL-2.0
#
# rdmx top-level Makefile. Kernel objects are listed in Kbuild; this file
# drives kbuild (make -C $(KDIR) M=...) and builds the userspace pieces.
#
#   make                 rdmx.ko + rdmxctl (kernel headers and a compiler suffice)
#   make W=1 C=1         the same with extra warnings and sparse
#   make tools           rdmxctl and the test programs (rdmx-blkcraft and
#                        rdmx-msgcraft need librdmacm-dev and libibverbs-dev)
#   make install         module to extra/ + depmod, rdmxctl, man pages, header
#   make deb             Debian packages (rdmx-dkms, rdmxctl, rdmx-dev)
#   make check           every test (host tests, then debug-kernel guests);
#                        FULL=1 KERNELS=all before a release
#   make fuzz            the ioctl and wire fuzzers, DURATION s each (3600;
#                        FUZZ=ioctl or FUZZ=wire for one; FUZZ_JOBS wire
#                        fuzzers of each protocol side by side, 4)
#   make demo            two soft-RoCE guests running rdmx
#   make bench           rdmx against its peers (BENCH_ARGS=--quick: < 10 min)
#   make kernel          build (or reuse) the debug and perf test kernels

VERSION := 0.1.0

# The project's own test kernel when it has been built, else the running
# kernel's headers.
KDIR ?= $(or $(shell tests/vm/build-kernel --print debug 2>/dev/null | sed 's|$$|/obj|'),\
	     $(shell tests/vm/build-kernel --print perf 2>/dev/null | sed 's|$$|/obj|'),\
	     /lib/modules/$(shell uname -r)/build)

PREFIX ?= /usr/local
# udev rules go here (a package would use /usr/lib/udev).
UDEVDIR ?= /etc/udev
DESTDIR ?=
CC ?= cc
USER_CFLAGS := -O2 -g -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE \
	       -I$(CURDIR)/uapi -DRDMX_VERSION='"$(VERSION)"'

RDMXCTL := userspace-tools/rdmxctl/rdmxctl
RDMXCTL_SRCS := $(wildcard userspace-tools/rdmxctl/*.c)
RDMXCTL_HDRS := $(wildcard userspace-tools/rdmxctl/*.h) uapi/linux/rdmx.h
ABUSE := tests/integration/rdmx-abuse
FAILNTH := tests/integration/fail-nth
MSGTEST := tests/integration/rdmx-msgtest
RMATEST := tests/integration/rdmx-rmatest
BLKCRAFT := tests/integration/rdmx-blkcraft
MSGCRAFT := tests/integration/rdmx-msgcraft
IOCTLFUZZ := tests/integration/rdmx-ioctlfuzz
MANPAGES := $(wildcard userspace-tools/man/*.8)
UNITS := $(wildcard userspace-tools/systemd/*.service)

# Sources that kbuild copies into a per-flavour tree for guest builds.
KSRC := Kbuild kmod uapi tests/kunit tests/vm/selftest

.PHONY: all modules rdmxctl tools test-tools clean install modules_install \
	check fuzz demo kernel guest-modules checkpatch help bench deb kernelrelease

all: modules rdmxctl

modules:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

rdmxctl: $(RDMXCTL)

tools: $(RDMXCTL) test-tools

test-tools: $(ABUSE) $(FAILNTH) $(MSGTEST) $(RMATEST) $(BLKCRAFT) $(MSGCRAFT) \
	$(IOCTLFUZZ)

$(RDMXCTL): $(RDMXCTL_SRCS) $(RDMXCTL_HDRS)
	$(CC) $(USER_CFLAGS) -o $@ $(RDMXCTL_SRCS)

TESTLIB := tests/integration/testlib.c tests/integration/testlib.h

$(ABUSE) $(FAILNTH): %: %.c uapi/linux/rdmx.h
	$(CC) $(USER_CFLAGS) -o $@ $<

# The test programs share tests/integration/testlib.c.
$(MSGTEST) $(RMATEST): %: %.c $(TESTLIB) uapi/linux/rdmx.h
	$(CC) $(USER_CFLAGS) -o $@ $< $(filter %.c,$(TESTLIB))

# The ioctl fuzzer races threads.
$(IOCTLFUZZ): %: %.c $(TESTLIB) uapi/linux/rdmx.h
	$(CC) $(USER_CFLAGS) -pthread -o $@ $< $(filter %.c,$(TESTLIB))

# Peers made by hand over librdmacm and libibverbs (a block-service client,
# a message-service peer); they share tests/integration/craftlib.c, and
# testlib.c's PRNG for their fuzzers.
CRAFTLIB := tests/integration/craftlib.c tests/integration/craftlib.h
$(BLKCRAFT) $(MSGCRAFT): %: %.c $(CRAFTLIB) $(TESTLIB) uapi/linux/rdmx.h
	$(CC) $(USER_CFLAGS) -o $@ $< $(filter %.c,$(CRAFTLIB) $(TESTLIB)) \
		-lrdmacm -libverbs

# Build the modules for one test-kernel flavour in .build/FLAVOUR, so that
# debug and perf builds (and the in-place build above) never share objects.
FLAVOUR ?= debug
guest-modules:
	@test -n "$(GUEST_KDIR)" || { echo "guest-modules: GUEST_KDIR not set" >&2; exit 2; }
	@mkdir -p .build/$(FLAVOUR)
	@cp -a --parents --update $(KSRC) .build/$(FLAVOUR)/
	$(MAKE) -C $(GUEST_KDIR) M=$(CURDIR)/.build/$(FLAVOUR) RDMX_TESTS=1 modules

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	rm -rf .build $(RDMXCTL) $(ABUSE) $(FAILNTH) $(MSGTEST) $(RMATEST) \
		$(BLKCRAFT) $(MSGCRAFT) $(IOCTLFUZZ)

# DESTDIR stages an install for packaging (whose postinst runs depmod);
# without it the module goes to /lib/modules/KVER/extra and depmod runs.
# KVER is the release the built module names in its vermagic, which is the
# kernel that will load it: a distribution's headers can make kbuild's own
# guess (make kernelrelease) differ from it.
KVER = $(shell modinfo -F vermagic rdmx.ko 2>/dev/null | cut -d' ' -f1)
modules_install: modules
	@test -n "$(KVER)" || { echo "modules_install: no kernel release in rdmx.ko" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_DIR=extra KERNELRELEASE=$(KVER) \
		$(if $(DESTDIR),INSTALL_MOD_PATH=$(DESTDIR)) DEPMOD=true modules_install
	$(if $(DESTDIR),,depmod -a $(KVER))

# The release `make install` installs for and runs depmod for.
kernelrelease: modules
	@echo $(KVER)

install: modules_install $(RDMXCTL)
	install -D -m 0755 $(RDMXCTL) $(DESTDIR)$(PREFIX)/sbin/rdmxctl
	install -d $(DESTDIR)$(PREFIX)/share/man/man8
	install -m 0644 $(MANPAGES) $(DESTDIR)$(PREFIX)/share/man/man8/
	install -D -m 0644 uapi/linux/rdmx.h $(DESTDIR)$(PREFIX)/include/linux/rdmx.h
	install -D -m 0644 userspace-tools/udev/60-rdmx.rules \
		$(DESTDIR)$(UDEVDIR)/rules.d/60-rdmx.rules
	install -D -m 0644 userspace-tools/completion/rdmxctl \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/rdmxctl
	install -d $(DESTDIR)$(PREFIX)/lib/systemd/system
	install -m 0644 $(UNITS) $(DESTDIR)$(PREFIX)/lib/systemd/system/

check:
	tests/check

# The ioctl and wire fuzzers, DURATION seconds each (in debug guests);
# FUZZ=ioctl or FUZZ=wire runs one of them; FUZZ_JOBS wire fuzzers of each
# protocol run side by side.
DURATION ?= 3600
FUZZ ?= ioctl|wire
FUZZ_JOBS ?= 4
fuzz:
	RDMX_CHECK_ONLY='guest-fuzz-($(FUZZ))' RDMX_FUZZ_SECS=$(DURATION) \
		RDMX_FUZZ_JOBS=$(FUZZ_JOBS) tests/check

demo:
	tests/demo

# Options of tests/bench/run, e.g. BENCH_ARGS="--quick --loopback".
BENCH_ARGS ?=
bench:
	tests/bench/run $(BENCH_ARGS)

kernel:
	tests/vm/build-kernel debug
	tests/vm/build-kernel perf

checkpatch:
	tests/host/checkpatch.sh

# Debian packages, built with debhelper and dh-dkms into .build/deb/.
deb:
	tests/host/deb.sh --build-only

help:
	@sed -n '3,17p' Makefile
