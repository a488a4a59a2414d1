// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx-blkcraft: a hand-made block-service client (librdmacm, libibverbs)
 * that sends an rdmx block server what a careless or hostile client would,
 * and checks the answers of Documentation/block.rst: an error status for an
 * extent outside the export, unaligned, empty or too long and for a write to
 * a read-only export or map; a disconnect for a malformed command; a
 * consumer-defined reject for a connect request of another protocol.
 *
 * Usage: rdmx-blkcraft [-p PORT] [-r ROUNDS] [-R] HOST EXPORT RO_EXPORT
 *        rdmx-blkcraft [-p PORT] -B HOST EXPORT RO_EXPORT
 *        rdmx-blkcraft [-p PORT] -T HOST EXPORT RO_EXPORT
 *        rdmx-blkcraft [-p PORT] -S SLOW_EXPORT HOST EXPORT RO_EXPORT
 *        rdmx-blkcraft [-p PORT] -X THAWFILE HOST EXPORT RO_EXPORT
 *        rdmx-blkcraft [-p PORT] -O STATUS HOST EXPORT RO_EXPORT
 *        rdmx-blkcraft [-p PORT] -K HOST EXPORT RO_EXPORT
 *        rdmx-blkcraft [-p PORT] -F SEED [-n MSGS] [-d SECONDS] [-m PERCENT]
 *                      HOST EXPORT RO_EXPORT
 * EXPORT is a writable export of HOST, RO_EXPORT a read-only one; a few
 * blocks of EXPORT are overwritten. -r sets how often a race is driven
 * (default 50), -R runs only the races and the final check. Prints
 * "ok N - ..." / "not ok N - ..." lines and exits 1 on any failure.
 *
 * Command batches (RDMX_BLK_OPEN_CMD_BATCH, a server of minor 2), part of
 * the default run, and all there is with -B (then the final check): each
 * case on a connection of its own (queue depth 20), OPENing EXPORT with
 * inline reads and CMD_BATCH. Valid batches of 4 and of 16 inline READs
 * (the 16 also with responses together, and the data alone with
 * immediate data but on iWARP) of blocks written just before: every tag
 * answered once, with its block, and the queue serves on; one whose
 * second READ lies past the export's end: that one answered ERANGE, the
 * others with their data, the queue kept. Refused whole, the connection
 * ended and nothing answered: two commands in one SEND on a queue that
 * did not ask for CMD_BATCH, a batch of 2 * 96 + 8 bytes, one of 17
 * commands, one holding an OPEN, one whose second command is an inline
 * WRITE, one with a tag twice, and one reusing the tag of a command sent
 * just before in the same post (a race: when the server answered that one
 * first, it is skipped). Then, as a client of minor 3 (the server's
 * receives take the data first): inline WRITEs of a block and of 4 KiB
 * with their command after their data, read back; with WRITE_IMM, a batch
 * of four inline WRITEs and two inline READs whose WRITEs' data follows
 * alone (in reverse order), all answered and read back. Refused, the
 * connection ended and nothing answered: data alone for no WRITE, data
 * 512 bytes longer than its WRITE, a batch holding an inline WRITE of
 * 4 KiB + 512, an inline WRITE before its data, data alone on a queue
 * that did not ask for WRITE_IMM, and a batch holding inline WRITEs from
 * a client of minor 2 (not granted WRITE_IMM). -S SLOW_EXPORT instead
 * runs that reused-tag case
 * against SLOW_EXPORT (an export whose every request takes seconds): the
 * reused tag's READ is deterministically still in flight.
 *
 * The staging area (RDMX_BLK_OPEN_STAGE, a server of minor 4), part of
 * the default run, and all there is with -T (then the final check): each
 * case on a connection of its own, as a client of minor 4 opening EXPORT
 * with inline reads. Granted: an area of a slot a tag at least, whole
 * slots, at most 1 MiB, with a key and an address; its last four slots
 * written with one RDMA WRITE and their staged WRITEs sent in a command
 * batch, then slot 0 alone and 512 bytes of slot 1: each answered 0, its
 * answer invalidating no key, and READs give back what was staged. Not
 * asked: no area in the answer, and a staged WRITE ends the connection.
 * Refused, the connection ended and nothing answered: a staged READ, a
 * staged WRITE flagged INLINE too (after its data, as an inline WRITE's),
 * naming a key, at 512 bytes into the area, at its end, at
 * 0xfffffffffffff000, of 4 KiB + 512, or with bytes after it in its SEND.
 * A staged WRITE of zero length is answered EINVAL, the queue kept. An
 * RDMA READ of the area fails, and so does another queue's RDMA WRITE
 * with its key and address: the slot keeps what its queue put there,
 * which its staged WRITE then writes.
 *
 * -F SEED runs the wire fuzz instead. Each connection (a block queue,
 * queue depth 9, or 20 one time in two, receives with room for an inline
 * READ's data) OPENs EXPORT, or one time in five RO_EXPORT read-only,
 * asking for inline reads half the time, events one time in five and (a
 * server of minor 2) command batches half the time; half the time it says
 * it is of minor 3, and a frame that starts with an inline WRITE then goes
 * with that command moved after the rest, as a server whose receives take
 * the data first expects. Half the queues (drawn from a stream of their
 * own, so that the others are as they were) ask a server of minor 4 for
 * a staging area; on a queue granted one (a read-only map is not), half
 * the WRITEs, single or in a batch, are staged at a random slot, and
 * before each frame a slot of random bytes is RDMA WRITTEN at every slot
 * in the area that a staged WRITE of it names (the data is not read
 * back). Then MSGS commands
 * (-n, default 10000), or what -d SECONDS allow, one at a time: each a valid
 * command of a random opcode (READ and WRITE inline or through the memory
 * window, FLUSH, DISCARD, WRITE_ZEROES) with a random tag and extent.
 * PERCENT commands in a hundred (-m, default 10) are hostile: now and then
 * a second OPEN, and mutated one to three times, in up to five rounds
 * until the mirror below says that the server must end the connection: a
 * field (opcode, flags, reserved0, tag, offset, length, rkey, addr, a byte
 * of name) set to a value worth trying, or the command cut short,
 * extended (its length following or not), or some of its bytes replaced
 * or flipped. The others are valid, moved once or twice to an edge the
 * server must answer, with status 0 or an error, and so keep the
 * connection: the extent at the export's start or end, the largest
 * transfer (max_io, the whole window, a page inline), the data at any
 * address of the window, odd ones too, FUA, garbage in the key and
 * address of a command that moves no data, a staged WRITE's slot the
 * area's first or last, an extent refused with EINVAL or ERANGE, the
 * first or the last tag (an edge the mirror says would end the connection
 * is undone). Where an area was granted, the mutated length and address
 * are now and then values for a staged WRITE: 0, 512, a slot, a slot and
 * one or 512 bytes; the last slot, the area's end or past it, half a
 * slot or 512 bytes on, far off; with the other fields (a key, INLINE
 * set, another opcode) the mirror ends such a command as the server's
 * checks do. On a queue granted CMD_BATCH one frame in
 * four is a batch instead: 2 to 16 (at most the depth) such commands,
 * with tags of their own, none an inline WRITE, at most one through the
 * memory window, in one SEND; one of them moved to an edge, or, hostile,
 * mutated in rounds like a single command: a field of one of them, a tag
 * twice, an OPEN or an inline WRITE among them, 17 of them, or the bytes
 * of the whole cut, extended, replaced or flipped. A batch the server
 * must refuse whole must end the connection with nothing answered; one
 * whose commands pass the header checks has each answered as if it came
 * alone, or, when one of them is a protocol error as it runs, the
 * connection ends (the others answered or not). A single command with
 * bytes after it on such a queue is judged as the batch the server takes
 * it for. Which commands are hostile is drawn from a
 * stream of its own (craftlib.c); the rest of the randomness is
 * splitmix64 seeded with mix2(SEED, command number) (testlib.h). Each
 * command's reaction is counted: a disconnect, an error status, status 0,
 * or silence (nothing in 10 s: the connection is dropped); a mirror of
 * rdmx_blk_cmd_parse(), rdmx_srvq_open() and rdmx_blk_io_check() says
 * which it must be, and what differs, a status that is not the one the
 * checks give, a protocol error answered, a valid command disconnected, a
 * response of the wrong tag or size, is an anomaly, noted with the
 * command in hex. A connection the server ended is made again, and OPENs
 * again; one attempt in ten first sends a connect request whose private
 * data is fuzzed, judged against rdmx_conn_req_parse() and the listener's
 * dispatch (a session such a request opens is closed at once). A window
 * still bound when a connection goes is freed before its QP (see
 * conn_close()). Then the counts, "rdmx-blkcraft: fuzz
 * seed S: N frames, R reconnects, T s (F/s)", and the two checks whose TAP
 * lines decide the exit status: a new queue OPENs EXPORT and READs its
 * first block, and the fuzz saw no anomaly (0: both hold, 1: one does
 * not, 2: the fuzz could not run: no device, no listener, or an OPEN of
 * EXPORT refused at the start). The memory window's region is exactly its
 * data buffer (see conn_setup_rsp()).
 *
 * The wire format is mirrored by hand from kmod/core/proto.h and
 * kmod/blk/blk_proto.h: every field little-endian, sizes checked below.
 *
 * A READ's data comes by RDMA WRITE into memory the command names, and its
 * response is a SEND with invalidate of that key. Userspace cannot make the
 * FRWR keys the kernel client uses, and a soft-RoCE QP that is asked to
 * invalidate the key of an ordinary MR fails (IB_WC_REM_INV_REQ_ERR), so a
 * READ names a type 2 memory window bound for that one command. Without
 * memory windows the range checks use WRITE_ZEROES and the reads are
 * skipped.
 */
/* __u64 is unsigned long long, printed with %llu, on every architecture. */
#define __SANE_USERSPACE_TYPES__

#include <assert.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <linux/types.h>

#include "craftlib.h"
#include "testlib.h"

/* IB_CM_REJ_CONSUMER_DEFINED, as rdma_cm reports it in the event status */
#define CM_REJ_CONSUMER		28

#define BLK_OP_OPEN		1
#define BLK_OP_READ		2
#define BLK_OP_WRITE		3
#define BLK_OP_FLUSH		4
#define BLK_OP_DISCARD		5
#define BLK_OP_WRITE_ZEROES	6
#define BLK_CMD_FUA		BIT(0)
#define BLK_CMD_INLINE		BIT(1)
#define BLK_CMD_MORE		BIT(2)
#define BLK_CMD_STAGED		BIT(3)
#define BLK_CMD_KNOWN		(BLK_CMD_FUA | BLK_CMD_INLINE | BLK_CMD_MORE | \
				 BLK_CMD_STAGED)
#define BLK_OPEN_RO		BIT(0)
#define BLK_OPEN_EVENTS		BIT(1)
#define BLK_OPEN_INLINE_READ	BIT(2)
#define BLK_OPEN_IMM_READ	BIT(3)
#define BLK_OPEN_BATCH		BIT(4)
#define BLK_OPEN_CMD_BATCH	BIT(5)
#define BLK_OPEN_WRITE_IMM	BIT(6)
#define BLK_OPEN_STAGE		BIT(7)
/* The first OPEN flag a server does not know. */
#define BLK_OPEN_UNKNOWN	BIT(8)
#define BLK_BATCH_MAX		16
#define BLK_TAG_EVENT		0xffffffffU
#define BLK_EXP_RO		BIT(0)
#define BLK_INLINE_MAX		4096
#define BLK_MAX_IO		(1024 * 1024)
#define BLK_STAGE_SLOT		4096
#define BLK_STAGE_MAX		(1024 * 1024)

/* What this client asks for in its connect request. */
#define CLT_DEPTH		9
/* The depth a queue for command batches asks: room for 17 tags. */
#define BATCH_DEPTH		20
/* The minor version that knows RDMX_BLK_OPEN_CMD_BATCH. */
#define MINOR_CMD_BATCH		2
/*
 * The minor version whose server's receives take the data first (an
 * inline WRITE's command after its data), and RDMX_BLK_OPEN_WRITE_IMM.
 */
#define MINOR_DATA_FIRST	3
/* The minor version that knows RDMX_BLK_OPEN_STAGE. */
#define MINOR_STAGE		4
#define NR_RECV			32
/* Responses taken and not yet looked at, at most. */
#define NR_GOT			64
#define DATA_LEN		(64 * 1024)
#define TIMEOUT_MS		30000
/* A receive with room for a response and an inline READ's data. */
#define RSP_SLOT_INLINE		(sizeof(struct blk_rsp) + BLK_INLINE_MAX)

/* kmod/blk/blk_proto.h: struct rdmx_blk_cmd, _rsp */
struct blk_cmd {
	__u8 opcode;
	__u8 flags;
	__le16 reserved0;
	__le32 tag;
	__le64 offset;
	__le32 length;
	__le32 rkey;
	__le64 addr;
	__u8 name[64];
};

struct blk_rsp {
	__le32 tag;
	__le32 status;
	__le64 size;
	__le32 max_io;
	__le32 lbs;
	__le32 export_flags;
	__le32 open_flags;
	__u8 uuid[16];
	__le64 stage_addr;
	__le32 stage_rkey;
	__le32 stage_len;
};

static_assert(sizeof(struct blk_cmd) == 96, "rdmx_blk_cmd");
static_assert(offsetof(struct blk_cmd, addr) == 24, "rdmx_blk_cmd");
static_assert(sizeof(struct blk_rsp) == 64, "rdmx_blk_rsp");
static_assert(offsetof(struct blk_rsp, uuid) == 32, "rdmx_blk_rsp");
static_assert(offsetof(struct blk_rsp, stage_addr) == 48, "rdmx_blk_rsp");

/* Work request ids: receives are their slot's number. */
enum { WR_SEND = NR_RECV, WR_BIND, WR_RDMA };

/*
 * A receive that invalidated a key. Soft-RoCE (6.12) reports it to
 * userspace with the kernel's IB_WC_WITH_INVALIDATE, BIT(2), which is
 * IBV_WC_IP_CSUM_OK there (never set on an RC receive), not IBV_WC_WITH_INV.
 */
#define WC_WITH_INV		(IBV_WC_WITH_INV | BIT(2))

/* A response taken from a receive (or an inline READ's data alone). */
struct got {
	struct blk_rsp rsp;
	__u32 inv;			/* the key invalidated, or 0 */
	__u32 len;			/* its bytes, with data */
	__u64 sum;			/* FNV-1a of the data after it, if any */
};

/*
 * One connection: a buffer registered once, holding the data a READ lands
 * in, the command (with its inline data after it, or a batch of commands)
 * and the receive slots.
 */
struct conn {
	struct craft_conn c;		/* c.rx: NR_RECV receive slots */
	struct ibv_mw *mw;
	struct ibv_mr *data_mr;		/* what the window is bound in */
	__u32 mw_rkey;
	bool mw_bound;			/* the fuzz: bound, not invalidated */
	struct blk_cmd *cmd;		/* followed by up to 4 KiB inline */
	__u8 *data;			/* DATA_LEN, what a READ fills */
	/* granted in the accept */
	__u32 depth;
	__u32 max_msg;
	__u8 minor;			/* the server's */
	bool data_first;		/* both of MINOR_DATA_FIRST or later */
	/* the OPEN's answer */
	__u64 size;
	__u32 lbs;
	__u32 max_io;
	__u32 exp_flags;
	__u32 open_flags;		/* granted */
	__u64 stage_addr;		/* the staging area (OPEN_STAGE) */
	__u32 stage_rkey;
	__u32 stage_len;
	/* what the completions and events said */
	struct got got[NR_GOT];
	unsigned int nr_got;
	/*
	 * Tags of inline READs sent and not answered: a response to one,
	 * status 0, has the data after it; any other longer than a response
	 * is responses together (RDMX_BLK_OPEN_BATCH).
	 */
	__u64 inl_tags;
	unsigned int sends_done;
	bool bound;
	bool rdma_done;			/* the RDMA READ or WRITE posted */
	bool disconnected;
	bool flushed;
	int wc_err;			/* a failed send or bind's status */
};

static const char *host, *port = "7471", *exp_rw, *exp_ro;
static bool have_mw;
/*
 * The minor version the connect requests say: MINOR_CMD_BATCH (every
 * SEND starts with a command), or MINOR_DATA_FIRST for the cases of a
 * server whose receives take the data first.
 */
static __u8 req_minor = MINOR_CMD_BATCH;

/* The statuses a block server answers with, by name. */
static const char *status_name(int s)
{
	static char buf[16];

	switch (s) {
	case 0: return "0";
	case EIO: return "EIO";
	case EINVAL: return "EINVAL";
	case ERANGE: return "ERANGE";
	case EROFS: return "EROFS";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ENOENT: return "ENOENT";
	case EACCES: return "EACCES";
	case EPROTO: return "EPROTO";
	case ENOMEM: return "ENOMEM";
	case ESTALE: return "ESTALE";
	}
	snprintf(buf, sizeof(buf), "%d", s);
	return buf;
}

/* ---- rdma_cm ------------------------------------------------------------ */

static int cm_next(struct conn *c, int ms, enum rdma_cm_event_type *type,
		   int *status, void *pdata, size_t len)
{
	return craft_cm_next(&c->c, ms, type, status, pdata, len);
}

/*
 * The window goes after the disconnect (the QP is in error: nothing
 * arrives through it any more), before the QP and the memory it is bound
 * to. A type 2 window still bound (the server ended the connection before
 * its answer invalidated the key) holds a reference on its QP in
 * soft-RoCE (rxe_do_bind_mw()), and destroying that QP first waits out
 * __rxe_cleanup()'s 50 s timeout, and warns, before it gives up.
 */
static void conn_close(struct conn *c)
{
	craft_disconnect(&c->c);
	if (c->mw)
		ibv_dealloc_mw(c->mw);
	if (c->data_mr)
		ibv_dereg_mr(c->data_mr);
	craft_close(&c->c);
	memset(c, 0, sizeof(*c));
}

static int post_recv(struct conn *c, unsigned int slot)
{
	return craft_post_recv(&c->c, slot);
}

/* Receive slot @slot: a response, and an inline READ's data after it. */
static struct blk_rsp *rsp_slot(struct conn *c, unsigned int slot)
{
	return (struct blk_rsp *)(c->c.rx + slot * c->c.a.recv_size);
}

/*
 * Resolve, build the QP and its buffers, post the receives, of @rsp_size
 * bytes each (a response, or one and an inline READ's data).
 */
static int conn_setup_rsp(struct conn *c, size_t rsp_size)
{
	const struct craft_conn_attr a = {
		.lead = DATA_LEN + 2 * BLK_INLINE_MAX,
		.nr_recv = NR_RECV,
		.recv_size = rsp_size,
		.max_send_wr = 16,
		.max_send_sge = 2,	/* an inline WRITE, data first */
		.cqe = 64,
		.access = IBV_ACCESS_LOCAL_WRITE |
			  (have_mw ? IBV_ACCESS_MW_BIND : 0),
	};

	memset(c, 0, sizeof(*c));
	if (craft_setup(&c->c, &a))
		return -1;
	c->data = c->c.lead;
	c->cmd = (struct blk_cmd *)(c->c.lead + DATA_LEN);
	if (have_mw) {
		/*
		 * The window's memory region is exactly the data buffer:
		 * soft-RoCE checks an access through a window against the
		 * window's region, not the window (rxe_resp.c check_rkey()),
		 * so with a wider region it lets the server reach past the
		 * window, where a NIC would not.
		 */
		c->data_mr = ibv_reg_mr(c->c.pd, c->data, DATA_LEN,
					IBV_ACCESS_LOCAL_WRITE |
					IBV_ACCESS_MW_BIND);
		if (!c->data_mr)
			return -1;
		c->mw = ibv_alloc_mw(c->c.pd, IBV_MW_TYPE_2);
		if (!c->mw)
			return -1;
		c->mw_rkey = c->mw->rkey;
	}
	return 0;
}

/* Resolve, build the QP and its buffers, post the receives. */
static int conn_setup(struct conn *c)
{
	return conn_setup_rsp(c, sizeof(struct blk_rsp));
}

static void req_pack_depth(struct conn_req *req, __u16 magic, __u8 major,
			   __u16 depth)
{
	craft_req_pack(req, magic, major, depth, PROTO_F_BLOCK, BLK_MAX_IO);
	req->minor = req_minor;
}

static void req_pack(struct conn_req *req, __u16 magic, __u8 major)
{
	req_pack_depth(req, magic, major, CLT_DEPTH);
}

/* No flow control: the block service has its tags instead. */
static int conn_send_req(struct conn *c, const struct conn_req *req)
{
	return craft_connect(&c->c, req, sizeof(*req), false);
}

/*
 * Connect as a block queue of map @uuid (a random one when NULL) in
 * incarnation @gen, asking queue depth @depth, with receives of
 * @rsp_size bytes; checks what the accept grants.
 */
static int conn_open_full(struct conn *c, const __u8 *uuid, __u64 gen,
			  __u16 depth, size_t rsp_size)
{
	enum rdma_cm_event_type type;
	struct conn_rep rep;
	struct conn_req req;
	int status;

	if (conn_setup_rsp(c, rsp_size)) {
		note("connection setup to %s:%s failed: %m", host, port);
		return -1;
	}
	req_pack_depth(&req, PROTO_MAGIC, PROTO_MAJOR, depth);
	if (uuid)
		memcpy(req.sess_uuid, uuid, sizeof(req.sess_uuid));
	req.generation = htole64(gen);
	if (conn_send_req(c, &req) ||
	    cm_next(c, TIMEOUT_MS, &type, &status, &rep, sizeof(rep))) {
		note("connect to %s:%s failed: %m", host, port);
		return -1;
	}
	if (type != RDMA_CM_EVENT_ESTABLISHED) {
		note("connect to %s:%s: %s, status %d", host, port,
		     rdma_event_str(type), status);
		return -1;
	}
	c->depth = le16toh(rep.queue_depth);
	c->max_msg = le32toh(rep.max_msg_size);
	c->minor = rep.minor;
	c->data_first = req_minor >= MINOR_DATA_FIRST &&
			c->minor >= MINOR_DATA_FIRST;
	if (le16toh(rep.magic) != PROTO_MAGIC || rep.major != PROTO_MAJOR ||
	    le32toh(rep.features) != PROTO_F_BLOCK || le16toh(rep.nr_lanes) != 1 ||
	    c->depth < 2 || c->depth > depth || !c->max_msg ||
	    c->max_msg > BLK_MAX_IO || le64toh(rep.generation) != gen) {
		note("accept: magic %#x major %u features %#x nr_lanes %u",
		     le16toh(rep.magic), rep.major, le32toh(rep.features),
		     le16toh(rep.nr_lanes));
		note("accept: depth %u max_msg %u generation %llu", c->depth,
		     c->max_msg, (unsigned long long)le64toh(rep.generation));
		return -1;
	}
	return 0;
}

static int conn_open_as(struct conn *c, const __u8 *uuid, __u64 gen)
{
	return conn_open_full(c, uuid, gen, CLT_DEPTH, sizeof(struct blk_rsp));
}

static int conn_open(struct conn *c)
{
	return conn_open_as(c, NULL, 1);
}

/* ---- completions -------------------------------------------------------- */

/* FNV-1a, 64 bits: an inline READ's data, in one word. */
static __u64 fnv1a(const void *p, size_t len)
{
	const __u8 *b = p;
	__u64 h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

/*
 * Keep response @rsp, @len bytes in all with the @data_len bytes of data
 * at @data, whose completion invalidated @inv, for a later look.
 */
static void got_add(struct conn *c, const struct blk_rsp *rsp, __u32 len,
		    __u32 inv, const void *data, size_t data_len)
{
	__u32 tag = le32toh(rsp->tag);
	struct got *g;

	if (tag < 64)
		c->inl_tags &= ~(1ULL << tag);
	if (c->nr_got >= NR_GOT) {
		note("more than %d responses not looked at: tag %u dropped",
		     NR_GOT, tag);
		return;
	}
	g = &c->got[c->nr_got++];
	g->rsp = *rsp;
	g->len = len;
	g->inv = inv;
	g->sum = data_len ? fnv1a(data, data_len) : 0;
}

/* Take response @i of those kept, into *@g (when not NULL). */
static void got_take(struct conn *c, unsigned int i, struct got *g)
{
	if (g)
		*g = c->got[i];
	c->nr_got--;
	memmove(&c->got[i], &c->got[i + 1], (c->nr_got - i) * sizeof(c->got[0]));
}

/*
 * A receive of @len bytes in slot @slot: a response, one and an inline
 * READ's data, or (RDMX_BLK_OPEN_BATCH) responses together, each as if
 * alone; the data follows only a response, status 0, to an inline READ.
 */
static void recv_taken(struct conn *c, unsigned int slot, __u32 len, __u32 inv)
{
	const struct blk_rsp *r = rsp_slot(c, slot);
	__u32 tag = len >= sizeof(*r) ? le32toh(r->tag) : BLK_TAG_EVENT - 1;
	bool data = tag < 64 && (c->inl_tags & (1ULL << tag)) && !r->status;
	unsigned int k;

	if (len > sizeof(*r) && !data && !(len % sizeof(*r)) &&
	    len / sizeof(*r) <= BLK_BATCH_MAX &&
	    (c->open_flags & BLK_OPEN_BATCH)) {
		for (k = 0; k < len / sizeof(*r); k++)
			got_add(c, r + k, sizeof(*r), k ? 0 : inv, NULL, 0);
		return;
	}
	got_add(c, r, len, inv, r + 1, len > sizeof(*r) ? len - sizeof(*r) : 0);
}

/* Reap completions and CM events, without blocking. */
static void pump(struct conn *c)
{
	struct ibv_wc wc[16];
	int i, n;

	while ((n = craft_poll(&c->c, wc, 16, 0)) > 0) {
		for (i = 0; i < n; i++) {
			struct ibv_wc *w = &wc[i];

			if (w->status != IBV_WC_SUCCESS) {
				if (w->wr_id < NR_RECV) {
					c->flushed = true;
					if (w->status != IBV_WC_WR_FLUSH_ERR)
						note("receive failed: %s",
						     ibv_wc_status_str(w->status));
				} else if (w->status != IBV_WC_WR_FLUSH_ERR ||
					   !c->wc_err) {
					c->wc_err = w->status;
				}
				continue;
			}
			if (w->wr_id == WR_SEND) {
				c->sends_done++;
			} else if (w->wr_id == WR_BIND) {
				c->bound = true;
			} else if (w->wr_id == WR_RDMA) {
				c->rdma_done = true;
			} else if (w->wc_flags & IBV_WC_WITH_IMM) {
				/*
				 * An inline READ's data alone (IMM_READ):
				 * read as the response it stands for, which
				 * a queue not granted it never matches.
				 */
				struct blk_rsp g;

				memset(&g, 0, sizeof(g));
				g.tag = htole32(be32toh(w->imm_data));
				g.size = htole64(c->size);
				if (!(c->open_flags & BLK_OPEN_IMM_READ)) {
					note("data with immediate %u on a queue not granted it",
					     be32toh(w->imm_data));
					g.tag = htole32(BLK_TAG_EVENT - 1);
				}
				got_add(c, &g, sizeof(g) + w->byte_len, 0,
					rsp_slot(c, w->wr_id), w->byte_len);
				post_recv(c, w->wr_id);
			} else {
				recv_taken(c, w->wr_id, w->byte_len,
					   w->wc_flags & WC_WITH_INV ?
					   w->invalidated_rkey : 0);
				post_recv(c, w->wr_id);
			}
		}
	}
	if (!c->disconnected) {
		enum rdma_cm_event_type type;

		if (!cm_next(c, 0, &type, NULL, NULL, 0) &&
		    type == RDMA_CM_EVENT_DISCONNECTED)
			c->disconnected = true;
	}
}

/* Pump until *@flag is set; 0, or -1 on timeout or a dead connection. */
static int pump_until(struct conn *c, bool *flag)
{
	long long end = now_ms() + TIMEOUT_MS;

	while (!*flag) {
		pump(c);
		if (*flag)
			break;
		if (c->wc_err || c->disconnected || c->flushed ||
		    now_ms() > end)
			return -1;
		usleep(200);
	}
	return 0;
}

/*
 * As the server's rdmx_srvq_cmd_last(), to a server whose receives take
 * the data first: whether the @len bytes at @at end with an inline WRITE
 * of the bytes before it (its command, copied to @out when not NULL).
 * Only the header's form counts, not its tag.
 */
static bool cmd_last(const struct conn *c, const void *at, size_t len,
		     struct blk_cmd *out)
{
	struct blk_cmd last;
	unsigned int i;

	(void)c;
	if (len <= sizeof(last))
		return false;
	memcpy(&last, (const __u8 *)at + len - sizeof(last), sizeof(last));
	if (last.opcode != BLK_OP_WRITE || !(last.flags & BLK_CMD_INLINE) ||
	    (last.flags & ~BLK_CMD_KNOWN) ||
	    last.reserved0 || le32toh(last.length) != len - sizeof(last))
		return false;
	for (i = 0; i < sizeof(last.name); i++)
		if (last.name[i])
			return false;
	if (out)
		*out = last;
	return true;
}

/*
 * Whether the @len bytes of commands at @cmd are a batch to a server that
 * granted this queue RDMX_BLK_OPEN_CMD_BATCH: more than a command, the
 * first not an inline WRITE (whose data follows it); to a server whose
 * receives take the data first, any but an inline WRITE with its command
 * last.
 */
static bool is_batch(const struct conn *c, const struct blk_cmd *cmd,
		     size_t len)
{
	return (c->open_flags & BLK_OPEN_CMD_BATCH) && len > sizeof(*cmd) &&
	       (c->data_first ? !cmd_last(c, cmd, len, NULL) :
		!(cmd->opcode == BLK_OP_WRITE && (cmd->flags & BLK_CMD_INLINE)));
}

/*
 * Note the tags of the inline READs among the @len bytes of commands at
 * @cmd that the server takes as commands: the first, and in a batch of
 * whole ones the others too. Their responses, status 0, carry data.
 */
static void mark_inline_reads(struct conn *c, const struct blk_cmd *cmd,
			      size_t len)
{
	unsigned int i, n = 1;

	if (len < sizeof(*cmd))
		return;
	if (is_batch(c, cmd, len) && !(len % sizeof(*cmd)) &&
	    len / sizeof(*cmd) <= BLK_BATCH_MAX)
		n = len / sizeof(*cmd);
	for (i = 0; i < n; i++)
		if (cmd[i].opcode == BLK_OP_READ &&
		    (cmd[i].flags & BLK_CMD_INLINE) && le32toh(cmd[i].tag) < 64)
			c->inl_tags |= 1ULL << le32toh(cmd[i].tag);
}

/*
 * Post @n SENDs (at most 2, chained), SEND i of @len[i] bytes from
 * @at[i] (in the command buffer), and wait for them to complete.
 */
static int send_chain(struct conn *c, const struct blk_cmd *const *at,
		      const size_t *len, unsigned int n)
{
	struct ibv_sge sge[2];
	unsigned int i, want = c->sends_done + n;
	long long end = now_ms() + TIMEOUT_MS;

	assert(n <= 2);
	for (i = 0; i < n; i++) {
		sge[i].addr = (uintptr_t)at[i];
		sge[i].length = len[i];
		sge[i].lkey = c->c.mr->lkey;
		mark_inline_reads(c, at[i], len[i]);
	}
	if (craft_post_sends(&c->c, WR_SEND, sge, n))
		return -1;
	while (c->sends_done < want) {
		pump(c);
		if (c->wc_err || now_ms() > end)
			return -1;
		usleep(200);
	}
	return 0;
}

/*
 * Post @n SENDs (at most 2, chained) of @len bytes each: all of the command
 * buffer's first command, or with @each the buffer's commands 0 to @n - 1.
 */
static int send_cmd_n(struct conn *c, size_t len, unsigned int n, bool each)
{
	const struct blk_cmd *at[2] = { c->cmd, c->cmd + (each ? 1 : 0) };
	const size_t lens[2] = { len, len };

	return send_chain(c, at, lens, n);
}

static int send_cmd(struct conn *c, size_t len)
{
	return send_cmd_n(c, len, 1, false);
}

/*
 * Wait until @want SENDs completed in all; 0, or -1 (one failed, the
 * connection ended, or TIMEOUT_MS passed).
 */
static int sends_wait(struct conn *c, unsigned int want)
{
	long long end = now_ms() + TIMEOUT_MS;

	while (c->sends_done < want) {
		pump(c);
		if (c->wc_err || c->disconnected || now_ms() > end)
			return -1;
		usleep(200);
	}
	return 0;
}

/*
 * One SEND of @len bytes at @data (registered) and then the command at
 * @cmd: an inline WRITE for a server whose receives take the data first.
 */
static int send_data_first(struct conn *c, const void *data, __u32 len,
			   const struct blk_cmd *cmd)
{
	struct ibv_sge sge[2] = {
		{ .addr = (uintptr_t)data, .length = len, .lkey = c->c.mr->lkey },
		{ .addr = (uintptr_t)cmd, .length = sizeof(*cmd),
		  .lkey = c->c.mr->lkey },
	};
	struct ibv_send_wr wr = {
		.wr_id = WR_SEND,
		.sg_list = sge,
		.num_sge = 2,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	unsigned int want = c->sends_done + 1;

	if (ibv_post_send(c->c.id->qp, &wr, &bad))
		return -1;
	return sends_wait(c, want);
}

/*
 * In one post: a SEND of the @len bytes of commands in the command buffer
 * (none when @len is 0), then @nd SENDs of data alone (RDMX_BLK_OPEN_WRITE_IMM), SEND i the
 * @dlen[i] bytes at c->data + i * BLK_INLINE_MAX with immediate data
 * @imm[i] (a tag); wait for them all to complete.
 */
static int send_with_data(struct conn *c, size_t len, unsigned int nd,
			  const __u32 *dlen, const __u32 *imm)
{
	struct ibv_send_wr wr[1 + BLK_BATCH_MAX], *bad;
	struct ibv_sge sge[1 + BLK_BATCH_MAX];
	unsigned int i, first = len ? 0 : 1;
	unsigned int want = c->sends_done + 1 - first + nd;

	assert(nd <= BLK_BATCH_MAX);
	memset(wr, 0, sizeof(wr));
	for (i = first; i <= nd; i++) {
		sge[i].addr = (uintptr_t)(i ? c->data + (i - 1) * BLK_INLINE_MAX :
					  (__u8 *)c->cmd);
		sge[i].length = i ? dlen[i - 1] : len;
		sge[i].lkey = c->c.mr->lkey;
		wr[i].wr_id = WR_SEND;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].opcode = i ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
		if (i)
			wr[i].imm_data = htobe32(imm[i - 1]);
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].next = i < nd ? &wr[i + 1] : NULL;
	}
	mark_inline_reads(c, c->cmd, len);
	if (ibv_post_send(c->c.id->qp, &wr[first], &bad))
		return -1;
	return sends_wait(c, want);
}

/*
 * Bind the memory window over the data buffer with a fresh key, for the
 * server's RDMA WRITE (@access IBV_ACCESS_REMOTE_WRITE), READ, or both.
 */
static int mw_bind_for(struct conn *c, unsigned int access)
{
	struct ibv_send_wr wr = {
		.wr_id = WR_BIND,
		.opcode = IBV_WR_BIND_MW,
		.bind_mw = {
			.mw = c->mw,
			.rkey = ibv_inc_rkey(c->mw_rkey),
			.bind_info = {
				.mr = c->data_mr,
				.addr = (uintptr_t)c->data,
				.length = DATA_LEN,
				.mw_access_flags = access,
			},
		},
	};
	struct ibv_send_wr *bad;

	c->bound = false;
	if (ibv_post_send(c->c.id->qp, &wr, &bad) || pump_until(c, &c->bound)) {
		note("binding a memory window failed (status %d)", c->wc_err);
		return -1;
	}
	/* The next bind names the window by its current key. */
	c->mw_rkey = wr.bind_mw.rkey;
	c->mw->rkey = c->mw_rkey;
	return 0;
}

/* Bind the memory window over the data buffer, for a READ's data. */
static int mw_bind(struct conn *c)
{
	return mw_bind_for(c, IBV_ACCESS_REMOTE_WRITE);
}

/*
 * A window whose key the server did not invalidate is still bound: replace
 * it (binding a bound type 2 window fails, and soft-RoCE in 6.12 oopses on
 * a local invalidate of one already invalidated, so that is not tried).
 */
static int mw_renew(struct conn *c)
{
	ibv_dealloc_mw(c->mw);
	c->mw = ibv_alloc_mw(c->c.pd, IBV_MW_TYPE_2);
	if (!c->mw)
		return -1;
	c->mw_rkey = c->mw->rkey;
	return 0;
}

/*
 * Wait for the response to @tag. Returns its status (>= 0), or -1 when none
 * came (timeout, disconnect). *@inv is the key its completion invalidated.
 */
static int wait_rsp(struct conn *c, __u32 tag, struct blk_rsp *rsp, __u32 *inv)
{
	long long end = now_ms() + TIMEOUT_MS;
	unsigned int i;

	for (;;) {
		pump(c);
		for (i = 0; i < c->nr_got; i++) {
			const struct got *g = &c->got[i];
			int st = le32toh(g->rsp.status);

			if (le32toh(g->rsp.tag) != tag)
				continue;
			if (rsp)
				*rsp = g->rsp;
			if (inv)
				*inv = g->inv;
			if (g->len != sizeof(g->rsp))
				note("response of %u bytes", g->len);
			got_take(c, i, NULL);
			return st;
		}
		if (c->disconnected || c->flushed || now_ms() > end)
			return -1;
		usleep(200);
	}
}

/*
 * Wait for the server to end the connection: 1 when it did without
 * answering, 0 when a response came, -1 on timeout.
 */
static int wait_disconnect(struct conn *c)
{
	long long end = now_ms() + TIMEOUT_MS;

	for (;;) {
		pump(c);
		if (c->nr_got) {
			note("answered: tag %u status %s",
			     le32toh(c->got[0].rsp.tag),
			     status_name(le32toh(c->got[0].rsp.status)));
			return 0;
		}
		if (c->disconnected || c->flushed)
			return 1;
		if (now_ms() > end)
			return -1;
		usleep(500);
	}
}

/* ---- commands ----------------------------------------------------------- */

static void cmd_fill_at(struct blk_cmd *cmd, __u8 op, __u32 tag, __u64 off,
			__u32 len)
{
	memset(cmd, 0, sizeof(*cmd));
	cmd->opcode = op;
	cmd->tag = htole32(tag);
	cmd->offset = htole64(off);
	cmd->length = htole32(len);
}

static void cmd_fill(struct conn *c, __u8 op, __u32 tag, __u64 off, __u32 len)
{
	cmd_fill_at(c->cmd, op, tag, off, len);
}

/* OPEN @name; returns the status, or -1 when no answer came. */
static int blk_open(struct conn *c, const char *name, __u32 flags)
{
	struct blk_rsp rsp;
	int st;

	cmd_fill(c, BLK_OP_OPEN, 0, 0, flags);
	memcpy(c->cmd->name, name, strnlen(name, sizeof(c->cmd->name)));
	if (send_cmd(c, sizeof(*c->cmd)))
		return -1;
	st = wait_rsp(c, 0, &rsp, NULL);
	if (st == 0) {
		c->size = le64toh(rsp.size);
		c->lbs = le32toh(rsp.lbs);
		c->max_io = le32toh(rsp.max_io);
		c->exp_flags = le32toh(rsp.export_flags);
		c->open_flags = le32toh(rsp.open_flags);
		c->stage_addr = le64toh(rsp.stage_addr);
		c->stage_rkey = le32toh(rsp.stage_rkey);
		c->stage_len = le32toh(rsp.stage_len);
	}
	return st;
}

/* Connect; false (a failed test, @c closed) when that does not work. */
static bool conn_open_or_report(struct conn *c)
{
	if (!conn_open(c))
		return true;
	report(false, "connect to %s:%s as a block queue", host, port);
	conn_close(c);
	return false;
}

/* Connect and OPEN; false (and a failed test) when that does not work. */
static bool conn_open_export(struct conn *c, const char *name, __u32 flags)
{
	int st;

	if (!conn_open_or_report(c))
		return false;
	st = blk_open(c, name, flags);
	if (st) {
		report(false, "OPEN %s%s (got %s)", name,
		       flags & BLK_OPEN_RO ? " read-only" : "",
		       st < 0 ? "no answer" : status_name(st));
		return false;
	}
	return true;
}

/*
 * An I/O command with no data moved by the client: a READ into the window
 * (bound afresh), or any other opcode. Returns the status or -1. For a READ
 * also checks that the response invalidated the window's key.
 */
static int blk_io(struct conn *c, __u8 op, __u32 tag, __u64 off, __u32 len)
{
	__u32 inv = 0;
	int st;

	if (op == BLK_OP_READ && mw_bind(c))
		return -1;
	cmd_fill(c, op, tag, off, len);
	if (op == BLK_OP_READ) {
		c->cmd->rkey = htole32(c->mw_rkey);
		c->cmd->addr = htole64((uintptr_t)c->data);
	}
	if (send_cmd(c, sizeof(*c->cmd)))
		return -1;
	st = wait_rsp(c, tag, NULL, &inv);
	if (st >= 0 && op == BLK_OP_READ && inv != c->mw_rkey) {
		report(false, "READ's response invalidates the key it named (%#x, got %#x)",
		       c->mw_rkey, inv);
		if (mw_renew(c))
			return -1;
	}
	return st;
}

/*
 * A WRITE of @len bytes of @src, inline in the command's SEND: after the
 * command, or before it where the server's receives take the data first.
 */
static int blk_write_inline(struct conn *c, __u32 tag, __u64 off,
			    const void *src, __u32 len)
{
	cmd_fill(c, BLK_OP_WRITE, tag, off, len);
	c->cmd->flags = BLK_CMD_INLINE;
	memcpy(c->cmd + 1, src, len);
	if (c->data_first ? send_data_first(c, c->cmd + 1, len, c->cmd) :
	    send_cmd(c, sizeof(*c->cmd) + len))
		return -1;
	return wait_rsp(c, tag, NULL, NULL);
}

static void expect_status(int got, int want, const char *what)
{
	if (got == want)
		report(true, "%s -> %s", what, status_name(want));
	else
		report(false, "%s -> %s (got %s)", what, status_name(want),
		       got < 0 ? "no answer" : status_name(got));
}

/* ---- cases -------------------------------------------------------------- */

/* A connect request of another protocol or version: a consumer reject. */
/*
 * The status rdma_cm gives a rejected connect: the IB CM's reason code
 * (consumer defined) on InfiniBand and RoCE; on iWARP the MPA reject
 * arrives as -ECONNRESET. The private data is there on both.
 */
static int reject_status(const struct conn *c)
{
	if (c->c.id->verbs &&
	    c->c.id->verbs->device->transport_type == IBV_TRANSPORT_IWARP)
		return -ECONNRESET;
	return CM_REJ_CONSUMER;
}

static void case_reject(const char *what, __u16 magic, __u8 major, int reason)
{
	enum rdma_cm_event_type type;
	struct conn_rej rej;
	struct conn_req req;
	struct conn c;
	int status = 0;

	if (conn_setup(&c)) {
		report(false, "%s: connection setup", what);
		conn_close(&c);
		return;
	}
	req_pack(&req, magic, major);
	if (conn_send_req(&c, &req) ||
	    cm_next(&c, TIMEOUT_MS, &type, &status, &rej, sizeof(rej))) {
		report(false, "%s: no answer", what);
	} else if (type != RDMA_CM_EVENT_REJECTED) {
		report(false, "%s: rejected (got %s)", what, rdma_event_str(type));
	} else {
		int want = reject_status(&c);

		report(status == want &&
		       le16toh(rej.magic) == PROTO_MAGIC &&
		       rej.major == PROTO_MAJOR && le16toh(rej.reason) == reason,
		       "%s: rejected by the consumer (status %d, want %d), reason %u (want %d)",
		       what, status, want, le16toh(rej.reason), reason);
	}
	conn_close(&c);
}

/* OPEN errors; then the read-only export opened read-only. */
static void case_open_and_ro(void)
{
	static __u8 pat[BLK_INLINE_MAX];
	struct conn c;
	int st;

	if (!conn_open_or_report(&c))
		return;
	report(true, "connect with features BLOCK: accepted, depth %u (asked %u), max_msg %u",
	       c.depth, CLT_DEPTH, c.max_msg);
	expect_status(blk_open(&c, "rdmx-blkcraft-nosuch", 0), ENOENT,
		      "OPEN of a missing export");
	expect_status(blk_open(&c, exp_ro, 0), EACCES,
		      "OPEN of a read-only export without RDMX_BLK_OPEN_RO");
	st = blk_open(&c, exp_ro, BLK_OPEN_RO);
	expect_status(st, 0, "OPEN of a read-only export with RDMX_BLK_OPEN_RO");
	if (st)
		goto out;
	report(c.exp_flags & BLK_EXP_RO, "read-only export: its flags say RO (%#x)",
	       c.exp_flags);
	memset(pat, 0xa5, c.lbs);
	expect_status(blk_write_inline(&c, 1, 0, pat, c.lbs), EROFS,
		      "read-only export: inline WRITE");
	expect_status(blk_io(&c, BLK_OP_DISCARD, 2, 0, c.lbs), EROFS,
		      "read-only export: DISCARD");
	expect_status(blk_io(&c, BLK_OP_WRITE_ZEROES, 3, 0, c.lbs), EROFS,
		      "read-only export: WRITE_ZEROES");
	if (have_mw)
		expect_status(blk_io(&c, BLK_OP_READ, 4, 0, c.lbs), 0,
			      "read-only export: READ");
	else
		skip("read-only export: READ", "no memory windows on this device");
	expect_status(blk_io(&c, BLK_OP_FLUSH, 5, 0, 0), EROFS,
		      "read-only export: FLUSH");
out:
	conn_close(&c);
}

/* A writable export opened read-only: writes refused too. */
static void case_ro_map(void)
{
	static __u8 pat[BLK_INLINE_MAX];
	struct conn c;

	if (conn_open_export(&c, exp_rw, BLK_OPEN_RO)) {
		memset(pat, 0x5a, c.lbs);
		expect_status(blk_write_inline(&c, 1, 0, pat, c.lbs), EROFS,
			      "writable export opened read-only: inline WRITE");
		expect_status(blk_io(&c, BLK_OP_WRITE_ZEROES, 2, 0, c.lbs), EROFS,
			      "writable export opened read-only: WRITE_ZEROES");
	}
	conn_close(&c);
}

/* An extent a command names, and the status it gets. */
struct extent {
	__u64 off;
	__u32 len;
	int want;
	const char *what;
};

/* Extents outside the export, unaligned, empty or too long; data back. */
static void case_extents(void)
{
	static __u8 pat[BLK_INLINE_MAX];
	__u8 op = have_mw ? BLK_OP_READ : BLK_OP_WRITE_ZEROES;
	const char *opn = have_mw ? "READ" : "WRITE_ZEROES";
	char what[128];
	struct conn c;
	__u64 off, top;
	__u32 lbs, i;
	int st;

	if (!conn_open_export(&c, exp_rw, 0)) {
		conn_close(&c);
		return;
	}
	lbs = c.lbs;
	report(c.size >= 16 * lbs && (lbs == 512 || lbs == 4096) && c.max_io &&
	       c.max_io <= c.max_msg && !(c.exp_flags & BLK_EXP_RO),
	       "OPEN %s: size %llu, lbs %u, max_io %u, flags %#x", exp_rw,
	       (unsigned long long)c.size, lbs, c.max_io, c.exp_flags);
	if (c.size < 16 * lbs || (lbs != 512 && lbs != 4096) || !c.max_io) {
		conn_close(&c);
		return;
	}
	top = ~0ULL & ~(__u64)(lbs - 1);
	{
		const struct extent ext[] = {
			{ c.size, lbs, ERANGE, "at the end of the export" },
			{ c.size - lbs, 2 * lbs, ERANGE, "across the end" },
			{ top, lbs, ERANGE, "far beyond the end" },
			{ top - lbs, 2 * lbs, ERANGE, "whose end overflows u64" },
			{ 0, 0, EINVAL, "of zero length" },
			{ lbs / 2, lbs, EINVAL, "at an unaligned offset" },
			{ 0, lbs + 1, EINVAL, "of an unaligned length" },
			{ 0, c.max_io + lbs, EINVAL, "over max_io" },
		};

		for (i = 0; i < ARRAY_SIZE(ext); i++) {
			const struct extent *e = &ext[i];

			snprintf(what, sizeof(what), "%s [%#llx, +%u) %s", opn,
				 (unsigned long long)e->off, e->len, e->what);
			expect_status(blk_io(&c, op, (i + 1) % c.depth, e->off,
					     e->len), e->want, what);
		}
	}
	expect_status(blk_io(&c, BLK_OP_FLUSH, 1, 0, lbs), EINVAL,
		      "FLUSH with a length");

	/* Data: an inline write, read back; zeroed, read back. */
	off = 8 * lbs;
	if (getrandom(pat, lbs, 0) < 0)
		for (i = 0; i < lbs; i++)
			pat[i] = i * 7 + 1;
	st = blk_write_inline(&c, c.depth - 1, off, pat, lbs);
	snprintf(what, sizeof(what), "inline WRITE of %u B at %llu (tag %u, the last)",
		 lbs, (unsigned long long)off, c.depth - 1);
	expect_status(st, 0, what);
	if (!have_mw) {
		skip("READ back of the inline WRITE",
		     "no memory windows on this device: a READ's response invalidates its key");
		goto out;
	}
	memset(c.data, 0, lbs);
	st = blk_io(&c, BLK_OP_READ, 2, off, lbs);
	expect_status(st, 0, "READ of it, into a memory window");
	report(st == 0 && !memcmp(c.data, pat, lbs), "READ: the data came back");
	expect_status(blk_io(&c, BLK_OP_WRITE_ZEROES, 3, off, lbs), 0,
		      "WRITE_ZEROES of it");
	memset(c.data, 0xff, lbs);
	st = blk_io(&c, BLK_OP_READ, 4, off, lbs);
	for (i = 0; i < lbs && c.data[i] == 0; i++)
		;
	report(st == 0 && i == lbs, "READ after WRITE_ZEROES: zeroes");
out:
	conn_close(&c);
}

/* What a crafted command looks like, before it is sent. */
enum violation {
	V_OPCODE, V_OPCODE0, V_FLAG, V_RESERVED, V_NAME, V_BEFORE_OPEN,
	V_TAG, V_SHORT, V_INLINE_NODATA, V_DATA_NOINLINE, V_OPEN_AGAIN,
	V_OPEN_FLAG, V_INLINE_READ, V_INLINE_KEY,
};

static const char *const violation_name[] = {
	[V_OPCODE] = "unknown opcode 77",
	[V_OPCODE0] = "opcode 0",
	[V_FLAG] = "unknown flag bit 7",
	[V_RESERVED] = "non-zero reserved0",
	[V_NAME] = "a name on a FLUSH",
	[V_BEFORE_OPEN] = "a FLUSH before OPEN",
	[V_TAG] = "a tag equal to the granted depth",
	[V_SHORT] = "a command of 90 bytes",
	[V_INLINE_NODATA] = "INLINE without data",
	[V_DATA_NOINLINE] = "data after a WRITE_ZEROES (no INLINE)",
	[V_OPEN_AGAIN] = "a second OPEN",
	[V_OPEN_FLAG] = "an OPEN with an unknown flag",
	[V_INLINE_READ] = "an inline READ on a queue opened without them",
	[V_INLINE_KEY] = "an inline WRITE that names a key",
};

/* A protocol error: the server must disconnect without answering. */
static void case_violation(enum violation v)
{
	const char *what = violation_name[v];
	size_t len = sizeof(struct blk_cmd);
	struct conn c;
	int ret;

	if (v == V_BEFORE_OPEN || v == V_OPEN_FLAG) {
		if (conn_open(&c)) {
			report(false, "%s: connect", what);
			conn_close(&c);
			return;
		}
	} else if (!conn_open_export(&c, exp_rw, 0)) {
		conn_close(&c);
		return;
	}
	cmd_fill(&c, BLK_OP_FLUSH, 1, 0, 0);
	switch (v) {
	case V_OPCODE:
		c.cmd->opcode = 77;
		break;
	case V_OPCODE0:
		c.cmd->opcode = 0;
		break;
	case V_FLAG:
		c.cmd->flags = BIT(7);
		break;
	case V_RESERVED:
		c.cmd->reserved0 = htole16(1);
		break;
	case V_NAME:
		c.cmd->name[63] = 'x';
		break;
	case V_BEFORE_OPEN:
		break;
	case V_TAG:
		c.cmd->tag = htole32(c.depth);
		break;
	case V_SHORT:
		len = 90;
		break;
	case V_INLINE_NODATA:
		cmd_fill(&c, BLK_OP_WRITE, 1, 0, c.lbs);
		c.cmd->flags = BLK_CMD_INLINE;
		break;
	case V_INLINE_READ:
		cmd_fill(&c, BLK_OP_READ, 1, 0, c.lbs);
		c.cmd->flags = BLK_CMD_INLINE;
		break;
	case V_INLINE_KEY:
		cmd_fill(&c, BLK_OP_WRITE, 1, 0, c.lbs);
		c.cmd->flags = BLK_CMD_INLINE;
		c.cmd->rkey = htole32(0x1234);	/* never used: refused first */
		memset(c.cmd + 1, 0xee, c.lbs);
		len += c.lbs;
		break;
	case V_DATA_NOINLINE:
		cmd_fill(&c, BLK_OP_WRITE_ZEROES, 1, 0, c.lbs);
		memset(c.cmd + 1, 0xee, c.lbs);
		len += c.lbs;
		break;
	case V_OPEN_AGAIN:
	case V_OPEN_FLAG:
		cmd_fill(&c, BLK_OP_OPEN, 1, 0,
			 v == V_OPEN_FLAG ? BLK_OPEN_UNKNOWN : 0);
		memcpy(c.cmd->name, exp_rw, strnlen(exp_rw, sizeof(c.cmd->name)));
		break;
	}
	/*
	 * The server may drop the connection before this side reports the
	 * SEND done (siw): a SEND flushed by that is the expected outcome.
	 */
	if (send_cmd(&c, len) && c.wc_err != IBV_WC_WR_FLUSH_ERR) {
		report(false, "%s: the SEND completes", what);
		conn_close(&c);
		return;
	}
	if (c.wc_err)
		note("%s: the SEND was flushed: the connection went first", what);
	ret = wait_disconnect(&c);
	report(ret == 1, "%s -> disconnected%s", what,
	       ret == 0 ? " (got an answer)" : ret < 0 ? " (timed out)" : "");
	conn_close(&c);
}

/*
 * Two commands with one tag, sent back to back: when the second arrives
 * before the first is answered, the server must disconnect. Whether it does
 * is a race the server usually loses; an answer to both is no failure.
 */
static void case_busy_tag(void)
{
	const char *what = "two commands with one tag, back to back";
	struct conn c;
	int ret;

	if (!conn_open_export(&c, exp_rw, 0)) {
		conn_close(&c);
		return;
	}
	cmd_fill(&c, BLK_OP_WRITE_ZEROES, 1, 0, c.max_io);
	if (send_cmd_n(&c, sizeof(*c.cmd), 2, false)) {
		report(false, "%s: the SENDs complete", what);
		conn_close(&c);
		return;
	}
	ret = wait_disconnect(&c);
	if (ret == 1) {
		report(true, "%s -> disconnected", what);
	} else if (ret == 0) {
		/* Both answered: the first was done before the second came. */
		usleep(500 * 1000);
		pump(&c);
		if (c.nr_got == 2 && !c.disconnected)
			skip(what, "the first was answered before the second arrived");
		else
			report(c.disconnected, "%s -> disconnected (%u answers)",
			       what, c.nr_got);
	} else {
		report(false, "%s -> disconnected (timed out)", what);
	}
	conn_close(&c);
}

/*
 * Two OPENs of one export, sent back to back with tags of their own. The
 * server runs commands side by side, so this races its OPEN against itself:
 * the second must find the queue bound and end the connection (a second
 * OPEN is a protocol error), whichever runs first; a queue bound twice
 * answers both. Repeated, each time on a new connection, so that the race
 * is driven rather than hoped for; the export must be left with no queue
 * (the script checks its clients count and removes it afterwards).
 */
static void case_open_race(unsigned int rounds)
{
	const char *what = "two OPENs back to back";
	unsigned int i, ok_answers, twice = 0, stuck = 0, errs = 0, sendfail = 0;
	long long end;

	for (i = 0; i < rounds; i++) {
		struct conn c;

		if (conn_open(&c)) {
			errs++;
			conn_close(&c);
			break;
		}
		cmd_fill(&c, BLK_OP_OPEN, 0, 0, 0);
		memcpy(c.cmd->name, exp_rw, strnlen(exp_rw, sizeof(c.cmd->name)));
		c.cmd[1] = c.cmd[0];
		c.cmd[1].tag = htole32(1);
		/*
		 * A send may complete in error when the server has already
		 * ended the connection: flushed, or over siw the one still
		 * in flight with LOC_QP_OP_ERR. Only a send that never
		 * completes fails here; the wait below wants the disconnect.
		 */
		if (send_cmd_n(&c, sizeof(*c.cmd), 2, true)) {
			if (!c.wc_err) {
				errs++;
				conn_close(&c);
				break;
			}
			if (c.wc_err != IBV_WC_WR_FLUSH_ERR)
				sendfail++;
		}
		end = now_ms() + TIMEOUT_MS;
		while (!c.disconnected && !c.flushed && now_ms() < end) {
			pump(&c);
			usleep(200);
		}
		for (ok_answers = 0; c.nr_got; c.nr_got--)
			ok_answers += le32toh(c.got[c.nr_got - 1].rsp.status) == 0;
		if (ok_answers > 1)
			twice++;
		else if (!c.disconnected && !c.flushed)
			stuck++;
		conn_close(&c);
	}
	if (errs)
		note("%s: round %u: connect failed or a send timed out",
		     what, i + 1);
	if (sendfail)
		note("%s: in %u round(s) a send completed in error, not flushed",
		     what, sendfail);
	report(!errs && !twice && !stuck,
	       "%s, %u rounds -> disconnected each time (bound twice %u, no disconnect %u)",
	       what, rounds, twice, stuck);
}

/* After all that, the server still serves a well-behaved client. */
static void case_still_serves(void)
{
	static __u8 pat[BLK_INLINE_MAX];
	struct conn c;
	int st;

	if (!conn_open_export(&c, exp_rw, 0)) {
		conn_close(&c);
		return;
	}
	memset(pat, 0x3c, c.lbs);
	st = blk_write_inline(&c, 1, c.size - c.lbs, pat, c.lbs);
	expect_status(st, 0, "afterwards: inline WRITE of the last block");
	if (have_mw) {
		memset(c.data, 0, c.lbs);
		st = blk_io(&c, BLK_OP_READ, 2, c.size - c.lbs, c.lbs);
		report(st == 0 && !memcmp(c.data, pat, c.lbs),
		       "afterwards: READ of the last block, data back (status %s)",
		       st < 0 ? "none" : status_name(st));
	}
	conn_close(&c);
}

/* ---- command batches (RDMX_BLK_OPEN_CMD_BATCH) -------------------------- */

/* The batches read blocks from this one of EXPORT on (and write them). */
#define BATCH_BLOCK		32
/* An answer that must not come: waited for this long after the last. */
#define BATCH_QUIET_MS		500

/* What the blocks the batches read hold: random, each its own. */
static __u8 batch_pat[BLK_BATCH_MAX + 1][BLK_INLINE_MAX];

/*
 * A connection for a batch case: queue depth BATCH_DEPTH, receives with
 * room for an inline READ's data, export @name OPENed with @flags, which
 * must grant INLINE_READ and CMD_BATCH as asked. False (a failed test, @c
 * closed) when any of that fails.
 */
static bool batch_conn(struct conn *c, const char *what, const char *name,
		       __u32 flags)
{
	const __u32 must = BLK_OPEN_INLINE_READ | BLK_OPEN_CMD_BATCH;
	int st;

	if (conn_open_full(c, NULL, 1, BATCH_DEPTH, RSP_SLOT_INLINE)) {
		report(false, "%s: connect as a block queue of depth %u", what,
		       BATCH_DEPTH);
		goto fail;
	}
	if ((flags & BLK_OPEN_CMD_BATCH) && c->minor < MINOR_CMD_BATCH) {
		report(false, "%s: the server is of minor %u, not %u or later: no command batches",
		       what, c->minor, MINOR_CMD_BATCH);
		goto fail;
	}
	st = blk_open(c, name, flags);
	if (st) {
		report(false, "%s: OPEN %s with flags %#x (got %s)", what, name,
		       flags, st < 0 ? "no answer" : status_name(st));
		goto fail;
	}
	if ((c->open_flags & must) != (flags & must)) {
		report(false, "%s: OPEN %s grants flags %#x (asked %#x)", what,
		       name, c->open_flags, flags);
		goto fail;
	}
	if (c->lbs > BLK_INLINE_MAX || (c->lbs != 512 && c->lbs != 4096) ||
	    c->size < (__u64)(BATCH_BLOCK + BLK_BATCH_MAX + 1) * c->lbs) {
		report(false, "%s: OPEN %s: size %llu, lbs %u: too small", what,
		       name, (unsigned long long)c->size, c->lbs);
		goto fail;
	}
	return true;
fail:
	conn_close(c);
	return false;
}

/* Command @i of the batch in c->cmd: an inline READ of batch block @blk. */
static void batch_read(struct conn *c, unsigned int i, __u32 tag,
		       unsigned int blk)
{
	cmd_fill_at(&c->cmd[i], BLK_OP_READ, tag,
		    (__u64)(BATCH_BLOCK + blk) * c->lbs, c->lbs);
	c->cmd[i].flags = BLK_CMD_INLINE;
}

/* Write batch blocks 0 to @n - 1 with their data (inline WRITEs, one by one). */
static bool batch_write_blocks(struct conn *c, const char *what, unsigned int n)
{
	unsigned int i;
	int st;

	for (i = 0; i < n; i++) {
		st = blk_write_inline(c, 0, (__u64)(BATCH_BLOCK + i) * c->lbs,
				      batch_pat[i], c->lbs);
		if (st) {
			report(false, "%s: inline WRITE of block %u (got %s)",
			       what, BATCH_BLOCK + i,
			       st < 0 ? "no answer" : status_name(st));
			return false;
		}
	}
	return true;
}

/*
 * Collect the answers to the @n commands of the batch in c->cmd (tags of
 * their own) into @out, by command, until each came or the connection
 * ended or TIMEOUT_MS passed (one that did not come: all zero in @out);
 * events are passed over. Returns how many
 * came, or -1 (a failed test) when one answered no command of the batch
 * or one twice.
 */
static int batch_collect(struct conn *c, const char *what, unsigned int n,
			 struct got *out)
{
	long long end = now_ms() + TIMEOUT_MS;
	bool seen[BLK_BATCH_MAX + 1] = { false };
	unsigned int i, k, nr = 0;
	struct got g;
	__u32 tag;

	/* One not answered stays all zero: its length 0. */
	memset(out, 0, n * sizeof(*out));
	while (nr < n) {
		pump(c);
		while (c->nr_got && nr < n) {
			got_take(c, 0, &g);
			tag = le32toh(g.rsp.tag);
			if (tag == BLK_TAG_EVENT)
				continue;
			for (k = n, i = 0; i < n; i++)
				if (le32toh(c->cmd[i].tag) == tag)
					k = i;
			if (k == n || seen[k]) {
				report(false, "%s: an answer to tag %u (status %s), %s",
				       what, tag,
				       status_name(le32toh(g.rsp.status)),
				       k == n ? "no command of the batch" :
				       "answered twice");
				return -1;
			}
			seen[k] = true;
			out[k] = g;
			nr++;
		}
		if (nr == n || c->disconnected || c->flushed ||
		    now_ms() > end)
			break;
		usleep(200);
	}
	return nr;
}

/*
 * After a batch was answered: a FLUSH on the same queue is answered too,
 * and no other answer came in between.
 */
static void batch_serves_on(struct conn *c, const char *what)
{
	int st = blk_io(c, BLK_OP_FLUSH, 0, 0, 0);

	report(st == 0 && !c->nr_got,
	       "%s: the queue serves on (a FLUSH after it: %s, %u other answers)",
	       what, st < 0 ? "no answer" : status_name(st), c->nr_got);
}

/*
 * A valid batch of @n inline READs, batch block @n - 1 - i with tag i
 * (the blocks in reverse): each answered once, status 0, with its
 * block's data; then the queue serves on. @flags: what else the OPEN
 * asks for.
 */
static void case_batch_reads(unsigned int n, __u32 flags)
{
	char what[128];
	struct got out[BLK_BATCH_MAX];
	unsigned int i, bad = 0;
	struct conn c;
	int nr;

	snprintf(what, sizeof(what), "command batch of %u inline READs%s", n,
		 flags & BLK_OPEN_BATCH ?
		 " (queue asking for responses together and data with immediate)" :
		 "");
	if (!batch_conn(&c, what, exp_rw, BLK_OPEN_INLINE_READ |
			BLK_OPEN_CMD_BATCH | flags))
		return;
	if (c.depth < n) {
		skip(what, "the queue depth granted is below the batch");
		conn_close(&c);
		return;
	}
	if (!batch_write_blocks(&c, what, n)) {
		conn_close(&c);
		return;
	}
	for (i = 0; i < n; i++)
		batch_read(&c, i, i, n - 1 - i);
	if (send_cmd(&c, n * sizeof(*c.cmd))) {
		report(false, "%s: the SEND completes", what);
		conn_close(&c);
		return;
	}
	nr = batch_collect(&c, what, n, out);
	if (nr < 0) {
		conn_close(&c);
		return;
	}
	for (i = 0; i < n; i++) {
		if (le32toh(out[i].rsp.status) ||
		    out[i].len != sizeof(out[i].rsp) + c.lbs ||
		    out[i].sum != fnv1a(batch_pat[n - 1 - i], c.lbs)) {
			if (!bad++)
				note("%s: tag %u: status %s, %u bytes, %s data",
				     what, i,
				     status_name(le32toh(out[i].rsp.status)),
				     out[i].len,
				     out[i].sum == fnv1a(batch_pat[n - 1 - i], c.lbs) ?
				     "its" : "other");
		}
	}
	report(nr == (int)n && !bad,
	       "%s: every tag answered once, with its block's data (%d answers, %u wrong)",
	       what, nr, bad);
	if (nr == (int)n && !c.disconnected && !c.flushed)
		batch_serves_on(&c, what);
	else
		report(false, "%s: the queue serves on (%s)", what,
		       c.disconnected || c.flushed ? "disconnected" : "timed out");
	conn_close(&c);
}

/*
 * A valid batch of three inline READs whose second lies past the export's
 * end: that one answered ERANGE (a response alone), the others with their
 * blocks, and the queue kept.
 */
static void case_batch_erange(void)
{
	const char *what = "command batch whose second READ lies past the end";
	struct got out[3];
	unsigned int i;
	struct conn c;
	bool ok;
	int nr;

	if (!batch_conn(&c, what, exp_rw, BLK_OPEN_INLINE_READ |
			BLK_OPEN_CMD_BATCH))
		return;
	if (!batch_write_blocks(&c, what, 3)) {
		conn_close(&c);
		return;
	}
	for (i = 0; i < 3; i++)
		batch_read(&c, i, i + 1, i);
	c.cmd[1].offset = htole64(c.size);
	if (send_cmd(&c, 3 * sizeof(*c.cmd))) {
		report(false, "%s: the SEND completes", what);
		conn_close(&c);
		return;
	}
	nr = batch_collect(&c, what, 3, out);
	if (nr < 0) {
		conn_close(&c);
		return;
	}
	ok = nr == 3 && le32toh(out[1].rsp.status) == ERANGE &&
	     out[1].len == sizeof(out[1].rsp);
	report(ok, "%s: it is answered ERANGE, alone (%s)", what,
	       nr < 3 ? "not all answered" :
	       status_name(le32toh(out[1].rsp.status)));
	ok = nr == 3;
	for (i = 0; ok && i < 3; i += 2)
		ok = !out[i].rsp.status &&
		     out[i].len == sizeof(out[i].rsp) + c.lbs &&
		     out[i].sum == fnv1a(batch_pat[i], c.lbs);
	report(ok, "%s: the others are answered with their blocks", what);
	if (nr == 3 && !c.disconnected && !c.flushed)
		batch_serves_on(&c, what);
	else
		report(false, "%s: the queue serves on (%s)", what,
		       c.disconnected || c.flushed ? "disconnected" : "timed out");
	conn_close(&c);
}

/*
 * After SENDs the server must refuse (@sent: 0, or -1 when they did not
 * all complete well): the connection ends, and nothing is answered. SENDs
 * that complete in error, or never, as the server drops the connection
 * (flushed, or unacknowledged after it went) are no failure.
 */
static void expect_refused(struct conn *c, const char *what, int sent)
{
	int ret;

	if (sent)
		note("%s: not every SEND completed (status %d): the connection went first",
		     what, c->wc_err);
	ret = wait_disconnect(c);
	report(ret == 1, "%s -> disconnected, nothing answered%s", what,
	       ret == 0 ? " (got an answer)" : ret < 0 ? " (timed out)" : "");
}

/* What a batch the server must refuse whole is made of. */
enum batch_bad {
	BB_NOT_ASKED, BB_LENGTH, BB_17, BB_OPEN, BB_INLINE_WRITE, BB_TAG_TWICE,
};

static const char *const batch_bad_name[] = {
	[BB_NOT_ASKED] = "two commands in one SEND on a queue that did not ask for CMD_BATCH",
	[BB_LENGTH] = "a command batch of 2 * 96 + 8 bytes",
	[BB_17] = "a command batch of 17 commands",
	[BB_OPEN] = "a command batch holding an OPEN",
	[BB_INLINE_WRITE] = "a command batch whose second command is an inline WRITE",
	[BB_TAG_TWICE] = "a command batch with a tag twice",
};

/*
 * A batch the server must refuse whole: the connection ends, and none of
 * its commands is answered (all are checked before any runs).
 */
static void case_batch_bad(enum batch_bad b)
{
	const char *what = batch_bad_name[b];
	size_t len = 2 * sizeof(struct blk_cmd);
	struct conn c;
	unsigned int i;

	if (!batch_conn(&c, what, exp_rw, BLK_OPEN_INLINE_READ |
			(b == BB_NOT_ASKED ? 0 : BLK_OPEN_CMD_BATCH)))
		return;
	if (b == BB_NOT_ASKED)
		report(!(c.open_flags & BLK_OPEN_CMD_BATCH),
		       "a queue that did not ask for CMD_BATCH is not granted it (flags %#x)",
		       c.open_flags);
	batch_read(&c, 0, 0, 0);
	batch_read(&c, 1, 1, 1);
	switch (b) {
	case BB_NOT_ASKED:
		break;
	case BB_LENGTH:
		memset(c.cmd + 2, 0, 8);
		len += 8;
		break;
	case BB_17:
		if (c.depth < BLK_BATCH_MAX + 1) {
			skip(what, "the queue depth granted is below 17");
			conn_close(&c);
			return;
		}
		for (i = 0; i < BLK_BATCH_MAX + 1; i++)
			batch_read(&c, i, i, i);
		len = (BLK_BATCH_MAX + 1) * sizeof(struct blk_cmd);
		break;
	case BB_OPEN:
		cmd_fill_at(&c.cmd[1], BLK_OP_OPEN, 1, 0, 0);
		memcpy(c.cmd[1].name, exp_rw,
		       strnlen(exp_rw, sizeof(c.cmd[1].name)));
		break;
	case BB_INLINE_WRITE:
		cmd_fill_at(&c.cmd[1], BLK_OP_WRITE, 1,
			    (__u64)BATCH_BLOCK * c.lbs, c.lbs);
		c.cmd[1].flags = BLK_CMD_INLINE;
		break;
	case BB_TAG_TWICE:
		batch_read(&c, 2, 0, 2);
		len = 3 * sizeof(struct blk_cmd);
		break;
	}
	expect_refused(&c, what, send_cmd(&c, len));
	conn_close(&c);
}

/*
 * A batch reusing the tag of a command in flight: inline READ tag 1 alone,
 * then a batch of READs tag 2 and tag 1. On @slow (an export whose every
 * request takes seconds) the READ is sent and the batch follows once it is
 * clear the READ is in flight; else (EXPORT) a WRITE_ZEROES of max_io with
 * tag 1 and the batch go in one post, a race: when the server answered the
 * WRITE_ZEROES before the batch came, the batch is valid and the case is
 * skipped. Else the connection must end with the batch not answered (tag
 * 2 never, tag 1 at most once: the command in flight may be answered
 * first).
 */
static void case_batch_busy(const char *slow)
{
	const char *what = slow ?
		"a command batch reusing the tag of a READ in flight on a slow export" :
		"a command batch reusing the tag of a command sent with it";
	const struct blk_cmd *at[2];
	unsigned int tag1 = 0, tag2 = 0, other = 0;
	__u32 zeroes;
	long long end, quiet;
	size_t lens[2];
	struct conn c;
	struct got g;
	__u32 tag;
	int ret;

	/* Read-only: the slow export may still have a writer going away. */
	if (!batch_conn(&c, what, slow ? slow : exp_rw,
			BLK_OPEN_INLINE_READ | BLK_OPEN_CMD_BATCH |
			(slow ? BLK_OPEN_RO : 0)))
		return;
	if (slow) {
		batch_read(&c, 0, 1, 0);
		if (send_cmd(&c, sizeof(*c.cmd))) {
			report(false, "%s: the READ's SEND completes", what);
			conn_close(&c);
			return;
		}
		end = now_ms() + 1000;
		while (!c.nr_got && now_ms() < end) {
			pump(&c);
			usleep(1000);
		}
		if (c.nr_got) {
			skip(what, "the READ was answered within 1 s: not slow");
			conn_close(&c);
			return;
		}
		batch_read(&c, 0, 2, 1);
		batch_read(&c, 1, 1, 2);
		ret = send_cmd(&c, 2 * sizeof(*c.cmd));
	} else {
		/* The most a command does, at the export's end. */
		zeroes = c.max_io < c.size ? c.max_io : c.size;
		zeroes -= zeroes % c.lbs;
		cmd_fill_at(&c.cmd[0], BLK_OP_WRITE_ZEROES, 1,
			    c.size - zeroes, zeroes);
		batch_read(&c, 1, 2, 1);
		batch_read(&c, 2, 1, 2);
		at[0] = c.cmd;
		at[1] = c.cmd + 1;
		lens[0] = sizeof(*c.cmd);
		lens[1] = 2 * sizeof(*c.cmd);
		ret = send_chain(&c, at, lens, 2);
	}
	/*
	 * A SEND may complete in error once the server ended the connection:
	 * flushed, or over siw the one still in flight with LOC_QP_OP_ERR
	 * (see case_open_race()). Only one that never completes fails here.
	 */
	if (ret && !c.wc_err) {
		report(false, "%s: the SENDs complete", what);
		conn_close(&c);
		return;
	}
	if (c.wc_err)
		note("%s: a SEND completed with status %d: the connection went first",
		     what, c.wc_err);
	/* Until the end, or all three answered and nothing more for a while. */
	end = now_ms() + TIMEOUT_MS;
	quiet = 0;
	for (;;) {
		pump(&c);
		while (c.nr_got) {
			got_take(&c, 0, &g);
			tag = le32toh(g.rsp.tag);
			if (tag == 1)
				tag1++;
			else if (tag == 2)
				tag2++;
			else if (tag != BLK_TAG_EVENT)
				other++;
			quiet = now_ms() + BATCH_QUIET_MS;
		}
		if (c.disconnected || c.flushed || now_ms() > end ||
		    (tag1 + tag2 >= 3 && now_ms() > quiet))
			break;
		usleep(200);
	}
	if (!slow && !c.disconnected && !c.flushed && tag1 == 2 && tag2 == 1 &&
	    !other)
		skip(what, "the command was answered before the batch came");
	else
		report((c.disconnected || c.flushed) && tag1 <= 1 && !tag2 &&
		       !other,
		       "%s -> disconnected, the batch not answered (answers: tag 1 %u, tag 2 %u, others %u%s)",
		       what, tag1, tag2, other,
		       c.disconnected || c.flushed ? "" : "; no disconnect");
	conn_close(&c);
}

/* ---- data first, and alone (minor 3, RDMX_BLK_OPEN_WRITE_IMM) --------- */

/*
 * batch_conn() as a client of MINOR_DATA_FIRST: the server's receives
 * take the data first. False (a failed test, @c closed) when it is not.
 */
static bool data_first_conn(struct conn *c, const char *what, __u32 flags)
{
	bool ok;

	req_minor = MINOR_DATA_FIRST;
	ok = batch_conn(c, what, exp_rw, flags);
	req_minor = MINOR_CMD_BATCH;
	if (ok && !c->data_first) {
		report(false, "%s: the server is of minor %u, not %u or later",
		       what, c->minor, MINOR_DATA_FIRST);
		conn_close(c);
		return false;
	}
	return ok;
}

/*
 * Read @len bytes at @off with an inline READ alone (tag @tag): its
 * status, or -1 (no answer, or one of the wrong size); the FNV-1a of its
 * data in *@sum.
 */
static int read_inline(struct conn *c, __u32 tag, __u64 off, __u32 len,
		       __u64 *sum)
{
	long long end = now_ms() + TIMEOUT_MS;
	unsigned int i;
	struct got g;

	cmd_fill(c, BLK_OP_READ, tag, off, len);
	c->cmd->flags = BLK_CMD_INLINE;
	if (send_cmd(c, sizeof(*c->cmd)))
		return -1;
	for (;;) {
		pump(c);
		for (i = 0; i < c->nr_got; i++) {
			if (le32toh(c->got[i].rsp.tag) != tag)
				continue;
			got_take(c, i, &g);
			*sum = g.sum;
			if (!g.rsp.status && g.len != sizeof(g.rsp) + len)
				return -1;
			return le32toh(g.rsp.status);
		}
		if (c->disconnected || c->flushed || now_ms() > end)
			return -1;
		usleep(200);
	}
}

/* Whether batch block @blk holds the @len bytes of @pat. */
static bool block_holds(struct conn *c, const char *what, unsigned int blk,
			const __u8 *pat, __u32 len)
{
	__u64 sum = 0;
	int st;

	st = read_inline(c, 0, (__u64)(BATCH_BLOCK + blk) * c->lbs, len, &sum);
	if (st || sum != fnv1a(pat, len)) {
		note("%s: block %u: READ %s, %s data", what, BATCH_BLOCK + blk,
		     st < 0 ? "not answered" : status_name(st),
		     sum == fnv1a(pat, len) ? "its" : "other");
		return false;
	}
	return true;
}

/*
 * A server of minor 3 and a client that says it is: inline WRITEs with
 * their command after their data, one block (the command in the page) and
 * 4 KiB (the command in the receive's header buffer), then read back.
 */
static void case_data_first(void)
{
	const char *what = "inline WRITEs with their command after their data (minor 3)";
	struct conn c;
	int st1, st2;

	if (!data_first_conn(&c, what,
			     BLK_OPEN_INLINE_READ | BLK_OPEN_CMD_BATCH))
		return;
	st1 = blk_write_inline(&c, 1, (__u64)BATCH_BLOCK * c.lbs, batch_pat[1],
			       c.lbs);
	st2 = blk_write_inline(&c, 2, (__u64)(BATCH_BLOCK + 1) * c.lbs,
			       batch_pat[2], BLK_INLINE_MAX);
	report(!st1 && !st2, "%s: answered (%s, %s)", what,
	       st1 < 0 ? "no answer" : status_name(st1),
	       st2 < 0 ? "no answer" : status_name(st2));
	report(block_holds(&c, what, 1, batch_pat[2], BLK_INLINE_MAX) &&
	       block_holds(&c, what, 0, batch_pat[1], c.lbs),
	       "%s: the blocks hold what was written", what);
	conn_close(&c);
}

/*
 * RDMX_BLK_OPEN_WRITE_IMM: a batch of four inline WRITEs and two inline
 * READs, the WRITEs' data alone after it in reverse order, each with its
 * tag as immediate data: all answered, status 0, the READs with their
 * blocks' data, and the written blocks hold what was written.
 */
static void case_write_imm(void)
{
	const char *what = "a batch of 4 inline WRITEs and 2 READs, the data alone after it";
	static const unsigned int wblk[4] = { 0, 1, 2, 3 }, rblk[2] = { 4, 5 };
	struct got out[6];
	__u32 dlen[4], imm[4];
	unsigned int i, bad = 0;
	struct conn c;
	int nr;

	if (!data_first_conn(&c, what, BLK_OPEN_INLINE_READ |
			     BLK_OPEN_CMD_BATCH | BLK_OPEN_WRITE_IMM))
		return;
	if (!(c.open_flags & BLK_OPEN_WRITE_IMM)) {
		skip(what, "WRITE_IMM not granted (iWARP has no immediate data)");
		conn_close(&c);
		return;
	}
	for (i = 0; i < 2; i++)
		if (blk_write_inline(&c, 0, (__u64)(BATCH_BLOCK + rblk[i]) * c.lbs,
				     batch_pat[rblk[i]], c.lbs)) {
			report(false, "%s: the READs' blocks written", what);
			conn_close(&c);
			return;
		}
	/* Commands: W0 R4 W1 W2 R5 W3, tags 0 to 5. */
	for (i = 0; i < 6; i++) {
		unsigned int w = i == 0 ? 0 : i == 2 ? 1 : i == 3 ? 2 : 3;

		if (i == 1 || i == 4) {
			batch_read(&c, i, i, rblk[i == 4]);
			continue;
		}
		cmd_fill_at(&c.cmd[i], BLK_OP_WRITE, i,
			    (__u64)(BATCH_BLOCK + wblk[w]) * c.lbs, c.lbs);
		c.cmd[i].flags = BLK_CMD_INLINE;
		/* Data SENDs in reverse: W3's first. */
		memcpy(c.data + (3 - w) * BLK_INLINE_MAX, batch_pat[8 + w], c.lbs);
		dlen[3 - w] = c.lbs;
		imm[3 - w] = i;
	}
	if (send_with_data(&c, 6 * sizeof(*c.cmd), 4, dlen, imm)) {
		report(false, "%s: the SENDs complete", what);
		conn_close(&c);
		return;
	}
	nr = batch_collect(&c, what, 6, out);
	if (nr < 0) {
		conn_close(&c);
		return;
	}
	for (i = 0; i < 6; i++) {
		bool rd = i == 1 || i == 4;

		if (le32toh(out[i].rsp.status) ||
		    out[i].len != sizeof(out[i].rsp) + (rd ? c.lbs : 0) ||
		    (rd && out[i].sum != fnv1a(batch_pat[rblk[i == 4]], c.lbs))) {
			if (!bad++)
				note("%s: tag %u: status %s, %u bytes", what, i,
				     status_name(le32toh(out[i].rsp.status)),
				     out[i].len);
		}
	}
	report(nr == 6 && !bad,
	       "%s: every tag answered once, status 0, the READs with their data (%d answers, %u wrong)",
	       what, nr, bad);
	for (i = 0; i < 4; i++)
		if (!block_holds(&c, what, wblk[i], batch_pat[8 + i], c.lbs))
			bad++;
	report(!bad, "%s: the written blocks hold their data", what);
	if (!c.disconnected && !c.flushed)
		batch_serves_on(&c, what);
	conn_close(&c);
}

enum write_imm_bad {
	WB_NO_WRITE,
	WB_LENGTH,
	WB_BIG,
	WB_CMD_FIRST,
	WB_NOT_GRANTED,
	WB_MINOR2,
};

static const char *const write_imm_bad_name[] = {
	[WB_NO_WRITE] = "data alone with immediate data for no WRITE",
	[WB_LENGTH] = "a WRITE's data alone, 512 bytes longer than the WRITE",
	[WB_BIG] = "a command batch holding an inline WRITE of 4 KiB + 512",
	[WB_CMD_FIRST] = "an inline WRITE before its data, to a data-first server",
	[WB_NOT_GRANTED] = "data alone with immediate data, WRITE_IMM not asked",
	[WB_MINOR2] = "an inline WRITE in a batch from a client of minor 2",
};

/*
 * What the server must refuse: the connection ends, and nothing is
 * answered (a WRITE waits for its data, a batch is checked whole).
 */
static void case_write_imm_bad(enum write_imm_bad b)
{
	const char *what = write_imm_bad_name[b];
	__u32 flags = BLK_OPEN_INLINE_READ | BLK_OPEN_CMD_BATCH |
		      (b == WB_NOT_GRANTED ? 0 : BLK_OPEN_WRITE_IMM);
	__u32 dlen[2] = { 0 }, imm[2] = { 0 };
	unsigned int nd = 0;
	struct conn c;
	size_t len = 0;

	if (b == WB_MINOR2 ? !batch_conn(&c, what, exp_rw, flags) :
	    !data_first_conn(&c, what, flags))
		return;
	if (b == WB_MINOR2)
		report(!(c.open_flags & BLK_OPEN_WRITE_IMM),
		       "a client of minor 2 is not granted WRITE_IMM (flags %#x)",
		       c.open_flags);
	else if (b != WB_NOT_GRANTED && !(c.open_flags & BLK_OPEN_WRITE_IMM)) {
		skip(what, "WRITE_IMM not granted (iWARP has no immediate data)");
		conn_close(&c);
		return;
	}
	/* Two inline WRITEs of a block each, tags 0 and 1. */
	cmd_fill_at(&c.cmd[0], BLK_OP_WRITE, 0, (__u64)BATCH_BLOCK * c.lbs,
		    c.lbs);
	c.cmd[0].flags = BLK_CMD_INLINE;
	cmd_fill_at(&c.cmd[1], BLK_OP_WRITE, 1,
		    (__u64)(BATCH_BLOCK + 8) * c.lbs, c.lbs);
	c.cmd[1].flags = BLK_CMD_INLINE;
	memset(c.data, 0x5a, 2 * BLK_INLINE_MAX);
	switch (b) {
	case WB_NO_WRITE:
	case WB_NOT_GRANTED:
		nd = 1;
		dlen[0] = c.lbs;
		imm[0] = 3;
		break;
	case WB_LENGTH:
		len = 2 * sizeof(*c.cmd);
		nd = 1;
		dlen[0] = c.lbs + 512;
		break;
	case WB_BIG:
		c.cmd[0].length = htole32(BLK_INLINE_MAX + 512);
		len = 2 * sizeof(*c.cmd);
		nd = 2;
		dlen[0] = BLK_INLINE_MAX;
		dlen[1] = c.lbs;
		imm[1] = 1;
		break;
	case WB_CMD_FIRST:
		memcpy(c.cmd + 1, batch_pat[0], c.lbs);
		len = sizeof(*c.cmd) + c.lbs;
		break;
	case WB_MINOR2:
		len = 2 * sizeof(*c.cmd);
		nd = 2;
		dlen[0] = c.lbs;
		dlen[1] = c.lbs;
		imm[1] = 1;
		break;
	}
	expect_refused(&c, what, nd ? send_with_data(&c, len, nd, dlen, imm) :
			   send_cmd(&c, len));
	conn_close(&c);
}

/* Random blocks, each its own, for the batches and the staging area. */
static void batch_pat_fill(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(batch_pat); i++) {
		if (getrandom(batch_pat[i], sizeof(batch_pat[i]), 0) !=
		    sizeof(batch_pat[i]))
			memset(batch_pat[i], 0x11 * (i + 1), sizeof(batch_pat[i]));
		batch_pat[i][0] = i;
	}
}

/* Every batch case, on connections of their own. */
static void cases_batch(void)
{
	enum write_imm_bad w;
	enum batch_bad b;
	__u32 imm = BLK_OPEN_IMM_READ;

	batch_pat_fill();
	case_batch_reads(4, 0);
	case_batch_reads(BLK_BATCH_MAX, 0);
	case_batch_reads(BLK_BATCH_MAX, BLK_OPEN_BATCH | imm);
	case_batch_erange();
	for (b = BB_NOT_ASKED; b <= BB_TAG_TWICE; b++)
		case_batch_bad(b);
	case_batch_busy(NULL);
	case_data_first();
	case_write_imm();
	for (w = WB_NO_WRITE; w <= WB_MINOR2; w++)
		case_write_imm_bad(w);
}

/* ---- the staging area (minor 4, RDMX_BLK_OPEN_STAGE) ------------------ */

/* The staged WRITEs write EXPORT from this byte on, a slot's worth each. */
#define STAGE_OFF		(1024 * 1024)

/* Whether the OPEN granted a staging area of the protocol's form. */
static bool stage_granted(const struct conn *c)
{
	return (c->open_flags & BLK_OPEN_STAGE) && c->stage_addr &&
	       c->stage_rkey &&
	       c->stage_len >= (c->depth - 1) * BLK_STAGE_SLOT &&
	       !(c->stage_len % BLK_STAGE_SLOT) && c->stage_len <= BLK_STAGE_MAX;
}

/*
 * batch_conn() as a client of MINOR_STAGE, asking for inline reads and
 * @flags; with RDMX_BLK_OPEN_STAGE the area must be granted. False (a
 * failed test, @c closed) when any of that fails.
 */
static bool stage_conn(struct conn *c, const char *what, __u32 flags)
{
	bool ok;

	req_minor = MINOR_STAGE;
	ok = batch_conn(c, what, exp_rw, BLK_OPEN_INLINE_READ | flags);
	req_minor = MINOR_CMD_BATCH;
	if (!ok)
		return false;
	if (c->minor >= MINOR_STAGE && c->size >= STAGE_OFF + BLK_MAX_IO &&
	    (!(flags & BLK_OPEN_STAGE) || stage_granted(c)))
		return true;
	report(false, "%s: server of minor %u (want %u), export of %llu bytes",
	       what, c->minor, MINOR_STAGE, (unsigned long long)c->size);
	note("%s: flags %#x granted, staging area at %#llx, key %#x, %u bytes for depth %u",
	     what, c->open_flags, (unsigned long long)c->stage_addr,
	     c->stage_rkey, c->stage_len, c->depth);
	conn_close(c);
	return false;
}

/*
 * One RDMA WRITE (@read: READ) of @len bytes between c->data and @addr,
 * key @rkey, and wait for it: 0, its failed completion's status, or -1
 * (none in time).
 */
static int stage_rdma(struct conn *c, bool read, __u64 addr, __u32 rkey,
		      __u32 len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)c->data, .length = len, .lkey = c->c.mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = WR_RDMA,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = read ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = addr, .rkey = rkey },
	}, *bad;
	long long end = now_ms() + TIMEOUT_MS;

	c->rdma_done = false;
	if (ibv_post_send(c->c.id->qp, &wr, &bad))
		return -1;
	while (!c->rdma_done && !c->wc_err && now_ms() < end) {
		pump(c);
		usleep(200);
	}
	return c->rdma_done ? 0 : c->wc_err ? c->wc_err : -1;
}

static const char *stage_rdma_str(int st)
{
	return st > 0 ? ibv_wc_status_str(st) : st ? "none in time" : "success";
}

/* Command @i of c->cmd: a staged WRITE of @len bytes at @addr to @off. */
static void stage_cmd(struct conn *c, unsigned int i, __u32 tag, __u64 off,
		      __u32 len, __u64 addr)
{
	cmd_fill_at(&c->cmd[i], BLK_OP_WRITE, tag, off, len);
	c->cmd[i].flags = BLK_CMD_STAGED;
	c->cmd[i].addr = htole64(addr);
}

/*
 * Send c->cmd[0] alone: its status, or -1; *@inv the key its answer
 * invalidated (a staged WRITE's must be none).
 */
static int stage_send(struct conn *c, __u32 *inv)
{
	*inv = 0;
	if (send_cmd(c, sizeof(*c->cmd)))
		return -1;
	return wait_rsp(c, le32toh(c->cmd->tag), NULL, inv);
}

/*
 * Whether EXPORT holds the @len bytes of @pat at @off: READ into the
 * window (without windows, inline).
 */
static bool stage_holds(struct conn *c, const char *what, __u64 off,
			const __u8 *pat, __u32 len)
{
	__u64 sum = 0;
	int st;

	if (have_mw) {
		memset(c->data, 0, len);
		st = blk_io(c, BLK_OP_READ, 0, off, len);
		sum = fnv1a(c->data, len);
	} else {
		st = read_inline(c, 0, off, len, &sum);
	}
	if (!st && sum == fnv1a(pat, len))
		return true;
	note("%s: READ [%llu, +%u): %s, %s data", what, (unsigned long long)off,
	     len, st < 0 ? "not answered" : status_name(st),
	     sum == fnv1a(pat, len) ? "its" : "other");
	return false;
}

/*
 * RDMX_BLK_OPEN_STAGE granted: the area's last four slots written with
 * one RDMA WRITE and their staged WRITEs sent as a batch, then slot 0
 * alone and 512 bytes of slot 1: each answered 0 with no key invalidated,
 * and READs give back what was staged.
 */
static void case_stage(void)
{
	const char *what = "staged WRITEs";
	unsigned int i, last, n = 6, bad = 0;
	struct got out[4];
	struct conn c;
	__u32 inv;
	int st, nr;

	if (!stage_conn(&c, what, BLK_OPEN_CMD_BATCH | BLK_OPEN_STAGE))
		return;
	report(true, "%s: OPEN grants a staging area: %u bytes (depth %u), key %#x, at %#llx",
	       what, c.stage_len, c.depth, c.stage_rkey,
	       (unsigned long long)c.stage_addr);
	last = c.stage_len / BLK_STAGE_SLOT - 1;
	for (i = 0; i < 4; i++)
		memcpy(c.data + i * BLK_STAGE_SLOT, batch_pat[i], BLK_STAGE_SLOT);
	st = stage_rdma(&c, false, c.stage_addr + (last - 3) * BLK_STAGE_SLOT,
			c.stage_rkey, 4 * BLK_STAGE_SLOT);
	report(!st, "%s: one RDMA WRITE of slots %u to %u, the last (%s)", what,
	       last - 3, last, stage_rdma_str(st));
	for (i = 0; i < 4; i++)
		stage_cmd(&c, i, i, STAGE_OFF + i * BLK_STAGE_SLOT,
			  BLK_STAGE_SLOT, (last - 3 + i) * BLK_STAGE_SLOT);
	if (st || send_cmd(&c, 4 * sizeof(*c.cmd)))
		goto out;
	nr = batch_collect(&c, what, 4, out);
	for (i = 0; i < 4; i++)
		if (out[i].rsp.status || out[i].len != sizeof(out[i].rsp) ||
		    out[i].inv)
			bad++;
	report(nr == 4 && !bad,
	       "%s: a batch of 4: each answered 0, no key invalidated (%d answers, %u wrong)",
	       what, nr, bad);
	/* Slots 0 and 1 in one RDMA WRITE; slot 0 alone, 512 bytes of 1. */
	memcpy(c.data, batch_pat[4], BLK_STAGE_SLOT);
	memcpy(c.data + BLK_STAGE_SLOT, batch_pat[5], BLK_STAGE_SLOT);
	if (stage_rdma(&c, false, c.stage_addr, c.stage_rkey,
		       2 * BLK_STAGE_SLOT))
		goto out;
	stage_cmd(&c, 0, 5, STAGE_OFF + 4 * BLK_STAGE_SLOT, BLK_STAGE_SLOT, 0);
	st = stage_send(&c, &inv);
	report(!st && !inv, "%s: slot 0 alone -> 0, no key invalidated (%s, key %#x)",
	       what, st < 0 ? "no answer" : status_name(st), inv);
	if (c.lbs == 512) {
		stage_cmd(&c, 0, 6, STAGE_OFF + 5 * BLK_STAGE_SLOT, 512,
			  BLK_STAGE_SLOT);
		st = stage_send(&c, &inv);
		report(!st && !inv,
		       "%s: 512 bytes of slot 1 -> 0, no key invalidated (%s, key %#x)",
		       what, st < 0 ? "no answer" : status_name(st), inv);
	} else {
		skip("a staged WRITE of 512 bytes", "the export's blocks are 4 KiB");
		n = 5;
	}
	for (bad = 0, i = 0; i < n; i++)
		bad += !stage_holds(&c, what, STAGE_OFF + i * BLK_STAGE_SLOT,
				    batch_pat[i], i == 5 ? 512 : BLK_STAGE_SLOT);
	report(!bad, "%s: READs give back what was staged (%u of %u wrong)",
	       what, bad, n);
out:
	if (c.disconnected || c.flushed || c.wc_err)
		report(false, "%s: the queue serves on (the connection ended)",
		       what);
	conn_close(&c);
}

/*
 * A queue that did not ask for STAGE: no area in the OPEN's answer, and a
 * staged WRITE ends the connection.
 */
static void case_stage_not_granted(void)
{
	const char *what = "a staged WRITE on a queue that did not ask for STAGE";
	struct conn c;

	if (!stage_conn(&c, what, 0))
		return;
	report(!(c.open_flags & BLK_OPEN_STAGE) && !c.stage_addr &&
	       !c.stage_rkey && !c.stage_len,
	       "a queue that did not ask for STAGE is not granted it (flags %#x, area at %#llx, key %#x, %u bytes)",
	       c.open_flags, (unsigned long long)c.stage_addr, c.stage_rkey,
	       c.stage_len);
	stage_cmd(&c, 0, 1, STAGE_OFF, c.lbs, 0);
	expect_refused(&c, what, send_cmd(&c, sizeof(*c.cmd)));
	conn_close(&c);
}

/* Staged commands the server must refuse, on a queue granted STAGE. */
enum stage_bad {
	SB_READ, SB_INLINE, SB_KEY, SB_UNALIGNED, SB_END, SB_FAR, SB_LONG,
	SB_BYTES,
};

static const char *const stage_bad_name[] = {
	[SB_READ] = "a staged READ",
	[SB_INLINE] = "a staged WRITE flagged INLINE too, after its data",
	[SB_KEY] = "a staged WRITE that names a key (the area's)",
	[SB_UNALIGNED] = "a staged WRITE at 512 bytes into the area",
	[SB_END] = "a staged WRITE at the area's end",
	[SB_FAR] = "a staged WRITE at 0xfffffffffffff000",
	[SB_LONG] = "a staged WRITE of 4 KiB + 512",
	[SB_BYTES] = "a staged WRITE with 512 bytes after it",
};

/* The connection ends, and nothing is answered. */
static void case_stage_bad(enum stage_bad b)
{
	const char *what = stage_bad_name[b];
	size_t len = sizeof(struct blk_cmd);
	struct conn c;
	int sent;

	if (!stage_conn(&c, what, BLK_OPEN_STAGE))
		return;
	stage_cmd(&c, 0, 1, STAGE_OFF, c.lbs, 0);
	switch (b) {
	case SB_READ:
		c.cmd->opcode = BLK_OP_READ;
		break;
	case SB_INLINE:
		/* An inline WRITE with its command last, as it would pass. */
		c.cmd->flags |= BLK_CMD_INLINE;
		memset(c.data, 0xee, c.lbs);
		break;
	case SB_KEY:
		c.cmd->rkey = htole32(c.stage_rkey);
		break;
	case SB_UNALIGNED:
		c.cmd->addr = htole64(512);
		break;
	case SB_END:
		c.cmd->addr = htole64(c.stage_len);
		break;
	case SB_FAR:
		c.cmd->addr = htole64(0xfffffffffffff000ULL);
		break;
	case SB_LONG:
		c.cmd->length = htole32(BLK_STAGE_SLOT + 512);
		break;
	case SB_BYTES:
		memset(c.cmd + 1, 0xee, 512);
		len += 512;
		break;
	}
	sent = b == SB_INLINE ? send_data_first(&c, c.data, c.lbs, c.cmd) :
	       send_cmd(&c, len);
	expect_refused(&c, what, sent);
	conn_close(&c);
}

/* A staged WRITE of no bytes: answered EINVAL, and the queue serves on. */
static void case_stage_empty(void)
{
	const char *what = "a staged WRITE of zero length";
	struct conn c;
	__u32 inv;

	if (!stage_conn(&c, what, BLK_OPEN_STAGE))
		return;
	stage_cmd(&c, 0, 1, STAGE_OFF, 0, 0);
	expect_status(stage_send(&c, &inv), EINVAL, what);
	if (!c.disconnected && !c.flushed)
		batch_serves_on(&c, what);
	else
		report(false, "%s: the queue serves on (the connection ended)",
		       what);
	conn_close(&c);
}

/*
 * The area takes RDMA WRITEs of its queue alone: an RDMA READ of it
 * fails, and so does another queue's RDMA WRITE with its key and
 * address; its queue's staged WRITE then writes what that queue put in
 * the slot.
 */
static void case_stage_access(void)
{
	const char *what = "the staging area";
	struct conn a, b;
	__u64 off = STAGE_OFF + 6 * BLK_STAGE_SLOT;
	__u32 inv;
	int st;

	if (!stage_conn(&a, what, BLK_OPEN_STAGE))
		return;
	st = stage_rdma(&a, true, a.stage_addr, a.stage_rkey, BLK_STAGE_SLOT);
	report(st > 0, "%s: an RDMA READ of it with its key fails (%s)", what,
	       stage_rdma_str(st));
	conn_close(&a);

	if (!stage_conn(&a, what, BLK_OPEN_STAGE))
		return;
	memcpy(a.data, batch_pat[6], BLK_STAGE_SLOT);
	st = stage_rdma(&a, false, a.stage_addr, a.stage_rkey, BLK_STAGE_SLOT);
	if (st || !stage_conn(&b, what, BLK_OPEN_STAGE)) {
		report(false, "%s: its queue's RDMA WRITE, another queue (%s)",
		       what, stage_rdma_str(st));
		conn_close(&a);
		return;
	}
	memcpy(b.data, batch_pat[7], BLK_STAGE_SLOT);
	st = stage_rdma(&b, false, a.stage_addr, a.stage_rkey, BLK_STAGE_SLOT);
	report(st > 0, "%s: another queue's RDMA WRITE with its key fails (%s)",
	       what, stage_rdma_str(st));
	conn_close(&b);
	stage_cmd(&a, 0, 1, off, BLK_STAGE_SLOT, 0);
	st = stage_send(&a, &inv);
	report(!st && !inv && stage_holds(&a, what, off, batch_pat[6],
					  BLK_STAGE_SLOT),
	       "%s: its queue's staged WRITE then writes what it staged (%s)",
	       what, st < 0 ? "no answer" : status_name(st));
	conn_close(&a);
}

/* Every staging area case, on connections of their own. */
static void cases_stage(void)
{
	enum stage_bad b;

	batch_pat_fill();
	case_stage();
	case_stage_not_granted();
	for (b = SB_READ; b <= SB_BYTES; b++)
		case_stage_bad(b);
	case_stage_empty();
	case_stage_access();
}

/*
 * Fencing (-X THAWFILE). EXPORT's backing store is frozen (fsfreeze) by the
 * caller until THAWFILE exists. A queue of one map in incarnation 1 sends
 * an inline WRITE of block 0, which cannot complete while the store is
 * frozen; then a queue of the same map in incarnation 2, as after a
 * reconnect, OPENs. The server must not answer that OPEN while the older
 * incarnation's write is under way: once answered, the client would write
 * block 0 again and the stale write could land over it. The tool then
 * creates THAWFILE; the OPEN must be answered, the older queue dropped,
 * and incarnation 2's WRITE of block 0 must be what block 0 holds.
 */
static void case_fence(const char *thaw)
{
	static __u8 old_pat[BLK_INLINE_MAX], new_pat[BLK_INLINE_MAX];
	struct conn a, b;
	__u8 uuid[16];
	long long end;
	__u32 lbs;
	int st, fd;

	if (getrandom(uuid, sizeof(uuid), 0) != sizeof(uuid))
		memset(uuid, 0x6b, sizeof(uuid));
	if (conn_open_as(&a, uuid, 1) || blk_open(&a, exp_rw, 0)) {
		report(false, "fence: incarnation 1 OPENs %s", exp_rw);
		conn_close(&a);
		return;
	}
	lbs = a.lbs;
	memset(old_pat, 0x01, lbs);
	memset(new_pat, 0x02, lbs);
	cmd_fill(&a, BLK_OP_WRITE, 1, 0, a.lbs);
	a.cmd->flags = BLK_CMD_INLINE;
	memcpy(a.cmd + 1, old_pat, a.lbs);
	if (send_cmd(&a, sizeof(*a.cmd) + a.lbs)) {
		report(false, "fence: incarnation 1 sends a WRITE");
		conn_close(&a);
		return;
	}
	end = now_ms() + 3000;
	while (!a.nr_got && now_ms() < end) {
		pump(&a);
		usleep(1000);
	}
	report(!a.nr_got, "fence: incarnation 1's WRITE is held by the frozen store");
	if (conn_open_as(&b, uuid, 2)) {
		report(false, "fence: incarnation 2 connects");
		conn_close(&a);
		conn_close(&b);
		return;
	}
	cmd_fill(&b, BLK_OP_OPEN, 0, 0, 0);
	memcpy(b.cmd->name, exp_rw, strnlen(exp_rw, sizeof(b.cmd->name)));
	if (send_cmd(&b, sizeof(*b.cmd))) {
		report(false, "fence: incarnation 2 sends OPEN");
		conn_close(&a);
		conn_close(&b);
		return;
	}
	end = now_ms() + 5000;
	while (!b.nr_got && !b.disconnected && now_ms() < end) {
		pump(&b);
		usleep(1000);
	}
	report(!b.nr_got && !b.disconnected,
	       "fence: incarnation 2's OPEN is not answered while incarnation 1's WRITE is under way");
	fd = open(thaw, O_WRONLY | O_CREAT, 0644);
	if (fd >= 0)
		close(fd);
	else
		note("%s: %m", thaw);
	st = wait_rsp(&b, 0, NULL, NULL);
	expect_status(st, 0, "fence: once the store thaws, incarnation 2's OPEN");
	report(wait_disconnect(&a) != -1,
	       "fence: incarnation 1's queue ends (answered or dropped)");
	conn_close(&a);
	if (st == 0) {
		/* wait_rsp() took the OPEN's answer: the same export's terms. */
		b.lbs = lbs;
		st = blk_write_inline(&b, 1, 0, new_pat, b.lbs);
		expect_status(st, 0, "fence: incarnation 2's WRITE of block 0");
		if (have_mw) {
			memset(b.data, 0, b.lbs);
			st = blk_io(&b, BLK_OP_READ, 2, 0, b.lbs);
			report(st == 0 && !memcmp(b.data, new_pat, b.lbs),
			       "fence: block 0 holds incarnation 2's data (READ status %s, first byte %#x)",
			       st < 0 ? "none" : status_name(st), b.data[0]);
		}
	}
	conn_close(&b);
}

/*
 * Wait up to @secs for the server to end @c's connection (its DREQ comes
 * over the CM, whatever state the QP is in); the seconds it took, or -1.
 */
static long long wait_dropped(struct conn *c, long long secs)
{
	long long t0 = now_ms(), end = t0 + secs * 1000;

	while (!c->disconnected && now_ms() < end) {
		pump(c);
		usleep(10000);
	}
	return c->disconnected ? (now_ms() - t0 + 500) / 1000 : -1;
}

/*
 * Queues the server must drop by itself (-K): the caller made the server's
 * blk_keepalive_ms short (1 s). A queue that connects and never OPENs is
 * half-open: dropped within the server's OPEN deadline (16 s). A queue
 * bound to EXPORT that takes events and sends nothing gets a keepalive, an
 * event carrying the export's size, within a few keepalive periods. Then
 * its QP goes to RESET and drops whatever comes, as the QP of a client
 * that vanished without its DREQ reaching the server would, while the tool
 * keeps the connection (a DREQ would end it): the server's next keepalive
 * goes unanswered, and it must drop the queue (the caller then finds the
 * export no longer busy).
 */
static void case_keepalive(void)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_RESET };
	struct blk_rsp rsp;
	long long took, t0;
	struct conn c;
	int st;

	if (!conn_open_or_report(&c))
		return;
	took = wait_dropped(&c, 60);
	report(took >= 0, "keepalive: a queue that never OPENs is dropped (in %lld s)",
	       took);
	conn_close(&c);

	if (!conn_open_export(&c, exp_rw, BLK_OPEN_EVENTS)) {
		conn_close(&c);
		return;
	}
	t0 = now_ms();
	st = wait_rsp(&c, BLK_TAG_EVENT, &rsp, NULL);
	report(st == 0 && le64toh(rsp.size) == c.size,
	       "keepalive: an idle queue gets an event of the export's size (status %s, size %llu, after %lld ms)",
	       st < 0 ? "none" : status_name(st),
	       st < 0 ? 0ULL : (unsigned long long)le64toh(rsp.size),
	       now_ms() - t0);
	if (ibv_modify_qp(c.c.id->qp, &attr, IBV_QP_STATE)) {
		report(false, "keepalive: QP to RESET: %s", strerror(errno));
		conn_close(&c);
		return;
	}
	took = wait_dropped(&c, 90);
	report(took >= 0,
	       "keepalive: the queue whose QP no longer answers is dropped (in %lld s)",
	       took);
	conn_close(&c);
}

/*
 * One OPEN of EXPORT (-O STATUS), from the port rdma_cm picks (not a
 * reserved one): its answer must be STATUS, a name as status_name() gives
 * ("0", "EACCES", ...).
 */
static void case_open_only(const char *want)
{
	struct conn c;
	int st;

	if (!conn_open_or_report(&c))
		return;
	st = blk_open(&c, exp_rw, 0);
	report(st >= 0 && !strcmp(status_name(st), want),
	       "OPEN %s from an unreserved port -> %s (got %s)", exp_rw, want,
	       st < 0 ? "no answer" : status_name(st));
	conn_close(&c);
}

/* Memory windows of type 2 exist on the device that reaches HOST. */
static bool probe_mw(void)
{
	struct ibv_device_attr attr = {};
	struct rdma_cm_id *id;
	struct conn c;
	bool ok;

	if (conn_setup(&c) && !c.c.id) {
		conn_close(&c);
		return false;
	}
	id = c.c.id;
	ok = id->verbs && !ibv_query_device(id->verbs, &attr) &&
	     attr.max_mw > 0 &&
	     (attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B);
	note("device %s: max_mw %d, type 2B windows %s",
	     id->verbs ? ibv_get_device_name(id->verbs->device) : "?",
	     id->verbs ? attr.max_mw : 0, ok ? "yes" : "no");
	conn_close(&c);
	return ok;
}

/* ---- wire fuzz ---------------------------------------------------------- */

/* The fuzz's receives: a response, and an inline READ's data after it. */
#define FZ_RSP_SLOT		RSP_SLOT_INLINE
/* A command neither answered nor disconnected in this long is silent. */
#define FZ_ANSWER_MS		10000
/* The answer to a fuzzed connect request within. */
#define FZ_CM_MS		10000
/* Percent of connection attempts that send a fuzzed connect request first. */
#define FZ_CM_PERCENT		10
/* No connection for this long: the server is gone, the fuzz stops. */
#define FZ_GIVE_UP_MS		60000
/* Surprising commands shown in hex, at most. */
#define FZ_HEX_NOTES		5
/* Salt of the PRNG stream of connection attempts. */
#define FZ_SALT_CONN		0x636f6e6e65637473ULL
/* Salt of the draw of the queues that ask for a staging area. */
#define FZ_SALT_STAGE		0x7374616765617265ULL
/* fz_expect(): the connection must end; fz_wait(): how it did not answer */
#define FZ_ENDS			(-1)
#define FZ_GONE			(-1)
#define FZ_SILENT		(-2)

struct fz {
	struct craft_fuzz f;
	unsigned long long attempts;	/* connection attempts */
	unsigned long long events;	/* event responses (no command's) */
	unsigned long long cmd_batch;	/* connects granted CMD_BATCH */
	unsigned long long batches;	/* frames that were command batches */
	unsigned long long batch_cmds;	/* commands of those the server ran */
	unsigned long long data_first;	/* connects whose server takes data first */
	unsigned long long moved;	/* frames sent with their command last */
	unsigned long long staged;	/* connects granted a staging area */
	unsigned long long slots;	/* slots RDMA WRITTEN for staged WRITEs */
	unsigned int hex_notes;
};

/* What a connection attempt came to. */
enum fz_dial {
	FZ_LIVE,	/* connected, and the export OPEN */
	FZ_AGAIN,	/* refused or lost: try again */
	FZ_BUSY,	/* refused BUSY: try again after a pause */
	FZ_NOBODY,	/* no rdmx listener, no answer at all */
	FZ_HOST,	/* this host failed */
	FZ_NOEXPORT,	/* the OPEN was refused: no export to fuzz */
};

static const struct {
	__u8 op;
	__u8 weight;
} fz_ops[] = {
	{ BLK_OP_READ, 28 }, { BLK_OP_WRITE, 28 }, { BLK_OP_FLUSH, 10 },
	{ BLK_OP_DISCARD, 12 }, { BLK_OP_WRITE_ZEROES, 18 },
	{ BLK_OP_OPEN, 4 },
};

/*
 * The command's fields; the extent, which the server answers rather than
 * disconnects over, is picked three times as often as the others.
 */
static const struct {
	const char *name;
	unsigned char off, size, weight;
} fz_cmd_fields[] = {
	{ "opcode", offsetof(struct blk_cmd, opcode), 1, 1 },
	{ "flags", offsetof(struct blk_cmd, flags), 1, 1 },
	{ "reserved0", offsetof(struct blk_cmd, reserved0), 2, 1 },
	{ "tag", offsetof(struct blk_cmd, tag), 4, 1 },
	{ "offset", offsetof(struct blk_cmd, offset), 8, 3 },
	{ "length", offsetof(struct blk_cmd, length), 4, 3 },
	{ "rkey", offsetof(struct blk_cmd, rkey), 4, 1 },
	{ "addr", offsetof(struct blk_cmd, addr), 8, 1 },
	{ "name", offsetof(struct blk_cmd, name), 64, 1 },
};

/*
 * A block queue's connect request, its private data fuzzed, on a
 * connection of its own; the answer is counted and judged. A session it
 * opened by chance (the features changed) is closed at once.
 */
static void fz_cm_fuzz(struct fz *z, __u64 *r)
{
	enum rdma_cm_event_type type = RDMA_CM_EVENT_CONNECT_ERROR;
	union {
		struct conn_rep rep;
		struct conn_rej rej;
	} u;
	struct conn_req req;
	__u8 len = sizeof(req);
	char what[256];
	bool answered;
	struct conn c;
	int reason;

	req_pack(&req, PROTO_MAGIC, PROTO_MAJOR);
	craft_fuzz_req(r, &req, &len, what, sizeof(what));
	/* What a CM that pads private data hands the server. */
	memset((__u8 *)&req + len, 0, sizeof(req) - len);
	if (conn_setup_rsp(&c, FZ_RSP_SLOT)) {
		conn_close(&c);
		return;
	}
	z->f.cm_fuzzed++;
	if (craft_connect(&c.c, len ? &req : NULL, len, false)) {
		/* librdmacm would not send it */
		z->f.cm_other++;
		conn_close(&c);
		return;
	}
	answered = !cm_next(&c, FZ_CM_MS, &type, NULL, &u, sizeof(u));
	reason = craft_fuzz_req_answer(&z->f, type, &u.rej, answered);
	craft_fuzz_req_judge(&z->f, &req, len, answered, type, reason, what);
	if (answered && type == RDMA_CM_EVENT_ESTABLISHED &&
	    (le32toh(u.rep.features) & PROTO_F_MSG))
		craft_sess_close(&c.c, c.cmd);
	conn_close(&c);
}

/*
 * Connect as a block queue (after a fuzzed connect request, now and then)
 * and OPEN an export: EXPORT, or one time in five RO_EXPORT read-only,
 * asking for inline reads half the time and for events one time in five.
 * The check afterwards (@check) fuzzes no request, and OPENs EXPORT
 * asking for inline reads.
 */
static enum fz_dial fz_connect(struct fz *z, struct conn *c, bool check)
{
	__u64 r = mix2(z->f.seed ^ FZ_SALT_CONN, z->attempts++);
	enum rdma_cm_event_type type;
	union {
		struct conn_rep rep;
		struct conn_rej rej;
	} u;
	struct conn_req req;
	const char *name;
	int status = 0, st;
	__u32 flags;
	__u16 depth;
	bool ro, stage;

	/* From a stream of its own: the other draws stay as they were. */
	stage = !check && (mix2(z->f.seed ^ FZ_SALT_STAGE, z->attempts) & 1);
	if (!check && craft_chance(&r, FZ_CM_PERCENT))
		fz_cm_fuzz(z, &r);
	/* Deep enough for batches of 16 and 17 commands, half the time. */
	depth = !check && craft_chance(&r, 50) ? BATCH_DEPTH : CLT_DEPTH;
	if (conn_setup_rsp(c, FZ_RSP_SLOT)) {
		complain("connection setup to %s:%s failed: %m", host, port);
		return FZ_HOST;
	}
	/*
	 * Half the time a client of MINOR_DATA_FIRST: the server's receives
	 * then take the data first (fz_moves()).
	 */
	req_pack_depth(&req, PROTO_MAGIC, PROTO_MAJOR, depth);
	if (!check && craft_chance(&r, 50))
		req.minor = MINOR_DATA_FIRST;
	if (conn_send_req(c, &req)) {
		complain("rdma_connect to %s:%s: %m", host, port);
		return FZ_HOST;
	}
	if (cm_next(c, TIMEOUT_MS, &type, &status, &u, sizeof(u))) {
		complain("no answer from %s:%s in %d s", host, port,
			 TIMEOUT_MS / 1000);
		return FZ_NOBODY;
	}
	if (type == RDMA_CM_EVENT_REJECTED) {
		if (le16toh(u.rej.magic) != PROTO_MAGIC) {
			complain("%s:%s: refused (status %d), no rdmx listener?",
				 host, port, status);
			return FZ_NOBODY;
		}
		if (le16toh(u.rej.reason) == REJ_BUSY) {
			z->f.busy++;
			return FZ_BUSY;
		}
		craft_fuzz_anomaly(&z->f, "refused a valid block queue: %s",
				   craft_rej_str(le16toh(u.rej.reason)));
		return FZ_AGAIN;
	}
	if (type != RDMA_CM_EVENT_ESTABLISHED) {
		note("fuzz: connect: %s, status %d", rdma_event_str(type),
		     status);
		return FZ_AGAIN;
	}
	c->depth = le16toh(u.rep.queue_depth);
	c->max_msg = le32toh(u.rep.max_msg_size);
	c->minor = u.rep.minor;
	c->data_first = req.minor >= MINOR_DATA_FIRST &&
			c->minor >= MINOR_DATA_FIRST;
	if (le16toh(u.rep.magic) != PROTO_MAGIC || u.rep.major != PROTO_MAJOR ||
	    le32toh(u.rep.features) != PROTO_F_BLOCK ||
	    le16toh(u.rep.nr_lanes) != 1 || c->depth < 2 ||
	    c->depth > depth || !c->max_msg || c->max_msg > BLK_MAX_IO ||
	    le64toh(u.rep.generation) != 1) {
		craft_fuzz_anomaly(&z->f, "accept: features %#x qps %u depth %u max_msg %u",
				   le32toh(u.rep.features),
				   le16toh(u.rep.nr_lanes), c->depth, c->max_msg);
		return FZ_AGAIN;
	}
	ro = !check && craft_chance(&r, 20);
	flags = ro ? BLK_OPEN_RO : 0;
	if (check || craft_chance(&r, 50))
		flags |= BLK_OPEN_INLINE_READ;
	/* The data alone, with the tag as immediate data: not on iWARP. */
	if ((flags & BLK_OPEN_INLINE_READ) && craft_chance(&r, 50) &&
	    c->c.id->verbs->device->transport_type != IBV_TRANSPORT_IWARP)
		flags |= BLK_OPEN_IMM_READ;
	/*
	 * Responses together: with one command at a time, each batch holds
	 * one, but the server's holding and flushing run.
	 */
	if ((flags & BLK_OPEN_INLINE_READ) && craft_chance(&r, 50))
		flags |= BLK_OPEN_BATCH;
	if (!check && craft_chance(&r, 20))
		flags |= BLK_OPEN_EVENTS;
	/* Commands together: only a server of minor 2 knows the flag. */
	if (!check && c->minor >= MINOR_CMD_BATCH && craft_chance(&r, 50))
		flags |= BLK_OPEN_CMD_BATCH;
	/* A staging area (none for a read-only map): a server of minor 4. */
	if (stage && c->minor >= MINOR_STAGE)
		flags |= BLK_OPEN_STAGE;
	name = ro ? exp_ro : exp_rw;
	st = blk_open(c, name, flags);
	if (st < 0) {
		craft_fuzz_anomaly(&z->f, "a valid OPEN %s: no answer (%s)", name,
				   c->disconnected || c->flushed ?
				   "disconnected" : "timed out");
		return FZ_AGAIN;
	}
	if (st) {
		complain("OPEN %s: %s", name, status_name(st));
		return FZ_NOEXPORT;
	}
	if (c->size < 16 * (__u64)c->lbs || (c->lbs != 512 && c->lbs != 4096) ||
	    c->max_io < c->lbs || c->max_io > c->max_msg) {
		complain("OPEN %s: size %llu, lbs %u, max_io %u: not fuzzed",
			 name, (unsigned long long)c->size, c->lbs, c->max_io);
		return FZ_NOEXPORT;
	}
	/* A server of minor 2 grants it when asked, and only then. */
	if ((c->open_flags ^ flags) & BLK_OPEN_CMD_BATCH)
		craft_fuzz_anomaly(&z->f, "OPEN %s: CMD_BATCH %s, granted flags %#x",
				   name, flags & BLK_OPEN_CMD_BATCH ?
				   "asked, not granted" : "granted, not asked",
				   c->open_flags);
	/* Granted only when asked, and then of the protocol's form. */
	if ((c->open_flags & BLK_OPEN_STAGE) ?
	    !(flags & BLK_OPEN_STAGE) || ro || !stage_granted(c) :
	    c->stage_addr || c->stage_rkey || c->stage_len)
		craft_fuzz_anomaly(&z->f, "OPEN %s: STAGE %s, granted %#x, area %#llx key %#x %u B",
				   name, flags & BLK_OPEN_STAGE ? "asked" : "not asked",
				   c->open_flags, (unsigned long long)c->stage_addr,
				   c->stage_rkey, c->stage_len);
	/* The area the mirror knows: none unless granted. */
	if (!(c->open_flags & BLK_OPEN_STAGE))
		c->stage_len = 0;
	z->staged += !!c->stage_len;
	z->cmd_batch += !!(c->open_flags & BLK_OPEN_CMD_BATCH);
	z->data_first += c->data_first;
	z->f.connects++;
	return FZ_LIVE;
}

/* An extent of @nb blocks, aligned, inside the export. */
static __u64 fz_offset(const struct conn *c, __u64 *r, __u32 nb)
{
	__u64 blocks = c->size / c->lbs;

	return (__u64)craft_below(r, blocks - nb + 1) * c->lbs;
}

/*
 * A valid command of a random opcode at @cmd, with its inline data;
 * returns its length. *@mw: it moves its data through the memory window,
 * which the caller binds and names in it. A second OPEN, a protocol error
 * whatever its fields, only for a @hostile frame. On a queue granted a
 * staging area, a WRITE is staged half the time, at any of its slots
 * (fz_stage_data() writes the data). For a @batch: with tag @tag, no data
 * after it (a WRITE goes through the window, staged, or zeroes), and
 * through the window only when @mw_ok.
 */
static size_t fz_build_at(struct conn *c, struct blk_cmd *cmd, __u64 *r,
			  bool *mw, bool hostile, bool batch, bool mw_ok,
			  __u32 tag)
{
	bool inline_read = c->open_flags & BLK_OPEN_INLINE_READ;
	bool win = have_mw && (!batch || mw_ok);
	unsigned int i, w = craft_below(r, 100);
	__u32 lbs = c->lbs, max_b, nb;
	__u64 blocks = c->size / lbs;
	size_t len = sizeof(*cmd);
	bool staged;
	__u8 op;

	if (!batch)
		tag = craft_below(r, c->depth);
	*mw = false;
	for (i = 0; i < ARRAY_SIZE(fz_ops) - 1 && w >= fz_ops[i].weight; i++)
		w -= fz_ops[i].weight;
	op = fz_ops[i].op;
	if (op == BLK_OP_OPEN && (!hostile || batch))
		op = fz_ops[craft_below(r, ARRAY_SIZE(fz_ops) - 1)].op;
	if (op == BLK_OP_READ && !win && !inline_read)
		op = BLK_OP_FLUSH;
	staged = op == BLK_OP_WRITE && c->stage_len && craft_chance(r, 50);
	if (op == BLK_OP_WRITE && batch && !win && !staged)
		op = BLK_OP_WRITE_ZEROES;
	switch (op) {
	case BLK_OP_READ:
	case BLK_OP_WRITE:
		*mw = win && !staged && (op == BLK_OP_READ ?
					 !inline_read || craft_chance(r, 50) :
					 batch || craft_chance(r, 30));
		max_b = (*mw ? DATA_LEN : BLK_INLINE_MAX) / lbs;
		if (max_b > c->max_io / lbs)
			max_b = c->max_io / lbs;
		nb = 1 + craft_below(r, max_b);
		cmd_fill_at(cmd, op, tag, fz_offset(c, r, nb), nb * lbs);
		if (staged) {
			cmd->flags = BLK_CMD_STAGED;
			cmd->addr = htole64((__u64)craft_below(r, c->stage_len /
							       BLK_STAGE_SLOT) *
					    BLK_STAGE_SLOT);
		} else if (!*mw) {
			cmd->flags = BLK_CMD_INLINE;
			if (op == BLK_OP_WRITE) {
				for (i = 0; i < nb * lbs; i++)
					((__u8 *)(cmd + 1))[i] = craft_rand(r);
				len += nb * lbs;
			}
		}
		if (op == BLK_OP_WRITE && craft_chance(r, 20))
			cmd->flags |= BLK_CMD_FUA;
		break;
	case BLK_OP_DISCARD:
	case BLK_OP_WRITE_ZEROES:
		max_b = c->max_io / lbs;
		if (max_b > blocks)
			max_b = blocks;
		if (max_b > 256)
			max_b = 256;
		nb = 1 + craft_below(r, max_b);
		cmd_fill_at(cmd, op, tag, fz_offset(c, r, nb), nb * lbs);
		if (op == BLK_OP_WRITE_ZEROES && craft_chance(r, 20))
			cmd->flags = BLK_CMD_FUA;
		break;
	case BLK_OP_OPEN:	/* a second one */
		cmd_fill_at(cmd, op, tag, 0, 0);
		memcpy(cmd->name, exp_rw, strnlen(exp_rw, sizeof(cmd->name)));
		break;
	default:
		cmd_fill_at(cmd, BLK_OP_FLUSH, tag, 0, 0);
		break;
	}
	/* A hint any command may carry: its answer may wait for others. */
	if ((c->open_flags & BLK_OPEN_BATCH) && craft_chance(r, 50))
		cmd->flags |= BLK_CMD_MORE;
	return len;
}

/* A valid command of a random opcode in c->cmd: see fz_build_at(). */
static size_t fz_build(struct conn *c, __u64 *r, bool *mw, bool hostile)
{
	return fz_build_at(c, c->cmd, r, mw, hostile, false, true, 0);
}

/*
 * A batch of valid commands in c->cmd (fz_build_at()): 2 to 16, at most
 * the queue's depth, with tags of their own drawn at random, at most one
 * through the memory window (*@mw_at: which, or -1). Returns its length.
 */
static size_t fz_build_batch(struct conn *c, __u64 *r, int *mw_at)
{
	unsigned int i, j, n_max = c->depth, n;
	__u32 tags[BATCH_DEPTH], t;
	bool mw;

	if (n_max > BLK_BATCH_MAX)
		n_max = BLK_BATCH_MAX;
	n = 2 + craft_below(r, n_max - 1);
	for (i = 0; i < c->depth; i++)
		tags[i] = i;
	for (i = 0; i < n; i++) {
		j = i + craft_below(r, c->depth - i);
		t = tags[i];
		tags[i] = tags[j];
		tags[j] = t;
	}
	*mw_at = -1;
	for (i = 0; i < n; i++) {
		fz_build_at(c, &c->cmd[i], r, &mw, false, true, *mw_at < 0,
			    tags[i]);
		if (mw)
			*mw_at = i;
	}
	return n * sizeof(struct blk_cmd);
}

/*
 * A value worth trying for field @k of the command, near what it holds;
 * on a queue granted a staging area, now and then one for a staged WRITE.
 */
static __u64 fz_near(const struct conn *c, __u64 *r, unsigned int k,
		     __u64 cur, size_t len)
{
	__u64 top = ~0ULL & ~(__u64)(c->lbs - 1), s = c->stage_len;
	__u32 lbs = c->lbs;

	switch (fz_cmd_fields[k].off) {
	case offsetof(struct blk_cmd, opcode): {
		const __u64 v[] = { 1, 2, 3, 4, 5, 6, 0, BLK_OP_WRITE_ZEROES + 1 };

		return v[craft_below(r, ARRAY_SIZE(v))];
	}
	case offsetof(struct blk_cmd, flags):
		return cur ^ BIT(craft_below(r, 8));
	case offsetof(struct blk_cmd, reserved0):
		return BIT(craft_below(r, 16));
	case offsetof(struct blk_cmd, tag): {
		const __u64 v[] = { c->depth - 1, c->depth, c->depth + 1,
				    0xffffffff, BLK_TAG_EVENT - 1 };

		return v[craft_below(r, ARRAY_SIZE(v))];
	}
	case offsetof(struct blk_cmd, offset): {
		const __u64 v[] = { c->size, c->size - lbs, c->size + lbs,
				    cur + 1, cur + lbs / 2, top, top - lbs };

		return v[craft_below(r, ARRAY_SIZE(v))];
	}
	case offsetof(struct blk_cmd, length): {
		const __u64 v[] = { 0, 1, lbs - 1, lbs + 1, c->max_io,
				    c->max_io + lbs, BLK_INLINE_MAX + lbs,
				    0xffffffff & top,
				    len - sizeof(struct blk_cmd) };
		const __u64 sv[] = { 0, 512, BLK_STAGE_SLOT, BLK_STAGE_SLOT + 1,
				     BLK_STAGE_SLOT + 512 };

		if (s && craft_chance(r, 40))
			return sv[craft_below(r, ARRAY_SIZE(sv))];
		return v[craft_below(r, ARRAY_SIZE(v))];
	}
	case offsetof(struct blk_cmd, rkey): {
		/*
		 * The server answers a command with its key invalidated, so
		 * no key here may name another window on this device: the
		 * next index is often another fuzzer's, unbound, and
		 * soft-RoCE in 6.12 oopses when a SEND with invalidate names
		 * an unbound type 2 window (rxe_do_invalidate_mw() puts its
		 * NULL QP). The top index is no window's nor any region's.
		 */
		const __u64 v[] = { 0, c->mw_rkey ^ 1,
				    0xffffff00 | (c->mw_rkey & 0xff),
				    c->c.mr->rkey };

		return v[craft_below(r, ARRAY_SIZE(v))];
	}
	default: {	/* addr */
		__u64 data = (uintptr_t)c->data;
		const __u64 v[] = { 0, cur + 1, cur - 1, data + DATA_LEN,
				    data + DATA_LEN - lbs };
		/* A slot: the last, past the area, not at a slot's start, far. */
		const __u64 sv[] = { s - BLK_STAGE_SLOT, s, s + BLK_STAGE_SLOT,
				     cur + 512, cur + BLK_STAGE_SLOT / 2,
				     ~0ULL & ~(__u64)(BLK_STAGE_SLOT - 1),
				     BLK_STAGE_MAX };

		if (s && craft_chance(r, 60))
			return sv[craft_below(r, ARRAY_SIZE(sv))];
		return v[craft_below(r, ARRAY_SIZE(v))];
	}
	}
}

/*
 * Mutate the command at @cmd (@len bytes with its inline data, room for
 * @room) one to three times: a field set to a value worth trying, or (not
 * with @fields_only) its bytes cut, extended, replaced or flipped. Returns
 * the new length; @what says what was done.
 */
static size_t fz_mutate_at(struct conn *c, struct blk_cmd *cmd, __u64 *r,
			   size_t len, size_t room, bool fields_only,
			   char *what, size_t size)
{
	unsigned int i, n = craft_chance(r, 75) ? 1 : craft_chance(r, 80) ? 2 : 3;
	static const char *const mangles[] = {
		[CRAFT_TRUNCATE] = "cut to", [CRAFT_EXTEND] = "extended to",
		[CRAFT_RANDOM_BYTES] = "bytes replaced,",
		[CRAFT_BIT_FLIPS] = "bits flipped,",
	};
	__u8 *b = (__u8 *)cmd;
	char one[96];
	size_t at = 0;

	*what = 0;
	for (i = 0; i < n && at < size; i++) {
		unsigned int k, w = craft_below(r, 13), off, bytes;
		__u64 v;

		k = 0;
		while (k < ARRAY_SIZE(fz_cmd_fields) - 1 && w >= fz_cmd_fields[k].weight)
			w -= fz_cmd_fields[k++].weight;
		off = fz_cmd_fields[k].off;
		bytes = fz_cmd_fields[k].size;
		if (fields_only ||
		    (craft_chance(r, 85) && len >= sizeof(*cmd))) {
			if (bytes > 8) {	/* the name */
				b[off + craft_below(r, bytes)] =
					1 + craft_below(r, 255);
				snprintf(one, sizeof(one), "a byte of name set");
			} else {
				v = craft_get_le(b + off, bytes);
				v = craft_chance(r, 60) ?
				    fz_near(c, r, k, v, len) :
				    craft_interesting(r, v, bytes);
				craft_put_le(b + off, v, bytes);
				snprintf(one, sizeof(one), "%s %#llx",
					 fz_cmd_fields[k].name,
					 (unsigned long long)v);
			}
		} else {
			enum craft_mangle how = craft_below(r, CRAFT_NR_MANGLES);
			bool follow = craft_chance(r, 50);

			len = craft_mangle(r, b, len, room, how);
			/* The length names the inline bytes there are now. */
			if (follow && len >= sizeof(*cmd))
				cmd->length = htole32(len - sizeof(*cmd));
			snprintf(one, sizeof(one), "%s %zu bytes%s", mangles[how],
				 len, follow && len >= sizeof(*cmd) ?
				 ", length too" : "");
		}
		at += snprintf(what + at, size - at, "%s%s", i ? "; " : "", one);
	}
	return len;
}

/* Mutate the command in c->cmd: see fz_mutate_at(). */
static size_t fz_mutate(struct conn *c, __u64 *r, size_t len, char *what,
			size_t size)
{
	return fz_mutate_at(c, c->cmd, r, len, 2 * BLK_INLINE_MAX, false,
			    what, size);
}

/*
 * The largest transfer the command's opcode can make, set in it: max_io
 * (within the export) for DISCARD and WRITE_ZEROES, the whole window
 * through the memory window, a page inline or staged. Returns the new
 * length.
 */
static size_t fz_edge_max(struct conn *c, struct blk_cmd *cmd, __u64 *r,
			  size_t len, char *one, size_t size)
{
	bool inl = cmd->flags & BLK_CMD_INLINE;
	bool staged = cmd->flags & BLK_CMD_STAGED;
	__u32 lbs = c->lbs, max = c->max_io, i;
	__u8 *inline_data = (__u8 *)(cmd + 1);
	__u64 off;

	if (max > c->size)
		max = c->size;
	if (cmd->opcode == BLK_OP_DISCARD ||
	    cmd->opcode == BLK_OP_WRITE_ZEROES) {
		max -= max % lbs;
		off = craft_chance(r, 50) ? 0 : c->size - max;
	} else {
		if (max > (inl || staged ? BLK_INLINE_MAX : DATA_LEN))
			max = inl || staged ? BLK_INLINE_MAX : DATA_LEN;
		max -= max % lbs;
		off = fz_offset(c, r, max / lbs);
		if (!inl && !staged)
			cmd->addr = htole64((uintptr_t)c->data);
	}
	if (cmd->opcode == BLK_OP_WRITE && inl) {
		for (i = le32toh(cmd->length); i < max; i++)
			inline_data[i] = craft_rand(r);
		len = sizeof(*cmd) + max;
	}
	cmd->length = htole32(max);
	cmd->offset = htole64(off);
	snprintf(one, size, "the largest: %u bytes at %#llx", max,
		 (unsigned long long)off);
	return len;
}

/*
 * An extent the server refuses with a status, the connection kept: past
 * the export's end or across it, an end that overflows, an unaligned
 * offset or length, none, or more than max_io; a FLUSH with an extent.
 */
static void fz_edge_refused(struct conn *c, struct blk_cmd *cmd, __u64 *r,
			    char *one, size_t size)
{
	__u32 lbs = c->lbs, length = le32toh(cmd->length);
	bool inl = cmd->flags & BLK_CMD_INLINE;
	__u64 off = le64toh(cmd->offset);

	if (cmd->opcode == BLK_OP_FLUSH) {
		if (craft_chance(r, 50))
			cmd->offset = htole64(lbs);
		else
			cmd->length = htole32(lbs);
		snprintf(one, size, "refused: a FLUSH with an extent");
		return;
	}
	switch (craft_below(r, 6)) {
	case 0:
		off = c->size;
		break;
	case 1:
		off = c->size - lbs;
		if (length <= lbs && !inl)
			length = 2 * lbs;
		break;
	case 2:
		off = ~0ULL & ~(__u64)(lbs - 1);
		break;
	case 3:
		off += lbs / 2;
		break;
	case 4:
		/* An inline WRITE's length is its data's: not changed. */
		if (!(inl && cmd->opcode == BLK_OP_WRITE))
			length = 0;
		break;
	default:
		/* A staged WRITE's length is at most a slot: unaligned. */
		if (cmd->flags & BLK_CMD_STAGED)
			length = lbs / 2;
		else if (!inl)
			length = c->max_io + lbs;
		else if (cmd->opcode == BLK_OP_READ)
			length = lbs - 1;
		break;
	}
	cmd->offset = htole64(off);
	cmd->length = htole32(length);
	snprintf(one, size, "refused: offset %#llx length %u",
		 (unsigned long long)off, length);
}

/*
 * Move the command at @cmd (@len bytes with its inline data, room for
 * two pages) to an edge that the server must still answer, once or
 * twice: the extent at the export's start or end, the largest transfer,
 * the data at any address of the window (odd ones too) or flush with its
 * end, a staged WRITE's at the area's first or last slot, FUA, garbage
 * in the key and address that FLUSH, DISCARD and WRITE_ZEROES do not
 * use, an extent refused with a status (EINVAL, ERANGE), the first or the
 * last tag. Returns the new length; @what says what was done.
 */
static size_t fz_edge(struct conn *c, struct blk_cmd *cmd, __u64 *r,
		      size_t len, char *what, size_t size)
{
	__u8 op = cmd->opcode;
	bool inl = cmd->flags & BLK_CMD_INLINE;
	bool staged = cmd->flags & BLK_CMD_STAGED;
	bool win = (op == BLK_OP_READ || op == BLK_OP_WRITE) && !inl && !staged;
	unsigned int i, k, n = craft_chance(r, 70) ? 1 : 2;
	__u32 length, room, x, tag;
	char one[96];
	size_t at;
	__u64 off;

	at = snprintf(what, size, "edge: ");
	for (i = 0; i < n && at < size; i++) {
		length = le32toh(cmd->length);
		k = craft_below(r, 8);
		if (k == 0 && op != BLK_OP_FLUSH && length <= c->size) {
			off = craft_chance(r, 50) ? 0 : c->size - length;
			off -= off % c->lbs;
			cmd->offset = htole64(off);
			snprintf(one, sizeof(one), "offset %#llx (the %s)",
				 (unsigned long long)off, off ? "end" : "start");
		} else if (k == 1 && op != BLK_OP_FLUSH) {
			len = fz_edge_max(c, cmd, r, len, one, sizeof(one));
		} else if (k == 2 && win && length <= DATA_LEN) {
			/* Flush with the window's end, or anywhere in it. */
			room = DATA_LEN - length;
			x = craft_chance(r, 50) ? room :
			    craft_below(r, room + 1) | 1;
			if (x > room)
				x = room;
			cmd->addr = htole64((uintptr_t)c->data + x);
			snprintf(one, sizeof(one), "the window + %u", x);
		} else if (k == 2 && staged) {
			/* The first or the last slot of the area. */
			x = craft_chance(r, 50) ? 0 : c->stage_len - BLK_STAGE_SLOT;
			cmd->addr = htole64(x);
			snprintf(one, sizeof(one), "the slot at %u", x);
		} else if (k == 3 && (op == BLK_OP_WRITE ||
				      op == BLK_OP_WRITE_ZEROES)) {
			cmd->flags ^= BLK_CMD_FUA;
			snprintf(one, sizeof(one), "FUA %s",
				 cmd->flags & BLK_CMD_FUA ? "set" : "cleared");
		} else if (k == 4 && !inl && !win && !staged) {
			cmd->rkey = htole32(craft_rand(r));
			cmd->addr = htole64(craft_rand(r));
			snprintf(one, sizeof(one), "rkey %#x addr %#llx, unused",
				 le32toh(cmd->rkey),
				 (unsigned long long)le64toh(cmd->addr));
		} else if (k == 5 || k == 6) {
			fz_edge_refused(c, cmd, r, one, sizeof(one));
		} else {
			tag = craft_chance(r, 50) ? 0 : c->depth - 1;
			cmd->tag = htole32(tag);
			snprintf(one, sizeof(one), "tag %u", tag);
		}
		at += snprintf(what + at, size - at, "%s%s", i ? "; " : "", one);
	}
	return len;
}

/*
 * What the server must answer the command at @cmd (@len bytes, with its
 * inline data), alone: a status, as rdmx_blk_cmd_parse(), rdmx_srvq_open() and
 * rdmx_blk_io_check() have it, or FZ_ENDS (a protocol error, data the
 * server cannot move: a key or an extent outside the window, or a status
 * whose SEND with invalidate names a key this side cannot invalidate), in
 * which case the connection ends. *@why is the rule.
 */
static int fz_expect_at(const struct conn *c, const struct blk_cmd *cmd,
			size_t len, const char **why)
{
	bool ro = (c->open_flags & BLK_OPEN_RO) || (c->exp_flags & BLK_EXP_RO);
	__u32 tag, length, rkey, inline_len, i;
	__u64 off, addr, data = (uintptr_t)c->data;
	__u8 op, flags;
	int st = 0;

	*why = "a malformed command header";
	if (len < sizeof(*cmd))
		return FZ_ENDS;
	*why = "more than the server's receive holds";
	if (len > sizeof(*cmd) + BLK_INLINE_MAX)
		return FZ_ENDS;
	op = cmd->opcode;
	flags = cmd->flags;
	tag = le32toh(cmd->tag);
	off = le64toh(cmd->offset);
	length = le32toh(cmd->length);
	rkey = le32toh(cmd->rkey);
	addr = le64toh(cmd->addr);
	inline_len = len - sizeof(*cmd);
	*why = "a malformed command header";
	if (op < BLK_OP_OPEN || op > BLK_OP_WRITE_ZEROES ||
	    (flags & ~BLK_CMD_KNOWN) || cmd->reserved0)
		return FZ_ENDS;
	for (i = 0; op != BLK_OP_OPEN && i < sizeof(cmd->name); i++)
		if (cmd->name[i])
			return FZ_ENDS;
	*why = "a tag out of range";
	if (tag >= c->depth)
		return FZ_ENDS;
	*why = "a second OPEN";
	if (op == BLK_OP_OPEN)
		return FZ_ENDS;
	/*
	 * Staged: a WRITE of at most a slot, its data at a slot's start in
	 * the area granted (none: stage_len 0), not inline, no key, nothing
	 * after it in the SEND. One that passes goes on as neither inline
	 * nor through a key.
	 */
	*why = "a staged command that does not fit the staging area";
	if ((flags & BLK_CMD_STAGED) &&
	    (op != BLK_OP_WRITE || (flags & BLK_CMD_INLINE) || rkey ||
	     inline_len || length > BLK_STAGE_SLOT ||
	     addr >= c->stage_len || addr % BLK_STAGE_SLOT))
		return FZ_ENDS;
	*why = "inline bytes or flags that do not fit";
	if (flags & BLK_CMD_INLINE) {
		if (length > BLK_INLINE_MAX || rkey || addr)
			return FZ_ENDS;
		if (op == BLK_OP_WRITE) {
			if (length != inline_len)
				return FZ_ENDS;
		} else if (op != BLK_OP_READ ||
			   !(c->open_flags & BLK_OPEN_INLINE_READ) || inline_len) {
			return FZ_ENDS;
		}
	} else if (inline_len) {
		return FZ_ENDS;
	}
	if ((flags & BLK_CMD_FUA) && op != BLK_OP_WRITE &&
	    op != BLK_OP_WRITE_ZEROES)
		return FZ_ENDS;
	/* Answered with a status: a positive errno, as on the wire. */
	*why = "an extent the export refuses";
	if (op == BLK_OP_FLUSH)
		st = off || length ? EINVAL : ro ? EROFS : 0;
	else if (!length || length % c->lbs || off % c->lbs ||
		 length > c->max_io)
		st = EINVAL;
	else if (off > c->size || length > c->size - off)
		st = ERANGE;
	else if (ro && op != BLK_OP_READ)
		st = EROFS;
	/*
	 * The answer to a READ or WRITE through a key invalidates that key,
	 * refused or not: a key that is not the window's, bound, fails on
	 * this side, and the connection with it.
	 */
	if (st && (op == BLK_OP_READ || op == BLK_OP_WRITE) &&
	    !(flags & (BLK_CMD_INLINE | BLK_CMD_STAGED)) &&
	    (!c->mw_bound || rkey != c->mw_rkey)) {
		*why = "a status whose invalidate names no live key";
		return FZ_ENDS;
	}
	if (st || op == BLK_OP_FLUSH)
		return st;
	*why = "data outside the window";
	if ((op == BLK_OP_READ || op == BLK_OP_WRITE) &&
	    !(flags & (BLK_CMD_INLINE | BLK_CMD_STAGED)) &&
	    (!c->mw_bound || rkey != c->mw_rkey || addr < data ||
	     addr - data > DATA_LEN || length > DATA_LEN - (addr - data)))
		return FZ_ENDS;
	*why = "a valid command";
	return 0;
}

/*
 * Pump until a response (events apart), a disconnect or @ms. Returns its
 * status, FZ_GONE or FZ_SILENT; *@g is the response (with the key its
 * completion invalidated and its length).
 */
static int fz_wait(struct fz *z, struct conn *c, int ms, struct got *g)
{
	long long end = now_ms() + ms;

	for (;;) {
		pump(c);
		while (c->nr_got) {
			got_take(c, 0, g);
			if (le32toh(g->rsp.tag) != BLK_TAG_EVENT)
				return le32toh(g->rsp.status);
			z->events++;
		}
		if (c->disconnected || c->flushed || c->wc_err)
			return FZ_GONE;
		if (now_ms() > end)
			return FZ_SILENT;
		usleep(100);
	}
}

/* The bytes of the answer to @cmd, answered @st: with data, or alone. */
static __u32 fz_answer_len(const struct blk_cmd *cmd, int st)
{
	return sizeof(struct blk_rsp) +
	       (!st && cmd->opcode == BLK_OP_READ &&
		(cmd->flags & BLK_CMD_INLINE) ? le32toh(cmd->length) : 0);
}

/*
 * Whether the server's header checks (rdmx_blk_cmd_parse(), and the tag
 * against the depth) pass the command at @cmd.
 */
static bool fz_header_ok(const struct conn *c, const struct blk_cmd *cmd)
{
	unsigned int i;

	if (cmd->opcode < BLK_OP_OPEN || cmd->opcode > BLK_OP_WRITE_ZEROES ||
	    (cmd->flags & ~BLK_CMD_KNOWN) ||
	    cmd->reserved0 || le32toh(cmd->tag) >= c->depth)
		return false;
	for (i = 0; cmd->opcode != BLK_OP_OPEN && i < sizeof(cmd->name); i++)
		if (cmd->name[i])
			return false;
	return true;
}

/* What the server must do with a frame of commands (fz_judge()). */
struct fz_want {
	bool batch;			/* the server takes it for a batch */
	bool whole;			/* refused whole: ends, nothing answered */
	bool ends;			/* the connection ends */
	unsigned int n;			/* commands that run (not @whole) */
	int want[BLK_BATCH_MAX];	/* command i's status, or FZ_ENDS */
	__u32 tag[BLK_BATCH_MAX];
	const char *why;
};

/*
 * What the server must do with the @len bytes in c->cmd. A single
 * command: fz_expect_at(). On a queue granted CMD_BATCH, more than a
 * command whose first is not an inline WRITE is a batch: refused whole
 * (the connection ends, nothing answered) unless it is whole commands, at
 * most 16, each passing the header checks, none an OPEN or an inline
 * WRITE, no tag twice (none is in flight: the fuzz waits for every
 * answer); else each runs as if it came alone, and one that is a
 * protocol error as it runs ends the connection.
 */
static void fz_judge(const struct conn *c, size_t len, struct fz_want *w)
{
	const struct blk_cmd *cmd = c->cmd;
	struct blk_cmd last;
	unsigned int i, j, n;
	const char *why;

	memset(w, 0, sizeof(*w));
	/*
	 * Where the data comes first: an inline WRITE with its command last
	 * is one alone; one first (its data after it) ends the connection,
	 * unless the server takes the SEND for a batch.
	 */
	if (c->data_first && cmd_last(c, cmd, len, &last)) {
		w->n = 1;
		w->want[0] = fz_expect_at(c, &last, len, &w->why);
		w->tag[0] = le32toh(last.tag);
		w->ends = w->want[0] == FZ_ENDS;
		w->whole = w->ends;
		return;
	}
	if (c->data_first && len >= sizeof(*cmd) && fz_header_ok(c, cmd) &&
	    cmd->opcode == BLK_OP_WRITE && (cmd->flags & BLK_CMD_INLINE) &&
	    !is_batch(c, cmd, len)) {
		w->n = 1;
		w->want[0] = FZ_ENDS;
		w->tag[0] = le32toh(cmd->tag);
		w->ends = true;
		w->whole = true;
		w->why = "an inline WRITE before its data, where the data comes first";
		return;
	}
	if (len < sizeof(*cmd) || !is_batch(c, cmd, len)) {
		w->n = 1;
		w->want[0] = fz_expect_at(c, cmd, len, &w->why);
		w->tag[0] = le32toh(cmd->tag);
		w->ends = w->want[0] == FZ_ENDS;
		w->whole = w->ends;
		return;
	}
	w->batch = true;
	w->whole = true;
	w->ends = true;
	w->why = "more than the server's receive holds";
	if (len > sizeof(*cmd) + BLK_INLINE_MAX)
		return;
	w->why = "a malformed command header";
	if (!fz_header_ok(c, cmd))
		return;
	w->why = "a malformed command batch";
	n = len / sizeof(*cmd);
	if (len % sizeof(*cmd) || n > BLK_BATCH_MAX)
		return;
	for (i = 0; i < n; i++) {
		cmd = &c->cmd[i];
		if (!fz_header_ok(c, cmd) || cmd->opcode == BLK_OP_OPEN ||
		    (cmd->opcode == BLK_OP_WRITE && (cmd->flags & BLK_CMD_INLINE)))
			return;
		w->tag[i] = le32toh(cmd->tag);
	}
	w->why = "a tag twice in a batch";
	for (i = 0; i < n; i++)
		for (j = 0; j < i; j++)
			if (w->tag[j] == w->tag[i])
				return;
	w->whole = false;
	w->ends = false;
	w->n = n;
	w->why = "a valid command batch";
	for (i = 0; i < n; i++) {
		w->want[i] = fz_expect_at(c, &c->cmd[i], sizeof(*cmd), &why);
		if (w->want[i] == FZ_ENDS && !w->ends) {
			w->ends = true;
			w->why = why;
		}
	}
}

/*
 * To a server whose receives take the data first, a frame that starts
 * with an inline WRITE goes with its first command moved after the rest
 * (its data), as rdmx's client sends one: whether the @len bytes in
 * c->cmd do.
 */
static bool fz_moves(const struct conn *c, size_t len)
{
	return c->data_first && len > sizeof(*c->cmd) &&
	       c->cmd->opcode == BLK_OP_WRITE &&
	       (c->cmd->flags & BLK_CMD_INLINE);
}

/* Rotate the @len bytes in c->cmd: the first command to the end, or (@back) back. */
static void fz_move(struct conn *c, size_t len, bool back)
{
	static __u8 tmp[sizeof(struct blk_cmd) + 2 * BLK_INLINE_MAX];
	size_t k = back ? len - sizeof(*c->cmd) : sizeof(*c->cmd);
	__u8 *b = (__u8 *)c->cmd;

	assert(len <= sizeof(tmp));
	memcpy(tmp, b + k, len - k);
	memcpy(tmp + len - k, b, k);
	memcpy(b, tmp, len);
}

/* fz_judge() of the frame as it goes (fz_moves()). */
static void fz_judge_sent(struct conn *c, size_t len, struct fz_want *w)
{
	bool moves = fz_moves(c, len);

	if (moves)
		fz_move(c, len, false);
	fz_judge(c, len, w);
	if (moves)
		fz_move(c, len, true);
}

/*
 * At most one command of a batch (@len bytes in c->cmd) may name the
 * bound window's key for its data: the answer to each invalidates it, and
 * invalidating it twice fails this side, not the server. Any other that
 * names it gets another key (which ends the connection as it runs).
 * Returns whether one was changed.
 */
static bool fz_batch_one_key(struct conn *c, size_t len)
{
	unsigned int i, users = 0;
	bool changed = false;
	struct blk_cmd *cmd;

	for (i = 0; c->mw_bound && i < len / sizeof(*cmd); i++) {
		cmd = &c->cmd[i];
		if ((cmd->opcode == BLK_OP_READ || cmd->opcode == BLK_OP_WRITE) &&
		    !(cmd->flags & BLK_CMD_INLINE) &&
		    le32toh(cmd->rkey) == c->mw_rkey && users++) {
			cmd->rkey = htole32(c->mw_rkey ^ 1);
			changed = true;
		}
	}
	return changed;
}

/*
 * Mutate the batch in c->cmd (@len bytes, room for two pages) once: a
 * field of one command (fz_mutate_at()), a tag twice, an OPEN or an inline
 * WRITE among them, 17 of them, or the bytes of the whole cut, extended,
 * replaced or flipped. Returns the new length; @one says what was done.
 */
static size_t fz_mutate_batch(struct conn *c, __u64 *r, size_t len, char *one,
			      size_t size)
{
	unsigned int n = len / sizeof(struct blk_cmd), k, j, w = craft_below(r, 100);
	static const char *const mangles[] = {
		[CRAFT_TRUNCATE] = "cut to", [CRAFT_EXTEND] = "extended to",
		[CRAFT_RANDOM_BYTES] = "bytes replaced,",
		[CRAFT_BIT_FLIPS] = "bits flipped,",
	};
	enum craft_mangle how;
	char f[160];

	k = craft_below(r, n);
	if (n && w < 45) {
		fz_mutate_at(c, &c->cmd[k], r, sizeof(struct blk_cmd),
			     sizeof(struct blk_cmd), true, f, sizeof(f));
		snprintf(one, size, "command %u: %s", k, f);
		return len;
	}
	if (n >= 2 && w < 55) {
		j = (k + 1 + craft_below(r, n - 1)) % n;
		c->cmd[j].tag = c->cmd[k].tag;
		snprintf(one, size, "command %u takes command %u's tag %u", j, k,
			 le32toh(c->cmd[k].tag));
		return len;
	}
	if (n && w < 62) {
		cmd_fill_at(&c->cmd[k], BLK_OP_OPEN, le32toh(c->cmd[k].tag), 0, 0);
		memcpy(c->cmd[k].name, exp_rw,
		       strnlen(exp_rw, sizeof(c->cmd[k].name)));
		snprintf(one, size, "command %u an OPEN", k);
		return len;
	}
	if (n && w < 69) {
		cmd_fill_at(&c->cmd[k], BLK_OP_WRITE, le32toh(c->cmd[k].tag),
			    0, c->lbs);
		c->cmd[k].flags = BLK_CMD_INLINE;
		snprintf(one, size, "command %u an inline WRITE", k);
		return len;
	}
	if (n && w < 76) {
		for (j = n; j < BLK_BATCH_MAX + 1; j++) {
			c->cmd[j] = c->cmd[j % n];
			c->cmd[j].tag = htole32(j % c->depth);
		}
		snprintf(one, size, "17 commands");
		return (BLK_BATCH_MAX + 1) * sizeof(struct blk_cmd);
	}
	how = craft_below(r, CRAFT_NR_MANGLES);
	len = craft_mangle(r, (__u8 *)c->cmd, len, 2 * BLK_INLINE_MAX, how);
	snprintf(one, size, "the whole %s %zu bytes", mangles[how], len);
	return len;
}

/*
 * The answers to a batch (@len bytes in c->cmd) that the server took as
 * one: judged against @w, until each command is answered (a valid batch),
 * or the connection ends (one the server must end: nothing answered when
 * refused whole; else the others' answers as if alone). Returns whether
 * the connection goes on.
 */
static bool fz_batch_watch(struct fz *z, struct conn *c, unsigned long long i,
			   const struct fz_want *w, const char *what, size_t len)
{
	bool answered[BLK_BATCH_MAX] = { false }, odd = false, live = false;
	unsigned int k, nr = 0;
	struct got g;
	__u32 tag;
	int st;

	z->batches++;
	if (!w->whole)
		z->batch_cmds += w->n;
	for (;;) {
		if (!w->ends && nr == w->n) {
			live = true;
			break;
		}
		st = c->wc_err ? FZ_GONE : fz_wait(z, c, FZ_ANSWER_MS, &g);
		if (st == FZ_GONE) {
			z->f.disconnects++;
			if (!w->ends) {
				odd = true;
				craft_fuzz_anomaly(&z->f, "batch %llu (%s), %s: ended, %u answered",
						   i, what, w->why, nr);
			}
			break;
		}
		if (st == FZ_SILENT) {
			z->f.silent++;
			odd = true;
			note("fuzz: batch %llu (%s), %s: silent %d s, %u answered; dropped",
			     i, what, w->why, FZ_ANSWER_MS / 1000, nr);
			break;
		}
		if (st)
			z->f.err_replies++;
		else
			z->f.ok_replies++;
		tag = le32toh(g.rsp.tag);
		for (k = 0; k < w->n && (w->whole || w->tag[k] != tag); k++)
			;
		if (k == w->n || w->whole || answered[k]) {
			odd = true;
			craft_fuzz_anomaly(&z->f, "batch %llu (%s), %s: tag %u answered %s, %s",
					   i, what, w->why, tag, status_name(st),
					   w->whole ? "not disconnected" :
					   k == w->n ? "no command of the batch" :
					   "twice");
			break;
		}
		answered[k] = true;
		nr++;
		if (st != w->want[k]) {
			odd = true;
			craft_fuzz_anomaly(&z->f, "batch %llu (%s), %s: its %u (tag %u) %s, not %s",
					   i, what, w->why, k, tag, status_name(st),
					   w->want[k] == FZ_ENDS ? "disconnected" :
					   status_name(w->want[k]));
		} else if (g.len != fz_answer_len(&c->cmd[k], st)) {
			odd = true;
			craft_fuzz_anomaly(&z->f, "batch %llu: its %u (tag %u): %u B, not %u",
					   i, k, tag, g.len,
					   fz_answer_len(&c->cmd[k], st));
		}
		/* The window is free again once its key was invalidated. */
		if (c->mw_bound && g.inv == c->mw_rkey)
			c->mw_bound = false;
	}
	if (odd && z->hex_notes++ < FZ_HEX_NOTES)
		craft_note_hex("fuzz: that batch", c->cmd, len);
	/* After an answer the mirror did not allow, start afresh. */
	return live && !odd;
}

/*
 * Before the frame (@len bytes in c->cmd) goes: a slot of bytes from @r
 * RDMA WRITTEN into the staging area at each of its staged WRITEs' slots
 * that lies in the area, whatever else they are. False when one fails:
 * the connection is lost.
 */
static bool fz_stage_data(struct fz *z, struct conn *c, __u64 *r, size_t len)
{
	unsigned int i, k;
	__u64 addr;
	int st;

	for (i = 0; c->stage_len && i < len / sizeof(*c->cmd); i++) {
		addr = le64toh(c->cmd[i].addr);
		if (!(c->cmd[i].flags & BLK_CMD_STAGED) ||
		    addr >= c->stage_len || addr % BLK_STAGE_SLOT)
			continue;
		for (k = 0; k < BLK_STAGE_SLOT; k++)
			c->data[k] = craft_rand(r);
		st = stage_rdma(c, false, c->stage_addr + addr, c->stage_rkey,
				BLK_STAGE_SLOT);
		if (st) {
			craft_fuzz_anomaly(&z->f, "RDMA WRITE of the staging slot at %#llx: %s",
					   (unsigned long long)addr,
					   stage_rdma_str(st));
			return false;
		}
		z->slots++;
	}
	return true;
}

/*
 * Command @i (of seed z->f.seed): built, then hostile (mutated, in rounds,
 * until the server must end the connection) or moved to an edge the
 * server must answer (and undone, should the mirror say otherwise); sent,
 * judged. On a queue granted CMD_BATCH, one time in four a batch of
 * commands instead, one of them moved to an edge, or the batch mutated.
 */
static bool fz_frame(struct fz *z, struct conn *c, unsigned long long i)
{
	static __u8 built[2 * BLK_INLINE_MAX];
	bool hostile = craft_fuzz_hostile(&z->f, i), undone = false;
	__u64 r = mix2(z->f.seed, i);
	__u32 inv = 0, got_len = 0, want_len;
	struct blk_cmd hdr;
	const struct blk_cmd *cmd = &hdr;
	char what[512], one[200];
	unsigned int round, k = 0;
	size_t len, at, built_len;
	struct fz_want w;
	const char *why;
	struct got g;
	int want, st, mw_at = -1;
	bool mw, odd, batch;

	batch = (c->open_flags & BLK_OPEN_CMD_BATCH) && craft_chance(&r, 25);
	if (batch) {
		len = fz_build_batch(c, &r, &mw_at);
		mw = mw_at >= 0;
	} else {
		len = fz_build(c, &r, &mw, hostile);
		mw_at = mw ? 0 : -1;
	}
	if (mw) {
		/* A window still bound is replaced: binding it again fails. */
		if ((c->mw_bound && mw_renew(c)) ||
		    mw_bind_for(c, IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ))
			return false;
		c->mw_bound = true;
		c->cmd[mw_at].rkey = htole32(c->mw_rkey);
		c->cmd[mw_at].addr = htole64((uintptr_t)c->data);
	}
	if (hostile) {
		*what = 0;
		for (round = 0; round < CRAFT_MUTATE_ROUNDS; round++) {
			if (batch)
				len = fz_mutate_batch(c, &r, len, one, sizeof(one));
			else
				len = fz_mutate(c, &r, len, one, sizeof(one));
			at = strlen(what);
			snprintf(what + at, sizeof(what) - at, "%s%s",
				 round ? "; " : "", one);
			if (batch && fz_batch_one_key(c, len)) {
				at = strlen(what);
				snprintf(what + at, sizeof(what) - at,
					 " (a second key user changed)");
			}
			fz_judge_sent(c, len, &w);
			if (w.ends)
				break;
		}
	} else {
		memcpy(built, c->cmd, len);
		built_len = len;
		if (batch) {
			k = craft_below(&r, len / sizeof(*cmd));
			fz_edge(c, &c->cmd[k], &r, sizeof(*cmd), one,
				sizeof(one));
			snprintf(what, sizeof(what), "command %u: %s", k, one);
		} else {
			len = fz_edge(c, c->cmd, &r, len, what, sizeof(what));
		}
		if (batch)
			fz_batch_one_key(c, len);
		fz_judge_sent(c, len, &w);
		if (w.ends) {
			/* Not an edge the server must answer: as built. */
			undone = true;
			len = built_len;
			memcpy(c->cmd, built, len);
			snprintf(what, sizeof(what), "valid, as built");
			fz_judge_sent(c, len, &w);
		}
	}
	if (!fz_stage_data(z, c, &r, len))
		return false;
	want = w.want[0];
	why = w.why;
	/* Its first command, which the answer names; then as it goes. */
	hdr = *c->cmd;
	if (fz_moves(c, len)) {
		fz_move(c, len, false);
		z->moved++;
	}
	if (send_cmd(c, len) && !c->wc_err && !c->disconnected && !c->flushed) {
		note("fuzz: command %llu (%s): the SEND did not complete",
		     i, what);
		return false;
	}
	z->f.frames++;
	if (hostile) {
		z->f.hostile++;
	} else {
		z->f.edgy++;
		z->f.edgy_undone += undone;
	}
	/* What the server takes for a batch, a mutated command too. */
	if (w.batch)
		return fz_batch_watch(z, c, i, &w, what, len);
	/* A SEND that failed: the server's QP went into error first. */
	st = c->wc_err ? FZ_GONE : fz_wait(z, c, FZ_ANSWER_MS, &g);
	if (st >= 0) {
		inv = g.inv;
		got_len = g.len;
	}
	if (st == FZ_GONE) {
		z->f.disconnects++;
		odd = want != FZ_ENDS;
		if (odd)
			craft_fuzz_anomaly(&z->f, "command %llu (%s), %s: disconnected, not %s",
					   i, what, why, status_name(want));
	} else if (st == FZ_SILENT) {
		z->f.silent++;
		odd = true;
		note("fuzz: command %llu (%s), %s: no answer in %d s, connection dropped",
		     i, what, why, FZ_ANSWER_MS / 1000);
	} else {
		if (st)
			z->f.err_replies++;
		else
			z->f.ok_replies++;
		want_len = fz_answer_len(cmd, st);
		odd = want != st || le32toh(g.rsp.tag) != le32toh(cmd->tag) ||
		      got_len != want_len;
		if (want != st)
			craft_fuzz_anomaly(&z->f, "command %llu (%s), %s: answered %s, not %s",
					   i, what, why, status_name(st),
					   want == FZ_ENDS ? "disconnected" :
					   status_name(want));
		else if (odd)
			craft_fuzz_anomaly(&z->f, "command %llu: tag %u, %u bytes; not tag %u, %u",
					   i, le32toh(g.rsp.tag), got_len,
					   le32toh(cmd->tag), want_len);
		/* The window is free again once its key was invalidated. */
		if (c->mw_bound && inv == c->mw_rkey)
			c->mw_bound = false;
	}
	if (odd && z->hex_notes++ < FZ_HEX_NOTES)
		craft_note_hex("fuzz: that command", c->cmd, len);
	return st >= 0;
}

/*
 * After the fuzz: a new queue OPENs EXPORT and READs its first block, into
 * the memory window, or inline without one (a FLUSH when neither is
 * possible). 0 when it does; 1 when it does not; 2 when this host could
 * not try.
 */
static int fz_alive(struct fz *z)
{
	long long end = now_ms() + FZ_GIVE_UP_MS;
	const char *why = "no connection";
	enum fz_dial d;
	struct got g;
	struct conn c;
	int st = -1;

	for (;;) {
		d = fz_connect(z, &c, true);
		if (d == FZ_LIVE)
			break;
		conn_close(&c);
		if (d == FZ_HOST)
			return 2;
		if (d == FZ_NOEXPORT) {
			why = "OPEN refused";
			goto out;
		}
		if (now_ms() > end)
			goto out;
		if (d == FZ_BUSY)
			usleep(200 * 1000);
	}
	why = "no answer";
	if (have_mw) {
		st = blk_io(&c, BLK_OP_READ, 1, 0, c.lbs);
	} else if (c.open_flags & BLK_OPEN_INLINE_READ) {
		cmd_fill(&c, BLK_OP_READ, 1, 0, c.lbs);
		c.cmd->flags = BLK_CMD_INLINE;
		if (!send_cmd(&c, sizeof(*c.cmd)))
			st = fz_wait(z, &c, TIMEOUT_MS, &g);
		if (st == 0 && (le32toh(g.rsp.tag) != 1 ||
				g.len != sizeof(g.rsp) + c.lbs)) {
			why = "a wrong answer";
			st = -1;
		}
	} else {
		note("after the fuzz: no memory windows, no inline reads: a FLUSH, not a READ");
		st = blk_io(&c, BLK_OP_FLUSH, 1, 0, 0);
	}
out:
	if (st >= 0)
		report(st == 0, "after the fuzz: a new queue of %s reads its first block (%s)",
		       exp_rw, status_name(st));
	else
		report(false, "after the fuzz: a new queue of %s reads its first block (%s)",
		       exp_rw, why);
	conn_close(&c);
	return st == 0 ? 0 : 1;
}

/*
 * The wire fuzz: @count commands, or as many as @secs (0: no limit)
 * allow, @hostile_pct percent of them hostile, reconnecting (and OPENing
 * again) as needed; then the summary and the check that the server still
 * serves.
 */
static int mode_fuzz(unsigned long long seed, unsigned long count,
		     unsigned long secs, unsigned int hostile_pct)
{
	static struct fz z;
	long long deadline = secs ? now_ms() + secs * 1000LL : 0;
	unsigned long long i = 0;
	bool live = false;
	long long lost = 0;
	enum fz_dial d;
	struct conn c;

	memset(&z, 0, sizeof(z));
	memset(&c, 0, sizeof(c));
	z.f.seed = seed;
	z.f.hostile_pct = hostile_pct;
	z.f.start_ms = now_ms();
	while (i < count && (!deadline || now_ms() < deadline)) {
		if (!live) {
			d = fz_connect(&z, &c, false);
			if (d == FZ_LIVE) {
				live = true;
				lost = 0;
				continue;
			}
			conn_close(&c);
			/* Nothing ran: this host, nobody there, no export. */
			if ((d == FZ_HOST || d == FZ_NOBODY ||
			     d == FZ_NOEXPORT) && !z.f.connects)
				return 2;
			if (!lost)
				lost = now_ms();
			if (now_ms() - lost > FZ_GIVE_UP_MS) {
				note("fuzz: no connection for %d s: stopped",
				     FZ_GIVE_UP_MS / 1000);
				break;
			}
			/* A pause, longer for BUSY: the server tears down. */
			usleep(d == FZ_BUSY ? 20 * 1000 : 2 * 1000);
			continue;
		}
		live = fz_frame(&z, &c, i++);
		if (!live)
			conn_close(&c);
	}
	if (live)
		conn_close(&c);
	if (z.events)
		note("fuzz: %llu events (responses to no command)", z.events);
	note("fuzz: %llu queues granted CMD_BATCH, %llu batches, %llu commands run in them",
	     z.cmd_batch, z.batches, z.batch_cmds);
	note("fuzz: %llu queues taking the data first, %llu frames sent with their command last",
	     z.data_first, z.moved);
	note("fuzz: %llu queues granted a staging area, %llu slots RDMA WRITTEN for staged WRITEs",
	     z.staged, z.slots);
	craft_fuzz_summary(&z.f);
	return craft_fuzz_exit(&z.f, fz_alive(&z));
}

static void print_usage(FILE *f)
{
	fprintf(f,
		"usage: rdmx-blkcraft [-p PORT] [-r ROUNDS] [-R] HOST EXPORT RO_EXPORT\n"
		"       rdmx-blkcraft [-p PORT] -B HOST EXPORT RO_EXPORT\n"
		"       rdmx-blkcraft [-p PORT] -T HOST EXPORT RO_EXPORT\n"
		"       rdmx-blkcraft [-p PORT] -S SLOW_EXPORT HOST EXPORT RO_EXPORT\n"
		"       rdmx-blkcraft [-p PORT] -X THAWFILE HOST EXPORT RO_EXPORT\n"
		"       rdmx-blkcraft [-p PORT] -O STATUS HOST EXPORT RO_EXPORT\n"
		"       rdmx-blkcraft [-p PORT] -K HOST EXPORT RO_EXPORT\n"
		"       rdmx-blkcraft [-p PORT] -F SEED [-n MSGS] [-d SECONDS] [-m PERCENT]\n"
		"                     HOST EXPORT RO_EXPORT\n"
		"  Sends crafted commands to the rdmx block server at HOST:PORT\n"
		"  (default 7471): EXPORT is a writable export (a few of its blocks\n"
		"  are overwritten), RO_EXPORT a read-only one. Prints TAP lines.\n"
		"  -r ROUNDS   connections per race driven (default 50)\n"
		"  -R          only the races, then a check that EXPORT still serves\n"
		"  -B          only the command batches (CMD_BATCH: valid ones, refused\n"
		"              ones), then a check that EXPORT still serves\n"
		"  -T          only the staging area (STAGE: staged WRITEs, refused\n"
		"              ones, its access), then a check that EXPORT still serves\n"
		"  -S SLOW_EXPORT\n"
		"              only a command batch reusing the tag of a READ in\n"
		"              flight on SLOW_EXPORT, whose every request takes\n"
		"              seconds: the server must end the connection\n"
		"  -F SEED     the wire fuzz instead: MSGS (default 10000) valid\n"
		"              commands of random opcodes, with a PRNG seeded by SEED,\n"
		"              each either mutated (fields, truncation, extension,\n"
		"              bytes) until the server must drop the queue, or moved\n"
		"              to an edge the server must answer (extents at the ends,\n"
		"              the largest, refused ones, odd window addresses, tags),\n"
		"              on queues that OPEN EXPORT (or RO_EXPORT) and reconnect\n"
		"              as the server drops them, one connect request in ten\n"
		"              with fuzzed private data; EXPORT is written all over.\n"
		"              Then a new queue must READ EXPORT: exit 0 if it does,\n"
		"              1 if not\n"
		"  -n MSGS     commands the fuzz sends\n"
		"  -d SECONDS  the fuzz stops after SECONDS, if MSGS are not sent yet\n"
		"  -m PERCENT  how many commands in a hundred are mutated until the\n"
		"              server must drop the queue (default 10); the others\n"
		"              are valid, at the edges, and the queue stays\n"
		"  -O STATUS   only one OPEN of EXPORT, which must be answered STATUS\n"
		"              (0, EACCES, ...)\n"
		"  -X THAWFILE only the fence: EXPORT's store is frozen until\n"
		"              THAWFILE exists, which the tool creates; a reconnected\n"
		"              map's OPEN must wait for its older queue's write\n"
		"  -K          only the queues the server must drop by itself (its\n"
		"              blk_keepalive_ms set to 1000): one that never OPENs,\n"
		"              one whose QP stops answering after a keepalive came\n");
}

int main(int argc, char **argv)
{
	unsigned long count = 10000, fuzz_secs = 0;
	unsigned int open_rounds = 50, hostile_pct = CRAFT_HOSTILE_PCT;
	unsigned long long seed = 0;
	bool races_only = false, fuzz = false, batches_only = false;
	bool stage_only = false;
	const char *thaw = NULL, *open_want = NULL, *slow = NULL;
	bool keepalive = false;
	enum violation v;
	char *endp;
	int opt, ret;

	craft_prog = "rdmx-blkcraft";
	while ((opt = getopt(argc, argv, "Bd:F:hKm:n:O:p:r:RS:TX:")) != -1) {
		switch (opt) {
		case 'B':
			batches_only = true;
			break;
		case 'S':
			slow = optarg;
			break;
		case 'T':
			stage_only = true;
			break;
		case 'K':
			keepalive = true;
			break;
		case 'O':
			open_want = optarg;
			break;
		case 'X':
			thaw = optarg;
			break;
		case 'm':
			if (!craft_parse_percent(optarg, &hostile_pct))
				return 2;
			break;
		case 'p':
			port = optarg;
			break;
		case 'r':
			open_rounds = strtoul(optarg, &endp, 10);
			if (*endp || !open_rounds || open_rounds > 100000) {
				fprintf(stderr, "rdmx-blkcraft: -r: 1 to 100000, not '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'R':
			races_only = true;
			break;
		case 'F':
			errno = 0;
			seed = strtoull(optarg, &endp, 0);
			if (errno || *endp || !*optarg) {
				fprintf(stderr, "rdmx-blkcraft: -F: a number, not '%s'\n",
					optarg);
				return 2;
			}
			fuzz = true;
			break;
		case 'n':
			errno = 0;
			count = strtoul(optarg, &endp, 10);
			if (errno || *endp || !count || count > 100000000) {
				fprintf(stderr, "rdmx-blkcraft: -n: 1 to 100000000, not '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'd':
			errno = 0;
			fuzz_secs = strtoul(optarg, &endp, 10);
			if (errno || *endp || !fuzz_secs || fuzz_secs > 86400) {
				fprintf(stderr, "rdmx-blkcraft: -d: 1 to 86400, not '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'h':
			print_usage(stdout);
			return 0;
		default:
			print_usage(stderr);
			return 2;
		}
	}
	if (argc - optind != 3) {
		print_usage(stderr);
		return 2;
	}
	host = argv[optind];
	exp_rw = argv[optind + 1];
	exp_ro = argv[optind + 2];
	if (craft_target(host, port))
		return 2;
	have_mw = probe_mw();

	if (fuzz) {
		note("fuzz: SEED %llu, MSGS %lu, SECONDS %lu, to %s:%s, exports %s and %s",
		     seed, count, fuzz_secs, host, port, exp_rw, exp_ro);
		note("fuzz: HOSTILE %u%%: commands mutated until the queue must be dropped",
		     hostile_pct);
		ret = mode_fuzz(seed, count, fuzz_secs, hostile_pct);
		craft_target_free();
		if (ret != 2)
			printf("# %d tests, %d failed\n", n_tests, n_failed);
		return ret;
	}
	if (thaw || open_want || keepalive || slow) {
		if (open_want)
			case_open_only(open_want);
		else if (thaw)
			case_fence(thaw);
		else if (slow)
			case_batch_busy(slow);
		else
			case_keepalive();
		craft_target_free();
		printf("# %d tests, %d failed\n", n_tests, n_failed);
		return n_failed ? 1 : 0;
	}
	if (batches_only || stage_only) {
		if (batches_only)
			cases_batch();
		else
			cases_stage();
		case_still_serves();
		craft_target_free();
		printf("# %d tests, %d failed\n", n_tests, n_failed);
		return n_failed ? 1 : 0;
	}
	if (!races_only) {
		case_reject("connect request with a bad magic", 0x1234,
			    PROTO_MAJOR, REJ_BAD_MAGIC);
		case_reject("connect request of major version 2", PROTO_MAGIC,
			    2, REJ_VERSION);
		case_open_and_ro();
		case_ro_map();
		case_extents();
		for (v = V_OPCODE; v <= V_INLINE_KEY; v++)
			case_violation(v);
		cases_batch();
		cases_stage();
	}
	case_busy_tag();
	case_open_race(open_rounds);
	case_still_serves();

	craft_target_free();
	printf("# %d tests, %d failed\n", n_tests, n_failed);
	return n_failed ? 1 : 0;
}
