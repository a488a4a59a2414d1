// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for the block service's wire checks (rdmx_blk): a command's
 * header parsing, what a batch of commands may hold, and a command's
 * validation against an export, table-driven over
 * every field out of range, the extent arithmetic at the end of the export
 * (including overflow), alignment, tags and flags. Part of rdmx_test.ko.
 */
#include <kunit/test.h>
#include <linux/limits.h>

#include "blk/blk.h"
#include "core/compat.h"
#include "fsm_check.h"

/* A 1 MiB export of 512-byte blocks, a queue of 32 tags. */
static const struct rdmx_blk_limits rdmx_blk_lim = {
	.size = 1 << 20, .lbs = 512, .max_io = 128 * 1024, .depth = 32,
};

/* A command batch's length: whole commands, 1 to RDMX_BLK_BATCH_MAX. */
static void rdmx_blk_batch_count_test(struct kunit *test)
{
	const u32 one = sizeof(struct rdmx_blk_cmd);

	KUNIT_EXPECT_EQ(test, rdmx_blk_batch_count(0), -EBADMSG);
	KUNIT_EXPECT_EQ(test, rdmx_blk_batch_count(1), -EBADMSG);
	KUNIT_EXPECT_EQ(test, rdmx_blk_batch_count(one - 1), -EBADMSG);
	KUNIT_EXPECT_EQ(test, rdmx_blk_batch_count(one), 1);
	KUNIT_EXPECT_EQ(test, rdmx_blk_batch_count(2 * one + 1), -EBADMSG);
	KUNIT_EXPECT_EQ(test, rdmx_blk_batch_count(RDMX_BLK_BATCH_MAX * one),
			RDMX_BLK_BATCH_MAX);
	KUNIT_EXPECT_EQ(test,
			rdmx_blk_batch_count((RDMX_BLK_BATCH_MAX + 1) * one),
			-EBADMSG);
	KUNIT_EXPECT_EQ(test, rdmx_blk_batch_count(U32_MAX), -EBADMSG);
	KUNIT_EXPECT_EQ(test, rdmx_blk_batch_count(U32_MAX - U32_MAX % one),
			-EBADMSG);
}

/* What a batch may hold: tags, no OPEN, inline WRITEs only as granted. */
static void rdmx_blk_batch_cmd_check_test(struct kunit *test)
{
	struct rdmx_blk_io io = { .op = RDMX_BLK_OP_READ, .tag = 7,
				  .length = 4096, .rkey = 1, .addr = 4096 };
	bool later = true;

	KUNIT_EXPECT_EQ(test, rdmx_blk_batch_cmd_check(&io, 8, false, &later), 0);
	KUNIT_EXPECT_FALSE(test, later);
	/* A tag past the depth, an OPEN. */
	KUNIT_EXPECT_EQ(test, rdmx_blk_batch_cmd_check(&io, 7, true, &later),
			-EBADMSG);
	io.tag = U32_MAX;
	KUNIT_EXPECT_EQ(test, rdmx_blk_batch_cmd_check(&io, 8, true, &later),
			-EBADMSG);
	io.tag = 0;
	io.op = RDMX_BLK_OP_OPEN;
	KUNIT_EXPECT_EQ(test, rdmx_blk_batch_cmd_check(&io, 8, true, &later),
			-EBADMSG);
	/* A WRITE through the client's key is no inline WRITE. */
	io.op = RDMX_BLK_OP_WRITE;
	KUNIT_EXPECT_EQ(test, rdmx_blk_batch_cmd_check(&io, 8, false, &later), 0);
	KUNIT_EXPECT_FALSE(test, later);
	/* An inline WRITE: its data later, only on a queue granted that. */
	io.flags = RDMX_BLK_CMD_INLINE;
	io.rkey = 0;
	io.addr = 0;
	KUNIT_EXPECT_EQ(test, rdmx_blk_batch_cmd_check(&io, 8, true, &later), 0);
	KUNIT_EXPECT_TRUE(test, later);
	KUNIT_EXPECT_EQ(test, rdmx_blk_batch_cmd_check(&io, 8, false, &later),
			-EBADMSG);
	io.length = 0;
	KUNIT_EXPECT_EQ(test, rdmx_blk_batch_cmd_check(&io, 8, true, &later),
			-EBADMSG);
	io.length = RDMX_BLK_INLINE_MAX + 1;
	KUNIT_EXPECT_EQ(test, rdmx_blk_batch_cmd_check(&io, 8, true, &later),
			-EBADMSG);
	io.length = RDMX_BLK_INLINE_MAX;
	KUNIT_EXPECT_EQ(test, rdmx_blk_batch_cmd_check(&io, 8, true, &later), 0);
	KUNIT_EXPECT_TRUE(test, later);
	/* A staged WRITE's data is in its slot already: not later. */
	io.flags = RDMX_BLK_CMD_STAGED;
	KUNIT_EXPECT_EQ(test, rdmx_blk_batch_cmd_check(&io, 8, false, &later), 0);
	KUNIT_EXPECT_FALSE(test, later);
	io.flags = RDMX_BLK_CMD_INLINE;
	/* An inline READ in a batch answers with its data: not later. */
	io.op = RDMX_BLK_OP_READ;
	KUNIT_EXPECT_EQ(test, rdmx_blk_batch_cmd_check(&io, 8, false, &later), 0);
	KUNIT_EXPECT_FALSE(test, later);
}

static void rdmx_blk_cmd_parse_test(struct kunit *test)
{
	struct rdmx_blk_cmd cmd = {};
	struct rdmx_blk_io io;

	cmd.opcode = RDMX_BLK_OP_WRITE;
	cmd.flags = RDMX_BLK_CMD_FUA;
	cmd.tag = cpu_to_le32(7);
	cmd.offset = cpu_to_le64(0x123400);
	cmd.length = cpu_to_le32(8192);
	cmd.rkey = cpu_to_le32(0xabcd);
	cmd.addr = cpu_to_le64(0xfeedf00d0000ULL);
	KUNIT_ASSERT_EQ(test, rdmx_blk_cmd_parse(&cmd, &io), 0);
	KUNIT_EXPECT_EQ(test, io.op, RDMX_BLK_OP_WRITE);
	KUNIT_EXPECT_EQ(test, io.flags, RDMX_BLK_CMD_FUA);
	KUNIT_EXPECT_EQ(test, io.tag, 7);
	KUNIT_EXPECT_EQ(test, io.offset, 0x123400);
	KUNIT_EXPECT_EQ(test, io.length, 8192);
	KUNIT_EXPECT_EQ(test, io.rkey, 0xabcd);
	KUNIT_EXPECT_EQ(test, io.addr, 0xfeedf00d0000ULL);

	/* Unknown opcodes, unknown flags, reserved bytes, a stray name. */
	cmd.opcode = 0;
	KUNIT_EXPECT_EQ(test, rdmx_blk_cmd_parse(&cmd, &io), -EPROTO);
	cmd.opcode = RDMX_BLK_OP_MAX + 1;
	KUNIT_EXPECT_EQ(test, rdmx_blk_cmd_parse(&cmd, &io), -EPROTO);
	cmd.opcode = 0xff;
	KUNIT_EXPECT_EQ(test, rdmx_blk_cmd_parse(&cmd, &io), -EPROTO);
	cmd.opcode = RDMX_BLK_OP_READ;
	cmd.flags = BIT(7);
	KUNIT_EXPECT_EQ(test, rdmx_blk_cmd_parse(&cmd, &io), -EPROTO);
	cmd.flags = 0;
	cmd.reserved0 = cpu_to_le16(1);
	KUNIT_EXPECT_EQ(test, rdmx_blk_cmd_parse(&cmd, &io), -EPROTO);
	cmd.reserved0 = 0;
	cmd.name[63] = 'x';
	KUNIT_EXPECT_EQ(test, rdmx_blk_cmd_parse(&cmd, &io), -EPROTO);
	cmd.opcode = RDMX_BLK_OP_OPEN;
	KUNIT_EXPECT_EQ(test, rdmx_blk_cmd_parse(&cmd, &io), 0);
}

struct rdmx_blk_case {
	const char *what;
	u8 op;
	u8 flags;
	u32 tag;
	u64 offset;
	u32 length;
	u32 inline_len;
	bool ro;
	int expect;
};

static const struct rdmx_blk_case rdmx_blk_cases[] = {
	{ "read", RDMX_BLK_OP_READ, 0, 0, 0, 4096, 0, false, 0 },
	{ "write, last tag", RDMX_BLK_OP_WRITE, 0, 31, 4096, 512, 0, false, 0 },
	{ "write at the very end", RDMX_BLK_OP_WRITE, 0, 1, (1 << 20) - 512, 512,
	  0, false, 0 },
	{ "largest I/O", RDMX_BLK_OP_READ, 0, 1, 0, 128 * 1024, 0, false, 0 },
	{ "inline write", RDMX_BLK_OP_WRITE, RDMX_BLK_CMD_INLINE, 2, 0, 4096,
	  4096, false, 0 },
	{ "FUA write", RDMX_BLK_OP_WRITE, RDMX_BLK_CMD_FUA, 2, 0, 512, 0, false,
	  0 },
	{ "flush", RDMX_BLK_OP_FLUSH, 0, 3, 0, 0, 0, false, 0 },
	{ "flush on a read-only export", RDMX_BLK_OP_FLUSH, 0, 3, 0, 0, 0, true,
	  -EROFS },
	{ "discard", RDMX_BLK_OP_DISCARD, 0, 4, 0, 65536, 0, false, 0 },
	{ "write zeroes, FUA", RDMX_BLK_OP_WRITE_ZEROES, RDMX_BLK_CMD_FUA, 4, 0,
	  512, 0, false, 0 },
	{ "read of a read-only export", RDMX_BLK_OP_READ, 0, 5, 0, 512, 0, true,
	  0 },

	{ "tag = depth", RDMX_BLK_OP_READ, 0, 32, 0, 512, 0, false, -EPROTO },
	{ "tag ~0", RDMX_BLK_OP_READ, 0, U32_MAX, 0, 512, 0, false, -EPROTO },
	{ "OPEN as I/O", RDMX_BLK_OP_OPEN, 0, 0, 0, 0, 0, false, -EPROTO },
	{ "inline read, not granted", RDMX_BLK_OP_READ, RDMX_BLK_CMD_INLINE, 0,
	  0, 512, 0, false, -EPROTO },
	{ "inline length differs", RDMX_BLK_OP_WRITE, RDMX_BLK_CMD_INLINE, 0, 0,
	  1024, 512, false, -EPROTO },
	{ "inline over the maximum", RDMX_BLK_OP_WRITE, RDMX_BLK_CMD_INLINE, 0,
	  0, 8192, 8192, false, -EPROTO },
	{ "stray inline bytes", RDMX_BLK_OP_WRITE, 0, 0, 0, 512, 512, false,
	  -EPROTO },
	{ "FUA read", RDMX_BLK_OP_READ, RDMX_BLK_CMD_FUA, 0, 0, 512, 0, false,
	  -EPROTO },
	{ "flush with an extent", RDMX_BLK_OP_FLUSH, 0, 0, 512, 512, 0, false,
	  -EINVAL },
	{ "zero length", RDMX_BLK_OP_READ, 0, 0, 0, 0, 0, false, -EINVAL },
	{ "unaligned length", RDMX_BLK_OP_READ, 0, 0, 0, 513, 0, false,
	  -EINVAL },
	{ "unaligned offset", RDMX_BLK_OP_WRITE, 0, 0, 100, 512, 0, false,
	  -EINVAL },
	{ "over the maximum I/O", RDMX_BLK_OP_READ, 0, 0, 0, 128 * 1024 + 512,
	  0, false, -EINVAL },
	{ "past the end", RDMX_BLK_OP_READ, 0, 0, (1 << 20) - 512, 1024, 0,
	  false, -ERANGE },
	{ "at the end", RDMX_BLK_OP_READ, 0, 0, 1 << 20, 512, 0, false,
	  -ERANGE },
	{ "offset overflows", RDMX_BLK_OP_READ, 0, 0, U64_MAX - 511, 1024, 0,
	  false, -ERANGE },
	{ "offset far out", RDMX_BLK_OP_DISCARD, 0, 0, 1ULL << 62, 512, 0, false,
	  -ERANGE },
	{ "write to read-only", RDMX_BLK_OP_WRITE, 0, 0, 0, 512, 0, true,
	  -EROFS },
	{ "inline write to read-only", RDMX_BLK_OP_WRITE, RDMX_BLK_CMD_INLINE, 0,
	  0, 512, 512, true, -EROFS },
	{ "discard on read-only", RDMX_BLK_OP_DISCARD, 0, 0, 0, 512, 0, true,
	  -EROFS },
	{ "write zeroes on read-only", RDMX_BLK_OP_WRITE_ZEROES, 0, 0, 0, 512, 0,
	  true, -EROFS },
};

static void rdmx_blk_case_desc(const struct rdmx_blk_case *c, char *desc)
{
	strscpy(desc, c->what, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rdmx_blk, rdmx_blk_cases, rdmx_blk_case_desc);

static void rdmx_blk_io_check_test(struct kunit *test)
{
	const struct rdmx_blk_case *c = test->param_value;
	struct rdmx_blk_limits lim = rdmx_blk_lim;
	struct rdmx_blk_io io = {
		.op = c->op, .flags = c->flags, .tag = c->tag,
		.offset = c->offset, .length = c->length,
	};

	lim.ro = c->ro;
	lim.inline_len = c->inline_len;
	KUNIT_EXPECT_EQ(test, rdmx_blk_io_check(&io, &lim), c->expect);
}

/* Inline READs: only on a queue granted them, keyless, small, no bytes. */
static void rdmx_blk_inline_read_test(struct kunit *test)
{
	struct rdmx_blk_limits lim = rdmx_blk_lim;
	struct rdmx_blk_io io = {
		.op = RDMX_BLK_OP_READ, .flags = RDMX_BLK_CMD_INLINE,
		.length = RDMX_BLK_INLINE_MAX,
	};

	KUNIT_EXPECT_EQ(test, rdmx_blk_io_check(&io, &lim), -EPROTO);
	lim.inline_read = true;
	KUNIT_EXPECT_EQ(test, rdmx_blk_io_check(&io, &lim), 0);
	io.length = 512;
	KUNIT_EXPECT_EQ(test, rdmx_blk_io_check(&io, &lim), 0);
	io.length = RDMX_BLK_INLINE_MAX + 512;
	KUNIT_EXPECT_EQ(test, rdmx_blk_io_check(&io, &lim), -EPROTO);
	io.length = 512;
	io.rkey = 0x1234;
	KUNIT_EXPECT_EQ(test, rdmx_blk_io_check(&io, &lim), -EPROTO);
	io.rkey = 0;
	io.addr = 4096;
	KUNIT_EXPECT_EQ(test, rdmx_blk_io_check(&io, &lim), -EPROTO);
	io.addr = 0;
	lim.inline_len = 512;	/* bytes after a READ's header */
	KUNIT_EXPECT_EQ(test, rdmx_blk_io_check(&io, &lim), -EPROTO);
	lim.inline_len = 0;
	io.op = RDMX_BLK_OP_DISCARD;
	KUNIT_EXPECT_EQ(test, rdmx_blk_io_check(&io, &lim), -EPROTO);
	io.op = RDMX_BLK_OP_READ;
	io.offset = lim.size;
	KUNIT_EXPECT_EQ(test, rdmx_blk_io_check(&io, &lim), -ERANGE);
	io.offset = 100;
	KUNIT_EXPECT_EQ(test, rdmx_blk_io_check(&io, &lim), -EINVAL);

	/* An inline WRITE names no key either. */
	io = (struct rdmx_blk_io){
		.op = RDMX_BLK_OP_WRITE, .flags = RDMX_BLK_CMD_INLINE,
		.length = 512, .rkey = 1,
	};
	lim.inline_len = 512;
	KUNIT_EXPECT_EQ(test, rdmx_blk_io_check(&io, &lim), -EPROTO);
	io.rkey = 0;
	KUNIT_EXPECT_EQ(test, rdmx_blk_io_check(&io, &lim), 0);
}

/*
 * Staged WRITEs: only on a queue granted a staging area, keyless, no bytes
 * after the header, at most a slot long, at a slot's start inside the area.
 */
static void rdmx_blk_staged_write_test(struct kunit *test)
{
	struct rdmx_blk_limits lim = rdmx_blk_lim;
	struct rdmx_blk_io io = {
		.op = RDMX_BLK_OP_WRITE, .flags = RDMX_BLK_CMD_STAGED,
		.length = RDMX_BLK_STAGE_SLOT,
	};

	KUNIT_EXPECT_EQ(test, rdmx_blk_io_check(&io, &lim), -EPROTO);
	lim.stage_len = 4 * RDMX_BLK_STAGE_SLOT;
	KUNIT_EXPECT_EQ(test, rdmx_blk_io_check(&io, &lim), 0);
	io.addr = 3 * RDMX_BLK_STAGE_SLOT;	/* the last slot */
	KUNIT_EXPECT_EQ(test, rdmx_blk_io_check(&io, &lim), 0);
	io.length = 512;
	KUNIT_EXPECT_EQ(test, rdmx_blk_io_check(&io, &lim), 0);
	io.addr = 4 * RDMX_BLK_STAGE_SLOT;	/* just past the area */
	KUNIT_EXPECT_EQ(test, rdmx_blk_io_check(&io, &lim), -EPROTO);
	io.addr = U64_MAX & ~(u64)(RDMX_BLK_STAGE_SLOT - 1);
	KUNIT_EXPECT_EQ(test, rdmx_blk_io_check(&io, &lim), -EPROTO);
	io.addr = 512;				/* inside a slot */
	KUNIT_EXPECT_EQ(test, rdmx_blk_io_check(&io, &lim), -EPROTO);
	io.addr = RDMX_BLK_STAGE_SLOT;
	io.length = RDMX_BLK_STAGE_SLOT + 512;	/* longer than its slot */
	KUNIT_EXPECT_EQ(test, rdmx_blk_io_check(&io, &lim), -EPROTO);
	io.length = 0;
	KUNIT_EXPECT_EQ(test, rdmx_blk_io_check(&io, &lim), -EINVAL);
	io.length = 512;
	io.rkey = 0x1234;
	KUNIT_EXPECT_EQ(test, rdmx_blk_io_check(&io, &lim), -EPROTO);
	io.rkey = 0;
	lim.inline_len = 512;			/* and bytes in the SEND */
	KUNIT_EXPECT_EQ(test, rdmx_blk_io_check(&io, &lim), -EPROTO);
	lim.inline_len = 0;
	io.flags |= RDMX_BLK_CMD_INLINE;	/* both ways at once */
	KUNIT_EXPECT_EQ(test, rdmx_blk_io_check(&io, &lim), -EPROTO);
	io.flags = RDMX_BLK_CMD_STAGED;
	io.op = RDMX_BLK_OP_READ;		/* only a WRITE is staged */
	KUNIT_EXPECT_EQ(test, rdmx_blk_io_check(&io, &lim), -EPROTO);
	io.op = RDMX_BLK_OP_WRITE_ZEROES;
	KUNIT_EXPECT_EQ(test, rdmx_blk_io_check(&io, &lim), -EPROTO);
	io.op = RDMX_BLK_OP_WRITE;
	io.offset = lim.size;
	KUNIT_EXPECT_EQ(test, rdmx_blk_io_check(&io, &lim), -ERANGE);
	io.offset = 0;
	lim.ro = true;
	KUNIT_EXPECT_EQ(test, rdmx_blk_io_check(&io, &lim), -EROFS);
}

/* 4096-byte blocks: 512-byte extents are unaligned there. */
static void rdmx_blk_lbs4k_test(struct kunit *test)
{
	struct rdmx_blk_limits lim = rdmx_blk_lim;
	struct rdmx_blk_io io = { .op = RDMX_BLK_OP_READ, .length = 4096 };

	lim.lbs = 4096;
	KUNIT_EXPECT_EQ(test, rdmx_blk_io_check(&io, &lim), 0);
	io.length = 512;
	KUNIT_EXPECT_EQ(test, rdmx_blk_io_check(&io, &lim), -EINVAL);
	io.length = 4096;
	io.offset = 512;
	KUNIT_EXPECT_EQ(test, rdmx_blk_io_check(&io, &lim), -EINVAL);
	io.offset = lim.size - 4096;
	KUNIT_EXPECT_EQ(test, rdmx_blk_io_check(&io, &lim), 0);
}

/* What a client makes of the export size a response carries. */
static void rdmx_blk_size_check_test(struct kunit *test)
{
	const u64 have = SZ_16M;

	KUNIT_EXPECT_EQ(test, rdmx_blk_size_check(have, 0, 512), 0);
	KUNIT_EXPECT_EQ(test, rdmx_blk_size_check(have, have, 512), 0);
	KUNIT_EXPECT_EQ(test, rdmx_blk_size_check(have, SZ_32M, 512), 1);
	KUNIT_EXPECT_EQ(test, rdmx_blk_size_check(have, have + 512, 512), 1);
	KUNIT_EXPECT_EQ(test, rdmx_blk_size_check(have, have + 512, 4096),
			-EPROTO);
	KUNIT_EXPECT_EQ(test, rdmx_blk_size_check(have, have + 4096, 4096), 1);
	/* Stale: built before the export grew, arrived after. */
	KUNIT_EXPECT_EQ(test, rdmx_blk_size_check(have, have - 512, 512), 0);
	KUNIT_EXPECT_EQ(test, rdmx_blk_size_check(have, 512, 512), 0);
	KUNIT_EXPECT_EQ(test, rdmx_blk_size_check(have, U64_MAX, 512), -EPROTO);
	KUNIT_EXPECT_EQ(test, rdmx_blk_size_check(have, have + 1, 512), -EPROTO);
	KUNIT_EXPECT_EQ(test, rdmx_blk_size_check(have, SZ_32M, 0), -EPROTO);
}

/* A request past its I/O timeout: wait on (slow link) or recover (lost). */
static void rdmx_blk_timeout_wait_test(struct kunit *test)
{
	const u64 w = 30ULL * NSEC_PER_SEC, t0 = 1000ULL * NSEC_PER_SEC;

	/* Its queue answered another request a moment ago: wait. */
	KUNIT_EXPECT_TRUE(test, rdmx_blk_timeout_wait(t0 + w, t0, t0 + w - 1, w));
	/* Nothing answered for a whole window: the connection is stuck. */
	KUNIT_EXPECT_FALSE(test, rdmx_blk_timeout_wait(t0 + w, t0, t0, w));
	KUNIT_EXPECT_FALSE(test, rdmx_blk_timeout_wait(t0 + w, t0, 0, w));
	/* An answer on another CPU after this handler read the clock. */
	KUNIT_EXPECT_TRUE(test, rdmx_blk_timeout_wait(t0 + w, t0, t0 + w + 5, w));
	/* Others flow, but this one has waited its limit: the server lost it. */
	KUNIT_EXPECT_TRUE(test, rdmx_blk_timeout_wait(t0 + 4 * w - 1, t0,
						      t0 + 4 * w - 2, w));
	KUNIT_EXPECT_FALSE(test, rdmx_blk_timeout_wait(t0 + 4 * w, t0,
						       t0 + 4 * w - 1, w));
	/* A short I/O timeout (set through the queue's io_timeout). */
	KUNIT_EXPECT_TRUE(test, rdmx_blk_timeout_wait(t0 + 2000000, t0,
						      t0 + 1500000, 1000000));
	KUNIT_EXPECT_FALSE(test, rdmx_blk_timeout_wait(t0 + 2000000, t0,
						       t0 + 900000, 1000000));
}

/* A request taken back from a lost connection: held, or failed at last. */
static void rdmx_blk_requeue_ok_test(struct kunit *test)
{
	const u64 loss = 30ULL * NSEC_PER_SEC, t0 = 1000ULL * NSEC_PER_SEC;

	/* A young request is held, however often it was taken back. */
	KUNIT_EXPECT_TRUE(test, rdmx_blk_requeue_ok(t0 + 1, t0, 0, loss));
	KUNIT_EXPECT_TRUE(test, rdmx_blk_requeue_ok(t0 + loss, t0, 100, loss));
	/* Its first and second loss are always held: the loss timeout
	 * counts from the loss, not from the request.
	 */
	KUNIT_EXPECT_TRUE(test, rdmx_blk_requeue_ok(t0 + 10 * loss, t0, 0, loss));
	KUNIT_EXPECT_TRUE(test, rdmx_blk_requeue_ok(t0 + 10 * loss, t0, 1, loss));
	/* Taken back twice before and older than the loss timeout: failed. */
	KUNIT_EXPECT_FALSE(test, rdmx_blk_requeue_ok(t0 + loss + 1, t0, 2, loss));
	KUNIT_EXPECT_FALSE(test, rdmx_blk_requeue_ok(t0 + 10 * loss, t0, 7, loss));
}

static const char *const rdmx_disk_legal[] = {
	"connecting>live", "connecting>deleting",
	"live>reconnecting", "live>deleting",
	"reconnecting>live", "reconnecting>dead", "reconnecting>deleting",
	"dead>deleting",
};

/* A mapped disk's states: the table, against the list above. */
static void rdmx_blk_map_state_test(struct kunit *test)
{
	rdmx_fsm_check(test, &rdmx_disk_fsm, rdmx_disk_legal,
		       ARRAY_SIZE(rdmx_disk_legal));
}

static const char *const rdmx_srvq_legal[] = {
	"accepting>live", "accepting>failing", "accepting>torn",
	"live>failing", "live>torn",
	"failing>torn",
};

/* A server queue's states: the table, against the list above. */
static void rdmx_blk_srvq_state_test(struct kunit *test)
{
	rdmx_fsm_check(test, &rdmx_srvq_fsm, rdmx_srvq_legal,
		       ARRAY_SIZE(rdmx_srvq_legal));
}

static const char *const rdmx_srvq_stage_legal[] = {
	"idle>running", "idle>responding",
	"running>fetching", "running>reading", "running>writing",
	"running>responding",
	"running>idle",
	"fetching>writing", "fetching>idle",
	"writing>responding", "reading>responding",
	"responding>idle",
};

/* A server command's stages: the table, against the list above. */
static void rdmx_blk_srvq_stage_test(struct kunit *test)
{
	rdmx_fsm_check(test, &rdmx_srvq_stage_fsm, rdmx_srvq_stage_legal,
		       ARRAY_SIZE(rdmx_srvq_stage_legal));
}

static struct kunit_case rdmx_blk_test_cases[] = {
	KUNIT_CASE(rdmx_blk_cmd_parse_test),
	KUNIT_CASE(rdmx_blk_batch_count_test),
	KUNIT_CASE(rdmx_blk_batch_cmd_check_test),
	KUNIT_CASE_PARAM(rdmx_blk_io_check_test, rdmx_blk_gen_params),
	KUNIT_CASE(rdmx_blk_inline_read_test),
	KUNIT_CASE(rdmx_blk_staged_write_test),
	KUNIT_CASE(rdmx_blk_lbs4k_test),
	KUNIT_CASE(rdmx_blk_size_check_test),
	KUNIT_CASE(rdmx_blk_timeout_wait_test),
	KUNIT_CASE(rdmx_blk_requeue_ok_test),
	KUNIT_CASE(rdmx_blk_map_state_test),
	KUNIT_CASE(rdmx_blk_srvq_state_test),
	KUNIT_CASE(rdmx_blk_srvq_stage_test),
	{}
};

static struct kunit_suite rdmx_blk_suite = {
	.name = "rdmx_blk",
	.test_cases = rdmx_blk_test_cases,
};

kunit_test_suites(&rdmx_blk_suite);
