/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmx tracepoints: /sys/kernel/tracing/events/rdmx/.
 *
 * One event class per object rdmx tracks; each event records what
 * identifies the object, so a trace can be read without dmesg.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM rdmx

#if !defined(_RDMX_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _RDMX_TRACE_H

#include <linux/tracepoint.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "state.h"

DECLARE_EVENT_CLASS(rdmx_device_class,
		    TP_PROTO(const struct ib_device *ibdev),
		    TP_ARGS(ibdev),
		    TP_STRUCT__entry(__array(char, name, IB_DEVICE_NAME_MAX)
				     __field(u32, index)
				     __field(u32, ports)
				     __field(u64, node_guid)),
		    TP_fast_assign(strscpy_pad(__entry->name, ibdev->name,
					       sizeof(__entry->name));
				   __entry->index = ibdev->index;
				   __entry->ports = rdma_end_port(ibdev);
				   __entry->node_guid = be64_to_cpu(ibdev->node_guid);),
		    TP_printk("device=%s index=%u ports=%u node_guid=%016llx",
			      __entry->name, __entry->index, __entry->ports,
			      __entry->node_guid)
);

#define DEFINE_RDMX_DEVICE_EVENT(name)				\
DEFINE_EVENT(rdmx_device_class, name,				\
	TP_PROTO(const struct ib_device *ibdev),		\
	TP_ARGS(ibdev))

/* rdmx starts tracking a device (ib_client add) */
DEFINE_RDMX_DEVICE_EVENT(rdmx_device_add);
/* rdmx stops tracking a device (ib_client remove), after its users left */
DEFINE_RDMX_DEVICE_EVENT(rdmx_device_remove);

TRACE_DEFINE_ENUM(RDMX_SESS_IDLE);
TRACE_DEFINE_ENUM(RDMX_SESS_CONNECTING);
TRACE_DEFINE_ENUM(RDMX_SESS_CONNECTED);
TRACE_DEFINE_ENUM(RDMX_SESS_RECONNECTING);
TRACE_DEFINE_ENUM(RDMX_SESS_CLOSING);
TRACE_DEFINE_ENUM(RDMX_SESS_CLOSED);

#define rdmx_show_sess_state(s)					\
	__print_symbolic(s,					\
			 { RDMX_SESS_IDLE, "idle" },		\
			 { RDMX_SESS_CONNECTING, "connecting" },	\
			 { RDMX_SESS_CONNECTED, "connected" },	\
			 { RDMX_SESS_RECONNECTING, "reconnecting" }, \
			 { RDMX_SESS_CLOSING, "closing" },	\
			 { RDMX_SESS_CLOSED, "closed" })

/* A session changes state (rdmx_sess_set_state()). */
TRACE_EVENT(rdmx_sess_state,
	    TP_PROTO(u32 sess, u64 generation, int from, int to),
	    TP_ARGS(sess, generation, from, to),
	    TP_STRUCT__entry(__field(u32, sess)
			     __field(u64, generation)
			     __field(int, from)
			     __field(int, to)),
	    TP_fast_assign(__entry->sess = sess;
			   __entry->generation = generation;
			   __entry->from = from;
			   __entry->to = to;),
	    TP_printk("sess=%u gen=%llu %s -> %s", __entry->sess,
		      __entry->generation, rdmx_show_sess_state(__entry->from),
		      rdmx_show_sess_state(__entry->to))
);

/* A work request completed with an error other than a flush. */
TRACE_EVENT(rdmx_wc_error,
	    TP_PROTO(u32 sess, const char *op, int status, u32 vendor_err),
	    TP_ARGS(sess, op, status, vendor_err),
	    TP_STRUCT__entry(__field(u32, sess)
			     __array(char, op, 16)
			     __field(int, status)
			     __field(u32, vendor_err)),
	    TP_fast_assign(__entry->sess = sess;
			   strscpy_pad(__entry->op, op, sizeof(__entry->op));
			   __entry->status = status;
			   __entry->vendor_err = vendor_err;),
	    TP_printk("sess=%u op=%s status=%s (%d) vendor_err=0x%x",
		      __entry->sess, __entry->op,
		      ib_wc_status_msg(__entry->status), __entry->status,
		      __entry->vendor_err)
);

DECLARE_EVENT_CLASS(rdmx_msg_class,
		    TP_PROTO(u32 sess, u8 type, u32 seq, u32 ack, u32 credits,
			     u32 len),
		    TP_ARGS(sess, type, seq, ack, credits, len),
		    TP_STRUCT__entry(__field(u32, sess)
				     __field(u8, type)
				     __field(u32, seq)
				     __field(u32, ack)
				     __field(u32, credits)
				     __field(u32, len)),
		    TP_fast_assign(__entry->sess = sess;
				   __entry->type = type;
				   __entry->seq = seq;
				   __entry->ack = ack;
				   __entry->credits = credits;
				   __entry->len = len;),
		    TP_printk("sess=%u type=%s seq=%u ack=%u credits=%u len=%u",
			      __entry->sess,
			      __print_symbolic(__entry->type,
					       { 1, "DATA" }, { 2, "ACK" },
					       { 3, "HEARTBEAT" },
					       { 4, "HEARTBEAT_ACK" },
					       { 5, "CLOSE" }, { 6, "OPEN" },
					       { 7, "OPEN_REP" }, { 8, "SHUT" },
					       { 9, "IMMED" }),
			      __entry->seq, __entry->ack, __entry->credits,
			      __entry->len)
);

/* A SEND is posted (one segment of a message, or a control message). */
DEFINE_EVENT(rdmx_msg_class, rdmx_msg_send,
	     TP_PROTO(u32 sess, u8 type, u32 seq, u32 ack, u32 credits, u32 len),
	     TP_ARGS(sess, type, seq, ack, credits, len));
/* A SEND arrived and its header passed the checks. */
DEFINE_EVENT(rdmx_msg_class, rdmx_msg_recv,
	     TP_PROTO(u32 sess, u8 type, u32 seq, u32 ack, u32 credits, u32 len),
	     TP_ARGS(sess, type, seq, ack, credits, len));

/* An rdma_cm event on a session's connection (sess 0: a listener's). */
TRACE_EVENT(rdmx_cm_event,
	    TP_PROTO(u32 sess, int event, int status),
	    TP_ARGS(sess, event, status),
	    TP_STRUCT__entry(__field(u32, sess)
			     __field(int, event)
			     __field(int, status)),
	    TP_fast_assign(__entry->sess = sess;
			   __entry->event = event;
			   __entry->status = status;),
	    TP_printk("sess=%u event=%s status=%d", __entry->sess,
		      rdma_event_msg(__entry->event), __entry->status)
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

#endif /* _RDMX_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE rdmx_trace
#include <trace/define_trace.h>
