/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmx message service tracepoints, in the rdmx system (see
 * kmod/core/rdmx_trace.h): sessions, their SENDs and failed work requests.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM rdmx

#if !defined(_RDMX_MSG_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _RDMX_MSG_TRACE_H

#include <linux/tracepoint.h>
#include <rdma/ib_verbs.h>

#include "state.h"

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

TRACE_DEFINE_ENUM(RDMX_CONN_RESOLVING);
TRACE_DEFINE_ENUM(RDMX_CONN_CONNECTING);
TRACE_DEFINE_ENUM(RDMX_CONN_LIVE);
TRACE_DEFINE_ENUM(RDMX_CONN_DEAD);

#define rdmx_show_conn_state(s)					\
	__print_symbolic(s,					\
			 { RDMX_CONN_RESOLVING, "resolving" },	\
			 { RDMX_CONN_CONNECTING, "connecting" },	\
			 { RDMX_CONN_LIVE, "live" },		\
			 { RDMX_CONN_DEAD, "dead" })

/* One of a session's connections changes state (rdmx_conn_set_state()). */
TRACE_EVENT(rdmx_conn_state,
	    TP_PROTO(u32 sess, u32 lane, u64 generation, int from, int to),
	    TP_ARGS(sess, lane, generation, from, to),
	    TP_STRUCT__entry(__field(u32, sess)
			     __field(u32, lane)
			     __field(u64, generation)
			     __field(int, from)
			     __field(int, to)),
	    TP_fast_assign(__entry->sess = sess;
			   __entry->lane = lane;
			   __entry->generation = generation;
			   __entry->from = from;
			   __entry->to = to;),
	    TP_printk("sess=%u lane=%u gen=%llu %s -> %s", __entry->sess,
		      __entry->lane, __entry->generation,
		      rdmx_show_conn_state(__entry->from),
		      rdmx_show_conn_state(__entry->to))
);

#define rdmx_show_ep_state(s)					\
	__print_symbolic(s,					\
			 { RDMX_EP_NEW, "new" },			\
			 { RDMX_EP_LISTENING, "listening" },	\
			 { RDMX_EP_CONNECTING, "connecting" },	\
			 { RDMX_EP_CONNECTED, "connected" },	\
			 { RDMX_EP_SHUTDOWN, "shutdown" },	\
			 { RDMX_EP_CLOSED, "closed" },		\
			 { RDMX_EP_ERROR, "error" })

/* An endpoint changes state (rdmx_ep_set_state()). */
TRACE_EVENT(rdmx_ep_state,
	    TP_PROTO(u32 sess, u32 chan, int from, int to),
	    TP_ARGS(sess, chan, from, to),
	    TP_STRUCT__entry(__field(u32, sess)
			     __field(u32, chan)
			     __field(int, from)
			     __field(int, to)),
	    TP_fast_assign(__entry->sess = sess;
			   __entry->chan = chan;
			   __entry->from = from;
			   __entry->to = to;),
	    TP_printk("sess=%u chan=%u %s -> %s", __entry->sess, __entry->chan,
		      rdmx_show_ep_state(__entry->from),
		      rdmx_show_ep_state(__entry->to))
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

#endif /* _RDMX_MSG_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH msg
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE msg_trace
#include <trace/define_trace.h>
