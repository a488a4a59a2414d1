// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx: RDMA block and message transport.
 *
 * The module: the core (kmod/core), then the services built on it
 * (kmod/msg, kmod/blk), then /dev/rdmx. This is the one file that names
 * every layer; exit undoes init in the reverse order.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>

#include "core/rdmx.h"
#include "msg/msg.h"
#include "blk/blk.h"

static int __init rdmx_init(void)
{
	int ret;

	ret = rdmx_core_init();
	if (ret)
		return ret;
	ret = rdmx_msg_init();
	if (ret)
		goto out_core_exit;
	ret = rdmx_blk_init();
	if (ret)
		goto out_msg_exit;
	ret = rdmx_core_publish();
	if (ret)
		goto out_blk_exit;

	pr_info("loaded, version %s, ABI %u\n", RDMX_MODULE_VERSION,
		RDMX_ABI_VERSION);
	return 0;

out_blk_exit:
	rdmx_blk_exit();
out_msg_exit:
	rdmx_msg_exit();
out_core_exit:
	rdmx_core_exit();
	return ret;
}

static void __exit rdmx_exit(void)
{
	rdmx_core_unpublish();
	rdmx_blk_exit();
	rdmx_msg_exit();
	rdmx_core_exit();
	pr_info("unloaded\n");
}

module_init(rdmx_init);
module_exit(rdmx_exit);

MODULE_AUTHOR("The rdmx authors");
MODULE_DESCRIPTION("rdmx: RDMA block and message transport");
MODULE_LICENSE("GPL");
MODULE_VERSION(RDMX_MODULE_VERSION);
