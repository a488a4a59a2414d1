// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx sessions, transmit side: transmit buffers, posting SENDs within the
 * peer's credits, the queue of sequenced messages kept for retransmission,
 * acknowledgments and their completions. See sess.h for the locking.
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

/**
 * rdmx_txbuf_alloc() - a transmit buffer, header room included
 * @sess: the session it is for
 * @len: payload bytes
 * @gfp: allocation flags
 *
 * Context: as @gfp allows.
 * Return: the buffer, or NULL when out of memory.
 */
struct rdmx_txbuf *rdmx_txbuf_alloc(struct rdmx_sess *sess, size_t len,
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
	rdmx_conn_sq_posting(conn);
	conn->sq_posted++;
	trace_rdmx_msg_send(sess->id, hdr->type, le32_to_cpu(hdr->seq),
			    lane->rcv_nxt, grant,
			    txb->len - sizeof(struct rdmx_msg_hdr));
	ret = ib_post_send(conn->qp, &wr, NULL);
	if (unlikely(ret)) {
		/* siw refuses once its QP left RTS: its completions say why. */
		if (ret != -ENOTCONN)
			pr_err_ratelimited("session %u: posting a SEND failed: %pe (%u of %u posted)\n",
					   sess->id, ERR_PTR(ret),
					   conn->sq_posted - 1, conn->sq_size);
		txb->conn = NULL;
		conn->sq_posted--;
		ib_dma_unmap_single(ibdev, txb->dma, txb->len, DMA_TO_DEVICE);
		lane->rx_owed += grant;
		lane->peer_credits -= grant;
		return ret;
	}
	return 0;
}

/**
 * rdmx_send_ctrl() - send a control message on a lane's connection
 * @sess: the session
 * @lane: the lane
 * @type: the message type (ACK, HEARTBEAT, HEARTBEAT_ACK, CLOSE)
 *
 * Sent when a control buffer, a send queue slot and a credit allow.
 *
 * Context: under @sess->lock.
 * Return: false when it could not: the caller's condition stays and the
 * next completion or timer retries.
 */
bool rdmx_send_ctrl(struct rdmx_sess *sess, struct rdmx_lane *lane, u8 type)
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

/**
 * rdmx_tx_kick() - post a lane's queued sequenced messages
 * @lane: the lane
 *
 * Posts while the peer's credits and send queue slots last.
 *
 * Context: under the session's lock.
 */
void rdmx_tx_kick(struct rdmx_lane *lane)
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

/**
 * rdmx_tx_ack() - drop what the peer acknowledged
 * @sess: the session
 * @lane: the lane the acknowledgment came on
 * @ack: the peer's cumulative acknowledgment
 * @to_free: where acknowledged buffers go, to be freed after the lock;
 *	those still posted go at their completion
 *
 * Context: under @sess->lock.
 */
void rdmx_tx_ack(struct rdmx_sess *sess, struct rdmx_lane *lane, u32 ack,
		 struct list_head *to_free)
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

/**
 * rdmx_txbuf_free_list() - free a list of transmit buffers
 * @list: the buffers, on their node
 *
 * Context: any context.
 */
void rdmx_txbuf_free_list(struct list_head *list)
{
	struct rdmx_txbuf *txb, *tmp;

	list_for_each_entry_safe(txb, tmp, list, node)
		kfree(txb);
}

/**
 * rdmx_lane_ack_due() - whether a lane owes the peer an acknowledgment
 *	or credits
 * @sess: the session
 * @lane: the lane
 *
 * Context: under @sess->lock.
 * Return: true when it does.
 */
bool rdmx_lane_ack_due(struct rdmx_sess *sess, struct rdmx_lane *lane)
{
	return lane->rcv_nxt != lane->ack_sent ||
	       (lane->rx_owed && !sess->rx_held);
}

/**
 * rdmx_ack_maybe() - acknowledge and grant credits on a lane
 * @sess: the session
 * @lane: the lane
 * @now: send now when it matters; else the acknowledgment timer does, soon
 *
 * Context: under @sess->lock.
 */
void rdmx_ack_maybe(struct rdmx_sess *sess, struct rdmx_lane *lane, bool now)
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

/**
 * rdmx_wc_failed() - say that a completion failed
 * @sess: the session
 * @op: what the work request was, for the log line and the tracepoint
 * @wc: the completion
 *
 * Flushes of a dying QP are not reported.
 *
 * Context: completion context.
 */
void rdmx_wc_failed(struct rdmx_sess *sess, const char *op,
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

	spin_lock_bh(&sess->lock);
	conn->sq_posted--;
	conn->sq_stamp = jiffies;
	txb->conn = NULL;
	if (txb->ctrl) {
		list_add(&txb->node, &conn->ctrl_free);
		if (txb->buf[0] == RDMX_MSG_CLOSE)
			rdmx_conn_fail(conn, -ECONNABORTED);
	} else if (txb->acked) {
		free = true;
	}
	if (unlikely(wc->status == IB_WC_RNR_RETRY_EXC_ERR)) {
		/* A conforming peer never refuses a SEND (RDMX_RNR_RETRY). */
		sess->stats.sq_stalls++;
		pr_info_ratelimited("session %u: %pISpc took none of the SENDs on lane %u: receiver not ready %u times\n",
				    sess->id, &sess->peer, conn->lane,
				    RDMX_RNR_RETRY + 1);
		rdmx_conn_fail(conn, -EIO);
	} else if (unlikely(wc->status != IB_WC_SUCCESS)) {
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
	spin_unlock_bh(&sess->lock);
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

	spin_lock_bh(&sess->lock);
	ret = sess->lanes[lane].tx_count < RDMX_TX_WINDOW ||
	      sess->state == RDMX_SESS_CLOSING || sess->state == RDMX_SESS_CLOSED;
	spin_unlock_bh(&sess->lock);
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

/**
 * rdmx_sess_closed_err() - the errno a closed session's callers get
 * @sess: the session
 *
 * Context: under @sess->lock.
 * Return: the session's error, negative, or -ECONNRESET.
 */
int rdmx_sess_closed_err(struct rdmx_sess *sess)
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
		spin_lock_bh(&sess->lock);
		if (sess->state == RDMX_SESS_CLOSING ||
		    sess->state == RDMX_SESS_CLOSED) {
			ret = rdmx_sess_closed_err(sess);
			spin_unlock_bh(&sess->lock);
			return ret;
		}
		if (force && lane->tx_count >= RDMX_TX_FORCE_MAX) {
			spin_unlock_bh(&sess->lock);
			pr_warn_ratelimited("session %u: %pISpc acknowledges nothing: %u messages queued, no more\n",
					    sess->id, &sess->peer,
					    RDMX_TX_FORCE_MAX);
			return -ENOBUFS;
		}
		if (force || lane->tx_count < RDMX_TX_WINDOW)
			break;
		spin_unlock_bh(&sess->lock);
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
	spin_unlock_bh(&sess->lock);
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
	spin_lock_bh(&sess->lock);
	full = lane->tx_count + max_t(size_t, 1, DIV_ROUND_UP(len, RDMX_SEG_SIZE)) >
	       RDMX_TX_WINDOW;
	spin_unlock_bh(&sess->lock);
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

	spin_lock_bh(&sess->lock);
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
	spin_unlock_bh(&sess->lock);
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

	spin_lock_bh(&sess->lock);
	if (type == RDMX_MSG_DATA) {
		sess->stats.msgs_tx++;
		sess->stats.bytes_tx += len;
	}
	spin_unlock_bh(&sess->lock);
	return 0;
}

