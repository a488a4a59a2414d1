// SPDX-License-Identifier: GPL-2.0
/*
 * The plumbing of the hand-made rdmx peers; see craftlib.h.
 */
/* __u64 is unsigned long long, printed with %llu, on every architecture. */
#define __SANE_USERSPACE_TYPES__

#include <endian.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "craftlib.h"
#include "testlib.h"

const char *craft_prog = "rdmx-craft";
const char *craft_host, *craft_port;
int n_tests, n_failed;

static struct addrinfo *craft_dst;

/* ---- output ------------------------------------------------------------- */

void report(bool ok, const char *fmt, ...)
{
	va_list ap;

	n_tests++;
	if (!ok)
		n_failed++;
	printf("%sok %d - ", ok ? "" : "not ", n_tests);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

void skip(const char *what, const char *why)
{
	n_tests++;
	printf("ok %d - %s # SKIP %s\n", n_tests, what, why);
	fflush(stdout);
}

void note(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

void complain(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", craft_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
}

long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* ---- the peer ----------------------------------------------------------- */

int craft_target(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM };
	int ret;

	craft_host = host;
	craft_port = port;
	ret = getaddrinfo(host, port, &hints, &craft_dst);
	if (ret) {
		fprintf(stderr, "%s: %s:%s: %s\n", craft_prog, host, port,
			gai_strerror(ret));
		craft_dst = NULL;
		return 2;
	}
	return 0;
}

void craft_target_free(void)
{
	if (craft_dst)
		freeaddrinfo(craft_dst);
	craft_dst = NULL;
}

/* ---- one connection ----------------------------------------------------- */

/* Up to @len bytes of @ev's private data into @pdata, zero-filled first. */
static void cm_event_pdata(const struct rdma_cm_event *ev, void *pdata,
			   size_t len)
{
	memset(pdata, 0, len);
	if (ev->param.conn.private_data)
		memcpy(pdata, ev->param.conn.private_data,
		       ev->param.conn.private_data_len < len ?
		       ev->param.conn.private_data_len : len);
}

int craft_cm_next(struct craft_conn *c, int ms, enum rdma_cm_event_type *type,
		  int *status, void *pdata, size_t len)
{
	struct pollfd pfd = { .fd = c->ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&pfd, 1, ms) <= 0 || rdma_get_cm_event(c->ch, &ev))
		return -1;
	*type = ev->event;
	if (status)
		*status = ev->status;
	if (pdata)
		cm_event_pdata(ev, pdata, len);
	rdma_ack_cm_event(ev);
	return 0;
}

/* 0 when the next event is @want; else -1, said as the attributes ask. */
static int cm_expect(struct craft_conn *c, enum rdma_cm_event_type want)
{
	enum rdma_cm_event_type type;
	int status = 0;

	if (craft_cm_next(c, 30000, &type, &status, NULL, 0)) {
		if (c->a.complain)
			complain("%s:%s: no %s", craft_host, craft_port,
				 rdma_event_str(want));
		return -1;
	}
	if (type != want) {
		if (c->a.complain)
			complain("%s:%s: expected %s, got %s (status %d)",
				 craft_host, craft_port, rdma_event_str(want),
				 rdma_event_str(type), status);
		else
			note("expected %s, got %s", rdma_event_str(want),
			     rdma_event_str(type));
		return -1;
	}
	return 0;
}

/* @c's attributes and its event channel, with an id on it in *@id. */
static int craft_begin(struct craft_conn *c, const struct craft_conn_attr *a,
		       struct rdma_cm_id **id)
{
	memset(c, 0, sizeof(*c));
	c->a = *a;
	c->len = a->lead + a->nr_recv * a->recv_size + a->send_size;
	c->ch = rdma_create_event_channel();
	if (!c->ch) {
		if (a->complain)
			complain("no rdma_cm event channel: %m (no RDMA device?)");
		return -1;
	}
	if (rdma_create_id(c->ch, id, NULL, RDMA_PS_TCP)) {
		if (a->complain)
			complain("rdma_create_id: %m");
		return -1;
	}
	return 0;
}

static int craft_build(struct craft_conn *c);

int craft_setup(struct craft_conn *c, const struct craft_conn_attr *a)
{
	if (craft_begin(c, a, &c->id))
		return -1;
	if (rdma_resolve_addr(c->id, NULL, craft_dst->ai_addr, 5000)) {
		if (a->complain)
			complain("cannot resolve %s:%s to an RDMA device: %m (no RDMA device?)",
				 craft_host, craft_port);
		return -1;
	}
	if (cm_expect(c, RDMA_CM_EVENT_ADDR_RESOLVED))
		return -1;
	if (rdma_resolve_route(c->id, 5000)) {
		if (a->complain)
			complain("no route to %s:%s: %m", craft_host, craft_port);
		return -1;
	}
	if (cm_expect(c, RDMA_CM_EVENT_ROUTE_RESOLVED))
		return -1;
	return craft_build(c);
}

int craft_listen(struct craft_conn *c, const struct craft_conn_attr *a,
		 int ms, void *pdata, size_t len)
{
	struct pollfd pfd;
	struct rdma_cm_event *ev;

	if (craft_begin(c, a, &c->listen_id))
		return -1;
	if (rdma_bind_addr(c->listen_id, craft_dst->ai_addr) ||
	    rdma_listen(c->listen_id, 1)) {
		if (a->complain)
			complain("cannot listen on %s:%s: %m", craft_host,
				 craft_port);
		return -1;
	}
	printf("# listening on %s:%s\n", craft_host, craft_port);
	fflush(stdout);
	pfd.fd = c->ch->fd;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, ms) <= 0 || rdma_get_cm_event(c->ch, &ev)) {
		if (a->complain)
			complain("%s:%s: no connect request in %d s", craft_host,
				 craft_port, ms / 1000);
		return -1;
	}
	if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
		if (a->complain)
			complain("%s:%s: expected a connect request, got %s",
				 craft_host, craft_port,
				 rdma_event_str(ev->event));
		rdma_ack_cm_event(ev);
		return -1;
	}
	c->id = ev->id;
	cm_event_pdata(ev, pdata, len);
	rdma_ack_cm_event(ev);
	return craft_build(c);
}

/* PD, CQ and QP on @c->id, its buffer registered, every receive posted. */
static int craft_build(struct craft_conn *c)
{
	const struct craft_conn_attr *a = &c->a;
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = a->max_send_wr,
			 .max_recv_wr = a->nr_recv,
			 .max_send_sge = a->max_send_sge ?: 1,
			 .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
	};
	unsigned int i;

	c->pd = ibv_alloc_pd(c->id->verbs);
	c->cq = ibv_create_cq(c->id->verbs, a->cqe, NULL, NULL, 0);
	if (!c->pd || !c->cq) {
		if (a->complain)
			complain("%s: protection domain or completion queue: %m",
				 ibv_get_device_name(c->id->verbs->device));
		return -1;
	}
	qa.send_cq = c->cq;
	qa.recv_cq = c->cq;
	if (rdma_create_qp(c->id, c->pd, &qa)) {
		if (a->complain)
			complain("%s: queue pair: %m",
				 ibv_get_device_name(c->id->verbs->device));
		return -1;
	}
	if (posix_memalign((void **)&c->buf, 4096, c->len)) {
		if (a->complain)
			complain("out of memory");
		return -1;
	}
	memset(c->buf, 0, c->len);
	c->lead = c->buf;
	c->rx = c->buf + a->lead;
	c->tx = c->rx + a->nr_recv * a->recv_size;
	c->mr = ibv_reg_mr(c->pd, c->buf, c->len, a->access);
	if (!c->mr) {
		if (a->complain)
			complain("memory registration: %m");
		return -1;
	}
	for (i = 0; i < a->nr_recv; i++) {
		if (craft_post_recv(c, i)) {
			if (a->complain)
				complain("posting receive %u: %m", i);
			return -1;
		}
	}
	return 0;
}

int craft_connect_rnr(struct craft_conn *c, const void *pdata, __u8 len,
		      bool flow_control, __u8 rnr_retry)
{
	struct rdma_conn_param cp = {
		.private_data = pdata,
		.private_data_len = len,
		.responder_resources = 1,
		.initiator_depth = 1,
		.flow_control = flow_control,
		.retry_count = 7,
		.rnr_retry_count = rnr_retry,
	};

	return rdma_connect(c->id, &cp);
}

int craft_connect(struct craft_conn *c, const void *pdata, __u8 len,
		  bool flow_control)
{
	return craft_connect_rnr(c, pdata, len, flow_control, CRAFT_RNR_RETRY);
}

int craft_accept(struct craft_conn *c, const void *pdata, __u8 len,
		 __u8 rnr_retry)
{
	struct rdma_conn_param cp = {
		.private_data = pdata,
		.private_data_len = len,
		.flow_control = 1,
		.rnr_retry_count = rnr_retry,
	};

	return rdma_accept(c->id, &cp);
}

int craft_post_recv(struct craft_conn *c, unsigned int slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(c->rx + slot * c->a.recv_size),
		.length = c->a.recv_size,
		.lkey = c->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(c->id->qp, &wr, &bad);
}

int craft_post_sends(struct craft_conn *c, __u64 wr_id,
		     const struct ibv_sge *sge, unsigned int n)
{
	struct ibv_send_wr wr[2], *bad;
	unsigned int i;

	assert(n >= 1 && n <= ARRAY_SIZE(wr));
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < n; i++) {
		wr[i].wr_id = wr_id;
		wr[i].sg_list = (struct ibv_sge *)&sge[i];
		wr[i].num_sge = 1;
		wr[i].opcode = IBV_WR_SEND;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	return ibv_post_send(c->id->qp, wr, &bad);
}

int craft_post_send(struct craft_conn *c, __u64 wr_id, const void *addr,
		    __u32 len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)addr,
		.length = len,
		.lkey = c->mr->lkey,
	};

	return craft_post_sends(c, wr_id, &sge, 1);
}

int craft_poll(struct craft_conn *c, struct ibv_wc *wc, int n, int ms)
{
	long long end;
	int got;

	if (ms <= 0)
		return ibv_poll_cq(c->cq, n, wc);
	end = now_ms() + ms;
	for (;;) {
		got = ibv_poll_cq(c->cq, n, wc);
		if (got || now_ms() >= end)
			return got;
		usleep(100);
	}
}

void craft_disconnect(struct craft_conn *c)
{
	if (c->id && c->id->qp && !c->disconnect_sent) {
		rdma_disconnect(c->id);
		c->disconnect_sent = true;
	}
}

void craft_close_qp(struct craft_conn *c)
{
	if (c->id && c->id->qp) {
		craft_disconnect(c);
		rdma_destroy_qp(c->id);
	}
}

void craft_close(struct craft_conn *c)
{
	craft_close_qp(c);
	if (c->mr)
		ibv_dereg_mr(c->mr);
	if (c->cq)
		ibv_destroy_cq(c->cq);
	if (c->pd)
		ibv_dealloc_pd(c->pd);
	if (c->id)
		rdma_destroy_id(c->id);
	if (c->listen_id)
		rdma_destroy_id(c->listen_id);
	if (c->ch)
		rdma_destroy_event_channel(c->ch);
	free(c->buf);
	memset(c, 0, sizeof(*c));
}

void craft_req_pack(struct conn_req *req, __u16 magic, __u8 major,
		    __u16 depth, __u32 features, __u32 max_msg)
{
	memset(req, 0, sizeof(*req));
	req->magic = htole16(magic);
	req->major = major;
	req->minor = PROTO_MINOR;
	req->queue_depth = htole16(depth);
	req->features = htole32(features);
	req->max_msg_size = htole32(max_msg);
	req->lane = htole16(0);
	req->nr_lanes = htole16(1);
	if (getrandom(req->sess_uuid, sizeof(req->sess_uuid), 0) < 0)
		memset(req->sess_uuid, 0x5a, sizeof(req->sess_uuid));
	req->generation = htole64(1);
}

const char *craft_rej_str(unsigned int reason)
{
	static const char *const str[REJ_NR_REASONS] = {
		[REJ_UNKNOWN] = "unknown reason",
		[REJ_BAD_MAGIC] = "not an rdmx peer",
		[REJ_VERSION] = "incompatible protocol version",
		[REJ_MALFORMED] = "malformed connection data",
		[REJ_PARAMS] = "connection parameters out of bounds",
		[REJ_FEATURES] = "no feature in common",
		[REJ_NOT_ALLOWED] = "peer not allowed",
		[REJ_BUSY] = "peer busy",
		[REJ_STALE] = "unknown or stale session",
	};

	return reason < REJ_NR_REASONS ? str[reason] : str[REJ_UNKNOWN];
}

/* ---- fuzzing ------------------------------------------------------------ */

__u64 craft_rand(__u64 *s)
{
	return splitmix64(s);
}

__u32 craft_below(__u64 *s, __u32 n)
{
	return (__u32)(((craft_rand(s) >> 32) * n) >> 32);
}

bool craft_chance(__u64 *s, unsigned int percent)
{
	return craft_below(s, 100) < percent;
}

__u64 craft_interesting(__u64 *s, __u64 cur, unsigned int bytes)
{
	__u64 max = bytes >= 8 ? ~0ULL : (1ULL << (8 * bytes)) - 1;
	unsigned int bits = 8 * (bytes >= 8 ? 8 : bytes);
	__u64 v;

	switch (craft_below(s, 10)) {
	case 0:
		v = 0;
		break;
	case 1:
		v = 1;
		break;
	case 2:
		v = max;
		break;
	case 3:		/* either side of the sign bit */
		v = (max >> 1) + craft_below(s, 2);
		break;
	case 4:
		v = cur + 1 + craft_below(s, 4);
		break;
	case 5:
		v = cur - 1 - craft_below(s, 4);
		break;
	case 6:
		v = cur ^ (1ULL << craft_below(s, bits));
		break;
	case 7:
		v = 1ULL << craft_below(s, bits);
		break;
	case 8:		/* near, either way */
		v = cur + craft_below(s, 1024) - 512;
		break;
	default:
		v = craft_rand(s);
		break;
	}
	return v & max;
}

void craft_put_le(void *p, __u64 v, unsigned int bytes)
{
	__u8 *b = p;
	unsigned int i;

	for (i = 0; i < bytes; i++, v >>= 8)
		b[i] = v & 0xff;
}

__u64 craft_get_le(const void *p, unsigned int bytes)
{
	const __u8 *b = p;
	__u64 v = 0;
	unsigned int i;

	for (i = bytes; i > 0; i--)
		v = v << 8 | b[i - 1];
	return v;
}

size_t craft_mangle(__u64 *s, __u8 *buf, size_t len, size_t max,
		    enum craft_mangle how)
{
	unsigned int i, n = 1 + craft_below(s, 4);
	size_t add;

	switch (how) {
	case CRAFT_TRUNCATE:
		return len ? craft_below(s, len) : 0;
	case CRAFT_EXTEND:
		if (len >= max)
			return len;
		/* Mostly a few bytes; sometimes up to the room there is. */
		add = max - len;
		if (add > 8 && craft_chance(s, 70))
			add = 8;
		add = 1 + craft_below(s, add);
		if (craft_chance(s, 50))
			memset(buf + len, 0, add);
		else
			for (i = 0; i < add; i++)
				buf[len + i] = craft_rand(s);
		return len + add;
	case CRAFT_RANDOM_BYTES:
		for (i = 0; len && i < n; i++)
			buf[craft_below(s, len)] = craft_rand(s);
		return len;
	case CRAFT_BIT_FLIPS:
	default:
		for (i = 0; len && i < n; i++)
			buf[craft_below(s, len)] ^= 1U << craft_below(s, 8);
		return len;
	}
}

/* The fields of a connect request, and values at their bounds. */
static const struct {
	const char *name;
	unsigned char off, size;
	__u64 bounds[8];
	unsigned int nr_bounds;
} req_fields[] = {
	{ "cma_version", offsetof(struct conn_req, cma_version), 1, { 0 }, 0 },
	{ "ip_version", offsetof(struct conn_req, ip_version), 1, { 0 }, 0 },
	{ "magic", offsetof(struct conn_req, magic), 2,
	  { 0, 0xdc52, PROTO_MAGIC + 1 }, 3 },
	{ "major", offsetof(struct conn_req, major), 1,
	  { 0, PROTO_MAJOR + 1, 0xff }, 3 },
	{ "minor", offsetof(struct conn_req, minor), 1,
	  { PROTO_MINOR + 1, 0xff }, 2 },
	{ "queue_depth", offsetof(struct conn_req, queue_depth), 2,
	  { 0, CREDITS_RESERVED, CREDITS_RESERVED + 1, PROTO_MAX_QUEUE_DEPTH,
	    PROTO_MAX_QUEUE_DEPTH + 1, 257 }, 6 },
	{ "features", offsetof(struct conn_req, features), 4,
	  { 0, PROTO_F_MSG, PROTO_F_BLOCK, PROTO_F_MSG | PROTO_F_BLOCK,
	    PROTO_F_RMA, PROTO_F_RMA | PROTO_F_BLOCK, BIT(3), 0xffffffff }, 8 },
	{ "max_msg_size", offsetof(struct conn_req, max_msg_size), 4,
	  { 0, PROTO_MIN_MSG_SIZE - 1, PROTO_MIN_MSG_SIZE, 32 * 1024 - 257,
	    32 * 1024 - 256, 1024 * 1024, 1024 * 1024 + 1, 4097 }, 8 },
	{ "lane", offsetof(struct conn_req, lane), 2,
	  { 1, 15, 16, PROTO_MAX_LANES - 1, PROTO_MAX_LANES }, 5 },
	{ "nr_lanes", offsetof(struct conn_req, nr_lanes), 2,
	  { 0, 2, 16, 17, PROTO_MAX_LANES, PROTO_MAX_LANES + 1 }, 6 },
	{ "reserved0", offsetof(struct conn_req, reserved0), 4, { 1 }, 1 },
	{ "sess_uuid", offsetof(struct conn_req, sess_uuid), 16, { 0 }, 0 },
	{ "generation", offsetof(struct conn_req, generation), 8,
	  { 0, 1, 2 }, 3 },
	{ "reserved", offsetof(struct conn_req, reserved), 8, { 1 }, 1 },
};

void craft_fuzz_req(__u64 *s, struct conn_req *req, __u8 *len, char *what,
		    size_t size)
{
	__u8 *b = (__u8 *)req;
	unsigned int i, n, k;
	size_t at = 0;
	__u64 v;

	*what = 0;
	switch (craft_below(s, 10)) {
	case 0:		/* cut short: nothing at all, or part of it */
		*len = craft_below(s, sizeof(*req));
		snprintf(what, size, "private data cut to %u bytes", *len);
		return;
	case 1:
		craft_mangle(s, b, sizeof(*req), sizeof(*req),
			     craft_chance(s, 50) ? CRAFT_RANDOM_BYTES :
						   CRAFT_BIT_FLIPS);
		snprintf(what, size, "bytes mangled");
		return;
	default:
		break;
	}
	n = 1 + craft_below(s, 3);
	for (i = 0; i < n; i++) {
		k = craft_below(s, ARRAY_SIZE(req_fields));
		if (req_fields[k].size > 8) {
			/* The uuid: another session's, as far as the server knows. */
			craft_mangle(s, b + req_fields[k].off, req_fields[k].size,
				     req_fields[k].size, CRAFT_RANDOM_BYTES);
			at += snprintf(what + at, size - at, "%s%s changed",
				       i ? ", " : "", req_fields[k].name);
		} else {
			v = craft_get_le(b + req_fields[k].off,
					 req_fields[k].size);
			if (req_fields[k].nr_bounds && craft_chance(s, 50))
				v = req_fields[k].bounds[craft_below(s,
							 req_fields[k].nr_bounds)];
			else
				v = craft_interesting(s, v, req_fields[k].size);
			craft_put_le(b + req_fields[k].off, v,
				     req_fields[k].size);
			at += snprintf(what + at, size - at, "%s%s %#llx",
				       i ? ", " : "", req_fields[k].name,
				       (unsigned long long)v);
		}
		if (at >= size)
			break;
	}
}

/* As rdmx_reserved_ok(): reserved bytes count in our own minor version. */
static bool req_reserved_ok(const struct conn_req *req)
{
	unsigned int i;

	if (req->minor > PROTO_MINOR)
		return true;
	for (i = 0; i < sizeof(req->reserved); i++)
		if (req->reserved[i])
			return false;
	return !req->reserved0;
}

int craft_req_verdict(const struct conn_req *req)
{
	unsigned int depth = le16toh(req->queue_depth);
	unsigned int nr_lanes = le16toh(req->nr_lanes);
	unsigned int lane = le16toh(req->lane);
	__u32 features = le32toh(req->features) & PROTO_F_KNOWN;
	__u32 max_msg = le32toh(req->max_msg_size);

	/* rdmx_conn_req_parse(), in its order */
	if (le16toh(req->magic) != PROTO_MAGIC)
		return REJ_BAD_MAGIC;
	if (req->major != PROTO_MAJOR)
		return REJ_VERSION;
	if (!req_reserved_ok(req))
		return REJ_MALFORMED;
	if (depth <= CREDITS_RESERVED || depth > PROTO_MAX_QUEUE_DEPTH ||
	    nr_lanes < 1 || nr_lanes > PROTO_MAX_LANES ||
	    max_msg < PROTO_MIN_MSG_SIZE || lane >= nr_lanes)
		return REJ_PARAMS;
	if (!features)
		return REJ_FEATURES;
	/*
	 * rdmx_cm_connect_request(): the service that takes it, by its
	 * features (a block queue, else a session); then rdmx_msg_connect()
	 */
	if (features == PROTO_F_BLOCK)
		return -1;
	if (!(features & PROTO_F_MSG))
		return REJ_FEATURES;
	if (max_msg < SEG_SIZE)
		return REJ_PARAMS;
	if (lane >= SESS_MAX_LANES)
		return REJ_PARAMS;
	return -1;
}

/* Salt of the stream that says which frames are hostile. */
#define CRAFT_SALT_HOSTILE	0x686f7374696c6573ULL

bool craft_fuzz_hostile(const struct craft_fuzz *f, unsigned long long i)
{
	__u64 r = mix2(f->seed ^ CRAFT_SALT_HOSTILE, i);

	return craft_chance(&r, f->hostile_pct);
}

bool craft_parse_percent(const char *arg, unsigned int *pct)
{
	unsigned long v;
	char *endp;

	errno = 0;
	v = strtoul(arg, &endp, 10);
	if (errno || *endp || !*arg || v > 100) {
		fprintf(stderr, "%s: -m: a percentage, 0 to 100, not '%s'\n",
			craft_prog, arg);
		return false;
	}
	*pct = v;
	return true;
}

void craft_fuzz_anomaly(struct craft_fuzz *f, const char *fmt, ...)
{
	va_list ap;

	if (f->anomalies++ >= 10)
		return;
	printf("# fuzz: server: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

int craft_fuzz_req_answer(struct craft_fuzz *f, enum rdma_cm_event_type type,
			  const struct conn_rej *rej, bool answered)
{
	unsigned int reason;

	if (!answered) {
		f->cm_unanswered++;
		return -1;
	}
	if (type == RDMA_CM_EVENT_ESTABLISHED) {
		f->cm_accepted++;
		return -1;
	}
	if (type != RDMA_CM_EVENT_REJECTED) {
		f->cm_other++;
		return -1;
	}
	reason = le16toh(rej->reason);
	if (le16toh(rej->magic) != PROTO_MAGIC || rej->major != PROTO_MAJOR ||
	    reason >= REJ_NR_REASONS) {
		f->cm_foreign++;
		return -1;
	}
	f->cm_rejected[reason]++;
	return reason;
}

void craft_fuzz_req_judge(struct craft_fuzz *f, const struct conn_req *req,
			  __u8 len, bool answered, enum rdma_cm_event_type type,
			  int reason, const char *what)
{
	int want;

	/*
	 * A request cut short reads as zero-padded on InfiniBand and RoCE
	 * (the CM's private data has a fixed size), as short on iWARP:
	 * either answer is right. Silence is counted apart.
	 */
	if (len < sizeof(*req) || !answered)
		return;
	want = craft_req_verdict(req);
	if (type == RDMA_CM_EVENT_ESTABLISHED) {
		if (want >= 0)
			craft_fuzz_anomaly(f, "accepted a connect request it must refuse (%s): %s",
					   craft_rej_str(want), what);
		return;
	}
	if (type != RDMA_CM_EVENT_REJECTED || reason < 0)
		return;
	/* Out of memory or over a limit, any request may be refused BUSY. */
	if (reason == REJ_BUSY)
		return;
	if (want >= 0 && reason != want)
		craft_fuzz_anomaly(f, "refused a request \"%s\", not \"%s\": %s",
				   craft_rej_str(reason), craft_rej_str(want), what);
	/* Past the checks, only the session's state refuses. */
	if (want < 0 && reason != REJ_STALE && reason != REJ_NOT_ALLOWED &&
	    reason != REJ_PARAMS)
		craft_fuzz_anomaly(f, "refused a well-formed connect request: %s: %s",
				   craft_rej_str(reason), what);
}

void craft_sess_close(struct craft_conn *c, void *buf)
{
	/* struct rdmx_msg_hdr: type ACK (2), then type CLOSE (5); all else 0 */
	__u8 *m = buf;
	struct ibv_sge sge[2] = {
		{ .addr = (uintptr_t)m, .length = 24, .lkey = c->mr->lkey },
		{ .addr = (uintptr_t)(m + 24), .length = 24, .lkey = c->mr->lkey },
	};
	enum rdma_cm_event_type type;
	long long end = now_ms() + 1000;

	memset(m, 0, 48);
	m[0] = 2;
	m[24] = 5;
	if (craft_post_sends(c, ~0ULL, sge, 2))
		return;
	/* Until the server ends it, for a second at most. */
	while (now_ms() < end) {
		if (!craft_cm_next(c, 100, &type, NULL, NULL, 0) &&
		    type == RDMA_CM_EVENT_DISCONNECTED)
			break;
	}
}

void craft_fuzz_summary(const struct craft_fuzz *f)
{
	double secs = (now_ms() - f->start_ms) / 1000.0;
	unsigned long long reconnects = f->connects ? f->connects - 1 : 0;
	char buf[512];
	size_t at = 0;
	unsigned int r;

	note("fuzz: %llu frames: %llu disconnects, %llu error replies,",
	     f->frames, f->disconnects, f->err_replies);
	note("fuzz: %llu normal replies, %llu silent", f->ok_replies,
	     f->silent);
	note("fuzz: %llu connections, %llu refused BUSY and tried again",
	     f->connects, f->busy);
	note("fuzz: %llu frames meant to end the connection (-m %u),",
	     f->hostile, f->hostile_pct);
	note("fuzz: %llu valid at the edges (%llu edges undone)", f->edgy,
	     f->edgy_undone);
	buf[0] = 0;
	for (r = 0; r < REJ_NR_REASONS && at < sizeof(buf); r++)
		if (f->cm_rejected[r])
			at += snprintf(buf + at, sizeof(buf) - at, ", %llu %s",
				       f->cm_rejected[r], craft_rej_str(r));
	note("fuzz: %llu connect requests fuzzed: %llu accepted, %llu unanswered,",
	     f->cm_fuzzed, f->cm_accepted, f->cm_unanswered);
	note("fuzz: %llu other CM events, %llu refused without rdmx data%s",
	     f->cm_other, f->cm_foreign, buf);
	if (f->anomalies)
		note("fuzz: %u anomalies in what the server did (the first shown above)",
		     f->anomalies);
	printf("%s: fuzz seed %llu: %llu frames, %llu reconnects, %.1f s (%.1f/s)\n",
	       craft_prog, (unsigned long long)f->seed, f->frames, reconnects,
	       secs, secs > 0 ? f->frames / secs : 0.0);
	fflush(stdout);
}

/*
 * The fuzz's exit status: @alive's (0: the server still serves, 1: it does
 * not, 2: the fuzz could not run), else 1 when the server did what the
 * mirror forbids, said in a TAP line.
 */
int craft_fuzz_exit(const struct craft_fuzz *f, int alive)
{
	report(!f->anomalies,
	       "fuzz: the server did only what the mirror allows (%u anomalies)",
	       f->anomalies);
	if (alive)
		return alive;
	return f->anomalies ? 1 : 0;
}

void craft_note_hex(const char *what, const void *p, size_t len)
{
	const __u8 *b = p;
	char hex[3 * 64 + 1];
	size_t i, n = len < 64 ? len : 64;

	hex[0] = 0;
	for (i = 0; i < n; i++)
		snprintf(hex + 3 * i, sizeof(hex) - 3 * i, " %02x", b[i]);
	note("%s (%zu bytes):%s%s", what, len, hex, len > n ? " ..." : "");
}
