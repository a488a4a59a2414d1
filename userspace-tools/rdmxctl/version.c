// SPDX-License-Identifier: GPL-2.0
/*
 * rdmxctl version: the tool's version, and the module's when it is loaded.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rdmxctl.h"

static const struct rd_flag_name rdmx_features[] = {
	{ RDMX_FEATURE_LIST_DEVICES,	"list_devices" },
	{ RDMX_FEATURE_MSG,		"msg" },
	{ RDMX_FEATURE_RMA,		"rma" },
	{ RDMX_FEATURE_BENCH,		"bench" },
	{ RDMX_FEATURE_BLOCK,		"block" },
	{ RDMX_FEATURE_BLOCK_RESIZE,	"block_resize" },
	{ RDMX_FEATURE_BLOCK_SECURE,	"block_secure" },
	{ RDMX_FEATURE_BLOCK_ACCESS,	"block_access" },
	{ RDMX_FEATURE_BLOCK_IDENTITY,	"block_identity" },
};

static void version_print_absent(struct rd *rd, int err)
{
	char text[128];

	if (err == ENOENT)
		snprintf(text, sizeof(text), "module: not loaded");
	else
		snprintf(text, sizeof(text), "module: unknown (%s: %s)",
			 rd_devnode(), strerror(err));
	print_null(rd, "module", text);
}

static void version_print_module(struct rd *rd)
{
	struct rdmx_info info;
	int fd, err;

	fd = rd_devnode_open();
	if (fd < 0) {
		version_print_absent(rd, -fd);
		return;
	}
	err = rd_get_info(fd, &info);
	close(fd);
	if (err) {
		version_print_absent(rd, -err);
		return;
	}

	print_text(rd, "module:");
	open_object(rd, "module");
	print_str(rd, "version", "%s", (const char *)info.version);
	print_uint(rd, "abi", "abi %u", info.abi_version);
	print_flags(rd, "features", rdmx_features, ARRAY_SIZE(rdmx_features),
		    info.features);
	close_object(rd);
}

/**
 * version_show() - print versions; works without the module
 * @rd: context
 *
 * Return: RD_EXIT_OK, or RD_EXIT_USAGE for extra words.
 */
int version_show(struct rd *rd)
{
	int ret = rd_no_more_args(rd, "version");

	if (ret)
		return ret;

	open_object(rd, NULL);
	print_str(rd, RD_PROG, RD_PROG " %s", RDMX_VERSION);
	print_nl(rd);
	version_print_module(rd);
	print_nl(rd);
	close_object(rd);
	return RD_EXIT_OK;
}

static int version_help(struct rd *rd)
{
	(void)rd;
	printf("Usage: " RD_PROG " version\n"
	       "Print the versions of " RD_PROG " and of the loaded rdmx module:\n"
	       "module version, ABI version and supported features.\n");
	return RD_EXIT_OK;
}

static const struct rd_cmd version_cmds[] = {
	{ NULL,		version_show },
	{ "help",	version_help },
	{ NULL,		NULL },
};

int cmd_version(struct rd *rd)
{
	return rd_exec_cmd(rd, version_cmds, "version");
}
