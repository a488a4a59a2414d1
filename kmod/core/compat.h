/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmx compatibility layer: the code is written against the newest kernel
 * API it supports; this header maps older kernels onto it, in the manner of
 * the backports project's compat headers.
 *
 * Supported: Linux 6.1 (Debian 12's own kernel) to the newest Debian ships;
 * Kbuild refuses older kernels.
 * Which API a kernel has is decided by feature probes in Kbuild (they grep
 * the kernel's own headers and Module.symvers, so distribution backports
 * are seen as such), never by LINUX_VERSION_CODE: each probe defines
 * RDMX_HAVE_<FEATURE> when the kernel has the newer form. The kernel
 * versions named below say where upstream changed; they are for readers.
 *
 * Include this after every kernel header a file uses.
 */
#ifndef RDMX_COMPAT_H
#define RDMX_COMPAT_H

#include <linux/blk-mq.h>
#include <linux/blkdev.h>
#include <linux/shmem_fs.h>
#include <linux/srcu.h>
#include <linux/netdevice.h>
#include <rdma/ib_verbs.h>

/* <linux/unaligned.h> (6.12; <asm/unaligned.h> before) */
#ifdef RDMX_HAVE_LINUX_UNALIGNED_H
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/*
 * ib_device_get_netdev() (exported in 6.2; internal to ib_core in 6.1):
 * the core's own body, which reads only what struct ib_device makes
 * public.
 */
#ifndef RDMX_HAVE_IB_DEVICE_GET_NETDEV
static inline struct net_device *ib_device_get_netdev(struct ib_device *ib_dev,
						      u32 port)
{
	struct ib_port_data *pdata;
	struct net_device *res;

	if (!rdma_is_port_valid(ib_dev, port) || !ib_dev->port_data)
		return NULL;
	pdata = &ib_dev->port_data[port];
	if (ib_dev->ops.get_netdev)
		return ib_dev->ops.get_netdev(ib_dev, port);
	spin_lock(&pdata->netdev_lock);
	res = rcu_dereference_protected(pdata->netdev,
					lockdep_is_held(&pdata->netdev_lock));
	dev_hold(res);
	spin_unlock(&pdata->netdev_lock);
	return res;
}
#endif

/* blk_mq_quiesce_tagset() and blk_mq_unquiesce_tagset() (6.2) */
#ifndef RDMX_HAVE_BLK_MQ_QUIESCE_TAGSET
static inline void rdmx_tagset_each_queue(struct blk_mq_tag_set *set,
					  void (*fn)(struct request_queue *q))
{
	struct request_queue *q;

	mutex_lock(&set->tag_list_lock);
	list_for_each_entry(q, &set->tag_list, tag_set_list)
		fn(q);
	mutex_unlock(&set->tag_list_lock);
}

static inline void blk_mq_quiesce_tagset(struct blk_mq_tag_set *set)
{
	rdmx_tagset_each_queue(set, blk_mq_quiesce_queue);
}

static inline void blk_mq_unquiesce_tagset(struct blk_mq_tag_set *set)
{
	rdmx_tagset_each_queue(set, blk_mq_unquiesce_queue);
}
#endif

/*
 * block_device_operations.open takes the gendisk and a blk_mode_t since
 * 6.5; before, the block_device and an fmode_t. A driver declares its open
 * method's parameters as RDMX_BDEV_OPEN_PARAMS and finds its gendisk with
 * RDMX_BDEV_OPEN_DISK.
 */
#ifdef RDMX_HAVE_BDEV_OPEN_GENDISK
#define RDMX_BDEV_OPEN_PARAMS	struct gendisk *disk, blk_mode_t mode
#define RDMX_BDEV_OPEN_DISK	(disk)
#else
#define RDMX_BDEV_OPEN_PARAMS	struct block_device *bdev, fmode_t mode
#define RDMX_BDEV_OPEN_DISK	(bdev->bd_disk)
#endif

/* blk_mq_tag_set.flags: BLK_MQ_F_SHOULD_MERGE went away in 6.14 (merging
 * is always on); before, a driver that wants merges asks for them.
 */
#ifdef RDMX_HAVE_BLK_MQ_F_SHOULD_MERGE
#define RDMX_BLK_MQ_F_MERGE	BLK_MQ_F_SHOULD_MERGE
#else
#define RDMX_BLK_MQ_F_MERGE	0
#endif

/* blk_mq_ops.init_request's NUMA node is an int since 7.0, unsigned before. */
#ifdef RDMX_HAVE_INIT_REQUEST_INT_NODE
#define RDMX_NUMA_NODE_T	int
#else
#define RDMX_NUMA_NODE_T	unsigned int
#endif

/* blk_rq_map_sg() lost its request_queue argument in 6.15. */
#ifndef RDMX_HAVE_BLK_RQ_MAP_SG_2
#define blk_rq_map_sg(rq, sgl)						\
	({								\
		struct request *__rq = (rq);				\
									\
		blk_rq_map_sg(__rq->q, __rq, sgl);			\
	})
#endif

/*
 * queue_limits.features and BLK_FEAT_* (6.11), limits passed to
 * blk_mq_alloc_disk() (6.9). rdmx_alloc_disk() takes the limits and the
 * features (BLK_FEAT_WRITE_CACHE, BLK_FEAT_FUA) on every kernel; before
 * 6.9 it applies them to the new disk's queue itself.
 */
#ifndef RDMX_HAVE_BLK_FEAT
typedef unsigned int __bitwise blk_features_t;
#define BLK_FEAT_WRITE_CACHE	((__force blk_features_t)(1u << 0))
#define BLK_FEAT_FUA		((__force blk_features_t)(1u << 1))
#endif

static inline struct gendisk *rdmx_alloc_disk(struct blk_mq_tag_set *set,
					      struct queue_limits *lim,
					      blk_features_t features,
					      void *queuedata)
{
#if defined(RDMX_HAVE_BLK_FEAT)
	lim->features |= features;
	return blk_mq_alloc_disk(set, lim, queuedata);
#elif defined(RDMX_HAVE_BLK_ALLOC_DISK_LIMITS)
	/* 6.9 and 6.10: the write cache is still set on the queue. */
	struct gendisk *disk = blk_mq_alloc_disk(set, lim, queuedata);

	if (!IS_ERR(disk))
		blk_queue_write_cache(disk->queue,
				      !!(features & BLK_FEAT_WRITE_CACHE),
				      !!(features & BLK_FEAT_FUA));
	return disk;
#else
	struct gendisk *disk = blk_mq_alloc_disk(set, queuedata);
	struct request_queue *q;

	if (IS_ERR(disk))
		return disk;
	q = disk->queue;
	blk_queue_logical_block_size(q, lim->logical_block_size);
	blk_queue_physical_block_size(q, lim->physical_block_size);
	blk_queue_io_min(q, lim->io_min);
	blk_queue_max_segments(q, lim->max_segments);
	blk_queue_virt_boundary(q, lim->virt_boundary_mask);
	blk_queue_max_hw_sectors(q, lim->max_hw_sectors);
	if (lim->max_hw_discard_sectors) {
		blk_queue_max_discard_sectors(q, lim->max_hw_discard_sectors);
		blk_queue_max_discard_segments(q, lim->max_discard_segments);
		q->limits.discard_granularity = lim->discard_granularity;
	}
	blk_queue_max_write_zeroes_sectors(q, lim->max_write_zeroes_sectors);
	blk_queue_write_cache(q, !!(features & BLK_FEAT_WRITE_CACHE),
			      !!(features & BLK_FEAT_FUA));
	return disk;
#endif
}

/*
 * A shmem file for a RAM export. shmem_kernel_file_setup() (no LSM checks
 * on a kernel-internal inode) is exported to modules since 6.2; 6.1
 * exports only shmem_file_setup(). Both take vma_flags_t since 7.0.
 */
static inline struct file *rdmx_shmem_file_setup(const char *name, loff_t size)
{
#ifdef RDMX_HAVE_SHMEM_VMA_FLAGS
	vma_flags_t flags = mk_vma_flags(VMA_NORESERVE_BIT);
#else
	unsigned long flags = VM_NORESERVE;
#endif

#ifdef RDMX_HAVE_SHMEM_KERNEL_FILE_SETUP
	return shmem_kernel_file_setup(name, size, flags);
#else
	return shmem_file_setup(name, size, flags);
#endif
}

/*
 * For the KUnit suites (files that include <kunit/test.h> before this):
 * kunit_vm_mmap() (6.10) gives a case user memory; before it, a module
 * cannot give a test thread an mm, and such cases are skipped.
 */
#if defined(_KUNIT_TEST_H) && !defined(RDMX_HAVE_KUNIT_VM_MMAP)
#define kunit_vm_mmap(test, ...)					\
	({								\
		kunit_skip(test, "no kunit_vm_mmap() in this kernel");	\
		0UL;							\
	})
#endif

/* MODULE_IMPORT_NS() takes a string since 6.13, a bare name before. */
#ifndef RDMX_HAVE_IMPORT_NS_STRING
#undef MODULE_IMPORT_NS
#define MODULE_IMPORT_NS(ns)	MODULE_INFO(import_ns, ns)
#endif

/*
 * srcu_down_read() and srcu_up_read() (6.3): an SRCU read side that may end
 * in another context than it began. Before them, the same counters without
 * lockdep's tracking of the reader, which would take the end in another
 * context for a bug.
 */
#ifndef RDMX_HAVE_SRCU_DOWN_READ
static inline int srcu_down_read(struct srcu_struct *ssp)
{
	return __srcu_read_lock(ssp);
}

static inline void srcu_up_read(struct srcu_struct *ssp, int idx)
{
	__srcu_read_unlock(ssp, idx);
}
#endif

/* KUNIT_CASE_SLOW() (6.6): a plain case before it. */
#if defined(_KUNIT_TEST_H) && !defined(KUNIT_CASE_SLOW)
#define KUNIT_CASE_SLOW(test_name)	KUNIT_CASE(test_name)
#endif

#endif /* RDMX_COMPAT_H */
