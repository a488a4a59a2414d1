// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx block service: the export table and its control plane.
 *
 * An export (struct rdmx_export) is a block device, a regular file or a RAM
 * region (a shmem file), each served by its backend (io_bdev.c, io_file.c,
 * io_ram.c), under a name, in /sys/kernel/rdmx/exports/NAME,
 * added, removed and grown by RDMX_IOC_EXPORT_ADD, _DEL and _RESIZE. The
 * server queues (blk_srv.c) find exports here when a client's OPEN names
 * one, and bind to them under rdmx_exports_mutex.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/inet.h>
#include <linux/jhash.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/blkdev.h>
#include <net/ipv6.h>

#include "core/compat.h"
#include "blk_srv.h"

LIST_HEAD(rdmx_exports);
/* The export table, each export's queue list and a queue's binding to it. */
DEFINE_MUTEX(rdmx_exports_mutex);
struct kobject *rdmx_exports_kobj;
/* An export's last queue went (its nr_queues reached 0). */
DECLARE_WAIT_QUEUE_HEAD(rdmx_export_idle_wait);

static struct rdmx_export *to_export(struct kobject *kobj)
{
	return container_of(kobj, struct rdmx_export, kobj);
}

static void rdmx_export_release(struct kobject *kobj)
{
	struct rdmx_export *exp = to_export(kobj);

	if (exp->file)
		fput(exp->file);
	cleanup_srcu_struct(&exp->fence);
	kfree(exp->path);
	kfree(exp);
}

static ssize_t rdmx_exp_show_path(struct rdmx_export *exp, char *buf)
{
	return sysfs_emit(buf, "%s\n", exp->path);
}

static ssize_t rdmx_exp_show_prefixes(struct rdmx_export *exp, char *buf)
{
	unsigned int i;
	int len = 0;

	for (i = 0; i < exp->nr_allow; i++) {
		const struct rdmx_export_allow *a = &exp->allow[i];

		if (a->family == AF_INET)
			len += sysfs_emit_at(buf, len, "%s%pI4/%u", i ? " " : "",
					     a->addr, a->prefix_len);
		else
			len += sysfs_emit_at(buf, len, "%s%pI6c/%u", i ? " " : "",
					     a->addr, a->prefix_len);
	}
	len += sysfs_emit_at(buf, len, "\n");
	return len;
}

/*
 * The maps bound to @exp, one line each: the client's address, the map's
 * uuid, rw or ro, and its queues. Under rdmx_exports_mutex; a queue
 * counts for the first queue of its map on the list.
 */
static ssize_t rdmx_exp_show_maps(struct rdmx_export *exp, char *buf)
{
	struct rdmx_srvq *q, *o;
	unsigned int n;
	ssize_t len = 0;

	mutex_lock(&rdmx_exports_mutex);
	list_for_each_entry(q, &exp->queues, exp_node) {
		list_for_each_entry(o, &exp->queues, exp_node)
			if (rdmx_srvq_same_map(o, q))
				break;
		if (o != q)
			continue;	/* listed with an earlier queue of its map */
		n = 0;
		list_for_each_entry(o, &exp->queues, exp_node)
			n += rdmx_srvq_same_map(o, q);
		len += sysfs_emit_at(buf, len, "%pISc %pUb %s %u\n", &q->peer,
				     &q->map_uuid, q->ro ? "ro" : "rw", n);
	}
	mutex_unlock(&rdmx_exports_mutex);
	return len;
}

static unsigned int rdmx_exp_clients(struct rdmx_export *exp)
{
	unsigned int clients;

	mutex_lock(&rdmx_exports_mutex);
	clients = exp->nr_queues;
	mutex_unlock(&rdmx_exports_mutex);
	return clients;
}

/*
 * One show function per attribute, generated: RDMX_EXP_SHOW prints one
 * value of the export (@exp in @_expr) with @_fmt; RDMX_EXP_ATTR_FN calls
 * @_fn(exp, buf) for the longer ones.
 */
#define RDMX_EXP_ATTR_FN(_name, _mode, _fn)				\
static ssize_t rdmx_exp_##_name##_show(struct kobject *kobj,		\
				       struct kobj_attribute *a,	\
				       char *buf)			\
{									\
	return _fn(to_export(kobj), buf);				\
}									\
static struct kobj_attribute rdmx_exp_attr_##_name =			\
	__ATTR(_name, _mode, rdmx_exp_##_name##_show, NULL)

#define RDMX_EXP_SHOW(_name, _fmt, _expr)				\
static ssize_t rdmx_exp_##_name##_show(struct kobject *kobj,		\
				       struct kobj_attribute *a,	\
				       char *buf)			\
{									\
	struct rdmx_export *exp = to_export(kobj);			\
									\
	return sysfs_emit(buf, _fmt "\n", _expr);			\
}									\
static struct kobj_attribute rdmx_exp_attr_##_name =			\
	__ATTR(_name, 0444, rdmx_exp_##_name##_show, NULL)

/* Where the data lies and who may reach it: for administrators only. */
RDMX_EXP_ATTR_FN(path, 0400, rdmx_exp_show_path);
RDMX_EXP_SHOW(size, "%llu", READ_ONCE(exp->size));
RDMX_EXP_SHOW(logical_block_size, "%u", exp->lbs);
RDMX_EXP_SHOW(read_only, "%d", !!(exp->flags & RDMX_BLK_EXP_RO));
RDMX_EXP_SHOW(secure, "%d", !exp->insecure);
RDMX_EXP_SHOW(access, "%s", exp->shared ? "shared" : "exclusive");
/* Who maps it: the map uuids fence each other, for administrators only. */
RDMX_EXP_ATTR_FN(maps, 0400, rdmx_exp_show_maps);
RDMX_EXP_ATTR_FN(allow, 0400, rdmx_exp_show_prefixes);
RDMX_EXP_SHOW(uuid, "%pUb", &exp->uuid);
RDMX_EXP_SHOW(identity, "%s", exp->uuid_src);
RDMX_EXP_SHOW(clients, "%u", rdmx_exp_clients(exp));
RDMX_EXP_SHOW(reads, "%lld", atomic64_read(&exp->reads));
RDMX_EXP_SHOW(writes, "%lld", atomic64_read(&exp->writes));
RDMX_EXP_SHOW(read_bytes, "%lld", atomic64_read(&exp->read_bytes));
RDMX_EXP_SHOW(write_bytes, "%lld", atomic64_read(&exp->write_bytes));
RDMX_EXP_SHOW(errors, "%lld", atomic64_read(&exp->errors));

static struct attribute *rdmx_exp_attrs[] = {
	&rdmx_exp_attr_path.attr,
	&rdmx_exp_attr_size.attr,
	&rdmx_exp_attr_logical_block_size.attr,
	&rdmx_exp_attr_read_only.attr,
	&rdmx_exp_attr_secure.attr,
	&rdmx_exp_attr_access.attr,
	&rdmx_exp_attr_maps.attr,
	&rdmx_exp_attr_allow.attr,
	&rdmx_exp_attr_uuid.attr,
	&rdmx_exp_attr_identity.attr,
	&rdmx_exp_attr_clients.attr,
	&rdmx_exp_attr_reads.attr,
	&rdmx_exp_attr_writes.attr,
	&rdmx_exp_attr_read_bytes.attr,
	&rdmx_exp_attr_write_bytes.attr,
	&rdmx_exp_attr_errors.attr,
	NULL,
};
ATTRIBUTE_GROUPS(rdmx_exp);

static const struct kobj_type rdmx_export_ktype = {
	.release = rdmx_export_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = rdmx_exp_groups,
};

/**
 * rdmx_export_find() - the export of a name
 * @name: NUL-terminated
 *
 * Context: under rdmx_exports_mutex.
 * Return: the export, or NULL.
 */
struct rdmx_export *rdmx_export_find(const char *name)
{
	struct rdmx_export *exp;

	lockdep_assert_held(&rdmx_exports_mutex);
	list_for_each_entry(exp, &rdmx_exports, node)
		if (!strcmp(exp->name, name))
			return exp;
	return NULL;
}

static bool rdmx_prefix_match(const u8 *a, const u8 *b, unsigned int bits)
{
	unsigned int bytes = bits / 8, rest = bits % 8;
	u8 mask;

	if (memcmp(a, b, bytes))
		return false;
	if (!rest)
		return true;
	mask = 0xff << (8 - rest);
	return (a[bytes] & mask) == (b[bytes] & mask);
}

/**
 * rdmx_export_allows() - whether a client may use an export
 * @exp: the export
 * @peer: the client's address
 *
 * Context: any context.
 * Return: true when @exp has no allow-list or @peer is in a prefix of it.
 */
bool rdmx_export_allows(const struct rdmx_export *exp,
			const struct sockaddr *peer)
{
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)peer;
	const struct sockaddr_in *sin = (const struct sockaddr_in *)peer;
	unsigned int i;
	u8 v4[4];

	if (!exp->nr_allow)
		return true;
	if (peer->sa_family == AF_INET)
		memcpy(v4, &sin->sin_addr, 4);
	else if (ipv6_addr_v4mapped(&sin6->sin6_addr))
		memcpy(v4, &sin6->sin6_addr.s6_addr32[3], 4);
	for (i = 0; i < exp->nr_allow; i++) {
		const struct rdmx_export_allow *a = &exp->allow[i];

		if (a->family == AF_INET &&
		    (peer->sa_family == AF_INET ||
		     ipv6_addr_v4mapped(&sin6->sin6_addr)) &&
		    rdmx_prefix_match(a->addr, v4, a->prefix_len))
			return true;
		if (a->family == AF_INET6 && peer->sa_family == AF_INET6 &&
		    rdmx_prefix_match(a->addr, sin6->sin6_addr.s6_addr,
				      a->prefix_len))
			return true;
	}
	return false;
}

/**
 * rdmx_export_name_ok() - whether an export name from userspace or the
 *	network is valid
 * @name: RDMX_EXPORT_NAME_LEN bytes
 *
 * Context: any context.
 * Return: true for 1 to 63 bytes of [A-Za-z0-9._-], NUL-padded.
 */
bool rdmx_export_name_ok(const u8 *name)
{
	return rdmx_service_name_valid((const char *)name, RDMX_EXPORT_NAME_LEN);
}

static int rdmx_export_check_allow(const struct rdmx_export_allow *a)
{
	if (a->reserved0 || a->reserved1)
		return -EINVAL;
	if (a->family == AF_INET)
		return a->prefix_len <= 32 && !memchr_inv(a->addr + 4, 0, 12) ?
		       0 : -EINVAL;
	if (a->family == AF_INET6)
		return a->prefix_len <= 128 ? 0 : -EINVAL;
	return -EINVAL;
}

/*
 * An identity, what a reconnecting client checks (see the uapi header):
 * the operator's (RDMX_EXPORT_UUID); for RAM, new each time, since its data
 * dies with the export: a client that reconnects to a RAM export added
 * again must not take its zeroes for its disk; for the others, a hash of
 * the export's name and what the backend says identifies the storage
 * (io_file.c, io_bdev.c).
 */
static void rdmx_export_make_uuid(struct rdmx_export *exp,
				  const struct rdmx_export_add *ea)
{
	u32 w[4];
	int i;

	if (ea->flags & RDMX_EXPORT_UUID) {
		import_uuid(&exp->uuid, ea->uuid);
		exp->uuid_src = "given";
		return;
	}
	if (!exp->ops->uuid) {
		uuid_gen(&exp->uuid);
		exp->uuid_src = "new";
		return;
	}
	for (i = 0; i < 4; i++)
		w[i] = jhash(exp->name, strlen(exp->name), i);
	exp->ops->uuid(exp, w);
	memcpy(exp->uuid.b, w, sizeof(exp->uuid.b));
	exp->uuid.b[6] = (exp->uuid.b[6] & 0x0f) | 0x80;	/* version 8 */
	exp->uuid.b[8] = (exp->uuid.b[8] & 0x3f) | 0x80;	/* RFC 9562 */
}

/*
 * Whether a write must leave its data alone until it is done: the data
 * goes from its pages straight to a device that needs stable pages (one
 * that computes parity or checksums from them, BLK_FEAT_STABLE_WRITES),
 * or to a file opened for direct I/O on a filesystem on one. Such an
 * export gets no staging area (rdmx_srvq_open_stage()), whose slots the
 * client could still write while the device reads them.
 */
static bool rdmx_export_stable_writes(const struct rdmx_export *exp)
{
	if (exp->bdev)
		return bdev_stable_writes(exp->bdev);
	return (exp->file->f_flags & O_DIRECT) &&
	       (file_inode(exp->file)->i_sb->s_iflags & SB_I_STABLE_WRITES);
}

/*
 * Open the backing store of an export, choose its backend and fill in its
 * geometry.
 */
static int rdmx_export_open(struct rdmx_export *exp,
			    const struct rdmx_export_add *ea)
{
	bool ro = ea->flags & RDMX_EXPORT_RO;
	struct file *file;
	umode_t mode;
	char *path;
	int flags, ret;
	u32 lbs;

	if (ea->flags & RDMX_EXPORT_RAM) {
		exp->ops = &rdmx_backend_ram;
		goto setup;
	}
	/* Exactly @path_len bytes: no NUL needed, none allowed inside. */
	path = memdup_user_nul(u64_to_user_ptr(ea->path), ea->path_len);
	if (IS_ERR(path))
		return PTR_ERR(path);
	if (strlen(path) != ea->path_len) {
		kfree(path);
		return -EINVAL;
	}
	exp->path = path;
	/*
	 * O_EXCL claims a block device for the export alone (EBUSY while
	 * mounted or claimed elsewhere, as nvmet's holder does); regular
	 * files ignore it.
	 */
	flags = (ro ? O_RDONLY : O_RDWR) | O_LARGEFILE | O_EXCL;
	file = filp_open(path, flags | O_DIRECT, 0);
	if (PTR_ERR_OR_ZERO(file) == -EINVAL)	/* no direct I/O there */
		file = filp_open(path, flags, 0);
	if (IS_ERR(file))
		return PTR_ERR(file);
	exp->file = file;
	mode = file_inode(file)->i_mode;
	if (S_ISBLK(mode))
		exp->ops = &rdmx_backend_bdev;
	else if (S_ISREG(mode))
		exp->ops = &rdmx_backend_file;
	else
		return -EINVAL;
setup:
	ret = exp->ops->setup(exp, ea, &lbs);
	if (ret)
		return ret;
	exp->stable_writes = rdmx_export_stable_writes(exp);
	if (ea->logical_block_size && ea->logical_block_size < lbs)
		return -EINVAL;
	exp->lbs = ea->logical_block_size ?: lbs;
	if (!exp->size || !IS_ALIGNED(exp->size, exp->lbs))
		return -EINVAL;
	return 0;
}

/**
 * rdmx_ioc_export_add() - RDMX_IOC_EXPORT_ADD
 * @uarg: struct rdmx_export_add
 *
 * Context: process context; needs CAP_SYS_ADMIN.
 * Return: 0 or a negative errno (see the uapi header).
 */
long rdmx_ioc_export_add(void __user *uarg)
{
	struct rdmx_export_add *ea;
	struct rdmx_export *exp;
	unsigned int i;
	u32 usize;
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	ea = kzalloc(sizeof(*ea), GFP_KERNEL);
	if (!ea)
		return -ENOMEM;
	ret = rdmx_copy_args_in(ea, sizeof(*ea), RDMX_EXPORT_ADD_SIZE_VER0, uarg,
				&usize);
	if (ret)
		goto out_free_ea;
	ret = -EINVAL;
	if (ea->flags & ~(RDMX_EXPORT_RO | RDMX_EXPORT_RAM |
			  RDMX_EXPORT_INSECURE | RDMX_EXPORT_SHARED |
			  RDMX_EXPORT_UUID) ||
	    /* A uuid exactly when the flag says so, and never for RAM. */
	    !(ea->flags & RDMX_EXPORT_UUID) !=
	    !memchr_inv(ea->uuid, 0, sizeof(ea->uuid)) ||
	    ((ea->flags & RDMX_EXPORT_UUID) && (ea->flags & RDMX_EXPORT_RAM)) ||
	    ea->reserved0 ||
	    memchr_inv(ea->reserved, 0, sizeof(ea->reserved)) ||
	    !rdmx_export_name_ok(ea->name) ||
	    ea->nr_allow > RDMX_EXPORT_ALLOW_MAX ||
	    (ea->logical_block_size && ea->logical_block_size != 512 &&
	     ea->logical_block_size != 4096))
		goto out_free_ea;
	if (ea->flags & RDMX_EXPORT_RAM) {
		if (ea->path || ea->path_len || !ea->ram_size ||
		    !IS_ALIGNED(ea->ram_size, 4096) ||
		    ea->ram_size > MAX_LFS_FILESIZE)
			goto out_free_ea;
	} else if (!ea->path || !ea->path_len || ea->path_len >= PATH_MAX ||
		   ea->ram_size) {
		goto out_free_ea;
	}
	for (i = 0; i < ea->nr_allow; i++)
		if (rdmx_export_check_allow(&ea->allow[i]))
			goto out_free_ea;
	for (; i < RDMX_EXPORT_ALLOW_MAX; i++)
		if (memchr_inv(&ea->allow[i], 0, sizeof(ea->allow[i])))
			goto out_free_ea;

	ret = -ENOMEM;
	exp = kzalloc(sizeof(*exp), GFP_KERNEL);
	if (!exp)
		goto out_free_ea;
	if (init_srcu_struct(&exp->fence)) {
		kfree(exp);
		goto out_free_ea;
	}
	kobject_init(&exp->kobj, &rdmx_export_ktype);
	INIT_LIST_HEAD(&exp->queues);
	INIT_LIST_HEAD(&exp->node);
	memcpy(exp->name, ea->name, sizeof(exp->name));
	exp->nr_allow = ea->nr_allow;
	memcpy(exp->allow, ea->allow, sizeof(exp->allow));
	exp->max_io = RDMX_BLK_MAX_IO;
	ret = rdmx_export_open(exp, ea);
	if (ret)
		goto out_put;
	rdmx_export_make_uuid(exp, ea);
	export_uuid(ea->uuid, &exp->uuid);
	if (ea->flags & RDMX_EXPORT_RO)
		exp->flags |= RDMX_BLK_EXP_RO;
	exp->insecure = ea->flags & RDMX_EXPORT_INSECURE;
	exp->shared = ea->flags & RDMX_EXPORT_SHARED;

	mutex_lock(&rdmx_exports_mutex);
	if (rdmx_export_find(exp->name)) {
		ret = -EEXIST;
		goto out_unlock;
	}
	ret = kobject_add(&exp->kobj, rdmx_exports_kobj, "%s", exp->name);
	if (ret)
		goto out_unlock;
	exp->added = true;
	list_add_tail(&exp->node, &rdmx_exports);
	mutex_unlock(&rdmx_exports_mutex);
	pr_info("export %s: %s, %llu bytes, %u-byte blocks%s, uuid %pUb\n",
		exp->name, exp->path, exp->size, exp->lbs,
		exp->flags & RDMX_BLK_EXP_RO ? ", read-only" : "", &exp->uuid);
	ret = rdmx_copy_args_out(uarg, ea, sizeof(*ea), usize);
	kfree(ea);
	return ret;

out_unlock:
	mutex_unlock(&rdmx_exports_mutex);
out_put:
	kobject_put(&exp->kobj);
out_free_ea:
	kfree(ea);
	return ret;
}

/**
 * rdmx_export_remove() - unlink an export and disconnect its queues
 * @exp: the export; the table's reference is dropped
 *
 * Context: under rdmx_exports_mutex.
 */
void rdmx_export_remove(struct rdmx_export *exp)
{
	struct rdmx_srvq *q;

	lockdep_assert_held(&rdmx_exports_mutex);
	list_del_init(&exp->node);
	list_for_each_entry(q, &exp->queues, exp_node)
		rdmx_srvq_disconnect(q);
	if (exp->added)
		kobject_del(&exp->kobj);
	exp->added = false;
	pr_info("export %s: removed\n", exp->name);
	kobject_put(&exp->kobj);
}

/**
 * rdmx_ioc_export_del() - RDMX_IOC_EXPORT_DEL
 * @uarg: struct rdmx_export_del
 *
 * Returns once nothing of the export's runs: with RDMX_EXPORT_DEL_FORCE,
 * once its queues are torn down, every backing I/O they had in flight
 * ended. The backing file is let go here, in the caller's context, so a
 * block device is no longer claimed when the call returns.
 *
 * Context: process context; needs CAP_SYS_ADMIN.
 * Return: 0 or a negative errno (see the uapi header).
 */
long rdmx_ioc_export_del(void __user *uarg)
{
	struct rdmx_export_del ed;
	struct rdmx_export *exp;
	struct file *file;
	u32 usize;
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	ret = rdmx_copy_args_in(&ed, sizeof(ed), RDMX_EXPORT_DEL_SIZE_VER0, uarg,
				&usize);
	if (ret)
		return ret;
	if (ed.flags & ~RDMX_EXPORT_DEL_FORCE || !rdmx_export_name_ok(ed.name))
		return -EINVAL;
	mutex_lock(&rdmx_exports_mutex);
	exp = rdmx_export_find(ed.name);
	if (!exp) {
		ret = -ENOENT;
	} else if (exp->nr_queues && !(ed.flags & RDMX_EXPORT_DEL_FORCE)) {
		ret = -EBUSY;
	} else {
		kobject_get(&exp->kobj);	/* for the wait below */
		rdmx_export_remove(exp);
		ret = 0;
	}
	mutex_unlock(&rdmx_exports_mutex);
	if (ret)
		return ret;
	/* Unlisted, it gets no new queue; a fatal signal ends the wait. */
	if (!wait_event_killable(rdmx_export_idle_wait,
				 !READ_ONCE(exp->nr_queues))) {
		file = xchg(&exp->file, NULL);
		if (file)
			fput(file);
	}
	kobject_put(&exp->kobj);
	return rdmx_copy_args_out(uarg, &ed, sizeof(ed), usize);
}

/**
 * rdmx_ioc_export_resize() - RDMX_IOC_EXPORT_RESIZE
 * @uarg: struct rdmx_export_resize
 *
 * Grows a RAM export to the size asked for, or takes the size a file or
 * block device has now. Queues read the size locklessly: it only grows,
 * and the responses they send from now on carry it to the clients; an
 * event tells an idle client at once.
 *
 * Context: process context; needs CAP_SYS_ADMIN.
 * Return: 0 or a negative errno (see the uapi header).
 */
long rdmx_ioc_export_resize(void __user *uarg)
{
	struct rdmx_export_resize er;
	struct rdmx_export *exp;
	struct rdmx_srvq *q;
	u64 size;
	u32 usize;
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	ret = rdmx_copy_args_in(&er, sizeof(er), RDMX_EXPORT_RESIZE_SIZE_VER0,
				uarg, &usize);
	if (ret)
		return ret;
	if (er.flags || er.old_size || !rdmx_export_name_ok(er.name))
		return -EINVAL;
	mutex_lock(&rdmx_exports_mutex);
	exp = rdmx_export_find(er.name);
	if (!exp) {
		ret = -ENOENT;
		goto out_unlock;
	}
	ret = -EINVAL;
	if (!exp->ops->grow != !er.new_size)
		goto out_unlock;	/* a size for RAM, none for the others */
	size = exp->ops->grow ? er.new_size : exp->ops->size(exp);
	if (size < exp->size || !IS_ALIGNED(size, exp->lbs) ||
	    (exp->ops->grow &&
	     (!IS_ALIGNED(size, SZ_4K) || size > MAX_LFS_FILESIZE))) {
		pr_warn_ratelimited("export %s: cannot resize from %llu to %llu bytes: exports only grow, in whole blocks\n",
				    exp->name, exp->size, size);
		goto out_unlock;
	}
	if (exp->ops->grow && size != exp->size) {
		ret = exp->ops->grow(exp, size);
		if (ret)
			goto out_unlock;
	}
	er.old_size = exp->size;
	er.new_size = size;
	if (size != exp->size) {
		WRITE_ONCE(exp->size, size);
		pr_info("export %s: resized from %llu to %llu bytes\n",
			exp->name, er.old_size, size);
		list_for_each_entry(q, &exp->queues, exp_node)
			rdmx_srvq_notify_size(q);
	}
	ret = 0;
out_unlock:
	mutex_unlock(&rdmx_exports_mutex);
	if (ret)
		return ret;
	return rdmx_copy_args_out(uarg, &er, sizeof(er), usize);
}
