// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx-rmatest: check one-sided access (RDMX_IOC_MR_REG, _MR_DEREG, _RMA,
 * _EP_EVENTS, and the immediates of WRITE_IMM in RECV) between an owner,
 * which holds memory, and a user, which operates on it.
 *
 *   rdmx-rmatest owner [-a ADDR] [-p PORT] [-P PORT2] -S SERVICE
 *                      [--channels N] [options]
 *   rdmx-rmatest user [-p PORT] [-P PORT2] -S SERVICE [options] HOST CASE
 *
 * The owner listens, accepts --channels channels and then serves commands,
 * text messages, on every channel it has, until each has ended: it maps
 * regions and registers them on a channel (a region registered again, on
 * another channel, is the same memory under another token), sends the
 * token back, keeps a shadow copy of what each region must hold and
 * compares the region with it when asked; it deregisters, closes channels,
 * accepts more, checks immediates against what the user said it would
 * write before them, and gathers the old values the users' atomics saw.
 * Every byte pattern follows from a seed (splitmix64, as rdmx-msgtest and
 * "rdmxctl mr serve --seed"), so both sides regenerate what they need.
 *
 * The user runs one CASE:
 *   pattern     WRITE then READ back 1 B to 16 MiB (or --max-len) at unaligned
 *               offsets, from and into unaligned buffers, in regions at
 *               aligned and unaligned addresses, singly and in batches; the
 *               owner checks its whole region after every write
 *   imm         -n rounds of WRITEs then a WRITE_IMM, messages between: when
 *               the owner's RECV gives the immediate, the round's data must
 *               be in its memory, and the stream must be in order
 *   atomic      -n fetch-and-adds and -n/4 compare-and-swap increments on one
 *               word, from --peers users at once (one may run on the owner's
 *               host, over a loopback session); the owner checks the word
 *               and that the old values seen are exactly 0, 1, ... total-1;
 *               then 64-bit carries, byte order, rights and bad operands
 *   atomic-none the same device without atomics: MR_REG with the atomic
 *               right and every atomic fail with EOPNOTSUPP
 *   errors      out of bounds, wrapping offsets, bad lengths, opcodes and
 *               fields, missing rights, corrupt and truncated tokens, a
 *               failing operation in a batch, a token of another session,
 *               stale tokens (deregistered; endpoint closed): each its
 *               errno, nothing written, and a fresh token works after.
 *               With --iwarp yes, a refused WRITE may complete as sent
 *               (an iWARP WRITE completes once handed to TCP; the peer's
 *               refusal resets the connection after): it counts as SENT,
 *               and a READ behind it makes sure the peer processed it
 *               before the owner checks its memory
 *   inflight    DEREG and close on the owner's side, and close on the
 *               user's, with an asynchronous batch of large READs and
 *               WRITEs in flight: every operation accounted for, no hang
 *   async       RDMX_RMA_ASYNC batches, RDMX_IOC_EP_EVENTS blocking and not,
 *               poll() and EPOLLPRI, user_data, each operation exactly once
 *
 * Both sides print a result line, write --json, and exit 0 only when every
 * check passed: 1 on a failure, 2 on bad arguments. A call that does not
 * return within --idle-timeout ends the program at once, naming it.
 */
/* __u64 is unsigned long long, printed with %llu, on every architecture. */
#define __SANE_USERSPACE_TYPES__

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <linux/types.h>
#include <linux/rdmx.h>

#include "testlib.h"

#define PROG		"rdmx-rmatest"
#define NSEC		1000000000LL
#define MAX_SHOWN	30		/* error lines printed before going quiet */
#define CTL_MAX		(256u << 10)	/* largest control message */
#define RX_BATCH	16		/* RECV entries per call */
#define MAX_CHANS	16
#define MAX_REGIONS	32
#define MAX_REGS	8		/* registrations of one region */
#define MAX_RANGES	8
#define ST_UNSET	0x5a5a5a5a	/* a status the kernel never writes */
#define NAME_LEN	16

#define KIB		1024ULL
#define MIB		(1024ULL * 1024)

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * The kernel's __printf(), which userspace has to define itself; split
 * across two lines, as checkpatch would otherwise flag its __attribute__.
 */
#define __printf(fmt, args)	__attribute__(\
	(format(printf, fmt, args)))

/* Salts that keep the seeds of the different streams apart */
#define TAG_BG		0x6267ULL
#define TAG_DATA	0x64617461ULL
#define TAG_IMM		0x696d6dULL
#define TAG_UD		0x7564ULL
#define TAG_LEN		0x6c656eULL

/* The same for __noreturn */
#define __noreturn	__attribute__(\
	(noreturn))

enum role { R_OWNER = 1, R_USER = 2 };

struct opts {
	enum role role;
	const char *role_name;
	const char *dev;
	const char *addr;		/* owner: -a */
	const char *host;		/* user */
	const char *test;		/* user: CASE */
	unsigned int port;
	unsigned int port2;		/* -P: 0 when none */
	char service[RDMX_SERVICE_LEN];
	bool have_service;
	unsigned int channels;		/* owner */
	__u64 seed;
	__u64 count;			/* -n */
	bool have_count;
	int atomics;			/* user: 1 yes, 0 no, -1 not given */
	bool iwarp;			/* user: WRITEs complete once sent */
	unsigned int slot;		/* user, atomic: which words are its own */
	unsigned int peers;		/* user, atomic: users hammering at once */
	double idle_timeout;
	double wait;
	__u64 max_len;			/* user, pattern: largest operation */
	const char *json;
};

/* The outcome, for the result line and the JSON */
struct result {
	__u64 checks;
	__u64 errors;
	char first_error[512];
	int err;
	__s64 t0, t1;
	__u64 ops;
	__u64 bytes;
	__u64 events;
	__u64 imms;
	__u64 commands;
	__u64 regs;
	__u64 deregs;
	__u64 channels;
	__u64 atomic_total;
	__u64 atomic_mine;
	__u64 cas_failures;
	__u64 eopnotsupp;
	__u64 inflight_done;
	__u64 inflight_failed;
	char stale[256];		/* errno names the stale tokens got */
	const char *skipped;
	char local[INET6_ADDRSTRLEN + 8];	/* user: channel A's addresses */
	char peer[INET6_ADDRSTRLEN + 8];
};

static struct opts opt;
static struct result res;

/* ---------------------------------------------------------------- misc */

/*
 * The pattern of @seed: splitmix64's outputs, its state starting at @seed,
 * as little-endian bytes (as rdmx-msgtest and "rdmxctl mr serve --seed").
 * Seed 0 is all zero, for regions that start empty.
 */
static void fill_pattern(__u8 *p, size_t len, __u64 seed)
{
	__u64 v;

	if (!seed) {
		memset(p, 0, len);
		return;
	}
	while (len >= 8) {
		v = htole64(splitmix64(&seed));
		memcpy(p, &v, 8);
		p += 8;
		len -= 8;
	}
	if (len) {
		v = htole64(splitmix64(&seed));
		memcpy(p, &v, len);
	}
}

/* Does @p hold the pattern of @seed? *@first: the first byte that differs. */
static bool is_pattern(const __u8 *p, size_t len, __u64 seed, size_t *first)
{
	__u64 s = seed, v;
	size_t at, n, i;
	__u8 w[8];

	for (at = 0; at < len; at += 8) {
		v = htole64(seed ? splitmix64(&s) : 0);
		memcpy(w, &v, 8);
		n = len - at < 8 ? len - at : 8;
		if (!memcmp(p + at, w, n))
			continue;
		for (i = 0; p[at + i] == w[i]; i++)
			;
		*first = at + i;
		return false;
	}
	return true;
}

static void *map_anon(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* ------------------------------------------------------------- results */

static __noreturn void finish(int status);

static __printf(2, 3) void fail(int err, const char *fmt, ...);

/* Record one failure: the first is kept for the result line and the JSON. */
static void fail(int err, const char *fmt, ...)
{
	char buf[sizeof(res.first_error)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (!res.errors++)
		memcpy(res.first_error, buf, sizeof(buf));
	if (err && !res.err)
		res.err = err;
	if (res.errors <= MAX_SHOWN)
		fprintf(stderr, PROG ": %s: FAIL: %s\n", opt.role_name, buf);
	else if (res.errors == MAX_SHOWN + 1)
		fprintf(stderr, PROG ": %s: further failures not shown\n",
			opt.role_name);
}

static __printf(2, 3) bool check(bool ok, const char *fmt, ...);

/* One check: counted; when it fails, a failure with the message. */
static bool check(bool ok, const char *fmt, ...)
{
	char buf[sizeof(res.first_error)];
	va_list ap;

	res.checks++;
	if (ok)
		return true;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fail(0, "%s", buf);
	return false;
}

static __printf(2, 3) void die(int err, const char *fmt, ...);

/* A failure after which the case cannot go on: record it and finish. */
static void die(int err, const char *fmt, ...)
{
	char buf[sizeof(res.first_error)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fail(err, "%s", buf);
	finish(1);
}

static __s64 elapsed_ms(void)
{
	__s64 t1 = res.t1 ? res.t1 : now_ns();

	return res.t0 && t1 > res.t0 ? (t1 - res.t0) / 1000000 : 0;
}

static void write_json(void)
{
	FILE *f = fopen(opt.json, "w");
	const char *p;
	bool first = true;

	if (!f) {
		fprintf(stderr, PROG ": %s: %s\n", opt.json, strerror(errno));
		return;
	}
	fprintf(f, "{\"role\":\"%s\",\"case\":", opt.role_name);
	json_string(f, opt.test);
	fprintf(f, ",\"ok\":%s,\"checks\":%llu,\"errors\":%llu,\"first_error\":",
		res.errors ? "false" : "true", res.checks, res.errors);
	json_string(f, res.errors ? res.first_error : NULL);
	fprintf(f, ",\"errno\":%d,\"errno_name\":", res.err);
	json_string(f, res.err ? errno_name(res.err) : NULL);
	fprintf(f, ",\"elapsed_ms\":%lld,\"ops\":%llu,\"bytes\":%llu,\"events\":%llu",
		elapsed_ms(), res.ops, res.bytes, res.events);
	fprintf(f, ",\"imms\":%llu,\"commands\":%llu,\"regs\":%llu,\"deregs\":%llu",
		res.imms, res.commands, res.regs, res.deregs);
	fprintf(f, ",\"channels\":%llu,\"atomics\":%s,\"atomic_total\":%llu",
		res.channels, opt.atomics > 0 ? "true" : "false", res.atomic_total);
	fprintf(f, ",\"atomic_mine\":%llu,\"cas_failures\":%llu,\"eopnotsupp\":%llu",
		res.atomic_mine, res.cas_failures, res.eopnotsupp);
	fprintf(f, ",\"inflight_done\":%llu,\"inflight_failed\":%llu,\"stale\":[",
		res.inflight_done, res.inflight_failed);
	for (p = strtok(res.stale, " "); p; p = strtok(NULL, " ")) {
		fprintf(f, "%s\"%s\"", first ? "" : ",", p);
		first = false;
	}
	fputs("],\"skipped\":", f);
	json_string(f, res.skipped);
	fputs(",\"local\":", f);
	json_string(f, res.local[0] ? res.local : NULL);
	fputs(",\"peer\":", f);
	json_string(f, res.peer[0] ? res.peer : NULL);
	fputs("}\n", f);
	if (fclose(f))
		fprintf(stderr, PROG ": %s: %s\n", opt.json, strerror(errno));
}

/* The result line, the JSON, and exit: 1 when anything failed. */
static void finish(int status)
{
	alarm(0);
	if (!res.t1)
		res.t1 = now_ns();
	if (res.errors)
		status = 1;
	printf("%s%s%s: %s: %llu checks, %llu ops, %llu bytes, %llu events, %llu imms, %lld ms",
	       opt.role_name, opt.test ? " " : "", opt.test ? opt.test : "",
	       status ? "FAILED" : "ok", res.checks, res.ops, res.bytes,
	       res.events, res.imms, elapsed_ms());
	if (res.skipped)
		printf(", skipped: %s", res.skipped);
	if (res.errors)
		printf(", %llu failures, first: %s", res.errors, res.first_error);
	printf("\n");
	fflush(stdout);
	if (opt.json)
		write_json();
	exit(status);
}

/* -------------------------------------------------------- the watchdog */

/*
 * Every call that may block runs under an alarm: if it does not return
 * within --idle-timeout, the handler says which call hung and exits 1.
 */
static char wd_msg[512];
static size_t wd_len;

static void wd_fire(int sig)
{
	ssize_t n;

	(void)sig;
	n = write(STDERR_FILENO, wd_msg, wd_len);
	(void)n;
	_exit(1);
}

static __printf(1, 2) void wd_arm(const char *fmt, ...);

static void wd_arm(const char *fmt, ...)
{
	char what[384];
	va_list ap;
	int n;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	n = snprintf(wd_msg, sizeof(wd_msg),
		     PROG ": %s%s%s: FAIL: HANG: %s did not return within %g s\n",
		     opt.role_name, opt.test ? " " : "", opt.test ? opt.test : "",
		     what, opt.idle_timeout);
	wd_len = n < 0 ? 0 : (size_t)n < sizeof(wd_msg) ? (size_t)n : sizeof(wd_msg) - 1;
	alarm((unsigned int)opt.idle_timeout + 1);
}

static void wd_disarm(void)
{
	alarm(0);
}

static void wd_init(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = wd_fire;
	sigaction(SIGALRM, &sa, NULL);
}

/* ---------------------------------------------------------- endpoints */

static int ep_open(void)
{
	int fd = open(opt.dev, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		die(errno, "%s: %s", opt.dev, strerror(errno));
	return fd;
}

static bool connect_retryable(int e)
{
	return e == ECONNREFUSED || e == ETIMEDOUT || e == ENETUNREACH ||
	       e == EHOSTUNREACH || e == ECONNRESET || e == EAGAIN ||
	       e == EADDRNOTAVAIL;
}

/* CONNECT to HOST PORT; failures are retried for --wait s, then fatal. */
static int ep_connect(unsigned int port)
{
	__s64 deadline = now_ns() + (__s64)(opt.wait * NSEC);
	struct rdmx_sockaddr peer;
	struct rdmx_ep_addr a;
	int fd, e;

	e = resolve(opt.host, &peer);
	if (e)
		die(0, "%s: %s", opt.host, gai_strerror(e));
	peer.port = port;
	for (;;) {
		fd = ep_open();
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.addr = peer;
		memcpy(a.service, opt.service, sizeof(a.service));
		wd_arm("CONNECT to %s port %u", opt.host, port);
		e = ioctl(fd, RDMX_IOC_EP_CONNECT, &a) < 0 ? errno : 0;
		wd_disarm();
		if (!e)
			return fd;
		close(fd);
		if (!connect_retryable(e) || now_ns() >= deadline)
			die(e, "CONNECT to %s port %u service %s: %s", opt.host,
			    port, opt.service, strerror(e));
		usleep(200000);
	}
}

static int ep_listen(unsigned int port)
{
	struct rdmx_ep_addr a;
	int fd = ep_open(), e;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	if (opt.addr) {
		e = resolve(opt.addr, &a.addr);
		if (e)
			die(0, "%s: %s", opt.addr, gai_strerror(e));
	} else {
		a.addr.family = AF_INET;
	}
	a.addr.port = port;
	memcpy(a.service, opt.service, sizeof(a.service));
	if (ioctl(fd, RDMX_IOC_EP_LISTEN, &a) < 0) {
		e = errno;
		die(e, "LISTEN on port %u service %s: %s", port, opt.service,
		    strerror(e));
	}
	return fd;
}

static int ep_accept(int lfd)
{
	struct rdmx_ep_accept acc;
	int fd, e;

	memset(&acc, 0, sizeof(acc));
	acc.size = sizeof(acc);
	acc.flags = RDMX_ACCEPT_CLOEXEC;
	wd_arm("ACCEPT");
	fd = ioctl(lfd, RDMX_IOC_EP_ACCEPT, &acc);
	e = errno;
	wd_disarm();
	if (fd < 0)
		die(e, "ACCEPT: %s", strerror(e));
	return fd;
}

static int xfer(int fd, unsigned long cmd, struct rdmx_msg_vec *v,
		unsigned int n, __u32 flags)
{
	struct rdmx_ep_xfer x;

	memset(&x, 0, sizeof(x));
	x.size = sizeof(x);
	x.flags = flags;
	x.count = n;
	x.vec_size = sizeof(*v);
	x.msgs = (uintptr_t)v;
	return ioctl(fd, cmd, &x);
}

/* SEND one message; Return: 0, or -errno. */
static int msg_send(int fd, const void *p, size_t len)
{
	struct rdmx_msg_vec v;
	int ret, e;

	memset(&v, 0, sizeof(v));
	v.addr = (uintptr_t)p;
	v.len = len;
	do {
		wd_arm("SEND of a %zu-byte message", len);
		ret = xfer(fd, RDMX_IOC_EP_SEND, &v, 1, 0);
		e = errno;
		wd_disarm();
	} while (ret < 0 && e == EINTR);
	if (ret < 0)
		return -e;
	if (ret != 1)
		return -EPROTO;
	return v.status;
}

static __printf(2, 3) int msg_sendf(int fd, const char *fmt, ...);

/* SEND a text message, fatal if it cannot go */
static int msg_sendf(int fd, const char *fmt, ...)
{
	static char buf[CTL_MAX];
	va_list ap;
	int n, err;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf))
		die(EMSGSIZE, "control message too long (%d bytes)", n);
	err = msg_send(fd, buf, n);
	if (err)
		die(-err, "SEND of '%.40s': %s", buf, strerror(-err));
	return 0;
}

/* RECV buffers of one channel, grown on EMSGSIZE */
struct rxbufs {
	__u8 *buf[RX_BATCH];
	__u32 cap[RX_BATCH];
	struct rdmx_msg_vec vec[RX_BATCH];
};

static void rx_grow(struct rxbufs *b, __u32 need)
{
	unsigned int i;
	__u8 *p;

	for (i = 0; i < RX_BATCH; i++) {
		if (b->cap[i] >= need)
			continue;
		p = realloc(b->buf[i], need);
		if (!p)
			die(ENOMEM, "out of memory");
		b->buf[i] = p;
		b->cap[i] = need;
	}
}

/*
 * RECV up to @n entries into @b; Return: the count (0 at the end of the
 * stream) or -errno. EMSGSIZE of the first entry grows the buffers and
 * tries again.
 */
static int msg_recv(int fd, struct rxbufs *b, unsigned int n, bool nonblock)
{
	unsigned int i;
	int ret, e;

	for (;;) {
		rx_grow(b, 4096);
		for (i = 0; i < n; i++) {
			memset(&b->vec[i], 0, sizeof(b->vec[i]));
			b->vec[i].addr = (uintptr_t)b->buf[i];
			b->vec[i].len = b->cap[i] - 1;	/* room for a NUL */
		}
		if (!nonblock)
			wd_arm("RECV");
		ret = xfer(fd, RDMX_IOC_EP_RECV, b->vec, n,
			   nonblock ? RDMX_XFER_NONBLOCK : 0);
		e = errno;
		if (!nonblock)
			wd_disarm();
		if (ret < 0 && e == EINTR)
			continue;
		if (ret < 0 && e == EMSGSIZE && b->vec[0].len >= b->cap[0] &&
		    b->vec[0].len <= RDMX_MSG_MAX) {
			rx_grow(b, b->vec[0].len + 1);
			continue;
		}
		if (ret < 0)
			return -e;
		if ((unsigned int)ret > n)
			die(EPROTO, "RECV returned %d for %u entries", ret, n);
		return ret;
	}
}

/* Put NUL after a received text message; Return: its text. */
static char *rx_text(struct rxbufs *b, unsigned int i)
{
	char *s = (char *)b->buf[i];

	s[b->vec[i].len < b->cap[i] ? b->vec[i].len : b->cap[i] - 1] = '\0';
	return s;
}

/* ---------------------------------------------------- one-sided access */

static int do_rma(int fd, struct rdmx_rma_op *ops, unsigned int n,
		  __u32 flags, unsigned int count)
{
	struct rdmx_rma r;
	unsigned int i;
	int ret, e;

	for (i = 0; i < n; i++)
		ops[i].status = ST_UNSET;
	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	r.flags = flags;
	r.count = count;
	r.op_size = sizeof(*ops);
	r.ops = (uintptr_t)ops;
	wd_arm("RMA of %u operations%s", count,
	       flags & RDMX_RMA_ASYNC ? " (async)" : "");
	ret = ioctl(fd, RDMX_IOC_RMA, &r);
	e = errno;
	wd_disarm();
	errno = e;
	return ret;
}

/* RDMX_IOC_RMA of @n operations; Return: as the ioctl, errno set. */
static int rma(int fd, struct rdmx_rma_op *ops, unsigned int n, __u32 flags)
{
	return do_rma(fd, ops, n, flags, n);
}

static int get_events(int fd, struct rdmx_event *ev, unsigned int n,
		      __u32 flags)
{
	struct rdmx_events x;
	int ret, e;

	memset(ev, 0xa5, n * sizeof(*ev));
	memset(&x, 0, sizeof(x));
	x.size = sizeof(x);
	x.flags = flags;
	x.count = n;
	x.event_size = sizeof(*ev);
	x.events = (uintptr_t)ev;
	wd_arm("EP_EVENTS (%s, room for %u)",
	       flags & RDMX_EVENTS_NONBLOCK ? "non-blocking" : "blocking", n);
	ret = ioctl(fd, RDMX_IOC_EP_EVENTS, &x);
	e = errno;
	wd_disarm();
	if (ret >= 0 && (unsigned int)ret > n)
		die(EPROTO, "EP_EVENTS returned %d events for room for %u", ret, n);
	errno = e;
	return ret;
}

static int mr_dereg(int fd, __u32 id)
{
	struct rdmx_mr_dereg d;

	memset(&d, 0, sizeof(d));
	d.size = sizeof(d);
	d.mr_id = id;
	return ioctl(fd, RDMX_IOC_MR_DEREG, &d) < 0 ? -errno : 0;
}

/* rwa letters to RDMX_ACCESS_* bits */
static __u32 access_bits(const char *s)
{
	__u32 a = 0;

	for (; *s; s++) {
		if (*s == 'r')
			a |= RDMX_ACCESS_REMOTE_READ;
		else if (*s == 'w')
			a |= RDMX_ACCESS_REMOTE_WRITE;
		else if (*s == 'a')
			a |= RDMX_ACCESS_REMOTE_ATOMIC;
	}
	return a;
}

/* ================================================================ owner */

struct region {
	char name[NAME_LEN];
	__u8 *map;
	size_t maplen;
	__u8 *base;
	__u64 size;
	__u8 *shadow;
	bool unmapped;
	unsigned int nregs;
	struct {
		int ch;
		__u32 mr_id;
		bool live;
	} reg[MAX_REGS];
};

/* Where a round of the imm case is: what came of it so far */
enum { IMM_IDLE, IMM_WAIT_PRE, IMM_WAIT_IMM, IMM_WAIT_POST };

struct chan {
	int fd;
	int idx;
	bool open;
	bool lossy;		/* may end by reset (its user closes it abruptly) */
	struct rxbufs rx;
	/* imm: the round announced and not finished yet */
	int imm_state;
	__u64 imm_v;
	__u32 imm_val;
	struct region *imm_rg;
	unsigned int imm_nr;
	__u64 imm_off[MAX_RANGES], imm_len[MAX_RANGES], imm_seed[MAX_RANGES];
	__u64 imms;
	char imm_bad[640];
	/* atomic: the next message holds this many old values */
	__u64 olds_pending;
	bool atomic_wait;
	char sync_tag[NAME_LEN];
};

static struct region regions[MAX_REGIONS];
static unsigned int nr_regions;
static struct chan chans[MAX_CHANS];
static unsigned int nr_chans;
static int lfds[3];

/* The old values the users' atomics saw, gathered for "atomicwait" */
static struct {
	char name[NAME_LEN];
	__u64 off;
	__u64 *vals;
	__u64 n;
	unsigned int reports;
} pool;

static struct region *region_find(const char *name)
{
	unsigned int i;

	for (i = 0; i < nr_regions; i++)
		if (!strcmp(regions[i].name, name))
			return &regions[i];
	return NULL;
}

/*
 * Compare [off, off + len) of a region with its shadow; Return: true if
 * equal, else false with a description in @why.
 */
static bool region_cmp(const struct region *rg, __u64 off, __u64 len,
		       char *why, size_t size)
{
	__u64 i, first = 0, diff = 0;

	if (rg->unmapped) {
		snprintf(why, size, "region %s is unmapped", rg->name);
		return false;
	}
	if (off > rg->size)
		off = rg->size;
	if (len > rg->size - off)
		len = rg->size - off;
	if (!memcmp(rg->base + off, rg->shadow + off, len))
		return true;
	for (i = off; i < off + len; i++) {
		if (rg->base[i] == rg->shadow[i])
			continue;
		if (!diff++)
			first = i;
	}
	snprintf(why, size,
		 "region %s: %llu bytes differ in [%llu, %llu), first at offset %llu: expected 0x%02x, got 0x%02x",
		 rg->name, diff, off, off + len, first, rg->shadow[first],
		 rg->base[first]);
	return false;
}

static __printf(2, 3) void owner_reply(struct chan *c, const char *fmt, ...);

static void owner_reply(struct chan *c, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n, err;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(buf))
		n = sizeof(buf) - 1;
	if (!strncmp(buf, "bad", 3))
		fail(0, "channel %d: %s", c->idx, buf);
	err = msg_send(c->fd, buf, n);
	if (err)
		fail(-err, "channel %d: SEND of the reply '%.60s': %s", c->idx,
		     buf, strerror(-err));
}

static struct chan *chan_get(struct chan *self, long ch)
{
	if (ch < 0)
		return self;
	if (ch >= (long)nr_chans || !chans[ch].open)
		return NULL;
	return &chans[ch];
}

static void chan_add(int fd)
{
	struct chan *c;

	if (nr_chans == MAX_CHANS)
		die(ENOSPC, "more than %d channels", MAX_CHANS);
	c = &chans[nr_chans];
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->idx = nr_chans++;
	c->open = true;
	res.channels++;
	msg_sendf(fd, "hello %d", c->idx);
}

/* Close a channel: its registrations go with it. */
static void chan_close(struct chan *c)
{
	unsigned int i, j;

	close(c->fd);
	c->open = false;
	for (i = 0; i < nr_regions; i++)
		for (j = 0; j < regions[i].nregs; j++)
			if (regions[i].reg[j].ch == c->idx)
				regions[i].reg[j].live = false;
}

/* reg NAME SIZE ACCESS SEED MISALIGN CH */
static void cmd_reg(struct chan *c, char *args)
{
	char name[NAME_LEN], acc[8];
	unsigned long long size, seed, mis;
	__u8 token[RDMX_TOKEN_MAX];
	struct rdmx_mr_reg r;
	struct region *rg;
	struct chan *on;
	long ch;
	int e;

	if (sscanf(args, "%15s %llu %7s %llu %llu %ld", name, &size, acc, &seed,
		   &mis, &ch) != 6 || !size || mis > 4095) {
		owner_reply(c, "bad reg: cannot parse '%s'", args);
		return;
	}
	on = chan_get(c, ch);
	if (!on) {
		owner_reply(c, "bad reg: no channel %ld", ch);
		return;
	}
	rg = region_find(name);
	if (rg && rg->size != size) {
		owner_reply(c, "bad reg: region %s has %llu bytes, not %llu", name,
			    rg->size, size);
		return;
	}
	if (rg && (rg->unmapped || rg->nregs == MAX_REGS)) {
		owner_reply(c, "bad reg: region %s cannot be registered again", name);
		return;
	}
	if (!rg) {
		if (nr_regions == MAX_REGIONS) {
			owner_reply(c, "bad reg: too many regions");
			return;
		}
		rg = &regions[nr_regions];
		memset(rg, 0, sizeof(*rg));
		snprintf(rg->name, sizeof(rg->name), "%s", name);
		rg->size = size;
		rg->maplen = size + mis;
		rg->map = map_anon(rg->maplen);
		rg->shadow = malloc(size);
		if (!rg->map || !rg->shadow)
			die(ENOMEM, "region %s: %llu bytes: out of memory", name, size);
		rg->base = rg->map + mis;
		fill_pattern(rg->base, size, seed);
		memcpy(rg->shadow, rg->base, size);
		nr_regions++;
	}
	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	r.addr = (uintptr_t)rg->base;
	r.length = size;
	r.access = access_bits(acc);
	r.token = (uintptr_t)token;
	r.token_len = sizeof(token);
	wd_arm("MR_REG of %llu bytes", size);
	e = ioctl(on->fd, RDMX_IOC_MR_REG, &r) < 0 ? errno : 0;
	wd_disarm();
	if (e) {
		owner_reply(c, "err reg %s %d", name, e);
		return;
	}
	if (!check(r.token_len && r.token_len <= RDMX_TOKEN_MAX &&
		   r.size >= RDMX_MR_REG_SIZE_VER0,
		   "MR_REG of region %s: token_len %u, size %u written back",
		   name, r.token_len, r.size)) {
		owner_reply(c, "bad reg: MR_REG gave token_len %u", r.token_len);
		return;
	}
	rg->reg[rg->nregs].ch = on->idx;
	rg->reg[rg->nregs].mr_id = r.mr_id;
	rg->reg[rg->nregs].live = true;
	rg->nregs++;
	res.regs++;
	owner_reply(c, "ok reg %s %u %u", name, r.mr_id, r.token_len);
	e = msg_send(c->fd, token, r.token_len);
	if (e)
		fail(-e, "SEND of the token of %s: %s", name, strerror(-e));
}

/* wrote NAME OFF LEN SEED, one or more lines: apply, then compare it all */
static void cmd_wrote(struct chan *c, char *args)
{
	unsigned long long off, len, seed;
	char name[NAME_LEN], why[512];
	struct region *rg = NULL, *r1;
	char *line, *save = NULL;
	unsigned int n = 0;

	for (line = strtok_r(args, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "wrote ", 6))
			line += 6;
		if (sscanf(line, "%15s %llu %llu %llu", name, &off, &len,
			   &seed) != 4) {
			owner_reply(c, "bad wrote: cannot parse '%s'", line);
			return;
		}
		r1 = region_find(name);
		if (!r1 || r1->unmapped || off > r1->size ||
		    len > r1->size - off || (rg && r1 != rg)) {
			owner_reply(c, "bad wrote: %s [%llu, +%llu) is no place of one region",
				    name, off, len);
			return;
		}
		rg = r1;
		fill_pattern(rg->shadow + off, len, seed);
		n++;
	}
	if (!rg) {
		owner_reply(c, "bad wrote: nothing");
		return;
	}
	if (check(region_cmp(rg, 0, rg->size, why, sizeof(why)),
		  "after %u writes the user reported: %s", n, why))
		owner_reply(c, "ok wrote %u", n);
	else
		owner_reply(c, "bad after %u writes: %s", n, why);
}

/* check NAME: the whole region against its shadow */
static void cmd_check(struct chan *c, char *args)
{
	char name[NAME_LEN], why[512];
	struct region *rg;

	rg = sscanf(args, "%15s", name) == 1 ? region_find(name) : NULL;
	if (!rg) {
		owner_reply(c, "bad check: no region '%s'", args);
		return;
	}
	if (check(region_cmp(rg, 0, rg->size, why, sizeof(why)), "%s", why))
		owner_reply(c, "ok check %s", name);
	else
		owner_reply(c, "bad %s", why);
}

/* set NAME OFF VALUE and expect NAME OFF VALUE: one 64-bit word, host order */
static void cmd_word(struct chan *c, char *args, bool set)
{
	unsigned long long off, val;
	char name[NAME_LEN];
	struct region *rg;
	__u64 have;

	rg = sscanf(args, "%15s %llu %llu", name, &off, &val) == 3 ? region_find(name) : NULL;
	if (!rg || rg->unmapped || off > rg->size - 8) {
		owner_reply(c, "bad %s: cannot parse '%s'", set ? "set" : "expect", args);
		return;
	}
	if (set) {
		memcpy(rg->base + off, &val, 8);
		memcpy(rg->shadow + off, &val, 8);
		owner_reply(c, "ok set");
		return;
	}
	memcpy(&have, rg->base + off, 8);
	memcpy(rg->shadow + off, &val, 8);
	if (check(have == val, "region %s word at %llu: expected 0x%016llx, got 0x%016llx",
		  name, off, val, have))
		owner_reply(c, "ok expect");
	else
		owner_reply(c, "bad region %s word at %llu: expected 0x%016llx, got 0x%016llx",
			    name, off, val, have);
}

/* dereg NAME CH UNMAP */
static void cmd_dereg(struct chan *c, char *args)
{
	char name[NAME_LEN];
	struct region *rg;
	struct chan *on;
	unsigned int j;
	int unmap, e;
	__s64 t0;
	long ch;

	rg = sscanf(args, "%15s %ld %d", name, &ch, &unmap) == 3 ? region_find(name) : NULL;
	on = rg ? chan_get(c, ch) : NULL;
	if (!on) {
		owner_reply(c, "bad dereg: cannot parse '%s'", args);
		return;
	}
	for (j = 0; j < rg->nregs; j++)
		if (rg->reg[j].live && rg->reg[j].ch == on->idx)
			break;
	if (j == rg->nregs) {
		owner_reply(c, "bad dereg: %s is not registered on channel %d", name,
			    on->idx);
		return;
	}
	t0 = now_ns();
	wd_arm("MR_DEREG of region %s", name);
	e = mr_dereg(on->fd, rg->reg[j].mr_id);
	wd_disarm();
	if (e) {
		check(false, "MR_DEREG of region %s (mr %u): %s", name,
		      rg->reg[j].mr_id, strerror(-e));
		owner_reply(c, "err dereg %d", -e);
		return;
	}
	rg->reg[j].live = false;
	res.deregs++;
	e = mr_dereg(on->fd, rg->reg[j].mr_id);
	check(e == -ENOENT, "MR_DEREG of region %s again: expected ENOENT, got %s",
	      name, errno_name(-e));
	if (unmap) {
		munmap(rg->map, rg->maplen);
		rg->unmapped = true;
	}
	owner_reply(c, "ok dereg %lld", (now_ns() - t0) / 1000000);
}

/* imm NAME V IMMVAL N (OFF LEN SEED)*N: the round to check at immediate V */
static void cmd_imm(struct chan *c, char *args)
{
	unsigned long long v, val, off, len, seed;
	char name[NAME_LEN];
	unsigned int n, i;
	int used, at;

	c->imm_rg = NULL;
	if (sscanf(args, "%15s %llu %llu %u%n", name, &v, &val, &n, &at) == 4 &&
	    n <= MAX_RANGES)
		c->imm_rg = region_find(name);
	if (!c->imm_rg) {
		fail(0, "imm: cannot parse '%.80s'", args);
		return;
	}
	if (c->imm_state != IMM_IDLE && !c->imm_bad[0])
		snprintf(c->imm_bad, sizeof(c->imm_bad),
			 "round %llu announced while round %llu is not over (state %d)",
			 v, c->imm_v, c->imm_state);
	if (v != c->imms && !c->imm_bad[0])
		snprintf(c->imm_bad, sizeof(c->imm_bad),
			 "round %llu announced after %llu immediates", v, c->imms);
	for (i = 0; i < n; i++) {
		if (sscanf(args + at, "%llu %llu %llu%n", &off, &len, &seed,
			   &used) != 3 || off > c->imm_rg->size ||
		    len > c->imm_rg->size - off) {
			fail(0, "imm: bad range %u in '%.80s'", i, args);
			return;
		}
		at += used;
		c->imm_off[i] = off;
		c->imm_len[i] = len;
		c->imm_seed[i] = seed;
	}
	c->imm_nr = n;
	c->imm_v = v;
	c->imm_val = val;
	c->imm_state = IMM_WAIT_PRE;
}

/* note V pre|post: the messages around a round's WRITE_IMM */
static void cmd_note(struct chan *c, char *args)
{
	unsigned long long v;
	char when[8];
	bool pre;

	if (sscanf(args, "%llu %7s", &v, when) != 2) {
		fail(0, "note: cannot parse '%.80s'", args);
		return;
	}
	pre = !strcmp(when, "pre");
	if (c->imm_bad[0])
		return;
	if (v != c->imm_v || c->imm_state != (pre ? IMM_WAIT_PRE : IMM_WAIT_POST)) {
		if (pre)
			snprintf(c->imm_bad, sizeof(c->imm_bad),
				 "message 'note %llu pre' (sent before WRITE_IMM %llu) came in state %d: out of order",
				 v, v, c->imm_state);
		else
			snprintf(c->imm_bad, sizeof(c->imm_bad),
				 "message 'note %llu post', sent once WRITE_IMM %llu completed, came before its immediate (state %d)",
				 v, v, c->imm_state);
		fail(0, "channel %d: %s", c->idx, c->imm_bad);
		return;
	}
	c->imm_state = pre ? IMM_WAIT_IMM : IMM_IDLE;
}

/* An immediate: the round's writes must be in memory now. */
static void got_imm(struct chan *c, __u32 val)
{
	char why[512];
	__u64 lo = ~0ULL, hi = 0, i;

	res.imms++;
	if (c->imm_bad[0])
		return;
	if (c->imm_state != IMM_WAIT_IMM || val != c->imm_val) {
		snprintf(c->imm_bad, sizeof(c->imm_bad),
			 "immediate 0x%08x came in state %d (round %llu expects 0x%08x after 'note %llu pre')",
			 val, c->imm_state, c->imm_v, c->imm_val, c->imm_v);
		fail(0, "channel %d: %s", c->idx, c->imm_bad);
		return;
	}
	for (i = 0; i < c->imm_nr; i++) {
		fill_pattern(c->imm_rg->shadow + c->imm_off[i], c->imm_len[i],
			     c->imm_seed[i]);
		if (c->imm_off[i] < lo)
			lo = c->imm_off[i];
		if (c->imm_off[i] + c->imm_len[i] > hi)
			hi = c->imm_off[i] + c->imm_len[i];
	}
	/* The round's ranges, the gaps between them, and 64 bytes around */
	lo = lo > 64 ? lo - 64 : 0;
	hi += 64;
	if (c->imm_nr && !check(region_cmp(c->imm_rg, lo, hi - lo, why, sizeof(why)),
				"at immediate %llu (0x%08x) of channel %d: %s",
				c->imm_v, val, c->idx, why))
		snprintf(c->imm_bad, sizeof(c->imm_bad),
			 "at immediate %llu, the round's data was not all there: %s",
			 c->imm_v, why);
	c->imms++;
	c->imm_state = IMM_WAIT_POST;
}

/* immstat N: N rounds, all in order and in memory */
static void cmd_immstat(struct chan *c, char *args)
{
	unsigned long long n;
	char *end;

	errno = 0;
	n = strtoull(args, &end, 10);
	if (errno || end == args || *end) {
		owner_reply(c, "bad immstat: cannot parse '%s'", args);
		return;
	}
	if (c->imm_bad[0])
		owner_reply(c, "bad %s", c->imm_bad);
	else if (c->imms != n || c->imm_state != IMM_IDLE)
		owner_reply(c, "bad %llu immediates on channel %d, expected %llu (state %d)",
			    c->imms, c->idx, n, c->imm_state);
	else
		owner_reply(c, "ok immstat %llu", n);
}

/* olds NAME OFF COUNT: the next message holds COUNT old values */
static void cmd_olds(struct chan *c, char *args)
{
	unsigned long long off, n;
	char name[NAME_LEN];

	if (sscanf(args, "%15s %llu %llu", name, &off, &n) != 3 || !n ||
	    n > RDMX_MSG_MAX / 8) {
		owner_reply(c, "bad olds: cannot parse '%s'", args);
		return;
	}
	if (pool.reports && (strcmp(pool.name, name) || pool.off != off)) {
		owner_reply(c, "bad olds: a report for another word is open");
		return;
	}
	snprintf(pool.name, sizeof(pool.name), "%s", name);
	pool.off = off;
	c->olds_pending = n;
}

static void got_olds(struct chan *c, const __u8 *p, __u32 len)
{
	__u64 *v;

	if (len != c->olds_pending * 8) {
		owner_reply(c, "bad olds: %u bytes, expected %llu", len,
			    c->olds_pending * 8);
		c->olds_pending = 0;
		return;
	}
	v = realloc(pool.vals, (pool.n + c->olds_pending) * 8);
	if (!v)
		die(ENOMEM, "out of memory");
	pool.vals = v;
	memcpy(pool.vals + pool.n, p, len);
	pool.n += c->olds_pending;
	pool.reports++;
	c->olds_pending = 0;
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/*
 * atomicwait NAME OFF K INIT: once K users reported, the word must be
 * INIT + all increments, and the old values seen exactly INIT, INIT + 1, ...
 */
static void cmd_atomicwait(struct chan *c, char *args)
{
	unsigned long long off, init;
	char name[NAME_LEN], why[512] = "";
	struct region *rg;
	unsigned int k, i, waiting = 0;
	__u64 word, j;

	rg = sscanf(args, "%15s %llu %u %llu", name, &off, &k, &init) == 4 ?
	     region_find(name) : NULL;
	if (!rg || rg->unmapped || off > rg->size - 8) {
		owner_reply(c, "bad atomicwait: cannot parse '%s'", args);
		return;
	}
	c->atomic_wait = true;
	for (i = 0; i < nr_chans; i++)
		waiting += chans[i].open && chans[i].atomic_wait;
	if (waiting < k)
		return;
	if (pool.reports != k)
		snprintf(why, sizeof(why), "%u reports for %u users", pool.reports, k);
	memcpy(&word, rg->base + off, 8);
	qsort(pool.vals, pool.n, 8, cmp_u64);
	for (j = 0; !why[0] && j < pool.n; j++) {
		if (pool.vals[j] == init + j)
			continue;
		snprintf(why, sizeof(why),
			 "old value #%llu of %llu (sorted) is %llu, expected %llu: %s",
			 j, pool.n, pool.vals[j], init + j,
			 pool.vals[j] < init + j ? "an increment was seen twice" :
			 "an increment was lost or skipped");
	}
	if (!why[0] && word != init + pool.n)
		snprintf(why, sizeof(why),
			 "the word is %llu after %llu increments from %llu",
			 word, pool.n, init);
	check(!why[0], "atomic word %s+%llu: %s", name, off, why);
	res.atomic_total = pool.n;
	word = init + pool.n;
	memcpy(rg->shadow + off, &word, 8);
	for (i = 0; i < nr_chans; i++) {
		if (!chans[i].open || !chans[i].atomic_wait)
			continue;
		chans[i].atomic_wait = false;
		if (why[0])
			owner_reply(&chans[i], "bad atomic %s+%llu: %s", name, off, why);
		else
			owner_reply(&chans[i], "ok atomic %llu", pool.n);
	}
	pool.reports = 0;
	pool.n = 0;
}

/* sync TAG K: answer once K channels said so */
static void cmd_sync(struct chan *c, char *args)
{
	char tag[NAME_LEN];
	unsigned int k, i, n = 0;

	if (sscanf(args, "%15s %u", tag, &k) != 2) {
		owner_reply(c, "bad sync: cannot parse '%s'", args);
		return;
	}
	snprintf(c->sync_tag, sizeof(c->sync_tag), "%s", tag);
	for (i = 0; i < nr_chans; i++)
		n += chans[i].open && !strcmp(chans[i].sync_tag, tag);
	if (n < k)
		return;
	for (i = 0; i < nr_chans; i++) {
		if (!chans[i].open || strcmp(chans[i].sync_tag, tag))
			continue;
		chans[i].sync_tag[0] = '\0';
		owner_reply(&chans[i], "ok sync %s", tag);
	}
}

static void owner_command(struct chan *c, char *s)
{
	char *args = strchr(s, ' ');
	long ch;
	int l;

	res.commands++;
	if (args)
		*args++ = '\0';
	else
		args = s + strlen(s);
	if (!strcmp(s, "reg")) {
		cmd_reg(c, args);
	} else if (!strcmp(s, "wrote")) {
		cmd_wrote(c, args);
	} else if (!strcmp(s, "check")) {
		cmd_check(c, args);
	} else if (!strcmp(s, "set") || !strcmp(s, "expect")) {
		cmd_word(c, args, !strcmp(s, "set"));
	} else if (!strcmp(s, "dereg")) {
		cmd_dereg(c, args);
	} else if (!strcmp(s, "imm")) {
		cmd_imm(c, args);
	} else if (!strcmp(s, "note")) {
		cmd_note(c, args);
	} else if (!strcmp(s, "immstat")) {
		cmd_immstat(c, args);
	} else if (!strcmp(s, "olds")) {
		cmd_olds(c, args);
	} else if (!strcmp(s, "atomicwait")) {
		cmd_atomicwait(c, args);
	} else if (!strcmp(s, "sync")) {
		cmd_sync(c, args);
	} else if (!strcmp(s, "accept")) {
		l = atoi(args);
		if (l < 1 || l > 2 || lfds[l] < 0) {
			owner_reply(c, "bad accept: no listener %d", l);
			return;
		}
		owner_reply(c, "ok accept");
		chan_add(ep_accept(lfds[l]));
	} else if (!strcmp(s, "close")) {
		ch = atol(args);
		if (!chan_get(c, ch) || ch < 0) {
			owner_reply(c, "bad close: no channel %ld", ch);
			return;
		}
		chan_close(&chans[ch]);
		owner_reply(c, "ok close");
	} else if (!strcmp(s, "lossy")) {
		ch = atol(args);
		if (chan_get(c, ch))
			chan_get(c, ch)->lossy = true;
		owner_reply(c, "ok lossy");
	} else if (strcmp(s, "bye")) {
		owner_reply(c, "bad unknown command '%.40s'", s);
	}
}

/* Take what channel @c has; Return: false once it ended. */
static bool chan_read(struct chan *c)
{
	int n, i;

	n = msg_recv(c->fd, &c->rx, RX_BATCH, true);
	if (n == -EAGAIN || n == -EINTR)
		return true;
	if (n == 0) {
		if (c->olds_pending || c->imm_state != IMM_IDLE)
			fail(0, "channel %d ended in the middle of a report or round", c->idx);
		if (ioctl(c->fd, RDMX_IOC_EP_SHUTDOWN, 0) < 0 && errno != ECONNRESET)
			fail(errno, "channel %d: SHUTDOWN: %s", c->idx, strerror(errno));
		return false;
	}
	if (n < 0) {
		if (!(c->lossy && (n == -ECONNRESET || n == -EPIPE)))
			fail(-n, "channel %d: RECV: %s", c->idx, strerror(-n));
		return false;
	}
	for (i = 0; i < n && c->open; i++) {
		struct rdmx_msg_vec *v = &c->rx.vec[i];

		if (v->status) {
			fail(-v->status, "channel %d: RECV entry %d: status %s",
			     c->idx, i, errno_name(-v->status));
			return false;
		}
		if (v->flags & RDMX_MSG_IMM) {
			check(!v->len && v->flags == RDMX_MSG_IMM,
			      "channel %d: immediate entry with len %u flags 0x%x",
			      c->idx, v->len, v->flags);
			got_imm(c, v->imm);
			continue;
		}
		if (!check(!v->flags && !v->imm,
			   "channel %d: message entry with flags 0x%x imm %u",
			   c->idx, v->flags, v->imm))
			continue;
		if (c->olds_pending)
			got_olds(c, c->rx.buf[i], v->len);
		else
			owner_command(c, rx_text(&c->rx, i));
	}
	return true;
}

static int run_owner(void)
{
	struct pollfd pfd[MAX_CHANS];
	unsigned int i, n, open;
	int ret;

	lfds[0] = -1;
	lfds[1] = ep_listen(opt.port);
	lfds[2] = opt.port2 ? ep_listen(opt.port2) : -1;
	fprintf(stderr, PROG ": owner: listening on port %u%s, service %s\n",
		opt.port, opt.port2 ? " and -P" : "", opt.service);
	for (i = 0; i < opt.channels; i++)
		chan_add(ep_accept(lfds[1]));
	res.t0 = now_ns();
	for (;;) {
		for (i = 0, n = 0, open = 0; i < nr_chans; i++) {
			if (!chans[i].open)
				continue;
			pfd[n].fd = chans[i].fd;
			pfd[n].events = POLLIN;
			pfd[n].revents = 0;
			n++;
			open++;
		}
		if (!open)
			break;
		ret = poll(pfd, n, (int)(opt.idle_timeout * 1000));
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0)
			die(errno, "poll: %s", strerror(errno));
		if (!ret)
			die(ETIMEDOUT, "no message on any channel for %g s", opt.idle_timeout);
		for (i = 0; i < nr_chans; i++) {
			unsigned int k;

			if (!chans[i].open)
				continue;
			for (k = 0; k < n && pfd[k].fd != chans[i].fd; k++)
				;
			if (k == n || !pfd[k].revents)
				continue;
			if (!chan_read(&chans[i]) && chans[i].open)
				chan_close(&chans[i]);
		}
	}
	res.t1 = now_ns();
	for (i = 1; i < 3; i++)
		if (lfds[i] >= 0)
			close(lfds[i]);
	return 0;
}

/* ================================================================= user */

/* A region the owner serves, as the user sees it */
struct rtok {
	char name[NAME_LEN];
	__u8 b[RDMX_TOKEN_MAX + 16];
	__u32 len;
	__u64 size;
	__u8 *shadow;		/* what the owner's region holds */
	__u32 mr_id;
};

static int ctl_fd;		/* channel A, the control channel */
static struct rxbufs ctl_rx;

/* The next message on channel @fd, which must be a message: its text. */
static char *ctl_recv(int fd, __u32 *len)
{
	int n;

	n = msg_recv(fd, &ctl_rx, 1, false);
	if (n < 0)
		die(-n, "waiting for the owner: RECV: %s", strerror(-n));
	if (!n)
		die(0, "the owner ended the stream");
	if (ctl_rx.vec[0].status || ctl_rx.vec[0].flags)
		die(EPROTO, "the owner's message: status %d flags 0x%x",
		    ctl_rx.vec[0].status, ctl_rx.vec[0].flags);
	if (len)
		*len = ctl_rx.vec[0].len;
	return rx_text(&ctl_rx, 0);
}

static __printf(2, 3) char *ctl_call(int fd, const char *fmt, ...);

/* Send a command, return the reply */
static char *ctl_call(int fd, const char *fmt, ...)
{
	static char buf[CTL_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	msg_sendf(fd, "%s", buf);
	return ctl_recv(fd, NULL);
}

/* A command whose reply must be "ok": a check (the owner's verdict). */
static bool ctl_ok(const char *what, const char *rep)
{
	return check(!strncmp(rep, "ok", 2), "%s: the owner says: %s", what, rep);
}

/* A channel to the owner, and its index there */
static int user_connect(unsigned int port, int *idx)
{
	int fd = ep_connect(port), k = -1;
	char *hello;
	int n;

	n = msg_recv(fd, &ctl_rx, 1, false);
	if (n != 1 || ctl_rx.vec[0].flags)
		die(n < 0 ? -n : EPROTO, "no hello from the owner on port %u (%s)",
		    port, n < 0 ? strerror(-n) : "end of stream");
	hello = rx_text(&ctl_rx, 0);
	if (sscanf(hello, "hello %d", &k) != 1 || k < 0)
		die(EPROTO, "expected hello, got '%.40s'", hello);
	if (idx)
		*idx = k;
	return fd;
}

/*
 * reg: the owner maps region NAME (SIZE bytes, pattern SEED, at MISALIGN
 * bytes past a page) and registers it on channel CH (-1: the control
 * channel) with ACCESS. Return: 0 with @t filled, or the errno MR_REG
 * gave the owner.
 */
static int user_reg(struct rtok *t, const char *name, __u64 size,
		    const char *access, __u64 seed, unsigned int misalign, int ch)
{
	unsigned int id, len;
	char *rep, rname[NAME_LEN];
	__u32 tlen;
	int e;

	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "%s", name);
	rep = ctl_call(ctl_fd, "reg %s %llu %s %llu %u %d", name, size, access,
		       seed, misalign, ch);
	if (sscanf(rep, "err reg %15s %d", rname, &e) == 2)
		return e;
	if (sscanf(rep, "ok reg %15s %u %u", rname, &id, &len) != 3)
		die(EPROTO, "reg %s: the owner says: %s", name, rep);
	rep = ctl_recv(ctl_fd, &tlen);
	if (tlen != len || !len || len > RDMX_TOKEN_MAX)
		die(EPROTO, "reg %s: token of %u bytes, announced %u", name, tlen, len);
	memcpy(t->b, rep, len);
	t->len = len;
	t->size = size;
	t->mr_id = id;
	t->shadow = malloc(size);
	if (!t->shadow)
		die(ENOMEM, "out of memory");
	fill_pattern(t->shadow, size, seed);
	res.regs++;
	return 0;
}

/* user_reg() that must succeed */
static void reg_ok(struct rtok *t, const char *name, __u64 size,
		   const char *access, __u64 seed, unsigned int misalign, int ch)
{
	int e = user_reg(t, name, size, access, seed, misalign, ch);

	if (e)
		die(e, "MR_REG of region %s (%llu bytes, access %s) on the owner: %s",
		    name, size, access, strerror(e));
}

static void op_set(struct rdmx_rma_op *op, __u32 opcode, const struct rtok *t,
		   __u64 off, void *local, __u64 len)
{
	memset(op, 0, sizeof(*op));
	op->opcode = opcode;
	op->token = (uintptr_t)t->b;
	op->token_len = t->len;
	op->remote_offset = off;
	op->local_addr = (uintptr_t)local;
	op->length = len;
}

static void op_atomic(struct rdmx_rma_op *op, __u32 opcode, const struct rtok *t,
		      __u64 off, __u64 *local, __u64 cmp_add, __u64 swap)
{
	op_set(op, opcode, t, off, local, 8);
	op->compare_add = cmp_add;
	op->swap = swap;
}

/*
 * The outcome of one operation run alone (synchronously): 0, or -errno,
 * whether the call failed (none accepted) or the operation completed with
 * a status. A call that failed may leave the status unset or set it to the
 * same error; anything else is a failure.
 */
static int op_result(const char *what, int ret, int e, const struct rdmx_rma_op *op)
{
	if (ret == 1) {
		res.ops++;
		if (op->status > 0 || op->status == ST_UNSET) {
			fail(EPROTO, "%s: RMA accepted it but left status %d", what,
			     op->status);
			return -EPROTO;
		}
		return op->status;
	}
	if (ret < 0) {
		if (op->status != ST_UNSET && op->status != -e)
			fail(EPROTO, "%s: RMA failed with %s but the status says %s",
			     what, errno_name(e), errno_name(-op->status));
		return -e;
	}
	fail(EPROTO, "%s: RMA of one operation returned %d", what, ret);
	return -EPROTO;
}

/* Run one operation synchronously; Return: 0 or -errno. */
static int op_run(int fd, const char *what, struct rdmx_rma_op *op)
{
	int ret = rma(fd, op, 1, 0);

	return op_result(what, ret, errno, op);
}

/* Is @e one of the errnos after @what, a list ending in 0? */
static bool errno_in(int e, va_list ap)
{
	int a;

	while ((a = va_arg(ap, int)))
		if (a == e)
			return true;
	return false;
}

static __printf(1, 2) char *desc(const char *fmt, ...);

/* A description, kept in a small ring for the messages of one check */
static char *desc(const char *fmt, ...)
{
	static char buf[4][256];
	static unsigned int k;
	va_list ap;

	k = (k + 1) % 4;
	va_start(ap, fmt);
	vsnprintf(buf[k], sizeof(buf[k]), fmt, ap);
	va_end(ap);
	return buf[k];
}

/*
 * Run @op alone and check that it fails with one of the errnos given
 * (a list ending in 0); Return: the errno it got.
 */
static int expect_fail(int fd, const char *what, struct rdmx_rma_op *op, ...)
{
	char names[128] = "";
	va_list ap;
	int e, a;

	e = -op_run(fd, what, op);
	if (!e && opt.iwarp && (op->opcode == RDMX_RMA_WRITE ||
				op->opcode == RDMX_RMA_WRITE_IMM)) {
		/* Sent; the peer's refusal comes as a reset (see the top). */
		res.checks++;
		return 0;
	}
	va_start(ap, op);
	if (errno_in(e, ap)) {
		va_end(ap);
		res.checks++;
		return e;
	}
	va_end(ap);
	va_start(ap, op);
	while ((a = va_arg(ap, int)))
		snprintf(names + strlen(names), sizeof(names) - strlen(names),
			 "%s%s", names[0] ? " or " : "", errno_name(a));
	va_end(ap);
	check(false, "%s: expected %s, got %s", what, names, errno_name(e));
	return e;
}

/* Run @op alone; it must succeed. */
static bool expect_ok(int fd, const char *what, struct rdmx_rma_op *op)
{
	int e = -op_run(fd, what, op);

	if (!e && op->opcode != RDMX_RMA_CMP_SWAP && op->opcode != RDMX_RMA_FETCH_ADD)
		res.bytes += op->length;
	return check(!e, "%s: expected success, got %s", what, errno_name(e));
}

/* The user's copy of the owner's region after a WRITE of pattern @seed */
static void shadow_write(struct rtok *t, __u64 off, __u64 len, __u64 seed)
{
	fill_pattern(t->shadow + off, len, seed);
}

/* Does @p hold the user's copy of [off, off + len) of region @t? */
static bool check_read(const char *what, const struct rtok *t, __u64 off,
		       const __u8 *p, __u64 len)
{
	__u64 i;

	if (!memcmp(p, t->shadow + off, len))
		return check(true, "%s", what);
	for (i = 0; i < len && p[i] == t->shadow[off + i]; i++)
		;
	return check(false,
		     "%s: READ of [%llu, +%llu) of %s differs first at offset %llu: expected 0x%02x, got 0x%02x",
		     what, off, len, t->name, off + i, t->shadow[off + i], p[i]);
}

/* EP_INFO: wait until the channel and its session are connected again. */
static void wait_session(int fd, const char *after)
{
	__s64 deadline = now_ns() + 60 * NSEC;
	struct rdmx_ep_info info;

	for (;;) {
		memset(&info, 0, sizeof(info));
		info.size = sizeof(info);
		if (ioctl(fd, RDMX_IOC_EP_INFO, &info) < 0)
			die(errno, "EP_INFO after %s: %s", after, strerror(errno));
		if (info.state == RDMX_EP_CONNECTED &&
		    info.sess_state == RDMX_SESS_STATE_CONNECTED)
			return;
		if (info.state == RDMX_EP_ERROR || info.state == RDMX_EP_CLOSED ||
		    info.state == RDMX_EP_SHUTDOWN)
			die(info.error,
			    "after %s the channel is in state %u (error %s): a failed access must not end the channel",
			    after, info.state, errno_name(info.error));
		if (now_ns() > deadline)
			die(ETIMEDOUT,
			    "after %s the channel (state %u) or its session (state %u) did not recover in 60 s",
			    after, info.state, info.sess_state);
		usleep(100000);
	}
}

static void note_stale(int e)
{
	size_t n = strlen(res.stale);

	snprintf(res.stale + n, sizeof(res.stale) - n, "%s%s", n ? " " : "",
		 e ? errno_name(e) : "SENT");
}

/* Receive what is left on a channel the owner closed: the end, or a reset */
static void expect_closed(int fd, const char *what)
{
	static struct rxbufs rx;
	int n = msg_recv(fd, &rx, 1, false);

	check(n == 0 || n == -ECONNRESET,
	      "%s: RECV on the channel the owner closed: expected the end of the stream or ECONNRESET, got %d (%s)",
	      what, n, n < 0 ? errno_name(-n) : "a message");
}

/* ------------------------------------------------------------- pattern */

static __u8 *src_buf, *dst_buf;
static size_t buf_len;

static void bufs_init(size_t len)
{
	buf_len = len + 64;
	src_buf = map_anon(buf_len);
	dst_buf = map_anon(buf_len);
	if (!src_buf || !dst_buf)
		die(ENOMEM, "%zu bytes of buffers: out of memory", buf_len);
}

/* WRITE @len bytes at @off from src + @ls, owner checks; READ back into dst + @ld. */
static void write_read(struct rtok *t, __u64 off, __u64 len, unsigned int ls,
		       unsigned int ld, __u64 seed)
{
	struct rdmx_rma_op op;
	__u64 lo, hi, i;
	size_t first = 0;
	char *what;

	what = desc("WRITE of %llu bytes at offset %llu of %s from buffer+%u",
		    len, off, t->name, ls);
	fill_pattern(src_buf + ls, len, seed);
	op_set(&op, RDMX_RMA_WRITE, t, off, src_buf + ls, len);
	if (!expect_ok(ctl_fd, what, &op))
		return;
	shadow_write(t, off, len, seed);
	ctl_ok(what, ctl_call(ctl_fd, "wrote %s %llu %llu %llu", t->name, off,
			      len, seed));

	what = desc("READ of %llu bytes at offset %llu of %s into buffer+%u",
		    len, off, t->name, ld);
	memset(dst_buf, 0xa5, ld + len + 16);
	op_set(&op, RDMX_RMA_READ, t, off, dst_buf + ld, len);
	if (!expect_ok(ctl_fd, what, &op))
		return;
	if (!check(is_pattern(dst_buf + ld, len, seed, &first),
		   "%s: differs from what was written, first at byte %zu", what, first))
		return;
	for (i = 0; i < ld; i++)
		if (dst_buf[i] != 0xa5)
			break;
	check(i == ld && dst_buf[ld + len] == 0xa5 && dst_buf[ld + len + 15] == 0xa5,
	      "%s: wrote outside the local buffer", what);
	if (len > 65539)
		return;
	/* A window 9 bytes wider on each side: the neighbours are intact. */
	lo = off > 9 ? off - 9 : 0;
	hi = off + len + 9 < t->size ? off + len + 9 : t->size;
	op_set(&op, RDMX_RMA_READ, t, lo, dst_buf + 1, hi - lo);
	if (expect_ok(ctl_fd, desc("READ of the window around %s", what), &op))
		check_read(desc("the window around offset %llu", off), t, lo,
			   dst_buf + 1, hi - lo);
}

static void case_pattern(void)
{
	static const __u64 sizes[] = { 1, 7, 4096, 65536 + 3, MIB, 16 * MIB };
	struct rdmx_rma_op ops[64];
	struct rtok p, q;
	struct rtok *rg[2] = { &p, &q };
	char lines[64 * 64];
	__u64 offs[6], off, len;
	unsigned int r, s, i, k = 0, n;
	size_t at;

	bufs_init(16 * MIB + 64 * KIB);
	/*
	 * P starts 5 bytes past a page, Q on one. P is 16 MiB + 3 bytes: its
	 * one 16 MiB operation, at offset 3, is unaligned and ends where P
	 * does (on a soft device under TCG each takes a minute or more).
	 */
	reg_ok(&p, "P", 16 * MIB + 3, "rw", mix2(opt.seed, TAG_BG), 5, -1);
	reg_ok(&q, "Q", MIB + 64 * KIB + 5, "rw", mix2(opt.seed, TAG_BG + 1), 0, -1);
	for (r = 0; r < 2; r++) {
		for (s = 0; s < ARRAY_SIZE(sizes); s++) {
			len = sizes[s];
			if (len > rg[r]->size || len > opt.max_len)
				continue;
			n = 0;
			if (len < MIB) {
				offs[n++] = 0;
				offs[n++] = 1;
				offs[n++] = 4093;
				offs[n++] = 65536 + 7;
				offs[n++] = rg[r]->size - len - 1;
			} else {
				offs[n++] = 3;
			}
			if (rg[r]->size - len != offs[n - 1])
				offs[n++] = rg[r]->size - len;
			for (i = 0; i < n; i++) {
				if (offs[i] + len > rg[r]->size)
					continue;
				write_read(rg[r], offs[i], len, (k * 3 + 1) % 8,
					   (k * 5 + 2) % 8, mix2(opt.seed ^ TAG_DATA, k));
				k++;
			}
		}
	}

	/* A batch of 64 WRITEs of 1 B to 4 KiB at scattered places of Q, then READs */
	at = 0;
	for (i = 0; i < 64; i++) {
		off = i * 16384 + (i * 13) % 64;
		len = 1 + mix2(opt.seed ^ TAG_LEN, i) % 4096;
		fill_pattern(src_buf + i * 8192 + i % 7, len, mix2(opt.seed ^ TAG_DATA, 1000 + i));
		op_set(&ops[i], RDMX_RMA_WRITE, &q, off, src_buf + i * 8192 + i % 7, len);
		at += snprintf(lines + at, sizeof(lines) - at, "wrote Q %llu %llu %llu\n",
			       off, len, mix2(opt.seed ^ TAG_DATA, 1000 + i));
	}
	n = rma(ctl_fd, ops, 64, 0);
	if (check(n == 64, "a batch of 64 WRITEs: RMA returned %d (%s)", (int)n,
		  (int)n < 0 ? errno_name(errno) : "-")) {
		for (i = 0; i < 64; i++) {
			check(!ops[i].status, "WRITE %u of the batch: status %s", i,
			      errno_name(-ops[i].status));
			shadow_write(&q, ops[i].remote_offset, ops[i].length,
				     mix2(opt.seed ^ TAG_DATA, 1000 + i));
			res.ops++;
			res.bytes += ops[i].length;
		}
		ctl_ok("a batch of 64 WRITEs", ctl_call(ctl_fd, "%s", lines));
	}
	for (i = 0; i < 64; i++)
		op_set(&ops[i], RDMX_RMA_READ, &q, ops[i].remote_offset,
		       dst_buf + i * 8192 + i % 5, ops[i].length);
	n = rma(ctl_fd, ops, 64, 0);
	if (check(n == 64, "a batch of 64 READs: RMA returned %d (%s)", (int)n,
		  (int)n < 0 ? errno_name(errno) : "-")) {
		for (i = 0; i < 64; i++) {
			check(!ops[i].status, "READ %u of the batch: status %s", i,
			      errno_name(-ops[i].status));
			check_read(desc("READ %u of the batch", i), &q, ops[i].remote_offset,
				   dst_buf + i * 8192 + i % 5, ops[i].length);
			res.ops++;
			res.bytes += ops[i].length;
		}
	}
	/* All of Q at once */
	op_set(&ops[0], RDMX_RMA_READ, &q, 0, dst_buf + 3, q.size);
	if (expect_ok(ctl_fd, "READ of all of Q", &ops[0]))
		check_read("READ of all of Q", &q, 0, dst_buf + 3, q.size);
	ctl_ok("check P", ctl_call(ctl_fd, "check P"));
	ctl_ok("check Q", ctl_call(ctl_fd, "check Q"));
}

/* ------------------------------------------------------------------ imm */

#define IMM_SLOT	(5 * 4096)

/* Collect @n events of operations whose user_data are @ud .. @ud + n - 1 */
static void collect(int fd, __u64 ud, unsigned int n, __u32 opcode, const char *what)
{
	struct rdmx_event ev[16];
	unsigned int got = 0, i;
	__u64 seen = 0;
	int ret;

	while (got < n) {
		ret = get_events(fd, ev, n - got < 16 ? n - got : 16, 0);
		if (ret <= 0)
			die(ret < 0 ? errno : EPROTO, "%s: EP_EVENTS after %u of %u: %s",
			    what, got, n, ret < 0 ? strerror(errno) : "returned 0");
		for (i = 0; i < (unsigned int)ret; i++) {
			res.events++;
			if (!check(ev[i].type == RDMX_EVENT_RMA_DONE &&
				   ev[i].user_data >= ud && ev[i].user_data < ud + n &&
				   !(seen & (1ULL << (ev[i].user_data - ud))),
				   "%s: event type %u user_data %llu (expected %llu..%llu, each once)",
				   what, ev[i].type, ev[i].user_data, ud, ud + n - 1))
				continue;
			seen |= 1ULL << (ev[i].user_data - ud);
			check(!ev[i].status && ev[i].opcode == opcode,
			      "%s: operation %llu completed with %s, opcode %u",
			      what, ev[i].user_data - ud, errno_name(-ev[i].status),
			      ev[i].opcode);
		}
		got += ret;
	}
}

static void case_imm(void)
{
	__u64 n = opt.have_count ? opt.count : 200, v, off[MAX_RANGES], len[MAX_RANGES];
	__u64 seed[MAX_RANGES], ilen, ioff, iseed, ud;
	struct rdmx_rma_op ops[MAX_RANGES];
	char ranges[MAX_RANGES * 64];
	unsigned int k, nk, mode;
	struct rtok t;
	__u32 val;
	size_t at;
	int ret;

	bufs_init(n * IMM_SLOT + 4096);
	reg_ok(&t, "I", n * IMM_SLOT + 4096, "rw", mix2(opt.seed, TAG_BG), 0, -1);
	for (v = 0; v < n; v++) {
		nk = 1 + v % 4;
		at = 0;
		for (k = 0; k < nk; k++) {
			off[k] = v * IMM_SLOT + k * 4096 + mix2(v, k) % 64;
			len[k] = 1 + mix2(opt.seed ^ TAG_LEN, v * 8 + k) % (4096 - 64);
			seed[k] = mix2(opt.seed ^ TAG_DATA, v * 8 + k);
			fill_pattern(src_buf + off[k], len[k], seed[k]);
			op_set(&ops[k], RDMX_RMA_WRITE, &t, off[k], src_buf + off[k], len[k]);
			ops[k].user_data = v * 8 + k + 1;
			at += snprintf(ranges + at, sizeof(ranges) - at, " %llu %llu %llu",
				       off[k], len[k], seed[k]);
		}
		ilen = v % 2 ? 1 + mix2(opt.seed ^ TAG_LEN, v * 8 + 7) % 1024 : 0;
		ioff = v * IMM_SLOT + 4 * 4096 + v % 64;
		iseed = mix2(opt.seed ^ TAG_DATA, v * 8 + 7);
		if (ilen)
			at += snprintf(ranges + at, sizeof(ranges) - at, " %llu %llu %llu",
				       ioff, ilen, iseed);
		val = (__u32)mix2(opt.seed ^ TAG_IMM, v);
		msg_sendf(ctl_fd, "imm I %llu %u %u%s", v, val, nk + !!ilen, ranges);

		/* The round's WRITEs complete: one by one, in a batch, or async */
		mode = v % 3;
		if (mode == 0) {
			for (k = 0; k < nk; k++)
				expect_ok(ctl_fd, desc("round %llu: WRITE %u", v, k), &ops[k]);
		} else if (mode == 1) {
			ret = rma(ctl_fd, ops, nk, 0);
			if (check(ret == (int)nk,
				  "round %llu: batch of %u WRITEs: RMA returned %d (%s)",
				  v, nk, ret, ret < 0 ? errno_name(errno) : "-"))
				for (k = 0; k < nk; k++) {
					check(!ops[k].status, "round %llu: WRITE %u: status %s",
					      v, k, errno_name(-ops[k].status));
					res.ops++;
				}
		} else {
			ret = rma(ctl_fd, ops, nk, RDMX_RMA_ASYNC);
			if (check(ret == (int)nk,
				  "round %llu: async batch of %u WRITEs: RMA returned %d (%s)",
				  v, nk, ret, ret < 0 ? errno_name(errno) : "-")) {
				res.ops += nk;
				collect(ctl_fd, v * 8 + 1, nk, RDMX_RMA_WRITE,
					desc("round %llu", v));
			}
		}
		for (k = 0; k < nk; k++)
			shadow_write(&t, off[k], len[k], seed[k]);
		msg_sendf(ctl_fd, "note %llu pre", v);

		/* The WRITE_IMM, with data or without, sync or async */
		fill_pattern(src_buf + ioff, ilen, iseed);
		op_set(&ops[0], RDMX_RMA_WRITE_IMM, &t, ioff, src_buf + ioff, ilen);
		ops[0].imm = val;
		if (v % 4 == 3) {
			ud = v * 8 + 7 + (1ULL << 40);
			ops[0].user_data = ud;
			ret = rma(ctl_fd, ops, 1, RDMX_RMA_ASYNC);
			if (check(ret == 1, "round %llu: async WRITE_IMM: RMA returned %d (%s)",
				  v, ret, ret < 0 ? errno_name(errno) : "-")) {
				res.ops++;
				collect(ctl_fd, ud, 1, RDMX_RMA_WRITE_IMM,
					desc("round %llu: WRITE_IMM", v));
			}
		} else {
			expect_ok(ctl_fd, desc("round %llu: WRITE_IMM of %llu bytes", v, ilen),
				  &ops[0]);
		}
		if (ilen)
			shadow_write(&t, ioff, ilen, iseed);
		msg_sendf(ctl_fd, "note %llu post", v);
		res.imms++;
	}
	ctl_ok("the immediates", ctl_call(ctl_fd, "immstat %llu", n));
	ctl_ok("check I", ctl_call(ctl_fd, "check I"));
	op_set(&ops[0], RDMX_RMA_READ, &t, 0, dst_buf, t.size);
	if (expect_ok(ctl_fd, "READ of all of I", &ops[0]))
		check_read("READ of all of I", &t, 0, dst_buf, t.size);
}

/* --------------------------------------------------------------- atomic */

#define HAMMER_OFF	64

/* The old values one side's increments saw, for the owner */
static __u64 *olds;
static __u64 nr_olds;

static void case_atomic(void)
{
	__u64 n = opt.have_count ? opt.count : 2000, m = n / 4, i, guess, last_max = 0;
	__u64 w0 = 128 * opt.slot, w1 = w0 + 8, loc[16], old, v, got_total;
	struct rdmx_rma_op ops[16];
	struct rdmx_event ev[16];
	unsigned int b, j, got;
	struct rtok w, wn, wa;
	__u64 batch_min, batch_max;
	int ret, e;
	char *rep;

	olds = calloc(n + m, sizeof(*olds));
	if (!olds)
		die(ENOMEM, "out of memory");
	bufs_init(64 * KIB);
	e = user_reg(&w, "W", 4096, "rwa", 0, 0, -1);
	if (e)
		die(e,
		    "MR_REG of 4 KiB with RDMX_ACCESS_REMOTE_ATOMIC on a device with atomics: %s",
		    strerror(e));
	ctl_ok("sync before hammering", ctl_call(ctl_fd, "sync hammer %u", opt.peers));

	/* n fetch-and-adds of 1: one by one, in batches of 16, async batches */
	for (i = 0; i < n; i += b) {
		b = (i / 16) % 3 == 0 ? 1 : 16;
		if (b > n - i)
			b = n - i;
		for (j = 0; j < b; j++) {
			op_atomic(&ops[j], RDMX_RMA_FETCH_ADD, &w, HAMMER_OFF, &loc[j], 1, 0);
			ops[j].user_data = i + j;
			loc[j] = ~0ULL;
		}
		if ((i / 16) % 3 == 2) {
			ret = rma(ctl_fd, ops, b, RDMX_RMA_ASYNC);
			if (!check(ret == (int)b,
				   "async batch of %u FETCH_ADDs at %llu: RMA returned %d (%s)",
				   b, i, ret, ret < 0 ? errno_name(errno) : "-"))
				die(EPROTO, "cannot go on");
			for (got = 0; got < b; got += ret) {
				ret = get_events(ctl_fd, ev, b - got, 0);
				if (ret <= 0)
					die(errno, "EP_EVENTS: %s", strerror(errno));
				for (j = 0; j < (unsigned int)ret; j++) {
					__u64 k = ev[j].user_data - i;

					res.events++;
					if (!check(k < b && !ev[j].status &&
						   ev[j].opcode == RDMX_RMA_FETCH_ADD,
						   "FETCH_ADD event: user_data %llu status %s opcode %u",
						   ev[j].user_data, errno_name(-ev[j].status),
						   ev[j].opcode))
						continue;
					check(ev[j].value == loc[k],
					      "FETCH_ADD event value %llu, its local buffer %llu",
					      ev[j].value, loc[k]);
				}
			}
		} else {
			ret = rma(ctl_fd, ops, b, 0);
			if (!check(ret == (int)b,
				   "batch of %u FETCH_ADDs at %llu: RMA returned %d (%s)",
				   b, i, ret, ret < 0 ? errno_name(errno) : "-"))
				die(EPROTO, "cannot go on");
			for (j = 0; j < b; j++)
				check(!ops[j].status, "FETCH_ADD: status %s",
				      errno_name(-ops[j].status));
		}
		batch_min = ~0ULL;
		batch_max = 0;
		for (j = 0; j < b; j++) {
			olds[nr_olds++] = loc[j];
			batch_min = loc[j] < batch_min ? loc[j] : batch_min;
			batch_max = loc[j] > batch_max ? loc[j] : batch_max;
		}
		check(!i || batch_min > last_max,
		      "FETCH_ADDs at %llu saw %llu, not above the %llu an earlier batch saw",
		      i, batch_min, last_max);
		last_max = batch_max;
		res.ops += b;
	}

	/* m compare-and-swap increments, racing the other side */
	guess = last_max + 1;
	for (i = 0; i < m; ) {
		op_atomic(&ops[0], RDMX_RMA_CMP_SWAP, &w, HAMMER_OFF, &old, guess, guess + 1);
		if (!expect_ok(ctl_fd, "CMP_SWAP increment", &ops[0]))
			die(EPROTO, "cannot go on");
		if (old == guess) {
			olds[nr_olds++] = guess;
			guess++;
			i++;
			continue;
		}
		res.cas_failures++;
		if (!check(old > guess, "CMP_SWAP(%llu) saw %llu: the word went down",
			   guess, old))
			die(EPROTO, "cannot go on");
		guess = old;
	}
	res.atomic_mine = nr_olds;

	/* The owner gathers every side's old values and checks the word. */
	msg_sendf(ctl_fd, "olds W %u %llu", HAMMER_OFF, nr_olds);
	e = msg_send(ctl_fd, olds, nr_olds * 8);
	if (e)
		die(-e, "SEND of the old values: %s", strerror(-e));
	rep = ctl_call(ctl_fd, "atomicwait W %u %u 0", HAMMER_OFF, opt.peers);
	if (ctl_ok("the word hammered from every side", rep) &&
	    sscanf(rep, "ok atomic %llu", &got_total) == 1)
		res.atomic_total = got_total;
	check(res.atomic_total == opt.peers * (n + m) || opt.peers == 1,
	      "the word went up %llu times, expected %u users x %llu", res.atomic_total,
	      opt.peers, n + m);

	/* 64 bits: a carry out of the low half, and subtraction by wrapping */
	op_atomic(&ops[0], RDMX_RMA_FETCH_ADD, &w, w0, &old, 0xffffffffULL, 0);
	if (expect_ok(ctl_fd, "FETCH_ADD of 2^32-1 to a fresh word", &ops[0]))
		check(old == 0, "a fresh word is %llu, not 0", old);
	op_atomic(&ops[0], RDMX_RMA_FETCH_ADD, &w, w0, &old, 1, 0);
	if (expect_ok(ctl_fd, "FETCH_ADD of 1 to 2^32-1", &ops[0]))
		check(old == 0xffffffffULL, "old value %llu, expected 2^32-1", old);
	op_atomic(&ops[0], RDMX_RMA_FETCH_ADD, &w, w0, &old, ~0ULL, 0);
	if (expect_ok(ctl_fd, "FETCH_ADD of 2^64-1 to 2^32", &ops[0]))
		check(old == 0x100000000ULL, "old value 0x%llx, expected 2^32 (the carry)",
		      old);
	op_atomic(&ops[0], RDMX_RMA_CMP_SWAP, &w, w0, &old, 5, 9);
	if (expect_ok(ctl_fd, "CMP_SWAP that does not match", &ops[0]))
		check(old == 0xffffffffULL, "old value 0x%llx, expected 2^32-1", old);
	op_atomic(&ops[0], RDMX_RMA_CMP_SWAP, &w, w0, &old, 0xffffffffULL,
		  0x8000000000000001ULL);
	if (expect_ok(ctl_fd, "CMP_SWAP that matches", &ops[0]))
		check(old == 0xffffffffULL, "old value 0x%llx, expected 2^32-1", old);
	ctl_ok("the word after CMP_SWAP", ctl_call(ctl_fd, "expect W %llu %llu", w0,
						   0x8000000000000001ULL));

	/* Byte order: the owner stores a word, the atomic sees it in host order. */
	v = 0x0123456789abcdefULL;
	ctl_ok("set", ctl_call(ctl_fd, "set W %llu %llu", w1, v));
	op_atomic(&ops[0], RDMX_RMA_FETCH_ADD, &w, w1, &loc[0], 0x10, 0);
	if (expect_ok(ctl_fd, "FETCH_ADD of 16 to a word the owner set", &ops[0]))
		check(!memcmp(&loc[0], &v, 8),
		      "old value 0x%016llx, the owner stored 0x%016llx (byte order?)",
		      loc[0], v);
	ctl_ok("the word after FETCH_ADD", ctl_call(ctl_fd, "expect W %llu %llu", w1, v + 0x10));

	/* The last word of the region, and bad operands */
	op_atomic(&ops[0], RDMX_RMA_FETCH_ADD, &w, 4096 - 8, &old, 0, 0);
	expect_ok(ctl_fd, "FETCH_ADD of 0 to the last word", &ops[0]);
	op_atomic(&ops[0], RDMX_RMA_FETCH_ADD, &w, 4096, &old, 1, 0);
	expect_fail(ctl_fd, "FETCH_ADD just past the region", &ops[0], ERANGE, 0);
	op_atomic(&ops[0], RDMX_RMA_CMP_SWAP, &w, ~7ULL, &old, 1, 2);
	expect_fail(ctl_fd, "CMP_SWAP at offset 2^64-8", &ops[0], ERANGE, 0);
	op_atomic(&ops[0], RDMX_RMA_FETCH_ADD, &w, w0 + 4, &old, 1, 0);
	expect_fail(ctl_fd, "FETCH_ADD at a misaligned offset", &ops[0], EINVAL, 0);
	op_atomic(&ops[0], RDMX_RMA_CMP_SWAP, &w, w0 + 1, &old, 1, 2);
	expect_fail(ctl_fd, "CMP_SWAP at a misaligned offset", &ops[0], EINVAL, 0);
	op_atomic(&ops[0], RDMX_RMA_FETCH_ADD, &w, w0, &old, 1, 0);
	ops[0].length = 4;
	expect_fail(ctl_fd, "FETCH_ADD of length 4", &ops[0], EINVAL, 0);
	ops[0].length = 16;
	expect_fail(ctl_fd, "FETCH_ADD of length 16", &ops[0], EINVAL, 0);
	op_atomic(&ops[0], RDMX_RMA_FETCH_ADD, &w, w0, &old, 1, 7);
	expect_fail(ctl_fd, "FETCH_ADD with a swap value", &ops[0], EINVAL, 0);
	ctl_ok("the word after bad operands", ctl_call(ctl_fd, "expect W %llu %llu", w0,
						       0x8000000000000001ULL));

	/* Rights: no atomic right; the atomic right alone */
	reg_ok(&wn, "WN", 4096, "rw", mix2(opt.seed, TAG_BG), 0, -1);
	op_atomic(&ops[0], RDMX_RMA_FETCH_ADD, &wn, 0, &old, 1, 0);
	expect_fail(ctl_fd, "FETCH_ADD on a region without the atomic right", &ops[0], EACCES, 0);
	op_atomic(&ops[0], RDMX_RMA_CMP_SWAP, &wn, 0, &old, 1, 2);
	expect_fail(ctl_fd, "CMP_SWAP on a region without the atomic right", &ops[0], EACCES, 0);
	ctl_ok("check WN", ctl_call(ctl_fd, "check WN"));
	reg_ok(&wa, "WA", 4096, "a", 0, 0, -1);
	op_atomic(&ops[0], RDMX_RMA_FETCH_ADD, &wa, 8 * opt.slot, &old, 1, 0);
	if (expect_ok(ctl_fd, "FETCH_ADD on a region with the atomic right alone", &ops[0]))
		check(old == 0, "old value %llu, expected 0", old);
	op_set(&ops[0], RDMX_RMA_READ, &wa, 0, dst_buf, 8);
	expect_fail(ctl_fd, "READ of a region with the atomic right alone", &ops[0], EACCES, 0);
	ctl_ok("the atomic-only word", ctl_call(ctl_fd, "expect WA %u 1", 8 * opt.slot));
}

static void expect_idle(int fd, const char *when);

/* A device without atomics: registering for them and using them fail. */
static void case_atomic_none(void)
{
	struct rdmx_rma_op ops[2];
	struct rtok wx, wn;
	__u64 old[2];
	int e, ret;

	e = user_reg(&wx, "WX", 4096, "rwa", 0, 0, -1);
	if (check(e == EOPNOTSUPP,
		  "MR_REG with RDMX_ACCESS_REMOTE_ATOMIC on a device without atomics: expected EOPNOTSUPP, got %s",
		  errno_name(e)))
		res.eopnotsupp++;
	reg_ok(&wn, "WN", 4096, "rw", mix2(opt.seed, TAG_BG), 0, -1);
	op_atomic(&ops[0], RDMX_RMA_FETCH_ADD, &wn, 0, &old[0], 1, 0);
	if (expect_fail(ctl_fd, "FETCH_ADD on a device without atomics", &ops[0],
			EOPNOTSUPP, 0) == EOPNOTSUPP)
		res.eopnotsupp++;
	op_atomic(&ops[0], RDMX_RMA_CMP_SWAP, &wn, 8, &old[0], 0, 1);
	if (expect_fail(ctl_fd, "CMP_SWAP on a device without atomics", &ops[0],
			EOPNOTSUPP, 0) == EOPNOTSUPP)
		res.eopnotsupp++;
	op_atomic(&ops[0], RDMX_RMA_FETCH_ADD, &wn, 16, &old[0], 1, 0);
	op_atomic(&ops[1], RDMX_RMA_CMP_SWAP, &wn, 24, &old[1], 0, 1);
	ret = rma(ctl_fd, ops, 2, RDMX_RMA_ASYNC);
	e = errno;
	if (check(ret < 0 && e == EOPNOTSUPP,
		  "async batch of atomics on a device without atomics: RMA returned %d (%s), expected EOPNOTSUPP",
		  ret, ret < 0 ? errno_name(e) : "-"))
		res.eopnotsupp++;
	expect_idle(ctl_fd, "after the refused async atomics");
	ctl_ok("check WN: untouched", ctl_call(ctl_fd, "check WN"));
	res.skipped = "the device has no atomics: MR_REG and RMA answer EOPNOTSUPP (checked)";
}

/* --------------------------------------------------------------- errors */

static struct rdmx_rma_op *op1(__u32 opcode, const struct rtok *t, __u64 off, __u64 len)
{
	static struct rdmx_rma_op op;

	op_set(&op, opcode, t, off, opcode == RDMX_RMA_READ ? dst_buf : src_buf, len);
	return &op;
}

/*
 * On iWARP, after a WRITE that completed as sent: a READ on the same
 * connection completes only after the peer processed the WRITE (and, if it
 * refused it, reset the connection), so the owner's check that follows
 * sees what the WRITE did. Its own outcome does not matter.
 */
static void iwarp_fence(int fd, const struct rtok *t, int e)
{
	struct rdmx_rma_op op;

	if (!opt.iwarp || e)
		return;
	op_set(&op, RDMX_RMA_READ, t, 0, dst_buf, 1);
	op_run(fd, "a READ behind a WRITE sent on iWARP", &op);
	wait_session(fd, "a READ behind a WRITE sent on iWARP");
}

static void case_errors(void)
{
	const __u64 se = 64 * KIB;
	struct rtok e, r, wo, d, b1, f, bad;
	struct rdmx_rma_op *op, ops[4];
	int fd2, fdb, idx, e1, ret, i;
	__u64 old;
	char *what;

	bufs_init(256 * KIB);
	fill_pattern(src_buf, 256 * KIB, mix2(opt.seed, 7));
	reg_ok(&e, "E", se, "rw", mix2(opt.seed, TAG_BG), 0, -1);
	reg_ok(&r, "R", 8192, "r", mix2(opt.seed, TAG_BG + 1), 0, -1);
	reg_ok(&wo, "Wo", 8192, "w", mix2(opt.seed, TAG_BG + 2), 0, -1);

	/* Out of bounds, by a byte and by wrapping around 2^64 */
	expect_fail(ctl_fd, "WRITE 1 byte past the end", op1(RDMX_RMA_WRITE, &e, se - 100, 101),
		    ERANGE, 0);
	expect_fail(ctl_fd, "READ 1 byte past the end", op1(RDMX_RMA_READ, &e, se - 100, 101),
		    ERANGE, 0);
	expect_fail(ctl_fd, "WRITE at the end", op1(RDMX_RMA_WRITE, &e, se, 1), ERANGE, 0);
	expect_fail(ctl_fd, "READ at the end", op1(RDMX_RMA_READ, &e, se, 1), ERANGE, 0);
	expect_fail(ctl_fd, "WRITE at offset 2^64-1", op1(RDMX_RMA_WRITE, &e, ~0ULL, 1),
		    ERANGE, 0);
	expect_fail(ctl_fd, "READ of 16 bytes at 2^64-8 (wraps to 8)",
		    op1(RDMX_RMA_READ, &e, ~7ULL, 16), ERANGE, 0);
	expect_fail(ctl_fd, "READ of 4 KiB at 2^64-4 KiB (wraps to 0)",
		    op1(RDMX_RMA_READ, &e, -4096ULL, 4096), ERANGE, 0);
	expect_fail(ctl_fd, "WRITE at offset 2^63", op1(RDMX_RMA_WRITE, &e, 1ULL << 63, 4096),
		    ERANGE, 0);
	op = op1(RDMX_RMA_WRITE_IMM, &e, se - 1, 2);
	op->imm = 0xdead;
	expect_fail(ctl_fd, "WRITE_IMM 1 byte past the end (no immediate may arrive)", op,
		    ERANGE, 0);
	if (opt.atomics > 0) {
		/* E has no atomic right: bounds come first, or the right; either refuses. */
		op_atomic(&ops[0], RDMX_RMA_FETCH_ADD, &e, se, &old, 1, 0);
		expect_fail(ctl_fd, "FETCH_ADD past the end", &ops[0], ERANGE, EACCES, 0);
	}

	/* Lengths, opcodes and fields */
	expect_fail(ctl_fd, "READ of 0 bytes", op1(RDMX_RMA_READ, &e, 0, 0), EINVAL, 0);
	expect_fail(ctl_fd, "WRITE of 0 bytes", op1(RDMX_RMA_WRITE, &e, 0, 0), EINVAL, 0);
	expect_fail(ctl_fd, "READ of RDMX_RMA_LEN_MAX + 1 bytes",
		    op1(RDMX_RMA_READ, &e, 0, RDMX_RMA_LEN_MAX + 1), EINVAL, ERANGE, 0);
	expect_fail(ctl_fd, "opcode 0", op1(0, &e, 0, 16), EINVAL, 0);
	expect_fail(ctl_fd, "opcode 6", op1(6, &e, 0, 16), EINVAL, 0);
	expect_fail(ctl_fd, "opcode 0xffffffff", op1(0xffffffffu, &e, 0, 16), EINVAL, 0);
	op = op1(RDMX_RMA_WRITE, &e, 0, 16);
	op->flags = 1;
	expect_fail(ctl_fd, "an operation flag", op, EINVAL, 0);
	op = op1(RDMX_RMA_WRITE, &e, 0, 16);
	op->reserved = 1;
	expect_fail(ctl_fd, "the reserved field set", op, EINVAL, 0);
	op = op1(RDMX_RMA_WRITE, &e, 0, 16);
	op->imm = 5;
	expect_fail(ctl_fd, "an immediate on a WRITE", op, EINVAL, 0);
	op = op1(RDMX_RMA_READ, &e, 0, 16);
	op->swap = 3;
	expect_fail(ctl_fd, "a swap value on a READ", op, EINVAL, 0);

	/* Rights, checked from the token */
	expect_fail(ctl_fd, "WRITE to a read-only region", op1(RDMX_RMA_WRITE, &r, 0, 16),
		    EACCES, 0);
	op = op1(RDMX_RMA_WRITE_IMM, &r, 0, 4);
	op->imm = 1;
	expect_fail(ctl_fd, "WRITE_IMM to a read-only region", op, EACCES, 0);
	expect_fail(ctl_fd, "READ of a write-only region", op1(RDMX_RMA_READ, &wo, 0, 16),
		    EACCES, 0);
	if (expect_ok(ctl_fd, "READ of a read-only region", op1(RDMX_RMA_READ, &r, 100, 4000)))
		check_read("READ of a read-only region", &r, 100, dst_buf, 4000);
	fill_pattern(src_buf, 3000, mix2(opt.seed, 8));
	if (expect_ok(ctl_fd, "WRITE to a write-only region", op1(RDMX_RMA_WRITE, &wo, 5, 3000))) {
		shadow_write(&wo, 5, 3000, mix2(opt.seed, 8));
		ctl_ok("WRITE to a write-only region",
		       ctl_call(ctl_fd, "wrote Wo 5 3000 %llu", mix2(opt.seed, 8)));
	}
	op_atomic(&ops[0], RDMX_RMA_FETCH_ADD, &e, 0, &old, 1, 0);
	if (opt.atomics > 0)
		expect_fail(ctl_fd, "FETCH_ADD on a region without the atomic right", &ops[0],
			    EACCES, 0);
	else
		expect_fail(ctl_fd, "FETCH_ADD on a device without atomics", &ops[0],
			    EOPNOTSUPP, 0);

	/* Corrupt tokens: each byte flipped, in two ways; cut short; too long */
	for (i = 0; i < (int)e.len; i++) {
		bad = e;
		bad.b[i] ^= 0xff;
		op = op1(RDMX_RMA_WRITE, &bad, 0, 16);
		expect_fail(ctl_fd, desc("WRITE with token byte %d of %u inverted", i, e.len), op,
			    EINVAL, 0);
		bad.b[i] = e.b[i] ^ 0x01;
		op = op1(RDMX_RMA_READ, &bad, 0, 16);
		expect_fail(ctl_fd,
			    desc("READ with bit 0 of token byte %d of %u flipped", i, e.len),
			    op, EINVAL, 0);
	}
	{
		const __u32 lens[] = { e.len - 1, e.len / 2, 1, 0, e.len + 1 };

		bad = e;
		bad.b[e.len] = 0;
		for (i = 0; i < (int)ARRAY_SIZE(lens); i++) {
			bad.len = lens[i];
			expect_fail(ctl_fd, desc("WRITE with the token's length %u instead of %u",
						 lens[i], e.len),
				    op1(RDMX_RMA_WRITE, &bad, 0, 16), EINVAL, 0);
		}
	}
	{
		static __u8 big[RDMX_TOKEN_MAX + 8];

		memcpy(big, e.b, e.len);
		op = op1(RDMX_RMA_WRITE, &e, 0, 16);
		op->token = (uintptr_t)big;
		op->token_len = RDMX_TOKEN_MAX + 1;
		expect_fail(ctl_fd, "WRITE with a token length of RDMX_TOKEN_MAX + 1", op,
			    EINVAL, 0);
	}

	/* A batch whose third operation fails its checks: two run, the fourth not */
	for (i = 0; i < 4; i++)
		op_set(&ops[i], RDMX_RMA_WRITE, &e, 1000 * (i + 1), src_buf + 4096 * i, 100);
	ops[2].remote_offset = se - 10;
	ops[2].length = 11;
	fill_pattern(src_buf, 4096, mix2(opt.seed, 20));
	fill_pattern(src_buf + 4096, 4096, mix2(opt.seed, 21));
	ret = rma(ctl_fd, ops, 4, 0);
	if (check(ret == 2,
		  "a batch failing at its third operation: RMA returned %d (%s), expected 2",
		  ret, ret < 0 ? errno_name(errno) : "-")) {
		check(!ops[0].status && !ops[1].status && ops[2].status == -ERANGE,
		      "the batch's statuses: %s, %s, %s; expected 0, 0, ERANGE",
		      errno_name(-ops[0].status), errno_name(-ops[1].status),
		      errno_name(-ops[2].status));
		res.ops += 2;
		/*
		 * Only then are the two writes known: after any other outcome
		 * the owner's "check E" below tells what landed, instead of
		 * every later check of E failing on a wrong shadow.
		 */
		shadow_write(&e, 1000, 100, mix2(opt.seed, 20));
		shadow_write(&e, 2000, 100, mix2(opt.seed, 21));
		ctl_ok("the batch that failed at its third operation: two ran, the fourth not",
		       ctl_call(ctl_fd, "wrote E 1000 100 %llu\nwrote E 2000 100 %llu",
				mix2(opt.seed, 20), mix2(opt.seed, 21)));
	}
	ctl_ok("check E: no refused operation wrote", ctl_call(ctl_fd, "check E"));
	ctl_ok("check R", ctl_call(ctl_fd, "check R"));

	/* A token of another session (the owner's second port) */
	if (opt.port2) {
		ctl_ok("accept on the second port", ctl_call(ctl_fd, "accept 2"));
		fd2 = user_connect(opt.port2, &idx);
		e1 = expect_fail(fd2, "WRITE with a token of another session",
				 op1(RDMX_RMA_WRITE, &e, 0, 16), EINVAL, EACCES, EIO,
				 ECONNRESET, 0);
		note_stale(e1);
		iwarp_fence(fd2, &e, e1);
		e1 = expect_fail(fd2, "READ with a token of another session",
				 op1(RDMX_RMA_READ, &e, 0, 16), EINVAL, EACCES, EIO, ECONNRESET, 0);
		note_stale(e1);
		ctl_ok("check E after another session's tries", ctl_call(ctl_fd, "check E"));
		ioctl(fd2, RDMX_IOC_EP_SHUTDOWN, 0);
		close(fd2);
	}

	/* Stale: deregistered */
	reg_ok(&d, "D", 16 * KIB, "rw", mix2(opt.seed, TAG_BG + 3), 0, -1);
	fill_pattern(src_buf, 100, mix2(opt.seed, 30));
	if (expect_ok(ctl_fd, "WRITE before DEREG", op1(RDMX_RMA_WRITE, &d, 0, 100))) {
		shadow_write(&d, 0, 100, mix2(opt.seed, 30));
		ctl_ok("WRITE before DEREG", ctl_call(ctl_fd, "wrote D 0 100 %llu",
						      mix2(opt.seed, 30)));
	}
	ctl_ok("DEREG", ctl_call(ctl_fd, "dereg D -1 0"));
	fill_pattern(src_buf, 100, mix2(opt.seed, 31));
	e1 = expect_fail(ctl_fd, "WRITE with a deregistered region's token",
			 op1(RDMX_RMA_WRITE, &d, 1000, 100), EACCES, EIO, ECONNRESET, 0);
	note_stale(e1);
	iwarp_fence(ctl_fd, &e, e1);
	wait_session(ctl_fd, "a WRITE with a stale token");
	note_stale(expect_fail(ctl_fd, "READ with a deregistered region's token",
			       op1(RDMX_RMA_READ, &d, 0, 100), EACCES, EIO, ECONNRESET, 0));
	wait_session(ctl_fd, "a READ with a stale token");
	ctl_ok("check D: the stale WRITE did not land", ctl_call(ctl_fd, "check D"));

	/* Stale: its endpoint closed. A token is good on its session, any channel. */
	ctl_ok("accept", ctl_call(ctl_fd, "accept 1"));
	fdb = user_connect(opt.port, &idx);
	reg_ok(&b1, "B1", 16 * KIB, "rw", mix2(opt.seed, TAG_BG + 4), 0, idx);
	fill_pattern(src_buf, 200, mix2(opt.seed, 40));
	what = "WRITE through channel A with a token registered on channel B (one session)";
	if (expect_ok(ctl_fd, what, op1(RDMX_RMA_WRITE, &b1, 50, 200))) {
		shadow_write(&b1, 50, 200, mix2(opt.seed, 40));
		ctl_ok("WRITE with channel B's token", ctl_call(ctl_fd, "wrote B1 50 200 %llu",
								mix2(opt.seed, 40)));
	}
	ctl_ok("the owner closes channel B", ctl_call(ctl_fd, "close %d", idx));
	fill_pattern(src_buf, 200, mix2(opt.seed, 41));
	e1 = expect_fail(ctl_fd, "WRITE with the token of a closed endpoint's region",
			 op1(RDMX_RMA_WRITE, &b1, 50, 200), EACCES, EIO, ECONNRESET, 0);
	note_stale(e1);
	iwarp_fence(ctl_fd, &e, e1);
	wait_session(ctl_fd, "a WRITE with the token of a closed endpoint");
	ctl_ok("check B1: the stale WRITE did not land", ctl_call(ctl_fd, "check B1"));
	expect_closed(fdb, "channel B");
	close(fdb);

	/* The owner is unharmed: a fresh token works, nothing else changed. */
	reg_ok(&f, "F", 64 * KIB, "rw", mix2(opt.seed, TAG_BG + 5), 0, -1);
	what = "WRITE with a fresh token after the failures";
	fill_pattern(src_buf, 4096, mix2(opt.seed, 50));
	if (expect_ok(ctl_fd, what, op1(RDMX_RMA_WRITE, &f, 123, 4096))) {
		shadow_write(&f, 123, 4096, mix2(opt.seed, 50));
		ctl_ok(what, ctl_call(ctl_fd, "wrote F 123 4096 %llu", mix2(opt.seed, 50)));
	}
	if (expect_ok(ctl_fd, "READ with a fresh token after the failures",
		      op1(RDMX_RMA_READ, &f, 0, 64 * KIB)))
		check_read("READ with a fresh token after the failures", &f, 0, dst_buf, 64 * KIB);
	ctl_ok("check E at the end", ctl_call(ctl_fd, "check E"));
	ctl_ok("check R at the end", ctl_call(ctl_fd, "check R"));
	ctl_ok("check Wo at the end", ctl_call(ctl_fd, "check Wo"));
	ctl_ok("no immediate arrived", ctl_call(ctl_fd, "immstat 0"));
}

/* ------------------------------------------------------------- inflight */

#define INF_SIZE	(8 * MIB)
#define INF_CHUNK	(256 * KIB)
#define INF_OPS		32

/* 16 WRITEs into the first half, 16 READs of the second: 8 MiB in flight */
static void inflight_ops(struct rdmx_rma_op *ops, const struct rtok *t, __u8 *local,
			 __u64 ud)
{
	unsigned int i;

	for (i = 0; i < INF_OPS; i++) {
		op_set(&ops[i], i % 2 ? RDMX_RMA_READ : RDMX_RMA_WRITE, t,
		       (i % 2 ? INF_SIZE / 2 : 0) + (i / 2) * INF_CHUNK,
		       local + i * INF_CHUNK, INF_CHUNK);
		ops[i].user_data = ud + i;
	}
}

/*
 * Collect the events of the INF_OPS operations of @ops, the first one
 * given already: each exactly once, done or failed with an errno a
 * deregistered region or a failed connection may give.
 */
static void inflight_collect(int fd, struct rdmx_rma_op *ops, __u64 ud,
			     struct rdmx_event *first, const char *what)
{
	struct rdmx_event ev[INF_OPS];
	bool seen[INF_OPS] = { false };
	unsigned int got = 0, i, n;
	int ret;

	memcpy(&ev[0], first, sizeof(*first));
	n = 1;
	for (;;) {
		for (i = 0; i < n; i++) {
			__u64 k = ev[i].user_data - ud;
			int st = ev[i].status;

			res.events++;
			if (!check(ev[i].type == RDMX_EVENT_RMA_DONE && k < INF_OPS && !seen[k],
				   "%s: event type %u user_data %llu: not one of the batch's, or twice",
				   what, ev[i].type, ev[i].user_data))
				continue;
			seen[k] = true;
			got++;
			check(ev[i].opcode == ops[k].opcode,
			      "%s: operation %llu: opcode %u, was %u",
			      what, k, ev[i].opcode, ops[k].opcode);
			if (!st) {
				res.inflight_done++;
				continue;
			}
			res.inflight_failed++;
			check(st == -EACCES || st == -EIO || st == -ECONNRESET,
			      "%s: operation %llu failed with %s, expected EACCES, EIO or ECONNRESET",
			      what, k, errno_name(-st));
		}
		if (got == INF_OPS)
			break;
		ret = get_events(fd, ev, INF_OPS, 0);
		if (ret <= 0)
			die(ret < 0 ? errno : EPROTO,
			    "%s: EP_EVENTS with %u of %u operations accounted for: %s",
			    what, got, INF_OPS, ret < 0 ? strerror(errno) : "returned 0");
		n = ret;
	}
	ret = get_events(fd, ev, 1, RDMX_EVENTS_NONBLOCK);
	check(ret < 0 && errno == EAGAIN,
	      "%s: EP_EVENTS with nothing in flight: expected EAGAIN, got %d (%s)",
	      what, ret, ret < 0 ? errno_name(errno) : "events");
}

/* Submit the batch async, and wait for its first completion */
static void inflight_start(int fd, struct rdmx_rma_op *ops, struct rdmx_event *first,
			   const char *what)
{
	int ret = rma(fd, ops, INF_OPS, RDMX_RMA_ASYNC);

	if (ret != INF_OPS)
		die(ret < 0 ? errno : EPROTO, "%s: async batch of %u: RMA returned %d (%s)",
		    what, INF_OPS, ret, ret < 0 ? strerror(errno) : "-");
	res.ops += INF_OPS;
	ret = get_events(fd, first, 1, 0);
	if (ret != 1)
		die(ret < 0 ? errno : EPROTO, "%s: the first event: %d (%s)", what, ret,
		    ret < 0 ? strerror(errno) : "-");
}

static void case_inflight(void)
{
	struct rdmx_rma_op ops[INF_OPS];
	struct rdmx_event first;
	struct rtok l, l2, l3, f;
	int fdb, fdc, idx;
	__u8 *local;
	__s64 t0;

	bufs_init(INF_OPS * INF_CHUNK);
	local = src_buf;
	fill_pattern(local, INF_OPS * INF_CHUNK, mix2(opt.seed, 60));

	/* The owner deregisters while the batch is in flight. */
	reg_ok(&l, "L", INF_SIZE, "rw", mix2(opt.seed, TAG_BG), 0, -1);
	inflight_ops(ops, &l, local, 1000);
	inflight_start(ctl_fd, ops, &first, "DEREG in flight");
	ctl_ok("DEREG (and unmap) with a batch in flight", ctl_call(ctl_fd, "dereg L -1 1"));
	inflight_collect(ctl_fd, ops, 1000, &first, "DEREG in flight");
	wait_session(ctl_fd, "DEREG with operations in flight");

	/* The owner closes the channel the batch runs on. */
	ctl_ok("accept", ctl_call(ctl_fd, "accept 1"));
	fdb = user_connect(opt.port, &idx);
	reg_ok(&l2, "L2", INF_SIZE, "rw", mix2(opt.seed, TAG_BG + 1), 0, idx);
	inflight_ops(ops, &l2, local, 2000);
	inflight_start(fdb, ops, &first, "owner's close in flight");
	ctl_ok("the owner closes channel B with a batch in flight",
	       ctl_call(ctl_fd, "close %d", idx));
	inflight_collect(fdb, ops, 2000, &first, "owner's close in flight");
	expect_closed(fdb, "channel B");
	close(fdb);
	wait_session(ctl_fd, "the owner's close with operations in flight");

	/* This side closes a channel with a batch in flight, events uncollected. */
	ctl_ok("accept", ctl_call(ctl_fd, "accept 1"));
	fdc = user_connect(opt.port, &idx);
	ctl_ok("lossy", ctl_call(ctl_fd, "lossy %d", idx));
	reg_ok(&l3, "L3", INF_SIZE, "rw", mix2(opt.seed, TAG_BG + 2), 0, idx);
	inflight_ops(ops, &l3, dst_buf, 3000);
	if (rma(fdc, ops, INF_OPS, RDMX_RMA_ASYNC) != INF_OPS)
		die(errno, "async batch on channel C: %s", strerror(errno));
	res.ops += INF_OPS;
	t0 = now_ns();
	wd_arm("close() of a channel with %u operations in flight", INF_OPS);
	close(fdc);
	wd_disarm();
	fprintf(stderr, PROG ": user inflight: close() with a batch in flight took %lld ms\n",
		(now_ns() - t0) / 1000000);
	/* The pages the READs were landing in go away: the kernel holds its own. */
	munmap(dst_buf, buf_len);
	dst_buf = map_anon(buf_len);
	if (!dst_buf)
		die(ENOMEM, "out of memory");
	wait_session(ctl_fd, "closing a channel with operations in flight");

	/* Unharmed: a fresh region works. */
	reg_ok(&f, "F", 64 * KIB, "rw", mix2(opt.seed, TAG_BG + 3), 0, -1);
	fill_pattern(src_buf, 4096, mix2(opt.seed, 61));
	if (expect_ok(ctl_fd, "WRITE with a fresh token afterwards",
		      op1(RDMX_RMA_WRITE, &f, 77, 4096))) {
		shadow_write(&f, 77, 4096, mix2(opt.seed, 61));
		ctl_ok("WRITE with a fresh token afterwards",
		       ctl_call(ctl_fd, "wrote F 77 4096 %llu", mix2(opt.seed, 61)));
	}
	if (expect_ok(ctl_fd, "READ with a fresh token afterwards",
		      op1(RDMX_RMA_READ, &f, 0, 64 * KIB)))
		check_read("READ with a fresh token afterwards", &f, 0, dst_buf, 64 * KIB);
}

/* ---------------------------------------------------------------- async */

#define AS_OPS		256
#define AS_CHUNK	16384

static bool poll_pri(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLPRI };
	int ret;

	do {
		ret = poll(&p, 1, timeout_ms);
	} while (ret < 0 && errno == EINTR);
	return ret > 0 && (p.revents & POLLPRI);
}

static void expect_idle(int fd, const char *when)
{
	struct rdmx_event ev;
	int ret;

	/*
	 * A blocking call would wait (another thread may be about to start
	 * an operation), so only the non-blocking one is tried.
	 */
	ret = get_events(fd, &ev, 1, RDMX_EVENTS_NONBLOCK);
	check(ret < 0 && errno == EAGAIN,
	      "%s: non-blocking EP_EVENTS with nothing in flight: expected EAGAIN, got %d (%s)",
	      when, ret, ret < 0 ? errno_name(errno) : "events");
	check(!poll_pri(fd, 0), "%s: poll() gives EPOLLPRI with nothing in flight", when);
}

static void case_async(void)
{
	static struct rdmx_rma_op ops[AS_OPS + 1];
	static __u64 loc[AS_OPS], ud[AS_OPS];
	static bool seen[AS_OPS];
	static char lines[AS_OPS * 64];
	struct rdmx_event ev[16];
	unsigned int i, j, got = 0, round = 0, nat = 0, k;
	struct rtok s, sa;
	__u64 wseed, off, len;
	size_t at = 0;
	int ret;

	bufs_init(4 * MIB);
	reg_ok(&s, "S", 4 * MIB, "rw", mix2(opt.seed, TAG_BG), 0, -1);
	if (opt.atomics > 0)
		reg_ok(&sa, "SA", 4096, "rwa", 0, 0, -1);
	expect_idle(ctl_fd, "before any operation");

	/*
	 * 256 operations in two async batches of 128, in no order among
	 * themselves, so on places apart: WRITEs into the first MiB (8 KiB
	 * each at most), READs of the second and third (16 KiB), and 16
	 * FETCH_ADDs; each with a user_data of its own.
	 */
	for (i = 0; i < AS_OPS; i++) {
		ud[i] = mix2(opt.seed ^ TAG_UD, i) | (1ULL << 63);
		for (j = 0; j < i; j++)
			if (ud[j] == ud[i])
				ud[i] ^= 1;
		if (opt.atomics > 0 && i % 16 == 15) {
			op_atomic(&ops[i], RDMX_RMA_FETCH_ADD, &sa, 0, &loc[i], 1, 0);
			nat++;
		} else if (i % 2) {
			len = 1 + mix2(opt.seed ^ TAG_LEN, i) % (AS_CHUNK - 64);
			off = MIB + i / 2 * AS_CHUNK + i % 11;
			op_set(&ops[i], RDMX_RMA_READ, &s, off, dst_buf + i * AS_CHUNK, len);
		} else {
			len = 1 + mix2(opt.seed ^ TAG_LEN, i) % (AS_CHUNK / 2 - 64);
			off = i / 2 * AS_CHUNK / 2 + i % 13;
			wseed = mix2(opt.seed ^ TAG_DATA, i);
			fill_pattern(src_buf + i * AS_CHUNK, len, wseed);
			op_set(&ops[i], RDMX_RMA_WRITE, &s, off, src_buf + i * AS_CHUNK, len);
			at += snprintf(lines + at, sizeof(lines) - at, "wrote S %llu %llu %llu\n",
				       off, len, wseed);
		}
		ops[i].user_data = ud[i];
	}
	for (k = 0; k < 2; k++) {
		ret = rma(ctl_fd, ops + k * 128, 128, RDMX_RMA_ASYNC);
		if (ret != 128)
			die(ret < 0 ? errno : EPROTO, "async batch %u of 128: RMA returned %d (%s)",
			    k, ret, ret < 0 ? strerror(errno) : "-");
		res.ops += 128;
	}
	check(poll_pri(ctl_fd, (int)(opt.idle_timeout * 1000)),
	      "poll() gave no EPOLLPRI with 256 operations in flight");

	/* Collect: non-blocking calls (7 at a time), blocking ones (5 at a time) */
	while (got < AS_OPS) {
		bool nb = round++ % 2 == 0;

		ret = get_events(ctl_fd, ev, nb ? 7 : 5, nb ? RDMX_EVENTS_NONBLOCK : 0);
		if (ret < 0 && nb && errno == EAGAIN) {
			if (!check(poll_pri(ctl_fd, (int)(opt.idle_timeout * 1000)),
				   "poll() gave no EPOLLPRI with %u operations in flight",
				   AS_OPS - got))
				die(ETIMEDOUT, "cannot go on");
			continue;
		}
		if (ret <= 0)
			die(ret < 0 ? errno : EPROTO, "EP_EVENTS after %u of %u: %d (%s)", got,
			    AS_OPS, ret, ret < 0 ? strerror(errno) : "-");
		for (j = 0; j < (unsigned int)ret; j++) {
			res.events++;
			for (i = 0; i < AS_OPS && ud[i] != ev[j].user_data; i++)
				;
			if (!check(i < AS_OPS && !seen[i] && ev[j].type == RDMX_EVENT_RMA_DONE &&
				   !ev[j].reserved,
				   "event user_data 0x%llx type %u reserved %u: unknown, or seen before",
				   ev[j].user_data, ev[j].type, ev[j].reserved))
				continue;
			seen[i] = true;
			got++;
			check(!ev[j].status && ev[j].opcode == ops[i].opcode,
			      "operation %u (opcode %u): event status %s opcode %u", i,
			      ops[i].opcode, errno_name(-ev[j].status), ev[j].opcode);
			if (ops[i].opcode == RDMX_RMA_FETCH_ADD)
				check(ev[j].value == loc[i],
				      "FETCH_ADD %u: event value %llu, its local buffer %llu",
				      i, ev[j].value, loc[i]);
			else
				res.bytes += ops[i].length;
		}
	}
	expect_idle(ctl_fd, "after every event was taken");

	/* What the operations moved */
	for (i = 0; i < AS_OPS; i++) {
		if (ops[i].opcode == RDMX_RMA_WRITE)
			shadow_write(&s, ops[i].remote_offset, ops[i].length,
				     mix2(opt.seed ^ TAG_DATA, i));
	}
	for (i = 0; i < AS_OPS; i++) {
		if (ops[i].opcode == RDMX_RMA_READ)
			check_read(desc("async READ %u", i), &s, ops[i].remote_offset,
				   dst_buf + i * AS_CHUNK, ops[i].length);
	}
	ctl_ok("the async WRITEs", ctl_call(ctl_fd, "%s", lines));
	if (nat) {
		__u64 sum = 0;

		for (i = 0; i < AS_OPS; i++)
			if (ops[i].opcode == RDMX_RMA_FETCH_ADD)
				sum += loc[i];
		check(sum == (__u64)nat * (nat - 1) / 2,
		      "the %u async FETCH_ADDs saw old values summing to %llu, not 0 + ... + %u",
		      nat, sum, nat - 1);
		ctl_ok("the async FETCH_ADDs", ctl_call(ctl_fd, "expect SA 0 %u", nat));
	}

	/* An async batch failing at its third operation: two run, two events */
	for (i = 0; i < 4; i++) {
		op_set(&ops[i], RDMX_RMA_WRITE, &s, 3 * MIB + i * 4096, src_buf + i * 4096, 100);
		fill_pattern(src_buf + i * 4096, 100, mix2(opt.seed, 70 + i));
		ops[i].user_data = 70 + i;
	}
	ops[2].remote_offset = 4 * MIB - 50;
	ret = rma(ctl_fd, ops, 4, RDMX_RMA_ASYNC);
	if (check(ret == 2, "an async batch failing at its third operation: RMA returned %d (%s)",
		  ret, ret < 0 ? errno_name(errno) : "-")) {
		check(ops[2].status == -ERANGE, "its third operation: status %s, expected ERANGE",
		      errno_name(-ops[2].status));
		res.ops += 2;
		collect(ctl_fd, 70, 2, RDMX_RMA_WRITE, "the async batch that failed at its third");
		shadow_write(&s, 3 * MIB, 100, mix2(opt.seed, 70));
		shadow_write(&s, 3 * MIB + 4096, 100, mix2(opt.seed, 71));
		ctl_ok("the async batch failing at its third operation: two ran, the fourth not",
		       ctl_call(ctl_fd, "wrote S %llu 100 %llu\nwrote S %llu 100 %llu", 3 * MIB,
				mix2(opt.seed, 70), 3 * MIB + 4096, mix2(opt.seed, 71)));
	}
	expect_idle(ctl_fd, "after the batch that failed at its third");

	/* An async batch failing at its first: the call fails, nothing in flight */
	ops[0].remote_offset = 4 * MIB;
	ops[1].remote_offset = 3 * MIB + 8192;
	ret = rma(ctl_fd, ops, 2, RDMX_RMA_ASYNC);
	check(ret < 0 && errno == ERANGE,
	      "an async batch failing at its first operation: RMA returned %d (%s), expected ERANGE",
	      ret, ret < 0 ? errno_name(errno) : "-");
	expect_idle(ctl_fd, "after the batch that failed at its first");
	ctl_ok("check S: nothing of the refused batch ran", ctl_call(ctl_fd, "check S"));

	/* O_NONBLOCK on the fd: EP_EVENTS without the flag does not wait */
	for (i = 0; i < 32; i++) {
		op_set(&ops[i], RDMX_RMA_READ, &s, i * 65536, dst_buf + i * 65536, 65536);
		ops[i].user_data = 500 + i;
	}
	ret = rma(ctl_fd, ops, 32, RDMX_RMA_ASYNC);
	if (ret != 32)
		die(ret < 0 ? errno : EPROTO, "async batch of 32 READs: %d (%s)", ret,
		    ret < 0 ? strerror(errno) : "-");
	res.ops += 32;
	fcntl(ctl_fd, F_SETFL, fcntl(ctl_fd, F_GETFL) | O_NONBLOCK);
	for (got = 0; got < 32; ) {
		ret = get_events(ctl_fd, ev, 16, 0);
		if (ret < 0 && errno == EAGAIN) {
			poll_pri(ctl_fd, 1000);
			continue;
		}
		if (ret <= 0)
			die(ret < 0 ? errno : EPROTO, "EP_EVENTS on an O_NONBLOCK fd: %d (%s)",
			    ret, ret < 0 ? strerror(errno) : "-");
		for (j = 0; j < (unsigned int)ret; j++) {
			res.events++;
			check(ev[j].user_data >= 500 && ev[j].user_data < 532 && !ev[j].status,
			      "O_NONBLOCK: event user_data %llu status %s", ev[j].user_data,
			      errno_name(-ev[j].status));
		}
		got += ret;
	}
	fcntl(ctl_fd, F_SETFL, fcntl(ctl_fd, F_GETFL) & ~O_NONBLOCK);
	check(got == 32, "O_NONBLOCK: %u events for 32 operations", got);
	for (i = 0; i < 32; i++)
		check_read(desc("READ %u of the O_NONBLOCK batch", i), &s, i * 65536,
			   dst_buf + i * 65536, 65536);

	/* A synchronous batch of RDMX_RMA_BATCH_MAX; one more is refused */
	at = 0;
	for (i = 0; i < RDMX_RMA_BATCH_MAX; i++) {
		len = 1 + mix2(opt.seed ^ TAG_LEN, 300 + i) % 8000;
		if (i % 2) {
			op_set(&ops[i], RDMX_RMA_READ, &s, 2 * MIB + i * 8192, dst_buf + i * 8192,
			       len);
			continue;
		}
		wseed = mix2(opt.seed ^ TAG_DATA, 300 + i);
		fill_pattern(src_buf + i * 8192, len, wseed);
		op_set(&ops[i], RDMX_RMA_WRITE, &s, i * 8192 + 1, src_buf + i * 8192, len);
		at += snprintf(lines + at, sizeof(lines) - at, "wrote S %llu %llu %llu\n",
			       (__u64)i * 8192 + 1, len, wseed);
	}
	ret = rma(ctl_fd, ops, RDMX_RMA_BATCH_MAX, 0);
	if (check(ret == RDMX_RMA_BATCH_MAX, "a batch of RDMX_RMA_BATCH_MAX: RMA returned %d (%s)",
		  ret, ret < 0 ? errno_name(errno) : "-")) {
		for (i = 0; i < RDMX_RMA_BATCH_MAX; i++) {
			check(!ops[i].status, "operation %u of the full batch: status %s", i,
			      errno_name(-ops[i].status));
			if (ops[i].opcode == RDMX_RMA_WRITE)
				shadow_write(&s, ops[i].remote_offset, ops[i].length,
					     mix2(opt.seed ^ TAG_DATA, 300 + i));
		}
		res.ops += RDMX_RMA_BATCH_MAX;
		for (i = 1; i < RDMX_RMA_BATCH_MAX; i += 2)
			check_read(desc("READ %u of the full batch", i), &s,
				   ops[i].remote_offset, dst_buf + i * 8192, ops[i].length);
		ctl_ok("the full batch's WRITEs", ctl_call(ctl_fd, "%s", lines));
	}
	op_set(&ops[RDMX_RMA_BATCH_MAX], RDMX_RMA_READ, &s, 0, dst_buf, 16);
	ret = rma(ctl_fd, ops, RDMX_RMA_BATCH_MAX + 1, 0);
	check(ret < 0 && errno == EINVAL,
	      "a batch of RDMX_RMA_BATCH_MAX + 1: RMA returned %d (%s), expected EINVAL",
	      ret, ret < 0 ? errno_name(errno) : "-");
	ret = do_rma(ctl_fd, ops, 1, 0, 0);
	check(ret < 0 && errno == EINVAL,
	      "a batch of 0: RMA returned %d (%s), expected EINVAL", ret,
	      ret < 0 ? errno_name(errno) : "-");
	ctl_ok("check S at the end", ctl_call(ctl_fd, "check S"));
}

/* ------------------------------------------------------------ the user */

static void addr_str(const struct rdmx_sockaddr *sa, char *buf, size_t size)
{
	char ip[INET6_ADDRSTRLEN] = "?";

	if (sa->family == AF_INET || sa->family == AF_INET6)
		inet_ntop(sa->family, sa->addr, ip, sizeof(ip));
	snprintf(buf, size, sa->family == AF_INET6 ? "[%s]:%u" : "%s:%u", ip, sa->port);
}

/* Channel A's addresses, for the JSON: a loopback session has both alike. */
static void note_addrs(int fd)
{
	struct rdmx_ep_info info;

	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	if (!check(ioctl(fd, RDMX_IOC_EP_INFO, &info) == 0, "EP_INFO: %s", strerror(errno)))
		return;
	addr_str(&info.local, res.local, sizeof(res.local));
	addr_str(&info.peer, res.peer, sizeof(res.peer));
}

static const struct {
	const char *name;
	void (*run)(void);
} cases[] = {
	{ "pattern", case_pattern },
	{ "imm", case_imm },
	{ "atomic", case_atomic },
	{ "atomic-none", case_atomic_none },
	{ "errors", case_errors },
	{ "inflight", case_inflight },
	{ "async", case_async },
};

static int run_user(void)
{
	size_t i;
	int n;

	for (i = 0; i < ARRAY_SIZE(cases); i++)
		if (!strcmp(cases[i].name, opt.test))
			break;
	ctl_fd = user_connect(opt.port, NULL);
	note_addrs(ctl_fd);
	res.channels = 1;
	res.t0 = now_ns();
	fprintf(stderr, PROG ": user %s: connected to %s port %u\n", opt.test, opt.host,
		opt.port);
	cases[i].run();
	res.t1 = now_ns();
	if (ioctl(ctl_fd, RDMX_IOC_EP_SHUTDOWN, 0) < 0)
		fail(errno, "SHUTDOWN: %s", strerror(errno));
	/* The owner ends its side once it has taken everything. */
	n = msg_recv(ctl_fd, &ctl_rx, 1, false);
	check(n == 0, "after SHUTDOWN: expected the owner's end of stream, got %d (%s)", n,
	      n < 0 ? errno_name(-n) : "a message");
	close(ctl_fd);
	return 0;
}

/* ------------------------------------------------------------ arguments */

static void print_usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " owner [-a ADDR] [-p PORT] [-P PORT2] -S SERVICE [--channels N]\n"
		"                     [--idle-timeout SEC] [--json FILE] [--dev PATH]\n"
		"       " PROG " user [-p PORT] [-P PORT2] -S SERVICE --atomics yes|no [-n N]\n"
		"                    [--iwarp yes|no] [--seed S] [--slot K] [--peers K] [--wait SEC]\n"
		"                    [--max-len BYTES] [--idle-timeout SEC] [--json FILE]\n"
		"                    [--dev PATH] HOST CASE\n"
		"\n"
		"Checks one-sided access: the owner holds memory and checks it, the user\n"
		"operates on it, one CASE per run:\n"
		"  pattern      WRITE and READ back 1 B to 16 MiB, unaligned everywhere\n"
		"  imm          -n rounds (default 200) of WRITEs then a WRITE_IMM\n"
		"  atomic       -n FETCH_ADDs (default 2000) and -n/4 CMP_SWAPs on one word,\n"
		"               --peers users at once; carries, byte order, rights\n"
		"  atomic-none  a device without atomics answers EOPNOTSUPP\n"
		"  errors       bounds, lengths, fields, rights, corrupt and stale tokens\n"
		"  inflight     DEREG and close with operations in flight\n"
		"  async        RDMX_RMA_ASYNC, RDMX_IOC_EP_EVENTS, poll() and EPOLLPRI\n"
		"\n"
		"  -a, --addr ADDR        owner: local address to listen on (default any IPv4)\n"
		"  -p, --port PORT        rdma_cm port (default 0: RDMX_DEFAULT_PORT, %d)\n"
		"  -P, --port2 PORT2      a second port (another session): the owner listens\n"
		"                         there too, the user's errors case uses it\n"
		"  -S, --service NAME     service name, 1-%d of [A-Za-z0-9._-]\n"
		"      --channels N       owner: channels to accept before serving (default 1)\n"
		"      --atomics yes|no   user: whether the device has atomics (required)\n"
		"      --iwarp yes|no     user: whether the transport is iWARP (default no)\n"
		"  -n, --count N          user: rounds or operations, as above\n"
		"      --seed S           user: PRNG seed (default 1)\n"
		"      --slot K           user, atomic: which words are this user's (1-15)\n"
		"      --peers K          user, atomic: users hammering the word at once\n"
		"      --wait SEC         user: retry a failing CONNECT for SEC s (default 30)\n"
		"      --max-len BYTES    user, pattern: leave out operations longer than\n"
		"                         BYTES (default 16777216: all of them)\n"
		"      --idle-timeout SEC a call that does not return within SEC s is a\n"
		"                         failure (default 120)\n"
		"      --json FILE        also write the result as a JSON object to FILE\n"
		"      --dev PATH         device node (default /dev/rdmx)\n"
		"  -h, --help             this text\n"
		"\n"
		"Exit status: 0 all good, 1 a failure, 2 bad arguments.\n",
		RDMX_DEFAULT_PORT, RDMX_SERVICE_LEN - 1);
}

static __printf(1, 2) int bad_arg(const char *fmt, ...);

static int bad_arg(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\n(try '" PROG " --help')\n", stderr);
	return 2;
}

/* An unsigned decimal number in [min, max] */
static bool parse_u64(const char *s, __u64 min, __u64 max, __u64 *out)
{
	unsigned long long v;
	char *end;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return false;
	*out = v;
	return true;
}

static bool parse_seconds(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v <= 0 || v > 1e6)
		return false;
	*out = v;
	return true;
}

enum {
	OPT_CHANNELS = 256, OPT_ATOMICS, OPT_IWARP, OPT_SEED, OPT_SLOT, OPT_PEERS, OPT_WAIT,
	OPT_IDLE, OPT_JSON, OPT_DEV, OPT_MAX_LEN,
};

static const struct option long_opts[] = {
	{ "addr", required_argument, NULL, 'a' },
	{ "port", required_argument, NULL, 'p' },
	{ "port2", required_argument, NULL, 'P' },
	{ "service", required_argument, NULL, 'S' },
	{ "count", required_argument, NULL, 'n' },
	{ "channels", required_argument, NULL, OPT_CHANNELS },
	{ "atomics", required_argument, NULL, OPT_ATOMICS },
	{ "iwarp", required_argument, NULL, OPT_IWARP },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "slot", required_argument, NULL, OPT_SLOT },
	{ "peers", required_argument, NULL, OPT_PEERS },
	{ "wait", required_argument, NULL, OPT_WAIT },
	{ "idle-timeout", required_argument, NULL, OPT_IDLE },
	{ "max-len", required_argument, NULL, OPT_MAX_LEN },
	{ "json", required_argument, NULL, OPT_JSON },
	{ "dev", required_argument, NULL, OPT_DEV },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Which roles take each option */
static unsigned int opt_roles(int c)
{
	switch (c) {
	case 'a':
	case OPT_CHANNELS:
		return R_OWNER;
	case 'n':
	case OPT_ATOMICS:
	case OPT_IWARP:
	case OPT_SEED:
	case OPT_SLOT:
	case OPT_PEERS:
	case OPT_WAIT:
	case OPT_MAX_LEN:
		return R_USER;
	}
	return R_OWNER | R_USER;
}

static const char *opt_name(int c)
{
	const struct option *lo;

	for (lo = long_opts; lo->name; lo++)
		if (lo->val == c)
			return lo->name;
	return "?";
}

/* Returns -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv)
{
	size_t i;
	__u64 v;
	int c;

	memset(&opt, 0, sizeof(opt));
	opt.dev = "/dev/rdmx";
	opt.seed = 1;
	opt.channels = 1;
	opt.atomics = -1;
	opt.slot = 2;
	opt.peers = 1;
	opt.idle_timeout = 120;
	opt.wait = 30;
	opt.max_len = 16 * MIB;

	if (argc < 2)
		return bad_arg("missing role: owner or user");
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		print_usage(stdout);
		return 0;
	}
	opt.role_name = argv[1];
	if (!strcmp(argv[1], "owner"))
		opt.role = R_OWNER;
	else if (!strcmp(argv[1], "user"))
		opt.role = R_USER;
	else
		return bad_arg("unknown role '%s': owner or user", argv[1]);

	argc--;
	argv++;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":a:p:P:S:n:h", long_opts, NULL)) != -1) {
		if (c == 'h') {
			print_usage(stdout);
			return 0;
		}
		if (c == '?') {
			if (optopt)
				return bad_arg("unknown option '-%c'", optopt);
			return bad_arg("unknown option '%s'", argv[optind - 1]);
		}
		if (c == ':')
			return bad_arg("option '%s' needs an argument", argv[optind - 1]);
		if (!(opt_roles(c) & opt.role))
			return bad_arg("option --%s is not for %s", opt_name(c), opt.role_name);
		switch (c) {
		case 'a':
			opt.addr = optarg;
			break;
		case 'p':
		case 'P':
			if (!parse_u64(optarg, c == 'P' ? 1 : 0, 65535, &v))
				return bad_arg("bad port '%s'", optarg);
			if (c == 'p')
				opt.port = v;
			else
				opt.port2 = v;
			break;
		case 'S':
			if (!valid_service(optarg))
				return bad_arg("bad service '%s': 1-%d of [A-Za-z0-9._-]",
					       optarg, RDMX_SERVICE_LEN - 1);
			memset(opt.service, 0, sizeof(opt.service));
			memcpy(opt.service, optarg, strlen(optarg));
			opt.have_service = true;
			break;
		case 'n':
			if (!parse_u64(optarg, 1, 1000000, &v))
				return bad_arg("bad count '%s' (1-1000000)", optarg);
			opt.count = v;
			opt.have_count = true;
			break;
		case OPT_CHANNELS:
			if (!parse_u64(optarg, 1, MAX_CHANS, &v))
				return bad_arg("bad --channels '%s' (1-%d)", optarg, MAX_CHANS);
			opt.channels = v;
			break;
		case OPT_ATOMICS:
			if (strcmp(optarg, "yes") && strcmp(optarg, "no"))
				return bad_arg("bad --atomics '%s': yes or no", optarg);
			opt.atomics = !strcmp(optarg, "yes");
			break;
		case OPT_IWARP:
			if (strcmp(optarg, "yes") && strcmp(optarg, "no"))
				return bad_arg("bad --iwarp '%s': yes or no", optarg);
			opt.iwarp = !strcmp(optarg, "yes");
			break;
		case OPT_SEED:
			if (!parse_u64(optarg, 1, UINT64_MAX, &v))
				return bad_arg("bad seed '%s' (1 or more)", optarg);
			opt.seed = v;
			break;
		case OPT_SLOT:
			if (!parse_u64(optarg, 1, 15, &v))
				return bad_arg("bad --slot '%s' (1-15)", optarg);
			opt.slot = v;
			break;
		case OPT_PEERS:
			if (!parse_u64(optarg, 1, MAX_CHANS, &v))
				return bad_arg("bad --peers '%s' (1-%d)", optarg, MAX_CHANS);
			opt.peers = v;
			break;
		case OPT_WAIT:
			if (!parse_seconds(optarg, &opt.wait))
				return bad_arg("bad --wait '%s'", optarg);
			break;
		case OPT_IDLE:
			if (!parse_seconds(optarg, &opt.idle_timeout))
				return bad_arg("bad --idle-timeout '%s'", optarg);
			break;
		case OPT_MAX_LEN:
			if (!parse_u64(optarg, 1, 16 * MIB, &v))
				return bad_arg("bad --max-len '%s' (1-%llu)", optarg, 16 * MIB);
			opt.max_len = v;
			break;
		case OPT_JSON:
			if (!*optarg)
				return bad_arg("empty --json file name");
			opt.json = optarg;
			break;
		case OPT_DEV:
			opt.dev = optarg;
			break;
		}
	}
	if (!opt.have_service)
		return bad_arg("%s needs -S SERVICE", opt.role_name);
	if (opt.role == R_OWNER) {
		if (optind < argc)
			return bad_arg("owner takes no HOST ('%s')", argv[optind]);
		return -1;
	}
	if (optind + 2 > argc)
		return bad_arg("user needs HOST and CASE");
	if (optind + 2 < argc)
		return bad_arg("unexpected argument '%s'", argv[optind + 2]);
	opt.host = argv[optind];
	opt.test = argv[optind + 1];
	for (i = 0; i < ARRAY_SIZE(cases); i++)
		if (!strcmp(cases[i].name, opt.test))
			break;
	if (i == ARRAY_SIZE(cases))
		return bad_arg("unknown case '%s'", opt.test);
	if (opt.atomics < 0)
		return bad_arg("user needs --atomics yes or --atomics no");
	/* One message holds the old values; one region, the imm rounds. */
	if (!strcmp(opt.test, "atomic") && opt.count > 400000)
		return bad_arg("case atomic takes -n up to 400000");
	if (!strcmp(opt.test, "imm") && opt.count > 50000)
		return bad_arg("case imm takes -n up to 50000");
	if (!strcmp(opt.test, "atomic") && !opt.atomics)
		return bad_arg("case atomic needs a device with atomics: run atomic-none");
	if (!strcmp(opt.test, "atomic-none") && opt.atomics)
		return bad_arg("case atomic-none is for a device without atomics");
	return -1;
}

int main(int argc, char **argv)
{
	int ret;

	/* The structs as this program knows them are the sizes published. */
	if (sizeof(struct rdmx_mr_reg) != RDMX_MR_REG_SIZE_VER0 ||
	    sizeof(struct rdmx_mr_dereg) != RDMX_MR_DEREG_SIZE_VER0 ||
	    sizeof(struct rdmx_rma) != RDMX_RMA_SIZE_VER0 ||
	    sizeof(struct rdmx_rma_op) != RDMX_RMA_OP_SIZE_VER0 ||
	    sizeof(struct rdmx_events) != RDMX_EVENTS_SIZE_VER0 ||
	    sizeof(struct rdmx_event) != RDMX_EVENT_SIZE_VER0) {
		fprintf(stderr, PROG ": built against a uapi header with other struct sizes\n");
		return 2;
	}
	ret = parse_args(argc, argv);
	if (ret >= 0)
		return ret;
	setvbuf(stdout, NULL, _IOLBF, 0);
	wd_init();
	if (opt.role == R_OWNER)
		run_owner();
	else
		run_user();
	finish(0);
}
