/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmx core: what the core offers the services (kmod/msg, kmod/blk) and
 * the module's init (kmod/module.c). Nothing here names a service: a
 * service registers with the core (struct rdmx_service, struct
 * rdmx_cm_service in cm.h, device notifiers) and the core calls it through
 * what it registered. See Documentation/architecture.rst.
 */
#ifndef _RDMX_H
#define _RDMX_H

#include <linux/kref.h>
#include <linux/minmax.h>
#include <linux/random.h>
#include <linux/completion.h>
#include <linux/types.h>
#include <linux/list.h>
#include <linux/socket.h>
#include <linux/sysfs.h>
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

struct file;
struct poll_table_struct;

/**
 * struct rdmx_file_ops - what a /dev/rdmx file is, given by the one service
 *	that owns the files (the message service: each file is an endpoint)
 * @open: set up @file->private_data. Return: 0 or a negative errno.
 * @release: undo @open
 * @poll: poll(2) on the file
 * @ioctl: an ioctl on the file; -ENOIOCTLCMD for a command that is not the
 *	file's, which then goes to rdmx_ioctl_dispatch()
 *
 * Context: process context, as the file_operations they stand for.
 */
struct rdmx_file_ops {
	int (*open)(struct file *file);
	void (*release)(struct file *file);
	__poll_t (*poll)(struct file *file, struct poll_table_struct *wait);
	long (*ioctl)(struct file *file, unsigned int cmd, void __user *uarg);
};

/**
 * struct rdmx_service - a service built into the module
 * @name: for log lines ("message", "block")
 * @features: the RDMX_FEATURE_* bits it implements (RDMX_IOC_GET_INFO)
 * @ioctl: a /dev/rdmx ioctl that is not a file's (administration:
 *	exports, maps, closing a session); -ENOIOCTLCMD for a command that
 *	is not the service's. May be NULL.
 * @file: the file operations, for the one service that owns the files;
 *	NULL for the others
 * @node: on the core's list, from rdmx_service_register() to
 *	rdmx_service_unregister()
 */
struct rdmx_service {
	const char *name;
	u64 features;
	long (*ioctl)(unsigned int cmd, void __user *uarg);
	const struct rdmx_file_ops *file;
	struct list_head node;
};

/* core.c */
extern struct workqueue_struct *rdmx_wq;
int rdmx_core_init(void);
void rdmx_core_exit(void);
int rdmx_core_publish(void);
void rdmx_core_unpublish(void);
int rdmx_service_register(struct rdmx_service *svc);
void rdmx_service_unregister(struct rdmx_service *svc);
const struct file_operations *rdmx_file_fops(void);
long rdmx_services_ioctl(unsigned int cmd, void __user *uarg);

/* ioctl.c */
long rdmx_ioctl_dispatch(unsigned int cmd, void __user *uarg);
u64 rdmx_features(void);
int rdmx_copy_args_out(void __user *uarg, void *karg, size_t ksize, u32 usize);
int rdmx_copy_args_in(void *karg, size_t ksize, size_t min_size,
		      const void __user *uarg, u32 *usize);

/* listener.c */
int rdmx_listeners_init(void);
void rdmx_listeners_exit(void);
int rdmx_listener_get(const struct sockaddr *addr, bool persistent);
void rdmx_listener_put(const struct sockaddr *addr, bool persistent);
int rdmx_listener_del(const struct sockaddr *addr);

/* rdma.c */
struct rdma_cm_id;
int rdmx_rc_qp_create(struct rdma_cm_id *cm_id, struct ib_pd *pd,
		      struct ib_cq *cq, void *context,
		      struct ib_qp_cap *cap);

/**
 * struct rdmx_rx_buf - the memory one receive work request fills
 * @cqe: its completion entry; the owner sets @cqe.done
 * @hdr: the first scatter entry: @hdr_len bytes of kmalloc()ed memory
 * @data: the second, a page of which @data_len bytes are received, or NULL
 * @hdr_dma: @hdr's DMA address, 0 while unmapped
 * @data_dma: @data's DMA address, 0 while unmapped
 * @hdr_len: bytes of @hdr
 * @data_len: bytes of @data, 0 without it
 * @data_first: @data is the first scatter entry and @hdr the second, so
 *	that a message of up to @data_len bytes lands page-aligned; set by
 *	the owner before rdmx_rx_buf_post(), for a buffer with @data
 *
 * The owner embeds one in each of its receive buffers and finds its own
 * from @cqe with container_of(). Set up with rdmx_rx_buf_init(), posted
 * with rdmx_rx_buf_post(), read after rdmx_rx_buf_sync(), released with
 * rdmx_rx_buf_exit().
 */
struct rdmx_rx_buf {
	struct ib_cqe cqe;
	void *hdr;
	struct page *data;
	u64 hdr_dma;
	u64 data_dma;
	u32 hdr_len;
	u32 data_len;
	bool data_first;
};

void *rdmx_rx_hdr_alloc(struct ib_device *dev, u32 len, gfp_t gfp, u64 *dma);
void rdmx_rx_hdr_free(struct ib_device *dev, void *buf, u32 len, u64 dma);
void *rdmx_rx_buf_swap_hdr(struct ib_device *dev, struct rdmx_rx_buf *rb,
			   void *buf, u64 dma);
int rdmx_rx_buf_init(struct ib_device *dev, struct rdmx_rx_buf *rb,
		     u32 hdr_len, u32 data_len);
void rdmx_rx_buf_exit(struct ib_device *dev, struct rdmx_rx_buf *rb);
int rdmx_rx_buf_post(struct ib_qp *qp, struct rdmx_rx_buf *rb);
void rdmx_rx_buf_sync(struct ib_device *dev, struct rdmx_rx_buf *rb,
		      u32 byte_len);

/* addr.c */
int rdmx_addr_from_user(const struct rdmx_sockaddr *ua,
			struct sockaddr_storage *ss, bool any_ok);
void rdmx_addr_to_user(const struct sockaddr *sa, struct rdmx_sockaddr *ua);
void rdmx_addr_copy(struct sockaddr_storage *dst, const struct sockaddr *src);
int rdmx_addr_prepare(struct sockaddr_storage *dst, const struct sockaddr *src);
bool rdmx_addr_same_host(const struct sockaddr *a, const struct sockaddr *b);
bool rdmx_addr_equal(const struct sockaddr *a, const struct sockaddr *b);
bool rdmx_addr_any(const struct sockaddr *sa);
u16 rdmx_addr_port(const struct sockaddr *sa);
void rdmx_addr_set_port(struct sockaddr *sa, u16 port);

/* sysfs.c */
int rdmx_sysfs_init(void);
void rdmx_sysfs_exit(void);
struct kobject *rdmx_sysfs_root(void);

/*
 * The core's tunables, in /sys/kernel/rdmx: the liveness and recovery of
 * every service's connections. Services keep their own (RDMX_PARAM()).
 */
struct rdmx_params {
	unsigned int hb_interval_ms;	/* probe after this long with no traffic */
	unsigned int hb_miss_max;	/* probes unanswered before the peer is dead */
	unsigned int loss_timeout_ms;	/* give up reconnecting after this */
	unsigned int connect_timeout_ms;	/* first connection */
	unsigned int reconnect_max_ms;	/* largest backoff between attempts */
};

extern struct rdmx_params rdmx_params;

/**
 * struct rdmx_param_attr - a tunable in /sys/kernel/rdmx (RDMX_PARAM())
 * @attr: the file, mode 0644
 * @val: the value; readers use READ_ONCE()
 * @min: smallest value a write may set
 * @max: largest
 */
struct rdmx_param_attr {
	struct kobj_attribute attr;
	unsigned int *val;
	unsigned int min;
	unsigned int max;
};

ssize_t rdmx_param_show(struct kobject *kobj, struct kobj_attribute *a,
			char *buf);
ssize_t rdmx_param_store(struct kobject *kobj, struct kobj_attribute *a,
			 const char *buf, size_t count);

/* VAR: the attribute; NAME: its file; LVALUE: the value; MIN, MAX: bounds */
#define RDMX_PARAM(VAR, NAME, LVALUE, MIN, MAX)				\
	static struct rdmx_param_attr VAR = {				\
		.attr = __ATTR(NAME, 0644, rdmx_param_show, rdmx_param_store), \
		.val = &(LVALUE),					\
		.min = MIN,						\
		.max = MAX,						\
	}

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
bool rdmx_port_wait(struct ib_device *dev, u32 port, unsigned long deadline,
		    bool (*stop)(void *arg), void *arg, const char *who);

/* rdma_cm address and route resolution, and one connection attempt, at most */
#define RDMX_RESOLVE_TIMEOUT_MS		5000
#define RDMX_CONNECT_ATTEMPT_MS		8000

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
