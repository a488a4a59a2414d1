/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmx core: state machines. Every object with a life of several states
 * (a session, a connection, a mapped disk) describes its states with a
 * struct rdmx_fsm: their names, and for each state the states it may move
 * to. Its owner changes state in one setter, which asks rdmx_fsm_valid()
 * first, refuses an illegal move with a warning (a bug) and emits a
 * tracepoint; KUnit checks each table against a list of the legal moves.
 */
#ifndef _RDMX_FSM_H
#define _RDMX_FSM_H

#include <linux/bits.h>
#include <linux/types.h>

/**
 * struct rdmx_fsm - a state machine's table
 * @what: what changes state, for warnings ("session")
 * @nr: number of states, at most 32
 * @names: @nr names, as sysfs and tracepoints show them
 * @next: for each state, BIT(to) for every state it may move to
 */
struct rdmx_fsm {
	const char *what;
	unsigned int nr;
	const char *const *names;
	const u32 *next;
};

/* For a table's initialiser: RDMX_FSM_TO(RDMX_SESS_, CLOSED) */
#define RDMX_FSM_TO(prefix, state)	BIT(prefix##state)

/**
 * rdmx_fsm_valid() - whether a machine may go from one state to another
 * @m: the machine
 * @from: current state
 * @to: wanted state
 *
 * Context: any context.
 * Return: true for a legal move; false otherwise, including for values
 * that are no state.
 */
static inline bool rdmx_fsm_valid(const struct rdmx_fsm *m, unsigned int from,
				  unsigned int to)
{
	return from < m->nr && to < m->nr && (m->next[from] & BIT(to));
}

/**
 * rdmx_fsm_name() - a state's name
 * @m: the machine
 * @state: the state
 *
 * Context: any context.
 * Return: a static string; "invalid" for a value that is no state.
 */
static inline const char *rdmx_fsm_name(const struct rdmx_fsm *m,
					unsigned int state)
{
	return state < m->nr ? m->names[state] : "invalid";
}

#endif /* _RDMX_FSM_H */
