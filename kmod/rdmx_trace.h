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

DECLARE_EVENT_CLASS(rdmx_device_class,
		    TP_PROTO(const struct ib_device *ibdev),
		    TP_ARGS(ibdev),
		    TP_STRUCT__entry(__string(name, ibdev->name)
				     __field(u32, index)
				     __field(u32, ports)
				     __field(u64, node_guid)),
		    TP_fast_assign(__assign_str(name);
				   __entry->index = ibdev->index;
				   __entry->ports = rdma_end_port(ibdev);
				   __entry->node_guid = be64_to_cpu(ibdev->node_guid);),
		    TP_printk("device=%s index=%u ports=%u node_guid=%016llx",
			      __get_str(name), __entry->index, __entry->ports,
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

#endif /* _RDMX_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE rdmx_trace
#include <trace/define_trace.h>
