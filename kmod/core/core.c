// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx core: its setup and teardown, the registered services, and the
 * /dev/rdmx misc device.
 *
 * The module's init (kmod/module.c) sets up the core, then each service,
 * which registers with the core (struct rdmx_service, and the rdma_cm and
 * device hooks of cm.h and rdmx.h); only then does rdmx_core_publish()
 * open for business: the listener table, then /dev/rdmx. Exit runs the
 * other way round: rdmx_core_unpublish() removes /dev/rdmx and the
 * listeners before any service goes, so that no connection request is in
 * a service's hands while it tears down (rdma_destroy_id() of a listener
 * waits for its handler). The service list changes only while /dev/rdmx
 * does not exist and no file of it is open (each holds a reference on the
 * module): its readers take no lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/workqueue.h>

#include "rdmx.h"

/* The module's workqueue for work that may sleep (teardowns, timers, rebinds). */
struct workqueue_struct *rdmx_wq;

static LIST_HEAD(rdmx_services);
static const struct rdmx_file_ops *rdmx_file_ops;
static bool rdmx_published;

/**
 * rdmx_service_register() - add a service's ioctls and features
 * @svc: the service, which must stay until rdmx_service_unregister()
 *
 * Context: module init, before rdmx_core_publish().
 * Return: 0, or -EBUSY when @svc->file is set and another service owns the
 * files already.
 */
int rdmx_service_register(struct rdmx_service *svc)
{
	if (WARN_ON(rdmx_published))
		return -EBUSY;
	if (svc->file) {
		if (WARN_ON(rdmx_file_ops))
			return -EBUSY;
		rdmx_file_ops = svc->file;
	}
	list_add_tail(&svc->node, &rdmx_services);
	return 0;
}

/**
 * rdmx_service_unregister() - remove a registered service
 * @svc: the service
 *
 * Context: module exit, after rdmx_core_unpublish().
 */
void rdmx_service_unregister(struct rdmx_service *svc)
{
	WARN_ON(rdmx_published);
	if (svc->file == rdmx_file_ops)
		rdmx_file_ops = NULL;
	list_del_init(&svc->node);
}

/**
 * rdmx_features() - the RDMX_FEATURE_* bits this module implements
 *
 * Context: any context, while the module is loaded.
 * Return: the feature mask reported by RDMX_IOC_GET_INFO: the core's and
 * every registered service's.
 */
u64 rdmx_features(void)
{
	struct rdmx_service *svc;
	u64 features = RDMX_FEATURE_LIST_DEVICES;

	list_for_each_entry(svc, &rdmx_services, node)
		features |= svc->features;
	return features;
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_features);

/**
 * rdmx_services_ioctl() - offer an ioctl to the registered services
 * @cmd: ioctl number
 * @uarg: the caller's argument
 *
 * Context: process context.
 * Return: what the service whose command it is returned, or -ENOIOCTLCMD
 * when it is no service's.
 */
long rdmx_services_ioctl(unsigned int cmd, void __user *uarg)
{
	struct rdmx_service *svc;
	long ret;

	list_for_each_entry(svc, &rdmx_services, node) {
		if (!svc->ioctl)
			continue;
		ret = svc->ioctl(cmd, uarg);
		if (ret != -ENOIOCTLCMD)
			return ret;
	}
	return -ENOIOCTLCMD;
}

static long rdmx_unlocked_ioctl(struct file *file, unsigned int cmd,
				unsigned long arg)
{
	long ret;

	ret = rdmx_file_ops->ioctl(file, cmd, (void __user *)arg);
	if (ret != -ENOIOCTLCMD)
		return ret;
	return rdmx_ioctl_dispatch(cmd, (void __user *)arg);
}

static int rdmx_open(struct inode *inode, struct file *file)
{
	int ret;

	ret = rdmx_file_ops->open(file);
	if (ret)
		return ret;
	return nonseekable_open(inode, file);
}

static int rdmx_release(struct inode *inode, struct file *file)
{
	rdmx_file_ops->release(file);
	return 0;
}

static __poll_t rdmx_poll(struct file *file, poll_table *wait)
{
	return rdmx_file_ops->poll(file, wait);
}

static const struct file_operations rdmx_fops = {
	.owner = THIS_MODULE,
	.open = rdmx_open,
	.release = rdmx_release,
	.poll = rdmx_poll,
	.unlocked_ioctl = rdmx_unlocked_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

/**
 * rdmx_file_fops() - the file operations of /dev/rdmx's files
 *
 * For a service that makes more such files (an accepted channel).
 *
 * Context: any context.
 * Return: the operations.
 */
const struct file_operations *rdmx_file_fops(void)
{
	return &rdmx_fops;
}

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

/**
 * rdmx_core_init() - set up the core: workqueue, sysfs root and the RDMA
 *	device table
 *
 * Context: module init, before any service's init.
 * Return: 0 or a negative errno.
 */
int rdmx_core_init(void)
{
	int ret;

	rdmx_wq = alloc_workqueue("rdmx", WQ_MEM_RECLAIM | WQ_UNBOUND, 0);
	if (!rdmx_wq)
		return -ENOMEM;
	ret = rdmx_sysfs_init();
	if (ret)
		goto out_wq;
	ret = rdmx_devices_init();
	if (ret)
		goto out_sysfs;
	return 0;

out_sysfs:
	rdmx_sysfs_exit();
out_wq:
	destroy_workqueue(rdmx_wq);
	return ret;
}

/**
 * rdmx_core_exit() - undo rdmx_core_init()
 *
 * Context: module exit, after every service's exit.
 */
void rdmx_core_exit(void)
{
	rdmx_devices_exit();
	rdmx_sysfs_exit();
	destroy_workqueue(rdmx_wq);
}

/**
 * rdmx_core_publish() - set up the listener table and create /dev/rdmx
 *
 * Context: module init, after every service registered.
 * Return: 0, -ENODEV when no service owns the files, or a negative errno.
 */
int rdmx_core_publish(void)
{
	int ret;

	if (WARN_ON(!rdmx_file_ops))
		return -ENODEV;
	ret = rdmx_listeners_init();
	if (ret)
		return ret;
	rdmx_published = true;
	ret = misc_register(&rdmx_misc);
	if (ret) {
		rdmx_published = false;
		rdmx_listeners_exit();
	}
	return ret;
}

/**
 * rdmx_core_unpublish() - remove /dev/rdmx and every listener
 *
 * No file of /dev/rdmx is open (each holds a reference on the module), so
 * only persistent listeners are left; once they are gone, no connection
 * request reaches a service.
 *
 * Context: module exit, before any service's exit.
 */
void rdmx_core_unpublish(void)
{
	misc_deregister(&rdmx_misc);
	rdmx_published = false;
	rdmx_listeners_exit();
}
