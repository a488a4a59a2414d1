// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx wire protocol: packing and checking of connection private data,
 * message headers and channel payloads, sequence-number arithmetic and
 * credit accounting.
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
 * Message headers and channel payloads carry no version: their reserved
 * bytes must be zero.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/build_bug.h>
#include <linux/crc32.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/overflow.h>
#include <linux/string.h>
#include <linux/rdmx.h>

#include "compat.h"
#include "rdmx.h"
#include "proto.h"

static_assert(sizeof(struct rdmx_conn_req) == 56);
static_assert(sizeof(struct rdmx_conn_rep) == 32);
static_assert(sizeof(struct rdmx_conn_rej) == 16);
static_assert(sizeof(struct rdmx_msg_hdr) == 24);
static_assert(sizeof(struct rdmx_chan_open) == 72);
static_assert(sizeof(struct rdmx_chan_open_rep) == 16);
static_assert(sizeof(struct rdmx_imm) == 4);
static_assert(sizeof(struct rdmx_token_hdr) == 48);

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
	return p->queue_depth > RDMX_CREDITS_RESERVED &&
	       p->queue_depth <= RDMX_PROTO_MAX_QUEUE_DEPTH &&
	       p->nr_qps >= 1 && p->nr_qps <= RDMX_PROTO_MAX_QPS &&
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
	req->qp_index = cpu_to_le16(p->qp_index);
	req->nr_qps = cpu_to_le16(p->nr_qps);
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
	p->qp_index = get_unaligned_le16(&req->qp_index);
	p->nr_qps = get_unaligned_le16(&req->nr_qps);
	uuid_copy(&p->sess_uuid, &req->sess_uuid);
	p->generation = get_unaligned_le64(&req->generation);

	if (!rdmx_params_ok(p) || p->qp_index >= p->nr_qps) {
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
	rep->nr_qps = cpu_to_le16(p->nr_qps);
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
	p->nr_qps = get_unaligned_le16(&rep->nr_qps);
	p->features = get_unaligned_le32(&rep->features);
	p->max_msg_size = get_unaligned_le32(&rep->max_msg_size);
	p->generation = get_unaligned_le64(&rep->generation);
	p->qp_index = req->qp_index;
	uuid_copy(&p->sess_uuid, &req->sess_uuid);

	if (!rdmx_params_ok(p) || p->nr_qps > req->nr_qps ||
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
 * Return: the peer's reason, or RDMX_REJ_UNKNOWN when the reject did not
 * come from an rdmx peer of our major version or names no reason we know.
 */
enum rdmx_rej_reason rdmx_conn_rej_parse(const void *pdata, size_t len)
{
	const struct rdmx_conn_rej *rej = pdata;
	enum rdmx_rej_reason reason;
	u16 r;

	if (!pdata || len < sizeof(*rej))
		return RDMX_REJ_UNKNOWN;
	if (rdmx_check_preamble(&rej->magic, rej->major, &reason))
		return RDMX_REJ_UNKNOWN;
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

/**
 * rdmx_msg_hdr_pack() - build a message header
 * @hdr: filled in
 * @m: the values
 *
 * Context: any context.
 */
void rdmx_msg_hdr_pack(struct rdmx_msg_hdr *hdr, const struct rdmx_msg *m)
{
	memset(hdr, 0, sizeof(*hdr));
	hdr->type = m->type;
	hdr->flags = m->flags;
	hdr->credits = cpu_to_le16(m->credits);
	hdr->seq = cpu_to_le32(m->seq);
	hdr->ack = cpu_to_le32(m->ack);
	hdr->len = cpu_to_le32(m->len);
	hdr->chan = cpu_to_le32(m->chan);
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_msg_hdr_pack);

/*
 * What a header of each type may carry, once the checks common to all types
 * have passed: a control message (one connection's business) carries no
 * sequence number, channel, payload or flag; a sequenced one may carry any
 * sequence number, and flags only on DATA.
 */
static int rdmx_msg_hdr_check_type(const struct rdmx_msg *m, u32 max_payload)
{
	if (m->flags & ~(m->type == RDMX_MSG_DATA ? RDMX_MSG_F_MORE : 0))
		return -EBADMSG;

	switch (m->type) {
	case RDMX_MSG_DATA:
		/* Only a message's last segment may be empty (an empty one). */
		if (!m->chan || (!m->len && (m->flags & RDMX_MSG_F_MORE)))
			return -EBADMSG;
		return m->len > max_payload ? -EMSGSIZE : 0;
	case RDMX_MSG_OPEN:
		/* The opener has no id of the receiver's yet. */
		if (m->chan || m->len != sizeof(struct rdmx_chan_open))
			return -EBADMSG;
		return 0;
	case RDMX_MSG_OPEN_REP:
		if (!m->chan || m->len != sizeof(struct rdmx_chan_open_rep))
			return -EBADMSG;
		return 0;
	case RDMX_MSG_SHUT:
		if (!m->chan || m->len)
			return -EBADMSG;
		return 0;
	case RDMX_MSG_IMMED:
		if (!m->chan || m->len != sizeof(struct rdmx_imm))
			return -EBADMSG;
		return 0;
	case RDMX_MSG_ACK:
	case RDMX_MSG_HEARTBEAT:
	case RDMX_MSG_HEARTBEAT_ACK:
	case RDMX_MSG_CLOSE:
		if (m->seq || m->chan || m->len)
			return -EBADMSG;
		return 0;
	default:
		return -EBADMSG;
	}
}

/**
 * rdmx_msg_hdr_parse() - check a received message header
 * @buf: start of the received SEND (the header may be unaligned)
 * @byte_len: bytes the completion says arrived
 * @max_payload: largest payload this side accepts in one SEND
 * @m: filled in on success; not to be used on failure
 *
 * The payload length must account for exactly the bytes that arrived.
 * Then, by type:
 *
 * - ACK, HEARTBEAT, HEARTBEAT_ACK, CLOSE (control): sequence number,
 *   channel, length and flags all 0.
 * - DATA: a channel; the only type that may carry a flag (RDMX_MSG_F_MORE),
 *   and then a payload: only a message's last segment may be empty.
 * - OPEN: no channel (the payload names a service), a payload of exactly
 *   struct rdmx_chan_open.
 * - OPEN_REP: a channel, a payload of exactly struct rdmx_chan_open_rep.
 * - SHUT: a channel, no payload.
 * - IMM: a channel, a payload of exactly struct rdmx_imm.
 *
 * Sequenced types may carry any sequence number, 0 included: the sequence
 * space wraps. The payloads of OPEN and OPEN_REP are checked by their own
 * parse functions.
 *
 * Context: any context.
 * Return: 0; -EBADMSG when truncated, of an unknown type, with unknown
 * flags or reserved bits set, when the length disagrees with what arrived,
 * or when a field breaks the rules of the type; -EMSGSIZE when a DATA
 * payload exceeds @max_payload.
 */
int rdmx_msg_hdr_parse(const void *buf, size_t byte_len, u32 max_payload,
		       struct rdmx_msg *m)
{
	const struct rdmx_msg_hdr *hdr = buf;

	if (!buf || byte_len < sizeof(*hdr))
		return -EBADMSG;

	m->type = hdr->type;
	m->flags = hdr->flags;
	m->credits = get_unaligned_le16(&hdr->credits);
	m->seq = get_unaligned_le32(&hdr->seq);
	m->ack = get_unaligned_le32(&hdr->ack);
	m->len = get_unaligned_le32(&hdr->len);
	m->chan = get_unaligned_le32(&hdr->chan);

	if (m->type < RDMX_MSG_DATA || m->type >= RDMX_MSG_NR_TYPES ||
	    (m->flags & ~RDMX_MSG_F_KNOWN) || get_unaligned_le32(&hdr->reserved))
		return -EBADMSG;
	if (m->len != byte_len - sizeof(*hdr))
		return -EBADMSG;
	return rdmx_msg_hdr_check_type(m, max_payload);
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_msg_hdr_parse);

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

/**
 * rdmx_chan_open_pack() - build the payload of an OPEN
 * @op: filled in
 * @chan: the sender's id for the new channel, not 0
 * @service: the service to open, already checked with
 *	rdmx_service_name_valid() (a longer one would be cut short)
 *
 * Context: any context.
 */
void rdmx_chan_open_pack(struct rdmx_chan_open *op, u32 chan,
			 const char *service)
{
	memset(op, 0, sizeof(*op));
	op->chan = cpu_to_le32(chan);
	strscpy(op->service, service, sizeof(op->service));
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_chan_open_pack);

/**
 * rdmx_chan_open_parse() - check the payload of a received OPEN
 * @buf: the payload, right after the header (may be unaligned)
 * @len: its length, from the checked header
 * @chan: on success, the opener's id for the channel (never 0)
 * @service: on success, the service name, NUL-padded
 *
 * Context: any context.
 * Return: 0 with @chan and @service filled in; -EBADMSG, leaving them
 * alone, when @len is not the payload's size, the channel is 0, reserved
 * bytes are set or the service name is not valid (see
 * rdmx_service_name_valid()).
 */
int rdmx_chan_open_parse(const void *buf, size_t len, u32 *chan,
			 char service[RDMX_PROTO_SERVICE_LEN])
{
	const struct rdmx_chan_open *op = buf;
	u32 id;

	if (!buf || len != sizeof(*op))
		return -EBADMSG;
	id = get_unaligned_le32(&op->chan);
	if (!id || get_unaligned_le32(&op->reserved))
		return -EBADMSG;
	if (!rdmx_service_name_valid((const char *)op->service,
				     sizeof(op->service)))
		return -EBADMSG;

	*chan = id;
	memcpy(service, op->service, sizeof(op->service));
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_chan_open_parse);

/**
 * rdmx_chan_open_rep_pack() - build the payload of an OPEN_REP
 * @rep: filled in
 * @chan: the sender's id for the channel when @status is RDMX_OPEN_OK,
 *	else 0
 * @status: the answer
 *
 * Context: any context.
 */
void rdmx_chan_open_rep_pack(struct rdmx_chan_open_rep *rep, u32 chan,
			     enum rdmx_open_status status)
{
	memset(rep, 0, sizeof(*rep));
	rep->chan = cpu_to_le32(chan);
	rep->status = cpu_to_le32(status);
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_chan_open_rep_pack);

/**
 * rdmx_chan_open_rep_parse() - check the payload of a received OPEN_REP
 * @buf: the payload, right after the header (may be unaligned)
 * @len: its length, from the checked header
 * @chan: on success, the acceptor's id for the channel; 0 when refused
 * @status: on success, the answer
 *
 * An acceptance names the acceptor's channel; a refusal names none.
 *
 * Context: any context.
 * Return: 0 with @chan and @status filled in; -EBADMSG, leaving them
 * alone, when @len is not the payload's size, the status is unknown, the
 * channel disagrees with the status or reserved bytes are set.
 */
int rdmx_chan_open_rep_parse(const void *buf, size_t len, u32 *chan,
			     enum rdmx_open_status *status)
{
	const struct rdmx_chan_open_rep *rep = buf;
	u32 id, st;

	if (!buf || len != sizeof(*rep))
		return -EBADMSG;
	id = get_unaligned_le32(&rep->chan);
	st = get_unaligned_le32(&rep->status);
	if (st >= RDMX_OPEN_NR_STATUS)
		return -EBADMSG;
	if (st == RDMX_OPEN_OK ? !id : id)
		return -EBADMSG;
	if (memchr_inv(rep->reserved, 0, sizeof(rep->reserved)))
		return -EBADMSG;

	*chan = id;
	*status = st;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_chan_open_rep_parse);

/**
 * rdmx_token_size() - bytes of a token with @nr_keys keys
 * @nr_keys: keys
 *
 * Context: any context.
 * Return: the size.
 */
size_t rdmx_token_size(u32 nr_keys)
{
	return struct_size_t(struct rdmx_token_hdr, keys, nr_keys);
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_token_size);

/**
 * rdmx_token_nr_keys() - chunks a region spans
 * @length: region bytes, not 0
 * @first_off: where it starts in its first chunk, below @chunk
 * @chunk: bytes per chunk, not 0
 *
 * Context: any context.
 * Return: the number of chunks, or 0 when it does not fit a token.
 */
u32 rdmx_token_nr_keys(u64 length, u32 first_off, u64 chunk)
{
	u64 end, n, rem;

	if (!length || !chunk || first_off >= chunk ||
	    check_add_overflow(length, (u64)first_off, &end))
		return 0;
	n = div64_u64_rem(end, chunk, &rem) + !!rem;
	return n > RDMX_TOKEN_KEYS_MAX ? 0 : n;
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_token_nr_keys);

/**
 * rdmx_token_pack() - write a token
 * @buf: room for rdmx_token_size(@t->nr_keys) bytes
 * @t: the values (@t->keys is ignored)
 * @keys: @t->nr_keys rkeys, in chunk order
 *
 * Context: any context.
 */
void rdmx_token_pack(void *buf, const struct rdmx_token *t, const u32 *keys)
{
	struct rdmx_token_hdr *h = buf;
	u32 i;

	memset(h, 0, sizeof(*h));
	h->magic = cpu_to_le32(RDMX_TOKEN_MAGIC);
	h->version = RDMX_TOKEN_VERSION;
	h->access = t->access;
	h->nr_keys = cpu_to_le16(t->nr_keys);
	h->region = cpu_to_le32(t->region);
	h->first_off = cpu_to_le32(t->first_off);
	h->iova = cpu_to_le64(t->iova);
	h->length = cpu_to_le64(t->length);
	h->chunk = cpu_to_le64(t->chunk);
	for (i = 0; i < t->nr_keys; i++)
		h->keys[i] = cpu_to_le32(keys[i]);
	rdmx_token_seal(buf, rdmx_token_size(t->nr_keys));
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_token_pack);

static u32 rdmx_token_crc(const void *buf, size_t len)
{
	static const __le32 zero;
	size_t at = offsetof(struct rdmx_token_hdr, crc);
	u32 crc;

	crc = crc32_le(~0, buf, at);
	crc = crc32_le(crc, (const u8 *)&zero, sizeof(zero));
	return crc32_le(crc, buf + at + sizeof(zero), len - at - sizeof(zero));
}

/**
 * rdmx_token_seal() - (re)compute a token's CRC
 * @buf: the token
 * @len: its size, at least sizeof(struct rdmx_token_hdr)
 *
 * Context: any context.
 */
void rdmx_token_seal(void *buf, size_t len)
{
	struct rdmx_token_hdr *h = buf;

	put_unaligned_le32(rdmx_token_crc(buf, len), &h->crc);
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_token_seal);

/**
 * rdmx_token_parse() - check a token a peer handed out
 * @buf: its bytes, from userspace or a kernel user (any alignment)
 * @len: their number: exactly the token's size
 * @t: filled in on success; @t->keys points into @buf
 *
 * Nothing in a token is trusted: every field is checked against the others
 * so that the arithmetic of rdmx_token_check() and rdmx_token_piece() can
 * neither overflow nor index past the keys.
 *
 * Context: any context.
 * Return: 0, or -EINVAL for anything malformed.
 */
int rdmx_token_parse(const void *buf, size_t len, struct rdmx_token *t)
{
	const struct rdmx_token_hdr *h = buf;
	u64 last;

	if (!buf || len < sizeof(*h) || len > RDMX_TOKEN_MAX ||
	    get_unaligned_le32(&h->magic) != RDMX_TOKEN_MAGIC ||
	    h->version != RDMX_TOKEN_VERSION ||
	    get_unaligned_le32(&h->crc) != rdmx_token_crc(buf, len) ||
	    get_unaligned_le32(&h->reserved))
		return -EINVAL;
	t->access = h->access;
	t->nr_keys = get_unaligned_le16(&h->nr_keys);
	t->region = get_unaligned_le32(&h->region);
	t->first_off = get_unaligned_le32(&h->first_off);
	t->iova = get_unaligned_le64(&h->iova);
	t->length = get_unaligned_le64(&h->length);
	t->chunk = get_unaligned_le64(&h->chunk);
	t->keys = h->keys;

	if (!t->access || (t->access & ~RDMX_TOKEN_ACCESS_ALL) ||
	    len != rdmx_token_size(t->nr_keys) ||
	    !t->length || t->length > RDMX_MR_MAX ||
	    check_add_overflow(t->iova, t->length - 1, &last) ||
	    rdmx_token_nr_keys(t->length, t->first_off, t->chunk) !=
	    t->nr_keys || !t->nr_keys)
		return -EINVAL;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_token_parse);

/**
 * rdmx_token_check() - whether an operation stays inside a token's region
 * @t: a parsed token
 * @off: region offset of the first byte
 * @len: bytes; 0 is inside when @off is at most the length
 * @need: RDMX_TOKEN_* rights the operation needs
 *
 * Context: any context.
 * Return: 0; -EACCES without the rights; -ERANGE outside the region
 * (wrap-around included).
 */
int rdmx_token_check(const struct rdmx_token *t, u64 off, u64 len, u8 need)
{
	u64 end;

	if ((t->access & need) != need)
		return -EACCES;
	if (check_add_overflow(off, len, &end) || end > t->length)
		return -ERANGE;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_token_check);

/**
 * rdmx_token_piece() - the part of an operation one key covers
 * @t: a parsed token
 * @off: region offset, with @off + @len inside (rdmx_token_check())
 * @len: bytes left, not 0
 * @rkey: the key of the chunk @off falls in
 * @raddr: the remote address of @off
 *
 * Context: any context.
 * Return: bytes from @off up to the end of its chunk, at most @len.
 */
u64 rdmx_token_piece(const struct rdmx_token *t, u64 off, u64 len,
		     u32 *rkey, u64 *raddr)
{
	u64 pos = off + t->first_off;
	u64 rem;
	u64 idx = div64_u64_rem(pos, t->chunk, &rem);

	*rkey = get_unaligned_le32(&t->keys[idx]);
	*raddr = t->iova + off;
	return min(len, t->chunk - rem);
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_token_piece);

/**
 * rdmx_seq_ack_valid() - whether an acknowledgment is believable
 * @una: oldest sequence number sent and not yet acknowledged
 * @nxt: next sequence number to be sent
 * @ack: the peer's cumulative acknowledgment
 *
 * A peer can acknowledge only what was sent: una <= ack <= nxt, modulo
 * 2^32.
 *
 * Context: any context.
 * Return: true when @ack lies in that window.
 */
bool rdmx_seq_ack_valid(u32 una, u32 nxt, u32 ack)
{
	return !rdmx_seq_before(ack, una) && !rdmx_seq_after(ack, nxt);
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_seq_ack_valid);

/**
 * rdmx_seq_classify() - place a received sequence number
 * @seq: the data message's sequence number
 * @expected: the next sequence number the receiver expects
 *
 * Context: any context.
 * Return: RDMX_SEQ_IN_ORDER, RDMX_SEQ_DUPLICATE (a retransmission of what
 * was delivered) or RDMX_SEQ_GAP (beyond what can have been sent in order).
 */
enum rdmx_seq_class rdmx_seq_classify(u32 seq, u32 expected)
{
	if (seq == expected)
		return RDMX_SEQ_IN_ORDER;
	return rdmx_seq_before(seq, expected) ? RDMX_SEQ_DUPLICATE : RDMX_SEQ_GAP;
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_seq_classify);

/**
 * rdmx_credits_init() - start with the peer's whole queue
 * @c: credits
 * @limit: the peer's queue depth, as its connection data gave it
 *
 * Context: any context.
 * Return: 0, or -EINVAL when @limit leaves nothing beyond the reserve.
 */
int rdmx_credits_init(struct rdmx_credits *c, u32 limit)
{
	if (limit <= RDMX_CREDITS_RESERVED || limit > RDMX_PROTO_MAX_QUEUE_DEPTH)
		return -EINVAL;
	c->avail = limit;
	c->limit = limit;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_credits_init);

/**
 * rdmx_credits_take() - consume a credit for one SEND
 * @c: credits
 * @control: a control message, which may use the reserved credit
 *
 * Context: any context; the caller serialises access to @c.
 * Return: true when a credit was taken; false when the send must wait.
 */
bool rdmx_credits_take(struct rdmx_credits *c, bool control)
{
	u32 floor = control ? 0 : RDMX_CREDITS_RESERVED;

	if (c->avail <= floor)
		return false;
	c->avail--;
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_credits_take);

/**
 * rdmx_credits_grant() - add the credits a peer's message granted
 * @c: credits
 * @n: credits granted
 *
 * A peer can grant back only what was consumed: more would mean it claims
 * receive buffers it never advertised.
 *
 * Context: any context; the caller serialises access to @c.
 * Return: 0, or -EPROTO when the grant would exceed the peer's queue.
 */
int rdmx_credits_grant(struct rdmx_credits *c, u32 n)
{
	if (n > c->limit - c->avail)
		return -EPROTO;
	c->avail += n;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_credits_grant);
