/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmx wire protocol, core: the connection private data of every service's
 * connections (kmod/msg/msg_proto.h has the message service's formats).
 *
 * Everything here crosses the network: fields are little-endian with
 * explicit reserved bytes, sizes are pinned by static_assert in proto.c,
 * and nothing received is used before rdmx_conn_*_parse() or
 * rdmx_msg_hdr_parse() has checked it. See Documentation/protocol.rst.
 */
#ifndef _RDMX_PROTO_H
#define _RDMX_PROTO_H

#include <linux/bits.h>
#include <linux/types.h>
#include <linux/uuid.h>

#define RDMX_PROTO_MAGIC	0x52dc
#define RDMX_PROTO_MAJOR	1	/* incompatible changes */
/*
 * Compatible additions. 1: the block service's RDMX_BLK_OPEN_IMM_READ,
 * RDMX_BLK_OPEN_BATCH and RDMX_BLK_CMD_MORE (a client offers them only
 * to a server of minor 1 or later). 2: RDMX_BLK_OPEN_CMD_BATCH (offered
 * only to a server of minor 2 or later). 3: a block server's receives take
 * the data first, and inline WRITEs carry their command last, when both
 * sides are of minor 3 or later; RDMX_BLK_OPEN_WRITE_IMM. 4: the block
 * service's RDMX_BLK_OPEN_STAGE and RDMX_BLK_CMD_STAGED (asked only of a
 * server of minor 4 or later).
 */
#define RDMX_PROTO_MINOR	4

/* Feature bits offered in a request and granted (a subset) in a reply. */
#define RDMX_PROTO_F_MSG	BIT(0)	/* message service */
#define RDMX_PROTO_F_RMA	BIT(1)	/* one-sided access */
#define RDMX_PROTO_F_BLOCK	BIT(2)	/* block service */
#define RDMX_PROTO_F_KNOWN	(RDMX_PROTO_F_MSG | RDMX_PROTO_F_RMA | \
				 RDMX_PROTO_F_BLOCK)
/* What this version offers and grants. */
#define RDMX_PROTO_F_OFFERED	(RDMX_PROTO_F_MSG | RDMX_PROTO_F_RMA)
/* A block queue's connection offers, and is granted, RDMX_PROTO_F_BLOCK only. */

/* Bounds a peer's parameters must respect. */
/*
 * A connection's queue depth: every service keeps one receive buffer back
 * for control messages, so at least one more carries data.
 */
#define RDMX_PROTO_MIN_QUEUE_DEPTH	2
#define RDMX_PROTO_MAX_QUEUE_DEPTH	4096
#define RDMX_PROTO_MAX_LANES		256
#define RDMX_PROTO_MIN_MSG_SIZE		4096

/* Service and export names, on the wire and in the uapi (RDMX_SERVICE_LEN). */
#define RDMX_PROTO_SERVICE_LEN	64

/* Why a connection was rejected (rdmx_conn_rej.reason). */
enum rdmx_rej_reason {
	RDMX_REJ_UNKNOWN = 0,
	RDMX_REJ_BAD_MAGIC = 1,		/* not an rdmx peer */
	RDMX_REJ_VERSION = 2,		/* major version differs */
	RDMX_REJ_MALFORMED = 3,		/* truncated, or reserved bytes set */
	RDMX_REJ_PARAMS = 4,		/* a parameter out of bounds */
	RDMX_REJ_FEATURES = 5,		/* no feature in common */
	RDMX_REJ_NOT_ALLOWED = 6,	/* peer not allowed */
	RDMX_REJ_BUSY = 7,		/* out of resources, try later */
	RDMX_REJ_STALE = 8,		/* unknown or older session incarnation */
	RDMX_REJ_NR_REASONS,
};

/**
 * struct rdmx_conn_req - private data of an rdma_cm connect request
 * @__cma_version: owned by cma.c for AF_IB; the sender leaves it 0
 * @__ip_version: likewise
 * @magic: RDMX_PROTO_MAGIC
 * @major: RDMX_PROTO_MAJOR of the sender
 * @minor: RDMX_PROTO_MINOR of the sender
 * @queue_depth: receive buffers (credits) the sender posts on this QP
 * @features: RDMX_PROTO_F_* the sender offers
 * @max_msg_size: largest message the sender accepts, in bytes
 * @lane: which connection of the session (a message lane, a block map's
 *	queue) this one is, from 0
 * @nr_lanes: connections the sender wants in the session
 * @reserved0: zero
 * @sess_uuid: the session, stable across reconnects
 * @generation: incarnation of the session; bumped on each reconnect so
 *	completions and messages of an older one are recognised and dropped
 * @reserved: zero
 *
 * 56 bytes: all that rdma_cm leaves of an InfiniBand CM REQ.
 */
struct rdmx_conn_req {
	u8 __cma_version;
	u8 __ip_version;
	__le16 magic;
	u8 major;
	u8 minor;
	__le16 queue_depth;
	__le32 features;
	__le32 max_msg_size;
	__le16 lane;
	__le16 nr_lanes;
	__le32 reserved0;
	uuid_t sess_uuid;
	__le64 generation;
	u8 reserved[8];
};

/**
 * struct rdmx_conn_rep - private data of an rdma_cm accept
 * @magic: RDMX_PROTO_MAGIC
 * @major: RDMX_PROTO_MAJOR of the sender
 * @minor: RDMX_PROTO_MINOR of the sender
 * @queue_depth: receive buffers (credits) the acceptor posts on this QP
 * @nr_lanes: connections granted, at most those requested
 * @features: RDMX_PROTO_F_* granted, a subset of those offered
 * @max_msg_size: largest message the acceptor accepts, in bytes
 * @generation: the generation accepted (the request's)
 * @reserved: zero
 */
struct rdmx_conn_rep {
	__le16 magic;
	u8 major;
	u8 minor;
	__le16 queue_depth;
	__le16 nr_lanes;
	__le32 features;
	__le32 max_msg_size;
	__le64 generation;
	u8 reserved[8];
};

/**
 * struct rdmx_conn_rej - private data of an rdma_cm reject
 * @magic: RDMX_PROTO_MAGIC
 * @major: RDMX_PROTO_MAJOR of the sender
 * @minor: RDMX_PROTO_MINOR of the sender
 * @reason: enum rdmx_rej_reason
 * @reserved: zero
 */
struct rdmx_conn_rej {
	__le16 magic;
	u8 major;
	u8 minor;
	__le16 reason;
	u8 reserved[10];
};

/**
 * struct rdmx_conn_params - connection parameters, unpacked and checked
 * @queue_depth: credits the peer's receive queue holds
 * @lane: the connection's index (requests only)
 * @nr_lanes: connections requested or granted
 * @minor: the peer's minor version
 * @features: RDMX_PROTO_F_* offered or granted, unknown bits dropped
 * @max_msg_size: largest message the peer accepts
 * @sess_uuid: session (requests only)
 * @generation: session incarnation
 */
struct rdmx_conn_params {
	u16 queue_depth;
	u16 lane;
	u16 nr_lanes;
	u8 minor;
	u32 features;
	u32 max_msg_size;
	uuid_t sess_uuid;
	u64 generation;
};

void rdmx_conn_req_pack(struct rdmx_conn_req *req,
			const struct rdmx_conn_params *p);
int rdmx_conn_req_parse(const void *pdata, size_t len,
			struct rdmx_conn_params *p, enum rdmx_rej_reason *reason);
void rdmx_conn_rep_pack(struct rdmx_conn_rep *rep,
			const struct rdmx_conn_params *p);
int rdmx_conn_rep_parse(const void *pdata, size_t len,
			const struct rdmx_conn_params *req,
			struct rdmx_conn_params *p);
void rdmx_conn_rej_pack(struct rdmx_conn_rej *rej, enum rdmx_rej_reason reason);
enum rdmx_rej_reason rdmx_conn_rej_parse(const void *pdata, size_t len);
const char *rdmx_rej_reason_str(enum rdmx_rej_reason reason);
bool rdmx_service_name_valid(const char *name, size_t size);

#endif /* _RDMX_PROTO_H */
