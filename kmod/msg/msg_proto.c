// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx message service wire protocol: packing and checking of message
 * headers, channel payloads and tokens, sequence-number arithmetic and
 * credit accounting (kmod/core/proto.c has the connection private data).
 *
 * The parse functions are the only way received bytes become values the
 * service uses; each checks length, every field's bounds and the reserved
 * bytes, which must be zero (these formats carry no version), before it
 * returns anything. They are pure functions, called from any context, and
 * covered by the rdmx_proto KUnit suite.
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

#include "core/compat.h"
#include "core/rdmx.h"
#include "msg_proto.h"

static_assert(sizeof(struct rdmx_msg_hdr) == 24);
static_assert(sizeof(struct rdmx_chan_open) == 72);
static_assert(sizeof(struct rdmx_chan_open_rep) == 16);
static_assert(sizeof(struct rdmx_imm) == 4);
static_assert(sizeof(struct rdmx_token_hdr) == 48);

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
 * A retransmission is one of the last RDMX_PROTO_MAX_UNACKED before
 * @expected, since no sender keeps more unacknowledged; anything else that
 * is not @expected cannot have been sent in order, however far behind or
 * ahead it lies (2^31 away is both).
 *
 * Context: any context.
 * Return: RDMX_SEQ_IN_ORDER, RDMX_SEQ_DUPLICATE (a retransmission of what
 * was delivered) or RDMX_SEQ_GAP (what cannot have been sent in order).
 */
enum rdmx_seq_class rdmx_seq_classify(u32 seq, u32 expected)
{
	u32 behind = expected - seq;

	if (!behind)
		return RDMX_SEQ_IN_ORDER;
	return behind <= RDMX_PROTO_MAX_UNACKED ? RDMX_SEQ_DUPLICATE :
						   RDMX_SEQ_GAP;
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
