/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmx tracepoints: /sys/kernel/tracing/events/rdmx/.
 *
 * One event class per object rdmx tracks; each event records what
 * identifies the object, so a trace can be read without dmesg. Each layer
 * declares its own events, in the one "rdmx" system: this file the core's
 * (devices, rdma_cm events), kmod/msg/msg_trace.h the message service's,
 * kmod/blk/blk_trace.h the block service's. Each has its trace.c.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM rdmx

#if !defined(_RDMX_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _RDMX_TRACE_H

#include <linux/tracepoint.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

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

#endif /* _RDMX_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH core
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE rdmx_trace
#include <trace/define_trace.h>
