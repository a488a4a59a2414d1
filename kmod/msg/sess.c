// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx sessions: rdma_cm connections, the RC QP data path, sequencing,
 * credits, heartbeats and reconnect. See sess.h for the structures and the
 * locking rules, and Documentation/protocol.rst for the wire protocol.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <kunit/visibility.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/notifier.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <rdma/ib_cm.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "core/rdmx.h"
#include "rma.h"
#include "sess.h"
#include "msg_trace.h"

/* Serialises admitting a new server session against the limits. */
static DEFINE_MUTEX(rdmx_sess_admit_mutex);

/* Sessions by id; xa_lock guards lookups against the final put. */
static DEFINE_XARRAY_ALLOC1(rdmx_sessions);
/* Serialises finding-or-creating a client session. */
static DEFINE_MUTEX(rdmx_sess_mutex);
static u32 rdmx_sess_next_id;
struct workqueue_struct *rdmx_imm_wq;

static void rdmx_conn_fail(struct rdmx_conn *conn, int err);
static void rdmx_tx_kick(struct rdmx_lane *lane);
static void rdmx_conn_go_live(struct rdmx_conn *conn);
static void rdmx_sess_handle_open(struct rdmx_sess *sess, u32 rchan,
				  const char *service, unsigned int lane);
static void rdmx_sess_close(struct rdmx_sess *sess, int err);
static void rdmx_hb_work(struct work_struct *work);
static void rdmx_ack_work(struct work_struct *work);
static void rdmx_reconnect_work(struct work_struct *work);
static void rdmx_close_work(struct work_struct *work);
static void rdmx_lanes_work(struct work_struct *work);

/* Lanes this host offers or grants a session: at most one per CPU. */
static unsigned int rdmx_lanes_max(void)
{
	return clamp_t(unsigned int, READ_ONCE(rdmx_msg_params.max_qps), 1,
		       min_t(unsigned int, num_online_cpus(),
			     RDMX_SESS_MAX_LANES));
}

static struct rdmx_lane *rdmx_conn_lane(struct rdmx_conn *conn)
{
	return &conn->sess->lanes[conn->lane];
}

static void rdmx_sess_release(struct kref *ref)
{
	struct rdmx_sess *sess = container_of(ref, struct rdmx_sess, ref);
	unsigned int i;

	for (i = 0; i < RDMX_SESS_MAX_LANES; i++) {
		WARN_ON(sess->lanes[i].conn);
		WARN_ON(!list_empty(&sess->lanes[i].tx_list));
	}
	WARN_ON(!list_empty(&sess->mrs));
	rdmx_pd_put(sess->xpd);
	xa_destroy(&sess->chans);
	rdmx_sysfs_sess_del(sess);
	rdmx_sess_release_final(sess);
}

/**
 * rdmx_sess_put() - drop a session reference
 * @sess: the session
 *
 * Context: process context; not under any rdmx spinlock.
 */
void rdmx_sess_put(struct rdmx_sess *sess)
{
	kref_put(&sess->ref, rdmx_sess_release);
}

/* Queue @dwork holding a session reference for it. */
/**
 * rdmx_sess_queue() - (re)arm one of a session's works; it holds a reference
 * @sess: the session
 * @dwork: the work
 * @delay: in jiffies
 *
 * Context: any context.
 */
void rdmx_sess_queue(struct rdmx_sess *sess, struct delayed_work *dwork,
		     unsigned long delay)
{
	kref_get(&sess->ref);
	if (!mod_delayed_work(rdmx_wq, dwork, delay))
		return;
	/* It was already pending and holds its own reference. */
	kref_put(&sess->ref, rdmx_sess_release);
}

/*
 * The only place a session changes state. An illegal transition is a bug:
 * it is refused with a warning.
 */
static bool rdmx_sess_set_state(struct rdmx_sess *sess,
				enum rdmx_sess_state to)
{
	lockdep_assert_held(&sess->lock);
	if (WARN_ONCE(!rdmx_sess_transition_valid(sess->state, to),
		      "rdmx: session %u: %s -> %s\n", sess->id,
		      rdmx_sess_state_str(sess->state), rdmx_sess_state_str(to)))
		return false;
	trace_rdmx_sess_state(sess->id, sess->generation, sess->state, to);
	sess->state = to;
	wake_up_all(&sess->wait);
	return true;
}

static struct rdmx_sess *rdmx_sess_alloc(bool server)
{
	struct rdmx_sess *sess;
	unsigned int i;
	int ret;

	sess = kzalloc(sizeof(*sess), GFP_KERNEL);
	if (!sess)
		return NULL;
	kref_init(&sess->ref);
	sess->server = server;
	for (i = 0; i < RDMX_SESS_MAX_LANES; i++)
		INIT_LIST_HEAD(&sess->lanes[i].tx_list);
	sess->nr_lanes = 1;
	sess->max_lanes = rdmx_lanes_max();
	mutex_init(&sess->mutex);
	mutex_init(&sess->mr_mutex);
	INIT_LIST_HEAD(&sess->mrs);
	INIT_DELAYED_WORK(&sess->pd_work, rdmx_sess_pd_work);
	spin_lock_init(&sess->lock);
	sess->state = RDMX_SESS_IDLE;
	xa_init_flags(&sess->chans, XA_FLAGS_ALLOC1);
	init_waitqueue_head(&sess->wait);
	INIT_DELAYED_WORK(&sess->hb_work, rdmx_hb_work);
	INIT_DELAYED_WORK(&sess->ack_work, rdmx_ack_work);
	INIT_DELAYED_WORK(&sess->reconnect_work, rdmx_reconnect_work);
	INIT_DELAYED_WORK(&sess->close_work, rdmx_close_work);
	INIT_DELAYED_WORK(&sess->lanes_work, rdmx_lanes_work);
	sess->last_rx = jiffies;

	/* The id is reserved; lookups see the session once it is published. */
	ret = xa_alloc_cyclic(&rdmx_sessions, &sess->id, NULL,
			      XA_LIMIT(1, INT_MAX), &rdmx_sess_next_id,
			      GFP_KERNEL);
	if (ret < 0) {
		kfree(sess);
		return NULL;
	}
	return sess;
}

/*
 * Make a set-up session visible to lookups. The table takes a reference
 * of its own; the caller keeps the one rdmx_sess_alloc() gave it.
 */
static void rdmx_sess_publish(struct rdmx_sess *sess)
{
	kref_get(&sess->ref);
	/* The id is reserved, so this allocates nothing and cannot fail. */
	xa_store(&rdmx_sessions, sess->id, sess, GFP_KERNEL);
}

/* ---- transmit ---------------------------------------------------------- */

static struct rdmx_txbuf *rdmx_txbuf_alloc(struct rdmx_sess *sess, size_t len,
					   gfp_t gfp)
{
	struct rdmx_txbuf *txb;

	txb = kzalloc(struct_size(txb, buf, sizeof(struct rdmx_msg_hdr) + len),
		      gfp);
	if (!txb)
		return NULL;
	INIT_LIST_HEAD(&txb->node);
	txb->sess = sess;
	txb->len = sizeof(struct rdmx_msg_hdr) + len;
	return txb;
}

static void rdmx_send_done(struct ib_cq *cq, struct ib_wc *wc);

/* Fill in credits and ack, map and post one SEND. */
static int rdmx_post_txbuf(struct rdmx_conn *conn, struct rdmx_txbuf *txb)
{
	struct rdmx_sess *sess = conn->sess;
	struct rdmx_lane *lane = rdmx_conn_lane(conn);
	struct ib_device *ibdev = conn->cm_id->device;
	struct rdmx_msg_hdr *hdr = (struct rdmx_msg_hdr *)txb->buf;
	struct ib_send_wr wr = {};
	struct ib_sge sge;
	u32 grant = 0;
	int ret;

	lockdep_assert_held(&sess->lock);

	if (!sess->rx_held)
		grant = min_t(u32, lane->rx_owed, U16_MAX);
	else if (lane->peer_credits < RDMX_CREDITS_RESERVED)
		/* Held back, but the peer can still answer a heartbeat. */
		grant = min_t(u32, lane->rx_owed,
			      RDMX_CREDITS_RESERVED - lane->peer_credits);
	lane->rx_owed -= grant;
	lane->peer_credits += grant;
	hdr->credits = cpu_to_le16(grant);
	hdr->ack = cpu_to_le32(lane->rcv_nxt);
	lane->ack_sent = lane->rcv_nxt;

	txb->dma = ib_dma_map_single(ibdev, txb->buf, txb->len, DMA_TO_DEVICE);
	if (ib_dma_mapping_error(ibdev, txb->dma)) {
		lane->rx_owed += grant;
		lane->peer_credits -= grant;
		return -ENOMEM;
	}
	sge.addr = txb->dma;
	sge.length = txb->len;
	sge.lkey = conn->pd->local_dma_lkey;
	txb->cqe.done = rdmx_send_done;
	wr.wr_cqe = &txb->cqe;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED;

	/*
	 * Owned by the connection before it is posted: the completion may
	 * run on another CPU before ib_post_send() returns (siw sends
	 * inline), and it reads txb->conn before it takes the lock.
	 */
	txb->conn = conn;
	conn->sq_posted++;
	trace_rdmx_msg_send(sess->id, hdr->type, le32_to_cpu(hdr->seq),
			    lane->rcv_nxt, grant,
			    txb->len - sizeof(struct rdmx_msg_hdr));
	ret = ib_post_send(conn->qp, &wr, NULL);
	if (unlikely(ret)) {
		txb->conn = NULL;
		conn->sq_posted--;
		ib_dma_unmap_single(ibdev, txb->dma, txb->len, DMA_TO_DEVICE);
		lane->rx_owed += grant;
		lane->peer_credits -= grant;
		return ret;
	}
	return 0;
}

/*
 * Send a control message on a lane's current connection if a control
 * buffer, a send queue slot and a credit allow. Returns false when it
 * could not: the caller's condition stays and the next completion or
 * timer retries.
 */
static bool rdmx_send_ctrl(struct rdmx_sess *sess, struct rdmx_lane *lane,
			   u8 type)
{
	struct rdmx_conn *conn = lane->conn;
	struct rdmx_txbuf *txb;
	struct rdmx_msg m = { .type = type };

	lockdep_assert_held(&sess->lock);

	if (!conn || conn->state != RDMX_CONN_LIVE)
		return false;
	if (list_empty(&conn->ctrl_free) || conn->sq_posted >= conn->sq_size)
		return false;
	/*
	 * The last credit is kept for messages that hand credits back (or
	 * probe for them): see Documentation/protocol.rst, Credits.
	 */
	if (!rdmx_credits_take(&lane->credits, true))
		return false;
	txb = list_first_entry(&conn->ctrl_free, struct rdmx_txbuf, node);
	list_del_init(&txb->node);
	rdmx_msg_hdr_pack((struct rdmx_msg_hdr *)txb->buf, &m);
	txb->len = sizeof(struct rdmx_msg_hdr);
	if (rdmx_post_txbuf(conn, txb)) {
		list_add(&txb->node, &conn->ctrl_free);
		lane->credits.avail++;
		rdmx_conn_fail(conn, -EIO);
		return false;
	}
	return true;
}

/* Post a lane's queued sequenced messages while credits and slots last. */
static void rdmx_tx_kick(struct rdmx_lane *lane)
{
	struct rdmx_conn *conn = lane->conn;
	struct rdmx_txbuf *txb;

	if (!conn || conn->state != RDMX_CONN_LIVE)
		return;
	lockdep_assert_held(&conn->sess->lock);
	while ((txb = lane->tx_post)) {
		if (conn->sq_posted + RDMX_CTRL_BUFS >= conn->sq_size)
			break;
		if (!rdmx_credits_take(&lane->credits, false))
			break;
		if (rdmx_post_txbuf(conn, txb)) {
			lane->credits.avail++;
			rdmx_conn_fail(conn, -EIO);
			return;
		}
		if (txb->sent)
			conn->sess->stats.retransmits++;
		txb->sent = true;
		lane->tx_post = list_is_last(&txb->node, &lane->tx_list) ?
				NULL : list_next_entry(txb, node);
	}
}

/* Drop what the peer acknowledged; those still posted go at completion. */
static void rdmx_tx_ack(struct rdmx_sess *sess, struct rdmx_lane *lane,
			u32 ack, struct list_head *to_free)
{
	struct rdmx_txbuf *txb, *tmp;

	lockdep_assert_held(&sess->lock);

	list_for_each_entry_safe(txb, tmp, &lane->tx_list, node) {
		if (!rdmx_seq_before(txb->seq, ack))
			break;
		if (lane->tx_post == txb)
			lane->tx_post = list_is_last(&txb->node,
						     &lane->tx_list) ?
					NULL : list_next_entry(txb, node);
		list_del_init(&txb->node);
		lane->tx_count--;
		if (txb->conn)
			txb->acked = true;
		else
			list_add_tail(&txb->node, to_free);
	}
	if (lane->snd_una != ack) {
		lane->snd_una = ack;
		wake_up_all(&sess->wait);
	}
}

static void rdmx_txbuf_free_list(struct list_head *list)
{
	struct rdmx_txbuf *txb, *tmp;

	list_for_each_entry_safe(txb, tmp, list, node)
		kfree(txb);
}

/* Whether a lane owes the peer an acknowledgment or credits. */
static bool rdmx_lane_ack_due(struct rdmx_sess *sess, struct rdmx_lane *lane)
{
	return lane->rcv_nxt != lane->ack_sent ||
	       (lane->rx_owed && !sess->rx_held);
}

/* Acknowledge and grant credits on a lane now when it matters, else soon. */
static void rdmx_ack_maybe(struct rdmx_sess *sess, struct rdmx_lane *lane,
			   bool now)
{
	struct rdmx_conn *conn = lane->conn;
	u32 threshold;

	lockdep_assert_held(&sess->lock);

	if (!conn || conn->state != RDMX_CONN_LIVE)
		return;
	threshold = max_t(u32, 1, conn->depth / 4);
	if (!sess->rx_held && lane->rx_owed >= threshold)
		now = true;
	if (now) {
		if (rdmx_send_ctrl(sess, lane, RDMX_MSG_ACK))
			return;
	}
	if (rdmx_lane_ack_due(sess, lane))
		rdmx_sess_queue(sess, &sess->ack_work, 1);
}

/* A completion failed: say so, unless it is a flush of a dying QP. */
static void rdmx_wc_failed(struct rdmx_sess *sess, const char *op,
			   const struct ib_wc *wc)
{
	if (wc->status == IB_WC_WR_FLUSH_ERR)
		return;
	trace_rdmx_wc_error(sess->id, op, wc->status, wc->vendor_err);
	pr_err_ratelimited("session %u: %s failed: %s (%d)\n", sess->id, op,
			   ib_wc_status_msg(wc->status), wc->status);
}

/**
 * rdmx_sess_peer_alive() - the peer's device answered (an acknowledged
 *	work request): it counts as traffic for the heartbeat
 * @sess: the session
 *
 * Context: under the session's lock.
 */
void rdmx_sess_peer_alive(struct rdmx_sess *sess)
{
	lockdep_assert_held(&sess->lock);
	sess->last_rx = jiffies;
	sess->hb_missed = 0;
}

/**
 * rdmx_sess_wc_failed() - report a failed completion of a session's QP
 * @sess: the session
 * @op: what failed, for the log
 * @wc: the completion
 *
 * Context: any context.
 */
void rdmx_sess_wc_failed(struct rdmx_sess *sess, const char *op,
			 const struct ib_wc *wc)
{
	rdmx_wc_failed(sess, op, wc);
}

static void rdmx_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rdmx_txbuf *txb = container_of(wc->wr_cqe, struct rdmx_txbuf,
					      cqe);
	struct rdmx_sess *sess = txb->sess;
	struct rdmx_conn *conn = txb->conn;
	struct rdmx_lane *lane;
	bool free = false;

	/* A driver completing what it was not given: never trust it. */
	if (unlikely(!conn)) {
		pr_err_ratelimited("session %u: completion of a SEND that is not posted (%s), ignored\n",
				   sess->id, ib_wc_status_msg(wc->status));
		return;
	}
	lane = rdmx_conn_lane(conn);
	ib_dma_unmap_single(conn->cm_id->device, txb->dma, txb->len,
			    DMA_TO_DEVICE);

	spin_lock(&sess->lock);
	conn->sq_posted--;
	txb->conn = NULL;
	if (txb->ctrl) {
		list_add(&txb->node, &conn->ctrl_free);
		if (txb->buf[0] == RDMX_MSG_CLOSE)
			rdmx_conn_fail(conn, -ECONNABORTED);
	} else if (txb->acked) {
		free = true;
	}
	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		rdmx_wc_failed(sess, "send", wc);
		rdmx_conn_fail(conn, -EIO);
	} else {
		/*
		 * A probe the peer's device acknowledged answers for the
		 * peer: its HEARTBEAT_ACK may wait behind long one-sided
		 * transfers in its send queue. A dead peer acknowledges
		 * nothing, so misses still count up.
		 */
		if (txb->ctrl && txb->buf[0] == RDMX_MSG_HEARTBEAT)
			rdmx_sess_peer_alive(sess);
		if (lane->conn == conn) {
			rdmx_tx_kick(lane);
			rdmx_ack_maybe(sess, lane, false);
		}
	}
	spin_unlock(&sess->lock);
	if (free)
		kfree(txb);
}

/**
 * rdmx_sess_writable() - whether a sequenced message could be queued now
 * @sess: the session
 * @lane: the lane it would go on
 *
 * Context: any context.
 * Return: true when the lane's transmit window has room or the session is
 * closed (a send then fails at once rather than blocking).
 */
bool rdmx_sess_writable(struct rdmx_sess *sess, unsigned int lane)
{
	bool ret;

	spin_lock(&sess->lock);
	ret = sess->lanes[lane].tx_count < RDMX_TX_WINDOW ||
	      sess->state == RDMX_SESS_CLOSING || sess->state == RDMX_SESS_CLOSED;
	spin_unlock(&sess->lock);
	return ret;
}

/**
 * rdmx_sess_live_lanes() - lanes with a live connection
 * @sess: the session
 *
 * Context: under the session's lock.
 * Return: how many.
 */
unsigned int rdmx_sess_live_lanes(struct rdmx_sess *sess)
{
	unsigned int i, n = 0;

	lockdep_assert_held(&sess->lock);
	for (i = 0; i < sess->nr_lanes; i++)
		n += sess->lanes[i].conn &&
		     sess->lanes[i].conn->state == RDMX_CONN_LIVE;
	return n;
}

/**
 * rdmx_sess_credits_locked() - SENDs the session may post, all lanes
 * @sess: the session
 *
 * Context: under the session's lock.
 * Return: the sum of the lanes' credits.
 */
u32 rdmx_sess_credits_locked(struct rdmx_sess *sess)
{
	unsigned int i;
	u32 n = 0;

	lockdep_assert_held(&sess->lock);
	for (i = 0; i < sess->nr_lanes; i++)
		n += sess->lanes[i].credits.avail;
	return n;
}

/**
 * rdmx_sess_unacked() - sequenced messages not yet acknowledged, all lanes
 * @sess: the session
 *
 * Context: under the session's lock.
 * Return: how many.
 */
unsigned int rdmx_sess_unacked(struct rdmx_sess *sess)
{
	unsigned int i, n = 0;

	lockdep_assert_held(&sess->lock);
	for (i = 0; i < sess->nr_lanes; i++)
		n += sess->lanes[i].tx_count;
	return n;
}

static int rdmx_sess_closed_err(struct rdmx_sess *sess)
{
	return sess->error ? -sess->error : -ECONNRESET;
}

/* Give a sequenced SEND its number and put it on its lane's queue. */
static void rdmx_lane_queue_txbuf(struct rdmx_sess *sess,
				  struct rdmx_lane *lane,
				  struct rdmx_txbuf *txb)
{
	lockdep_assert_held(&sess->lock);
	txb->seq = lane->snd_nxt++;
	((struct rdmx_msg_hdr *)txb->buf)->seq = cpu_to_le32(txb->seq);
	list_add_tail(&txb->node, &lane->tx_list);
	lane->tx_count++;
	if (!lane->tx_post)
		lane->tx_post = txb;
}

/*
 * Queue one sequenced SEND on a lane; waits for room in the window unless
 * @force, which queues past it up to RDMX_TX_FORCE_MAX (-ENOBUFS beyond).
 */
static int rdmx_sess_queue_txbuf(struct rdmx_sess *sess, unsigned int idx,
				 struct rdmx_txbuf *txb, bool force,
				 bool nonblock, bool killable)
{
	struct rdmx_lane *lane = &sess->lanes[idx];
	int ret;

	for (;;) {
		spin_lock(&sess->lock);
		if (sess->state == RDMX_SESS_CLOSING ||
		    sess->state == RDMX_SESS_CLOSED) {
			ret = rdmx_sess_closed_err(sess);
			spin_unlock(&sess->lock);
			return ret;
		}
		if (force && lane->tx_count >= RDMX_TX_FORCE_MAX) {
			spin_unlock(&sess->lock);
			pr_warn_ratelimited("session %u: %pISpc acknowledges nothing: %u messages queued, no more\n",
					    sess->id, &sess->peer,
					    RDMX_TX_FORCE_MAX);
			return -ENOBUFS;
		}
		if (force || lane->tx_count < RDMX_TX_WINDOW)
			break;
		spin_unlock(&sess->lock);
		if (nonblock)
			return -EAGAIN;
		if (killable)
			ret = wait_event_killable(sess->wait,
						  rdmx_sess_writable(sess, idx));
		else
			ret = wait_event_interruptible(sess->wait,
						       rdmx_sess_writable(sess, idx));
		if (ret)
			return killable ? -EINTR : -ERESTARTSYS;
	}
	rdmx_lane_queue_txbuf(sess, lane, txb);
	rdmx_tx_kick(lane);
	spin_unlock(&sess->lock);
	return 0;
}

/* Make one segment of a message: @n bytes of @from, or of @payload. */
static struct rdmx_txbuf *rdmx_sess_make_seg(struct rdmx_sess *sess,
					     struct rdmx_msg *m, size_t n,
					     bool more, const void *payload,
					     struct iov_iter *from)
{
	struct rdmx_txbuf *txb;

	txb = rdmx_txbuf_alloc(sess, n, GFP_KERNEL);
	if (!txb)
		return ERR_PTR(-ENOMEM);
	if (from) {
		if (!copy_from_iter_full(txb->buf + sizeof(struct rdmx_msg_hdr),
					 n, from)) {
			kfree(txb);
			return ERR_PTR(-EFAULT);
		}
	} else if (n) {
		memcpy(txb->buf + sizeof(struct rdmx_msg_hdr), payload, n);
	}
	m->len = n;
	m->flags = more ? RDMX_MSG_F_MORE : 0;
	rdmx_msg_hdr_pack((struct rdmx_msg_hdr *)txb->buf, m);
	return txb;
}

/**
 * rdmx_sess_send_whole() - queue a DATA message all at once, or not at all
 * @sess: the session
 * @idx: the lane it goes on
 * @chan: the receiver's channel id
 * @from: the message's bytes, 0 to RDMX_MSG_MAX
 *
 * Every segment is made first, then all are queued at once if the lane's
 * window has room for all of them, else none: the caller never waits,
 * not even in the middle of a message, and never takes the window past
 * its size. For senders that run in a shared worker (the echo service).
 *
 * Context: process context; may sleep (allocations only).
 * Return: 0; -EAGAIN when the window has no room for all of it (@from left
 * as it was, as for every error); -ENOMEM; -EFAULT; or the session's error
 * once it is closing.
 */
int rdmx_sess_send_whole(struct rdmx_sess *sess, unsigned int idx, u32 chan,
			 struct iov_iter *from)
{
	struct rdmx_lane *lane = &sess->lanes[idx];
	struct rdmx_msg m = { .type = RDMX_MSG_DATA, .chan = chan };
	size_t len = iov_iter_count(from), left = len, n;
	struct rdmx_txbuf *txb, *tmp;
	unsigned int nr = 0;
	LIST_HEAD(segs);
	bool full;
	int ret = 0;

	if (WARN_ON_ONCE(idx >= RDMX_SESS_MAX_LANES))
		return -EINVAL;
	/* Cheap first: a caller that retries on a full window allocates nothing. */
	spin_lock(&sess->lock);
	full = lane->tx_count + max_t(size_t, 1, DIV_ROUND_UP(len, RDMX_SEG_SIZE)) >
	       RDMX_TX_WINDOW;
	spin_unlock(&sess->lock);
	if (full)
		return -EAGAIN;
	do {
		n = min_t(size_t, left, RDMX_SEG_SIZE);
		txb = rdmx_sess_make_seg(sess, &m, n, left > n, NULL, from);
		if (IS_ERR(txb)) {
			ret = PTR_ERR(txb);
			goto fail;
		}
		list_add_tail(&txb->node, &segs);
		left -= n;
		nr++;
	} while (left);

	spin_lock(&sess->lock);
	if (sess->state == RDMX_SESS_CLOSING ||
	    sess->state == RDMX_SESS_CLOSED) {
		ret = rdmx_sess_closed_err(sess);
	} else if (lane->tx_count + nr > RDMX_TX_WINDOW) {
		ret = -EAGAIN;
	} else {
		list_for_each_entry_safe(txb, tmp, &segs, node) {
			list_del_init(&txb->node);
			rdmx_lane_queue_txbuf(sess, lane, txb);
		}
		rdmx_tx_kick(lane);
		sess->stats.msgs_tx++;
		sess->stats.bytes_tx += len;
	}
	spin_unlock(&sess->lock);
	if (!ret)
		return 0;
fail:
	iov_iter_revert(from, len - left);
	rdmx_txbuf_free_list(&segs);
	return ret;
}

/**
 * rdmx_sess_send_seq() - queue a sequenced message on a session
 * @sess: the session
 * @lane: the lane it goes on: the channel's (0 for OPEN's answer to no
 *	channel); a lane not connected yet holds it until it is
 * @type: RDMX_MSG_DATA, _OPEN, _OPEN_REP or _SHUT
 * @chan: the receiver's channel id (0 for OPEN)
 * @payload: payload for control-like types, or NULL
 * @len: bytes at @payload, or the message length when @from is given
 * @from: DATA: the message's bytes; segmented to the peer's SEND size
 * @wait: wait for room in the transmit window (DATA); else queue at once,
 *	past the window up to RDMX_TX_FORCE_MAX (control types)
 * @nonblock: fail with -EAGAIN rather than wait for the first segment
 *
 * Once the first segment of a message is queued, the rest follow: later
 * waits are only interrupted by a fatal signal, which leaves the message
 * cut short (-EINTR with the channel marked broken by the caller).
 *
 * Context: process context; may sleep.
 * Return: 0; -EAGAIN or -ERESTARTSYS (nothing queued, @from left as it
 * was); -EINTR when the
 * message was cut short (interrupted, or out of memory, after its first
 * segment); -ENOMEM; -EFAULT; -ENOBUFS (not @wait, and the lane holds
 * RDMX_TX_FORCE_MAX unacknowledged messages); or the session's error once
 * it is closing.
 */
int rdmx_sess_send_seq(struct rdmx_sess *sess, unsigned int lane, u8 type,
		       u32 chan, const void *payload, size_t len,
		       struct iov_iter *from, bool wait, bool nonblock)
{
	size_t seg = RDMX_SEG_SIZE, left = len, n;
	bool first = true;
	int ret;

	if (WARN_ON_ONCE(lane >= RDMX_SESS_MAX_LANES))
		return -EINVAL;

	do {
		struct rdmx_txbuf *txb;
		struct rdmx_msg m = {
			.type = type,
			.chan = chan,
		};

		n = min(left, seg);
		txb = rdmx_sess_make_seg(sess, &m, n, left > n,
					 payload ? payload + (len - left) : NULL,
					 from);
		if (IS_ERR(txb))
			return first ? PTR_ERR(txb) : -EINTR;
		left -= n;
		ret = rdmx_sess_queue_txbuf(sess, lane, txb, !wait,
					    first && nonblock, !first);
		if (ret) {
			kfree(txb);
			if (!first)
				return -EINTR;
			/* Nothing was queued: leave the caller's bytes unread. */
			if (from)
				iov_iter_revert(from, n);
			return ret;
		}
		first = false;
	} while (left);

	spin_lock(&sess->lock);
	if (type == RDMX_MSG_DATA) {
		sess->stats.msgs_tx++;
		sess->stats.bytes_tx += len;
	}
	spin_unlock(&sess->lock);
	return 0;
}

/* ---- receive ------------------------------------------------------------ */

static void rdmx_recv_done(struct ib_cq *cq, struct ib_wc *wc);

static int rdmx_post_recv(struct rdmx_conn *conn, struct rdmx_rxbuf *rxb)
{
	struct ib_recv_wr wr = {};
	struct ib_sge sge;

	sge.addr = rxb->dma;
	sge.length = sizeof(struct rdmx_msg_hdr) + RDMX_SEG_SIZE;
	sge.lkey = conn->pd->local_dma_lkey;
	rxb->cqe.done = rdmx_recv_done;
	wr.wr_cqe = &rxb->cqe;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	ib_dma_sync_single_for_device(conn->cm_id->device, rxb->dma,
				      sge.length, DMA_FROM_DEVICE);
	return ib_post_recv(conn->qp, &wr, NULL);
}

/* What to do after the session lock is dropped. */
struct rdmx_rx_work {
	bool open;
	unsigned int lane;
	u32 open_chan;
	char service[RDMX_PROTO_SERVICE_LEN];
	bool close;
	u32 shut_chan;
	struct list_head to_free;
};

static void rdmx_sess_protocol_error(struct rdmx_conn *conn, const char *what)
{
	pr_err_ratelimited("session %u: protocol error from %pISpc: %s\n",
			   conn->sess->id, &conn->sess->peer, what);
	rdmx_conn_fail(conn, -EPROTO);
}

/* Bytes now queued in channels: over the limit, credits are withheld. */
static void rdmx_sess_rx_queued(struct rdmx_sess *sess, size_t bytes)
{
	lockdep_assert_held(&sess->lock);
	sess->rx_queued += bytes;
	if (sess->rx_queued > RDMX_SESS_RX_LIMIT)
		sess->rx_held = true;
}

/* Handle one sequenced message in order; under the session lock. */
static void rdmx_rx_sequenced(struct rdmx_sess *sess, struct rdmx_conn *conn,
			      const struct rdmx_msg *m, const void *payload,
			      struct rdmx_rxseg **segp, struct rdmx_rx_work *w)
{
	struct rdmx_ep *ep = NULL;
	enum rdmx_open_status status;
	u32 rchan;

	if (m->type != RDMX_MSG_OPEN)
		ep = xa_load(&sess->chans, m->chan);

	switch (m->type) {
	case RDMX_MSG_DATA:
		sess->stats.msgs_rx += !(m->flags & RDMX_MSG_F_MORE);
		sess->stats.bytes_rx += m->len;
		if (!ep) {
			sess->stats.dropped++;
			return;
		}
		if (rdmx_ep_chan_deliver(ep, *segp,
					 m->flags & RDMX_MSG_F_MORE) < 0)
			return;
		*segp = NULL;
		rdmx_sess_rx_queued(sess, rdmx_rxseg_cost(m->len));
		break;
	case RDMX_MSG_IMMED:
		if (!(sess->features & RDMX_PROTO_F_RMA)) {
			pr_warn_ratelimited("session %u: immediate without one-sided access negotiated, dropped\n",
					    sess->id);
			sess->stats.dropped++;
			return;
		}
		if (!ep) {
			sess->stats.dropped++;
			return;
		}
		if (rdmx_ep_chan_deliver_imm(ep, *segp) < 0)
			return;
		*segp = NULL;
		/* Immediates count too: a peer cannot queue them unbounded. */
		rdmx_sess_rx_queued(sess, rdmx_rxseg_cost(m->len));
		break;
	case RDMX_MSG_OPEN:
		if (rdmx_chan_open_parse(payload, m->len, &w->open_chan,
					 w->service)) {
			rdmx_sess_protocol_error(conn, "malformed OPEN");
			return;
		}
		w->open = true;
		w->lane = conn->lane;
		return;
	case RDMX_MSG_OPEN_REP:
		if (rdmx_chan_open_rep_parse(payload, m->len, &rchan,
					     &status)) {
			rdmx_sess_protocol_error(conn, "malformed OPEN_REP");
			return;
		}
		if (!ep) {
			/* The opener gave up: close what the peer opened. */
			if (status == RDMX_OPEN_OK)
				w->shut_chan = rchan;
			return;
		}
		rdmx_ep_chan_open_rep(ep, rchan, status);
		break;
	case RDMX_MSG_SHUT:
		if (!ep)
			return;
		rdmx_ep_chan_shut(ep);
		break;
	default:
		return;
	}
}

static void rdmx_sess_rx(struct rdmx_conn *conn, const struct rdmx_msg *m,
			 const void *payload, struct rdmx_rxseg **segp,
			 struct rdmx_rx_work *w)
{
	struct rdmx_sess *sess = conn->sess;
	struct rdmx_lane *lane = rdmx_conn_lane(conn);
	bool ack_now = false;

	lockdep_assert_held(&sess->lock);

	sess->last_rx = jiffies;
	sess->hb_missed = 0;
	if (lane->peer_credits)
		lane->peer_credits--;
	trace_rdmx_msg_recv(sess->id, m->type, m->seq, m->ack, m->credits,
			    m->len);

	if (rdmx_credits_grant(&lane->credits, m->credits)) {
		rdmx_sess_protocol_error(conn, "credits beyond the queue");
		return;
	}
	if (!rdmx_seq_ack_valid(lane->snd_una, lane->snd_nxt, m->ack)) {
		rdmx_sess_protocol_error(conn, "acknowledgment out of window");
		return;
	}
	rdmx_tx_ack(sess, lane, m->ack, &w->to_free);

	if (rdmx_msg_type_sequenced(m->type)) {
		switch (rdmx_seq_classify(m->seq, lane->rcv_nxt)) {
		case RDMX_SEQ_GAP:
			rdmx_sess_protocol_error(conn, "sequence gap");
			return;
		case RDMX_SEQ_DUPLICATE:
			/* A retransmission of what arrived: ack it again. */
			sess->stats.dropped++;
			ack_now = true;
			break;
		case RDMX_SEQ_IN_ORDER:
			lane->rcv_nxt++;
			rdmx_rx_sequenced(sess, conn, m, payload, segp, w);
			ack_now = m->type != RDMX_MSG_DATA;
			break;
		}
	} else {
		switch (m->type) {
		case RDMX_MSG_HEARTBEAT:
			rdmx_send_ctrl(sess, lane, RDMX_MSG_HEARTBEAT_ACK);
			break;
		case RDMX_MSG_CLOSE:
			sess->peer_closed = true;
			w->close = true;
			break;
		default:
			break;
		}
	}
	rdmx_tx_kick(lane);
	rdmx_ack_maybe(sess, lane, ack_now);
}

static void rdmx_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rdmx_rxbuf *rxb = container_of(wc->wr_cqe, struct rdmx_rxbuf,
					      cqe);
	struct rdmx_conn *conn = rxb->conn;
	struct rdmx_sess *sess = conn->sess;
	struct rdmx_lane *lane = rdmx_conn_lane(conn);
	struct rdmx_rx_work w = { .to_free = LIST_HEAD_INIT(w.to_free) };
	const void *payload = rxb->buf + sizeof(struct rdmx_msg_hdr);
	struct rdmx_rxseg *seg = NULL;
	struct rdmx_msg m;
	int ret;

	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		rdmx_wc_failed(sess, "recv", wc);
		spin_lock(&sess->lock);
		rdmx_conn_fail(conn, -EIO);
		spin_unlock(&sess->lock);
		return;
	}

	ib_dma_sync_single_for_cpu(conn->cm_id->device, rxb->dma,
				   sizeof(struct rdmx_msg_hdr) + RDMX_SEG_SIZE,
				   DMA_FROM_DEVICE);
	ret = rdmx_msg_hdr_parse(rxb->buf, wc->byte_len, RDMX_SEG_SIZE, &m);
	if (!ret && (m.type == RDMX_MSG_DATA || m.type == RDMX_MSG_IMMED)) {
		seg = kmalloc(struct_size(seg, data, m.len), GFP_KERNEL);
		if (seg) {
			seg->len = m.len;
			memcpy(seg->data, payload, m.len);
		} else {
			ret = -ENOMEM;
		}
	}

	spin_lock(&sess->lock);
	if (sess->server && conn->state == RDMX_CONN_CONNECTING)
		rdmx_conn_go_live(conn);
	/*
	 * What arrived on the current connection is good even once it is
	 * failing (its teardown has not detached it yet): deliver it, fewer
	 * messages need retransmitting. An older incarnation's is dropped.
	 */
	if (lane->conn != conn || (conn->state != RDMX_CONN_LIVE &&
				   conn->state != RDMX_CONN_DEAD)) {
		spin_unlock(&sess->lock);
		kfree(seg);
		return;
	}
	if (ret == -ENOMEM) {
		rdmx_conn_fail(conn, -ENOMEM);
	} else if (ret) {
		rdmx_sess_protocol_error(conn, "malformed message header");
	} else {
		rdmx_sess_rx(conn, &m, payload, &seg, &w);
		if (conn->state == RDMX_CONN_LIVE) {
			if (rdmx_post_recv(conn, rxb))
				rdmx_conn_fail(conn, -EIO);
			else
				lane->rx_owed++;
			rdmx_ack_maybe(sess, lane, false);
		}
	}
	spin_unlock(&sess->lock);

	kfree(seg);
	rdmx_txbuf_free_list(&w.to_free);
	if (w.open)
		rdmx_sess_handle_open(sess, w.open_chan, w.service, w.lane);
	if (w.shut_chan)
		rdmx_sess_send_seq(sess, conn->lane, RDMX_MSG_SHUT, w.shut_chan,
				   NULL, 0, NULL, false, false);
	if (w.close)	/* sess->mutex is not for the completion path */
		rdmx_sess_queue(sess, &sess->close_work, 0);
}

/**
 * rdmx_sess_rx_consumed() - a reader took segments off a channel's queue
 * @sess: the session
 * @bytes: what they cost (rdmx_rxseg_cost() of each)
 *
 * Credits withheld while too much was queued flow again once half of it
 * has been read.
 *
 * Context: process context; not under an rdmx spinlock.
 */
void rdmx_sess_rx_consumed(struct rdmx_sess *sess, size_t bytes)
{
	unsigned int i;

	spin_lock(&sess->lock);
	sess->rx_queued -= min(bytes, sess->rx_queued);
	if (sess->rx_held && sess->rx_queued < RDMX_SESS_RX_LIMIT / 2) {
		sess->rx_held = false;
		for (i = 0; i < sess->nr_lanes; i++)
			rdmx_ack_maybe(sess, &sess->lanes[i], true);
	}
	spin_unlock(&sess->lock);
}

/*
 * A peer opens a channel: find the service and answer. The channel lives
 * on the lane the OPEN came on, so both directions share it. The answer is
 * queued before the channel can be accepted, so the acceptor's first
 * messages follow it on the lane rather than overtake it; once queued for
 * accept the channel is the acceptor's, and not touched here again.
 */
static void rdmx_sess_handle_open(struct rdmx_sess *sess, u32 rchan,
				  const char *service, unsigned int lane)
{
	enum rdmx_open_status status = RDMX_OPEN_NO_SERVICE;
	struct rdmx_chan_open_rep rep;
	struct rdmx_ep *lep = NULL, *ep = NULL;
	int ret;

	if (!strcmp(service, RDMX_SERVICE_ECHO)) {
		ret = rdmx_echo_open(sess, rchan, lane, &ep);
		status = ret ? RDMX_OPEN_BUSY : RDMX_OPEN_OK;
		goto reply;
	}
	lep = rdmx_svc_find_get((struct sockaddr *)&sess->local, service);
	if (!lep)
		goto reply;
	status = RDMX_OPEN_BUSY;
	if (!rdmx_ep_accept_room(lep))
		goto reply;
	ep = rdmx_ep_new_chan(sess, rchan, service);
	if (!ep)
		goto reply;
	if (rdmx_sess_chan_add(sess, ep, lane)) {
		kref_put(&ep->ref, rdmx_ep_kref_release);
		ep = NULL;
		goto reply;
	}
	status = RDMX_OPEN_OK;
reply:
	if (status != RDMX_OPEN_OK)
		pr_info_ratelimited("session %u: %pISpc asked for service '%s': %s\n",
				    sess->id, &sess->peer, service,
				    status == RDMX_OPEN_NO_SERVICE ?
				    "no such service" : "busy");
	rdmx_chan_open_rep_pack(&rep, ep ? ep->chan : 0, status);
	ret = rdmx_sess_send_seq(sess, lane, RDMX_MSG_OPEN_REP, rchan, &rep,
				 sizeof(rep), NULL, false, false);
	if (ret && ep)
		rdmx_ep_chan_error(ep, -ret);
	if (lep && ep) {
		/*
		 * Unanswered, it goes. Answered, the peer holds the channel:
		 * when the listener stopped or filled up meanwhile, it is
		 * closed as an owner would (SHUT).
		 */
		if (ret || rdmx_ep_enqueue_accept(lep, ep))
			rdmx_ep_release(ep);
	}
	if (lep)
		kref_put(&lep->ref, rdmx_ep_kref_release);
}

/**
 * rdmx_lane_pick() - the lane a client's new channel goes on
 * @lanes: the session's lanes
 * @nr: lanes in use, at least 1
 * @max: lanes the session may have
 *
 * The lane with the fewest channels (the lowest index of those), or a new
 * lane, @nr, when every lane has a channel and @nr is below @max: lanes
 * open on demand, one channel each until there are @max of them.
 *
 * Context: any context; the caller holds the session's lock.
 * Return: a lane index, @nr for a new lane.
 */
VISIBLE_IF_KUNIT unsigned int rdmx_lane_pick(const struct rdmx_lane *lanes,
					     unsigned int nr, unsigned int max)
{
	unsigned int i, best = 0;

	for (i = 1; i < nr; i++)
		if (lanes[i].nr_chans < lanes[best].nr_chans)
			best = i;
	if (lanes[best].nr_chans && nr < max)
		return nr;
	return best;
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_lane_pick);

/* Client: choose a new channel's lane, opening one when it is time to. */
static unsigned int rdmx_sess_pick_lane(struct rdmx_sess *sess, bool *open)
{
	unsigned int lane;

	lockdep_assert_held(&sess->lock);
	lane = rdmx_lane_pick(sess->lanes, sess->nr_lanes, sess->max_lanes);
	if (lane == sess->nr_lanes) {
		sess->nr_lanes++;
		*open = true;
	}
	return lane;
}

/* The channels @uid opened on @sess (RDMX_EP_F_QUOTA). Under its lock. */
static unsigned int rdmx_sess_user_chans(struct rdmx_sess *sess, kuid_t uid)
{
	unsigned int n = 0;
	struct rdmx_ep *ep;
	unsigned long id;

	lockdep_assert_held(&sess->lock);
	xa_for_each(&sess->chans, id, ep)
		if (test_bit(RDMX_EP_F_QUOTA, &ep->flags) &&
		    uid_eq(ep->uid, uid))
			n++;
	return n;
}

/**
 * rdmx_sess_chan_add() - give a channel endpoint an id in a session
 * @sess: the session
 * @ep: the endpoint; the session's channel table takes a reference
 * @lane: the lane the channel goes on, or -1 to choose one (client),
 *	opening a lane when it is time to
 *
 * Context: process context.
 * Return: 0; -EAGAIN when the session is closing (connect again); -EBUSY
 * with RDMX_SESS_MAX_CHANS channels open, with RDMX_SESS_USER_CHANS of
 * @ep's user open (RDMX_EP_F_QUOTA), or out of ids; -ENOMEM.
 */
int rdmx_sess_chan_add(struct rdmx_sess *sess, struct rdmx_ep *ep, int lane)
{
	bool open = false;
	u32 id;
	int ret;

	spin_lock(&sess->lock);
	if (sess->state == RDMX_SESS_CLOSING || sess->state == RDMX_SESS_CLOSED) {
		spin_unlock(&sess->lock);
		return -EAGAIN;
	}
	/* A peer cannot make this side hold channels without end. */
	if (sess->nr_chans >= RDMX_SESS_MAX_CHANS ||
	    (test_bit(RDMX_EP_F_QUOTA, &ep->flags) &&
	     rdmx_sess_user_chans(sess, ep->uid) >= RDMX_SESS_USER_CHANS)) {
		spin_unlock(&sess->lock);
		return -EBUSY;
	}
	ret = xa_alloc_cyclic(&sess->chans, &id, ep, XA_LIMIT(1, U32_MAX),
			      &sess->chan_next, GFP_ATOMIC);
	if (ret >= 0) {
		ep->chan = id;
		ep->lane = lane < 0 ? rdmx_sess_pick_lane(sess, &open) : lane;
		sess->lanes[ep->lane].nr_chans++;
		kref_get(&ep->ref);
		sess->nr_chans++;
		ret = 0;
	}
	spin_unlock(&sess->lock);
	if (open)
		rdmx_sess_queue(sess, &sess->lanes_work, 0);
	return ret;
}

/**
 * rdmx_sess_chan_del() - remove a channel from its session
 * @sess: the session
 * @ep: the endpoint, in the table
 *
 * A client session left without channels closes itself once everything
 * it sent has been acknowledged.
 *
 * Context: process context.
 */
void rdmx_sess_chan_del(struct rdmx_sess *sess, struct rdmx_ep *ep)
{
	bool idle = false;
	struct rdmx_ep *old;

	spin_lock(&sess->lock);
	old = xa_cmpxchg(&sess->chans, ep->chan, ep, NULL, GFP_ATOMIC);
	if (old != ep)
		old = NULL;
	if (old) {
		sess->nr_chans--;
		sess->lanes[ep->lane].nr_chans--;
		idle = !sess->nr_chans && !sess->server;
	}
	spin_unlock(&sess->lock);
	if (idle)
		rdmx_sess_queue(sess, &sess->close_work,
				msecs_to_jiffies(RDMX_RECONNECT_MIN_MS));
	if (old)
		kref_put(&old->ref, rdmx_ep_kref_release);
}

/* ---- connections -------------------------------------------------------- */

static void rdmx_conn_teardown_work(struct work_struct *work);

static int rdmx_conn_cm_event(struct rdma_cm_id *cm_id,
			      struct rdma_cm_event *ev);

static const struct rdmx_cm_ops rdmx_conn_cm_ops = {
	.event = rdmx_conn_cm_event,
};

static struct rdmx_conn *rdmx_conn_alloc(struct rdmx_sess *sess,
					 unsigned int lane)
{
	struct rdmx_conn *conn;

	conn = kzalloc(sizeof(*conn), GFP_KERNEL);
	if (!conn)
		return NULL;
	conn->cm_ctx.ops = &rdmx_conn_cm_ops;
	conn->cm_ctx.trace_id = sess->id;
	conn->sess = sess;
	conn->lane = lane;
	kref_get(&sess->ref);
	INIT_LIST_HEAD(&conn->ctrl_free);
	INIT_WORK(&conn->teardown_work, rdmx_conn_teardown_work);
	conn->depth = clamp_t(u32, rdmx_msg_params.queue_depth,
			      RDMX_CREDITS_RESERVED + 1,
			      RDMX_PROTO_MAX_QUEUE_DEPTH);
	return conn;
}

static void rdmx_conn_fail_one(struct rdmx_conn *conn, int err)
{
	if (conn->state == RDMX_CONN_DEAD)
		return;
	conn->state = RDMX_CONN_DEAD;
	conn->err = err;
	queue_work(rdmx_wq, &conn->teardown_work);
}

/* Fail every lane's connection; under the session lock. */
static void rdmx_sess_fail_conns(struct rdmx_sess *sess, int err)
{
	unsigned int i;

	lockdep_assert_held(&sess->lock);
	for (i = 0; i < sess->nr_lanes; i++)
		if (sess->lanes[i].conn)
			rdmx_conn_fail_one(sess->lanes[i].conn, err);
}

/*
 * Fail a connection: mark it dead and queue its teardown, once. Any
 * context, under the session lock. The lanes of an incarnation live and
 * die together: when a lane's current connection fails, every other
 * lane's does too, with the same error, and the session reconnects them
 * all.
 */
static void rdmx_conn_fail(struct rdmx_conn *conn, int err)
{
	struct rdmx_sess *sess = conn->sess;

	lockdep_assert_held(&sess->lock);
	if (conn->state == RDMX_CONN_DEAD)
		return;
	rdmx_conn_fail_one(conn, err);
	if (rdmx_conn_lane(conn)->conn == conn)
		rdmx_sess_fail_conns(sess, err);
}

/**
 * rdmx_sess_conn_fail() - fail a connection (its teardown is queued)
 * @conn: the connection
 * @err: why
 *
 * Context: under the session's lock.
 */
void rdmx_sess_conn_fail(struct rdmx_conn *conn, int err)
{
	rdmx_conn_fail(conn, err);
}

/* Release the IB resources; each step only if it was done. */
static void rdmx_conn_destroy_ib(struct rdmx_conn *conn)
{
	struct ib_device *ibdev = conn->cm_id ? conn->cm_id->device : NULL;
	unsigned int i;

	if (conn->qp) {
		rdma_destroy_qp(conn->cm_id);
		conn->qp = NULL;
	}
	if (conn->rx) {
		for (i = 0; i < conn->depth; i++) {
			struct rdmx_rxbuf *rxb = &conn->rx[i];

			if (rxb->dma)
				ib_dma_unmap_single(ibdev, rxb->dma,
						    sizeof(struct rdmx_msg_hdr) +
						    RDMX_SEG_SIZE,
						    DMA_FROM_DEVICE);
			kfree(rxb->buf);
		}
		kfree(conn->rx);
		conn->rx = NULL;
	}
	for (i = 0; i < RDMX_CTRL_BUFS; i++) {
		kfree(conn->ctrl[i]);
		conn->ctrl[i] = NULL;
	}
	INIT_LIST_HEAD(&conn->ctrl_free);
	if (conn->cq) {
		ib_cq_pool_put(conn->cq, conn->cq_size);
		conn->cq = NULL;
	}
	if (conn->xpd) {
		rdmx_pd_put(conn->xpd);
		conn->xpd = NULL;
		conn->pd = NULL;
	}
	if (conn->rdev) {
		rdmx_device_put(conn->rdev);
		conn->rdev = NULL;
	}
}

/*
 * Undo rdmx_conn_create_ib() for a connection nobody else can see yet (a
 * refused request, in the CM handler). Receives already posted come back
 * flushed first: the DEAD state makes their handler leave the connection
 * alone.
 */
static void rdmx_conn_abort_ib(struct rdmx_conn *conn)
{
	conn->state = RDMX_CONN_DEAD;
	if (conn->qp)
		ib_drain_qp(conn->qp);
	rdmx_conn_destroy_ib(conn);
}

/*
 * Once the device is known: PD, CQ, QP, receive and control buffers. Every
 * size comes from the device's attributes.
 */
static int rdmx_conn_create_ib(struct rdmx_conn *conn)
{
	struct ib_device *ibdev = conn->cm_id->device;
	const struct ib_device_attr *attr = &ibdev->attrs;
	struct ib_qp_cap cap = {};
	struct ib_port_attr pattr;
	size_t rxlen = sizeof(struct rdmx_msg_hdr) + RDMX_SEG_SIZE;
	unsigned int i;
	u32 ctxs;
	int ret;

	/* A session's lanes share its PD, so they share lane 0's device. */
	if (conn->lane) {
		struct rdmx_conn *first;
		bool same;

		spin_lock(&conn->sess->lock);
		first = conn->sess->lanes[0].conn;
		same = first && first->rdev && first->rdev->ibdev == ibdev;
		spin_unlock(&conn->sess->lock);
		if (!same)
			return -EXDEV;
	}
	conn->rdev = rdmx_device_get_ibdev(ibdev);
	if (!conn->rdev)
		return -ENODEV;
	ret = ib_query_port(ibdev, conn->cm_id->port_num, &pattr);
	if (ret)
		goto out;
	if (pattr.max_msg_sz < rxlen) {
		ret = -EOPNOTSUPP;
		goto out;
	}
	conn->depth = min_t(u32, conn->depth, attr->max_qp_wr - 1);
	/*
	 * Sends: credits (capped to the SQ at go-live) plus room for SENDs
	 * whose completions are not reaped yet, and control messages.
	 */
	conn->sq_size = min_t(u32, 2 * conn->depth + RDMX_CTRL_BUFS,
			      attr->max_qp_wr - 1);
	if (conn->depth <= RDMX_CREDITS_RESERVED ||
	    conn->sq_size <= RDMX_CTRL_BUFS + 1) {
		ret = -EOPNOTSUPP;
		goto out;
	}

	/*
	 * One-sided work requests get send queue room of their own:
	 * RDMX_RMA_WR_FACTOR entries (registration, transfer, invalidation)
	 * for each rdma_rw context, as many contexts as the device leaves
	 * room for, up to RDMX_RMA_CTXS.
	 */
	ctxs = min_t(u32, RDMX_RMA_CTXS,
		     (attr->max_qp_wr - 1 - conn->sq_size) / RDMX_RMA_WR_FACTOR);
	conn->rma_wrs = ctxs * RDMX_RMA_WR_FACTOR;

	conn->xpd = rdmx_sess_pd_get(conn->sess, ibdev);
	if (IS_ERR(conn->xpd)) {
		ret = PTR_ERR(conn->xpd);
		conn->xpd = NULL;
		goto out;
	}
	conn->pd = conn->xpd->pd;
	/* +2: one drain completion for each queue. */
	conn->cq_size = conn->depth + conn->sq_size + conn->rma_wrs + 2;
	conn->cq = ib_cq_pool_get(ibdev, conn->cq_size, -1, IB_POLL_WORKQUEUE);
	if (IS_ERR(conn->cq)) {
		ret = PTR_ERR(conn->cq);
		conn->cq = NULL;
		goto out;
	}

	cap.max_send_wr = conn->sq_size + conn->rma_wrs;
	cap.max_recv_wr = conn->depth;
	cap.max_send_sge = min_t(u32, attr->max_send_sge, RDMX_RMA_MAX_SGE);
	cap.max_recv_sge = 1;
	cap.max_rdma_ctxs = ctxs;
	ret = rdmx_rc_qp_create(conn->cm_id, conn->pd, conn->cq, conn, &cap);
	if (ret)
		goto out;
	conn->qp = conn->cm_id->qp;

	conn->rx = kcalloc(conn->depth, sizeof(*conn->rx), GFP_KERNEL);
	if (!conn->rx) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < conn->depth; i++) {
		struct rdmx_rxbuf *rxb = &conn->rx[i];

		rxb->conn = conn;
		rxb->buf = kmalloc(rxlen, GFP_KERNEL);
		if (!rxb->buf) {
			ret = -ENOMEM;
			goto out;
		}
		rxb->dma = ib_dma_map_single(ibdev, rxb->buf, rxlen,
					     DMA_FROM_DEVICE);
		if (ib_dma_mapping_error(ibdev, rxb->dma)) {
			rxb->dma = 0;
			ret = -ENOMEM;
			goto out;
		}
		ret = rdmx_post_recv(conn, rxb);
		if (ret)
			goto out;
	}
	for (i = 0; i < RDMX_CTRL_BUFS; i++) {
		conn->ctrl[i] = rdmx_txbuf_alloc(conn->sess, 0, GFP_KERNEL);
		if (!conn->ctrl[i]) {
			ret = -ENOMEM;
			goto out;
		}
		conn->ctrl[i]->ctrl = true;
		list_add_tail(&conn->ctrl[i]->node, &conn->ctrl_free);
	}
	return 0;

out:
	/* The teardown work undoes what was done, in reverse. */
	return ret;
}

/* Parameters this side offers. */
static void rdmx_conn_params(struct rdmx_conn *conn,
			     struct rdmx_conn_params *p)
{
	memset(p, 0, sizeof(*p));
	p->queue_depth = conn->depth;
	p->qp_index = conn->lane;
	p->nr_qps = conn->sess->max_lanes;
	p->features = RDMX_PROTO_F_OFFERED;
	p->max_msg_size = RDMX_SEG_SIZE;
	uuid_copy(&p->sess_uuid, &conn->sess->uuid);
	p->generation = conn->generation;
}

/*
 * The connection becomes its lane's live one: the lane's credits start
 * afresh and every message it has not had acknowledged is sent again.
 * Lane 0 going live makes the session CONNECTED; the client then opens
 * the other lanes it had. Under the session lock.
 *
 * Who speaks first: the client goes live on ESTABLISHED and at once sends
 * an ACK; the server goes live when that (or anything) arrives, never on
 * its own ESTABLISHED event. So neither side receives on a connection it
 * has not yet made live, whatever order the CM events come in.
 */
static void rdmx_conn_go_live(struct rdmx_conn *conn)
{
	struct rdmx_sess *sess = conn->sess;
	struct rdmx_lane *lane = rdmx_conn_lane(conn);
	bool reconnect;

	lockdep_assert_held(&sess->lock);

	if (conn->state == RDMX_CONN_DEAD || conn->state == RDMX_CONN_LIVE ||
	    lane->conn != conn)
		return;
	if (rdmx_credits_init(&lane->credits,
			      min(conn->peer_depth,
				  conn->sq_size - RDMX_CTRL_BUFS))) {
		rdmx_conn_fail(conn, -EPROTO);
		return;
	}
	conn->state = RDMX_CONN_LIVE;
	lane->rx_owed = 0;
	lane->peer_credits = conn->depth;
	lane->ack_sent = lane->rcv_nxt;
	lane->tx_post = list_first_entry_or_null(&lane->tx_list,
						 struct rdmx_txbuf, node);
	if (conn->lane) {
		if (!sess->server)
			rdmx_send_ctrl(sess, lane, RDMX_MSG_ACK);
		rdmx_tx_kick(lane);
		return;
	}

	sess->features = conn->features;
	memcpy(&sess->local, &conn->cm_id->route.addr.src_addr,
	       sizeof(sess->local));
	reconnect = sess->ever_connected;
	sess->ever_connected = true;
	sess->last_rx = jiffies;
	sess->hb_missed = 0;
	sess->attempts = 0;
	if (reconnect)
		sess->stats.reconnects++;
	rdmx_sess_set_state(sess, RDMX_SESS_CONNECTED);
	if (!sess->server)
		rdmx_send_ctrl(sess, lane, RDMX_MSG_ACK);
	rdmx_tx_kick(lane);
	if (!sess->server && sess->nr_lanes > 1)
		rdmx_sess_queue(sess, &sess->lanes_work, 0);

	if (reconnect)
		pr_info_ratelimited("session %u: reconnected %s %pISpc on %s (generation %llu)\n",
				    sess->id, sess->server ? "from" : "to",
				    &sess->peer, conn->cm_id->device->name,
				    conn->generation);
	else
		pr_info_ratelimited("session %u: connected %s %pISpc on %s\n",
				    sess->id, sess->server ? "from" : "to",
				    &sess->peer, conn->cm_id->device->name);
	rdmx_sess_queue(sess, &sess->hb_work,
			msecs_to_jiffies(rdmx_params.hb_interval_ms));
}

static unsigned long rdmx_backoff(struct rdmx_sess *sess)
{
	return msecs_to_jiffies(rdmx_backoff_ms(sess->attempts,
						rdmx_params.reconnect_max_ms));
}

/* Free every queued message; the session is closed. Under the lock. */
static void rdmx_sess_finish_close(struct rdmx_sess *sess,
				   struct list_head *to_free)
{
	struct rdmx_txbuf *txb, *tmp;
	struct rdmx_ep *ep;
	unsigned long id;
	unsigned int i;

	lockdep_assert_held(&sess->lock);

	for (i = 0; i < sess->nr_lanes; i++) {
		struct rdmx_lane *lane = &sess->lanes[i];

		list_for_each_entry_safe(txb, tmp, &lane->tx_list, node) {
			list_del_init(&txb->node);
			list_add_tail(&txb->node, to_free);
		}
		lane->tx_count = 0;
		lane->tx_post = NULL;
	}
	xa_for_each(&sess->chans, id, ep)
		rdmx_ep_chan_error(ep, sess->error ?: ECONNRESET);
	rdmx_sess_set_state(sess, RDMX_SESS_CLOSED);
}

/* Drop the references of timers that will not run now. */
static void rdmx_sess_cancel_works(struct rdmx_sess *sess)
{
	struct delayed_work *works[] = {
		&sess->hb_work, &sess->ack_work, &sess->reconnect_work,
		&sess->close_work, &sess->lanes_work,
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(works); i++)
		if (cancel_delayed_work(works[i]))
			rdmx_sess_put(sess);
}

/* A closed session leaves the table, which drops its reference. */
static void rdmx_sess_unlink(struct rdmx_sess *sess)
{
	rdmx_sess_cancel_works(sess);
	if (xa_erase(&rdmx_sessions, sess->id) == sess)
		rdmx_sess_put(sess);	/* the table's */
}

/*
 * Wait (a bounded time) for the connection's port to be up before the CM
 * sends a DREQ through it. On soft-RoCE (rdma_rxe, 6.12) a MAD sent while
 * the netdev is down fails in transmission and that moves the GSI QP to
 * the error state for good: the host then answers no connection request
 * until the device is recreated. Waiting costs nothing elsewhere. A device
 * being removed ends the wait: its removal waits for this teardown.
 */
static bool rdmx_conn_device_removing(void *arg)
{
	struct rdmx_conn *conn = arg;

	return conn->rdev && READ_ONCE(conn->rdev->removing);
}

static void rdmx_conn_wait_port(struct rdmx_conn *conn)
{
	char who[24];

	if (!conn->cm_id->device || conn->err == -ENODEV ||
	    READ_ONCE(conn->sess->state) == RDMX_SESS_CLOSING)
		return;
	snprintf(who, sizeof(who), "session %u", conn->sess->id);
	rdmx_port_wait(conn->cm_id->device, conn->cm_id->port_num,
		       jiffies + msecs_to_jiffies(rdmx_params.loss_timeout_ms),
		       rdmx_conn_device_removing, conn, who);
}

static void rdmx_conn_teardown_work(struct work_struct *work)
{
	struct rdmx_conn *conn = container_of(work, struct rdmx_conn,
					      teardown_work);
	struct rdmx_sess *sess = conn->sess;
	struct rdmx_lane *lane = rdmx_conn_lane(conn);
	LIST_HEAD(to_free);
	bool current_conn, last = false, closed = false, quiet;
	int err = conn->err;

	mutex_lock(&sess->mutex);
	spin_lock(&sess->lock);
	current_conn = lane->conn == conn;
	conn->state = RDMX_CONN_DEAD;
	spin_unlock(&sess->lock);
	/* The CM handler may still be building it: let it finish. */
	wait_event(sess->wait, !READ_ONCE(conn->ib_busy));

	if (conn->qp) {
		/*
		 * Every posted SEND and receive completes (flushed) first.
		 * Draining sends nothing on the wire; the CM's DREQ does.
		 */
		ib_drain_qp(conn->qp);
	}
	/* The DREQ, or the REJ of destroying an id mid-handshake. */
	if (conn->cm_id)
		rdmx_conn_wait_port(conn);
	/*
	 * A connection never established has nothing to disconnect;
	 * destroying its id ends what the CM began.
	 */
	if (conn->qp && READ_ONCE(conn->established))
		rdma_disconnect(conn->cm_id);
	rdmx_conn_destroy_ib(conn);
	if (conn->cm_id) {
		rdma_destroy_id(conn->cm_id);
		conn->cm_id = NULL;
	}

	spin_lock(&sess->lock);
	/* An orderly close is no loss. */
	quiet = sess->peer_closed || sess->state == RDMX_SESS_CLOSING ||
		sess->state == RDMX_SESS_CLOSED;
	if (current_conn) {
		lane->conn = NULL;
		lane->tx_post = NULL;
		last = !--sess->nr_conns;
	}
	/* The incarnation ends with the last of its lanes' connections. */
	if (last) {
		switch (sess->state) {
		case RDMX_SESS_CONNECTED:
			sess->down_since = jiffies;
			fallthrough;
		case RDMX_SESS_CONNECTING:
			if (sess->ever_connected && err != -ESTALE) {
				rdmx_sess_set_state(sess, RDMX_SESS_RECONNECTING);
				rdmx_sess_queue(sess, &sess->reconnect_work,
						sess->server ?
						msecs_to_jiffies(rdmx_params.loss_timeout_ms) :
						rdmx_backoff(sess));
			} else if (!sess->server) {
				/* The server forgot the session: it is gone. */
				sess->error = err == -ESTALE ? ECONNRESET : -err;
				rdmx_sess_set_state(sess, RDMX_SESS_CLOSING);
				rdmx_sess_finish_close(sess, &to_free);
				closed = true;
			} else {
				/* Never established: drop it. */
				rdmx_sess_set_state(sess, RDMX_SESS_CLOSING);
				rdmx_sess_finish_close(sess, &to_free);
				closed = true;
			}
			break;
		case RDMX_SESS_CLOSING:
			rdmx_sess_finish_close(sess, &to_free);
			closed = true;
			break;
		default:
			break;
		}
	}
	spin_unlock(&sess->lock);
	mutex_unlock(&sess->mutex);

	if (last && err && !quiet)
		pr_info_ratelimited("session %u: connection %s %pISpc lost (generation %llu): %pe\n",
				    sess->id, sess->server ? "from" : "to",
				    &sess->peer, conn->generation,
				    ERR_PTR(err));
	rdmx_txbuf_free_list(&to_free);
	if (closed)
		rdmx_sess_unlink(sess);
	kfree(conn);
	rdmx_sess_put(sess);
}

/*
 * Client: start one connection attempt for a lane. Lane 0 begins a new
 * incarnation (a higher generation); another lane joins the current one,
 * once lane 0 is live, and is skipped (0) when it has a connection or the
 * incarnation is over. Under the session mutex.
 */
static int rdmx_sess_start_connect(struct rdmx_sess *sess, unsigned int idx)
{
	struct rdmx_lane *lane = &sess->lanes[idx];
	struct rdmx_conn *conn;
	struct rdma_cm_id *cm_id;
	int ret;

	lockdep_assert_held(&sess->mutex);

	conn = rdmx_conn_alloc(sess, idx);
	if (!conn)
		return -ENOMEM;
	cm_id = rdma_create_id(&init_net, rdmx_cm_handler, &conn->cm_ctx,
			       RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(cm_id)) {
		ret = PTR_ERR(cm_id);
		goto free_conn;
	}
	conn->cm_id = cm_id;

	spin_lock(&sess->lock);
	if (idx && (lane->conn || sess->state != RDMX_SESS_CONNECTED ||
		    !sess->lanes[0].conn ||
		    sess->lanes[0].conn->state != RDMX_CONN_LIVE)) {
		spin_unlock(&sess->lock);
		ret = 0;
		goto destroy_id;
	}
	conn->generation = idx ? sess->generation : ++sess->generation;
	conn->started = jiffies;
	conn->state = RDMX_CONN_RESOLVING;
	lane->conn = conn;
	sess->nr_conns++;
	if (!idx)
		rdmx_sess_set_state(sess, RDMX_SESS_CONNECTING);
	spin_unlock(&sess->lock);

	/* An attempt that hangs (a lost CM REQ) is abandoned and retried. */
	if (!idx)
		rdmx_sess_queue(sess, &sess->hb_work,
				msecs_to_jiffies(RDMX_CONNECT_ATTEMPT_MS));
	ret = rdma_resolve_addr(cm_id, NULL, (struct sockaddr *)&sess->peer,
				RDMX_RESOLVE_TIMEOUT_MS);
	if (ret) {
		spin_lock(&sess->lock);
		rdmx_conn_fail(conn, ret);
		spin_unlock(&sess->lock);
	}
	return 0;

destroy_id:
	rdma_destroy_id(cm_id);
free_conn:
	rdmx_sess_put(sess);	/* the connection's */
	kfree(conn);
	return ret;
}

/*
 * Client: connect every lane in use that has no connection, once lane 0
 * is live. A lane that cannot be started fails the incarnation, which
 * reconnects them all.
 */
static void rdmx_lanes_work(struct work_struct *work)
{
	struct rdmx_sess *sess = container_of(to_delayed_work(work),
					      struct rdmx_sess, lanes_work);
	unsigned int i, n;
	int ret;

	mutex_lock(&sess->mutex);
	spin_lock(&sess->lock);
	n = sess->nr_lanes;
	spin_unlock(&sess->lock);
	for (i = 1; i < n; i++) {
		ret = rdmx_sess_start_connect(sess, i);
		if (ret) {
			spin_lock(&sess->lock);
			if (sess->lanes[0].conn)
				rdmx_conn_fail(sess->lanes[0].conn, ret);
			spin_unlock(&sess->lock);
			break;
		}
	}
	mutex_unlock(&sess->mutex);
	rdmx_sess_put(sess);
}

/* Client side CM events. */
/*
 * The client's connection learns its device: build on it. A teardown
 * (an attempt that timed out, say) may start meanwhile: it marks the
 * connection DEAD and waits for @ib_busy to clear before it destroys
 * what is built here (rdma_destroy_id() would wait for this handler only
 * after that).
 */
static int rdmx_cm_addr_resolved(struct rdmx_conn *conn)
{
	struct rdmx_sess *sess = conn->sess;
	bool dead;
	int ret;

	spin_lock(&sess->lock);
	dead = conn->state == RDMX_CONN_DEAD;
	WRITE_ONCE(conn->ib_busy, !dead);
	spin_unlock(&sess->lock);
	if (dead)
		return -ECONNABORTED;
	ret = rdmx_conn_create_ib(conn);
	spin_lock(&sess->lock);
	WRITE_ONCE(conn->ib_busy, false);
	dead = conn->state == RDMX_CONN_DEAD;
	spin_unlock(&sess->lock);
	wake_up_all(&sess->wait);
	if (ret || dead)
		return ret ?: -ECONNABORTED;
	return rdma_resolve_route(conn->cm_id, RDMX_RESOLVE_TIMEOUT_MS);
}

static int rdmx_cm_route_resolved(struct rdmx_conn *conn)
{
	struct rdma_conn_param param = {};
	struct rdmx_conn_params p;
	struct rdmx_conn_req req;

	rdmx_conn_params(conn, &p);
	rdmx_conn_req_pack(&req, &p);
	param.private_data = &req;
	param.private_data_len = sizeof(req);
	param.flow_control = 1;
	param.retry_count = 7;
	param.rnr_retry_count = 7;
	param.responder_resources = min_t(u8, 16,
					  conn->cm_id->device->attrs.max_qp_rd_atom);
	param.initiator_depth = min_t(u8, 16,
				      conn->cm_id->device->attrs.max_qp_init_rd_atom);
	spin_lock(&conn->sess->lock);
	if (conn->state != RDMX_CONN_DEAD)
		conn->state = RDMX_CONN_CONNECTING;
	spin_unlock(&conn->sess->lock);
	return rdma_connect_locked(conn->cm_id, &param);
}

static int rdmx_cm_established(struct rdmx_conn *conn,
			       struct rdma_cm_event *ev)
{
	struct rdmx_conn_params mine, peer;

	/* The server goes live on the client's first message instead. */
	if (conn->sess->server)
		return 0;
	rdmx_conn_params(conn, &mine);
	if (rdmx_conn_rep_parse(ev->param.conn.private_data,
				ev->param.conn.private_data_len, &mine, &peer)) {
		pr_err_ratelimited("session %u: %pISpc accepted with malformed connection data\n",
				   conn->sess->id, &conn->sess->peer);
		return -EPROTO;
	}
	spin_lock(&conn->sess->lock);
	conn->peer_depth = peer.queue_depth;
	conn->features = peer.features & mine.features;
	if (!(conn->features & RDMX_PROTO_F_MSG)) {
		spin_unlock(&conn->sess->lock);
		pr_err_ratelimited("session %u: %pISpc granted no message service\n",
				   conn->sess->id, &conn->sess->peer);
		return -EPROTO;
	}
	if (peer.max_msg_size < RDMX_SEG_SIZE) {
		/* Messages are cut into RDMX_SEG_SIZE SENDs, whatever the QP. */
		spin_unlock(&conn->sess->lock);
		pr_err_ratelimited("session %u: %pISpc takes SENDs of %u bytes at most, rdmx sends %u\n",
				   conn->sess->id, &conn->sess->peer,
				   peer.max_msg_size, RDMX_SEG_SIZE);
		return -EPROTO;
	}
	/* Lane 0 learns the lanes granted: at least those in use. */
	if (!conn->lane) {
		struct rdmx_sess *sess = conn->sess;

		if (peer.nr_qps < sess->nr_lanes) {
			spin_unlock(&sess->lock);
			pr_err_ratelimited("session %u: %pISpc granted %u QPs, the session has %u\n",
					   sess->id, &sess->peer, peer.nr_qps,
					   sess->nr_lanes);
			return -EPROTO;
		}
		sess->max_lanes = peer.nr_qps;
	}
	rdmx_conn_go_live(conn);
	spin_unlock(&conn->sess->lock);
	return 0;
}

/*
 * An event on a connection's id: the cm_ops of every connection of a
 * session. Never asks rdma_cm to destroy the id: the teardown work does.
 */
static int rdmx_conn_cm_event(struct rdma_cm_id *cm_id,
			      struct rdma_cm_event *ev)
{
	struct rdmx_conn *conn = container_of(cm_id->context, struct rdmx_conn,
					      cm_ctx);
	enum rdmx_rej_reason reason;
	int err = 0;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		err = rdmx_cm_addr_resolved(conn);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		err = rdmx_cm_route_resolved(conn);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		WRITE_ONCE(conn->established, true);
		err = rdmx_cm_established(conn, ev);
		break;
	case RDMA_CM_EVENT_REJECTED:
		err = rdmx_cm_event_errno(cm_id, ev, &reason);
		pr_info_ratelimited("session %u: %pISpc rejected the connection: %s (%s)\n",
				    conn->sess->id, &conn->sess->peer,
				    rdmx_rej_reason_str(reason),
				    rdma_reject_msg(cm_id, ev->status));
		break;
	default:
		/*
		 * Failures, disconnects and the device's removal (whose
		 * ib_client remove callback waits for our teardown).
		 */
		err = rdmx_cm_event_errno(cm_id, ev, &reason);
		break;
	}
	if (err) {
		spin_lock(&conn->sess->lock);
		rdmx_conn_fail(conn, err);
		spin_unlock(&conn->sess->lock);
	}
	return 0;
}

/* ---- server side -------------------------------------------------------- */

/* Find a server session by its uuid, with a reference. */
static struct rdmx_sess *rdmx_sess_find_uuid(const uuid_t *uuid)
{
	struct rdmx_sess *sess, *found = NULL;
	unsigned long id;

	xa_lock(&rdmx_sessions);
	xa_for_each(&rdmx_sessions, id, sess) {
		if (sess->server && uuid_equal(&sess->uuid, uuid)) {
			kref_get(&sess->ref);
			found = sess;
			break;
		}
	}
	xa_unlock(&rdmx_sessions);
	return found;
}

/*
 * Whether a request may take its lane now; under the session lock. Lane
 * 0 begins an incarnation: no connection of the last one may be left. A
 * further lane joins the incarnation lane 0 began.
 */
static enum rdmx_rej_reason
rdmx_sess_lane_check(struct rdmx_sess *sess, const struct rdmx_conn_params *req)
{
	lockdep_assert_held(&sess->lock);
	if (sess->state == RDMX_SESS_CLOSING || sess->state == RDMX_SESS_CLOSED)
		return RDMX_REJ_STALE;
	if (!req->qp_index)
		return sess->nr_conns ? RDMX_REJ_BUSY : RDMX_REJ_UNKNOWN;
	if (req->generation != sess->generation)
		return RDMX_REJ_STALE;
	if (req->qp_index >= sess->max_lanes)
		return RDMX_REJ_PARAMS;
	if (!sess->lanes[0].conn || sess->lanes[req->qp_index].conn)
		return RDMX_REJ_BUSY;
	return RDMX_REJ_UNKNOWN;
}

/*
 * Whether one more server session from @peer stays within
 * rdmx_msg_params.max_sessions and .max_sessions_per_host. Under
 * rdmx_sess_admit_mutex, so that what it counts is what is admitted.
 */
static bool rdmx_sess_within_limits(const struct sockaddr *peer)
{
	unsigned int all = 0, host = 0;
	struct rdmx_sess *sess;
	unsigned long id;

	lockdep_assert_held(&rdmx_sess_admit_mutex);
	xa_lock(&rdmx_sessions);
	xa_for_each(&rdmx_sessions, id, sess) {
		if (!sess->server)
			continue;
		all++;
		host += rdmx_addr_same_host((struct sockaddr *)&sess->peer,
					    peer);
	}
	xa_unlock(&rdmx_sessions);
	return all < READ_ONCE(rdmx_msg_params.max_sessions) &&
	       host < READ_ONCE(rdmx_msg_params.max_sessions_per_host);
}

/*
 * Find the session a request continues, with a reference; or, for lane 0
 * of generation 1, make a new one (*@new_sess). RDMX_REJ_UNKNOWN when
 * the request may go on.
 */
static enum rdmx_rej_reason
rdmx_sess_for_request(struct rdma_cm_id *cm_id,
		      const struct rdmx_conn_params *req,
		      struct rdmx_sess **sessp, bool *new_sess)
{
	enum rdmx_rej_reason reason = RDMX_REJ_UNKNOWN;
	struct rdmx_sess *sess;

	sess = rdmx_sess_find_uuid(&req->sess_uuid);
	if (sess) {
		spin_lock(&sess->lock);
		if (sess->state == RDMX_SESS_CLOSING ||
		    sess->state == RDMX_SESS_CLOSED ||
		    (!req->qp_index && req->generation <= sess->generation)) {
			reason = RDMX_REJ_STALE;
		} else if (!rdmx_addr_same_host((struct sockaddr *)&sess->peer,
					       (struct sockaddr *)&cm_id->route.addr.dst_addr)) {
			/* A session continues only from the host it began on. */
			reason = RDMX_REJ_NOT_ALLOWED;
		} else if (!req->qp_index && req->nr_qps < sess->nr_lanes) {
			/* Its channels are bound to the lanes it has. */
			reason = RDMX_REJ_PARAMS;
		} else {
			reason = rdmx_sess_lane_check(sess, req);
			/* A new incarnation: end what is left of the old. */
			if (reason == RDMX_REJ_BUSY && !req->qp_index)
				rdmx_sess_fail_conns(sess, -ECONNRESET);
		}
		spin_unlock(&sess->lock);
		if (reason != RDMX_REJ_UNKNOWN)
			rdmx_sess_put(sess);
		else
			*sessp = sess;
		return reason;
	}
	if (req->generation != 1 || req->qp_index)
		return RDMX_REJ_STALE;
	/* Admitted under the limits, and published before the next one. */
	mutex_lock(&rdmx_sess_admit_mutex);
	if (!rdmx_sess_within_limits((struct sockaddr *)&cm_id->route.addr.dst_addr)) {
		mutex_unlock(&rdmx_sess_admit_mutex);
		atomic64_inc(&rdmx_sessions_refused);
		pr_warn_ratelimited("refused a session from %pISpc: over max_sessions or max_sessions_per_host\n",
				    &cm_id->route.addr.dst_addr);
		return RDMX_REJ_BUSY;
	}
	sess = rdmx_sess_alloc(true);
	if (!sess) {
		mutex_unlock(&rdmx_sess_admit_mutex);
		return RDMX_REJ_BUSY;
	}
	*new_sess = true;
	uuid_copy(&sess->uuid, &req->sess_uuid);
	memcpy(&sess->peer, &cm_id->route.addr.dst_addr, sizeof(sess->peer));
	memcpy(&sess->local, &cm_id->route.addr.src_addr, sizeof(sess->local));
	rdmx_sess_publish(sess);
	mutex_unlock(&rdmx_sess_admit_mutex);
	if (rdmx_sysfs_sess_add(sess))
		pr_warn_ratelimited("session %u: no sysfs directory\n",
				    sess->id);
	*sessp = sess;
	return RDMX_REJ_UNKNOWN;
}

/*
 * The message service's connection request (rdmx_msg_cm_service): @req
 * was checked by rdmx_conn_req_parse().
 *
 * Checks the request, finds the session it continues (by uuid) or makes a
 * new one, builds the QP and accepts. Lane 0 begins an incarnation of the
 * session: a request for it while connections of the last one are left
 * ends them and is refused with RDMX_REJ_BUSY, and the client retries once
 * they are gone. Another lane joins the incarnation lane 0 began.
 *
 * Context: the rdma_cm event handler (its handler mutex held).
 * Return: 0 when the id is kept; non-zero to have rdma_cm destroy it.
 */
static int rdmx_msg_connect(struct rdma_cm_id *cm_id, struct rdma_cm_event *ev,
			    const struct rdmx_conn_params *req)
{
	enum rdmx_rej_reason reason = RDMX_REJ_UNKNOWN;
	struct rdma_conn_param param = {};
	struct rdmx_conn_params rep_p;
	struct rdmx_sess *sess = NULL;
	struct rdmx_conn_rep rep;
	struct rdmx_conn *conn;
	bool new_sess = false;
	int ret;

	/* Messages are cut into RDMX_SEG_SIZE SENDs, whatever the peer. */
	if (req->max_msg_size < RDMX_SEG_SIZE) {
		reason = RDMX_REJ_PARAMS;
		goto reject;
	}
	/* Lanes are bounded here too: the peer's offer is only an offer. */
	if (req->qp_index >= RDMX_SESS_MAX_LANES) {
		reason = RDMX_REJ_PARAMS;
		goto reject;
	}

	reason = rdmx_sess_for_request(cm_id, req, &sess, &new_sess);
	if (reason != RDMX_REJ_UNKNOWN)
		goto reject;

	conn = rdmx_conn_alloc(sess, req->qp_index);
	if (!conn) {
		reason = RDMX_REJ_BUSY;
		goto reject_sess;
	}
	conn->cm_id = cm_id;
	cm_id->context = &conn->cm_ctx;
	conn->generation = req->generation;
	conn->depth = min_t(u32, conn->depth, req->queue_depth);
	ret = rdmx_conn_create_ib(conn);
	if (ret) {
		reason = ret == -EXDEV ? RDMX_REJ_PARAMS : RDMX_REJ_BUSY;
		goto reject_conn;
	}
	conn->peer_depth = req->queue_depth;
	conn->features = req->features & RDMX_PROTO_F_OFFERED;

	spin_lock(&sess->lock);
	reason = rdmx_sess_lane_check(sess, req);
	if (reason != RDMX_REJ_UNKNOWN) {
		spin_unlock(&sess->lock);
		goto reject_conn;
	}
	if (!req->qp_index) {
		sess->generation = req->generation;
		/* A session keeps its lanes: it grants no fewer, nor more. */
		sess->max_lanes = min_t(u32, req->nr_qps, sess->max_lanes);
		rdmx_sess_set_state(sess, RDMX_SESS_CONNECTING);
	}
	sess->lanes[req->qp_index].conn = conn;
	sess->nr_conns++;
	sess->nr_lanes = max(sess->nr_lanes, req->qp_index + 1U);
	conn->state = RDMX_CONN_CONNECTING;
	conn->started = jiffies;
	spin_unlock(&sess->lock);
	/*
	 * A client that never speaks on what it connected holds a QP and
	 * its rings: the attempt times out here as on the client (for
	 * another lane, rdmx_lanes_check_attempts() from the heartbeat).
	 */
	if (!req->qp_index)
		rdmx_sess_queue(sess, &sess->hb_work,
				msecs_to_jiffies(RDMX_CONNECT_ATTEMPT_MS));

	rdmx_conn_params(conn, &rep_p);
	rep_p.features = conn->features;
	rdmx_conn_rep_pack(&rep, &rep_p);
	param.private_data = &rep;
	param.private_data_len = sizeof(rep);
	param.flow_control = 1;
	param.rnr_retry_count = 7;
	param.responder_resources = min_t(u8, ev->param.conn.responder_resources,
					  cm_id->device->attrs.max_qp_rd_atom);
	param.initiator_depth = min_t(u8, ev->param.conn.initiator_depth,
				      cm_id->device->attrs.max_qp_init_rd_atom);
	ret = rdma_accept(cm_id, &param);
	if (ret) {
		spin_lock(&sess->lock);
		rdmx_conn_fail(conn, ret);
		spin_unlock(&sess->lock);
	}
	rdmx_sess_put(sess);
	return 0;

reject_conn:
	rdmx_conn_abort_ib(conn);
	cm_id->context = NULL;
	kfree(conn);
	rdmx_sess_put(sess);	/* the connection's */
reject_sess:
	if (new_sess) {
		spin_lock(&sess->lock);
		rdmx_sess_set_state(sess, RDMX_SESS_CLOSING);
		rdmx_sess_set_state(sess, RDMX_SESS_CLOSED);
		spin_unlock(&sess->lock);
		rdmx_sess_unlink(sess);
	}
	rdmx_sess_put(sess);
reject:
	pr_info_ratelimited("refused a connection from %pISpc: %s\n",
			    &cm_id->route.addr.dst_addr,
			    rdmx_rej_reason_str(reason));
	rdmx_cm_reject(cm_id, reason);
	return -EINVAL;
}

/* Sessions run on the message service: no session without it. */
static bool rdmx_msg_takes(const struct rdmx_conn_params *req)
{
	return req->features != RDMX_PROTO_F_BLOCK &&
	       (req->features & RDMX_PROTO_F_MSG);
}

static struct rdmx_cm_service rdmx_msg_cm_service = {
	.name = "session",
	.takes = rdmx_msg_takes,
	.connect = rdmx_msg_connect,
};

/* ---- timers ------------------------------------------------------------- */

/* A lane's connection attempt that hangs fails the incarnation. */
static void rdmx_lanes_check_attempts(struct rdmx_sess *sess)
{
	unsigned long limit = msecs_to_jiffies(RDMX_CONNECT_ATTEMPT_MS);
	struct rdmx_conn *conn;
	unsigned int i;

	lockdep_assert_held(&sess->lock);
	for (i = 1; i < sess->nr_lanes; i++) {
		conn = sess->lanes[i].conn;
		if (!conn || conn->state == RDMX_CONN_LIVE ||
		    time_before(jiffies, conn->started + limit))
			continue;
		pr_info_ratelimited("session %u: %s %pISpc for QP %u in %u ms\n",
				    sess->id, sess->server ?
				    "nothing received from" : "no answer from",
				    &sess->peer, i, RDMX_CONNECT_ATTEMPT_MS);
		rdmx_conn_fail(conn, -ETIMEDOUT);
	}
}

static void rdmx_hb_work(struct work_struct *work)
{
	struct rdmx_sess *sess = container_of(to_delayed_work(work),
					      struct rdmx_sess, hb_work);
	unsigned long interval = msecs_to_jiffies(rdmx_params.hb_interval_ms);
	struct rdmx_conn *conn;
	bool again = false;

	spin_lock(&sess->lock);
	conn = sess->lanes[0].conn;
	if (sess->state == RDMX_SESS_CONNECTED && conn &&
	    conn->state == RDMX_CONN_LIVE) {
		again = true;
		rdmx_lanes_check_attempts(sess);
		if (time_after(jiffies, sess->last_rx + interval)) {
			sess->hb_missed++;
			if (sess->hb_missed > rdmx_params.hb_miss_max) {
				sess->stats.hb_misses++;
				pr_info_ratelimited("session %u: %pISpc silent for %u heartbeats\n",
						    sess->id, &sess->peer,
						    sess->hb_missed - 1);
				rdmx_conn_fail(conn, -ETIMEDOUT);
				again = false;
			} else {
				if (sess->hb_missed > 1)
					sess->stats.hb_misses++;
				rdmx_send_ctrl(sess, &sess->lanes[0],
					       RDMX_MSG_HEARTBEAT);
			}
		}
	} else if (sess->state == RDMX_SESS_CONNECTING && conn &&
		   conn->state != RDMX_CONN_LIVE) {
		unsigned long limit = conn->started +
				      msecs_to_jiffies(RDMX_CONNECT_ATTEMPT_MS);

		if (time_after_eq(jiffies, limit)) {
			/* The server's: a half-open connection. */
			pr_info_ratelimited("session %u: %s %pISpc in %u ms\n",
					    sess->id, sess->server ?
					    "nothing received from" :
					    "no answer from", &sess->peer,
					    RDMX_CONNECT_ATTEMPT_MS);
			rdmx_conn_fail(conn, -ETIMEDOUT);
		} else {
			interval = limit - jiffies;
			again = true;
		}
	}
	spin_unlock(&sess->lock);
	if (again)
		rdmx_sess_queue(sess, &sess->hb_work, interval);
	rdmx_sess_put(sess);
}

static void rdmx_ack_work(struct work_struct *work)
{
	struct rdmx_sess *sess = container_of(to_delayed_work(work),
					      struct rdmx_sess, ack_work);
	unsigned int i;

	spin_lock(&sess->lock);
	for (i = 0; i < sess->nr_lanes; i++)
		if (rdmx_lane_ack_due(sess, &sess->lanes[i]))
			rdmx_send_ctrl(sess, &sess->lanes[i], RDMX_MSG_ACK);
	spin_unlock(&sess->lock);
	rdmx_sess_put(sess);
}

/* Client: the next attempt. Server: the loss timeout. */
static void rdmx_reconnect_work(struct work_struct *work)
{
	struct rdmx_sess *sess = container_of(to_delayed_work(work),
					      struct rdmx_sess, reconnect_work);
	unsigned long deadline;
	LIST_HEAD(to_free);
	bool closed = false;
	int ret;

	mutex_lock(&sess->mutex);
	spin_lock(&sess->lock);
	if (sess->state != RDMX_SESS_RECONNECTING)
		goto unlock;
	deadline = sess->down_since + msecs_to_jiffies(rdmx_params.loss_timeout_ms);
	if (time_after_eq(jiffies, deadline)) {
		sess->error = sess->server ? ECONNRESET : ETIMEDOUT;
		pr_info_ratelimited("session %u: %pISpc lost for good after %u ms\n",
				    sess->id, &sess->peer,
				    rdmx_params.loss_timeout_ms);
		rdmx_sess_set_state(sess, RDMX_SESS_CLOSING);
		rdmx_sess_finish_close(sess, &to_free);
		closed = true;
		goto unlock;
	}
	if (sess->server) {
		rdmx_sess_queue(sess, &sess->reconnect_work, deadline - jiffies);
		goto unlock;
	}
	sess->attempts++;
	spin_unlock(&sess->lock);
	ret = rdmx_sess_start_connect(sess, 0);
	if (ret) {
		spin_lock(&sess->lock);
		rdmx_sess_queue(sess, &sess->reconnect_work, rdmx_backoff(sess));
		goto unlock;
	}
	mutex_unlock(&sess->mutex);
	goto out;
unlock:
	spin_unlock(&sess->lock);
	mutex_unlock(&sess->mutex);
out:
	rdmx_txbuf_free_list(&to_free);
	if (closed)
		rdmx_sess_unlink(sess);
	rdmx_sess_put(sess);
}

/* Close with @err (positive errno, 0 for an orderly close). */
static void rdmx_sess_close(struct rdmx_sess *sess, int err)
{
	struct rdmx_conn *conn;
	LIST_HEAD(to_free);
	bool closed = false;

	mutex_lock(&sess->mutex);
	spin_lock(&sess->lock);
	if (sess->state == RDMX_SESS_CLOSING || sess->state == RDMX_SESS_CLOSED)
		goto unlock;
	if (!sess->error)
		sess->error = err;
	if (sess->state == RDMX_SESS_IDLE) {
		rdmx_sess_set_state(sess, RDMX_SESS_CLOSING);
		rdmx_sess_finish_close(sess, &to_free);
		closed = true;
		goto unlock;
	}
	rdmx_sess_set_state(sess, RDMX_SESS_CLOSING);
	conn = sess->lanes[0].conn;
	if (conn) {
		/* Orderly: the CLOSE's completion ends the connections. */
		if (err || conn->state != RDMX_CONN_LIVE ||
		    !rdmx_send_ctrl(sess, &sess->lanes[0], RDMX_MSG_CLOSE))
			rdmx_conn_fail(conn, -ECONNABORTED);
	} else if (sess->nr_conns) {
		rdmx_sess_fail_conns(sess, -ECONNABORTED);
	} else {
		rdmx_sess_finish_close(sess, &to_free);
		closed = true;
	}
unlock:
	spin_unlock(&sess->lock);
	mutex_unlock(&sess->mutex);
	rdmx_txbuf_free_list(&to_free);
	if (closed)
		rdmx_sess_unlink(sess);
}

static void rdmx_close_work(struct work_struct *work)
{
	struct rdmx_sess *sess = container_of(to_delayed_work(work),
					      struct rdmx_sess, close_work);
	bool close = false;

	spin_lock(&sess->lock);
	if (sess->peer_closed && sess->state != RDMX_SESS_CLOSING &&
	    sess->state != RDMX_SESS_CLOSED) {
		close = true;
	} else if (!sess->nr_chans && sess->state != RDMX_SESS_CLOSING &&
		   sess->state != RDMX_SESS_CLOSED) {
		if (!rdmx_sess_unacked(sess))
			close = true;
		else
			/* Linger until the peer has everything. */
			rdmx_sess_queue(sess, &sess->close_work,
					msecs_to_jiffies(RDMX_RECONNECT_MIN_MS));
	}
	spin_unlock(&sess->lock);
	if (close)
		rdmx_sess_close(sess, 0);
	rdmx_sess_put(sess);
}

/* ---- client entry points ------------------------------------------------ */

static bool rdmx_sess_connect_done(struct rdmx_sess *sess)
{
	enum rdmx_sess_state state = READ_ONCE(sess->state);

	return state != RDMX_SESS_CONNECTING && state != RDMX_SESS_IDLE;
}

/**
 * rdmx_sess_connect_get() - find or open a client session to a peer
 * @dst: the peer's address and port
 * @timeout_ms: how long the first connection may take
 *
 * Channels to the same address and port share a session. A new session's
 * first connection must succeed within @timeout_ms: it is not retried.
 *
 * Context: process context; sleeps.
 * Return: the session with a reference, or an ERR_PTR: -ECONNREFUSED,
 * -ETIMEDOUT, -EHOSTUNREACH, -ENODEV, -ENOMEM, -EINTR.
 */
struct rdmx_sess *rdmx_sess_connect_get(const struct sockaddr *dst,
					unsigned int timeout_ms)
{
	struct rdmx_sess *sess, *found = NULL;
	unsigned long id;
	long left;
	int ret;

	mutex_lock(&rdmx_sess_mutex);
	xa_lock(&rdmx_sessions);
	xa_for_each(&rdmx_sessions, id, sess) {
		if (sess->server ||
		    !rdmx_addr_equal((struct sockaddr *)&sess->peer, dst))
			continue;
		spin_lock(&sess->lock);
		if (sess->state != RDMX_SESS_CLOSING &&
		    sess->state != RDMX_SESS_CLOSED) {
			kref_get(&sess->ref);
			found = sess;
		}
		spin_unlock(&sess->lock);
		if (found)
			break;
	}
	xa_unlock(&rdmx_sessions);

	sess = found;
	if (!sess) {
		sess = rdmx_sess_alloc(false);
		if (!sess) {
			mutex_unlock(&rdmx_sess_mutex);
			return ERR_PTR(-ENOMEM);
		}
		uuid_gen(&sess->uuid);
		rdmx_addr_copy(&sess->peer, dst);
		rdmx_sess_publish(sess);
		if (rdmx_sysfs_sess_add(sess))
			pr_warn_ratelimited("session %u: no sysfs directory\n",
					    sess->id);
		mutex_lock(&sess->mutex);
		ret = rdmx_sess_start_connect(sess, 0);
		mutex_unlock(&sess->mutex);
		if (ret) {
			mutex_unlock(&rdmx_sess_mutex);
			rdmx_sess_close(sess, -ret);
			rdmx_sess_put(sess);
			return ERR_PTR(ret);
		}
	}
	mutex_unlock(&rdmx_sess_mutex);

	left = wait_event_interruptible_timeout(sess->wait,
						rdmx_sess_connect_done(sess),
						msecs_to_jiffies(timeout_ms));
	spin_lock(&sess->lock);
	if (sess->state == RDMX_SESS_CONNECTED ||
	    sess->state == RDMX_SESS_RECONNECTING) {
		spin_unlock(&sess->lock);
		return sess;
	}
	if (sess->state == RDMX_SESS_CLOSED || sess->state == RDMX_SESS_CLOSING)
		ret = rdmx_sess_closed_err(sess);
	else if (left < 0)
		ret = -EINTR;
	else
		ret = -ETIMEDOUT;
	spin_unlock(&sess->lock);
	if (!found)
		rdmx_sess_close(sess, -ret);
	rdmx_sess_put(sess);
	return ERR_PTR(ret);
}

/**
 * rdmx_sess_close_id() - close a session by its id (RDMX_IOC_SESS_CLOSE)
 * @id: the session's id
 *
 * Context: process context.
 * Return: 0, or -ENOENT when there is no such session.
 */
int rdmx_sess_close_id(u32 id)
{
	struct rdmx_sess *sess;

	xa_lock(&rdmx_sessions);
	sess = xa_load(&rdmx_sessions, id);
	if (sess)
		kref_get(&sess->ref);
	xa_unlock(&rdmx_sessions);
	if (!sess)
		return -ENOENT;
	pr_info("session %u: closed by an administrator\n", id);
	rdmx_sess_close(sess, ECONNRESET);
	rdmx_sess_put(sess);
	return 0;
}

/*
 * An RDMA device is going away (RDMX_DEVICE_REMOVING, from the ib_client's
 * remove callback): fail every connection on it; their teardown drops the
 * device references the callback then waits for. Sessions reconnect
 * (client) or wait for their peer (server) on whatever device remains.
 */
static int rdmx_sess_device_event(struct notifier_block *nb,
				  unsigned long event, void *data)
{
	struct ib_device *ibdev = data;
	struct rdmx_sess *sess;
	unsigned long id;

	if (event != RDMX_DEVICE_REMOVING)
		return NOTIFY_DONE;

	xa_lock(&rdmx_sessions);
	xa_for_each(&rdmx_sessions, id, sess) {
		struct rdmx_conn *conn;
		unsigned int i;

		spin_lock(&sess->lock);
		for (i = 0; i < sess->nr_lanes; i++) {
			conn = sess->lanes[i].conn;
			if (conn && conn->rdev && conn->rdev->ibdev == ibdev)
				rdmx_conn_fail(conn, -ENODEV);
		}
		spin_unlock(&sess->lock);
		rdmx_sess_pd_device_gone(sess, ibdev);
	}
	xa_unlock(&rdmx_sessions);
	return NOTIFY_OK;
}

static struct notifier_block rdmx_sess_device_nb = {
	.notifier_call = rdmx_sess_device_event,
};

/**
 * rdmx_sess_init() - set up the session layer
 *
 * Registers the message service's connection requests with the core
 * (kmod/cm.h), and its sessions for devices going away.
 *
 * Context: module init.
 * Return: 0 or -ENOMEM.
 */
int rdmx_sess_init(void)
{
	rdmx_imm_wq = alloc_workqueue("rdmx_imm", WQ_MEM_RECLAIM | WQ_UNBOUND,
				      0);
	if (!rdmx_imm_wq)
		return -ENOMEM;
	rdmx_device_notifier_register(&rdmx_sess_device_nb);
	rdmx_cm_service_register(&rdmx_msg_cm_service);
	return 0;
}

/**
 * rdmx_sess_exit() - close every session and wait until they are gone
 *
 * Endpoints hold a reference on the module, so only sessions without
 * channels (and server sessions whose channels were never accepted) are
 * left here.
 *
 * Context: module exit.
 */
void rdmx_sess_exit(void)
{
	struct rdmx_sess *sess;
	unsigned long id;

	rdmx_cm_service_unregister(&rdmx_msg_cm_service);
	for (;;) {
		id = 0;
		xa_lock(&rdmx_sessions);
		sess = xa_find(&rdmx_sessions, &id, ULONG_MAX, XA_PRESENT);
		if (sess)
			kref_get(&sess->ref);
		xa_unlock(&rdmx_sessions);
		if (!sess)
			break;
		rdmx_sess_close(sess, ECONNRESET);
		flush_workqueue(rdmx_wq);
		/* A session that would not close would loop forever here. */
		spin_lock(&sess->lock);
		WARN_ON(sess->state != RDMX_SESS_CLOSED);
		spin_unlock(&sess->lock);
		rdmx_sess_unlink(sess);
		rdmx_sess_put(sess);
	}
	/* Until the last session went, a device's removal still failed it. */
	rdmx_device_notifier_unregister(&rdmx_sess_device_nb);
	destroy_workqueue(rdmx_imm_wq);
	flush_workqueue(rdmx_wq);
}
