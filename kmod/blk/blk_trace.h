/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmx block service tracepoints, in the rdmx system (see
 * kmod/core/rdmx_trace.h): a mapped disk's requests.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM rdmx

#if !defined(_RDMX_BLK_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _RDMX_BLK_TRACE_H

#include <linux/tracepoint.h>

#include "blk.h"

TRACE_DEFINE_ENUM(RDMX_DISK_CONNECTING);
TRACE_DEFINE_ENUM(RDMX_DISK_LIVE);
TRACE_DEFINE_ENUM(RDMX_DISK_RECONNECTING);
TRACE_DEFINE_ENUM(RDMX_DISK_DEAD);
TRACE_DEFINE_ENUM(RDMX_DISK_DELETING);

#define rdmx_show_bdev_state(s)					\
	__print_symbolic(s,					\
			 { RDMX_DISK_CONNECTING, "connecting" },	\
			 { RDMX_DISK_LIVE, "live" },		\
			 { RDMX_DISK_RECONNECTING, "reconnecting" }, \
			 { RDMX_DISK_DEAD, "dead" },		\
			 { RDMX_DISK_DELETING, "deleting" })

/* A mapped disk changes state (rdmx_disk_move()). */
TRACE_EVENT(rdmx_disk_state,
	    TP_PROTO(u32 disk, int from, int to),
	    TP_ARGS(disk, from, to),
	    TP_STRUCT__entry(__field(u32, disk)
			     __field(int, from)
			     __field(int, to)),
	    TP_fast_assign(__entry->disk = disk;
			   __entry->from = from;
			   __entry->to = to;),
	    TP_printk("disk=rdmxb%u %s -> %s", __entry->disk,
		      rdmx_show_bdev_state(__entry->from),
		      rdmx_show_bdev_state(__entry->to))
);

TRACE_DEFINE_ENUM(RDMX_SRVQ_ACCEPTING);
TRACE_DEFINE_ENUM(RDMX_SRVQ_LIVE);
TRACE_DEFINE_ENUM(RDMX_SRVQ_FAILING);
TRACE_DEFINE_ENUM(RDMX_SRVQ_TORN);

#define rdmx_show_srvq_state(s)					\
	__print_symbolic(s,					\
			 { RDMX_SRVQ_ACCEPTING, "accepting" },	\
			 { RDMX_SRVQ_LIVE, "live" },		\
			 { RDMX_SRVQ_FAILING, "failing" },	\
			 { RDMX_SRVQ_TORN, "torn" })

/* A server queue changes state (rdmx_srvq_move()): its map and index. */
TRACE_EVENT(rdmx_srvq_state,
	    TP_PROTO(const uuid_t *map, u16 queue, int from, int to),
	    TP_ARGS(map, queue, from, to),
	    TP_STRUCT__entry(__array(u8, map, UUID_SIZE)
			     __field(u16, queue)
			     __field(int, from)
			     __field(int, to)),
	    TP_fast_assign(memcpy(__entry->map, map, UUID_SIZE);
			   __entry->queue = queue;
			   __entry->from = from;
			   __entry->to = to;),
	    TP_printk("map=%pUb queue=%u %s -> %s", __entry->map,
		      __entry->queue, rdmx_show_srvq_state(__entry->from),
		      rdmx_show_srvq_state(__entry->to))
);

TRACE_DEFINE_ENUM(RDMX_STAGE_IDLE);
TRACE_DEFINE_ENUM(RDMX_STAGE_RUNNING);
TRACE_DEFINE_ENUM(RDMX_STAGE_FETCHING);
TRACE_DEFINE_ENUM(RDMX_STAGE_WRITING);
TRACE_DEFINE_ENUM(RDMX_STAGE_READING);
TRACE_DEFINE_ENUM(RDMX_STAGE_RESPONDING);

#define rdmx_show_srvq_stage(s)					\
	__print_symbolic(s,					\
			 { RDMX_STAGE_IDLE, "idle" },		\
			 { RDMX_STAGE_RUNNING, "running" },	\
			 { RDMX_STAGE_FETCHING, "fetching" },	\
			 { RDMX_STAGE_WRITING, "writing" },	\
			 { RDMX_STAGE_READING, "reading" },	\
			 { RDMX_STAGE_RESPONDING, "responding" })

/* A server queue's command context moves on (rdmx_srvq_req_move()). */
TRACE_EVENT(rdmx_srvq_stage,
	    TP_PROTO(u16 queue, u32 tag, int from, int to),
	    TP_ARGS(queue, tag, from, to),
	    TP_STRUCT__entry(__field(u16, queue)
			     __field(u32, tag)
			     __field(int, from)
			     __field(int, to)),
	    TP_fast_assign(__entry->queue = queue;
			   __entry->tag = tag;
			   __entry->from = from;
			   __entry->to = to;),
	    TP_printk("queue=%u tag=%u %s -> %s", __entry->queue, __entry->tag,
		      rdmx_show_srvq_stage(__entry->from),
		      rdmx_show_srvq_stage(__entry->to))
);

#define rdmx_show_blk_op(op)					\
	__print_symbolic(op,					\
			 { 1, "open" }, { 2, "read" }, { 3, "write" },	\
			 { 4, "flush" }, { 5, "discard" },		\
			 { 6, "write_zeroes" })

/* Block requests of a mapped disk (rdmxbN): queue, tag, extent, status. */
DECLARE_EVENT_CLASS(rdmx_blk_rq_class,
		    TP_PROTO(u32 disk, u16 queue, u32 tag, u8 op, u64 offset,
			     u32 length, int status),
		    TP_ARGS(disk, queue, tag, op, offset, length, status),
		    TP_STRUCT__entry(__field(u32, disk)
				     __field(u16, queue)
				     __field(u8, op)
				     __field(u32, tag)
				     __field(u64, offset)
				     __field(u32, length)
				     __field(int, status)),
		    TP_fast_assign(__entry->disk = disk;
				   __entry->queue = queue;
				   __entry->op = op;
				   __entry->tag = tag;
				   __entry->offset = offset;
				   __entry->length = length;
				   __entry->status = status;),
		    TP_printk("disk=rdmxb%u queue=%u tag=%u op=%s offset=%llu length=%u status=%d",
			      __entry->disk, __entry->queue, __entry->tag,
			      rdmx_show_blk_op(__entry->op), __entry->offset,
			      __entry->length, __entry->status)
);

/* A request sent to the server (its command posted) */
DEFINE_EVENT(rdmx_blk_rq_class, rdmx_blk_submit,
	     TP_PROTO(u32 disk, u16 queue, u32 tag, u8 op, u64 offset,
		      u32 length, int status),
	     TP_ARGS(disk, queue, tag, op, offset, length, status));
/* A request completed to the block layer (status: 0 or -errno) */
DEFINE_EVENT(rdmx_blk_rq_class, rdmx_blk_complete,
	     TP_PROTO(u32 disk, u16 queue, u32 tag, u8 op, u64 offset,
		      u32 length, int status),
	     TP_ARGS(disk, queue, tag, op, offset, length, status));

#endif /* _RDMX_BLK_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH blk
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE blk_trace
#include <trace/define_trace.h>
