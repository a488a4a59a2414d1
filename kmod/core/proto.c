// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx wire protocol, core: packing and checking of the connection private
 * data every service's connections carry (kmod/msg/msg_proto.c has the
 * message service's own formats).
 *
 * The parse functions are the only way received bytes become values the
 * rest of rdmx uses; each checks length, magic, version, every parameter's
 * bounds and the reserved bytes before it returns anything. They are pure
 * functions, called from any context, and covered by the rdmx_proto KUnit
 * suite.
 *
 * Received data carries no alignment promise (CM private data sits at an
 * offset inside a MAD), so multi-byte fields are read with
 * get_unaligned_le*().
 *
 * Reserved bytes of connection data: a peer of the same minor version that
 * sets them is broken, and is refused; a peer of a newer minor version may
 * use them for what this version does not know, and they are ignored.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/build_bug.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/rdmx.h>

#include "compat.h"
#include "rdmx.h"
#include "proto.h"

static_assert(sizeof(struct rdmx_conn_req) == 56);
static_assert(sizeof(struct rdmx_conn_rep) == 32);
static_assert(sizeof(struct rdmx_conn_rej) == 16);

/*
 * Common to request, reply and reject: magic and major version. Sets
 * *reason and returns -EPROTO when they do not match ours.
 */
static int rdmx_check_preamble(const __le16 *magic, u8 major,
			       enum rdmx_rej_reason *reason)
{
	if (get_unaligned_le16(magic) != RDMX_PROTO_MAGIC) {
		*reason = RDMX_REJ_BAD_MAGIC;
		return -EPROTO;
	}
	if (major != RDMX_PROTO_MAJOR) {
		*reason = RDMX_REJ_VERSION;
		return -EPROTO;
	}
	return 0;
}

/* Reserved bytes must be zero when the peer speaks our minor version. */
static bool rdmx_reserved_ok(u8 minor, const void *p, size_t len)
{
	return minor > RDMX_PROTO_MINOR || !memchr_inv(p, 0, len);
}

static bool rdmx_params_ok(const struct rdmx_conn_params *p)
{
	return p->queue_depth >= RDMX_PROTO_MIN_QUEUE_DEPTH &&
	       p->queue_depth <= RDMX_PROTO_MAX_QUEUE_DEPTH &&
	       p->nr_lanes >= 1 && p->nr_lanes <= RDMX_PROTO_MAX_LANES &&
	       p->max_msg_size >= RDMX_PROTO_MIN_MSG_SIZE;
}

/**
 * rdmx_conn_req_pack() - build a connect request's private data
 * @req: filled in
 * @p: parameters to send
 *
 * Context: any context.
 */
void rdmx_conn_req_pack(struct rdmx_conn_req *req,
			const struct rdmx_conn_params *p)
{
	memset(req, 0, sizeof(*req));
	req->magic = cpu_to_le16(RDMX_PROTO_MAGIC);
	req->major = RDMX_PROTO_MAJOR;
	req->minor = RDMX_PROTO_MINOR;
	req->queue_depth = cpu_to_le16(p->queue_depth);
	req->features = cpu_to_le32(p->features);
	req->max_msg_size = cpu_to_le32(p->max_msg_size);
	req->lane = cpu_to_le16(p->lane);
	req->nr_lanes = cpu_to_le16(p->nr_lanes);
	uuid_copy(&req->sess_uuid, &p->sess_uuid);
	req->generation = cpu_to_le64(p->generation);
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_conn_req_pack);

/**
 * rdmx_conn_req_parse() - check a received connect request
 * @pdata: the request's private data
 * @len: its length as the CM reported it
 * @p: filled in on success; unknown feature bits are dropped
 * @reason: on failure, why (to send back in the reject)
 *
 * Context: any context.
 * Return: 0, or -EPROTO with @reason set.
 */
int rdmx_conn_req_parse(const void *pdata, size_t len,
			struct rdmx_conn_params *p, enum rdmx_rej_reason *reason)
{
	const struct rdmx_conn_req *req = pdata;
	int ret;

	if (!pdata || len < sizeof(*req)) {
		*reason = RDMX_REJ_MALFORMED;
		return -EPROTO;
	}
	ret = rdmx_check_preamble(&req->magic, req->major, reason);
	if (ret)
		return ret;
	if (!rdmx_reserved_ok(req->minor, &req->reserved0, sizeof(req->reserved0)) ||
	    !rdmx_reserved_ok(req->minor, req->reserved, sizeof(req->reserved))) {
		*reason = RDMX_REJ_MALFORMED;
		return -EPROTO;
	}

	memset(p, 0, sizeof(*p));
	p->minor = req->minor;
	p->queue_depth = get_unaligned_le16(&req->queue_depth);
	p->features = get_unaligned_le32(&req->features) & RDMX_PROTO_F_KNOWN;
	p->max_msg_size = get_unaligned_le32(&req->max_msg_size);
	p->lane = get_unaligned_le16(&req->lane);
	p->nr_lanes = get_unaligned_le16(&req->nr_lanes);
	uuid_copy(&p->sess_uuid, &req->sess_uuid);
	p->generation = get_unaligned_le64(&req->generation);

	if (!rdmx_params_ok(p) || p->lane >= p->nr_lanes) {
		*reason = RDMX_REJ_PARAMS;
		return -EPROTO;
	}
	if (!p->features) {
		*reason = RDMX_REJ_FEATURES;
		return -EPROTO;
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_conn_req_parse);

/**
 * rdmx_conn_rep_pack() - build an accept's private data
 * @rep: filled in
 * @p: parameters granted
 *
 * Context: any context.
 */
void rdmx_conn_rep_pack(struct rdmx_conn_rep *rep,
			const struct rdmx_conn_params *p)
{
	memset(rep, 0, sizeof(*rep));
	rep->magic = cpu_to_le16(RDMX_PROTO_MAGIC);
	rep->major = RDMX_PROTO_MAJOR;
	rep->minor = RDMX_PROTO_MINOR;
	rep->queue_depth = cpu_to_le16(p->queue_depth);
	rep->nr_lanes = cpu_to_le16(p->nr_lanes);
	rep->features = cpu_to_le32(p->features);
	rep->max_msg_size = cpu_to_le32(p->max_msg_size);
	rep->generation = cpu_to_le64(p->generation);
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_conn_rep_pack);

/**
 * rdmx_conn_rep_parse() - check a received accept against our request
 * @pdata: the accept's private data
 * @len: its length as the CM reported it
 * @req: what we asked for
 * @p: filled in on success
 *
 * An acceptor may grant less than asked (fewer QPs, a shallower queue,
 * fewer features), never more, and must answer for the generation we
 * asked for.
 *
 * Context: any context.
 * Return: 0, or -EPROTO when the reply is malformed, from another protocol
 * or version, or grants what was not asked.
 */
int rdmx_conn_rep_parse(const void *pdata, size_t len,
			const struct rdmx_conn_params *req,
			struct rdmx_conn_params *p)
{
	const struct rdmx_conn_rep *rep = pdata;
	enum rdmx_rej_reason reason;

	if (!pdata || len < sizeof(*rep))
		return -EPROTO;
	if (rdmx_check_preamble(&rep->magic, rep->major, &reason))
		return -EPROTO;
	if (!rdmx_reserved_ok(rep->minor, rep->reserved, sizeof(rep->reserved)))
		return -EPROTO;

	memset(p, 0, sizeof(*p));
	p->minor = rep->minor;
	p->queue_depth = get_unaligned_le16(&rep->queue_depth);
	p->nr_lanes = get_unaligned_le16(&rep->nr_lanes);
	p->features = get_unaligned_le32(&rep->features);
	p->max_msg_size = get_unaligned_le32(&rep->max_msg_size);
	p->generation = get_unaligned_le64(&rep->generation);
	p->lane = req->lane;
	uuid_copy(&p->sess_uuid, &req->sess_uuid);

	if (!rdmx_params_ok(p) || p->nr_lanes > req->nr_lanes ||
	    p->queue_depth > req->queue_depth ||
	    !p->features || (p->features & ~req->features) ||
	    p->generation != req->generation)
		return -EPROTO;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_conn_rep_parse);

/**
 * rdmx_conn_rej_pack() - build a reject's private data
 * @rej: filled in
 * @reason: why
 *
 * Context: any context.
 */
void rdmx_conn_rej_pack(struct rdmx_conn_rej *rej, enum rdmx_rej_reason reason)
{
	memset(rej, 0, sizeof(*rej));
	rej->magic = cpu_to_le16(RDMX_PROTO_MAGIC);
	rej->major = RDMX_PROTO_MAJOR;
	rej->minor = RDMX_PROTO_MINOR;
	rej->reason = cpu_to_le16(reason);
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_conn_rej_pack);

/**
 * rdmx_conn_rej_parse() - the reason in a received reject
 * @pdata: the reject's private data (may be NULL: the CM itself rejected)
 * @len: its length
 *
 * Context: any context.
 * Return: the peer's reason; RDMX_REJ_BAD_MAGIC when the data is not an
 * rdmx reject, RDMX_REJ_VERSION when it is one of another major version
 * (whose reason cannot be read), RDMX_REJ_UNKNOWN when there is too little
 * data or it names no reason we know.
 */
enum rdmx_rej_reason rdmx_conn_rej_parse(const void *pdata, size_t len)
{
	const struct rdmx_conn_rej *rej = pdata;
	enum rdmx_rej_reason reason;
	u16 r;

	if (!pdata || len < sizeof(*rej))
		return RDMX_REJ_UNKNOWN;
	if (rdmx_check_preamble(&rej->magic, rej->major, &reason))
		return reason;
	r = get_unaligned_le16(&rej->reason);
	return r < RDMX_REJ_NR_REASONS ? r : RDMX_REJ_UNKNOWN;
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_conn_rej_parse);

static const char *const rdmx_rej_reasons[RDMX_REJ_NR_REASONS] = {
	[RDMX_REJ_UNKNOWN] = "unknown reason",
	[RDMX_REJ_BAD_MAGIC] = "not an rdmx peer",
	[RDMX_REJ_VERSION] = "incompatible protocol version",
	[RDMX_REJ_MALFORMED] = "malformed connection data",
	[RDMX_REJ_PARAMS] = "connection parameters out of bounds",
	[RDMX_REJ_FEATURES] = "no feature in common",
	[RDMX_REJ_NOT_ALLOWED] = "peer not allowed",
	[RDMX_REJ_BUSY] = "peer busy",
	[RDMX_REJ_STALE] = "unknown or stale session",
};

/**
 * rdmx_rej_reason_str() - a reject reason for humans (dmesg, rdmxctl)
 * @reason: the reason
 *
 * Context: any context.
 * Return: a static string; never NULL.
 */
const char *rdmx_rej_reason_str(enum rdmx_rej_reason reason)
{
	if ((unsigned int)reason >= RDMX_REJ_NR_REASONS)
		reason = RDMX_REJ_UNKNOWN;
	return rdmx_rej_reasons[reason];
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_rej_reason_str);

static bool rdmx_service_char_ok(char c)
{
	/* Not isalnum(): the kernel's ctype counts Latin-1 letters too. */
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

/**
 * rdmx_service_name_valid() - check a NUL-padded service name
 * @name: the name's bytes, from the network or from userspace (copied in)
 * @size: bytes at @name that belong to it, all of which are read
 *
 * A valid name is 1 to RDMX_PROTO_SERVICE_LEN - 1 bytes of [A-Za-z0-9._-],
 * followed by a NUL within @size, and every byte after that NUL up to
 * @size is 0: one name has one encoding, so names compare with memcmp()
 * and nothing hides behind the NUL.
 *
 * Context: any context.
 * Return: true when @name is valid.
 */
bool rdmx_service_name_valid(const char *name, size_t size)
{
	size_t i, n;

	if (!name)
		return false;
	n = strnlen(name, size);
	if (n == size || !n || n >= RDMX_PROTO_SERVICE_LEN)
		return false;
	for (i = 0; i < n; i++)
		if (!rdmx_service_char_ok(name[i]))
			return false;
	return !memchr_inv(name + n, 0, size - n);
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_service_name_valid);
