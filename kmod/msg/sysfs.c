// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx message service sysfs (Documentation/ABI/testing/sysfs-kernel-rdmx):
 *
 *   /sys/kernel/rdmx/<parameter>            the service's tunables
 *   /sys/kernel/rdmx/sessions_refused       connection requests refused
 *   /sys/kernel/rdmx/sessions/<id>/<attr>   one directory per session
 *
 * A session's memory is freed by its kobject's release, after kobject_del()
 * has waited for readers, so show() never sees freed memory.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kobject.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include "core/rdmx.h"
#include "sess.h"

static struct kobject *rdmx_sessions_kobj;

struct rdmx_msg_params rdmx_msg_params = {
	.queue_depth = 64,
	.max_lanes = RDMX_SESS_MAX_LANES,
	.max_sessions = 4096,
	.max_sessions_per_host = 64,
};

atomic64_t rdmx_sessions_refused;

RDMX_PARAM(rdmx_param_queue_depth, queue_depth, rdmx_msg_params.queue_depth,
	   RDMX_PROTO_MIN_QUEUE_DEPTH, RDMX_PROTO_MAX_QUEUE_DEPTH);
/* Lanes per session; the files max_qps and a session's qps are ABI. */
RDMX_PARAM(rdmx_param_max_qps, max_qps, rdmx_msg_params.max_lanes, 1,
	   RDMX_SESS_MAX_LANES);
RDMX_PARAM(rdmx_param_max_sessions, max_sessions,
	   rdmx_msg_params.max_sessions, 1, 1000000);
RDMX_PARAM(rdmx_param_max_sessions_per_host, max_sessions_per_host,
	   rdmx_msg_params.max_sessions_per_host, 1, 1000000);

static ssize_t sessions_refused_show(struct kobject *k,
				     struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%lld\n", atomic64_read(&rdmx_sessions_refused));
}

static struct kobj_attribute rdmx_attr_sessions_refused =
	__ATTR_RO(sessions_refused);

static struct attribute *rdmx_msg_param_attrs[] = {
	&rdmx_param_queue_depth.attr.attr,
	&rdmx_param_max_qps.attr.attr,
	&rdmx_param_max_sessions.attr.attr,
	&rdmx_param_max_sessions_per_host.attr.attr,
	&rdmx_attr_sessions_refused.attr,
	NULL,
};

static const struct attribute_group rdmx_msg_param_group = {
	.attrs = rdmx_msg_param_attrs,
};

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

	spin_lock_bh(&sess->lock);
	ss = peer ? sess->peer : sess->local;
	spin_unlock_bh(&sess->lock);
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

	spin_lock_bh(&sess->lock);
	if (sess->lanes[0].conn && sess->lanes[0].conn->rdev)
		strscpy(name, sess->lanes[0].conn->rdev->ibdev->name,
			sizeof(name));
	spin_unlock_bh(&sess->lock);
	return sysfs_emit(buf, "%s\n", name);
}

static ssize_t qps_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	struct rdmx_sess *sess = to_sess(k);
	unsigned int n;

	spin_lock_bh(&sess->lock);
	n = rdmx_sess_live_lanes(sess);
	spin_unlock_bh(&sess->lock);
	return sysfs_emit(buf, "%u\n", n);
}

static ssize_t queue_depth_show(struct kobject *k, struct kobj_attribute *a,
				char *buf)
{
	struct rdmx_sess *sess = to_sess(k);
	u32 n = 0;

	spin_lock_bh(&sess->lock);
	if (sess->lanes[0].conn)
		n = sess->lanes[0].conn->depth;
	spin_unlock_bh(&sess->lock);
	return sysfs_emit(buf, "%u\n", n);
}

static ssize_t features_show(struct kobject *k, struct kobj_attribute *a,
			     char *buf)
{
	struct rdmx_sess *sess = to_sess(k);
	u32 f;

	spin_lock_bh(&sess->lock);
	f = sess->features;
	spin_unlock_bh(&sess->lock);
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
	spin_lock_bh(&sess->lock);						\
	v = (_expr);							\
	spin_unlock_bh(&sess->lock);					\
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
RDMX_SESS_U64(sq_stalls, sess->stats.sq_stalls);
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
	&rdmx_sess_attr_sq_stalls.attr,
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

/**
 * rdmx_msg_sysfs_init() - add the service's parameters and sessions/
 *
 * Context: module init, after rdmx_sysfs_init().
 * Return: 0 or a negative errno.
 */
int rdmx_msg_sysfs_init(void)
{
	int ret;

	ret = sysfs_create_group(rdmx_sysfs_root(), &rdmx_msg_param_group);
	if (ret)
		return ret;
	rdmx_sessions_kobj = kobject_create_and_add("sessions", rdmx_sysfs_root());
	if (!rdmx_sessions_kobj) {
		sysfs_remove_group(rdmx_sysfs_root(), &rdmx_msg_param_group);
		return -ENOMEM;
	}
	return 0;
}

/**
 * rdmx_msg_sysfs_exit() - remove what rdmx_msg_sysfs_init() added
 *
 * Context: module exit, after every session is gone.
 */
void rdmx_msg_sysfs_exit(void)
{
	kobject_put(rdmx_sessions_kobj);
	sysfs_remove_group(rdmx_sysfs_root(), &rdmx_msg_param_group);
}
