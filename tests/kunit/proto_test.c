// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suites for rdmx's wire protocol (rdmx_proto) and session state
 * machine (rdmx_state). Part of rdmx_test.ko.
 */
#include <kunit/test.h>

#include "core/compat.h"
#include "core/cm.h"
#include "core/rdmx.h"
#include "msg/msg_proto.h"
#include "msg/sess.h"
#include "msg/state.h"
#include "fsm_check.h"

/* A request as a well-behaved peer sends it. */
static void rdmx_good_params(struct rdmx_conn_params *p)
{
	memset(p, 0, sizeof(*p));
	p->queue_depth = 128;
	p->lane = 1;
	p->nr_lanes = 2;
	p->features = RDMX_PROTO_F_MSG | RDMX_PROTO_F_RMA;
	p->max_msg_size = 1 << 20;
	uuid_gen(&p->sess_uuid);
	p->generation = 0x0123456789abcdefULL;
}

static void rdmx_conn_req_roundtrip_test(struct kunit *test)
{
	struct rdmx_conn_params in, out;
	struct rdmx_conn_req req;
	enum rdmx_rej_reason reason = RDMX_REJ_UNKNOWN;

	rdmx_good_params(&in);
	rdmx_conn_req_pack(&req, &in);
	KUNIT_EXPECT_EQ(test, req.__cma_version, 0);
	KUNIT_EXPECT_EQ(test, req.__ip_version, 0);
	KUNIT_ASSERT_EQ(test, rdmx_conn_req_parse(&req, sizeof(req), &out, &reason), 0);
	KUNIT_EXPECT_EQ(test, out.queue_depth, in.queue_depth);
	KUNIT_EXPECT_EQ(test, out.lane, in.lane);
	KUNIT_EXPECT_EQ(test, out.nr_lanes, in.nr_lanes);
	KUNIT_EXPECT_EQ(test, out.features, in.features);
	KUNIT_EXPECT_EQ(test, out.max_msg_size, in.max_msg_size);
	KUNIT_EXPECT_EQ(test, out.generation, in.generation);
	KUNIT_EXPECT_EQ(test, out.minor, RDMX_PROTO_MINOR);
	KUNIT_EXPECT_TRUE(test, uuid_equal(&out.sess_uuid, &in.sess_uuid));
}

/*
 * One field of a packed request overwritten (little-endian, @size bytes at
 * @offset), or the length cut to @len; then the expected verdict.
 */
/* Overwrite @size bytes at @offset with @value, little-endian. */
struct rdmx_poke {
	size_t offset;
	size_t size;		/* 0: nothing changed */
	u64 value;
};

struct rdmx_req_case {
	const char *desc;
	struct rdmx_poke poke;
	size_t len;		/* 0: the whole request */
	int ret;
	enum rdmx_rej_reason reason;
	u32 features;		/* expected on success */
};

#define REQ_AT(f)	offsetof(struct rdmx_conn_req, f)
#define REQ_OK		(RDMX_PROTO_F_MSG | RDMX_PROTO_F_RMA)

static const struct rdmx_req_case rdmx_req_cases[] = {
	{ "unchanged", {}, 0, 0, 0, REQ_OK },
	{ "truncated by one byte", {}, sizeof(struct rdmx_conn_req) - 1,
	  -EPROTO, RDMX_REJ_MALFORMED },
	{ "only the cma bytes", {}, 2, -EPROTO, RDMX_REJ_MALFORMED },
	{ "wrong magic", { REQ_AT(magic), 2, 0x1bbd }, 0,
	  -EPROTO, RDMX_REJ_BAD_MAGIC },
	{ "magic byte-swapped", { REQ_AT(magic), 2, 0xdc52 }, 0,
	  -EPROTO, RDMX_REJ_BAD_MAGIC },
	{ "older major version", { REQ_AT(major), 1, RDMX_PROTO_MAJOR - 1 }, 0,
	  -EPROTO, RDMX_REJ_VERSION },
	{ "newer major version", { REQ_AT(major), 1, RDMX_PROTO_MAJOR + 1 }, 0,
	  -EPROTO, RDMX_REJ_VERSION },
	{ "newer minor version", { REQ_AT(minor), 1, RDMX_PROTO_MINOR + 1 }, 0,
	  0, 0, REQ_OK },
	{ "reserved0 set", { REQ_AT(reserved0), 4, 1 }, 0,
	  -EPROTO, RDMX_REJ_MALFORMED },
	{ "last reserved byte set", { REQ_AT(reserved) + 7, 1, 0x80 }, 0,
	  -EPROTO, RDMX_REJ_MALFORMED },
	{ "queue depth 0", { REQ_AT(queue_depth), 2, 0 }, 0,
	  -EPROTO, RDMX_REJ_PARAMS },
	{ "queue depth only the reserve",
	  { REQ_AT(queue_depth), 2, RDMX_CREDITS_RESERVED }, 0,
	  -EPROTO, RDMX_REJ_PARAMS },
	{ "queue depth at the maximum",
	  { REQ_AT(queue_depth), 2, RDMX_PROTO_MAX_QUEUE_DEPTH }, 0,
	  0, 0, REQ_OK },
	{ "queue depth over the maximum",
	  { REQ_AT(queue_depth), 2, RDMX_PROTO_MAX_QUEUE_DEPTH + 1 }, 0,
	  -EPROTO, RDMX_REJ_PARAMS },
	{ "queue depth 65535", { REQ_AT(queue_depth), 2, 0xffff }, 0,
	  -EPROTO, RDMX_REJ_PARAMS },
	{ "no QPs", { REQ_AT(nr_lanes), 2, 0 }, 0, -EPROTO, RDMX_REJ_PARAMS },
	{ "QPs over the maximum", { REQ_AT(nr_lanes), 2, RDMX_PROTO_MAX_LANES + 1 }, 0,
	  -EPROTO, RDMX_REJ_PARAMS },
	{ "QP index equal to the count", { REQ_AT(lane), 2, 2 }, 0,
	  -EPROTO, RDMX_REJ_PARAMS },
	{ "QP index 65535", { REQ_AT(lane), 2, 0xffff }, 0,
	  -EPROTO, RDMX_REJ_PARAMS },
	{ "message size below the minimum",
	  { REQ_AT(max_msg_size), 4, RDMX_PROTO_MIN_MSG_SIZE - 1 }, 0,
	  -EPROTO, RDMX_REJ_PARAMS },
	{ "message size 4 GiB - 1", { REQ_AT(max_msg_size), 4, 0xffffffff }, 0,
	  0, 0, REQ_OK },
	{ "no features", { REQ_AT(features), 4, 0 }, 0,
	  -EPROTO, RDMX_REJ_FEATURES },
	{ "only unknown features", { REQ_AT(features), 4, 0x80000000 }, 0,
	  -EPROTO, RDMX_REJ_FEATURES },
	{ "unknown features dropped",
	  { REQ_AT(features), 4, 0xffff0000 | RDMX_PROTO_F_BLOCK }, 0,
	  0, 0, RDMX_PROTO_F_BLOCK },
};

static void rdmx_req_case_desc(const struct rdmx_req_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rdmx_req, rdmx_req_cases, rdmx_req_case_desc);

static void rdmx_poke(u8 *buf, const struct rdmx_poke *poke)
{
	size_t i;

	for (i = 0; i < poke->size; i++)
		buf[poke->offset + i] = poke->value >> (8 * i);
}

/*
 * Parse a copy of @len bytes of @wire at offset 0 and at an odd offset:
 * CM private data has no alignment promise. Both must agree.
 */
static u8 *rdmx_unaligned_copy(struct kunit *test, const void *wire,
			       size_t len, size_t off)
{
	u8 *buf = kunit_kzalloc(test, len + 1, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, buf);
	memcpy(buf + off, wire, len);
	return buf + off;
}

static void rdmx_conn_req_parse_test(struct kunit *test)
{
	const struct rdmx_req_case *c = test->param_value;
	enum rdmx_rej_reason reason = RDMX_REJ_UNKNOWN;
	struct rdmx_conn_params in, out;
	struct rdmx_conn_req req;
	size_t off, len = c->len ?: sizeof(req);
	int ret;

	rdmx_good_params(&in);
	rdmx_conn_req_pack(&req, &in);
	rdmx_poke((u8 *)&req, &c->poke);
	for (off = 0; off <= 1; off++) {
		const void *wire = rdmx_unaligned_copy(test, &req, sizeof(req), off);

		ret = rdmx_conn_req_parse(wire, len, &out, &reason);
		KUNIT_EXPECT_EQ_MSG(test, ret, c->ret, "%s, offset %zu", c->desc, off);
		if (ret)
			KUNIT_EXPECT_EQ_MSG(test, reason, c->reason, "%s: %s", c->desc,
					    rdmx_rej_reason_str(reason));
		else
			KUNIT_EXPECT_EQ(test, out.features, c->features);
	}
}

/*
 * Reserved bytes: refused from a peer of our minor version, ignored from a
 * newer one (which may have given them a meaning).
 */
static void rdmx_conn_reserved_test(struct kunit *test)
{
	enum rdmx_rej_reason reason = RDMX_REJ_UNKNOWN;
	struct rdmx_conn_params p, out;
	struct rdmx_conn_req req;
	struct rdmx_conn_rep rep;

	rdmx_good_params(&p);
	rdmx_conn_req_pack(&req, &p);
	memset(req.reserved, 0xa5, sizeof(req.reserved));
	req.reserved0 = cpu_to_le32(0xdeadbeef);
	KUNIT_EXPECT_EQ(test, rdmx_conn_req_parse(&req, sizeof(req), &out, &reason),
			-EPROTO);
	req.minor = RDMX_PROTO_MINOR + 1;
	KUNIT_EXPECT_EQ(test, rdmx_conn_req_parse(&req, sizeof(req), &out, &reason), 0);
	KUNIT_EXPECT_EQ(test, out.minor, RDMX_PROTO_MINOR + 1);

	rdmx_conn_rep_pack(&rep, &p);
	memset(rep.reserved, 0xa5, sizeof(rep.reserved));
	KUNIT_EXPECT_EQ(test, rdmx_conn_rep_parse(&rep, sizeof(rep), &p, &out), -EPROTO);
	rep.minor = RDMX_PROTO_MINOR + 1;
	KUNIT_EXPECT_EQ(test, rdmx_conn_rep_parse(&rep, sizeof(rep), &p, &out), 0);
}

static void rdmx_conn_req_null_test(struct kunit *test)
{
	enum rdmx_rej_reason reason = RDMX_REJ_UNKNOWN;
	struct rdmx_conn_params out;

	KUNIT_EXPECT_EQ(test, rdmx_conn_req_parse(NULL, 56, &out, &reason), -EPROTO);
	KUNIT_EXPECT_EQ(test, reason, RDMX_REJ_MALFORMED);
}

struct rdmx_rep_case {
	const char *desc;
	struct rdmx_poke poke;
	size_t len;		/* 0: the whole reply */
	int ret;
};

#define REP_AT(f)	offsetof(struct rdmx_conn_rep, f)

static const struct rdmx_rep_case rdmx_rep_cases[] = {
	{ "unchanged", {}, 0, 0 },
	{ "fewer QPs granted", { REP_AT(nr_lanes), 2, 1 }, 0, 0 },
	{ "fewer features granted", { REP_AT(features), 4, RDMX_PROTO_F_MSG }, 0, 0 },
	{ "truncated", {}, sizeof(struct rdmx_conn_rep) - 1, -EPROTO },
	{ "wrong magic", { REP_AT(magic), 2, 0 }, 0, -EPROTO },
	{ "other major version", { REP_AT(major), 1, RDMX_PROTO_MAJOR + 1 }, 0, -EPROTO },
	{ "reserved byte set", { REP_AT(reserved), 1, 1 }, 0, -EPROTO },
	{ "more QPs than asked", { REP_AT(nr_lanes), 2, 3 }, 0, -EPROTO },
	{ "no QPs", { REP_AT(nr_lanes), 2, 0 }, 0, -EPROTO },
	{ "a feature not offered",
	  { REP_AT(features), 4, RDMX_PROTO_F_MSG | RDMX_PROTO_F_BLOCK }, 0, -EPROTO },
	{ "no features", { REP_AT(features), 4, 0 }, 0, -EPROTO },
	{ "queue depth 0", { REP_AT(queue_depth), 2, 0 }, 0, -EPROTO },
	{ "a smaller queue depth", { REP_AT(queue_depth), 2, 64 }, 0, 0 },
	{ "a deeper queue than asked", { REP_AT(queue_depth), 2, 129 }, 0, -EPROTO },
	{ "message size too small", { REP_AT(max_msg_size), 4, 512 }, 0, -EPROTO },
	{ "another generation", { REP_AT(generation), 8, 7 }, 0, -EPROTO },
};

static void rdmx_rep_case_desc(const struct rdmx_rep_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rdmx_rep, rdmx_rep_cases, rdmx_rep_case_desc);

static void rdmx_conn_rep_parse_test(struct kunit *test)
{
	const struct rdmx_rep_case *c = test->param_value;
	struct rdmx_conn_params req, out;
	struct rdmx_conn_rep rep;
	size_t off;
	int ret;

	rdmx_good_params(&req);
	rdmx_conn_rep_pack(&rep, &req);
	rdmx_poke((u8 *)&rep, &c->poke);
	for (off = 0; off <= 1; off++) {
		const void *wire = rdmx_unaligned_copy(test, &rep, sizeof(rep), off);

		ret = rdmx_conn_rep_parse(wire, c->len ?: sizeof(rep), &req, &out);
		KUNIT_EXPECT_EQ_MSG(test, ret, c->ret, "%s, offset %zu", c->desc, off);
		if (!ret) {
			KUNIT_EXPECT_EQ(test, out.lane, req.lane);
			KUNIT_EXPECT_EQ(test, out.generation, req.generation);
			KUNIT_EXPECT_TRUE(test, uuid_equal(&out.sess_uuid, &req.sess_uuid));
		}
	}
}

static void rdmx_conn_rej_test(struct kunit *test)
{
	struct rdmx_conn_rej rej;
	unsigned int r;

	for (r = 0; r < RDMX_REJ_NR_REASONS; r++) {
		rdmx_conn_rej_pack(&rej, r);
		KUNIT_EXPECT_EQ(test, rdmx_conn_rej_parse(&rej, sizeof(rej)), r);
		KUNIT_EXPECT_NOT_NULL(test, rdmx_rej_reason_str(r));
	}
	/* The CM's own rejects carry no rdmx data. */
	KUNIT_EXPECT_EQ(test, rdmx_conn_rej_parse(NULL, 0), RDMX_REJ_UNKNOWN);
	rdmx_conn_rej_pack(&rej, RDMX_REJ_BUSY);
	KUNIT_EXPECT_EQ(test, rdmx_conn_rej_parse(&rej, sizeof(rej) - 1),
			RDMX_REJ_UNKNOWN);
	rej.reason = cpu_to_le16(RDMX_REJ_NR_REASONS);
	KUNIT_EXPECT_EQ(test, rdmx_conn_rej_parse(&rej, sizeof(rej)), RDMX_REJ_UNKNOWN);
	rej.reason = cpu_to_le16(RDMX_REJ_BUSY);
	/* Another major version's reject: its reason cannot be read. */
	rej.major = RDMX_PROTO_MAJOR + 1;
	KUNIT_EXPECT_EQ(test, rdmx_conn_rej_parse(&rej, sizeof(rej)), RDMX_REJ_VERSION);
	rej.major = RDMX_PROTO_MAJOR;
	/* Something else's consumer-defined reject. */
	rej.magic = cpu_to_le16(0x1bbd);
	KUNIT_EXPECT_EQ(test, rdmx_conn_rej_parse(&rej, sizeof(rej)), RDMX_REJ_BAD_MAGIC);
	KUNIT_EXPECT_STREQ(test, rdmx_rej_reason_str(RDMX_REJ_NR_REASONS + 5),
			   rdmx_rej_reason_str(RDMX_REJ_UNKNOWN));
}

/* Every reason a peer may give fails a connection with one errno. */
static void rdmx_rej_errno_test(struct kunit *test)
{
	static const int want[RDMX_REJ_NR_REASONS] = {
		[RDMX_REJ_UNKNOWN] = -ECONNREFUSED,
		[RDMX_REJ_BAD_MAGIC] = -EPROTO,
		[RDMX_REJ_VERSION] = -EPROTO,
		[RDMX_REJ_MALFORMED] = -EPROTO,
		[RDMX_REJ_PARAMS] = -EPROTO,
		[RDMX_REJ_FEATURES] = -EPROTO,
		[RDMX_REJ_NOT_ALLOWED] = -ECONNREFUSED,
		[RDMX_REJ_BUSY] = -EAGAIN,
		[RDMX_REJ_STALE] = -ESTALE,
	};
	unsigned int r;

	for (r = 0; r < RDMX_REJ_NR_REASONS; r++)
		KUNIT_EXPECT_EQ_MSG(test, rdmx_rej_errno(r), want[r],
				    "reason %u (%s)", r, rdmx_rej_reason_str(r));
	KUNIT_EXPECT_EQ(test, rdmx_rej_errno(RDMX_REJ_NR_REASONS),
			-ECONNREFUSED);
}

struct rdmx_hdr_case {
	const char *desc;
	struct rdmx_msg m;
	size_t payload;		/* bytes that arrived after the header */
	u32 reserved;
	int ret;
};

#define MSG_OPEN_LEN	sizeof(struct rdmx_chan_open)
#define MSG_REP_LEN	sizeof(struct rdmx_chan_open_rep)

/* A well-formed header of each type, as a peer sends it. */
#define DATA(n)	{ .type = RDMX_MSG_DATA, .seq = 9, .ack = 4, .len = (n), \
		  .chan = 3, .credits = 2 }
#define OPEN	{ .type = RDMX_MSG_OPEN, .seq = 10, .ack = 4, .len = MSG_OPEN_LEN, \
		  .credits = 1 }
#define OPEN_REP { .type = RDMX_MSG_OPEN_REP, .seq = 11, .ack = 4, \
		  .len = MSG_REP_LEN, .chan = 6 }
#define SHUT	{ .type = RDMX_MSG_SHUT, .seq = 12, .ack = 4, .chan = 3 }
#define CTL(t)	{ .type = (t), .ack = 77, .credits = 5 }

static const struct rdmx_hdr_case rdmx_hdr_cases[] = {
	/* Common to all types. */
	{ "type 0", { .type = 0 }, 0, 0, -EBADMSG },
	{ "type past the last", { .type = RDMX_MSG_NR_TYPES }, 0, 0, -EBADMSG },
	{ "type 255", { .type = 255 }, 0, 0, -EBADMSG },
	{ "unknown flag", { .type = RDMX_MSG_DATA, .flags = 0x80, .chan = 3 }, 0, 0,
	  -EBADMSG },
	{ "unknown flag next to more",
	  { .type = RDMX_MSG_DATA, .flags = RDMX_MSG_F_MORE | 0x02, .chan = 3 }, 0, 0,
	  -EBADMSG },
	{ "reserved set", DATA(0), 0, 1, -EBADMSG },
	{ "reserved top bit set", DATA(0), 0, 0x80000000, -EBADMSG },
	{ "reserved set on a control message", CTL(RDMX_MSG_ACK), 0, 1, -EBADMSG },
	{ "length says more than arrived", DATA(100), 99, 0, -EBADMSG },
	{ "length says less than arrived", DATA(100), 101, 0, -EBADMSG },
	{ "length 4 GiB - 1", DATA(0xffffffff), 16, 0, -EBADMSG },

	/* DATA */
	{ "data", DATA(100), 100, 0, 0 },
	{ "data, empty", DATA(0), 0, 0, 0 },
	{ "data at the payload limit", DATA(4096), 4096, 0, 0 },
	{ "data over the payload limit", DATA(4097), 4097, 0, -EMSGSIZE },
	{ "data, more segments", { .type = RDMX_MSG_DATA, .flags = RDMX_MSG_F_MORE,
	  .len = 8, .chan = 3 }, 8, 0, 0 },
	{ "data, empty, more segments",
	  { .type = RDMX_MSG_DATA, .flags = RDMX_MSG_F_MORE, .chan = 3 }, 0, 0,
	  -EBADMSG },
	{ "data, sequence number 0", { .type = RDMX_MSG_DATA, .chan = 3 }, 0, 0, 0 },
	{ "data, sequence number 4 GiB - 1",
	  { .type = RDMX_MSG_DATA, .seq = 0xffffffff, .chan = 3 }, 0, 0, 0 },
	{ "data, channel 4 GiB - 1", { .type = RDMX_MSG_DATA, .chan = 0xffffffff }, 0, 0,
	  0 },
	{ "data without a channel", { .type = RDMX_MSG_DATA, .seq = 9, .len = 8 }, 8, 0,
	  -EBADMSG },
	{ "data without a channel, over the limit",
	  { .type = RDMX_MSG_DATA, .len = 4097 }, 4097, 0, -EBADMSG },

	/* Control types */
	{ "ack", CTL(RDMX_MSG_ACK), 0, 0, 0 },
	{ "ack, all zero", { .type = RDMX_MSG_ACK }, 0, 0, 0 },
	{ "heartbeat", CTL(RDMX_MSG_HEARTBEAT), 0, 0, 0 },
	{ "heartbeat ack", CTL(RDMX_MSG_HEARTBEAT_ACK), 0, 0, 0 },
	{ "close", CTL(RDMX_MSG_CLOSE), 0, 0, 0 },
	{ "ack with a sequence number",
	  { .type = RDMX_MSG_ACK, .seq = 1 }, 0, 0, -EBADMSG },
	{ "ack with a channel",
	  { .type = RDMX_MSG_ACK, .chan = 1 }, 0, 0, -EBADMSG },
	{ "ack with payload",
	  { .type = RDMX_MSG_ACK, .len = 4 }, 4, 0, -EBADMSG },
	{ "ack with the more flag",
	  { .type = RDMX_MSG_ACK, .flags = RDMX_MSG_F_MORE }, 0, 0, -EBADMSG },
	{ "heartbeat with a sequence number",
	  { .type = RDMX_MSG_HEARTBEAT, .seq = 1 }, 0, 0, -EBADMSG },
	{ "heartbeat with a channel",
	  { .type = RDMX_MSG_HEARTBEAT, .chan = 1 }, 0, 0, -EBADMSG },
	{ "heartbeat with payload",
	  { .type = RDMX_MSG_HEARTBEAT, .len = 4 }, 4, 0, -EBADMSG },
	{ "heartbeat with the more flag",
	  { .type = RDMX_MSG_HEARTBEAT, .flags = RDMX_MSG_F_MORE }, 0, 0, -EBADMSG },
	{ "heartbeat ack with a sequence number",
	  { .type = RDMX_MSG_HEARTBEAT_ACK, .seq = 1 }, 0, 0, -EBADMSG },
	{ "heartbeat ack with a channel",
	  { .type = RDMX_MSG_HEARTBEAT_ACK, .chan = 1 }, 0, 0, -EBADMSG },
	{ "heartbeat ack with payload",
	  { .type = RDMX_MSG_HEARTBEAT_ACK, .len = 4 }, 4, 0, -EBADMSG },
	{ "heartbeat ack with the more flag",
	  { .type = RDMX_MSG_HEARTBEAT_ACK, .flags = RDMX_MSG_F_MORE }, 0, 0, -EBADMSG },
	{ "close with a sequence number",
	  { .type = RDMX_MSG_CLOSE, .seq = 1 }, 0, 0, -EBADMSG },
	{ "close with a channel",
	  { .type = RDMX_MSG_CLOSE, .chan = 1 }, 0, 0, -EBADMSG },
	{ "close with payload",
	  { .type = RDMX_MSG_CLOSE, .len = 4 }, 4, 0, -EBADMSG },
	{ "close with the more flag",
	  { .type = RDMX_MSG_CLOSE, .flags = RDMX_MSG_F_MORE }, 0, 0, -EBADMSG },

	/* OPEN */
	{ "open", OPEN, MSG_OPEN_LEN, 0, 0 },
	{ "open, sequence number 0", { .type = RDMX_MSG_OPEN, .len = MSG_OPEN_LEN },
	  MSG_OPEN_LEN, 0, 0 },
	{ "open with a channel",
	  { .type = RDMX_MSG_OPEN, .len = MSG_OPEN_LEN, .chan = 1 }, MSG_OPEN_LEN, 0,
	  -EBADMSG },
	{ "open, payload a byte short",
	  { .type = RDMX_MSG_OPEN, .len = MSG_OPEN_LEN - 1 }, MSG_OPEN_LEN - 1, 0,
	  -EBADMSG },
	{ "open, payload a byte long",
	  { .type = RDMX_MSG_OPEN, .len = MSG_OPEN_LEN + 1 }, MSG_OPEN_LEN + 1, 0,
	  -EBADMSG },
	{ "open without payload", { .type = RDMX_MSG_OPEN }, 0, 0, -EBADMSG },
	{ "open with the more flag",
	  { .type = RDMX_MSG_OPEN, .flags = RDMX_MSG_F_MORE, .len = MSG_OPEN_LEN },
	  MSG_OPEN_LEN, 0, -EBADMSG },

	/* OPEN_REP */
	{ "open reply", OPEN_REP, MSG_REP_LEN, 0, 0 },
	{ "open reply, sequence number 0",
	  { .type = RDMX_MSG_OPEN_REP, .len = MSG_REP_LEN, .chan = 6 }, MSG_REP_LEN, 0,
	  0 },
	{ "open reply without a channel",
	  { .type = RDMX_MSG_OPEN_REP, .seq = 11, .len = MSG_REP_LEN }, MSG_REP_LEN, 0,
	  -EBADMSG },
	{ "open reply, payload a byte short",
	  { .type = RDMX_MSG_OPEN_REP, .len = MSG_REP_LEN - 1, .chan = 6 },
	  MSG_REP_LEN - 1, 0, -EBADMSG },
	{ "open reply, payload a byte long",
	  { .type = RDMX_MSG_OPEN_REP, .len = MSG_REP_LEN + 1, .chan = 6 },
	  MSG_REP_LEN + 1, 0, -EBADMSG },
	{ "open reply without payload", { .type = RDMX_MSG_OPEN_REP, .chan = 6 }, 0, 0,
	  -EBADMSG },
	{ "open reply with the more flag",
	  { .type = RDMX_MSG_OPEN_REP, .flags = RDMX_MSG_F_MORE, .len = MSG_REP_LEN,
	    .chan = 6 }, MSG_REP_LEN, 0, -EBADMSG },

	/* SHUT */
	{ "shut", SHUT, 0, 0, 0 },
	{ "shut, sequence number 0", { .type = RDMX_MSG_SHUT, .chan = 3 }, 0, 0, 0 },
	{ "shut without a channel", { .type = RDMX_MSG_SHUT, .seq = 12 }, 0, 0,
	  -EBADMSG },
	{ "shut with payload", { .type = RDMX_MSG_SHUT, .len = 1, .chan = 3 }, 1, 0,
	  -EBADMSG },
	{ "shut with the more flag",
	  { .type = RDMX_MSG_SHUT, .flags = RDMX_MSG_F_MORE, .chan = 3 }, 0, 0,
	  -EBADMSG },

	/* IMMED: a WRITE_IMM's immediate */
	{ "immediate", { .type = RDMX_MSG_IMMED, .seq = 9, .len = 4, .chan = 3 },
	  4, 0, 0 },
	{ "immediate without a channel",
	  { .type = RDMX_MSG_IMMED, .seq = 9, .len = 4 }, 4, 0, -EBADMSG },
	{ "immediate of 3 bytes",
	  { .type = RDMX_MSG_IMMED, .len = 3, .chan = 3 }, 3, 0, -EBADMSG },
	{ "immediate of 5 bytes",
	  { .type = RDMX_MSG_IMMED, .len = 5, .chan = 3 }, 5, 0, -EBADMSG },
	{ "immediate with the more flag",
	  { .type = RDMX_MSG_IMMED, .flags = RDMX_MSG_F_MORE, .len = 4,
	    .chan = 3 }, 4, 0, -EBADMSG },
};

static void rdmx_hdr_case_desc(const struct rdmx_hdr_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rdmx_hdr, rdmx_hdr_cases, rdmx_hdr_case_desc);

/* Parsed from an odd address too: received data has no alignment promise. */
static void rdmx_msg_hdr_parse_test(struct kunit *test)
{
	const struct rdmx_hdr_case *c = test->param_value;
	size_t off, total = sizeof(struct rdmx_msg_hdr) + c->payload;
	struct rdmx_msg out;
	u8 *buf;

	buf = kunit_kzalloc(test, total + 1, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	for (off = 0; off <= 1; off++) {
		struct rdmx_msg_hdr hdr;
		int ret;

		rdmx_msg_hdr_pack(&hdr, &c->m);
		hdr.reserved = cpu_to_le32(c->reserved);
		memcpy(buf + off, &hdr, sizeof(hdr));
		ret = rdmx_msg_hdr_parse(buf + off, total, 4096, &out);
		KUNIT_EXPECT_EQ_MSG(test, ret, c->ret, "%s, offset %zu", c->desc, off);
		if (!ret)
			KUNIT_EXPECT_EQ(test, memcmp(&out, &c->m, sizeof(out)), 0);
	}
	KUNIT_EXPECT_EQ(test, rdmx_msg_hdr_parse(buf, sizeof(struct rdmx_msg_hdr) - 1,
						 4096, &out), -EBADMSG);
}

/* Exactly the types that carry a sequence number are sequenced. */
static void rdmx_msg_type_sequenced_test(struct kunit *test)
{
	unsigned int t;

	for (t = 0; t <= 255; t++) {
		bool want = t == RDMX_MSG_DATA || t == RDMX_MSG_OPEN ||
			    t == RDMX_MSG_OPEN_REP || t == RDMX_MSG_SHUT ||
			    t == RDMX_MSG_IMMED;

		KUNIT_EXPECT_EQ_MSG(test, rdmx_msg_type_sequenced(t), want, "type %u", t);
	}
}

/* Names of 63 and 64 bytes. */
#define NAME10	"abcdefghij"
#define NAME63	NAME10 NAME10 NAME10 NAME10 NAME10 NAME10 "klm"
#define NAME64	NAME63 "n"

struct rdmx_name_case {
	const char *desc;
	const char *bytes;	/* copied to the start of @size zeroed bytes */
	size_t nbytes;		/* how many; 0: strlen(@bytes) */
	size_t size;
	bool valid;
};

static const struct rdmx_name_case rdmx_name_cases[] = {
	{ "plain", "echo", 0, 64, true },
	{ "the echo service", RDMX_SERVICE_ECHO, 0, 64, true },
	{ "every kind of character", "AZaz09._-", 0, 64, true },
	{ "one character", "a", 0, 64, true },
	{ "63 characters", NAME63, 0, 64, true },
	{ "64 characters, no NUL", NAME64, 0, 64, false },
	{ "64 characters and a NUL", NAME64, 0, 65, false },
	{ "63 characters in a larger buffer", NAME63, 0, 80, true },
	{ "empty", "", 0, 64, false },
	{ "NUL in the last byte of the size", "echo", 0, 5, true },
	{ "no NUL within the size", "echo", 0, 4, false },
	{ "size 0", "", 0, 0, false },
	{ "size 1", "", 0, 1, false },
	{ "byte right after the NUL", "echo\0x", 6, 64, false },
	{ "byte at the end of the padding", "echo\0\0\0\0\0\0\0\0\0x", 14, 14,
	  false },
	{ "second name after the NUL", "echo\0echo", 9, 64, false },
	{ "slash", "a/b", 0, 64, false },
	{ "dot-dot-slash", "../echo", 0, 64, false },
	{ "backslash", "a\\b", 0, 64, false },
	{ "space inside", "a b", 0, 64, false },
	{ "trailing space", "echo ", 0, 64, false },
	{ "leading space", " echo", 0, 64, false },
	{ "tab", "a\tb", 0, 64, false },
	{ "newline", "echo\n", 0, 64, false },
	{ "colon", "a:b", 0, 64, false },
	{ "at sign", "a@b", 0, 64, false },
	{ "plus", "a+b", 0, 64, false },
	{ "DEL", "a\x7f", 0, 64, false },
	{ "Latin-1 letter", "caf\xe9", 0, 64, false },
	{ "UTF-8 letter", "caf\xc3\xa9", 0, 64, false },
	{ "byte 0xff", "\xff", 0, 64, false },
};

static void rdmx_name_case_desc(const struct rdmx_name_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rdmx_name, rdmx_name_cases, rdmx_name_case_desc);

/*
 * The name sits in exactly @size allocated bytes, so KASAN reports a read
 * past them.
 */
static void rdmx_service_name_valid_test(struct kunit *test)
{
	const struct rdmx_name_case *c = test->param_value;
	size_t n = c->nbytes ?: strlen(c->bytes);
	char *buf;

	KUNIT_ASSERT_LE(test, n, c->size);
	buf = kunit_kzalloc(test, c->size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	memcpy(buf, c->bytes, n);
	KUNIT_EXPECT_EQ_MSG(test, rdmx_service_name_valid(buf, c->size), c->valid,
			    "%s", c->desc);
	KUNIT_EXPECT_FALSE(test, rdmx_service_name_valid(NULL, 64));
}

static void rdmx_chan_open_pack_test(struct kunit *test)
{
	char service[RDMX_PROTO_SERVICE_LEN];
	struct rdmx_chan_open op;
	u32 chan = 0;

	/* Whatever was there before, the padding goes out as zeros. */
	memset(&op, 0xa5, sizeof(op));
	rdmx_chan_open_pack(&op, 0x01020304, "echo");
	KUNIT_EXPECT_EQ(test, get_unaligned_le32((u8 *)&op), 0x01020304);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(op.reserved), 0);
	KUNIT_EXPECT_EQ(test, memcmp(op.service, "echo", 5), 0);
	KUNIT_EXPECT_NULL(test, memchr_inv(op.service + 4, 0, sizeof(op.service) - 4));

	KUNIT_ASSERT_EQ(test, rdmx_chan_open_parse(&op, sizeof(op), &chan, service), 0);
	KUNIT_EXPECT_EQ(test, chan, 0x01020304);
	KUNIT_EXPECT_STREQ(test, service, "echo");
	KUNIT_EXPECT_EQ(test, memcmp(service, op.service, sizeof(service)), 0);

	rdmx_chan_open_pack(&op, 1, NAME63);
	KUNIT_ASSERT_EQ(test, rdmx_chan_open_parse(&op, sizeof(op), &chan, service), 0);
	KUNIT_EXPECT_STREQ(test, service, NAME63);

	KUNIT_EXPECT_EQ(test, rdmx_chan_open_parse(NULL, sizeof(op), &chan, service),
			-EBADMSG);
}

struct rdmx_open_case {
	const char *desc;
	u32 chan;
	const char *name;	/* copied without its NUL into zeroed bytes */
	struct rdmx_poke poke;
	int len_delta;		/* payload length is sizeof + this */
	int ret;
};

#define OPEN_AT(f)	offsetof(struct rdmx_chan_open, f)

static const struct rdmx_open_case rdmx_open_cases[] = {
	{ "echo", 5, RDMX_SERVICE_ECHO, {}, 0, 0 },
	{ "every kind of character", 5, "AZaz09._-", {}, 0, 0 },
	{ "one character", 5, "a", {}, 0, 0 },
	{ "63 characters", 5, NAME63, {}, 0, 0 },
	{ "channel 4 GiB - 1", 0xffffffff, "echo", {}, 0, 0 },
	{ "64 characters, no NUL", 5, NAME64, {}, 0, -EBADMSG },
	{ "empty name", 5, "", {}, 0, -EBADMSG },
	{ "slash", 5, "a/b", {}, 0, -EBADMSG },
	{ "space", 5, "a b", {}, 0, -EBADMSG },
	{ "Latin-1 letter", 5, "caf\xe9", {}, 0, -EBADMSG },
	{ "byte right after the NUL", 5, "echo", { OPEN_AT(service) + 5, 1, 'x' }, 0,
	  -EBADMSG },
	{ "last byte of the padding set", 5, "echo",
	  { OPEN_AT(service) + RDMX_PROTO_SERVICE_LEN - 1, 1, 1 }, 0, -EBADMSG },
	{ "channel 0", 0, "echo", {}, 0, -EBADMSG },
	{ "reserved set", 5, "echo", { OPEN_AT(reserved), 4, 1 }, 0, -EBADMSG },
	{ "reserved top byte set", 5, "echo", { OPEN_AT(reserved) + 3, 1, 0x80 }, 0,
	  -EBADMSG },
	{ "a byte short", 5, "echo", {}, -1, -EBADMSG },
	{ "a byte long", 5, "echo", {}, 1, -EBADMSG },
	{ "only the channel", 5, "echo", {}, 4 - (int)sizeof(struct rdmx_chan_open),
	  -EBADMSG },
	{ "empty", 5, "echo", {}, -(int)sizeof(struct rdmx_chan_open), -EBADMSG },
};

static void rdmx_open_case_desc(const struct rdmx_open_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rdmx_open, rdmx_open_cases, rdmx_open_case_desc);

/* At offset 0 and at an odd offset: payloads have no alignment promise. */
static void rdmx_chan_open_parse_test(struct kunit *test)
{
	const struct rdmx_open_case *c = test->param_value;
	size_t off, len = sizeof(struct rdmx_chan_open) + c->len_delta;
	u8 wire[sizeof(struct rdmx_chan_open) + 1] = {};
	char service[RDMX_PROTO_SERVICE_LEN];
	u32 chan;
	int ret;

	put_unaligned_le32(c->chan, wire + OPEN_AT(chan));
	memcpy(wire + OPEN_AT(service), c->name,
	       min(strlen(c->name), (size_t)RDMX_PROTO_SERVICE_LEN));
	rdmx_poke(wire, &c->poke);
	for (off = 0; off <= 1; off++) {
		const void *buf = rdmx_unaligned_copy(test, wire, sizeof(wire), off);

		chan = 0xdead;
		memset(service, 0x5a, sizeof(service));
		ret = rdmx_chan_open_parse(buf, len, &chan, service);
		KUNIT_EXPECT_EQ_MSG(test, ret, c->ret, "%s, offset %zu", c->desc, off);
		if (!ret) {
			KUNIT_EXPECT_EQ(test, chan, c->chan);
			KUNIT_EXPECT_STREQ(test, service, c->name);
			KUNIT_EXPECT_NULL(test, memchr_inv(service + strlen(c->name), 0,
							   sizeof(service) - strlen(c->name)));
		} else {
			/* Nothing written on failure. */
			KUNIT_EXPECT_EQ(test, chan, 0xdead);
			KUNIT_EXPECT_NULL(test, memchr_inv(service, 0x5a, sizeof(service)));
		}
	}
}

struct rdmx_open_rep_case {
	const char *desc;
	u32 chan;
	u32 status;
	struct rdmx_poke poke;
	int len_delta;		/* payload length is sizeof + this */
	int ret;
};

#define OREP_AT(f)	offsetof(struct rdmx_chan_open_rep, f)

static const struct rdmx_open_rep_case rdmx_open_rep_cases[] = {
	{ "accepted", 9, RDMX_OPEN_OK, {}, 0, 0 },
	{ "accepted, channel 4 GiB - 1", 0xffffffff, RDMX_OPEN_OK, {}, 0, 0 },
	{ "no such service", 0, RDMX_OPEN_NO_SERVICE, {}, 0, 0 },
	{ "busy", 0, RDMX_OPEN_BUSY, {}, 0, 0 },
	{ "accepted without a channel", 0, RDMX_OPEN_OK, {}, 0, -EBADMSG },
	{ "no such service, with a channel", 9, RDMX_OPEN_NO_SERVICE, {}, 0, -EBADMSG },
	{ "busy, with a channel", 9, RDMX_OPEN_BUSY, {}, 0, -EBADMSG },
	{ "status past the last", 0, RDMX_OPEN_NR_STATUS, {}, 0, -EBADMSG },
	{ "status 256", 0, 0x100, {}, 0, -EBADMSG },
	{ "status 4 GiB - 1", 0, 0xffffffff, {}, 0, -EBADMSG },
	{ "first reserved byte set", 9, RDMX_OPEN_OK, { OREP_AT(reserved), 1, 1 }, 0,
	  -EBADMSG },
	{ "last reserved byte set", 0, RDMX_OPEN_BUSY, { OREP_AT(reserved) + 7, 1, 0x80 },
	  0, -EBADMSG },
	{ "a byte short", 9, RDMX_OPEN_OK, {}, -1, -EBADMSG },
	{ "a byte long", 9, RDMX_OPEN_OK, {}, 1, -EBADMSG },
	{ "empty", 9, RDMX_OPEN_OK, {}, -(int)sizeof(struct rdmx_chan_open_rep),
	  -EBADMSG },
};

static void rdmx_open_rep_case_desc(const struct rdmx_open_rep_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rdmx_open_rep, rdmx_open_rep_cases, rdmx_open_rep_case_desc);

static void rdmx_chan_open_rep_parse_test(struct kunit *test)
{
	const struct rdmx_open_rep_case *c = test->param_value;
	size_t off, len = sizeof(struct rdmx_chan_open_rep) + c->len_delta;
	struct rdmx_chan_open_rep rep;
	u8 wire[sizeof(rep) + 1] = {};
	enum rdmx_open_status status;
	u32 chan;
	int ret;

	/* Packed where the status is one, poked where it is not. */
	if (c->status < RDMX_OPEN_NR_STATUS) {
		rdmx_chan_open_rep_pack(&rep, c->chan, c->status);
		memcpy(wire, &rep, sizeof(rep));
	} else {
		put_unaligned_le32(c->chan, wire + OREP_AT(chan));
		put_unaligned_le32(c->status, wire + OREP_AT(status));
	}
	rdmx_poke(wire, &c->poke);
	for (off = 0; off <= 1; off++) {
		const void *buf = rdmx_unaligned_copy(test, wire, sizeof(wire), off);

		chan = 0xdead;
		status = RDMX_OPEN_NR_STATUS;
		ret = rdmx_chan_open_rep_parse(buf, len, &chan, &status);
		KUNIT_EXPECT_EQ_MSG(test, ret, c->ret, "%s, offset %zu", c->desc, off);
		if (!ret) {
			KUNIT_EXPECT_EQ(test, chan, c->chan);
			KUNIT_EXPECT_EQ(test, status, c->status);
		} else {
			KUNIT_EXPECT_EQ(test, chan, 0xdead);
			KUNIT_EXPECT_EQ(test, status, RDMX_OPEN_NR_STATUS);
		}
	}
	KUNIT_EXPECT_EQ(test, rdmx_chan_open_rep_parse(NULL, sizeof(rep), &chan, &status),
			-EBADMSG);
}

struct rdmx_seq_case {
	const char *desc;
	u32 a, b;
	bool before;
};

static const struct rdmx_seq_case rdmx_seq_cases[] = {
	{ "0 before 1", 0, 1, true },
	{ "1 not before 0", 1, 0, false },
	{ "equal", 5, 5, false },
	{ "across the wrap", 0xffffffff, 0, true },
	{ "after the wrap", 0, 0xffffffff, false },
	{ "half the space ahead", 0, 0x7fffffff, true },
	{ "more than half ahead is behind", 0, 0x80000001, false },
	{ "far across the wrap", 0xfffffff0, 0x10, true },
};

static void rdmx_seq_case_desc(const struct rdmx_seq_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rdmx_seq, rdmx_seq_cases, rdmx_seq_case_desc);

static void rdmx_seq_before_test(struct kunit *test)
{
	const struct rdmx_seq_case *c = test->param_value;

	KUNIT_EXPECT_EQ_MSG(test, rdmx_seq_before(c->a, c->b), c->before,
			    "%#x before %#x", c->a, c->b);
	if (c->a != c->b)
		KUNIT_EXPECT_EQ(test, rdmx_seq_after(c->b, c->a), c->before);
}

static void rdmx_seq_window_test(struct kunit *test)
{
	const u32 una = 0xfffffff0, nxt = 0x10;

	/* The window straddles the wrap: [una, nxt]. */
	KUNIT_EXPECT_TRUE(test, rdmx_seq_ack_valid(una, nxt, una));
	KUNIT_EXPECT_TRUE(test, rdmx_seq_ack_valid(una, nxt, 0xffffffff));
	KUNIT_EXPECT_TRUE(test, rdmx_seq_ack_valid(una, nxt, 0));
	KUNIT_EXPECT_TRUE(test, rdmx_seq_ack_valid(una, nxt, nxt));
	KUNIT_EXPECT_FALSE(test, rdmx_seq_ack_valid(una, nxt, nxt + 1));
	KUNIT_EXPECT_FALSE(test, rdmx_seq_ack_valid(una, nxt, una - 1));
	KUNIT_EXPECT_FALSE(test, rdmx_seq_ack_valid(una, nxt, 0x80000000));
	/* Nothing outstanding: only una itself. */
	KUNIT_EXPECT_TRUE(test, rdmx_seq_ack_valid(7, 7, 7));
	KUNIT_EXPECT_FALSE(test, rdmx_seq_ack_valid(7, 7, 8));

	KUNIT_EXPECT_EQ(test, rdmx_seq_classify(0, 0), RDMX_SEQ_IN_ORDER);
	KUNIT_EXPECT_EQ(test, rdmx_seq_classify(0xffffffff, 0), RDMX_SEQ_DUPLICATE);
	KUNIT_EXPECT_EQ(test, rdmx_seq_classify(1, 0), RDMX_SEQ_GAP);
	KUNIT_EXPECT_EQ(test, rdmx_seq_classify(0x10, 0xfffffff0), RDMX_SEQ_GAP);
	KUNIT_EXPECT_EQ(test, rdmx_seq_classify(0xfffffff0, 0x10), RDMX_SEQ_DUPLICATE);
	/* A retransmission is no further behind than a sender keeps. */
	KUNIT_EXPECT_EQ(test, rdmx_seq_classify(0x10 - RDMX_PROTO_MAX_UNACKED, 0x10),
			RDMX_SEQ_DUPLICATE);
	KUNIT_EXPECT_EQ(test, rdmx_seq_classify(0xf - RDMX_PROTO_MAX_UNACKED, 0x10),
			RDMX_SEQ_GAP);
	/* 2^31 away is behind and ahead at once: never a retransmission. */
	KUNIT_EXPECT_EQ(test, rdmx_seq_classify(0x80000291, 0x291), RDMX_SEQ_GAP);
	KUNIT_EXPECT_EQ(test, rdmx_seq_classify(0x291, 0x80000291), RDMX_SEQ_GAP);
}

/* Which lane a client's new channel goes on, opening lanes on demand. */
static void rdmx_lane_pick_test(struct kunit *test)
{
	static const struct {
		unsigned int chans[4];
		unsigned int nr, max, want;
	} cases[] = {
		{ { 0 }, 1, 1, 0 },		/* the first channel: lane 0 */
		{ { 0 }, 1, 4, 0 },
		{ { 1 }, 1, 4, 1 },		/* lane 0 busy: open lane 1 */
		{ { 1 }, 1, 1, 0 },		/* ... unless one is all */
		{ { 1, 1 }, 2, 2, 0 },		/* all open: the least used */
		{ { 2, 1 }, 2, 2, 1 },
		{ { 1, 0 }, 2, 4, 1 },		/* a lane left without one */
		{ { 1, 1, 1 }, 3, 4, 3 },
		{ { 2, 2, 1, 2 }, 4, 4, 2 },
		{ { 3, 1, 1, 3 }, 4, 4, 1 },	/* ties: the lowest index */
		{ { 1, 1, 1, 1 }, 4, 16, 4 },
	};
	struct rdmx_lane lanes[4] = {};
	unsigned int i, j;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		for (j = 0; j < ARRAY_SIZE(lanes); j++)
			lanes[j].nr_chans = cases[i].chans[j];
		KUNIT_EXPECT_EQ_MSG(test, rdmx_lane_pick(lanes, cases[i].nr,
							 cases[i].max),
				    cases[i].want, "case %u", i);
	}
}

static void rdmx_credits_test(struct kunit *test)
{
	struct rdmx_credits c;
	u32 i;

	KUNIT_EXPECT_EQ(test, rdmx_credits_init(&c, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, rdmx_credits_init(&c, RDMX_CREDITS_RESERVED), -EINVAL);
	KUNIT_EXPECT_EQ(test, rdmx_credits_init(&c, RDMX_PROTO_MAX_QUEUE_DEPTH + 1),
			-EINVAL);
	KUNIT_ASSERT_EQ(test, rdmx_credits_init(&c, 8), 0);

	/* Data exhausts all but the reserve; control then takes the last. */
	for (i = 0; i < 8 - RDMX_CREDITS_RESERVED; i++)
		KUNIT_EXPECT_TRUE(test, rdmx_credits_take(&c, false));
	KUNIT_EXPECT_FALSE(test, rdmx_credits_take(&c, false));
	KUNIT_EXPECT_TRUE(test, rdmx_credits_take(&c, true));
	KUNIT_EXPECT_FALSE(test, rdmx_credits_take(&c, true));
	KUNIT_EXPECT_EQ(test, c.avail, 0u);

	/* Refilled up to the peer's queue, never past it. */
	KUNIT_EXPECT_EQ(test, rdmx_credits_grant(&c, 9), -EPROTO);
	KUNIT_EXPECT_EQ(test, c.avail, 0u);
	KUNIT_EXPECT_EQ(test, rdmx_credits_grant(&c, 3), 0);
	KUNIT_EXPECT_TRUE(test, rdmx_credits_take(&c, false));
	KUNIT_EXPECT_EQ(test, rdmx_credits_grant(&c, 6), 0);
	KUNIT_EXPECT_EQ(test, c.avail, 8u);
	KUNIT_EXPECT_EQ(test, rdmx_credits_grant(&c, 1), -EPROTO);
	KUNIT_EXPECT_EQ(test, rdmx_credits_grant(&c, 0), 0);
	KUNIT_EXPECT_EQ(test, rdmx_credits_grant(&c, 0xffffffff), -EPROTO);
	KUNIT_EXPECT_EQ(test, c.avail, 8u);
}

static struct kunit_case rdmx_proto_cases[] = {
	KUNIT_CASE(rdmx_conn_req_roundtrip_test),
	KUNIT_CASE_PARAM(rdmx_conn_req_parse_test, rdmx_req_gen_params),
	KUNIT_CASE(rdmx_conn_req_null_test),
	KUNIT_CASE(rdmx_conn_reserved_test),
	KUNIT_CASE_PARAM(rdmx_conn_rep_parse_test, rdmx_rep_gen_params),
	KUNIT_CASE(rdmx_conn_rej_test),
	KUNIT_CASE(rdmx_rej_errno_test),
	KUNIT_CASE_PARAM(rdmx_msg_hdr_parse_test, rdmx_hdr_gen_params),
	KUNIT_CASE(rdmx_msg_type_sequenced_test),
	KUNIT_CASE_PARAM(rdmx_service_name_valid_test, rdmx_name_gen_params),
	KUNIT_CASE(rdmx_chan_open_pack_test),
	KUNIT_CASE_PARAM(rdmx_chan_open_parse_test, rdmx_open_gen_params),
	KUNIT_CASE_PARAM(rdmx_chan_open_rep_parse_test, rdmx_open_rep_gen_params),
	KUNIT_CASE_PARAM(rdmx_seq_before_test, rdmx_seq_gen_params),
	KUNIT_CASE(rdmx_seq_window_test),
	KUNIT_CASE(rdmx_credits_test),
	KUNIT_CASE(rdmx_lane_pick_test),
	{}
};

static struct kunit_suite rdmx_proto_suite = {
	.name = "rdmx_proto",
	.test_cases = rdmx_proto_cases,
};

/* The legal transitions, written out independently of state.c's table. */
static const char *const rdmx_legal_transitions[] = {
	"idle>connecting", "idle>closing",
	"connecting>connected", "connecting>reconnecting", "connecting>closing",
	"connected>reconnecting", "connected>closing",
	"reconnecting>connecting", "reconnecting>closing",
	"closing>closed",
};

static bool rdmx_listed_legal(enum rdmx_sess_state from, enum rdmx_sess_state to)
{
	char name[40];
	unsigned int i;

	snprintf(name, sizeof(name), "%s>%s", rdmx_sess_state_str(from),
		 rdmx_sess_state_str(to));
	for (i = 0; i < ARRAY_SIZE(rdmx_legal_transitions); i++)
		if (!strcmp(name, rdmx_legal_transitions[i]))
			return true;
	return false;
}

/* Every (from, to) pair, legal and illegal, including staying put. */
static void rdmx_state_matrix_test(struct kunit *test)
{
	unsigned int from, to, legal = 0;

	for (from = 0; from < RDMX_SESS_NR_STATES; from++) {
		for (to = 0; to < RDMX_SESS_NR_STATES; to++) {
			bool want = rdmx_listed_legal(from, to);

			KUNIT_EXPECT_EQ_MSG(test, rdmx_sess_transition_valid(from, to), want,
					    "%s -> %s", rdmx_sess_state_str(from),
					    rdmx_sess_state_str(to));
			legal += want;
		}
	}
	KUNIT_EXPECT_EQ(test, legal, (unsigned int)ARRAY_SIZE(rdmx_legal_transitions));
}

static void rdmx_state_bounds_test(struct kunit *test)
{
	unsigned int s, t;

	KUNIT_EXPECT_FALSE(test, rdmx_sess_transition_valid(RDMX_SESS_NR_STATES,
							    RDMX_SESS_CLOSED));
	KUNIT_EXPECT_FALSE(test, rdmx_sess_transition_valid(RDMX_SESS_CLOSING,
							    RDMX_SESS_NR_STATES));
	KUNIT_EXPECT_FALSE(test, rdmx_sess_transition_valid(-1, RDMX_SESS_IDLE));
	KUNIT_EXPECT_STREQ(test, rdmx_sess_state_str(RDMX_SESS_NR_STATES), "invalid");
	/* Names are distinct: sysfs and tracepoints tell states apart by them. */
	for (s = 0; s < RDMX_SESS_NR_STATES; s++)
		for (t = s + 1; t < RDMX_SESS_NR_STATES; t++)
			KUNIT_EXPECT_STRNEQ(test, rdmx_sess_state_str(s),
					    rdmx_sess_state_str(t));
}

static const char *const rdmx_conn_legal[] = {
	"resolving>connecting", "resolving>dead",
	"connecting>live", "connecting>dead",
	"live>dead",
};

static const char *const rdmx_ep_legal[] = {
	"new>listening", "new>connecting", "new>connected",
	"listening>new",
	"connecting>new", "connecting>connected", "connecting>closed",
	"connecting>error",
	"connected>shutdown", "connected>closed", "connected>error",
	"shutdown>closed", "shutdown>error",
	"closed>error",
};

/* Connections and endpoints: their tables, against the lists above. */
static void rdmx_conn_state_test(struct kunit *test)
{
	rdmx_fsm_check(test, &rdmx_conn_fsm, rdmx_conn_legal,
		       ARRAY_SIZE(rdmx_conn_legal));
	rdmx_fsm_check(test, &rdmx_ep_fsm, rdmx_ep_legal,
		       ARRAY_SIZE(rdmx_ep_legal));
	/* The session's table passes the same checks. */
	rdmx_fsm_check(test, &rdmx_sess_fsm, rdmx_legal_transitions,
		       ARRAY_SIZE(rdmx_legal_transitions));
}

static struct kunit_case rdmx_state_cases[] = {
	KUNIT_CASE(rdmx_state_matrix_test),
	KUNIT_CASE(rdmx_state_bounds_test),
	KUNIT_CASE(rdmx_conn_state_test),
	{}
};

static struct kunit_suite rdmx_state_suite = {
	.name = "rdmx_state",
	.test_cases = rdmx_state_cases,
};

kunit_test_suites(&rdmx_proto_suite, &rdmx_state_suite);
