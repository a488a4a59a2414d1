// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx: RDMA block and message transport.
 *
 * Module entry points and the /dev/rdmx misc device.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>

#include "rdmx.h"

static long rdmx_unlocked_ioctl(struct file *file, unsigned int cmd,
				unsigned long arg)
{
	return rdmx_ioctl_dispatch(cmd, (void __user *)arg);
}

static const struct file_operations rdmx_fops = {
	.owner = THIS_MODULE,
	.open = nonseekable_open,
	.unlocked_ioctl = rdmx_unlocked_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

/*
 * World-usable, like /dev/infiniband/rdma_cm: what the ioctls can do is
 * checked per operation (see Documentation/uapi.rst).
 */
static struct miscdevice rdmx_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "rdmx",
	.fops = &rdmx_fops,
	.mode = 0666,
};

static int __init rdmx_init(void)
{
	int ret;

	ret = rdmx_devices_init();
	if (ret)
		return ret;

	ret = misc_register(&rdmx_misc);
	if (ret)
		goto out_devices_exit;

	pr_info("loaded, version %s, ABI %u\n", RDMX_MODULE_VERSION,
		RDMX_ABI_VERSION);
	return 0;

out_devices_exit:
	rdmx_devices_exit();
	return ret;
}

static void __exit rdmx_exit(void)
{
	misc_deregister(&rdmx_misc);
	rdmx_devices_exit();
	pr_info("unloaded\n");
}

module_init(rdmx_init);
module_exit(rdmx_exit);

MODULE_AUTHOR("The rdmx authors");
MODULE_DESCRIPTION("rdmx: RDMA block and message transport");
MODULE_LICENSE("GPL");
MODULE_VERSION(RDMX_MODULE_VERSION);
