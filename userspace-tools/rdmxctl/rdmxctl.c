// SPDX-License-Identifier: GPL-2.0
/*
 * rdmxctl: inspect and troubleshoot the rdmx RDMA transport.
 *
 * Global options, the top-level command table and the matching of command
 * words, in the manner of iproute2's rdma tool.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "rdmxctl.h"

static void rd_verr(const char *fmt, va_list ap)
{
	fputs(RD_PROG ": ", stderr);
	vfprintf(stderr, fmt, ap);
	putc('\n', stderr);
}

/* Print "rdmxctl: MESSAGE" on stderr. */
void rd_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	rd_verr(fmt, ap);
	va_end(ap);
}

static void rd_hint(const char *object)
{
	fprintf(stderr, "Try '" RD_PROG "%s%s help'.\n",
		object ? " " : "", object ? object : "");
}

/**
 * rd_usage_err() - report a command-line mistake
 * @object: the command level the mistake is in ("dev"), NULL for the top
 * @fmt: message
 *
 * Return: RD_EXIT_USAGE, for the caller to pass on.
 */
int rd_usage_err(const char *object, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	rd_verr(fmt, ap);
	va_end(ap);
	rd_hint(object);
	return RD_EXIT_USAGE;
}

/**
 * rd_no_more_args() - check that a command got no extra words
 * @rd: context
 * @object: command level, for the hint
 *
 * Return: 0, or RD_EXIT_USAGE after saying which word is extra.
 */
int rd_no_more_args(struct rd *rd, const char *object)
{
	if (rd_no_arg(rd))
		return 0;
	return rd_usage_err(object, "unexpected argument '%s'", rd_argv(rd));
}

static void rd_ambiguous(const struct rd_cmd *cmds, const char *word,
			 const char *object)
{
	const struct rd_cmd *c;
	size_t len = strlen(word);

	fprintf(stderr, RD_PROG ": ambiguous command '%s', could be:", word);
	for (c = cmds + 1; c->name; c++)
		if (!strncmp(c->name, word, len))
			fprintf(stderr, " %s", c->name);
	putc('\n', stderr);
	rd_hint(object);
}

/* An exact name, or else a prefix of exactly one name, selects a command. */
static const struct rd_cmd *rd_match_cmd(const struct rd_cmd *cmds,
					 const char *word, const char *object)
{
	const struct rd_cmd *c, *found = NULL;
	size_t len = strlen(word);
	unsigned int hits = 0;

	for (c = cmds + 1; c->name; c++) {
		if (!strcmp(c->name, word))
			return c;
		if (len && !strncmp(c->name, word, len)) {
			found = c;
			hits++;
		}
	}
	if (hits == 1)
		return found;
	if (hits)
		rd_ambiguous(cmds, word, object);
	else if (object)
		rd_usage_err(object, "unknown %s command '%s'", object, word);
	else
		rd_usage_err(object, "unknown command '%s'", word);
	return NULL;
}

/**
 * rd_exec_cmd() - run the command the next word names
 * @rd: context; the word is consumed
 * @cmds: the level's table; cmds[0] runs when no word is left
 * @object: the level's name for messages, NULL for the top level
 *
 * Return: the exit status of the command, RD_EXIT_USAGE if none matches.
 */
int rd_exec_cmd(struct rd *rd, const struct rd_cmd *cmds, const char *object)
{
	const struct rd_cmd *c;

	if (rd_no_arg(rd))
		return cmds[0].func(rd);

	c = rd_match_cmd(cmds, rd_argv(rd), object);
	if (!c)
		return RD_EXIT_USAGE;
	rd_arg_inc(rd);
	return c->func(rd);
}

static void rd_usage(FILE *out)
{
	fprintf(out,
		"Usage: " RD_PROG " [ OPTIONS ] OBJECT { COMMAND | help }\n"
		"       " RD_PROG " help\n"
		"where  OBJECT := { bench | config | dev | doctor | export | listen | map | monitor |\n"
		"                   mr | msg | ping | rma | session | unmap | version }\n"
		"       OPTIONS := { -j[son] | -p[retty] | -s[tats] | -V[ersion] | -h[elp] }\n"
		"\n"
		"  bench [ HOST ]                serve, or run, in-kernel bandwidth and latency tests\n"
		"  config [ apply | down | save | show ]\n"
		"                                listeners, exports and maps of /etc/rdmx/rdmx.conf\n"
		"  dev [ show [ NAME[/PORT] ] ]  RDMA device ports rdmx sees, with limits\n"
		"  doctor                        find what stops RDMA from working, and how to fix it\n"
		"  export [ add | del | list | resize | show ]\n"
		"                                storage this host serves to peers as disks\n"
		"  listen [ add | del | list ]   listeners that accept sessions from peers\n"
		"  map [ HOST NAME | list ]      map a peer's export as /dev/rdmxbN; list mapped disks\n"
		"  monitor                       sessions, listeners, exports and maps as they change\n"
		"  mr serve --size SIZE          serve memory for one-sided access by peers\n"
		"  msg { send | recv }           send files as messages, receive them into a directory\n"
		"  ping HOST                     round-trip latency to the echo service on HOST\n"
		"  rma HOST OPERATION            read, write or update memory a peer serves\n"
		"  session [ list | show ID | close ID ]\n"
		"                                sessions to peers, with their counters\n"
		"  unmap DEV                     remove a disk that map made\n"
		"  version                       versions of " RD_PROG " and of the rdmx module\n"
		"\n"
		"Commands may be abbreviated to a unique prefix.\n"
		"Environment: RDMX_DEVNODE (default " RD_DEVNODE_DEFAULT "), "
		"RDMX_SYSFS (default " RD_SYSFS_DEFAULT "), RDMX_CONFIG.\n");
}

static int cmd_help(struct rd *rd)
{
	(void)rd;
	rd_usage(stdout);
	return RD_EXIT_OK;
}

static int cmd_none(struct rd *rd)
{
	(void)rd;
	rd_usage(stderr);
	return RD_EXIT_USAGE;
}

static const struct rd_cmd rd_cmds[] = {
	{ NULL,		cmd_none },
	{ "bench",	cmd_bench },
	{ "config",	cmd_config },
	{ "dev",	cmd_dev },
	{ "doctor",	cmd_doctor },
	{ "export",	cmd_export },
	{ "help",	cmd_help },
	{ "listen",	cmd_listen },
	{ "map",	cmd_map },
	{ "monitor",	cmd_monitor },
	{ "mr",	cmd_mr },
	{ "msg",	cmd_msg },
	{ "ping",	cmd_ping },
	{ "rma",	cmd_rma },
	{ "session",	cmd_session },
	{ "unmap",	cmd_unmap },
	{ "version",	cmd_version },
	{ NULL,		NULL },
};

static const struct rd_option {
	char short_name;
	const char *long_name;
} rd_options[] = {
	{ 'j', "json" },
	{ 'p', "pretty" },
	{ 's', "stats" },
	{ 'V', "version" },
	{ 'h', "help" },
};

static char rd_long_option(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(rd_options); i++)
		if (!strcmp(rd_options[i].long_name, name))
			return rd_options[i].short_name;
	return 0;
}

/* Return: 0, or -1 when @c is no option of ours. */
static int rd_set_option(struct rd *rd, char c)
{
	switch (c) {
	case 'j':
		rd->json = true;
		return 0;
	case 'p':
		rd->pretty = true;
		return 0;
	case 's':
		rd->stats = true;
		return 0;
	case 'V':
		rd->want_version = true;
		return 0;
	case 'h':
		rd->want_help = true;
		return 0;
	default:
		return -1;
	}
}

/*
 * Options come before the object: "-jp" clusters short ones, "--json" is
 * the long form, "--" ends them.
 */
static int rd_parse_options(struct rd *rd)
{
	const char *arg, *p;

	while (!rd_no_arg(rd)) {
		arg = rd_argv(rd);
		if (arg[0] != '-' || !arg[1])
			break;
		rd_arg_inc(rd);
		if (!strcmp(arg, "--"))
			break;
		if (arg[1] == '-') {
			if (rd_set_option(rd, rd_long_option(arg + 2)))
				return rd_usage_err(NULL, "unknown option '%s'", arg);
			continue;
		}
		for (p = arg + 1; *p; p++) {
			if (!rd_set_option(rd, *p))
				continue;
			if (arg[2])
				return rd_usage_err(NULL, "unknown option '-%c' in '%s'",
						    *p, arg);
			return rd_usage_err(NULL, "unknown option '%s'", arg);
		}
	}
	return 0;
}

static int rd_run(struct rd *rd)
{
	if (rd->want_help)
		return cmd_help(rd);
	if (rd->want_version)
		return version_show(rd);
	return rd_exec_cmd(rd, rd_cmds, NULL);
}

/* A failed write to stdout (full disk, closed pipe) is a failure too. */
static int rd_flush_stdout(int ret)
{
	if (fflush(stdout) == 0 && !ferror(stdout))
		return ret;
	rd_err("error writing output: %s", strerror(errno));
	return ret ? ret : RD_EXIT_FAIL;
}

int main(int argc, char **argv)
{
	struct rd rd = { .argc = argc - 1, .argv = argv + 1 };
	int ret;

	ret = rd_parse_options(&rd);
	if (ret)
		return ret;

	if (rd.json)
		jsonw_init(&rd.jw, stdout, rd.pretty);
	ret = rd_run(&rd);
	if (rd.json)
		jsonw_finish(&rd.jw);
	return rd_flush_stdout(ret);
}
