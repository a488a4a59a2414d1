/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmx block service: wire format.
 *
 * Each hardware queue of a mapped disk is one rdma_cm RC connection. Its
 * connect request is rdmx's struct rdmx_conn_req offering only
 * RDMX_PROTO_F_BLOCK, with the map's uuid as the session uuid, the queue's
 * index and the number of queues, the queue depth and the largest I/O the
 * client sends (max_msg_size). The first command on each queue is OPEN,
 * naming the export; the answer describes it. Then every I/O is one command
 * SEND from the client and one response SEND from the server. A client that
 * sets RDMX_BLK_OPEN_EVENTS also takes events: responses with the tag
 * RDMX_BLK_TAG_EVENT that answer no command (the export grew), for which it
 * keeps a receive beyond its queue depth.
 *
 * The client registers a request's pages with FRWR for that request only and
 * names them in the command (rkey, address); the server moves the data with
 * RDMA READ (writes) or RDMA WRITE (reads) and answers with a SEND with
 * invalidate of that rkey, so the key is dead before the client completes
 * the request. Writes of up to RDMX_BLK_INLINE_MAX bytes travel in the
 * command SEND after the header instead; so do reads of up to that size in
 * the response SEND, on a queue opened with RDMX_BLK_OPEN_INLINE_READ that
 * the server granted: then neither side exposes any memory for them; with
 * RDMX_BLK_OPEN_IMM_READ granted too, the data comes alone, with the tag
 * as immediate data. See Documentation/block.rst.
 *
 * Between a client and a server both of RDMX_PROTO_MINOR 3 or later, the
 * server's receives take the data first: a SEND's first bytes land at the
 * start of a page. Its commands (one, or a batch) start there; an inline
 * WRITE puts its data first and its command last, so the data lands
 * page-aligned: a SEND whose last 96 bytes are an inline WRITE of the
 * SEND's other bytes is one (RDMX_BLK_MINOR_DATA_FIRST).
 *
 * Fields are little-endian, reserved bytes are zero (checked), and sizes
 * are pinned by static_assert in blk_srv.c.
 */
#ifndef _RDMX_BLK_PROTO_H
#define _RDMX_BLK_PROTO_H

#include <linux/sizes.h>
#include <linux/types.h>
#include <linux/uuid.h>

/* Command opcodes (rdmx_blk_cmd.opcode). */
enum rdmx_blk_op {
	RDMX_BLK_OP_OPEN = 1,		/* bind the queue to an export */
	RDMX_BLK_OP_READ = 2,
	RDMX_BLK_OP_WRITE = 3,
	RDMX_BLK_OP_FLUSH = 4,
	RDMX_BLK_OP_DISCARD = 5,
	RDMX_BLK_OP_WRITE_ZEROES = 6,
	RDMX_BLK_OP_MAX = RDMX_BLK_OP_WRITE_ZEROES,
};

/* rdmx_blk_cmd.flags */
#define RDMX_BLK_CMD_FUA	BIT(0)	/* WRITE: on stable storage first */
/*
 * WRITE: the data follows the header. READ (on a queue granted
 * RDMX_BLK_OPEN_INLINE_READ): send the data after the response's header.
 * Either way @length is at most RDMX_BLK_INLINE_MAX and @rkey, @addr are 0.
 */
#define RDMX_BLK_CMD_INLINE	BIT(1)
/*
 * Other commands of the client's were in flight on the queue when it sent
 * this one: on a queue granted RDMX_BLK_OPEN_BATCH, its response may wait
 * to go with others. A hint; any command may carry it.
 */
#define RDMX_BLK_CMD_MORE	BIT(2)
/*
 * WRITE, on a queue granted RDMX_BLK_OPEN_STAGE: the data, @length bytes
 * (at most RDMX_BLK_INLINE_MAX), is in the queue's staging area, @addr
 * bytes from its start: a multiple of RDMX_BLK_STAGE_SLOT, below the
 * area's length. The client put it there with an RDMA WRITE on the queue
 * before the SEND that carries this command, and leaves that slot alone
 * until the command is answered. @rkey is 0; not with RDMX_BLK_CMD_INLINE.
 */
#define RDMX_BLK_CMD_STAGED	BIT(3)
#define RDMX_BLK_CMD_KNOWN	(RDMX_BLK_CMD_FUA | RDMX_BLK_CMD_INLINE | \
				 RDMX_BLK_CMD_MORE | RDMX_BLK_CMD_STAGED)

/* OPEN flags (rdmx_blk_cmd.length of an OPEN) */
#define RDMX_BLK_OPEN_RO	BIT(0)	/* the client maps read-only */
#define RDMX_BLK_OPEN_EVENTS	BIT(1)	/* the client takes events */
/*
 * The client's receives hold a response and RDMX_BLK_INLINE_MAX bytes: it
 * may send inline READs. The server grants it in the answer's open_flags.
 */
#define RDMX_BLK_OPEN_INLINE_READ BIT(2)
/*
 * With RDMX_BLK_OPEN_INLINE_READ: the client's receives take the data
 * first, page-aligned, and the server may answer an inline READ that
 * succeeded with the data alone, in a SEND with immediate data: the
 * tag, big-endian; the answer carries no size then, and the server sends
 * the header (with the data after it) again when the size has changed
 * since the last header it built. Not on iWARP (no immediate data). The
 * server grants it in the answer's open_flags (RDMX_PROTO_MINOR 1).
 */
#define RDMX_BLK_OPEN_IMM_READ	BIT(3)
/*
 * The client takes up to RDMX_BLK_BATCH_MAX responses in one SEND, one
 * after another, each with no data after it (not an inline READ's that
 * succeeded) and no key to invalidate: the server may gather those that
 * are ready while one of its responses is still on the way. Its receives
 * hold at least RDMX_BLK_BATCH_MAX responses. The server grants it in the
 * answer's open_flags (RDMX_PROTO_MINOR 1).
 */
#define RDMX_BLK_OPEN_BATCH	BIT(4)
/*
 * The client may send up to RDMX_BLK_BATCH_MAX commands in one SEND, one
 * after another, each with no data after it (not an inline WRITE, but see
 * RDMX_BLK_OPEN_WRITE_IMM) and none an OPEN. A receive longer than a
 * command whose first command is not an inline WRITE is such a batch;
 * where the server's receives take the data first, any receive longer
 * than a command that is not an inline WRITE with its command last. The
 * server grants it in the answer's open_flags (RDMX_PROTO_MINOR 2).
 */
#define RDMX_BLK_OPEN_CMD_BATCH	BIT(5)
/*
 * With RDMX_BLK_OPEN_CMD_BATCH: a batch may also carry inline WRITEs, whose
 * data then comes alone, each in a SEND of its own after the batch, with
 * immediate data: the WRITE's tag, big-endian; exactly @length bytes, so
 * that 4 KiB of data is 4 KiB on the wire. Only where the server's
 * receives take the data first (both sides of RDMX_PROTO_MINOR 3 or
 * later, see below); not on iWARP (no immediate data). The server grants
 * it in the answer's open_flags (RDMX_PROTO_MINOR 3).
 */
#define RDMX_BLK_OPEN_WRITE_IMM	BIT(6)
/*
 * The client would write small WRITEs' data into a staging area of the
 * server's (RDMX_BLK_CMD_STAGED): server memory registered for that
 * queue alone, for remote writes only, one RDMX_BLK_STAGE_SLOT for each
 * of the client's tags at least (the queue's depth less the receive its
 * events take: the accept's queue_depth - 1). The server grants it in the answer's
 * open_flags, and the answer's stage_addr, stage_rkey and stage_len
 * describe the area (RDMX_PROTO_MINOR 4). The client exposes no memory
 * for these writes, and several of them take one RDMA WRITE.
 */
#define RDMX_BLK_OPEN_STAGE	BIT(7)
#define RDMX_BLK_OPEN_KNOWN	(RDMX_BLK_OPEN_RO | RDMX_BLK_OPEN_EVENTS | \
				 RDMX_BLK_OPEN_INLINE_READ | \
				 RDMX_BLK_OPEN_IMM_READ | RDMX_BLK_OPEN_BATCH | \
				 RDMX_BLK_OPEN_CMD_BATCH | \
				 RDMX_BLK_OPEN_WRITE_IMM | RDMX_BLK_OPEN_STAGE)
#define RDMX_BLK_BATCH_MAX	16
/*
 * The protocol minor version from which a block server's receives take the
 * data first, when the client's is as recent (see the top of this file).
 */
#define RDMX_BLK_MINOR_DATA_FIRST	3
/* The protocol minor version from which a server may grant a staging area. */
#define RDMX_BLK_MINOR_STAGE		4
/* A staging area's slot: the data of one staged WRITE starts at one. */
#define RDMX_BLK_STAGE_SLOT	4096
/* A staging area is at most this long. */
#define RDMX_BLK_STAGE_MAX	SZ_1M

/*
 * The tag of an event: a response to no command, sent only to a queue
 * opened with RDMX_BLK_OPEN_EVENTS, status 0, carrying the export's size
 * (sent when the export grew; the other fields are zero).
 */
#define RDMX_BLK_TAG_EVENT	0xffffffffU

/* Writes (and reads) of up to this many bytes may travel inline. */
#define RDMX_BLK_INLINE_MAX	4096
/* Largest I/O a queue moves; the client may ask for less. */
#define RDMX_BLK_MAX_IO		SZ_1M

/**
 * struct rdmx_blk_cmd - a command, the first bytes of a client SEND
 * @opcode: enum rdmx_blk_op
 * @flags: RDMX_BLK_CMD_*
 * @reserved0: zero
 * @tag: the client's tag, below the granted queue depth; echoed back
 * @offset: bytes from the start of the export (OPEN: 0)
 * @length: bytes (OPEN: RDMX_BLK_OPEN_* flags; FLUSH: 0)
 * @rkey: READ, WRITE without INLINE: the key of the client's buffer
 * @addr: the buffer's address in that key's space
 * @name: OPEN: the export's name, NUL-padded; else zero
 *
 * The server checks every field against the export before acting.
 */
struct rdmx_blk_cmd {
	u8 opcode;
	u8 flags;
	__le16 reserved0;
	__le32 tag;
	__le64 offset;
	__le32 length;
	__le32 rkey;
	__le64 addr;
	u8 name[64];
};

/* Export flags in an OPEN's answer (rdmx_blk_rsp.export_flags). */
#define RDMX_BLK_EXP_RO		BIT(0)	/* writes are refused */
#define RDMX_BLK_EXP_FLUSH	BIT(1)	/* has a volatile cache: send FLUSH */
#define RDMX_BLK_EXP_DISCARD	BIT(2)
#define RDMX_BLK_EXP_WZEROES	BIT(3)
#define RDMX_BLK_EXP_KNOWN	(RDMX_BLK_EXP_RO | RDMX_BLK_EXP_FLUSH | \
				 RDMX_BLK_EXP_DISCARD | RDMX_BLK_EXP_WZEROES)

/**
 * struct rdmx_blk_rsp - a response, the first bytes of a server SEND
 * @tag: the command's tag, or RDMX_BLK_TAG_EVENT
 * @status: 0, or a positive errno (EIO, EINVAL, ERANGE, EROFS,
 *	EOPNOTSUPP, ENOENT, EACCES, EPROTO; OPEN also ESTALE, and EBUSY for
 *	a read-write OPEN of an export another map writes)
 * @size: the export's size in bytes (in every response and event with a
 *	header)
 * @max_io: OPEN: the largest I/O the server takes, in bytes
 * @lbs: OPEN: logical block size, 512 or 4096
 * @export_flags: OPEN: RDMX_BLK_EXP_*
 * @open_flags: OPEN: the RDMX_BLK_OPEN_* flags granted; else zero
 * @uuid: OPEN: the export's identity (the disk's serial)
 * @stage_addr: OPEN granted RDMX_BLK_OPEN_STAGE: the staging area's
 *	address, in @stage_rkey's space; else zero
 * @stage_rkey: its key, for RDMA WRITE on this queue only
 * @stage_len: its bytes, a multiple of RDMX_BLK_STAGE_SLOT, at most
 *	RDMX_BLK_STAGE_MAX
 * A response to an inline READ with status 0 is followed by the read's
 * data, exactly @length bytes of it; every other response is this alone.
 * On a queue granted RDMX_BLK_OPEN_IMM_READ, such a response may instead
 * be the data alone, with the tag as the SEND's immediate data; the
 * server sends this header (and the size) whenever the export's size
 * differs from the last it sent on the queue.
 */
struct rdmx_blk_rsp {
	__le32 tag;
	__le32 status;
	__le64 size;
	__le32 max_io;
	__le32 lbs;
	__le32 export_flags;
	__le32 open_flags;
	uuid_t uuid;
	__le64 stage_addr;
	__le32 stage_rkey;
	__le32 stage_len;
};

#endif /* _RDMX_BLK_PROTO_H */
