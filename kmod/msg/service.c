// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx message service: its registration with the core. Each /dev/rdmx
 * file is one of its endpoints; RDMX_IOC_SESS_CLOSE is its one ioctl that
 * is not a file's.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/build_bug.h>
#include <linux/capability.h>
#include <linux/fs.h>

#include "core/rdmx.h"
#include "msg.h"
#include "rma.h"
#include "sess.h"

static_assert(sizeof(struct rdmx_sess_close) == RDMX_SESS_CLOSE_SIZE_VER0);

static int rdmx_msg_file_open(struct file *file)
{
	struct rdmx_ep *ep;

	ep = rdmx_ep_create(NULL, NULL);
	if (!ep)
		return -ENOMEM;
	set_bit(RDMX_EP_F_USER, &ep->flags);
	file->private_data = ep;
	return 0;
}

static void rdmx_msg_file_release(struct file *file)
{
	rdmx_ep_release(file->private_data);
}

static const struct rdmx_file_ops rdmx_msg_file_ops = {
	.open = rdmx_msg_file_open,
	.release = rdmx_msg_file_release,
	.poll = rdmx_uep_poll,
	.ioctl = rdmx_uep_ioctl,
};

static long rdmx_ioc_sess_close(void __user *uarg)
{
	struct rdmx_sess_close sc;
	u32 usize;
	int ret;

	ret = rdmx_copy_args_in(&sc, sizeof(sc), RDMX_SESS_CLOSE_SIZE_VER0,
				uarg, &usize);
	if (ret)
		return ret;
	if (sc.flags || sc.reserved || !sc.sess_id)
		return -EINVAL;
	if (!capable(CAP_NET_ADMIN))
		return -EPERM;
	return rdmx_sess_close_id(sc.sess_id);
}

static long rdmx_msg_ioctl(unsigned int cmd, void __user *uarg)
{
	if (cmd == RDMX_IOC_SESS_CLOSE)
		return rdmx_ioc_sess_close(uarg);
	return -ENOIOCTLCMD;
}

static struct rdmx_service rdmx_msg_service = {
	.name = "message",
	.features = RDMX_FEATURE_MSG | RDMX_FEATURE_RMA | RDMX_FEATURE_BENCH,
	.ioctl = rdmx_msg_ioctl,
	.file = &rdmx_msg_file_ops,
};

/**
 * rdmx_msg_init() - set up the message service and register it
 *
 * Context: module init, after rdmx_core_init().
 * Return: 0 or a negative errno.
 */
int rdmx_msg_init(void)
{
	int ret;

	ret = rdmx_sess_init();
	if (ret)
		return ret;
	ret = rdmx_msg_sysfs_init();
	if (ret)
		goto out_sess;
	ret = rdmx_service_register(&rdmx_msg_service);
	if (ret)
		goto out_sysfs;
	return 0;

out_sysfs:
	rdmx_msg_sysfs_exit();
out_sess:
	rdmx_sess_exit();
	return ret;
}

/**
 * rdmx_msg_exit() - undo rdmx_msg_init()
 *
 * Context: module exit, after rdmx_core_unpublish().
 */
void rdmx_msg_exit(void)
{
	rdmx_service_unregister(&rdmx_msg_service);
	rdmx_sess_exit();
	rdmx_svc_exit();
	rdmx_msg_sysfs_exit();
}
