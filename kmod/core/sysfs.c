// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx sysfs root: /sys/kernel/rdmx (Documentation/ABI/testing/sysfs-kernel-rdmx).
 *
 *   /sys/kernel/rdmx/<parameter>            tunables, root writes
 *   /sys/kernel/rdmx/listeners/<id>/<attr>  one directory per listener
 *
 * The core's parameters (connection liveness and recovery, which every
 * service's connections share) are here; each service adds its own
 * parameters to the same directory (RDMX_PARAM() in rdmx.h), and its own
 * directories under it (the message service's sessions/). A listener's
 * memory is freed by its kobject's release, after kobject_del() has waited
 * for readers, so show() never sees freed memory.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kobject.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include "rdmx.h"
#include "listener.h"

static struct kobject *rdmx_kobj;
static struct kobject *rdmx_listeners_kobj;

/**
 * rdmx_sysfs_root() - /sys/kernel/rdmx, for other files' directories
 *
 * Context: any context, between rdmx_sysfs_init() and rdmx_sysfs_exit().
 * Return: the kobject.
 */
struct kobject *rdmx_sysfs_root(void)
{
	return rdmx_kobj;
}

/* ---- parameters ---------------------------------------------------------- */

struct rdmx_params rdmx_params = {
	.hb_interval_ms = 1000,
	.hb_miss_max = 3,
	.loss_timeout_ms = 30000,
	.connect_timeout_ms = 10000,
	.reconnect_max_ms = 2000,
};

/**
 * rdmx_param_show() - show a struct rdmx_param_attr's value
 * @kobj: /sys/kernel/rdmx
 * @a: the attribute, in its struct rdmx_param_attr
 * @buf: sysfs's page
 *
 * Context: process context (a sysfs read).
 * Return: bytes written to @buf.
 */
ssize_t rdmx_param_show(struct kobject *kobj, struct kobj_attribute *a,
			char *buf)
{
	struct rdmx_param_attr *p = container_of(a, struct rdmx_param_attr, attr);

	return sysfs_emit(buf, "%u\n", READ_ONCE(*p->val));
}

/**
 * rdmx_param_store() - set a struct rdmx_param_attr's value
 * @kobj: /sys/kernel/rdmx
 * @a: the attribute, in its struct rdmx_param_attr
 * @buf: what was written
 * @count: its length
 *
 * New connections use the value; live ones keep theirs.
 *
 * Context: process context (a sysfs write).
 * Return: @count, -EINVAL for no number, -ERANGE outside the bounds.
 */
ssize_t rdmx_param_store(struct kobject *kobj, struct kobj_attribute *a,
			 const char *buf, size_t count)
{
	struct rdmx_param_attr *p = container_of(a, struct rdmx_param_attr, attr);
	unsigned int v;
	int ret;

	ret = kstrtouint(buf, 0, &v);
	if (ret)
		return ret;
	if (v < p->min || v > p->max)
		return -ERANGE;
	WRITE_ONCE(*p->val, v);
	return count;
}

RDMX_PARAM(rdmx_param_hb_interval_ms, hb_interval_ms,
	   rdmx_params.hb_interval_ms, 100, 60000);
RDMX_PARAM(rdmx_param_hb_miss_max, hb_miss_max, rdmx_params.hb_miss_max,
	   1, 100);
RDMX_PARAM(rdmx_param_loss_timeout_ms, loss_timeout_ms,
	   rdmx_params.loss_timeout_ms, 0, 3600000);
RDMX_PARAM(rdmx_param_connect_timeout_ms, connect_timeout_ms,
	   rdmx_params.connect_timeout_ms, 100, 600000);
RDMX_PARAM(rdmx_param_reconnect_max_ms, reconnect_max_ms,
	   rdmx_params.reconnect_max_ms, 100, 600000);

static struct attribute *rdmx_param_attrs[] = {
	&rdmx_param_hb_interval_ms.attr.attr,
	&rdmx_param_hb_miss_max.attr.attr,
	&rdmx_param_loss_timeout_ms.attr.attr,
	&rdmx_param_connect_timeout_ms.attr.attr,
	&rdmx_param_reconnect_max_ms.attr.attr,
	NULL,
};

static const struct attribute_group rdmx_param_group = {
	.attrs = rdmx_param_attrs,
};

/* ---- listeners ------------------------------------------------------------ */

#define to_lst(k) container_of(k, struct rdmx_listener, kobj)

static ssize_t addr_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%pISpc\n", &to_lst(k)->addr);
}

static ssize_t persistent_show(struct kobject *k, struct kobj_attribute *a,
			       char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(to_lst(k)->persistent));
}

static ssize_t lst_device_show(struct kobject *k, struct kobj_attribute *a,
			       char *buf)
{
	char name[IB_DEVICE_NAME_MAX];

	rdmx_listener_device(to_lst(k), name, sizeof(name));
	return sysfs_emit(buf, "%s\n", name);
}

static struct kobj_attribute rdmx_lst_attr_addr = __ATTR_RO(addr);
static struct kobj_attribute rdmx_lst_attr_persistent = __ATTR_RO(persistent);
static struct kobj_attribute rdmx_lst_attr_device =
	__ATTR(device, 0444, lst_device_show, NULL);

static struct attribute *rdmx_lst_attrs[] = {
	&rdmx_lst_attr_addr.attr,
	&rdmx_lst_attr_persistent.attr,
	&rdmx_lst_attr_device.attr,
	NULL,
};
ATTRIBUTE_GROUPS(rdmx_lst);

static void rdmx_lst_kobj_release(struct kobject *kobj)
{
	kfree(to_lst(kobj));
}

static const struct kobj_type rdmx_lst_ktype = {
	.release = rdmx_lst_kobj_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = rdmx_lst_groups,
};

/**
 * rdmx_sysfs_listener_add() - publish a listener in sysfs
 * @lst: the listener; from here on freed by rdmx_sysfs_listener_del()
 *
 * Context: process context.
 * Return: 0 or a negative errno.
 */
int rdmx_sysfs_listener_add(struct rdmx_listener *lst)
{
	int ret;

	kobject_init(&lst->kobj, &rdmx_lst_ktype);
	ret = kobject_add(&lst->kobj, rdmx_listeners_kobj, "%u", lst->id);
	lst->kobj_added = !ret;
	return ret;
}

/**
 * rdmx_sysfs_listener_del() - remove a listener's directory and free it
 * @lst: the listener
 *
 * Context: process context.
 */
void rdmx_sysfs_listener_del(struct rdmx_listener *lst)
{
	if (lst->kobj_added)
		kobject_del(&lst->kobj);
	kobject_put(&lst->kobj);
}

/**
 * rdmx_sysfs_init() - create /sys/kernel/rdmx
 *
 * Context: module init.
 * Return: 0 or a negative errno.
 */
int rdmx_sysfs_init(void)
{
	int ret = -ENOMEM;

	rdmx_kobj = kobject_create_and_add("rdmx", kernel_kobj);
	if (!rdmx_kobj)
		return -ENOMEM;
	ret = sysfs_create_group(rdmx_kobj, &rdmx_param_group);
	if (ret)
		goto out_put;
	rdmx_listeners_kobj = kobject_create_and_add("listeners", rdmx_kobj);
	if (!rdmx_listeners_kobj) {
		ret = -ENOMEM;
		goto out_group;
	}
	return 0;

out_group:
	sysfs_remove_group(rdmx_kobj, &rdmx_param_group);
out_put:
	kobject_put(rdmx_kobj);
	return ret;
}

/**
 * rdmx_sysfs_exit() - remove /sys/kernel/rdmx
 *
 * Context: module exit, after every listener is gone and every service
 * has removed what it added.
 */
void rdmx_sysfs_exit(void)
{
	kobject_put(rdmx_listeners_kobj);
	sysfs_remove_group(rdmx_kobj, &rdmx_param_group);
	kobject_put(rdmx_kobj);
}
