/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmx one-sided access: protection domains, registered regions and
 * READ, WRITE, WRITE_IMM and atomic operations.
 *
 * A session owns one protection domain (struct rdmx_pd) for as long as its
 * connections stay on one device; its regions are registered there, so a
 * token stays good across reconnects and is good on no other session.
 *
 * Locking: sess->lock guards the session's PD pointer; sess->mr_mutex its
 * region list and each region's keys (taken before sess->mutex, which
 * posting a registration takes);
 * an endpoint's region table is an xarray (its own lock) and its event
 * queue is under ep->lock. Operations are posted under sess->mutex (the
 * QP cannot go meanwhile) and sess->lock (the send queue budget), and
 * complete from the CQ's workqueue.
 */
#ifndef _RDMX_RMA_H
#define _RDMX_RMA_H

#include <linux/completion.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/scatterlist.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include <rdma/rw.h>

#include "core/rdmx.h"
#include "sess.h"

/* Most pages one FRWR registration of a region maps. */
#define RDMX_MR_CHUNK_PAGES_MAX		BIT(16)
/* One-sided contexts (rdma_rw) a connection has in flight, at most. */
#define RDMX_RMA_CTXS			64
/* Send queue entries each context may take (registration, op, invalidation). */
#define RDMX_RMA_WR_FACTOR		3
/* Pages of local memory one work request moves, at most. */
#define RDMX_RMA_PIECE_PAGES		255
/* READs this small are cut at the peer's page boundaries (rma.c). */
#define RDMX_RMA_SMALL_READ		64
/* Scatter/gather entries per work request rdmx asks of a QP, at most. */
#define RDMX_RMA_MAX_SGE		16
/* Asynchronous operations an endpoint may have in flight or unread. */
#define RDMX_RMA_ASYNC_MAX		4096

/**
 * struct rdmx_pd - a protection domain shared by a session's connections
 * @ref: the session, each connection and each region hold one
 * @pd: the verbs PD
 * @rdev: its device (holds a reference)
 */
struct rdmx_pd {
	struct kref ref;
	struct ib_pd *pd;
	struct rdmx_device *rdev;
};

/**
 * struct rdmx_mr - a registered region
 * @id: its id in its endpoint's table
 * @access: RDMX_TOKEN_* rights
 * @sess: the session it is registered on (the endpoint holds a reference)
 * @sess_node: on @sess->mrs, under @sess->mr_mutex
 * @xpd: the PD its keys live in (holds a reference); NULL once the keys
 *	are gone (deregistered, or the device went away)
 * @mm: the mm its pinned pages are charged to (holds an mmgrab)
 * @pages: the pinned pages
 * @npages: their number
 * @first_off: offset of the region in its first page
 * @length: bytes
 * @iova: remote address of the first byte
 * @chunk: bytes per chunk (pages per FRWR registration times PAGE_SIZE)
 * @nr_keys: chunks
 * @sgts: one scatter table per chunk, DMA-mapped while @xpd is set
 * @mrs: one FRWR MR per chunk
 * @keys: their rkeys
 * @cqe: completion of a registration or invalidation work request
 * @done: completed by @cqe
 * @wc_status: that completion's status
 * @post_conn: the connection that work request went on, until @cqe runs
 *	(which gives its send queue entry back: a drain waits for that, the
 *	waiter on @done does not)
 */
struct rdmx_mr {
	u32 id;
	u8 access;
	struct rdmx_sess *sess;
	struct list_head sess_node;
	struct rdmx_pd *xpd;
	struct mm_struct *mm;
	struct page **pages;
	unsigned long npages;
	u32 first_off;
	u64 length;
	u64 iova;
	u64 chunk;
	u32 nr_keys;
	struct sg_table *sgts;
	struct ib_mr **mrs;
	u32 *keys;
	struct ib_cqe cqe;
	struct completion done;
	enum ib_wc_status wc_status;
	struct rdmx_conn *post_conn;
};

/**
 * struct rdmx_lmem - local memory of one operation
 * @pages: its pages (pinned when @user)
 * @npages: their number
 * @offset: of the first byte in the first page
 * @len: bytes
 * @user: pinned from userspace (unpinned when done)
 * @dirty: written by the device (READ): mark the pages dirty
 * @mm: user memory: the mm whose pinned_vm counts @npages (uncharged when
 *	released)
 */
struct rdmx_lmem {
	struct mm_struct *mm;
	struct page **pages;
	unsigned long npages;
	unsigned int offset;
	u64 len;
	bool user;
	bool dirty;
};

struct rdmx_rma_batch;

/**
 * struct rdmx_rma_piece - the part of an operation one work request
 *	chain moves: one remote key, one rdma_rw context
 * @cqe: completion of its last work request
 * @req: the operation
 * @conn: the connection it was posted on (drained before it goes)
 * @sgt: the local pages it moves (READ, WRITE)
 * @sg: @sgt's entry when they lie in one page
 * @dma: the result word's DMA address (atomics)
 * @ctx: the rdma_rw context (READ, WRITE)
 * @dir: DMA direction of @sgt
 * @wrs: send queue entries it takes
 * @raddr: remote address
 * @rkey: remote key
 * @len: bytes
 * @atomic: an atomic rather than a READ or WRITE
 */
struct rdmx_rma_piece {
	struct ib_cqe cqe;
	struct rdmx_rma_req *req;
	struct rdmx_conn *conn;
	struct sg_table sgt;
	struct scatterlist sg;
	u64 dma;
	struct rdma_rw_ctx ctx;
	enum dma_data_direction dir;
	u32 wrs;
	u64 raddr;
	u32 rkey;
	u64 len;
	bool atomic;
};

/**
 * struct rdmx_rma_req - one operation of a batch
 * @ep: the endpoint it runs on (holds a reference)
 * @batch: synchronous: the waiting batch; NULL when asynchronous
 * @opcode: RDMX_RMA_*
 * @imm: WRITE_IMM's immediate
 * @status: 0 or the first error of its pieces
 * @pending: pieces not completed yet, plus one while posting
 * @lmem: local memory: READ's destination, WRITE's source, an atomic's
 *	8-byte result word (written by the device)
 * @event: what an asynchronous operation reports
 * @first: its first piece, the only one of most operations (an atomic
 *	always), so that those allocate none
 * @node: on @ep->imm_reqs while its immediate waits to be sent (WRITE_IMM),
 *	or on @ep->rma_done while its completion waits for process context,
 *	then on @ep->events once complete (asynchronous)
 */
struct rdmx_rma_req {
	struct rdmx_ep *ep;
	struct rdmx_rma_batch *batch;
	u32 opcode;
	u32 imm;
	int status;
	atomic_t pending;
	struct rdmx_lmem lmem;
	struct rdmx_event event;
	struct rdmx_rma_piece first;
	struct list_head node;
};

/**
 * struct rdmx_rma_batch - a synchronous batch waiting for its operations
 * @pending: operations not complete yet, plus one while submitting
 * @done: completed when @pending reaches 0
 * @done_ns: ktime_get_ns() when an operation of the batch last completed
 */
struct rdmx_rma_batch {
	atomic_t pending;
	struct completion done;
	u64 done_ns;
};

/* mr.c */
void rdmx_pd_put(struct rdmx_pd *xpd);
struct rdmx_pd *rdmx_sess_pd_get(struct rdmx_sess *sess,
				 struct ib_device *ibdev);
void rdmx_sess_pd_device_gone(struct rdmx_sess *sess,
			      struct ib_device *ibdev);
void rdmx_sess_pd_work(struct work_struct *work);
u32 rdmx_access_to_ib(u8 access);
int rdmx_mr_reg(struct rdmx_ep *ep, struct rdmx_lmem *lmem, u8 access,
		void *token, u32 *token_len, u32 *id);
void rdmx_mr_dereg_all(struct rdmx_ep *ep);
int rdmx_lmem_pin(struct rdmx_lmem *lm, u64 uaddr, u64 len, bool write,
		  bool longterm);
int rdmx_lmem_kernel(struct rdmx_lmem *lm, void *buf, size_t len);
void rdmx_lmem_release(struct rdmx_lmem *lm);
int rdmx_lmem_sgt(const struct rdmx_lmem *lm, u64 off, u64 len,
		  struct sg_table *sgt);

/* rma.c */
int rdmx_rma_get_conn(struct rdmx_sess *sess, struct rdmx_conn **connp,
		      u32 wrs, bool wait);
void rdmx_rma_conn_wrs_put(struct rdmx_sess *sess, struct rdmx_conn *conn,
			   u32 wrs);
void rdmx_rma_conn_wrs_done(struct rdmx_sess *sess, struct rdmx_conn *conn,
			    u32 wrs);
int rdmx_rma_submit(struct rdmx_ep *ep, struct rdmx_rma_batch *batch,
		    u32 opcode, u32 imm, const struct rdmx_token *t,
		    u64 off, struct rdmx_lmem *lmem, u64 compare_add, u64 swap,
		    u64 user_data, struct rdmx_rma_req **reqp);
void rdmx_rma_req_free(struct rdmx_rma_req *req);
void rdmx_rma_imm_work(struct work_struct *work);
void rdmx_rma_done_work(struct work_struct *work);
void rdmx_rma_imm_kick(struct rdmx_ep *ep);
int rdmx_ep_events_take(struct rdmx_ep *ep, struct rdmx_event *out,
			unsigned int room, bool nonblock);
void rdmx_ep_events_free(struct rdmx_ep *ep);
int rdmx_ep_rma_ready(struct rdmx_ep *ep);
void rdmx_rma_batch_init(struct rdmx_rma_batch *batch);
void rdmx_rma_batch_wait(struct rdmx_rma_batch *batch);

/* bench.c */
long rdmx_uep_bench(struct rdmx_ep *ep, void __user *uarg);
#if IS_ENABLED(CONFIG_KUNIT)
int rdmx_bench_check(const struct rdmx_bench *b);
void rdmx_bench_lat_stats(u32 *samples, u32 n, struct rdmx_bench *b);
u64 rdmx_bench_rate(u64 bytes, u64 ns);
#endif

#endif /* _RDMX_RMA_H */
