// SPDX-License-Identifier: GPL-2.0
/*
 * Harness self-test: proof that a failing KUnit case and a kernel splat
 * each fail a guest run. Built only for the test guests (RDMX_TESTS=1) and
 * loaded only by tests/vm/selftest/selftest.sh.
 *
 * Loaded with warn=1 it issues a WARN_ON at load; its KUnit suite
 * rdmx_selftest always has one failing case.
 */
#include <kunit/test.h>
#include <linux/module.h>

static bool warn;
module_param(warn, bool, 0444);
MODULE_PARM_DESC(warn, "issue a WARN_ON at load (default: false)");

static void rdmx_selftest_pass(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, 1 + 1, 2);
}

static void rdmx_selftest_fail(struct kunit *test)
{
	KUNIT_EXPECT_EQ_MSG(test, 1 + 1, 3, "deliberate failure");
}

static struct kunit_case rdmx_selftest_cases[] = {
	KUNIT_CASE(rdmx_selftest_pass),
	KUNIT_CASE(rdmx_selftest_fail),
	{}
};

static struct kunit_suite rdmx_selftest_suite = {
	.name = "rdmx_selftest",
	.test_cases = rdmx_selftest_cases,
};

kunit_test_suite(rdmx_selftest_suite);

static int __init rdmx_selftest_init(void)
{
	WARN_ON(warn);
	return 0;
}

static void __exit rdmx_selftest_exit(void)
{
}

module_init(rdmx_selftest_init);
module_exit(rdmx_selftest_exit);

MODULE_DESCRIPTION("rdmx test harness self-test");
MODULE_LICENSE("GPL");
