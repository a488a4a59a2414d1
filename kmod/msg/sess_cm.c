// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx sessions, connections: a lane's connection and its resources,
 * rdma_cm events on it, going live, failing, reconnecting, and the server
 * side (taking connection requests as the message service). See sess.h
 * for the locking.
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
	conn->state = RDMX_CONN_RESOLVING;	/* the first state: no move */
	kref_get(&sess->ref);
	INIT_LIST_HEAD(&conn->ctrl_free);
	INIT_WORK(&conn->teardown_work, rdmx_conn_teardown_work);
	INIT_WORK(&conn->rx_work, rdmx_conn_rx_work);
	INIT_LIST_HEAD(&conn->rx_backlog);
	conn->depth = clamp_t(u32, rdmx_msg_params.queue_depth,
			      RDMX_CREDITS_RESERVED + 1,
			      RDMX_PROTO_MAX_QUEUE_DEPTH);
	return conn;
}

/*
 * The only place a connection changes state, under the session's lock. An
 * illegal transition is a bug: it is refused with a warning.
 */
static bool rdmx_conn_set_state(struct rdmx_conn *conn,
				enum rdmx_conn_state to)
{
	lockdep_assert_held(&conn->sess->lock);
	if (WARN_ONCE(!rdmx_fsm_valid(&rdmx_conn_fsm, conn->state, to),
		      "rdmx: session %u QP %u: %s -> %s\n", conn->sess->id,
		      conn->lane, rdmx_fsm_name(&rdmx_conn_fsm, conn->state),
		      rdmx_fsm_name(&rdmx_conn_fsm, to)))
		return false;
	trace_rdmx_conn_state(conn->sess->id, conn->lane, conn->generation,
			      conn->state, to);
	conn->state = to;
	return true;
}

static void rdmx_conn_fail_one(struct rdmx_conn *conn, int err)
{
	if (conn->state == RDMX_CONN_DEAD)
		return;
	rdmx_conn_set_state(conn, RDMX_CONN_DEAD);
	conn->err = err;
	queue_work(rdmx_wq, &conn->teardown_work);
}

/**
 * rdmx_sess_fail_conns() - fail every lane's connection
 * @sess: the session
 * @err: negative errno, the connections' error
 *
 * Context: under @sess->lock.
 */
void rdmx_sess_fail_conns(struct rdmx_sess *sess, int err)
{
	unsigned int i;

	lockdep_assert_held(&sess->lock);
	for (i = 0; i < sess->nr_lanes; i++)
		if (sess->lanes[i].conn)
			rdmx_conn_fail_one(sess->lanes[i].conn, err);
}

/**
 * rdmx_conn_fail() - fail a connection
 * @conn: the connection
 * @err: negative errno
 *
 * Marks it dead and queues its teardown, once. The lanes of an incarnation
 * live and die together: when a lane's current connection fails, every
 * other lane's does too, with the same error, and the session reconnects
 * them all.
 *
 * Context: any context, under the session's lock.
 */
void rdmx_conn_fail(struct rdmx_conn *conn, int err)
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

	/*
	 * Its receives drained (or never posted), what they left for
	 * process context is taken first. Not flush_work(): this runs on
	 * rdmx_wq under sess->mutex.
	 */
	wait_event(conn->sess->wait, !READ_ONCE(conn->rx_busy));
	if (conn->qp) {
		rdma_destroy_qp(conn->cm_id);
		conn->qp = NULL;
	}
	if (conn->rx) {
		for (i = 0; i < conn->depth; i++)
			rdmx_rx_buf_exit(ibdev, &conn->rx[i].rx);
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
	spin_lock_bh(&conn->sess->lock);
	rdmx_conn_set_state(conn, RDMX_CONN_DEAD);
	spin_unlock_bh(&conn->sess->lock);
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

		spin_lock_bh(&conn->sess->lock);
		first = conn->sess->lanes[0].conn;
		same = first && first->rdev && first->rdev->ibdev == ibdev;
		spin_unlock_bh(&conn->sess->lock);
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
	conn->cq = ib_cq_pool_get(ibdev, conn->cq_size, -1, IB_POLL_SOFTIRQ);
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
		ret = rdmx_rx_buf_init(ibdev, &rxb->rx, rxlen, 0);
		if (ret)
			goto out;
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
	p->lane = conn->lane;
	p->nr_lanes = conn->sess->max_lanes;
	p->features = RDMX_PROTO_F_OFFERED;
	p->max_msg_size = RDMX_SEG_SIZE;
	uuid_copy(&p->sess_uuid, &conn->sess->uuid);
	p->generation = conn->generation;
}

/**
 * rdmx_conn_go_live() - make a connection its lane's live one
 * @conn: the connection
 *
 * The lane's credits start afresh and every message it has not had
 * acknowledged is sent again. Lane 0 going live makes the session
 * CONNECTED; the client then opens the other lanes it had.
 *
 * Who speaks first: the client goes live on ESTABLISHED and at once sends
 * an ACK; the server goes live when that (or anything) arrives, never on
 * its own ESTABLISHED event. So neither side receives on a connection it
 * has not yet made live, whatever order the CM events come in.
 *
 * Context: under the session's lock.
 */
void rdmx_conn_go_live(struct rdmx_conn *conn)
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
	rdmx_conn_set_state(conn, RDMX_CONN_LIVE);
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

/**
 * rdmx_backoff() - how long a client waits before its next attempt
 * @sess: the session, whose failed attempts count
 *
 * Context: any context.
 * Return: jiffies (rdmx_backoff_ms()).
 */
unsigned long rdmx_backoff(struct rdmx_sess *sess)
{
	return msecs_to_jiffies(rdmx_backoff_ms(sess->attempts,
						rdmx_params.reconnect_max_ms));
}

/**
 * rdmx_sess_finish_close() - free every queued message of a closed session
 * @sess: the session
 * @to_free: where the transmit buffers go, to be freed after the lock
 *
 * Context: under @sess->lock.
 */
void rdmx_sess_finish_close(struct rdmx_sess *sess, struct list_head *to_free)
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

/**
 * rdmx_sess_unlink() - take a closed session out of the table
 * @sess: the session; the table's reference is dropped
 *
 * Context: process context.
 */
void rdmx_sess_unlink(struct rdmx_sess *sess)
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
	spin_lock_bh(&sess->lock);
	current_conn = lane->conn == conn;
	if (conn->state != RDMX_CONN_DEAD)
		rdmx_conn_set_state(conn, RDMX_CONN_DEAD);
	spin_unlock_bh(&sess->lock);
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

	spin_lock_bh(&sess->lock);
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
	spin_unlock_bh(&sess->lock);
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

/**
 * rdmx_sess_start_connect() - client: start a lane's connection attempt
 * @sess: the session
 * @idx: the lane
 *
 * Lane 0 begins a new incarnation (a higher generation); another lane
 * joins the current one, once lane 0 is live, and is skipped when it has
 * a connection or the incarnation is over.
 *
 * Context: under @sess->mutex.
 * Return: 0 (started or skipped) or a negative errno.
 */
int rdmx_sess_start_connect(struct rdmx_sess *sess, unsigned int idx)
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

	spin_lock_bh(&sess->lock);
	if (idx && (lane->conn || sess->state != RDMX_SESS_CONNECTED ||
		    !sess->lanes[0].conn ||
		    sess->lanes[0].conn->state != RDMX_CONN_LIVE)) {
		spin_unlock_bh(&sess->lock);
		ret = 0;
		goto destroy_id;
	}
	conn->generation = idx ? sess->generation : ++sess->generation;
	conn->started = jiffies;
	lane->conn = conn;	/* RESOLVING, as rdmx_conn_alloc() made it */
	sess->nr_conns++;
	if (!idx)
		rdmx_sess_set_state(sess, RDMX_SESS_CONNECTING);
	spin_unlock_bh(&sess->lock);

	/* An attempt that hangs (a lost CM REQ) is abandoned and retried. */
	if (!idx)
		rdmx_sess_queue(sess, &sess->hb_work,
				msecs_to_jiffies(RDMX_CONNECT_ATTEMPT_MS));
	ret = rdma_resolve_addr(cm_id, NULL, (struct sockaddr *)&sess->peer,
				RDMX_RESOLVE_TIMEOUT_MS);
	if (ret) {
		spin_lock_bh(&sess->lock);
		rdmx_conn_fail(conn, ret);
		spin_unlock_bh(&sess->lock);
	}
	return 0;

destroy_id:
	rdma_destroy_id(cm_id);
free_conn:
	rdmx_sess_put(sess);	/* the connection's */
	kfree(conn);
	return ret;
}

/**
 * rdmx_lanes_work() - client: connect the lanes in use that have no
 *	connection, once lane 0 is live
 * @work: the session's lanes_work
 *
 * A lane that cannot be started fails the incarnation, which reconnects
 * them all.
 *
 * Context: rdmx_wq; takes the session's mutex.
 */
void rdmx_lanes_work(struct work_struct *work)
{
	struct rdmx_sess *sess = container_of(to_delayed_work(work),
					      struct rdmx_sess, lanes_work);
	unsigned int i, n;
	int ret;

	mutex_lock(&sess->mutex);
	spin_lock_bh(&sess->lock);
	n = sess->nr_lanes;
	spin_unlock_bh(&sess->lock);
	for (i = 1; i < n; i++) {
		ret = rdmx_sess_start_connect(sess, i);
		if (ret) {
			spin_lock_bh(&sess->lock);
			if (sess->lanes[0].conn)
				rdmx_conn_fail(sess->lanes[0].conn, ret);
			spin_unlock_bh(&sess->lock);
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

	spin_lock_bh(&sess->lock);
	dead = conn->state == RDMX_CONN_DEAD;
	WRITE_ONCE(conn->ib_busy, !dead);
	spin_unlock_bh(&sess->lock);
	if (dead)
		return -ECONNABORTED;
	ret = rdmx_conn_create_ib(conn);
	spin_lock_bh(&sess->lock);
	WRITE_ONCE(conn->ib_busy, false);
	dead = conn->state == RDMX_CONN_DEAD;
	spin_unlock_bh(&sess->lock);
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
	param.rnr_retry_count = RDMX_RNR_RETRY;
	param.responder_resources = min_t(u8, 16,
					  conn->cm_id->device->attrs.max_qp_rd_atom);
	param.initiator_depth = min_t(u8, 16,
				      conn->cm_id->device->attrs.max_qp_init_rd_atom);
	spin_lock_bh(&conn->sess->lock);
	if (conn->state != RDMX_CONN_DEAD)
		rdmx_conn_set_state(conn, RDMX_CONN_CONNECTING);
	spin_unlock_bh(&conn->sess->lock);
	return rdma_connect_locked(conn->cm_id, &param);
}

static int rdmx_cm_established(struct rdmx_conn *conn,
			       struct rdma_cm_event *ev)
{
	struct rdmx_conn_params mine, peer;

	/* The server goes live on the client's first message instead. */
	if (conn->sess->server)
		return 0;
	if (rdmx_cm_rnr_endless(conn->cm_id, ev)) {
		pr_err_ratelimited("session %u: %pISpc accepted asking for receiver-not-ready retries without end\n",
				   conn->sess->id, &conn->sess->peer);
		return -EPROTO;
	}
	rdmx_conn_params(conn, &mine);
	if (rdmx_conn_rep_parse(ev->param.conn.private_data,
				ev->param.conn.private_data_len, &mine, &peer)) {
		pr_err_ratelimited("session %u: %pISpc accepted with malformed connection data\n",
				   conn->sess->id, &conn->sess->peer);
		return -EPROTO;
	}
	spin_lock_bh(&conn->sess->lock);
	conn->peer_depth = peer.queue_depth;
	conn->features = peer.features & mine.features;
	if (!(conn->features & RDMX_PROTO_F_MSG)) {
		spin_unlock_bh(&conn->sess->lock);
		pr_err_ratelimited("session %u: %pISpc granted no message service\n",
				   conn->sess->id, &conn->sess->peer);
		return -EPROTO;
	}
	if (peer.max_msg_size < RDMX_SEG_SIZE) {
		/* Messages are cut into RDMX_SEG_SIZE SENDs, whatever the QP. */
		spin_unlock_bh(&conn->sess->lock);
		pr_err_ratelimited("session %u: %pISpc takes SENDs of %u bytes at most, rdmx sends %u\n",
				   conn->sess->id, &conn->sess->peer,
				   peer.max_msg_size, RDMX_SEG_SIZE);
		return -EPROTO;
	}
	/* Lane 0 learns the lanes granted: at least those in use. */
	if (!conn->lane) {
		struct rdmx_sess *sess = conn->sess;

		if (peer.nr_lanes < sess->nr_lanes) {
			spin_unlock_bh(&sess->lock);
			pr_err_ratelimited("session %u: %pISpc granted %u QPs, the session has %u\n",
					   sess->id, &sess->peer, peer.nr_lanes,
					   sess->nr_lanes);
			return -EPROTO;
		}
		sess->max_lanes = peer.nr_lanes;
	}
	rdmx_conn_go_live(conn);
	spin_unlock_bh(&conn->sess->lock);
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
		spin_lock_bh(&conn->sess->lock);
		rdmx_conn_fail(conn, err);
		spin_unlock_bh(&conn->sess->lock);
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
	if (!req->lane)
		return sess->nr_conns ? RDMX_REJ_BUSY : RDMX_REJ_UNKNOWN;
	if (req->generation != sess->generation)
		return RDMX_REJ_STALE;
	if (req->lane >= sess->max_lanes)
		return RDMX_REJ_PARAMS;
	if (!sess->lanes[0].conn || sess->lanes[req->lane].conn)
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
		spin_lock_bh(&sess->lock);
		if (sess->state == RDMX_SESS_CLOSING ||
		    sess->state == RDMX_SESS_CLOSED ||
		    (!req->lane && req->generation <= sess->generation)) {
			reason = RDMX_REJ_STALE;
		} else if (!rdmx_addr_same_host((struct sockaddr *)&sess->peer,
					       (struct sockaddr *)&cm_id->route.addr.dst_addr)) {
			/* A session continues only from the host it began on. */
			reason = RDMX_REJ_NOT_ALLOWED;
		} else if (!req->lane && req->nr_lanes < sess->nr_lanes) {
			/* Its channels are bound to the lanes it has. */
			reason = RDMX_REJ_PARAMS;
		} else {
			reason = rdmx_sess_lane_check(sess, req);
			/* A new incarnation: end what is left of the old. */
			if (reason == RDMX_REJ_BUSY && !req->lane)
				rdmx_sess_fail_conns(sess, -ECONNRESET);
		}
		spin_unlock_bh(&sess->lock);
		if (reason != RDMX_REJ_UNKNOWN)
			rdmx_sess_put(sess);
		else
			*sessp = sess;
		return reason;
	}
	if (req->generation != 1 || req->lane)
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
	if (req->lane >= RDMX_SESS_MAX_LANES) {
		reason = RDMX_REJ_PARAMS;
		goto reject;
	}

	reason = rdmx_sess_for_request(cm_id, req, &sess, &new_sess);
	if (reason != RDMX_REJ_UNKNOWN)
		goto reject;

	conn = rdmx_conn_alloc(sess, req->lane);
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

	spin_lock_bh(&sess->lock);
	reason = rdmx_sess_lane_check(sess, req);
	if (reason != RDMX_REJ_UNKNOWN) {
		spin_unlock_bh(&sess->lock);
		goto reject_conn;
	}
	if (!req->lane) {
		sess->generation = req->generation;
		/* A session keeps its lanes: it grants no fewer, nor more. */
		sess->max_lanes = min_t(u32, req->nr_lanes, sess->max_lanes);
		rdmx_sess_set_state(sess, RDMX_SESS_CONNECTING);
	}
	sess->lanes[req->lane].conn = conn;
	sess->nr_conns++;
	sess->nr_lanes = max(sess->nr_lanes, req->lane + 1U);
	rdmx_conn_set_state(conn, RDMX_CONN_CONNECTING);
	conn->started = jiffies;
	spin_unlock_bh(&sess->lock);
	/*
	 * A client that never speaks on what it connected holds a QP and
	 * its rings: the attempt times out here as on the client (for
	 * another lane, rdmx_lanes_check_attempts() from the heartbeat).
	 */
	if (!req->lane)
		rdmx_sess_queue(sess, &sess->hb_work,
				msecs_to_jiffies(RDMX_CONNECT_ATTEMPT_MS));

	rdmx_conn_params(conn, &rep_p);
	rep_p.features = conn->features;
	rdmx_conn_rep_pack(&rep, &rep_p);
	param.private_data = &rep;
	param.private_data_len = sizeof(rep);
	param.flow_control = 1;
	param.rnr_retry_count = RDMX_RNR_RETRY;
	param.responder_resources = min_t(u8, ev->param.conn.responder_resources,
					  cm_id->device->attrs.max_qp_rd_atom);
	param.initiator_depth = min_t(u8, ev->param.conn.initiator_depth,
				      cm_id->device->attrs.max_qp_init_rd_atom);
	ret = rdma_accept(cm_id, &param);
	if (ret) {
		spin_lock_bh(&sess->lock);
		rdmx_conn_fail(conn, ret);
		spin_unlock_bh(&sess->lock);
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
		spin_lock_bh(&sess->lock);
		/* An administrator's close (by its id) may be ending it already. */
		if (sess->state != RDMX_SESS_CLOSING &&
		    sess->state != RDMX_SESS_CLOSED) {
			rdmx_sess_set_state(sess, RDMX_SESS_CLOSING);
			rdmx_sess_set_state(sess, RDMX_SESS_CLOSED);
		}
		spin_unlock_bh(&sess->lock);
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

struct rdmx_cm_service rdmx_msg_cm_service = {
	.name = "session",
	.takes = rdmx_msg_takes,
	.connect = rdmx_msg_connect,
};

