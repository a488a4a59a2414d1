// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx session state machine: which transitions are legal.
 *
 *   IDLE -> CONNECTING -> CONNECTED -> RECONNECTING -> CONNECTING ...
 *     \          |            |             |
 *      \         v            v             v
 *       +----> CLOSING <------+-------------+        -> CLOSED
 *
 * A session changes state only through a function that holds its state
 * lock and asks rdmx_sess_transition_valid() first; an illegal transition
 * is a bug and is refused (and warned about) rather than taken.
 */
#include <kunit/visibility.h>
#include <linux/bits.h>
#include <linux/kernel.h>

#include "state.h"

#define TO(state)	BIT(RDMX_SESS_##state)

static const u32 rdmx_sess_next[RDMX_SESS_NR_STATES] = {
	[RDMX_SESS_IDLE] = TO(CONNECTING) | TO(CLOSING),
	[RDMX_SESS_CONNECTING] = TO(CONNECTED) | TO(RECONNECTING) | TO(CLOSING),
	[RDMX_SESS_CONNECTED] = TO(RECONNECTING) | TO(CLOSING),
	[RDMX_SESS_RECONNECTING] = TO(CONNECTING) | TO(CLOSING),
	[RDMX_SESS_CLOSING] = TO(CLOSED),
	[RDMX_SESS_CLOSED] = 0,
};

#undef TO

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
	if ((unsigned int)from >= RDMX_SESS_NR_STATES ||
	    (unsigned int)to >= RDMX_SESS_NR_STATES)
		return false;
	return rdmx_sess_next[from] & BIT(to);
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_sess_transition_valid);

static const char *const rdmx_sess_states[RDMX_SESS_NR_STATES] = {
	[RDMX_SESS_IDLE] = "idle",
	[RDMX_SESS_CONNECTING] = "connecting",
	[RDMX_SESS_CONNECTED] = "connected",
	[RDMX_SESS_RECONNECTING] = "reconnecting",
	[RDMX_SESS_CLOSING] = "closing",
	[RDMX_SESS_CLOSED] = "closed",
};

/**
 * rdmx_sess_state_str() - a state's name, as sysfs and tracepoints show it
 * @state: the state
 *
 * Context: any context.
 * Return: a static string; "invalid" for a value outside the enumeration.
 */
const char *rdmx_sess_state_str(enum rdmx_sess_state state)
{
	if ((unsigned int)state >= RDMX_SESS_NR_STATES)
		return "invalid";
	return rdmx_sess_states[state];
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_sess_state_str);
