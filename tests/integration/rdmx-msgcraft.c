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
 * open-noack  the same, but granting credits (and answering probes), so
 *             that the server can send every OPEN_REP: none is ever
 *             acknowledged, and the server's lane must stop queueing them
 *             at its bound (the calling script finds the log line).
 * silent      connect and send nothing at all, not even the ACK that makes
 *             the connection live: the server must end this half-open
 *             connection within SECONDS.
 * rnr-stall   OPEN one echo channel, then stop reposting receives yet
 *             grant each buffer back as if reposted; send COUNT messages to
 *             be echoed: the server's SENDs past this peer's buffers meet
 *             receiver-not-ready, which its device retries as often as
 *             this peer asked (6). Heartbeats keep coming while credits
 *             last; the server must end the connection before SECONDS,
 *             while they do.
 * rnr-close   the same, then a CLOSE: the server's orderly close waits for
 *             its own CLOSE to complete, behind the stalled SENDs; it must
 *             end the connection before SECONDS all the same.
 * rnr-endless connect as a new session asking for receiver-not-ready
 *             retries without end (rnr_retry_count 7, where the kernel
 *             client asks for 6): on InfiniBand and RoCE the server must
 *             refuse the request (PARAMS); iWARP has no RNR.
 * listen-rnr-endless
 *             the other way round: listen on HOST:PORT and accept COUNT
 *             rdmx clients' requests (a session's or a block queue's),
 *             answering as the server does but
 *             asking for RNR retries without end; each client must
 *             disconnect without sending, within SECONDS.
 * seq-far     on five new sessions, one DATA each whose sequence number is
 *             one behind the next expected, MAX_UNACKED (4096) behind (the
 *             server must drop both as duplicates and keep the
 *             connection), one further behind, 2^31 away, or one ahead
 *             (it must end the connection on each).
 *
 * fuzz        (-F SEED instead of a MODE) the wire fuzz, below.
 *
 * Usage: rdmx-msgcraft [-p PORT] [-n COUNT] [-t SECONDS] MODE HOST
 *        rdmx-msgcraft [-p PORT] -F SEED [-n MSGS] [-d SECONDS] [-m PERCENT]
 *                      HOST
 * Prints "ok N - ..." / "not ok N - ..." lines and "# ..." notes; exits
 * 0 when every line is ok, 1 when one is not, 2 when the tool could not
 * run (usage, no RDMA device, no route, no answer from HOST:PORT).
 *
 * The wire format is mirrored by hand from kmod/core/proto.h and
 * kmod/msg/msg_proto.h: every field little-endian, sizes checked below.
 * What is sent follows kmod/msg/sess_*.c:
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
 *
 * The wire fuzz (-F SEED) connects as a new session, goes live as above
 * and sends MSGS frames (-n, default 10000), or what -d SECONDS allow:
 * each a valid message of a random type (DATA, OPEN, SHUT, OPEN_REP,
 * IMMED, ACK, HEARTBEAT, HEARTBEAT_ACK), built from the session's state.
 * PERCENT frames in a hundred (-m, default 10) are hostile: now and then a
 * CLOSE, and mutated one to three times, in up to five rounds until the
 * mirror below says that the server must end the connection (or the
 * session): a header field (type, flags, credits, seq, ack, len, chan,
 * reserved) or a payload field (an OPEN's channel, reserved word or
 * service name; an OPEN_REP's channel, status or reserved bytes) set to a
 * value worth trying, or the frame cut short, extended, or some of its
 * bytes replaced or flipped. The others are valid, moved once or twice to
 * an edge the server must take, and so keep the connection: a grant of
 * none or of some of the buffers owed, an ack anywhere from the last one
 * sent to what arrived, a duplicate sequence number up to MAX_UNACKED
 * (4096) back, a DATA of 0, 1, 1024 bytes or a whole segment
 * (RDMX_SEG_SIZE), MORE set or cleared, an IMMED of 0 or ~0, a channel
 * nobody has, an OPEN of a service name of 63 bytes or of one, an OPEN_REP
 * that refuses (an edge the mirror says the server need not take is
 * undone). Which frames are hostile is
 * drawn from a stream of its own (craftlib.c); the rest of the randomness
 * is splitmix64 seeded with mix2(SEED, frame number) (testlib.h), so frame
 * N of a seed is made alike whatever came before, as far as the session's
 * state allows. After each frame the fuzz waits until the server has
 * taken it (granted back the credit it used) or ended the connection, and
 * counts the reaction: a disconnect, an error reply (an OPEN refused), a
 * normal reply, or silence (nothing in 5 s: the connection is dropped). A
 * mirror of rdmx_msg_hdr_parse(), of rdmx_sess_rx()'s checks and of the
 * payload parsers says which it must be; a server that takes a frame it
 * must refuse, or ends the connection on one it must take, is an anomaly,
 * noted with the frame in hex; any anomaly fails the run (exit status 1).
 *
 * A connection the server ended is made again as the kernel client
 * reconnects: the session's uuid, the next generation; refused BUSY, it
 * is tried again after a pause; refused STALE (after a CLOSE), a new
 * session begins. Sequence numbers carry over, set right by the server's
 * first acknowledgment on the new connection. One connection attempt in
 * ten first sends a connect request whose private data is fuzzed (fields,
 * bytes, length) and judges the answer against rdmx_conn_req_parse() and
 * the listener's dispatch; a session such a request opens is closed at
 * once (ACK, CLOSE), one it continues is left to the server. Then the
 * counts and "rdmx-msgcraft: fuzz seed S: N frames, R reconnects, T s
 * (F/s)"; and the check whose TAP line decides the exit status: a new
 * session opens an echo channel and gets a ping echoed (0: it does, 1:
 * it does not, 2: this host could not run the fuzz).
 */
/* __u64 is unsigned long long, printed with %llu, on every architecture. */
#define __SANE_USERSPACE_TYPES__

#include <assert.h>
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <linux/types.h>
#include <linux/rdmx.h>

#include "craftlib.h"
#include "testlib.h"

/* kmod/msg/msg_proto.h (the connection data is in craftlib.h) */
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
/* A retransmission is at most this far behind: RDMX_PROTO_MAX_UNACKED */
#define MAX_UNACKED		4096
#define OPEN_NR_STATUS		3

/* kmod/msg/sess.h (RDMX_SEG_SIZE is SEG_SIZE in craftlib.h) */
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
/* After them, the wire fuzz's slot: a frame of up to a whole segment. */
#define FZ_SLOT			RX_SLOT
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

/* kmod/msg/msg_proto.h: struct rdmx_msg_hdr, rdmx_chan_open, rdmx_chan_open_rep */
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
	bool open;		/* fuzz: OPEN sent, and neither refused nor shut */
	unsigned int echoed;	/* complete messages received on it */
};

/*
 * The one connection (lane 0) and what this peer does on it. Send work
 * requests have ids from CLT_DEPTH up; receives are their slot's number.
 */
struct peer {
	/* c.rx: CLT_DEPTH receive slots of RX_SLOT; c.tx: SQ_DEPTH of TX_SLOT */
	struct craft_conn c;
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
	bool grant_taken;		/* grant them anyway (a lie) */
	bool behave;			/* acknowledge, grant, answer probes */
	bool grant_only;		/* unbehaved, yet grant and answer */
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
	unsigned int nr_refused;	/* OPEN_REPs that refuse */
	__u32 data_sum;			/* FNV-1a of the DATA payloads */
	unsigned int anomalies;
	/* the connection's end */
	bool disconnected;
	bool flushed;
	int wc_err;			/* a failed send's status */
	long long gone_ms;		/* when the connection was seen to go */
	/* the wire fuzz's peer (see "wire fuzz" below) */
	bool fuzz;			/* lenient where its own frames explain it */
	bool synced;			/* the server's first message came */
	unsigned int nr_dup;		/* sequenced messages received again */
	struct craft_fuzz *fz;		/* where its anomalies are counted */
};

static const char *host, *port = "7471";

/* Something the server sent breaks the protocol: counted, first few shown. */
static __printf(2, 3) void anomaly(struct peer *p, const char *fmt, ...)
{
	va_list ap;

	if (p->fz)
		p->fz->anomalies++;
	if (p->anomalies++ >= ANOMALY_NOTES)
		return;
	printf("# server: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
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

static void peer_close(struct peer *p)
{
	craft_close(&p->c);
	free(p->chans);
	memset(p, 0, sizeof(*p));
}

static int post_recv(struct peer *p, unsigned int slot)
{
	return craft_post_recv(&p->c, slot);
}

/*
 * Resolve, build the QP and its buffers, post every receive: all of them
 * are there before the connect request names CLT_DEPTH. Failures are this
 * host's (no device, no route): said on stderr, -1.
 */
static int peer_setup(struct peer *p)
{
	static const struct craft_conn_attr a = {
		.nr_recv = CLT_DEPTH,
		.recv_size = RX_SLOT,
		.send_size = SQ_DEPTH * TX_SLOT + FZ_SLOT,
		.max_send_wr = SQ_DEPTH,
		.cqe = CLT_DEPTH + SQ_DEPTH + 8,
		.access = IBV_ACCESS_LOCAL_WRITE,
		.complain = true,
	};

	return craft_setup(&p->c, &a);
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

/* FNV-1a of @len bytes at @p, on from @h. */
static __u32 fnv1a(__u32 h, const void *p, size_t len)
{
	const __u8 *b = p;

	while (len--)
		h = (h ^ *b++) * 16777619U;
	return h;
}

/*
 * One message from the server, in receive slot @slot: checked and counted.
 * The fuzz's peer is lenient where its own frames explain what it sees: the
 * server's sequence resumed after a reconnect (duplicates, the first ack of
 * a connection), and channel ids its mutations made up.
 */
static void rx_handle(struct peer *p, unsigned int slot, __u32 byte_len)
{
	const struct msg_hdr *h = (const void *)(p->c.rx + slot * RX_SLOT);
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
	if (p->fuzz && !p->synced) {
		/*
		 * The first message of a connection tells where the server's
		 * receiving stands: what this side sent on the last one and
		 * the server did not take is not sent again here.
		 */
		if (seq_before(ack, p->snd_una))
			anomaly(p, "first ack %u, before %u acknowledged earlier",
				ack, p->snd_una);
		p->snd_una = ack;
		p->snd_nxt = ack;
	} else if (seq_before(ack, p->snd_una) || seq_before(p->snd_nxt, ack)) {
		/* An ack is believable between the oldest unacknowledged and the next. */
		anomaly(p, "ack %u outside [%u, %u]", ack, p->snd_una, p->snd_nxt);
		if (p->fuzz && seq_before(p->snd_nxt, ack)) {
			p->snd_una = ack;
			p->snd_nxt = ack;
		}
	} else {
		p->snd_una = ack;
	}
	p->synced = true;

	if (type_sequenced(h->type)) {
		if (p->fuzz && seq_before(seq, p->rcv_nxt)) {
			/*
			 * Sent again on a new connection, or acknowledged
			 * ahead of time by a fuzzed ack: dropped.
			 */
			p->nr_dup++;
			return;
		}
		if (seq != p->rcv_nxt) {
			anomaly(p, "type %u with seq %u, expected %u", h->type,
				seq, p->rcv_nxt);
			if (!p->fuzz)
				return;
			p->rcv_nxt = seq;
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
		    (!p->fuzz && (!id || id > p->nr_chans))) {
			anomaly(p, "OPEN_REP for chan %u: len %u, chan %u, status %u",
				id, len, rchan, st);
			break;
		}
		if (!id || id > p->nr_chans) {
			/* The fuzz's: an id a mutated OPEN named. */
			p->nr_open_rep++;
			p->nr_open_ok += st == OPEN_OK;
			p->nr_refused += st != OPEN_OK;
			break;
		}
		c = &p->chans[id - 1];
		if (c->replied && !p->fuzz) {
			anomaly(p, "a second OPEN_REP for chan %u", id);
			break;
		}
		c->replied = true;
		c->rchan = rchan;
		c->status = st;
		c->open = st == OPEN_OK;
		p->nr_open_rep++;
		p->nr_open_ok += st == OPEN_OK;
		p->nr_refused += st != OPEN_OK;
		break;
	}
	case MSG_DATA:
		p->nr_segs++;
		p->data_bytes += len;
		p->data_sum = fnv1a(p->data_sum, payload, len);
		if (p->fuzz && (!id || id > p->nr_chans))
			break;
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
		if (id && id <= p->nr_chans)
			p->chans[id - 1].open = false;
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

/* The send slot the next SEND goes out of. */
static __u8 *tx_slot(const struct peer *p)
{
	return p->c.tx + (p->tx_posted % SQ_DEPTH) * TX_SLOT;
}

/* Post @len bytes at @addr, in the buffer: a credit, a send slot. */
static int post_from(struct peer *p, const void *addr, __u32 len)
{
	if (craft_post_send(&p->c, CLT_DEPTH + p->tx_posted % SQ_DEPTH,
			    addr, len))
		return -1;
	p->avail--;
	p->tx_posted++;
	return 0;
}

/* Post the first @len bytes of the next send slot. */
static int post_slot(struct peer *p, __u32 len)
{
	assert(len <= TX_SLOT);
	return post_from(p, tx_slot(p), len);
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
	struct msg_hdr *h = (void *)tx_slot(p);
	__u32 grant = 0, ack = p->ack_sent;

	assert(sizeof(*h) + len <= TX_SLOT);
	if (p->behave || p->grant_only)
		grant = p->rx_owed < 0xffff ? p->rx_owed : 0xffff;
	if (p->behave)
		ack = p->rcv_nxt;
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
	if (post_slot(p, sizeof(*h) + len))
		return -1;
	p->rx_owed -= grant;
	p->ack_sent = ack;
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
	if (!p->behave && !p->grant_only)
		return;
	if (p->hb_owed && can_send(p, true)) {
		if (send_msg(p, MSG_HEARTBEAT_ACK, 0, 0, NULL, 0))
			goto fail;
		p->hb_owed = false;
	}
	/* grant_only: a bare ACK that grants, its ack the first one's. */
	if (((p->behave && p->rcv_nxt != p->ack_sent) ||
	     p->rx_owed >= ACK_THRESHOLD) &&
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

	while ((n = craft_poll(&p->c, wc, ARRAY_SIZE(wc), 0)) > 0) {
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
				p->rx_owed += p->grant_taken;
			} else if (post_recv(p, w->wr_id)) {
				note("reposting a receive: %m");
				p->flushed = true;
				peer_mark_gone(p);
			} else {
				p->rx_owed++;
			}
		}
	}
	while (!craft_cm_next(&p->c, 0, &type, NULL, NULL, 0)) {
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

/* A random session uuid: RFC 4122 version 4, as uuid_gen() makes them. */
static void uuid_v4(__u8 *uuid)
{
	uuid[6] = (uuid[6] & 0x0f) | 0x40;
	uuid[8] = (uuid[8] & 0x3f) | 0x80;
}

static void req_pack(struct conn_req *req)
{
	craft_req_pack(req, PROTO_MAGIC, PROTO_MAJOR, CLT_DEPTH, PROTO_F_MSG,
		       SEG_SIZE);
	uuid_v4(req->sess_uuid);
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
/*
 * Connect as a new session; with @live, go live as a client does (a bare
 * ACK first), else stay silent.
 */
static int peer_connect_how(struct peer *p, unsigned int nr_chans, bool live)
{
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
	/*
	 * As rdmx_cm_route_resolved(), with flow control, but for the RDMA
	 * READ depths: the kernel offers min(16, the device's), which the
	 * server bounds by its own; the message service reads nothing, so 1
	 * does (craft_connect()).
	 */
	if (craft_connect(&p->c, &req, sizeof(req), true)) {
		complain("rdma_connect to %s:%s: %m", host, port);
		return 2;
	}
	if (craft_cm_next(&p->c, TIMEOUT_MS, &type, &status, &u, sizeof(u))) {
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
	    le16toh(u.rep.nr_lanes) != 1 ||
	    le32toh(u.rep.features) != PROTO_F_MSG ||
	    p->max_msg < SEG_SIZE || le64toh(u.rep.generation) != 1) {
		note("accept: magic %#x major %u depth %u nr_lanes %u features %#x",
		     le16toh(u.rep.magic), u.rep.major, p->depth,
		     le16toh(u.rep.nr_lanes), le32toh(u.rep.features));
		note("accept: max_msg %u generation %llu", p->max_msg,
		     (unsigned long long)le64toh(u.rep.generation));
		report(false, "connect: the accept grants what a client takes");
		return 1;
	}
	report(true, "connect as a new session: depth %u (asked %u), max_msg %u",
	       p->depth, CLT_DEPTH, p->max_msg);

	p->avail = p->depth;
	p->repost = true;
	if (!live)
		return 0;
	/* Go live: rdmx_conn_go_live() on a client. */
	p->behave = true;
	if (send_msg(p, MSG_ACK, 0, 0, NULL, 0)) {
		complain("posting the first ACK: %m");
		return 2;
	}
	return 0;
}

static int peer_connect(struct peer *p, unsigned int nr_chans)
{
	return peer_connect_how(p, nr_chans, true);
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

/*
 * silent: connect and send nothing at all, not even the first ACK that
 * makes the connection live. The server must end such a half-open
 * connection by itself within SECONDS.
 */
static int mode_silent(unsigned int count, unsigned int secs)
{
	long long start;
	struct peer p;
	int ret;

	(void)count;
	ret = peer_connect_how(&p, 1, false);
	if (ret)
		goto out;
	start = now_ms();
	hold(&p, secs * 1000LL);
	if (peer_gone(&p))
		note("the server ended the connection after %.1f s: %s",
		     (p.gone_ms - start) / 1000.0, gone_how(&p));
	report(peer_gone(&p),
	       "a connection that never speaks is ended by the server within %u s",
	       secs);
	report_conformance(&p);
	ret = n_failed ? 1 : 0;
out:
	peer_close(&p);
	return ret;
}

/*
 * Connect as a new session and OPEN channel 1 of the echo service, which
 * must be accepted: 0 and the server's id of it in *@rchan; 1 (said) when
 * it is not; 2 when this host cannot try.
 */
static int connect_echo(struct peer *p, unsigned int *rchan)
{
	int ret;

	ret = peer_connect(p, 1);
	if (ret)
		return ret;
	if (wait_send(p, false, false, TIMEOUT_MS) != WAIT_OK || send_open(p, 1) ||
	    !wait_open_reps(p, 1) || p->chans[0].status != OPEN_OK) {
		report(false, "OPEN a channel of %s (%s)", RDMX_SERVICE_ECHO,
		       peer_gone(p) ? gone_how(p) :
		       p->nr_open_rep ? "refused" : "no answer");
		return 1;
	}
	*rchan = p->chans[0].rchan;
	return 0;
}

static int mode_zero_segs(unsigned int count, unsigned int secs)
{
	enum wait_result wr = WAIT_OK;
	unsigned int sent = 0, rchan;
	const char *why = NULL;
	long long end;
	struct peer p;
	int ret;

	ret = connect_echo(&p, &rchan);
	if (ret)
		goto out;
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

/*
 * rnr-stall: a heartbeat every this often while the server's SENDs stall,
 * within a server's silence limit (hb_miss_max intervals of 1 s), and the
 * credits left then (once nothing comes back) last long
 */
#define RNR_HB_MS		2000

/*
 * rnr-stall: OPEN an echo channel, then stop reposting receives while
 * granting each buffer back as if it were reposted, and send COUNT
 * messages to be echoed: past this peer's CLT_DEPTH buffers the server's
 * echoes meet an empty receive queue, and its device retries them as
 * often as this peer asked (receiver not ready; CRAFT_RNR_RETRY), then
 * fails them. Meanwhile this peer sends a HEARTBEAT every
 * RNR_HB_MS while its credits last, so the server hears from it. The
 * server must end the connection while the heartbeats still come: it is
 * taking nothing that was sent to it. With @close, this peer then sends a
 * CLOSE: the server's own CLOSE, which its orderly close waits for, queues
 * behind the stalled SENDs, and it must end the connection all the same.
 */
static int rnr_stall(unsigned int count, unsigned int secs, bool close)
{
	static const char data[16] = "rnr-stall";
	long long start, now, next_hb, gone_at = 0, dry_at = 0;
	unsigned int sent = 0, hbs = 0, rchan;
	struct peer p;
	int ret;

	ret = connect_echo(&p, &rchan);
	if (ret)
		goto out;
	/* Buffers taken from now on stay taken, yet are granted back. */
	p.repost = false;
	p.grant_taken = true;
	while (sent < count) {
		if (wait_send(&p, false, true, TIMEOUT_MS) != WAIT_OK)
			break;
		if (send_msg(&p, MSG_DATA, 0, rchan, data, sizeof(data))) {
			if (!post_failed_gone(&p)) {
				ret = 2;
				goto out;
			}
			break;
		}
		sent++;
	}
	report(sent == count, "%u of %u messages sent to be echoed", sent, count);
	if (close) {
		hold(&p, 1000);
		if (!can_send(&p, true) || send_msg(&p, MSG_CLOSE, 0, 0, NULL, 0)) {
			report(false, "a CLOSE once the server's SENDs stalled");
			ret = 1;
			goto out;
		}
	}

	start = now_ms();
	next_hb = start;
	while (!peer_gone(&p) && (now = now_ms()) < start + secs * 1000LL) {
		pump(&p);
		if (now >= next_hb) {
			if (can_send(&p, true)) {
				if (send_msg(&p, MSG_HEARTBEAT, 0, 0, NULL, 0))
					break;
				hbs++;
			} else if (!dry_at) {
				dry_at = now;
			}
			next_hb += RNR_HB_MS;
		}
		usleep(1000);
	}
	if (peer_gone(&p))
		gone_at = now_ms();
	note("%u echoes received in %u buffers, none reposted; %u heartbeats sent",
	     p.nr_data, p.rx_held, hbs);
	if (!gone_at)
		report(false, "the server kept for %u s a connection taking none of its SENDs%s",
		       secs, close ? ", closing" : "");
	else if (close)
		report(true, "the closing connection ended after %lld ms (%s)",
		       gone_at - start, gone_how(&p));
	else if (dry_at && dry_at < gone_at)
		report(false, "the connection ended after %lld ms, after heartbeats stopped (%lld)",
		       gone_at - start, dry_at - start);
	else
		report(true, "the connection ended after %lld ms, heartbeats still coming (%s)",
		       gone_at - start, gone_how(&p));
	ret = n_failed ? 1 : 0;
out:
	peer_close(&p);
	return ret;
}

static int mode_rnr_stall(unsigned int count, unsigned int secs)
{
	return rnr_stall(count, secs, false);
}

static int mode_rnr_close(unsigned int count, unsigned int secs)
{
	return rnr_stall(count, secs, true);
}

/* Whether @c's device speaks iWARP, which has no receiver-not-ready. */
static bool conn_iwarp(const struct craft_conn *c)
{
	return c->id->verbs->device->transport_type == IBV_TRANSPORT_IWARP;
}

/*
 * rnr-endless: connect as a new session asking for receiver-not-ready
 * retries without end (7): on InfiniBand and RoCE the server's QP would
 * retry for ever a SEND that this peer refuses, so the server must refuse
 * the request (PARAMS). iWARP has no RNR: there it is accepted.
 */
static int mode_rnr_endless(unsigned int count, unsigned int secs)
{
	enum rdma_cm_event_type type;
	union {
		struct conn_rep rep;
		struct conn_rej rej;
	} u;
	struct conn_req req;
	int status = 0, ret = 2;
	unsigned int reason;
	struct peer p;

	(void)count;
	(void)secs;
	memset(&p, 0, sizeof(p));
	if (peer_setup(&p))
		goto out;
	req_pack(&req);
	if (craft_connect_rnr(&p.c, &req, sizeof(req), true, 7)) {
		complain("rdma_connect to %s:%s: %m", host, port);
		goto out;
	}
	if (craft_cm_next(&p.c, TIMEOUT_MS, &type, &status, &u, sizeof(u))) {
		complain("no answer from %s:%s in %d s", host, port,
			 TIMEOUT_MS / 1000);
		goto out;
	}
	reason = le16toh(u.rej.reason);
	if (conn_iwarp(&p.c)) {
		report(type == RDMA_CM_EVENT_ESTABLISHED,
		       "iWARP (no RNR): a connect request asking for RNR retries without end is accepted: %s",
		       rdma_event_str(type));
		if (type == RDMA_CM_EVENT_ESTABLISHED)
			craft_sess_close(&p.c, p.c.tx);
	} else {
		report(type == RDMA_CM_EVENT_REJECTED &&
		       le16toh(u.rej.magic) == PROTO_MAGIC &&
		       reason == REJ_PARAMS,
		       "a connect request asking for RNR retries without end is refused: %s, reason %u",
		       rdma_event_str(type),
		       type == RDMA_CM_EVENT_REJECTED ? reason : 0);
	}
	ret = n_failed ? 1 : 0;
out:
	peer_close(&p);
	return ret;
}

/*
 * One connection of listen-rnr-endless, accepted on @c: until the client
 * disconnects or @secs pass, whether a message arrived (*@got) and
 * whether the client disconnected (*@gone).
 */
static void listen_watch(struct craft_conn *c, unsigned int secs, bool *got,
			 bool *gone)
{
	long long end = now_ms() + secs * 1000LL;
	enum rdma_cm_event_type type;
	struct ibv_wc wc[8];
	int i, n;

	*got = false;
	*gone = false;
	while (!*gone && now_ms() < end) {
		if (!craft_cm_next(c, 100, &type, NULL, NULL, 0)) {
			note("listen: %s", rdma_event_str(type));
			*gone = type == RDMA_CM_EVENT_DISCONNECTED ||
				type == RDMA_CM_EVENT_CONNECT_ERROR;
		}
		while ((n = ibv_poll_cq(c->cq, ARRAY_SIZE(wc), wc)) > 0)
			for (i = 0; i < n; i++)
				if (wc[i].status == IBV_WC_SUCCESS &&
				    wc[i].opcode == IBV_WC_RECV)
					*got = true;
	}
}

/*
 * listen-rnr-endless: listen on HOST:PORT for COUNT connect requests of
 * rdmx clients (of sessions or of block queues), one after another, and
 * accept each as rdmx's server would, but asking for receiver-not-ready
 * retries without end (7): on
 * InfiniBand and RoCE the client's QP would retry for ever a SEND this
 * peer refuses, so the client must end the connection without a message
 * sent on it, within SECONDS. iWARP has no RNR: there the client sends.
 */
static int mode_listen_rnr_endless(unsigned int count, unsigned int secs)
{
	static const struct craft_conn_attr a = {
		.nr_recv = CLT_DEPTH,
		.recv_size = RX_SLOT,
		.send_size = TX_SLOT,
		.max_send_wr = SQ_DEPTH,
		.cqe = CLT_DEPTH + SQ_DEPTH + 8,
		.access = IBV_ACCESS_LOCAL_WRITE,
		.complain = true,
	};
	struct conn_req req;
	struct conn_rep rep;
	struct craft_conn c;
	unsigned int i;
	bool got, gone;

	for (i = 0; i < count; i++) {
		if (craft_listen(&c, &a, secs * 1000, &req, sizeof(req))) {
			craft_close(&c);
			return 2;
		}
		memset(&rep, 0, sizeof(rep));
		rep.magic = htole16(PROTO_MAGIC);
		rep.major = PROTO_MAJOR;
		rep.minor = PROTO_MINOR;
		rep.queue_depth = htole16(le16toh(req.queue_depth) < CLT_DEPTH ?
					  le16toh(req.queue_depth) : CLT_DEPTH);
		rep.nr_lanes = req.nr_lanes;
		/* A session's or a block queue's request, as it comes. */
		rep.features = htole32(le32toh(req.features) &
				       (PROTO_F_MSG | PROTO_F_BLOCK));
		rep.max_msg_size = htole32(SEG_SIZE);
		rep.generation = req.generation;
		if (craft_accept(&c, &rep, sizeof(rep), 7)) {
			complain("rdma_accept: %m");
			craft_close(&c);
			return 2;
		}
		listen_watch(&c, secs, &got, &gone);
		if (conn_iwarp(&c))
			report(got,
			       "iWARP (no RNR): a client accepted asking for RNR retries without end sends");
		else
			report(gone && !got,
			       "a client accepted asking for RNR retries without end ends the connection unused: %s, %s",
			       gone ? "disconnected" : "not disconnected",
			       got ? "a message came" : "no message");
		craft_close(&c);
	}
	return n_failed ? 1 : 0;
}

/*
 * The OPEN floods: after the first ACK, OPENs as fast as the credits
 * allow, never acknowledging; with @grant_only still granting credits
 * back and answering probes (open-noack), else granting nothing and
 * reposting no receive (open-flood). Stops after @count OPENs, or when no
 * credit has come for 2 s, then holds the connection for @secs.
 */
static int open_flood(unsigned int count, unsigned int secs, bool grant_only,
		      const char *what)
{
	enum wait_result wr = WAIT_OK;
	unsigned int sent = 0;
	struct peer p;
	int ret;

	ret = peer_connect(&p, count);
	if (ret)
		goto out;
	p.behave = false;
	p.grant_only = grant_only;
	p.repost = grant_only;
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
	report(true, "%s: %u sent, %u OPEN_REPs (%u accepted), the server %s",
	       what, sent, p.nr_open_rep, p.nr_open_ok,
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

static int mode_open_flood(unsigned int count, unsigned int secs)
{
	return open_flood(count, secs, false, "OPEN flood");
}

/*
 * open-noack: every OPEN_REP the server queues stays unacknowledged; its
 * lane must stop queueing them at its bound (RDMX_TX_FORCE_MAX) rather
 * than grow. The calling script finds the log line.
 */
static int mode_open_noack(unsigned int count, unsigned int secs)
{
	return open_flood(count, secs, true, "unacknowledged OPENs");
}

/* ---- wire fuzz ---------------------------------------------------------- */

/* Local channel ids the fuzz's OPENs take: 1 to FZ_CHANS. */
#define FZ_CHANS		64
/* A DATA payload before mutation, at most. */
#define FZ_DATA_MAX		1024
/* A frame the server neither takes nor ends the connection on in this long. */
#define FZ_SETTLE_MS		5000
/* After the first ACK of a connection, the server's first message within. */
#define FZ_SYNC_MS		2000
/* The answer to a fuzzed connect request within. */
#define FZ_CM_MS		10000
/* Percent of connection attempts that send a fuzzed connect request first. */
#define FZ_CM_PERCENT		10
/* No connection for this long: the server is gone, the fuzz stops. */
#define FZ_GIVE_UP_MS		60000
/* Connections in a row on which the server took no frame: a new session. */
#define FZ_UNTAKEN_MAX		16
/* Surprising frames shown in hex, at most. */
#define FZ_HEX_NOTES		5
/* Salts of the PRNG streams that are not frames'. */
#define FZ_SALT_CONN		0x636f6e6e65637473ULL
#define FZ_SALT_SESS		0x73657373696f6e73ULL

/* The fuzz's session: what carries over from one connection to the next. */
struct fz_sess {
	__u8 uuid[16];
	__u64 gen;		/* the generation the last request carried */
	__u32 features;		/* offered: MSG, or MSG | RMA */
	__u32 snd_nxt, snd_una, rcv_nxt;
	__u32 alt_ack;		/* rcv_nxt before a fuzzed ack moved it */
	bool alt;		/* alt_ack is to be tried until a frame is taken */
	struct chan chans[FZ_CHANS];
};

struct fuzz {
	struct craft_fuzz f;
	struct fz_sess s;
	bool no_cm;			/* no fuzzed connect requests */
	unsigned long long sessions;	/* sessions begun */
	unsigned long long attempts;	/* connection attempts */
	unsigned long long live_lost;	/* connections ended going live */
	unsigned long long dups;	/* messages the server sent again */
	unsigned long long alt_tried;	/* times the ack before a fuzzed one was tried */
	unsigned int untaken;		/* connections in a row with no frame taken */
	bool taken;			/* the server took a frame on this connection */
	unsigned int hex_notes;
};

/* What a connection attempt came to. */
enum fz_dial {
	FZ_LIVE,	/* connected and live */
	FZ_AGAIN,	/* refused or lost: try again */
	FZ_BUSY,	/* refused BUSY: try again after a pause */
	FZ_NOBODY,	/* no rdmx listener, no answer at all */
	FZ_HOST,	/* this host failed */
};

/* What the server does with a frame. */
enum fz_react { FZ_TAKEN, FZ_ENDED, FZ_SILENT };

/*
 * What the server must do with a frame (fz_expect()): take it, end the
 * connection, either (a grant or an ack this side cannot judge), or close
 * the session (a CLOSE: taken, then the connection ends).
 */
enum fz_verdict { FZ_TAKES, FZ_ENDS, FZ_MAY, FZ_CLOSES };

static const struct {
	__u8 type;
	__u8 weight;
} fz_types[] = {
	{ MSG_DATA, 30 }, { MSG_OPEN, 14 }, { MSG_SHUT, 8 },
	{ MSG_OPEN_REP, 6 }, { MSG_IMMED, 6 }, { MSG_ACK, 10 },
	{ MSG_HEARTBEAT, 8 }, { MSG_HEARTBEAT_ACK, 5 }, { MSG_CLOSE, 1 },
};

/*
 * The header's fields; those whose every change breaks the header are
 * picked half as often as those a change can leave valid.
 */
static const struct {
	const char *name;
	unsigned char off, size, weight;
} fz_hdr_fields[] = {
	{ "type", offsetof(struct msg_hdr, type), 1, 1 },
	{ "flags", offsetof(struct msg_hdr, flags), 1, 1 },
	{ "credits", offsetof(struct msg_hdr, credits), 2, 2 },
	{ "seq", offsetof(struct msg_hdr, seq), 4, 2 },
	{ "ack", offsetof(struct msg_hdr, ack), 4, 2 },
	{ "len", offsetof(struct msg_hdr, len), 4, 2 },
	{ "chan", offsetof(struct msg_hdr, chan), 4, 2 },
	{ "reserved", offsetof(struct msg_hdr, reserved), 4, 1 },
};

static void fz_new_session(struct fuzz *z)
{
	__u64 r = mix2(z->f.seed ^ FZ_SALT_SESS, z->sessions++);
	unsigned int i;

	memset(&z->s, 0, sizeof(z->s));
	if (getrandom(z->s.uuid, sizeof(z->s.uuid), 0) < 0)
		for (i = 0; i < sizeof(z->s.uuid); i++)
			z->s.uuid[i] = craft_rand(&r);
	uuid_v4(z->s.uuid);
	z->s.features = PROTO_F_MSG | (craft_chance(&r, 50) ? PROTO_F_RMA : 0);
}

/* The request of the session's next connection: the next generation. */
static void fz_req(struct fuzz *z, struct conn_req *req)
{
	craft_req_pack(req, PROTO_MAGIC, PROTO_MAJOR, CLT_DEPTH, z->s.features,
		       SEG_SIZE);
	memcpy(req->sess_uuid, z->s.uuid, sizeof(req->sess_uuid));
	req->generation = htole64(++z->s.gen);
}

/*
 * Whether a connection that ended before the server took a frame may have
 * ended on the fuzz's ack: one a fuzzed frame moved ahead, which the server
 * did not take (it refused that frame before reading its ack). The server
 * then sent again what it has not had acknowledged, all of it behind that
 * ack (duplicates here), and refused the ack as outside its window.
 */
static bool fz_ack_unsure(const struct fuzz *z, const struct peer *p)
{
	return z->s.alt && !z->taken && p->nr_dup;
}

/* Keep what carries over to the session's next connection; close this one. */
static void fz_drop(struct fuzz *z, struct peer *p)
{
	if (p->synced) {
		z->s.snd_nxt = p->snd_nxt;
		z->s.snd_una = p->snd_una;
		z->s.rcv_nxt = p->rcv_nxt;
		if (fz_ack_unsure(z, p)) {
			/* The ack before the fuzzed one, next time. */
			z->s.rcv_nxt = z->s.alt_ack;
			z->s.alt = false;
			z->alt_tried++;
		}
	}
	z->dups += p->nr_dup;
	p->chans = NULL;	/* the session's */
	peer_close(p);
}

/*
 * A connect request of the session's, its private data fuzzed, on a
 * connection of its own; the answer is counted and judged. A session it
 * opened by chance is closed at once; one it continued is left to the
 * server (it sees the disconnect), its generation taken.
 */
static void fz_cm_fuzz(struct fuzz *z, __u64 *r)
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
	struct peer q;
	int reason;

	fz_req(z, &req);
	craft_fuzz_req(r, &req, &len, what, sizeof(what));
	/* What a CM that pads private data hands the server. */
	memset((__u8 *)&req + len, 0, sizeof(req) - len);
	memset(&q, 0, sizeof(q));
	if (peer_setup(&q)) {
		peer_close(&q);
		return;
	}
	z->f.cm_fuzzed++;
	if (craft_connect(&q.c, len ? &req : NULL, len, true)) {
		/* librdmacm would not send it */
		z->f.cm_other++;
		peer_close(&q);
		return;
	}
	answered = !craft_cm_next(&q.c, FZ_CM_MS, &type, NULL, &u, sizeof(u));
	reason = craft_fuzz_req_answer(&z->f, type, &u.rej, answered);
	craft_fuzz_req_judge(&z->f, &req, len, answered, type, reason, what);
	if (answered && type == RDMA_CM_EVENT_ESTABLISHED) {
		if (!memcmp(req.sess_uuid, z->s.uuid, sizeof(req.sess_uuid))) {
			if (le64toh(req.generation) > z->s.gen)
				z->s.gen = le64toh(req.generation);
		} else if (le32toh(u.rep.features) & PROTO_F_MSG) {
			craft_sess_close(&q.c, q.c.tx);
		}
	}
	peer_close(&q);
}

/*
 * One connection of the fuzz's session (after a fuzzed connect request,
 * now and then), live as the kernel client makes it: the first ACK, then
 * the server's first message, which says where its receiving stands.
 */
static enum fz_dial fz_connect(struct fuzz *z, struct peer *p)
{
	__u64 r = mix2(z->f.seed ^ FZ_SALT_CONN, z->attempts++);
	enum rdma_cm_event_type type;
	union {
		struct conn_rep rep;
		struct conn_rej rej;
	} u;
	struct conn_req req;
	int status = 0;
	__u32 features;
	long long end;

	if (!z->no_cm && craft_chance(&r, FZ_CM_PERCENT))
		fz_cm_fuzz(z, &r);
	memset(p, 0, sizeof(*p));
	z->taken = false;
	if (peer_setup(p))
		return FZ_HOST;
	fz_req(z, &req);
	if (craft_connect(&p->c, &req, sizeof(req), true)) {
		complain("rdma_connect to %s:%s: %m", host, port);
		return FZ_HOST;
	}
	if (craft_cm_next(&p->c, TIMEOUT_MS, &type, &status, &u, sizeof(u))) {
		complain("no answer from %s:%s in %d s", host, port,
			 TIMEOUT_MS / 1000);
		return FZ_NOBODY;
	}
	if (type == RDMA_CM_EVENT_REJECTED) {
		unsigned int reason = le16toh(u.rej.reason);

		if (le16toh(u.rej.magic) != PROTO_MAGIC) {
			complain("%s:%s: refused (status %d), no rdmx listener?",
				 host, port, status);
			return FZ_NOBODY;
		}
		if (reason == REJ_BUSY) {
			z->f.busy++;
			return FZ_BUSY;
		}
		/* STALE: the session closed (a CLOSE) or its generations ran out. */
		if (reason != REJ_STALE)
			craft_fuzz_anomaly(&z->f, "refused a valid request (generation %llu): %s",
					   (unsigned long long)z->s.gen,
					   craft_rej_str(reason));
		fz_new_session(z);
		return FZ_AGAIN;
	}
	if (type != RDMA_CM_EVENT_ESTABLISHED) {
		note("fuzz: connect: %s, status %d", rdma_event_str(type),
		     status);
		return FZ_AGAIN;
	}
	p->depth = le16toh(u.rep.queue_depth);
	p->max_msg = le32toh(u.rep.max_msg_size);
	features = le32toh(u.rep.features);
	if (le16toh(u.rep.magic) != PROTO_MAGIC || u.rep.major != PROTO_MAJOR ||
	    (u.rep.minor == PROTO_MINOR && !rep_reserved_zero(&u.rep)) ||
	    p->depth <= CREDITS_RESERVED || p->depth > CLT_DEPTH ||
	    le16toh(u.rep.nr_lanes) != 1 || !(features & PROTO_F_MSG) ||
	    (features & ~z->s.features) || p->max_msg < SEG_SIZE ||
	    le64toh(u.rep.generation) != z->s.gen) {
		craft_fuzz_anomaly(&z->f, "accept: depth %u qps %u features %#x max %u gen %llu",
				   p->depth, le16toh(u.rep.nr_lanes), features,
				   p->max_msg,
				   (unsigned long long)le64toh(u.rep.generation));
		fz_new_session(z);
		return FZ_AGAIN;
	}

	/* Live, with the session's sequence numbers and channels. */
	p->fuzz = true;
	p->fz = &z->f;
	p->chans = z->s.chans;
	p->nr_chans = FZ_CHANS;
	p->snd_nxt = z->s.snd_nxt;
	p->snd_una = z->s.snd_una;
	p->rcv_nxt = z->s.rcv_nxt;
	p->avail = p->depth;
	p->repost = true;
	p->behave = true;
	if (send_msg(p, MSG_ACK, 0, 0, NULL, 0)) {
		complain("posting the first ACK: %m");
		return FZ_AGAIN;
	}
	end = now_ms() + FZ_SYNC_MS;
	while (!p->synced && !peer_gone(p) && now_ms() < end) {
		pump(p);
		usleep(100);
	}
	if (!p->synced && peer_gone(p)) {
		/*
		 * Ended before a word: the ack of the first ACK is outside
		 * the server's window, a fuzzed ack having moved one side
		 * only. The other value, then a new session.
		 */
		z->live_lost++;
		if (z->s.alt) {
			z->s.rcv_nxt = z->s.alt_ack;
			z->alt_tried++;
		} else {
			fz_new_session(z);
		}
		z->s.alt = false;
		return FZ_AGAIN;
	}
	/*
	 * Synced, perhaps only by the server's retransmissions: the fuzzed
	 * ack is not believed until the server takes a frame.
	 */
	p->synced = true;
	z->f.connects++;
	return FZ_LIVE;
}

/* The server's id of an open channel; now and then, or lacking one, any. */
static __u32 fz_rchan(const struct peer *p, __u64 *r)
{
	unsigned int i, n = 0, pick;

	for (i = 0; i < p->nr_chans; i++)
		n += p->chans[i].open && p->chans[i].replied;
	if (!n || craft_chance(r, 10))
		return 1 + craft_below(r, 2 * FZ_CHANS);
	pick = craft_below(r, n);
	for (i = 0; i < p->nr_chans; i++)
		if (p->chans[i].open && p->chans[i].replied && !pick--)
			break;
	return p->chans[i].rchan;
}

/* A local id for an OPEN: a free one, or any when all are taken. */
static __u32 fz_free_chan(const struct peer *p, __u64 *r)
{
	unsigned int i, start = craft_below(r, p->nr_chans);

	for (i = 0; i < p->nr_chans; i++)
		if (!p->chans[(start + i) % p->nr_chans].open)
			return (start + i) % p->nr_chans + 1;
	return start + 1;
}

/*
 * A valid frame of a random type, as this peer would send it now, in @fr;
 * returns its length. The channels it opens and shuts are noted. A CLOSE,
 * which ends the connection, only for a @hostile frame.
 */
static size_t fz_build(struct peer *p, __u64 *r, __u8 *fr, bool hostile)
{
	struct msg_hdr *h = (void *)fr;
	__u8 *pl = fr + sizeof(*h);
	unsigned int i, w = craft_below(r, 100);
	__u32 len = 0, chan = 0;
	__u8 type, flags = 0;

	for (i = 0; i < ARRAY_SIZE(fz_types) - 1 && w >= fz_types[i].weight; i++)
		w -= fz_types[i].weight;
	type = fz_types[i].type;
	if (type == MSG_CLOSE && !hostile)
		type = fz_types[craft_below(r, ARRAY_SIZE(fz_types) - 1)].type;
	switch (type) {
	case MSG_DATA:
		chan = fz_rchan(p, r);
		len = craft_below(r, FZ_DATA_MAX + 1);
		if (len && craft_chance(r, 25))
			flags = MSG_F_MORE;
		for (i = 0; i < len; i++)
			pl[i] = craft_rand(r);
		break;
	case MSG_OPEN: {
		struct chan_open *op = (void *)pl;
		__u32 id = fz_free_chan(p, r);

		memset(op, 0, sizeof(*op));
		op->chan = htole32(id);
		if (craft_chance(r, 85))
			memcpy(op->service, RDMX_SERVICE_ECHO,
			       sizeof(RDMX_SERVICE_ECHO));
		else
			snprintf((char *)op->service, sizeof(op->service),
				 "rdmx-msgcraft.%u", craft_below(r, 1000));
		p->chans[id - 1].open = true;
		p->chans[id - 1].replied = false;
		len = sizeof(*op);
		break;
	}
	case MSG_OPEN_REP: {
		struct chan_open_rep *rep = (void *)pl;

		memset(rep, 0, sizeof(*rep));
		chan = craft_chance(r, 50) ? fz_rchan(p, r) :
		       1 + craft_below(r, 2 * FZ_CHANS);
		if (craft_chance(r, 60))
			rep->chan = htole32(1 + craft_below(r, FZ_CHANS));
		else
			rep->status = htole32(1 + craft_below(r, OPEN_NR_STATUS - 1));
		len = sizeof(*rep);
		break;
	}
	case MSG_SHUT:
		chan = fz_rchan(p, r);
		for (i = 0; i < p->nr_chans; i++)
			if (p->chans[i].open && p->chans[i].rchan == chan)
				p->chans[i].open = false;
		break;
	case MSG_IMMED:
		chan = fz_rchan(p, r);
		len = sizeof(__le32);
		craft_put_le(pl, craft_rand(r), len);
		break;
	default:	/* control messages carry nothing */
		break;
	}
	memset(h, 0, sizeof(*h));
	h->type = type;
	h->flags = flags;
	h->credits = htole16(p->rx_owed < 0xffff ? p->rx_owed : 0xffff);
	h->seq = htole32(type_sequenced(type) ? p->snd_nxt : 0);
	h->ack = htole32(p->rcv_nxt);
	h->len = htole32(len);
	h->chan = htole32(chan);
	return sizeof(*h) + len;
}

/* A header field of a frame set to a value worth trying; said in @what. */
static size_t fz_mutate_hdr(const struct peer *p, __u64 *r, __u8 *fr,
			    size_t len, char *what, size_t size)
{
	unsigned int k, w = craft_below(r, 13), off, bytes;
	bool near = craft_chance(r, 60);
	__u64 cur, v;
	size_t nl;

	k = 0;
	while (k < ARRAY_SIZE(fz_hdr_fields) - 1 && w >= fz_hdr_fields[k].weight)
		w -= fz_hdr_fields[k++].weight;
	off = fz_hdr_fields[k].off;
	bytes = fz_hdr_fields[k].size;
	cur = craft_get_le(fr + off, bytes);

	if (!strcmp(fz_hdr_fields[k].name, "len") && craft_chance(r, 40)) {
		/* A payload of another length, and a len that says so. */
		static const __u32 lens[] = { 0, 1, 3, 4, 5, 15, 16, 17, 71, 72, 73 };

		nl = near ? lens[craft_below(r, ARRAY_SIZE(lens))] :
		     craft_below(r, TX_SLOT - sizeof(struct msg_hdr) + 1);
		if (sizeof(struct msg_hdr) + nl > len)
			memset(fr + len, 0, sizeof(struct msg_hdr) + nl - len);
		craft_put_le(fr + off, nl, bytes);
		snprintf(what, size, "payload of %zu bytes, len too", nl);
		return sizeof(struct msg_hdr) + nl;
	}
	v = craft_interesting(r, cur, bytes);
	if (near) {
		switch (off) {
		case offsetof(struct msg_hdr, type):
			v = 1 + craft_below(r, MSG_NR_TYPES - 1);
			break;
		case offsetof(struct msg_hdr, flags):
			/* MORE, mostly: on DATA with a payload, still valid */
			v = cur ^ (craft_chance(r, 70) ? MSG_F_MORE :
				   BIT(craft_below(r, 8)));
			break;
		case offsetof(struct msg_hdr, credits): {
			/* fewer than owed, the rest owed on; or more */
			const __u64 c[] = { 0, cur / 2, p->rx_owed + 1,
					    CLT_DEPTH + 1 };

			v = c[craft_below(r, ARRAY_SIZE(c))];
			break;
		}
		case offsetof(struct msg_hdr, seq): {
			/*
			 * duplicates (dropped), the oldest one possible, a
			 * gap ahead, behind, and 2^31 away; a control's 0
			 */
			const __u32 s[] = { p->snd_nxt - 1, p->snd_nxt - 2,
					    p->snd_nxt - MAX_UNACKED,
					    p->snd_nxt + 1,
					    p->snd_nxt - MAX_UNACKED - 1,
					    p->snd_nxt + 0x80000000, 0 };

			v = s[craft_below(r, ARRAY_SIZE(s))];
			break;
		}
		case offsetof(struct msg_hdr, ack): {
			/* the edges of the window, and past them */
			const __u32 a[] = { p->ack_sent, p->rcv_nxt,
					    p->rcv_nxt + 1, p->ack_sent - 1 };

			v = a[craft_below(r, ARRAY_SIZE(a))];
			break;
		}
		case offsetof(struct msg_hdr, chan):
			/* another channel, one nobody has, or none */
			v = craft_chance(r, 20) ? 0 : fz_rchan(p, r);
			break;
		default:
			break;
		}
	}
	craft_put_le(fr + off, v, bytes);
	snprintf(what, size, "%s %#llx", fz_hdr_fields[k].name,
		 (unsigned long long)v);
	return len;
}

/* A field of an OPEN's or OPEN_REP's payload, or bytes of another's. */
static void fz_mutate_payload(__u64 *r, __u8 *fr, size_t len, char *what,
			      size_t size)
{
	const struct msg_hdr *h = (const void *)fr;
	__u8 *pl = fr + sizeof(*h);
	size_t pl_len = len - sizeof(*h), n;

	if (h->type == MSG_OPEN && pl_len >= sizeof(struct chan_open)) {
		struct chan_open *op = (void *)pl;
		char *svc = (char *)op->service;

		n = strnlen(svc, sizeof(op->service));
		switch (craft_below(r, 9)) {
		case 0:
			op->chan = htole32(craft_interesting(r, le32toh(op->chan), 4));
			snprintf(what, size, "OPEN chan %u", le32toh(op->chan));
			return;
		case 1:
			op->reserved = htole32(1 + craft_below(r, 0xffff));
			snprintf(what, size, "OPEN reserved set");
			return;
		case 2:
			memset(svc, 0, sizeof(op->service));
			break;
		case 3:
			if (n)
				svc[craft_below(r, n)] = craft_rand(r);
			break;
		case 4:
			memset(svc, 'a', sizeof(op->service));
			break;
		case 5:
			if (n + 1 < sizeof(op->service))
				svc[n + 1 + craft_below(r, sizeof(op->service) - n - 1)] =
					1 + craft_below(r, 255);
			break;
		case 6:
			memset(svc, 0, sizeof(op->service));
			memset(svc, 'x', sizeof(op->service) - 1);
			break;
		case 7:
			svc[0] = 0xe9;	/* Latin-1, as the kernel's ctype takes it */
			break;
		default:
			memset(svc, 0, sizeof(op->service));
			memcpy(svc, "RDMX.ECHO", 9);
			break;
		}
		snprintf(what, size, "OPEN service \"%.20s\"", svc);
		return;
	}
	if (h->type == MSG_OPEN_REP && pl_len >= sizeof(struct chan_open_rep)) {
		struct chan_open_rep *rep = (void *)pl;

		switch (craft_below(r, 3)) {
		case 0:
			rep->chan = htole32(craft_interesting(r, le32toh(rep->chan), 4));
			break;
		case 1:
			rep->status = htole32(craft_chance(r, 50) ?
					      craft_below(r, OPEN_NR_STATUS + 1) :
					      craft_interesting(r, 0, 4));
			break;
		default:
			rep->reserved[craft_below(r, sizeof(rep->reserved))] =
				1 + craft_below(r, 255);
			break;
		}
		snprintf(what, size, "OPEN_REP chan %u status %u, reserved %s",
			 le32toh(rep->chan), le32toh(rep->status),
			 craft_get_le(rep->reserved, sizeof(rep->reserved)) ?
			 "set" : "0");
		return;
	}
	craft_mangle(r, pl, pl_len, pl_len, CRAFT_RANDOM_BYTES);
	snprintf(what, size, "payload bytes");
}

/*
 * Mutate frame @fr (@len bytes, room for TX_SLOT) one to three times: a
 * header field, a payload field, or its bytes (cut, extended, replaced,
 * flipped). Returns the new length; @what says what was done.
 */
static size_t fz_mutate(const struct peer *p, __u64 *r, __u8 *fr,
			size_t len, char *what, size_t size)
{
	unsigned int i, n = craft_chance(r, 75) ? 1 : craft_chance(r, 80) ? 2 : 3;
	static const char *const mangles[] = {
		[CRAFT_TRUNCATE] = "cut to", [CRAFT_EXTEND] = "extended to",
		[CRAFT_RANDOM_BYTES] = "bytes replaced,",
		[CRAFT_BIT_FLIPS] = "bits flipped,",
	};
	char one[96];
	size_t at = 0;

	*what = 0;
	for (i = 0; i < n && at < size; i++) {
		unsigned int k = craft_below(r, 100);

		if (k >= 50 && k < 85 && len > sizeof(struct msg_hdr)) {
			fz_mutate_payload(r, fr, len, one, sizeof(one));
		} else if (k < 85 && len >= sizeof(struct msg_hdr)) {
			len = fz_mutate_hdr(p, r, fr, len, one, sizeof(one));
		} else {
			enum craft_mangle how = craft_below(r, CRAFT_NR_MANGLES);
			bool follow = craft_chance(r, 50);

			len = craft_mangle(r, fr, len, TX_SLOT, how);
			if (follow && len >= sizeof(struct msg_hdr))
				craft_put_le(fr + offsetof(struct msg_hdr, len),
					     len - sizeof(struct msg_hdr), 4);
			snprintf(one, sizeof(one), "%s %zu bytes%s", mangles[how],
				 len, follow && len >= sizeof(struct msg_hdr) ?
				 ", len too" : "");
		}
		at += snprintf(what + at, size - at, "%s%s", i ? "; " : "", one);
	}
	return len;
}

/* A DATA payload of @hl bytes: what is there, random bytes after it. */
static size_t fz_edge_data_len(__u64 *r, __u8 *fr, __u32 hl, char *one,
			       size_t size)
{
	struct msg_hdr *h = (void *)fr;
	__u32 i;

	for (i = le32toh(h->len); i < hl; i++)
		fr[sizeof(*h) + i] = craft_rand(r);
	h->len = htole32(hl);
	if (!hl)
		h->flags &= ~MSG_F_MORE;
	snprintf(one, size, "DATA of %u bytes%s", hl,
		 h->flags & MSG_F_MORE ? ", MORE" : "");
	return sizeof(*h) + hl;
}

/* An OPEN of a service name at the edges, or an OPEN_REP that refuses. */
static void fz_edge_open(__u64 *r, __u8 *fr, char *one, size_t size)
{
	static const char chars[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-";
	const struct msg_hdr *h = (const void *)fr;
	__u8 *pl = fr + sizeof(*h);
	unsigned int i, n;

	if (h->type == MSG_OPEN) {
		struct chan_open *op = (void *)pl;

		/* The longest name there can be, or one byte; no such service. */
		n = craft_chance(r, 50) ? RDMX_SERVICE_LEN - 1 : 1;
		memset(op->service, 0, sizeof(op->service));
		for (i = 0; i < n; i++)
			op->service[i] = chars[craft_below(r, sizeof(chars) - 1)];
		snprintf(one, size, "OPEN of a service of %u bytes", n);
	} else {
		struct chan_open_rep *rep = (void *)pl;

		memset(rep, 0, sizeof(*rep));
		if (craft_chance(r, 50))
			rep->status = htole32(1 + craft_below(r, OPEN_NR_STATUS - 1));
		else
			rep->chan = htole32(0xffffffff);
		snprintf(one, size, "OPEN_REP chan %u status %u",
			 le32toh(rep->chan), le32toh(rep->status));
	}
}

/*
 * Move frame @fr (@len bytes, room for FZ_SLOT) to an edge the server
 * must take, the connection kept, once or twice: a grant of none or of
 * some of the buffers owed, an ack anywhere from the last one sent to
 * what arrived, a duplicate sequence number (as far back as MAX_UNACKED), a
 * DATA of none, one, 1 KiB or a whole segment, MORE set or cleared, an
 * IMMED of 0 or ~0, a channel nobody has, an OPEN of a service of 63
 * bytes or of one, an OPEN_REP that refuses or answers for a channel
 * nobody has. Returns the new length; @what says what was done.
 */
static size_t fz_edge(struct peer *p, __u64 *r, __u8 *fr, size_t len,
		      char *what, size_t size)
{
	static const __u32 chans[] = { 0xffffffff, 0x80000000,
				       2 * FZ_CHANS + 1 };
	static const __u32 data_lens[] = { 0, 1, FZ_DATA_MAX, SEG_SIZE - 1,
					   SEG_SIZE };
	struct msg_hdr *h = (void *)fr;
	__u8 *pl = fr + sizeof(*h);
	unsigned int i, k, n = craft_chance(r, 70) ? 1 : 2;
	bool seqd = type_sequenced(h->type);
	__u32 v, span, owed, id;
	char one[96];
	size_t at;

	at = snprintf(what, size, "edge: ");
	for (i = 0; i < n && at < size; i++) {
		k = craft_below(r, 8);
		if (k == 1) {
			/* From the server's oldest unacknowledged on. */
			span = p->rcv_nxt - p->ack_sent;
			v = craft_chance(r, 50) ? p->ack_sent :
			    p->ack_sent + craft_below(r, span + 1);
			h->ack = htole32(v);
			snprintf(one, sizeof(one), "ack %u of [%u, %u]", v,
				 p->ack_sent, p->rcv_nxt);
		} else if (k == 2 && seqd) {
			v = craft_chance(r, 50) ? craft_below(r, 16) :
			    craft_below(r, MAX_UNACKED);
			v = p->snd_nxt - 1 - v;
			h->seq = htole32(v);
			/*
			 * Dropped: the channel an OPEN named stays free (its
			 * OPEN_REP, should the edge be undone, opens it).
			 */
			id = h->type == MSG_OPEN ?
			     le32toh(((struct chan_open *)pl)->chan) : 0;
			if (id && id <= p->nr_chans)
				p->chans[id - 1].open = false;
			snprintf(one, sizeof(one), "seq %u, a duplicate (next %u)",
				 v, p->snd_nxt);
		} else if (k == 3 && h->type == MSG_DATA) {
			/* A whole segment one time in five. */
			v = craft_below(r, craft_chance(r, 20) ? 5 : 3);
			len = fz_edge_data_len(r, fr, data_lens[v], one,
					       sizeof(one));
		} else if (k == 4 && h->type == MSG_DATA && le32toh(h->len)) {
			h->flags ^= MSG_F_MORE;
			snprintf(one, sizeof(one), "MORE %s",
				 h->flags & MSG_F_MORE ? "set" : "cleared");
		} else if (k == 4 && h->type == MSG_IMMED) {
			craft_put_le(pl, craft_chance(r, 50) ? 0 : 0xffffffff, 4);
			snprintf(one, sizeof(one), "IMMED %#x",
				 (unsigned int)craft_get_le(pl, 4));
		} else if (k == 5 && (h->type == MSG_DATA ||
				      h->type == MSG_IMMED ||
				      h->type == MSG_OPEN_REP)) {
			h->chan = htole32(chans[craft_below(r, ARRAY_SIZE(chans))]);
			snprintf(one, sizeof(one), "chan %u, nobody's",
				 le32toh(h->chan));
		} else if (k == 6 && (h->type == MSG_OPEN ||
				      h->type == MSG_OPEN_REP)) {
			fz_edge_open(r, fr, one, sizeof(one));
		} else if (k == 7) {
			snprintf(one, sizeof(one), "none");
		} else {
			owed = p->rx_owed < 0xffff ? p->rx_owed : 0xffff;
			v = craft_chance(r, 50) ? 0 : craft_below(r, owed + 1);
			h->credits = htole16(v);
			snprintf(one, sizeof(one), "credits %u of %u owed", v,
				 p->rx_owed);
		}
		at += snprintf(what + at, size - at, "%s%s", i ? "; " : "", one);
	}
	return len;
}

/* As rdmx_service_name_valid() over the 64 bytes of an OPEN's name. */
static bool fz_service_ok(const __u8 *name)
{
	size_t n = strnlen((const char *)name, RDMX_SERVICE_LEN), i;

	if (!n || n == RDMX_SERVICE_LEN)
		return false;
	for (i = 0; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') ||
		      (name[i] >= 'A' && name[i] <= 'Z') ||
		      (name[i] >= '0' && name[i] <= '9') ||
		      name[i] == '.' || name[i] == '_' || name[i] == '-'))
			return false;
	for (; i < RDMX_SERVICE_LEN; i++)
		if (name[i])
			return false;
	return true;
}

/*
 * What rdmx_msg_hdr_parse(), rdmx_sess_rx() and the payload parsers must
 * make of frame @fr (@len bytes), about to go out on @p: take it (answer,
 * or drop it quietly), or end the connection; or either (a grant or an
 * ack this side cannot tell about: messages in flight). *@why is the rule.
 */
static enum fz_verdict fz_expect(const struct peer *p, const __u8 *fr,
				 size_t len, const char **why)
{
	const struct msg_hdr *h = (const void *)fr;
	const __u8 *pl = fr + sizeof(*h);
	enum fz_verdict v = FZ_TAKES;
	__u32 hl, seq, ack, chan, st, rchan;
	__u16 credits;

	*why = "a malformed header";
	if (len < sizeof(*h))
		return FZ_ENDS;
	hl = le32toh(h->len);
	seq = le32toh(h->seq);
	ack = le32toh(h->ack);
	chan = le32toh(h->chan);
	credits = le16toh(h->credits);
	if (h->type < MSG_DATA || h->type >= MSG_NR_TYPES || h->reserved ||
	    hl != len - sizeof(*h) ||
	    (h->flags & ~(h->type == MSG_DATA ? MSG_F_MORE : 0)))
		return FZ_ENDS;
	switch (h->type) {
	case MSG_DATA:
		if (!chan || (!hl && (h->flags & MSG_F_MORE)) || hl > SEG_SIZE)
			return FZ_ENDS;
		break;
	case MSG_OPEN:
		if (chan || hl != sizeof(struct chan_open))
			return FZ_ENDS;
		break;
	case MSG_OPEN_REP:
		if (!chan || hl != sizeof(struct chan_open_rep))
			return FZ_ENDS;
		break;
	case MSG_SHUT:
		if (!chan || hl)
			return FZ_ENDS;
		break;
	case MSG_IMMED:
		if (!chan || hl != sizeof(__le32))
			return FZ_ENDS;
		break;
	default:
		if (seq || chan || hl)
			return FZ_ENDS;
		break;
	}
	*why = "credits beyond the queue";
	if (credits > CLT_DEPTH)
		return FZ_ENDS;
	if (credits > p->rx_owed)
		v = FZ_MAY;
	/* The server's oldest unacknowledged is the last ack it took. */
	*why = "an ack outside the window";
	if (seq_before(ack, p->ack_sent))
		return FZ_ENDS;
	if (seq_before(p->rcv_nxt, ack))
		v = FZ_MAY;
	if (type_sequenced(h->type)) {
		/* Ahead, or further behind than a retransmission can be. */
		*why = "a sequence gap";
		if (p->snd_nxt - seq > MAX_UNACKED)
			return FZ_ENDS;
		*why = "a duplicate";
		if (seq != p->snd_nxt)
			return v;
		*why = "a malformed OPEN";
		if (h->type == MSG_OPEN &&
		    (!le32toh(((const struct chan_open *)pl)->chan) ||
		     ((const struct chan_open *)pl)->reserved ||
		     !fz_service_ok(((const struct chan_open *)pl)->service)))
			return FZ_ENDS;
		*why = "a malformed OPEN_REP";
		if (h->type == MSG_OPEN_REP) {
			const struct chan_open_rep *rep = (const void *)pl;
			unsigned int i;

			st = le32toh(rep->status);
			rchan = le32toh(rep->chan);
			if (st >= OPEN_NR_STATUS ||
			    (st == OPEN_OK ? !rchan : rchan))
				return FZ_ENDS;
			for (i = 0; i < sizeof(rep->reserved); i++)
				if (rep->reserved[i])
					return FZ_ENDS;
		}
	} else if (h->type == MSG_CLOSE) {
		/* Taken or not (a grant, an ack), the connection ends. */
		*why = "a CLOSE";
		return FZ_CLOSES;
	}
	*why = v == FZ_MAY ? "a grant or an ack ahead of what arrived" :
	       "a valid frame";
	return v;
}

/*
 * Post frame @fr (@len bytes), out of the fuzz's slot (free again: the
 * last frame's SEND is done), and keep the books as the server will if it
 * takes it: the grant, the ack, a sequence number. An ack ahead of what
 * arrived is believed (what is missing below it is dropped when it comes);
 * should the server not have taken it, the old value is tried when the
 * session goes live again.
 */
static int fz_post(struct fuzz *z, struct peer *p, const __u8 *fr,
		   size_t len)
{
	const struct msg_hdr *h = (const void *)fr;
	__u8 *slot = p->c.tx + SQ_DEPTH * TX_SLOT;
	__u16 credits;
	__u32 ack;

	assert(len <= FZ_SLOT);
	memcpy(slot, fr, len);
	if (post_from(p, slot, len))
		return -1;
	if (len < sizeof(*h))
		return 0;
	credits = le16toh(h->credits);
	ack = le32toh(h->ack);
	p->rx_owed -= credits < p->rx_owed ? credits : p->rx_owed;
	p->ack_sent = ack;
	if (type_sequenced(h->type) && le32toh(h->seq) == p->snd_nxt)
		p->snd_nxt++;
	if (seq_before(p->rcv_nxt, ack)) {
		z->s.alt_ack = p->rcv_nxt;
		z->s.alt = true;
		p->rcv_nxt = ack;
	}
	return 0;
}

/*
 * Pump until the server has taken the last frame, the credit it used
 * granted back (every SEND the server takes, it reposts and grants), or
 * has ended the connection, or FZ_SETTLE_MS have passed.
 */
static enum fz_react fz_settle(struct peer *p)
{
	long long end = now_ms() + FZ_SETTLE_MS;

	for (;;) {
		pump(p);
		if (peer_gone(p))
			return FZ_ENDED;
		if (p->tx_done == p->tx_posted && p->credits_got >= p->tx_posted)
			return FZ_TAKEN;
		if (now_ms() > end)
			return FZ_SILENT;
		usleep(100);
	}
}

/*
 * Frame @i (of seed z->f.seed): built, then hostile (mutated, in rounds,
 * until the server must end the connection) or moved to an edge the
 * server must take (and undone, should the mirror say otherwise); sent,
 * judged.
 */
static bool fz_frame(struct fuzz *z, struct peer *p, unsigned long long i)
{
	static __u8 fr[FZ_SLOT], built[FZ_SLOT];
	bool hostile = craft_fuzz_hostile(&z->f, i), undone = false;
	__u64 r = mix2(z->f.seed, i);
	enum fz_verdict verdict;
	size_t len, at, built_len;
	char what[256], one[256];
	enum fz_react react;
	unsigned int refused;
	enum wait_result wr;
	unsigned int round;
	const char *why;

	wr = wait_send(p, false, false, FZ_SETTLE_MS);
	if (wr == WAIT_GONE)
		return false;
	if (wr == WAIT_TIMEOUT) {
		/* The last frame was taken: its credit came back, not others. */
		craft_fuzz_anomaly(&z->f, "before frame %llu: no credit granted back in %d s",
				   i, FZ_SETTLE_MS / 1000);
		return false;
	}
	len = fz_build(p, &r, fr, hostile);
	if (hostile) {
		*what = 0;
		for (round = 0; round < CRAFT_MUTATE_ROUNDS; round++) {
			len = fz_mutate(p, &r, fr, len, one, sizeof(one));
			at = strlen(what);
			snprintf(what + at, sizeof(what) - at, "%s%s",
				 round ? "; " : "", one);
			verdict = fz_expect(p, fr, len, &why);
			if (verdict == FZ_ENDS || verdict == FZ_CLOSES)
				break;
		}
	} else {
		memcpy(built, fr, len);
		built_len = len;
		len = fz_edge(p, &r, fr, len, what, sizeof(what));
		verdict = fz_expect(p, fr, len, &why);
		if (verdict != FZ_TAKES) {
			/* Not an edge the server must take: as built. */
			undone = true;
			len = built_len;
			memcpy(fr, built, len);
			snprintf(what, sizeof(what), "valid, as built");
			verdict = fz_expect(p, fr, len, &why);
		}
	}
	refused = p->nr_refused;
	if (fz_post(z, p, fr, len)) {
		if (!post_failed_gone(p))
			p->wc_err = -1;
		return false;
	}
	z->f.frames++;
	if (hostile) {
		z->f.hostile++;
	} else {
		z->f.edgy++;
		z->f.edgy_undone += undone;
	}
	react = fz_settle(p);
	if (react == FZ_TAKEN && verdict == FZ_CLOSES) {
		/* Its buffer may be granted back before the session closes. */
		hold(p, FZ_SETTLE_MS);
		if (peer_gone(p))
			react = FZ_ENDED;
	}
	if (react == FZ_TAKEN) {
		/* It read the frame's ack: the fuzzed one, if any, stands. */
		z->taken = true;
		z->s.alt = false;
	}
	if (react == FZ_ENDED) {
		z->f.disconnects++;
		if (verdict == FZ_TAKES && fz_ack_unsure(z, p))
			note("fuzz: frame %llu: ended on ack %u, never taken; %u next",
			     i, p->rcv_nxt, z->s.alt_ack);
		else if (verdict == FZ_TAKES)
			craft_fuzz_anomaly(&z->f, "frame %llu (%s), %s: ended the connection (%s)",
					   i, what, why, gone_how(p));
	} else if (react == FZ_SILENT) {
		z->f.silent++;
		note("fuzz: frame %llu (%s), %s: no answer in %d s, connection dropped",
		     i, what, why, FZ_SETTLE_MS / 1000);
	} else {
		if (p->nr_refused != refused)
			z->f.err_replies++;
		else
			z->f.ok_replies++;
		if (verdict == FZ_ENDS || verdict == FZ_CLOSES)
			craft_fuzz_anomaly(&z->f, "frame %llu (%s), %s: taken, the connection kept",
					   i, what, why);
	}
	if (((react == FZ_ENDED && verdict == FZ_TAKES) || react == FZ_SILENT ||
	     (react == FZ_TAKEN &&
	      (verdict == FZ_ENDS || verdict == FZ_CLOSES))) &&
	    z->hex_notes++ < FZ_HEX_NOTES)
		craft_note_hex("fuzz: that frame", fr, len);
	return react == FZ_TAKEN;
}

/*
 * After the fuzz: a new session opens an echo channel and has a ping
 * echoed, as a client would. 0 when it does; 1 when it does not; 2 when
 * this host could not try.
 */
static int fz_alive(unsigned long long seed)
{
	static const char ping[] = "rdmx-msgcraft: still there after the fuzz?";
	long long end = now_ms() + FZ_GIVE_UP_MS;
	const char *why = "no connection";
	static struct fuzz z;
	enum fz_dial d;
	struct peer p;
	bool ok = false;

	memset(&z, 0, sizeof(z));
	memset(&p, 0, sizeof(p));
	z.f.seed = seed;
	z.no_cm = true;
	fz_new_session(&z);
	z.s.features = PROTO_F_MSG;
	for (;;) {
		d = fz_connect(&z, &p);
		if (d == FZ_LIVE)
			break;
		fz_drop(&z, &p);
		if (d == FZ_HOST)
			return 2;
		if (now_ms() > end)
			goto out;
		if (d == FZ_BUSY)
			usleep(200 * 1000);
	}
	/* From here on, a client's checks of what the server sends. */
	p.fuzz = false;
	why = "OPEN of rdmx.echo refused or unanswered";
	if (wait_send(&p, false, false, TIMEOUT_MS) != WAIT_OK ||
	    send_open(&p, 1) || !wait_open_reps(&p, 1) ||
	    p.chans[0].status != OPEN_OK)
		goto out;
	why = "no echo";
	if (wait_send(&p, false, true, TIMEOUT_MS) != WAIT_OK ||
	    send_msg(&p, MSG_DATA, 0, p.chans[0].rchan, ping, sizeof(ping)))
		goto out;
	end = now_ms() + TIMEOUT_MS;
	while (!p.chans[0].echoed && !peer_gone(&p) && now_ms() < end) {
		pump(&p);
		usleep(100);
	}
	why = "the echo differs";
	if (!p.chans[0].echoed || p.data_bytes != sizeof(ping) ||
	    p.data_sum != fnv1a(0, ping, sizeof(ping))) {
		if (!p.chans[0].echoed)
			why = peer_gone(&p) ? gone_how(&p) : "no echo";
		goto out;
	}
	ok = true;
	/* Closed as a client closes, not left to the loss timeout. */
	if (wait_send(&p, true, false, TIMEOUT_MS) == WAIT_OK &&
	    !send_msg(&p, MSG_CLOSE, 0, 0, NULL, 0))
		hold(&p, 1000);
out:
	if (ok)
		report(true, "after the fuzz: a new session's echo channel echoes %zu bytes",
		       sizeof(ping));
	else
		report(false, "after the fuzz: a new session's echo channel echoes a ping (%s)",
		       why);
	if (p.anomalies)
		note("after the fuzz: %u anomalies in what the server sent",
		     p.anomalies);
	fz_drop(&z, &p);
	return ok ? 0 : 1;
}

/*
 * The wire fuzz: @count frames, or as many as @secs (0: no limit) allow,
 * @hostile_pct percent of them hostile, on one session that reconnects as
 * needed; then the summary and the check that the server still serves.
 */
static int mode_fuzz(unsigned long long seed, unsigned int count,
		     unsigned int secs, unsigned int hostile_pct)
{
	static struct fuzz z;
	long long deadline = secs ? now_ms() + secs * 1000LL : 0;
	long long lost = 0;
	unsigned long long i = 0;
	bool live = false;
	enum fz_dial d;
	struct peer p;
	int ret;

	memset(&z, 0, sizeof(z));
	memset(&p, 0, sizeof(p));
	z.f.seed = seed;
	z.f.hostile_pct = hostile_pct;
	z.f.start_ms = now_ms();
	fz_new_session(&z);
	while (i < count && (!deadline || now_ms() < deadline)) {
		if (!live) {
			d = fz_connect(&z, &p);
			if (d == FZ_LIVE) {
				live = true;
				lost = 0;
				continue;
			}
			fz_drop(&z, &p);
			/* Nothing ran: this host, or nobody there. */
			if ((d == FZ_HOST || d == FZ_NOBODY) && !z.f.connects)
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
		live = fz_frame(&z, &p, i++);
		if (live)
			continue;
		fz_drop(&z, &p);
		/* A mirror that lost its way: a fresh start, not a loop. */
		z.untaken = z.taken ? 0 : z.untaken + 1;
		if (z.untaken >= FZ_UNTAKEN_MAX) {
			note("fuzz: %u connections in a row took no frame: a new session",
			     z.untaken);
			fz_new_session(&z);
			z.untaken = 0;
		}
	}
	if (live) {
		/* The session closed, as a client closes it. */
		if (wait_send(&p, true, false, 1000) == WAIT_OK &&
		    !send_msg(&p, MSG_CLOSE, 0, 0, NULL, 0))
			hold(&p, 1000);
		fz_drop(&z, &p);
	}
	note("fuzz: %llu sessions, %llu connections ended going live, %llu messages received twice",
	     z.sessions, z.live_lost, z.dups);
	note("fuzz: %llu times the ack before a fuzzed one tried again",
	     z.alt_tried);
	craft_fuzz_summary(&z.f);
	ret = fz_alive(seed);
	return craft_fuzz_exit(&z.f, ret);
}

/* ---- seq-far ------------------------------------------------------------ */

/*
 * seq-far: on a new session each, after an OPEN of the echo service, one
 * DATA whose sequence number is off the next expected by each of these.
 * A retransmission can be at most MAX_UNACKED behind: the server drops
 * one that far or nearer and keeps the connection; it ends the connection
 * on one further behind, ahead, or 2^31 away (behind and ahead at once).
 */
static int mode_seq_far(unsigned int count, unsigned int secs)
{
	static const struct {
		__u32 off;		/* added to the next expected */
		bool takes;
		const char *what;
	} tries[] = {
		{ -1U, true, "one behind, a duplicate" },
		{ -(__u32)MAX_UNACKED, true, "MAX_UNACKED behind, a duplicate" },
		{ -(__u32)MAX_UNACKED - 1, false, "MAX_UNACKED + 1 behind" },
		{ 0x80000000, false, "2^31 away" },
		{ 1, false, "one ahead" },
	};
	enum fz_react react, want;
	unsigned int i, rchan;
	const char *said;
	struct peer p;
	__u32 next;
	int ret = 0;

	(void)count;
	(void)secs;
	memset(&p, 0, sizeof(p));
	for (i = 0; i < ARRAY_SIZE(tries); i++) {
		ret = connect_echo(&p, &rchan);
		if (ret)
			goto out;
		if (wait_send(&p, false, false, TIMEOUT_MS) != WAIT_OK) {
			report(false, "%s: no credit to send it", tries[i].what);
			ret = 1;
			goto out;
		}
		next = p.snd_nxt;
		p.snd_nxt = next + tries[i].off;
		if (send_msg(&p, MSG_DATA, 0, rchan, "x", 1)) {
			ret = 2;
			goto out;
		}
		p.snd_nxt = next;
		react = fz_settle(&p);
		said = "no answer";
		if (react == FZ_ENDED)
			said = "the connection ended";
		else if (react == FZ_TAKEN && tries[i].takes)
			said = "dropped, the connection kept";
		else if (react == FZ_TAKEN)
			said = "taken, the connection kept";
		want = tries[i].takes ? FZ_TAKEN : FZ_ENDED;
		report(react == want, "DATA with seq %u, expected %u (%s): %s",
		       next + tries[i].off, next, tries[i].what, said);
		if (tries[i].takes)
			report_conformance(&p);
		peer_close(&p);
	}
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
	{ "open-noack", mode_open_noack, 3000, 1000000 },
	{ "silent", mode_silent, 1, 1 },
	{ "seq-far", mode_seq_far, 1, 1 },
	{ "rnr-stall", mode_rnr_stall, CLT_DEPTH + 8, 10000 },
	{ "rnr-close", mode_rnr_close, CLT_DEPTH + 8, 10000 },
	{ "rnr-endless", mode_rnr_endless, 1, 1 },
	{ "listen-rnr-endless", mode_listen_rnr_endless, 1, 100 },
};

static void print_usage(FILE *f)
{
	fprintf(f,
		"usage: rdmx-msgcraft [-p PORT] [-n COUNT] [-t SECONDS] MODE HOST\n"
		"       rdmx-msgcraft [-p PORT] -F SEED [-n MSGS] [-d SECONDS] [-m PERCENT] HOST\n"
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
		"  open-noack  send COUNT (default 3000) OPENs of rdmx.echo, granting\n"
		"              credits but never acknowledging, then hold the\n"
		"              connection for SECONDS\n"
		"  silent      connect and send nothing, not even the first ACK; the\n"
		"              server must end the connection within SECONDS\n"
		"  rnr-stall   send COUNT (default 72) messages to be echoed on one\n"
		"              rdmx.echo channel, reposting no receive but granting\n"
		"              credits, with heartbeats while credits last: the server\n"
		"              must end the connection within SECONDS\n"
		"  rnr-close   rnr-stall, then a CLOSE: the server must still end the\n"
		"              connection within SECONDS\n"
		"  rnr-endless connect asking for RNR retries without end (7):\n"
		"              refused on InfiniBand and RoCE\n"
		"  listen-rnr-endless\n"
		"              listen on HOST:PORT; accept COUNT (default 1) rdmx\n"
		"              clients' requests (sessions' or block queues') asking\n"
		"              for RNR retries without end: each client must\n"
		"              disconnect unused within SECONDS\n"
		"  seq-far     on new sessions, DATA with a sequence number 1 or 4096\n"
		"              behind the next expected (dropped, the connection kept),\n"
		"              4097 behind, 2^31 away or 1 ahead (the connection ends)\n"
		"  -p PORT     the listener's port\n"
		"  -n COUNT    how many (see MODE)\n"
		"  -t SECONDS  how long (see MODE; default 20)\n"
		"  -F SEED     instead of a MODE, the wire fuzz: MSGS (default 10000)\n"
		"              valid frames of random types, with a PRNG seeded by\n"
		"              SEED, each either mutated (header and payload fields,\n"
		"              truncation, extension, bytes) until the server must end\n"
		"              the connection, or moved to an edge the server must\n"
		"              take (grants, acks, duplicates, lengths, channels,\n"
		"              names), reconnecting as the server drops the\n"
		"              connection, and one connect request in ten with\n"
		"              fuzzed private data; then a new session must get a\n"
		"              ping echoed: exit 0 if it does, 1 if not\n"
		"  -d SECONDS  the fuzz stops after SECONDS, if MSGS are not sent yet\n"
		"  -m PERCENT  how many frames in a hundred are mutated until the\n"
		"              server must end the connection (default 10); the\n"
		"              others are valid, at the edges, and it stays\n");
}

/* A number of @opt's, from 1 to @max; else a complaint and false. */
static bool parse_ulong(int opt, const char *arg, unsigned long max,
			unsigned long *v)
{
	char *endp;

	errno = 0;
	*v = strtoul(arg, &endp, 10);
	if (errno || *endp || !*v || *v > max) {
		fprintf(stderr, "rdmx-msgcraft: -%c: 1 to %lu, not '%s'\n", opt,
			max, arg);
		return false;
	}
	return true;
}

int main(int argc, char **argv)
{
	unsigned long count = 0, secs = 20, fuzz_secs = 0;
	unsigned int hostile_pct = CRAFT_HOSTILE_PCT;
	unsigned long long seed = 0;
	bool fuzz = false;
	unsigned int m = 0;
	char *endp;
	int opt, ret;

	craft_prog = "rdmx-msgcraft";
	while ((opt = getopt(argc, argv, "d:F:hm:n:p:t:")) != -1) {
		switch (opt) {
		case 'm':
			if (!craft_parse_percent(optarg, &hostile_pct))
				return 2;
			break;
		case 'p':
			port = optarg;
			break;
		case 'n':
			if (!parse_ulong(opt, optarg, 100000000, &count))
				return 2;
			break;
		case 't':
			if (!parse_ulong(opt, optarg, 3600, &secs))
				return 2;
			break;
		case 'F':
			errno = 0;
			seed = strtoull(optarg, &endp, 0);
			if (errno || *endp || !*optarg) {
				fprintf(stderr, "rdmx-msgcraft: -F: a number, not '%s'\n",
					optarg);
				return 2;
			}
			fuzz = true;
			break;
		case 'd':
			if (!parse_ulong(opt, optarg, 86400, &fuzz_secs))
				return 2;
			break;
		case 'h':
			print_usage(stdout);
			return 0;
		default:
			print_usage(stderr);
			return 2;
		}
	}
	if (argc - optind != (fuzz ? 1 : 2)) {
		print_usage(stderr);
		return 2;
	}
	if (!fuzz) {
		for (m = 0; m < ARRAY_SIZE(modes); m++)
			if (!strcmp(argv[optind], modes[m].name))
				break;
		if (m == ARRAY_SIZE(modes)) {
			fprintf(stderr, "rdmx-msgcraft: unknown mode '%s'\n",
				argv[optind]);
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
	} else if (!count) {
		count = 10000;
	}
	host = argv[argc - 1];
	if (craft_target(host, port))
		return 2;
	if (fuzz) {
		note("fuzz: SEED %llu, MSGS %lu, SECONDS %lu, to %s:%s", seed,
		     count, fuzz_secs, host, port);
		note("fuzz: HOSTILE %u%%: frames mutated until the connection must end",
		     hostile_pct);
		ret = mode_fuzz(seed, count, fuzz_secs, hostile_pct);
	} else {
		note("%s: COUNT %lu, SECONDS %lu, to %s:%s", modes[m].name,
		     count, secs, host, port);
		ret = modes[m].run(count, secs);
	}
	craft_target_free();
	if (ret != 2)
		printf("# %d tests, %d failed\n", n_tests, n_failed);
	return ret;
}
