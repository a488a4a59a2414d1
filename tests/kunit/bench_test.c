// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the benchmark's pure parts: checking RDMX_IOC_BENCH's input, the
 * latency statistics (nearest-rank percentiles, standard deviation without
 * overflow) and rates. No device needed.
 */
#include <kunit/test.h>
#include <linux/limits.h>

#include "core/compat.h"
#include "core/rdmx.h"
#include "msg/rma.h"

MODULE_IMPORT_NS("EXPORTED_FOR_KUNIT_TESTING");

/* A valid WRITE run, for the cases to spoil one field of. */
static void rdmx_bench_t_base(struct rdmx_bench *b)
{
	memset(b, 0, sizeof(*b));
	b->size = sizeof(*b);
	b->op = RDMX_BENCH_WRITE;
	b->depth = 128;
	b->length = 65536;
	b->iters = 1000;
	b->token = 0x1000;
	b->token_len = 64;
}

struct rdmx_bench_check_case {
	const char *desc;
	void (*spoil)(struct rdmx_bench *b);
	int want;
};

static void rdmx_bt_none(struct rdmx_bench *b)
{
}

static void rdmx_bt_flag(struct rdmx_bench *b)
{
	b->flags = 2;
}

static void rdmx_bt_pp_write(struct rdmx_bench *b)
{
	b->flags = RDMX_BENCH_PINGPONG;
}

static void rdmx_bt_send(struct rdmx_bench *b)
{
	b->op = RDMX_BENCH_SEND;
	b->depth = 1;
	b->token = 0;
	b->token_len = 0;
	b->flags = RDMX_BENCH_PINGPONG;
}

static void rdmx_bt_send_token(struct rdmx_bench *b)
{
	rdmx_bt_send(b);
	b->token_len = 8;
}

static void rdmx_bt_send_depth(struct rdmx_bench *b)
{
	rdmx_bt_send(b);
	b->depth = 2;
}

static void rdmx_bt_send_big(struct rdmx_bench *b)
{
	rdmx_bt_send(b);
	b->length = RDMX_MSG_MAX + 1;
}

static void rdmx_bt_op0(struct rdmx_bench *b)
{
	b->op = 0;
}

static void rdmx_bt_op6(struct rdmx_bench *b)
{
	b->op = 6;
}

static void rdmx_bt_depth0(struct rdmx_bench *b)
{
	b->depth = 0;
}

static void rdmx_bt_depth_max(struct rdmx_bench *b)
{
	b->depth = RDMX_BENCH_DEPTH_MAX;
}

static void rdmx_bt_depth_big(struct rdmx_bench *b)
{
	b->depth = RDMX_BENCH_DEPTH_MAX + 1;
}

static void rdmx_bt_len0(struct rdmx_bench *b)
{
	b->length = 0;
}

static void rdmx_bt_len_max(struct rdmx_bench *b)
{
	b->length = RDMX_BENCH_LEN_MAX;
}

static void rdmx_bt_len_big(struct rdmx_bench *b)
{
	b->length = RDMX_BENCH_LEN_MAX + 1;
}

static void rdmx_bt_fadd(struct rdmx_bench *b)
{
	b->op = RDMX_BENCH_FETCH_ADD;
	b->length = 8;
}

static void rdmx_bt_fadd4(struct rdmx_bench *b)
{
	rdmx_bt_fadd(b);
	b->length = 4;
}

static void rdmx_bt_cas16(struct rdmx_bench *b)
{
	b->op = RDMX_BENCH_CMP_SWAP;
	b->length = 16;
}

static void rdmx_bt_both(struct rdmx_bench *b)
{
	b->duration_ms = 1000;
}

static void rdmx_bt_neither(struct rdmx_bench *b)
{
	b->iters = 0;
}

static void rdmx_bt_dur(struct rdmx_bench *b)
{
	b->iters = 0;
	b->duration_ms = RDMX_BENCH_DURATION_MAX_MS;
}

static void rdmx_bt_dur_big(struct rdmx_bench *b)
{
	rdmx_bt_dur(b);
	b->duration_ms++;
}

static void rdmx_bt_iters_big(struct rdmx_bench *b)
{
	b->iters = RDMX_BENCH_ITERS_MAX + 1;
}

static void rdmx_bt_notoken(struct rdmx_bench *b)
{
	b->token_len = 0;
}

static void rdmx_bt_token_big(struct rdmx_bench *b)
{
	b->token_len = RDMX_TOKEN_MAX + 1;
}

static void rdmx_bt_res0(struct rdmx_bench *b)
{
	b->reserved0 = 1;
}

static void rdmx_bt_res(struct rdmx_bench *b)
{
	b->reserved[3] = 1;
}

/* Outputs are ignored on input. */
static void rdmx_bt_outputs(struct rdmx_bench *b)
{
	b->ops = 5;
	b->lat_p999_ns = 7;
	b->nr_samples = 3;
}

static const struct rdmx_bench_check_case rdmx_bench_check_cases[] = {
	{ "valid write", rdmx_bt_none, 0 },
	{ "unknown flag", rdmx_bt_flag, -EINVAL },
	{ "PINGPONG on a write", rdmx_bt_pp_write, -EINVAL },
	{ "send ping-pong", rdmx_bt_send, 0 },
	{ "send with a token", rdmx_bt_send_token, -EINVAL },
	{ "send with depth 2", rdmx_bt_send_depth, -EINVAL },
	{ "send over RDMX_MSG_MAX", rdmx_bt_send_big, -EINVAL },
	{ "op 0", rdmx_bt_op0, -EINVAL },
	{ "op 6", rdmx_bt_op6, -EINVAL },
	{ "depth 0", rdmx_bt_depth0, -EINVAL },
	{ "depth at the bound", rdmx_bt_depth_max, 0 },
	{ "depth over the bound", rdmx_bt_depth_big, -EINVAL },
	{ "length 0", rdmx_bt_len0, -EINVAL },
	{ "length at the bound", rdmx_bt_len_max, 0 },
	{ "length over the bound", rdmx_bt_len_big, -EINVAL },
	{ "fetch-and-add of 8 bytes", rdmx_bt_fadd, 0 },
	{ "fetch-and-add of 4 bytes", rdmx_bt_fadd4, -EINVAL },
	{ "compare-and-swap of 16 bytes", rdmx_bt_cas16, -EINVAL },
	{ "count and duration", rdmx_bt_both, -EINVAL },
	{ "neither count nor duration", rdmx_bt_neither, -EINVAL },
	{ "duration at the bound", rdmx_bt_dur, 0 },
	{ "duration over the bound", rdmx_bt_dur_big, -EINVAL },
	{ "count over the bound", rdmx_bt_iters_big, -EINVAL },
	{ "one-sided without a token", rdmx_bt_notoken, -EINVAL },
	{ "token over RDMX_TOKEN_MAX", rdmx_bt_token_big, -EINVAL },
	{ "reserved0 set", rdmx_bt_res0, -EINVAL },
	{ "reserved[3] set", rdmx_bt_res, -EINVAL },
	{ "outputs set", rdmx_bt_outputs, 0 },
};

static void rdmx_bench_check_case_desc(const struct rdmx_bench_check_case *c,
				       char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rdmx_bench_check, rdmx_bench_check_cases,
		  rdmx_bench_check_case_desc);

static void rdmx_bench_check_test(struct kunit *test)
{
	const struct rdmx_bench_check_case *c = test->param_value;
	struct rdmx_bench b;

	rdmx_bench_t_base(&b);
	c->spoil(&b);
	KUNIT_EXPECT_EQ_MSG(test, rdmx_bench_check(&b), c->want, "%s",
			    c->desc);
}

/* 1..1000 shuffled: nearest-rank percentiles are the ranks themselves. */
static void rdmx_bench_stats_ranks_test(struct kunit *test)
{
	u32 *s = kunit_kcalloc(test, 1000, sizeof(*s), GFP_KERNEL);
	struct rdmx_bench b = {};
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, s);
	for (i = 0; i < 1000; i++)
		s[i] = (i * 389) % 1000 + 1;	/* 389 is prime to 1000 */
	rdmx_bench_lat_stats(s, 1000, &b);
	for (i = 1; i < 1000; i++)
		KUNIT_ASSERT_LE(test, s[i - 1], s[i]);
	KUNIT_EXPECT_EQ(test, b.lat_median_ns, 500);
	KUNIT_EXPECT_EQ(test, b.lat_p99_ns, 990);
	KUNIT_EXPECT_EQ(test, b.lat_p999_ns, 999);
	/* The uniform 1..1000: sqrt((1000^2 - 1) / 12) = 288.67 */
	KUNIT_EXPECT_EQ(test, b.lat_stdev_ns, 288);
}

static void rdmx_bench_stats_one_test(struct kunit *test)
{
	struct rdmx_bench b = {};
	u32 s = 1234;

	rdmx_bench_lat_stats(&s, 1, &b);
	KUNIT_EXPECT_EQ(test, b.lat_median_ns, 1234);
	KUNIT_EXPECT_EQ(test, b.lat_p99_ns, 1234);
	KUNIT_EXPECT_EQ(test, b.lat_p999_ns, 1234);
	KUNIT_EXPECT_EQ(test, b.lat_stdev_ns, 0);
}

/*
 * Half the samples 0, half U32_MAX: every squared deviation is about
 * 2^62, so their sum overflows 64 bits many times; the deviation is still
 * U32_MAX / 2 (to within the rounding of the scaled sum).
 */
static void rdmx_bench_stats_overflow_test(struct kunit *test)
{
	const u32 n = 4096;
	u32 *s = kunit_kcalloc(test, n, sizeof(*s), GFP_KERNEL);
	struct rdmx_bench b = {};
	u64 want = U32_MAX / 2;
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, s);
	for (i = 0; i < n; i++)
		s[i] = i % 2 ? U32_MAX : 0;
	rdmx_bench_lat_stats(s, n, &b);
	KUNIT_EXPECT_GE(test, b.lat_stdev_ns, want - 2);
	KUNIT_EXPECT_LE(test, b.lat_stdev_ns, want + 2);
	KUNIT_EXPECT_EQ(test, b.lat_median_ns, 0);
	KUNIT_EXPECT_EQ(test, b.lat_p99_ns, U32_MAX);
}

static void rdmx_bench_rate_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, rdmx_bench_rate(1000, 1000), NSEC_PER_SEC);
	KUNIT_EXPECT_EQ(test, rdmx_bench_rate(65536, NSEC_PER_SEC), 65536);
	KUNIT_EXPECT_EQ(test, rdmx_bench_rate(12345, 0), 0);
	/* 2^55 bytes in 2^30 ns: no overflow in the product. */
	KUNIT_EXPECT_EQ(test, rdmx_bench_rate(1ULL << 55, 1ULL << 30),
			(1ULL << 25) * NSEC_PER_SEC);
}

static struct kunit_case rdmx_bench_cases[] = {
	KUNIT_CASE_PARAM(rdmx_bench_check_test, rdmx_bench_check_gen_params),
	KUNIT_CASE(rdmx_bench_stats_ranks_test),
	KUNIT_CASE(rdmx_bench_stats_one_test),
	KUNIT_CASE(rdmx_bench_stats_overflow_test),
	KUNIT_CASE(rdmx_bench_rate_test),
	{}
};

static struct kunit_suite rdmx_bench_suite = {
	.name = "rdmx_bench",
	.test_cases = rdmx_bench_cases,
};

kunit_test_suites(&rdmx_bench_suite);
