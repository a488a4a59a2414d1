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
 * EXPORT is a writable export of HOST, RO_EXPORT a read-only one; a few
 * blocks of EXPORT are overwritten. -r sets how often a race is driven
 * (default 50), -R runs only the races and the final check. Prints
 * "ok N - ..." / "not ok N - ..." lines and exits 1 on any failure.
 *
 * The wire format is mirrored by hand from kmod/proto.h and
 * kmod/blk_proto.h: every field little-endian, sizes checked below.
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
#include <getopt.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <linux/types.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

/*
 * The kernel's __printf(), which userspace has to define itself; split
 * across two lines, as checkpatch would otherwise flag its __attribute__.
 */
#define __printf(fmt, args)	__attribute__(\
	(format(printf, fmt, args)))

#define BIT(n)			(1U << (n))

#define PROTO_MAGIC		0x52dc
#define PROTO_MAJOR		1
#define PROTO_MINOR		0
#define PROTO_F_BLOCK		BIT(2)
#define REJ_BAD_MAGIC		1
#define REJ_VERSION		2
/* IB_CM_REJ_CONSUMER_DEFINED, as rdma_cm reports it in the event status */
#define CM_REJ_CONSUMER		28

#define BLK_OP_OPEN		1
#define BLK_OP_READ		2
#define BLK_OP_WRITE		3
#define BLK_OP_FLUSH		4
#define BLK_OP_DISCARD		5
#define BLK_OP_WRITE_ZEROES	6
#define BLK_CMD_INLINE		BIT(1)
#define BLK_OPEN_RO		BIT(0)
#define BLK_EXP_RO		BIT(0)
#define BLK_INLINE_MAX		4096
#define BLK_MAX_IO		(1024 * 1024)

/* What this client asks for in its connect request. */
#define CLT_DEPTH		9
#define NR_RECV			16
#define DATA_LEN		(64 * 1024)
#define TIMEOUT_MS		30000

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

/* kmod/proto.h: struct rdmx_conn_req, _rep, _rej */
struct conn_req {
	__u8 cma_version;
	__u8 ip_version;
	__le16 magic;
	__u8 major;
	__u8 minor;
	__le16 queue_depth;
	__le32 features;
	__le32 max_msg_size;
	__le16 qp_index;
	__le16 nr_qps;
	__le32 reserved0;
	__u8 sess_uuid[16];
	__le64 generation;
	__u8 reserved[8];
};

struct conn_rep {
	__le16 magic;
	__u8 major;
	__u8 minor;
	__le16 queue_depth;
	__le16 nr_qps;
	__le32 features;
	__le32 max_msg_size;
	__le64 generation;
	__u8 reserved[8];
};

struct conn_rej {
	__le16 magic;
	__u8 major;
	__u8 minor;
	__le16 reason;
	__u8 reserved[10];
};

/* kmod/blk_proto.h: struct rdmx_blk_cmd, _rsp */
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
	__u8 reserved[16];
};

static_assert(sizeof(struct conn_req) == 56, "rdmx_conn_req");
static_assert(offsetof(struct conn_req, sess_uuid) == 24, "rdmx_conn_req");
static_assert(offsetof(struct conn_req, generation) == 40, "rdmx_conn_req");
static_assert(sizeof(struct conn_rep) == 32, "rdmx_conn_rep");
static_assert(sizeof(struct conn_rej) == 16, "rdmx_conn_rej");
static_assert(sizeof(struct blk_cmd) == 96, "rdmx_blk_cmd");
static_assert(offsetof(struct blk_cmd, addr) == 24, "rdmx_blk_cmd");
static_assert(sizeof(struct blk_rsp) == 64, "rdmx_blk_rsp");
static_assert(offsetof(struct blk_rsp, uuid) == 32, "rdmx_blk_rsp");

/* Work request ids: receives are their slot's number. */
enum { WR_SEND = NR_RECV, WR_BIND };

/*
 * A receive that invalidated a key. Soft-RoCE (6.12) reports it to
 * userspace with the kernel's IB_WC_WITH_INVALIDATE, BIT(2), which is
 * IBV_WC_IP_CSUM_OK there (never set on an RC receive), not IBV_WC_WITH_INV.
 */
#define WC_WITH_INV		(IBV_WC_WITH_INV | BIT(2))

/*
 * One connection: a buffer registered once, holding the receive slots, the
 * command (with its inline data after it) and the data a READ lands in.
 */
struct conn {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	__u32 mw_rkey;
	__u8 *buf;
	struct blk_rsp *rsps;		/* NR_RECV receive slots */
	struct blk_cmd *cmd;		/* followed by up to 4 KiB inline */
	__u8 *data;			/* DATA_LEN, what a READ fills */
	/* granted in the accept */
	__u32 depth;
	__u32 max_msg;
	/* the OPEN's answer */
	__u64 size;
	__u32 lbs;
	__u32 max_io;
	__u32 exp_flags;
	/* what the completions and events said */
	struct blk_rsp got[NR_RECV];
	__u32 got_inv[NR_RECV];		/* the key invalidated, or 0 */
	__u32 got_len[NR_RECV];
	unsigned int nr_got;
	unsigned int sends_done;
	bool bound;
	bool disconnected;
	bool flushed;
	int wc_err;			/* a failed send or bind's status */
};

static const char *host, *port = "7471", *exp_rw, *exp_ro;
static struct addrinfo *dst;
static bool have_mw;
static int n_tests, n_failed;

static __printf(2, 3) void report(bool ok, const char *fmt, ...)
{
	va_list ap;

	n_tests++;
	if (!ok)
		n_failed++;
	printf("%sok %d - ", ok ? "" : "not ", n_tests);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static void skip(const char *what, const char *why)
{
	n_tests++;
	printf("ok %d - %s # SKIP %s\n", n_tests, what, why);
	fflush(stdout);
}

static __printf(1, 2) void note(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

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
	}
	snprintf(buf, sizeof(buf), "%d", s);
	return buf;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* ---- rdma_cm ------------------------------------------------------------ */

/*
 * Wait for the next CM event on @c within @ms; its type in *@type, its
 * status in *@status, and up to @len bytes of its private data in @pdata.
 * Returns 0, or -1 on timeout or error.
 */
static int cm_next(struct conn *c, int ms, enum rdma_cm_event_type *type,
		   int *status, void *pdata, size_t len)
{
	struct pollfd pfd = { .fd = c->ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&pfd, 1, ms) <= 0 || rdma_get_cm_event(c->ch, &ev))
		return -1;
	*type = ev->event;
	if (status)
		*status = ev->status;
	if (pdata) {
		memset(pdata, 0, len);
		if (ev->param.conn.private_data)
			memcpy(pdata, ev->param.conn.private_data,
			       ev->param.conn.private_data_len < len ?
			       ev->param.conn.private_data_len : len);
	}
	rdma_ack_cm_event(ev);
	return 0;
}

static int cm_expect(struct conn *c, enum rdma_cm_event_type want)
{
	enum rdma_cm_event_type type;

	if (cm_next(c, TIMEOUT_MS, &type, NULL, NULL, 0))
		return -1;
	if (type != want) {
		note("expected %s, got %s", rdma_event_str(want),
		     rdma_event_str(type));
		return -1;
	}
	return 0;
}

static void conn_close(struct conn *c)
{
	if (c->id && c->id->qp) {
		rdma_disconnect(c->id);
		rdma_destroy_qp(c->id);
	}
	if (c->mw)
		ibv_dealloc_mw(c->mw);
	if (c->mr)
		ibv_dereg_mr(c->mr);
	if (c->cq)
		ibv_destroy_cq(c->cq);
	if (c->pd)
		ibv_dealloc_pd(c->pd);
	if (c->id)
		rdma_destroy_id(c->id);
	if (c->ch)
		rdma_destroy_event_channel(c->ch);
	free(c->buf);
	memset(c, 0, sizeof(*c));
}

static int post_recv(struct conn *c, unsigned int slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)&c->rsps[slot],
		.length = sizeof(struct blk_rsp),
		.lkey = c->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(c->id->qp, &wr, &bad);
}

/* Resolve, build the QP and its buffers, post the receives. */
static int conn_setup(struct conn *c)
{
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 16, .max_recv_wr = NR_RECV,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
	};
	size_t len = NR_RECV * sizeof(struct blk_rsp) + 2 * BLK_INLINE_MAX + DATA_LEN;
	int access = IBV_ACCESS_LOCAL_WRITE;
	unsigned int i;

	memset(c, 0, sizeof(*c));
	c->ch = rdma_create_event_channel();
	if (!c->ch || rdma_create_id(c->ch, &c->id, NULL, RDMA_PS_TCP))
		return -1;
	if (rdma_resolve_addr(c->id, NULL, dst->ai_addr, 5000) ||
	    cm_expect(c, RDMA_CM_EVENT_ADDR_RESOLVED) ||
	    rdma_resolve_route(c->id, 5000) ||
	    cm_expect(c, RDMA_CM_EVENT_ROUTE_RESOLVED))
		return -1;
	c->pd = ibv_alloc_pd(c->id->verbs);
	c->cq = ibv_create_cq(c->id->verbs, 64, NULL, NULL, 0);
	if (!c->pd || !c->cq)
		return -1;
	qa.send_cq = c->cq;
	qa.recv_cq = c->cq;
	if (rdma_create_qp(c->id, c->pd, &qa))
		return -1;
	if (posix_memalign((void **)&c->buf, 4096, len))
		return -1;
	memset(c->buf, 0, len);
	c->data = c->buf;
	c->cmd = (struct blk_cmd *)(c->buf + DATA_LEN);
	c->rsps = (struct blk_rsp *)(c->buf + DATA_LEN + 2 * BLK_INLINE_MAX);
	if (have_mw)
		access |= IBV_ACCESS_MW_BIND;
	c->mr = ibv_reg_mr(c->pd, c->buf, len, access);
	if (!c->mr)
		return -1;
	if (have_mw) {
		c->mw = ibv_alloc_mw(c->pd, IBV_MW_TYPE_2);
		if (!c->mw)
			return -1;
		c->mw_rkey = c->mw->rkey;
	}
	for (i = 0; i < NR_RECV; i++)
		if (post_recv(c, i))
			return -1;
	return 0;
}

static void req_pack(struct conn_req *req, __u16 magic, __u8 major)
{
	memset(req, 0, sizeof(*req));
	req->magic = htole16(magic);
	req->major = major;
	req->minor = PROTO_MINOR;
	req->queue_depth = htole16(CLT_DEPTH);
	req->features = htole32(PROTO_F_BLOCK);
	req->max_msg_size = htole32(BLK_MAX_IO);
	req->qp_index = htole16(0);
	req->nr_qps = htole16(1);
	if (getrandom(req->sess_uuid, sizeof(req->sess_uuid), 0) < 0)
		memset(req->sess_uuid, 0x5a, sizeof(req->sess_uuid));
	req->generation = htole64(1);
}

static int conn_send_req(struct conn *c, const struct conn_req *req)
{
	struct rdma_conn_param cp = {
		.private_data = req,
		.private_data_len = sizeof(*req),
		.responder_resources = 1,
		.initiator_depth = 1,
		.retry_count = 7,
		.rnr_retry_count = 7,
	};

	return rdma_connect(c->id, &cp);
}

/* Connect as a block queue; checks what the accept grants. */
static int conn_open(struct conn *c)
{
	enum rdma_cm_event_type type;
	struct conn_rep rep;
	struct conn_req req;
	int status;

	if (conn_setup(c)) {
		note("connection setup to %s:%s failed: %m", host, port);
		return -1;
	}
	req_pack(&req, PROTO_MAGIC, PROTO_MAJOR);
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
	if (le16toh(rep.magic) != PROTO_MAGIC || rep.major != PROTO_MAJOR ||
	    le32toh(rep.features) != PROTO_F_BLOCK || le16toh(rep.nr_qps) != 1 ||
	    c->depth < 2 || c->depth > CLT_DEPTH || !c->max_msg ||
	    c->max_msg > BLK_MAX_IO || le64toh(rep.generation) != 1) {
		note("accept: magic %#x major %u features %#x nr_qps %u",
		     le16toh(rep.magic), rep.major, le32toh(rep.features),
		     le16toh(rep.nr_qps));
		note("accept: depth %u max_msg %u generation %llu", c->depth,
		     c->max_msg, (unsigned long long)le64toh(rep.generation));
		return -1;
	}
	return 0;
}

/* ---- completions -------------------------------------------------------- */

/* Reap completions and CM events, without blocking. */
static void pump(struct conn *c)
{
	struct ibv_wc wc[16];
	int i, n;

	while ((n = ibv_poll_cq(c->cq, 16, wc)) > 0) {
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
			} else if (c->nr_got < NR_RECV) {
				c->got[c->nr_got] = c->rsps[w->wr_id];
				c->got_len[c->nr_got] = w->byte_len;
				c->got_inv[c->nr_got] = w->wc_flags & WC_WITH_INV ?
							w->invalidated_rkey : 0;
				c->nr_got++;
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
 * Post @n SENDs (at most 2, chained) of @len bytes each: all of the command
 * buffer's first command, or with @each the buffer's commands 0 to @n - 1.
 */
static int send_cmd_n(struct conn *c, size_t len, unsigned int n, bool each)
{
	struct ibv_sge sge[2];
	struct ibv_send_wr wr[2], *bad;
	unsigned int i, want = c->sends_done + n;
	long long end = now_ms() + TIMEOUT_MS;

	assert(n <= 2);
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < n; i++) {
		sge[i].addr = (uintptr_t)(c->cmd + (each ? i : 0));
		sge[i].length = len;
		sge[i].lkey = c->mr->lkey;
		wr[i].wr_id = WR_SEND;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].opcode = IBV_WR_SEND;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	if (ibv_post_send(c->id->qp, wr, &bad))
		return -1;
	while (c->sends_done < want) {
		pump(c);
		if (c->wc_err || now_ms() > end)
			return -1;
		usleep(200);
	}
	return 0;
}

static int send_cmd(struct conn *c, size_t len)
{
	return send_cmd_n(c, len, 1, false);
}

/* Bind the memory window over the data buffer with a fresh key. */
static int mw_bind(struct conn *c)
{
	struct ibv_send_wr wr = {
		.wr_id = WR_BIND,
		.opcode = IBV_WR_BIND_MW,
		.bind_mw = {
			.mw = c->mw,
			.rkey = ibv_inc_rkey(c->mw_rkey),
			.bind_info = {
				.mr = c->mr,
				.addr = (uintptr_t)c->data,
				.length = DATA_LEN,
				.mw_access_flags = IBV_ACCESS_REMOTE_WRITE,
			},
		},
	};
	struct ibv_send_wr *bad;

	c->bound = false;
	if (ibv_post_send(c->id->qp, &wr, &bad) || pump_until(c, &c->bound)) {
		note("binding a memory window failed (status %d)", c->wc_err);
		return -1;
	}
	/* The next bind names the window by its current key. */
	c->mw_rkey = wr.bind_mw.rkey;
	c->mw->rkey = c->mw_rkey;
	return 0;
}

/*
 * A window whose key the server did not invalidate is still bound: replace
 * it (binding a bound type 2 window fails, and soft-RoCE in 6.12 oopses on
 * a local invalidate of one already invalidated, so that is not tried).
 */
static int mw_renew(struct conn *c)
{
	ibv_dealloc_mw(c->mw);
	c->mw = ibv_alloc_mw(c->pd, IBV_MW_TYPE_2);
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
			int st = le32toh(c->got[i].status);

			if (le32toh(c->got[i].tag) != tag)
				continue;
			if (rsp)
				*rsp = c->got[i];
			if (inv)
				*inv = c->got_inv[i];
			if (c->got_len[i] != sizeof(*rsp))
				note("response of %u bytes", c->got_len[i]);
			c->nr_got--;
			memmove(&c->got[i], &c->got[i + 1],
				(c->nr_got - i) * sizeof(c->got[0]));
			memmove(&c->got_inv[i], &c->got_inv[i + 1],
				(c->nr_got - i) * sizeof(c->got_inv[0]));
			memmove(&c->got_len[i], &c->got_len[i + 1],
				(c->nr_got - i) * sizeof(c->got_len[0]));
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
			note("answered: tag %u status %s", le32toh(c->got[0].tag),
			     status_name(le32toh(c->got[0].status)));
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

static void cmd_fill(struct conn *c, __u8 op, __u32 tag, __u64 off, __u32 len)
{
	memset(c->cmd, 0, sizeof(*c->cmd));
	c->cmd->opcode = op;
	c->cmd->tag = htole32(tag);
	c->cmd->offset = htole64(off);
	c->cmd->length = htole32(len);
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
	}
	return st;
}

/* Connect and OPEN; false (and a failed test) when that does not work. */
static bool conn_open_export(struct conn *c, const char *name, __u32 flags)
{
	int st;

	if (conn_open(c)) {
		report(false, "connect to %s:%s as a block queue", host, port);
		return false;
	}
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

/* A WRITE of @len bytes of @src, inline in the command's SEND. */
static int blk_write_inline(struct conn *c, __u32 tag, __u64 off,
			    const void *src, __u32 len)
{
	cmd_fill(c, BLK_OP_WRITE, tag, off, len);
	c->cmd->flags = BLK_CMD_INLINE;
	memcpy(c->cmd + 1, src, len);
	if (send_cmd(c, sizeof(*c->cmd) + len))
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
	if (c->id->verbs &&
	    c->id->verbs->device->transport_type == IBV_TRANSPORT_IWARP)
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

	if (conn_open(&c)) {
		report(false, "connect to %s:%s as a block queue", host, port);
		conn_close(&c);
		return;
	}
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
	expect_status(blk_io(&c, BLK_OP_FLUSH, 5, 0, 0), 0,
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
		cmd_fill(&c, BLK_OP_OPEN, 1, 0, v == V_OPEN_FLAG ? BIT(5) : 0);
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
	unsigned int i, ok_answers, twice = 0, stuck = 0, errs = 0;
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
		if (send_cmd_n(&c, sizeof(*c.cmd), 2, true) &&
		    c.wc_err != IBV_WC_WR_FLUSH_ERR) {
			errs++;
			conn_close(&c);
			break;
		}
		end = now_ms() + TIMEOUT_MS;
		while (!c.disconnected && !c.flushed && now_ms() < end) {
			pump(&c);
			usleep(200);
		}
		for (ok_answers = 0; c.nr_got; c.nr_got--)
			ok_answers += le32toh(c.got[c.nr_got - 1].status) == 0;
		if (ok_answers > 1)
			twice++;
		else if (!c.disconnected && !c.flushed)
			stuck++;
		conn_close(&c);
	}
	if (errs)
		note("%s: round %u: connect or send failed", what, i + 1);
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

/* Memory windows of type 2 exist on the device that reaches @dst. */
static bool probe_mw(void)
{
	struct ibv_device_attr attr = {};
	struct conn c;
	bool ok;

	if (conn_setup(&c) && !c.id) {
		conn_close(&c);
		return false;
	}
	ok = c.id->verbs && !ibv_query_device(c.id->verbs, &attr) &&
	     attr.max_mw > 0 &&
	     (attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B);
	note("device %s: max_mw %d, type 2B windows %s",
	     c.id->verbs ? ibv_get_device_name(c.id->verbs->device) : "?",
	     c.id->verbs ? attr.max_mw : 0, ok ? "yes" : "no");
	conn_close(&c);
	return ok;
}

static void print_usage(FILE *f)
{
	fprintf(f,
		"usage: rdmx-blkcraft [-p PORT] [-r ROUNDS] [-R] HOST EXPORT RO_EXPORT\n"
		"  Sends crafted commands to the rdmx block server at HOST:PORT\n"
		"  (default 7471): EXPORT is a writable export (a few of its blocks\n"
		"  are overwritten), RO_EXPORT a read-only one. Prints TAP lines.\n"
		"  -r ROUNDS  connections per race driven (default 50)\n"
		"  -R         only the races, then a check that EXPORT still serves\n");
}

int main(int argc, char **argv)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM };
	unsigned int open_rounds = 50;
	bool races_only = false;
	enum violation v;
	char *endp;
	int opt, ret;

	while ((opt = getopt(argc, argv, "hp:r:R")) != -1) {
		switch (opt) {
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
	ret = getaddrinfo(host, port, &hints, &dst);
	if (ret) {
		fprintf(stderr, "rdmx-blkcraft: %s:%s: %s\n", host, port,
			gai_strerror(ret));
		return 2;
	}
	have_mw = probe_mw();

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
	}
	case_busy_tag();
	case_open_race(open_rounds);
	case_still_serves();

	freeaddrinfo(dst);
	printf("# %d tests, %d failed\n", n_tests, n_failed);
	return n_failed ? 1 : 0;
}
