#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The KUnit suites that need an RDMA device, over soft-iWARP, where iWARP
# differs from RoCE (READ sinks registered through rdma_rw's MR pool,
# WRITEs that complete once sent, no atomics): with a siw device as
# RDMX_RDMA_DEV and rdmx loaded. tests/integration/basic.sh runs it last;
# alone:
#   tests/vm/run --nodes 1 --rdma siw tests/integration/kunit-siw.sh
set -u
. "$RDMX_REPO/tests/vm/lib.sh"

if ! insmod "$RDMX_TEST_KO"; then
	rdmx_fail "kunit module loads"
	exit 1
fi
rdmx_kunit_collect rdmx_sess rdmx_listener rdmx_token rdmx_rma
# They must really have run over siw, not skipped for want of a device.
for sc in rdmx_sess:rdmx_sess_sizes_test rdmx_rma:rdmx_rma_rw_test \
	rdmx_rma:rdmx_rma_stale_test rdmx_listener:rdmx_listener_port_test; do
	suite=${sc%%:*} c=${sc#*:}
	if grep -Eq "^    ok [0-9]+ $c\$" "$RDMX_OUT/kunit-$suite.ktap"; then
		rdmx_pass "kunit $c ran over $RDMX_RDMA_DEV"
	else
		rdmx_fail "kunit $c ran over $RDMX_RDMA_DEV"
	fi
done
# siw has no atomics: the case must skip, saying why (EOPNOTSUPP).
rdmx_check "kunit atomics skip on siw with EOPNOTSUPP" \
	grep -Eq '^    ok [0-9]+ rdmx_rma_atomic_test # SKIP .*\(-95\)$' \
	"$RDMX_OUT/kunit-rdmx_rma.ktap"
rdmx_check "kunit module unloads" rmmod rdmx_test
