/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmx session states. See Documentation/protocol.rst for the diagram.
 */
#ifndef _RDMX_STATE_H
#define _RDMX_STATE_H

#include <linux/types.h>

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

bool rdmx_sess_transition_valid(enum rdmx_sess_state from,
				enum rdmx_sess_state to);
const char *rdmx_sess_state_str(enum rdmx_sess_state state);

#endif /* _RDMX_STATE_H */
