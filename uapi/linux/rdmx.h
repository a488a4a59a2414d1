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
#define RDMX_CMD_EP_LISTEN	0x10
#define RDMX_CMD_EP_ACCEPT	0x11
#define RDMX_CMD_EP_CONNECT	0x12
#define RDMX_CMD_EP_SEND	0x13
#define RDMX_CMD_EP_RECV	0x14
#define RDMX_CMD_EP_SHUTDOWN	0x15
#define RDMX_CMD_EP_INFO	0x16
#define RDMX_CMD_LISTENER_ADD	0x20
#define RDMX_CMD_LISTENER_DEL	0x21
#define RDMX_CMD_SESS_CLOSE	0x22
#define RDMX_CMD_MR_REG		0x30
#define RDMX_CMD_MR_DEREG	0x31
#define RDMX_CMD_RMA		0x32
#define RDMX_CMD_EP_EVENTS	0x33
#define RDMX_CMD_BENCH		0x34
#define RDMX_CMD_EXPORT_ADD	0x40
#define RDMX_CMD_EXPORT_DEL	0x41
#define RDMX_CMD_MAP		0x42
#define RDMX_CMD_UNMAP		0x43
#define RDMX_CMD_EXPORT_RESIZE	0x44

/* The size rides in each struct, not in the ioctl number (as in iommufd). */
#define RDMX_IOC_GET_INFO	_IO(RDMX_IOC_TYPE, RDMX_CMD_GET_INFO)
#define RDMX_IOC_LIST_DEVICES	_IO(RDMX_IOC_TYPE, RDMX_CMD_LIST_DEVICES)
#define RDMX_IOC_EP_LISTEN	_IO(RDMX_IOC_TYPE, RDMX_CMD_EP_LISTEN)
#define RDMX_IOC_EP_ACCEPT	_IO(RDMX_IOC_TYPE, RDMX_CMD_EP_ACCEPT)
#define RDMX_IOC_EP_CONNECT	_IO(RDMX_IOC_TYPE, RDMX_CMD_EP_CONNECT)
#define RDMX_IOC_EP_SEND	_IO(RDMX_IOC_TYPE, RDMX_CMD_EP_SEND)
#define RDMX_IOC_EP_RECV	_IO(RDMX_IOC_TYPE, RDMX_CMD_EP_RECV)
#define RDMX_IOC_EP_SHUTDOWN	_IO(RDMX_IOC_TYPE, RDMX_CMD_EP_SHUTDOWN)
#define RDMX_IOC_EP_INFO	_IO(RDMX_IOC_TYPE, RDMX_CMD_EP_INFO)
#define RDMX_IOC_LISTENER_ADD	_IO(RDMX_IOC_TYPE, RDMX_CMD_LISTENER_ADD)
#define RDMX_IOC_LISTENER_DEL	_IO(RDMX_IOC_TYPE, RDMX_CMD_LISTENER_DEL)
#define RDMX_IOC_SESS_CLOSE	_IO(RDMX_IOC_TYPE, RDMX_CMD_SESS_CLOSE)
#define RDMX_IOC_MR_REG		_IO(RDMX_IOC_TYPE, RDMX_CMD_MR_REG)
#define RDMX_IOC_MR_DEREG	_IO(RDMX_IOC_TYPE, RDMX_CMD_MR_DEREG)
#define RDMX_IOC_RMA		_IO(RDMX_IOC_TYPE, RDMX_CMD_RMA)
#define RDMX_IOC_EP_EVENTS	_IO(RDMX_IOC_TYPE, RDMX_CMD_EP_EVENTS)
#define RDMX_IOC_BENCH		_IO(RDMX_IOC_TYPE, RDMX_CMD_BENCH)
#define RDMX_IOC_EXPORT_ADD	_IO(RDMX_IOC_TYPE, RDMX_CMD_EXPORT_ADD)
#define RDMX_IOC_EXPORT_DEL	_IO(RDMX_IOC_TYPE, RDMX_CMD_EXPORT_DEL)
#define RDMX_IOC_MAP		_IO(RDMX_IOC_TYPE, RDMX_CMD_MAP)
#define RDMX_IOC_UNMAP		_IO(RDMX_IOC_TYPE, RDMX_CMD_UNMAP)
#define RDMX_IOC_EXPORT_RESIZE	_IO(RDMX_IOC_TYPE, RDMX_CMD_EXPORT_RESIZE)

/* Feature bits in rdmx_info.features */
#define RDMX_FEATURE_LIST_DEVICES	_BITULL(0)
#define RDMX_FEATURE_MSG		_BITULL(1)	/* RDMX_IOC_EP_*, listeners, sessions */
#define RDMX_FEATURE_RMA		_BITULL(2)	/* RDMX_IOC_MR_*, _RMA, _EP_EVENTS */
#define RDMX_FEATURE_BENCH		_BITULL(3)	/* RDMX_IOC_BENCH */
#define RDMX_FEATURE_BLOCK		_BITULL(4)	/* RDMX_IOC_EXPORT_*, _MAP, _UNMAP */
#define RDMX_FEATURE_BLOCK_RESIZE	_BITULL(5)	/* RDMX_IOC_EXPORT_RESIZE */
#define RDMX_FEATURE_BLOCK_SECURE	_BITULL(6)	/* reserved ports, RDMX_EXPORT_INSECURE */
#define RDMX_FEATURE_BLOCK_ACCESS	_BITULL(7)	/* one writer, RDMX_EXPORT_SHARED */
#define RDMX_FEATURE_BLOCK_IDENTITY	_BITULL(8)	/* RDMX_EXPORT_UUID, loss timeout forever */

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

/*
 * The message service. An open file descriptor on /dev/rdmx is an
 * endpoint: LISTEN on a (port, service) and ACCEPT channels from it, each
 * a new file descriptor; or CONNECT to (address, port, service). A
 * connected endpoint SENDs and RECVs whole messages, reliably and in
 * order, and supports poll(): EPOLLIN when a message (or an end of stream,
 * or an error) is waiting, EPOLLOUT when a send would not block. Channels
 * to the same host and port share one session (RDMA connection).
 */

/*
 * RDMX_IOC_EP_SHUTDOWN takes no argument (pass 0; anything else is
 * EINVAL): the peer receives what was sent, then the end of the stream.
 */

/* Default rdma_cm port (TCP port space) of listeners. */
#define RDMX_DEFAULT_PORT	7471

/* Largest message: bigger ones fail with EMSGSIZE. */
#define RDMX_MSG_MAX		(4U << 20)

/* A service name: 1 to 63 bytes of [A-Za-z0-9._-], NUL-padded. */
#define RDMX_SERVICE_LEN	64

/* Built into every listener: echoes each message back (rdmxctl ping). */
#define RDMX_SERVICE_ECHO	"rdmx.echo"

/**
 * struct rdmx_sockaddr - an IPv4 or IPv6 address and port
 * @family: AF_INET or AF_INET6
 * @port: port, host byte order; 0 means RDMX_DEFAULT_PORT
 * @scope_id: IPv6 scope (interface index) of a link-local address, else 0
 * @addr: the address in network byte order: 4 bytes for AF_INET (the rest
 *	zero), 16 for AF_INET6; all zero means any address (LISTEN only)
 */
struct rdmx_sockaddr {
	__u16 family;
	__u16 port;
	__u32 scope_id;
	__u8 addr[16];
};

/**
 * struct rdmx_ep_addr - argument of RDMX_IOC_EP_LISTEN and _EP_CONNECT
 * @size: in: sizeof(struct rdmx_ep_addr) as the caller knows it;
 *	out: bytes written back
 * @flags: must be 0 (no flags are defined yet)
 * @addr: LISTEN: local address (any, or one of this host's); CONNECT: the
 *	peer's address
 * @service: service name, NUL-padded (see RDMX_SERVICE_LEN)
 * @timeout_ms: CONNECT: give up after this long (ETIMEDOUT); 0 for the
 *	default of 10 s. LISTEN: must be 0
 * @backlog: LISTEN: channels waiting for ACCEPT before new ones are
 *	refused; 0 for the default of 64. CONNECT: must be 0
 */
struct rdmx_ep_addr {
	__u32 size;
	__u32 flags;
	struct rdmx_sockaddr addr;
	__u8 service[RDMX_SERVICE_LEN];
	__u32 timeout_ms;
	__u32 backlog;
};

#define RDMX_EP_ADDR_SIZE_VER0	104

/* rdmx_ep_accept.flags */
#define RDMX_ACCEPT_NONBLOCK	_BITULL(0)	/* the new fd is O_NONBLOCK */
#define RDMX_ACCEPT_CLOEXEC	_BITULL(1)	/* the new fd is O_CLOEXEC */

/**
 * struct rdmx_ep_accept - argument of RDMX_IOC_EP_ACCEPT
 * @size: in: sizeof(struct rdmx_ep_accept) as the caller knows it;
 *	out: bytes written back
 * @flags: RDMX_ACCEPT_*
 * @fd: out: the new channel's file descriptor (also the return value)
 * @reserved: zero
 * @peer: out: the peer's address
 *
 * Blocks until a channel arrives, unless the listening fd is O_NONBLOCK
 * (then EAGAIN).
 */
struct rdmx_ep_accept {
	__u32 size;
	__u32 flags;
	__s32 fd;
	__u32 reserved;
	struct rdmx_sockaddr peer;
};

#define RDMX_EP_ACCEPT_SIZE_VER0	40

/* rdmx_msg_vec.flags, out (RECV) */
#define RDMX_MSG_IMM		_BITULL(0)	/* not a message: a WRITE_IMM's immediate */

/**
 * struct rdmx_msg_vec - one message of a batched SEND or RECV
 * @addr: user pointer to the message's bytes (SEND) or to a buffer (RECV)
 * @len: SEND: message length, 0 to RDMX_MSG_MAX. RECV in: buffer size;
 *	out: the message's length (when the buffer was too small, the length
 *	it needs)
 * @flags: in: must be 0. RECV out: RDMX_MSG_IMM when the entry is the
 *	immediate of an RDMX_RMA_WRITE_IMM the peer made (then @len is 0 and
 *	@imm holds the value); it takes its place in the stream of messages
 *	after every message sent before it and after the data of that write
 *	and of every write the peer's channel completed before it
 * @status: out: 0, or a negative errno for this message
 * @imm: RECV out: see @flags; in: must be 0
 */
struct rdmx_msg_vec {
	__u64 addr;
	__u32 len;
	__u32 flags;
	__s32 status;
	__u32 imm;
};

/* rdmx_ep_xfer.flags */
#define RDMX_XFER_NONBLOCK	_BITULL(0)	/* EAGAIN rather than wait */

/**
 * struct rdmx_ep_xfer - argument of RDMX_IOC_EP_SEND and _EP_RECV
 * @size: in: sizeof(struct rdmx_ep_xfer) as the caller knows it;
 *	out: bytes written back
 * @flags: RDMX_XFER_*; the fd's O_NONBLOCK has the same effect
 * @count: in: entries at @msgs, 1 to 1024; out: messages sent or received
 *	(also the return value)
 * @vec_size: sizeof(struct rdmx_msg_vec) as the caller knows it
 * @msgs: user pointer to an array of struct rdmx_msg_vec
 *
 * SEND queues messages in order; it blocks while the session's send window
 * is full, and returns once every message is queued: delivery is then the
 * session's business, across reconnects. RECV waits for the first message
 * only, then takes what is already there. Both return the number done; when
 * that is 0 they fail instead, with the first message's error.
 */
struct rdmx_ep_xfer {
	__u32 size;
	__u32 flags;
	__u32 count;
	__u32 vec_size;
	__u64 msgs;
};

#define RDMX_EP_XFER_SIZE_VER0		24
#define RDMX_MSG_VEC_SIZE_VER0		24
#define RDMX_XFER_MAX			1024

/* rdmx_ep_info.state */
#define RDMX_EP_NEW		0	/* neither listening nor connected */
#define RDMX_EP_LISTENING	1
#define RDMX_EP_CONNECTING	2
#define RDMX_EP_CONNECTED	3
#define RDMX_EP_SHUTDOWN	4	/* this side shut down */
#define RDMX_EP_CLOSED		5	/* the peer shut down */
#define RDMX_EP_ERROR		6	/* see rdmx_ep_info.error */

/* rdmx_ep_info.sess_state */
#define RDMX_SESS_STATE_IDLE		0
#define RDMX_SESS_STATE_CONNECTING	1
#define RDMX_SESS_STATE_CONNECTED	2
#define RDMX_SESS_STATE_RECONNECTING	3
#define RDMX_SESS_STATE_CLOSING		4
#define RDMX_SESS_STATE_CLOSED		5

/**
 * struct rdmx_ep_info - argument of RDMX_IOC_EP_INFO
 * @size: in: sizeof(struct rdmx_ep_info) as the caller knows it;
 *	out: bytes written back
 * @flags: must be 0
 * @state: RDMX_EP_*
 * @error: positive errno that ended the channel, else 0
 * @sess_id: the session's id (as in /sys/kernel/rdmx/sessions), 0 if none
 * @sess_state: RDMX_SESS_STATE_*
 * @local: local address
 * @peer: peer address
 * @service: service name
 * @credits: SENDs the channel's lane of the session may post to the peer now
 * @queued: messages received and waiting for RECV
 * @msgs_tx: messages this channel sent
 * @msgs_rx: messages this channel received
 * @bytes_tx: payload bytes sent
 * @bytes_rx: payload bytes received
 * @generation: the session's incarnation
 * @reserved: zero
 */
struct rdmx_ep_info {
	__u32 size;
	__u32 flags;
	__u32 state;
	__u32 error;
	__u32 sess_id;
	__u32 sess_state;
	struct rdmx_sockaddr local;
	struct rdmx_sockaddr peer;
	__u8 service[RDMX_SERVICE_LEN];
	__u32 credits;
	__u32 queued;
	__u64 msgs_tx;
	__u64 msgs_rx;
	__u64 bytes_tx;
	__u64 bytes_rx;
	__u64 generation;
	__u64 reserved[4];
};

#define RDMX_EP_INFO_SIZE_VER0		216

/**
 * struct rdmx_listener_arg - argument of RDMX_IOC_LISTENER_ADD and _DEL
 * @size: in: sizeof(struct rdmx_listener_arg) as the caller knows it;
 *	out: bytes written back
 * @flags: must be 0
 * @addr: address and port to listen on (any address when all zero)
 *
 * A listener accepts sessions from peers, so that they reach services
 * bound with RDMX_IOC_EP_LISTEN and the built-in RDMX_SERVICE_ECHO. One
 * added here stays until deleted or the module unloads; both need
 * CAP_NET_ADMIN. RDMX_IOC_EP_LISTEN creates one implicitly for as long as
 * the endpoint listens. Listeners follow RDMA devices as they come and go.
 */
struct rdmx_listener_arg {
	__u32 size;
	__u32 flags;
	struct rdmx_sockaddr addr;
};

#define RDMX_LISTENER_ARG_SIZE_VER0	32

/**
 * struct rdmx_sess_close - argument of RDMX_IOC_SESS_CLOSE
 * @size: in: sizeof(struct rdmx_sess_close) as the caller knows it;
 *	out: bytes written back
 * @flags: must be 0
 * @sess_id: the session (as in /sys/kernel/rdmx/sessions)
 * @reserved: zero
 *
 * Closes a session and fails its channels with ECONNRESET. Needs
 * CAP_NET_ADMIN.
 */
struct rdmx_sess_close {
	__u32 size;
	__u32 flags;
	__u32 sess_id;
	__u32 reserved;
};

#define RDMX_SESS_CLOSE_SIZE_VER0	16

/*
 * One-sided access. A connected endpoint registers memory (RDMX_IOC_MR_REG)
 * and gets a token naming it: the application sends the token to the peer
 * (in a message, say), and the peer's endpoint then READs, WRITEs or updates
 * atomically what the token names, within its bounds and rights, without
 * this side's CPU. A token is good only on the session it was registered
 * on, and only until its region is deregistered or its endpoint closed.
 * See Documentation/uapi.rst and Documentation/one-sided.rst.
 */

/* rdmx_mr_reg.access */
#define RDMX_ACCESS_REMOTE_READ		_BITULL(0)
#define RDMX_ACCESS_REMOTE_WRITE	_BITULL(1)
#define RDMX_ACCESS_REMOTE_ATOMIC	_BITULL(2)

/* Largest token: every token fits a buffer this large. */
#define RDMX_TOKEN_MAX		4096

/* Largest region, and largest single READ or WRITE. */
#define RDMX_MR_MAX		_BITULL(30)
#define RDMX_RMA_LEN_MAX	_BITULL(30)

/**
 * struct rdmx_mr_reg - argument of RDMX_IOC_MR_REG
 * @size: in: sizeof(struct rdmx_mr_reg) as the caller knows it;
 *	out: bytes written back
 * @flags: must be 0
 * @addr: user address of the memory, any alignment
 * @length: bytes, 1 to RDMX_MR_MAX
 * @access: RDMX_ACCESS_*, at least one. RDMX_ACCESS_REMOTE_ATOMIC needs a
 *	device with atomics (EOPNOTSUPP otherwise)
 * @mr_id: out: the region's id on this endpoint, for RDMX_IOC_MR_DEREG;
 *	ignored on input
 * @token: user pointer to a buffer for the token
 * @token_len: in: room at @token (RDMX_TOKEN_MAX always suffices); out:
 *	the token's length. ENOSPC when it does not fit.
 * @reserved: zero
 *
 * The memory is pinned until deregistered (charged to RLIMIT_MEMLOCK
 * unless CAP_IPC_LOCK) and registered with the session's device for remote
 * access. The endpoint must be connected (ENOTCONN).
 */
struct rdmx_mr_reg {
	__u32 size;
	__u32 flags;
	__u64 addr;
	__u64 length;
	__u32 access;
	__u32 mr_id;
	__u64 token;
	__u32 token_len;
	__u32 reserved;
};

#define RDMX_MR_REG_SIZE_VER0		48

/**
 * struct rdmx_mr_dereg - argument of RDMX_IOC_MR_DEREG
 * @size: in: sizeof(struct rdmx_mr_dereg) as the caller knows it;
 *	out: bytes written back
 * @flags: must be 0
 * @mr_id: the region, as RDMX_IOC_MR_REG returned it (ENOENT if unknown)
 * @reserved: zero
 *
 * Invalidates the region's keys, so its token no longer reaches it, then
 * unpins the memory. Closing the endpoint deregisters every region.
 */
struct rdmx_mr_dereg {
	__u32 size;
	__u32 flags;
	__u32 mr_id;
	__u32 reserved;
};

#define RDMX_MR_DEREG_SIZE_VER0		16

/* rdmx_rma_op.opcode */
#define RDMX_RMA_READ		1	/* peer's region -> local buffer */
#define RDMX_RMA_WRITE		2	/* local buffer -> peer's region */
#define RDMX_RMA_WRITE_IMM	3	/* WRITE, then @imm to the peer's RECV */
#define RDMX_RMA_CMP_SWAP	4	/* 8 bytes: if == @compare_add, = @swap */
#define RDMX_RMA_FETCH_ADD	5	/* 8 bytes: += @compare_add */

/**
 * struct rdmx_rma_op - one one-sided operation
 * @opcode: RDMX_RMA_*
 * @flags: must be 0
 * @local_addr: user buffer: READ's destination, WRITE's source; for the
 *	atomics, 8 bytes (8-byte aligned) that receive the word's value
 *	before the operation, as the device returns it (the word is in the
 *	byte order the device's atomics use: host order on rxe)
 * @length: bytes: 1 to RDMX_RMA_LEN_MAX for READ and WRITE (0 is allowed
 *	for WRITE_IMM, which then only delivers @imm); 8 for the atomics
 * @token: user pointer to the peer's token
 * @token_len: its length, as RDMX_IOC_MR_REG gave it
 * @imm: WRITE_IMM: the value the peer receives; else 0
 * @remote_offset: where in the peer's region, from its start; the atomics
 *	need an 8-byte aligned word
 * @compare_add: CMP_SWAP: the value compared; FETCH_ADD: the addend
 * @swap: CMP_SWAP: the value stored if equal; else 0
 * @user_data: returned in the completion event of an asynchronous batch
 * @status: out: 0, or a negative errno (see Documentation/uapi.rst);
 *	ignored on input
 * @reserved: zero
 */
struct rdmx_rma_op {
	__u32 opcode;
	__u32 flags;
	__u64 local_addr;
	__u64 length;
	__u64 token;
	__u32 token_len;
	__u32 imm;
	__u64 remote_offset;
	__u64 compare_add;
	__u64 swap;
	__u64 user_data;
	__s32 status;
	__u32 reserved;
};

/* rdmx_rma.flags */
#define RDMX_RMA_ASYNC		_BITULL(0)	/* return once posted */

/**
 * struct rdmx_rma - argument of RDMX_IOC_RMA
 * @size: in: sizeof(struct rdmx_rma) as the caller knows it;
 *	out: bytes written back
 * @flags: RDMX_RMA_ASYNC
 * @count: in: entries at @ops, 1 to RDMX_RMA_BATCH_MAX; out: operations
 *	accepted (also the return value)
 * @op_size: sizeof(struct rdmx_rma_op) as the caller knows it
 * @ops: user pointer to an array of struct rdmx_rma_op
 *
 * Operations are checked and started in order. The first one that fails
 * its checks (bad token, out of bounds, no right, ...) stops the batch: it
 * gets the error in its @status and the ones before it run. Without
 * RDMX_RMA_ASYNC the call returns when every accepted operation completed,
 * each with its own @status. With it, the call returns once they are
 * posted (which may wait for send queue room or a reconnect) and each
 * accepted operation completes as an RDMX_EVENT_RMA_DONE event (read with
 * RDMX_IOC_EP_EVENTS; poll gives EPOLLPRI). The call fails instead, with
 * the first operation's error, when none was accepted.
 */
struct rdmx_rma {
	__u32 size;
	__u32 flags;
	__u32 count;
	__u32 op_size;
	__u64 ops;
};

#define RDMX_RMA_SIZE_VER0		24
#define RDMX_RMA_OP_SIZE_VER0		80
#define RDMX_RMA_BATCH_MAX		256

/* rdmx_event.type */
#define RDMX_EVENT_RMA_DONE	1	/* an asynchronous operation completed */

/**
 * struct rdmx_event - one event of RDMX_IOC_EP_EVENTS
 * @type: RDMX_EVENT_*
 * @status: RMA_DONE: the operation's status, as rdmx_rma_op.status
 * @user_data: RMA_DONE: the operation's @user_data
 * @opcode: RMA_DONE: the operation's opcode
 * @reserved: zero
 * @value: RMA_DONE of an atomic: the word's value before the operation
 *	(also written to its local buffer)
 */
struct rdmx_event {
	__u32 type;
	__s32 status;
	__u64 user_data;
	__u32 opcode;
	__u32 reserved;
	__u64 value;
};

/* rdmx_events.flags */
#define RDMX_EVENTS_NONBLOCK	_BITULL(0)	/* EAGAIN rather than wait */

/**
 * struct rdmx_events - argument of RDMX_IOC_EP_EVENTS
 * @size: in: sizeof(struct rdmx_events) as the caller knows it;
 *	out: bytes written back
 * @flags: RDMX_EVENTS_*; the fd's O_NONBLOCK has the same effect
 * @count: in: room at @events, 1 to RDMX_RMA_BATCH_MAX; out: events
 *	written (also the return value)
 * @event_size: sizeof(struct rdmx_event) as the caller knows it
 * @events: user pointer to an array of struct rdmx_event
 *
 * Waits for the first event (unless non-blocking, then EAGAIN), then
 * takes what is there. Events taken are the caller's: when the copy to
 * @events faults (EFAULT) they are lost.
 */
struct rdmx_events {
	__u32 size;
	__u32 flags;
	__u32 count;
	__u32 event_size;
	__u64 events;
};

#define RDMX_EVENTS_SIZE_VER0		24
#define RDMX_EVENT_SIZE_VER0		32

/*
 * In-kernel benchmark (the successor of krping): RDMX_IOC_BENCH on a
 * connected endpoint runs one kind of operation, of one size, many times
 * in the kernel, with no system call per operation, and reports totals,
 * bandwidth and latency. See Documentation/uapi.rst.
 */

/* rdmx_bench.op */
#define RDMX_BENCH_SEND		1	/* messages on the channel */
#define RDMX_BENCH_WRITE	2	/* RDMA WRITE to the peer's region */
#define RDMX_BENCH_READ		3	/* RDMA READ from the peer's region */
#define RDMX_BENCH_CMP_SWAP	4	/* 8-byte compare-and-swap (0 -> 0) */
#define RDMX_BENCH_FETCH_ADD	5	/* 8-byte fetch-and-add of 1 */

/* rdmx_bench.flags */
#define RDMX_BENCH_PINGPONG	_BITULL(0)	/* SEND: wait for a reply to each */

/* Bounds of rdmx_bench's fields */
#define RDMX_BENCH_DEPTH_MAX		1024
#define RDMX_BENCH_LEN_MAX		_BITULL(23)	/* READ and WRITE */
#define RDMX_BENCH_ITERS_MAX		_BITULL(32)
#define RDMX_BENCH_DURATION_MAX_MS	3600000
/* Latencies kept for the percentiles: those of the first operations. */
#define RDMX_BENCH_SAMPLES_MAX		_BITUL(20)

/**
 * struct rdmx_bench - argument of RDMX_IOC_BENCH
 * @size: in: sizeof(struct rdmx_bench) as the caller knows it;
 *	out: bytes written back
 * @flags: RDMX_BENCH_PINGPONG (SEND only)
 * @op: RDMX_BENCH_*
 * @depth: operations in flight, 1 to RDMX_BENCH_DEPTH_MAX; 1 for SEND,
 *	whose messages the session's send window paces
 * @length: bytes per operation: SEND 1 to RDMX_MSG_MAX, READ and WRITE 1
 *	to RDMX_BENCH_LEN_MAX, the atomics 8
 * @iters: operations to run, 1 to RDMX_BENCH_ITERS_MAX; or 0 with
 *	@duration_ms
 * @duration_ms: start operations for this long, 1 to
 *	RDMX_BENCH_DURATION_MAX_MS; or 0 with @iters
 * @token_len: one-sided: the length of the peer's token, 1 to
 *	RDMX_TOKEN_MAX; SEND: 0
 * @token: one-sided: user pointer to the peer's token; SEND: 0
 * @remote_offset: one-sided: where in the peer's region every operation
 *	goes (8-byte aligned for the atomics); SEND: 0
 * @ops: out: operations completed
 * @bytes: out: their bytes
 * @elapsed_ns: out: from the first start to the last completion (SEND:
 *	to the peer's answer to the closing empty message)
 * @bw_peak: out: bytes per second of the fastest window of
 *	max(@depth, 16) consecutive completions, and at least @bw_avg
 * @bw_avg: out: @bytes per second of @elapsed_ns
 * @lat_min_ns: out: the shortest latency (see below)
 * @lat_max_ns: out: the longest
 * @lat_median_ns: out: the median of the samples (nearest rank)
 * @lat_avg_ns: out: the mean of all operations
 * @lat_stdev_ns: out: the standard deviation of the samples
 * @lat_p99_ns: out: the 99th percentile of the samples (nearest rank)
 * @lat_p999_ns: out: the 99.9th percentile of the samples
 * @nr_samples: out: samples the median, percentiles and deviation come
 *	from: the first RDMX_BENCH_SAMPLES_MAX operations
 * @reserved0: zero
 * @reserved: zero
 *
 * An operation's latency runs from its start to its completion: for READ,
 * WRITE and the atomics, until the device reported the operation complete
 * (the peer acknowledged it); for SEND, the time the message took to be
 * queued, or with RDMX_BENCH_PINGPONG until the peer's reply arrived (a
 * round trip). Latencies saturate at 2^32 - 1 ns.
 *
 * SEND's peer takes part: it receives the messages, answers each with a
 * message when RDMX_BENCH_PINGPONG is set, and answers the empty message
 * that ends every SEND run with a message of at most @length bytes.
 *
 * Output fields are ignored on input. The call returns 0 once every
 * operation started has completed; EINTR when a signal came first
 * (operations in flight are waited for, results are not written); an
 * operation's errno (EOPNOTSUPP: no atomics on this side's device;
 * EACCES, ERANGE: the token's rights or bounds) when one failed.
 */
struct rdmx_bench {
	__u32 size;
	__u32 flags;
	__u32 op;
	__u32 depth;
	__u64 length;
	__u64 iters;
	__u32 duration_ms;
	__u32 token_len;
	__u64 token;
	__u64 remote_offset;
	__u64 ops;
	__u64 bytes;
	__u64 elapsed_ns;
	__u64 bw_peak;
	__u64 bw_avg;
	__u64 lat_min_ns;
	__u64 lat_max_ns;
	__u64 lat_median_ns;
	__u64 lat_avg_ns;
	__u64 lat_stdev_ns;
	__u64 lat_p99_ns;
	__u64 lat_p999_ns;
	__u32 nr_samples;
	__u32 reserved0;
	__u64 reserved[4];
};

#define RDMX_BENCH_SIZE_VER0		192

/*
 * Block service. A server exports a block device, a regular file or a RAM
 * region under a name (RDMX_IOC_EXPORT_ADD); a client maps it as the
 * blk-mq disk /dev/rdmxbN (RDMX_IOC_MAP). Exports are served by the
 * listeners (RDMX_IOC_LISTENER_ADD). All four calls need CAP_SYS_ADMIN.
 * See Documentation/block.rst.
 */

/* An export's name: 1 to 63 bytes of [A-Za-z0-9._-], NUL-padded. */
#define RDMX_EXPORT_NAME_LEN	64
/* Most allow-list entries of one export. */
#define RDMX_EXPORT_ALLOW_MAX	16

/* rdmx_export_add.flags */
#define RDMX_EXPORT_RO		_BITULL(0)	/* refuse writes */
#define RDMX_EXPORT_RAM		_BITULL(1)	/* memory, @ram_size bytes; no path */
/*
 * Serve clients connecting from any source port. Without it an export is
 * served only to connections from a port below 1024, which only a
 * privileged process (CAP_NET_BIND_SERVICE) can bind: rdmx's own client
 * binds one (RDMX_FEATURE_BLOCK_SECURE).
 */
#define RDMX_EXPORT_INSECURE	_BITULL(2)
/*
 * Let several maps write at once (a cluster filesystem's disk). Without it
 * one map at a time may write the export: a read-write map of another
 * client, or another map of the same client, is refused (EBUSY on its
 * side) while one holds it; read-only maps are always let in.
 */
#define RDMX_EXPORT_SHARED	_BITULL(3)
/*
 * rdmx_export_add.uuid is the export's identity, as the operator set it or
 * derived it from the backing storage (not with RDMX_EXPORT_RAM, whose data
 * does not outlive the export).
 */
#define RDMX_EXPORT_UUID	_BITULL(4)

/**
 * struct rdmx_export_allow - one allow-list entry: a network prefix
 * @family: AF_INET or AF_INET6
 * @prefix_len: leading bits that must match: 0 to 32 (AF_INET) or 128
 * @reserved0: zero
 * @reserved1: zero
 * @addr: the network, network byte order (4 bytes for AF_INET, the rest
 *	zero)
 */
struct rdmx_export_allow {
	__u16 family;
	__u8 prefix_len;
	__u8 reserved0;
	__u32 reserved1;
	__u8 addr[16];
};

/**
 * struct rdmx_export_add - argument of RDMX_IOC_EXPORT_ADD
 * @size: in: sizeof(struct rdmx_export_add) as the caller knows it;
 *	out: bytes written back
 * @flags: RDMX_EXPORT_*
 * @name: the export's name (see RDMX_EXPORT_NAME_LEN); EEXIST if taken
 * @path: user pointer to the path of a block device or regular file,
 *	@path_len bytes, no NUL needed; 0 with RDMX_EXPORT_RAM
 * @path_len: 1 to 4095; 0 with RDMX_EXPORT_RAM
 * @nr_allow: entries of @allow in use, 0 (any peer) to
 *	RDMX_EXPORT_ALLOW_MAX
 * @ram_size: RDMX_EXPORT_RAM: bytes, a non-zero multiple of 4096; else 0
 * @logical_block_size: 512 or 4096; 0 for the backing device's (512 for
 *	files and RAM)
 * @reserved0: zero
 * @allow: peers allowed to map the export; others are refused at connect
 *	time (EACCES on their side)
 * @reserved: zero
 * @uuid: in, with RDMX_EXPORT_UUID: the export's identity, not all zero;
 *	out: the identity it got (RDMX_FEATURE_BLOCK_IDENTITY)
 *
 * A regular file is read and written with direct I/O when its filesystem
 * supports it, else through the page cache; its size must be a non-zero
 * multiple of the logical block size. Errors: EEXIST, ENOENT and the other
 * errors of opening @path, EINVAL (a bad field; a file that is neither a
 * regular file nor a block device), ENOMEM.
 *
 * The identity is what the clients' disks show as their serial (wwid) and
 * what a reconnecting client checks: the disk fails its I/O rather than
 * carry on over other storage under the same name. Without
 * RDMX_EXPORT_UUID: for RAM a new one each time; for a regular file, one
 * derived from its filesystem's uuid (or device number), its inode number
 * and generation, and the export's name; for a block device, one derived
 * from the host, the export's name and @path (rdmxctl passes one derived
 * from the device's WWN, serial or uuid instead).
 */
struct rdmx_export_add {
	__u32 size;
	__u32 flags;
	__u8 name[RDMX_EXPORT_NAME_LEN];
	__u64 path;
	__u32 path_len;
	__u32 nr_allow;
	__u64 ram_size;
	__u32 logical_block_size;
	__u32 reserved0;
	struct rdmx_export_allow allow[RDMX_EXPORT_ALLOW_MAX];
	__u64 reserved[4];
	__u8 uuid[16];
};

#define RDMX_EXPORT_ADD_SIZE_VER0	520
#define RDMX_EXPORT_ADD_SIZE_VER1	536	/* @uuid */

/* rdmx_export_del.flags */
#define RDMX_EXPORT_DEL_FORCE	_BITULL(0)	/* disconnect clients first */

/**
 * struct rdmx_export_del - argument of RDMX_IOC_EXPORT_DEL
 * @size: in: sizeof(struct rdmx_export_del) as the caller knows it;
 *	out: bytes written back
 * @flags: RDMX_EXPORT_DEL_*
 * @name: the export; ENOENT if there is none
 *
 * EBUSY while a client has the export mapped, or a client that unmapped it
 * still has queues connected (finishing the requests the export holds),
 * unless RDMX_EXPORT_DEL_FORCE: then the clients' connections are closed
 * (their I/O waits for the export to come back, up to their loss timeout).
 */
struct rdmx_export_del {
	__u32 size;
	__u32 flags;
	__u8 name[RDMX_EXPORT_NAME_LEN];
};

#define RDMX_EXPORT_DEL_SIZE_VER0	72

/**
 * struct rdmx_export_resize - argument of RDMX_IOC_EXPORT_RESIZE
 * @size: in: sizeof(struct rdmx_export_resize) as the caller knows it;
 *	out: bytes written back
 * @flags: zero (none defined)
 * @new_size: in: a RAM export's new size in bytes, a multiple of 4096 and
 *	of its block size; 0 for any other export, whose size is read again
 *	from its file or block device (after it grew). out: the size now
 * @old_size: out: the size before
 * @name: the export; ENOENT if there is none
 *
 * Exports only grow: EINVAL for a smaller size (the export keeps its
 * size) or a RAM size given for a file or device. Mapped disks learn the
 * new size with their next completed request, and the clients' kernels
 * send a change uevent.
 */
struct rdmx_export_resize {
	__u32 size;
	__u32 flags;
	__u64 new_size;
	__u64 old_size;
	__u8 name[RDMX_EXPORT_NAME_LEN];
};

#define RDMX_EXPORT_RESIZE_SIZE_VER0	88

/* rdmx_map.flags */
#define RDMX_MAP_RO		_BITULL(0)	/* map read-only */

/* Bounds of rdmx_map's fields */
#define RDMX_MAP_QUEUES_MAX	64
#define RDMX_MAP_DEPTH_MAX	1024
#define RDMX_MAP_LOSS_TIMEOUT_MAX_MS	3600000
/* rdmx_map.loss_timeout_ms: I/O waits for a lost server for ever */
#define RDMX_MAP_LOSS_TIMEOUT_FOREVER	0xffffffffU

/**
 * struct rdmx_map - argument of RDMX_IOC_MAP
 * @size: in: sizeof(struct rdmx_map) as the caller knows it;
 *	out: bytes written back
 * @flags: RDMX_MAP_*
 * @addr: the server's address and port
 * @name: the export's name
 * @nr_queues: hardware queues (one connection each), 1 to
 *	RDMX_MAP_QUEUES_MAX; 0 for one per CPU. At most one per CPU is used
 * @queue_depth: requests in flight per queue, 1 to RDMX_MAP_DEPTH_MAX;
 *	0 for 128. The server may grant fewer
 * @loss_timeout_ms: how long I/O waits for a lost server before failing
 *	with EIO, up to RDMX_MAP_LOSS_TIMEOUT_MAX_MS or
 *	RDMX_MAP_LOSS_TIMEOUT_FOREVER (RDMX_FEATURE_BLOCK_IDENTITY); 0 for the
 *	default (/sys/kernel/rdmx/loss_timeout_ms). A server that answers
 *	with another export under the name (another uuid) fails the I/O at
 *	once, whatever this is
 * @index: out: N of /dev/rdmxbN
 * @timeout_ms: how long the first connection may take (ETIMEDOUT); 0
 *	for the default of 10 s
 * @reserved0: zero
 * @reserved: zero
 *
 * Returns once the disk exists. Errors: ECONNREFUSED (no listener),
 * ETIMEDOUT, ENOENT (no such export), EACCES (not on its allow-list, or
 * a read-write map of a read-only export), EBUSY (a read-write map of an
 * export another map writes, without RDMX_EXPORT_SHARED), EPROTO (an
 * incompatible server).
 */
struct rdmx_map {
	__u32 size;
	__u32 flags;
	struct rdmx_sockaddr addr;
	__u8 name[RDMX_EXPORT_NAME_LEN];
	__u32 nr_queues;
	__u32 queue_depth;
	__u32 loss_timeout_ms;
	__u32 index;
	__u32 timeout_ms;
	__u32 reserved0;
	__u64 reserved[4];
};

#define RDMX_MAP_SIZE_VER0		152

/* rdmx_unmap.flags */
#define RDMX_UNMAP_FORCE	_BITULL(0)	/* even while open: fail its I/O */

/**
 * struct rdmx_unmap - argument of RDMX_IOC_UNMAP
 * @size: in: sizeof(struct rdmx_unmap) as the caller knows it;
 *	out: bytes written back
 * @flags: RDMX_UNMAP_*
 * @index: N of /dev/rdmxbN; ENOENT if not mapped
 * @reserved: zero
 *
 * EBUSY while the disk is open, unless RDMX_UNMAP_FORCE: then pending
 * and new I/O fails with EIO and the disk goes away once closed.
 */
struct rdmx_unmap {
	__u32 size;
	__u32 flags;
	__u32 index;
	__u32 reserved;
};

#define RDMX_UNMAP_SIZE_VER0		16

#endif /* _UAPI_LINUX_RDMX_H */
