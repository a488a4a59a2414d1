/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * rdmx: RDMA block and message transport, userspace ABI.
 *
 * An open file descriptor on /dev/rdmx is the handle for every ioctl below.
 *
 * Conventions (see Documentation/uapi.rst):
 *  - Every argument struct starts with __u32 size (the size of the struct as
 *    the caller knows it) and __u32 flags. The kernel accepts any size from
 *    the first published size of the struct upwards: a shorter one gives
 *    EINVAL, a longer one whose extra bytes are not all zero gives E2BIG,
 *    a longer one whose extra bytes are zero is accepted (newer userspace on
 *    an older kernel). On return, size holds the number of bytes the kernel
 *    wrote back, never more than the caller's size.
 *  - Unknown flags, and non-zero reserved fields, give EINVAL.
 *  - Unknown ioctl numbers give ENOTTY.
 *  - Pointers travel as __u64.
 *  - RDMX_IOC_GET_INFO says which features this kernel has; test a bit there
 *    rather than probing for an errno.
 */
#ifndef _UAPI_LINUX_RDMX_H
#define _UAPI_LINUX_RDMX_H

#include <linux/const.h>
#include <linux/ioctl.h>
#include <linux/types.h>

/* Bumped only on an incompatible change, which the project intends never to make. */
#define RDMX_ABI_VERSION	1

#define RDMX_IOC_TYPE		0xD4

#define RDMX_CMD_GET_INFO	0x00
#define RDMX_CMD_LIST_DEVICES	0x01

/* The size rides in each struct, not in the ioctl number (as in iommufd). */
#define RDMX_IOC_GET_INFO	_IO(RDMX_IOC_TYPE, RDMX_CMD_GET_INFO)
#define RDMX_IOC_LIST_DEVICES	_IO(RDMX_IOC_TYPE, RDMX_CMD_LIST_DEVICES)

/* Feature bits in rdmx_info.features */
#define RDMX_FEATURE_LIST_DEVICES	_BITULL(0)

#define RDMX_VERSION_LEN	32

/**
 * struct rdmx_info - argument of RDMX_IOC_GET_INFO
 * @size: in: sizeof(struct rdmx_info) as the caller knows it;
 *	out: bytes written back
 * @flags: must be 0
 * @abi_version: out: RDMX_ABI_VERSION of the running module
 * @nr_ports: out: ports, across all RDMA devices, that rdmx tracks now
 * @features: out: RDMX_FEATURE_* bits this kernel supports
 * @version: out: module version, NUL-terminated
 */
struct rdmx_info {
	__u32 size;
	__u32 flags;
	__u32 abi_version;
	__u32 nr_ports;
	__u64 features;
	__u8 version[RDMX_VERSION_LEN];
};

#define RDMX_INFO_SIZE_VER0	56

/* rdmx_device_info.transport */
#define RDMX_TRANSPORT_UNKNOWN	0
#define RDMX_TRANSPORT_IB	1
#define RDMX_TRANSPORT_ROCE	2
#define RDMX_TRANSPORT_IWARP	3

/* rdmx_device_info.port_state: the InfiniBand port states */
#define RDMX_PORT_NOP		0
#define RDMX_PORT_DOWN		1
#define RDMX_PORT_INIT		2
#define RDMX_PORT_ARMED		3
#define RDMX_PORT_ACTIVE	4
#define RDMX_PORT_ACTIVE_DEFER	5

/* rdmx_device_info.phys_state: the InfiniBand physical port states */
#define RDMX_PHYS_STATE_UNKNOWN		0
#define RDMX_PHYS_STATE_SLEEP		1
#define RDMX_PHYS_STATE_POLLING		2
#define RDMX_PHYS_STATE_DISABLED	3
#define RDMX_PHYS_STATE_TRAINING	4
#define RDMX_PHYS_STATE_LINK_UP		5
#define RDMX_PHYS_STATE_ERROR_RECOVERY	6
#define RDMX_PHYS_STATE_PHY_TEST	7

/* rdmx_device_info.atomic_cap */
#define RDMX_ATOMIC_NONE	0
#define RDMX_ATOMIC_HCA		1	/* atomic within this HCA's QPs */
#define RDMX_ATOMIC_GLOB	2	/* atomic with respect to the CPU too */

/* rdmx_device_info.cap_flags */
#define RDMX_DEV_CAP_MEM_MGT_EXTENSIONS	_BITULL(0)	/* FRWR (IB_WR_REG_MR) */
#define RDMX_DEV_CAP_SG_GAPS_REG	_BITULL(1)
#define RDMX_DEV_CAP_RC_RNR_NAK_GEN	_BITULL(2)
#define RDMX_DEV_CAP_BLOCK_MULTICAST	_BITULL(3)

#define RDMX_DEV_NAME_LEN	64
#define RDMX_NETDEV_NAME_LEN	16

/**
 * struct rdmx_device_info - one port of one RDMA device
 * @name: device name (e.g. "rxe0", "mlx5_0"), NUL-terminated
 * @netdev: name of the port's network device, empty when it has none
 * @node_guid: node GUID, in host byte order
 * @index: the device's index in the RDMA core (as in "rdma dev")
 * @port: port number, from 1
 * @transport: RDMX_TRANSPORT_*
 * @port_state: RDMX_PORT_*
 * @phys_state: RDMX_PHYS_STATE_*
 * @atomic_cap: RDMX_ATOMIC_*
 * @active_mtu: path MTU the port runs at, in bytes
 * @max_mtu: largest path MTU the port supports, in bytes
 * @gid_tbl_len: entries in the port's GID table
 * @max_msg_sz: largest message one work request may carry, in bytes
 * @max_qp: queue pairs the device supports
 * @max_qp_wr: work requests one queue may hold
 * @max_send_sge: scatter/gather entries per send work request
 * @max_recv_sge: scatter/gather entries per receive work request
 * @max_cq: completion queues the device supports
 * @max_cqe: entries one completion queue may hold
 * @max_mr: memory regions the device supports
 * @max_qp_rd_atom: RDMA READ and atomic operations one QP may have in
 *	flight as the responder
 * @max_qp_init_rd_atom: the same as the requester
 * @max_fast_reg_page_list_len: pages one FRWR registration may map
 * @max_mr_size: largest memory region, in bytes
 * @reserved0: zero
 * @cap_flags: RDMX_DEV_CAP_*
 * @reserved: zero
 */
struct rdmx_device_info {
	__u8 name[RDMX_DEV_NAME_LEN];
	__u8 netdev[RDMX_NETDEV_NAME_LEN];
	__u64 node_guid;
	__u32 index;
	__u32 port;
	__u8 transport;
	__u8 port_state;
	__u8 phys_state;
	__u8 atomic_cap;
	__u32 active_mtu;
	__u32 max_mtu;
	__u32 gid_tbl_len;
	__u32 max_msg_sz;
	__u32 max_qp;
	__u32 max_qp_wr;
	__u32 max_send_sge;
	__u32 max_recv_sge;
	__u32 max_cq;
	__u32 max_cqe;
	__u32 max_mr;
	__u32 max_qp_rd_atom;
	__u32 max_qp_init_rd_atom;
	__u32 max_fast_reg_page_list_len;
	__u32 reserved0;
	__u64 max_mr_size;
	__u64 cap_flags;
	__u64 reserved[4];
};

#define RDMX_DEVICE_INFO_SIZE_VER0	208

/**
 * struct rdmx_list_devices - argument of RDMX_IOC_LIST_DEVICES
 * @size: in: sizeof(struct rdmx_list_devices) as the caller knows it;
 *	out: bytes written back
 * @flags: must be 0
 * @entry_size: in: sizeof(struct rdmx_device_info) as the caller knows it,
 *	at least RDMX_DEVICE_INFO_SIZE_VER0 and at most 4096; the kernel
 *	places entries this many bytes apart in the caller's array and zeroes
 *	what it does not know of each. out: bytes of each entry the kernel
 *	filled (the smaller of the two sizes).
 * @count: in: entries the array at @devices has room for (0 to ask only how
 *	many there are); out: device ports present, which may exceed the room
 *	given: only the first @count (in) entries are written then.
 * @devices: user pointer to the array, may be 0 when @count is 0
 */
struct rdmx_list_devices {
	__u32 size;
	__u32 flags;
	__u32 entry_size;
	__u32 count;
	__u64 devices;
};

#define RDMX_LIST_DEVICES_SIZE_VER0	24

#endif /* _UAPI_LINUX_RDMX_H */
