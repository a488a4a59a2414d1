// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: tokens of one-sided access (parsing, bounds arithmetic, the
 * split of an operation at chunk boundaries) and the mapping of region
 * rights to verbs access flags. Pure functions: no device needed.
 */
#include <kunit/test.h>
#include <linux/limits.h>
#include <rdma/ib_verbs.h>

#include "core/compat.h"
#include "core/rdmx.h"
#include "msg/msg_proto.h"
#include "msg/rma.h"

MODULE_IMPORT_NS("EXPORTED_FOR_KUNIT_TESTING");

#define RDMX_T_CHUNK	(2ULL << 20)

/* A token of @length bytes starting @first_off into a 2 MiB chunk. */
static size_t rdmx_t_make(struct kunit *test, void *buf, u64 length,
			  u32 first_off, u8 access)
{
	struct rdmx_token t = {
		.access = access,
		.region = 7,
		.first_off = first_off,
		.iova = (7ULL << 32) + first_off,
		.length = length,
		.chunk = RDMX_T_CHUNK,
	};
	u32 *keys = kunit_kcalloc(test, RDMX_TOKEN_KEYS_MAX, sizeof(*keys),
				  GFP_KERNEL);
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, keys);
	t.nr_keys = rdmx_token_nr_keys(length, first_off, RDMX_T_CHUNK);
	for (i = 0; i < t.nr_keys; i++)
		keys[i] = 0x1000 + i;
	rdmx_token_pack(buf, &t, keys);
	return rdmx_token_size(t.nr_keys);
}

static void rdmx_token_roundtrip_test(struct kunit *test)
{
	u8 *buf = kunit_kzalloc(test, RDMX_TOKEN_MAX + 1, GFP_KERNEL);
	struct rdmx_token t;
	size_t len;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	len = rdmx_t_make(test, buf + 1, 5 << 20, 123, RDMX_TOKEN_READ);
	KUNIT_EXPECT_EQ(test, len, sizeof(struct rdmx_token_hdr) + 3 * 4);
	KUNIT_EXPECT_EQ(test, sizeof(struct rdmx_token_hdr), (size_t)48);
	/* From an odd address: tokens come from anywhere. */
	KUNIT_ASSERT_EQ(test, rdmx_token_parse(buf + 1, len, &t), 0);
	KUNIT_EXPECT_EQ(test, t.nr_keys, 3U);
	KUNIT_EXPECT_EQ(test, t.length, 5ULL << 20);
	KUNIT_EXPECT_EQ(test, t.first_off, 123U);
	KUNIT_EXPECT_EQ(test, t.region, 7U);
	KUNIT_EXPECT_EQ(test, t.access, (u8)RDMX_TOKEN_READ);
	/* Not one byte more or less. */
	KUNIT_EXPECT_EQ(test, rdmx_token_parse(buf + 1, len - 1, &t), -EINVAL);
	KUNIT_EXPECT_EQ(test, rdmx_token_parse(buf + 1, len + 1, &t), -EINVAL);
	KUNIT_EXPECT_EQ(test, rdmx_token_parse(NULL, len, &t), -EINVAL);
}

/* One field of a good token broken at a time. */
struct rdmx_token_bad_case {
	const char *desc;
	size_t off;	/* byte offset in the header */
	size_t width;	/* 1, 2, 4 or 8 */
	u64 value;
};

static const struct rdmx_token_bad_case rdmx_token_bad_cases[] = {
	{ "wrong magic", 0, 4, 0x54584453 },
	{ "wrong version", 4, 1, 2 },
	{ "no rights", 5, 1, 0 },
	{ "unknown right", 5, 1, 0x9 },
	{ "one key fewer than the length needs", 6, 2, 2 },
	{ "one key more", 6, 2, 4 },
	{ "first offset beyond the chunk", 12, 4, RDMX_T_CHUNK },
	{ "iova wraps at the end", 16, 8, U64_MAX - 100 },
	{ "zero length", 24, 8, 0 },
	{ "length beyond RDMX_MR_MAX", 24, 8, RDMX_MR_MAX + 1 },
	{ "length beyond the keys", 24, 8, 7 << 20 },
	{ "zero chunk", 32, 8, 0 },
	{ "chunk smaller than the first offset", 32, 8, 100 },
	{ "reserved bytes set", 44, 4, 1 },
};

static void rdmx_token_bad_desc(const struct rdmx_token_bad_case *c,
				char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rdmx_token_bad, rdmx_token_bad_cases, rdmx_token_bad_desc);

static void rdmx_token_bad_test(struct kunit *test)
{
	const struct rdmx_token_bad_case *c = test->param_value;
	u8 *buf = kunit_kzalloc(test, RDMX_TOKEN_MAX, GFP_KERNEL);
	struct rdmx_token t;
	size_t len;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	len = rdmx_t_make(test, buf, 5 << 20, 123, RDMX_TOKEN_READ);
	KUNIT_ASSERT_EQ(test, rdmx_token_parse(buf, len, &t), 0);
	/* Any damaged byte: refused by the CRC. */
	buf[c->off] ^= 0x10;
	KUNIT_EXPECT_EQ_MSG(test, rdmx_token_parse(buf, len, &t), -EINVAL,
			    "%s: one flipped bit", c->desc);
	buf[c->off] ^= 0x10;
	switch (c->width) {
	case 1:
		buf[c->off] = c->value;
		break;
	case 2:
		put_unaligned_le16(c->value, buf + c->off);
		break;
	case 4:
		put_unaligned_le32(c->value, buf + c->off);
		break;
	default:
		put_unaligned_le64(c->value, buf + c->off);
		break;
	}
	/* A well-sealed token that breaks the rules: refused by the checks. */
	rdmx_token_seal(buf, len);
	KUNIT_EXPECT_EQ_MSG(test, rdmx_token_parse(buf, len, &t), -EINVAL,
			    "%s", c->desc);
}

struct rdmx_token_check_case {
	const char *desc;
	u64 off;
	u64 len;
	u8 need;
	int expect;
};

/* Against a 1000-byte region with read and write rights. */
static const struct rdmx_token_check_case rdmx_token_check_cases[] = {
	{ "all of it", 0, 1000, RDMX_TOKEN_READ, 0 },
	{ "last byte", 999, 1, RDMX_TOKEN_WRITE, 0 },
	{ "zero bytes at the end", 1000, 0, RDMX_TOKEN_WRITE, 0 },
	{ "one byte past the end", 999, 2, RDMX_TOKEN_READ, -ERANGE },
	{ "starts at the end", 1000, 1, RDMX_TOKEN_READ, -ERANGE },
	{ "zero bytes past the end", 1001, 0, RDMX_TOKEN_READ, -ERANGE },
	{ "offset wraps", U64_MAX, 2, RDMX_TOKEN_READ, -ERANGE },
	{ "length wraps", 10, U64_MAX - 5, RDMX_TOKEN_READ, -ERANGE },
	{ "huge offset", 1ULL << 63, 1, RDMX_TOKEN_READ, -ERANGE },
	{ "no atomic right", 0, 8, RDMX_TOKEN_ATOMIC, -EACCES },
	{ "rights before bounds", U64_MAX, 8, RDMX_TOKEN_ATOMIC, -EACCES },
};

static void rdmx_token_check_desc(const struct rdmx_token_check_case *c,
				  char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rdmx_token_check, rdmx_token_check_cases,
		  rdmx_token_check_desc);

static void rdmx_token_check_test(struct kunit *test)
{
	const struct rdmx_token_check_case *c = test->param_value;
	u8 buf[64];
	struct rdmx_token t;
	size_t len;

	len = rdmx_t_make(test, buf, 1000, 4000, RDMX_TOKEN_READ | RDMX_TOKEN_WRITE);
	KUNIT_ASSERT_EQ(test, rdmx_token_parse(buf, len, &t), 0);
	KUNIT_EXPECT_EQ_MSG(test, rdmx_token_check(&t, c->off, c->len, c->need),
			    c->expect, "off %llu len %llu", c->off, c->len);
}

/*
 * A 5 MiB region starting 123 bytes into its first 2 MiB chunk, walked in
 * pieces: each stays within one key's chunk, the pieces add up, and the
 * remote addresses run on without a gap.
 */
static void rdmx_token_piece_test(struct kunit *test)
{
	static const u64 starts[] = { 0, 1, RDMX_T_CHUNK - 124,
				      RDMX_T_CHUNK - 123, (5 << 20) - 1 };
	u8 *buf = kunit_kzalloc(test, RDMX_TOKEN_MAX, GFP_KERNEL);
	struct rdmx_token t;
	unsigned int i;
	size_t len;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	len = rdmx_t_make(test, buf, 5 << 20, 123, RDMX_TOKEN_READ);
	KUNIT_ASSERT_EQ(test, rdmx_token_parse(buf, len, &t), 0);
	for (i = 0; i < ARRAY_SIZE(starts); i++) {
		u64 off = starts[i], left = t.length - off, raddr, piece;
		u32 rkey;

		while (left) {
			u64 chunk_idx = (off + t.first_off) / RDMX_T_CHUNK;

			piece = rdmx_token_piece(&t, off, left, &rkey, &raddr);
			KUNIT_ASSERT_GT(test, piece, 0ULL);
			KUNIT_EXPECT_EQ(test, rkey, 0x1000 + (u32)chunk_idx);
			KUNIT_EXPECT_EQ(test, raddr, t.iova + off);
			KUNIT_EXPECT_EQ_MSG(test,
					    (off + t.first_off + piece - 1) /
					    RDMX_T_CHUNK, chunk_idx,
					    "piece at %llu crosses a chunk", off);
			off += piece;
			left -= piece;
		}
		KUNIT_EXPECT_EQ(test, off, t.length);
	}
	/* The first piece ends exactly at the first chunk's end. */
	KUNIT_EXPECT_EQ(test, rdmx_token_piece(&t, 0, t.length, &(u32){0},
					       &(u64){0}),
			RDMX_T_CHUNK - 123);
}

static void rdmx_token_nr_keys_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, rdmx_token_nr_keys(1, 0, 4096), 1U);
	KUNIT_EXPECT_EQ(test, rdmx_token_nr_keys(4096, 0, 4096), 1U);
	KUNIT_EXPECT_EQ(test, rdmx_token_nr_keys(4096, 1, 4096), 2U);
	KUNIT_EXPECT_EQ(test, rdmx_token_nr_keys(0, 0, 4096), 0U);
	KUNIT_EXPECT_EQ(test, rdmx_token_nr_keys(10, 0, 0), 0U);
	KUNIT_EXPECT_EQ(test, rdmx_token_nr_keys(10, 4096, 4096), 0U);
	KUNIT_EXPECT_EQ(test, rdmx_token_nr_keys(U64_MAX, 1, 4096), 0U);
	/* More keys than a token holds. */
	KUNIT_EXPECT_EQ(test, rdmx_token_nr_keys(RDMX_TOKEN_KEYS_MAX * 4096ULL,
						 0, 4096),
			(u32)RDMX_TOKEN_KEYS_MAX);
	KUNIT_EXPECT_EQ(test,
			rdmx_token_nr_keys(RDMX_TOKEN_KEYS_MAX * 4096ULL + 1,
					   0, 4096), 0U);
	KUNIT_EXPECT_LE(test, rdmx_token_size(RDMX_TOKEN_KEYS_MAX),
			(size_t)RDMX_TOKEN_MAX);
}

struct rdmx_access_case {
	const char *desc;
	u8 access;
	u32 ib;
};

static const struct rdmx_access_case rdmx_access_cases[] = {
	{ "read", RDMX_TOKEN_READ, IB_ACCESS_REMOTE_READ },
	{ "write", RDMX_TOKEN_WRITE,
	  IB_ACCESS_REMOTE_WRITE | IB_ACCESS_LOCAL_WRITE },
	{ "atomic", RDMX_TOKEN_ATOMIC,
	  IB_ACCESS_REMOTE_ATOMIC | IB_ACCESS_LOCAL_WRITE },
	{ "read and write", RDMX_TOKEN_READ | RDMX_TOKEN_WRITE,
	  IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE |
	  IB_ACCESS_LOCAL_WRITE },
	{ "all", RDMX_TOKEN_ACCESS_ALL,
	  IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE |
	  IB_ACCESS_REMOTE_ATOMIC | IB_ACCESS_LOCAL_WRITE },
	{ "none", 0, 0 },
};

static void rdmx_access_desc(const struct rdmx_access_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rdmx_access, rdmx_access_cases, rdmx_access_desc);

static void rdmx_access_test(struct kunit *test)
{
	const struct rdmx_access_case *c = test->param_value;

	/* Exactly these: never more than asked (no MW bind, no ODP). */
	KUNIT_EXPECT_EQ(test, rdmx_access_to_ib(c->access), c->ib);
}

static struct kunit_case rdmx_token_cases[] = {
	KUNIT_CASE(rdmx_token_roundtrip_test),
	KUNIT_CASE_PARAM(rdmx_token_bad_test, rdmx_token_bad_gen_params),
	KUNIT_CASE_PARAM(rdmx_token_check_test, rdmx_token_check_gen_params),
	KUNIT_CASE(rdmx_token_piece_test),
	KUNIT_CASE(rdmx_token_nr_keys_test),
	KUNIT_CASE_PARAM(rdmx_access_test, rdmx_access_gen_params),
	{}
};

static struct kunit_suite rdmx_token_suite = {
	.name = "rdmx_token",
	.test_cases = rdmx_token_cases,
};

kunit_test_suites(&rdmx_token_suite);
