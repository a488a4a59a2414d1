// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx: RDMA device tracking.
 *
 * An ib_client follows RDMA devices as the core adds and removes them (a
 * soft-RoCE device made with "rdma link add" after rdmx loads, a NIC
 * unplugged while it is loaded). Each one is kept as a refcounted
 * struct rdmx_device in an xarray indexed by the core's device index.
 *
 * Locking: rdmx_devices_lock (a mutex) serialises the add and remove
 * callbacks against walks of the table. Walks hold it across
 * ib_query_port(), which may sleep; removal therefore waits for a walk in
 * progress, so a walker never touches a device the core is tearing down.
 * Lookups that must outlive the lock take a reference (rdmx_device_find_get).
 *
 * The rest of rdmx hears of devices through rdmx_device_notifier_register()
 * (a blocking notifier chain): RDMX_DEVICE_ADDED once a device is tracked
 * (listeners waiting for a device bind again), RDMX_DEVICE_REMOVING from
 * the remove callback before it waits for the device's references.
 *
 * Who handles a device going away: the remove callback, through
 * RDMX_DEVICE_REMOVING, for the message service's sessions (their
 * connections on the device fail, and the callback waits for the
 * references those held); rdma_cm's DEVICE_REMOVAL event for everything
 * that owns an rdma_cm id: listeners, block server queues and block client
 * queues, each in its own event handler. The RDMA core removes its clients
 * newest first, so this remove callback runs before rdma_cm's: it must not
 * wait for anything that only a DEVICE_REMOVAL event releases.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/lockdep.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/notifier.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#include "compat.h"
#include "rdmx.h"
#include "rdmx_trace.h"

static BLOCKING_NOTIFIER_HEAD(rdmx_device_chain);

/**
 * rdmx_device_notifier_register() - hear of devices added and removed
 * @nb: its notifier_call gets RDMX_DEVICE_ADDED or RDMX_DEVICE_REMOVING
 *	with the struct ib_device, in process context
 *
 * Context: process context.
 * Return: 0.
 */
int rdmx_device_notifier_register(struct notifier_block *nb)
{
	return blocking_notifier_chain_register(&rdmx_device_chain, nb);
}

/**
 * rdmx_device_notifier_unregister() - stop hearing of devices
 * @nb: a registered notifier
 *
 * Context: process context; waits for a call in progress.
 */
void rdmx_device_notifier_unregister(struct notifier_block *nb)
{
	blocking_notifier_chain_unregister(&rdmx_device_chain, nb);
}

/**
 * rdmx_port_usable() - whether a port can carry a MAD now
 * @dev: the device
 * @port: the port
 *
 * Active, and for RoCE and iWARP its netdev running with a carrier. The
 * netdev is checked too because a closing netdev stops running (and drops
 * what is sent) before rxe hears of it and marks the port down: a
 * connection can fail in that window and see the port active. Callers
 * wait for this before rdma_disconnect() after a loss: on soft-RoCE
 * (rdma_rxe, 6.12) a MAD sent while the netdev is down fails in
 * transmission, and that moves the GSI QP to the error state for good, so
 * the host answers no connection request again until the device is
 * recreated.
 *
 * Context: process context.
 * Return: true when usable, or when it cannot be told.
 */
static bool rdmx_port_usable(struct ib_device *dev, u32 port)
{
	struct ib_port_attr attr;
	struct net_device *ndev;
	bool up;

	if (ib_query_port(dev, port, &attr))
		return true;	/* cannot tell: do not wait */
	if (attr.state != IB_PORT_ACTIVE)
		return false;
	ndev = ib_device_get_netdev(dev, port);
	if (!ndev)
		return true;	/* InfiniBand: the port state is all */
	up = netif_running(ndev) && netif_carrier_ok(ndev);
	dev_put(ndev);
	return up;
}

/**
 * rdmx_port_wait() - wait for a port to be usable before a disconnect
 * @dev: the device
 * @port: the port
 * @deadline: give up at this time (jiffies)
 * @stop: when it returns true for @arg, stop waiting (the object went)
 * @arg: for @stop
 * @who: what waits, for the log line ("session 3")
 *
 * See rdmx_port_usable() for why a disconnect waits; logs once that it
 * does. A signal (in a process that can get one) ends the wait too.
 *
 * Context: process context; sleeps.
 * Return: true when the port is usable, false when the wait ended first.
 */
bool rdmx_port_wait(struct ib_device *dev, u32 port, unsigned long deadline,
		    bool (*stop)(void *arg), void *arg, const char *who)
{
	bool logged = false;

	while (!rdmx_port_usable(dev, port)) {
		if (stop(arg) || !time_before(jiffies, deadline))
			return false;
		if (!logged)
			/* dev->name: see rdmx_device_fill_info() on renames. */
			pr_info_ratelimited("%s: waiting for port %s/%u to come up before disconnecting\n",
					    who, dev->name, port);
		logged = true;
		if (msleep_interruptible(100))
			return false;
	}
	return true;
}

static DEFINE_XARRAY(rdmx_devices);
static DEFINE_MUTEX(rdmx_devices_lock);

static struct ib_client rdmx_ib_client;

static void rdmx_device_release(struct kref *ref)
{
	struct rdmx_device *rdev = container_of(ref, struct rdmx_device, ref);

	complete(&rdev->released);
}

/**
 * rdmx_device_put() - drop a reference to a tracked device
 * @rdev: device from rdmx_device_find_get()
 *
 * Context: any context.
 */
void rdmx_device_put(struct rdmx_device *rdev)
{
	kref_put(&rdev->ref, rdmx_device_release);
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_device_put);

/**
 * rdmx_device_find_get() - look a tracked device up by name
 * @name: RDMA device name, e.g. "rxe0"
 *
 * Matches ibdev->name, an array the core rewrites in place on a rename
 * (see rdmx_device_fill_info()): a lookup that races a rename finds the
 * device under its old name or its new one, or misses it, like one made
 * just before or after. The core's own lookup by name is not exported on
 * every kernel rdmx supports.
 *
 * Context: process context; takes rdmx_devices_lock.
 * Return: the device with a reference held (drop it with
 * rdmx_device_put()), or NULL when rdmx tracks no device of that name.
 */
struct rdmx_device *rdmx_device_find_get(const char *name)
{
	struct rdmx_device *rdev, *found = NULL;
	unsigned long index;

	mutex_lock(&rdmx_devices_lock);
	xa_for_each(&rdmx_devices, index, rdev) {
		if (!strncmp(rdev->ibdev->name, name, IB_DEVICE_NAME_MAX)) {
			kref_get(&rdev->ref);
			found = rdev;
			break;
		}
	}
	mutex_unlock(&rdmx_devices_lock);
	return found;
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_device_find_get);

/**
 * rdmx_transport_of() - the uapi transport of one port
 * @ibdev: device
 * @port: port number, from 1
 *
 * Context: any context.
 * Return: one of RDMX_TRANSPORT_*.
 */
VISIBLE_IF_KUNIT u8 rdmx_transport_of(const struct ib_device *ibdev, u32 port)
{
	if (rdma_protocol_roce(ibdev, port))
		return RDMX_TRANSPORT_ROCE;
	if (rdma_protocol_iwarp(ibdev, port))
		return RDMX_TRANSPORT_IWARP;
	if (rdma_protocol_ib(ibdev, port))
		return RDMX_TRANSPORT_IB;
	return RDMX_TRANSPORT_UNKNOWN;
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_transport_of);

/**
 * rdmx_atomic_cap_of() - the uapi form of a device's atomic capability
 * @cap: the device's atomic_cap attribute
 *
 * Context: any context.
 * Return: one of RDMX_ATOMIC_*; anything unknown reads as none.
 */
VISIBLE_IF_KUNIT u8 rdmx_atomic_cap_of(enum ib_atomic_cap cap)
{
	switch (cap) {
	case IB_ATOMIC_HCA:
		return RDMX_ATOMIC_HCA;
	case IB_ATOMIC_GLOB:
		return RDMX_ATOMIC_GLOB;
	default:
		return RDMX_ATOMIC_NONE;
	}
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_atomic_cap_of);

/**
 * rdmx_mtu_bytes() - an IB MTU enumerator in bytes
 * @mtu: IB_MTU_* value as a port reports it
 *
 * Context: any context.
 * Return: the MTU in bytes, or 0 for a value outside the enumeration.
 */
VISIBLE_IF_KUNIT u32 rdmx_mtu_bytes(enum ib_mtu mtu)
{
	int bytes = ib_mtu_enum_to_int(mtu);

	return bytes > 0 ? bytes : 0;
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_mtu_bytes);

static u64 rdmx_cap_flags_of(const struct ib_device_attr *attr)
{
	u64 caps = 0;

	if (attr->device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS)
		caps |= RDMX_DEV_CAP_MEM_MGT_EXTENSIONS;
	if (attr->kernel_cap_flags & IBK_SG_GAPS_REG)
		caps |= RDMX_DEV_CAP_SG_GAPS_REG;
	if (attr->device_cap_flags & IB_DEVICE_RC_RNR_NAK_GEN)
		caps |= RDMX_DEV_CAP_RC_RNR_NAK_GEN;
	if (attr->kernel_cap_flags & IBK_BLOCK_MULTICAST_LOOPBACK)
		caps |= RDMX_DEV_CAP_BLOCK_MULTICAST;
	return caps;
}

/*
 * Describe one port of a tracked device. Every limit comes from the
 * device's attributes and a live port query, never from an assumption
 * about the device type. Called with rdmx_devices_lock held, which keeps
 * the device from being removed meanwhile; ib_query_port() may sleep.
 */
static void rdmx_device_fill_info(struct rdmx_device *rdev, u32 port,
				  struct rdmx_device_info *info)
{
	struct ib_device *ibdev = rdev->ibdev;
	const struct ib_device_attr *attr = &ibdev->attrs;
	struct ib_port_attr pattr;
	struct net_device *ndev;

	lockdep_assert_held(&rdmx_devices_lock);
	memset(info, 0, sizeof(*info));
	/*
	 * ibdev->name, not dev_name(): a rename frees the kobject's old name
	 * under the core's lock, which we do not hold; ibdev->name is an
	 * array the core rewrites in place.
	 */
	strscpy(info->name, ibdev->name, sizeof(info->name));
	info->node_guid = be64_to_cpu(ibdev->node_guid);
	info->index = ibdev->index;
	info->port = port;
	info->transport = rdmx_transport_of(ibdev, port);
	info->atomic_cap = rdmx_atomic_cap_of(attr->atomic_cap);
	info->max_qp = attr->max_qp;
	info->max_qp_wr = attr->max_qp_wr;
	info->max_send_sge = attr->max_send_sge;
	info->max_recv_sge = attr->max_recv_sge;
	info->max_cq = attr->max_cq;
	info->max_cqe = attr->max_cqe;
	info->max_mr = attr->max_mr;
	info->max_qp_rd_atom = attr->max_qp_rd_atom;
	info->max_qp_init_rd_atom = attr->max_qp_init_rd_atom;
	info->max_fast_reg_page_list_len = attr->max_fast_reg_page_list_len;
	info->max_mr_size = attr->max_mr_size;
	info->cap_flags = rdmx_cap_flags_of(attr);

	if (!ib_query_port(ibdev, port, &pattr)) {
		info->port_state = pattr.state;
		info->phys_state = pattr.phys_state;
		info->active_mtu = rdmx_mtu_bytes(pattr.active_mtu);
		info->max_mtu = rdmx_mtu_bytes(pattr.max_mtu);
		info->gid_tbl_len = pattr.gid_tbl_len;
		info->max_msg_sz = pattr.max_msg_sz;
	}

	ndev = ib_device_get_netdev(ibdev, port);
	if (ndev) {
		strscpy(info->netdev, netdev_name(ndev), sizeof(info->netdev));
		dev_put(ndev);
	}
}

/**
 * rdmx_device_count_ports() - ports across all tracked devices
 *
 * Context: process context; takes rdmx_devices_lock.
 * Return: the number of entries RDMX_IOC_LIST_DEVICES would report.
 */
unsigned int rdmx_device_count_ports(void)
{
	struct rdmx_device *rdev;
	unsigned long index;
	unsigned int n = 0;

	mutex_lock(&rdmx_devices_lock);
	xa_for_each(&rdmx_devices, index, rdev)
		n += rdma_end_port(rdev->ibdev) - rdma_start_port(rdev->ibdev) + 1;
	mutex_unlock(&rdmx_devices_lock);
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_device_count_ports);

/**
 * rdmx_device_list() - describe every port of every tracked device
 * @out: array with room for @room entries (may be NULL when @room is 0)
 * @room: entries @out has room for
 * @total: set to the number of ports present, which may exceed @room
 *
 * Context: process context; takes rdmx_devices_lock.
 * Return: the number of entries written to @out.
 */
unsigned int rdmx_device_list(struct rdmx_device_info *out, unsigned int room,
			      unsigned int *total)
{
	struct rdmx_device *rdev;
	unsigned long index;
	unsigned int n = 0;
	u32 port;

	mutex_lock(&rdmx_devices_lock);
	xa_for_each(&rdmx_devices, index, rdev) {
		rdma_for_each_port(rdev->ibdev, port) {
			if (n < room)
				rdmx_device_fill_info(rdev, port, &out[n]);
			n++;
		}
	}
	mutex_unlock(&rdmx_devices_lock);
	*total = n;
	return min(n, room);
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_device_list);

/**
 * rdmx_device_get_ibdev() - the tracked device for an ib_device
 * @ibdev: the RDMA core's device
 *
 * Context: process context.
 * Return: the device with a reference, or NULL when it is not (or no
 * longer) tracked.
 */
struct rdmx_device *rdmx_device_get_ibdev(struct ib_device *ibdev)
{
	struct rdmx_device *rdev;

	mutex_lock(&rdmx_devices_lock);
	rdev = xa_load(&rdmx_devices, ibdev->index);
	if (rdev && rdev->ibdev == ibdev)
		kref_get(&rdev->ref);
	else
		rdev = NULL;
	mutex_unlock(&rdmx_devices_lock);
	return rdev;
}

static int rdmx_add_one(struct ib_device *ibdev)
{
	struct rdmx_device *rdev;
	int ret;

	rdev = kzalloc(sizeof(*rdev), GFP_KERNEL);
	if (!rdev)
		return -ENOMEM;
	kref_init(&rdev->ref);
	init_completion(&rdev->released);
	rdev->ibdev = ibdev;

	mutex_lock(&rdmx_devices_lock);
	ret = xa_insert(&rdmx_devices, ibdev->index, rdev, GFP_KERNEL);
	mutex_unlock(&rdmx_devices_lock);
	if (ret)
		goto out_free;

	ib_set_client_data(ibdev, &rdmx_ib_client, rdev);
	trace_rdmx_device_add(ibdev);
	ibdev_info(ibdev, "rdmx: tracking device (%u port%s)\n",
		   rdma_end_port(ibdev), rdma_end_port(ibdev) == 1 ? "" : "s");
	blocking_notifier_call_chain(&rdmx_device_chain, RDMX_DEVICE_ADDED,
				     ibdev);
	return 0;

out_free:
	kfree(rdev);
	return ret;
}

static void rdmx_remove_one(struct ib_device *ibdev, void *client_data)
{
	struct rdmx_device *rdev = client_data;

	mutex_lock(&rdmx_devices_lock);
	xa_erase(&rdmx_devices, ibdev->index);
	mutex_unlock(&rdmx_devices_lock);

	/*
	 * Connections on it hold references: fail them, wait for them. Their
	 * teardown waits for no port of a device going away.
	 */
	WRITE_ONCE(rdev->removing, true);
	blocking_notifier_call_chain(&rdmx_device_chain, RDMX_DEVICE_REMOVING,
				     ibdev);
	rdmx_device_put(rdev);
	wait_for_completion(&rdev->released);
	trace_rdmx_device_remove(ibdev);
	ibdev_info(ibdev, "rdmx: device removed\n");
	kfree(rdev);
}

static struct ib_client rdmx_ib_client = {
	.name = "rdmx",
	.add = rdmx_add_one,
	.remove = rdmx_remove_one,
};

/**
 * rdmx_devices_init() - start following RDMA devices
 *
 * The RDMA core calls the add callback for every device already present
 * before this returns, and for each new one afterwards.
 *
 * Context: process context.
 * Return: 0 or a negative errno.
 */
int rdmx_devices_init(void)
{
	return ib_register_client(&rdmx_ib_client);
}

/**
 * rdmx_devices_exit() - stop following RDMA devices
 *
 * The RDMA core calls the remove callback for every tracked device before
 * this returns, so the table is empty afterwards.
 *
 * Context: process context.
 */
void rdmx_devices_exit(void)
{
	ib_unregister_client(&rdmx_ib_client);
	WARN_ON(!xa_empty(&rdmx_devices));
}
