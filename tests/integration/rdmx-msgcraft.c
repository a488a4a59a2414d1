// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx-msgcraft: a hand-made message-service peer (librdmacm, libibverbs)
 * that connects to an rdmx listener as one session of one lane, speaks
 * Documentation/protocol.rst correctly up to a point, and then misbehaves
 * in one of these ways:
 *
 * echo-stall  OPEN COUNT channels of the echo service, send each one
 *             message of 1000 bytes, then stop acknowledging, granting
 *             credits and posting receives for SECONDS, reaping
 *             completions all the while. Whether the server kept the
 *             connection is reported as a note, not a failure.
 * zero-segs   OPEN one echo channel and send COUNT DATA segments of
 *             length 0, each with RDMX_MSG_F_MORE: a message that never
 *             ends, sent within the credits and the transmit window as
 *             a real sender must. The server must disconnect this peer or
 *             stop granting credits before COUNT: if it takes all of them
 *             and keeps granting, what it holds grows without bound.
 * open-flood  send COUNT OPENs of the echo service, never acknowledging,
 *             granting credits or posting a receive after the first ones,
 *             then hold for SECONDS. The checks (memory, splats) are the
 *             calling script's: this tool reports what it saw.
 *
 * Usage: rdmx-msgcraft [-p PORT] [-n COUNT] [-t SECONDS] MODE HOST
 * Prints "ok N - ..." / "not ok N - ..." lines and "# ..." notes; exits
 * 0 when every line is ok, 1 when one is not, 2 when the tool could not
 * run (usage, no RDMA device, no route, no answer from HOST:PORT).
 *
 * The wire format is mirrored by hand from kmod/proto.h: every field
 * little-endian, sizes checked below. What is sent follows kmod/sess.c:
 * sequence numbers start at 0 in both directions (a new session's lanes
 * are zeroed), every message carries the next sequence number expected
 * (ack) and the receive buffers reposted since the last message
 * (credits), and one credit is kept for control messages.
 *
 * Where the source leaves a choice, this peer does what the kernel client
 * does: it offers the default queue depth (64) and SENDs of RDMX_SEG_SIZE,
 * posts all its receives before connecting, takes a random version 4
 * uuid, sends a bare ACK first on ESTABLISHED (the server makes the
 * connection live on the first message), answers a HEARTBEAT at once,
 * and keeps DATA within RDMX_TX_WINDOW unacknowledged (OPEN is not held
 * back: the kernel queues it even when the window is full). It does not
 * grant a lone reposted buffer after a delay, as the kernel does (see
 * ack_maybe()).
 *
 * Credits bound the floods: a peer that grants nothing back can receive
 * at most its queue depth of messages, so the server can grant it credits
 * (which ride on those messages) only so often. open-flood sends what the
 * credits allow and stops once none have come for 2 s.
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
#include <linux/rdmx.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

/*
 * The kernel's __printf(), which userspace has to define itself; split
 * across two lines, as checkpatch would otherwise flag its __attribute__.
 */
#define __printf(fmt, args)	__attribute__(\
	(format(printf, fmt, args)))

#define BIT(n)			(1U << (n))

/* kmod/proto.h */
#define PROTO_MAGIC		0x52dc
#define PROTO_MAJOR		1
#define PROTO_MINOR		0
#define PROTO_F_MSG		BIT(0)
#define PROTO_MAX_QUEUE_DEPTH	4096
#define CREDITS_RESERVED	1

enum {
	MSG_DATA = 1,
	MSG_ACK = 2,
	MSG_HEARTBEAT = 3,
	MSG_HEARTBEAT_ACK = 4,
	MSG_CLOSE = 5,
	MSG_OPEN = 6,
	MSG_OPEN_REP = 7,
	MSG_SHUT = 8,
	MSG_IMMED = 9,
	MSG_NR_TYPES,
};

#define MSG_F_MORE		BIT(0)
#define OPEN_OK			0
#define OPEN_NR_STATUS		3
#define REJ_NR_REASONS		9

/* kmod/sess.h */
#define SEG_SIZE		(32 * 1024 - 256)	/* RDMX_SEG_SIZE */
#define TX_WINDOW		256			/* RDMX_TX_WINDOW */

/*
 * What this peer asks for: the queue depth a kernel client offers by
 * default (/sys/kernel/rdmx/queue_depth), and SENDs of SEG_SIZE, the size
 * of the receive buffers below (a server refuses less).
 */
#define CLT_DEPTH		64
#define RX_SLOT			(sizeof(struct msg_hdr) + SEG_SIZE)
/* Send slots, and the send queue: more than the credits can ever allow. */
#define SQ_DEPTH		128
#define TX_SLOT			2048
#define ECHO_LEN		1000
/*
 * A bare ACK when this many reposted buffers are owed, as the kernel's
 * rdmx_ack_maybe() does (max(1, depth / 4)).
 */
#define ACK_THRESHOLD		(CLT_DEPTH / 4)

#define TIMEOUT_MS		30000
/*
 * open-flood: the server grants credits at once or within a jiffy when
 * it can send at all; with none for this long it cannot any more (its
 * credits towards this peer, which grants none, are spent).
 */
#define FLOOD_CREDIT_WAIT_MS	2000
/* Anomalies in what the server sends: the first few are shown. */
#define ANOMALY_NOTES		5

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

/* kmod/proto.h: struct rdmx_msg_hdr, rdmx_chan_open, rdmx_chan_open_rep */
struct msg_hdr {
	__u8 type;
	__u8 flags;
	__le16 credits;
	__le32 seq;
	__le32 ack;
	__le32 len;
	__le32 chan;
	__le32 reserved;
};

struct chan_open {
	__le32 chan;
	__le32 reserved;
	__u8 service[RDMX_SERVICE_LEN];
};

struct chan_open_rep {
	__le32 chan;
	__le32 status;
	__u8 reserved[8];
};

static_assert(sizeof(struct conn_req) == 56, "rdmx_conn_req");
static_assert(offsetof(struct conn_req, sess_uuid) == 24, "rdmx_conn_req");
static_assert(offsetof(struct conn_req, generation) == 40, "rdmx_conn_req");
static_assert(sizeof(struct conn_rep) == 32, "rdmx_conn_rep");
static_assert(sizeof(struct conn_rej) == 16, "rdmx_conn_rej");
static_assert(sizeof(struct msg_hdr) == 24, "rdmx_msg_hdr");
static_assert(offsetof(struct msg_hdr, chan) == 16, "rdmx_msg_hdr");
static_assert(sizeof(struct chan_open) == 72, "rdmx_chan_open");
static_assert(sizeof(struct chan_open_rep) == 16, "rdmx_chan_open_rep");
static_assert(sizeof(struct msg_hdr) + sizeof(struct chan_open) <= TX_SLOT,
	      "send slot");
static_assert(sizeof(struct msg_hdr) + ECHO_LEN <= TX_SLOT, "send slot");
static_assert(RX_SLOT % 8 == 0, "receive slot alignment");

/* One channel this peer opened: local id = index + 1. */
struct chan {
	__u32 rchan;		/* the server's id, from its OPEN_REP */
	__u32 status;		/* its OPEN_REP's status */
	bool replied;
	unsigned int echoed;	/* complete messages received on it */
};

/*
 * The one connection (lane 0) and what this peer does on it. Send work
 * requests have ids from CLT_DEPTH up; receives are their slot's number.
 */
struct peer {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	__u8 *buf;
	__u8 *rx;			/* CLT_DEPTH receive slots of RX_SLOT */
	__u8 *tx;			/* SQ_DEPTH send slots of TX_SLOT */
	/* granted in the accept */
	__u32 depth;			/* the server's receive buffers */
	__u32 max_msg;
	/* this side's sending */
	__u32 avail;			/* credits: SENDs the server can take */
	__u32 snd_nxt;			/* next sequence number to send */
	__u32 snd_una;			/* oldest not acknowledged */
	unsigned long long tx_posted, tx_done;
	/* this side's receiving */
	__u32 rcv_nxt;			/* next sequence number expected */
	__u32 ack_sent;			/* the ack of the last message sent */
	__u32 rx_owed;			/* buffers reposted, not granted yet */
	unsigned int rx_held;		/* buffers used and not reposted */
	bool repost;			/* repost receive buffers */
	bool behave;			/* acknowledge, grant, answer probes */
	bool hb_owed;			/* a HEARTBEAT to answer */
	/* channels */
	struct chan *chans;
	unsigned int nr_chans;
	/* what the server sent */
	unsigned int nr_msgs;
	unsigned int nr_open_rep, nr_open_ok;
	unsigned int nr_data, nr_segs;
	unsigned long long data_bytes;
	unsigned int nr_ack, nr_hb, nr_shut, nr_close, nr_other;
	unsigned long long credits_got;
	unsigned int anomalies;
	/* the connection's end */
	bool disconnected;
	bool flushed;
	int wc_err;			/* a failed send's status */
	long long gone_ms;		/* when the connection was seen to go */
};

static const char *host, *port = "7471";
static struct addrinfo *dst;
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

static __printf(1, 2) void complain(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "rdmx-msgcraft: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
}

/* Something the server sent breaks the protocol: counted, first few shown. */
static __printf(2, 3) void anomaly(struct peer *p, const char *fmt, ...)
{
	va_list ap;

	if (p->anomalies++ >= ANOMALY_NOTES)
		return;
	printf("# server: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Sequence numbers wrap: RFC 1982 arithmetic, as rdmx_seq_before(). */
static bool seq_before(__u32 a, __u32 b)
{
	return (__s32)(a - b) < 0;
}

static bool type_sequenced(__u8 type)
{
	return type == MSG_DATA || type == MSG_OPEN || type == MSG_OPEN_REP ||
	       type == MSG_SHUT || type == MSG_IMMED;
}

/* ---- rdma_cm ------------------------------------------------------------ */

/*
 * Wait for the next CM event on @p within @ms; its type in *@type, its
 * status in *@status, and up to @len bytes of its private data in @pdata.
 * Returns 0, or -1 on timeout or error.
 */
static int cm_next(struct peer *p, int ms, enum rdma_cm_event_type *type,
		   int *status, void *pdata, size_t len)
{
	struct pollfd pfd = { .fd = p->ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&pfd, 1, ms) <= 0 || rdma_get_cm_event(p->ch, &ev))
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

/* 0 when the next event is @want; else a note and -1. */
static int cm_expect(struct peer *p, enum rdma_cm_event_type want)
{
	enum rdma_cm_event_type type;
	int status = 0;

	if (cm_next(p, TIMEOUT_MS, &type, &status, NULL, 0)) {
		complain("%s:%s: no %s", host, port, rdma_event_str(want));
		return -1;
	}
	if (type != want) {
		complain("%s:%s: expected %s, got %s (status %d)", host, port,
			 rdma_event_str(want), rdma_event_str(type), status);
		return -1;
	}
	return 0;
}

static void peer_close(struct peer *p)
{
	if (p->id && p->id->qp) {
		rdma_disconnect(p->id);
		rdma_destroy_qp(p->id);
	}
	if (p->mr)
		ibv_dereg_mr(p->mr);
	if (p->cq)
		ibv_destroy_cq(p->cq);
	if (p->pd)
		ibv_dealloc_pd(p->pd);
	if (p->id)
		rdma_destroy_id(p->id);
	if (p->ch)
		rdma_destroy_event_channel(p->ch);
	free(p->buf);
	free(p->chans);
	memset(p, 0, sizeof(*p));
}

static int post_recv(struct peer *p, unsigned int slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(p->rx + slot * RX_SLOT),
		.length = RX_SLOT,
		.lkey = p->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(p->id->qp, &wr, &bad);
}

/*
 * Resolve, build the QP and its buffers, post every receive: all of them
 * are there before the connect request names CLT_DEPTH. Failures are this
 * host's (no device, no route): said on stderr, -1.
 */
static int peer_setup(struct peer *p)
{
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = SQ_DEPTH, .max_recv_wr = CLT_DEPTH,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
	};
	size_t len = CLT_DEPTH * RX_SLOT + SQ_DEPTH * TX_SLOT;
	unsigned int i;

	p->ch = rdma_create_event_channel();
	if (!p->ch) {
		complain("no rdma_cm event channel: %m (no RDMA device?)");
		return -1;
	}
	if (rdma_create_id(p->ch, &p->id, NULL, RDMA_PS_TCP)) {
		complain("rdma_create_id: %m");
		return -1;
	}
	if (rdma_resolve_addr(p->id, NULL, dst->ai_addr, 5000)) {
		complain("cannot resolve %s:%s to an RDMA device: %m (no RDMA device?)",
			 host, port);
		return -1;
	}
	if (cm_expect(p, RDMA_CM_EVENT_ADDR_RESOLVED))
		return -1;
	if (rdma_resolve_route(p->id, 5000)) {
		complain("no route to %s:%s: %m", host, port);
		return -1;
	}
	if (cm_expect(p, RDMA_CM_EVENT_ROUTE_RESOLVED))
		return -1;
	p->pd = ibv_alloc_pd(p->id->verbs);
	p->cq = ibv_create_cq(p->id->verbs, CLT_DEPTH + SQ_DEPTH + 8, NULL,
			      NULL, 0);
	if (!p->pd || !p->cq) {
		complain("%s: protection domain or completion queue: %m",
			 ibv_get_device_name(p->id->verbs->device));
		return -1;
	}
	qa.send_cq = p->cq;
	qa.recv_cq = p->cq;
	if (rdma_create_qp(p->id, p->pd, &qa)) {
		complain("%s: queue pair: %m",
			 ibv_get_device_name(p->id->verbs->device));
		return -1;
	}
	if (posix_memalign((void **)&p->buf, 4096, len)) {
		complain("out of memory");
		return -1;
	}
	memset(p->buf, 0, len);
	p->rx = p->buf;
	p->tx = p->buf + CLT_DEPTH * RX_SLOT;
	p->mr = ibv_reg_mr(p->pd, p->buf, len, IBV_ACCESS_LOCAL_WRITE);
	if (!p->mr) {
		complain("memory registration: %m");
		return -1;
	}
	for (i = 0; i < CLT_DEPTH; i++) {
		if (post_recv(p, i)) {
			complain("posting receive %u: %m", i);
			return -1;
		}
	}
	return 0;
}

/* ---- messages ----------------------------------------------------------- */

static bool peer_gone(const struct peer *p)
{
	return p->disconnected || p->flushed || p->wc_err;
}

static void peer_mark_gone(struct peer *p)
{
	if (!p->gone_ms)
		p->gone_ms = now_ms();
}

/* One message from the server, in receive slot @slot: checked and counted. */
static void rx_handle(struct peer *p, unsigned int slot, __u32 byte_len)
{
	const struct msg_hdr *h = (const void *)(p->rx + slot * RX_SLOT);
	const void *payload = h + 1;
	__u32 seq, ack, len, id;
	__u16 credits;

	p->nr_msgs++;
	if (byte_len < sizeof(*h)) {
		anomaly(p, "a SEND of %u bytes, shorter than a header", byte_len);
		return;
	}
	credits = le16toh(h->credits);
	seq = le32toh(h->seq);
	ack = le32toh(h->ack);
	len = le32toh(h->len);
	id = le32toh(h->chan);
	if (h->type < MSG_DATA || h->type >= MSG_NR_TYPES || h->reserved ||
	    len != byte_len - sizeof(*h) ||
	    (h->flags & ~(h->type == MSG_DATA ? MSG_F_MORE : 0))) {
		anomaly(p, "malformed header: type %u flags %#x len %u in %u bytes",
			h->type, h->flags, len, byte_len);
		return;
	}

	/* A grant beyond the server's queue would be rdmx_credits_grant()'s EPROTO. */
	if (credits > p->depth - p->avail) {
		anomaly(p, "granted %u credits with %u of %u in hand", credits,
			p->avail, p->depth);
		p->avail = p->depth;
	} else {
		p->avail += credits;
	}
	p->credits_got += credits;
	/* An ack is believable between the oldest unacknowledged and the next. */
	if (seq_before(ack, p->snd_una) || seq_before(p->snd_nxt, ack))
		anomaly(p, "ack %u outside [%u, %u]", ack, p->snd_una, p->snd_nxt);
	else
		p->snd_una = ack;

	if (type_sequenced(h->type)) {
		if (seq != p->rcv_nxt) {
			anomaly(p, "type %u with seq %u, expected %u", h->type,
				seq, p->rcv_nxt);
			return;
		}
		p->rcv_nxt++;
	} else if (seq || id || len) {
		anomaly(p, "control message %u with seq %u chan %u len %u",
			h->type, seq, id, len);
	}

	switch (h->type) {
	case MSG_OPEN_REP: {
		const struct chan_open_rep *rep = payload;
		__u32 rchan = le32toh(rep->chan), st = le32toh(rep->status);
		struct chan *c;

		static const __u8 zero[sizeof(rep->reserved)];

		if (len != sizeof(*rep) || st >= OPEN_NR_STATUS ||
		    (st == OPEN_OK ? !rchan : rchan) ||
		    memcmp(rep->reserved, zero, sizeof(zero)) ||
		    !id || id > p->nr_chans) {
			anomaly(p, "OPEN_REP for chan %u: len %u, chan %u, status %u",
				id, len, rchan, st);
			break;
		}
		c = &p->chans[id - 1];
		if (c->replied) {
			anomaly(p, "a second OPEN_REP for chan %u", id);
			break;
		}
		c->replied = true;
		c->rchan = rchan;
		c->status = st;
		p->nr_open_rep++;
		p->nr_open_ok += st == OPEN_OK;
		break;
	}
	case MSG_DATA:
		p->nr_segs++;
		p->data_bytes += len;
		if (!id || id > p->nr_chans) {
			anomaly(p, "DATA for chan %u, which this peer never opened",
				id);
			break;
		}
		if (!(h->flags & MSG_F_MORE)) {
			p->nr_data++;
			p->chans[id - 1].echoed++;
		}
		break;
	case MSG_ACK:
		p->nr_ack++;
		break;
	case MSG_HEARTBEAT:
		p->nr_hb++;
		p->hb_owed = true;
		break;
	case MSG_SHUT:
		p->nr_shut++;
		break;
	case MSG_CLOSE:
		p->nr_close++;
		break;
	default:
		/* OPEN (only clients open, in this version), IMMED, probe answers */
		p->nr_other++;
		break;
	}
}

/*
 * Whether a SEND can be posted: a send slot, and a credit; the last
 * credit is for control messages only (rdmx_credits_take()).
 */
static bool can_send(const struct peer *p, bool control)
{
	return !peer_gone(p) && p->tx_posted - p->tx_done < SQ_DEPTH &&
	       p->avail > (control ? 0 : CREDITS_RESERVED);
}

/*
 * Post one message; the caller checked can_send(). A sequenced type
 * takes the next sequence number. While this peer behaves, the message
 * acknowledges everything received and grants every reposted buffer,
 * as rdmx_post_txbuf() does; otherwise it repeats the last ack sent and
 * grants nothing.
 */
static int send_msg(struct peer *p, __u8 type, __u8 flags, __u32 chan,
		    const void *payload, __u32 len)
{
	unsigned int slot = p->tx_posted % SQ_DEPTH;
	struct msg_hdr *h = (void *)(p->tx + slot * TX_SLOT);
	struct ibv_sge sge = {
		.addr = (uintptr_t)h,
		.length = sizeof(*h) + len,
		.lkey = p->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = CLT_DEPTH + slot,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;
	__u32 grant = 0, ack = p->ack_sent;

	assert(sizeof(*h) + len <= TX_SLOT);
	if (p->behave) {
		grant = p->rx_owed < 0xffff ? p->rx_owed : 0xffff;
		ack = p->rcv_nxt;
	}
	memset(h, 0, sizeof(*h));
	h->type = type;
	h->flags = flags;
	h->credits = htole16(grant);
	h->seq = htole32(type_sequenced(type) ? p->snd_nxt : 0);
	h->ack = htole32(ack);
	h->len = htole32(len);
	h->chan = htole32(chan);
	if (len)
		memcpy(h + 1, payload, len);
	if (ibv_post_send(p->id->qp, &wr, &bad))
		return -1;
	p->rx_owed -= grant;
	p->ack_sent = ack;
	p->avail--;
	p->tx_posted++;
	if (type_sequenced(type))
		p->snd_nxt++;
	return 0;
}

/* An OPEN of the echo service with local channel id @id. */
static int send_open(struct peer *p, __u32 id)
{
	struct chan_open op;

	memset(&op, 0, sizeof(op));
	op.chan = htole32(id);
	memcpy(op.service, RDMX_SERVICE_ECHO, sizeof(RDMX_SERVICE_ECHO));
	return send_msg(p, MSG_OPEN, 0, 0, &op, sizeof(op));
}

/*
 * While behaving: answer a probe, and acknowledge at once whatever
 * sequenced message arrived, or grant reposted buffers once a quarter of
 * the queue is owed. Unlike the kernel, a lone credit is not granted
 * after a delay: the server answers every bare ACK with one (its delayed
 * ACK grants the buffer the ACK used), and so would this peer, for ever.
 */
static void ack_maybe(struct peer *p)
{
	if (!p->behave)
		return;
	if (p->hb_owed && can_send(p, true)) {
		if (send_msg(p, MSG_HEARTBEAT_ACK, 0, 0, NULL, 0))
			goto fail;
		p->hb_owed = false;
	}
	if ((p->rcv_nxt != p->ack_sent || p->rx_owed >= ACK_THRESHOLD) &&
	    can_send(p, true) && send_msg(p, MSG_ACK, 0, 0, NULL, 0))
		goto fail;
	return;
fail:
	note("posting a SEND: %m");
	p->wc_err = -1;
	peer_mark_gone(p);
}

/* Reap completions and CM events, without blocking. */
static void reap(struct peer *p)
{
	enum rdma_cm_event_type type;
	struct ibv_wc wc[16];
	int i, n;

	while ((n = ibv_poll_cq(p->cq, ARRAY_SIZE(wc), wc)) > 0) {
		for (i = 0; i < n; i++) {
			struct ibv_wc *w = &wc[i];

			if (w->wr_id >= CLT_DEPTH) {
				p->tx_done++;
				if (w->status != IBV_WC_SUCCESS) {
					if (!p->wc_err ||
					    p->wc_err == IBV_WC_WR_FLUSH_ERR)
						p->wc_err = w->status;
					peer_mark_gone(p);
				}
				continue;
			}
			if (w->status != IBV_WC_SUCCESS) {
				if (!p->flushed && w->status != IBV_WC_WR_FLUSH_ERR)
					note("receive failed: %s",
					     ibv_wc_status_str(w->status));
				p->flushed = true;
				peer_mark_gone(p);
				continue;
			}
			rx_handle(p, w->wr_id, w->byte_len);
			if (!p->repost) {
				p->rx_held++;
			} else if (post_recv(p, w->wr_id)) {
				note("reposting a receive: %m");
				p->flushed = true;
				peer_mark_gone(p);
			} else {
				p->rx_owed++;
			}
		}
	}
	while (!cm_next(p, 0, &type, NULL, NULL, 0)) {
		if (type == RDMA_CM_EVENT_DISCONNECTED ||
		    type == RDMA_CM_EVENT_DEVICE_REMOVAL) {
			p->disconnected = true;
			peer_mark_gone(p);
		}
	}
}

/* Reap, then acknowledge if due. */
static void pump(struct peer *p)
{
	reap(p);
	if (!peer_gone(p))
		ack_maybe(p);
}

static bool ready(const struct peer *p, bool control, bool window)
{
	return can_send(p, control) &&
	       (!window || p->snd_nxt - p->snd_una < TX_WINDOW);
}

enum wait_result { WAIT_OK, WAIT_GONE, WAIT_TIMEOUT };

/*
 * Pump until a SEND (@control or sequenced) can go, and, with @window,
 * until fewer than TX_WINDOW sequenced messages are unacknowledged (a
 * real sender's transmit window). WAIT_TIMEOUT after @ms without that.
 * When the caller's message can go at once, it carries the ack and the
 * credits instead of a bare ACK (a probe is still answered first).
 */
static enum wait_result wait_send(struct peer *p, bool control, bool window,
				  long long ms)
{
	long long end = now_ms() + ms;

	for (;;) {
		reap(p);
		if (peer_gone(p))
			return WAIT_GONE;
		if (ready(p, control, window) && !p->hb_owed)
			return WAIT_OK;
		ack_maybe(p);
		if (peer_gone(p))
			return WAIT_GONE;
		if (ready(p, control, window))
			return WAIT_OK;
		if (now_ms() > end)
			return WAIT_TIMEOUT;
		usleep(100);
	}
}

/*
 * A SEND could not be posted: the QP may have gone into error before its
 * disconnect was seen. True when the connection is found gone within a
 * second; else this side failed, said on stderr.
 */
static bool post_failed_gone(struct peer *p)
{
	long long end = now_ms() + 1000;
	int err = errno;

	while (!peer_gone(p) && now_ms() < end) {
		reap(p);
		usleep(1000);
	}
	if (peer_gone(p))
		return true;
	errno = err;
	complain("posting a SEND: %m");
	return false;
}

/* Pump until @p has @want OPEN_REPs; false on a timeout or a dead peer. */
static bool wait_open_reps(struct peer *p, unsigned int want)
{
	long long end = now_ms() + TIMEOUT_MS;
	unsigned int seen = p->nr_open_rep;

	while (p->nr_open_rep < want) {
		pump(p);
		if (peer_gone(p))
			return false;
		if (p->nr_open_rep != seen) {
			seen = p->nr_open_rep;
			end = now_ms() + TIMEOUT_MS;
		}
		if (now_ms() > end)
			return false;
		usleep(100);
	}
	return true;
}

/* Pump for @ms, or until the connection goes. */
static void hold(struct peer *p, long long ms)
{
	long long end = now_ms() + ms;

	while (now_ms() < end && !peer_gone(p)) {
		pump(p);
		usleep(1000);
	}
	pump(p);
}

/* How the connection ended, for a report. */
static const char *gone_how(const struct peer *p)
{
	if (p->disconnected)
		return "disconnected";
	if (p->flushed)
		return "the QP went into error (receives flushed)";
	if (p->wc_err > 0)
		return ibv_wc_status_str(p->wc_err);
	return "a local error";
}

/* ---- the session -------------------------------------------------------- */

static void req_pack(struct conn_req *req)
{
	memset(req, 0, sizeof(*req));
	req->magic = htole16(PROTO_MAGIC);
	req->major = PROTO_MAJOR;
	req->minor = PROTO_MINOR;
	req->queue_depth = htole16(CLT_DEPTH);
	req->features = htole32(PROTO_F_MSG);
	req->max_msg_size = htole32(SEG_SIZE);
	req->qp_index = htole16(0);
	req->nr_qps = htole16(1);
	if (getrandom(req->sess_uuid, sizeof(req->sess_uuid), 0) < 0)
		memset(req->sess_uuid, 0x5a, sizeof(req->sess_uuid));
	/* RFC 4122 version 4, as uuid_gen() makes them. */
	req->sess_uuid[6] = (req->sess_uuid[6] & 0x0f) | 0x40;
	req->sess_uuid[8] = (req->sess_uuid[8] & 0x3f) | 0x80;
	req->generation = htole64(1);
}

static bool rep_reserved_zero(const struct conn_rep *rep)
{
	unsigned int i;

	for (i = 0; i < sizeof(rep->reserved); i++)
		if (rep->reserved[i])
			return false;
	return true;
}

/*
 * Connect as a new session (lane 0 of 1, generation 1) and go live as the
 * kernel client does on ESTABLISHED: credits are the server's queue depth,
 * and a bare ACK goes first (the server makes the connection live on the
 * first message that arrives). Returns 0; 1 when the server answered
 * wrongly (a failed test line); 2 when this host could not get there.
 */
static int peer_connect(struct peer *p, unsigned int nr_chans)
{
	/*
	 * As rdmx_cm_route_resolved(), but for the RDMA READ depths: the
	 * kernel offers min(16, the device's), which the server bounds by
	 * its own; the message service reads nothing, so 1 does.
	 */
	struct rdma_conn_param cp = {
		.responder_resources = 1,
		.initiator_depth = 1,
		.flow_control = 1,
		.retry_count = 7,
		.rnr_retry_count = 7,
	};
	enum rdma_cm_event_type type;
	union {
		struct conn_rep rep;
		struct conn_rej rej;
	} u;
	struct conn_req req;
	int status = 0;

	memset(p, 0, sizeof(*p));
	p->nr_chans = nr_chans;
	p->chans = calloc(nr_chans, sizeof(*p->chans));
	if (!p->chans) {
		complain("out of memory");
		return 2;
	}
	if (peer_setup(p))
		return 2;
	req_pack(&req);
	cp.private_data = &req;
	cp.private_data_len = sizeof(req);
	if (rdma_connect(p->id, &cp)) {
		complain("rdma_connect to %s:%s: %m", host, port);
		return 2;
	}
	if (cm_next(p, TIMEOUT_MS, &type, &status, &u, sizeof(u))) {
		complain("no answer from %s:%s in %d s", host, port,
			 TIMEOUT_MS / 1000);
		return 2;
	}
	if (type == RDMA_CM_EVENT_REJECTED) {
		unsigned int reason = le16toh(u.rej.reason);

		if (le16toh(u.rej.magic) != PROTO_MAGIC) {
			complain("%s:%s: refused (status %d), no rdmx listener?",
				 host, port, status);
			return 2;
		}
		report(false, "connect to %s:%s as a new session: rejected, reason %u%s",
		       host, port, reason,
		       reason < REJ_NR_REASONS ? "" : " (unknown)");
		return 1;
	}
	if (type != RDMA_CM_EVENT_ESTABLISHED) {
		complain("connect to %s:%s: %s, status %d", host, port,
			 rdma_event_str(type), status);
		return 2;
	}
	p->depth = le16toh(u.rep.queue_depth);
	p->max_msg = le32toh(u.rep.max_msg_size);
	/* rdmx_conn_rep_parse() and rdmx_cm_established()'s checks */
	if (le16toh(u.rep.magic) != PROTO_MAGIC || u.rep.major != PROTO_MAJOR ||
	    (u.rep.minor == PROTO_MINOR && !rep_reserved_zero(&u.rep)) ||
	    p->depth <= CREDITS_RESERVED || p->depth > CLT_DEPTH ||
	    le16toh(u.rep.nr_qps) != 1 ||
	    le32toh(u.rep.features) != PROTO_F_MSG ||
	    p->max_msg < SEG_SIZE || le64toh(u.rep.generation) != 1) {
		note("accept: magic %#x major %u depth %u nr_qps %u features %#x",
		     le16toh(u.rep.magic), u.rep.major, p->depth,
		     le16toh(u.rep.nr_qps), le32toh(u.rep.features));
		note("accept: max_msg %u generation %llu", p->max_msg,
		     (unsigned long long)le64toh(u.rep.generation));
		report(false, "connect: the accept grants what a client takes");
		return 1;
	}
	report(true, "connect as a new session: depth %u (asked %u), max_msg %u",
	       p->depth, CLT_DEPTH, p->max_msg);

	/* Go live: rdmx_conn_go_live() on a client. */
	p->avail = p->depth;
	p->repost = true;
	p->behave = true;
	if (send_msg(p, MSG_ACK, 0, 0, NULL, 0)) {
		complain("posting the first ACK: %m");
		return 2;
	}
	return 0;
}

/* The last line of every mode: what the server sent kept the protocol. */
static void report_conformance(const struct peer *p)
{
	report(!p->anomalies,
	       "the server's %u messages kept the protocol (%u anomalies)",
	       p->nr_msgs, p->anomalies);
	note("server sent: %u OPEN_REP (%u OK), %u DATA (%u segments, %llu bytes)",
	     p->nr_open_rep, p->nr_open_ok, p->nr_data, p->nr_segs,
	     p->data_bytes);
	note("server sent: %u ACK, %u HEARTBEAT, %u SHUT, %u CLOSE, %u other",
	     p->nr_ack, p->nr_hb, p->nr_shut, p->nr_close, p->nr_other);
	note("server granted %llu credits", p->credits_got);
}

/* ---- modes -------------------------------------------------------------- */

static int mode_echo_stall(unsigned int count, unsigned int secs)
{
	static __u8 msg[ECHO_LEN];
	unsigned int i, sent = 0, data0, hb0;
	long long start;
	struct peer p;
	int ret;

	ret = peer_connect(&p, count);
	if (ret)
		goto out;

	for (i = 0; i < count; i++) {
		if (wait_send(&p, false, false, TIMEOUT_MS) != WAIT_OK ||
		    send_open(&p, i + 1))
			break;
	}
	if (i < count) {
		report(false, "OPEN %u channels of %s: stopped after %u (%s)",
		       count, RDMX_SERVICE_ECHO, i,
		       peer_gone(&p) ? gone_how(&p) : "no credits");
		ret = 1;
		goto out;
	}
	wait_open_reps(&p, count);
	/* Past RDMX_SESS_MAX_CHANS a refusal (BUSY) is an answer too. */
	report(p.nr_open_rep == count,
	       "OPEN %u channels of %s: %u OPEN_REPs, %u accepted", count,
	       RDMX_SERVICE_ECHO, p.nr_open_rep, p.nr_open_ok);
	if (p.nr_open_rep < count) {
		if (peer_gone(&p))
			note("the connection went: %s", gone_how(&p));
		ret = 1;
		goto out;
	}

	/* One message on each channel accepted, still as a real client. */
	for (i = 0; i < count; i++) {
		if (!p.chans[i].replied || p.chans[i].status != OPEN_OK)
			continue;
		memset(msg, 'a' + i % 26, sizeof(msg));
		if (wait_send(&p, false, true, TIMEOUT_MS) != WAIT_OK ||
		    send_msg(&p, MSG_DATA, 0, p.chans[i].rchan, msg,
			     sizeof(msg)))
			break;
		sent++;
	}
	/* Then nothing: no ACK, no credit, no receive, not even for a probe. */
	p.behave = false;
	p.repost = false;
	report(sent == p.nr_open_ok, "DATA of %u bytes on each of the %u channels: %u sent",
	       ECHO_LEN, p.nr_open_ok, sent);

	data0 = p.nr_data;
	hb0 = p.nr_hb;
	start = now_ms();
	hold(&p, secs * 1000LL);
	if (peer_gone(&p) && p.gone_ms < start)
		note("the connection went before the hold: %s", gone_how(&p));
	else if (peer_gone(&p))
		note("the server ended the connection %.1f s into the %u s hold: %s",
		     (p.gone_ms - start) / 1000.0, secs, gone_how(&p));
	else
		note("the connection was still up after the %u s hold", secs);
	note("while stalled: %u echoes (%u before), %u probes unanswered",
	     p.nr_data - data0, data0, p.nr_hb - hb0);
	note("%u receives not reposted; the server acknowledged %u of %u",
	     p.rx_held, p.snd_una, p.snd_nxt);
	report_conformance(&p);
	ret = n_failed ? 1 : 0;
out:
	peer_close(&p);
	return ret;
}

static int mode_zero_segs(unsigned int count, unsigned int secs)
{
	enum wait_result wr = WAIT_OK;
	unsigned int sent = 0, rchan;
	const char *why = NULL;
	long long end;
	struct peer p;
	int ret;

	ret = peer_connect(&p, 1);
	if (ret)
		goto out;
	if (wait_send(&p, false, false, TIMEOUT_MS) != WAIT_OK || send_open(&p, 1) ||
	    !wait_open_reps(&p, 1) || p.chans[0].status != OPEN_OK) {
		report(false, "OPEN a channel of %s (%s)", RDMX_SERVICE_ECHO,
		       peer_gone(&p) ? gone_how(&p) :
		       p.nr_open_rep ? "refused" : "no answer");
		ret = 1;
		goto out;
	}
	rchan = p.chans[0].rchan;
	report(true, "OPEN a channel of %s: accepted, server id %u",
	       RDMX_SERVICE_ECHO, rchan);

	while (sent < count) {
		wr = wait_send(&p, false, true, secs * 1000LL);
		if (wr != WAIT_OK)
			break;
		if (send_msg(&p, MSG_DATA, MSG_F_MORE, rchan, NULL, 0)) {
			if (!post_failed_gone(&p)) {
				ret = 2;
				goto out;
			}
			wr = WAIT_GONE;
			break;
		}
		sent++;
	}
	if (wr == WAIT_TIMEOUT)
		why = p.avail <= CREDITS_RESERVED ?
		      "stopped granting credits" : "stopped acknowledging";
	else if (wr == WAIT_GONE)
		why = "disconnected this peer";

	if (!why) {
		/* All sent: does the server take them all and keep going? */
		end = now_ms() + secs * 1000LL;
		while (p.snd_una != p.snd_nxt && !peer_gone(&p) &&
		       now_ms() < end) {
			pump(&p);
			usleep(100);
		}
		if (peer_gone(&p))
			why = "disconnected this peer";
		else if (p.snd_una != p.snd_nxt)
			why = "stopped acknowledging";
	}
	note("%u of %u empty segments sent, %u acknowledged", sent, count,
	     p.snd_una ? p.snd_una - 1 : 0);
	if (why)
		report(true, "empty segments of one message: the server %s after %u",
		       why, sent);
	else
		report(false, "empty segments of one message: all %u taken, credits still granted",
		       count);
	if (peer_gone(&p))
		note("the connection went: %s", gone_how(&p));
	report_conformance(&p);
	ret = n_failed ? 1 : 0;
out:
	peer_close(&p);
	return ret;
}

static int mode_open_flood(unsigned int count, unsigned int secs)
{
	enum wait_result wr = WAIT_OK;
	unsigned int sent = 0;
	struct peer p;
	int ret;

	ret = peer_connect(&p, count);
	if (ret)
		goto out;
	/* From the first ACK on: no ack, no credit, no receive reposted. */
	p.behave = false;
	p.repost = false;
	while (sent < count) {
		wr = wait_send(&p, false, false, FLOOD_CREDIT_WAIT_MS);
		if (wr != WAIT_OK)
			break;
		if (send_open(&p, sent + 1)) {
			if (!post_failed_gone(&p)) {
				ret = 2;
				goto out;
			}
			wr = WAIT_GONE;
			break;
		}
		sent++;
	}
	hold(&p, secs * 1000LL);
	note("%u of %u OPENs sent (%s)", sent, count,
	     wr == WAIT_OK ? "all" : wr == WAIT_GONE ? "the connection went" :
	     "no more credits");
	report(true, "OPEN flood: %u sent, %u OPEN_REPs (%u accepted), the server %s",
	       sent, p.nr_open_rep, p.nr_open_ok,
	       peer_gone(&p) ? "disconnected" : "kept the connection");
	if (peer_gone(&p))
		note("the connection went: %s", gone_how(&p));
	note("the server acknowledged %u of %u; %u receive buffers used and not reposted",
	     p.snd_una, p.snd_nxt, p.rx_held);
	report_conformance(&p);
	ret = n_failed ? 1 : 0;
out:
	peer_close(&p);
	return ret;
}

/* ---- main --------------------------------------------------------------- */

static const struct {
	const char *name;
	int (*run)(unsigned int count, unsigned int secs);
	unsigned int count;	/* default */
	unsigned int count_max;
} modes[] = {
	{ "echo-stall", mode_echo_stall, 64, 1000000 },
	{ "zero-segs", mode_zero_segs, 100000, 100000000 },
	{ "open-flood", mode_open_flood, 10000, 1000000 },
};

static void print_usage(FILE *f)
{
	fprintf(f,
		"usage: rdmx-msgcraft [-p PORT] [-n COUNT] [-t SECONDS] MODE HOST\n"
		"  Connects to the rdmx listener at HOST:PORT (default 7471) as one\n"
		"  session of one lane, then misbehaves as MODE says. Prints TAP lines;\n"
		"  exits 0 when all are ok, 1 when one is not, 2 when it cannot run.\n"
		"  echo-stall  OPEN COUNT (default 64) channels of rdmx.echo, send each\n"
		"              a message of 1000 bytes, then neither acknowledge, grant\n"
		"              credits nor post receives for SECONDS (default 20)\n"
		"  zero-segs   send COUNT (default 100000) DATA segments of length 0\n"
		"              with RDMX_MSG_F_MORE on one rdmx.echo channel, within\n"
		"              the credits granted; stops when none come for SECONDS\n"
		"  open-flood  send COUNT (default 10000) OPENs of rdmx.echo, never\n"
		"              acknowledging, granting credits or reposting a\n"
		"              receive, then hold the connection for SECONDS\n"
		"  -p PORT     the listener's port\n"
		"  -n COUNT    how many (see MODE)\n"
		"  -t SECONDS  how long (see MODE; default 20)\n");
}

int main(int argc, char **argv)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM };
	unsigned long count = 0, secs = 20;
	unsigned int m;
	char *endp;
	int opt, ret;

	while ((opt = getopt(argc, argv, "hn:p:t:")) != -1) {
		switch (opt) {
		case 'p':
			port = optarg;
			break;
		case 'n':
			errno = 0;
			count = strtoul(optarg, &endp, 10);
			if (errno || *endp || !count || count > 100000000) {
				fprintf(stderr, "rdmx-msgcraft: -n: 1 to 100000000, not '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 't':
			errno = 0;
			secs = strtoul(optarg, &endp, 10);
			if (errno || *endp || !secs || secs > 3600) {
				fprintf(stderr, "rdmx-msgcraft: -t: 1 to 3600, not '%s'\n",
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
	if (argc - optind != 2) {
		print_usage(stderr);
		return 2;
	}
	for (m = 0; m < ARRAY_SIZE(modes); m++)
		if (!strcmp(argv[optind], modes[m].name))
			break;
	if (m == ARRAY_SIZE(modes)) {
		fprintf(stderr, "rdmx-msgcraft: unknown mode '%s'\n", argv[optind]);
		print_usage(stderr);
		return 2;
	}
	if (!count)
		count = modes[m].count;
	if (count > modes[m].count_max) {
		fprintf(stderr, "rdmx-msgcraft: %s: -n: at most %u\n",
			modes[m].name, modes[m].count_max);
		return 2;
	}
	host = argv[optind + 1];
	ret = getaddrinfo(host, port, &hints, &dst);
	if (ret) {
		fprintf(stderr, "rdmx-msgcraft: %s:%s: %s\n", host, port,
			gai_strerror(ret));
		return 2;
	}
	note("%s: COUNT %lu, SECONDS %lu, to %s:%s", modes[m].name, count,
	     secs, host, port);
	ret = modes[m].run(count, secs);
	freeaddrinfo(dst);
	if (ret != 2)
		printf("# %d tests, %d failed\n", n_tests, n_failed);
	return ret;
}
