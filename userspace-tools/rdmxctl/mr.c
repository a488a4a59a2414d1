// SPDX-License-Identifier: GPL-2.0
/*
 * rdmxctl mr: serve memory for one-sided access. Listen for a service; for
 * each channel accepted, register a fresh buffer on it, send the token as
 * the channel's first message, and hold the region until the peer ends its
 * stream; then deregister it and, if asked, write the buffer out. The peer
 * reaches the memory with "rdmxctl rma" (or any program that RECVs the
 * token and passes it to RDMX_IOC_RMA).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "rdmxctl.h"

#define MR_SERVICE_DEFAULT	"rdmx.mr"
#define MR_COUNT_MAX		1000000
#define MR_ACCESS_DEFAULT	(RDMX_ACCESS_REMOTE_READ | RDMX_ACCESS_REMOTE_WRITE)
/* Immediates listed in the output, at most; more are only counted */
#define MR_IMM_KEEP		65536
#define MR_RECV_BUF_MIN		4096

enum {
	MR_OPT_ADDR,
	MR_OPT_PORT,
	MR_OPT_SERVICE,
	MR_OPT_SIZE,
	MR_OPT_ACCESS,
	MR_OPT_FILL,
	MR_OPT_SEED,
	MR_OPT_DUMP,
	MR_OPT_COUNT,
};

static const struct rd_opt mr_serve_opts[] = {
	{ MR_OPT_ADDR,		'a', "addr", true },
	{ MR_OPT_PORT,		'p', "port", true },
	{ MR_OPT_SERVICE,	'S', "service", true },
	{ MR_OPT_SIZE,		's', "size", true },
	{ MR_OPT_ACCESS,	0, "access", true },
	{ MR_OPT_FILL,		0, "fill", true },
	{ MR_OPT_SEED,		0, "seed", true },
	{ MR_OPT_DUMP,		0, "dump", true },
	{ MR_OPT_COUNT,		'c', "count", true },
	{ 0, 0, NULL, false },
};

/* The letters of --access, and the names JSON gives the rights */
static const struct {
	char letter;
	uint32_t bit;
	const char *name;
} mr_rights[] = {
	{ 'r', RDMX_ACCESS_REMOTE_READ,		"read" },
	{ 'w', RDMX_ACCESS_REMOTE_WRITE,	"write" },
	{ 'a', RDMX_ACCESS_REMOTE_ATOMIC,	"atomic" },
};

/**
 * struct mr_serve - state of one "mr serve"
 * @peer: service and port in; the peer's address once a channel is accepted
 * @local: address to listen on
 * @size: bytes of each region
 * @access: RDMX_ACCESS_* bits
 * @fill: --fill FILE, or NULL
 * @fill_data: its bytes
 * @fill_len: their number, at most @size
 * @seed: --seed N
 * @have_seed: --seed was given
 * @dump: --dump FILE, or NULL
 * @count: channels to serve
 */
struct mr_serve {
	struct rd_peer peer;
	struct rdmx_sockaddr local;
	uint64_t size;
	uint32_t access;
	const char *fill;
	unsigned char *fill_data;
	size_t fill_len;
	uint64_t seed;
	bool have_seed;
	const char *dump;
	unsigned int count;
};

/**
 * struct mr_chan - one channel served
 * @num: its number, from 1
 * @fd: the channel
 * @buf: the region's memory (mmap)
 * @mr_id: the region's id
 * @imm: immediates received, the first MR_IMM_KEEP of them
 * @nr_imm: immediates received
 * @msgs: messages received (and dropped)
 * @t0: when the token was sent
 */
struct mr_chan {
	unsigned int num;
	int fd;
	unsigned char *buf;
	uint32_t mr_id;
	uint32_t *imm;
	uint64_t nr_imm;
	uint64_t msgs;
	double t0;
};

static int mr_serve_help(struct rd *rd)
{
	(void)rd;
	printf("Usage: " RD_PROG " mr serve [ -a ADDR ] [ -p PORT ] [ -S SERVICE ] --size SIZE\n"
	       "                        [ --access RIGHTS ] [ --fill FILE | --seed N ]\n"
	       "                        [ --dump FILE ] [ --count N ]\n"
	       "Listen for SERVICE (default " MR_SERVICE_DEFAULT ") on ADDR (default 0.0.0.0) and\n"
	       "PORT (default %u). For each channel accepted, register a buffer of SIZE\n"
	       "bytes (K, M, G suffixes) with RIGHTS (letters r, w, a: remote read, write,\n"
	       "atomics; default rw) on it, send the token as the first message, and hold\n"
	       "the region until the peer ends its stream; then deregister it and write\n"
	       "it to FILE (FILE.1, FILE.2, ... with --count above 1). The buffer starts\n"
	       "as FILE's bytes (SIZE defaults to its size), as the pattern of seed N, or\n"
	       "zero. Stop after N channels (default 1).\n",
	       RDMX_DEFAULT_PORT);
	return RD_EXIT_OK;
}

static int mr_help(struct rd *rd)
{
	return mr_serve_help(rd);
}

static double mr_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* --access RIGHTS: letters r, w, a, each at most once; Return: 0, or -EINVAL. */
static int mr_parse_access(const char *s, uint32_t *access)
{
	uint32_t bits = 0;
	size_t i;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		for (i = 0; i < ARRAY_SIZE(mr_rights); i++)
			if (*s == mr_rights[i].letter)
				break;
		if (i == ARRAY_SIZE(mr_rights) || (bits & mr_rights[i].bit))
			return -EINVAL;
		bits |= mr_rights[i].bit;
	}
	*access = bits;
	return 0;
}

/* Text: "access rw"; JSON: "access": ["read", "write"] */
static void mr_print_access(struct rd *rd, uint32_t access)
{
	char letters[ARRAY_SIZE(mr_rights) + 1];
	size_t i, n = 0;

	open_array(rd, "access");
	for (i = 0; i < ARRAY_SIZE(mr_rights); i++) {
		if (!(access & mr_rights[i].bit))
			continue;
		letters[n++] = mr_rights[i].letter;
		print_str(rd, NULL, NULL, mr_rights[i].name);
	}
	letters[n] = '\0';
	close_array(rd);
	print_text(rd, "access %s,", letters);
}

/*
 * The --seed pattern: the outputs of splitmix64, its state starting at @seed,
 * each as 8 little-endian bytes (the last one cut short), as rdmx-msgtest
 * and rdmx-rmatest fill their buffers.
 */
static void mr_fill_seed(unsigned char *p, uint64_t len, uint64_t seed)
{
	uint64_t z, i;
	unsigned int b;

	for (i = 0; i < len; i += 8) {
		seed += 0x9e3779b97f4a7c15ULL;
		z = seed;
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
		z ^= z >> 31;
		for (b = 0; b < 8 && i + b < len; b++)
			p[i + b] = z >> (8 * b);
	}
}

static int mr_serve_parse(struct rd *rd, struct mr_serve *ms)
{
	const char *val, *addr = NULL, *port = NULL, *size = NULL;
	const char *access = NULL, *seed = NULL, *count = NULL;
	uint64_t v;
	int opt, ret;

	ms->peer.service = MR_SERVICE_DEFAULT;
	while ((opt = rd_getopt(rd, "mr", mr_serve_opts, &val)) != RD_OPT_END) {
		switch (opt) {
		case MR_OPT_ADDR:
			addr = val;
			break;
		case MR_OPT_PORT:
			port = val;
			break;
		case MR_OPT_SERVICE:
			ms->peer.service = val;
			break;
		case MR_OPT_SIZE:
			size = val;
			break;
		case MR_OPT_ACCESS:
			access = val;
			break;
		case MR_OPT_FILL:
			ms->fill = val;
			break;
		case MR_OPT_SEED:
			seed = val;
			break;
		case MR_OPT_DUMP:
			ms->dump = val;
			break;
		case MR_OPT_COUNT:
			count = val;
			break;
		case RD_OPT_HELP:
			return -1;
		case RD_OPT_WORD:
			return rd_usage_err("mr", "unexpected argument '%s'", val);
		default:
			return RD_EXIT_USAGE;
		}
	}
	if (!size && !ms->fill)
		return rd_usage_err("mr", "mr serve: missing --size SIZE");
	if (ms->fill && seed)
		return rd_usage_err("mr", "mr serve: --fill and --seed exclude each other");
	if (ms->fill && !*ms->fill)
		return rd_usage_err("mr", "mr serve: empty --fill file name");
	if (ms->dump && !*ms->dump)
		return rd_usage_err("mr", "mr serve: empty --dump file name");
	ret = rd_check_service("mr", ms->peer.service);
	if (ret)
		return ret;
	if (size) {
		if (rd_parse_u64(size, true, 1, RDMX_MR_MAX, &ms->size))
			return rd_usage_err("mr", "bad size '%s': expected 1 to %llu bytes (K, M, G suffixes)",
					    size, (unsigned long long)RDMX_MR_MAX);
	}
	ms->access = MR_ACCESS_DEFAULT;
	if (access && mr_parse_access(access, &ms->access))
		return rd_usage_err("mr", "bad access '%s': expected letters r, w and a, each at most once",
				    access);
	if (seed) {
		if (rd_parse_u64(seed, false, 0, UINT64_MAX, &ms->seed))
			return rd_usage_err("mr", "bad seed '%s': expected 0 to %" PRIu64,
					    seed, UINT64_MAX);
		ms->have_seed = true;
	}
	ms->count = 1;
	if (count) {
		if (rd_parse_u64(count, false, 1, MR_COUNT_MAX, &v))
			return rd_usage_err("mr", "bad count '%s': expected 1 to %u",
					    count, MR_COUNT_MAX);
		ms->count = v;
	}
	return rd_listen_addr("mr", addr, port, &ms->peer.port, &ms->local);
}

/* Read --fill FILE before listening; it sets --size if none was given. */
static int mr_load_fill(struct mr_serve *ms)
{
	uint64_t max = ms->size ? ms->size : RDMX_MR_MAX;
	int err;

	err = rd_file_load(ms->fill, max, &ms->fill_data, &ms->fill_len);
	if (err == -EFBIG) {
		rd_err("%s: more than the region's %" PRIu64 " bytes", ms->fill,
		       max);
		return -1;
	}
	if (err) {
		rd_err("%s: %s", ms->fill, strerror(-err));
		return -1;
	}
	if (!ms->size)
		ms->size = ms->fill_len;
	if (!ms->size) {
		rd_err("%s: empty, and no --size given: a region holds at least 1 byte",
		       ms->fill);
		return -1;
	}
	return 0;
}

static void mr_reg_err(const struct mr_serve *ms, int err)
{
	rd_ep_err(err, NULL, "register %" PRIu64 " bytes on the channel from %s",
		  ms->size, ms->peer.addr_str);
	switch (err) {
	case EOPNOTSUPP:
		if (ms->access & RDMX_ACCESS_REMOTE_ATOMIC)
			fputs("hint: the RDMA device of this session has no atomics (siw has none): drop 'a' from --access\n",
			      stderr);
		break;
	case ENOMEM:
	case EAGAIN:
	case EPERM:
		fprintf(stderr, "hint: pinning %" PRIu64 " bytes may exceed RLIMIT_MEMLOCK ('ulimit -l'): raise it, or run as root\n",
			ms->size);
		break;
	case EINVAL:
		fprintf(stderr, "hint: does this module take regions of %" PRIu64 " bytes? (at most %llu)\n",
			ms->size, (unsigned long long)RDMX_MR_MAX);
		break;
	}
}

/* The region's first state: --fill, --seed, or zero (fresh mmap). */
static void mr_init_buf(const struct mr_serve *ms, unsigned char *buf)
{
	if (ms->fill_data)
		memcpy(buf, ms->fill_data, ms->fill_len);
	else if (ms->have_seed)
		mr_fill_seed(buf, ms->size, ms->seed);
}

/* The region and its token on channel @c; Return: 0, or -1 after saying why. */
static int mr_register(struct rd *rd, struct mr_serve *ms, struct mr_chan *c)
{
	unsigned char token[RDMX_TOKEN_MAX];
	struct rdmx_msg_vec vec;
	uint32_t token_len;
	unsigned int done;
	int err;

	c->buf = mmap(NULL, ms->size, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c->buf == MAP_FAILED) {
		c->buf = NULL;
		rd_err("%" PRIu64 " bytes of memory: %s", ms->size,
		       strerror(errno));
		return -1;
	}
	mr_init_buf(ms, c->buf);
	err = rd_mr_reg(c->fd, c->buf, ms->size, ms->access, token, &token_len,
			&c->mr_id);
	if (err) {
		mr_reg_err(ms, -err);
		return -1;
	}
	memset(&vec, 0, sizeof(vec));
	vec.addr = (uintptr_t)token;
	vec.len = token_len;
	err = rd_ep_send(c->fd, &vec, 1, &done);
	if (err) {
		rd_ep_err(-err, &ms->peer, "send the token to %s",
			  ms->peer.addr_str);
		return -1;
	}
	c->t0 = mr_now();

	open_object(rd, NULL);
	print_uint(rd, "mr_id", "mr %u:", c->mr_id);
	print_u64(rd, "length", "%" PRIu64 " bytes,", ms->size);
	mr_print_access(rd, ms->access);
	print_uint(rd, "token_len", "token %u bytes,", token_len);
	print_str(rd, "peer", "for %s", ms->peer.addr_str);
	print_str(rd, "service", "service %s", ms->peer.service);
	print_nl(rd);
	fflush(stdout);
	return 0;
}

static void mr_got_imm(struct rd *rd, struct mr_chan *c, uint32_t imm)
{
	uint32_t *p;

	if (c->nr_imm < MR_IMM_KEEP) {
		p = realloc(c->imm, (c->nr_imm + 1) * sizeof(*p));
		if (p) {
			c->imm = p;
			p[c->nr_imm] = imm;
		}
	}
	c->nr_imm++;
	if (!rd->json) {
		printf("mr %u: immediate %u (0x%08x)\n", c->mr_id, imm, imm);
		fflush(stdout);
	}
}

/*
 * Wait for the peer's end of stream, taking what comes meanwhile:
 * immediates are reported, messages dropped. Return: 0 at the end of the
 * stream, or -1 after saying why not.
 */
static int mr_wait_end(struct rd *rd, struct mr_serve *ms, struct mr_chan *c)
{
	size_t size = MR_RECV_BUF_MIN;
	struct rdmx_msg_vec vec;
	char *buf = NULL;
	int ret;

	for (;;) {
		if (!buf)
			buf = malloc(size);
		if (!buf) {
			rd_err("out of memory");
			return -1;
		}
		memset(&vec, 0, sizeof(vec));
		vec.addr = (uintptr_t)buf;
		vec.len = size;
		ret = rd_ep_recv(c->fd, &vec, 1, false);
		if (ret == -EMSGSIZE && vec.len > size && vec.len <= RDMX_MSG_MAX) {
			free(buf);
			buf = NULL;
			size = vec.len;
			continue;
		}
		if (ret <= 0)
			break;
		if (vec.status) {
			ret = vec.status;
			break;
		}
		if (vec.flags & RDMX_MSG_IMM)
			mr_got_imm(rd, c, vec.imm);
		else
			c->msgs++;
	}
	free(buf);
	if (!ret)
		return 0;
	rd_ep_err(-ret, &ms->peer, "mr %u: wait for %s to end its stream",
		  c->mr_id, ms->peer.addr_str);
	return -1;
}

/* FILE, or FILE.K with --count above 1 */
static int mr_dump_name(const struct mr_serve *ms, const struct mr_chan *c,
			char *buf, size_t size)
{
	if (ms->count == 1)
		return rd_pathf(buf, size, "%s", ms->dump);
	return rd_pathf(buf, size, "%s.%u", ms->dump, c->num);
}

/* Deregister, dump, and finish the channel's JSON object; Return: 0, or -1. */
static int mr_finish(struct rd *rd, struct mr_serve *ms, struct mr_chan *c,
		     bool ended)
{
	char path[4096];
	bool dumped = false;
	uint64_t i;
	int err, ret = 0;

	err = rd_mr_dereg(c->fd, c->mr_id);
	if (err) {
		rd_ep_err(-err, NULL, "deregister mr %u", c->mr_id);
		ret = -1;
	}
	if (ms->dump) {
		err = mr_dump_name(ms, c, path, sizeof(path)) ? -ENAMETOOLONG :
		      rd_file_save(path, c->buf, ms->size);
		if (err) {
			rd_err("%s: %s", path, strerror(-err));
			ret = -1;
		} else {
			dumped = true;
		}
	}

	print_text(rd, "mr %u:", c->mr_id);
	print_text(rd, "%s after %.3f s,", ended ? "end of stream" : "failed",
		   mr_now() - c->t0);
	print_u64(rd, "immediates_received", c->nr_imm == 1 ?
		  "%" PRIu64 " immediate," : "%" PRIu64 " immediates,", c->nr_imm);
	open_array(rd, "immediates");
	for (i = 0; i < c->nr_imm && i < MR_IMM_KEEP && c->imm; i++)
		print_uint(rd, NULL, NULL, c->imm[i]);
	close_array(rd);
	if (dumped)
		print_u64(rd, "messages", c->msgs == 1 ?
			  "%" PRIu64 " message dropped," :
			  "%" PRIu64 " messages dropped,", c->msgs);
	else
		print_u64(rd, "messages", c->msgs == 1 ?
			  "%" PRIu64 " message dropped" :
			  "%" PRIu64 " messages dropped", c->msgs);
	print_float(rd, "seconds", NULL, mr_now() - c->t0);
	print_bool(rd, "ended", NULL, ended);
	if (dumped)
		print_str(rd, "dump", "written to %s", path);
	else
		print_null(rd, "dump", NULL);
	print_nl(rd);
	close_object(rd);
	fflush(stdout);
	return ret;
}

/* Serve one channel; Return: 0, or -1 after saying why. */
static int mr_serve_one(struct rd *rd, struct mr_serve *ms, int lfd,
			unsigned int num)
{
	struct mr_chan c = { .num = num, .fd = -1 };
	int ret = -1;

	c.fd = rd_ep_accept(lfd, &ms->peer);
	if (c.fd < 0)
		return -1;
	if (mr_register(rd, ms, &c)) {
		if (c.buf)
			munmap(c.buf, ms->size);
		close(c.fd);
		return -1;
	}
	ret = mr_wait_end(rd, ms, &c);
	if (!ret)
		rd_ep_shutdown(c.fd);
	if (mr_finish(rd, ms, &c, !ret))
		ret = -1;
	munmap(c.buf, ms->size);
	free(c.imm);
	close(c.fd);
	return ret;
}

static int mr_serve(struct rd *rd)
{
	struct mr_serve ms = { .fill_data = NULL };
	unsigned int i;
	int lfd, ret;

	ret = mr_serve_parse(rd, &ms);
	if (ret < 0)
		return mr_serve_help(rd);
	if (ret)
		return ret;
	ret = RD_EXIT_FAIL;
	if (ms.fill && mr_load_fill(&ms))
		goto out;
	if (rd_rma_check())
		goto out;
	lfd = rd_ep_listen(&ms.local, ms.peer.service);
	if (lfd < 0)
		goto out;
	ret = RD_EXIT_OK;
	open_array(rd, NULL);
	/* The listener stays until the end: it takes the sessions' reconnects. */
	for (i = 1; i <= ms.count && ret == RD_EXIT_OK; i++)
		if (mr_serve_one(rd, &ms, lfd, i))
			ret = RD_EXIT_FAIL;
	close_array(rd);
	close(lfd);
out:
	free(ms.fill_data);
	return ret;
}

static int mr_none(struct rd *rd)
{
	(void)rd;
	return rd_usage_err("mr", "missing command: serve");
}

static const struct rd_cmd mr_cmds[] = {
	{ NULL,		mr_none },
	{ "help",	mr_help },
	{ "serve",	mr_serve },
	{ NULL,		NULL },
};

int cmd_mr(struct rd *rd)
{
	return rd_exec_cmd(rd, mr_cmds, "mr");
}
