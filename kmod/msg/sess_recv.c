// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx sessions, receive side: posting receive buffers, checking what
 * arrives, delivering it in sequence to channels and answering the control
 * messages. See sess.h for the locking.
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

/* ---- receive ------------------------------------------------------------ */

static void rdmx_recv_done(struct ib_cq *cq, struct ib_wc *wc);

/**
 * rdmx_post_recv() - post a receive buffer on its connection's QP
 * @conn: the connection
 * @rxb: one of its buffers
 *
 * Context: any context.
 * Return: 0 or ib_post_recv()'s negative errno.
 */
int rdmx_post_recv(struct rdmx_conn *conn, struct rdmx_rxbuf *rxb)
{
	int ret;

	rxb->rx.cqe.done = rdmx_recv_done;
	ret = rdmx_rx_buf_post(conn->qp, &rxb->rx);
	/* siw refuses once its QP is in error: its completions say why. */
	if (unlikely(ret) && ret != -ENOTCONN)
		pr_err_ratelimited("session %u: posting a receive failed: %pe\n",
				   conn->sess->id, ERR_PTR(ret));
	return ret;
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

/* Messages whose handling may sleep: taken by the connection's rx_work. */
static bool rdmx_msg_needs_task(const struct rdmx_msg *m)
{
	return m->type == RDMX_MSG_OPEN || m->type == RDMX_MSG_OPEN_REP;
}

/* Leave a receive to rx_work, behind any already left; under the lock. */
static void rdmx_recv_defer(struct rdmx_conn *conn, struct rdmx_rxbuf *rxb)
{
	lockdep_assert_held(&conn->sess->lock);
	list_add_tail(&rxb->node, &conn->rx_backlog);
	/* Once per busy spell: the work takes all it finds before it ends. */
	if (!conn->rx_busy) {
		WRITE_ONCE(conn->rx_busy, true);
		queue_work(rdmx_rx_wq, &conn->rx_work);
	}
}

/* On 64-bit a received buffer can always be its own segment. */
static_assert(!IS_ENABLED(CONFIG_64BIT) || RDMX_RXSEG_IN_PLACE);

/*
 * Whether a DATA segment of @m->len bytes keeps the buffer it arrived in
 * (rdmx_rx_buf_swap_hdr()) rather than a copy: only when the copy would
 * take an allocation of the same size, so that what the segment costs the
 * receive budget (rdmx_rxseg_cost()) is what it holds. Large segments:
 * the copy they save is the receiver's only one of the payload.
 */
static bool rdmx_rxseg_in_place(const struct rdmx_rxbuf *rxb,
				const struct rdmx_msg *m)
{
	return RDMX_RXSEG_IN_PLACE && m->type == RDMX_MSG_DATA &&
	       rdmx_rxseg_cost(m->len) == kmalloc_size_roundup(rxb->rx.hdr_len);
}

/*
 * Take one received SEND of @rxb->byte_len bytes. In the completion
 * handler (@task false) a message that needs process context, one it has
 * no memory for, and any while rx_work is busy are deferred to it, in
 * order; rx_work (@task true) takes them all.
 */
static void rdmx_recv_one(struct rdmx_conn *conn, struct rdmx_rxbuf *rxb,
			  bool task)
{
	gfp_t gfp = task ? GFP_KERNEL : GFP_NOWAIT | __GFP_NOWARN;
	struct ib_device *ibdev = conn->cm_id->device;
	struct rdmx_sess *sess = conn->sess;
	struct rdmx_lane *lane = rdmx_conn_lane(conn);
	struct rdmx_rx_work w = { .to_free = LIST_HEAD_INIT(w.to_free) };
	const void *payload = rxb->rx.hdr + sizeof(struct rdmx_msg_hdr);
	struct rdmx_rxseg *seg = NULL;
	void *spare = NULL;
	bool defer = false;
	struct rdmx_msg m;
	u64 spare_dma = 0;
	int ret;

	ret = rdmx_msg_hdr_parse(rxb->rx.hdr, rxb->byte_len, RDMX_SEG_SIZE, &m);
	/* Behind others it is deferred anyway (checked again, locked). */
	if (!task && (READ_ONCE(conn->rx_busy) ||
		      (!ret && rdmx_msg_needs_task(&m)))) {
		defer = true;
	} else if (!ret && (m.type == RDMX_MSG_DATA ||
			    m.type == RDMX_MSG_IMMED)) {
		/* A buffer to post in place of this one, or a copy. */
		if (rdmx_rxseg_in_place(rxb, &m))
			spare = rdmx_rx_hdr_alloc(ibdev, rxb->rx.hdr_len, gfp,
						  &spare_dma);
		if (!spare) {
			seg = kmalloc(struct_size(seg, data, m.len), gfp);
			if (seg) {
				seg->len = m.len;
				memcpy(seg->data, payload, m.len);
			} else if (task) {
				ret = -ENOMEM;
			} else {
				defer = true;
			}
		}
	}

	spin_lock_bh(&sess->lock);
	if (!task && (defer || conn->rx_busy)) {
		rdmx_recv_defer(conn, rxb);
		spin_unlock_bh(&sess->lock);
		goto out_free;
	}
	if (sess->server && conn->state == RDMX_CONN_CONNECTING)
		rdmx_conn_go_live(conn);
	/*
	 * What arrived on the current connection is good even once it is
	 * failing (its teardown has not detached it yet): deliver it, fewer
	 * messages need retransmitting. An older incarnation's is dropped.
	 */
	if (lane->conn != conn || (conn->state != RDMX_CONN_LIVE &&
				   conn->state != RDMX_CONN_DEAD)) {
		spin_unlock_bh(&sess->lock);
		goto out_free;
	}
	if (spare) {
		/* Parsed: the segment's fields may lie over the header. */
		seg = rdmx_rx_buf_swap_hdr(ibdev, &rxb->rx, spare, spare_dma);
		spare = NULL;
		seg->len = m.len;
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
	spin_unlock_bh(&sess->lock);

	kfree(seg);
	rdmx_txbuf_free_list(&w.to_free);
	/* Only rx_work gets these: OPEN and OPEN_REP are deferred. */
	if (w.open)
		rdmx_sess_handle_open(sess, w.open_chan, w.service, w.lane);
	if (w.shut_chan)
		rdmx_sess_send_seq(sess, conn->lane, RDMX_MSG_SHUT, w.shut_chan,
				   NULL, 0, NULL, false, false);
	if (w.close)	/* sess->mutex is not for the completion path */
		rdmx_sess_queue(sess, &sess->close_work, 0);
	return;

out_free:
	kfree(seg);
	rdmx_rx_hdr_free(ibdev, spare, rxb->rx.hdr_len, spare_dma);
}

static void rdmx_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rdmx_rxbuf *rxb = container_of(wc->wr_cqe, struct rdmx_rxbuf,
					      rx.cqe);
	struct rdmx_conn *conn = rxb->conn;
	struct rdmx_sess *sess = conn->sess;

	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		rdmx_wc_failed(sess, "recv", wc);
		spin_lock_bh(&sess->lock);
		rdmx_conn_fail(conn, -EIO);
		spin_unlock_bh(&sess->lock);
		return;
	}
	rdmx_rx_buf_sync(conn->cm_id->device, &rxb->rx, wc->byte_len);
	rxb->byte_len = wc->byte_len;
	rdmx_recv_one(conn, rxb, false);
}

/**
 * rdmx_conn_rx_work() - take the receives a connection's completion
 *	handler left for process context
 * @work: the connection's @rx_work
 *
 * One at a time and in order; the completion handler queues whatever
 * arrives meanwhile behind them. Once it finds none left it is not
 * queued again until a receive is deferred, and touches the connection no
 * more: the teardown, its receives drained, waits for @rx_busy to clear
 * and may then free it.
 *
 * Context: process context (rdmx_rx_wq); may sleep.
 */
void rdmx_conn_rx_work(struct work_struct *work)
{
	struct rdmx_conn *conn = container_of(work, struct rdmx_conn,
					      rx_work);
	struct rdmx_sess *sess = conn->sess;
	struct rdmx_rxbuf *rxb;

	spin_lock_bh(&sess->lock);
	while ((rxb = list_first_entry_or_null(&conn->rx_backlog,
					       struct rdmx_rxbuf, node))) {
		list_del(&rxb->node);
		spin_unlock_bh(&sess->lock);
		rdmx_recv_one(conn, rxb, true);
		spin_lock_bh(&sess->lock);
	}
	WRITE_ONCE(conn->rx_busy, false);
	wake_up_all(&sess->wait);
	spin_unlock_bh(&sess->lock);
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

	spin_lock_bh(&sess->lock);
	sess->rx_queued -= min(bytes, sess->rx_queued);
	if (sess->rx_held && sess->rx_queued < RDMX_SESS_RX_LIMIT / 2) {
		sess->rx_held = false;
		for (i = 0; i < sess->nr_lanes; i++)
			rdmx_ack_maybe(sess, &sess->lanes[i], true);
	}
	spin_unlock_bh(&sess->lock);
}

/**
 * rdmx_sess_handle_open() - a peer opens a channel: find the service and
 *	answer
 * @sess: the session
 * @rchan: the peer's channel id
 * @service: the service name, checked
 * @lane: the lane the OPEN came on, which the channel lives on, so both
 *	directions share it
 *
 * The answer is queued before the channel can be accepted, so the
 * acceptor's first messages follow it on the lane rather than overtake
 * it; once queued for accept the channel is the acceptor's, and not
 * touched here again.
 *
 * Context: process context (the connection's rx_work), not under the
 * session's lock.
 */
void rdmx_sess_handle_open(struct rdmx_sess *sess, u32 rchan,
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

	spin_lock_bh(&sess->lock);
	if (sess->state == RDMX_SESS_CLOSING || sess->state == RDMX_SESS_CLOSED) {
		spin_unlock_bh(&sess->lock);
		return -EAGAIN;
	}
	/* A peer cannot make this side hold channels without end. */
	if (sess->nr_chans >= RDMX_SESS_MAX_CHANS ||
	    (test_bit(RDMX_EP_F_QUOTA, &ep->flags) &&
	     rdmx_sess_user_chans(sess, ep->uid) >= RDMX_SESS_USER_CHANS)) {
		spin_unlock_bh(&sess->lock);
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
	spin_unlock_bh(&sess->lock);
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

	spin_lock_bh(&sess->lock);
	old = xa_cmpxchg(&sess->chans, ep->chan, ep, NULL, GFP_ATOMIC);
	if (old != ep)
		old = NULL;
	if (old) {
		sess->nr_chans--;
		sess->lanes[ep->lane].nr_chans--;
		idle = !sess->nr_chans && !sess->server;
	}
	spin_unlock_bh(&sess->lock);
	if (idle)
		rdmx_sess_queue(sess, &sess->close_work,
				msecs_to_jiffies(RDMX_RECONNECT_MIN_MS));
	if (old)
		kref_put(&old->ref, rdmx_ep_kref_release);
}

