/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmx block service, server side: what the export table (export.c) and
 * the server queues (blk_srv.c) share. Locking is described in blk_srv.c.
 */
#ifndef _RDMX_BLK_SRV_H
#define _RDMX_BLK_SRV_H

#include <linux/kobject.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/scatterlist.h>
#include <linux/srcu.h>
#include <linux/socket.h>
#include <linux/uuid.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include <rdma/rw.h>

#include "core/cm.h"
#include "core/rdmx.h"
#include "blk.h"

/* Commands a server queue takes at once, at most (the client asks). */
#define RDMX_SRVQ_DEPTH_MAX	256
/* Contexts per tag: a response in flight, and the tag's next command. */
#define RDMX_SRVQ_CTX_FACTOR	2
/*
 * Receives beyond the depth on a queue whose receives take the data first:
 * a batch's, until it is posted again, while its WRITEs' data takes one
 * each (the client posts one batch at a time; more costs a receiver-not-
 * ready retry, not a failure).
 */
#define RDMX_SRVQ_SPARE_RECVS	2
/* How often rdmx_srvq_watch() looks at the queues. */
#define RDMX_SRVQ_WATCH_MS	1000
/*
 * A keepalive period while a queue has commands in progress: the request
 * timeout of rdmx's client, after which it recovers the request itself.
 */
#define RDMX_SRVQ_BUSY_KA_MS	30000
/* A queue not bound to an export this long after its request is dropped. */
#define RDMX_SRVQ_OPEN_MS	(2 * RDMX_CONNECT_ATTEMPT_MS)

/**
 * struct rdmx_export - storage offered to clients
 * @kobj: /sys/kernel/rdmx/exports/NAME; its refcount is the export's
 * @node: on rdmx_exports
 * @name: the name
 * @path: what was exported, for sysfs ("ram:BYTES" for RAM)
 * @ops: its backend: rdmx_backend_file, _bdev or _ram
 * @file: the backing file (a block device's, a regular file, or shmem)
 * @bdev: the block device, set by the bdev backend when @file is one
 *	opened O_DIRECT: READs and WRITEs go to it as bios, answered from
 *	their completion (so the completion's work runs them itself)
 * @size: bytes; only grows (RDMX_IOC_EXPORT_RESIZE, under
 *	rdmx_exports_mutex), read locklessly by the queues
 * @lbs: logical block size
 * @max_io: largest I/O
 * @flags: RDMX_BLK_EXP_*
 * @insecure: served to clients on any source port (RDMX_EXPORT_INSECURE);
 *	otherwise only to those on a port below 1024
 * @shared: several maps may write it (RDMX_EXPORT_SHARED); otherwise one
 * @stable_writes: its storage needs a write's data left alone until the
 *	write is done (rdmx_export_stable_writes()): no staging area
 * @uuid: identity, the clients' disk serial (rdmx_export_make_uuid())
 * @uuid_src: where @uuid came from, as sysfs "identity" shows it: "given"
 *	(RDMX_EXPORT_UUID), "file" (a file's filesystem and inode), "path" (a
 *	block device's host, name and path), "new" (RAM)
 * @nr_allow: entries of @allow; 0 lets any peer in
 * @allow: the allow-list
 * @queues: bound server queues (struct rdmx_srvq)
 * @nr_queues: on @queues
 * @fence: SRCU read-held (srcu_down_read()) from the start of each write,
 *	zeroing or discard of the backing store to its end, which may come
 *	in a bio's completion; an OPEN that fences a map's older queues
 *	waits for a grace period, for those already under way
 *	(rdmx_srvq_fence())
 * @added: in sysfs
 * @reads: counters
 * @writes: counters
 * @read_bytes: counters
 * @write_bytes: counters
 * @errors: counters
 */
struct rdmx_export {
	struct kobject kobj;
	struct list_head node;
	char name[RDMX_EXPORT_NAME_LEN];
	char *path;
	const struct rdmx_backend *ops;
	struct file *file;
	struct block_device *bdev;
	u64 size;
	u32 lbs;
	u32 max_io;
	u32 flags;
	bool insecure;
	bool shared;
	bool stable_writes;
	uuid_t uuid;
	const char *uuid_src;
	unsigned int nr_allow;
	struct rdmx_export_allow allow[RDMX_EXPORT_ALLOW_MAX];
	struct list_head queues;
	unsigned int nr_queues;
	struct srcu_struct fence;
	bool added;
	atomic64_t reads;
	atomic64_t writes;
	atomic64_t read_bytes;
	atomic64_t write_bytes;
	atomic64_t errors;
};

struct rdmx_srvq;
struct rdmx_srvq_req;
struct scatterlist;

/**
 * struct rdmx_backend - a kind of backing store (io_file.c, io_bdev.c,
 *	io_ram.c), as nvmet divides io-cmd-file.c and io-cmd-bdev.c
 * @setup: fill in @exp->size, @exp->flags and the store's own logical
 *	block size (*@lbs) for RDMX_IOC_EXPORT_ADD. A file or a block
 *	device is open already (@exp->file); RAM makes its own. export.c
 *	checks the geometry after it.
 * @uuid: mix what identifies the storage into @w (seeded from the
 *	export's name) and set @exp->uuid_src; NULL: a new random uuid, for
 *	storage that does not outlive its export
 * @size: the size the store has now, which RDMX_IOC_EXPORT_RESIZE takes;
 *	NULL for a store sized by the administrator
 * @grow: resize a store sized by the administrator (NULL for the others)
 * @read: read the command's extent into its pages (req->sgl) and answer
 *	it through rdmx_srvq_read_done(), at once or from a completion; or,
 *	when it would have to wait for the device and may not
 *	(rdmx_srvq_io_retried() false), hand it back through
 *	rdmx_srvq_io_again()
 * @write: write the command's data (rdmx_srvq_write_data()) at its
 *	offset, stable first with RDMX_BLK_CMD_FUA, and answer it through
 *	rdmx_srvq_write_done(), at once or from a completion; or hand it
 *	back as @read does. Inside the export's fence, which
 *	rdmx_srvq_write_done() ends.
 * @nowait: whether @read and @write only submit I/O for @exp, never
 *	waiting for the device, so that a READ or WRITE may run in its
 *	receive's (or its data's) completion (NULL: never)
 * @zero: discard (a hint) or write zeroes over a range
 * @flush: make what was written stable
 *
 * All but @read, @write and @nowait return 0 or a negative errno and may
 * sleep; they run from a command's work, @zero inside the export's fence.
 * @read and @write run from a command's work, or from a completion's
 * when @nowait says so.
 */
struct rdmx_backend {
	int (*setup)(struct rdmx_export *exp, const struct rdmx_export_add *ea,
		     u32 *lbs);
	void (*uuid)(struct rdmx_export *exp, u32 w[4]);
	u64 (*size)(struct rdmx_export *exp);
	int (*grow)(struct rdmx_export *exp, u64 size);
	void (*read)(struct rdmx_srvq_req *req);
	void (*write)(struct rdmx_srvq_req *req);
	bool (*nowait)(const struct rdmx_export *exp);
	int (*zero)(struct rdmx_export *exp, u64 off, u32 len, bool discard,
		    bool fua);
	int (*flush)(struct rdmx_export *exp);
};

extern const struct rdmx_backend rdmx_backend_file;
extern const struct rdmx_backend rdmx_backend_bdev;
extern const struct rdmx_backend rdmx_backend_ram;

/* io_file.c: the file backend's helpers, which the others share */
void rdmx_io_file_write(struct rdmx_srvq_req *req);
void rdmx_io_file_read(struct rdmx_srvq_req *req);
int rdmx_io_file_fallocate(struct rdmx_export *exp, int mode, u64 off,
			   u32 len, bool discard, bool fua);
int rdmx_io_file_zero(struct rdmx_export *exp, u64 off, u32 len,
		      bool discard, bool fua);
int rdmx_io_file_flush(struct rdmx_export *exp);

/**
 * struct rdmx_srvq_rbuf - a posted receive: a command header and inline data
 * @rx: its memory: the command (struct rdmx_blk_cmd) in @rx.hdr, inline
 *	write data in the page @rx.data (page-aligned for direct I/O); or
 *	several commands, one after another from @rx.hdr on into @rx.data
 *	(RDMX_BLK_OPEN_CMD_BATCH). With @rx.data_first (rdmx_srvq.data_first)
 *	the page comes first: commands start there, and an inline WRITE's
 *	data fills it from its start, its command after it (in the page, or
 *	in @rx.hdr for 4 KiB); or a WRITE's data alone
 *	(RDMX_BLK_OPEN_WRITE_IMM)
 * @q: owner
 */
struct rdmx_srvq_rbuf {
	struct rdmx_rx_buf rx;
	struct rdmx_srvq *q;
};

/**
 * struct rdmx_srvq_pend - a command that arrived, until a context takes it
 * @node: on the queue's backlog while no context is free
 * @io: the command, parsed
 * @rb: its receive, while the command needs its bytes (inline data, an
 *	OPEN's name); NULL for one of a batch, whose receive went back at once
 * @inline_len: inline bytes received
 *
 * One per tag: a tag is busy from its command's arrival, so its entry is
 * free whenever a command with the tag arrives.
 */
struct rdmx_srvq_pend {
	struct list_head node;
	struct rdmx_blk_io io;
	struct rdmx_srvq_rbuf *rb;
	u32 inline_len;
};

/**
 * struct rdmx_srvq_req - a context serving one command
 * @q: owner
 * @node: on the queue's free list while unused
 * @io: the command, checked
 * @inline_len: inline bytes received
 * @rb: the receive it came in, until reposted
 * @work: runs it
 * @rw_cqe: completion of an RDMA READ (client writes)
 * @send_cqe: completion of the response
 * @sgl: server pages for the data
 * @nents: entries of @sgl
 * @rw: rdma_rw context over @sgl
 * @rw_dir: its direction; DMA_NONE when there is none
 * @inline_sg: an inline WRITE's data, the page of its receive (@rb)
 * @read_page: an inline READ's page, the context's own: allocated and
 *	mapped at the context's first inline READ, kept until the queue goes
 * @read_sg: @read_page, mapped once (DMA_TO_DEVICE); @sgl points at it
 *	while an inline READ uses it, whose data then goes out after the
 *	response
 * @again: handed back by its backend to run again from its work, where
 *	it may wait (rdmx_srvq_io_again())
 * @fence_held: a change of the backing store is under way, inside the
 *	export's fence (@fence_idx)
 * @fence_idx: srcu_down_read()'s index
 * @rsp: the response
 * @rsp_dma: its mapping
 * @status: positive errno for the response
 * @tag_held: the command's tag is still marked busy
 * @batch: on its queue's @batch while its response waits to go with
 *	others; in the SEND that carries them, the others are on the first
 *	one's @batch
 * @plain: its response is a SEND with a response alone, counted in the
 *	queue's @plain_sent until it completes
 * @stage: enum rdmx_srvq_stage, changed by rdmx_srvq_req_move() alone, by
 *	whoever owns the context: the thread that took it from the free
 *	list, then each completion that hands it on
 */
struct rdmx_srvq_req {
	struct rdmx_srvq *q;
	struct list_head node;
	struct rdmx_blk_io io;
	u32 inline_len;
	struct rdmx_srvq_rbuf *rb;
	struct work_struct work;
	struct ib_cqe rw_cqe;
	struct ib_cqe send_cqe;
	struct scatterlist *sgl;
	unsigned int nents;
	struct rdma_rw_ctx rw;
	enum dma_data_direction rw_dir;
	struct scatterlist inline_sg;
	struct page *read_page;
	struct scatterlist read_sg;
	bool again;
	bool fence_held;
	int fence_idx;
	struct rdmx_blk_rsp *rsp;
	u64 rsp_dma;
	u32 status;
	bool tag_held;
	struct list_head batch;
	bool plain;
	enum rdmx_srvq_stage stage;
};

/*
 * rdmx_srvq.flags: conditions a queue in any state may be in besides its
 * state (enum rdmx_srvq_state).
 */
#define RDMX_SRVQ_FENCED	0	/* a newer incarnation of its map opened */
#define RDMX_SRVQ_PROBING	1	/* a keepalive event is in flight */

/**
 * struct rdmx_srvq - a server queue: one client hardware queue's connection
 * @cm_ctx: what the cm_id's context points to
 * @cm_id: its rdma_cm id
 * @ibdev: its device
 * @port: its port
 * @pd: protection domain
 * @cq: completion queue from the pool
 * @cq_size: entries taken
 * @qp: the RC QP
 * @max_send_sge: its send scatter/gather entries
 * @depth: commands in flight, at most (tags are below it)
 * @max_io: largest I/O, the smaller of the client's and the server's
 * @idx: which of the map's queues this is (the preamble's lane), from 0
 * @peer: the client's address
 * @map_uuid: the client's map, as its connect request named it (the
 *	session uuid field)
 * @gen: the map's incarnation, bumped by each of its reconnects
 * @exp: the bound export (holds a reference), NULL before OPEN; set
 *	under rdmx_exports_mutex, read through rdmx_srvq_exp(), stable for
 *	commands once set
 * @ro: the client mapped read-only
 * @events: the client takes events (RDMX_BLK_OPEN_EVENTS)
 * @inline_read: READs may ask for their data in the response
 *	(RDMX_BLK_OPEN_INLINE_READ, granted)
 * @imm_read: their data may go alone, the tag as immediate data
 *	(RDMX_BLK_OPEN_IMM_READ, granted)
 * @batch_max: responses one SEND may carry (RDMX_BLK_OPEN_BATCH
 *	granted), else 0
 * @cmd_batch: a receive may hold several commands (RDMX_BLK_OPEN_CMD_BATCH
 *	granted); set before the OPEN's answer is sent
 * @data_first: its receives take the data first, page-aligned (a client
 *	of RDMX_PROTO_MINOR 3 or later): commands start in the page, and an
 *	inline WRITE's command comes after its data; set at the accept
 * @write_imm: a batch may carry inline WRITEs whose data comes alone, the
 *	tag as immediate data (RDMX_BLK_OPEN_WRITE_IMM granted); set before
 *	the OPEN's answer is sent
 * @stage_len: bytes of its staging area (RDMX_BLK_OPEN_STAGE granted),
 *	else 0; set with smp_store_release() once the area's registration
 *	is posted, before the OPEN's answer is (srv_stage.c)
 * @stage_mr: the staging area's registration, for remote writes
 * @stage_pages: its pages, zeroed when allocated
 * @stage_npages: how many
 * @stage_dma: their mappings, one a page
 * @stage_cqe: completion (errors only) of its registration
 * @awaiting: tags of such WRITEs whose data has not come yet (their tags
 *	are busy too); only the receive completions touch it, one at a time
 * @plain_sent: SENDs of responses alone (rdmx_srvq_req.plain) posted and
 *	not completed, under @lock
 * @batch: responses waiting for one of those to complete, to go together
 *	(at most @batch_max), under @lock; never waiting without one
 * @nr_batch: how many
 * @size_sent: the export size the last response built with a header
 *	carried (READ_ONCE()/WRITE_ONCE(), unordered: it may even go back,
 *	which costs a header more; the client never reads past the size it
 *	knows, and a header with the new one follows)
 * @exp_node: on @exp->queues
 * @node: on rdmx_srvqs, under rdmx_exports_mutex
 * @born: when it was accepted (jiffies)
 * @opens: OPENs received and not yet answered
 * @alive_seq: completions that show the client alive: commands received,
 *	RDMA READs of their data and SENDs it acknowledged (bumped by the
 *	queue's completion handlers, which run one at a time)
 * @ka_rx: @alive_seq as rdmx_srvq_watch() last saw it (under
 *	rdmx_exports_mutex, as are @ka_at and @probe_at)
 * @ka_at: when it saw it change, or last sent a keepalive
 * @probe_at: when it sent the keepalive in flight (RDMX_SRVQ_PROBING), or
 *	last saw @alive_seq change since
 * @lock: @state, posting, @free and @backlog; taken with interrupts off,
 *	as a READ's bio completion answers it (see rdmx_srvq_read_done())
 * @state: enum rdmx_srvq_state, changed by rdmx_srvq_move() alone; read
 *	without @lock through READ_ONCE()
 * @busy: tags in use: from a command's arrival until its response is
 *	posted (the client may reuse the tag as soon as it has the response)
 * @active: contexts in use
 * @wait: woken when @active drops to 0
 * @reqs: RDMX_SRVQ_CTX_FACTOR * @depth contexts: a command's context stays
 *	in use until its response's completion, after its tag is free again
 * @nr_reqs: how many
 * @free: unused contexts
 * @backlog: commands received while no context was free, in order
 *	(rdmx_srvq_pend.node)
 * @pend: @depth of them, by tag
 * @rbufs: the receives: @depth of them, and RDMX_SRVQ_SPARE_RECVS more
 *	with @data_first (a batch's receive, taken before it is posted
 *	again, besides one for each of its WRITEs' data)
 * @nr_rbufs: how many; set with the QP, whose receive queue holds them
 * @flags: RDMX_SRVQ_FENCED, RDMX_SRVQ_PROBING
 * @release_work: tears the queue down
 * @disconnect_work: disconnects a failed queue once its port is usable
 */
struct rdmx_srvq {
	struct rdmx_cm_ctx cm_ctx;
	struct rdma_cm_id *cm_id;
	struct ib_device *ibdev;
	u32 port;
	struct ib_pd *pd;
	struct ib_cq *cq;
	unsigned int cq_size;
	struct ib_qp *qp;
	u32 max_send_sge;
	u32 depth;
	u32 max_io;
	u16 idx;
	struct sockaddr_storage peer;
	uuid_t map_uuid;
	u64 gen;
	struct rdmx_export *exp;
	bool ro;
	bool events;
	bool inline_read;
	bool imm_read;
	u32 batch_max;
	bool cmd_batch;
	bool data_first;
	bool write_imm;
	u32 stage_len;
	struct ib_mr *stage_mr;
	struct page **stage_pages;
	unsigned int stage_npages;
	u64 *stage_dma;
	struct ib_cqe stage_cqe;
	unsigned long *awaiting;
	u32 plain_sent;
	struct list_head batch;
	u32 nr_batch;
	u64 size_sent;
	struct list_head exp_node;
	struct list_head node;
	unsigned long born;
	atomic_t opens;
	unsigned int alive_seq;
	unsigned int ka_rx;
	unsigned long ka_at;
	unsigned long probe_at;
	spinlock_t lock;	/* state, posting; irqsave */
	enum rdmx_srvq_state state;
	unsigned long *busy;
	atomic_t active;
	wait_queue_head_t wait;
	struct rdmx_srvq_req *reqs;
	unsigned int nr_reqs;
	struct list_head free;
	struct list_head backlog;
	struct rdmx_srvq_pend *pend;
	struct rdmx_srvq_rbuf *rbufs;
	unsigned int nr_rbufs;
	unsigned long flags;
	struct work_struct release_work;
	struct work_struct disconnect_work;
};

/* export.c */
struct rdmx_export *rdmx_export_find(const char *name);
bool rdmx_export_allows(const struct rdmx_export *exp,
			const struct sockaddr *peer);
bool rdmx_export_name_ok(const u8 *name);
void rdmx_export_remove(struct rdmx_export *exp);
extern struct list_head rdmx_exports;
extern struct mutex rdmx_exports_mutex;
extern struct kobject *rdmx_exports_kobj;
extern struct wait_queue_head rdmx_export_idle_wait;

/* blk_srv.c */
bool rdmx_srvq_same_map(const struct rdmx_srvq *a, const struct rdmx_srvq *b);
void rdmx_srvq_disconnect(struct rdmx_srvq *q);
void rdmx_srvq_notify_size(struct rdmx_srvq *q);
void rdmx_srvq_read_done(struct rdmx_srvq_req *req, int err);
void rdmx_srvq_read_submitted(struct rdmx_srvq_req *req);
struct scatterlist *rdmx_srvq_write_data(struct rdmx_srvq_req *req,
					 unsigned int *nents);
void rdmx_srvq_write_done(struct rdmx_srvq_req *req, int err);
void rdmx_srvq_io_again(struct rdmx_srvq_req *req);
bool rdmx_srvq_io_retried(const struct rdmx_srvq_req *req);
extern struct workqueue_struct *rdmx_blk_wq;

/* srv_stage.c */
int rdmx_srvq_stage_init(struct rdmx_srvq *q, struct ib_reg_wr *wr);
void rdmx_srvq_stage_exit(struct rdmx_srvq *q);
void rdmx_srvq_stage_sg(struct rdmx_srvq *q, struct scatterlist *sg,
			u64 addr, u32 len);
void rdmx_srvq_stage_done(struct rdmx_srvq *q, u64 addr, u32 len);

#endif /* _RDMX_BLK_SRV_H */
