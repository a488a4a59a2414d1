/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmx sessions, connections and channels: the message service's private
 * structures.
 *
 * A session (struct rdmx_sess) carries reliable, ordered message streams
 * between two hosts. It runs on one or more lanes (struct rdmx_lane), each
 * an independent sequenced stream with its own credits on its own RC QP.
 * Lane 0 is opened first and carries the control traffic (heartbeats,
 * CLOSE, one-sided operations); the client opens further lanes on demand,
 * up to the number negotiated on lane 0 (at most one per CPU). A channel
 * (struct rdmx_ep, one per endpoint pair) is bound to one lane for its
 * life, so its messages stay in order; channels are multiplexed on lanes
 * by channel id.
 *
 * A session outlives its connections (struct rdmx_conn, one per lane):
 * an incarnation is one connection on each open lane, all with the same
 * generation. When any of them fails they all go, the client reconnects
 * every lane with a higher generation, and each lane sends again every
 * sequenced message not yet acknowledged; the receiver drops what it
 * already has.
 *
 * Locking (outermost first):
 *   ep->mutex            listen, connect and recv on one endpoint
 *   ep->send_mutex       send and shutdown on one endpoint; may be held
 *                        while a send waits for the peer's window, so
 *                        work items only try it (the immediates of
 *                        WRITE_IMM), and whoever holds it lets go through
 *                        rdmx_ep_send_unlock(), which kicks them again
 *   sess->mr_mutex       registering and deregistering a region, which
 *                        posts under sess->mutex
 *   rdmx_sess_mutex      (global) finding or creating a client session
 *   sess->mutex          connection setup and teardown of one session;
 *                        never taken by a CM event handler or a completion;
 *                        one-sided operations are posted under it, so the
 *                        QP they use cannot be torn down meanwhile
 *   rdmx_lst_mutex       (global) the listener list
 *   sess->lock           (spinlock) everything on the data path of a
 *                        session: state, every lane (its connection,
 *                        sequence numbers, credits, transmit list), the
 *                        channel table
 *   ep->lock             (spinlock) an endpoint's state and receive queue
 *   rdmx_svc_lock        (spinlock) the table of listening endpoints
 * Completion handlers run in softirq context (IB_POLL_SOFTIRQ), as
 * nvme-rdma's and RDS's do: a message is delivered and its reader woken
 * without a switch to a worker thread first. They take sess->lock and
 * ep->lock only, so those two are taken with bottom halves disabled
 * (spin_lock_bh()) everywhere, and they never sleep: what may (answering
 * an OPEN, an allocation that waits for memory, unpinning a user's pages,
 * the last reference to an endpoint) goes to a work item. CM event
 * handlers take sess->lock and never wait for a teardown, which runs from
 * a work item and destroys the cm_id (rdma_destroy_id() waits for a
 * running handler).
 */
#ifndef _RDMX_SESS_H
#define _RDMX_SESS_H

#include <linux/kobject.h>
#include <linux/list.h>
#include <linux/socket.h>
#include <linux/spinlock.h>
#include <linux/uuid.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/rdma_cm.h>

#include "core/cm.h"
#include "core/rdmx.h"
#include "msg_proto.h"
#include "rdmx_api.h"
#include "state.h"

struct rdmx_ep;
struct rdmx_sess;
struct rdmx_pd;

/* The message service's tunables, in /sys/kernel/rdmx (msg/sysfs.c). */
struct rdmx_msg_params {
	unsigned int queue_depth;	/* receive buffers posted per QP */
	unsigned int max_lanes;		/* lanes per session, at most */
	unsigned int max_sessions;	/* server sessions, at most */
	unsigned int max_sessions_per_host; /* server sessions of one peer host */
};

extern struct rdmx_msg_params rdmx_msg_params;
/* Connection requests refused for the limits above. */
extern atomic64_t rdmx_sessions_refused;

/*
 * Payload per SEND, at most: with the message header (and a transmit or
 * receive buffer's own header) it still fits a 32 KiB kmalloc slab.
 */
#define RDMX_SEG_SIZE			(32 * 1024 - 256)
#define RDMX_CTRL_BUFS			8	/* control messages in flight */
#define RDMX_TX_WINDOW			256	/* sequenced SENDs kept for retransmit */
#define RDMX_SESS_MAX_CHANS		1024	/* open channels per session */
/*
 * Channels one local user (without CAP_NET_ADMIN) may open on a session,
 * which every user of the two hosts shares: no one takes them all.
 */
#define RDMX_SESS_USER_CHANS		(RDMX_SESS_MAX_CHANS / 4)
/*
 * What a lane may hold past the window: control messages (OPEN, OPEN_REP,
 * SHUT, IMMED) are queued without waiting for it, but not without bound:
 * room for an open and a close of every channel, and as many immediates
 * as the window, before they fail with -ENOBUFS (a peer that acknowledges
 * nothing stops them there).
 */
#define RDMX_TX_FORCE_MAX		(2 * RDMX_TX_WINDOW + \
					 2 * RDMX_SESS_MAX_CHANS)
static_assert(RDMX_TX_FORCE_MAX <= RDMX_PROTO_MAX_UNACKED);
#define RDMX_SESS_RX_LIMIT		(32 << 20)	/* bytes queued before credits stop */
/* A peer otherwise heard from may leave work undone this long, at least. */
#define RDMX_STALL_MIN_MS		10000
/*
 * How many times longer a send queue holding one-sided work may go
 * without a completion: a large READ or WRITE to a slow or starved peer
 * can take long and still progress.
 */
#define RDMX_STALL_RMA_MULT		6
#define RDMX_CHAN_BACKLOG_DEFAULT	64
#define RDMX_SESS_MAX_LANES		16	/* lanes (RC QPs) per session, at most */

/**
 * struct rdmx_rxbuf - one posted receive buffer
 * @rx: its memory: header and payload in @rx.hdr
 * @conn: owner
 * @node: on @conn's @rx_backlog while it waits for process context
 * @byte_len: bytes received, from its completion
 */
struct rdmx_rxbuf {
	struct rdmx_rx_buf rx;
	struct rdmx_conn *conn;
	struct list_head node;
	u32 byte_len;
};

/**
 * struct rdmx_txbuf - one SEND: a sequenced message or a control message
 * @node: on the session's transmit list (sequenced) or a free list (control)
 * @cqe: completion entry
 * @sess: owner
 * @conn: the connection it is posted on, NULL when not posted
 * @dma: mapping for @conn, valid while posted
 * @seq: sequence number (sequenced only)
 * @acked: acknowledged while still posted: freed by the completion
 * @sent: posted at least once (a later post is a retransmission)
 * @ctrl: one of a connection's control buffers
 * @len: bytes to send, header included
 * @buf: header and payload
 */
struct rdmx_txbuf {
	struct list_head node;
	struct ib_cqe cqe;
	struct rdmx_sess *sess;
	struct rdmx_conn *conn;
	u64 dma;
	u32 seq;
	bool acked;
	bool sent;
	bool ctrl;
	u32 len;
	u8 buf[];
};

/**
 * struct rdmx_conn - one incarnation of a session: a cm_id and its RC QP
 * @cm_ctx: what the cm_id's context points to
 * @sess: the session (holds a reference)
 * @lane: index of the lane it carries
 * @cm_id: rdma_cm identifier
 * @rdev: the device it runs on (holds a reference), NULL before resolved
 * @xpd: the session's protection domain (holds a reference)
 * @pd: @xpd's ib_pd
 * @cq: completion queue from the CQ pool
 * @cq_size: entries taken from the pool
 * @qp: the RC queue pair
 * @state: enum rdmx_conn_state, under the session's lock
 * @generation: the session incarnation this connection carries
 * @depth: receive buffers posted (our queue depth)
 * @peer_depth: the peer's queue depth
 * @features: RDMX_PROTO_F_* both sides agreed on in the handshake
 * @sq_size: send queue entries; @sq_posted counts those in use
 * @sq_posted: SENDs posted and not yet completed
 * @rma_wrs: send queue entries for one-sided work requests (READ, WRITE,
 *	atomics, registration), beyond @sq_size
 * @rma_posted: of those, posted and not yet completed
 * @sq_stamp: jiffies of the last send queue completion, or of the post that
 *	found nothing posted (under the session's lock)
 * @rx: receive buffers, @depth of them
 * @ctrl: control buffers, RDMX_CTRL_BUFS
 * @ctrl_free: control buffers not posted
 * @ib_busy: the CM handler is building its PD, CQ, QP and buffers
 *	(rdmx_cm_addr_resolved()); a teardown waits for that first
 * @established: rdma_cm reported it ESTABLISHED: only then is it
 *	disconnected (iWARP's CM frees its id under a disconnect that waits
 *	for a connect still in progress)
 * @err: why the connection ended, for logs and the session
 * @teardown_work: tears it down (process context, may sleep)
 * @rx_work: takes the receives on @rx_backlog, in order, in process context
 * @rx_backlog: receives the completion handler left to @rx_work: messages
 *	whose handling may sleep (OPEN, OPEN_REP), those it had no memory
 *	for, and every one after them, so that none overtakes another
 *	(under the session's lock)
 * @rx_busy: @rx_work has receives to take or is taking one; the
 *	completion handler then queues what arrives behind them (under the
 *	session's lock)
 * @started: jiffies when the attempt began (client)
 */
struct rdmx_conn {
	struct rdmx_cm_ctx cm_ctx;
	struct rdmx_sess *sess;
	unsigned int lane;
	struct rdma_cm_id *cm_id;
	struct rdmx_device *rdev;
	struct rdmx_pd *xpd;
	struct ib_pd *pd;
	struct ib_cq *cq;
	unsigned int cq_size;
	struct ib_qp *qp;
	enum rdmx_conn_state state;
	u64 generation;
	u32 depth;
	u32 peer_depth;
	u32 features;
	u32 sq_size;
	u32 sq_posted;
	u32 rma_wrs;
	u32 rma_posted;
	unsigned long sq_stamp;
	struct rdmx_rxbuf *rx;
	struct rdmx_txbuf *ctrl[RDMX_CTRL_BUFS];
	struct list_head ctrl_free;
	bool established;
	bool ib_busy;
	int err;
	struct work_struct teardown_work;
	struct work_struct rx_work;
	struct list_head rx_backlog;
	bool rx_busy;
	unsigned long started;
};

/**
 * struct rdmx_sess_stats - session counters, shown in sysfs
 * @msgs_tx: messages queued for sending (each once, however often sent)
 * @msgs_rx: messages received whole
 * @bytes_tx: their payload bytes
 * @bytes_rx: likewise, received
 * @retransmits: SENDs posted again after a reconnect
 * @reconnects: connections after the first
 * @hb_misses: heartbeats the peer did not answer
 * @sq_stalls: connections failed because the peer took none of their
 *	SENDs (refused until the RNR retries ran out), or nothing posted on
 *	their send queue completed for rdmx_stall_ms() (one-sided work:
 *	RDMX_STALL_RMA_MULT times that)
 * @dropped: sequenced messages dropped: duplicates, or for no channel
 */
struct rdmx_sess_stats {
	u64 msgs_tx;
	u64 msgs_rx;
	u64 bytes_tx;
	u64 bytes_rx;
	u64 retransmits;
	u64 reconnects;
	u64 hb_misses;
	u64 sq_stalls;
	u64 dropped;
};

/**
 * struct rdmx_lane - one sequenced stream of a session, on one connection
 * @conn: the current connection, if any
 * @nr_chans: client: channels bound to the lane
 * @peer_credits: credits the peer holds, as far as this side knows
 * @snd_nxt: next sequence number to assign
 * @snd_una: oldest sequence number not acknowledged
 * @rcv_nxt: next sequence number expected
 * @ack_sent: the last @rcv_nxt told to the peer
 * @tx_list: sequenced messages not yet acknowledged, in order
 * @tx_post: next entry of @tx_list to post on @conn, or NULL
 * @tx_count: entries on @tx_list
 * @credits: SENDs the peer can take on this lane
 * @rx_owed: receive buffers reposted and not yet granted to the peer
 *
 * Everything is under the session's lock.
 */
struct rdmx_lane {
	struct rdmx_conn *conn;
	unsigned int nr_chans;
	u32 peer_credits;
	u32 snd_nxt;
	u32 snd_una;
	u32 rcv_nxt;
	u32 ack_sent;
	struct list_head tx_list;
	struct rdmx_txbuf *tx_post;
	unsigned int tx_count;
	struct rdmx_credits credits;
	u32 rx_owed;
};

/**
 * struct rdmx_sess - a reliable, ordered message session with one peer
 * @ref: references: the session table, each channel, each connection and
 *	each queued work item hold one
 * @id: number in /sys/kernel/rdmx/sessions
 * @server: accepted from a listener rather than connected to
 * @uuid: identity, stable across reconnects
 * @peer: the peer's address and port
 * @local: our address and port
 * @kobj: /sys/kernel/rdmx/sessions/ID
 * @kobj_inited: @kobj owns the memory (freed by its release)
 * @kobj_added: @kobj is in sysfs
 * @mutex: serialises connection setup and teardown
 * @mr_mutex: @mrs and the regions' keys
 * @xpd: protection domain of the session's connections and regions; kept
 *	across reconnects on the same device, so tokens stay good. Under
 *	@lock (CM event handlers read it)
 * @pd_gone: @xpd's device is going: a new connection needs a new PD
 * @mrs: regions registered on the session (struct rdmx_mr)
 * @pd_work: drops @xpd and the regions' keys when its device goes away
 * @lock: the data path (see the locking rules at the top)
 * @state: enum rdmx_sess_state; changed only by rdmx_sess_set_state()
 * @error: why the session closed (positive errno), once CLOSED
 * @generation: current incarnation
 * @features: RDMX_PROTO_F_* of the live (or last live) connection
 * @lanes: the lanes; @lanes[0].conn is the session's main connection
 * @nr_lanes: lanes in use (client: opened; server: the highest index a
 *	client connected, plus one); never shrinks
 * @max_lanes: lanes negotiated on lane 0 (client: wanted until then)
 * @nr_conns: connections attached to lanes; the incarnation is over when
 *	the last one is torn down
 * @lanes_work: client: connects the lanes that have no connection
 * @ever_connected: reached CONNECTED once (reconnect rather than fail)
 * @peer_closed: the peer sent CLOSE
 * @rx_queued: memory queued in channels and not yet read: each
 *	segment's allocation (rdmx_rxseg_cost()), so that empty or tiny
 *	segments cost what they take
 * @rx_held: credits are withheld because @rx_queued is over the limit
 * @chans: channel id -> struct rdmx_ep
 * @chan_next: for cyclic channel id allocation
 * @nr_chans: open channels
 * @wait: woken when the transmit window opens or the state changes
 * @last_rx: jiffies of the last message received
 * @hb_missed: probes sent since the last message received
 * @hb_work: heartbeat timer
 * @ack_work: delayed acknowledgment
 * @reconnect_work: client: next connection attempt; server: loss timeout
 * @close_work: closes a session that has no channel left
 * @down_since: jiffies when the last connection was lost
 * @attempts: reconnection attempts since then
 * @stats: counters
 */
struct rdmx_sess {
	struct kref ref;
	u32 id;
	bool server;
	uuid_t uuid;
	struct sockaddr_storage peer;
	struct sockaddr_storage local;
	struct kobject kobj;
	bool kobj_inited;
	bool kobj_added;

	struct mutex mutex;		/* connection setup and teardown */
	struct mutex mr_mutex;		/* xpd, mrs */
	struct rdmx_pd *xpd;
	bool pd_gone;
	struct list_head mrs;
	struct delayed_work pd_work;
	spinlock_t lock;		/* the data path */
	enum rdmx_sess_state state;
	int error;
	u64 generation;
	u32 features;
	struct rdmx_lane lanes[RDMX_SESS_MAX_LANES];
	unsigned int nr_lanes;
	unsigned int max_lanes;
	unsigned int nr_conns;
	struct delayed_work lanes_work;
	bool ever_connected;
	bool peer_closed;

	size_t rx_queued;
	bool rx_held;

	struct xarray chans;
	u32 chan_next;
	unsigned int nr_chans;
	wait_queue_head_t wait;

	unsigned long last_rx;
	unsigned int hb_missed;
	struct delayed_work hb_work;
	struct delayed_work ack_work;
	struct delayed_work reconnect_work;
	struct delayed_work close_work;
	unsigned long down_since;
	unsigned int attempts;

	struct rdmx_sess_stats stats;
};

/**
 * struct rdmx_rxseg - one SEND's payload
 * @node: on a channel's receive queue
 * @len: bytes in @data; ep.c marks a message's last segment in bit 31
 * @data: payload
 *
 * Either a copy of the payload or the receive buffer it arrived in, taken
 * whole: the segment's fields then lie over the message header, which
 * has been parsed, and @data is where the payload already is. Freed with
 * kfree() alike.
 */
struct rdmx_rxseg {
	struct list_head node;
	u32 len;
	u8 data[] __aligned(8);
};

/* A receive buffer can be its own segment (rdmx_rxseg_in_place()). */
#define RDMX_RXSEG_IN_PLACE \
	(offsetof(struct rdmx_rxseg, data) == sizeof(struct rdmx_msg_hdr))

/*
 * What a received segment of @payload bytes costs the session's receive
 * budget: its allocation, slab rounding included. An empty segment costs
 * its header, so that a peer cannot queue them for free.
 */
static inline size_t rdmx_rxseg_cost(size_t payload)
{
	return kmalloc_size_roundup(sizeof(struct rdmx_rxseg) + payload);
}

/**
 * struct rdmx_ep - an endpoint: a listening service or one end of a channel
 * @ref: references: its owner (a file or a kernel user), the session's
 *	channel table, a listener's accept queue and the service table
 * @mutex: serialises the calls that change what the endpoint is
 * @send_mutex: keeps the segments of one message together
 * @lock: @state, @error, the queues
 * @state: RDMX_EP_*
 * @error: positive errno once the channel failed
 * @wait: woken on a message, a channel to accept, or a state change
 * @sess: session of a channel (holds a reference)
 * @chan: our channel id in @sess
 * @rchan: the peer's channel id
 * @lane: the session lane the channel's messages travel on
 * @service: service name
 * @local: local address (listening: the listener's)
 * @rxq: complete messages waiting for RECV
 * @rxq_len: messages on @rxq
 * @partial_len: bytes of a message whose last segment has not arrived
 * @flags: RDMX_EP_F_*
 * @acceptq: listening: channels waiting for ACCEPT
 * @accept_node: on a listening endpoint's @acceptq
 * @backlog: listening: most channels on @acceptq
 * @nr_accept: listening: channels on @acceptq
 * @svc_node: listening: on the service table
 * @listener: listening: the address its listener was got with
 * @ops: kernel users' callbacks, may be NULL
 * @priv: for @ops
 * @notify_work: calls @ops->data_ready
 * @shut_sent: SHUT has been queued
 * @broken: a message was cut short: no more sends
 * @mrs: regions registered through this endpoint, by id (struct rdmx_mr)
 * @mr_next: for cyclic region ids
 * @events: completed asynchronous operations (struct rdmx_rma_req)
 * @nr_events: on @events
 * @rma_async: asynchronous operations started and not yet read as events
 * @uid: with RDMX_EP_F_QUOTA, the user that opened the channel
 * @imm_reqs: WRITE_IMMs whose data is placed, in completion order, waiting
 *	for their immediates to be sent (struct rdmx_rma_req)
 * @imm_work: sends them (rdmx_imm_wq), never waiting for @send_mutex
 * @rma_done: operations whose last piece completed, in completion order,
 *	left by the completion handler for @rma_done_work (struct
 *	rdmx_rma_req, under @lock)
 * @rma_done_work: completes them in process context (rdmx_wq): unpins a
 *	user's pages, queues an event or an immediate
 * @rma_done_busy: @rma_done_work has operations to complete or is
 *	completing one; the completion handler then queues every operation
 *	behind them, so that they stay in order (under @lock)
 * @msgs_tx: counters
 * @msgs_rx: counters
 * @bytes_tx: counters
 * @bytes_rx: counters
 */
struct rdmx_ep {
	struct kref ref;
	struct mutex mutex;		/* listen, connect, recv */
	struct mutex send_mutex;	/* one message's segments together */
	spinlock_t lock;		/* state, queues */
	u32 state;
	int error;
	wait_queue_head_t wait;
	struct rdmx_sess *sess;
	u32 chan;
	u32 rchan;
	unsigned int lane;
	char service[RDMX_PROTO_SERVICE_LEN];
	struct sockaddr_storage local;
	struct list_head rxq;
	unsigned int rxq_len;
	size_t partial_len;
	unsigned long flags;
	struct list_head acceptq;
	struct list_head accept_node;
	unsigned int backlog;
	unsigned int nr_accept;
	struct list_head svc_node;
	struct sockaddr_storage listener;
	const struct rdmx_ep_ops *ops;
	void *priv;
	struct work_struct notify_work;
	bool shut_sent;
	bool broken;
	struct xarray mrs;
	u32 mr_next;
	struct list_head events;
	unsigned int nr_events;
	unsigned int rma_async;
	kuid_t uid;
	struct list_head imm_reqs;
	struct work_struct imm_work;
	struct list_head rma_done;
	struct work_struct rma_done_work;
	bool rma_done_busy;
	u64 msgs_tx;
	u64 msgs_rx;
	u64 bytes_tx;
	u64 bytes_rx;
};

#define RDMX_EP_F_RELEASED	0	/* rdmx_ep_release() ran */
#define RDMX_EP_F_USER		1	/* a /dev/rdmx file's endpoint */
#define RDMX_EP_F_QUOTA		2	/* opened by @uid: RDMX_SESS_USER_CHANS */

/* sess.c */
int rdmx_sess_init(void);
void rdmx_sess_exit(void);
struct rdmx_sess *rdmx_sess_connect_get(const struct sockaddr *dst,
					unsigned int timeout_ms);
void rdmx_sess_put(struct rdmx_sess *sess);
int rdmx_sess_close_id(u32 id);
int rdmx_sess_chan_add(struct rdmx_sess *sess, struct rdmx_ep *ep, int lane);
void rdmx_sess_chan_del(struct rdmx_sess *sess, struct rdmx_ep *ep);
int rdmx_sess_send_whole(struct rdmx_sess *sess, unsigned int idx, u32 chan,
			 struct iov_iter *from);
int rdmx_sess_send_seq(struct rdmx_sess *sess, unsigned int lane, u8 type,
		       u32 chan, const void *payload, size_t len,
		       struct iov_iter *from, bool wait, bool nonblock);
bool rdmx_sess_writable(struct rdmx_sess *sess, unsigned int lane);
void rdmx_sess_wc_failed(struct rdmx_sess *sess, const char *op,
			 const struct ib_wc *wc);
void rdmx_sess_conn_fail(struct rdmx_conn *conn, int err);
void rdmx_sess_peer_alive(struct rdmx_sess *sess);
void rdmx_sess_queue(struct rdmx_sess *sess, struct delayed_work *dwork,
		     unsigned long delay);
void rdmx_sess_rx_consumed(struct rdmx_sess *sess, size_t bytes);
unsigned int rdmx_sess_live_lanes(struct rdmx_sess *sess);
unsigned int rdmx_sess_unacked(struct rdmx_sess *sess);
u32 rdmx_sess_credits_locked(struct rdmx_sess *sess);

/*
 * Inside a session: what sess.c (its life and timers), sess_cm.c (its
 * connections), sess_send.c and sess_recv.c (its data path) share.
 */
extern struct xarray rdmx_sessions;
extern struct mutex rdmx_sess_admit_mutex;
extern struct rdmx_cm_service rdmx_msg_cm_service;

/*
 * How long a connection's send queue may hold SENDs of which nothing
 * completes before the connection is failed: the loss timeout, but at
 * least RDMX_STALL_MIN_MS (a loss timeout of 0 only means not waiting for
 * a lost connection to come back). With one-sided work posted,
 * RDMX_STALL_RMA_MULT times that.
 */
static inline u32 rdmx_stall_ms(void)
{
	return max_t(u32, READ_ONCE(rdmx_params.loss_timeout_ms),
		     RDMX_STALL_MIN_MS);
}

/* Whether @conn's send queue holds work. Under the session's lock. */
static inline bool rdmx_conn_sq_busy(const struct rdmx_conn *conn)
{
	return conn->sq_posted || conn->rma_posted;
}

/*
 * How long @conn's send queue has held work with no completion, in ms,
 * if longer than it may (rdmx_stall_ms()); else 0. Under the session's
 * lock.
 */
static inline u32 rdmx_conn_sq_stalled(const struct rdmx_conn *conn)
{
	u32 limit = rdmx_stall_ms();

	lockdep_assert_held(&conn->sess->lock);
	if (!rdmx_conn_sq_busy(conn))
		return 0;
	if (conn->rma_posted)
		limit *= RDMX_STALL_RMA_MULT;
	if (time_before_eq(jiffies, conn->sq_stamp + msecs_to_jiffies(limit)))
		return 0;
	return limit;
}

/*
 * About to post on @conn's send queue: when nothing is posted, the time a
 * completion may take starts now. Under the session's lock.
 */
static inline void rdmx_conn_sq_posting(struct rdmx_conn *conn)
{
	lockdep_assert_held(&conn->sess->lock);
	if (!rdmx_conn_sq_busy(conn))
		conn->sq_stamp = jiffies;
}

static inline struct rdmx_lane *rdmx_conn_lane(struct rdmx_conn *conn)
{
	return &conn->sess->lanes[conn->lane];
}

/* sess.c */
bool rdmx_sess_set_state(struct rdmx_sess *sess, enum rdmx_sess_state to);
struct rdmx_sess *rdmx_sess_alloc(bool server);
void rdmx_sess_publish(struct rdmx_sess *sess);
void rdmx_lanes_check_attempts(struct rdmx_sess *sess);

/* sess_cm.c */
void rdmx_conn_fail(struct rdmx_conn *conn, int err);
void rdmx_conn_go_live(struct rdmx_conn *conn);
void rdmx_lanes_work(struct work_struct *work);
void rdmx_sess_fail_conns(struct rdmx_sess *sess, int err);
unsigned long rdmx_backoff(struct rdmx_sess *sess);
void rdmx_sess_finish_close(struct rdmx_sess *sess, struct list_head *to_free);
void rdmx_sess_unlink(struct rdmx_sess *sess);
int rdmx_sess_start_connect(struct rdmx_sess *sess, unsigned int idx);

/* sess_send.c */
void rdmx_tx_kick(struct rdmx_lane *lane);
int rdmx_sess_closed_err(struct rdmx_sess *sess);
struct rdmx_txbuf *rdmx_txbuf_alloc(struct rdmx_sess *sess, size_t len,
				    gfp_t gfp);
bool rdmx_send_ctrl(struct rdmx_sess *sess, struct rdmx_lane *lane, u8 type);
void rdmx_tx_ack(struct rdmx_sess *sess, struct rdmx_lane *lane, u32 ack,
		 struct list_head *to_free);
void rdmx_txbuf_free_list(struct list_head *list);
bool rdmx_lane_ack_due(struct rdmx_sess *sess, struct rdmx_lane *lane);
void rdmx_ack_maybe(struct rdmx_sess *sess, struct rdmx_lane *lane, bool now);
void rdmx_wc_failed(struct rdmx_sess *sess, const char *op,
		    const struct ib_wc *wc);

/* sess_recv.c */
int rdmx_post_recv(struct rdmx_conn *conn, struct rdmx_rxbuf *rxb);
void rdmx_conn_rx_work(struct work_struct *work);
void rdmx_sess_handle_open(struct rdmx_sess *sess, u32 rchan,
			   const char *service, unsigned int lane);

#if IS_ENABLED(CONFIG_KUNIT)
unsigned int rdmx_lane_pick(const struct rdmx_lane *lanes, unsigned int nr,
			    unsigned int max);
#endif

/* uep.c */
struct file;
struct poll_table_struct;
long rdmx_uep_ioctl(struct file *file, unsigned int cmd, void __user *uarg);
__poll_t rdmx_uep_poll(struct file *file, struct poll_table_struct *wait);

/* svc.c */
int rdmx_svc_add(struct rdmx_ep *ep);
void rdmx_svc_del(struct rdmx_ep *ep);
void rdmx_svc_exit(void);
struct rdmx_ep *rdmx_svc_find_get(const struct sockaddr *local,
				  const char *service);

/* ep.c */
struct rdmx_ep *rdmx_ep_new_chan(struct rdmx_sess *sess, u32 rchan,
				 const char *service);
int rdmx_ep_chan_deliver(struct rdmx_ep *ep, struct rdmx_rxseg *seg,
			 bool more);
int rdmx_ep_chan_deliver_imm(struct rdmx_ep *ep, struct rdmx_rxseg *seg);
void rdmx_ep_chan_open_rep(struct rdmx_ep *ep, u32 rchan,
			   enum rdmx_open_status status);
void rdmx_ep_chan_shut(struct rdmx_ep *ep);
void rdmx_ep_chan_error(struct rdmx_ep *ep, int err);
bool rdmx_ep_accept_room(struct rdmx_ep *lep);
int rdmx_ep_enqueue_accept(struct rdmx_ep *lep, struct rdmx_ep *ep);
void rdmx_ep_kref_release(struct kref *ref);
void rdmx_ep_send_unlock(struct rdmx_ep *ep);
ssize_t rdmx_ep_recv_len(struct rdmx_ep *ep);
int rdmx_echo_open(struct rdmx_sess *sess, u32 rchan, unsigned int lane,
		   struct rdmx_ep **out);

/* sysfs.c */
int rdmx_msg_sysfs_init(void);
void rdmx_msg_sysfs_exit(void);
int rdmx_sysfs_sess_add(struct rdmx_sess *sess);
void rdmx_sysfs_sess_del(struct rdmx_sess *sess);
void rdmx_sess_release_final(struct rdmx_sess *sess);

extern struct workqueue_struct *rdmx_imm_wq;
extern struct workqueue_struct *rdmx_rx_wq;

#endif /* _RDMX_SESS_H */
