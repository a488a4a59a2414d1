#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of the harness self-test (tests/host/harness-selftest.sh):
# loads rdmx_selftest.ko with a WARN_ON and reports its KUnit results, one of
# which fails by design. This run is expected to FAIL twice over.
set -u
. "$RDMX_REPO/tests/vm/lib.sh"
insmod "$(dirname "$RDMX_KO")/rdmx_selftest.ko" warn=1
rdmx_kunit_collect rdmx_selftest
rdmx_done
