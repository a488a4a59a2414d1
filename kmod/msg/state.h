/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmx message service states: a session's, a connection's and an
 * endpoint's (struct rdmx_fsm, core/fsm.h). See Documentation/protocol.rst for the diagram.
 */
#ifndef _RDMX_STATE_H
#define _RDMX_STATE_H

#include <linux/types.h>
#include <linux/rdmx.h>

#include "core/fsm.h"

/**
 * enum rdmx_sess_state - life of a session
 * @RDMX_SESS_IDLE: created, not connected yet
 * @RDMX_SESS_CONNECTING: connection requests under way
 * @RDMX_SESS_CONNECTED: every QP connected; messages flow
 * @RDMX_SESS_RECONNECTING: a QP was lost; waiting (backoff) before the next
 *	attempt, unacknowledged messages kept for retransmission
 * @RDMX_SESS_CLOSING: tearing down; nothing new accepted
 * @RDMX_SESS_CLOSED: torn down; only references keep it alive
 * @RDMX_SESS_NR_STATES: number of states
 */
enum rdmx_sess_state {
	RDMX_SESS_IDLE,
	RDMX_SESS_CONNECTING,
	RDMX_SESS_CONNECTED,
	RDMX_SESS_RECONNECTING,
	RDMX_SESS_CLOSING,
	RDMX_SESS_CLOSED,
	RDMX_SESS_NR_STATES,
};

/**
 * enum rdmx_conn_state - life of one of a session's connections
 * @RDMX_CONN_RESOLVING: client: resolving the address and route; a
 *	server's connection starts here too, before its request is taken
 * @RDMX_CONN_CONNECTING: waiting for ESTABLISHED (client) or the first
 *	message (server)
 * @RDMX_CONN_LIVE: its lane's current connection; messages flow
 * @RDMX_CONN_DEAD: failed; its teardown is queued
 * @RDMX_CONN_NR_STATES: number of states
 */
enum rdmx_conn_state {
	RDMX_CONN_RESOLVING,
	RDMX_CONN_CONNECTING,
	RDMX_CONN_LIVE,
	RDMX_CONN_DEAD,
	RDMX_CONN_NR_STATES,
};

/* An endpoint's states are the uapi's RDMX_EP_NEW ... RDMX_EP_ERROR. */
#define RDMX_EP_NR_STATES	(RDMX_EP_ERROR + 1)

extern const struct rdmx_fsm rdmx_sess_fsm;
extern const struct rdmx_fsm rdmx_conn_fsm;
extern const struct rdmx_fsm rdmx_ep_fsm;

bool rdmx_sess_transition_valid(enum rdmx_sess_state from,
				enum rdmx_sess_state to);
const char *rdmx_sess_state_str(enum rdmx_sess_state state);

#endif /* _RDMX_STATE_H */
