/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmx block service, client side: what a mapped disk's connections
 * (blk_clt.c) and its sysfs files (disk_sysfs.c) share. Locking is
 * described in blk_clt.c.
 */
#ifndef _RDMX_BLK_CLT_H
#define _RDMX_BLK_CLT_H

#include <linux/blk-mq.h>
#include <linux/completion.h>
#include <linux/kobject.h>
#include <linux/mutex.h>
#include <linux/scatterlist.h>
#include <linux/socket.h>
#include <linux/spinlock.h>
#include <linux/uuid.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "core/rdmx.h"
#include "blk.h"

struct rdmx_disk;

/* Inline write pieces, at most (scatter entries of its SEND but one). */
#define RDMX_DISK_INLINE_SGE	4
/* Latency histogram buckets: [2^i, 2^(i+1)) us, the last open-ended. */
#define RDMX_DISK_LAT_BUCKETS	24

/**
 * struct rdmx_dq_stats - a queue's counters, in /sys/block/rdmxbN/rdmx
 * @reads: reads completed successfully
 * @writes: writes completed successfully
 * @read_bytes: their bytes
 * @write_bytes: their bytes
 * @errors: requests completed with an error
 * @timeouts: requests that timed out (each starts a reconnect)
 * @slow: requests past the I/O timeout given more time, because their
 *	queue was still answering others (see rdmx_blk_timeout_wait())
 * @requeues: requests taken back from a lost connection to be sent again
 * @inline_reads: reads whose data came in the response (no registration)
 * @cmd_batched: commands that went in a SEND with others
 *	(RDMX_BLK_OPEN_CMD_BATCH)
 * @cmd_batches: the SENDs that carried them
 * @imm_writes: inline writes whose command went with others and whose
 *	data went alone after it (RDMX_BLK_OPEN_WRITE_IMM)
 * @staged_writes: inline writes whose command went with others and whose
 *	data went before, into the server's staging area (RDMX_BLK_OPEN_STAGE)
 * @lat: completed requests by latency, from submission to completion
 */
struct rdmx_dq_stats {
	atomic64_t reads;
	atomic64_t writes;
	atomic64_t read_bytes;
	atomic64_t write_bytes;
	atomic64_t errors;
	atomic64_t timeouts;
	atomic64_t slow;
	atomic64_t requeues;
	atomic64_t inline_reads;
	atomic64_t cmd_batched;
	atomic64_t cmd_batches;
	atomic64_t imm_writes;
	atomic64_t staged_writes;
	atomic64_t lat[RDMX_DISK_LAT_BUCKETS];
};

/**
 * struct rdmx_dq_rbuf - a posted receive for one response
 * @rx: its memory: the response in @rx.hdr, then, on a queue that asks
 *	for them, an inline READ's data in @rx.data; with @rx.data_first
 *	(rdmx_dq.imm_layout), what arrives starts in @rx.data
 * @q: owner
 */
struct rdmx_dq_rbuf {
	struct rdmx_rx_buf rx;
	struct rdmx_dq *q;
};

/* rdmx_dq.flags */
#define RDMX_DQ_LIVE		0	/* connected and open: I/O may be posted */
#define RDMX_DQ_OPENING		1	/* the OPEN's answer is awaited */
#define RDMX_DQ_REMOVED		2	/* its device is going away */

/**
 * struct rdmx_dq - a disk queue: one of a mapped disk's hardware queues
 *	and its connection
 * @bd: the map
 * @idx: hardware queue index
 * @cm_id: rdma_cm id, NULL between connections
 * @ibdev: its device
 * @pd: protection domain
 * @cq: completion queue from the pool
 * @cq_size: entries taken
 * @qp: the RC QP
 * @iova_tag: the address space of the connection's registrations: the
 *	server sees a request's pages at this random multiple of 4 GiB plus
 *	their offset in the first page, never at a kernel address
 * @max_pages: pages one request's MR maps
 * @max_send_sge: send scatter/gather entries
 * @inline_read_max: reads of up to this many bytes get their data in the
 *	response (RDMX_BLK_OPEN_INLINE_READ); 0 when the queue does not
 * @imm_layout: its receives take the data first, page-aligned, and its
 *	OPEN asks for RDMX_BLK_OPEN_IMM_READ (not on iWARP)
 * @imm_read: the server granted it: an inline READ's data may come alone,
 *	the tag as immediate data; set before the queue goes live
 * @batch: the server granted RDMX_BLK_OPEN_BATCH: a receive may hold
 *	several responses; set before the queue goes live (and its
 *	commands carry RDMX_BLK_CMD_MORE only then)
 * @cmd_batch: commands one SEND may carry (RDMX_BLK_OPEN_CMD_BATCH
 *	granted), else 0; set before the queue goes live
 * @write_imm: the server granted RDMX_BLK_OPEN_WRITE_IMM: an inline write
 *	may wait with the commands without data, its data going alone after
 *	them; set before the queue goes live
 * @stage: the server granted RDMX_BLK_OPEN_STAGE, with a slot for every
 *	tag: an inline write that goes with other commands has its data
 *	RDMA WRITTEN into the staging area before them, several writes' in
 *	one work request; set before the queue goes live
 * @stage_addr: the area's address, in @stage_rkey's space
 * @stage_rkey: its key
 * @stage_slots: its RDMX_BLK_STAGE_SLOT slots
 * @stage_lock: @stage_next, @stage_wr and @stage_sge, from the choice of
 *	the slots to the post; taken with bottom halves off
 * @stage_next: the slot to try first, after the last one taken
 * @stage_busy: slots of writes not yet answered (a staged write's command
 *	names its slot): set under @stage_lock, cleared (atomically) by the
 *	answer's completion
 * @stage_wr: the RDMA WRITEs of one SEND's staged writes, being posted
 * @stage_sge: their scatter entries
 * @stage_cqe: completion (errors only) of those RDMA WRITEs
 * @cork_lock: @cmd_out, @cork and @nr_cork; taken with bottom halves off
 *	(the send completion takes it in softirq context)
 * @cmd_out: on a @cmd_batch queue, its command SENDs posted and not
 *	completed
 * @cork: commands without data (and inline writes, with @write_imm) that
 *	wait for one of those to complete, to go together (rdmx_dq_cork());
 *	never waiting without one
 * @nr_cork: how many
 * @peer_minor: the server's RDMX_PROTO_MINOR, from its accept; from 3 on,
 *	its receives take the data first, and an inline write goes as its
 *	data, then its command
 * @sent: its requests in flight (rdmx_dq_req.in_flight): a command sent
 *	while others are carries RDMX_BLK_CMD_MORE
 * @rbufs: the responses' receive buffers
 * @nr_rbufs: how many
 * @flags: RDMX_DQ_*
 * @cm_mutex: the connection attempt against its CM handler (see the
 *	locking rules in blk_clt.c)
 * @cm_abandoned: the attempt's caller gave up waiting; under @cm_mutex
 * @cm_error: the connection attempt's result
 * @cm_done: completed when the attempt ends
 * @open_cmd: the OPEN command
 * @open_rsp: the OPEN's answer
 * @open_done: completed when it arrives
 * @open_cqe: completion entry of the OPEN's SEND
 * @last_answer: ktime (ns) of the last response to a request, or of the
 *	connection; written by the completion handler, read locklessly by
 *	the timeout handler
 * @kobj: /sys/block/rdmxbN/rdmx/queues/IDX, while the disk exists
 * @stats: counters
 */
struct rdmx_dq {
	struct rdmx_disk *bd;
	u16 idx;
	struct rdma_cm_id *cm_id;
	struct ib_device *ibdev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	unsigned int cq_size;
	struct ib_qp *qp;
	u64 iova_tag;
	u32 max_pages;
	u32 max_send_sge;
	u32 inline_read_max;
	bool imm_layout;
	bool imm_read;
	bool batch;
	u32 cmd_batch;
	bool write_imm;
	bool stage;
	u64 stage_addr;
	u32 stage_rkey;
	u32 stage_slots;
	spinlock_t stage_lock;	/* @stage_next, @stage_wr; bh */
	unsigned int stage_next;
	DECLARE_BITMAP(stage_busy, RDMX_BLK_STAGE_MAX / RDMX_BLK_STAGE_SLOT);
	struct ib_rdma_wr stage_wr[RDMX_BLK_BATCH_MAX];
	struct ib_sge stage_sge[RDMX_BLK_BATCH_MAX * RDMX_DISK_INLINE_SGE];
	struct ib_cqe stage_cqe;
	spinlock_t cork_lock;	/* @cmd_out, @cork; bh */
	unsigned int cmd_out;
	unsigned int nr_cork;
	struct rdmx_dq_req *cork[RDMX_BLK_BATCH_MAX];
	u8 peer_minor;
	atomic_t sent;
	struct rdmx_dq_rbuf *rbufs;
	unsigned int nr_rbufs;
	unsigned long flags;
	struct mutex cm_mutex;	/* the attempt against its CM handler */
	bool cm_abandoned;
	int cm_error;
	struct completion cm_done;
	struct rdmx_blk_cmd open_cmd;
	struct rdmx_blk_rsp open_rsp;
	struct completion open_done;
	struct ib_cqe open_cqe;
	u64 last_answer;
	struct kobject *kobj;
	struct rdmx_dq_stats stats;
};

/**
 * struct rdmx_disk - a mapped export: the disk /dev/rdmxbN
 * @index: N
 * @addr: the server
 * @name: the export
 * @uuid: the map's identity, sent as the connections' session uuid
 * @generation: bumped on each reconnect
 * @ro: mapped read-only
 * @nr_queues: hardware queues (connections)
 * @depth: requests per queue, as granted
 * @max_io: largest request, bytes
 * @size: the export's size, bytes
 * @lbs: its logical block size
 * @exp_flags: RDMX_BLK_EXP_*
 * @exp_uuid: its identity (the disk's serial)
 * @loss_timeout_ms: how long I/O waits for the server
 * @queues: @nr_queues of them
 * @tag_set: blk-mq tag set
 * @disk: the disk, once added
 * @mutex: connections (see the locking rules at the top)
 * @lock: @state
 * @state: enum rdmx_disk_state
 * @err_work: tears the connections down after an error
 * @reconnect_work: the next connection attempt
 * @resize_work: applies @seen_size to the disk
 * @seen_size: the largest export size a response reported (they all
 *	carry it, so a grown export reaches the disk with the next request)
 * @down_since: jiffies when the connection was lost
 * @attempts: connection attempts since then
 * @quiesced: the error work quiesced the disk's queues; owned by the
 *	error and reconnect works (and the unmap that cancels them)
 * @reconnects: successful reconnections
 * @kobj: /sys/block/rdmxbN/rdmx
 * @queues_kobj: /sys/block/rdmxbN/rdmx/queues
 */
struct rdmx_disk {
	u32 index;
	struct sockaddr_storage addr;
	char name[RDMX_EXPORT_NAME_LEN];
	uuid_t uuid;
	u64 generation;
	bool ro;
	unsigned int nr_queues;
	u32 depth;
	u32 max_io;
	u64 size;
	u32 lbs;
	u32 exp_flags;
	uuid_t exp_uuid;
	unsigned int loss_timeout_ms;
	struct rdmx_dq *queues;
	struct blk_mq_tag_set tag_set;
	struct gendisk *disk;
	struct mutex mutex;	/* connections */
	spinlock_t lock;	/* state */
	enum rdmx_disk_state state;
	struct work_struct err_work;
	struct delayed_work reconnect_work;
	struct work_struct resize_work;
	u64 seen_size;
	unsigned long down_since;
	unsigned int attempts;
	bool quiesced;
	atomic64_t reconnects;
	struct kobject *kobj;
	struct kobject *queues_kobj;
};

/**
 * struct rdmx_dq_req - a request's driver data (blk-mq pdu)
 * @q: the queue it was sent on
 * @cmd: the command
 * @cmd_dma: its mapping, while in flight
 * @send_cqe: completion of the command's SEND (the first command's, for
 *	several that went in one)
 * @batch_next: the next command that went in the same SEND, or NULL
 * @data_sge: an inline write's data, mapped: its scatter entries
 * @nr_data_sge: how many; 0 for any other request
 * @data_wr: the SEND of that data alone, after a batch that carried the
 *	command (rdmx_dq_post_cmds())
 * @data_cqe: its completion, which then stands for the request's SEND
 * @data_alone: its data went so: @data_cqe, not the batch's completion,
 *	holds the request's reference
 * @reg_cqe: completion (errors only) of the registration
 * @inv_cqe: completion of a local invalidation
 * @reg_wr: the registration
 * @mr: the request's MR, or NULL
 * @nents: @sgt's entries mapped for DMA, 0 when none
 * @ref: the SEND's completion and the response (and an invalidation)
 * @status: the response's, as a blk_status_t
 * @in_flight: sent and not yet ended
 * @answered: its response arrived (a second one is a protocol error)
 * @start_ns: when it was sent
 * @first_ns: when it was first sent, before any requeue
 * @requeues: how often it was taken back from a lost connection
 * @sgt: its pages
 * @first_sgl: the first chunk of @sgt, SG_CHUNK_SIZE entries
 */
struct rdmx_dq_req {
	struct rdmx_dq *q;
	struct rdmx_blk_cmd cmd;
	u64 cmd_dma;
	struct ib_cqe send_cqe;
	struct rdmx_dq_req *batch_next;
	struct ib_sge data_sge[RDMX_DISK_INLINE_SGE];
	unsigned int nr_data_sge;
	struct ib_send_wr data_wr;
	struct ib_cqe data_cqe;
	bool data_alone;
	struct ib_cqe reg_cqe;
	struct ib_cqe inv_cqe;
	struct ib_reg_wr reg_wr;
	struct ib_mr *mr;
	int nents;
	refcount_t ref;
	blk_status_t status;
	bool in_flight;
	bool answered;
	u64 start_ns;
	u64 first_ns;
	unsigned int requeues;
	struct sg_table sgt;
	struct scatterlist first_sgl[];
};

/* disk_sysfs.c */
extern const struct attribute_group *rdmx_disk_groups[];
int rdmx_disk_sysfs_add(struct rdmx_disk *bd);
void rdmx_disk_sysfs_del(struct rdmx_disk *bd);

#endif /* _RDMX_BLK_CLT_H */
