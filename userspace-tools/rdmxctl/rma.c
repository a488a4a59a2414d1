// SPDX-License-Identifier: GPL-2.0
/*
 * rdmxctl rma: one one-sided operation on memory a peer serves ("rdmxctl mr
 * serve" there). Connect to the service, take the token from the first
 * message, run the operation, print its result, shut down.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "rdmxctl.h"

#define RMA_SERVICE_DEFAULT	"rdmx.mr"
#define RMA_TIMEOUT_DEFAULT_S	30
#define RMA_TIMEOUT_MAX_S	86400
#define RMA_HEX_LINE		16

enum {
	RMA_OPT_PORT,
	RMA_OPT_SERVICE,
	RMA_OPT_TIMEOUT,
	RMA_OPT_OUTPUT,
};

static const struct rd_opt rma_opts[] = {
	{ RMA_OPT_PORT,		'p', "port", true },
	{ RMA_OPT_SERVICE,	'S', "service", true },
	{ RMA_OPT_TIMEOUT,	't', "timeout", true },
	{ RMA_OPT_OUTPUT,	'o', "output", true },
	{ 0, 0, NULL, false },
};

struct rma_desc;

/**
 * struct rma - state of one "rma" run
 * @peer: host, port and service
 * @serve_cmd: the command that would serve them, for a hint
 * @timeout_s: for connecting, and for the token to come
 * @desc: the operation
 * @output: -o FILE (read), or NULL
 * @offset: OFFSET in the peer's region
 * @length: read: LENGTH
 * @file: write, writeimm: FILE
 * @compare: cas: COMPARE
 * @swap: cas: SWAP
 * @addend: fadd: ADDEND (a negative one in two's complement)
 * @imm: writeimm: IMM
 * @buf: read: the destination (mmap); write, writeimm: FILE's bytes
 * @buf_len: bytes at @buf
 * @token: the token the peer sent
 * @token_len: its length
 * @old: cas, fadd: the word's value before the operation
 * @secs: how long the operation took, in seconds
 */
struct rma {
	struct rd_peer peer;
	char serve_cmd[160];
	unsigned int timeout_s;
	const struct rma_desc *desc;
	const char *output;
	uint64_t offset;
	uint64_t length;
	const char *file;
	uint64_t compare;
	uint64_t swap;
	uint64_t addend;
	uint32_t imm;
	unsigned char *buf;
	size_t buf_len;
	unsigned char token[RDMX_TOKEN_MAX];
	uint32_t token_len;
	uint64_t old;
	double secs;
};

/**
 * struct rma_desc - one operation of the command line
 * @name: its word
 * @opcode: RDMX_RMA_*
 * @args: the words after it, for messages
 * @nargs: how many
 * @parse: check and take them; Return: 0, or RD_EXIT_USAGE
 * @print: the result
 */
struct rma_desc {
	const char *name;
	uint32_t opcode;
	const char *args;
	unsigned int nargs;
	int (*parse)(struct rma *r, const char *const *args);
	void (*print)(struct rd *rd, const struct rma *r);
};

static int rma_help(struct rd *rd)
{
	(void)rd;
	printf("Usage: " RD_PROG " rma [ -p PORT ] [ -S SERVICE ] [ --timeout SEC ] HOST OPERATION\n"
	       "where  OPERATION := { read OFFSET LENGTH [ -o FILE ] | write OFFSET FILE |\n"
	       "                      cas OFFSET COMPARE SWAP | fadd OFFSET ADDEND |\n"
	       "                      writeimm OFFSET FILE IMM }\n"
	       "Connect to SERVICE (default " RMA_SERVICE_DEFAULT ") on HOST and PORT (default %u),\n"
	       "take the token of the memory it serves from the first message ('" RD_PROG " mr\n"
	       "serve' there), and run one operation on that memory at OFFSET:\n"
	       "  read      LENGTH bytes, printed in hex or written to FILE ('-': stdout)\n"
	       "  write     FILE's bytes ('-': stdin)\n"
	       "  cas       if the 8-byte word equals COMPARE, store SWAP; print its old value\n"
	       "  fadd      add ADDEND (may be negative) to the 8-byte word; print its old value\n"
	       "  writeimm  write FILE's bytes (may be none), then deliver IMM, a 32-bit number,\n"
	       "            to the peer's receive stream\n"
	       "OFFSET and LENGTH take K, M, G suffixes; numbers may be 0x hex. SEC (default\n"
	       "%u) bounds connecting and waiting for the token.\n",
	       RDMX_DEFAULT_PORT, RMA_TIMEOUT_DEFAULT_S);
	return RD_EXIT_OK;
}

static double rma_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- arguments ---- */

static int rma_offset(struct rma *r, const char *s)
{
	if (rd_parse_u64(s, true, 0, UINT64_MAX, &r->offset))
		return rd_usage_err("rma", "bad offset '%s': expected a number of bytes (K, M, G suffixes; 0x hex)",
				    s);
	return 0;
}

/* A 64-bit operand: 0 to 2^64 - 1, decimal or 0x hex */
static int rma_word(const char *what, const char *s, uint64_t *val)
{
	if (rd_parse_u64(s, false, 0, UINT64_MAX, val))
		return rd_usage_err("rma", "bad %s '%s': expected 0 to %" PRIu64 " (or 0x hex)",
				    what, s, UINT64_MAX);
	return 0;
}

static int rma_parse_read(struct rma *r, const char *const *args)
{
	if (rma_offset(r, args[0]))
		return RD_EXIT_USAGE;
	if (rd_parse_u64(args[1], true, 1, RDMX_RMA_LEN_MAX, &r->length))
		return rd_usage_err("rma", "bad length '%s': expected 1 to %llu bytes (K, M, G suffixes)",
				    args[1], (unsigned long long)RDMX_RMA_LEN_MAX);
	return 0;
}

static int rma_parse_write(struct rma *r, const char *const *args)
{
	if (rma_offset(r, args[0]))
		return RD_EXIT_USAGE;
	r->file = args[1];
	return 0;
}

static int rma_parse_cas(struct rma *r, const char *const *args)
{
	if (rma_offset(r, args[0]) || rma_word("compare value", args[1], &r->compare) ||
	    rma_word("swap value", args[2], &r->swap))
		return RD_EXIT_USAGE;
	return 0;
}

static int rma_parse_fadd(struct rma *r, const char *const *args)
{
	const char *s = args[1];
	uint64_t v;

	if (rma_offset(r, args[0]))
		return RD_EXIT_USAGE;
	/* -N adds 2^64 - N: the word goes down by N */
	if (s[0] == '-' && !rd_parse_u64(s + 1, false, 1, 1ULL << 63, &v)) {
		r->addend = -v;
		return 0;
	}
	if (rd_parse_u64(s, false, 0, UINT64_MAX, &r->addend))
		return rd_usage_err("rma", "bad addend '%s': expected -%llu to %" PRIu64 " (or 0x hex)",
				    s, 1ULL << 63, UINT64_MAX);
	return 0;
}

static int rma_parse_writeimm(struct rma *r, const char *const *args)
{
	uint64_t v;

	if (rma_parse_write(r, args))
		return RD_EXIT_USAGE;
	if (rd_parse_u64(args[2], false, 0, UINT32_MAX, &v))
		return rd_usage_err("rma", "bad immediate '%s': expected 0 to %u (or 0x hex)",
				    args[2], UINT32_MAX);
	r->imm = v;
	return 0;
}

/* ---- results ---- */

static void rma_print_common(struct rd *rd, const struct rma *r)
{
	print_str(rd, "host", NULL, r->peer.host);
	print_str(rd, "peer", "%s", r->peer.addr_str);
	print_str(rd, "service", "service %s", r->peer.service);
	print_u64(rd, "offset", NULL, r->offset);
	print_uint(rd, "token_len", NULL, r->token_len);
	print_float(rd, "usec", "in %.3f us", r->secs * 1e6);
}

/* "00000010  41 42 ...  |AB...|", offsets those of the peer's region */
static void rma_hexdump(const struct rma *r)
{
	size_t i, j;

	for (i = 0; i < r->buf_len; i += RMA_HEX_LINE) {
		printf("%08" PRIx64 " ", r->offset + i);
		for (j = 0; j < RMA_HEX_LINE; j++) {
			if (j == RMA_HEX_LINE / 2)
				putchar(' ');
			if (i + j < r->buf_len)
				printf(" %02x", r->buf[i + j]);
			else
				fputs("   ", stdout);
		}
		fputs("  |", stdout);
		for (j = 0; j < RMA_HEX_LINE && i + j < r->buf_len; j++)
			putchar(r->buf[i + j] >= 0x20 && r->buf[i + j] < 0x7f ?
				r->buf[i + j] : '.');
		puts("|");
	}
}

static void rma_print_read(struct rd *rd, const struct rma *r)
{
	static const char hex[] = "0123456789abcdef";
	char *data;
	size_t i;

	print_str(rd, "op", NULL, "read");
	print_u64(rd, "bytes", r->buf_len == 1 ? "read %" PRIu64 " byte" :
		  "read %" PRIu64 " bytes", r->buf_len);
	print_text(rd, "at offset %" PRIu64 " of", r->offset);
	rma_print_common(rd, r);
	if (r->output) {
		print_str(rd, "output", "into %s", r->output);
		print_nl(rd);
		return;
	}
	print_null(rd, "output", NULL);
	print_nl(rd);
	if (!rd->json) {
		rma_hexdump(r);
		return;
	}
	data = malloc(2 * r->buf_len + 1);
	if (!data) {
		print_null(rd, "data", NULL);
		return;
	}
	for (i = 0; i < r->buf_len; i++) {
		data[2 * i] = hex[r->buf[i] >> 4];
		data[2 * i + 1] = hex[r->buf[i] & 15];
	}
	data[2 * i] = '\0';
	print_str(rd, "data", NULL, data);
	free(data);
}

static void rma_print_write(struct rd *rd, const struct rma *r)
{
	bool imm = r->desc->opcode == RDMX_RMA_WRITE_IMM;

	print_str(rd, "op", NULL, r->desc->name);
	print_u64(rd, "bytes", r->buf_len == 1 ? "wrote %" PRIu64 " byte" :
		  "wrote %" PRIu64 " bytes", r->buf_len);
	print_text(rd, "at offset %" PRIu64, r->offset);
	if (imm) {
		print_uint(rd, "imm", "with immediate %u", r->imm);
		print_text(rd, "(0x%08x)", r->imm);
	}
	print_text(rd, "to");
	rma_print_common(rd, r);
	print_nl(rd);
}

static void rma_print_cas(struct rd *rd, const struct rma *r)
{
	bool swapped = r->old == r->compare;

	print_str(rd, "op", NULL, "cas");
	print_text(rd, "cas at offset %" PRIu64 " of", r->offset);
	print_text(rd, "%s:", r->peer.addr_str);
	print_u64(rd, "old", "old value %" PRIu64, r->old);
	print_text(rd, "(0x%016" PRIx64 "),", r->old);
	print_bool(rd, "swapped", NULL, swapped);
	print_text(rd, "%s", swapped ? "swapped" : "not swapped");
	print_u64(rd, "compare", "(compare %" PRIu64 ",", r->compare);
	print_u64(rd, "swap", "swap %" PRIu64 ")", r->swap);
	print_str(rd, "host", NULL, r->peer.host);
	print_str(rd, "peer", NULL, r->peer.addr_str);
	print_str(rd, "service", NULL, r->peer.service);
	print_u64(rd, "offset", NULL, r->offset);
	print_uint(rd, "token_len", NULL, r->token_len);
	print_float(rd, "usec", "in %.3f us", r->secs * 1e6);
	print_nl(rd);
}

static void rma_print_fadd(struct rd *rd, const struct rma *r)
{
	print_str(rd, "op", NULL, "fadd");
	print_text(rd, "fadd at offset %" PRIu64 " of", r->offset);
	print_text(rd, "%s:", r->peer.addr_str);
	print_u64(rd, "old", "old value %" PRIu64, r->old);
	print_text(rd, "(0x%016" PRIx64 "),", r->old);
	print_u64(rd, "new", "new value %" PRIu64, r->old + r->addend);
	print_text(rd, "(0x%016" PRIx64 ")", r->old + r->addend);
	print_u64(rd, "addend", NULL, r->addend);
	print_str(rd, "host", NULL, r->peer.host);
	print_str(rd, "peer", NULL, r->peer.addr_str);
	print_str(rd, "service", NULL, r->peer.service);
	print_u64(rd, "offset", NULL, r->offset);
	print_uint(rd, "token_len", NULL, r->token_len);
	print_float(rd, "usec", "in %.3f us", r->secs * 1e6);
	print_nl(rd);
}

static const struct rma_desc rma_descs[] = {
	{ "cas", RDMX_RMA_CMP_SWAP, "OFFSET COMPARE SWAP", 3, rma_parse_cas,
	  rma_print_cas },
	{ "fadd", RDMX_RMA_FETCH_ADD, "OFFSET ADDEND", 2, rma_parse_fadd,
	  rma_print_fadd },
	{ "read", RDMX_RMA_READ, "OFFSET LENGTH", 2, rma_parse_read,
	  rma_print_read },
	{ "write", RDMX_RMA_WRITE, "OFFSET FILE", 2, rma_parse_write,
	  rma_print_write },
	{ "writeimm", RDMX_RMA_WRITE_IMM, "OFFSET FILE IMM", 3,
	  rma_parse_writeimm, rma_print_write },
};

/*
 * An exact name, or else a prefix of exactly one, as commands are matched;
 * @nhits: out: how many names @word is a prefix of.
 */
static const struct rma_desc *rma_find(const char *word, unsigned int *nhits)
{
	const struct rma_desc *found = NULL;
	size_t i, len = strlen(word);
	unsigned int hits = 0;

	for (i = 0; i < ARRAY_SIZE(rma_descs); i++) {
		if (!strcmp(rma_descs[i].name, word))
			return &rma_descs[i];
		if (len && !strncmp(rma_descs[i].name, word, len)) {
			found = &rma_descs[i];
			hits++;
		}
	}
	*nhits = hits;
	return hits == 1 ? found : NULL;
}

/* The name of argument @i (from 0) in "OFFSET LENGTH" */
static void rma_arg_name(const struct rma_desc *d, unsigned int i, char *buf,
			 size_t size)
{
	const char *p = d->args, *end;

	while (i-- && p)
		p = strchr(p, ' ') ? strchr(p, ' ') + 1 : NULL;
	if (!p) {
		snprintf(buf, size, "argument");
		return;
	}
	end = strchr(p, ' ');
	snprintf(buf, size, "%.*s", end ? (int)(end - p) : (int)strlen(p), p);
}

static int rma_parse(struct rd *rd, struct rma *r)
{
	const char *val, *port = NULL, *service = NULL, *timeout = NULL;
	const char **words;
	char name[16];
	unsigned int n = 0, hits;
	int opt, ret;

	words = calloc(rd->argc > 0 ? rd->argc : 1, sizeof(*words));
	if (!words) {
		rd_err("out of memory");
		return RD_EXIT_FAIL;
	}
	for (;;) {
		/* "-5" is a number (fadd's ADDEND), not an option */
		if (!rd_no_arg(rd) && !rd->opts_done && rd_argv(rd)[0] == '-' &&
		    rd_argv(rd)[1] >= '0' && rd_argv(rd)[1] <= '9') {
			words[n++] = rd_argv(rd);
			rd_arg_inc(rd);
			continue;
		}
		opt = rd_getopt(rd, "rma", rma_opts, &val);
		if (opt == RD_OPT_END)
			break;
		switch (opt) {
		case RMA_OPT_PORT:
			port = val;
			break;
		case RMA_OPT_SERVICE:
			service = val;
			break;
		case RMA_OPT_TIMEOUT:
			timeout = val;
			break;
		case RMA_OPT_OUTPUT:
			r->output = val;
			break;
		case RD_OPT_HELP:
			free(words);
			return -1;
		case RD_OPT_WORD:
			words[n++] = val;
			break;
		default:
			free(words);
			return RD_EXIT_USAGE;
		}
	}
	ret = RD_EXIT_USAGE;
	if (n < 1) {
		rd_usage_err("rma", "missing HOST");
		goto out;
	}
	if (n < 2) {
		rd_usage_err("rma", "missing operation: read, write, cas, fadd or writeimm");
		goto out;
	}
	r->peer.host = words[0];
	r->desc = rma_find(words[1], &hits);
	if (!r->desc) {
		rd_usage_err("rma", "%s operation '%s': read, write, cas, fadd or writeimm",
			     hits ? "ambiguous" : "unknown", words[1]);
		goto out;
	}
	if (n - 2 < r->desc->nargs) {
		rma_arg_name(r->desc, n - 2, name, sizeof(name));
		rd_usage_err("rma", "rma %s: missing %s", r->desc->name, name);
		goto out;
	}
	if (n - 2 > r->desc->nargs) {
		rd_usage_err("rma", "unexpected argument '%s'",
			     words[2 + r->desc->nargs]);
		goto out;
	}
	if (r->output && r->desc->opcode != RDMX_RMA_READ) {
		rd_usage_err("rma", "-o FILE is for read only");
		goto out;
	}
	if (r->output && !*r->output) {
		rd_usage_err("rma", "empty -o file name");
		goto out;
	}
	if (r->output && !strcmp(r->output, "-") && rd->json) {
		rd_usage_err("rma", "-o - and -j both want standard output");
		goto out;
	}
	if (r->desc->parse(r, words + 2))
		goto out;
	r->peer.service = service ? service : RMA_SERVICE_DEFAULT;
	if (rd_check_service("rma", r->peer.service))
		goto out;
	r->peer.port = RDMX_DEFAULT_PORT;
	if (port && rd_parse_port("rma", port, &r->peer.port))
		goto out;
	r->timeout_s = RMA_TIMEOUT_DEFAULT_S;
	if (timeout) {
		unsigned long secs;

		if (rd_parse_secs(timeout, RMA_TIMEOUT_MAX_S, &secs)) {
			rd_usage_err("rma", "bad timeout '%s': expected 1 to %u seconds (a bare number, or with s, m or h)",
				     timeout, RMA_TIMEOUT_MAX_S);
			goto out;
		}
		r->timeout_s = secs;
	}
	ret = 0;
out:
	free(words);
	return ret;
}

/* ---- running ---- */

static void rma_alarm(int sig)
{
	(void)sig;
	rd_ep_stop = 1;
}

/* FILE's bytes for write and writeimm, before connecting; Return: 0, or -1. */
static int rma_load(struct rma *r)
{
	bool imm = r->desc->opcode == RDMX_RMA_WRITE_IMM;
	const char *name = strcmp(r->file, "-") ? r->file : "(standard input)";
	int err;

	err = rd_file_load(r->file, RDMX_RMA_LEN_MAX, &r->buf, &r->buf_len);
	if (err == -EFBIG) {
		rd_err("%s: more than the largest write (%llu bytes)", name,
		       (unsigned long long)RDMX_RMA_LEN_MAX);
		return -1;
	}
	if (err) {
		rd_err("%s: %s", name, strerror(-err));
		return -1;
	}
	if (!r->buf_len && !imm) {
		rd_err("%s: empty: a write moves at least 1 byte (writeimm may move none)",
		       name);
		return -1;
	}
	return 0;
}

/*
 * The token: the first message on the channel, within the timeout.
 * Return: 0, or -1 after saying why not.
 */
static int rma_get_token(int fd, struct rma *r)
{
	struct rdmx_msg_vec vec;
	struct sigaction sa;
	int ret;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = rma_alarm;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	memset(&vec, 0, sizeof(vec));
	vec.addr = (uintptr_t)r->token;
	vec.len = sizeof(r->token);
	rd_ep_stop = 0;
	alarm(r->timeout_s);
	ret = rd_ep_recv(fd, &vec, 1, false);
	alarm(0);
	if (ret == 1 && !vec.status && !(vec.flags & RDMX_MSG_IMM) && vec.len &&
	    vec.len <= sizeof(r->token)) {
		r->token_len = vec.len;
		return 0;
	}
	if (ret == -EINTR && rd_ep_stop)
		rd_err("no token from %s service %s within %u s", r->peer.addr_str,
		       r->peer.service, r->timeout_s);
	else if (ret == -EMSGSIZE)
		rd_err("the first message from %s service %s has %u bytes: more than a token (at most %u); does '" RD_PROG " mr serve' serve it?",
		       r->peer.addr_str, r->peer.service, vec.len, RDMX_TOKEN_MAX);
	else if (!ret)
		rd_err("%s service %s ended the stream without sending a token; does '" RD_PROG " mr serve' serve it?",
		       r->peer.addr_str, r->peer.service);
	else if (ret < 0)
		rd_ep_err(-ret, &r->peer, "receive the token from %s",
			  r->peer.addr_str);
	else if (vec.status)
		rd_ep_err(-vec.status, &r->peer, "receive the token from %s",
			  r->peer.addr_str);
	else
		rd_err("the first message from %s service %s is %s, not a token",
		       r->peer.addr_str, r->peer.service,
		       vec.flags & RDMX_MSG_IMM ? "an immediate" : "empty");
	return -1;
}

/* Say why the operation failed, and what may help. */
static void rma_err(const struct rma *r, int err)
{
	bool atomic = r->desc->opcode == RDMX_RMA_CMP_SWAP ||
		      r->desc->opcode == RDMX_RMA_FETCH_ADD;

	rd_ep_err(err, &r->peer, "%s at offset %" PRIu64 " of %s service %s",
		  r->desc->name, r->offset, r->peer.addr_str, r->peer.service);
	switch (err) {
	case ERANGE:
		fputs("hint: OFFSET and the length reach past the end of the region: see the length 'mr serve' printed\n",
		      stderr);
		break;
	case EACCES:
		fputs("hint: the region does not grant this access (see the access 'mr serve' printed), or it is gone\n",
		      stderr);
		break;
	case EOPNOTSUPP:
		if (atomic)
			fputs("hint: the RDMA device of this session has no atomics (siw has none)\n",
			      stderr);
		break;
	case EINVAL:
		if (atomic)
			fputs("hint: an atomic needs an OFFSET that is a multiple of 8; or the token is damaged\n",
			      stderr);
		else
			fputs("hint: the token is damaged, or the module does not take this operation\n",
			      stderr);
		break;
	case EIO:
		fputs("hint: the peer's RDMA device refused the access: is the region still registered? See dmesg on both hosts\n",
		      stderr);
		break;
	}
}

/* Run the operation on connected endpoint @fd; Return: 0, or -1 after saying why. */
static int rma_run(int fd, struct rma *r)
{
	struct rdmx_rma_op op;
	double t0;
	int ret;

	memset(&op, 0, sizeof(op));
	op.opcode = r->desc->opcode;
	op.token = (uintptr_t)r->token;
	op.token_len = r->token_len;
	op.remote_offset = r->offset;
	switch (op.opcode) {
	case RDMX_RMA_READ:
		r->buf_len = r->length;
		r->buf = mmap(NULL, r->buf_len, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (r->buf == MAP_FAILED) {
			r->buf = NULL;
			rd_err("%zu bytes of memory: %s", r->buf_len,
			       strerror(errno));
			return -1;
		}
		op.local_addr = (uintptr_t)r->buf;
		op.length = r->buf_len;
		break;
	case RDMX_RMA_WRITE_IMM:
		op.imm = r->imm;
		/* fall through */
	case RDMX_RMA_WRITE:
		op.local_addr = (uintptr_t)r->buf;
		op.length = r->buf_len;
		break;
	case RDMX_RMA_CMP_SWAP:
		op.compare_add = r->compare;
		op.swap = r->swap;
		op.local_addr = (uintptr_t)&r->old;
		op.length = sizeof(r->old);
		break;
	case RDMX_RMA_FETCH_ADD:
		op.compare_add = r->addend;
		op.local_addr = (uintptr_t)&r->old;
		op.length = sizeof(r->old);
		break;
	}
	t0 = rma_now();
	ret = rd_rma(fd, &op, 1, 0);
	r->secs = rma_now() - t0;
	if (ret == 1)
		ret = op.status;
	if (ret > 0)
		ret = -EPROTO;
	if (ret) {
		rma_err(r, -ret);
		return -1;
	}
	return 0;
}

static int cmd_rma_run(struct rd *rd)
{
	struct rma r;
	int fd, ret, err;

	memset(&r, 0, sizeof(r));
	ret = rma_parse(rd, &r);
	if (ret < 0)
		return rma_help(rd);
	if (ret)
		return ret;
	ret = RD_EXIT_FAIL;
	if (r.file && rma_load(&r))
		goto out;
	if (rd_rma_check())
		goto out;
	snprintf(r.serve_cmd, sizeof(r.serve_cmd), "mr serve -p %u -S %s --size SIZE",
		 r.peer.port, r.peer.service);
	r.peer.serve_cmd = r.serve_cmd;
	fd = rd_ep_connect(&r.peer, r.timeout_s * 1000);
	if (fd < 0)
		goto out;
	if (!rma_get_token(fd, &r) && !rma_run(fd, &r)) {
		err = r.output ? rd_file_save(r.output, r.buf, r.buf_len) : 0;
		if (err) {
			rd_err("%s: %s", r.output, strerror(-err));
		} else {
			if (!r.output || strcmp(r.output, "-")) {
				open_object(rd, NULL);
				r.desc->print(rd, &r);
				close_object(rd);
			}
			ret = RD_EXIT_OK;
		}
	}
	err = rd_ep_shutdown(fd);
	if (err && ret == RD_EXIT_OK) {
		rd_ep_err(-err, &r.peer, "shut down the channel to %s",
			  r.peer.addr_str);
		ret = RD_EXIT_FAIL;
	}
	close(fd);
out:
	if (r.buf && r.desc->opcode == RDMX_RMA_READ)
		munmap(r.buf, r.buf_len);
	else
		free(r.buf);
	return ret;
}

int cmd_rma(struct rd *rd)
{
	/* "help" only as the sole word: a host may be called anything */
	if (rd->argc == 1 && !strcmp(rd_argv(rd), "help"))
		return rma_help(rd);
	return cmd_rma_run(rd);
}
