// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx block service: the client.
 *
 * A map (struct rdmx_disk) is the blk-mq disk /dev/rdmxbN over one export of
 * one server. Each hardware queue has its own connection (struct rdmx_dq):
 * an rdma_cm id, an RC QP, a CQ from the pool and a pool of FRWR MRs, one
 * per tag. A request's pages are registered for that request only; the
 * server answers with a SEND with invalidate of the key (or, if it did not,
 * the client invalidates it locally) before the request completes.
 *
 * When a connection fails, the error work quiesces the disk, drains and
 * destroys every queue, requeues what was in flight and reconnects with
 * backoff; I/O waits meanwhile. After the loss timeout the map is dead:
 * waiting and new I/O fails with EIO until it is unmapped.
 *
 * Locking (outermost first):
 *   rdmx_maps_mutex   the map table, and a disk's creation and removal;
 *                     not held while a new map connects (that map has no
 *                     disk yet, which unmap takes for "not mapped")
 *   bd->mutex         a map's connections: connect, teardown, reconnect
 *   q->cm_mutex       a queue's connection attempt against its CM handler,
 *                     which builds the queue's QP and reads the server's
 *                     answer under it (inside the CM's own handler lock);
 *                     an attempt given up marks the queue abandoned under
 *                     it, after which no handler touches the queue
 *   disk->open_mutex  (the block layer's) opening against unmapping
 *   bd->lock          (spinlock) bd->state
 *   q->cork_lock      (spinlock, bh) commands waiting to go together
 *   q->stage_lock     (spinlock, bh) the staging area's slots, taken and
 *                     posted; never with q->cork_lock
 * Completions run in softirq context (IB_POLL_SOFTIRQ) and take no lock of
 * rdmx's but bd->lock, q->cork_lock and q->stage_lock, one at a time.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blk-mq.h>
#include <linux/blkdev.h>
#include <linux/delay.h>
#include <linux/idr.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/xarray.h>
#include <rdma/ib_cm.h>
#include <rdma/ib_verbs.h>
#include <rdma/mr_pool.h>
#include <rdma/rdma_cm.h>

#include "core/cm.h"
#include "core/compat.h"
#include "core/rdmx.h"
#include "blk.h"
#include "blk_clt.h"
#include "blk_trace.h"

#define RDMX_DISK_MINORS		16
#define RDMX_DISK_DEPTH_DEFAULT		128
#define RDMX_DISK_TIMEOUT_MS		10000	/* first connection */
/*
 * A map refused as another map writes the export (EBUSY) tries again for
 * this long: the writer may be this host's map just unmapped, whose
 * connections the server has not seen go yet.
 */
#define RDMX_DISK_BUSY_MS		3000
#define RDMX_DISK_IO_TIMEOUT_S		30	/* a request, before recovery */
#define RDMX_DISK_SLOW_MAX		4	/* I/O timeouts a slow request may wait */
#define RDMX_DISK_REQUEUE_MIN		2	/* requeues before a request may fail */
#define RDMX_DISK_RECONNECT_MAX_MS	2000

#define TO(state)	RDMX_FSM_TO(RDMX_DISK_, state)

/* A map's moves: rdmx_disk_move() takes only these. */
static const u32 rdmx_disk_next[RDMX_DISK_NR_STATES] = {
	[RDMX_DISK_CONNECTING] = TO(LIVE) | TO(DELETING),
	[RDMX_DISK_LIVE] = TO(RECONNECTING) | TO(DELETING),
	[RDMX_DISK_RECONNECTING] = TO(LIVE) | TO(DEAD) | TO(DELETING),
	[RDMX_DISK_DEAD] = TO(DELETING),
	[RDMX_DISK_DELETING] = 0,
};

#undef TO

static const char *const rdmx_disk_state_names[RDMX_DISK_NR_STATES] = {
	[RDMX_DISK_CONNECTING] = "connecting",
	[RDMX_DISK_LIVE] = "live",
	[RDMX_DISK_RECONNECTING] = "reconnecting",
	[RDMX_DISK_DEAD] = "dead",
	[RDMX_DISK_DELETING] = "deleting",
};

const struct rdmx_fsm rdmx_disk_fsm = {
	.what = "map",
	.nr = RDMX_DISK_NR_STATES,
	.names = rdmx_disk_state_names,
	.next = rdmx_disk_next,
};
EXPORT_SYMBOL_IF_KUNIT(rdmx_disk_fsm);

static DEFINE_XARRAY_ALLOC(rdmx_maps);
static DEFINE_MUTEX(rdmx_maps_mutex);
static int rdmx_disk_major;
static struct workqueue_struct *rdmx_disk_wq;

static void rdmx_disk_error(struct rdmx_disk *bd, const char *why, int err);

/* ---- the data path ------------------------------------------------------- */

static void rdmx_dq_unmap(struct rdmx_dq_req *req, struct request *rq)
{
	struct rdmx_dq *q = req->q;

	if (req->cmd_dma) {
		ib_dma_unmap_single(q->ibdev, req->cmd_dma, sizeof(req->cmd),
				    DMA_TO_DEVICE);
		req->cmd_dma = 0;
	}
	if (req->mr) {
		ib_mr_pool_put(q->qp, &q->qp->rdma_mrs, req->mr);
		req->mr = NULL;
	}
	if (req->nents) {
		ib_dma_unmap_sg(q->ibdev, req->sgt.sgl, req->nents,
				rq_dma_dir(rq));
		req->nents = 0;
		sg_free_table_chained(&req->sgt, SG_CHUNK_SIZE);
	}
}

static void rdmx_dq_complete_rq(struct request *rq)
{
	struct rdmx_dq_req *req = blk_mq_rq_to_pdu(rq);
	struct rdmx_dq_stats *st = &req->q->stats;
	u64 us = div_u64(ktime_get_ns() - req->start_ns, NSEC_PER_USEC);

	rdmx_dq_unmap(req, rq);
	if (req->in_flight)
		atomic_dec(&req->q->sent);
	req->in_flight = false;
	trace_rdmx_blk_complete(req->q->bd->index, req->q->idx, rq->tag,
				req->cmd.opcode, blk_rq_pos(rq) << SECTOR_SHIFT,
				blk_rq_bytes(rq),
				blk_status_to_errno(req->status));
	atomic64_inc(&st->lat[min_t(u32, us ? ilog2(us) : 0,
				    RDMX_DISK_LAT_BUCKETS - 1)]);
	if (req->status) {
		atomic64_inc(&st->errors);
	} else if (req_op(rq) == REQ_OP_READ) {
		atomic64_inc(&st->reads);
		atomic64_add(blk_rq_bytes(rq), &st->read_bytes);
	} else if (req_op(rq) == REQ_OP_WRITE) {
		atomic64_inc(&st->writes);
		atomic64_add(blk_rq_bytes(rq), &st->write_bytes);
	}
	blk_mq_end_request(rq, req->status);
}

static void rdmx_dq_put(struct rdmx_dq_req *req)
{
	if (refcount_dec_and_test(&req->ref))
		blk_mq_complete_request(blk_mq_rq_from_pdu(req));
}

static void rdmx_dq_wr_error(struct rdmx_dq *q, struct ib_wc *wc,
			     const char *op)
{
	pr_debug("rdmxb%u: queue %u: %s failed: %s\n", q->bd->index, q->idx,
		 op, ib_wc_status_msg(wc->status));
	rdmx_disk_error(q->bd, op, -(int)wc->status);
}

/*
 * @req's command in a SEND of its own, with an inline write's data: after
 * the command, or before it for a server of minor 3 or later, whose
 * receives take the data first. @sge has room for 1 + RDMX_DISK_INLINE_SGE.
 */
static void rdmx_dq_one_wr(struct rdmx_dq *q, struct rdmx_dq_req *req,
			   struct ib_send_wr *wr, struct ib_sge *sge)
{
	unsigned int n = req->nr_data_sge;
	unsigned int at = q->peer_minor >= RDMX_BLK_MINOR_DATA_FIRST ? n : 0;

	memcpy(sge + (at ? 0 : 1), req->data_sge, n * sizeof(*sge));
	sge[at] = (struct ib_sge){
		.addr = req->cmd_dma,
		.length = sizeof(req->cmd),
		.lkey = q->pd->local_dma_lkey,
	};
	*wr = (struct ib_send_wr){
		.wr_cqe = &req->send_cqe,
		.sg_list = sge,
		.num_sge = 1 + n,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};
}

/* A batch's scatter entries hold one command alone, with its data. */
static_assert(RDMX_BLK_BATCH_MAX >= 1 + RDMX_DISK_INLINE_SGE);

/* Staged writes' RDMA WRITEs are unsignaled: only a failure comes here. */
static void rdmx_dq_stage_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rdmx_dq *q = container_of(wc->wr_cqe, struct rdmx_dq, stage_cqe);

	rdmx_dq_wr_error(q, wc, "RDMA WRITE");
}

/*
 * A free slot of the staging area, the first from @q->stage_next on. One
 * is always free: the area has a slot per tag, and a request holds one
 * from here to its answer.
 */
static unsigned int rdmx_dq_stage_slot(struct rdmx_dq *q)
{
	unsigned int slot;

	lockdep_assert_held(&q->stage_lock);
	slot = find_next_zero_bit(q->stage_busy, q->stage_slots, q->stage_next);
	if (slot >= q->stage_slots)
		slot = find_first_zero_bit(q->stage_busy, q->stage_slots);
	return slot;
}

/*
 * Under @q->stage_lock, before the SEND @send of @n commands (@reqs) goes:
 * give each inline write among them a slot of the staging area, and make
 * its command name it (RDMX_BLK_CMD_STAGED). Their data goes there by RDMA
 * WRITE, one work request for the writes in consecutive slots (a 4 KiB
 * write fills its slot, so the next one's data follows on), as long as
 * their scatter entries fit in one. The SEND's completion stands for them.
 * Return: the first work request to post: the first RDMA WRITE, chained
 * to the next and the last to @send; NULL when a slot was missing.
 */
static struct ib_send_wr *rdmx_dq_stage(struct rdmx_dq *q,
					struct rdmx_dq_req **reqs,
					unsigned int n, struct ib_send_wr *send)
{
	struct ib_rdma_wr *w = NULL;
	unsigned int i, slot, nw = 0, ns = 0, nr = 0;
	struct rdmx_dq_req *req;
	u64 off, end = U64_MAX;

	lockdep_assert_held(&q->stage_lock);
	for (i = 0; i < n; i++) {
		req = reqs[i];
		if (!req->nr_data_sge)
			continue;
		slot = rdmx_dq_stage_slot(q);
		if (WARN_ON_ONCE(slot >= q->stage_slots))
			return NULL;
		set_bit(slot, q->stage_busy);
		q->stage_next = slot + 1;
		off = (u64)slot * RDMX_BLK_STAGE_SLOT;
		ib_dma_sync_single_for_cpu(q->ibdev, req->cmd_dma,
					   sizeof(req->cmd), DMA_TO_DEVICE);
		req->cmd.flags = (req->cmd.flags & ~RDMX_BLK_CMD_INLINE) |
				 RDMX_BLK_CMD_STAGED;
		req->cmd.addr = cpu_to_le64(off);
		ib_dma_sync_single_for_device(q->ibdev, req->cmd_dma,
					      sizeof(req->cmd), DMA_TO_DEVICE);
		if (!w || off != end ||
		    w->wr.num_sge + req->nr_data_sge > q->max_send_sge) {
			if (w)
				w->wr.next = &q->stage_wr[nw].wr;
			w = &q->stage_wr[nw++];
			*w = (struct ib_rdma_wr){
				.wr.wr_cqe = &q->stage_cqe,
				.wr.sg_list = &q->stage_sge[ns],
				.wr.opcode = IB_WR_RDMA_WRITE,
				.remote_addr = q->stage_addr + off,
				.rkey = q->stage_rkey,
			};
		}
		memcpy(&q->stage_sge[ns], req->data_sge,
		       req->nr_data_sge * sizeof(*req->data_sge));
		ns += req->nr_data_sge;
		w->wr.num_sge += req->nr_data_sge;
		end = le32_to_cpu(req->cmd.length) == RDMX_BLK_STAGE_SLOT ?
		      off + RDMX_BLK_STAGE_SLOT : U64_MAX;
		nr++;
	}
	atomic64_add(nr, &q->stats.staged_writes);
	w->wr.next = send;
	return &q->stage_wr[0].wr;
}

/*
 * Post @n commands (@reqs, mapped, in flight) that waited together
 * (rdmx_dq_cork()). Several go as one SEND, one scatter entry each
 * (RDMX_BLK_OPEN_CMD_BATCH), whose completion stands for all of them.
 * An inline write's data goes before, into the server's staging area
 * (RDMX_BLK_OPEN_STAGE, rdmx_dq_stage()); or follows in a SEND of its
 * own, the tag as immediate data (RDMX_BLK_OPEN_WRITE_IMM), whose
 * completion then stands for that request's. One alone goes as it would
 * have. A failed post fails the queue, and recovery takes the requests
 * back.
 */
static void rdmx_dq_post_cmds(struct rdmx_dq *q, struct rdmx_dq_req **reqs,
			      unsigned int n)
{
	struct ib_sge sge[RDMX_BLK_BATCH_MAX];
	struct ib_send_wr wr = {
		.wr_cqe = &reqs[0]->send_cqe,
		.sg_list = sge,
		.num_sge = n,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};
	struct ib_send_wr *last = &wr, *first;
	struct rdmx_dq_req *req;
	unsigned int i, nr_imm = 0, nr_staged = 0;
	int ret;

	if (n == 1) {
		reqs[0]->batch_next = NULL;
		rdmx_dq_one_wr(q, reqs[0], &wr, sge);
		goto post;
	}
	for (i = 0; i < n; i++) {
		req = reqs[i];
		sge[i].addr = req->cmd_dma;
		sge[i].length = sizeof(req->cmd);
		sge[i].lkey = q->pd->local_dma_lkey;
		req->batch_next = i + 1 < n ? reqs[i + 1] : NULL;
		req->data_alone = req->nr_data_sge && !q->stage;
		nr_staged += req->nr_data_sge && q->stage;
		if (!req->data_alone)
			continue;
		req->data_wr = (struct ib_send_wr){
			.wr_cqe = &req->data_cqe,
			.sg_list = req->data_sge,
			.num_sge = req->nr_data_sge,
			.opcode = IB_WR_SEND_WITH_IMM,
			.send_flags = IB_SEND_SIGNALED,
			.ex.imm_data = cpu_to_be32(le32_to_cpu(req->cmd.tag)),
		};
		last->next = &req->data_wr;
		last = &req->data_wr;
		nr_imm++;
	}
	atomic64_add(n, &q->stats.cmd_batched);
	atomic64_inc(&q->stats.cmd_batches);
	if (nr_imm)
		atomic64_add(nr_imm, &q->stats.imm_writes);
	if (nr_staged) {
		/* The slots are taken in the order their data is posted. */
		spin_lock_bh(&q->stage_lock);
		first = rdmx_dq_stage(q, reqs, n, &wr);
		ret = first ? ib_post_send(q->qp, first, NULL) : -EIO;
		spin_unlock_bh(&q->stage_lock);
		goto out;
	}
post:
	ret = ib_post_send(q->qp, &wr, NULL);
out:
	if (ret)
		rdmx_disk_error(q->bd, "cannot send a request", -EIO);
}

/* Take the commands waiting in @q->cork, for one SEND. */
static unsigned int rdmx_dq_cork_take(struct rdmx_dq *q,
				      struct rdmx_dq_req **reqs)
{
	unsigned int n = q->nr_cork;

	lockdep_assert_held(&q->cork_lock);
	memcpy(reqs, q->cork, n * sizeof(*reqs));
	q->nr_cork = 0;
	q->cmd_out++;
	return n;
}

/*
 * On a queue granted RDMX_BLK_OPEN_CMD_BATCH, whether @req goes now: a
 * command goes at once while none of the queue's command SENDs is on the
 * way; one without data (@plain: no data after it, no registration; or an
 * inline write, with RDMX_BLK_OPEN_WRITE_IMM or RDMX_BLK_OPEN_STAGE) sent
 * while one is waits for
 * that one's completion (rdmx_dq_uncork()), and the others that came
 * meanwhile go with it, or all go once they fill a SEND.
 * A queue with one request at a time never waits for this.
 * Return: the commands to post now, in @reqs; 0 when @req waits.
 */
static unsigned int rdmx_dq_cork(struct rdmx_dq *q, struct rdmx_dq_req *req,
				 bool plain, struct rdmx_dq_req **reqs)
{
	unsigned int n = 0;

	spin_lock_bh(&q->cork_lock);
	if (plain && q->cmd_out) {
		q->cork[q->nr_cork++] = req;
		if (q->nr_cork == q->cmd_batch)
			n = rdmx_dq_cork_take(q, reqs);
	} else {
		q->cmd_out++;
		reqs[0] = req;
		n = 1;
	}
	spin_unlock_bh(&q->cork_lock);
	return n;
}

/*
 * A command SEND of @q's completed, or was never posted: those that waited
 * for it go now. Not once the queue is going down (teardown drains it):
 * they stay in flight, and recovery takes them back.
 */
static void rdmx_dq_uncork(struct rdmx_dq *q)
{
	struct rdmx_dq_req *reqs[RDMX_BLK_BATCH_MAX];
	unsigned int n = 0;

	spin_lock_bh(&q->cork_lock);
	q->cmd_out--;
	if (q->nr_cork && test_bit(RDMX_DQ_LIVE, &q->flags))
		n = rdmx_dq_cork_take(q, reqs);
	spin_unlock_bh(&q->cork_lock);
	if (n)
		rdmx_dq_post_cmds(q, reqs, n);
}

static void rdmx_dq_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rdmx_dq_req *req = container_of(wc->wr_cqe,
					       struct rdmx_dq_req, send_cqe);
	struct rdmx_dq_req *next;

	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		rdmx_dq_wr_error(req->q, wc, "SEND");
		return;
	}
	if (req->q->cmd_batch)
		rdmx_dq_uncork(req->q);
	/*
	 * Each command that went in the SEND: read its next before its put.
	 * One whose data went after it is put when that SEND completes, later
	 * (a queue's SENDs complete in order).
	 */
	for (; req; req = next) {
		next = req->batch_next;
		if (!req->data_alone)
			rdmx_dq_put(req);
	}
}

/* An inline write's data went, alone, after its command (RDMX_BLK_OPEN_WRITE_IMM). */
static void rdmx_dq_data_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rdmx_dq_req *req = container_of(wc->wr_cqe,
					       struct rdmx_dq_req, data_cqe);

	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		rdmx_dq_wr_error(req->q, wc, "SEND");
		return;
	}
	rdmx_dq_put(req);
}

static void rdmx_dq_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rdmx_dq_req *req = container_of(wc->wr_cqe,
					       struct rdmx_dq_req, reg_cqe);

	if (unlikely(wc->status != IB_WC_SUCCESS))
		rdmx_dq_wr_error(req->q, wc, "REG_MR");
}

static void rdmx_dq_inv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rdmx_dq_req *req = container_of(wc->wr_cqe,
					       struct rdmx_dq_req, inv_cqe);

	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		rdmx_dq_wr_error(req->q, wc, "LOCAL_INV");
		return;
	}
	rdmx_dq_put(req);
}

static void rdmx_dq_open_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rdmx_dq *q = container_of(wc->wr_cqe, struct rdmx_dq,
					 open_cqe);

	/* Unsignaled: only a failure comes here; the OPEN's wait sees it. */
	pr_debug("rdmxb%u: queue %u: OPEN not sent: %s\n", q->bd->index,
		 q->idx, ib_wc_status_msg(wc->status));
}

static int rdmx_dq_post_recv(struct rdmx_dq *q, struct rdmx_dq_rbuf *rb)
{
	return rdmx_rx_buf_post(q->qp, &rb->rx);
}

/*
 * An inline READ's data into the request: @len bytes at @src, then the
 * rest at @tail (a response after its header in a receive that takes the
 * data first: its end lands in the header's buffer).
 */
static void rdmx_dq_copy_inline(struct rdmx_dq *q, struct request *rq,
				u8 *src, u32 len, const u8 *tail)
{
	struct req_iterator iter;
	struct bio_vec bv;

	rq_for_each_segment(bv, rq, iter) {
		u8 *dst = bvec_kmap_local(&bv);
		u32 n = min(len, bv.bv_len);

		/* A whole page copies with copy_page(), in words. */
		if (n == PAGE_SIZE && PAGE_ALIGNED(dst) && PAGE_ALIGNED(src)) {
			copy_page(dst, src);
		} else {
			memcpy(dst, src, n);
			if (n < bv.bv_len) {
				memcpy(dst + n, tail, bv.bv_len - n);
				tail += bv.bv_len - n;
			}
		}
		src += n;
		len -= n;
		kunmap_local(dst);
		flush_dcache_page(bv.bv_page);
	}
	atomic64_inc(&q->stats.inline_reads);
}

static blk_status_t rdmx_blk_status(u32 status)
{
	switch (status) {
	case 0:
		return BLK_STS_OK;
	case EROFS:
	case EACCES:
		return BLK_STS_PROTECTION;	/* as nvme's READ_ONLY */
	case EOPNOTSUPP:
		return BLK_STS_NOTSUPP;
	default:
		return BLK_STS_IOERR;
	}
}

/**
 * rdmx_blk_size_check() - judge the export size a response reported
 * @have: the largest size the disk has seen
 * @size: the size the response carried
 * @lbs: the export's logical block size
 *
 * Exports only grow. 0 comes from a server that does not report the size;
 * a smaller one is stale: responses built before the export grew can
 * arrive after one built since, on another queue or even on the same one
 * (the server builds them concurrently).
 *
 * Return: 1 to take @size (larger, in whole blocks); 0 to ignore it (0,
 * @have or smaller); -EPROTO to ignore it and log it (not in whole blocks:
 * the server's mistake).
 */
int rdmx_blk_size_check(u64 have, u64 size, u32 lbs)
{
	if (!lbs || !IS_ALIGNED(size, lbs))
		return -EPROTO;
	return size > have;
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_blk_size_check);

/* A response reported the export's size: grow the disk if it grew. */
static void rdmx_disk_size_seen(struct rdmx_disk *bd, u64 size)
{
	u64 seen = READ_ONCE(bd->seen_size);
	int ret;

	/* Racing completions on other queues may both see growth: max wins. */
	while ((ret = rdmx_blk_size_check(seen, size, bd->lbs)) > 0) {
		u64 old = cmpxchg64(&bd->seen_size, seen, size);

		if (old == seen) {
			queue_work(rdmx_disk_wq, &bd->resize_work);
			return;
		}
		seen = old;
	}
	if (ret < 0)
		pr_warn_ratelimited("rdmxb%u: the server reports a size of %llu bytes, not in %u-byte blocks: ignored\n",
				    bd->index, size, bd->lbs);
}

/*
 * The request a response's @tag answers: in flight on @q and not answered
 * yet; else NULL (a protocol error).
 */
static struct rdmx_dq_req *rdmx_dq_req_of(struct rdmx_dq *q, u32 tag)
{
	struct rdmx_disk *bd = q->bd;
	struct rdmx_dq_req *req;
	struct request *rq;

	/* No request exists before the disk (and its tag set) does. */
	if (tag >= bd->depth || !READ_ONCE(bd->disk))
		return NULL;
	rq = blk_mq_tag_to_rq(bd->tag_set.tags[q->idx], tag);
	if (!rq)
		return NULL;
	req = blk_mq_rq_to_pdu(rq);
	if (!req->in_flight || req->q != q || req->answered)
		return NULL;
	return req;
}

/* Whether @req's answer, with @status, carries its data: a read inline. */
static bool rdmx_dq_rsp_has_data(const struct rdmx_dq_req *req, u32 status)
{
	return req->cmd.opcode == RDMX_BLK_OP_READ &&
	       (req->cmd.flags & RDMX_BLK_CMD_INLINE) && !status;
}

/* Take @status as @req's answer (its data, if any, is copied already). */
static void rdmx_dq_answered(struct rdmx_dq *q, struct rdmx_dq_req *req,
			     u32 status)
{
	req->answered = true;
	req->status = rdmx_blk_status(status);
	/* The server is done with the data in its slot (rdmx_dq_stage()). */
	if (req->cmd.flags & RDMX_BLK_CMD_STAGED)
		clear_bit(le64_to_cpu(req->cmd.addr) / RDMX_BLK_STAGE_SLOT,
			  q->stage_busy);
	if (status)
		pr_warn_ratelimited("rdmxb%u: the server failed a request at %llu: %d\n",
				    q->bd->index,
				    (u64)blk_rq_pos(blk_mq_rq_from_pdu(req)),
				    -(int)status);
}

/*
 * Complete an answered request, once its key is dead: the server killed
 * it (@killed: the response's SEND with invalidate named it), or a local
 * invalidation does, whose completion completes it.
 */
static void rdmx_dq_finish(struct rdmx_dq *q, struct rdmx_dq_req *req,
			   bool killed)
{
	if (req->mr && !killed) {
		/* The server did not kill the key: kill it before completing. */
		struct ib_send_wr inv = {
			.opcode = IB_WR_LOCAL_INV,
			.send_flags = IB_SEND_SIGNALED,
			.wr_cqe = &req->inv_cqe,
			.ex.invalidate_rkey = req->mr->rkey,
		};

		if (ib_post_send(q->qp, &inv, NULL))
			rdmx_disk_error(q->bd, "cannot post an invalidation",
					-EIO);
		return;
	}
	rdmx_dq_put(req);
}

/* The @i-th response of @rb's: they follow each other from its start. */
static struct rdmx_blk_rsp *rdmx_dq_rsp_at(struct rdmx_dq_rbuf *rb,
					   unsigned int i)
{
	if (rb->rx.data_first)
		return (struct rdmx_blk_rsp *)page_address(rb->rx.data) + i;
	if (!i)
		return rb->rx.hdr;
	return (struct rdmx_blk_rsp *)page_address(rb->rx.data) + i - 1;
}

/*
 * @n responses in one receive (RDMX_BLK_OPEN_BATCH): each answers a
 * request in flight, once, with nothing after it (no data, no key killed).
 * All are checked before any is taken. Return: 0, or -EPROTO.
 */
static int rdmx_dq_recv_batch(struct rdmx_dq *q, struct rdmx_dq_rbuf *rb,
			      unsigned int n)
{
	struct rdmx_dq_req *reqs[RDMX_BLK_BATCH_MAX];
	struct rdmx_blk_rsp *rsp;
	unsigned int i, j;
	u32 status;

	if (!q->batch || n > RDMX_BLK_BATCH_MAX)
		return -EPROTO;
	for (i = 0; i < n; i++) {
		rsp = rdmx_dq_rsp_at(rb, i);
		reqs[i] = rdmx_dq_req_of(q, le32_to_cpu(rsp->tag));
		if (!reqs[i] ||
		    rdmx_dq_rsp_has_data(reqs[i], le32_to_cpu(rsp->status)))
			return -EPROTO;
		for (j = 0; j < i; j++)
			if (reqs[j] == reqs[i])
				return -EPROTO;
	}
	for (i = 0; i < n; i++) {
		rsp = rdmx_dq_rsp_at(rb, i);
		status = le32_to_cpu(rsp->status);
		rdmx_disk_size_seen(q->bd, le64_to_cpu(rsp->size));
		rdmx_dq_answered(q, reqs[i], status);
	}
	WRITE_ONCE(q->last_answer, ktime_get_ns());
	if (rdmx_dq_post_recv(q, rb)) {
		rdmx_disk_error(q->bd, "cannot post a receive", -EIO);
		return 0;
	}
	for (i = 0; i < n; i++)
		rdmx_dq_finish(q, reqs[i], false);
	return 0;
}

static void rdmx_dq_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rdmx_dq_rbuf *rb = container_of(wc->wr_cqe,
					       struct rdmx_dq_rbuf, rx.cqe);
	bool imm = wc->wc_flags & IB_WC_WITH_IMM;
	struct rdmx_dq *q = rb->q;
	struct rdmx_disk *bd = q->bd;
	struct rdmx_blk_rsp *rsp;
	struct rdmx_dq_req *req;
	struct request *rq;
	bool inline_read;
	u32 tag, status;
	u8 *data;

	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		rdmx_dq_wr_error(q, wc, "RECV");
		return;
	}
	rdmx_rx_buf_sync(q->ibdev, &rb->rx, wc->byte_len);
	/* Whatever comes first lands at the start of the first entry. */
	if (rb->rx.data_first) {
		rsp = page_address(rb->rx.data);
		data = (u8 *)rsp;
	} else {
		rsp = rb->rx.hdr;
		data = rb->rx.data ? page_address(rb->rx.data) : NULL;
	}
	if (imm) {
		/* An inline READ's data alone (RDMX_BLK_OPEN_IMM_READ). */
		if (!q->imm_read)
			goto protocol;
		tag = be32_to_cpu(wc->ex.imm_data);
		status = 0;
		goto answer;
	}
	if (wc->byte_len < sizeof(*rsp))
		goto protocol;
	tag = le32_to_cpu(rsp->tag);
	status = le32_to_cpu(rsp->status);
	if (tag == RDMX_BLK_TAG_EVENT) {
		/*
		 * The export grew. It can come before the OPEN's answer (the
		 * server sends it once the queue is bound); before the disk
		 * exists the size of the OPEN's answer, or a later one, holds.
		 */
		if (status || wc->byte_len != sizeof(*rsp))
			goto protocol;
		if (READ_ONCE(bd->disk))
			rdmx_disk_size_seen(bd, le64_to_cpu(rsp->size));
		if (rdmx_dq_post_recv(q, rb))
			rdmx_disk_error(bd, "cannot post a receive", -EIO);
		return;
	}
	if (test_bit(RDMX_DQ_OPENING, &q->flags)) {
		if (wc->byte_len != sizeof(*rsp))
			goto protocol;
		memcpy(&q->open_rsp, rsp, sizeof(*rsp));
		clear_bit(RDMX_DQ_OPENING, &q->flags);
		rdmx_dq_post_recv(q, rb);
		complete(&q->open_done);
		return;
	}
answer:
	req = rdmx_dq_req_of(q, tag);
	if (!req)
		goto protocol;
	rq = blk_mq_rq_from_pdu(req);
	/* Only the answer to an inline READ carries more: all its data. */
	inline_read = rdmx_dq_rsp_has_data(req, status);
	if (imm ? !inline_read || wc->byte_len != blk_rq_bytes(rq) :
	    wc->byte_len != sizeof(*rsp) +
			    (inline_read ? blk_rq_bytes(rq) : 0)) {
		/* Responses alone, together (RDMX_BLK_OPEN_BATCH)? */
		if (imm || inline_read || wc->byte_len % sizeof(*rsp) ||
		    rdmx_dq_recv_batch(q, rb, wc->byte_len / sizeof(*rsp)))
			goto protocol;
		return;
	}
	WRITE_ONCE(q->last_answer, ktime_get_ns());
	if (!imm)
		rdmx_disk_size_seen(bd, le64_to_cpu(rsp->size));
	if (imm)
		rdmx_dq_copy_inline(q, rq, data, rb->rx.data_len, NULL);
	else if (inline_read && rb->rx.data_first)
		rdmx_dq_copy_inline(q, rq, data + sizeof(*rsp),
				    rb->rx.data_len - sizeof(*rsp), rb->rx.hdr);
	else if (inline_read)
		rdmx_dq_copy_inline(q, rq, data, rb->rx.data_len, NULL);
	rdmx_dq_answered(q, req, status);
	if (rdmx_dq_post_recv(q, rb)) {
		rdmx_disk_error(bd, "cannot post a receive", -EIO);
		return;
	}
	rdmx_dq_finish(q, req, (wc->wc_flags & IB_WC_WITH_INVALIDATE) &&
		       req->mr && wc->ex.invalidate_rkey == req->mr->rkey);
	return;

protocol:
	rdmx_disk_error(bd, "malformed response", -EPROTO);
}

static int rdmx_dq_map_data(struct rdmx_dq *q, struct request *rq,
			    struct rdmx_dq_req *req)
{
	struct scatterlist *sg;
	int nents, count, i, nr;

	if (rq_data_dir(rq) == READ && blk_rq_bytes(rq) <= q->inline_read_max) {
		/* The data comes in the response: nothing to map or register. */
		req->cmd.flags |= RDMX_BLK_CMD_INLINE;
		return 0;
	}
	req->sgt.sgl = req->first_sgl;
	if (sg_alloc_table_chained(&req->sgt, blk_rq_nr_phys_segments(rq),
				   req->sgt.sgl, SG_CHUNK_SIZE))
		return -ENOMEM;
	nents = blk_rq_map_sg(rq, req->sgt.sgl);
	count = ib_dma_map_sg(q->ibdev, req->sgt.sgl, nents, rq_dma_dir(rq));
	if (!count) {
		sg_free_table_chained(&req->sgt, SG_CHUNK_SIZE);
		return -EIO;
	}
	req->nents = nents;

	if (rq_data_dir(rq) == WRITE && blk_rq_bytes(rq) <= RDMX_BLK_INLINE_MAX &&
	    count < q->max_send_sge && count <= RDMX_DISK_INLINE_SGE) {
		for_each_sg(req->sgt.sgl, sg, count, i) {
			req->data_sge[i].addr = sg_dma_address(sg);
			req->data_sge[i].length = sg_dma_len(sg);
			req->data_sge[i].lkey = q->pd->local_dma_lkey;
		}
		req->nr_data_sge = count;
		req->cmd.flags |= RDMX_BLK_CMD_INLINE;
		return 0;
	}

	req->mr = ib_mr_pool_get(q->qp, &q->qp->rdma_mrs);
	if (WARN_ON_ONCE(!req->mr))
		return -EAGAIN;
	nr = ib_map_mr_sg(req->mr, req->sgt.sgl, count, NULL, SZ_4K);
	if (unlikely(nr < count))
		return -EIO;
	ib_update_fast_reg_key(req->mr, ib_inc_rkey(req->mr->rkey));
	/* The server learns no kernel address: the queue's tag, the offset. */
	req->mr->iova = q->iova_tag | (req->mr->iova & (SZ_4K - 1));
	memset(&req->reg_wr, 0, sizeof(req->reg_wr));
	req->reg_wr.wr.opcode = IB_WR_REG_MR;
	req->reg_wr.wr.wr_cqe = &req->reg_cqe;
	req->reg_wr.mr = req->mr;
	req->reg_wr.key = req->mr->rkey;
	/*
	 * The server only reads what is written and only writes what is
	 * read: it gets no other right to this memory.
	 */
	req->reg_wr.access = rq_data_dir(rq) == WRITE ? IB_ACCESS_REMOTE_READ :
			     IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	req->cmd.rkey = cpu_to_le32(req->mr->rkey);
	req->cmd.addr = cpu_to_le64(req->mr->iova);
	return 0;
}

static blk_status_t rdmx_disk_queue_rq(struct blk_mq_hw_ctx *hctx,
				       const struct blk_mq_queue_data *bd_)
{
	struct rdmx_dq *q = hctx->driver_data;
	struct rdmx_disk *bd = q->bd;
	struct request *rq = bd_->rq;
	struct rdmx_dq_req *req = blk_mq_rq_to_pdu(rq);
	struct ib_sge sge[1 + RDMX_DISK_INLINE_SGE];
	struct rdmx_dq_req *reqs[RDMX_BLK_BATCH_MAX];
	struct ib_send_wr wr, *first = &wr;
	enum rdmx_disk_state state;
	unsigned int n;
	int ret;
	u8 op;

	state = READ_ONCE(bd->state);
	if (state == RDMX_DISK_DEAD || state == RDMX_DISK_DELETING)
		return BLK_STS_IOERR;
	if (!test_bit(RDMX_DQ_LIVE, &q->flags))
		return BLK_STS_RESOURCE;

	switch (req_op(rq)) {
	case REQ_OP_READ:
		op = RDMX_BLK_OP_READ;
		break;
	case REQ_OP_WRITE:
		op = RDMX_BLK_OP_WRITE;
		break;
	case REQ_OP_FLUSH:
		op = RDMX_BLK_OP_FLUSH;
		break;
	case REQ_OP_DISCARD:
		op = RDMX_BLK_OP_DISCARD;
		break;
	case REQ_OP_WRITE_ZEROES:
		op = RDMX_BLK_OP_WRITE_ZEROES;
		break;
	default:
		return BLK_STS_NOTSUPP;
	}

	/* RQF_DONTPREP: set once, kept across requeues (as nvme does). */
	if (!(rq->rq_flags & RQF_DONTPREP)) {
		rq->rq_flags |= RQF_DONTPREP;
		req->first_ns = ktime_get_ns();
		req->requeues = 0;
	}
	req->q = q;
	memset(&req->cmd, 0, sizeof(req->cmd));
	req->cmd.opcode = op;
	req->cmd.tag = cpu_to_le32(rq->tag);
	if (op != RDMX_BLK_OP_FLUSH) {
		req->cmd.offset = cpu_to_le64((u64)blk_rq_pos(rq) << SECTOR_SHIFT);
		req->cmd.length = cpu_to_le32(blk_rq_bytes(rq));
	}
	if ((rq->cmd_flags & REQ_FUA) &&
	    (op == RDMX_BLK_OP_WRITE || op == RDMX_BLK_OP_WRITE_ZEROES))
		req->cmd.flags |= RDMX_BLK_CMD_FUA;
	req->status = BLK_STS_OK;
	req->nents = 0;
	req->nr_data_sge = 0;
	req->data_alone = false;
	req->mr = NULL;
	refcount_set(&req->ref, 2);	/* the SEND's completion and the response */

	blk_mq_start_request(rq);
	if (op == RDMX_BLK_OP_READ || op == RDMX_BLK_OP_WRITE) {
		ret = rdmx_dq_map_data(q, rq, req);
		if (ret)
			goto out_unmap;
	}
	/* Others in flight: its answer may wait to go with theirs. */
	if (atomic_inc_return(&q->sent) > 1 && q->batch)
		req->cmd.flags |= RDMX_BLK_CMD_MORE;
	req->cmd_dma = ib_dma_map_single(q->ibdev, &req->cmd, sizeof(req->cmd),
					 DMA_TO_DEVICE);
	if (ib_dma_mapping_error(q->ibdev, req->cmd_dma)) {
		req->cmd_dma = 0;
		ret = -ENOMEM;
		goto out_unsent;
	}
	req->send_cqe.done = rdmx_dq_send_done;
	req->data_cqe.done = rdmx_dq_data_done;
	rdmx_dq_one_wr(q, req, &wr, sge);
	if (req->mr) {
		req->reg_wr.wr.next = &wr;
		first = &req->reg_wr.wr;
	}
	req->batch_next = NULL;
	req->in_flight = true;
	req->answered = false;
	req->start_ns = ktime_get_ns();
	trace_rdmx_blk_submit(bd->index, q->idx, rq->tag, op,
			      blk_rq_pos(rq) << SECTOR_SHIFT, blk_rq_bytes(rq), 0);
	if (q->cmd_batch) {
		n = rdmx_dq_cork(q, req, !req->mr &&
				 (!req->nr_data_sge || q->write_imm ||
				  q->stage), reqs);
		if (!n)
			return BLK_STS_OK;	/* it goes with others */
		if (n > 1) {
			rdmx_dq_post_cmds(q, reqs, n);
			return BLK_STS_OK;
		}
	}
	ret = ib_post_send(q->qp, first, NULL);
	if (ret) {
		req->in_flight = false;
		/* Not on the way after all: those it held go now. */
		if (q->cmd_batch)
			rdmx_dq_uncork(q);
		goto out_unsent;
	}
	return BLK_STS_OK;

out_unsent:
	atomic_dec(&q->sent);
out_unmap:
	rdmx_dq_unmap(req, rq);
	if (ret == -ENOMEM || ret == -EAGAIN)
		return BLK_STS_RESOURCE;
	if (ret == -EIO)	/* its pages cannot be mapped: fail it alone */
		return BLK_STS_IOERR;
	/* The QP failed: recovery quiesces the queue, then retries this. */
	rdmx_disk_error(bd, "cannot send a request", ret);
	return BLK_STS_RESOURCE;
}

static void rdmx_disk_complete(struct request *rq)
{
	rdmx_dq_complete_rq(rq);
}

/**
 * rdmx_blk_timeout_wait - whether a request past its timeout may wait on
 * @now: ktime_get_ns() now
 * @sent: when the request was sent
 * @last_answer: when its queue last received a response (may be after @now:
 *	another CPU's completion)
 * @window: the I/O timeout, ns
 *
 * A request times out after @window. If its queue answered another request
 * within the last @window the connection works and is only slow (requests
 * wait behind others on a slow link): tearing it down would requeue every
 * request, which would then time out again, for ever. So the request waits
 * on, but for at most RDMX_DISK_SLOW_MAX windows in all, so that a request
 * the server lost is still recovered while others flow.
 *
 * Return: true to restart the request's timer; false to recover.
 */
bool rdmx_blk_timeout_wait(u64 now, u64 sent, u64 last_answer, u64 window)
{
	return (s64)(now - last_answer) < (s64)window &&
	       now - sent < RDMX_DISK_SLOW_MAX * window;
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_blk_timeout_wait);

static enum blk_eh_timer_return rdmx_disk_timeout(struct request *rq)
{
	struct rdmx_dq_req *req = blk_mq_rq_to_pdu(rq);
	struct rdmx_dq *q = req->q;
	struct rdmx_disk *bd = q->bd;
	u64 window = jiffies_to_nsecs(rq->timeout);	/* set when started */

	if (READ_ONCE(bd->state) == RDMX_DISK_LIVE &&
	    rdmx_blk_timeout_wait(ktime_get_ns(), req->start_ns,
				  READ_ONCE(q->last_answer), window)) {
		atomic64_inc(&q->stats.slow);
		return BLK_EH_RESET_TIMER;
	}
	atomic64_inc(&q->stats.timeouts);
	/* Recovery drains the queues, then requeues or fails the request. */
	rdmx_disk_error(bd, "a request timed out", -ETIMEDOUT);
	return BLK_EH_RESET_TIMER;
}

static int rdmx_disk_init_hctx(struct blk_mq_hw_ctx *hctx, void *data,
			       unsigned int idx)
{
	struct rdmx_disk *bd = data;

	hctx->driver_data = &bd->queues[idx];
	return 0;
}

static int rdmx_disk_init_request(struct blk_mq_tag_set *set,
				  struct request *rq, unsigned int hctx_idx,
				  RDMX_NUMA_NODE_T numa_node)
{
	struct rdmx_dq_req *req = blk_mq_rq_to_pdu(rq);
	struct rdmx_disk *bd = set->driver_data;

	req->q = &bd->queues[hctx_idx];
	req->reg_cqe.done = rdmx_dq_reg_done;
	req->inv_cqe.done = rdmx_dq_inv_done;
	return 0;
}

static const struct blk_mq_ops rdmx_disk_mq_ops = {
	.queue_rq = rdmx_disk_queue_rq,
	.complete = rdmx_disk_complete,
	.timeout = rdmx_disk_timeout,
	.init_hctx = rdmx_disk_init_hctx,
	.init_request = rdmx_disk_init_request,
};

/* ---- connections ------------------------------------------------------ */

static int rdmx_dq_create_ib(struct rdmx_dq *q)
{
	struct rdmx_disk *bd = q->bd;
	struct ib_device_attr *da = &q->ibdev->attrs;
	struct ib_qp_cap cap = {};
	unsigned int i;
	int ret;

	if (!(da->device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS))
		return -EOPNOTSUPP;
	q->pd = ib_alloc_pd(q->ibdev, 0);
	if (IS_ERR(q->pd)) {
		ret = PTR_ERR(q->pd);
		q->pd = NULL;
		return ret;
	}
	/*
	 * A receive, and a registration, a SEND and an invalidation each;
	 * the events' receive; the drain's two.
	 */
	q->cq_size = bd->depth * 4 + 3;
	q->cq = ib_cq_pool_get(q->ibdev, q->cq_size, q->idx, IB_POLL_SOFTIRQ);
	if (IS_ERR(q->cq)) {
		ret = PTR_ERR(q->cq);
		q->cq = NULL;
		return ret;
	}
	/* Inline writes' pieces, or commands going together. */
	q->max_send_sge = min_t(u32, da->max_send_sge,
				max(1 + RDMX_DISK_INLINE_SGE, RDMX_BLK_BATCH_MAX));
	/* A registration, a SEND and an invalidation per tag; the OPEN */
	cap.max_send_wr = bd->depth * 3 + 1;
	/* A response per tag; the events */
	cap.max_recv_wr = bd->depth + 1;
	cap.max_send_sge = q->max_send_sge;
	/* Inline READs take a second receive entry: their data. */
	q->inline_read_max = da->max_recv_sge >= 2 ?
			     READ_ONCE(rdmx_blk_params.inline_read_max) : 0;
	cap.max_recv_sge = q->inline_read_max ? 2 : 1;
	/* Their data may come alone, page-aligned: not on iWARP. */
	q->imm_layout = q->inline_read_max &&
			!rdma_protocol_iwarp(q->ibdev, q->cm_id->port_num);
	q->imm_read = false;
	q->batch = false;
	/* Nothing of the last connection's waits any more (it is drained). */
	q->cmd_batch = 0;
	q->write_imm = false;
	q->stage = false;
	q->iova_tag = (u64)get_random_u32_inclusive(1, U32_MAX >> 1) << 32;
	q->cmd_out = 0;
	q->nr_cork = 0;
	ret = rdmx_rc_qp_create(q->cm_id, q->pd, q->cq, q, &cap);
	if ((ret == -EINVAL || ret == -ENOMEM) &&
	    q->max_send_sge > 1 + RDMX_DISK_INLINE_SGE) {
		/* Too big a send queue for the device: fewer together. */
		q->max_send_sge = 1 + RDMX_DISK_INLINE_SGE;
		cap.max_send_sge = q->max_send_sge;
		ret = rdmx_rc_qp_create(q->cm_id, q->pd, q->cq, q, &cap);
	}
	if (ret)
		return ret;
	q->qp = q->cm_id->qp;
	q->max_pages = min_t(u32, da->max_fast_reg_page_list_len,
			     bd->max_io / SZ_4K + 2);
	ret = ib_mr_pool_init(q->qp, &q->qp->rdma_mrs, bd->depth,
			      IB_MR_TYPE_MEM_REG, q->max_pages, 0);
	if (ret)
		return ret;
	/* A response per tag, and one for the server's events. */
	q->rbufs = kcalloc(bd->depth + 1, sizeof(*q->rbufs), GFP_KERNEL);
	if (!q->rbufs)
		return -ENOMEM;
	q->nr_rbufs = bd->depth + 1;
	for (i = 0; i < q->nr_rbufs; i++) {
		struct rdmx_dq_rbuf *rb = &q->rbufs[i];

		rb->rx.cqe.done = rdmx_dq_recv_done;
		rb->q = q;
		ret = rdmx_rx_buf_init(q->ibdev, &rb->rx,
				       sizeof(struct rdmx_blk_rsp),
				       q->inline_read_max ?
				       RDMX_BLK_INLINE_MAX : 0);
		if (ret)
			return ret;
		rb->rx.data_first = q->imm_layout;
		ret = rdmx_dq_post_recv(q, rb);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Undo rdmx_dq_create_ib(), then the cm_id; the QP is drained already, and
 * no CM handler builds on the queue any more (the attempt ended, or was
 * abandoned). The id goes last: a device's removal waits for the ids on it
 * (DEVICE_REMOVAL), then frees the device's CQ pool, so nothing of the
 * queue may outlive its id.
 */
static void rdmx_dq_destroy(struct rdmx_dq *q)
{
	unsigned int i;

	if (q->qp) {
		ib_mr_pool_destroy(q->qp, &q->qp->rdma_mrs);
		rdma_destroy_qp(q->cm_id);
		q->qp = NULL;
	}
	for (i = 0; q->rbufs && i < q->nr_rbufs; i++)
		rdmx_rx_buf_exit(q->ibdev, &q->rbufs[i].rx);
	kfree(q->rbufs);
	q->rbufs = NULL;
	if (q->cq)
		ib_cq_pool_put(q->cq, q->cq_size);
	q->cq = NULL;
	if (q->pd)
		ib_dealloc_pd(q->pd);
	q->pd = NULL;
	if (q->cm_id)
		rdma_destroy_id(q->cm_id);
	q->cm_id = NULL;
}

static int rdmx_dq_route_resolved(struct rdmx_dq *q)
{
	struct rdmx_disk *bd = q->bd;
	struct rdma_conn_param param = {};
	struct rdmx_conn_params p;
	struct rdmx_conn_req req;
	int ret;

	lockdep_assert_held(&q->cm_mutex);
	q->ibdev = q->cm_id->device;
	ret = rdmx_dq_create_ib(q);
	if (ret)
		return ret;
	p = (struct rdmx_conn_params){
		/* +1: the server keeps a spare receive */
		.queue_depth = bd->depth + 1,
		.lane = q->idx, .nr_lanes = bd->nr_queues,
		.features = RDMX_PROTO_F_BLOCK, .max_msg_size = bd->max_io,
		.generation = bd->generation,
	};
	uuid_copy(&p.sess_uuid, &bd->uuid);
	rdmx_conn_req_pack(&req, &p);
	param.private_data = &req;
	param.private_data_len = sizeof(req);
	param.responder_resources = min_t(u8, q->ibdev->attrs.max_qp_rd_atom,
					  255);
	param.initiator_depth = min_t(u8, q->ibdev->attrs.max_qp_init_rd_atom,
				      255);
	param.retry_count = 7;
	param.rnr_retry_count = RDMX_RNR_RETRY;
	return rdma_connect_locked(q->cm_id, &param);
}

static int rdmx_dq_established(struct rdmx_dq *q,
			       struct rdma_cm_event *ev)
{
	struct rdmx_conn_params sent = {
		.lane = q->idx, .nr_lanes = q->bd->nr_queues,
		.queue_depth = q->bd->depth + 1,
		.features = RDMX_PROTO_F_BLOCK,
		.generation = q->bd->generation,
	};
	struct rdmx_conn_params rep;

	lockdep_assert_held(&q->cm_mutex);
	if (rdmx_cm_rnr_endless(q->cm_id, ev)) {
		pr_err_ratelimited("rdmxb%u: %pISpc accepted queue %u asking for receiver-not-ready retries without end\n",
				   q->bd->index, &q->bd->addr, q->idx);
		return -EPROTO;
	}
	if (rdmx_conn_rep_parse(ev->param.conn.private_data,
				ev->param.conn.private_data_len, &sent, &rep) ||
	    rep.max_msg_size < SZ_4K)
		return -EPROTO;
	/* The server may grant fewer tags, before the disk exists. */
	if (rep.queue_depth - 1 < q->bd->depth) {
		if (q->bd->disk || rep.queue_depth < 2)
			return -EPROTO;
		q->bd->depth = rep.queue_depth - 1;
	}
	if (rep.max_msg_size < q->bd->max_io)
		q->bd->max_io = rounddown(rep.max_msg_size, SZ_4K);
	/* What the OPEN may ask of it (RDMX_PROTO_MINOR). */
	q->peer_minor = rep.minor;
	return 0;
}

static int rdmx_dq_cm_handler(struct rdma_cm_id *cm_id,
			      struct rdma_cm_event *ev)
{
	struct rdmx_dq *q = cm_id->context;
	enum rdmx_rej_reason reason;
	int err = 0;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		err = rdma_resolve_route(cm_id, RDMX_RESOLVE_TIMEOUT_MS);
		if (err)
			break;
		return 0;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		mutex_lock(&q->cm_mutex);
		err = q->cm_abandoned ? -ETIMEDOUT : rdmx_dq_route_resolved(q);
		mutex_unlock(&q->cm_mutex);
		if (err)
			break;
		return 0;
	case RDMA_CM_EVENT_ESTABLISHED:
		mutex_lock(&q->cm_mutex);
		err = q->cm_abandoned ? -ETIMEDOUT : rdmx_dq_established(q, ev);
		mutex_unlock(&q->cm_mutex);
		break;
	case RDMA_CM_EVENT_REJECTED:
		err = rdmx_cm_event_errno(cm_id, ev, &reason);
		if (reason != RDMX_REJ_UNKNOWN)
			pr_warn_ratelimited("rdmxb%u: %pISpc refused queue %u: %s\n",
					    q->bd->index, &q->bd->addr, q->idx,
					    rdmx_rej_reason_str(reason));
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		err = rdmx_cm_event_errno(cm_id, ev, &reason);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		/*
		 * The device's removal waits until this id is destroyed: no
		 * wait for its port (rdmx_disk_wait_port()), and an attempt
		 * in progress ends now rather than at its deadline.
		 */
		set_bit(RDMX_DQ_REMOVED, &q->flags);
		if (test_bit(RDMX_DQ_LIVE, &q->flags)) {
			rdmx_disk_error(q->bd, rdma_event_msg(ev->event),
					-ENODEV);
			return 0;
		}
		if (test_and_clear_bit(RDMX_DQ_OPENING, &q->flags))
			complete(&q->open_done);
		err = -ENODEV;
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_ADDR_CHANGE:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		if (test_bit(RDMX_DQ_LIVE, &q->flags))
			rdmx_disk_error(q->bd, rdma_event_msg(ev->event),
					ev->status);
		return 0;
	default:
		return 0;
	}
	q->cm_error = err;
	complete(&q->cm_done);
	return 0;
}

/*
 * The staging area an OPEN's answer @rsp granted: used when it has a slot
 * for every tag; -EPROTO for one no server would grant.
 */
static int rdmx_dq_stage_open(struct rdmx_dq *q, const struct rdmx_blk_rsp *rsp)
{
	u32 len = le32_to_cpu(rsp->stage_len);

	if (!len || len > RDMX_BLK_STAGE_MAX ||
	    !IS_ALIGNED(len, RDMX_BLK_STAGE_SLOT))
		return -EPROTO;
	q->stage_addr = le64_to_cpu(rsp->stage_addr);
	q->stage_rkey = le32_to_cpu(rsp->stage_rkey);
	q->stage_slots = len / RDMX_BLK_STAGE_SLOT;
	q->stage_next = 0;
	/* Nothing is in flight: the last connection's requests went back. */
	bitmap_zero(q->stage_busy, RDMX_BLK_STAGE_MAX / RDMX_BLK_STAGE_SLOT);
	q->stage = q->stage_slots >= q->bd->depth;
	return 0;
}

/* Send OPEN on a connected queue and wait for the answer. */
static int rdmx_dq_open(struct rdmx_dq *q, unsigned long deadline)
{
	struct rdmx_disk *bd = q->bd;
	struct rdmx_blk_rsp *rsp = &q->open_rsp;
	struct ib_send_wr wr = {};
	struct ib_sge sge;
	long left;
	u64 dma;
	u32 status;
	int ret;

	memset(&q->open_cmd, 0, sizeof(q->open_cmd));
	q->open_cmd.opcode = RDMX_BLK_OP_OPEN;
	q->open_cmd.length = cpu_to_le32(RDMX_BLK_OPEN_EVENTS |
					 (bd->ro ? RDMX_BLK_OPEN_RO : 0) |
					 (q->inline_read_max ?
					  RDMX_BLK_OPEN_INLINE_READ : 0) |
					 (q->imm_layout && q->peer_minor >= 1 ?
					  RDMX_BLK_OPEN_IMM_READ : 0) |
					 (q->inline_read_max && q->peer_minor >= 1 ?
					  RDMX_BLK_OPEN_BATCH : 0) |
					 (q->max_send_sge >= 2 && q->peer_minor >= 2 ?
					  RDMX_BLK_OPEN_CMD_BATCH : 0) |
					 (q->max_send_sge >= 2 &&
					  q->peer_minor >= RDMX_BLK_MINOR_DATA_FIRST &&
					  !rdma_protocol_iwarp(q->ibdev,
							       q->cm_id->port_num) ?
					  RDMX_BLK_OPEN_WRITE_IMM : 0) |
					 (q->max_send_sge >= 2 && !bd->ro &&
					  q->peer_minor >= RDMX_BLK_MINOR_STAGE &&
					  READ_ONCE(rdmx_blk_params.stage_writes) ?
					  RDMX_BLK_OPEN_STAGE : 0));
	memcpy(q->open_cmd.name, bd->name, sizeof(q->open_cmd.name));
	dma = ib_dma_map_single(q->ibdev, &q->open_cmd, sizeof(q->open_cmd),
				DMA_TO_DEVICE);
	if (ib_dma_mapping_error(q->ibdev, dma))
		return -ENOMEM;
	sge = (struct ib_sge){ .addr = dma, .length = sizeof(q->open_cmd),
			       .lkey = q->pd->local_dma_lkey };
	q->open_cqe.done = rdmx_dq_open_done;	/* errors only */
	wr.wr_cqe = &q->open_cqe;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	reinit_completion(&q->open_done);
	set_bit(RDMX_DQ_OPENING, &q->flags);
	ret = ib_post_send(q->qp, &wr, NULL);
	if (!ret) {
		left = wait_for_completion_killable_timeout(&q->open_done,
							    max_t(long, deadline - jiffies, 1));
		ret = left > 0 ? 0 : left ? left : -ETIMEDOUT;
	}
	/* Ended by the device's removal, not by an answer. */
	if (!ret && test_bit(RDMX_DQ_REMOVED, &q->flags))
		ret = -ENODEV;
	if (ret) {
		/* Drain before the buffer goes: the OPEN may still be posted. */
		ib_drain_qp(q->qp);
		ib_dma_unmap_single(q->ibdev, dma, sizeof(q->open_cmd),
				    DMA_TO_DEVICE);
		return ret;
	}
	ib_dma_unmap_single(q->ibdev, dma, sizeof(q->open_cmd), DMA_TO_DEVICE);
	status = le32_to_cpu(rsp->status);
	if (status)
		return status == ENOENT || status == EACCES ||
		       status == EBUSY ? -(int)status : -EPROTO;
	/* Its receives hold a batch of responses where they hold data. */
	q->batch = q->inline_read_max &&
		   (le32_to_cpu(rsp->open_flags) & RDMX_BLK_OPEN_BATCH);
	/* A server that declines inline READs gets registered buffers. */
	if (!(le32_to_cpu(rsp->open_flags) & RDMX_BLK_OPEN_INLINE_READ))
		q->inline_read_max = 0;
	q->imm_read = q->inline_read_max && q->imm_layout &&
		      (le32_to_cpu(rsp->open_flags) & RDMX_BLK_OPEN_IMM_READ);
	/* Commands together, one scatter entry each: if offered. */
	q->cmd_batch = (le32_to_cpu(q->open_cmd.length) &
			le32_to_cpu(rsp->open_flags) &
			RDMX_BLK_OPEN_CMD_BATCH) ?
		       min_t(u32, q->max_send_sge, RDMX_BLK_BATCH_MAX) : 0;
	/* Inline writes with them, their data alone after: if offered. */
	q->write_imm = q->cmd_batch &&
		       (le32_to_cpu(q->open_cmd.length) &
			le32_to_cpu(rsp->open_flags) & RDMX_BLK_OPEN_WRITE_IMM);
	/* Or their data before them, in the staging area: if offered. */
	if (q->cmd_batch && (le32_to_cpu(q->open_cmd.length) &
			     le32_to_cpu(rsp->open_flags) &
			     RDMX_BLK_OPEN_STAGE)) {
		ret = rdmx_dq_stage_open(q, rsp);
		if (ret)
			return ret;
	}
	if (q->idx == 0 && bd->disk && !uuid_equal(&rsp->uuid, &bd->exp_uuid)) {
		/* Another export under the same name: not our data. */
		pr_warn_ratelimited("rdmxb%u: export %s on %pISpc is not the one mapped (uuid %pUb, mapped %pUb)\n",
				    bd->index, bd->name, &bd->addr, &rsp->uuid,
				    &bd->exp_uuid);
		return -ESTALE;
	}
	if (q->idx == 0) {
		bd->size = le64_to_cpu(rsp->size);
		bd->lbs = le32_to_cpu(rsp->lbs);
		bd->exp_flags = le32_to_cpu(rsp->export_flags) &
				RDMX_BLK_EXP_KNOWN;
		bd->max_io = min(bd->max_io,
				 rounddown(le32_to_cpu(rsp->max_io), SZ_4K));
		uuid_copy(&bd->exp_uuid, &rsp->uuid);
		if ((bd->lbs != 512 && bd->lbs != 4096) || !bd->size ||
		    !IS_ALIGNED(bd->size, bd->lbs) || !bd->max_io)
			return -EPROTO;
		/* No completion runs while queues connect. */
		WRITE_ONCE(bd->seen_size, bd->size);
	} else if (le64_to_cpu(rsp->size) < bd->size ||
		   !uuid_equal(&rsp->uuid, &bd->exp_uuid)) {
		/*
		 * Another export, or a smaller one: start again. One that grew
		 * since queue 0 opened reaches the disk with a later response.
		 */
		return -EAGAIN;
	}
	return 0;
}

/* Reserved source ports a queue binds, tried from the top (sunrpc's range). */
#define RDMX_RESVPORT_MIN	665
#define RDMX_RESVPORT_MAX	1023

static atomic_t rdmx_resvport_next = ATOMIC_INIT(0);

/*
 * Bind a queue's id to a reserved source port on the any-address of @dst's
 * family: exports serve only such connections unless exported insecure,
 * since only a privileged process can bind one (rdma_cm checks
 * CAP_NET_BIND_SERVICE; reconnects run in a kernel worker, which has it).
 * The ports are taken in turn, so one just freed (on iWARP, a TCP port that
 * may linger) is not taken again at once.
 */
static int rdmx_dq_bind_resvport(struct rdmx_dq *q)
{
	const unsigned int n = RDMX_RESVPORT_MAX - RDMX_RESVPORT_MIN + 1;
	struct sockaddr_storage src = {};
	unsigned int i, k;
	int ret = -EADDRINUSE;

	src.ss_family = q->bd->addr.ss_family;
	for (i = 0; i < n; i++) {
		k = (unsigned int)atomic_inc_return(&rdmx_resvport_next) % n;
		rdmx_addr_set_port((struct sockaddr *)&src,
				   RDMX_RESVPORT_MAX - k);
		ret = rdma_bind_addr(q->cm_id, (struct sockaddr *)&src);
		if (ret != -EADDRINUSE && ret != -EADDRNOTAVAIL)
			break;
	}
	if (ret)
		pr_warn_ratelimited("rdmxb%u: queue %u: no reserved source port (%d)\n",
				    q->bd->index, q->idx, ret);
	return ret;
}

/* Connect one queue: resolve, connect, OPEN. Under bd->mutex. */
static int rdmx_dq_connect(struct rdmx_dq *q, unsigned long deadline)
{
	struct rdmx_disk *bd = q->bd;
	struct rdma_cm_id *cm_id;
	long left;
	int ret;

	lockdep_assert_held(&bd->mutex);
	cm_id = rdma_create_id(&init_net, rdmx_dq_cm_handler, q, RDMA_PS_TCP,
			       IB_QPT_RC);
	if (IS_ERR(cm_id))
		return PTR_ERR(cm_id);
	clear_bit(RDMX_DQ_REMOVED, &q->flags);
	q->cm_abandoned = false;
	q->cm_id = cm_id;
	q->cm_error = -ETIMEDOUT;
	reinit_completion(&q->cm_done);
	ret = rdmx_dq_bind_resvport(q);
	if (ret)
		return ret;
	ret = rdma_resolve_addr(cm_id, NULL, (struct sockaddr *)&bd->addr,
				RDMX_RESOLVE_TIMEOUT_MS);
	if (ret)
		return ret;
	left = wait_for_completion_killable_timeout(&q->cm_done,
						    max_t(long, deadline - jiffies, 1));
	if (left <= 0) {
		/*
		 * Keep the CM's handler off the queue while the caller frees
		 * what it built; the id goes after that (rdmx_dq_destroy()).
		 */
		mutex_lock(&q->cm_mutex);
		q->cm_abandoned = true;
		mutex_unlock(&q->cm_mutex);
		return left ? left : -ETIMEDOUT;
	}
	if (q->cm_error)
		return q->cm_error;
	ret = rdmx_dq_open(q, deadline);
	if (ret)
		return ret;
	WRITE_ONCE(q->last_answer, ktime_get_ns());
	set_bit(RDMX_DQ_LIVE, &q->flags);
	return 0;
}

/* Drain and free every queue's connection. Under bd->mutex. */
static void rdmx_disk_teardown_queues(struct rdmx_disk *bd)
{
	unsigned int i;

	lockdep_assert_held(&bd->mutex);
	for (i = 0; i < bd->nr_queues; i++) {
		clear_bit(RDMX_DQ_LIVE, &bd->queues[i].flags);
		if (bd->queues[i].cm_id)
			rdma_disconnect(bd->queues[i].cm_id);
	}
	for (i = 0; i < bd->nr_queues; i++)
		if (bd->queues[i].qp)
			ib_drain_qp(bd->queues[i].qp);
}

static void rdmx_disk_destroy_queues(struct rdmx_disk *bd)
{
	unsigned int i;

	for (i = 0; i < bd->nr_queues; i++)
		rdmx_dq_destroy(&bd->queues[i]);
}

/* Connect every queue. Under bd->mutex. */
static int rdmx_disk_connect(struct rdmx_disk *bd, unsigned int timeout_ms)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(timeout_ms);
	unsigned int i;
	int ret;

	lockdep_assert_held(&bd->mutex);
	bd->generation++;
	for (i = 0; i < bd->nr_queues; i++) {
		ret = rdmx_dq_connect(&bd->queues[i], deadline);
		if (ret)
			goto out_teardown;
	}
	return 0;

out_teardown:
	rdmx_disk_teardown_queues(bd);
	rdmx_disk_destroy_queues(bd);
	return ret;
}

/*
 * The only place a map changes state, under bd->lock. An illegal
 * transition is a bug: it is refused with a warning.
 */
static bool rdmx_disk_move(struct rdmx_disk *bd, enum rdmx_disk_state to)
{
	lockdep_assert_held(&bd->lock);
	if (WARN_ONCE(!rdmx_fsm_valid(&rdmx_disk_fsm, bd->state, to),
		      "rdmx: rdmxb%u: %s -> %s\n", bd->index,
		      rdmx_fsm_name(&rdmx_disk_fsm, bd->state),
		      rdmx_fsm_name(&rdmx_disk_fsm, to)))
		return false;
	trace_rdmx_disk_state(bd->index, bd->state, to);
	WRITE_ONCE(bd->state, to);
	return true;
}

/* Move a map from @from to @to, if it is still in @from. */
static bool rdmx_disk_set_state(struct rdmx_disk *bd,
				enum rdmx_disk_state from,
				enum rdmx_disk_state to)
{
	bool ok;

	spin_lock_bh(&bd->lock);
	ok = bd->state == from && rdmx_disk_move(bd, to);
	spin_unlock_bh(&bd->lock);
	return ok;
}

/*
 * A connection failed: recover, once; @why and @err (a negative errno, or
 * minus a work completion status) say what happened first. Any context.
 */
static void rdmx_disk_error(struct rdmx_disk *bd, const char *why, int err)
{
	if (!rdmx_disk_set_state(bd, RDMX_DISK_LIVE, RDMX_DISK_RECONNECTING))
		return;
	pr_warn_ratelimited("rdmxb%u: %s (%d): reconnecting to %pISpc\n", bd->index, why,
			    err, &bd->addr);
	queue_work(rdmx_disk_wq, &bd->err_work);
}

/*
 * The loss timeout as a bound on waits that must end even when the map
 * waits for its server for ever: a request that is sent again and again
 * while the connection comes back each time, the wait for a port.
 */
static unsigned int rdmx_disk_bounded_loss_ms(const struct rdmx_disk *bd)
{
	return min(bd->loss_timeout_ms, RDMX_MAP_LOSS_TIMEOUT_MAX_MS);
}

/**
 * rdmx_blk_requeue_ok - whether a request taken back from a lost connection
 * is held for the next one
 * @now: ktime_get_ns() now
 * @first: when the request was first sent
 * @requeues: how often it was taken back before
 * @loss: the map's loss timeout, ns
 *
 * Requests are held across reconnects for as long as the server may take to
 * come back, the loss timeout, counted from the loss. But when every
 * reconnect succeeds and a request still never completes (a server that
 * drops the connection on it, requests that always outlive their timeout),
 * holding it would hang its caller for ever. So a request taken back
 * RDMX_DISK_REQUEUE_MIN times already and first sent longer ago than the
 * loss timeout fails instead (nvme fails one after nvme_max_retries).
 *
 * Return: true to requeue it; false to fail it.
 */
bool rdmx_blk_requeue_ok(u64 now, u64 first, unsigned int requeues, u64 loss)
{
	return requeues < RDMX_DISK_REQUEUE_MIN || now - first <= loss;
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_blk_requeue_ok);

/* Take back a request that was in flight on a torn-down connection. */
static bool rdmx_disk_cancel_rq(struct request *rq, void *data)
{
	struct rdmx_dq_req *req = blk_mq_rq_to_pdu(rq);
	struct rdmx_disk *bd = req->q->bd;
	u64 now = ktime_get_ns();

	if (blk_mq_request_completed(rq) || !req->in_flight)
		return true;
	rdmx_dq_unmap(req, rq);
	if (!rdmx_blk_requeue_ok(now, req->first_ns, req->requeues,
				 (u64)rdmx_disk_bounded_loss_ms(bd) * NSEC_PER_MSEC)) {
		pr_err_ratelimited("rdmxb%u: a request at sector %llu was sent %u times over %llu ms and never completed: failing it\n",
				   bd->index, (u64)blk_rq_pos(rq),
				   req->requeues + 1,
				   div_u64(now - req->first_ns, NSEC_PER_MSEC));
		req->status = BLK_STS_IOERR;
		blk_mq_complete_request(rq);
		return true;
	}
	req->in_flight = false;
	atomic_dec(&req->q->sent);
	req->requeues++;
	atomic64_inc(&req->q->stats.requeues);
	blk_mq_requeue_request(rq, false);
	return true;
}

/* Quiesced and torn down: take every request back for a later retry. */
static void rdmx_disk_cancel_all(struct rdmx_disk *bd)
{
	blk_mq_tagset_busy_iter(&bd->tag_set, rdmx_disk_cancel_rq, NULL);
	blk_mq_tagset_wait_completed_request(&bd->tag_set);
}

/* Whether a queue's device is going away. */
static bool rdmx_disk_dev_removed(struct rdmx_disk *bd)
{
	unsigned int i;

	for (i = 0; i < bd->nr_queues; i++)
		if (test_bit(RDMX_DQ_REMOVED, &bd->queues[i].flags))
			return true;
	return false;
}

/*
 * After a loss, wait (up to the loss timeout, or until the disk is being
 * unmapped or the device removed: that removal waits for the queues to go)
 * for the queues' port to carry the DREQs that tearing them down sends:
 * see rdmx_port_usable(). Under bd->mutex.
 */
static bool rdmx_disk_port_wait_ends(void *arg)
{
	struct rdmx_disk *bd = arg;

	return READ_ONCE(bd->state) == RDMX_DISK_DELETING ||
	       rdmx_disk_dev_removed(bd);
}

static void rdmx_disk_wait_port(struct rdmx_disk *bd)
{
	struct rdma_cm_id *id = NULL;
	unsigned int i;
	char who[16];

	lockdep_assert_held(&bd->mutex);
	for (i = 0; i < bd->nr_queues && !id; i++)
		if (bd->queues[i].cm_id && bd->queues[i].cm_id->device)
			id = bd->queues[i].cm_id;
	if (!id)
		return;
	snprintf(who, sizeof(who), "rdmxb%u", bd->index);
	rdmx_port_wait(id->device, id->port_num,
		       jiffies + msecs_to_jiffies(rdmx_disk_bounded_loss_ms(bd)),
		       rdmx_disk_port_wait_ends, bd, who);
}

static void rdmx_disk_err_work(struct work_struct *work)
{
	struct rdmx_disk *bd = container_of(work, struct rdmx_disk, err_work);

	if (bd->loss_timeout_ms == RDMX_MAP_LOSS_TIMEOUT_FOREVER)
		pr_warn_ratelimited("rdmxb%u: connection to %pISpc lost; I/O waits until it is back\n",
				    bd->index, &bd->addr);
	else
		pr_warn_ratelimited("rdmxb%u: connection to %pISpc lost; I/O waits up to %u ms\n",
				    bd->index, &bd->addr, bd->loss_timeout_ms);
	bd->down_since = jiffies;
	blk_mq_quiesce_tagset(&bd->tag_set);
	bd->quiesced = true;
	mutex_lock(&bd->mutex);
	rdmx_disk_wait_port(bd);
	rdmx_disk_teardown_queues(bd);
	rdmx_disk_cancel_all(bd);
	rdmx_disk_destroy_queues(bd);
	mutex_unlock(&bd->mutex);
	bd->attempts = 0;
	queue_delayed_work(rdmx_disk_wq, &bd->reconnect_work,
			   msecs_to_jiffies(RDMX_RECONNECT_MIN_MS));
}

/* Give the disk the export's size, if it changed; udev hears of it. */
static void rdmx_disk_set_size(struct rdmx_disk *bd)
{
	u64 old;

	mutex_lock(&bd->mutex);
	old = get_capacity(bd->disk) << SECTOR_SHIFT;
	if (bd->size != old &&
	    set_capacity_and_notify(bd->disk, bd->size >> SECTOR_SHIFT))
		pr_info_ratelimited("rdmxb%u: export %s resized from %llu to %llu bytes\n",
				    bd->index, bd->name, old, bd->size);
	mutex_unlock(&bd->mutex);
}

/* A response reported a larger export: grow the disk. */
static void rdmx_disk_resize_work(struct work_struct *work)
{
	struct rdmx_disk *bd = container_of(work, struct rdmx_disk,
					    resize_work);
	u64 size = READ_ONCE(bd->seen_size);

	mutex_lock(&bd->mutex);
	if (size > bd->size)
		bd->size = size;
	mutex_unlock(&bd->mutex);
	rdmx_disk_set_size(bd);
}

static void rdmx_disk_reconnect_work(struct work_struct *work)
{
	struct rdmx_disk *bd = container_of(to_delayed_work(work),
					    struct rdmx_disk, reconnect_work);
	unsigned long backoff;
	int ret;

	if (READ_ONCE(bd->state) != RDMX_DISK_RECONNECTING)
		return;
	mutex_lock(&bd->mutex);
	ret = rdmx_disk_connect(bd, RDMX_CONNECT_ATTEMPT_MS);
	mutex_unlock(&bd->mutex);
	if (!ret && rdmx_disk_set_state(bd, RDMX_DISK_RECONNECTING,
					RDMX_DISK_LIVE)) {
		atomic64_inc(&bd->reconnects);
		pr_info_ratelimited("rdmxb%u: reconnected to %pISpc after %u ms\n",
				    bd->index, &bd->addr,
				    jiffies_to_msecs(jiffies - bd->down_since));
		rdmx_disk_set_size(bd);
		bd->quiesced = false;
		blk_mq_unquiesce_tagset(&bd->tag_set);
		blk_mq_kick_requeue_list(bd->disk->queue);
		return;
	}
	/*
	 * Another export under the name (rdmx_dq_open()): not our data,
	 * which waiting cannot bring back.
	 */
	if (ret == -ESTALE ||
	    (bd->loss_timeout_ms != RDMX_MAP_LOSS_TIMEOUT_FOREVER &&
	     time_after(jiffies, bd->down_since +
			msecs_to_jiffies(bd->loss_timeout_ms)))) {
		if (rdmx_disk_set_state(bd, RDMX_DISK_RECONNECTING,
					RDMX_DISK_DEAD)) {
			if (ret == -ESTALE)
				pr_err_ratelimited("rdmxb%u: export %s on %pISpc is other storage now: failing I/O\n",
						   bd->index, bd->name, &bd->addr);
			else
				pr_err_ratelimited("rdmxb%u: %pISpc lost for %u ms (last error %d): failing I/O\n",
						   bd->index, &bd->addr,
						   bd->loss_timeout_ms, ret);
			bd->quiesced = false;
			blk_mq_unquiesce_tagset(&bd->tag_set);
			blk_mq_kick_requeue_list(bd->disk->queue);
		}
		return;
	}
	bd->attempts++;
	backoff = rdmx_backoff_ms(bd->attempts, RDMX_DISK_RECONNECT_MAX_MS);
	pr_info_ratelimited("rdmxb%u: reconnect attempt %u failed: %d\n",
			    bd->index, bd->attempts, ret);
	queue_delayed_work(rdmx_disk_wq, &bd->reconnect_work,
			   msecs_to_jiffies(backoff));
}

/* ---- the disk ------------------------------------------------------------ */

static int rdmx_disk_open(RDMX_BDEV_OPEN_PARAMS)
{
	struct rdmx_disk *bd = RDMX_BDEV_OPEN_DISK->private_data;

	if (READ_ONCE(bd->state) == RDMX_DISK_DELETING)
		return -ENXIO;
	return 0;
}

static const struct block_device_operations rdmx_disk_fops = {
	.owner = THIS_MODULE,
	.open = rdmx_disk_open,
};

static int rdmx_disk_add_disk(struct rdmx_disk *bd)
{
	struct queue_limits lim = {
		.logical_block_size = bd->lbs,
		.physical_block_size = bd->lbs,
		.io_min = bd->lbs,
		.max_hw_sectors = bd->max_io >> SECTOR_SHIFT,
		.virt_boundary_mask = SZ_4K - 1,
		.max_segments = bd->queues[0].max_pages - 1,
	};
	blk_features_t features = 0;
	struct gendisk *disk;
	int ret;

	lim.max_hw_sectors = min_t(u32, lim.max_hw_sectors,
				   (lim.max_segments - 1) * (SZ_4K >> SECTOR_SHIFT));
	/* A read-only disk writes nothing, so it has nothing to flush. */
	if ((bd->exp_flags & RDMX_BLK_EXP_FLUSH) && !bd->ro &&
	    !(bd->exp_flags & RDMX_BLK_EXP_RO))
		features |= BLK_FEAT_WRITE_CACHE | BLK_FEAT_FUA;
	if (bd->exp_flags & RDMX_BLK_EXP_DISCARD) {
		lim.max_hw_discard_sectors = bd->max_io >> SECTOR_SHIFT;
		lim.discard_granularity = bd->lbs;
		lim.max_discard_segments = 1;
	}
	if (bd->exp_flags & RDMX_BLK_EXP_WZEROES)
		lim.max_write_zeroes_sectors = bd->max_io >> SECTOR_SHIFT;

	bd->tag_set.ops = &rdmx_disk_mq_ops;
	bd->tag_set.nr_hw_queues = bd->nr_queues;
	bd->tag_set.queue_depth = bd->depth;
	bd->tag_set.numa_node = NUMA_NO_NODE;
	bd->tag_set.cmd_size = sizeof(struct rdmx_dq_req) +
			       SG_CHUNK_SIZE * sizeof(struct scatterlist);
	/*
	 * No I/O scheduler unless the administrator sets one: the server's
	 * block layer schedules for its device, and with one hardware queue
	 * mq-deadline would insert and dispatch every request again here,
	 * and run the queue from kblockd rather than the submitter.
	 */
	bd->tag_set.flags = RDMX_BLK_MQ_F_MERGE | BLK_MQ_F_NO_SCHED_BY_DEFAULT;
	bd->tag_set.timeout = RDMX_DISK_IO_TIMEOUT_S * HZ;
	bd->tag_set.driver_data = bd;
	ret = blk_mq_alloc_tag_set(&bd->tag_set);
	if (ret)
		return ret;
	disk = rdmx_alloc_disk(&bd->tag_set, &lim, features, bd);
	if (IS_ERR(disk)) {
		ret = PTR_ERR(disk);
		goto out_free_tag_set;
	}
	disk->major = rdmx_disk_major;
	disk->first_minor = bd->index * RDMX_DISK_MINORS;
	disk->minors = RDMX_DISK_MINORS;
	disk->fops = &rdmx_disk_fops;
	disk->private_data = bd;
	snprintf(disk->disk_name, DISK_NAME_LEN, "rdmxb%u", bd->index);
	set_capacity(disk, bd->size >> SECTOR_SHIFT);
	if (bd->ro || (bd->exp_flags & RDMX_BLK_EXP_RO))
		set_disk_ro(disk, true);
	bd->disk = disk;
	ret = device_add_disk(NULL, disk, rdmx_disk_groups);
	if (ret)
		goto out_put_disk;
	ret = rdmx_disk_sysfs_add(bd);
	if (ret)
		goto out_del_disk;
	return 0;

out_del_disk:
	del_gendisk(disk);
	/* The partition scan's responses may have queued it. */
	cancel_work_sync(&bd->resize_work);
out_put_disk:
	bd->disk = NULL;
	put_disk(disk);
out_free_tag_set:
	blk_mq_free_tag_set(&bd->tag_set);
	return ret;
}

/* Remove a map whose state is DELETING. Under rdmx_maps_mutex. */
static void rdmx_disk_remove(struct rdmx_disk *bd)
{
	lockdep_assert_held(&rdmx_maps_mutex);
	cancel_work_sync(&bd->err_work);
	cancel_delayed_work_sync(&bd->reconnect_work);
	/*
	 * Take back what is in flight, then let every request through: they
	 * fail (state DELETING), so del_gendisk() finds the queue empty.
	 */
	if (!bd->quiesced)
		blk_mq_quiesce_tagset(&bd->tag_set);
	mutex_lock(&bd->mutex);
	rdmx_disk_teardown_queues(bd);
	rdmx_disk_cancel_all(bd);
	rdmx_disk_destroy_queues(bd);
	mutex_unlock(&bd->mutex);
	/* No completion is left to queue it again. */
	cancel_work_sync(&bd->resize_work);
	bd->quiesced = false;
	blk_mq_unquiesce_tagset(&bd->tag_set);
	blk_mq_kick_requeue_list(bd->disk->queue);
	rdmx_disk_sysfs_del(bd);
	del_gendisk(bd->disk);
	put_disk(bd->disk);
	blk_mq_free_tag_set(&bd->tag_set);
	xa_erase(&rdmx_maps, bd->index);
	pr_info("rdmxb%u: unmapped\n", bd->index);
	kfree(bd->queues);
	kfree(bd);
}

/**
 * rdmx_ioc_map() - RDMX_IOC_MAP
 * @uarg: struct rdmx_map
 *
 * Context: process context; needs CAP_SYS_ADMIN.
 * Return: 0 or a negative errno (see the uapi header).
 */
long rdmx_ioc_map(void __user *uarg)
{
	struct rdmx_disk *bd;
	struct rdmx_map m;
	unsigned long busy_until;
	unsigned int i;
	u32 usize, id;
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	ret = rdmx_copy_args_in(&m, sizeof(m), RDMX_MAP_SIZE_VER0, uarg, &usize);
	if (ret)
		return ret;
	if (m.flags & ~RDMX_MAP_RO || m.reserved0 || m.index ||
	    memchr_inv(m.reserved, 0, sizeof(m.reserved)) ||
	    !rdmx_service_name_valid((const char *)m.name, sizeof(m.name)) ||
	    m.nr_queues > RDMX_MAP_QUEUES_MAX ||
	    m.queue_depth > RDMX_MAP_DEPTH_MAX ||
	    (m.loss_timeout_ms > RDMX_MAP_LOSS_TIMEOUT_MAX_MS &&
	     m.loss_timeout_ms != RDMX_MAP_LOSS_TIMEOUT_FOREVER))
		return -EINVAL;

	bd = kzalloc(sizeof(*bd), GFP_KERNEL);
	if (!bd)
		return -ENOMEM;
	ret = rdmx_addr_from_user(&m.addr, &bd->addr, false);
	if (ret)
		goto out_free;
	memcpy(bd->name, m.name, sizeof(bd->name));
	uuid_gen(&bd->uuid);
	bd->ro = m.flags & RDMX_MAP_RO;
	bd->nr_queues = min(m.nr_queues ?: num_online_cpus(), num_online_cpus());
	bd->depth = m.queue_depth ?: RDMX_DISK_DEPTH_DEFAULT;
	bd->max_io = RDMX_BLK_MAX_IO;
	bd->loss_timeout_ms = m.loss_timeout_ms ?: rdmx_params.loss_timeout_ms;
	bd->state = RDMX_DISK_CONNECTING;	/* the first state: no move */
	mutex_init(&bd->mutex);
	spin_lock_init(&bd->lock);
	INIT_WORK(&bd->err_work, rdmx_disk_err_work);
	INIT_DELAYED_WORK(&bd->reconnect_work, rdmx_disk_reconnect_work);
	INIT_WORK(&bd->resize_work, rdmx_disk_resize_work);
	bd->queues = kcalloc(bd->nr_queues, sizeof(*bd->queues), GFP_KERNEL);
	if (!bd->queues) {
		ret = -ENOMEM;
		goto out_free;
	}
	for (i = 0; i < bd->nr_queues; i++) {
		bd->queues[i].bd = bd;
		bd->queues[i].idx = i;
		mutex_init(&bd->queues[i].cm_mutex);
		spin_lock_init(&bd->queues[i].cork_lock);
		spin_lock_init(&bd->queues[i].stage_lock);
		bd->queues[i].stage_cqe.done = rdmx_dq_stage_done;
		init_completion(&bd->queues[i].cm_done);
		init_completion(&bd->queues[i].open_done);
	}

	/* The index is taken now; unmap ignores the map until it has a disk. */
	mutex_lock(&rdmx_maps_mutex);
	ret = xa_alloc(&rdmx_maps, &id, bd,
		       XA_LIMIT(0, (MINORMASK + 1) / RDMX_DISK_MINORS - 1),
		       GFP_KERNEL);
	mutex_unlock(&rdmx_maps_mutex);
	if (ret)
		goto out_free;
	bd->index = id;
	/* Other maps and unmaps go on while this one connects. */
	busy_until = jiffies + msecs_to_jiffies(RDMX_DISK_BUSY_MS);
	mutex_lock(&bd->mutex);
	while ((ret = rdmx_disk_connect(bd, m.timeout_ms ?:
					RDMX_DISK_TIMEOUT_MS)) == -EBUSY &&
	       time_before(jiffies, busy_until) &&
	       !msleep_interruptible(200))
		;
	mutex_unlock(&bd->mutex);
	if (ret == -EBUSY)
		pr_warn("export %s on %pISpc: another map writes it; read-write map refused\n",
			bd->name, &bd->addr);
	if (ret)
		goto out_erase;
	mutex_lock(&rdmx_maps_mutex);
	ret = rdmx_disk_add_disk(bd);
	if (ret) {
		mutex_unlock(&rdmx_maps_mutex);
		goto out_disconnect;
	}
	rdmx_disk_set_state(bd, RDMX_DISK_CONNECTING, RDMX_DISK_LIVE);
	mutex_unlock(&rdmx_maps_mutex);
	pr_info("rdmxb%u: %s on %pISpc, %llu bytes, %u queues of %u\n",
		bd->index, bd->name, &bd->addr, bd->size, bd->nr_queues,
		bd->depth);
	m.index = bd->index;
	return rdmx_copy_args_out(uarg, &m, sizeof(m), usize);

out_disconnect:
	mutex_lock(&bd->mutex);
	rdmx_disk_teardown_queues(bd);
	rdmx_disk_destroy_queues(bd);
	mutex_unlock(&bd->mutex);
out_erase:
	/* Under the mutex: an unmap may be looking at the map. */
	mutex_lock(&rdmx_maps_mutex);
	xa_erase(&rdmx_maps, bd->index);
	mutex_unlock(&rdmx_maps_mutex);
out_free:
	kfree(bd->queues);
	kfree(bd);
	return ret == -EAGAIN ? -EBUSY : ret;
}

/**
 * rdmx_ioc_unmap() - RDMX_IOC_UNMAP
 * @uarg: struct rdmx_unmap
 *
 * Context: process context; needs CAP_SYS_ADMIN.
 * Return: 0 or a negative errno (see the uapi header).
 */
long rdmx_ioc_unmap(void __user *uarg)
{
	struct rdmx_unmap um;
	struct rdmx_disk *bd;
	u32 usize;
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	ret = rdmx_copy_args_in(&um, sizeof(um), RDMX_UNMAP_SIZE_VER0, uarg,
				&usize);
	if (ret)
		return ret;
	if (um.flags & ~RDMX_UNMAP_FORCE || um.reserved)
		return -EINVAL;
	mutex_lock(&rdmx_maps_mutex);
	bd = xa_load(&rdmx_maps, um.index);
	if (!bd || !bd->disk) {
		ret = -ENOENT;
		goto out_unlock;
	}
	mutex_lock(&bd->disk->open_mutex);
	if (disk_openers(bd->disk) && !(um.flags & RDMX_UNMAP_FORCE)) {
		mutex_unlock(&bd->disk->open_mutex);
		ret = -EBUSY;
		goto out_unlock;
	}
	spin_lock_bh(&bd->lock);
	rdmx_disk_move(bd, RDMX_DISK_DELETING);
	spin_unlock_bh(&bd->lock);
	mutex_unlock(&bd->disk->open_mutex);
	rdmx_disk_remove(bd);
	mutex_unlock(&rdmx_maps_mutex);
	return rdmx_copy_args_out(uarg, &um, sizeof(um), usize);

out_unlock:
	mutex_unlock(&rdmx_maps_mutex);
	return ret;
}

/**
 * rdmx_blk_clt_init() - set up the block client
 *
 * Context: module load.
 * Return: 0 or a negative errno.
 */
int rdmx_blk_clt_init(void)
{
	rdmx_disk_wq = alloc_workqueue("rdmx_bdev", WQ_MEM_RECLAIM | WQ_UNBOUND,
				       0);
	if (!rdmx_disk_wq)
		return -ENOMEM;
	rdmx_disk_major = register_blkdev(0, "rdmxb");
	if (rdmx_disk_major < 0) {
		destroy_workqueue(rdmx_disk_wq);
		return rdmx_disk_major;
	}
	return 0;
}

/**
 * rdmx_blk_clt_exit() - unmap every disk (forcibly) and clean up
 *
 * Context: module unload; nothing holds a disk open (the module's
 * reference count says so).
 */
void rdmx_blk_clt_exit(void)
{
	struct rdmx_disk *bd;
	unsigned long id;

	mutex_lock(&rdmx_maps_mutex);
	xa_for_each(&rdmx_maps, id, bd) {
		spin_lock_bh(&bd->lock);
		rdmx_disk_move(bd, RDMX_DISK_DELETING);
		spin_unlock_bh(&bd->lock);
		rdmx_disk_remove(bd);
	}
	mutex_unlock(&rdmx_maps_mutex);
	unregister_blkdev(rdmx_disk_major, "rdmxb");
	destroy_workqueue(rdmx_disk_wq);
}
