// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx block service, client side: a mapped disk's sysfs files,
 * /sys/block/rdmxbN/wwid, /sys/block/rdmxbN/rdmx/ and its queues/Q/
 * (Documentation/ABI/testing/sysfs-block-rdmx).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blkdev.h>
#include <linux/kobject.h>
#include <linux/sysfs.h>

#include "core/rdmx.h"
#include "blk_clt.h"

/*
 * /sys/block/rdmxbN/rdmx and its queues/Q: kobjects of their own (created
 * after the disk, removed before it), whose files find the map through
 * the disk above them.
 */
static struct rdmx_disk *rdmx_disk_of_kobj(struct kobject *kobj)
{
	return dev_to_disk(kobj_to_dev(kobj->parent))->private_data;
}

static struct rdmx_dq *rdmx_dq_of_kobj(struct kobject *kobj)
{
	struct rdmx_disk *bd = rdmx_disk_of_kobj(kobj->parent->parent);
	unsigned int idx;

	if (kstrtouint(kobject_name(kobj), 10, &idx) || idx >= bd->nr_queues)
		return NULL;
	return &bd->queues[idx];
}

static bool rdmx_disk_count_rq(struct request *rq, void *data)
{
	struct rdmx_dq_req *req = blk_mq_rq_to_pdu(rq);
	u64 *n = data;

	if (READ_ONCE(req->in_flight) && (!n[1] || req->q == (void *)n[1]))
		n[0]++;
	return true;
}

/* Requests in flight on @q, or on the whole map when @q is NULL. */
static u64 rdmx_disk_in_flight(struct rdmx_disk *bd, struct rdmx_dq *q)
{
	u64 n[2] = { 0, (unsigned long)q };

	blk_mq_tagset_busy_iter(&bd->tag_set, rdmx_disk_count_rq, n);
	return n[0];
}

/* A counter (at @off in the stats) of @q, or summed over the map's queues. */
static u64 rdmx_dq_sum(struct rdmx_disk *bd, struct rdmx_dq *q, size_t off)
{
	unsigned int i;
	u64 sum = 0;

	for (i = 0; i < bd->nr_queues; i++)
		if (!q || q == &bd->queues[i])
			sum += atomic64_read((atomic64_t *)((u8 *)&bd->queues[i].stats + off));
	return sum;
}

#define RDMX_DQ_SUM(bd, q, field) \
	rdmx_dq_sum(bd, q, offsetof(struct rdmx_dq_stats, field))

static ssize_t rdmx_disk_lat_hist(struct rdmx_disk *bd, struct rdmx_dq *q,
				  char *buf)
{
	int len = 0, i;
	u64 n;

	for (i = 0; i < RDMX_DISK_LAT_BUCKETS; i++) {
		n = rdmx_dq_sum(bd, q, offsetof(struct rdmx_dq_stats, lat) +
				i * sizeof(atomic64_t));
		len += sysfs_emit_at(buf, len, "%s%llu", i ? " " : "", n);
	}
	len += sysfs_emit_at(buf, len, "\n");
	return len;
}

/*
 * One show function per attribute, generated. RDMX_DISK_SHOW: a map's own
 * (in /sys/block/rdmxbN/rdmx); RDMX_DQ_COUNTER: a counter that the map
 * shows summed over its queues and each queue (queues/Q) shows its own.
 */
#define RDMX_DISK_SHOW(_name, _fmt, _expr)				\
static ssize_t rdmx_disk_##_name##_show(struct kobject *kobj,		\
					struct kobj_attribute *a,	\
					char *buf)			\
{									\
	struct rdmx_disk *bd = rdmx_disk_of_kobj(kobj);			\
									\
	return sysfs_emit(buf, _fmt "\n", _expr);			\
}									\
static struct kobj_attribute rdmx_disk_attr_##_name =			\
	__ATTR(_name, 0444, rdmx_disk_##_name##_show, NULL)

#define RDMX_DQ_COUNTER(_name, _expr)					\
static u64 rdmx_dq_##_name##_val(struct rdmx_disk *bd,			\
				 struct rdmx_dq *q)			\
{									\
	return _expr;							\
}									\
static ssize_t rdmx_disk_##_name##_show(struct kobject *kobj,		\
					struct kobj_attribute *a,	\
					char *buf)			\
{									\
	u64 v = rdmx_dq_##_name##_val(rdmx_disk_of_kobj(kobj), NULL);	\
									\
	return sysfs_emit(buf, "%llu\n", v);				\
}									\
static ssize_t rdmx_dq_##_name##_show(struct kobject *kobj,		\
				      struct kobj_attribute *a,	\
				      char *buf)			\
{									\
	struct rdmx_dq *q = rdmx_dq_of_kobj(kobj);			\
									\
	if (!q)								\
		return -ENODEV;						\
	return sysfs_emit(buf, "%llu\n", rdmx_dq_##_name##_val(q->bd, q)); \
}									\
static struct kobj_attribute rdmx_disk_attr_##_name = {		\
	.attr = { .name = #_name, .mode = 0444 },			\
	.show = rdmx_disk_##_name##_show,				\
};									\
static struct kobj_attribute rdmx_dq_attr_##_name = {			\
	.attr = { .name = #_name, .mode = 0444 },			\
	.show = rdmx_dq_##_name##_show,				\
}

RDMX_DISK_SHOW(server, "%pISpc", &bd->addr);
RDMX_DISK_SHOW(export, "%s", bd->name);
RDMX_DISK_SHOW(state, "%s", rdmx_fsm_name(&rdmx_disk_fsm, READ_ONCE(bd->state)));
RDMX_DISK_SHOW(serial, "%pUb", &bd->exp_uuid);
RDMX_DISK_SHOW(nr_queues, "%u", bd->nr_queues);
RDMX_DISK_SHOW(queue_depth, "%u", bd->depth);
RDMX_DISK_SHOW(loss_timeout_ms, "%u", bd->loss_timeout_ms);
RDMX_DISK_SHOW(generation, "%llu", READ_ONCE(bd->generation));
RDMX_DISK_SHOW(reconnects, "%lld", atomic64_read(&bd->reconnects));

RDMX_DQ_COUNTER(reads, RDMX_DQ_SUM(bd, q, reads));
RDMX_DQ_COUNTER(writes, RDMX_DQ_SUM(bd, q, writes));
RDMX_DQ_COUNTER(read_bytes, RDMX_DQ_SUM(bd, q, read_bytes));
RDMX_DQ_COUNTER(write_bytes, RDMX_DQ_SUM(bd, q, write_bytes));
RDMX_DQ_COUNTER(in_flight, rdmx_disk_in_flight(bd, q));
RDMX_DQ_COUNTER(errors, RDMX_DQ_SUM(bd, q, errors));
RDMX_DQ_COUNTER(timeouts, RDMX_DQ_SUM(bd, q, timeouts));
RDMX_DQ_COUNTER(slow, RDMX_DQ_SUM(bd, q, slow));
RDMX_DQ_COUNTER(requeues, RDMX_DQ_SUM(bd, q, requeues));
RDMX_DQ_COUNTER(inline_reads, RDMX_DQ_SUM(bd, q, inline_reads));
RDMX_DQ_COUNTER(cmd_batched, RDMX_DQ_SUM(bd, q, cmd_batched));
RDMX_DQ_COUNTER(cmd_batches, RDMX_DQ_SUM(bd, q, cmd_batches));
RDMX_DQ_COUNTER(imm_writes, RDMX_DQ_SUM(bd, q, imm_writes));
RDMX_DQ_COUNTER(staged_writes, RDMX_DQ_SUM(bd, q, staged_writes));

static ssize_t rdmx_disk_lat_hist_show(struct kobject *kobj,
				       struct kobj_attribute *a, char *buf)
{
	return rdmx_disk_lat_hist(rdmx_disk_of_kobj(kobj), NULL, buf);
}

static ssize_t rdmx_dq_lat_hist_show(struct kobject *kobj,
				     struct kobj_attribute *a, char *buf)
{
	struct rdmx_dq *q = rdmx_dq_of_kobj(kobj);

	if (!q)
		return -ENODEV;
	return rdmx_disk_lat_hist(q->bd, q, buf);
}

static struct kobj_attribute rdmx_disk_attr_lat_hist =
	__ATTR(lat_hist, 0444, rdmx_disk_lat_hist_show, NULL);
static struct kobj_attribute rdmx_dq_attr_lat_hist =
	__ATTR(lat_hist, 0444, rdmx_dq_lat_hist_show, NULL);

static struct attribute *rdmx_disk_attrs[] = {
	&rdmx_disk_attr_server.attr,
	&rdmx_disk_attr_export.attr,
	&rdmx_disk_attr_state.attr,
	&rdmx_disk_attr_serial.attr,
	&rdmx_disk_attr_nr_queues.attr,
	&rdmx_disk_attr_queue_depth.attr,
	&rdmx_disk_attr_loss_timeout_ms.attr,
	&rdmx_disk_attr_generation.attr,
	&rdmx_disk_attr_reconnects.attr,
	&rdmx_disk_attr_reads.attr,
	&rdmx_disk_attr_writes.attr,
	&rdmx_disk_attr_read_bytes.attr,
	&rdmx_disk_attr_write_bytes.attr,
	&rdmx_disk_attr_in_flight.attr,
	&rdmx_disk_attr_errors.attr,
	&rdmx_disk_attr_timeouts.attr,
	&rdmx_disk_attr_slow.attr,
	&rdmx_disk_attr_requeues.attr,
	&rdmx_disk_attr_inline_reads.attr,
	&rdmx_disk_attr_cmd_batched.attr,
	&rdmx_disk_attr_cmd_batches.attr,
	&rdmx_disk_attr_imm_writes.attr,
	&rdmx_disk_attr_staged_writes.attr,
	&rdmx_disk_attr_lat_hist.attr,
	NULL,
};

static const struct attribute_group rdmx_disk_group = {
	.attrs = rdmx_disk_attrs,
};

static struct attribute *rdmx_dq_attrs[] = {
	&rdmx_dq_attr_reads.attr,
	&rdmx_dq_attr_writes.attr,
	&rdmx_dq_attr_read_bytes.attr,
	&rdmx_dq_attr_write_bytes.attr,
	&rdmx_dq_attr_in_flight.attr,
	&rdmx_dq_attr_errors.attr,
	&rdmx_dq_attr_timeouts.attr,
	&rdmx_dq_attr_slow.attr,
	&rdmx_dq_attr_requeues.attr,
	&rdmx_dq_attr_inline_reads.attr,
	&rdmx_dq_attr_cmd_batched.attr,
	&rdmx_dq_attr_cmd_batches.attr,
	&rdmx_dq_attr_imm_writes.attr,
	&rdmx_dq_attr_staged_writes.attr,
	&rdmx_dq_attr_lat_hist.attr,
	NULL,
};

static const struct attribute_group rdmx_dq_group = {
	.attrs = rdmx_dq_attrs,
};

/* The disk's serial, where udev looks for one (ID_SERIAL, by-id links). */
static ssize_t wwid_show(struct device *dev, struct device_attribute *attr,
			 char *buf)
{
	struct rdmx_disk *bd = dev_to_disk(dev)->private_data;

	return sysfs_emit(buf, "rdmx.%pUb\n", &bd->exp_uuid);
}
static DEVICE_ATTR_RO(wwid);

static struct attribute *rdmx_disk_top_attrs[] = {
	&dev_attr_wwid.attr,
	NULL,
};

static const struct attribute_group rdmx_disk_top_group = {
	.attrs = rdmx_disk_top_attrs,
};

const struct attribute_group *rdmx_disk_groups[] = {
	&rdmx_disk_top_group,
	NULL,
};

/**
 * rdmx_disk_sysfs_del() - remove a disk's rdmx directories
 * @bd: the disk; what rdmx_disk_sysfs_add() made, or part of it
 *
 * No show function runs once this returns.
 *
 * Context: process context.
 */
void rdmx_disk_sysfs_del(struct rdmx_disk *bd)
{
	unsigned int i;

	for (i = 0; i < bd->nr_queues; i++) {
		if (!bd->queues[i].kobj)
			continue;
		kobject_del(bd->queues[i].kobj);
		kobject_put(bd->queues[i].kobj);
		bd->queues[i].kobj = NULL;
	}
	if (bd->queues_kobj) {
		kobject_del(bd->queues_kobj);
		kobject_put(bd->queues_kobj);
		bd->queues_kobj = NULL;
	}
	if (bd->kobj) {
		kobject_del(bd->kobj);
		kobject_put(bd->kobj);
		bd->kobj = NULL;
	}
}

/**
 * rdmx_disk_sysfs_add() - create /sys/block/rdmxbN/rdmx and its queues/Q
 * @bd: the disk, added to the block layer
 *
 * Context: process context.
 * Return: 0 or a negative errno; nothing is left behind on failure.
 */
int rdmx_disk_sysfs_add(struct rdmx_disk *bd)
{
	char name[12];
	unsigned int i;
	int ret;

	bd->kobj = kobject_create_and_add("rdmx", &disk_to_dev(bd->disk)->kobj);
	if (!bd->kobj)
		return -ENOMEM;
	ret = sysfs_create_group(bd->kobj, &rdmx_disk_group);
	if (ret)
		goto out_del;
	bd->queues_kobj = kobject_create_and_add("queues", bd->kobj);
	if (!bd->queues_kobj) {
		ret = -ENOMEM;
		goto out_del;
	}
	for (i = 0; i < bd->nr_queues; i++) {
		snprintf(name, sizeof(name), "%u", i);
		bd->queues[i].kobj = kobject_create_and_add(name,
							    bd->queues_kobj);
		if (!bd->queues[i].kobj) {
			ret = -ENOMEM;
			goto out_del;
		}
		ret = sysfs_create_group(bd->queues[i].kobj, &rdmx_dq_group);
		if (ret)
			goto out_del;
	}
	return 0;

out_del:
	rdmx_disk_sysfs_del(bd);
	return ret;
}
