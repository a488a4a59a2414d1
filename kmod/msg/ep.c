// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx endpoints: listening services and channels, and the kernel API
 * (rdmx_api.h) that /dev/rdmx and in-kernel users share.
 *
 * A channel's receive queue is a list of segments (one per SEND); a
 * message is complete when its last segment has arrived, and only complete
 * messages are visible to RECV. Readers are serialised by ep->mutex and
 * copy a message out before unlinking it, so a fault in copy_to_user()
 * leaves it queued.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <kunit/visibility.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/uio.h>

#include "core/rdmx.h"
#include "rma.h"
#include "sess.h"
#include "msg_trace.h"

/* rdmx_rxseg flags, kept in the top bits of len. */
#define RDMX_SEG_LAST	BIT(31)	/* a message's last segment */
#define RDMX_SEG_IMM	BIT(30)	/* a WRITE_IMM's immediate, not a message */
#define RDMX_SEG_FLAGS	(RDMX_SEG_LAST | RDMX_SEG_IMM)

/* Payload bytes of a segment (an immediate has none). */
static size_t rdmx_seg_bytes(const struct rdmx_rxseg *seg)
{
	return seg->len & RDMX_SEG_IMM ? 0 : seg->len & ~RDMX_SEG_FLAGS;
}

/* What a segment holds of the session's receive budget. */
static size_t rdmx_seg_cost(const struct rdmx_rxseg *seg)
{
	return rdmx_rxseg_cost(seg->len & RDMX_SEG_IMM ?
			       sizeof(struct rdmx_imm) : rdmx_seg_bytes(seg));
}

static void rdmx_ep_notify_work(struct work_struct *work)
{
	struct rdmx_ep *ep = container_of(work, struct rdmx_ep, notify_work);
	const struct rdmx_ep_ops *ops;
	void *priv;

	spin_lock_bh(&ep->lock);
	ops = ep->ops;
	priv = ep->priv;
	spin_unlock_bh(&ep->lock);
	/* Once released, the owner's callbacks are not called again. */
	if (ops && ops->data_ready && !test_bit(RDMX_EP_F_RELEASED, &ep->flags))
		ops->data_ready(ep, priv);
	kref_put(&ep->ref, rdmx_ep_kref_release);
}

/**
 * rdmx_ep_notify() - tell a kernel user that its endpoint has news
 * @ep: the endpoint; the caller holds a reference
 *
 * Context: any context.
 */
static void rdmx_ep_notify(struct rdmx_ep *ep)
{
	wake_up_all(&ep->wait);
	if (!ep->ops || !ep->ops->data_ready)
		return;
	kref_get(&ep->ref);
	if (!queue_work(rdmx_wq, &ep->notify_work))
		kref_put(&ep->ref, rdmx_ep_kref_release);	/* not the last */
}

/*
 * The only place an endpoint changes state, under ep->lock. An illegal
 * transition is a bug: it is refused with a warning.
 */
static bool rdmx_ep_set_state(struct rdmx_ep *ep, u32 to)
{
	lockdep_assert_held(&ep->lock);
	if (WARN_ONCE(!rdmx_fsm_valid(&rdmx_ep_fsm, ep->state, to),
		      "rdmx: endpoint %u: %s -> %s\n", ep->chan,
		      rdmx_fsm_name(&rdmx_ep_fsm, ep->state),
		      rdmx_fsm_name(&rdmx_ep_fsm, to)))
		return false;
	trace_rdmx_ep_state(ep->sess ? ep->sess->id : 0, ep->chan, ep->state,
			    to);
	ep->state = to;
	return true;
}

/**
 * rdmx_ep_create() - a new endpoint, neither listening nor connected
 * @ops: callbacks, or NULL (then wait on the calls themselves)
 * @priv: passed to @ops
 *
 * Context: process context.
 * Return: the endpoint, or NULL when out of memory. Release it with
 * rdmx_ep_release().
 */
struct rdmx_ep *rdmx_ep_create(const struct rdmx_ep_ops *ops, void *priv)
{
	struct rdmx_ep *ep;

	ep = kzalloc(sizeof(*ep), GFP_KERNEL);
	if (!ep)
		return NULL;
	kref_init(&ep->ref);
	mutex_init(&ep->mutex);
	mutex_init(&ep->send_mutex);
	spin_lock_init(&ep->lock);
	init_waitqueue_head(&ep->wait);
	INIT_LIST_HEAD(&ep->rxq);
	INIT_LIST_HEAD(&ep->acceptq);
	INIT_LIST_HEAD(&ep->accept_node);
	INIT_LIST_HEAD(&ep->svc_node);
	INIT_WORK(&ep->notify_work, rdmx_ep_notify_work);
	xa_init_flags(&ep->mrs, XA_FLAGS_ALLOC1);
	INIT_LIST_HEAD(&ep->events);
	INIT_LIST_HEAD(&ep->imm_reqs);
	INIT_WORK(&ep->imm_work, rdmx_rma_imm_work);
	INIT_LIST_HEAD(&ep->rma_done);
	INIT_WORK(&ep->rma_done_work, rdmx_rma_done_work);
	ep->state = RDMX_EP_NEW;	/* the first state: no move */
	ep->ops = ops;
	ep->priv = priv;
	return ep;
}
EXPORT_SYMBOL_GPL(rdmx_ep_create);

static void rdmx_segs_free(struct list_head *segs)
{
	struct rdmx_rxseg *seg, *tmp;

	list_for_each_entry_safe(seg, tmp, segs, node)
		kfree(seg);
}

/**
 * rdmx_ep_kref_release() - free an endpoint once unreferenced
 * @ref: its reference count
 *
 * Context: process context.
 */
void rdmx_ep_kref_release(struct kref *ref)
{
	struct rdmx_ep *ep = container_of(ref, struct rdmx_ep, ref);
	struct rdmx_rxseg *seg;
	size_t unread = 0;

	WARN_ON(!list_empty(&ep->acceptq));
	WARN_ON(!xa_empty(&ep->mrs));
	WARN_ON(!list_empty(&ep->events));
	WARN_ON(!list_empty(&ep->imm_reqs));
	WARN_ON(!list_empty(&ep->rma_done));
	xa_destroy(&ep->mrs);
	list_for_each_entry(seg, &ep->rxq, node)
		unread += rdmx_seg_cost(seg);
	if (unread)
		rdmx_sess_rx_consumed(ep->sess, unread);
	rdmx_segs_free(&ep->rxq);
	if (ep->sess)
		rdmx_sess_put(ep->sess);
	kfree(ep);
}

/**
 * rdmx_ep_set_priv() - set a kernel user's callbacks on an endpoint
 * @ep: the endpoint, typically one just accepted
 * @ops: callbacks
 * @priv: passed to @ops
 *
 * Context: process context, before the endpoint is used.
 */
void rdmx_ep_set_priv(struct rdmx_ep *ep, const struct rdmx_ep_ops *ops,
		      void *priv)
{
	spin_lock_bh(&ep->lock);
	ep->ops = ops;
	ep->priv = priv;
	spin_unlock_bh(&ep->lock);
	if (READ_ONCE(ep->rxq_len) || READ_ONCE(ep->state) >= RDMX_EP_CLOSED)
		rdmx_ep_notify(ep);
}
EXPORT_SYMBOL_GPL(rdmx_ep_set_priv);

/**
 * rdmx_ep_new_chan() - an endpoint for a channel a peer opened
 * @sess: the session (the endpoint takes a reference)
 * @rchan: the peer's channel id
 * @service: the service
 *
 * Context: process context.
 * Return: the endpoint, connected, or NULL when out of memory.
 */
struct rdmx_ep *rdmx_ep_new_chan(struct rdmx_sess *sess, u32 rchan,
				 const char *service)
{
	struct rdmx_ep *ep = rdmx_ep_create(NULL, NULL);

	if (!ep)
		return NULL;
	kref_get(&sess->ref);
	ep->sess = sess;
	ep->rchan = rchan;
	spin_lock_bh(&ep->lock);
	rdmx_ep_set_state(ep, RDMX_EP_CONNECTED);	/* born connected */
	spin_unlock_bh(&ep->lock);
	strscpy(ep->service, service, sizeof(ep->service));
	memcpy(&ep->local, &sess->local, sizeof(ep->local));
	return ep;
}

/**
 * rdmx_ep_chan_deliver() - a DATA segment for a channel
 * @ep: the channel
 * @seg: the segment; the channel takes it on success
 * @more: more segments of this message follow
 *
 * Context: under the session lock.
 * Return: 0, or -EPIPE when the channel takes no more data (then the
 * caller frees @seg): it is closed, failed, or the peer overran the
 * message size limit (which fails it with EPROTO).
 */
int rdmx_ep_chan_deliver(struct rdmx_ep *ep, struct rdmx_rxseg *seg, bool more)
{
	bool complete = false;

	spin_lock_bh(&ep->lock);
	if (ep->state != RDMX_EP_CONNECTED && ep->state != RDMX_EP_SHUTDOWN) {
		spin_unlock_bh(&ep->lock);
		return -EPIPE;
	}
	if (ep->partial_len + seg->len > RDMX_MSG_MAX) {
		pr_err_ratelimited("session %u: channel %u: message over %u bytes\n",
				   ep->sess->id, ep->chan, RDMX_MSG_MAX);
		rdmx_ep_set_state(ep, RDMX_EP_ERROR);
		ep->error = EPROTO;
		spin_unlock_bh(&ep->lock);
		rdmx_ep_notify(ep);
		return -EPIPE;
	}
	ep->partial_len += seg->len;
	if (!more) {
		seg->len |= RDMX_SEG_LAST;
		ep->partial_len = 0;
		ep->rxq_len++;
		ep->msgs_rx++;
		complete = true;
	}
	list_add_tail(&seg->node, &ep->rxq);
	spin_unlock_bh(&ep->lock);
	if (complete)
		rdmx_ep_notify(ep);
	return 0;
}

/**
 * rdmx_ep_chan_deliver_imm() - queue a WRITE_IMM's immediate on a channel
 * @ep: the channel
 * @seg: its rdmx_imm payload (4 bytes); taken over on success
 *
 * Context: under the session lock.
 * Return: 0, or -EPIPE when the channel takes no more (then the caller
 * frees @seg), or when it arrived inside a message (a protocol error:
 * the channel fails with EPROTO).
 */
int rdmx_ep_chan_deliver_imm(struct rdmx_ep *ep, struct rdmx_rxseg *seg)
{
	spin_lock_bh(&ep->lock);
	if (ep->state != RDMX_EP_CONNECTED && ep->state != RDMX_EP_SHUTDOWN) {
		spin_unlock_bh(&ep->lock);
		return -EPIPE;
	}
	if (ep->partial_len) {
		pr_err_ratelimited("session %u: channel %u: immediate inside a message\n",
				   ep->sess->id, ep->chan);
		rdmx_ep_set_state(ep, RDMX_EP_ERROR);
		ep->error = EPROTO;
		spin_unlock_bh(&ep->lock);
		rdmx_ep_notify(ep);
		return -EPIPE;
	}
	seg->len = RDMX_SEG_LAST | RDMX_SEG_IMM;
	ep->rxq_len++;
	list_add_tail(&seg->node, &ep->rxq);
	spin_unlock_bh(&ep->lock);
	rdmx_ep_notify(ep);
	return 0;
}

/**
 * rdmx_ep_chan_open_rep() - the peer answered our OPEN
 * @ep: the channel
 * @rchan: the peer's channel id
 * @status: its answer
 *
 * Context: under the session lock.
 */
void rdmx_ep_chan_open_rep(struct rdmx_ep *ep, u32 rchan,
			   enum rdmx_open_status status)
{
	spin_lock_bh(&ep->lock);
	if (ep->state == RDMX_EP_CONNECTING) {
		if (status == RDMX_OPEN_OK) {
			ep->rchan = rchan;
			rdmx_ep_set_state(ep, RDMX_EP_CONNECTED);
		} else {
			rdmx_ep_set_state(ep, RDMX_EP_ERROR);
			ep->error = ECONNREFUSED;
		}
	}
	spin_unlock_bh(&ep->lock);
	rdmx_ep_notify(ep);
}

/**
 * rdmx_ep_chan_shut() - the peer closed its end of the channel
 * @ep: the channel
 *
 * Context: under the session lock.
 */
void rdmx_ep_chan_shut(struct rdmx_ep *ep)
{
	spin_lock_bh(&ep->lock);
	if (ep->state == RDMX_EP_CONNECTED || ep->state == RDMX_EP_SHUTDOWN ||
	    ep->state == RDMX_EP_CONNECTING)
		rdmx_ep_set_state(ep, RDMX_EP_CLOSED);
	spin_unlock_bh(&ep->lock);
	rdmx_ep_notify(ep);
}

/**
 * rdmx_ep_chan_error() - the channel's session failed
 * @ep: the channel
 * @err: positive errno
 *
 * Messages already queued can still be read; then RECV reports @err.
 *
 * Context: any context; not under the endpoint's lock.
 */
void rdmx_ep_chan_error(struct rdmx_ep *ep, int err)
{
	spin_lock_bh(&ep->lock);
	if (ep->state != RDMX_EP_ERROR && ep->state != RDMX_EP_CLOSED) {
		rdmx_ep_set_state(ep, RDMX_EP_ERROR);
		ep->error = err;
	}
	spin_unlock_bh(&ep->lock);
	rdmx_ep_notify(ep);
}

/**
 * rdmx_ep_accept_room() - whether a listening endpoint takes a new channel
 * @lep: the listening endpoint
 *
 * A hint: rdmx_ep_enqueue_accept() decides.
 *
 * Context: any context.
 * Return: true when @lep listens and its backlog has room.
 */
bool rdmx_ep_accept_room(struct rdmx_ep *lep)
{
	bool ret;

	spin_lock_bh(&lep->lock);
	ret = lep->state == RDMX_EP_LISTENING && lep->nr_accept < lep->backlog;
	spin_unlock_bh(&lep->lock);
	return ret;
}

/**
 * rdmx_ep_enqueue_accept() - queue a new channel on a listening endpoint
 * @lep: the listening endpoint
 * @ep: the channel; the queue takes over the caller's reference
 *
 * Context: process context.
 * Return: 0, or -EBUSY when @lep stopped listening or its backlog is full.
 */
int rdmx_ep_enqueue_accept(struct rdmx_ep *lep, struct rdmx_ep *ep)
{
	int ret = 0;

	spin_lock_bh(&lep->lock);
	if (lep->state != RDMX_EP_LISTENING || lep->nr_accept >= lep->backlog) {
		ret = -EBUSY;
	} else {
		list_add_tail(&ep->accept_node, &lep->acceptq);
		lep->nr_accept++;
	}
	spin_unlock_bh(&lep->lock);
	if (!ret)
		rdmx_ep_notify(lep);
	return ret;
}

/**
 * rdmx_ep_listen() - listen for channels to a service
 * @ep: a new endpoint
 * @uaddr: local address (any address allowed) and port (0: the default)
 * @service: the service name (see RDMX_SERVICE_LEN)
 * @backlog: channels waiting for accept at most; 0 for the default
 *
 * Context: process context.
 * Return: 0; -EINVAL for a bad name or an endpoint in use; -EADDRINUSE
 * when the service is taken on that address and port; or the listener's
 * error (-EADDRNOTAVAIL, -ENODEV, -ENOMEM).
 */
int rdmx_ep_listen(struct rdmx_ep *ep, const struct sockaddr *uaddr,
		   const char *service, unsigned int backlog)
{
	struct sockaddr_storage ss;
	struct sockaddr *addr = (struct sockaddr *)&ss;
	int ret;

	ret = rdmx_addr_prepare(&ss, uaddr);
	if (ret)
		return ret;
	if (!rdmx_service_name_valid(service, strnlen(service,
						      RDMX_SERVICE_LEN - 1) + 1) ||
	    !strcmp(service, RDMX_SERVICE_ECHO))
		return -EINVAL;
	mutex_lock(&ep->mutex);
	if (ep->state != RDMX_EP_NEW) {
		ret = -EINVAL;
		goto out;
	}
	ret = rdmx_listener_get(addr, false);
	if (ret)
		goto out;
	rdmx_addr_copy(&ep->listener, addr);
	rdmx_addr_copy(&ep->local, addr);
	strscpy(ep->service, service, sizeof(ep->service));
	ep->backlog = backlog ?: RDMX_CHAN_BACKLOG_DEFAULT;
	spin_lock_bh(&ep->lock);
	rdmx_ep_set_state(ep, RDMX_EP_LISTENING);
	spin_unlock_bh(&ep->lock);
	ret = rdmx_svc_add(ep);
	if (ret) {
		spin_lock_bh(&ep->lock);
		rdmx_ep_set_state(ep, RDMX_EP_NEW);
		spin_unlock_bh(&ep->lock);
		rdmx_listener_put(addr, false);
	}
out:
	mutex_unlock(&ep->mutex);
	return ret;
}
EXPORT_SYMBOL_GPL(rdmx_ep_listen);

static bool rdmx_ep_accept_ready(struct rdmx_ep *ep)
{
	bool ret;

	spin_lock_bh(&ep->lock);
	ret = !list_empty(&ep->acceptq) || ep->state != RDMX_EP_LISTENING;
	spin_unlock_bh(&ep->lock);
	return ret;
}

/**
 * rdmx_ep_accept() - take a channel from a listening endpoint
 * @ep: the listening endpoint
 * @nonblock: fail with -EAGAIN rather than wait
 *
 * Context: process context; may sleep.
 * Return: the connected endpoint (release it with rdmx_ep_release()), or
 * ERR_PTR(-EINVAL) when @ep is not listening, -EAGAIN, or -ERESTARTSYS.
 */
struct rdmx_ep *rdmx_ep_accept(struct rdmx_ep *ep, bool nonblock)
{
	struct rdmx_ep *nep;
	int ret;

	for (;;) {
		spin_lock_bh(&ep->lock);
		if (ep->state != RDMX_EP_LISTENING) {
			spin_unlock_bh(&ep->lock);
			return ERR_PTR(-EINVAL);
		}
		nep = list_first_entry_or_null(&ep->acceptq, struct rdmx_ep,
					       accept_node);
		if (nep) {
			list_del_init(&nep->accept_node);
			ep->nr_accept--;
			spin_unlock_bh(&ep->lock);
			return nep;
		}
		spin_unlock_bh(&ep->lock);
		if (nonblock)
			return ERR_PTR(-EAGAIN);
		ret = wait_event_interruptible(ep->wait,
					       rdmx_ep_accept_ready(ep));
		if (ret)
			return ERR_PTR(ret);
	}
}
EXPORT_SYMBOL_GPL(rdmx_ep_accept);

static bool rdmx_ep_connect_done(struct rdmx_ep *ep)
{
	return READ_ONCE(ep->state) != RDMX_EP_CONNECTING;
}

/**
 * rdmx_ep_connect() - open a channel to a service on a peer
 * @ep: a new endpoint
 * @uaddr: the peer's address and port (0: the default)
 * @service: the service name
 * @timeout_ms: give up after this long; 0 for the default
 *
 * Channels to the same address and port share one session.
 *
 * Context: process context; may sleep.
 * Return: 0; -EINVAL; -EISCONN when @ep is in use; -ECONNREFUSED when
 * nobody listens (on the host or for the service); -ETIMEDOUT;
 * -EHOSTUNREACH; -ENODEV; -ENOMEM; -EINTR.
 */
int rdmx_ep_connect(struct rdmx_ep *ep, const struct sockaddr *uaddr,
		    const char *service, unsigned int timeout_ms)
{
	struct sockaddr_storage ss;
	struct sockaddr *addr = (struct sockaddr *)&ss;
	struct rdmx_chan_open op;
	struct rdmx_sess *sess;
	unsigned long deadline;
	long left;
	int ret;

	if (!rdmx_service_name_valid(service, strnlen(service,
						      RDMX_SERVICE_LEN - 1) + 1))
		return -EINVAL;
	ret = rdmx_addr_prepare(&ss, uaddr);
	if (ret)
		return ret;
	if (!timeout_ms)
		timeout_ms = rdmx_params.connect_timeout_ms;
	deadline = jiffies + msecs_to_jiffies(timeout_ms);

	mutex_lock(&ep->mutex);
	if (ep->state != RDMX_EP_NEW) {
		ret = ep->state == RDMX_EP_LISTENING ? -EINVAL : -EISCONN;
		goto out_unlock;
	}
	strscpy(ep->service, service, sizeof(ep->service));
	/* A user's channels count against its share of the session. */
	if (test_bit(RDMX_EP_F_USER, &ep->flags) && !capable(CAP_NET_ADMIN)) {
		ep->uid = current_uid();
		set_bit(RDMX_EP_F_QUOTA, &ep->flags);
	}
	/* Connecting before it is in a session: a session error then sticks. */
	spin_lock_bh(&ep->lock);
	rdmx_ep_set_state(ep, RDMX_EP_CONNECTING);
	spin_unlock_bh(&ep->lock);
	do {
		/* A retry (-EAGAIN) gets what is left of the caller's time. */
		left = max_t(long, (long)deadline - (long)jiffies, 1);
		sess = rdmx_sess_connect_get(addr, jiffies_to_msecs(left));
		if (IS_ERR(sess)) {
			ret = PTR_ERR(sess);
			break;
		}
		ret = rdmx_sess_chan_add(sess, ep, -1);
		if (ret)
			rdmx_sess_put(sess);
	} while (ret == -EAGAIN && time_before(jiffies, deadline));
	if (ret) {
		spin_lock_bh(&ep->lock);
		rdmx_ep_set_state(ep, RDMX_EP_NEW);
		spin_unlock_bh(&ep->lock);
		goto out_unlock;
	}

	spin_lock_bh(&ep->lock);
	ep->sess = sess;	/* takes over the reference */
	rdmx_addr_copy(&ep->local, (struct sockaddr *)&sess->local);
	spin_unlock_bh(&ep->lock);

	rdmx_chan_open_pack(&op, ep->chan, service);
	ret = rdmx_sess_send_seq(sess, ep->lane, RDMX_MSG_OPEN, 0, &op,
				 sizeof(op), NULL, false, false);
	if (ret)
		goto out_fail;

	left = (long)deadline - (long)jiffies;
	left = wait_event_interruptible_timeout(ep->wait,
						rdmx_ep_connect_done(ep),
						max(left, 1L));
	spin_lock_bh(&ep->lock);
	if (ep->state == RDMX_EP_CONNECTED)
		ret = 0;
	else if (ep->state == RDMX_EP_ERROR)
		ret = -ep->error;
	else if (ep->state == RDMX_EP_CLOSED)
		ret = -ECONNRESET;
	else
		ret = left < 0 ? -EINTR : -ETIMEDOUT;
	spin_unlock_bh(&ep->lock);
	if (!ret)
		goto out_unlock;

out_fail:
	spin_lock_bh(&ep->lock);
	if (ep->state != RDMX_EP_ERROR)
		rdmx_ep_set_state(ep, RDMX_EP_ERROR);
	ep->error = -ret;
	spin_unlock_bh(&ep->lock);
	rdmx_sess_chan_del(sess, ep);
out_unlock:
	mutex_unlock(&ep->mutex);
	return ret;
}
EXPORT_SYMBOL_GPL(rdmx_ep_connect);

static int rdmx_ep_send_check(struct rdmx_ep *ep)
{
	switch (READ_ONCE(ep->state)) {
	case RDMX_EP_CONNECTED:
	case RDMX_EP_CLOSED:	/* the peer stopped sending, it may still read */
		return ep->broken || ep->shut_sent ? -EPIPE : 0;
	case RDMX_EP_SHUTDOWN:
		return -EPIPE;
	case RDMX_EP_ERROR:
		return -READ_ONCE(ep->error);
	default:
		return -ENOTCONN;
	}
}

/**
 * rdmx_ep_send_unlock() - let go of an endpoint's send_mutex
 * @ep: the endpoint
 *
 * The immediates of WRITE_IMMs that completed meanwhile only try the
 * mutex (rdmx_rma_imm_work()); they are kicked here.
 *
 * Context: process context, holding @ep->send_mutex.
 */
void rdmx_ep_send_unlock(struct rdmx_ep *ep)
{
	bool imm;

	mutex_unlock(&ep->send_mutex);
	spin_lock_bh(&ep->lock);
	imm = !list_empty(&ep->imm_reqs);
	spin_unlock_bh(&ep->lock);
	if (imm)
		rdmx_rma_imm_kick(ep);
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_ep_send_unlock);

/*
 * rdmx_ep_send(), or with @whole all of the message at once or nothing
 * (-EAGAIN), never waiting for the window (rdmx_sess_send_whole()).
 */
static int rdmx_ep_send_how(struct rdmx_ep *ep, struct iov_iter *from,
			    bool nonblock, bool whole)
{
	size_t len = iov_iter_count(from);
	int ret;

	if (len > RDMX_MSG_MAX)
		return -EMSGSIZE;
	mutex_lock(&ep->send_mutex);
	ret = rdmx_ep_send_check(ep);
	if (ret)
		goto out;
	if (whole)
		ret = rdmx_sess_send_whole(ep->sess, ep->lane, ep->rchan, from);
	else
		ret = rdmx_sess_send_seq(ep->sess, ep->lane, RDMX_MSG_DATA,
					 ep->rchan, NULL, len, from, true,
					 nonblock);
	if (ret == -EINTR)
		ep->broken = true;	/* cut short: the peer discards it */
	if (!ret) {
		spin_lock_bh(&ep->lock);
		ep->msgs_tx++;
		ep->bytes_tx += len;
		spin_unlock_bh(&ep->lock);
	}
out:
	rdmx_ep_send_unlock(ep);
	return ret;
}

/**
 * rdmx_ep_send() - send one message on a channel
 * @ep: the channel
 * @from: the message: all of it, 0 to RDMX_MSG_MAX bytes
 * @nonblock: fail with -EAGAIN rather than wait for the send window
 *
 * Returns once the message is queued on the session: it is then delivered
 * exactly once and in order, across reconnects, unless the session fails.
 *
 * Context: process context; may sleep.
 * Return: 0; -EMSGSIZE; -ENOTCONN; -EPIPE after a shutdown (either side);
 * -EAGAIN; -EINTR; -EFAULT; -ENOMEM; or the session's error
 * (-ECONNRESET, -ETIMEDOUT).
 */
int rdmx_ep_send(struct rdmx_ep *ep, struct iov_iter *from, bool nonblock)
{
	return rdmx_ep_send_how(ep, from, nonblock, false);
}
EXPORT_SYMBOL_GPL(rdmx_ep_send);

static bool rdmx_ep_readable(struct rdmx_ep *ep)
{
	u32 state = READ_ONCE(ep->state);

	return READ_ONCE(ep->rxq_len) || state == RDMX_EP_CLOSED ||
	       state == RDMX_EP_ERROR || state == RDMX_EP_NEW ||
	       state == RDMX_EP_LISTENING;
}

/* The first complete message: its last segment and length. */
static struct rdmx_rxseg *rdmx_ep_peek(struct rdmx_ep *ep, size_t *len)
{
	struct rdmx_rxseg *seg;

	lockdep_assert_held(&ep->lock);
	*len = 0;
	if (!ep->rxq_len)
		return NULL;
	list_for_each_entry(seg, &ep->rxq, node) {
		*len += rdmx_seg_bytes(seg);
		if (seg->len & RDMX_SEG_LAST)
			return seg;
	}
	WARN_ON_ONCE(1);
	return NULL;
}

/*
 * Take the first complete message (ending at @last, @len bytes) off the
 * queue into @segs, and give what its segments cost back to the session's
 * budget. Under ep->mutex, which keeps other readers off it.
 */
static void rdmx_ep_unlink_first(struct rdmx_ep *ep, struct rdmx_rxseg *last,
				 size_t len, struct list_head *segs)
{
	struct rdmx_rxseg *seg;
	size_t cost = 0;

	lockdep_assert_held(&ep->mutex);
	spin_lock_bh(&ep->lock);
	list_cut_position(segs, &ep->rxq, &last->node);
	ep->rxq_len--;
	ep->bytes_rx += len;
	spin_unlock_bh(&ep->lock);
	list_for_each_entry(seg, segs, node)
		cost += rdmx_seg_cost(seg);
	rdmx_sess_rx_consumed(ep->sess, cost);
}

/**
 * rdmx_ep_recvmsg() - receive one message, or an immediate, from a channel
 * @ep: the channel
 * @to: where to put a message; must hold all of it
 * @nonblock: fail with -EAGAIN rather than wait
 * @imm: out: whether what was received is a WRITE_IMM's immediate rather
 *	than a message (then 0 is returned and nothing is copied)
 * @value: out: the immediate
 *
 * Context: process context; may sleep.
 * Return: the message's length (0 is a valid, empty message);
 * -ENODATA at the end of the stream (the peer shut down and everything
 * was read); -EMSGSIZE when @to is too small (the message stays queued;
 * rdmx_ep_recv_len() says how long it is); -ENOTCONN; -EAGAIN;
 * -ERESTARTSYS; -EFAULT; or the channel's error (-ECONNRESET,
 * -ETIMEDOUT, -EPROTO).
 */
ssize_t rdmx_ep_recvmsg(struct rdmx_ep *ep, struct iov_iter *to,
			bool nonblock, bool *imm, u32 *value)
{
	struct rdmx_rxseg *last, *seg;
	LIST_HEAD(segs);
	size_t len;
	int ret;

	*imm = false;
	*value = 0;
	if (nonblock) {
		if (!mutex_trylock(&ep->mutex))
			return -EAGAIN;
	} else {
		ret = mutex_lock_interruptible(&ep->mutex);
		if (ret)
			return ret;
	}
	for (;;) {
		spin_lock_bh(&ep->lock);
		last = rdmx_ep_peek(ep, &len);
		if (last)
			break;
		switch (ep->state) {
		case RDMX_EP_CLOSED:
			ret = -ENODATA;
			break;
		case RDMX_EP_ERROR:
			ret = -ep->error;
			break;
		case RDMX_EP_NEW:
		case RDMX_EP_LISTENING:
			ret = -ENOTCONN;
			break;
		default:
			ret = nonblock ? -EAGAIN : 0;
			break;
		}
		spin_unlock_bh(&ep->lock);
		if (ret)
			goto out;
		ret = wait_event_interruptible(ep->wait, rdmx_ep_readable(ep));
		if (ret)
			goto out;
	}
	spin_unlock_bh(&ep->lock);

	if (last->len & RDMX_SEG_IMM) {
		*imm = true;
		*value = le32_to_cpu(((struct rdmx_imm *)last->data)->imm);
		rdmx_ep_unlink_first(ep, last, 0, &segs);
		rdmx_segs_free(&segs);
		ret = 0;
		goto out;
	}
	if (len > iov_iter_count(to)) {
		ret = -EMSGSIZE;
		goto out;
	}
	/* The segments of a complete message stay put: only readers unlink. */
	list_for_each_entry(seg, &ep->rxq, node) {
		size_t n = rdmx_seg_bytes(seg);

		if (copy_to_iter(seg->data, n, to) != n) {
			ret = -EFAULT;
			goto out;
		}
		if (seg == last)
			break;
	}
	rdmx_ep_unlink_first(ep, last, len, &segs);
	rdmx_segs_free(&segs);
	ret = len;
out:
	mutex_unlock(&ep->mutex);
	return ret;
}
EXPORT_SYMBOL_GPL(rdmx_ep_recvmsg);

/**
 * rdmx_ep_recv() - receive one message from a channel
 * @ep: the channel
 * @to: where to put it; must hold the whole message
 * @nonblock: fail with -EAGAIN rather than wait
 *
 * As rdmx_ep_recvmsg(), for users that make no use of WRITE_IMM: an
 * immediate reads as an empty message.
 *
 * Context: process context; may sleep.
 * Return: as rdmx_ep_recvmsg().
 */
ssize_t rdmx_ep_recv(struct rdmx_ep *ep, struct iov_iter *to, bool nonblock)
{
	bool imm;
	u32 value;

	return rdmx_ep_recvmsg(ep, to, nonblock, &imm, &value);
}
EXPORT_SYMBOL_GPL(rdmx_ep_recv);

/**
 * rdmx_ep_recv_len() - length of the next complete message
 * @ep: the channel
 *
 * Context: any context.
 * Return: its length, or -EAGAIN when none is queued.
 */
ssize_t rdmx_ep_recv_len(struct rdmx_ep *ep)
{
	ssize_t ret = -EAGAIN;
	size_t len;

	spin_lock_bh(&ep->lock);
	if (rdmx_ep_peek(ep, &len))
		ret = len;
	spin_unlock_bh(&ep->lock);
	return ret;
}

/**
 * rdmx_ep_shutdown() - close this side of a channel for sending
 * @ep: the channel
 *
 * The peer receives every message sent before, then the end of the stream.
 * Receiving continues until the peer shuts down too.
 *
 * Context: process context; may sleep.
 * Return: 0; -ENOTCONN when @ep is not a connected channel.
 */
int rdmx_ep_shutdown(struct rdmx_ep *ep)
{
	int ret = 0;

	mutex_lock(&ep->send_mutex);
	spin_lock_bh(&ep->lock);
	if (ep->state != RDMX_EP_CONNECTED && ep->state != RDMX_EP_CLOSED) {
		ret = ep->state == RDMX_EP_SHUTDOWN ? 0 : -ENOTCONN;
		spin_unlock_bh(&ep->lock);
		goto out;
	}
	if (ep->state == RDMX_EP_CONNECTED)
		rdmx_ep_set_state(ep, RDMX_EP_SHUTDOWN);
	spin_unlock_bh(&ep->lock);
	if (!ep->shut_sent) {
		ep->shut_sent = true;
		rdmx_sess_send_seq(ep->sess, ep->lane, RDMX_MSG_SHUT,
				   ep->rchan, NULL, 0, NULL, false, false);
	}
	wake_up_all(&ep->wait);
out:
	rdmx_ep_send_unlock(ep);
	return ret;
}
EXPORT_SYMBOL_GPL(rdmx_ep_shutdown);

/**
 * rdmx_ep_release() - close an endpoint and drop the owner's reference
 * @ep: the endpoint
 *
 * A listening endpoint stops listening and closes the channels nobody
 * accepted. A channel tells the peer (SHUT) after everything sent before.
 * Safe on an endpoint in any state.
 *
 * Context: process context; may sleep.
 */
void rdmx_ep_release(struct rdmx_ep *ep)
{
	struct rdmx_ep *nep, *tmp;
	LIST_HEAD(pending);
	u32 state;

	if (test_and_set_bit(RDMX_EP_F_RELEASED, &ep->flags))
		return;
	mutex_lock(&ep->mutex);
	mutex_lock(&ep->send_mutex);
	spin_lock_bh(&ep->lock);
	state = ep->state;
	if (state == RDMX_EP_LISTENING) {
		rdmx_ep_set_state(ep, RDMX_EP_NEW);
		list_splice_init(&ep->acceptq, &pending);
		ep->nr_accept = 0;
	}
	spin_unlock_bh(&ep->lock);

	if (state == RDMX_EP_LISTENING) {
		rdmx_svc_del(ep);
		rdmx_listener_put((struct sockaddr *)&ep->listener, false);
	} else if (ep->sess) {
		if (ep->rchan && !ep->shut_sent &&
		    (state == RDMX_EP_CONNECTED || state == RDMX_EP_CLOSED)) {
			ep->shut_sent = true;
			rdmx_sess_send_seq(ep->sess, ep->lane, RDMX_MSG_SHUT,
					   ep->rchan, NULL, 0, NULL, false,
					   false);
		}
		rdmx_sess_chan_del(ep->sess, ep);
	}
	rdmx_ep_send_unlock(ep);
	mutex_unlock(&ep->mutex);

	/* Its regions' keys die with it; its unread events too. */
	rdmx_mr_dereg_all(ep);
	rdmx_ep_events_free(ep);

	list_for_each_entry_safe(nep, tmp, &pending, accept_node) {
		list_del_init(&nep->accept_node);
		rdmx_ep_release(nep);
	}
	/* A callback already running finishes before this returns. */
	if (current_work() != &ep->notify_work)
		flush_work(&ep->notify_work);
	kref_put(&ep->ref, rdmx_ep_kref_release);
}
EXPORT_SYMBOL_GPL(rdmx_ep_release);

/* ---- the built-in echo service ------------------------------------------ */

#define RDMX_ECHO_MAX_SEGS	(RDMX_MSG_MAX / RDMX_SEG_SIZE + 1)
/* A full send window is tried again after 1 ms, doubling up to this. */
#define RDMX_ECHO_RETRY_MAX_MS	1000

/**
 * struct rdmx_echo - an echo channel's own state (its endpoint's priv)
 * @ep: the channel
 * @retry: notifies @ep again once a message found the send window full
 * @backoff_ms: the last delay of @retry, 0 after a message went out
 * @kv: room to point at every segment of a message
 */
struct rdmx_echo {
	struct rdmx_ep *ep;
	struct delayed_work retry;
	unsigned int backoff_ms;
	struct kvec kv[RDMX_ECHO_MAX_SEGS];
};

static void rdmx_echo_retry(struct work_struct *work)
{
	struct rdmx_echo *e = container_of(to_delayed_work(work),
					   struct rdmx_echo, retry);

	rdmx_ep_notify(e->ep);
}

/*
 * Echo every complete message, in order, from the shared workqueue: so
 * it never waits for the send window, which a peer that withholds its
 * acknowledgments keeps full. A message the window has no room for stays
 * queued (and charged to the session's receive budget, so the peer's
 * sending stops too) and is tried again later.
 */
static void rdmx_echo_data_ready(struct rdmx_ep *ep, void *priv)
{
	struct rdmx_echo *e = priv;
	struct rdmx_rxseg *last, *seg;
	struct iov_iter it;
	LIST_HEAD(segs);
	unsigned int n;
	size_t len;
	bool done;
	int ret;

	mutex_lock(&ep->mutex);
	for (;;) {
		spin_lock_bh(&ep->lock);
		last = rdmx_ep_peek(ep, &len);
		done = !last && (ep->state == RDMX_EP_CLOSED ||
				 ep->state == RDMX_EP_ERROR);
		spin_unlock_bh(&ep->lock);
		if (!last)
			break;
		/* An immediate is not echoed. */
		if (!(last->len & RDMX_SEG_IMM)) {
			/* A complete message's segments stay put (recvmsg). */
			n = 0;
			list_for_each_entry(seg, &ep->rxq, node) {
				e->kv[n].iov_base = seg->data;
				e->kv[n++].iov_len = rdmx_seg_bytes(seg);
				if (seg == last)
					break;
			}
			iov_iter_kvec(&it, ITER_SOURCE, e->kv, n, len);
			ret = rdmx_ep_send_how(ep, &it, true, true);
			if (ret == -EAGAIN) {
				e->backoff_ms = clamp(e->backoff_ms * 2, 1U,
						      RDMX_ECHO_RETRY_MAX_MS);
				queue_delayed_work(rdmx_wq, &e->retry,
						   msecs_to_jiffies(e->backoff_ms));
				break;
			}
			e->backoff_ms = 0;
		}
		rdmx_ep_unlink_first(ep, last, len, &segs);
		rdmx_segs_free(&segs);
		INIT_LIST_HEAD(&segs);
	}
	mutex_unlock(&ep->mutex);
	if (done) {
		cancel_delayed_work_sync(&e->retry);
		rdmx_ep_release(ep);
		kfree(e);
	}
}

static const struct rdmx_ep_ops rdmx_echo_ops = {
	.data_ready = rdmx_echo_data_ready,
};

/**
 * rdmx_echo_open() - a peer opened the built-in echo service
 * @sess: the session
 * @rchan: the peer's channel id
 * @lane: the lane the peer opened it on
 * @out: the new channel
 *
 * Context: process context.
 * Return: 0 or a negative errno.
 */
int rdmx_echo_open(struct rdmx_sess *sess, u32 rchan, unsigned int lane,
		   struct rdmx_ep **out)
{
	struct rdmx_echo *e;
	struct rdmx_ep *ep;
	int ret;

	e = kzalloc(sizeof(*e), GFP_KERNEL);
	if (!e)
		return -ENOMEM;
	ep = rdmx_ep_new_chan(sess, rchan, RDMX_SERVICE_ECHO);
	if (!ep) {
		kfree(e);
		return -ENOMEM;
	}
	e->ep = ep;
	INIT_DELAYED_WORK(&e->retry, rdmx_echo_retry);
	ep->ops = &rdmx_echo_ops;
	ep->priv = e;
	ret = rdmx_sess_chan_add(sess, ep, lane);
	if (ret) {
		kref_put(&ep->ref, rdmx_ep_kref_release);
		kfree(e);
		return ret;
	}
	*out = ep;
	return 0;
}
