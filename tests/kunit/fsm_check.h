/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit helper for the state machines (core/fsm.h): check a machine's table
 * against an independent list of its legal moves, "from>to" by name.
 */
#ifndef _RDMX_FSM_CHECK_H
#define _RDMX_FSM_CHECK_H

#include <kunit/test.h>
#include <linux/string.h>

#include "core/fsm.h"

static inline bool rdmx_fsm_listed(const struct rdmx_fsm *m,
				   const char *const *legal, unsigned int n,
				   unsigned int from, unsigned int to)
{
	char name[48];
	unsigned int i;

	snprintf(name, sizeof(name), "%s>%s", rdmx_fsm_name(m, from),
		 rdmx_fsm_name(m, to));
	for (i = 0; i < n; i++)
		if (!strcmp(name, legal[i]))
			return true;
	return false;
}

/*
 * Every pair of states is legal exactly when listed, every listed move
 * names two states, values that are no state are refused and named
 * "invalid", and the names are distinct (sysfs and tracepoints tell states
 * apart by them).
 */
static inline void rdmx_fsm_check(struct kunit *test, const struct rdmx_fsm *m,
				  const char *const *legal, unsigned int n)
{
	unsigned int from, to, found = 0;

	for (from = 0; from < m->nr; from++) {
		for (to = 0; to < m->nr; to++) {
			bool want = rdmx_fsm_listed(m, legal, n, from, to);

			KUNIT_EXPECT_EQ_MSG(test, rdmx_fsm_valid(m, from, to), want,
					    "%s: %s -> %s", m->what,
					    rdmx_fsm_name(m, from),
					    rdmx_fsm_name(m, to));
			found += want;
		}
	}
	KUNIT_EXPECT_EQ_MSG(test, found, n, "%s: a listed move names no state",
			    m->what);
	KUNIT_EXPECT_FALSE(test, rdmx_fsm_valid(m, m->nr, 0));
	KUNIT_EXPECT_FALSE(test, rdmx_fsm_valid(m, 0, m->nr));
	KUNIT_EXPECT_FALSE(test, rdmx_fsm_valid(m, -1, 0));
	KUNIT_EXPECT_STREQ(test, rdmx_fsm_name(m, m->nr), "invalid");
	for (from = 0; from < m->nr; from++) {
		KUNIT_EXPECT_NOT_NULL(test, m->names[from]);
		for (to = from + 1; to < m->nr; to++)
			KUNIT_EXPECT_STRNEQ(test, rdmx_fsm_name(m, from),
					    rdmx_fsm_name(m, to));
	}
}

#endif /* _RDMX_FSM_CHECK_H */
