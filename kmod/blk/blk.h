/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmx block service: declarations shared by the server (blk_srv.c), the
 * client (blk_clt.c), their registration (service.c) and the module's init.
 */
#ifndef _RDMX_BLK_H
#define _RDMX_BLK_H

#include <linux/atomic.h>
#include <linux/types.h>
#include <rdma/rdma_cm.h>

#include "core/fsm.h"
#include "core/proto.h"
#include "blk_proto.h"

/**
 * struct rdmx_blk_io - a command's fields, unpacked
 * @op: enum rdmx_blk_op
 * @flags: RDMX_BLK_CMD_*
 * @tag: the client's tag
 * @offset: bytes
 * @length: bytes
 * @rkey: the client's key
 * @addr: the client's address
 */
struct rdmx_blk_io {
	u8 op;
	u8 flags;
	u32 tag;
	u64 offset;
	u32 length;
	u32 rkey;
	u64 addr;
};

/**
 * struct rdmx_blk_limits - what a command is checked against
 * @size: the export's bytes
 * @lbs: its logical block size
 * @max_io: largest I/O, bytes
 * @depth: tags are below this
 * @ro: writes refused
 * @inline_len: bytes that followed the header in the SEND
 * @inline_read: the queue was granted RDMX_BLK_OPEN_INLINE_READ
 * @stage_len: bytes of the queue's staging area (RDMX_BLK_OPEN_STAGE
 *	granted), else 0
 */
struct rdmx_blk_limits {
	u64 size;
	u32 lbs;
	u32 max_io;
	u32 depth;
	bool ro;
	u32 inline_len;
	bool inline_read;
	u32 stage_len;
};

int rdmx_blk_cmd_parse(const struct rdmx_blk_cmd *cmd, struct rdmx_blk_io *io);
int rdmx_blk_io_check(const struct rdmx_blk_io *io,
		      const struct rdmx_blk_limits *lim);
int rdmx_blk_batch_count(u32 len);
int rdmx_blk_batch_cmd_check(const struct rdmx_blk_io *io, u32 depth,
			     bool write_imm, bool *later);

/* The block service's tunables, in /sys/kernel/rdmx (service.c). */
struct rdmx_blk_params {
	unsigned int inline_read_max;	/* reads up to this come inline */
	unsigned int max_queues;	/* server queues, at most */
	unsigned int max_queues_per_host; /* server queues of one peer host */
	unsigned int keepalive_ms;	/* probe an idle server queue; 0: never */
	unsigned int stage_writes;	/* ask servers for a staging area */
};

extern struct rdmx_blk_params rdmx_blk_params;
/* Connection requests refused for the limits above. */
extern atomic64_t rdmx_blk_queues_refused;

/**
 * enum rdmx_disk_state - life of a mapped disk (blk_clt.c)
 * @RDMX_DISK_CONNECTING: its first connection
 * @RDMX_DISK_LIVE: I/O flows
 * @RDMX_DISK_RECONNECTING: its connections were lost; I/O waits
 * @RDMX_DISK_DEAD: the loss timeout passed: I/O fails
 * @RDMX_DISK_DELETING: being unmapped: I/O fails
 * @RDMX_DISK_NR_STATES: number of states
 */
enum rdmx_disk_state {
	RDMX_DISK_CONNECTING,
	RDMX_DISK_LIVE,
	RDMX_DISK_RECONNECTING,
	RDMX_DISK_DEAD,
	RDMX_DISK_DELETING,
	RDMX_DISK_NR_STATES,
};

extern const struct rdmx_fsm rdmx_disk_fsm;

/**
 * enum rdmx_srvq_state - life of a server queue (blk_srv.c)
 * @RDMX_SRVQ_ACCEPTING: its connect request is being accepted
 * @RDMX_SRVQ_LIVE: accepted: it serves commands, and rdmx_srvq_watch()
 *	looks after it
 * @RDMX_SRVQ_FAILING: dropped for a protocol error, a failed work request
 *	or a timeout, or by its export's removal or the module's exit: its
 *	QP is in error, its DREQ follows
 * @RDMX_SRVQ_TORN: its teardown is under way: nothing more is posted
 * @RDMX_SRVQ_NR_STATES: number of states
 */
enum rdmx_srvq_state {
	RDMX_SRVQ_ACCEPTING,
	RDMX_SRVQ_LIVE,
	RDMX_SRVQ_FAILING,
	RDMX_SRVQ_TORN,
	RDMX_SRVQ_NR_STATES,
};

extern const struct rdmx_fsm rdmx_srvq_fsm;

/**
 * enum rdmx_srvq_stage - where a server queue's command context is
 *	(struct rdmx_srvq_req's @stage, blk_srv.c)
 * @RDMX_STAGE_IDLE: unused, on its queue's free list
 * @RDMX_STAGE_RUNNING: a command was received; its work checks and runs it
 * @RDMX_STAGE_FETCHING: the RDMA READ of a write's data is posted
 * @RDMX_STAGE_WRITING: the data is here; the backing store is written
 * @RDMX_STAGE_READING: a READ's bio is in flight
 * @RDMX_STAGE_RESPONDING: its response (or an event) is posted
 * @RDMX_STAGE_NR: number of stages
 */
enum rdmx_srvq_stage {
	RDMX_STAGE_IDLE,
	RDMX_STAGE_RUNNING,
	RDMX_STAGE_FETCHING,
	RDMX_STAGE_WRITING,
	RDMX_STAGE_READING,
	RDMX_STAGE_RESPONDING,
	RDMX_STAGE_NR,
};

extern const struct rdmx_fsm rdmx_srvq_stage_fsm;

/* service.c */
int rdmx_blk_init(void);
void rdmx_blk_exit(void);

/* blk_srv.c */
int rdmx_blk_srv_init(void);
void rdmx_blk_srv_exit(void);

/* export.c */
long rdmx_ioc_export_add(void __user *uarg);
long rdmx_ioc_export_del(void __user *uarg);
long rdmx_ioc_export_resize(void __user *uarg);

/* blk_clt.c */
int rdmx_blk_clt_init(void);
void rdmx_blk_clt_exit(void);
long rdmx_ioc_map(void __user *uarg);
int rdmx_blk_size_check(u64 have, u64 size, u32 lbs);
bool rdmx_blk_timeout_wait(u64 now, u64 sent, u64 last_answer, u64 window);
bool rdmx_blk_requeue_ok(u64 now, u64 first, unsigned int requeues, u64 loss);
long rdmx_ioc_unmap(void __user *uarg);

#endif /* _RDMX_BLK_H */
