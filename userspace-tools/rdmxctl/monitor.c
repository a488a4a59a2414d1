// SPDX-License-Identifier: GPL-2.0
/*
 * rdmxctl monitor: sessions, listeners, exports and maps as they come, go
 * and change state, one line (or, with -j, one JSON object) per event.
 * It reads sysfs every --interval, so a change that comes and goes between
 * two reads is not seen; the kernel log and the tracepoints have every one
 * (Documentation/diagnostics.rst).
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <dirent.h>

#include "rdmxctl.h"

#define MON_MAX		4096	/* most objects followed */
#define MON_TEXT	160

/**
 * struct mon_obj - one object as sysfs showed it
 * @kind: "session", "listener", "export" or "map"
 * @name: its id or name
 * @what: where it points (peer, address, path, server and export)
 * @state: its state, "" for objects without one
 */
struct mon_obj {
	const char *kind;
	char name[RDMX_EXPORT_NAME_LEN];
	char what[MON_TEXT];
	char state[32];
};

struct mon_snap {
	struct mon_obj *objs;
	unsigned int n;
};

enum { MON_OPT_INTERVAL, MON_OPT_DURATION };

static const struct rd_opt monitor_opts[] = {
	{ MON_OPT_INTERVAL,	'i', "interval", true },
	{ MON_OPT_DURATION,	'd', "duration", true },
	{ 0, 0, NULL, false },
};

static int monitor_help(struct rd *rd)
{
	(void)rd;
	printf("Usage: " RD_PROG " monitor [ --interval TIME ] [ --duration TIME ]\n"
	       "Print sessions, listeners, exports and maps as they appear, go and change\n"
	       "state, one line each (with -j, one JSON object per line), read from sysfs\n"
	       "every --interval (default 1s) for --duration (default: until interrupted).\n"
	       "TIME is a number with ms, s, m or h; a bare number is seconds.\n");
	return RD_EXIT_OK;
}

/* Append one object of @kind in @dir (sysfs) named @name to @s. */
static void mon_add(struct mon_snap *s, const char *kind, const char *dir,
		    const char *name, const char *what_attr,
		    const char *what2_attr, const char *state_attr)
{
	struct mon_obj *o;
	char a[MON_TEXT / 2], b[MON_TEXT / 2];

	if (s->n == MON_MAX)
		return;
	o = &s->objs[s->n];
	memset(o, 0, sizeof(*o));
	o->kind = kind;
	snprintf(o->name, sizeof(o->name), "%.63s", name);
	a[0] = b[0] = '\0';
	if (what_attr)
		rd_object_attr(dir, what_attr, a, sizeof(a));
	if (what2_attr)
		rd_object_attr(dir, what2_attr, b, sizeof(b));
	snprintf(o->what, sizeof(o->what), "%.79s%s%.78s", a, b[0] ? " " : "", b);
	if (state_attr)
		rd_object_attr(dir, state_attr, o->state, sizeof(o->state));
	s->n++;
}

/* Every entry of sysfs directory @rel, as objects of @kind. */
static void mon_scan(struct mon_snap *s, const char *kind, const char *rel,
		     const char *prefix, const char *sub, const char *what,
		     const char *what2, const char *state)
{
	char path[PATH_MAX], dir[PATH_MAX];
	struct dirent **list;
	int i, n;

	if (rd_pathf(path, sizeof(path), "%s/%s", rd_sysfs(), rel))
		return;
	n = rd_scandir(path, &list);
	if (n < 0)
		return;
	for (i = 0; i < n; i++) {
		const char *name = list[i]->d_name;

		if (name[0] == '.' ||
		    (prefix && strncmp(name, prefix, strlen(prefix))) ||
		    rd_pathf(dir, sizeof(dir), "%s/%s%s%s", path, name,
			     sub ? "/" : "", sub ? sub : ""))
			continue;
		mon_add(s, kind, dir, name, what, what2, state);
	}
	rd_freedir(list, n);
}

static void mon_snapshot(struct mon_snap *s)
{
	s->n = 0;
	mon_scan(s, "session", "kernel/rdmx/sessions", NULL, NULL, "peer", NULL,
		 "state");
	mon_scan(s, "listener", "kernel/rdmx/listeners", NULL, NULL, "addr",
		 NULL, NULL);
	mon_scan(s, "export", "kernel/rdmx/exports", NULL, NULL, "path", NULL,
		 NULL);
	mon_scan(s, "map", "block", "rdmxb", "rdmx", "server", "export",
		 "state");
}

static const struct mon_obj *mon_find(const struct mon_snap *s,
				      const struct mon_obj *o)
{
	unsigned int i;

	for (i = 0; i < s->n; i++)
		if (s->objs[i].kind == o->kind &&
		    !strcmp(s->objs[i].name, o->name))
			return &s->objs[i];
	return NULL;
}

/* "NAME": "VALUE", or null. */
static void mon_field(struct rd *rd, const char *name, const char *value)
{
	jsonw_name(&rd->jw, name);
	if (value)
		jsonw_string(&rd->jw, value);
	else
		jsonw_null(&rd->jw);
}

/* One event: "new", "gone" or a state change of @o. */
static void mon_event(struct rd *rd, const struct mon_obj *o, const char *event,
		      const char *from)
{
	char when[32];
	struct timeval tv;
	struct tm tm;

	gettimeofday(&tv, NULL);
	localtime_r(&tv.tv_sec, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	if (rd->json) {
		/* One document per line (JSON lines), as events come. */
		jsonw_start_object(&rd->jw);
		jsonw_name(&rd->jw, "time");
		jsonw_float(&rd->jw, tv.tv_sec + tv.tv_usec / 1e6);
		mon_field(rd, "kind", o->kind);
		mon_field(rd, "name", o->name);
		mon_field(rd, "event", event);
		mon_field(rd, "what", o->what);
		mon_field(rd, "from", from);
		mon_field(rd, "state", o->state[0] ? o->state : NULL);
		jsonw_end_object(&rd->jw);
		putchar('\n');
		rd->jw.has_items[0] = false;
	} else if (from) {
		printf("%s.%03ld %s %s %s: %s -> %s\n", when,
		       (long)tv.tv_usec / 1000, o->kind, o->name, o->what, from,
		       o->state);
	} else {
		printf("%s.%03ld %s %s %s: %s%s%s\n", when,
		       (long)tv.tv_usec / 1000, o->kind, o->name, o->what, event,
		       o->state[0] ? ", " : "", o->state);
	}
	fflush(stdout);
}

static void mon_diff(struct rd *rd, const struct mon_snap *old,
		     const struct mon_snap *now)
{
	const struct mon_obj *p;
	unsigned int i;

	for (i = 0; i < old->n; i++)
		if (!mon_find(now, &old->objs[i]))
			mon_event(rd, &old->objs[i], "gone", NULL);
	for (i = 0; i < now->n; i++) {
		p = mon_find(old, &now->objs[i]);
		if (!p)
			mon_event(rd, &now->objs[i], "new", NULL);
		else if (strcmp(p->state, now->objs[i].state))
			mon_event(rd, &now->objs[i], "state", p->state);
	}
}

static int monitor_run(struct rd *rd)
{
	uint64_t interval = 1000, duration = 0, waited = 0;
	struct mon_snap a = { 0 }, b = { 0 }, t;
	const char *val;
	int opt;

	while ((opt = rd_getopt(rd, "monitor", monitor_opts, &val)) != RD_OPT_END) {
		if (opt == RD_OPT_HELP)
			return monitor_help(rd);
		if (opt == MON_OPT_INTERVAL &&
		    !rd_parse_ms(val, 1000, 10, 3600000, &interval))
			continue;
		if (opt == MON_OPT_DURATION &&
		    !rd_parse_ms(val, 1000, 1, UINT64_MAX / 2, &duration))
			continue;
		if (opt == RD_OPT_WORD)
			return rd_usage_err("monitor", "unexpected argument '%s'", val);
		if (opt >= 0)
			return rd_usage_err("monitor", "bad %s '%s': expected a time (500ms, 2s)",
					    opt == MON_OPT_INTERVAL ? "--interval" : "--duration",
					    val);
		return RD_EXIT_USAGE;
	}
	a.objs = calloc(MON_MAX, sizeof(*a.objs));
	b.objs = calloc(MON_MAX, sizeof(*b.objs));
	if (!a.objs || !b.objs) {
		free(a.objs);
		free(b.objs);
		rd_err("out of memory");
		return RD_EXIT_FAIL;
	}
	/* What is there at the start counts as new. */
	mon_snapshot(&b);
	mon_diff(rd, &a, &b);
	while (!duration || waited < duration) {
		poll(NULL, 0, interval);
		waited += interval;
		t = a;
		a = b;
		b = t;
		mon_snapshot(&b);
		mon_diff(rd, &a, &b);
	}
	free(a.objs);
	free(b.objs);
	return RD_EXIT_OK;
}

/**
 * cmd_monitor() - "rdmxctl monitor"
 * @rd: context
 *
 * Return: exit status.
 */
int cmd_monitor(struct rd *rd)
{
	if (!rd_no_arg(rd) && !strcmp(rd_argv(rd), "help"))
		return monitor_help(rd);
	return monitor_run(rd);
}
