// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx block service: the server's queues.
 *
 * An export (struct rdmx_export, export.c) is a block device, a regular
 * file or a RAM region (a shmem file) under a name. A client's hardware
 * queue connects to a listener with a request offering
 * RDMX_PROTO_F_BLOCK; the listener hands it here, and it becomes a server
 * queue (struct rdmx_srvq) with its own QP, CQ and PD. Its first command binds
 * it to an export (OPEN); then each command is checked, run by a work item
 * (backing I/O sleeps), and answered. A READ or WRITE of a block device
 * export is a bio instead, answered from its completion. Data moves with rdma_rw: RDMA
 * READ of the client's buffer for a write, RDMA WRITE into it for a read,
 * chained before the response, a SEND with invalidate of the client's key;
 * or inline in the command (small writes) or after the response (small
 * reads).
 *
 * Lifetimes: an export is a kobject; the export table and each bound queue
 * hold a reference. A queue is torn down once, by its release work (or by
 * the CM handler on device removal, which then lets rdma_cm destroy the id),
 * after its QP is drained and its commands are finished.
 *
 * Locking (outermost first):
 *   rdmx_exports_mutex   the export table, each export's queue list and a
 *                        queue's binding to its export
 *   q->lock              (spinlock, irqsave) a queue's state and its
 *                        posting: nothing is posted once it is torn
 *   exp->fence           (SRCU, read with srcu_down_read()) held from
 *                        the start of each change of the backing store
 *                        to its end (a bio's completion, for a WRITE);
 *                        an OPEN that fenced older queues of its map
 *                        waits for its grace period after it dropped
 *                        rdmx_exports_mutex
 * rdmx_srvq_watch() (every second while queues exist, on rdmx_blk_wq) looks
 * at every queue under rdmx_exports_mutex, and drops one only through
 * rdmx_srvq_expire(), under q->lock while it is not torn.
 *
 * A queue's state (enum rdmx_srvq_state) changes in rdmx_srvq_move() alone:
 * accepting -> live once rdma_accept() returned; to failing when it is
 * dropped (rdmx_srvq_fail(), rdmx_srvq_expire()); to torn by whichever of
 * the CM handler and a failed accept claims the teardown. Fencing
 * (RDMX_SRVQ_FENCED) is no state: a queue in any state may be fenced.
 * Completions run from the CQ pool's workqueue (IB_POLL_WORKQUEUE).
 * Commands run on rdmx_blk_wq, except a READ or WRITE of a block device
 * export, which the CQ's work runs itself (it sleeps no longer than
 * submit_bio() may; a device with no room refuses the bio, REQ_NOWAIT, and
 * the command goes on from its work). A bio's completion (io_bdev.c) runs in any context,
 * interrupts included, so what it calls neither sleeps nor allocates: it
 * posts the response and, if that fails, ends the command
 * (rdmx_srvq_req_end()) and fails the queue (rdmx_srvq_fail()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/inet.h>
#include <linux/kobject.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/blkdev.h>
#include <net/ipv6.h>
#include <net/sock.h>
#include <rdma/ib_cm.h>
#include <rdma/ib_verbs.h>
#include <rdma/rw.h>

#include "core/cm.h"
#include "core/compat.h"
#include "core/rdmx.h"
#include "blk.h"
#include "blk_srv.h"
#include "blk_trace.h"

static_assert(sizeof(struct rdmx_blk_cmd) == 96);
static_assert(sizeof(struct rdmx_blk_rsp) == 64);
/* A batch's WRITEs are a mask of a u32 (rdmx_srvq_recv_batch()). */
static_assert(RDMX_BLK_BATCH_MAX <= 32);
/* A staged WRITE is as long as an inline one; a tag's slot lies in a page. */
static_assert(RDMX_BLK_STAGE_SLOT == RDMX_BLK_INLINE_MAX);
static_assert(IS_ALIGNED(PAGE_SIZE, RDMX_BLK_STAGE_SLOT));
static_assert(RDMX_SRVQ_DEPTH_MAX * RDMX_BLK_STAGE_SLOT <= RDMX_BLK_STAGE_MAX);
static_assert(sizeof(struct rdmx_export_resize) ==
	      RDMX_EXPORT_RESIZE_SIZE_VER0);

/* Every server queue, bound or not (for unload). */
static LIST_HEAD(rdmx_srvqs);
struct workqueue_struct *rdmx_blk_wq;
/* Server queues alive, for unload. */
static atomic_t rdmx_srvq_count = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(rdmx_srvq_wait);
static void rdmx_srvq_watch(struct work_struct *work);
/* Drops half-open and vanished clients' queues; runs while queues exist. */
static DECLARE_DELAYED_WORK(rdmx_srvq_watch_work, rdmx_srvq_watch);

#define TO(s)	RDMX_FSM_TO(RDMX_SRVQ_, s)

/* A server queue's moves: rdmx_srvq_move() takes only these. */
static const u32 rdmx_srvq_next[RDMX_SRVQ_NR_STATES] = {
	[RDMX_SRVQ_ACCEPTING] = TO(LIVE) | TO(FAILING) | TO(TORN),
	[RDMX_SRVQ_LIVE] = TO(FAILING) | TO(TORN),
	[RDMX_SRVQ_FAILING] = TO(TORN),
	[RDMX_SRVQ_TORN] = 0,
};

#undef TO

static const char *const rdmx_srvq_state_names[RDMX_SRVQ_NR_STATES] = {
	[RDMX_SRVQ_ACCEPTING] = "accepting",
	[RDMX_SRVQ_LIVE] = "live",
	[RDMX_SRVQ_FAILING] = "failing",
	[RDMX_SRVQ_TORN] = "torn",
};

const struct rdmx_fsm rdmx_srvq_fsm = {
	.what = "server queue",
	.nr = RDMX_SRVQ_NR_STATES,
	.names = rdmx_srvq_state_names,
	.next = rdmx_srvq_next,
};
EXPORT_SYMBOL_IF_KUNIT(rdmx_srvq_fsm);

/*
 * Move @q to @to if it is in one of the states in @from (a mask of
 * BIT(state)); under q->lock. A queue in none of them was moved first by
 * another path (a failure racing a disconnect, say): no move, no warning.
 * Return: whether it moved.
 */
static bool rdmx_srvq_move(struct rdmx_srvq *q, u32 from,
			   enum rdmx_srvq_state to)
{
	lockdep_assert_held(&q->lock);
	if (!(from & BIT(q->state)))
		return false;
	if (WARN_ONCE(!rdmx_fsm_valid(&rdmx_srvq_fsm, q->state, to),
		      "rdmx: block queue %u: %s -> %s\n", q->idx,
		      rdmx_fsm_name(&rdmx_srvq_fsm, q->state),
		      rdmx_fsm_name(&rdmx_srvq_fsm, to)))
		return false;
	trace_rdmx_srvq_state(&q->map_uuid, q->idx, q->state, to);
	WRITE_ONCE(q->state, to);
	return true;
}

/* rdmx_srvq_move() from any context, taking q->lock. */
static bool rdmx_srvq_set_state(struct rdmx_srvq *q, u32 from,
				enum rdmx_srvq_state to)
{
	unsigned long flags;
	bool moved;

	spin_lock_irqsave(&q->lock, flags);
	moved = rdmx_srvq_move(q, from, to);
	spin_unlock_irqrestore(&q->lock, flags);
	return moved;
}

/* Whether @q's teardown is under way: nothing more is posted. */
static bool rdmx_srvq_torn(const struct rdmx_srvq *q)
{
	return READ_ONCE(q->state) == RDMX_SRVQ_TORN;
}

#define TO(s)	RDMX_FSM_TO(RDMX_STAGE_, s)

/* A command context's moves: rdmx_srvq_req_move() takes only these. */
static const u32 rdmx_srvq_stage_next[RDMX_STAGE_NR] = {
	[RDMX_STAGE_IDLE] = TO(RUNNING) | TO(RESPONDING),
	[RDMX_STAGE_RUNNING] = TO(FETCHING) | TO(READING) | TO(WRITING) |
			       TO(RESPONDING) | TO(IDLE),
	[RDMX_STAGE_FETCHING] = TO(WRITING) | TO(IDLE),
	[RDMX_STAGE_WRITING] = TO(RESPONDING),
	[RDMX_STAGE_READING] = TO(RESPONDING),
	[RDMX_STAGE_RESPONDING] = TO(IDLE),
};

#undef TO

static const char *const rdmx_srvq_stage_names[RDMX_STAGE_NR] = {
	[RDMX_STAGE_IDLE] = "idle",
	[RDMX_STAGE_RUNNING] = "running",
	[RDMX_STAGE_FETCHING] = "fetching",
	[RDMX_STAGE_WRITING] = "writing",
	[RDMX_STAGE_READING] = "reading",
	[RDMX_STAGE_RESPONDING] = "responding",
};

const struct rdmx_fsm rdmx_srvq_stage_fsm = {
	.what = "block command",
	.nr = RDMX_STAGE_NR,
	.names = rdmx_srvq_stage_names,
	.next = rdmx_srvq_stage_next,
};
EXPORT_SYMBOL_IF_KUNIT(rdmx_srvq_stage_fsm);

/*
 * Move a command context on to stage @to. Its owner alone calls this (one
 * thread at a time owns a context; a completion hands it on), so no lock
 * is needed. An illegal move is a bug: warned about, and made anyway, as
 * the context's resources go with the code path, not with the stage.
 */
static void rdmx_srvq_req_move(struct rdmx_srvq_req *req,
			       enum rdmx_srvq_stage to)
{
	WARN_ONCE(!rdmx_fsm_valid(&rdmx_srvq_stage_fsm, req->stage, to),
		  "rdmx: block queue %u tag %u: %s -> %s\n", req->q->idx,
		  req->io.tag, rdmx_fsm_name(&rdmx_srvq_stage_fsm, req->stage),
		  rdmx_fsm_name(&rdmx_srvq_stage_fsm, to));
	trace_rdmx_srvq_stage(req->q->idx, req->io.tag, req->stage, to);
	req->stage = to;
}

/* States in which a queue still serves its client; every other */
#define RDMX_SRVQ_SERVING	(BIT(RDMX_SRVQ_ACCEPTING) | BIT(RDMX_SRVQ_LIVE))
#define RDMX_SRVQ_NOT_TORN	(RDMX_SRVQ_SERVING | BIT(RDMX_SRVQ_FAILING))

/* ---- wire checks (KUnit tests these) ----------------------------------- */

/**
 * rdmx_blk_cmd_parse() - unpack a received command header
 * @cmd: the header as received
 * @io: filled in
 *
 * Context: any context.
 * Return: 0, or -EPROTO for an unknown opcode or flag, or non-zero reserved
 * bytes (or a name on another command than OPEN).
 */
int rdmx_blk_cmd_parse(const struct rdmx_blk_cmd *cmd, struct rdmx_blk_io *io)
{
	if (cmd->opcode < RDMX_BLK_OP_OPEN || cmd->opcode > RDMX_BLK_OP_MAX)
		return -EPROTO;
	if (cmd->flags & ~RDMX_BLK_CMD_KNOWN || cmd->reserved0)
		return -EPROTO;
	if (cmd->opcode != RDMX_BLK_OP_OPEN &&
	    memchr_inv(cmd->name, 0, sizeof(cmd->name)))
		return -EPROTO;
	io->op = cmd->opcode;
	io->flags = cmd->flags;
	io->tag = le32_to_cpu(cmd->tag);
	io->offset = le64_to_cpu(cmd->offset);
	io->length = le32_to_cpu(cmd->length);
	io->rkey = le32_to_cpu(cmd->rkey);
	io->addr = le64_to_cpu(cmd->addr);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_blk_cmd_parse);

/**
 * rdmx_blk_io_check() - check an I/O command against its export
 * @io: the command (not OPEN)
 * @lim: the export's and the queue's limits
 *
 * Context: any context.
 * Return: 0; -EPROTO for a tag out of range, flags that do not fit the
 * opcode, the queue or the inline bytes received, a key with inline or
 * staged data, or a staged WRITE's slot outside the staging area or not
 * at a slot's start; -EINVAL for a zero or unaligned length or offset,
 * or a length over the queue's maximum; -ERANGE for an extent that does
 * not lie inside the export; -EROFS for a write or a FLUSH on a
 * read-only export or map.
 */
int rdmx_blk_io_check(const struct rdmx_blk_io *io,
		      const struct rdmx_blk_limits *lim)
{
	bool write = io->op == RDMX_BLK_OP_WRITE ||
		     io->op == RDMX_BLK_OP_DISCARD ||
		     io->op == RDMX_BLK_OP_WRITE_ZEROES;

	if (io->tag >= lim->depth || io->op == RDMX_BLK_OP_OPEN)
		return -EPROTO;
	if (io->flags & RDMX_BLK_CMD_STAGED) {
		/* Its data is in a slot of the staging area, not in the SEND. */
		if (io->op != RDMX_BLK_OP_WRITE ||
		    (io->flags & RDMX_BLK_CMD_INLINE) || io->rkey ||
		    lim->inline_len || io->length > RDMX_BLK_STAGE_SLOT ||
		    io->addr >= lim->stage_len ||
		    !IS_ALIGNED(io->addr, RDMX_BLK_STAGE_SLOT))
			return -EPROTO;
	} else if (io->flags & RDMX_BLK_CMD_INLINE) {
		/* Inline data comes in the command's SEND, or goes in the answer's. */
		if (io->length > RDMX_BLK_INLINE_MAX || io->rkey || io->addr)
			return -EPROTO;
		if (io->op == RDMX_BLK_OP_WRITE) {
			if (io->length != lim->inline_len)
				return -EPROTO;
		} else if (io->op != RDMX_BLK_OP_READ || !lim->inline_read ||
			   lim->inline_len) {
			return -EPROTO;
		}
	} else if (lim->inline_len) {
		return -EPROTO;
	}
	if ((io->flags & RDMX_BLK_CMD_FUA) && io->op != RDMX_BLK_OP_WRITE &&
	    io->op != RDMX_BLK_OP_WRITE_ZEROES)
		return -EPROTO;
	if (io->op == RDMX_BLK_OP_FLUSH) {
		if (io->offset || io->length)
			return -EINVAL;
		/* Nothing of a read-only client's to make durable. */
		return lim->ro ? -EROFS : 0;
	}
	if (!io->length || !IS_ALIGNED(io->length, lim->lbs) ||
	    !IS_ALIGNED(io->offset, lim->lbs) || io->length > lim->max_io)
		return -EINVAL;
	if (io->offset > lim->size || io->length > lim->size - io->offset)
		return -ERANGE;
	if (write && lim->ro)
		return -EROFS;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_blk_io_check);

/* Whether @io's command carries its data after it: an inline WRITE. */
static bool rdmx_blk_io_inline_write(const struct rdmx_blk_io *io)
{
	return io->op == RDMX_BLK_OP_WRITE && (io->flags & RDMX_BLK_CMD_INLINE);
}

/**
 * rdmx_blk_batch_count() - the commands in a received command batch
 * @len: its bytes
 *
 * Context: any context.
 * Return: how many, 1 to RDMX_BLK_BATCH_MAX; -EBADMSG when @len is not a
 * whole number of commands, or holds none or more than that.
 */
int rdmx_blk_batch_count(u32 len)
{
	u32 n = len / sizeof(struct rdmx_blk_cmd);

	if (len % sizeof(struct rdmx_blk_cmd) || !n || n > RDMX_BLK_BATCH_MAX)
		return -EBADMSG;
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_blk_batch_count);

/**
 * rdmx_blk_batch_cmd_check() - whether a command may come in a batch
 * @io: the command, parsed (rdmx_blk_cmd_parse())
 * @depth: the queue's depth: its tags are below it
 * @write_imm: the queue was granted RDMX_BLK_OPEN_WRITE_IMM
 * @later: set to whether it is an inline WRITE, whose data comes alone
 *	after the batch
 *
 * Whether its tag is free is the caller's to check.
 *
 * Context: any context.
 * Return: 0; -EBADMSG for a tag past @depth, an OPEN, or an inline WRITE
 * on a queue without @write_imm, of no data or of more than
 * RDMX_BLK_INLINE_MAX bytes.
 */
int rdmx_blk_batch_cmd_check(const struct rdmx_blk_io *io, u32 depth,
			     bool write_imm, bool *later)
{
	*later = rdmx_blk_io_inline_write(io);
	if (io->tag >= depth || io->op == RDMX_BLK_OP_OPEN)
		return -EBADMSG;
	if (*later && (!write_imm || !io->length ||
		       io->length > RDMX_BLK_INLINE_MAX))
		return -EBADMSG;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_blk_batch_cmd_check);

/**
 * rdmx_srvq_same_map() - whether two queues are connections of one map
 * @a: a queue
 * @b: another
 *
 * The same client host and map uuid; a connection without a uuid is a map
 * of its own.
 *
 * Context: any context.
 * Return: true when they are.
 */
bool rdmx_srvq_same_map(const struct rdmx_srvq *a, const struct rdmx_srvq *b)
{
	return a == b ||
	       (!uuid_is_null(&a->map_uuid) &&
		uuid_equal(&a->map_uuid, &b->map_uuid) &&
		rdmx_addr_same_host((struct sockaddr *)&a->peer,
				    (struct sockaddr *)&b->peer));
}

/**
 * rdmx_srvq_disconnect() - disconnect a server queue
 * @q: the queue, still listed so that its QP exists: the caller holds
 *	rdmx_exports_mutex or runs before the queue's teardown can
 *
 * Its QP goes to the error state first, so that every posted work request,
 * RDMA READs that wait for their responses included, completes (flushed)
 * and rdmx_srvq_teardown() sees its contexts come back. rdma_disconnect()
 * does that itself on InfiniBand and RoCE; on iWARP it asks for a graceful
 * close, and siw flushes neither the SQ nor its outstanding READs when such
 * a close, with nothing in transmission, is followed by the error state
 * that ib_drain_qp() sets: the drain's marker completes and the READs
 * never do.
 *
 * Context: process context.
 */
void rdmx_srvq_disconnect(struct rdmx_srvq *q)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

	rdmx_srvq_set_state(q, RDMX_SRVQ_SERVING, RDMX_SRVQ_FAILING);
	if (q->qp)
		ib_modify_qp(q->qp, &attr, IB_QP_STATE);
	rdma_disconnect(q->cm_id);
}

/* ---- server queues: posting ---------------------------------------------- */

static void rdmx_srvq_recv_done(struct ib_cq *cq, struct ib_wc *wc);
static void rdmx_srvq_rw_done(struct ib_cq *cq, struct ib_wc *wc);
static void rdmx_srvq_send_done(struct ib_cq *cq, struct ib_wc *wc);
static void rdmx_srvq_req_work(struct work_struct *work);

static int rdmx_srvq_post_recv(struct rdmx_srvq *q, struct rdmx_srvq_rbuf *rb)
{
	unsigned long flags;
	int ret = -ECONNRESET;

	spin_lock_irqsave(&q->lock, flags);
	if (q->state != RDMX_SRVQ_TORN)
		ret = rdmx_rx_buf_post(q->qp, &rb->rx);
	spin_unlock_irqrestore(&q->lock, flags);
	return ret;
}

/* Give a context its command. */
static void rdmx_srvq_req_prep(struct rdmx_srvq_req *req,
			       struct rdmx_srvq_rbuf *rb,
			       const struct rdmx_blk_io *io, u32 inline_len)
{
	req->io = *io;
	rdmx_srvq_req_move(req, RDMX_STAGE_RUNNING);
	req->inline_len = inline_len;
	req->rb = rb;
	req->status = 0;
	req->tag_held = true;
	req->again = false;
	req->fence_held = false;
	memset(req->rsp, 0, sizeof(*req->rsp));
}

/* Give a context its command and run it from the work queue. */
static void rdmx_srvq_req_start(struct rdmx_srvq_req *req,
				struct rdmx_srvq_rbuf *rb,
				const struct rdmx_blk_io *io, u32 inline_len)
{
	rdmx_srvq_req_prep(req, rb, io, inline_len);
	queue_work(rdmx_blk_wq, &req->work);
}

/*
 * The export a command works on, or NULL before OPEN; with the terms the
 * queue was opened with (@q->ro, @q->max_io, ...), published before it.
 * Any context; stable once set, until the queue's teardown, which waits
 * for every command first.
 */
static struct rdmx_export *rdmx_srvq_exp(struct rdmx_srvq *q)
{
	/* Pairs with the smp_store_release() in rdmx_srvq_open(). */
	return smp_load_acquire(&q->exp);
}

/* Whether @exp's backend only submits READs and WRITEs, never waiting. */
static bool rdmx_export_nowait(const struct rdmx_export *exp)
{
	return exp && exp->ops->nowait && exp->ops->nowait(exp);
}

/*
 * Whether a command runs in its receive's completion rather than from the
 * work queue: a READ or a WRITE that its backend only submits (a bio to a
 * block device, as nvmet does); the others wait on the backing store.
 */
static bool rdmx_srvq_runs_here(struct rdmx_srvq *q, const struct rdmx_blk_io *io)
{
	return (io->op == RDMX_BLK_OP_READ || io->op == RDMX_BLK_OP_WRITE) &&
	       rdmx_export_nowait(rdmx_srvq_exp(q));
}

/* Whether @req is an inline READ with its page: its data goes in the SEND. */
static bool rdmx_srvq_reads_inline(const struct rdmx_srvq_req *req)
{
	return req->sgl == &req->read_sg;
}

/* A command is over: free what it used and give its context back. */
static void rdmx_srvq_req_end(struct rdmx_srvq_req *req)
{
	struct rdmx_srvq *q = req->q;
	struct rdmx_srvq_pend *p;
	unsigned long flags;

	rdmx_srvq_req_move(req, RDMX_STAGE_IDLE);
	if (req->rw_dir != DMA_NONE) {
		rdma_rw_ctx_destroy(&req->rw, q->qp, q->port, req->sgl,
				    req->nents, req->rw_dir);
		req->rw_dir = DMA_NONE;
	}
	/* The context's own page stays mapped for its next inline READ. */
	if (req->sgl && !rdmx_srvq_reads_inline(req))
		sgl_free(req->sgl);
	req->sgl = NULL;
	if (req->tag_held)
		clear_bit(req->io.tag, q->busy);
	req->tag_held = false;

	/* The context serves the oldest waiting command, or goes back. */
	spin_lock_irqsave(&q->lock, flags);
	p = list_first_entry_or_null(&q->backlog, struct rdmx_srvq_pend, node);
	if (p)
		list_del_init(&p->node);
	else
		list_add(&req->node, &q->free);
	spin_unlock_irqrestore(&q->lock, flags);
	if (p) {
		rdmx_srvq_req_start(req, p->rb, &p->io, p->inline_len);
		return;
	}
	if (atomic_dec_and_test(&q->active))
		wake_up(&q->wait);
}

/*
 * Disconnect a failed queue from process context, once its port can carry
 * the DREQ (see rdmx_port_usable()): a failure on a link going down must
 * not send it into the dead link. Waits up to the loss timeout, or until
 * the queue's teardown starts; the teardown cancels it once its QP is
 * drained, before the cm_id can go.
 */
static bool rdmx_srvq_torn_down(void *arg)
{
	return rdmx_srvq_torn(arg);
}

static void rdmx_srvq_disconnect_work(struct work_struct *work)
{
	struct rdmx_srvq *q = container_of(work, struct rdmx_srvq,
					   disconnect_work);
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	char who[96];

	/* Failed where it could not be done at once (rdmx_srvq_fail()). */
	if (q->qp && !rdmx_srvq_torn(q))
		ib_modify_qp(q->qp, &attr, IB_QP_STATE);
	/* Torn: the teardown began; it ends the connection itself. */
	snprintf(who, sizeof(who), "block queue %u from %pISpc", q->idx,
		 &q->peer);
	rdmx_port_wait(q->ibdev, q->port,
		       jiffies + msecs_to_jiffies(rdmx_params.loss_timeout_ms),
		       rdmx_srvq_torn_down, q, who);
	if (!rdmx_srvq_torn(q))
		rdma_disconnect(q->cm_id);
}

/*
 * Drop a client: a misbehaving one, or a queue whose work failed. The QP
 * goes to the error state at once (from process context; else from the
 * work), so nothing more of it is processed; the DREQ follows from a work
 * item (rdmx_srvq_disconnect_work()). Any context. Before
 * the connection is ESTABLISHED (its first SEND can beat the CM's RTU)
 * rdma_disconnect() only moves the QP to error and tells the client
 * nothing: the ESTABLISHED event disconnects again.
 */
static void rdmx_srvq_fail(struct rdmx_srvq *q, const char *why)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

	pr_warn_ratelimited("block queue %u from %pISpc: %s; disconnecting\n",
			    q->idx, &q->peer, why);
	if (!rdmx_srvq_set_state(q, RDMX_SRVQ_SERVING, RDMX_SRVQ_FAILING))
		return;
	/* A driver's modify_qp may sleep: from a bio's completion, the work. */
	if (q->qp && in_task())
		ib_modify_qp(q->qp, &attr, IB_QP_STATE);
	queue_work(rdmx_blk_wq, &q->disconnect_work);
}

/*
 * A command whose work request could not be posted: the client would wait
 * for its answer forever, so a live queue is dropped (-ECONNRESET: the
 * queue is going already).
 */
static void rdmx_srvq_post_failed(struct rdmx_srvq_req *req, int err,
				  const char *what)
{
	if (err != -ECONNRESET)
		rdmx_srvq_fail(req->q, what);
	rdmx_srvq_req_end(req);
}

/*
 * Take the responses waiting on @q->batch: the first, carrying the others
 * on its @batch. Under @q->lock, with @q->nr_batch non-zero.
 */
static struct rdmx_srvq_req *rdmx_srvq_batch_take(struct rdmx_srvq *q)
{
	struct rdmx_srvq_req *first;

	lockdep_assert_held(&q->lock);
	first = list_first_entry(&q->batch, struct rdmx_srvq_req, batch);
	list_del_init(&first->batch);
	list_splice_init(&q->batch, &first->batch);
	q->nr_batch = 0;
	return first;
}

/* End the responses that went, or were to go, with @first. */
static void rdmx_srvq_batch_end_others(struct rdmx_srvq_req *first)
{
	struct rdmx_srvq_req *req, *tmp;

	list_for_each_entry_safe(req, tmp, &first->batch, batch) {
		list_del_init(&req->batch);
		rdmx_srvq_req_end(req);
	}
}

/*
 * Post the responses waiting on @q->batch as one SEND, one scatter entry
 * each: its completion ends them all (rdmx_srvq_send_done()), the first
 * carrying the others on its @batch. Under @q->lock, with @q->nr_batch
 * non-zero.
 *
 * Return: the first of them; on a failure to post, its negative errno in
 * *@err, and its owner ends them (rdmx_srvq_batch_failed()).
 */
static struct rdmx_srvq_req *rdmx_srvq_post_batch(struct rdmx_srvq *q,
						  int *err)
{
	struct ib_sge sge[RDMX_BLK_BATCH_MAX];
	struct rdmx_srvq_req *first, *req;
	struct ib_send_wr wr = {
		.sg_list = sge,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};

	lockdep_assert_held(&q->lock);
	list_for_each_entry(req, &q->batch, batch) {
		sge[wr.num_sge].addr = req->rsp_dma;
		sge[wr.num_sge].length = sizeof(*req->rsp);
		sge[wr.num_sge].lkey = q->pd->local_dma_lkey;
		wr.num_sge++;
	}
	/* The others ride on the first. */
	first = rdmx_srvq_batch_take(q);
	wr.wr_cqe = &first->send_cqe;
	first->plain = true;
	*err = ib_post_send(q->qp, &wr, NULL);
	if (!*err)
		q->plain_sent++;
	return first;
}

/*
 * End the responses of a batch that will not go (@first and those on its
 * @batch): the queue is failed already, or @err fails it.
 */
static void rdmx_srvq_batch_failed(struct rdmx_srvq_req *first, int err)
{
	rdmx_srvq_batch_end_others(first);
	first->plain = false;
	rdmx_srvq_post_failed(first, err, "cannot post responses");
}

/*
 * Send the response: after the RDMA WRITE of a read's data when there is
 * one, or with the data after it (inline READ), or the data alone with the
 * tag as immediate data (inline READ on a queue granted
 * RDMX_BLK_OPEN_IMM_READ, unless the size changed since the last header).
 */
static void rdmx_srvq_respond(struct rdmx_srvq_req *req)
{
	struct rdmx_srvq *q = req->q;
	struct rdmx_blk_rsp *rsp = req->rsp;
	struct ib_sge sge[2] = {
		{ .addr = req->rsp_dma, .length = sizeof(*rsp),
		  .lkey = q->pd->local_dma_lkey },
	};
	struct ib_send_wr wr = {
		.wr_cqe = &req->send_cqe,
		.sg_list = sge,
		.num_sge = 1,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};
	bool rkey = (req->io.op == RDMX_BLK_OP_READ ||
		     req->io.op == RDMX_BLK_OP_WRITE) &&
		    !(req->io.flags & (RDMX_BLK_CMD_INLINE |
				       RDMX_BLK_CMD_STAGED));
	struct rdmx_export *exp = rdmx_srvq_exp(q);
	struct rdmx_srvq_req *first = NULL;
	unsigned long flags;
	int ret = -ECONNRESET;
	u64 size = 0;
	bool plain;

	rdmx_srvq_req_move(req, RDMX_STAGE_RESPONDING);
	rsp->tag = cpu_to_le32(req->io.tag);
	rsp->status = cpu_to_le32(req->status);
	/* Every header carries the size: a grown export reaches clients. */
	if (exp)
		size = READ_ONCE(exp->size);
	rsp->size = cpu_to_le64(size);
	if (rkey) {
		/* The client's key dies before the client sees the answer. */
		wr.opcode = IB_WR_SEND_WITH_INV;
		wr.ex.invalidate_rkey = req->io.rkey;
	}
	if (rdmx_srvq_reads_inline(req) && !req->status && q->imm_read &&
	    size == READ_ONCE(q->size_sent)) {
		/* The data alone: one packet fewer, page-aligned there. */
		sge[0].addr = sg_dma_address(req->sgl);
		sge[0].length = req->io.length;
		wr.opcode = IB_WR_SEND_WITH_IMM;
		wr.ex.imm_data = cpu_to_be32(req->io.tag);
	} else if (rdmx_srvq_reads_inline(req) && !req->status) {
		sge[1].addr = sg_dma_address(req->sgl);
		sge[1].length = req->io.length;
		sge[1].lkey = q->pd->local_dma_lkey;
		wr.num_sge = 2;
		WRITE_ONCE(q->size_sent, size);
	} else {
		WRITE_ONCE(q->size_sent, size);
	}
	if (req->status && exp)
		atomic64_inc(&exp->errors);
	ib_dma_sync_single_for_device(q->ibdev, req->rsp_dma, sizeof(*rsp),
				      DMA_TO_DEVICE);
	/* Once the response is out the client may send this tag again. */
	if (req->tag_held)
		clear_bit(req->io.tag, q->busy);
	req->tag_held = false;
	/* The response alone: it may go with others (RDMX_BLK_OPEN_BATCH). */
	plain = q->batch_max && wr.opcode == IB_WR_SEND && wr.num_sge == 1 &&
		!(req->rw_dir == DMA_TO_DEVICE && !req->status);
	spin_lock_irqsave(&q->lock, flags);
	if (q->state != RDMX_SRVQ_TORN && plain &&
	    ((q->plain_sent && (req->io.flags & RDMX_BLK_CMD_MORE)) ||
	     q->nr_batch)) {
		/*
		 * One is on the way and the client awaits others: this one
		 * goes with the next. One it does not await takes those
		 * waiting along now, as does a full batch.
		 */
		list_add_tail(&req->batch, &q->batch);
		ret = 0;
		if (++q->nr_batch == q->batch_max ||
		    !(req->io.flags & RDMX_BLK_CMD_MORE))
			first = rdmx_srvq_post_batch(q, &ret);
	} else if (q->state != RDMX_SRVQ_TORN) {
		/* Set before the post: its completion may run at once. */
		req->plain = plain;
		if (req->rw_dir == DMA_TO_DEVICE && !req->status)
			ret = rdma_rw_ctx_post(&req->rw, q->qp, q->port, NULL,
					       &wr);
		else
			ret = ib_post_send(q->qp, &wr, NULL);
		if (ret)
			req->plain = false;
		else
			q->plain_sent += plain;
	}
	spin_unlock_irqrestore(&q->lock, flags);
	if (ret && first)
		rdmx_srvq_batch_failed(first, ret);
	else if (ret)
		rdmx_srvq_post_failed(req, ret, "cannot post a response");
}

/*
 * Send a queue's client an event: a response, carrying the export's size
 * as they all do, to no command. It tells the client the export grew, or
 * (a keepalive, rdmx_srvq_watch()) proves that its QP is still there: the
 * SEND completes in error once the transport gives up on it. A queue
 * without a free context is busy: its next response carries the size, and
 * its completion the proof, anyway. The event's context ends with its
 * SEND's completion. Under rdmx_exports_mutex (q->exp is stable), for a
 * queue that takes events.
 *
 * Return: whether it was sent.
 */
static bool rdmx_srvq_send_event(struct rdmx_srvq *q)
{
	struct rdmx_srvq_req *req;
	unsigned long flags;

	lockdep_assert_held(&rdmx_exports_mutex);
	spin_lock_irqsave(&q->lock, flags);
	req = q->state == RDMX_SRVQ_TORN ? NULL :
	      list_first_entry_or_null(&q->free, struct rdmx_srvq_req, node);
	if (req) {
		list_del_init(&req->node);
		atomic_inc(&q->active);
	}
	spin_unlock_irqrestore(&q->lock, flags);
	if (!req)
		return false;
	req->io = (struct rdmx_blk_io){ .tag = RDMX_BLK_TAG_EVENT };
	req->tag_held = false;	/* no tag of the client's */
	req->status = 0;
	memset(req->rsp, 0, sizeof(*req->rsp));
	rdmx_srvq_respond(req);
	return true;
}

/**
 * rdmx_srvq_notify_size() - tell a queue's client the export's new size now
 * @q: the queue; nothing is sent when its client takes no events
 *
 * Context: under rdmx_exports_mutex (the queue is listed).
 */
void rdmx_srvq_notify_size(struct rdmx_srvq *q)
{
	if (q->events)
		rdmx_srvq_send_event(q);
}

/* Repost the command's receive: the command no longer needs its bytes. */
static void rdmx_srvq_repost(struct rdmx_srvq_req *req)
{
	struct rdmx_srvq_rbuf *rb = req->rb;
	int ret;

	req->rb = NULL;
	if (!rb)
		return;
	ret = rdmx_srvq_post_recv(req->q, rb);
	if (ret && ret != -ECONNRESET)	/* -ECONNRESET: the queue is going */
		rdmx_srvq_fail(req->q, "cannot post a receive");
}

static int rdmx_srvq_alloc_data(struct rdmx_srvq_req *req,
				enum dma_data_direction dir)
{
	struct rdmx_srvq *q = req->q;
	int ret;

	req->sgl = sgl_alloc(req->io.length, GFP_KERNEL, &req->nents);
	if (!req->sgl)
		return -ENOMEM;
	ret = rdma_rw_ctx_init(&req->rw, q->qp, q->port, req->sgl, req->nents,
			       0, req->io.addr, req->io.rkey, dir);
	if (ret < 0)
		return ret;
	req->rw_dir = dir;
	return 0;
}

/* ---- server queues: the backing store ---------------------------------- */

/*
 * Whatever changes the backing store (a write, zeroing, a discard) runs
 * inside the export's fence, from its start to its end: a queue that a
 * newer incarnation of its map fenced changes nothing more, and the OPEN
 * that fenced it is answered only once the changes already under way have
 * ended (rdmx_srvq_fence(), a grace period of the fence's SRCU). A write
 * delayed on a dead connection therefore never lands over one the client
 * made, and saw acknowledged, after it reconnected. The fence is SRCU read
 * through srcu_down_read(), as a WRITE's bio ends it from its completion.
 * Return: false for a fenced queue (nothing is held then).
 */
static bool rdmx_srvq_change_begin(struct rdmx_srvq_req *req,
				   struct rdmx_export *exp)
{
	struct rdmx_srvq *q = req->q;

	lockdep_assert_not_held(&rdmx_exports_mutex);
	req->fence_idx = srcu_down_read(&exp->fence);
	/* After the lock: an OPEN that fenced @q waits for this change. */
	if (!test_bit(RDMX_SRVQ_FENCED, &q->flags)) {
		req->fence_held = true;
		/* Held on in @req, past this function: sparse is told so. */
		__release(&exp->fence);
		return true;
	}
	srcu_up_read(&exp->fence, req->fence_idx);
	pr_warn_ratelimited("export %s: a write from %pISc's replaced connection (queue %u) is dropped\n",
			    exp->name, &q->peer, q->idx);
	return false;
}

/* Any context: a WRITE's bio completion ends its change. */
static void rdmx_srvq_change_end(struct rdmx_srvq_req *req,
				 struct rdmx_export *exp)
{
	if (req->fence_held) {
		req->fence_held = false;
		__acquire(&exp->fence);	/* rdmx_srvq_change_begin() took it */
		srcu_up_read(&exp->fence, req->fence_idx);
	}
}

/*
 * A DISCARD or a WRITE_ZEROES, to the backing store, inside the fence;
 * -ESTALE for a fenced queue. Process context.
 */
static int rdmx_srvq_zero(struct rdmx_srvq_req *req, struct rdmx_export *exp)
{
	const struct rdmx_blk_io *io = &req->io;
	int ret;

	if (!rdmx_srvq_change_begin(req, exp))
		return -ESTALE;
	ret = exp->ops->zero(exp, io->offset, io->length,
			     io->op == RDMX_BLK_OP_DISCARD,
			     io->flags & RDMX_BLK_CMD_FUA);
	rdmx_srvq_change_end(req, exp);
	return ret;
}

/*
 * A WRITE whose data is here, in its receive (inline), in its slot of the
 * staging area (staged) or fetched into its pages: on to the backend
 * inside the fence (answered through rdmx_srvq_write_done()), or answered
 * -ESTALE for a fenced queue. From the command's work, or from a
 * completion's when rdmx_export_nowait().
 */
static void rdmx_srvq_write_start(struct rdmx_srvq_req *req,
				  struct rdmx_export *exp)
{
	if (req->io.flags & RDMX_BLK_CMD_INLINE) {
		sg_init_table(&req->inline_sg, 1);
		sg_set_page(&req->inline_sg, req->rb->rx.data, req->io.length, 0);
	} else if (req->io.flags & RDMX_BLK_CMD_STAGED) {
		rdmx_srvq_stage_sg(req->q, &req->inline_sg, req->io.addr,
				   req->io.length);
	}
	rdmx_srvq_req_move(req, RDMX_STAGE_WRITING);
	if (!rdmx_srvq_change_begin(req, exp)) {
		rdmx_srvq_write_done(req, -ESTALE);
		return;
	}
	exp->ops->write(req);
}

static u32 rdmx_errno_wire(int err);

/*
 * A READ's pages, mapped for what carries them to the client before they
 * are filled (nothing is allocated after the read, which may end in
 * interrupt context): the response's second scatter entry (inline) or an
 * rdma_rw context for the RDMA WRITE.
 */
static int rdmx_srvq_read_map(struct rdmx_srvq_req *req)
{
	struct rdmx_srvq *q = req->q;

	if (!(req->io.flags & RDMX_BLK_CMD_INLINE))
		return rdmx_srvq_alloc_data(req, DMA_TO_DEVICE);
	/* At most RDMX_BLK_INLINE_MAX bytes: the context's page. */
	BUILD_BUG_ON(RDMX_BLK_INLINE_MAX > PAGE_SIZE);
	if (!req->read_page) {
		struct page *page = alloc_page(GFP_KERNEL);

		if (!page)
			return -ENOMEM;
		sg_init_table(&req->read_sg, 1);
		sg_set_page(&req->read_sg, page, PAGE_SIZE, 0);
		if (!ib_dma_map_sg(q->ibdev, &req->read_sg, 1, DMA_TO_DEVICE)) {
			__free_page(page);
			return -ENOMEM;
		}
		req->read_page = page;
	}
	/* The backend reads this much; the mapping covers the page. */
	req->read_sg.length = req->io.length;
	req->sgl = &req->read_sg;
	req->nents = 1;
	return 0;
}

/**
 * rdmx_srvq_read_done() - a backend's READ has its data, or failed: answer
 * @req: the command
 * @err: 0 or a negative errno
 *
 * Context: any context, interrupts included (a bio's completion): nothing
 * here sleeps or allocates.
 */
void rdmx_srvq_read_done(struct rdmx_srvq_req *req, int err)
{
	struct rdmx_srvq *q = req->q;
	struct rdmx_export *exp = q->exp;

	if (!err) {
		/* The pages were mapped before they were filled. */
		if (!ib_uses_virt_dma(q->ibdev))
			dma_sync_sg_for_device(q->ibdev->dma_device, req->sgl,
					       req->nents, DMA_TO_DEVICE);
		atomic64_inc(&exp->reads);
		atomic64_add(req->io.length, &exp->read_bytes);
	} else {
		pr_debug("command %u [%llu, +%u): %d\n", req->io.op,
			 req->io.offset, req->io.length, err);
	}
	req->status = rdmx_errno_wire(err);
	rdmx_srvq_respond(req);
}

/**
 * rdmx_srvq_write_data() - the data of a WRITE that a backend writes
 * @req: the command, in stage WRITING
 * @nents: set to the entries of the scatterlist
 *
 * Context: any context.
 * Return: its scatterlist: the page of its receive for inline data, its
 * slot of the staging area for staged data, else the pages its data was
 * fetched into.
 */
struct scatterlist *rdmx_srvq_write_data(struct rdmx_srvq_req *req,
					 unsigned int *nents)
{
	if (req->io.flags & (RDMX_BLK_CMD_INLINE | RDMX_BLK_CMD_STAGED)) {
		*nents = 1;
		return &req->inline_sg;
	}
	*nents = req->nents;
	return req->sgl;
}

/**
 * rdmx_srvq_write_done() - a backend's WRITE is stable (as its FUA asked)
 * or failed: end its change and answer it
 * @req: the command, in stage WRITING
 * @err: 0 or a negative errno
 *
 * Context: any context, interrupts included (a bio's completion): nothing
 * here sleeps or allocates.
 */
void rdmx_srvq_write_done(struct rdmx_srvq_req *req, int err)
{
	struct rdmx_export *exp = req->q->exp;

	rdmx_srvq_change_end(req, exp);
	if (!err) {
		atomic64_inc(&exp->writes);
		atomic64_add(req->io.length, &exp->write_bytes);
	} else {
		pr_debug("command %u [%llu, +%u): %d\n", req->io.op,
			 req->io.offset, req->io.length, err);
	}
	/* Inline data lived in the receive: it may take the next command. */
	rdmx_srvq_repost(req);
	/* Staged data, in its slot: the client may write it again. */
	if (req->io.flags & RDMX_BLK_CMD_STAGED)
		rdmx_srvq_stage_done(req->q, req->io.addr, req->io.length);
	req->status = rdmx_errno_wire(err);
	rdmx_srvq_respond(req);
}

/**
 * rdmx_srvq_io_again() - a backend's READ or WRITE found its device busy:
 * submit it again from the work queue, where it may wait
 * @req: the command, in stage READING or WRITING
 *
 * A command that runs in a completion must not wait for the device (a
 * slow device would hold up every queue sharing the CQ), so the backend
 * submits it without waiting first; when the device had no room, it calls
 * this, and its @read or @write runs again from the command's work, with
 * rdmx_srvq_io_retried() true. A WRITE stays inside the fence.
 *
 * Context: any context.
 */
void rdmx_srvq_io_again(struct rdmx_srvq_req *req)
{
	req->again = true;
	queue_work(rdmx_blk_wq, &req->work);
}

/**
 * rdmx_srvq_io_retried() - whether a backend's READ or WRITE runs again
 * after rdmx_srvq_io_again(), from the command's work
 * @req: the command
 *
 * Context: any context.
 * Return: true when it may wait for its device now.
 */
bool rdmx_srvq_io_retried(const struct rdmx_srvq_req *req)
{
	return req->again;
}

/**
 * rdmx_srvq_read_submitted() - a backend's READ is in flight
 * @req: the command; rdmx_srvq_read_done() answers it from the completion
 *
 * Context: the command's work, before it submits the I/O.
 */
void rdmx_srvq_read_submitted(struct rdmx_srvq_req *req)
{
	rdmx_srvq_req_move(req, RDMX_STAGE_READING);
}

static u32 rdmx_errno_wire(int err)
{
	int wire = -EIO;

	switch (err) {
	case 0:
	case -EINVAL:
	case -ERANGE:
	case -EROFS:
	case -EOPNOTSUPP:
	case -ENOENT:
	case -EACCES:
	case -EPROTO:
	case -ENOMEM:
	case -ESTALE:
	case -EBUSY:
		wire = err;
		break;
	}
	return -wire;
}

/*
 * Fencing, under rdmx_exports_mutex: @q, about to be bound to @exp, is a
 * connection of a client's map (struct rdmx_srvq's @map_uuid from the same
 * host) in incarnation @gen. Queues of an older incarnation of the same
 * map still bound to @exp are fenced (they change the backing store no
 * more) and failed. Return: -ESTALE when a newer incarnation is bound
 * already (@q is a connection its client gave up on); else 1 when a queue
 * of an older one is bound (the caller waits for the changes it has under
 * way, rdmx_srvq_change_begin()), 0 when none is. A map without a uuid is
 * never fenced.
 */
static int rdmx_srvq_fence(struct rdmx_export *exp, struct rdmx_srvq *q)
{
	struct rdmx_srvq *o;
	int older = 0;

	lockdep_assert_held(&rdmx_exports_mutex);
	if (uuid_is_null(&q->map_uuid))
		return 0;
	list_for_each_entry(o, &exp->queues, exp_node)
		if (o->gen > q->gen && rdmx_srvq_same_map(o, q))
			return -ESTALE;
	list_for_each_entry(o, &exp->queues, exp_node) {
		if (o->gen >= q->gen || !rdmx_srvq_same_map(o, q))
			continue;
		older = 1;
		if (!test_and_set_bit(RDMX_SRVQ_FENCED, &o->flags))
			rdmx_srvq_fail(o, "replaced by a newer connection of its map");
	}
	return older;
}

/*
 * A queue of another map than @q's that writes @exp and is not going
 * (failed, fenced or torn down), or NULL. Under rdmx_exports_mutex.
 */
static struct rdmx_srvq *rdmx_export_writer(struct rdmx_export *exp,
					    struct rdmx_srvq *q)
{
	struct rdmx_srvq *o;

	lockdep_assert_held(&rdmx_exports_mutex);
	list_for_each_entry(o, &exp->queues, exp_node)
		if (!o->ro && !rdmx_srvq_same_map(o, q) &&
		    (RDMX_SRVQ_SERVING & BIT(READ_ONCE(o->state))) &&
		    !test_bit(RDMX_SRVQ_FENCED, &o->flags))
			return o;
	return NULL;
}

/* The staging area's registration failed (unsignaled: errors only). */
static void rdmx_srvq_stage_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rdmx_srvq *q = container_of(wc->wr_cqe, struct rdmx_srvq,
					   stage_cqe);

	if (wc->status != IB_WC_WR_FLUSH_ERR)
		rdmx_srvq_fail(q, "cannot register the staging area");
}

/*
 * A bound queue's client asked for a staging area (RDMX_BLK_OPEN_STAGE):
 * register one and describe it in the OPEN's answer @rsp, whose SEND
 * follows the registration on the queue; or answer without it, when this
 * host grants none (blk_stage_writes 0), the export's storage needs
 * stable pages, the device cannot register one or memory is short.
 */
static void rdmx_srvq_open_stage(struct rdmx_srvq *q, struct rdmx_blk_rsp *rsp)
{
	struct ib_reg_wr wr;
	unsigned long flags;
	int len, ret;

	if (!READ_ONCE(rdmx_blk_params.stage_writes) || q->exp->stable_writes)
		return;
	len = rdmx_srvq_stage_init(q, &wr);
	if (len < 0) {
		pr_debug("block queue %u from %pISpc: no staging area: %d\n",
			 q->idx, &q->peer, len);
		rdmx_srvq_stage_exit(q);
		return;
	}
	q->stage_cqe.done = rdmx_srvq_stage_reg_done;
	spin_lock_irqsave(&q->lock, flags);
	ret = q->state == RDMX_SRVQ_TORN ? -ECONNRESET :
	      ib_post_send(q->qp, &wr.wr, NULL);
	spin_unlock_irqrestore(&q->lock, flags);
	if (ret) {
		/* -ECONNRESET: the queue is going, and the answer with it. */
		if (ret != -ECONNRESET)
			rdmx_srvq_fail(q, "cannot register the staging area");
		return;
	}
	rsp->open_flags |= cpu_to_le32(RDMX_BLK_OPEN_STAGE);
	rsp->stage_addr = cpu_to_le64(q->stage_mr->iova);
	rsp->stage_rkey = cpu_to_le32(q->stage_mr->rkey);
	rsp->stage_len = cpu_to_le32(len);
	/*
	 * Its commands see the area set up (rdmx_srvq_req_work()); a client's
	 * RDMA WRITE cannot overtake the registration on the queue.
	 */
	smp_store_release(&q->stage_len, len);
}

/* OPEN: bind the queue to the export the command names. */
static int rdmx_srvq_open(struct rdmx_srvq_req *req, const u8 *name)
{
	struct rdmx_srvq *q = req->q;
	struct rdmx_blk_rsp *rsp = req->rsp;
	struct rdmx_export *exp = NULL;
	char n[RDMX_EXPORT_NAME_LEN];
	struct rdmx_srvq *writer;
	int ret = 0, fence = 0;

	memcpy(n, name, sizeof(n));
	if (req->io.length & ~RDMX_BLK_OPEN_KNOWN || req->io.offset ||
	    req->io.rkey || req->io.addr || req->inline_len ||
	    !rdmx_export_name_ok(name))
		return -EPROTO;
	/*
	 * Commands run side by side on rdmx_blk_wq: a second OPEN sent
	 * right behind the first must see the first's binding, so it is
	 * looked at under the mutex that makes it.
	 */
	mutex_lock(&rdmx_exports_mutex);
	if (q->exp) {
		ret = -EPROTO;
		goto out;
	}
	exp = rdmx_export_find(n);
	writer = exp && !exp->shared && !(req->io.length & RDMX_BLK_OPEN_RO) ?
		 rdmx_export_writer(exp, q) : NULL;
	if (!exp) {
		pr_warn_ratelimited("export %.63s: no such export (asked by %pISc)\n",
				    n, &q->peer);
		ret = -ENOENT;
	} else if (!rdmx_export_allows(exp, (struct sockaddr *)&q->peer)) {
		pr_warn_ratelimited("export %s: %pISc is not on its allow-list\n",
				    exp->name, &q->peer);
		ret = -EACCES;
	} else if (!exp->insecure &&
		   rdmx_addr_port((struct sockaddr *)&q->peer) >= PROT_SOCK) {
		/* Only a privileged process binds a port below 1024. */
		pr_warn_ratelimited("export %s: %pISpc connected from an unprivileged port; refused (see --insecure)\n",
				    exp->name, &q->peer);
		ret = -EACCES;
	} else if ((exp->flags & RDMX_BLK_EXP_RO) &&
		   !(req->io.length & RDMX_BLK_OPEN_RO)) {
		pr_warn_ratelimited("export %s: read-only, %pISc asked to write\n",
				    exp->name, &q->peer);
		ret = -EACCES;
	} else if (writer) {
		pr_warn_ratelimited("export %s: %pISc (map %pUb) asked to write; %pISc (map %pUb) writes it; refused (see --shared)\n",
				    exp->name, &q->peer, &q->map_uuid,
				    &writer->peer, &writer->map_uuid);
		ret = -EBUSY;
	} else {
		fence = rdmx_srvq_fence(exp, q);
		if (fence < 0) {
			pr_warn_ratelimited("export %s: %pISc opened a connection of a map that reconnected since; refused\n",
					    exp->name, &q->peer);
			ret = -ESTALE;
			goto out;
		}
		kobject_get(&exp->kobj);
		q->ro = req->io.length & RDMX_BLK_OPEN_RO;
		q->events = req->io.length & RDMX_BLK_OPEN_EVENTS;
		/* The data goes out in the response's SEND, after it. */
		q->inline_read = (req->io.length & RDMX_BLK_OPEN_INLINE_READ) &&
				 q->max_send_sge >= 2;
		/* Or alone, the tag as immediate data: not on iWARP. */
		q->imm_read = q->inline_read &&
			      (req->io.length & RDMX_BLK_OPEN_IMM_READ) &&
			      !rdma_protocol_iwarp(q->ibdev, q->port);
		/* Responses together, one scatter entry each. */
		q->batch_max = (req->io.length & RDMX_BLK_OPEN_BATCH) &&
			       q->max_send_sge >= 2 ?
			       min_t(u32, q->max_send_sge,
				     RDMX_BLK_BATCH_MAX) : 0;
		/* Commands together: every receive holds RDMX_BLK_BATCH_MAX. */
		WRITE_ONCE(q->cmd_batch,
			   req->io.length & RDMX_BLK_OPEN_CMD_BATCH);
		/*
		 * Inline WRITEs among them, their data alone after: where it
		 * lands page-aligned, and with immediate data (not iWARP).
		 */
		WRITE_ONCE(q->write_imm,
			   q->cmd_batch && q->data_first &&
			   (req->io.length & RDMX_BLK_OPEN_WRITE_IMM) &&
			   !rdma_protocol_iwarp(q->ibdev, q->port));
		q->max_io = min(q->max_io, exp->max_io);
		/*
		 * Published last: a command that sees the export sees the
		 * terms it was opened with (rdmx_srvq_exp()).
		 */
		smp_store_release(&q->exp, exp); /* see rdmx_srvq_exp() */
		list_add_tail(&q->exp_node, &exp->queues);
		WRITE_ONCE(exp->nr_queues, exp->nr_queues + 1);
		rsp->max_io = cpu_to_le32(q->max_io);
		rsp->lbs = cpu_to_le32(exp->lbs);
		rsp->export_flags = cpu_to_le32(exp->flags);
		rsp->open_flags = cpu_to_le32((req->io.length &
					       ~(RDMX_BLK_OPEN_INLINE_READ |
						 RDMX_BLK_OPEN_IMM_READ |
						 RDMX_BLK_OPEN_BATCH |
						 RDMX_BLK_OPEN_CMD_BATCH |
						 RDMX_BLK_OPEN_WRITE_IMM |
						 RDMX_BLK_OPEN_STAGE)) |
					      (q->inline_read ?
					       RDMX_BLK_OPEN_INLINE_READ : 0) |
					      (q->imm_read ?
					       RDMX_BLK_OPEN_IMM_READ : 0) |
					      (q->batch_max ?
					       RDMX_BLK_OPEN_BATCH : 0) |
					      (q->cmd_batch ?
					       RDMX_BLK_OPEN_CMD_BATCH : 0) |
					      (q->write_imm ?
					       RDMX_BLK_OPEN_WRITE_IMM : 0));
		uuid_copy(&rsp->uuid, &exp->uuid);
		if (q->idx == 0)
			pr_info_ratelimited("export %s: mapped by %pISc\n", exp->name,
					    &q->peer);
	}
out:
	mutex_unlock(&rdmx_exports_mutex);
	if (!ret && fence > 0) {
		/*
		 * The fenced queues' changes under way end before this OPEN
		 * is answered; @q's binding holds @exp.
		 */
		lockdep_assert_not_held(&rdmx_exports_mutex);
		synchronize_srcu(&exp->fence);
	}
	/* A read-only map has no use for one. */
	if (!ret && (req->io.length & RDMX_BLK_OPEN_STAGE) && !q->ro)
		rdmx_srvq_open_stage(q, rsp);
	return ret;
}

/*
 * The @i-th command in @rb (of a batch, or 0: the only one): they follow
 * each other from its start, which is the page on a queue whose receives
 * take the data first.
 */
static const struct rdmx_blk_cmd *rdmx_srvq_cmd_at(struct rdmx_srvq_rbuf *rb,
						   unsigned int i)
{
	const struct rdmx_blk_cmd *page = page_address(rb->rx.data);

	if (rb->rx.data_first)
		return page + i;
	if (!i)
		return rb->rx.hdr;
	return page + i - 1;
}

/*
 * Run a command (process context: rdmx_blk_wq, or the CQ's work for a READ
 * or WRITE its backend only submits): from RUNNING, a WRITE whose data was
 * fetched from FETCHING, or a READ or WRITE its device had no room for
 * from READING or WRITING (rdmx_srvq_io_again()).
 */
static void rdmx_srvq_req_work(struct work_struct *work)
{
	struct rdmx_srvq_req *req = container_of(work, struct rdmx_srvq_req,
						 work);
	struct rdmx_srvq *q = req->q;
	struct rdmx_blk_limits lim;
	struct rdmx_export *exp;
	unsigned long flags;
	int ret = 0;

	if (req->io.op == RDMX_BLK_OP_OPEN) {
		ret = rdmx_srvq_open(req, rdmx_srvq_cmd_at(req->rb, 0)->name);
		atomic_dec(&q->opens);
		rdmx_srvq_repost(req);
		if (ret == -EPROTO) {
			rdmx_srvq_fail(q, "malformed OPEN");
			rdmx_srvq_req_end(req);
			return;
		}
		goto respond;
	}
	exp = rdmx_srvq_exp(q);
	if (req->stage == RDMX_STAGE_FETCHING) {
		/* The client's data is here (rdmx_srvq_rw_done()). */
		rdmx_srvq_write_start(req, exp);
		return;
	}
	/* Its device was busy: now it may wait (rdmx_srvq_io_again()). */
	if (req->stage == RDMX_STAGE_READING) {
		exp->ops->read(req);
		return;
	}
	if (req->stage == RDMX_STAGE_WRITING) {
		exp->ops->write(req);
		return;
	}
	if (!exp) {
		rdmx_srvq_repost(req);
		rdmx_srvq_fail(q, "a command before OPEN");
		rdmx_srvq_req_end(req);
		return;
	}
	lim = (struct rdmx_blk_limits){
		.size = READ_ONCE(exp->size), .lbs = exp->lbs,
		.max_io = q->max_io,
		.depth = q->depth, .inline_len = req->inline_len,
		.inline_read = q->inline_read,
		/* Pairs with rdmx_srvq_open_stage(): the area is set up. */
		.stage_len = smp_load_acquire(&q->stage_len),
		.ro = q->ro || (exp->flags & RDMX_BLK_EXP_RO),
	};
	ret = rdmx_blk_io_check(&req->io, &lim);
	if (ret) {
		pr_warn_ratelimited("export %s: %pISc: command %u [%llu, +%u) refused: %d\n",
				    exp->name, &q->peer, req->io.op,
				    req->io.offset, req->io.length, ret);
		rdmx_srvq_repost(req);
		if (ret == -EPROTO) {
			rdmx_srvq_fail(q, "malformed command");
			rdmx_srvq_req_end(req);
			return;
		}
		goto respond;
	}

	switch (req->io.op) {
	case RDMX_BLK_OP_READ:
		rdmx_srvq_repost(req);
		ret = rdmx_srvq_read_map(req);
		if (ret)
			break;
		exp->ops->read(req);
		return;		/* answered by rdmx_srvq_read_done() */
	case RDMX_BLK_OP_WRITE:
		if (req->io.flags & RDMX_BLK_CMD_INLINE) {
			/* Its receive is reposted once the data is written. */
			rdmx_srvq_write_start(req, exp);
			return;
		}
		if (req->io.flags & RDMX_BLK_CMD_STAGED) {
			/* Its data is in the staging area, not the receive. */
			rdmx_srvq_repost(req);
			rdmx_srvq_write_start(req, exp);
			return;
		}
		rdmx_srvq_repost(req);
		ret = rdmx_srvq_alloc_data(req, DMA_FROM_DEVICE);
		if (ret)
			break;
		rdmx_srvq_req_move(req, RDMX_STAGE_FETCHING);
		spin_lock_irqsave(&q->lock, flags);
		ret = q->state == RDMX_SRVQ_TORN ? -ECONNRESET :
		      rdma_rw_ctx_post(&req->rw, q->qp, q->port, &req->rw_cqe,
				       NULL);
		spin_unlock_irqrestore(&q->lock, flags);
		if (ret)
			rdmx_srvq_post_failed(req, ret, "cannot post an RDMA READ");
		return;		/* on from rdmx_srvq_rw_done() */
	case RDMX_BLK_OP_FLUSH:
		rdmx_srvq_repost(req);
		ret = exp->ops->flush(exp);
		break;
	case RDMX_BLK_OP_DISCARD:
	case RDMX_BLK_OP_WRITE_ZEROES:
		rdmx_srvq_repost(req);
		ret = rdmx_srvq_zero(req, exp);
		if (!ret) {
			atomic64_inc(&exp->writes);
			atomic64_add(req->io.length, &exp->write_bytes);
		}
		break;
	}

respond:
	if (ret)
		pr_debug("command %u [%llu, +%u): %d\n", req->io.op,
			 req->io.offset, req->io.length, ret);
	req->status = rdmx_errno_wire(ret);
	rdmx_srvq_respond(req);
}

/* ---- server queues: completions ------------------------------------------ */

/*
 * Run a command that arrived (its entry @p filled, its tag busy) in a free
 * context, or keep it on the backlog until one is free.
 */
static void rdmx_srvq_take(struct rdmx_srvq *q, struct rdmx_srvq_pend *p)
{
	struct rdmx_srvq_req *req;
	unsigned long flags;

	spin_lock_irqsave(&q->lock, flags);
	req = list_first_entry_or_null(&q->free, struct rdmx_srvq_req, node);
	if (req) {
		list_del_init(&req->node);
		atomic_inc(&q->active);
	} else {
		list_add_tail(&p->node, &q->backlog);
	}
	spin_unlock_irqrestore(&q->lock, flags);
	if (!req)
		return;
	rdmx_srvq_req_prep(req, p->rb, &p->io, p->inline_len);
	if (rdmx_srvq_runs_here(q, &p->io))
		rdmx_srvq_req_work(&req->work);
	else
		queue_work(rdmx_blk_wq, &req->work);
}

/*
 * @len bytes of commands in one receive (RDMX_BLK_OPEN_CMD_BATCH): up to
 * RDMX_BLK_BATCH_MAX, none an OPEN, each with no data after it: an inline
 * WRITE's data comes alone, later (RDMX_BLK_OPEN_WRITE_IMM,
 * rdmx_srvq_recv_data()). All are checked, and their tags taken, before
 * any runs (one that is not fails the queue); the receive is posted again
 * before they run, as none needs its bytes.
 */
static void rdmx_srvq_recv_batch(struct rdmx_srvq *q, struct rdmx_srvq_rbuf *rb,
				 u32 len)
{
	bool write_imm = READ_ONCE(q->write_imm), data_later;
	u32 tags[RDMX_BLK_BATCH_MAX], later = 0;
	struct rdmx_srvq_pend *p;
	struct rdmx_blk_io io;
	int n, i, ret;

	n = rdmx_blk_batch_count(len);
	if (n < 0)
		goto malformed;
	for (i = 0; i < n; i++) {
		if (rdmx_blk_cmd_parse(rdmx_srvq_cmd_at(rb, i), &io) ||
		    rdmx_blk_batch_cmd_check(&io, q->depth, write_imm,
					     &data_later))
			goto malformed;
		if (data_later)
			later |= BIT(i);
		if (test_and_set_bit(io.tag, q->busy)) {
			rdmx_srvq_fail(q, "a command reused a busy tag");
			return;
		}
		/* Its tag is ours: so is its entry. */
		p = &q->pend[io.tag];
		p->io = io;
		p->rb = NULL;
		p->inline_len = 0;
		tags[i] = io.tag;
	}
	ret = rdmx_srvq_post_recv(q, rb);
	if (ret) {
		if (ret != -ECONNRESET)	/* -ECONNRESET: the queue is going */
			rdmx_srvq_fail(q, "cannot post a receive");
		return;
	}
	/* All are good: they run, a WRITE once its data is here. */
	for (i = 0; i < n; i++) {
		if (later & BIT(i))
			__set_bit(tags[i], q->awaiting);
		else
			rdmx_srvq_take(q, &q->pend[tags[i]]);
	}
	return;

malformed:
	pr_warn_ratelimited("block queue %u from %pISpc: malformed command batch (%u bytes)\n",
			    q->idx, &q->peer, len);
	rdmx_srvq_fail(q, "malformed command batch");
}

/*
 * An inline WRITE's data alone, @len bytes from the start of @rb's page,
 * for the WRITE with tag @tag that came in a batch before it
 * (RDMX_BLK_OPEN_WRITE_IMM): it runs now, its receive held until its data
 * is written.
 */
static void rdmx_srvq_recv_data(struct rdmx_srvq *q, struct rdmx_srvq_rbuf *rb,
				u32 tag, u32 len)
{
	struct rdmx_srvq_pend *p;

	if (!READ_ONCE(q->write_imm) || tag >= q->depth ||
	    !__test_and_clear_bit(tag, q->awaiting)) {
		pr_warn_ratelimited("block queue %u from %pISpc: data for no WRITE (tag %u)\n",
				    q->idx, &q->peer, tag);
		rdmx_srvq_fail(q, "data for no WRITE");
		return;
	}
	p = &q->pend[tag];
	if (len != p->io.length) {
		pr_warn_ratelimited("block queue %u from %pISpc: %u bytes of data for a WRITE of %u\n",
				    q->idx, &q->peer, len, p->io.length);
		rdmx_srvq_fail(q, "data of the wrong length");
		return;
	}
	p->rb = rb;
	p->inline_len = len;
	rdmx_srvq_take(q, p);
}

/*
 * On a queue whose receives take the data first, whether the @len bytes
 * in @rb are an inline WRITE with its command last: its last 96 bytes
 * (copied to @cmd; they may straddle the page and @rb's header buffer)
 * parse as an inline WRITE of the @len - 96 bytes before them.
 */
static bool rdmx_srvq_cmd_last(struct rdmx_srvq_rbuf *rb, u32 len,
			       struct rdmx_blk_cmd *cmd)
{
	struct rdmx_blk_io io;
	u32 off, n;

	if (len <= sizeof(*cmd))
		return false;
	/* len is at most the receive's size: page and header buffer. */
	off = len - sizeof(*cmd);
	n = off < rb->rx.data_len ? min_t(u32, sizeof(*cmd),
					  rb->rx.data_len - off) : 0;
	if (n)
		memcpy(cmd, (u8 *)page_address(rb->rx.data) + off, n);
	if (n < sizeof(*cmd))
		memcpy((u8 *)cmd + n, (u8 *)rb->rx.hdr + off + n -
		       rb->rx.data_len, sizeof(*cmd) - n);
	return !rdmx_blk_cmd_parse(cmd, &io) && rdmx_blk_io_inline_write(&io) &&
	       io.length == off;
}

static void rdmx_srvq_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rdmx_srvq_rbuf *rb = container_of(wc->wr_cqe,
						 struct rdmx_srvq_rbuf, rx.cqe);
	const struct rdmx_blk_cmd *cmd = rdmx_srvq_cmd_at(rb, 0);
	struct rdmx_srvq *q = rb->q;
	struct rdmx_blk_cmd last;
	struct rdmx_srvq_pend *p;
	struct rdmx_blk_io io;

	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		/*
		 * The QP is in error (a SEND too long for the buffer, say):
		 * the queue is of no more use, and must not linger.
		 */
		if (wc->status != IB_WC_WR_FLUSH_ERR) {
			pr_warn_ratelimited("block queue %u from %pISpc: receive failed: %s\n",
					    q->idx, &q->peer,
					    ib_wc_status_msg(wc->status));
			rdmx_srvq_fail(q, "receive failed");
		}
		return;
	}
	rdmx_rx_buf_sync(q->ibdev, &rb->rx, wc->byte_len);
	WRITE_ONCE(q->alive_seq, q->alive_seq + 1);
	if (wc->wc_flags & IB_WC_WITH_IMM) {
		rdmx_srvq_recv_data(q, rb, be32_to_cpu(wc->ex.imm_data),
				    wc->byte_len);
		return;
	}
	if (rb->rx.data_first && rdmx_srvq_cmd_last(rb, wc->byte_len, &last))
		cmd = &last;
	if (wc->byte_len < sizeof(*cmd) ||
	    rdmx_blk_cmd_parse(cmd, &io) || io.tag >= q->depth) {
		rdmx_srvq_fail(q, "malformed command header");
		return;
	}
	/*
	 * Several commands (cmd_batch is set before the OPEN's answer went,
	 * which this follows): where the data comes first, any SEND longer
	 * than a command but an inline WRITE's; else, one that does not start
	 * with an inline WRITE (whose data follows it).
	 */
	if (wc->byte_len > sizeof(*cmd) && READ_ONCE(q->cmd_batch) &&
	    (rb->rx.data_first ? cmd != &last :
	     !rdmx_blk_io_inline_write(&io))) {
		rdmx_srvq_recv_batch(q, rb, wc->byte_len);
		return;
	}
	/* Where the data comes first, an inline WRITE's command is last. */
	if (rb->rx.data_first && cmd != &last && rdmx_blk_io_inline_write(&io)) {
		rdmx_srvq_fail(q, "an inline WRITE before its data");
		return;
	}
	if (io.op == RDMX_BLK_OP_OPEN)
		atomic_inc(&q->opens);	/* answered: rdmx_srvq_req_work() */
	if (test_and_set_bit(io.tag, q->busy)) {
		rdmx_srvq_fail(q, "a command reused a busy tag");
		return;
	}
	p = &q->pend[io.tag];
	p->io = io;
	p->rb = rb;
	p->inline_len = wc->byte_len - sizeof(*cmd);
	rdmx_srvq_take(q, p);
}

static void rdmx_srvq_rw_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rdmx_srvq_req *req = container_of(wc->wr_cqe,
						 struct rdmx_srvq_req, rw_cqe);
	struct rdmx_srvq *q = req->q;
	struct rdmx_export *exp = rdmx_srvq_exp(q);

	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			rdmx_srvq_fail(q, "RDMA READ of a write's data failed");
		rdmx_srvq_req_end(req);
		return;
	}
	WRITE_ONCE(q->alive_seq, q->alive_seq + 1);
	/*
	 * Unmapped before the data is written, as nvmet does: a bounce
	 * buffer's bytes reach the pages then.
	 */
	rdma_rw_ctx_destroy(&req->rw, q->qp, q->port, req->sgl, req->nents,
			    req->rw_dir);
	req->rw_dir = DMA_NONE;
	/* A backend that only submits writes it from here (nvmet's way). */
	if (rdmx_export_nowait(exp))
		rdmx_srvq_write_start(req, exp);
	else
		queue_work(rdmx_blk_wq, &req->work);
}

/*
 * A SEND of responses alone completed (@ok: delivered): the responses that
 * waited for it go now, together, or end with the queue.
 */
static void rdmx_srvq_plain_done(struct rdmx_srvq *q, bool ok)
{
	struct rdmx_srvq_req *first = NULL;
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&q->lock, flags);
	q->plain_sent--;
	if (q->nr_batch) {
		if (ok && q->state != RDMX_SRVQ_TORN) {
			first = rdmx_srvq_post_batch(q, &ret);
		} else {
			/* Not to be posted: ended as a batch that failed. */
			first = rdmx_srvq_batch_take(q);
			ret = -ECONNRESET;
		}
	}
	spin_unlock_irqrestore(&q->lock, flags);
	if (first && ret)
		rdmx_srvq_batch_failed(first, ret);
}

static void rdmx_srvq_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rdmx_srvq_req *req = container_of(wc->wr_cqe,
						 struct rdmx_srvq_req, send_cqe);
	struct rdmx_srvq *q = req->q;
	bool event = req->io.tag == RDMX_BLK_TAG_EVENT;

	if (unlikely(wc->status != IB_WC_SUCCESS) &&
	    wc->status != IB_WC_WR_FLUSH_ERR) {
		/* An event unanswered: a keepalive found the client gone. */
		pr_warn_ratelimited("block queue %u from %pISpc: %s not delivered: %s\n",
				    q->idx, &q->peer,
				    event ? "event (keepalive)" : "response",
				    ib_wc_status_msg(wc->status));
		rdmx_srvq_fail(q, event ? "the client is unreachable" :
				 "response failed");
	} else if (wc->status == IB_WC_SUCCESS) {
		WRITE_ONCE(q->alive_seq, q->alive_seq + 1);
	}
	if (event)
		clear_bit(RDMX_SRVQ_PROBING, &q->flags);
	if (req->plain)
		rdmx_srvq_plain_done(q, wc->status == IB_WC_SUCCESS);
	req->plain = false;
	/* The responses that went with it, if any, end with it. */
	rdmx_srvq_batch_end_others(req);
	rdmx_srvq_req_end(req);
}

/* ---- server queues: setup and teardown ---------------------------------- */

static void rdmx_srvq_free_bufs(struct rdmx_srvq *q)
{
	unsigned int i;

	for (i = 0; q->rbufs && i < q->nr_rbufs; i++)
		rdmx_rx_buf_exit(q->ibdev, &q->rbufs[i].rx);
	for (i = 0; q->reqs && i < q->nr_reqs; i++) {
		struct rdmx_srvq_req *req = &q->reqs[i];

		if (req->rsp_dma)
			ib_dma_unmap_single(q->ibdev, req->rsp_dma,
					    sizeof(*req->rsp), DMA_TO_DEVICE);
		kfree(req->rsp);
		if (req->read_page) {
			req->read_sg.length = PAGE_SIZE;	/* as mapped */
			ib_dma_unmap_sg(q->ibdev, &req->read_sg, 1,
					DMA_TO_DEVICE);
			__free_page(req->read_page);
		}
	}
	rdmx_srvq_stage_exit(q);
	kvfree(q->rbufs);
	kvfree(q->reqs);
	kvfree(q->pend);
	bitmap_free(q->busy);
	bitmap_free(q->awaiting);
	q->awaiting = NULL;
	q->pend = NULL;
	q->rbufs = NULL;
	q->reqs = NULL;
	q->busy = NULL;
}

static int rdmx_srvq_alloc_bufs(struct rdmx_srvq *q)
{
	unsigned int i;
	int ret;

	q->busy = bitmap_zalloc(q->depth, GFP_KERNEL);
	q->awaiting = bitmap_zalloc(q->depth, GFP_KERNEL);
	q->nr_reqs = q->depth * RDMX_SRVQ_CTX_FACTOR;
	q->reqs = kvcalloc(q->nr_reqs, sizeof(*q->reqs), GFP_KERNEL);
	q->rbufs = kvcalloc(q->nr_rbufs, sizeof(*q->rbufs), GFP_KERNEL);
	q->pend = kvcalloc(q->depth, sizeof(*q->pend), GFP_KERNEL);
	if (!q->busy || !q->awaiting || !q->reqs || !q->rbufs || !q->pend)
		return -ENOMEM;
	for (i = 0; i < q->depth; i++)
		INIT_LIST_HEAD(&q->pend[i].node);
	for (i = 0; i < q->nr_rbufs; i++) {
		struct rdmx_srvq_rbuf *rb = &q->rbufs[i];

		rb->q = q;
		rb->rx.cqe.done = rdmx_srvq_recv_done;
		ret = rdmx_rx_buf_init(q->ibdev, &rb->rx,
				       sizeof(struct rdmx_blk_cmd),
				       RDMX_BLK_INLINE_MAX);
		if (ret)
			return ret;
		rb->rx.data_first = q->data_first;
	}
	for (i = 0; i < q->nr_reqs; i++) {
		struct rdmx_srvq_req *req = &q->reqs[i];

		req->q = q;
		list_add_tail(&req->node, &q->free);
		INIT_LIST_HEAD(&req->batch);
		req->rw_dir = DMA_NONE;
		INIT_WORK(&req->work, rdmx_srvq_req_work);
		req->rw_cqe.done = rdmx_srvq_rw_done;
		req->send_cqe.done = rdmx_srvq_send_done;
		req->rsp = kzalloc(sizeof(*req->rsp), GFP_KERNEL);
		if (!req->rsp)
			return -ENOMEM;
		req->rsp_dma = ib_dma_map_single(q->ibdev, req->rsp,
						 sizeof(*req->rsp),
						 DMA_TO_DEVICE);
		if (ib_dma_mapping_error(q->ibdev, req->rsp_dma)) {
			req->rsp_dma = 0;
			return -ENOMEM;
		}
	}
	return 0;
}

/*
 * Tear a queue down: drain the QP (every posted work request completes,
 * flushed), wait for the commands still running, then free. Runs once, for
 * whoever moved the queue to RDMX_SRVQ_TORN (from then on nothing is
 * posted); the caller destroys the cm_id afterwards, or lets rdma_cm do it.
 */
static void rdmx_srvq_teardown(struct rdmx_srvq *q)
{
	struct rdmx_export *exp;

	WARN_ON_ONCE(!rdmx_srvq_torn(q));
	if (q->qp) {
		ib_drain_qp(q->qp);
		wait_event(q->wait, !atomic_read(&q->active));
	}
	/* No completion or command is left to fail the queue again. */
	cancel_work_sync(&q->disconnect_work);

	mutex_lock(&rdmx_exports_mutex);
	list_del_init(&q->node);
	exp = q->exp;
	if (exp) {
		list_del_init(&q->exp_node);
		/* Its commands, backing I/O included, have all ended. */
		/* Read locklessly by rdmx_ioc_export_del()'s wait. */
		WRITE_ONCE(exp->nr_queues, exp->nr_queues - 1);
		if (!exp->nr_queues)
			wake_up_all(&rdmx_export_idle_wait);
		if (q->idx == 0)
			pr_info_ratelimited("export %s: %pISc disconnected\n", exp->name,
					    &q->peer);
	}
	mutex_unlock(&rdmx_exports_mutex);

	if (q->qp)
		rdma_destroy_qp(q->cm_id);
	q->qp = NULL;
	rdmx_srvq_free_bufs(q);
	if (q->cq)
		ib_cq_pool_put(q->cq, q->cq_size);
	q->cq = NULL;
	if (q->pd)
		ib_dealloc_pd(q->pd);
	q->pd = NULL;
	if (exp)
		kobject_put(&exp->kobj);
	q->exp = NULL;
}

static void rdmx_srvq_free(struct rdmx_srvq *q)
{
	kfree(q);
	if (atomic_dec_and_test(&rdmx_srvq_count))
		wake_up(&rdmx_srvq_wait);
}

static void rdmx_srvq_release_work(struct work_struct *work)
{
	struct rdmx_srvq *q = container_of(work, struct rdmx_srvq, release_work);

	rdmx_srvq_teardown(q);
	rdma_destroy_id(q->cm_id);
	rdmx_srvq_free(q);
}

static int rdmx_srvq_create_ib(struct rdmx_srvq *q)
{
	struct ib_qp_cap cap = {};
	struct ib_device_attr *da = &q->ibdev->attrs;
	unsigned int pages = DIV_ROUND_UP(q->max_io, PAGE_SIZE) + 1;
	unsigned int sge, wrs_per_io, factor, ctxs;
	int ret;

	q->pd = ib_alloc_pd(q->ibdev, 0);
	if (IS_ERR(q->pd)) {
		ret = PTR_ERR(q->pd);
		q->pd = NULL;
		return ret;
	}
	sge = max(1, min(da->max_sge_rd, da->max_send_sge));
	wrs_per_io = DIV_ROUND_UP(pages, sge);
	factor = rdma_rw_mr_factor(q->ibdev, q->port, pages);
	/* Grant fewer tags when the send queue could not hold them all. */
	for (;;) {
		ctxs = q->depth * RDMX_SRVQ_CTX_FACTOR;
		if (q->depth <= 2 ||
		    ctxs * (1 + wrs_per_io) + 1 +
		    rdma_rw_max_send_wr(q->ibdev, q->port, ctxs * factor, 0) <=
		    da->max_qp_wr)
			break;
		q->depth /= 2;
	}
	/* The receives; an RDMA context's requests and a response each. */
	q->nr_rbufs = q->depth + (q->data_first ? RDMX_SRVQ_SPARE_RECVS : 0);
	/* One more for the staging area's registration (rdmx_srvq_open()). */
	q->cq_size = q->nr_rbufs + ctxs * (1 + wrs_per_io) + 2;
	q->cq = ib_cq_pool_get(q->ibdev, q->cq_size, q->idx,
			       IB_POLL_WORKQUEUE);
	if (IS_ERR(q->cq)) {
		ret = PTR_ERR(q->cq);
		q->cq = NULL;
		return ret;
	}
	cap.max_send_wr = ctxs * (1 + wrs_per_io) + 1;
	cap.max_rdma_ctxs = ctxs * factor;
	/*
	 * Two for an inline READ's response, and a batch of responses, where
	 * the device has them.
	 */
	cap.max_send_sge = max_t(u32, min_t(u32, RDMX_BLK_BATCH_MAX,
					    da->max_send_sge), sge);
	cap.max_recv_wr = q->nr_rbufs;
	cap.max_recv_sge = 2;
	ret = rdmx_rc_qp_create(q->cm_id, q->pd, q->cq, q, &cap);
	if (ret)
		return ret;
	q->qp = q->cm_id->qp;
	q->max_send_sge = cap.max_send_sge;
	return 0;
}

/*
 * Drop a queue rdmx_srvq_watch() gave up on. Unlike rdmx_srvq_fail(), from a
 * thread that is neither a completion nor a command of the queue: its
 * teardown may have begun, so the work is queued only under q->lock, with
 * the move to failing, which a torn queue refuses (the teardown is claimed
 * under that lock before it cancels the work). The work moves the QP to the error state.
 */
static void rdmx_srvq_expire(struct rdmx_srvq *q, const char *why)
{
	unsigned long flags;
	bool go;

	spin_lock_irqsave(&q->lock, flags);
	go = rdmx_srvq_move(q, RDMX_SRVQ_SERVING, RDMX_SRVQ_FAILING);
	if (go)
		queue_work(rdmx_blk_wq, &q->disconnect_work);
	spin_unlock_irqrestore(&q->lock, flags);
	if (go)
		pr_warn_ratelimited("block queue %u from %pISpc: %s; disconnecting\n",
				    q->idx, &q->peer, why);
}

/*
 * Whether a queue from @q's client host, @q included, has commands in
 * progress: contexts in use other than a keepalive's. Under
 * rdmx_exports_mutex.
 */
static bool rdmx_srvq_host_busy(const struct rdmx_srvq *q)
{
	const struct rdmx_srvq *o;

	lockdep_assert_held(&rdmx_exports_mutex);
	list_for_each_entry(o, &rdmx_srvqs, node)
		if (atomic_read(&o->active) >
		    test_bit(RDMX_SRVQ_PROBING, &o->flags) &&
		    rdmx_addr_same_host((const struct sockaddr *)&o->peer,
					(const struct sockaddr *)&q->peer))
			return true;
	return false;
}

/*
 * Every RDMX_SRVQ_WATCH_MS while server queues exist: a queue that is not
 * bound to an export RDMX_SRVQ_OPEN_MS after its request (and is not
 * answering an OPEN) is half-open, and dropped; a bound queue that took
 * events and showed no sign of its client (@alive_seq) for
 * rdmx_blk_params.keepalive_ms gets a
 * keepalive event. If the client's QP is gone (a client that vanished
 * without a word, or whose DREQ was lost, would otherwise keep its export
 * busy for ever) the event's SEND fails once the transport gives up, or,
 * where it retries for ever (a retry count of 7 is unlimited on
 * soft-RoCE; receiver-not-ready retries are unlimited everywhere), the
 * queue is dropped when the keepalive is still unanswered, and nothing
 * else of the queue completed, for rdmx_params.hb_miss_max keepalive
 * periods (of RDMX_SRVQ_BUSY_KA_MS while the client's host has commands
 * in progress). Nothing here waits for a peer.
 */
static void rdmx_srvq_watch(struct work_struct *work)
{
	unsigned int ka_ms = READ_ONCE(rdmx_blk_params.keepalive_ms);
	unsigned int misses = READ_ONCE(rdmx_params.hb_miss_max);
	unsigned long now = jiffies, unanswered, busy_unanswered;
	struct rdmx_srvq *q;
	bool again;

	unanswered = msecs_to_jiffies(max_t(unsigned int, ka_ms,
					    RDMX_SRVQ_WATCH_MS)) * misses;
	busy_unanswered = msecs_to_jiffies(max_t(unsigned int, ka_ms,
						 RDMX_SRVQ_BUSY_KA_MS)) * misses;
	mutex_lock(&rdmx_exports_mutex);
	list_for_each_entry(q, &rdmx_srvqs, node) {
		unsigned int rx = READ_ONCE(q->alive_seq);

		if (READ_ONCE(q->state) != RDMX_SRVQ_LIVE)
			continue;
		if (!q->exp) {
			if (!atomic_read(&q->opens) &&
			    time_after(now, q->born +
				       msecs_to_jiffies(RDMX_SRVQ_OPEN_MS)))
				rdmx_srvq_expire(q, "not bound to an export in time");
			continue;
		}
		if (test_bit(RDMX_SRVQ_PROBING, &q->flags)) {
			/*
			 * The keepalive's SEND may wait behind transfers
			 * of a busy queue: while any of them completes, the
			 * client is there. One transfer can take longer than
			 * a keepalive period on a slow link (1 MiB over siw
			 * between TCG guests: about 17 s), and siw sends
			 * from one thread per CPU for all queues, so while
			 * commands of the client's host are in progress a
			 * period is the client's request timeout instead.
			 */
			if (rx != q->ka_rx) {
				q->ka_rx = rx;
				q->probe_at = now;
			} else if (time_after(now, q->probe_at + unanswered) &&
				   (time_after(now, q->probe_at + busy_unanswered) ||
				    !rdmx_srvq_host_busy(q))) {
				rdmx_srvq_expire(q, "keepalive unanswered");
			}
			continue;
		}
		if (rx != q->ka_rx) {
			q->ka_rx = rx;
			q->ka_at = now;
			continue;
		}
		if (!ka_ms || !q->events ||
		    time_before(now, q->ka_at + msecs_to_jiffies(ka_ms)))
			continue;
		q->ka_at = now;
		q->probe_at = now;
		set_bit(RDMX_SRVQ_PROBING, &q->flags);
		if (!rdmx_srvq_send_event(q))
			clear_bit(RDMX_SRVQ_PROBING, &q->flags);
	}
	again = !list_empty(&rdmx_srvqs);
	mutex_unlock(&rdmx_exports_mutex);
	if (again)
		queue_delayed_work(rdmx_blk_wq, &rdmx_srvq_watch_work,
				   msecs_to_jiffies(RDMX_SRVQ_WATCH_MS));
}

/*
 * Whether one more queue from @peer stays within rdmx_blk_params.max_queues
 * and .max_blk_queues_per_host. Under rdmx_exports_mutex, which the
 * caller holds until the queue is on rdmx_srvqs.
 */
static bool rdmx_srvq_within_limits(const struct sockaddr *peer)
{
	unsigned int all = 0, host = 0;
	struct rdmx_srvq *q;

	lockdep_assert_held(&rdmx_exports_mutex);
	list_for_each_entry(q, &rdmx_srvqs, node) {
		all++;
		host += rdmx_addr_same_host((struct sockaddr *)&q->peer, peer);
	}
	return all < READ_ONCE(rdmx_blk_params.max_queues) &&
	       host < READ_ONCE(rdmx_blk_params.max_queues_per_host);
}

/*
 * An rdma_cm event on a server queue's id (its cm_ops). Return: 1 on device
 * removal of a queue whose teardown this ran, so that rdma_cm destroys the
 * id; else 0.
 */
static int rdmx_srvq_cm_event(struct rdma_cm_id *cm_id, struct rdma_cm_event *ev)
{
	struct rdmx_srvq *q = container_of(cm_id->context, struct rdmx_srvq,
					   cm_ctx);

	switch (ev->event) {
	case RDMA_CM_EVENT_ESTABLISHED:
		if (READ_ONCE(q->state) == RDMX_SRVQ_FAILING)
			rdma_disconnect(cm_id);
		return 0;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		/* The device waits for us: tear down now, the CM frees the id. */
		if (!rdmx_srvq_set_state(q, RDMX_SRVQ_NOT_TORN,
					 RDMX_SRVQ_TORN))
			return 0;
		rdmx_srvq_teardown(q);
		rdmx_srvq_free(q);
		return 1;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_ADDR_CHANGE:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
		if (rdmx_srvq_set_state(q, RDMX_SRVQ_NOT_TORN,
					RDMX_SRVQ_TORN))
			queue_work(rdmx_blk_wq, &q->release_work);
		return 0;
	default:
		return 0;
	}
}

static const struct rdmx_cm_ops rdmx_srvq_cm_ops = {
	.event = rdmx_srvq_cm_event,
};

/*
 * A connection request for the block service (rdmx_blk_cm_service):
 * creates the server queue and accepts, or rejects: first of all, before
 * anything big is allocated, a queue over the limits. Return: 0; or
 * non-zero when the request was rejected and rdma_cm is to destroy @cm_id.
 */
static int rdmx_blk_srv_connect(struct rdma_cm_id *cm_id,
				struct rdma_cm_event *ev,
				const struct rdmx_conn_params *req)
{
	enum rdmx_rej_reason reason = RDMX_REJ_BUSY;
	struct rdma_conn_param param = {};
	struct rdmx_conn_params rp;
	struct rdmx_conn_rep rep;
	struct rdmx_srvq *q;
	unsigned int i;
	bool ok;
	int ret;

	q = kzalloc(sizeof(*q), GFP_KERNEL);
	if (!q)
		goto reject;
	memcpy(&q->peer, &cm_id->route.addr.dst_addr, sizeof(q->peer));
	INIT_LIST_HEAD(&q->node);
	/* On rdmx_srvqs from here: counted by the next request. */
	mutex_lock(&rdmx_exports_mutex);
	ok = rdmx_srvq_within_limits((struct sockaddr *)&q->peer);
	if (ok)
		list_add_tail(&q->node, &rdmx_srvqs);
	mutex_unlock(&rdmx_exports_mutex);
	if (!ok) {
		atomic64_inc(&rdmx_blk_queues_refused);
		pr_warn_ratelimited("refused a block queue from %pISpc: over max_blk_queues or max_blk_queues_per_host\n",
				    &q->peer);
		kfree(q);
		goto reject;
	}
	atomic_inc(&rdmx_srvq_count);
	q->cm_ctx.ops = &rdmx_srvq_cm_ops;
	q->cm_id = cm_id;
	q->ibdev = cm_id->device;
	q->port = cm_id->port_num;
	q->idx = req->lane;
	uuid_copy(&q->map_uuid, &req->sess_uuid);
	q->gen = req->generation;
	/* The client's tags are below the depth: a receive is posted for each. */
	q->depth = min3((u32)req->queue_depth, (u32)RDMX_SRVQ_DEPTH_MAX,
			(u32)q->ibdev->attrs.max_qp_wr / 4);
	q->max_io = min_t(u32, req->max_msg_size, RDMX_BLK_MAX_IO);
	q->max_io = rounddown(q->max_io, 4096);
	/* A client that knows it sends inline WRITEs' data first. */
	q->data_first = req->minor >= RDMX_BLK_MINOR_DATA_FIRST;
	spin_lock_init(&q->lock);
	INIT_LIST_HEAD(&q->batch);
	init_waitqueue_head(&q->wait);
	INIT_LIST_HEAD(&q->exp_node);
	INIT_LIST_HEAD(&q->free);
	INIT_LIST_HEAD(&q->backlog);
	INIT_WORK(&q->release_work, rdmx_srvq_release_work);
	INIT_WORK(&q->disconnect_work, rdmx_srvq_disconnect_work);
	if (q->depth < 2 || !q->max_io ||
	    !(q->ibdev->attrs.device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS)) {
		reason = RDMX_REJ_PARAMS;
		goto out_free;
	}

	ret = rdmx_srvq_create_ib(q);
	if (ret)
		goto out_teardown;
	ret = rdmx_srvq_alloc_bufs(q);
	if (ret)
		goto out_teardown;
	for (i = 0; i < q->nr_rbufs; i++) {
		ret = rdmx_srvq_post_recv(q, &q->rbufs[i]);
		if (ret)
			goto out_teardown;
	}

	rp = (struct rdmx_conn_params){
		.queue_depth = q->depth, .nr_lanes = req->nr_lanes,
		.features = RDMX_PROTO_F_BLOCK, .max_msg_size = q->max_io,
		.generation = req->generation,
	};
	rdmx_conn_rep_pack(&rep, &rp);
	param.private_data = &rep;
	param.private_data_len = sizeof(rep);
	/* Our READs of the client's pages: no more than it takes at once. */
	param.responder_resources = min_t(u32, ev->param.conn.initiator_depth,
					  cm_id->device->attrs.max_qp_rd_atom);
	param.initiator_depth = min_t(u32, ev->param.conn.responder_resources,
				      cm_id->device->attrs.max_qp_init_rd_atom);
	param.rnr_retry_count = RDMX_RNR_RETRY;
	cm_id->context = &q->cm_ctx;
	ret = rdma_accept(cm_id, &param);
	if (ret) {
		cm_id->context = NULL;
		goto out_teardown;
	}
	mutex_lock(&rdmx_exports_mutex);
	q->born = jiffies;
	q->ka_at = q->born;
	rdmx_srvq_set_state(q, BIT(RDMX_SRVQ_ACCEPTING), RDMX_SRVQ_LIVE);
	mutex_unlock(&rdmx_exports_mutex);
	queue_delayed_work(rdmx_blk_wq, &rdmx_srvq_watch_work,
			   msecs_to_jiffies(RDMX_SRVQ_WATCH_MS));
	return 0;

out_teardown:
	rdmx_srvq_set_state(q, RDMX_SRVQ_NOT_TORN, RDMX_SRVQ_TORN);
	rdmx_srvq_teardown(q);
out_free:
	mutex_lock(&rdmx_exports_mutex);
	list_del_init(&q->node);
	mutex_unlock(&rdmx_exports_mutex);
	rdmx_srvq_free(q);
reject:
	rdmx_cm_reject(cm_id, reason);
	return 1;
}

/* A block queue is no session: only the block server takes it. */
static bool rdmx_blk_takes(const struct rdmx_conn_params *req)
{
	return req->features == RDMX_PROTO_F_BLOCK;
}

static struct rdmx_cm_service rdmx_blk_cm_service = {
	.name = "block queue",
	.takes = rdmx_blk_takes,
	.admin_only = true,
	.connect = rdmx_blk_srv_connect,
};

/**
 * rdmx_blk_srv_init() - set up the block server
 *
 * Context: module load.
 * Return: 0 or -ENOMEM.
 */
int rdmx_blk_srv_init(void)
{
	rdmx_blk_wq = alloc_workqueue("rdmx_blk", WQ_MEM_RECLAIM | WQ_UNBOUND,
				      0);
	if (!rdmx_blk_wq)
		return -ENOMEM;
	rdmx_exports_kobj = kobject_create_and_add("exports", rdmx_sysfs_root());
	if (!rdmx_exports_kobj) {
		destroy_workqueue(rdmx_blk_wq);
		return -ENOMEM;
	}
	rdmx_cm_service_register(&rdmx_blk_cm_service);
	return 0;
}

/**
 * rdmx_blk_srv_exit() - remove every export and wait for the queues to go
 *
 * Context: module unload, after the listeners are gone.
 */
void rdmx_blk_srv_exit(void)
{
	struct rdmx_export *exp, *tmp;
	struct rdmx_srvq *q;

	rdmx_cm_service_unregister(&rdmx_blk_cm_service);
	mutex_lock(&rdmx_exports_mutex);
	list_for_each_entry_safe(exp, tmp, &rdmx_exports, node)
		rdmx_export_remove(exp);
	list_for_each_entry(q, &rdmx_srvqs, node)
		rdmx_srvq_disconnect(q);
	mutex_unlock(&rdmx_exports_mutex);
	wait_event(rdmx_srvq_wait, !atomic_read(&rdmx_srvq_count));
	/* With no queue left, it does not queue itself again. */
	cancel_delayed_work_sync(&rdmx_srvq_watch_work);
	kobject_put(rdmx_exports_kobj);
	destroy_workqueue(rdmx_blk_wq);
}
