// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx sysfs: /sys/kernel/rdmx (Documentation/ABI/testing/sysfs-kernel-rdmx).
 *
 *   /sys/kernel/rdmx/<parameter>            session defaults, root writes
 *   /sys/kernel/rdmx/sessions/<id>/<attr>   one directory per session
 *   /sys/kernel/rdmx/listeners/<id>/<attr>  one directory per listener
 *
 * A session's and a listener's memory is freed by their kobject's release,
 * after kobject_del() has waited for readers, so show() never sees freed
 * memory.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kobject.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include "rdmx.h"
#include "blk_proto.h"
#include "sess.h"

static struct kobject *rdmx_kobj;
static struct kobject *rdmx_sessions_kobj;
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

struct rdmx_param_attr {
	struct kobj_attribute attr;
	unsigned int *val;
	unsigned int min;
	unsigned int max;
};

static ssize_t rdmx_param_show(struct kobject *kobj, struct kobj_attribute *a,
			       char *buf)
{
	struct rdmx_param_attr *p = container_of(a, struct rdmx_param_attr, attr);

	return sysfs_emit(buf, "%u\n", READ_ONCE(*p->val));
}

static ssize_t rdmx_param_store(struct kobject *kobj, struct kobj_attribute *a,
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

/* VAR: the attribute; NAME: its file; FIELD: the rdmx_params member. */
#define RDMX_PARAM(VAR, NAME, FIELD, MIN, MAX)				\
	static struct rdmx_param_attr VAR = {				\
		.attr = __ATTR(NAME, 0644, rdmx_param_show, rdmx_param_store), \
		.val = &rdmx_params.FIELD,				\
		.min = MIN,						\
		.max = MAX,						\
	}

RDMX_PARAM(rdmx_param_hb_interval_ms, hb_interval_ms, hb_interval_ms,
	   100, 60000);
RDMX_PARAM(rdmx_param_hb_miss_max, hb_miss_max, hb_miss_max, 1, 100);
RDMX_PARAM(rdmx_param_loss_timeout_ms, loss_timeout_ms, loss_timeout_ms,
	   0, 3600000);
RDMX_PARAM(rdmx_param_connect_timeout_ms, connect_timeout_ms,
	   connect_timeout_ms, 100, 600000);
RDMX_PARAM(rdmx_param_reconnect_max_ms, reconnect_max_ms, reconnect_max_ms,
	   100, 600000);
RDMX_PARAM(rdmx_param_queue_depth, queue_depth, queue_depth,
	   RDMX_CREDITS_RESERVED + 1, RDMX_PROTO_MAX_QUEUE_DEPTH);
RDMX_PARAM(rdmx_param_max_qps, max_qps, max_qps, 1, RDMX_SESS_MAX_LANES);
RDMX_PARAM(rdmx_param_blk_inline_read_max, blk_inline_read_max,
	   blk_inline_read_max, 0, RDMX_BLK_INLINE_MAX);
RDMX_PARAM(rdmx_param_max_sessions, max_sessions, max_sessions, 1, 1000000);
RDMX_PARAM(rdmx_param_max_sessions_per_host, max_sessions_per_host,
	   max_sessions_per_host, 1, 1000000);
RDMX_PARAM(rdmx_param_max_blk_queues, max_blk_queues, max_blk_queues, 1,
	   1000000);
RDMX_PARAM(rdmx_param_max_blk_queues_per_host, max_blk_queues_per_host,
	   max_blk_queues_per_host, 1, 1000000);
RDMX_PARAM(rdmx_param_blk_keepalive_ms, blk_keepalive_ms, blk_keepalive_ms,
	   0, 600000);

static ssize_t sessions_refused_show(struct kobject *k,
				     struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%lld\n",
			  atomic64_read(&rdmx_refusals.sessions));
}

static ssize_t blk_queues_refused_show(struct kobject *k,
				       struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%lld\n",
			  atomic64_read(&rdmx_refusals.blk_queues));
}

static struct kobj_attribute rdmx_attr_sessions_refused =
	__ATTR_RO(sessions_refused);
static struct kobj_attribute rdmx_attr_blk_queues_refused =
	__ATTR_RO(blk_queues_refused);

static struct attribute *rdmx_param_attrs[] = {
	&rdmx_param_hb_interval_ms.attr.attr,
	&rdmx_param_hb_miss_max.attr.attr,
	&rdmx_param_loss_timeout_ms.attr.attr,
	&rdmx_param_connect_timeout_ms.attr.attr,
	&rdmx_param_reconnect_max_ms.attr.attr,
	&rdmx_param_queue_depth.attr.attr,
	&rdmx_param_max_qps.attr.attr,
	&rdmx_param_blk_inline_read_max.attr.attr,
	&rdmx_param_max_sessions.attr.attr,
	&rdmx_param_max_sessions_per_host.attr.attr,
	&rdmx_param_max_blk_queues.attr.attr,
	&rdmx_param_max_blk_queues_per_host.attr.attr,
	&rdmx_param_blk_keepalive_ms.attr.attr,
	&rdmx_attr_sessions_refused.attr,
	&rdmx_attr_blk_queues_refused.attr,
	NULL,
};

static const struct attribute_group rdmx_param_group = {
	.attrs = rdmx_param_attrs,
};

/* ---- sessions ------------------------------------------------------------ */

#define to_sess(k) container_of(k, struct rdmx_sess, kobj)

static ssize_t role_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%s\n", to_sess(k)->server ? "server" : "client");
}

static ssize_t state_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  rdmx_sess_state_str(READ_ONCE(to_sess(k)->state)));
}

static ssize_t rdmx_emit_addr(char *buf, struct rdmx_sess *sess, bool peer)
{
	struct sockaddr_storage ss;

	spin_lock(&sess->lock);
	ss = peer ? sess->peer : sess->local;
	spin_unlock(&sess->lock);
	if (ss.ss_family != AF_INET && ss.ss_family != AF_INET6)
		return sysfs_emit(buf, "\n");
	return sysfs_emit(buf, "%pISpc\n", &ss);
}

static ssize_t peer_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return rdmx_emit_addr(buf, to_sess(k), true);
}

static ssize_t local_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return rdmx_emit_addr(buf, to_sess(k), false);
}

static ssize_t device_show(struct kobject *k, struct kobj_attribute *a,
			   char *buf)
{
	struct rdmx_sess *sess = to_sess(k);
	char name[IB_DEVICE_NAME_MAX] = "";

	spin_lock(&sess->lock);
	if (sess->lanes[0].conn && sess->lanes[0].conn->rdev)
		strscpy(name, sess->lanes[0].conn->rdev->ibdev->name,
			sizeof(name));
	spin_unlock(&sess->lock);
	return sysfs_emit(buf, "%s\n", name);
}

static ssize_t qps_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	struct rdmx_sess *sess = to_sess(k);
	unsigned int n;

	spin_lock(&sess->lock);
	n = rdmx_sess_live_lanes(sess);
	spin_unlock(&sess->lock);
	return sysfs_emit(buf, "%u\n", n);
}

static ssize_t queue_depth_show(struct kobject *k, struct kobj_attribute *a,
				char *buf)
{
	struct rdmx_sess *sess = to_sess(k);
	u32 n = 0;

	spin_lock(&sess->lock);
	if (sess->lanes[0].conn)
		n = sess->lanes[0].conn->depth;
	spin_unlock(&sess->lock);
	return sysfs_emit(buf, "%u\n", n);
}

static ssize_t features_show(struct kobject *k, struct kobj_attribute *a,
			     char *buf)
{
	struct rdmx_sess *sess = to_sess(k);
	u32 f;

	spin_lock(&sess->lock);
	f = sess->features;
	spin_unlock(&sess->lock);
	return sysfs_emit(buf, "%s%s%s\n", f & RDMX_PROTO_F_MSG ? "msg" : "",
			  f & RDMX_PROTO_F_RMA ? " rma" : "",
			  f & RDMX_PROTO_F_BLOCK ? " block" : "");
}

#define RDMX_SESS_U64(_name, _expr)					\
static ssize_t _name##_show(struct kobject *k, struct kobj_attribute *a, \
			    char *buf)					\
{									\
	struct rdmx_sess *sess = to_sess(k);				\
	u64 v;								\
									\
	spin_lock(&sess->lock);						\
	v = (_expr);							\
	spin_unlock(&sess->lock);					\
	return sysfs_emit(buf, "%llu\n", v);				\
}									\
static struct kobj_attribute rdmx_sess_attr_##_name = __ATTR_RO(_name)

RDMX_SESS_U64(generation, sess->generation);
RDMX_SESS_U64(credits, rdmx_sess_credits_locked(sess));
RDMX_SESS_U64(channels, sess->nr_chans);
RDMX_SESS_U64(max_qps, sess->max_lanes);
RDMX_SESS_U64(msgs_tx, sess->stats.msgs_tx);
RDMX_SESS_U64(msgs_rx, sess->stats.msgs_rx);
RDMX_SESS_U64(bytes_tx, sess->stats.bytes_tx);
RDMX_SESS_U64(bytes_rx, sess->stats.bytes_rx);
RDMX_SESS_U64(retransmits, sess->stats.retransmits);
RDMX_SESS_U64(reconnects, sess->stats.reconnects);
RDMX_SESS_U64(hb_misses, sess->stats.hb_misses);
RDMX_SESS_U64(unacked, rdmx_sess_unacked(sess));

static struct kobj_attribute rdmx_sess_attr_role = __ATTR_RO(role);
static struct kobj_attribute rdmx_sess_attr_state = __ATTR_RO(state);
static struct kobj_attribute rdmx_sess_attr_peer = __ATTR_RO(peer);
static struct kobj_attribute rdmx_sess_attr_local = __ATTR_RO(local);
static struct kobj_attribute rdmx_sess_attr_device = __ATTR_RO(device);
static struct kobj_attribute rdmx_sess_attr_qps = __ATTR_RO(qps);
static struct kobj_attribute rdmx_sess_attr_queue_depth = __ATTR_RO(queue_depth);
static struct kobj_attribute rdmx_sess_attr_features = __ATTR_RO(features);

static struct attribute *rdmx_sess_attrs[] = {
	&rdmx_sess_attr_role.attr,
	&rdmx_sess_attr_state.attr,
	&rdmx_sess_attr_peer.attr,
	&rdmx_sess_attr_local.attr,
	&rdmx_sess_attr_device.attr,
	&rdmx_sess_attr_qps.attr,
	&rdmx_sess_attr_queue_depth.attr,
	&rdmx_sess_attr_features.attr,
	&rdmx_sess_attr_generation.attr,
	&rdmx_sess_attr_credits.attr,
	&rdmx_sess_attr_channels.attr,
	&rdmx_sess_attr_max_qps.attr,
	&rdmx_sess_attr_msgs_tx.attr,
	&rdmx_sess_attr_msgs_rx.attr,
	&rdmx_sess_attr_bytes_tx.attr,
	&rdmx_sess_attr_bytes_rx.attr,
	&rdmx_sess_attr_retransmits.attr,
	&rdmx_sess_attr_reconnects.attr,
	&rdmx_sess_attr_hb_misses.attr,
	&rdmx_sess_attr_unacked.attr,
	NULL,
};
ATTRIBUTE_GROUPS(rdmx_sess);

static void rdmx_sess_kobj_release(struct kobject *kobj)
{
	kfree(to_sess(kobj));
}

static const struct kobj_type rdmx_sess_ktype = {
	.release = rdmx_sess_kobj_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = rdmx_sess_groups,
};

/**
 * rdmx_sysfs_sess_add() - publish a session in sysfs
 * @sess: the session
 *
 * From here on the session's memory is freed by its kobject's release.
 *
 * Context: process context.
 * Return: 0 or a negative errno (the session works without a directory).
 */
int rdmx_sysfs_sess_add(struct rdmx_sess *sess)
{
	int ret;

	kobject_init(&sess->kobj, &rdmx_sess_ktype);
	sess->kobj_inited = true;
	ret = kobject_add(&sess->kobj, rdmx_sessions_kobj, "%u", sess->id);
	if (!ret)
		sess->kobj_added = true;
	return ret;
}

/**
 * rdmx_sysfs_sess_del() - remove a session's directory, waiting for readers
 * @sess: the session
 *
 * Context: process context.
 */
void rdmx_sysfs_sess_del(struct rdmx_sess *sess)
{
	if (sess->kobj_added) {
		kobject_del(&sess->kobj);
		sess->kobj_added = false;
	}
}

/**
 * rdmx_sess_release_final() - free a session's memory
 * @sess: the session
 *
 * Context: process context.
 */
void rdmx_sess_release_final(struct rdmx_sess *sess)
{
	if (sess->kobj_inited)
		kobject_put(&sess->kobj);
	else
		kfree(sess);
}

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
	rdmx_sessions_kobj = kobject_create_and_add("sessions", rdmx_kobj);
	if (!rdmx_sessions_kobj) {
		ret = -ENOMEM;
		goto out_group;
	}
	rdmx_listeners_kobj = kobject_create_and_add("listeners", rdmx_kobj);
	if (!rdmx_listeners_kobj) {
		ret = -ENOMEM;
		goto out_sessions;
	}
	return 0;

out_sessions:
	kobject_put(rdmx_sessions_kobj);
out_group:
	sysfs_remove_group(rdmx_kobj, &rdmx_param_group);
out_put:
	kobject_put(rdmx_kobj);
	return ret;
}

/**
 * rdmx_sysfs_exit() - remove /sys/kernel/rdmx
 *
 * Context: module exit, after every session and listener is gone.
 */
void rdmx_sysfs_exit(void)
{
	kobject_put(rdmx_listeners_kobj);
	kobject_put(rdmx_sessions_kobj);
	sysfs_remove_group(rdmx_kobj, &rdmx_param_group);
	kobject_put(rdmx_kobj);
}
