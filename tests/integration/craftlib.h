/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The plumbing of the hand-made rdmx peers (rdmx-msgcraft, rdmx-blkcraft),
 * over librdmacm and libibverbs: TAP output, the one peer address the
 * command line names, one RC connection (CM id, PD, CQ, QP, a registered
 * buffer, receives), the private data every rdmx connect request carries,
 * and what the tools' wire fuzzers share (a seeded PRNG, which frames are
 * hostile, mutations of fields and bytes, the fuzzing of a connect
 * request, counters and the summary).
 *
 * Every connection a tool makes goes to the address craft_target() was
 * given, and nowhere else.
 */
#ifndef RDMX_CRAFTLIB_H
#define RDMX_CRAFTLIB_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <linux/types.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

/*
 * The kernel's __printf(), which userspace has to define itself; split
 * across two lines, as checkpatch would otherwise flag its __attribute__.
 */
#define __printf(fmt, args)	__attribute__(\
	(format(printf, fmt, args)))

#define BIT(n)			(1U << (n))
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

/* kmod/core/proto.h */
#define PROTO_MAGIC		0x52dc
#define PROTO_MAJOR		1
#define PROTO_MINOR		3
#define PROTO_F_MSG		BIT(0)
#define PROTO_F_RMA		BIT(1)
#define PROTO_F_BLOCK		BIT(2)
#define PROTO_MAX_QUEUE_DEPTH	4096
#define PROTO_MAX_LANES		256
#define PROTO_MIN_MSG_SIZE	4096
#define PROTO_F_KNOWN		(PROTO_F_MSG | PROTO_F_RMA | PROTO_F_BLOCK)
#define CREDITS_RESERVED	1

/* kmod/msg/sess.h: the SENDs of the message service, and a session's lanes */
#define SEG_SIZE		(32 * 1024 - 256)	/* RDMX_SEG_SIZE */
#define SESS_MAX_LANES		16			/* RDMX_SESS_MAX_LANES */

/* enum rdmx_rej_reason */
#define REJ_UNKNOWN		0
#define REJ_BAD_MAGIC		1
#define REJ_VERSION		2
#define REJ_MALFORMED		3
#define REJ_PARAMS		4
#define REJ_FEATURES		5
#define REJ_NOT_ALLOWED		6
#define REJ_BUSY		7
#define REJ_STALE		8
#define REJ_NR_REASONS		9

/* kmod/core/proto.h: struct rdmx_conn_req, _rep, _rej */
struct conn_req {
	__u8 cma_version;
	__u8 ip_version;
	__le16 magic;
	__u8 major;
	__u8 minor;
	__le16 queue_depth;
	__le32 features;
	__le32 max_msg_size;
	__le16 lane;
	__le16 nr_lanes;
	__le32 reserved0;
	__u8 sess_uuid[16];
	__le64 generation;
	__u8 reserved[8];
};

struct conn_rep {
	__le16 magic;
	__u8 major;
	__u8 minor;
	__le16 queue_depth;
	__le16 nr_lanes;
	__le32 features;
	__le32 max_msg_size;
	__le64 generation;
	__u8 reserved[8];
};

struct conn_rej {
	__le16 magic;
	__u8 major;
	__u8 minor;
	__le16 reason;
	__u8 reserved[10];
};

static_assert(sizeof(struct conn_req) == 56, "rdmx_conn_req");
static_assert(offsetof(struct conn_req, sess_uuid) == 24, "rdmx_conn_req");
static_assert(offsetof(struct conn_req, generation) == 40, "rdmx_conn_req");
static_assert(sizeof(struct conn_rep) == 32, "rdmx_conn_rep");
static_assert(sizeof(struct conn_rej) == 16, "rdmx_conn_rej");

/* ---- output ------------------------------------------------------------- */

/* The tool's name, for complain() and the fuzz summary: set by main(). */
extern const char *craft_prog;
/* TAP lines printed by report() and skip(), and those not ok. */
extern int n_tests, n_failed;

/* "ok N - ..." or "not ok N - ...". */
__printf(2, 3) void report(bool ok, const char *fmt, ...);
/* "ok N - WHAT # SKIP WHY". */
void skip(const char *what, const char *why);
/* "# ...": a TAP comment. */
__printf(1, 2) void note(const char *fmt, ...);
/* "PROG: ..." on stderr: this host failed, not the server. */
__printf(1, 2) void complain(const char *fmt, ...);

/* CLOCK_MONOTONIC in milliseconds. */
long long now_ms(void);

/* ---- the peer ----------------------------------------------------------- */

/* HOST and PORT of the command line, once craft_target() took them. */
extern const char *craft_host, *craft_port;

/*
 * Resolve HOST:PORT, the only address any connection goes to. Returns 0;
 * else says why on stderr ("PROG: HOST:PORT: error") and returns 2.
 */
int craft_target(const char *host, const char *port);
void craft_target_free(void);

/* ---- one connection ----------------------------------------------------- */

/*
 * What a connection is made of. Its buffer, registered once, is @lead
 * bytes for the tool's own use (page aligned), then @nr_recv receive slots
 * of @recv_size bytes (work request id: the slot's number), then
 * @send_size bytes for what the tool sends.
 */
struct craft_conn_attr {
	size_t lead;
	unsigned int nr_recv;
	size_t recv_size;
	size_t send_size;
	unsigned int max_send_wr;	/* the send queue; every SEND signalled */
	unsigned int max_send_sge;	/* a SEND's pieces (0: 1) */
	unsigned int cqe;		/* one CQ for sends and receives */
	int access;			/* of the buffer's MR */
	/*
	 * Say on stderr which step of the setup failed; without it a setup
	 * fails silently (errno tells), but for a CM event that is not the
	 * one expected, which is a note.
	 */
	bool complain;
};

struct craft_conn {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	__u8 *buf;
	size_t len;
	__u8 *lead;
	__u8 *rx;
	__u8 *tx;
	struct craft_conn_attr a;
	bool disconnect_sent;		/* craft_disconnect() was called */
	struct rdma_cm_id *listen_id;	/* craft_listen()'s */
};

/*
 * Resolve the target's address and route, build PD, CQ and QP, register
 * the buffer and post every receive: all of them are there before the
 * connect request names a queue depth. Returns 0, or -1 with the
 * connection half built (craft_close() frees what there is).
 */
int craft_setup(struct craft_conn *c, const struct craft_conn_attr *a);
/*
 * As craft_setup(), but as the passive side: listen on the target's
 * address and port (saying so in a note) for a connect request within
 * @ms, its private data in @pdata (up to @len bytes, zero-filled first),
 * and build the connection on its id; craft_accept() answers it.
 */
int craft_listen(struct craft_conn *c, const struct craft_conn_attr *a,
		 int ms, void *pdata, size_t len);
/*
 * Wait for the next CM event within @ms; its type in *@type, its status in
 * *@status (if not NULL), and up to @len bytes of its private data in
 * @pdata (zero-filled first). Returns 0, or -1 on timeout or error.
 */
int craft_cm_next(struct craft_conn *c, int ms, enum rdma_cm_event_type *type,
		  int *status, void *pdata, size_t len);
/*
 * Receiver-not-ready retries asked of the peer, as rdmx asks (7 would be
 * without end, which rdmx refuses; kmod/msg/sess.h RDMX_RNR_RETRY).
 */
#define CRAFT_RNR_RETRY		6
/*
 * rdma_connect() with @len bytes of private data at @pdata (NULL and 0:
 * none); the RDMA READ depths are 1 each, the transport retry count 7,
 * the RNR retry count CRAFT_RNR_RETRY (craft_connect_rnr(): @rnr_retry),
 * and @flow_control is the CM's end-to-end flow control flag.
 */
int craft_connect(struct craft_conn *c, const void *pdata, __u8 len,
		  bool flow_control);
int craft_connect_rnr(struct craft_conn *c, const void *pdata, __u8 len,
		      bool flow_control, __u8 rnr_retry);
/*
 * rdma_accept() of craft_listen()'s request, with @len bytes of private
 * data at @pdata, flow control, no RDMA READ, and @rnr_retry RNR retries
 * asked of the peer.
 */
int craft_accept(struct craft_conn *c, const void *pdata, __u8 len,
		 __u8 rnr_retry);
/* Post receive slot @slot (work request id @slot). */
int craft_post_recv(struct craft_conn *c, unsigned int slot);
/* Post @n SENDs, chained, one scatter entry each, all with id @wr_id. */
int craft_post_sends(struct craft_conn *c, __u64 wr_id,
		     const struct ibv_sge *sge, unsigned int n);
/* Post one SEND of @len bytes at @addr, inside the buffer. */
int craft_post_send(struct craft_conn *c, __u64 wr_id, const void *addr,
		    __u32 len);
/*
 * Up to @n completions, waiting at most @ms for the first (0: a look);
 * returns how many, or a negative number when the CQ failed.
 */
int craft_poll(struct craft_conn *c, struct ibv_wc *wc, int n, int ms);
/*
 * rdma_disconnect(), once: the QP goes into error (on InfiniBand and
 * RoCE), the server is told. A no-op when there is no QP.
 */
void craft_disconnect(struct craft_conn *c);
/* Disconnect and destroy the QP (a no-op when there is none). */
void craft_close_qp(struct craft_conn *c);
/* craft_close_qp(), then free everything else, and zero @c. */
void craft_close(struct craft_conn *c);

/*
 * A connect request: magic @magic, major @major, this minor, queue depth
 * @depth, features @features, largest message @max_msg, lane 0 of 1, a
 * random session uuid, generation 1.
 */
void craft_req_pack(struct conn_req *req, __u16 magic, __u8 major,
		    __u16 depth, __u32 features, __u32 max_msg);
/* "not an rdmx peer" and so on, as rdmx_rej_reason_str() says them. */
const char *craft_rej_str(unsigned int reason);

/* ---- fuzzing ------------------------------------------------------------ */

/*
 * The fuzzers draw from splitmix64 (tests/integration/testlib.h): every
 * frame and every connection attempt from a state of its own, mix2() of
 * the seed and its number, so that what frame N of a seed is does not
 * depend on how many numbers the frames before it took.
 */
__u64 craft_rand(__u64 *s);
/* Uniform in [0, @n); 0 when @n is 0. */
__u32 craft_below(__u64 *s, __u32 n);
/* True @percent times in 100. */
bool craft_chance(__u64 *s, unsigned int percent);
/*
 * A value of @bytes bytes (1, 2, 4 or 8) worth trying in place of @cur:
 * 0, 1, the largest and the sign boundary, @cur give or take a little, a
 * bit of @cur flipped, a power of two, or anything.
 */
__u64 craft_interesting(__u64 *s, __u64 cur, unsigned int bytes);
/* Store @v little-endian in the @bytes bytes at @p. */
void craft_put_le(void *p, __u64 v, unsigned int bytes);
/* The little-endian value of the @bytes bytes at @p. */
__u64 craft_get_le(const void *p, unsigned int bytes);

/* Byte-level mutations of a frame (craft_mangle()). */
enum craft_mangle {
	CRAFT_TRUNCATE,		/* cut short, anywhere, to nothing at all */
	CRAFT_EXTEND,		/* random or zero bytes appended */
	CRAFT_RANDOM_BYTES,	/* a few bytes replaced */
	CRAFT_BIT_FLIPS,	/* a few bits flipped */
	CRAFT_NR_MANGLES,
};

/*
 * Mutate the @len bytes at @buf (room for @max) as @how says; returns the
 * new length.
 */
size_t craft_mangle(__u64 *s, __u8 *buf, size_t len, size_t max,
		    enum craft_mangle how);

/* What the fuzzers count. */
struct craft_fuzz {
	__u64 seed;
	unsigned long long frames;	/* posted */
	unsigned long long disconnects;	/* the server ended the connection */
	unsigned long long err_replies;	/* answered with an error */
	unsigned long long ok_replies;	/* answered, or taken, normally */
	unsigned long long silent;	/* neither in time: connection dropped */
	unsigned long long connects;	/* valid connects that were accepted */
	unsigned long long busy;	/* valid connects refused BUSY, retried */
	/* connect requests with fuzzed private data */
	unsigned long long cm_fuzzed;
	unsigned long long cm_accepted;
	unsigned long long cm_rejected[REJ_NR_REASONS];
	unsigned long long cm_foreign;	/* rejected without rdmx data */
	unsigned long long cm_unanswered;
	unsigned long long cm_other;	/* another CM event */
	unsigned int anomalies;		/* what the server must not do */
	long long start_ms;
	/* the frames' mix (craft_fuzz_hostile()) */
	unsigned int hostile_pct;	/* percent meant to end the connection */
	unsigned long long hostile;	/* posted frames meant to end it */
	unsigned long long edgy;	/* posted valid frames, at the edges */
	unsigned long long edgy_undone;	/* of those: edges undone, as built */
};

/* The share of frames meant to end the connection, by default (-m). */
#define CRAFT_HOSTILE_PCT	10
/*
 * A frame meant to end the connection is mutated in rounds (of one to
 * three mutations), at most this many, until the tool's mirror of the
 * server's checks says that the server must end the connection on it.
 */
#define CRAFT_MUTATE_ROUNDS	5

/*
 * Whether frame @i of the seed is hostile (mutated until the server must
 * end the connection: @f->hostile_pct percent of frames) or valid at the
 * protocol's edges (which the server must take, and the connection
 * stays). Drawn from a stream of its own, mix2() of the seed and @i, so
 * that the frame's own stream is as before.
 */
bool craft_fuzz_hostile(const struct craft_fuzz *f, unsigned long long i);
/*
 * Parse -m PERCENT (0 to 100) into *@pct; else say so on stderr and
 * return false.
 */
bool craft_parse_percent(const char *arg, unsigned int *pct);

/*
 * Something the server did that the protocol says it must not: counted,
 * the first few shown as notes ("# fuzz: server: ...").
 */
__printf(2, 3) void craft_fuzz_anomaly(struct craft_fuzz *f,
				       const char *fmt, ...);

/*
 * Fuzz the private data of a valid connect request @req: one to three of
 * its fields set to values worth trying, or its bytes mangled, or its
 * length cut (to none at all). *@len is its length, 56 on entry. Writes
 * what was done to @what (@size bytes) for a note.
 */
void craft_fuzz_req(__u64 *s, struct conn_req *req, __u8 *len, char *what,
		    size_t size);
/*
 * The reject reason rdmx_conn_req_parse() and the listener's dispatch
 * (block queue or session) give the whole request @req, or -1 when it
 * passes them; what follows (the session it names, the limits) may still
 * refuse it, with BUSY, STALE, NOT_ALLOWED or PARAMS.
 */
int craft_req_verdict(const struct conn_req *req);
/*
 * Count the answer to a fuzzed connect request: @type, the CM event, and
 * for a reject its private data @rej. Returns the reject's rdmx reason, or
 * -1 when it was no rdmx reject.
 */
int craft_fuzz_req_answer(struct craft_fuzz *f, enum rdma_cm_event_type type,
			  const struct conn_rej *rej, bool answered);
/*
 * Whether the server's answer to fuzzed request @req (@len bytes; @reason
 * from craft_fuzz_req_answer()) is one craft_req_verdict() allows; an
 * anomaly when it is not. @what says what the fuzzing did.
 */
void craft_fuzz_req_judge(struct craft_fuzz *f, const struct conn_req *req,
			  __u8 len, bool answered, enum rdma_cm_event_type type,
			  int reason, const char *what);
/*
 * Close at once a session a fuzzed connect request opened by chance, so
 * that it does not wait for its loss timeout: a bare ACK makes the
 * connection live, a CLOSE ends the session (kmod/msg/sess_recv.c). @buf is 48
 * bytes of @c's buffer.
 */
void craft_sess_close(struct craft_conn *c, void *buf);
/*
 * The notes on what the server did, then the summary line:
 * "PROG: fuzz seed S: N frames, R reconnects, T s (F/s)".
 */
void craft_fuzz_summary(const struct craft_fuzz *f);
int craft_fuzz_exit(const struct craft_fuzz *f, int alive);

/* A note of @len bytes at @p in hex, the first 64 of them. */
void craft_note_hex(const char *what, const void *p, size_t len);

#endif /* RDMX_CRAFTLIB_H */
