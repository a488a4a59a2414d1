// SPDX-License-Identifier: GPL-2.0
/*
 * rdmxctl session: the sessions (RDMA connections to one peer, shared by
 * the channels to it) in /sys/kernel/rdmx/sessions, and closing one.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "rdmxctl.h"

#define SESS_PATH_MAX	4096
#define SESS_STR_MAX	128

/* The text attributes, printed on the first line of a session */
enum {
	SESS_ROLE,
	SESS_STATE,
	SESS_LOCAL,
	SESS_PEER,
	SESS_DEVICE,
	SESS_NR_STRS,
};

static const char *const sess_strs[SESS_NR_STRS] = {
	[SESS_ROLE]	= "role",
	[SESS_STATE]	= "state",
	[SESS_LOCAL]	= "local",
	[SESS_PEER]	= "peer",
	[SESS_DEVICE]	= "device",
};

/* The counters and sizes, in print order; generation goes on line one. */
static const char *const sess_nums[] = {
	"generation",
	"qps",
	"max_qps",
	"queue_depth",
	"credits",
	"channels",
	"msgs_tx",
	"msgs_rx",
	"bytes_tx",
	"bytes_rx",
	"retransmits",
	"reconnects",
	"hb_misses",
	"sq_stalls",
	"unacked",
};

#define SESS_NR_NUMS	ARRAY_SIZE(sess_nums)

/**
 * struct sess - one session as read from sysfs
 * @id: its id
 * @str: text attributes, "" when unreadable
 * @str_ok: the text attribute was read
 * @num: numeric attributes
 * @num_ok: the numeric attribute was read and is a number
 */
struct sess {
	unsigned int id;
	char str[SESS_NR_STRS][SESS_STR_MAX];
	bool str_ok[SESS_NR_STRS];
	uint64_t num[SESS_NR_NUMS];
	bool num_ok[SESS_NR_NUMS];
};

/* Read session @id in @dir; Return: false if it went away meanwhile. */
static bool sess_read(struct sess *s, const char *dir, unsigned int id)
{
	char path[SESS_PATH_MAX];
	size_t i;

	memset(s, 0, sizeof(*s));
	s->id = id;
	for (i = 0; i < SESS_NR_STRS; i++)
		s->str_ok[i] = rd_object_attr(dir, sess_strs[i], s->str[i],
					      sizeof(s->str[i])) >= 0;
	for (i = 0; i < SESS_NR_NUMS; i++)
		s->num_ok[i] = !rd_pathf(path, sizeof(path), "%s/%s", dir,
					 sess_nums[i]) &&
			       !rd_read_u64(path, &s->num[i]);
	return rd_exists(dir);
}

/* A text attribute: "-" (null) when unreadable or empty; @fmt takes the value. */
static void sess_print_str(struct rd *rd, const struct sess *s, int i,
			   const char *fmt)
{
	if (s->str_ok[i] && s->str[i][0]) {
		print_str(rd, sess_strs[i], fmt, s->str[i]);
		return;
	}
	print_null(rd, sess_strs[i], NULL);
	if (fmt)
		print_text(rd, fmt, "-");
}

static void sess_print_num(struct rd *rd, const struct sess *s, size_t i)
{
	if (s->num_ok[i]) {
		print_u64(rd, sess_nums[i], NULL, s->num[i]);
		print_text(rd, "%s %" PRIu64, sess_nums[i], s->num[i]);
	} else {
		print_null(rd, sess_nums[i], NULL);
		print_text(rd, "%s -", sess_nums[i]);
	}
}

/*
 * One session: a line with id, role, state, addresses, device and
 * generation, then an indented line of sizes and counters.
 */
static void sess_print(struct rd *rd, const struct sess *s)
{
	size_t i;

	open_object(rd, NULL);
	print_uint(rd, "id", "%u:", s->id);
	sess_print_str(rd, s, SESS_ROLE, "%s");
	sess_print_str(rd, s, SESS_STATE, "%s");
	sess_print_str(rd, s, SESS_LOCAL, "local %s");
	sess_print_str(rd, s, SESS_PEER, "peer %s");
	if (s->str[SESS_DEVICE][0])
		print_str(rd, "device", "device %s", s->str[SESS_DEVICE]);
	else
		print_null(rd, "device", NULL);
	sess_print_num(rd, s, 0);
	print_nl(rd);
	print_indent(rd, 4);
	for (i = 1; i < SESS_NR_NUMS; i++)
		sess_print_num(rd, s, i);
	print_nl(rd);
	close_object(rd);
}

static int sess_parse_id(const char *arg, unsigned int *id)
{
	if (rd_object_id(arg, id))
		return rd_usage_err("session", "bad session id '%s': expected a number from 1",
				    arg);
	return 0;
}

/* List every session, or with an ID only that one. */
static int sess_show(struct rd *rd)
{
	char path[SESS_PATH_MAX], dir[SESS_PATH_MAX];
	unsigned int id, want = 0, found = 0;
	struct dirent **list;
	struct sess s;
	int i, n, ret;

	if (!rd_no_arg(rd)) {
		ret = sess_parse_id(rd_argv(rd), &want);
		if (ret)
			return ret;
		rd_arg_inc(rd);
	}
	ret = rd_no_more_args(rd, "session");
	if (ret)
		return ret;
	n = rd_rdmx_objects("sessions", path, sizeof(path), &list);
	if (n < 0)
		return RD_EXIT_FAIL;

	open_array(rd, NULL);
	for (i = 0; i < n; i++) {
		if (rd_object_id(list[i]->d_name, &id) || (want && id != want) ||
		    rd_pathf(dir, sizeof(dir), "%s/%s", path, list[i]->d_name) ||
		    !sess_read(&s, dir, id))
			continue;
		sess_print(rd, &s);
		found++;
	}
	close_array(rd);
	rd_freedir(list, n);
	if (want && !found) {
		rd_err("no session %u (see '" RD_PROG " session list')", want);
		return RD_EXIT_FAIL;
	}
	return RD_EXIT_OK;
}

static int sess_list(struct rd *rd)
{
	int ret = rd_no_more_args(rd, "session");

	return ret ? ret : sess_show(rd);
}

static int sess_close(struct rd *rd)
{
	struct rdmx_sess_close sc = { .size = sizeof(sc) };
	int fd, ret;

	if (rd_no_arg(rd))
		return rd_usage_err("session", "session close: which session? (give its ID)");
	ret = sess_parse_id(rd_argv(rd), &sc.sess_id);
	if (ret)
		return ret;
	rd_arg_inc(rd);
	ret = rd_no_more_args(rd, "session");
	if (ret)
		return ret;

	fd = rd_ep_open();
	if (fd < 0)
		return RD_EXIT_FAIL;
	ret = ioctl(fd, RDMX_IOC_SESS_CLOSE, &sc);
	if (ret < 0 && (errno == ENOENT || errno == ESRCH))
		rd_err("no session %u (see '" RD_PROG " session list')",
		       sc.sess_id);
	else if (ret < 0)
		rd_ep_err(errno, NULL, "close session %u", sc.sess_id);
	close(fd);
	return ret < 0 ? RD_EXIT_FAIL : RD_EXIT_OK;
}

static int sess_help(struct rd *rd)
{
	(void)rd;
	printf("Usage: " RD_PROG " session [ list ]\n"
	       "       " RD_PROG " session show [ ID ]\n"
	       "       " RD_PROG " session close ID\n"
	       "List the sessions (RDMA connections to a peer, shared by the channels to\n"
	       "it) with their role, state, addresses, device, credits and counters, or\n"
	       "only session ID; or close session ID, failing its channels with\n"
	       "ECONNRESET (needs CAP_NET_ADMIN).\n");
	return RD_EXIT_OK;
}

static const struct rd_cmd sess_cmds[] = {
	{ NULL,		sess_show },
	{ "close",	sess_close },
	{ "help",	sess_help },
	{ "list",	sess_list },
	{ "show",	sess_show },
	{ NULL,		NULL },
};

int cmd_session(struct rd *rd)
{
	return rd_exec_cmd(rd, sess_cmds, "session");
}
