// SPDX-License-Identifier: GPL-2.0
/*
 * rdmxctl dev: the RDMA device ports rdmx sees, with their limits.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rdmxctl.h"

static const char *const transport_names[] = {
	[RDMX_TRANSPORT_UNKNOWN]	= "unknown",
	[RDMX_TRANSPORT_IB]		= "ib",
	[RDMX_TRANSPORT_ROCE]		= "roce",
	[RDMX_TRANSPORT_IWARP]		= "iwarp",
};

static const char *const port_state_names[] = {
	[RDMX_PORT_NOP]		= "NOP",
	[RDMX_PORT_DOWN]	= "DOWN",
	[RDMX_PORT_INIT]	= "INIT",
	[RDMX_PORT_ARMED]	= "ARMED",
	[RDMX_PORT_ACTIVE]	= "ACTIVE",
	[RDMX_PORT_ACTIVE_DEFER] = "ACTIVE_DEFER",
};

static const char *const phys_state_names[] = {
	[RDMX_PHYS_STATE_UNKNOWN]	 = "unknown",
	[RDMX_PHYS_STATE_SLEEP]		 = "SLEEP",
	[RDMX_PHYS_STATE_POLLING]	 = "POLLING",
	[RDMX_PHYS_STATE_DISABLED]	 = "DISABLED",
	[RDMX_PHYS_STATE_TRAINING]	 = "TRAINING",
	[RDMX_PHYS_STATE_LINK_UP]	 = "LINK_UP",
	[RDMX_PHYS_STATE_ERROR_RECOVERY] = "ERROR_RECOVERY",
	[RDMX_PHYS_STATE_PHY_TEST]	 = "PHY_TEST",
};

static const char *const atomic_names[] = {
	[RDMX_ATOMIC_NONE]	= "none",
	[RDMX_ATOMIC_HCA]	= "hca",
	[RDMX_ATOMIC_GLOB]	= "global",
};

static const struct rd_flag_name dev_caps[] = {
	{ RDMX_DEV_CAP_MEM_MGT_EXTENSIONS,	"mem_mgt_extensions" },
	{ RDMX_DEV_CAP_SG_GAPS_REG,		"sg_gaps_reg" },
	{ RDMX_DEV_CAP_RC_RNR_NAK_GEN,		"rc_rnr_nak_gen" },
	{ RDMX_DEV_CAP_BLOCK_MULTICAST,		"block_multicast" },
};

/* The __u32 limits, printed as "name value" in this order. */
struct dev_limit {
	const char *key;
	size_t offset;
};

#define DEV_LIMIT(field) {						\
	#field,								\
	offsetof(struct rdmx_device_info, field) +			\
	BUILD_BUG_ON_ZERO(sizeof(((struct rdmx_device_info *)0)->field) != \
			  sizeof(__u32))					\
}

static const struct dev_limit dev_limits[] = {
	DEV_LIMIT(max_qp),
	DEV_LIMIT(max_qp_wr),
	DEV_LIMIT(max_send_sge),
	DEV_LIMIT(max_recv_sge),
	DEV_LIMIT(max_cq),
	DEV_LIMIT(max_cqe),
	DEV_LIMIT(max_mr),
	DEV_LIMIT(max_msg_sz),
	DEV_LIMIT(max_fast_reg_page_list_len),
	DEV_LIMIT(max_qp_rd_atom),
	DEV_LIMIT(max_qp_init_rd_atom),
	DEV_LIMIT(gid_tbl_len),
};

static const char *name_of(const char *const *names, size_t nr, unsigned int v)
{
	return v < nr && names[v] ? names[v] : "unknown";
}

#define NAME_OF(names, v)	name_of(names, ARRAY_SIZE(names), v)

static void dev_print_limits(struct rd *rd, const struct rdmx_device_info *d)
{
	const struct dev_limit *l;
	__u32 v;

	for (l = dev_limits; l < dev_limits + ARRAY_SIZE(dev_limits); l++) {
		memcpy(&v, (const char *)d + l->offset, sizeof(v));
		print_uint(rd, l->key, NULL, v);
		print_text(rd, "%s %u", l->key, v);
	}
	print_u64(rd, "max_mr_size", "max_mr_size 0x%" PRIx64, d->max_mr_size);
	print_str(rd, "atomics", "atomics %s",
		  NAME_OF(atomic_names, d->atomic_cap));
	print_flags(rd, "caps", dev_caps, ARRAY_SIZE(dev_caps), d->cap_flags);
}

/*
 * One port, "rdma dev"-like: a summary line, then an indented line of
 * limits.
 */
static void dev_print_port(struct rd *rd, const struct rdmx_device_info *d)
{
	char guid[24];
	__u64 g = d->node_guid;

	snprintf(guid, sizeof(guid), "%04x:%04x:%04x:%04x",
		 (unsigned int)(g >> 48) & 0xffff, (unsigned int)(g >> 32) & 0xffff,
		 (unsigned int)(g >> 16) & 0xffff, (unsigned int)g & 0xffff);

	open_object(rd, NULL);
	print_uint(rd, "index", NULL, d->index);
	print_text(rd, "%u/%u:", d->index, d->port);
	print_str(rd, "name", "%s", (const char *)d->name);
	print_uint(rd, "port", "port %u", d->port);
	print_str(rd, "transport", "%s", NAME_OF(transport_names, d->transport));
	print_str(rd, "state", "%s", NAME_OF(port_state_names, d->port_state));
	print_str(rd, "phys_state", "phys %s",
		  NAME_OF(phys_state_names, d->phys_state));
	if (d->netdev[0])
		print_str(rd, "netdev", "netdev %s", (const char *)d->netdev);
	else
		print_null(rd, "netdev", NULL);
	print_uint(rd, "active_mtu", NULL, d->active_mtu);
	print_uint(rd, "max_mtu", NULL, d->max_mtu);
	print_text(rd, "mtu %u/%u", d->active_mtu, d->max_mtu);
	print_str(rd, "node_guid", "guid %s", guid);
	print_nl(rd);
	print_indent(rd, 4);
	dev_print_limits(rd, d);
	print_nl(rd);
	close_object(rd);
}

/* A filter from the command line: "NAME" or "NAME/PORT". */
struct dev_filter {
	const char *arg;
	char name[RDMX_DEV_NAME_LEN];
	unsigned int port;	/* 0: every port */
};

static int dev_parse_filter(struct dev_filter *f, const char *arg)
{
	const char *slash = strchr(arg, '/');
	size_t len = slash ? (size_t)(slash - arg) : strlen(arg);
	char *end;
	unsigned long port;

	f->arg = arg;
	if (!len || len >= sizeof(f->name))
		return -EINVAL;
	memcpy(f->name, arg, len);
	f->name[len] = '\0';
	f->port = 0;
	if (!slash)
		return 0;
	errno = 0;
	port = strtoul(slash + 1, &end, 10);
	if (errno || end == slash + 1 || *end || !port || port > 255)
		return -EINVAL;
	f->port = port;
	return 0;
}

static bool dev_match(const struct dev_filter *f,
		      const struct rdmx_device_info *d)
{
	if (!f->arg)
		return true;
	return !strcmp(f->name, (const char *)d->name) &&
	       (!f->port || f->port == d->port);
}

static unsigned int dev_count_matches(const struct dev_filter *f,
				      const struct rdmx_device_info *devs,
				      unsigned int n)
{
	unsigned int i, hits = 0;

	for (i = 0; i < n; i++)
		hits += dev_match(f, &devs[i]);
	return hits;
}

/* Fetch the device ports; Return: 0, or RD_EXIT_FAIL after saying why. */
static int dev_fetch(struct rdmx_device_info **devs, unsigned int *n)
{
	struct rdmx_info info;
	int fd, err;

	fd = rd_open_checked(&info);
	if (fd < 0)
		return RD_EXIT_FAIL;
	if (!(info.features & RDMX_FEATURE_LIST_DEVICES)) {
		rd_err("rdmx module %s cannot list devices: upgrade the module",
		       (const char *)info.version);
		close(fd);
		return RD_EXIT_FAIL;
	}
	err = rd_list_devices(fd, devs, n);
	close(fd);
	if (err) {
		rd_err("listing devices on %s failed: %s", rd_devnode(),
		       strerror(-err));
		return RD_EXIT_FAIL;
	}
	return 0;
}

static int dev_show(struct rd *rd)
{
	struct dev_filter filter = { NULL };
	struct rdmx_device_info *devs = NULL;
	unsigned int i, n = 0;
	int ret;

	if (!rd_no_arg(rd)) {
		if (dev_parse_filter(&filter, rd_argv(rd)))
			return rd_usage_err("dev", "bad device name '%s': expected NAME or NAME/PORT",
					    rd_argv(rd));
		rd_arg_inc(rd);
	}
	ret = rd_no_more_args(rd, "dev");
	if (ret)
		return ret;

	ret = dev_fetch(&devs, &n);
	if (ret)
		return ret;
	if (filter.arg && !dev_count_matches(&filter, devs, n)) {
		rd_err("no RDMA device port '%s' (list them: " RD_PROG " dev show)",
		       filter.arg);
		free(devs);
		return RD_EXIT_FAIL;
	}

	open_array(rd, NULL);
	for (i = 0; i < n; i++)
		if (dev_match(&filter, &devs[i]))
			dev_print_port(rd, &devs[i]);
	close_array(rd);
	free(devs);
	return RD_EXIT_OK;
}

static int dev_help(struct rd *rd)
{
	(void)rd;
	printf("Usage: " RD_PROG " dev\n"
	       "       " RD_PROG " dev show [ NAME[/PORT] ]\n"
	       "Show the RDMA device ports the rdmx module sees: transport, port state,\n"
	       "netdev, MTU, node GUID and the device limits rdmx sizes its queues by.\n");
	return RD_EXIT_OK;
}

static const struct rd_cmd dev_cmds[] = {
	{ NULL,		dev_show },
	{ "help",	dev_help },
	{ "show",	dev_show },
	{ "list",	dev_show },
	{ NULL,		NULL },
};

int cmd_dev(struct rd *rd)
{
	return rd_exec_cmd(rd, dev_cmds, "dev");
}
