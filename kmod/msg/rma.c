// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx one-sided operations: READ, WRITE, WRITE_IMM, compare-and-swap and
 * fetch-and-add against a peer's registered region.
 *
 * An operation is checked against its token (bounds, rights, alignment)
 * before anything is posted, then cut into pieces: one per remote key (a
 * region chunk) and at most RDMX_RMA_PIECE_PAGES pages of local memory.
 * Each piece is one rdma_rw context, which splits it further to the
 * device's SGE limits and, on iWARP, registers READ sinks with remote
 * write access. Pieces are posted on the live connection of the session's
 * lane 0 under sess->mutex, within a send-queue budget of their own
 * (conn->rma_wrs), and complete from the CQ's workqueue.
 *
 * WRITE_IMM is a WRITE followed, once it completed, by an RDMX_MSG_IMMED on
 * the channel: the immediate then reaches the peer's RECV after the data
 * is in place, in order with the channel's messages, and survives a
 * reconnect like any message. It needs no receive-side verbs support, so
 * it works on iWARP too.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/highmem.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include "rma.h"

/**
 * rdmx_wc_errno() - the errno an operation reports for a failed completion
 * @status: the work completion's status
 *
 * Context: any context.
 * Return: a negative errno.
 */
static int rdmx_wc_errno(enum ib_wc_status status)
{
	switch (status) {
	case IB_WC_SUCCESS:
		return 0;
	case IB_WC_REM_ACCESS_ERR:
	case IB_WC_LOC_PROT_ERR:
		return -EACCES;
	case IB_WC_REM_INV_REQ_ERR:
		return -EINVAL;
	case IB_WC_WR_FLUSH_ERR:
	case IB_WC_RETRY_EXC_ERR:
	case IB_WC_RNR_RETRY_EXC_ERR:
		return -ECONNRESET;
	default:
		return -EIO;
	}
}

static bool rdmx_rma_conn_ready(struct rdmx_sess *sess, u32 wrs)
{
	struct rdmx_conn *conn;
	bool ret;

	spin_lock_bh(&sess->lock);
	conn = sess->lanes[0].conn;
	ret = sess->state == RDMX_SESS_CLOSING ||
	      sess->state == RDMX_SESS_CLOSED ||
	      (conn && conn->state == RDMX_CONN_LIVE &&
	       conn->rma_posted + wrs <= conn->rma_wrs);
	spin_unlock_bh(&sess->lock);
	return ret;
}

/**
 * rdmx_rma_get_conn() - a live connection with send queue room
 * @sess: the session
 * @connp: out: the connection
 * @wrs: send queue entries to reserve on it
 * @wait: wait for one; else -EAGAIN when there is none at once
 *
 * On success sess->mutex is held, so the connection's QP stays until the
 * caller has posted and unlocked; the entries are the caller's until
 * rdmx_rma_conn_wrs_put().
 *
 * Context: process context; may sleep.
 * Return: 0; -EAGAIN; -EINTR; -EOPNOTSUPP (the device left no send queue
 * room for one-sided work); -EIO (@wrs never fits); or the session's error
 * once it closed.
 */
int rdmx_rma_get_conn(struct rdmx_sess *sess, struct rdmx_conn **connp,
		      u32 wrs, bool wait)
{
	struct rdmx_conn *conn;
	int ret;

	for (;;) {
		if (!wait) {
			/* A teardown holding it may wait for the link. */
			if (!mutex_trylock(&sess->mutex))
				return -EAGAIN;
		} else if (mutex_lock_interruptible(&sess->mutex)) {
			return -EINTR;
		}
		spin_lock_bh(&sess->lock);
		conn = sess->lanes[0].conn;
		if (sess->state == RDMX_SESS_CLOSING ||
		    sess->state == RDMX_SESS_CLOSED) {
			ret = sess->error ? -sess->error : -ECONNRESET;
			spin_unlock_bh(&sess->lock);
			mutex_unlock(&sess->mutex);
			return ret;
		}
		if (conn && conn->state == RDMX_CONN_LIVE) {
			if (!conn->rma_wrs || wrs > conn->rma_wrs) {
				/* No room for them at all, or never enough. */
				ret = conn->rma_wrs ? -EIO : -EOPNOTSUPP;
				spin_unlock_bh(&sess->lock);
				mutex_unlock(&sess->mutex);
				return ret;
			}
			if (conn->rma_posted + wrs <= conn->rma_wrs) {
				rdmx_conn_sq_posting(conn);
				conn->rma_posted += wrs;
				spin_unlock_bh(&sess->lock);
				*connp = conn;
				return 0;
			}
		}
		spin_unlock_bh(&sess->lock);
		mutex_unlock(&sess->mutex);
		if (!wait)
			return -EAGAIN;
		if (wait_event_interruptible(sess->wait,
					     rdmx_rma_conn_ready(sess, wrs)))
			return -EINTR;
	}
}

static void __rdmx_rma_conn_wrs_put(struct rdmx_sess *sess,
				    struct rdmx_conn *conn, u32 wrs,
				    bool completed)
{
	if (!wrs)
		return;
	spin_lock_bh(&sess->lock);
	conn->rma_posted -= wrs;
	if (completed)
		conn->sq_stamp = jiffies;
	spin_unlock_bh(&sess->lock);
	wake_up_all(&sess->wait);
}

/**
 * rdmx_rma_conn_wrs_put() - give back send queue entries not posted
 * @sess: the session
 * @conn: the connection they were reserved on
 * @wrs: how many
 *
 * @conn must still exist: the caller holds sess->mutex (which a teardown
 * takes before it frees a connection), or runs in the completion of a work
 * request posted on @conn (which the teardown's drain waits for).
 *
 * Context: any context but under sess->lock.
 */
void rdmx_rma_conn_wrs_put(struct rdmx_sess *sess, struct rdmx_conn *conn,
			   u32 wrs)
{
	__rdmx_rma_conn_wrs_put(sess, conn, wrs, false);
}

/**
 * rdmx_rma_conn_wrs_done() - give back send queue entries that completed
 * @sess: the session
 * @conn: the connection they were posted on
 * @wrs: how many
 *
 * As rdmx_rma_conn_wrs_put(), and the send queue made progress: see
 * rdmx_conn_sq_posting().
 *
 * Context: any context but under sess->lock.
 */
void rdmx_rma_conn_wrs_done(struct rdmx_sess *sess, struct rdmx_conn *conn,
			    u32 wrs)
{
	__rdmx_rma_conn_wrs_put(sess, conn, wrs, true);
}

/* ---- completion ---------------------------------------------------------- */

static void rdmx_rma_req_finish(struct rdmx_rma_req *req)
{
	struct rdmx_ep *ep = req->ep;
	struct rdmx_rma_batch *batch = req->batch;

	if (req->opcode == RDMX_RMA_CMP_SWAP ||
	    req->opcode == RDMX_RMA_FETCH_ADD) {
		if (!req->status) {
			/* The 8-byte aligned word lies in one page. */
			void *p = kmap_local_page(req->lmem.pages[0]);

			req->event.value = *(u64 *)(p + req->lmem.offset);
			kunmap_local(p);
		}
	}
	rdmx_lmem_release(&req->lmem);

	if (batch) {
		WRITE_ONCE(batch->done_ns, ktime_get_ns());
		if (atomic_dec_and_test(&batch->pending))
			complete(&batch->done);
		return;
	}
	req->event.type = RDMX_EVENT_RMA_DONE;
	req->event.status = req->status;
	req->event.opcode = req->opcode;
	spin_lock_bh(&ep->lock);
	if (test_bit(RDMX_EP_F_RELEASED, &ep->flags)) {
		/* Nobody will read it. */
		ep->rma_async--;
		spin_unlock_bh(&ep->lock);
		rdmx_rma_req_free(req);
		return;
	}
	list_add_tail(&req->node, &ep->events);
	ep->nr_events++;
	spin_unlock_bh(&ep->lock);
	wake_up_interruptible_poll(&ep->wait, EPOLLPRI);
}

/* Send a WRITE_IMM's immediate; under @ep->send_mutex. */
static int rdmx_rma_imm_send(struct rdmx_ep *ep, struct rdmx_rma_req *req)
{
	struct rdmx_imm imm = { .imm = cpu_to_le32(req->imm) };

	lockdep_assert_held(&ep->send_mutex);
	switch (READ_ONCE(ep->state)) {
	case RDMX_EP_CONNECTED:
	case RDMX_EP_CLOSED:
		if (ep->shut_sent)
			return -EPIPE;
		break;
	case RDMX_EP_ERROR:
		return -READ_ONCE(ep->error);
	default:
		return -EPIPE;
	}
	/* Queued beyond the window: an immediate is small and bounded. */
	return rdmx_sess_send_seq(ep->sess, ep->lane, RDMX_MSG_IMMED,
				  ep->rchan, &imm, sizeof(imm), NULL, false,
				  false);
}

/**
 * rdmx_rma_imm_work() - send the immediates of an endpoint's WRITE_IMMs
 * @work: the endpoint's @imm_work
 *
 * In the order their writes completed, one endpoint at a time. It only
 * tries @send_mutex: a sender may hold it while it waits for the peer's
 * window, and a worker that waited too would hold up every other
 * endpoint's immediates behind one peer. The holder kicks the work again
 * when it lets go (rdmx_ep_send_unlock()). Drops the reference
 * rdmx_rma_imm_kick() took.
 *
 * Context: process context (rdmx_imm_wq).
 */
void rdmx_rma_imm_work(struct work_struct *work)
{
	struct rdmx_ep *ep = container_of(work, struct rdmx_ep, imm_work);
	struct rdmx_rma_req *req;

	while (mutex_trylock(&ep->send_mutex)) {
		spin_lock_bh(&ep->lock);
		req = list_first_entry_or_null(&ep->imm_reqs,
					       struct rdmx_rma_req, node);
		if (req)
			list_del_init(&req->node);
		spin_unlock_bh(&ep->lock);
		if (req)
			req->status = rdmx_rma_imm_send(ep, req);
		mutex_unlock(&ep->send_mutex);
		if (!req)
			break;
		rdmx_rma_req_finish(req);
	}
	kref_put(&ep->ref, rdmx_ep_kref_release);
}

/**
 * rdmx_rma_imm_kick() - have an endpoint's waiting immediates sent
 * @ep: the endpoint; the caller holds a reference
 *
 * Context: any context.
 */
void rdmx_rma_imm_kick(struct rdmx_ep *ep)
{
	kref_get(&ep->ref);
	if (!queue_work(rdmx_imm_wq, &ep->imm_work))
		kref_put(&ep->ref, rdmx_ep_kref_release);	/* not the last */
}

static void rdmx_rma_req_done(struct rdmx_rma_req *req)
{
	struct rdmx_ep *ep = req->ep;

	if (req->opcode == RDMX_RMA_WRITE_IMM && !req->status) {
		/* Immediates go out in the order their writes completed. */
		spin_lock_bh(&ep->lock);
		list_add_tail(&req->node, &ep->imm_reqs);
		spin_unlock_bh(&ep->lock);
		rdmx_rma_imm_kick(ep);
		return;
	}
	rdmx_rma_req_finish(req);
}

/**
 * rdmx_rma_done_work() - complete the operations an endpoint's completion
 *	handler left for process context
 * @work: the endpoint's @rma_done_work
 *
 * In the order their last pieces completed. Drops the reference
 * rdmx_rma_req_put() took for it.
 *
 * Context: process context (rdmx_wq).
 */
void rdmx_rma_done_work(struct work_struct *work)
{
	struct rdmx_ep *ep = container_of(work, struct rdmx_ep, rma_done_work);
	struct rdmx_rma_req *req;

	spin_lock_bh(&ep->lock);
	while ((req = list_first_entry_or_null(&ep->rma_done,
					       struct rdmx_rma_req, node))) {
		list_del_init(&req->node);
		spin_unlock_bh(&ep->lock);
		rdmx_rma_req_done(req);
		spin_lock_bh(&ep->lock);
	}
	ep->rma_done_busy = false;
	spin_unlock_bh(&ep->lock);
	kref_put(&ep->ref, rdmx_ep_kref_release);
}

/*
 * Drop one count of @req->pending; the last completes it. A completion
 * handler (@softirq) completes at once only a synchronous operation on
 * kernel memory, and nobody while others wait before it: a user's pages
 * are unpinned, and an asynchronous operation's event may hold its
 * endpoint's last reference, only in process context.
 */
static void rdmx_rma_req_put(struct rdmx_rma_req *req, bool softirq)
{
	struct rdmx_ep *ep = req->ep;
	bool kick;

	if (!atomic_dec_and_test(&req->pending))
		return;
	spin_lock_bh(&ep->lock);
	if (!ep->rma_done_busy &&
	    (!softirq || (req->batch && !req->lmem.user))) {
		spin_unlock_bh(&ep->lock);
		rdmx_rma_req_done(req);
		return;
	}
	list_add_tail(&req->node, &ep->rma_done);
	kick = !ep->rma_done_busy;
	ep->rma_done_busy = true;
	spin_unlock_bh(&ep->lock);
	if (kick) {
		kref_get(&ep->ref);
		queue_work(rdmx_wq, &ep->rma_done_work);
	}
}

/*
 * The scatter table of a READ or WRITE piece: one within a page takes the
 * entry embedded in it, a longer one an allocated table.
 */
static int rdmx_rma_piece_sgt(struct rdmx_rma_piece *p, u64 done)
{
	const struct rdmx_lmem *lm = &p->req->lmem;
	u64 pos = lm->offset + done;

	if (offset_in_page(pos) + p->len > PAGE_SIZE)
		return rdmx_lmem_sgt(lm, done, p->len, &p->sgt);
	sg_init_table(&p->sg, 1);
	sg_set_page(&p->sg, lm->pages[pos >> PAGE_SHIFT], p->len,
		    offset_in_page(pos));
	p->sgt.sgl = &p->sg;
	p->sgt.nents = 1;
	p->sgt.orig_nents = 1;
	return 0;
}

static void rdmx_rma_piece_sgt_free(struct rdmx_rma_piece *p)
{
	if (p->sgt.sgl != &p->sg)
		sg_free_table(&p->sgt);
	p->sgt.sgl = NULL;
}

/* Free a piece, unless it is its operation's own first. */
static void rdmx_rma_piece_kfree(struct rdmx_rma_piece *p)
{
	if (p != &p->req->first)
		kfree(p);
}

/* Free a piece once its work requests completed. */
static void rdmx_rma_piece_free(struct rdmx_rma_piece *p)
{
	struct rdmx_conn *conn = p->conn;

	if (p->atomic) {
		ib_dma_unmap_page(conn->cm_id->device, p->dma, sizeof(u64),
				  DMA_FROM_DEVICE);
	} else {
		rdma_rw_ctx_destroy(&p->ctx, conn->qp, conn->cm_id->port_num,
				    p->sgt.sgl, p->sgt.orig_nents, p->dir);
		rdmx_rma_piece_sgt_free(p);
	}
	rdmx_rma_piece_kfree(p);
}

static void rdmx_rma_piece_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rdmx_rma_piece *p = container_of(wc->wr_cqe,
						struct rdmx_rma_piece, cqe);
	struct rdmx_rma_req *req = p->req;
	struct rdmx_conn *conn = p->conn;
	struct rdmx_sess *sess = conn->sess;
	u32 wrs = p->wrs;

	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		/* The QP is in error: the session layer reconnects. */
		rdmx_sess_wc_failed(sess, p->atomic ? "atomic" :
				    p->dir == DMA_FROM_DEVICE ? "read" :
				    "write", wc);
		spin_lock_bh(&sess->lock);
		rdmx_sess_conn_fail(conn, -EIO);
		spin_unlock_bh(&sess->lock);
		cmpxchg(&req->status, 0, rdmx_wc_errno(wc->status));
	} else {
		spin_lock_bh(&sess->lock);
		rdmx_sess_peer_alive(sess);
		spin_unlock_bh(&sess->lock);
	}
	rdmx_rma_piece_free(p);
	rdmx_rma_conn_wrs_done(sess, conn, wrs);
	rdmx_rma_req_put(req, true);
}

/* ---- submission ---------------------------------------------------------- */

/*
 * Post one READ or WRITE piece. On failure nothing of it is posted and the
 * caller frees its table and the piece (rdmx_rma_piece_kfree()).
 */
static int rdmx_rma_post_rw(struct rdmx_rma_req *req, struct rdmx_rma_piece *p)
{
	struct rdmx_sess *sess = req->ep->sess;
	struct rdmx_conn *conn;
	u32 port;
	bool fits;
	int ret;

	for (;;) {
		ret = rdmx_rma_get_conn(sess, &conn, 0, true);
		if (ret)
			return ret;
		port = conn->cm_id->port_num;
		ret = rdma_rw_ctx_init(&p->ctx, conn->qp, port, p->sgt.sgl,
				       p->sgt.orig_nents, 0, p->raddr, p->rkey,
				       p->dir);
		if (ret == -EAGAIN) {
			/* The QP's MR pool is empty: completions refill it. */
			mutex_unlock(&sess->mutex);
			if (schedule_timeout_interruptible(1) &&
			    signal_pending(current))
				return -EINTR;
			continue;
		}
		if (ret < 0) {
			mutex_unlock(&sess->mutex);
			return ret;
		}
		p->wrs = ret;
		spin_lock_bh(&sess->lock);
		fits = conn->rma_posted + p->wrs <= conn->rma_wrs;
		if (fits) {
			rdmx_conn_sq_posting(conn);
			conn->rma_posted += p->wrs;
		}
		spin_unlock_bh(&sess->lock);
		if (fits)
			break;
		rdma_rw_ctx_destroy(&p->ctx, conn->qp, port, p->sgt.sgl,
				    p->sgt.orig_nents, p->dir);
		/* Unlocked, @conn may be freed: decided before. */
		ret = p->wrs > conn->rma_wrs ? -EIO : 0;
		mutex_unlock(&sess->mutex);
		if (ret)
			return ret;
		if (wait_event_interruptible(sess->wait,
					     rdmx_rma_conn_ready(sess, p->wrs)))
			return -EINTR;
	}
	p->conn = conn;
	p->cqe.done = rdmx_rma_piece_done;
	atomic_inc(&req->pending);
	ret = rdma_rw_ctx_post(&p->ctx, conn->qp, port, &p->cqe, NULL);
	if (ret) {
		atomic_dec(&req->pending);
		rdma_rw_ctx_destroy(&p->ctx, conn->qp, port, p->sgt.sgl,
				    p->sgt.orig_nents, p->dir);
		/* Under the mutex: once it is dropped @conn may be freed. */
		rdmx_rma_conn_wrs_put(sess, conn, p->wrs);
	}
	mutex_unlock(&sess->mutex);
	return ret;
}

/*
 * Post one atomic. On failure nothing of it is posted, its word is not
 * mapped, and the caller frees the piece (rdmx_rma_piece_kfree()).
 */
static int rdmx_rma_post_atomic(struct rdmx_rma_req *req,
				struct rdmx_rma_piece *p, u64 compare_add,
				u64 swap)
{
	struct rdmx_sess *sess = req->ep->sess;
	struct ib_atomic_wr wr = {};
	struct ib_device *ibdev;
	struct rdmx_conn *conn;
	struct ib_sge sge;
	int ret;

	ret = rdmx_rma_get_conn(sess, &conn, 1, true);
	if (ret)
		return ret;
	ibdev = conn->cm_id->device;
	/* The 8-byte aligned word lies in one page: no scatter table. */
	p->dma = ib_dma_map_page(ibdev, req->lmem.pages[0], req->lmem.offset,
				 sizeof(u64), DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(ibdev, p->dma)) {
		/* Under the mutex: once it is dropped @conn may be freed. */
		rdmx_rma_conn_wrs_put(sess, conn, 1);
		mutex_unlock(&sess->mutex);
		return -ENOMEM;
	}
	p->conn = conn;
	p->wrs = 1;
	sge.addr = p->dma;
	sge.length = sizeof(u64);
	sge.lkey = conn->pd->local_dma_lkey;
	p->cqe.done = rdmx_rma_piece_done;
	wr.wr.wr_cqe = &p->cqe;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.wr.opcode = req->opcode == RDMX_RMA_CMP_SWAP ?
		       IB_WR_ATOMIC_CMP_AND_SWP : IB_WR_ATOMIC_FETCH_AND_ADD;
	wr.remote_addr = p->raddr;
	wr.rkey = p->rkey;
	wr.compare_add = compare_add;
	wr.swap = swap;
	atomic_inc(&req->pending);
	ret = ib_post_send(conn->qp, &wr.wr, NULL);
	if (ret) {
		atomic_dec(&req->pending);
		ib_dma_unmap_page(ibdev, p->dma, sizeof(u64), DMA_FROM_DEVICE);
		rdmx_rma_conn_wrs_put(sess, conn, 1);
	}
	mutex_unlock(&sess->mutex);
	return ret;
}

/*
 * Cut an operation into pieces and post them. On error, pieces already
 * posted still complete; the operation reports the error.
 */
static int rdmx_rma_post(struct rdmx_rma_req *req, const struct rdmx_token *t,
			 u64 off, u64 compare_add, u64 swap)
{
	u64 done = 0, len = req->lmem.len;
	struct rdmx_rma_piece *p;
	u64 room, plen;
	int ret;

	while (done < len) {
		/* The first is @req's own, zeroed with it. */
		p = done ? kzalloc(sizeof(*p), GFP_KERNEL) : &req->first;
		if (!p)
			return -ENOMEM;
		p->req = req;
		p->len = rdmx_token_piece(t, off + done, len - done, &p->rkey,
					  &p->raddr);
		/* At most RDMX_RMA_PIECE_PAGES pages of local memory. */
		room = (u64)RDMX_RMA_PIECE_PAGES * PAGE_SIZE -
		       offset_in_page(req->lmem.offset + done);
		p->len = min(p->len, room);
		/*
		 * siw sends a payload of up to 32 bytes through
		 * siw_try_1seg(), which copies the wrong bytes when its
		 * source crosses a page boundary (Linux 6.12 at least): cut
		 * a small READ where the peer's 4 KiB boundary falls, which
		 * is where any of its page boundaries falls. Cheap and rare,
		 * so done on every transport.
		 */
		if (req->opcode == RDMX_RMA_READ &&
		    p->len <= RDMX_RMA_SMALL_READ)
			p->len = min(p->len, SZ_4K - (p->raddr & (SZ_4K - 1)));
		/* Once posted, @p is its completion's, which frees it. */
		plen = p->len;
		if (req->opcode == RDMX_RMA_CMP_SWAP ||
		    req->opcode == RDMX_RMA_FETCH_ADD) {
			p->atomic = true;
			ret = rdmx_rma_post_atomic(req, p, compare_add, swap);
		} else {
			p->dir = req->opcode == RDMX_RMA_READ ?
				 DMA_FROM_DEVICE : DMA_TO_DEVICE;
			ret = rdmx_rma_piece_sgt(p, done);
			if (!ret)
				ret = rdmx_rma_post_rw(req, p);
			if (ret)
				rdmx_rma_piece_sgt_free(p);
		}
		if (ret) {
			rdmx_rma_piece_kfree(p);
			return ret;
		}
		done += plen;
	}
	return 0;
}

/**
 * rdmx_rma_submit() - check and start one operation
 * @ep: a connected endpoint
 * @batch: the synchronous batch it belongs to, or NULL for asynchronous
 * @opcode: RDMX_RMA_*
 * @imm: WRITE_IMM's immediate
 * @t: the peer's token, parsed
 * @off: region offset
 * @lmem: local memory (taken over, even on failure): the atomics' 8-byte
 *	result word, 8-byte aligned; READ's destination; WRITE's source;
 *	none for a zero-length WRITE_IMM
 * @compare_add: the atomics' operand
 * @swap: CMP_SWAP's new value
 * @user_data: reported with an asynchronous completion
 * @reqp: out: the operation, completing later
 *
 * Context: process context; may sleep.
 * Return: 0 when started (its status comes with its completion), or a
 * negative errno when nothing was started: -EINVAL, -ERANGE, -EACCES,
 * -EOPNOTSUPP, -ENOTCONN, -ENOMEM, -EINTR, or the session's error. An
 * error after part was posted is reported as the operation's status.
 */
int rdmx_rma_submit(struct rdmx_ep *ep, struct rdmx_rma_batch *batch,
		    u32 opcode, u32 imm, const struct rdmx_token *t,
		    u64 off, struct rdmx_lmem *lmem, u64 compare_add, u64 swap,
		    u64 user_data, struct rdmx_rma_req **reqp)
{
	struct rdmx_sess *sess = ep->sess;
	struct rdmx_rma_req *req;
	u8 need;
	int ret;

	switch (opcode) {
	case RDMX_RMA_READ:
		need = RDMX_TOKEN_READ;
		break;
	case RDMX_RMA_WRITE:
	case RDMX_RMA_WRITE_IMM:
		need = RDMX_TOKEN_WRITE;
		break;
	case RDMX_RMA_CMP_SWAP:
	case RDMX_RMA_FETCH_ADD:
		need = RDMX_TOKEN_ATOMIC;
		break;
	default:
		ret = -EINVAL;
		goto out_release;
	}
	/*
	 * First what this side cannot do: a peer that did not grant
	 * one-sided access, or, for atomics, a device without them.
	 */
	spin_lock_bh(&sess->lock);
	if (!(sess->features & RDMX_PROTO_F_RMA))
		ret = -EOPNOTSUPP;
	else if (need != RDMX_TOKEN_ATOMIC)
		ret = 0;
	else if (!sess->xpd)
		ret = -ENOTCONN;
	else if (sess->xpd->pd->device->attrs.atomic_cap == IB_ATOMIC_NONE)
		ret = -EOPNOTSUPP;
	else
		ret = 0;
	spin_unlock_bh(&sess->lock);
	if (ret)
		goto out_release;
	ret = rdmx_token_check(t, off, lmem->len, need);
	if (ret)
		goto out_release;
	if (need == RDMX_TOKEN_ATOMIC) {
		ret = -EINVAL;
		if (lmem->len != sizeof(u64) || ((t->iova + off) & 7) ||
		    (lmem->offset & 7))
			goto out_release;
	} else if (!lmem->len && opcode != RDMX_RMA_WRITE_IMM) {
		ret = -EINVAL;
		goto out_release;
	}

	req = kzalloc(sizeof(*req), GFP_KERNEL);
	if (!req) {
		ret = -ENOMEM;
		goto out_release;
	}
	if (!batch) {
		spin_lock_bh(&ep->lock);
		ret = ep->rma_async >= RDMX_RMA_ASYNC_MAX ? -EAGAIN : 0;
		if (!ret)
			ep->rma_async++;
		spin_unlock_bh(&ep->lock);
		if (ret) {
			kfree(req);
			goto out_release;
		}
	}
	kref_get(&ep->ref);
	req->ep = ep;
	req->batch = batch;
	req->opcode = opcode;
	req->imm = imm;
	req->lmem = *lmem;	/* takes over the pages and their charge */
	lmem->pages = NULL;
	lmem->mm = NULL;
	req->event.user_data = user_data;
	INIT_LIST_HEAD(&req->node);
	atomic_set(&req->pending, 1);	/* dropped below, after posting */
	if (batch)
		atomic_inc(&batch->pending);

	ret = rdmx_rma_post(req, t, off, compare_add, swap);
	if (ret)
		cmpxchg(&req->status, 0, ret);
	*reqp = req;
	rdmx_rma_req_put(req, false);
	return 0;

out_release:
	rdmx_lmem_release(lmem);
	return ret;
}

/**
 * rdmx_rma_req_free() - free a completed operation
 * @req: the operation
 *
 * Context: process context.
 */
void rdmx_rma_req_free(struct rdmx_rma_req *req)
{
	kref_put(&req->ep->ref, rdmx_ep_kref_release);
	kfree(req);
}

/**
 * rdmx_ep_events_take() - take completion events of asynchronous operations
 * @ep: the endpoint
 * @out: room for @room events
 * @room: at least 1
 * @nonblock: -EAGAIN rather than wait for the first
 *
 * Context: process context; may sleep.
 * Return: events taken, or -EAGAIN, -ERESTARTSYS.
 */
int rdmx_ep_events_take(struct rdmx_ep *ep, struct rdmx_event *out,
			unsigned int room, bool nonblock)
{
	struct rdmx_rma_req *req;
	unsigned int n = 0;
	LIST_HEAD(taken);
	int ret;

	for (;;) {
		spin_lock_bh(&ep->lock);
		while (n < room && !list_empty(&ep->events)) {
			req = list_first_entry(&ep->events, struct rdmx_rma_req,
					       node);
			list_move_tail(&req->node, &taken);
			ep->nr_events--;
			ep->rma_async--;
			out[n++] = req->event;
		}
		spin_unlock_bh(&ep->lock);
		if (n)
			break;
		if (nonblock)
			return -EAGAIN;
		ret = wait_event_interruptible(ep->wait,
					       READ_ONCE(ep->nr_events));
		if (ret)
			return ret;
	}
	while (!list_empty(&taken)) {
		req = list_first_entry(&taken, struct rdmx_rma_req, node);
		list_del(&req->node);
		rdmx_rma_req_free(req);
	}
	return n;
}

/**
 * rdmx_ep_events_free() - drop the unread events of a released endpoint
 * @ep: the endpoint, with RDMX_EP_F_RELEASED set (later completions are
 *	freed as they come)
 *
 * Context: process context.
 */
void rdmx_ep_events_free(struct rdmx_ep *ep)
{
	struct rdmx_rma_req *req;
	LIST_HEAD(taken);

	spin_lock_bh(&ep->lock);
	list_splice_init(&ep->events, &taken);
	ep->rma_async -= ep->nr_events;
	ep->nr_events = 0;
	spin_unlock_bh(&ep->lock);
	while (!list_empty(&taken)) {
		req = list_first_entry(&taken, struct rdmx_rma_req, node);
		list_del(&req->node);
		rdmx_rma_req_free(req);
	}
}

/**
 * rdmx_ep_rma_ready() - whether an endpoint can register and operate
 * @ep: the endpoint
 *
 * Context: any context.
 * Return: 0, or -ENOTCONN when it is not a channel that was connected.
 */
int rdmx_ep_rma_ready(struct rdmx_ep *ep)
{
	switch (READ_ONCE(ep->state)) {
	case RDMX_EP_CONNECTED:
	case RDMX_EP_SHUTDOWN:
	case RDMX_EP_CLOSED:
		return ep->sess ? 0 : -ENOTCONN;
	case RDMX_EP_ERROR:
		return -READ_ONCE(ep->error);
	default:
		return -ENOTCONN;
	}
}

/**
 * rdmx_rma_batch_init() - make a synchronous batch ready for operations
 * @batch: the batch; its submitter then holds one count of @batch->pending
 *
 * A batch that completed may be made ready again.
 *
 * Context: any context.
 */
void rdmx_rma_batch_init(struct rdmx_rma_batch *batch)
{
	atomic_set(&batch->pending, 1);
	init_completion(&batch->done);
	batch->done_ns = 0;
}

/**
 * rdmx_rma_batch_wait() - wait for a synchronous batch to complete
 * @batch: the batch, whose submitter holds one count of @batch->pending
 *
 * Operations end within the session's failure detection time (the device
 * fails what a dead peer does not acknowledge, and a SEND a live one keeps
 * refusing, within their retries; a send queue on which nothing completes
 * for long, rdmx_conn_sq_stalled(), fails the connection; a failed
 * connection flushes them), so the wait is not interruptible: their
 * memory is the caller's until they end.
 *
 * Context: process context; may sleep.
 */
void rdmx_rma_batch_wait(struct rdmx_rma_batch *batch)
{
	if (!atomic_dec_and_test(&batch->pending))
		wait_for_completion(&batch->done);
}

/**
 * rdmx_ep_mr_reg() - register kernel memory for the peer to reach
 * @ep: a connected channel
 * @buf: the memory, kmalloc'd or vmalloc'd, until deregistered
 * @len: bytes, 1 to RDMX_MR_MAX
 * @access: RDMX_ACCESS_* rights, at least one
 * @token: room for the token (RDMX_TOKEN_MAX bytes always suffice)
 * @token_len: in: room at @token; out: the token's length
 * @id: out: the region's id, for rdmx_ep_mr_dereg()
 *
 * The peer may then READ, WRITE or update atomically what the token names,
 * within its rights, until the region is deregistered or @ep released.
 *
 * Context: process context; may sleep.
 * Return: 0 or a negative errno, as RDMX_IOC_MR_REG (see
 * Documentation/uapi.rst).
 */
int rdmx_ep_mr_reg(struct rdmx_ep *ep, void *buf, size_t len, u32 access,
		   void *token, u32 *token_len, u32 *id)
{
	struct rdmx_lmem lm;
	int ret;

	ret = rdmx_ep_rma_ready(ep);
	if (ret)
		return ret;
	if (!len || len > RDMX_MR_MAX || access & ~RDMX_TOKEN_ACCESS_ALL)
		return -EINVAL;
	ret = rdmx_lmem_kernel(&lm, buf, len);
	if (ret)
		return ret;
	return rdmx_mr_reg(ep, &lm, access, token, token_len, id);
}
EXPORT_SYMBOL_GPL(rdmx_ep_mr_reg);

/**
 * rdmx_ep_rma() - run one-sided operations and wait for them
 * @ep: a connected channel
 * @ops: the operations; each gets its @status (and atomics their @result)
 * @n: how many, 1 to RDMX_RMA_BATCH_MAX
 *
 * Started in order; the first that fails its checks stops the batch.
 *
 * Context: process context; may sleep.
 * Return: operations started (each with its status), or a negative errno
 * when none was.
 */
int rdmx_ep_rma(struct rdmx_ep *ep, struct rdmx_kop *ops, unsigned int n)
{
	struct rdmx_rma_batch batch;
	struct rdmx_rma_req **reqs;
	unsigned int i, done = 0;
	struct rdmx_lmem lm;
	struct rdmx_token t;
	int ret;

	ret = rdmx_ep_rma_ready(ep);
	if (ret)
		return ret;
	if (!n || n > RDMX_RMA_BATCH_MAX)
		return -EINVAL;
	reqs = kcalloc(n, sizeof(*reqs), GFP_KERNEL);
	if (!reqs)
		return -ENOMEM;
	rdmx_rma_batch_init(&batch);
	for (i = 0; i < n; i++) {
		struct rdmx_kop *op = &ops[i];

		memset(&lm, 0, sizeof(lm));
		ret = rdmx_token_parse(op->token, op->token_len, &t);
		if (!ret && op->length > RDMX_RMA_LEN_MAX)
			ret = -EINVAL;
		if (!ret && op->length)
			ret = rdmx_lmem_kernel(&lm, op->local, op->length);
		if (!ret)
			ret = rdmx_rma_submit(ep, &batch, op->opcode, op->imm,
					      &t, op->remote_offset, &lm,
					      op->compare_add, op->swap, 0,
					      &reqs[i]);
		op->status = ret;
		if (ret)
			break;
		done++;
	}
	rdmx_rma_batch_wait(&batch);
	for (i = 0; i < done; i++) {
		ops[i].status = reqs[i]->status;
		ops[i].result = reqs[i]->event.value;
		rdmx_rma_req_free(reqs[i]);
	}
	kfree(reqs);
	return done ?: ret;
}
EXPORT_SYMBOL_GPL(rdmx_ep_rma);
