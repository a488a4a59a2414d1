// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx sessions: their life (creation, lookup, close, timers: heartbeats,
 * acknowledgments, reconnect) and the entry points endpoints use. The
 * connections are in sess_cm.c, the data path in sess_send.c and
 * sess_recv.c. See sess.h for the structures and the locking rules, and
 * Documentation/protocol.rst for the wire protocol.
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
DEFINE_MUTEX(rdmx_sess_admit_mutex);

/* Sessions by id; xa_lock guards lookups against the final put. */
DEFINE_XARRAY_ALLOC1(rdmx_sessions);
/* Serialises finding-or-creating a client session. */
static DEFINE_MUTEX(rdmx_sess_mutex);
static u32 rdmx_sess_next_id;
struct workqueue_struct *rdmx_imm_wq;
/*
 * Receives a completion handler leaves for process context; not rdmx_wq,
 * whose teardowns wait for them.
 */
struct workqueue_struct *rdmx_rx_wq;

static void rdmx_sess_close(struct rdmx_sess *sess, int err);
static void rdmx_hb_work(struct work_struct *work);
static void rdmx_ack_work(struct work_struct *work);
static void rdmx_reconnect_work(struct work_struct *work);
static void rdmx_close_work(struct work_struct *work);

/* Lanes this host offers or grants a session: at most one per CPU. */
static unsigned int rdmx_lanes_max(void)
{
	return clamp_t(unsigned int, READ_ONCE(rdmx_msg_params.max_lanes), 1,
		       min_t(unsigned int, num_online_cpus(),
			     RDMX_SESS_MAX_LANES));
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

/**
 * rdmx_sess_set_state() - move a session to another state
 * @sess: the session
 * @to: the new state
 *
 * The only place a session changes state. An illegal transition is a bug:
 * it is refused with a warning.
 *
 * Context: under @sess->lock.
 * Return: true when the session moved.
 */
bool rdmx_sess_set_state(struct rdmx_sess *sess, enum rdmx_sess_state to)
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

/**
 * rdmx_sess_alloc() - a new session, not yet in the table
 * @server: accepted from a listener rather than connected to
 *
 * Context: process context.
 * Return: the session, with one reference, or NULL when out of memory or
 * ids.
 */
struct rdmx_sess *rdmx_sess_alloc(bool server)
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

/**
 * rdmx_sess_publish() - make a set-up session visible to lookups
 * @sess: the session
 *
 * The table takes a reference of its own; the caller keeps the one
 * rdmx_sess_alloc() gave it.
 *
 * Context: process context.
 */
void rdmx_sess_publish(struct rdmx_sess *sess)
{
	kref_get(&sess->ref);
	/* The id is reserved, so this allocates nothing and cannot fail. */
	xa_store(&rdmx_sessions, sess->id, sess, GFP_KERNEL);
}

/* ---- timers ------------------------------------------------------------- */

/**
 * rdmx_lanes_check_attempts() - fail an incarnation whose lane hangs
 * @sess: the session
 *
 * A lane's connection attempt that has run past its deadline fails the
 * incarnation.
 *
 * Context: under @sess->lock.
 */
void rdmx_lanes_check_attempts(struct rdmx_sess *sess)
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

/*
 * A connection whose send queue has held work with no completion for too
 * long (rdmx_conn_sq_stalled()), if any; its limit in @limit_ms. The
 * device fails what a dead peer does not acknowledge, and a SEND a live
 * one keeps refusing (RDMX_RNR_RETRY), but a peer may also stay in touch
 * and take nothing by other means (an iWARP peer's TCP window held shut):
 * it must not hold the send queue, and whatever waits behind it, for ever.
 */
static struct rdmx_conn *rdmx_sess_stuck_conn(struct rdmx_sess *sess,
					      u32 *limit_ms)
{
	struct rdmx_conn *conn;
	unsigned int i;

	lockdep_assert_held(&sess->lock);
	for (i = 0; i < sess->nr_lanes; i++) {
		conn = sess->lanes[i].conn;
		if (!conn || conn->state != RDMX_CONN_LIVE)
			continue;
		*limit_ms = rdmx_conn_sq_stalled(conn);
		if (*limit_ms)
			return conn;
	}
	return NULL;
}

/* Fail a connection whose send queue is stuck; true when there was one. */
static bool rdmx_sess_fail_stuck(struct rdmx_sess *sess)
{
	struct rdmx_conn *stuck;
	u32 limit_ms;

	stuck = rdmx_sess_stuck_conn(sess, &limit_ms);
	if (!stuck)
		return false;
	sess->stats.sq_stalls++;
	pr_info_ratelimited("session %u: %pISpc: nothing sent on lane %u completed in %u ms (%u SENDs, %u one-sided posted)\n",
			    sess->id, &sess->peer, stuck->lane, limit_ms,
			    stuck->sq_posted, stuck->rma_posted);
	rdmx_conn_fail(stuck, -ETIMEDOUT);
	return true;
}

static void rdmx_hb_work(struct work_struct *work)
{
	struct rdmx_sess *sess = container_of(to_delayed_work(work),
					      struct rdmx_sess, hb_work);
	unsigned long interval = msecs_to_jiffies(rdmx_params.hb_interval_ms);
	struct rdmx_conn *conn;
	bool again = false;

	spin_lock_bh(&sess->lock);
	conn = sess->lanes[0].conn;
	if (sess->state == RDMX_SESS_CONNECTED && conn &&
	    conn->state == RDMX_CONN_LIVE) {
		again = true;
		rdmx_lanes_check_attempts(sess);
		if (rdmx_sess_fail_stuck(sess)) {
			again = false;
		} else if (time_after(jiffies, sess->last_rx + interval)) {
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
	} else if (sess->state == RDMX_SESS_CLOSING && conn &&
		   conn->state == RDMX_CONN_LIVE) {
		/* The CLOSE's completion ends it: unless nothing completes. */
		again = !rdmx_sess_fail_stuck(sess);
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
	spin_unlock_bh(&sess->lock);
	if (again)
		rdmx_sess_queue(sess, &sess->hb_work, interval);
	rdmx_sess_put(sess);
}

static void rdmx_ack_work(struct work_struct *work)
{
	struct rdmx_sess *sess = container_of(to_delayed_work(work),
					      struct rdmx_sess, ack_work);
	unsigned int i;

	spin_lock_bh(&sess->lock);
	for (i = 0; i < sess->nr_lanes; i++)
		if (rdmx_lane_ack_due(sess, &sess->lanes[i]))
			rdmx_send_ctrl(sess, &sess->lanes[i], RDMX_MSG_ACK);
	spin_unlock_bh(&sess->lock);
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
	spin_lock_bh(&sess->lock);
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
	spin_unlock_bh(&sess->lock);
	ret = rdmx_sess_start_connect(sess, 0);
	if (ret) {
		spin_lock_bh(&sess->lock);
		rdmx_sess_queue(sess, &sess->reconnect_work, rdmx_backoff(sess));
		goto unlock;
	}
	mutex_unlock(&sess->mutex);
	goto out;
unlock:
	spin_unlock_bh(&sess->lock);
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
	spin_lock_bh(&sess->lock);
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
	spin_unlock_bh(&sess->lock);
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

	spin_lock_bh(&sess->lock);
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
	spin_unlock_bh(&sess->lock);
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
		spin_lock_bh(&sess->lock);
		if (sess->state != RDMX_SESS_CLOSING &&
		    sess->state != RDMX_SESS_CLOSED) {
			kref_get(&sess->ref);
			found = sess;
		}
		spin_unlock_bh(&sess->lock);
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
	spin_lock_bh(&sess->lock);
	if (sess->state == RDMX_SESS_CONNECTED ||
	    sess->state == RDMX_SESS_RECONNECTING) {
		spin_unlock_bh(&sess->lock);
		return sess;
	}
	if (sess->state == RDMX_SESS_CLOSED || sess->state == RDMX_SESS_CLOSING)
		ret = rdmx_sess_closed_err(sess);
	else if (left < 0)
		ret = -EINTR;
	else
		ret = -ETIMEDOUT;
	spin_unlock_bh(&sess->lock);
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

		spin_lock_bh(&sess->lock);
		for (i = 0; i < sess->nr_lanes; i++) {
			conn = sess->lanes[i].conn;
			if (conn && conn->rdev && conn->rdev->ibdev == ibdev)
				rdmx_conn_fail(conn, -ENODEV);
		}
		spin_unlock_bh(&sess->lock);
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
	rdmx_rx_wq = alloc_workqueue("rdmx_rx", WQ_MEM_RECLAIM | WQ_UNBOUND, 0);
	if (!rdmx_rx_wq) {
		destroy_workqueue(rdmx_imm_wq);
		return -ENOMEM;
	}
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
		spin_lock_bh(&sess->lock);
		WARN_ON(sess->state != RDMX_SESS_CLOSED);
		spin_unlock_bh(&sess->lock);
		rdmx_sess_unlink(sess);
		rdmx_sess_put(sess);
	}
	/* Until the last session went, a device's removal still failed it. */
	rdmx_device_notifier_unregister(&rdmx_sess_device_nb);
	destroy_workqueue(rdmx_rx_wq);
	destroy_workqueue(rdmx_imm_wq);
	flush_workqueue(rdmx_wq);
}
