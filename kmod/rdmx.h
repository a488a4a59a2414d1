/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmx: private declarations shared by the module's files.
 */
#ifndef _RDMX_H
#define _RDMX_H

#include <linux/kref.h>
#include <linux/minmax.h>
#include <linux/random.h>
#include <linux/completion.h>
#include <linux/types.h>
#include <kunit/visibility.h>
#include <rdma/ib_verbs.h>
#include <linux/rdmx.h>

#define RDMX_MODULE_VERSION	"0.1.0"

/* Largest entry_size RDMX_IOC_LIST_DEVICES accepts (ABI, whatever PAGE_SIZE). */
#define RDMX_ENTRY_SIZE_MAX	4096

/**
 * struct rdmx_device - an RDMA device rdmx tracks
 * @ref: references; the device table holds one while the device is listed
 * @released: completed when the last reference is dropped
 * @ibdev: the RDMA core's device, valid while any reference is held
 * @removing: set (WRITE_ONCE) when the remove callback starts; whoever
 *	waits for one of its ports stops waiting (the callback waits for them)
 *
 * Created by the ib_client's add callback and removed by its remove
 * callback, which unlinks the device, drops the table's reference and waits
 * for every other holder to drop theirs before returning to the RDMA core.
 * Holders must therefore put their reference promptly; they never see an
 * @ibdev that the core has already torn down.
 */
struct rdmx_device {
	struct kref ref;
	struct completion released;
	struct ib_device *ibdev;
	bool removing;
};

/* device.c */
int rdmx_devices_init(void);
void rdmx_devices_exit(void);
struct rdmx_device *rdmx_device_find_get(const char *name);
void rdmx_device_put(struct rdmx_device *rdev);
unsigned int rdmx_device_count_ports(void);
unsigned int rdmx_device_list(struct rdmx_device_info *out, unsigned int room,
			      unsigned int *total);

/* ioctl.c */
long rdmx_ioctl_dispatch(unsigned int cmd, void __user *uarg);
u64 rdmx_features(void);
int rdmx_copy_args_out(void __user *uarg, void *karg, size_t ksize, u32 usize);
int rdmx_copy_args_in(void *karg, size_t ksize, size_t min_size,
		      const void __user *uarg, u32 *usize);

/* uep.c */
struct file;
struct poll_table_struct;
long rdmx_uep_ioctl(struct file *file, unsigned int cmd, void __user *uarg);
__poll_t rdmx_uep_poll(struct file *file, struct poll_table_struct *wait);
void rdmx_uep_set_fops(const struct file_operations *fops);

/* sysfs.c */
struct kobject *rdmx_sysfs_root(void);

/* device.c */
struct notifier_block;

/* Device events, for rdmx_device_notifier_register() */
enum {
	RDMX_DEVICE_ADDED = 1,	/* tracked now */
	RDMX_DEVICE_REMOVING,	/* release what holds a reference on it */
};

int rdmx_device_notifier_register(struct notifier_block *nb);
void rdmx_device_notifier_unregister(struct notifier_block *nb);
struct rdmx_device *rdmx_device_get_ibdev(struct ib_device *ibdev);
bool rdmx_port_usable(struct ib_device *dev, u32 port);
bool rdmx_port_wait(struct ib_device *dev, u32 port, unsigned long deadline,
		    bool (*stop)(void *arg), void *arg, const char *who);

/* Reconnect backoff: the first wait, and each one after doubling it */
#define RDMX_RECONNECT_MIN_MS		100

/**
 * rdmx_backoff_ms() - how long to wait before a reconnect attempt
 * @attempts: attempts that failed so far
 * @max_ms: the longest wait (at least RDMX_RECONNECT_MIN_MS is used)
 *
 * RDMX_RECONNECT_MIN_MS doubled per attempt up to @max_ms, plus up to
 * half again at random, so that many clients do not retry in step.
 *
 * Context: any context.
 * Return: milliseconds.
 */
static inline unsigned int rdmx_backoff_ms(unsigned int attempts,
					   unsigned int max_ms)
{
	unsigned int ms = RDMX_RECONNECT_MIN_MS << min(attempts, 10U);

	ms = min(ms, max_t(unsigned int, max_ms, RDMX_RECONNECT_MIN_MS));
	return ms + get_random_u32_below(ms / 2 + 1);
}

#if IS_ENABLED(CONFIG_KUNIT)
u8 rdmx_transport_of(const struct ib_device *ibdev, u32 port);
u8 rdmx_atomic_cap_of(enum ib_atomic_cap cap);
u32 rdmx_mtu_bytes(enum ib_mtu mtu);
int rdmx_check_info(const struct rdmx_info *info);
int rdmx_check_list_devices(const struct rdmx_list_devices *ld);
#endif

#endif /* _RDMX_H */
