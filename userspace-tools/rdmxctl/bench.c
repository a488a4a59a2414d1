// SPDX-License-Identifier: GPL-2.0
/*
 * rdmxctl bench: the in-kernel benchmark (RDMX_IOC_BENCH), served and run.
 *
 * Without HOST it serves: it listens for the rdmx.bench service and, for
 * each channel, registers a buffer with remote read, write and atomic
 * rights, sends its token, then takes part in SEND runs. With HOST it
 * connects, and for each size runs the benchmark in the kernel and prints
 * a row in perftest's columns (or a JSON object with -j).
 *
 * The conversation on the channel, after the connection:
 *   client -> server  HELLO (region bytes wanted)
 *   server -> client  the region's token
 *   then, before each SEND run:
 *   client -> server  RUN (message bytes, whether each is answered)
 *   client -> server  the run's messages (the kernel sends them), answered
 *                     one by one when asked, then an empty message, which
 *                     the server answers with an empty one
 * and the client's end of stream ends it. One-sided runs need nothing of
 * the server's CPU.
 */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rdmxctl.h"

#define BENCH_SERVICE		"rdmx.bench"
#define BENCH_MAGIC		0x42584452u	/* "RDXB", little-endian */
#define BENCH_VERSION		1
#define BENCH_MSG_HELLO		1
#define BENCH_MSG_RUN		2
#define BENCH_RUN_PINGPONG	1
#define BENCH_SIZE_BW		65536
#define BENCH_SIZE_LAT		2
#define BENCH_ITERS_BW		1000
#define BENCH_ITERS_LAT		5000
#define BENCH_DEPTH_BW		128
#define BENCH_SWEEP_MIN_LOG	1
#define BENCH_SWEEP_MAX_LOG	23
#define BENCH_TIMEOUT_MS	10000
/* Messages the server takes per RECV, and their bytes, at most. */
#define BENCH_RECV_BATCH	64
#define BENCH_RECV_BYTES	(16u << 20)
/* perftest's MB: 2^20 bytes. */
#define BENCH_MB		1048576.0

/**
 * struct bench_msg - a control message (little-endian)
 * @magic: BENCH_MAGIC
 * @version: BENCH_VERSION
 * @type: BENCH_MSG_*
 * @flags: RUN: BENCH_RUN_*
 * @pad: zero
 * @msg_len: RUN: bytes of each message of the run
 * @reserved: zero
 * @region_len: HELLO: bytes of the region the client will reach
 */
struct bench_msg {
	uint32_t magic;
	uint8_t version;
	uint8_t type;
	uint8_t flags;
	uint8_t pad;
	uint32_t msg_len;
	uint32_t reserved;
	uint64_t region_len;
};

enum {
	BENCH_OPT_PORT,
	BENCH_OPT_ADDR,
	BENCH_OPT_TEST,
	BENCH_OPT_MODE,
	BENCH_OPT_SIZE,
	BENCH_OPT_ALL,
	BENCH_OPT_ITERS,
	BENCH_OPT_DURATION,
	BENCH_OPT_DEPTH,
	BENCH_OPT_JSON,
	BENCH_OPT_ONCE,
};

static const struct rd_opt bench_opts[] = {
	{ BENCH_OPT_PORT,	'p', "port", true },
	{ BENCH_OPT_ADDR,	0, "addr", true },
	{ BENCH_OPT_TEST,	't', "test", true },
	{ BENCH_OPT_MODE,	'm', "mode", true },
	{ BENCH_OPT_SIZE,	's', "size", true },
	{ BENCH_OPT_ALL,	'a', "all", false },
	{ BENCH_OPT_ITERS,	'n', "iters", true },
	{ BENCH_OPT_DURATION,	'D', "duration", true },
	{ BENCH_OPT_DEPTH,	'd', "depth", true },
	{ BENCH_OPT_JSON,	'j', "json", false },
	{ BENCH_OPT_ONCE,	0, "once", false },
	{ 0, 0, NULL, false },
};

/* The -t names, and the kernel's op for each */
static const struct {
	const char *name;
	uint32_t op;
} bench_tests[] = {
	{ "send",	RDMX_BENCH_SEND },
	{ "write",	RDMX_BENCH_WRITE },
	{ "read",	RDMX_BENCH_READ },
	{ "cas",	RDMX_BENCH_CMP_SWAP },
	{ "fadd",	RDMX_BENCH_FETCH_ADD },
};

/**
 * struct bench - one rdmxctl bench
 * @peer: host (NULL: serve), port and service
 * @local: serving: the address to listen on
 * @test: index in bench_tests
 * @lat: -m lat
 * @size: -s, or the mode's default
 * @sweep: -a
 * @iters: -n, or the mode's default; 0 with -D
 * @duration_s: -D, else 0
 * @depth: -d, or the mode's default
 * @depth_set: -d was given
 * @size_set: -s was given
 * @once: serving: stop after one client
 */
struct bench {
	struct rd_peer peer;
	struct rdmx_sockaddr local;
	unsigned int test;
	bool lat;
	uint64_t size;
	bool sweep;
	uint64_t iters;
	unsigned int duration_s;
	unsigned int depth;
	bool depth_set;
	bool size_set;
	bool once;
};

static volatile sig_atomic_t bench_stop;

static int bench_help(struct rd *rd)
{
	(void)rd;
	printf("Usage: " RD_PROG " bench [ -p PORT ] [ --addr ADDR ] [ --once ]\n"
	       "       " RD_PROG " bench [ -p PORT ] [ -t TEST ] [ -m MODE ] [ -s SIZE | -a ]\n"
	       "                     [ -n ITERS | -D SECONDS ] [ -d DEPTH ] [ -j ] HOST\n"
	       "Without HOST, serve the benchmark on ADDR (default 0.0.0.0) and PORT\n"
	       "(default %u) until killed, or for one client with --once. With HOST, run\n"
	       "it in the kernel against HOST's server and print perftest's columns:\n"
	       "TEST send, write (default), read, cas or fadd; MODE bw (default) or lat;\n"
	       "SIZE bytes (K, M suffixes; default %u for bw, %u for lat; atomics 8),\n"
	       "or -a for 2 to 8M bytes; ITERS operations (default %u for bw, %u for\n"
	       "lat) or SECONDS of them; DEPTH operations in flight (bw: default %u).\n"
	       "-j prints a JSON object per row.\n",
	       RDMX_DEFAULT_PORT, BENCH_SIZE_BW, BENCH_SIZE_LAT, BENCH_ITERS_BW,
	       BENCH_ITERS_LAT, BENCH_DEPTH_BW);
	return RD_EXIT_OK;
}

static bool bench_atomic(const struct bench *b)
{
	uint32_t op = bench_tests[b->test].op;

	return op == RDMX_BENCH_CMP_SWAP || op == RDMX_BENCH_FETCH_ADD;
}

static bool bench_send(const struct bench *b)
{
	return bench_tests[b->test].op == RDMX_BENCH_SEND;
}

static int bench_parse_test(const char *s, unsigned int *test)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bench_tests); i++)
		if (!strcmp(s, bench_tests[i].name)) {
			*test = i;
			return 0;
		}
	return rd_usage_err("bench", "bad test '%s': expected send, write, read, cas or fadd",
			    s);
}

/* The option values, checked against each other and given defaults. */
struct bench_args {
	const char *port, *addr, *size, *iters, *duration, *depth, *mode;
	bool client_only;
};

static int bench_defaults(struct bench *b, const struct bench_args *a)
{
	uint64_t max = bench_send(b) ? RDMX_MSG_MAX : RDMX_BENCH_LEN_MAX;
	uint64_t v;

	if (a->mode && strcmp(a->mode, "bw") && strcmp(a->mode, "lat"))
		return rd_usage_err("bench", "bad mode '%s': expected bw or lat",
				    a->mode);
	b->lat = a->mode && !strcmp(a->mode, "lat");
	if (a->size && b->sweep)
		return rd_usage_err("bench", "-s and -a exclude each other");
	if (a->iters && a->duration)
		return rd_usage_err("bench", "-n and -D exclude each other");
	b->size = b->lat ? BENCH_SIZE_LAT : BENCH_SIZE_BW;
	if (a->size) {
		if (rd_parse_u64(a->size, true, 1, max, &b->size))
			return rd_usage_err("bench", "bad size '%s': expected 1 to %" PRIu64 " bytes (K, M suffixes)",
					    a->size, max);
		b->size_set = true;
	}
	if (bench_atomic(b)) {
		if (b->size_set && b->size != 8)
			return rd_usage_err("bench", "bad size '%s': atomics are 8 bytes",
					    a->size);
		b->size = 8;
	}
	b->iters = b->lat ? BENCH_ITERS_LAT : BENCH_ITERS_BW;
	if (a->iters && rd_parse_u64(a->iters, false, 1, RDMX_BENCH_ITERS_MAX,
				     &b->iters))
		return rd_usage_err("bench", "bad iteration count '%s': expected 1 to %llu",
				    a->iters, (unsigned long long)RDMX_BENCH_ITERS_MAX);
	if (a->duration) {
		if (rd_parse_u64(a->duration, false, 1,
				 RDMX_BENCH_DURATION_MAX_MS / 1000, &v))
			return rd_usage_err("bench", "bad duration '%s': expected 1 to %u seconds",
					    a->duration,
					    RDMX_BENCH_DURATION_MAX_MS / 1000);
		b->duration_s = v;
		b->iters = 0;
	}
	b->depth = b->lat || bench_send(b) ? 1 : BENCH_DEPTH_BW;
	if (a->depth) {
		if (b->lat || bench_send(b))
			return rd_usage_err("bench", "-d applies to bw mode of write, read, cas and fadd");
		if (rd_parse_u64(a->depth, false, 1, RDMX_BENCH_DEPTH_MAX, &v))
			return rd_usage_err("bench", "bad depth '%s': expected 1 to %u",
					    a->depth, RDMX_BENCH_DEPTH_MAX);
		b->depth = v;
	}
	return 0;
}

static int bench_parse(struct rd *rd, struct bench *b)
{
	struct bench_args a = { NULL };
	const char *val;
	int opt, ret;

	b->test = 1;	/* write */
	b->peer.service = BENCH_SERVICE;
	b->peer.serve_cmd = "bench";
	while ((opt = rd_getopt(rd, "bench", bench_opts, &val)) != RD_OPT_END) {
		/* -t .. -d only make sense with a HOST */
		if (opt >= BENCH_OPT_TEST && opt <= BENCH_OPT_DEPTH)
			a.client_only = true;
		switch (opt) {
		case BENCH_OPT_PORT:
			a.port = val;
			break;
		case BENCH_OPT_ADDR:
			a.addr = val;
			break;
		case BENCH_OPT_TEST:
			ret = bench_parse_test(val, &b->test);
			if (ret)
				return ret;
			break;
		case BENCH_OPT_MODE:
			a.mode = val;
			break;
		case BENCH_OPT_SIZE:
			a.size = val;
			break;
		case BENCH_OPT_ALL:
			b->sweep = true;
			break;
		case BENCH_OPT_ITERS:
			a.iters = val;
			break;
		case BENCH_OPT_DURATION:
			a.duration = val;
			break;
		case BENCH_OPT_DEPTH:
			a.depth = val;
			break;
		case BENCH_OPT_JSON:
			if (!rd->json) {
				rd->json = true;
				jsonw_init(&rd->jw, stdout, rd->pretty);
			}
			break;
		case BENCH_OPT_ONCE:
			b->once = true;
			break;
		case RD_OPT_HELP:
			return -1;
		case RD_OPT_WORD:
			if (b->peer.host)
				return rd_usage_err("bench", "unexpected argument '%s'",
						    val);
			b->peer.host = val;
			break;
		default:
			return RD_EXIT_USAGE;
		}
	}
	if (b->peer.host) {
		if (a.addr || b->once)
			return rd_usage_err("bench", "--addr and --once are for serving, without HOST");
		b->peer.port = RDMX_DEFAULT_PORT;
		if (a.port) {
			ret = rd_parse_port("bench", a.port, &b->peer.port);
			if (ret)
				return ret;
		}
		return bench_defaults(b, &a);
	}
	if (a.client_only)
		return rd_usage_err("bench", "-t, -m, -s, -a, -n, -D and -d need a HOST to run against");
	return rd_listen_addr("bench", a.addr, a.port, &b->peer.port,
			      &b->local);
}

static void bench_msg_init(struct bench_msg *m, uint8_t type)
{
	memset(m, 0, sizeof(*m));
	m->magic = htole32(BENCH_MAGIC);
	m->version = BENCH_VERSION;
	m->type = type;
}

static int bench_msg_send(int fd, const struct bench_msg *m)
{
	struct rdmx_msg_vec v = { .addr = (uintptr_t)m, .len = sizeof(*m) };
	unsigned int done;

	return rd_ep_send(fd, &v, 1, &done);
}

/* ---- serving ---- */

/**
 * struct bench_chan - one client served
 * @fd: its channel
 * @region: the memory its token names
 * @region_len: its bytes
 * @mr_id: its region
 * @bufs: receive buffers of SEND runs
 * @buf_len: their bytes
 * @runs: SEND runs served
 * @msgs: messages of those runs received
 */
struct bench_chan {
	int fd;
	void *region;
	uint64_t region_len;
	uint32_t mr_id;
	unsigned char *bufs;
	size_t buf_len;
	uint64_t runs;
	uint64_t msgs;
};

/* Register the region the client asked for and send its token. */
static int bench_serve_region(struct bench *b, struct bench_chan *c,
			      const struct bench_msg *hello)
{
	uint32_t access = RDMX_ACCESS_REMOTE_READ | RDMX_ACCESS_REMOTE_WRITE |
			  RDMX_ACCESS_REMOTE_ATOMIC;
	unsigned char token[RDMX_TOKEN_MAX];
	struct rdmx_msg_vec v = { .addr = (uintptr_t)token };
	uint32_t token_len;
	unsigned int done;
	int err;

	c->region_len = le64toh(hello->region_len);
	if (c->region_len < 8 || c->region_len > RDMX_BENCH_LEN_MAX) {
		rd_err("client %s asks for a region of %" PRIu64 " bytes: expected 8 to %llu",
		       b->peer.addr_str, c->region_len,
		       (unsigned long long)RDMX_BENCH_LEN_MAX);
		return -1;
	}
	c->region = mmap(NULL, c->region_len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c->region == MAP_FAILED) {
		c->region = NULL;
		rd_err("%" PRIu64 " bytes of memory: %s", c->region_len,
		       strerror(errno));
		return -1;
	}
	err = rd_mr_reg(c->fd, c->region, c->region_len, access, token,
			&token_len, &c->mr_id);
	if (err == -EOPNOTSUPP) {
		/* No atomics on this device: the client's will fail too. */
		access &= ~RDMX_ACCESS_REMOTE_ATOMIC;
		err = rd_mr_reg(c->fd, c->region, c->region_len, access, token,
				&token_len, &c->mr_id);
	}
	if (err) {
		rd_ep_err(-err, NULL, "register %" PRIu64 " bytes for %s",
			  c->region_len, b->peer.addr_str);
		return -1;
	}
	v.len = token_len;
	err = rd_ep_send(c->fd, &v, 1, &done);
	if (err) {
		rd_ep_err(-err, &b->peer, "send the token to %s",
			  b->peer.addr_str);
		return -1;
	}
	return 0;
}

/* Receive into the run's buffers; Return: as rd_ep_recv(). */
static int bench_serve_recv(struct bench_chan *c, struct rdmx_msg_vec *v,
			    unsigned int n, size_t len)
{
	unsigned int i;

	memset(v, 0, n * sizeof(*v));
	for (i = 0; i < n; i++) {
		v[i].addr = (uintptr_t)(c->bufs + i * len);
		v[i].len = len;
	}
	return rd_ep_recv(c->fd, v, n, false);
}

/*
 * One SEND run: take the messages, answer each with a ping-pong, and
 * answer the empty one that ends the run. Return: 0, or -errno.
 */
static int bench_serve_run_msgs(struct bench_chan *c,
				const struct bench_msg *run)
{
	bool pingpong = run->flags & BENCH_RUN_PINGPONG;
	struct rdmx_msg_vec v[BENCH_RECV_BATCH], reply;
	size_t len = le32toh(run->msg_len);
	unsigned int n, i, done;
	int got, err;

	if (!len || len > RDMX_MSG_MAX)
		return -EPROTO;
	n = pingpong ? 1 : BENCH_RECV_BATCH;
	if (n > BENCH_RECV_BYTES / len)
		n = BENCH_RECV_BYTES / len ? BENCH_RECV_BYTES / len : 1;
	if (n * len > c->buf_len) {
		free(c->bufs);
		c->buf_len = 0;
		c->bufs = malloc(n * len);
		if (!c->bufs)
			return -ENOMEM;
		c->buf_len = n * len;
	}
	c->runs++;
	for (;;) {
		got = bench_serve_recv(c, v, n, len);
		if (got <= 0)
			return got ? got : -EPROTO;
		for (i = 0; i < (unsigned int)got; i++) {
			if (v[i].status)
				return v[i].status;
			memset(&reply, 0, sizeof(reply));
			reply.addr = v[i].addr;
			reply.len = v[i].len;
			if (v[i].len && !pingpong) {
				c->msgs++;
				continue;
			}
			err = rd_ep_send(c->fd, &reply, 1, &done);
			if (err)
				return err;
			if (!v[i].len)
				return 0;
			c->msgs++;
		}
	}
}

/* One SEND run; Return: true, with the error in @err, when it failed. */
static bool bench_serve_run(struct bench_chan *c, const struct bench_msg *run,
			    int *err)
{
	int ret = bench_serve_run_msgs(c, run);

	if (ret)
		*err = ret;
	return ret;
}

/* Read a control message; Return: 1, 0 at the end of the stream, -errno. */
static int bench_serve_ctl(struct bench_chan *c, struct bench_msg *m)
{
	struct rdmx_msg_vec v = { .addr = (uintptr_t)m, .len = sizeof(*m) };
	int got;

	got = rd_ep_recv(c->fd, &v, 1, false);
	if (got <= 0)
		return got;
	if (v.status)
		return v.status;
	if (v.len != sizeof(*m) || le32toh(m->magic) != BENCH_MAGIC ||
	    m->version != BENCH_VERSION)
		return -EPROTO;
	return 1;
}

static void bench_serve_report(struct rd *rd, const struct bench *b,
			       const struct bench_chan *c, int err)
{
	open_object(rd, NULL);
	print_str(rd, "peer", "client %s:", b->peer.addr_str);
	print_u64(rd, "region", "region %" PRIu64 " bytes,", c->region_len);
	print_u64(rd, "send_runs", "%" PRIu64 " send runs,", c->runs);
	print_u64(rd, "messages", "%" PRIu64 " messages", c->msgs);
	print_str(rd, "error", err ? ", %s" : NULL, err ? strerror(-err) : "");
	print_nl(rd);
	close_object(rd);
	fflush(stdout);
}

/* Serve one client; Return: 0, or -1 after saying why. */
static int bench_serve_one(struct rd *rd, struct bench *b, int lfd)
{
	struct bench_chan c = { .fd = -1 };
	struct bench_msg m;
	int ret;

	c.fd = rd_ep_accept(lfd, &b->peer);
	if (c.fd < 0)
		return -1;
	ret = bench_serve_ctl(&c, &m);
	if (ret == 1 && m.type != BENCH_MSG_HELLO)
		ret = -EPROTO;
	if (ret == 1)
		ret = bench_serve_region(b, &c, &m) ? -EIO : 1;
	while (ret == 1) {
		ret = bench_serve_ctl(&c, &m);
		if (ret == 1 && m.type != BENCH_MSG_RUN)
			ret = -EPROTO;
		if (ret == 1 && bench_serve_run(&c, &m, &ret))
			break;
	}
	if (!ret)
		rd_ep_shutdown(c.fd);
	else if (ret != -EIO)
		rd_ep_err(-ret, NULL, "serve %s", b->peer.addr_str);
	bench_serve_report(rd, b, &c, ret);
	if (c.region) {
		rd_mr_dereg(c.fd, c.mr_id);
		munmap(c.region, c.region_len);
	}
	free(c.bufs);
	close(c.fd);
	return ret ? -1 : 0;
}

static int bench_serve(struct rd *rd, struct bench *b)
{
	int lfd, ret = RD_EXIT_OK;

	lfd = rd_ep_listen(&b->local, BENCH_SERVICE);
	if (lfd < 0)
		return RD_EXIT_FAIL;
	open_array(rd, NULL);
	/* A client that fails is reported; serving goes on. */
	do {
		if (bench_serve_one(rd, b, lfd))
			ret = RD_EXIT_FAIL;
	} while (!b->once);
	close_array(rd);
	close(lfd);
	return ret;
}

/* ---- running ---- */

static const char bench_bw_head[] =
	" #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]";
static const char *const bench_bw_cols[] = {
	"#bytes", "#iterations", "BW peak", "BW average", "MsgRate",
};

static const char bench_lat_head[] =
	" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec]";
static const char *const bench_lat_cols[] = {
	"#bytes", "#iterations", "t_min", "t_max", "t_typical", "t_avg",
	"t_stdev", "99%", "99.9%",
};

#define BENCH_NR_COLS	ARRAY_SIZE(bench_lat_cols)

static const char bench_rule[] =
	"---------------------------------------------------------------------------------------";

/* One row of values, each starting where its heading does in @head. */
static void bench_row(struct rd *rd, const char *head,
		      const char *const *cols, size_t n, char vals[][32])
{
	char line[512];
	size_t i, len = 0, at;
	const char *p;

	for (i = 0; i < n; i++) {
		p = strstr(head, cols[i]);
		at = p ? (size_t)(p - head) : len + 1;
		if (at <= len)
			at = len + 1;
		len += snprintf(line + len, sizeof(line) - len, "%*s%s",
				(int)(at - len), "", vals[i]);
		if (len >= sizeof(line))
			break;
	}
	print_text(rd, "%s", line);
	print_nl(rd);
}

static void bench_text_head(struct rd *rd, const struct bench *b)
{
	print_text(rd, "%s", bench_rule);
	print_nl(rd);
	print_text(rd, "%s", b->lat ? bench_lat_head : bench_bw_head);
	print_nl(rd);
}

static void bench_print(struct rd *rd, const struct bench *b,
			const struct rdmx_bench *r)
{
	double peak = r->bw_peak / BENCH_MB, avg = r->bw_avg / BENCH_MB;
	double rate = r->length ? (double)r->bw_avg / r->length / 1e6 : 0;
	const double us[] = {
		r->lat_min_ns / 1e3, r->lat_max_ns / 1e3,
		r->lat_median_ns / 1e3, r->lat_avg_ns / 1e3,
		r->lat_stdev_ns / 1e3, r->lat_p99_ns / 1e3,
		r->lat_p999_ns / 1e3,
	};
	char vals[BENCH_NR_COLS][32];
	size_t i;

	if (!rd->json) {
		snprintf(vals[0], sizeof(vals[0]), "%" PRIu64,
			 (uint64_t)r->length);
		snprintf(vals[1], sizeof(vals[1]), "%" PRIu64,
			 (uint64_t)r->ops);
		if (b->lat) {
			for (i = 0; i < ARRAY_SIZE(us); i++)
				snprintf(vals[i + 2], sizeof(vals[i + 2]),
					 "%.2f", us[i]);
			bench_row(rd, bench_lat_head, bench_lat_cols,
				  BENCH_NR_COLS, vals);
		} else {
			snprintf(vals[2], sizeof(vals[2]), "%.2f", peak);
			snprintf(vals[3], sizeof(vals[3]), "%.2f", avg);
			snprintf(vals[4], sizeof(vals[4]), "%.6f", rate);
			bench_row(rd, bench_bw_head, bench_bw_cols,
				  ARRAY_SIZE(bench_bw_cols), vals);
		}
		fflush(stdout);
		return;
	}
	open_object(rd, NULL);
	print_str(rd, "test", NULL, bench_tests[b->test].name);
	print_str(rd, "mode", NULL, b->lat ? "lat" : "bw");
	print_u64(rd, "bytes", NULL, r->length);
	print_u64(rd, "iterations", NULL, r->ops);
	print_uint(rd, "depth", NULL, r->depth);
	print_u64(rd, "elapsed_ns", NULL, r->elapsed_ns);
	print_float(rd, "bw_peak", NULL, peak);
	print_float(rd, "bw_avg", NULL, avg);
	print_float(rd, "msg_rate", NULL, rate);
	print_float(rd, "t_min", NULL, us[0]);
	print_float(rd, "t_max", NULL, us[1]);
	print_float(rd, "t_typical", NULL, us[2]);
	print_float(rd, "t_avg", NULL, us[3]);
	print_float(rd, "t_stdev", NULL, us[4]);
	print_float(rd, "p99", NULL, us[5]);
	print_float(rd, "p99_9", NULL, us[6]);
	print_uint(rd, "samples", NULL, r->nr_samples);
	close_object(rd);
}

/**
 * struct bench_client - a connected client
 * @fd: its channel
 * @token: the server's token
 * @token_len: its length
 */
struct bench_client {
	int fd;
	unsigned char token[RDMX_TOKEN_MAX];
	uint32_t token_len;
};

static void bench_err(const struct bench *b, int err, uint64_t size)
{
	const char *test = bench_tests[b->test].name;

	rd_ep_err(err, &b->peer, "bench %s of %" PRIu64 " bytes with %s",
		  test, size, b->peer.addr_str);
	if (err == EOPNOTSUPP && bench_atomic(b))
		fputs("hint: the RDMA device of this session has no atomics (siw has none): try another test\n",
		      stderr);
	else if (err == EACCES && bench_atomic(b))
		fputs("hint: the server's device has no atomics, so its region grants none\n",
		      stderr);
	else if (err == EINTR)
		fputs("hint: interrupted; the run's results are lost\n", stderr);
}

/* One run of @size bytes; Return: 0, or -1 after saying why. */
static int bench_run_one(struct rd *rd, const struct bench *b,
			 struct bench_client *c, uint64_t size)
{
	struct rdmx_bench r;
	struct bench_msg m;
	int err;

	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	r.op = bench_tests[b->test].op;
	r.depth = b->depth;
	r.length = size;
	r.iters = b->iters;
	r.duration_ms = b->duration_s * 1000;
	if (bench_send(b)) {
		r.flags = b->lat ? RDMX_BENCH_PINGPONG : 0;
		bench_msg_init(&m, BENCH_MSG_RUN);
		m.flags = b->lat ? BENCH_RUN_PINGPONG : 0;
		m.msg_len = htole32(size);
		err = bench_msg_send(c->fd, &m);
		if (err) {
			bench_err(b, -err, size);
			return -1;
		}
	} else {
		r.token = (uintptr_t)c->token;
		r.token_len = c->token_len;
	}
	if (ioctl(c->fd, RDMX_IOC_BENCH, &r) < 0) {
		bench_err(b, errno, size);
		return -1;
	}
	bench_print(rd, b, &r);
	return 0;
}

/* HELLO, and the token in answer; Return: 0, or -1 after saying why. */
static int bench_hello(struct bench *b, struct bench_client *c,
		       uint64_t max_size)
{
	struct rdmx_msg_vec v = {
		.addr = (uintptr_t)c->token, .len = sizeof(c->token),
	};
	struct bench_msg m;
	int err;

	bench_msg_init(&m, BENCH_MSG_HELLO);
	m.region_len = htole64(max_size < 8 ? 8 : max_size);
	err = bench_msg_send(c->fd, &m);
	if (!err) {
		err = rd_ep_recv(c->fd, &v, 1, false);
		err = err == 1 ? v.status : err ? err : -EPROTO;
	}
	if (err) {
		rd_ep_err(-err, &b->peer, "get the region's token from %s",
			  b->peer.addr_str);
		return -1;
	}
	c->token_len = v.len;
	return 0;
}

static void bench_sigint(int sig)
{
	(void)sig;
	bench_stop = 1;
}

static int bench_client(struct rd *rd, struct bench *b)
{
	uint64_t max = bench_send(b) ? RDMX_MSG_MAX : RDMX_BENCH_LEN_MAX;
	struct bench_client c = { .fd = -1 };
	uint64_t size = b->size, last = b->size;
	struct sigaction sa;
	int ret = RD_EXIT_FAIL;

	if (b->sweep && !bench_atomic(b)) {
		size = 1ull << BENCH_SWEEP_MIN_LOG;
		last = 1ull << BENCH_SWEEP_MAX_LOG;
		if (last > max)
			last = max;
	}
	c.fd = rd_ep_connect(&b->peer, BENCH_TIMEOUT_MS);
	if (c.fd < 0)
		return RD_EXIT_FAIL;
	if (bench_hello(b, &c, last))
		goto out;
	/* ^C ends the run in the kernel (EINTR), then the sweep. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = bench_sigint;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);

	bench_text_head(rd, b);
	open_array(rd, NULL);
	for (; size <= last && !bench_stop; size *= 2)
		if (bench_run_one(rd, b, &c, size))
			break;
	close_array(rd);
	print_text(rd, "%s", bench_rule);
	print_nl(rd);
	if (size > last) {
		rd_ep_shutdown(c.fd);
		ret = RD_EXIT_OK;
	}
out:
	close(c.fd);
	return ret;
}

int cmd_bench(struct rd *rd)
{
	struct bench b;
	int ret;

	memset(&b, 0, sizeof(b));
	/* "help" only as the sole word: a host may be called anything */
	if (rd->argc == 1 && !strcmp(rd_argv(rd), "help"))
		return bench_help(rd);
	ret = bench_parse(rd, &b);
	if (ret < 0)
		return bench_help(rd);
	if (ret)
		return ret;
	if (rd_feature_check(RDMX_FEATURE_MSG | RDMX_FEATURE_RMA |
			     RDMX_FEATURE_BENCH, "in-kernel benchmark"))
		return RD_EXIT_FAIL;
	return b.peer.host ? bench_client(rd, &b) : bench_serve(rd, &b);
}
