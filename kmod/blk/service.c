// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx block service: its registration with the core (the export and map
 * ioctls, its features), its tunables in /sys/kernel/rdmx, and the order
 * in which the server and the client are set up and torn down.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/sysfs.h>

#include "core/rdmx.h"
#include "blk.h"

struct rdmx_blk_params rdmx_blk_params = {
	.inline_read_max = RDMX_BLK_INLINE_MAX,
	.max_queues = 4096,
	.max_queues_per_host = 1024,
	.keepalive_ms = 5000,
	.stage_writes = 1,
};

atomic64_t rdmx_blk_queues_refused;

RDMX_PARAM(rdmx_param_blk_inline_read_max, blk_inline_read_max,
	   rdmx_blk_params.inline_read_max, 0, RDMX_BLK_INLINE_MAX);
RDMX_PARAM(rdmx_param_max_blk_queues, max_blk_queues,
	   rdmx_blk_params.max_queues, 1, 1000000);
RDMX_PARAM(rdmx_param_max_blk_queues_per_host, max_blk_queues_per_host,
	   rdmx_blk_params.max_queues_per_host, 1, 1000000);
RDMX_PARAM(rdmx_param_blk_keepalive_ms, blk_keepalive_ms,
	   rdmx_blk_params.keepalive_ms, 0, 600000);
RDMX_PARAM(rdmx_param_blk_stage_writes, blk_stage_writes,
	   rdmx_blk_params.stage_writes, 0, 1);

static ssize_t blk_queues_refused_show(struct kobject *k,
				       struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%lld\n",
			  atomic64_read(&rdmx_blk_queues_refused));
}

static struct kobj_attribute rdmx_attr_blk_queues_refused =
	__ATTR_RO(blk_queues_refused);

static struct attribute *rdmx_blk_param_attrs[] = {
	&rdmx_param_blk_inline_read_max.attr.attr,
	&rdmx_param_max_blk_queues.attr.attr,
	&rdmx_param_max_blk_queues_per_host.attr.attr,
	&rdmx_param_blk_keepalive_ms.attr.attr,
	&rdmx_param_blk_stage_writes.attr.attr,
	&rdmx_attr_blk_queues_refused.attr,
	NULL,
};

static const struct attribute_group rdmx_blk_param_group = {
	.attrs = rdmx_blk_param_attrs,
};

static long rdmx_blk_ioctl(unsigned int cmd, void __user *uarg)
{
	switch (cmd) {
	case RDMX_IOC_EXPORT_ADD:
		return rdmx_ioc_export_add(uarg);
	case RDMX_IOC_EXPORT_DEL:
		return rdmx_ioc_export_del(uarg);
	case RDMX_IOC_EXPORT_RESIZE:
		return rdmx_ioc_export_resize(uarg);
	case RDMX_IOC_MAP:
		return rdmx_ioc_map(uarg);
	case RDMX_IOC_UNMAP:
		return rdmx_ioc_unmap(uarg);
	default:
		return -ENOIOCTLCMD;
	}
}

static struct rdmx_service rdmx_blk_service = {
	.name = "block",
	.features = RDMX_FEATURE_BLOCK | RDMX_FEATURE_BLOCK_RESIZE |
		    RDMX_FEATURE_BLOCK_SECURE | RDMX_FEATURE_BLOCK_ACCESS |
		    RDMX_FEATURE_BLOCK_IDENTITY,
	.ioctl = rdmx_blk_ioctl,
};

/**
 * rdmx_blk_init() - set up the block server and client, and register them
 *
 * Context: module init, after rdmx_core_init().
 * Return: 0 or a negative errno.
 */
int rdmx_blk_init(void)
{
	int ret;

	ret = sysfs_create_group(rdmx_sysfs_root(), &rdmx_blk_param_group);
	if (ret)
		return ret;
	ret = rdmx_blk_srv_init();
	if (ret)
		goto out_group;
	ret = rdmx_blk_clt_init();
	if (ret)
		goto out_srv;
	ret = rdmx_service_register(&rdmx_blk_service);
	if (ret)
		goto out_clt;
	return 0;

out_clt:
	rdmx_blk_clt_exit();
out_srv:
	rdmx_blk_srv_exit();
out_group:
	sysfs_remove_group(rdmx_sysfs_root(), &rdmx_blk_param_group);
	return ret;
}

/**
 * rdmx_blk_exit() - undo rdmx_blk_init()
 *
 * The client goes first: a disk mapped from this host's own server is
 * still served while it is torn down.
 *
 * Context: module exit, after rdmx_core_unpublish().
 */
void rdmx_blk_exit(void)
{
	rdmx_service_unregister(&rdmx_blk_service);
	rdmx_blk_clt_exit();
	rdmx_blk_srv_exit();
	sysfs_remove_group(rdmx_sysfs_root(), &rdmx_blk_param_group);
}
