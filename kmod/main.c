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

#include "blk.h"
#include "rdmx.h"
#include "sess.h"

static long rdmx_unlocked_ioctl(struct file *file, unsigned int cmd,
				unsigned long arg)
{
	long ret;

	ret = rdmx_uep_ioctl(file, cmd, (void __user *)arg);
	if (ret != -ENOIOCTLCMD)
		return ret;
	return rdmx_ioctl_dispatch(cmd, (void __user *)arg);
}

/* Each open file is an endpoint of the message service. */
static int rdmx_open(struct inode *inode, struct file *file)
{
	struct rdmx_ep *ep;

	ep = rdmx_ep_create(NULL, NULL);
	if (!ep)
		return -ENOMEM;
	set_bit(RDMX_EP_F_USER, &ep->flags);
	file->private_data = ep;
	return nonseekable_open(inode, file);
}

static int rdmx_release(struct inode *inode, struct file *file)
{
	rdmx_ep_release(file->private_data);
	return 0;
}

static const struct file_operations rdmx_fops = {
	.owner = THIS_MODULE,
	.open = rdmx_open,
	.release = rdmx_release,
	.poll = rdmx_uep_poll,
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

	rdmx_uep_set_fops(&rdmx_fops);
	ret = rdmx_sess_init();
	if (ret)
		return ret;
	ret = rdmx_sysfs_init();
	if (ret)
		goto out_sess_exit;
	ret = rdmx_listeners_init();
	if (ret)
		goto out_sysfs_exit;
	ret = rdmx_blk_srv_init();
	if (ret)
		goto out_listeners_exit;
	ret = rdmx_blk_clt_init();
	if (ret)
		goto out_blk_srv_exit;
	ret = rdmx_devices_init();
	if (ret)
		goto out_blk_clt_exit;

	ret = misc_register(&rdmx_misc);
	if (ret)
		goto out_devices_exit;

	pr_info("loaded, version %s, ABI %u\n", RDMX_MODULE_VERSION,
		RDMX_ABI_VERSION);
	return 0;

out_devices_exit:
	rdmx_devices_exit();
out_blk_clt_exit:
	rdmx_blk_clt_exit();
out_blk_srv_exit:
	rdmx_blk_srv_exit();
out_listeners_exit:
	rdmx_listeners_exit();
out_sysfs_exit:
	rdmx_sysfs_exit();
out_sess_exit:
	rdmx_sess_exit();
	return ret;
}

static void __exit rdmx_exit(void)
{
	misc_deregister(&rdmx_misc);
	rdmx_blk_clt_exit();
	rdmx_listeners_exit();
	rdmx_blk_srv_exit();
	rdmx_sess_exit();
	rdmx_devices_exit();
	rdmx_sysfs_exit();
	pr_info("unloaded\n");
}

module_init(rdmx_init);
module_exit(rdmx_exit);

MODULE_AUTHOR("The rdmx authors");
MODULE_DESCRIPTION("rdmx: RDMA block and message transport");
MODULE_LICENSE("GPL");
MODULE_VERSION(RDMX_MODULE_VERSION);
