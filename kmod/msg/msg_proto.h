/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmx message service wire protocol: message headers, channel payloads,
 * tokens, sequence numbers and credits.
 *
 * Everything here crosses the network: fields are little-endian with
 * explicit reserved bytes, sizes are pinned by static_assert in
 * msg_proto.c, and nothing received is used before its parse function has
 * checked it. See Documentation/protocol.rst.
 */
#ifndef _RDMX_MSG_PROTO_H
#define _RDMX_MSG_PROTO_H

#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/types.h>

#include "core/proto.h"

/*
 * Message types (rdmx_msg_hdr.type). DATA, OPEN, OPEN_REP and SHUT are
 * sequenced: they carry a sequence number, are acknowledged, and are
 * retransmitted after a reconnect until acknowledged. The others are
 * control messages of one connection and never retransmitted.
 */
enum rdmx_msg_type {
	RDMX_MSG_DATA = 1,		/* application payload, sequenced */
	RDMX_MSG_ACK = 2,		/* acknowledgment and credits only */
	RDMX_MSG_HEARTBEAT = 3,		/* liveness probe */
	RDMX_MSG_HEARTBEAT_ACK = 4,	/* answer to a probe */
	RDMX_MSG_CLOSE = 5,		/* orderly session close */
	RDMX_MSG_OPEN = 6,		/* open a channel to a service */
	RDMX_MSG_OPEN_REP = 7,		/* answer to OPEN */
	RDMX_MSG_SHUT = 8,		/* the sender closed its end of a channel */
	RDMX_MSG_IMMED = 9,		/* a WRITE_IMM's immediate, sequenced */
	RDMX_MSG_NR_TYPES,
};

/* Whether a message type is sequenced (see enum rdmx_msg_type). */
static inline bool rdmx_msg_type_sequenced(u8 type)
{
	return type == RDMX_MSG_DATA || type == RDMX_MSG_OPEN ||
	       type == RDMX_MSG_OPEN_REP || type == RDMX_MSG_SHUT ||
	       type == RDMX_MSG_IMMED;
}

#define RDMX_MSG_F_MORE		BIT(0)	/* more segments of this message follow */
#define RDMX_MSG_F_KNOWN	RDMX_MSG_F_MORE

/**
 * struct rdmx_msg_hdr - header at the start of every SEND
 * @type: enum rdmx_msg_type
 * @flags: RDMX_MSG_F_*; data messages only
 * @credits: receive buffers the sender has reposted since its last
 *	message, granted to the receiver
 * @seq: sequence number of a data message; 0 for the others
 * @ack: cumulative acknowledgment: the next sequence number the sender
 *	expects, so every earlier one has been received
 * @len: payload bytes following the header in this SEND
 * @chan: the receiver's channel id; DATA, OPEN_REP and SHUT only (OPEN
 *	names a service instead, in its payload)
 * @reserved: zero
 */
struct rdmx_msg_hdr {
	u8 type;
	u8 flags;
	__le16 credits;
	__le32 seq;
	__le32 ack;
	__le32 len;
	__le32 chan;
	__le32 reserved;
};

/**
 * struct rdmx_msg - a message header, unpacked and checked
 * @type: enum rdmx_msg_type
 * @flags: RDMX_MSG_F_*
 * @credits: credits granted
 * @seq: sequence number (data)
 * @ack: cumulative acknowledgment
 * @len: payload bytes
 * @chan: receiver's channel id
 */
struct rdmx_msg {
	u8 type;
	u8 flags;
	u16 credits;
	u32 seq;
	u32 ack;
	u32 len;
	u32 chan;
};

/**
 * struct rdmx_chan_open - payload of RDMX_MSG_OPEN
 * @chan: the sender's id for the new channel, not 0
 * @reserved: zero
 * @service: service name: 1 to 63 bytes of [A-Za-z0-9._-], then NUL to
 *	the end
 */
struct rdmx_chan_open {
	__le32 chan;
	__le32 reserved;
	u8 service[RDMX_PROTO_SERVICE_LEN];
};

/* rdmx_chan_open_rep.status */
enum rdmx_open_status {
	RDMX_OPEN_OK = 0,
	RDMX_OPEN_NO_SERVICE = 1,	/* nobody listens on that service */
	RDMX_OPEN_BUSY = 2,		/* backlog full or out of memory */
	RDMX_OPEN_NR_STATUS,
};

/**
 * struct rdmx_chan_open_rep - payload of RDMX_MSG_OPEN_REP
 * @chan: the sender's id for the channel; 0 when refused
 * @status: enum rdmx_open_status
 * @reserved: zero
 *
 * The header's @chan is the opener's id, from its OPEN.
 */
struct rdmx_chan_open_rep {
	__le32 chan;
	__le32 status;
	u8 reserved[8];
};

/**
 * struct rdmx_imm - payload of RDMX_MSG_IMMED
 * @imm: the immediate the writer gave
 *
 * Sent once the RDMA WRITE it belongs to completed at the writer, so every
 * byte of that write (and of the writes before it) is in place when the
 * receiver sees it.
 */
struct rdmx_imm {
	__le32 imm;
};

/*
 * A token names a registered region (see Documentation/one-sided.rst). It
 * travels between hosts as opaque bytes: a header, then one rkey for each
 * chunk of the region (a chunk is what one FRWR registration maps). Region
 * byte @off sits at remote address @iova + @off, under the key of chunk
 * (@first_off + @off) / @chunk.
 */
#define RDMX_TOKEN_MAGIC	0x54584452	/* "RDXT" */
#define RDMX_TOKEN_VERSION	1

/* rdmx_token.access: the rights of the region (as RDMX_ACCESS_*). */
#define RDMX_TOKEN_READ		BIT(0)
#define RDMX_TOKEN_WRITE	BIT(1)
#define RDMX_TOKEN_ATOMIC	BIT(2)
#define RDMX_TOKEN_ACCESS_ALL	(RDMX_TOKEN_READ | RDMX_TOKEN_WRITE | \
				 RDMX_TOKEN_ATOMIC)

/**
 * struct rdmx_token_hdr - a token on the wire
 * @magic: RDMX_TOKEN_MAGIC
 * @version: RDMX_TOKEN_VERSION
 * @access: RDMX_TOKEN_* rights
 * @nr_keys: keys following the header: one per chunk
 * @region: the owner's region id (for its logs)
 * @first_off: where the region starts in its first chunk
 * @iova: remote address of the region's first byte
 * @length: region bytes
 * @chunk: bytes each key covers (the first covers @chunk - @first_off)
 * @crc: CRC-32 (crc32_le, seed ~0) of the whole token with this field 0:
 *	a token damaged on its way is refused rather than used. It is no
 *	seal: the peer's device enforces what a key may reach
 * @reserved: zero
 * @keys: the rkeys, __le32 each
 */
struct rdmx_token_hdr {
	__le32 magic;
	u8 version;
	u8 access;
	__le16 nr_keys;
	__le32 region;
	__le32 first_off;
	__le64 iova;
	__le64 length;
	__le64 chunk;
	__le32 crc;
	__le32 reserved;
	__le32 keys[];
};

/**
 * struct rdmx_token - a token, checked and unpacked (the keys stay packed)
 * @access: RDMX_TOKEN_* rights
 * @nr_keys: number of keys
 * @region: the owner's region id
 * @first_off: offset of the region in its first chunk
 * @iova: remote address of the region's first byte
 * @length: region bytes
 * @chunk: bytes per chunk
 * @keys: the packed keys, in the caller's buffer
 */
struct rdmx_token {
	u8 access;
	u32 nr_keys;
	u32 region;
	u32 first_off;
	u64 iova;
	u64 length;
	u64 chunk;
	const __le32 *keys;
};

#define RDMX_TOKEN_KEYS_MAX	((4096 - sizeof(struct rdmx_token_hdr)) / 4)

/* Sequence numbers wrap: compare them as TCP does (RFC 1982 arithmetic). */
static inline bool rdmx_seq_before(u32 a, u32 b)
{
	return (s32)(a - b) < 0;
}

static inline bool rdmx_seq_after(u32 a, u32 b)
{
	return rdmx_seq_before(b, a);
}

/*
 * The most sequenced messages a sender keeps unacknowledged per lane: a
 * retransmission can be at most this far behind what its receiver expects.
 */
#define RDMX_PROTO_MAX_UNACKED	4096

/* Where a received sequence number falls against the next one expected. */
enum rdmx_seq_class {
	RDMX_SEQ_IN_ORDER,	/* the next one: deliver */
	RDMX_SEQ_DUPLICATE,	/* already delivered (a retransmission): drop */
	RDMX_SEQ_GAP,		/* never sent in order: a protocol error on RC */
};

/**
 * struct rdmx_credits - the peer's receive buffers this side may consume
 * @avail: credits left
 * @limit: the peer's queue depth: more can never be outstanding
 *
 * One credit is held back for control messages (acknowledgments,
 * heartbeats), so credit updates can always flow and the two sides never
 * wait on each other with no way to say so.
 */
struct rdmx_credits {
	u32 avail;
	u32 limit;
};

#define RDMX_CREDITS_RESERVED	1
static_assert(RDMX_CREDITS_RESERVED < RDMX_PROTO_MIN_QUEUE_DEPTH);

void rdmx_msg_hdr_pack(struct rdmx_msg_hdr *hdr, const struct rdmx_msg *m);
int rdmx_msg_hdr_parse(const void *buf, size_t byte_len, u32 max_payload,
		       struct rdmx_msg *m);

void rdmx_chan_open_pack(struct rdmx_chan_open *op, u32 chan,
			 const char *service);
int rdmx_chan_open_parse(const void *buf, size_t len, u32 *chan,
			 char service[RDMX_PROTO_SERVICE_LEN]);
void rdmx_chan_open_rep_pack(struct rdmx_chan_open_rep *rep, u32 chan,
			     enum rdmx_open_status status);
int rdmx_chan_open_rep_parse(const void *buf, size_t len, u32 *chan,
			     enum rdmx_open_status *status);

size_t rdmx_token_size(u32 nr_keys);
u32 rdmx_token_nr_keys(u64 length, u32 first_off, u64 chunk);
void rdmx_token_pack(void *buf, const struct rdmx_token *t, const u32 *keys);
void rdmx_token_seal(void *buf, size_t len);
int rdmx_token_parse(const void *buf, size_t len, struct rdmx_token *t);
int rdmx_token_check(const struct rdmx_token *t, u64 off, u64 len,
		     u8 need);
u64 rdmx_token_piece(const struct rdmx_token *t, u64 off, u64 len,
		     u32 *rkey, u64 *raddr);

bool rdmx_seq_ack_valid(u32 una, u32 nxt, u32 ack);
enum rdmx_seq_class rdmx_seq_classify(u32 seq, u32 expected);

int rdmx_credits_init(struct rdmx_credits *c, u32 limit);
bool rdmx_credits_take(struct rdmx_credits *c, bool control);
int rdmx_credits_grant(struct rdmx_credits *c, u32 n);

#endif /* _RDMX_MSG_PROTO_H */
