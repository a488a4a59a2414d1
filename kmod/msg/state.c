// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx message service state machines: which transitions are legal.
 *
 * A session:
 *
 *   IDLE -> CONNECTING -> CONNECTED -> RECONNECTING -> CONNECTING ...
 *     \          |            |             |
 *      \         v            v             v
 *       +----> CLOSING <------+-------------+        -> CLOSED
 *
 * A connection: RESOLVING -> CONNECTING -> LIVE, and DEAD from any of
 * them.
 *
 * An endpoint: NEW -> LISTENING -> NEW; NEW -> CONNECTING -> CONNECTED
 * (or back to NEW when no session took it); an accepted channel is born
 * CONNECTED. A channel goes on to SHUTDOWN (this side), CLOSED (the peer)
 * or ERROR.
 *
 * Each changes state only through its setter (rdmx_sess_set_state(),
 * rdmx_conn_set_state(), rdmx_ep_set_state()), which holds the lock that
 * guards the state and asks rdmx_fsm_valid() first; an illegal transition is a bug and is refused
 * (and warned about) rather than taken.
 */
#include <kunit/visibility.h>
#include <linux/bits.h>
#include <linux/kernel.h>

#include "state.h"

#define TO(state)	RDMX_FSM_TO(RDMX_SESS_, state)

static const u32 rdmx_sess_next[RDMX_SESS_NR_STATES] = {
	[RDMX_SESS_IDLE] = TO(CONNECTING) | TO(CLOSING),
	[RDMX_SESS_CONNECTING] = TO(CONNECTED) | TO(RECONNECTING) | TO(CLOSING),
	[RDMX_SESS_CONNECTED] = TO(RECONNECTING) | TO(CLOSING),
	[RDMX_SESS_RECONNECTING] = TO(CONNECTING) | TO(CLOSING),
	[RDMX_SESS_CLOSING] = TO(CLOSED),
	[RDMX_SESS_CLOSED] = 0,
};

#undef TO

static const char *const rdmx_sess_states[RDMX_SESS_NR_STATES] = {
	[RDMX_SESS_IDLE] = "idle",
	[RDMX_SESS_CONNECTING] = "connecting",
	[RDMX_SESS_CONNECTED] = "connected",
	[RDMX_SESS_RECONNECTING] = "reconnecting",
	[RDMX_SESS_CLOSING] = "closing",
	[RDMX_SESS_CLOSED] = "closed",
};

const struct rdmx_fsm rdmx_sess_fsm = {
	.what = "session",
	.nr = RDMX_SESS_NR_STATES,
	.names = rdmx_sess_states,
	.next = rdmx_sess_next,
};
EXPORT_SYMBOL_IF_KUNIT(rdmx_sess_fsm);

#define TO(state)	RDMX_FSM_TO(RDMX_CONN_, state)

static const u32 rdmx_conn_next[RDMX_CONN_NR_STATES] = {
	[RDMX_CONN_RESOLVING] = TO(CONNECTING) | TO(DEAD),
	[RDMX_CONN_CONNECTING] = TO(LIVE) | TO(DEAD),
	[RDMX_CONN_LIVE] = TO(DEAD),
	[RDMX_CONN_DEAD] = 0,
};

#undef TO

static const char *const rdmx_conn_states[RDMX_CONN_NR_STATES] = {
	[RDMX_CONN_RESOLVING] = "resolving",
	[RDMX_CONN_CONNECTING] = "connecting",
	[RDMX_CONN_LIVE] = "live",
	[RDMX_CONN_DEAD] = "dead",
};

const struct rdmx_fsm rdmx_conn_fsm = {
	.what = "connection",
	.nr = RDMX_CONN_NR_STATES,
	.names = rdmx_conn_states,
	.next = rdmx_conn_next,
};
EXPORT_SYMBOL_IF_KUNIT(rdmx_conn_fsm);

#define TO(state)	RDMX_FSM_TO(RDMX_EP_, state)

static const u32 rdmx_ep_next[RDMX_EP_NR_STATES] = {
	[RDMX_EP_NEW] = TO(LISTENING) | TO(CONNECTING) | TO(CONNECTED),
	[RDMX_EP_LISTENING] = TO(NEW),
	[RDMX_EP_CONNECTING] = TO(NEW) | TO(CONNECTED) | TO(CLOSED) | TO(ERROR),
	[RDMX_EP_CONNECTED] = TO(SHUTDOWN) | TO(CLOSED) | TO(ERROR),
	[RDMX_EP_SHUTDOWN] = TO(CLOSED) | TO(ERROR),
	[RDMX_EP_CLOSED] = TO(ERROR),
	[RDMX_EP_ERROR] = 0,
};

#undef TO

static const char *const rdmx_ep_states[RDMX_EP_NR_STATES] = {
	[RDMX_EP_NEW] = "new",
	[RDMX_EP_LISTENING] = "listening",
	[RDMX_EP_CONNECTING] = "connecting",
	[RDMX_EP_CONNECTED] = "connected",
	[RDMX_EP_SHUTDOWN] = "shutdown",
	[RDMX_EP_CLOSED] = "closed",
	[RDMX_EP_ERROR] = "error",
};

const struct rdmx_fsm rdmx_ep_fsm = {
	.what = "endpoint",
	.nr = RDMX_EP_NR_STATES,
	.names = rdmx_ep_states,
	.next = rdmx_ep_next,
};
EXPORT_SYMBOL_IF_KUNIT(rdmx_ep_fsm);

/**
 * rdmx_sess_transition_valid() - whether a session may go from one state
 *	to another
 * @from: current state
 * @to: wanted state
 *
 * Context: any context.
 * Return: true for a legal transition; false otherwise, including for
 * values outside the enumeration.
 */
bool rdmx_sess_transition_valid(enum rdmx_sess_state from,
				enum rdmx_sess_state to)
{
	return rdmx_fsm_valid(&rdmx_sess_fsm, from, to);
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_sess_transition_valid);

/**
 * rdmx_sess_state_str() - a state's name, as sysfs and tracepoints show it
 * @state: the state
 *
 * Context: any context.
 * Return: a static string; "invalid" for a value outside the enumeration.
 */
const char *rdmx_sess_state_str(enum rdmx_sess_state state)
{
	return rdmx_fsm_name(&rdmx_sess_fsm, state);
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_sess_state_str);
