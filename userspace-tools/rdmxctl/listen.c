// SPDX-License-Identifier: GPL-2.0
/*
 * rdmxctl listen: the listeners that accept sessions from peers, so that
 * they reach this host's services (and the built-in echo).
 */
#include <errno.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "rdmxctl.h"

#define LISTEN_PATH_MAX	4096

enum { LISTEN_OPT_ADDR, LISTEN_OPT_PORT };

static const struct rd_opt listen_opts[] = {
	{ LISTEN_OPT_ADDR, 'a', "addr", true },
	{ LISTEN_OPT_PORT, 'p', "port", true },
	{ 0, 0, NULL, false },
};

static int listen_help(struct rd *rd)
{
	(void)rd;
	printf("Usage: " RD_PROG " listen add [ -a ADDR ] [ -p PORT ]\n"
	       "       " RD_PROG " listen del [ -a ADDR ] [ -p PORT ]\n"
	       "       " RD_PROG " listen [ list ]\n"
	       "Add or delete a listener, which accepts sessions from peers for this host's\n"
	       "services and the built-in " RDMX_SERVICE_ECHO " service, or list the listeners.\n"
	       "ADDR is an IPv4 or IPv6 address of this host (default: any IPv4 address,\n"
	       "0.0.0.0; '::' is any IPv6 address), PORT the RDMA CM port (default %u).\n"
	       "Adding and deleting need CAP_NET_ADMIN.\n",
	       RDMX_DEFAULT_PORT);
	return RD_EXIT_OK;
}

/**
 * rd_listen_words() - the address "listen add" or "listen del" is told
 * @rd: the words after add or del (-a ADDR, -p PORT); consumed
 * @sa: out: the address and port
 *
 * Return: 0, RD_EXIT_USAGE after saying what is wrong, or -1 for -h.
 */
int rd_listen_words(struct rd *rd, struct rdmx_sockaddr *sa)
{
	const char *val, *addr = NULL, *port_arg = NULL;
	unsigned int port;
	int opt;

	while ((opt = rd_getopt(rd, "listen", listen_opts, &val)) != RD_OPT_END) {
		switch (opt) {
		case LISTEN_OPT_ADDR:
			addr = val;
			break;
		case LISTEN_OPT_PORT:
			port_arg = val;
			break;
		case RD_OPT_HELP:
			return -1;
		case RD_OPT_WORD:
			return rd_usage_err("listen", "unexpected argument '%s'",
					    val);
		default:
			return RD_EXIT_USAGE;
		}
	}
	return rd_listen_addr("listen", addr, port_arg, &port, sa);
}

static void listen_err(int err, bool add, const struct rdmx_sockaddr *sa)
{
	char where[RD_ADDRSTRLEN];

	rd_addr_str(sa, where, sizeof(where));
	if (!add && (err == ENOENT || err == ESRCH)) {
		rd_err("no listener on %s (see '" RD_PROG " listen list')",
		       where);
		return;
	}
	rd_ep_err(err, NULL, "%s listener on %s", add ? "add" : "delete",
		  where);
	if (err == EEXIST)
		fprintf(stderr, "hint: %s has a listener already: see '" RD_PROG " listen list'\n",
			where);
	else if (err == EADDRINUSE)
		fprintf(stderr, "hint: %s, or that port for another address, has a listener already (rdmx holds a port for one address family): see '" RD_PROG " listen list' and the kernel log\n",
			where);
	else if (add && err == EAFNOSUPPORT)
		fputs("hint: this kernel has no IPv6: give an IPv4 address\n",
		      stderr);
}

static int listen_change(struct rd *rd, bool add)
{
	struct rdmx_listener_arg la = { .size = sizeof(la) };
	int fd, ret;

	ret = rd_listen_words(rd, &la.addr);
	if (ret < 0)
		return listen_help(rd);
	if (ret)
		return ret;

	fd = rd_ep_open();
	if (fd < 0)
		return RD_EXIT_FAIL;
	ret = ioctl(fd, add ? RDMX_IOC_LISTENER_ADD : RDMX_IOC_LISTENER_DEL,
		    &la);
	if (ret < 0)
		listen_err(errno, add, &la.addr);
	close(fd);
	return ret < 0 ? RD_EXIT_FAIL : RD_EXIT_OK;
}

static int listen_add(struct rd *rd)
{
	return listen_change(rd, true);
}

static int listen_del(struct rd *rd)
{
	return listen_change(rd, false);
}

/* One listener; Return: false if it went away while being read. */
static bool listen_print(struct rd *rd, const char *dir, unsigned int id)
{
	char addr[128], persistent[8], device[RDMX_DEV_NAME_LEN];

	if (rd_object_attr(dir, "addr", addr, sizeof(addr)) == -ENOENT &&
	    !rd_exists(dir))
		return false;
	rd_object_attr(dir, "persistent", persistent, sizeof(persistent));
	rd_object_attr(dir, "device", device, sizeof(device));

	open_object(rd, NULL);
	print_uint(rd, "id", "%u:", id);
	print_str(rd, "addr", "%s", addr[0] ? addr : "-");
	if (persistent[0]) {
		print_bool(rd, "persistent", NULL, !strcmp(persistent, "1"));
		print_text(rd, "%s", strcmp(persistent, "1") ? "implicit" :
							     "persistent");
	} else {
		print_null(rd, "persistent", NULL);
	}
	if (device[0])
		print_str(rd, "device", "device %s", device);
	else
		print_null(rd, "device", NULL);
	print_nl(rd);
	close_object(rd);
	return true;
}

static int listen_list(struct rd *rd)
{
	char path[LISTEN_PATH_MAX], dir[LISTEN_PATH_MAX];
	struct dirent **list;
	unsigned int id;
	int i, n, ret;

	ret = rd_no_more_args(rd, "listen");
	if (ret)
		return ret;
	n = rd_rdmx_objects("listeners", path, sizeof(path), &list);
	if (n < 0)
		return RD_EXIT_FAIL;

	open_array(rd, NULL);
	for (i = 0; i < n; i++)
		if (!rd_object_id(list[i]->d_name, &id) &&
		    !rd_pathf(dir, sizeof(dir), "%s/%s", path, list[i]->d_name))
			listen_print(rd, dir, id);
	close_array(rd);
	rd_freedir(list, n);
	return RD_EXIT_OK;
}

static const struct rd_cmd listen_cmds[] = {
	{ NULL,		listen_list },
	{ "add",	listen_add },
	{ "del",	listen_del },
	{ "help",	listen_help },
	{ "list",	listen_list },
	{ "show",	listen_list },
	{ NULL,		NULL },
};

int cmd_listen(struct rd *rd)
{
	/* Adding is explicit: a bare "listen" lists, as "ip addr" does. */
	if (!rd_no_arg(rd) && rd_argv(rd)[0] == '-' && strcmp(rd_argv(rd), "-h") &&
	    strcmp(rd_argv(rd), "--help"))
		return rd_usage_err("listen", "'%s' without a command: 'listen add %s ...' adds a listener, 'listen' alone lists them",
				    rd_argv(rd), rd_argv(rd));
	return rd_exec_cmd(rd, listen_cmds, "listen");
}
