// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx-msgtest: check that the message service (RDMX_IOC_EP_*) delivers
 * reliably, in order and exactly once.
 *
 *   rdmx-msgtest recv [-a ADDR] [-p PORT] -S SERVICE -n COUNT [options]
 *   rdmx-msgtest send [-p PORT] -S SERVICE -n COUNT [options] HOST
 *   rdmx-msgtest stream [-p PORT] -S SERVICE [options] HOST
 *   rdmx-msgtest hold [-p PORT] -S SERVICE -n COUNT [--ports N]
 *                     [--linger SEC] HOST
 *
 * The sender's message i (0-based) has a length and content that follow
 * from (seed, i) alone, so the receiver regenerates what message k must be
 * and compares it byte for byte: a loss, a duplicate, a reordering or a
 * corruption is reported with the message's index. Messages of 16 bytes or
 * more start with a header {magic, index, len, crc32 of the rest} (all
 * little-endian) that identifies them; shorter ones are identified by
 * matching them against the messages near the expected one.
 *
 * "stream" connects and sends small messages until a SEND or RECV fails,
 * then reports the errno and how long after the last successful operation
 * (or the last SIGUSR1, whichever is later) the failure came: the test of
 * dead-peer detection sends SIGUSR1 when it kills the peer.
 *
 * "hold" opens COUNT channels at once, one descriptor each, and reports
 * how many it got, how long they took and why the first that failed did (a
 * test of how many channels one user may hold). With --ports N the channels
 * go round N ports from PORT on, one session each (a session is a peer
 * address and port); with --linger SEC they stay open SEC seconds once all
 * are (the benchmark reads the memory they hold meanwhile).
 *
 * Exit status: 0 all good, 1 failure, 2 bad arguments.
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
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <linux/types.h>
#include <linux/rdmx.h>

#include "testlib.h"

#define PROG		"rdmx-msgtest"
#define HDR_LEN		16
#define MSG_MAGIC	0x47534d52u	/* "RMSG" in little-endian bytes */
#define SEARCH_WINDOW	64		/* how far to look for a headerless message */
#define MAX_SHOWN	20		/* error lines printed before going quiet */
#define STREAM_MSG_LEN	64
#define STREAM_BUF	(64u << 10)
#define NSEC		1000000000LL

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * The kernel's __printf(), which userspace has to define itself; split
 * across two lines, as checkpatch would otherwise flag its __attribute__.
 */
#define __printf(fmt, args)	__attribute__(\
	(format(printf, fmt, args)))

/* Salts that keep the length, body and short-message streams apart. */
#define TAG_LEN		0x6c656e677468ULL
#define TAG_BODY	0x626f6479ULL
#define TAG_SHORT	0x73686f7274ULL

enum mode { M_RECV = 1, M_SEND = 2, M_STREAM = 4, M_HOLD = 8, M_CHURN = 16 };

struct opts {
	enum mode mode;
	const char *mode_name;
	const char *dev;
	const char *addr;		/* recv: -a */
	const char *host;		/* send, stream */
	unsigned int port;
	char service[RDMX_SERVICE_LEN];
	bool have_service;
	__u64 count;
	bool have_count;
	__u64 seed;
	__u32 max_size;
	__u32 buf_size;
	bool have_buf_size;
	unsigned int batch;
	__u64 pace_us;
	bool have_pace;
	const char *json;
	double idle_timeout;		/* seconds, 0 = none */
	double wait;			/* seconds to retry CONNECT */
	bool poll;
	bool nonblock;
	unsigned int ports;		/* hold: ports from port on */
	double linger;			/* hold: seconds to keep them open */
};

struct result {
	__u64 count;			/* recv: intact messages; send/stream: sent */
	__u64 bytes;
	__u64 errors;
	char first_error[512];
	int err;			/* errno of the failure, 0 if none */
	__s64 t0, t1;			/* CLOCK_MONOTONIC ns */
	__u64 spurious;		/* poll said ready, the xfer said EAGAIN */
	bool eos;			/* recv: saw the sender's end of stream */
	/* stream */
	__u64 received;
	__s64 detect_ms;
	const char *op;
};

/* ---------------------------------------------------------------- misc */

static void put_le32(__u8 *p, __u32 v)
{
	v = htole32(v);
	memcpy(p, &v, 4);
}

static __u32 get_le32(const __u8 *p)
{
	__u32 v;

	memcpy(&v, p, 4);
	return le32toh(v);
}

static __u32 crc_table[256];

static void crc32_init(void)
{
	__u32 i, j, c;

	for (i = 0; i < 256; i++) {
		c = i;
		for (j = 0; j < 8; j++)
			c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc_table[i] = c;
	}
}

/* CRC-32 (IEEE 802.3, as zlib's crc32()). */
static __u32 crc32(const __u8 *p, size_t len)
{
	__u32 c = 0xffffffffu;

	while (len--)
		c = crc_table[(c ^ *p++) & 0xff] ^ (c >> 8);
	return c ^ 0xffffffffu;
}

/* ------------------------------------------------------------ messages */

static void fill_random(__u8 *p, size_t len, __u64 state)
{
	__u64 v;

	while (len >= 8) {
		v = htole64(splitmix64(&state));
		memcpy(p, &v, 8);
		p += 8;
		len -= 8;
	}
	if (len) {
		v = htole64(splitmix64(&state));
		memcpy(p, &v, len);
	}
}

/*
 * The length of message @idx. Every 512 messages, slots 1-5 are the edge
 * cases (0, 15, 16, @max and 1 bytes); the rest are 5% empty, 10% 1-15
 * bytes (no header), 45% 16-256, 39% 257 bytes-64 KiB and 1% up to
 * RDMX_MSG_MAX; a length above @max is folded into 0..@max. Within
 * 257 bytes-64 KiB every power of two is as likely, (256, 512] as
 * (32 KiB, 64 KiB]: each scale gets its share of messages, and a stream
 * moves about 5 KiB a message rather than 13 (it is the time a stream
 * takes on a soft device under TCG).
 */
static __u32 msg_len(__u64 seed, __u64 idx, __u32 max)
{
	__u64 s = mix2(seed ^ TAG_LEN, idx);
	__u64 r = splitmix64(&s) % 1000, v = splitmix64(&s);
	__u64 len;

	switch (idx % 512) {
	case 1:
		return 0;
	case 2:
		return max < 15 ? max : 15;
	case 3:
		return max < 16 ? max : 16;
	case 4:
		return max;
	case 5:
		return max < 1 ? max : 1;
	}
	if (r < 50)
		len = 0;
	else if (r < 150)
		len = 1 + v % 15;
	else if (r < 600)
		len = 16 + v % (256 - 16 + 1);
	else if (r < 990)	/* (2^b, 2^(b+1)], b = 8..15 */
		len = (1ULL << (8 + v % 8)) + 1 +
		      splitmix64(&s) % (1ULL << (8 + v % 8));
	else
		len = 65537 + v % (RDMX_MSG_MAX - 65537 + 1);
	if (len > max)
		len = splitmix64(&s) % ((__u64)max + 1);
	return (__u32)len;
}

/* Write message @idx, of length @len (from msg_len()), to @p. */
static void fill_msg(__u8 *p, __u64 seed, __u64 idx, __u32 len)
{
	if (len < HDR_LEN) {
		fill_random(p, len, mix2(mix2(seed ^ TAG_SHORT, idx), len));
		return;
	}
	fill_random(p + HDR_LEN, len - HDR_LEN, mix2(seed ^ TAG_BODY, idx));
	put_le32(p, MSG_MAGIC);
	put_le32(p + 4, (__u32)idx);
	put_le32(p + 8, len);
	put_le32(p + 12, crc32(p + HDR_LEN, len - HDR_LEN));
}

/* ------------------------------------------------------------- results */

static __printf(3, 4) void fail(struct result *r, int err, const char *fmt, ...);

/* Record one error: the first is kept for the result line and the JSON. */
static void fail(struct result *r, int err, const char *fmt, ...)
{
	char buf[sizeof(r->first_error)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (!r->errors++)
		memcpy(r->first_error, buf, sizeof(buf));
	if (err && !r->err)
		r->err = err;
	if (r->errors <= MAX_SHOWN)
		fprintf(stderr, PROG ": %s\n", buf);
	else if (r->errors == MAX_SHOWN + 1)
		fprintf(stderr, PROG ": further errors not shown\n");
}

static __s64 elapsed_ms(const struct result *r)
{
	return r->t0 && r->t1 > r->t0 ? (r->t1 - r->t0) / 1000000 : 0;
}

static int write_json(const struct opts *o, const struct result *r)
{
	FILE *f = fopen(o->json, "w");

	if (!f) {
		fprintf(stderr, PROG ": %s: %s\n", o->json, strerror(errno));
		return -1;
	}
	fprintf(f,
		"{\"role\":\"%s\",\"count\":%llu,\"bytes\":%llu,\"errors\":%llu,\"first_error\":",
		o->mode_name, r->count, r->bytes, r->errors);
	json_string(f, r->errors ? r->first_error : NULL);
	fprintf(f, ",\"elapsed_ms\":%lld,\"errno\":%d,\"errno_name\":",
		elapsed_ms(r), r->err);
	json_string(f, r->err ? errno_name(r->err) : NULL);
	if (o->mode == M_STREAM) {
		fprintf(f,
			",\"detect_ms\":%lld,\"sent\":%llu,\"received\":%llu,\"op\":",
			r->detect_ms, r->count, r->received);
		json_string(f, r->op);
	} else {
		fprintf(f,
			",\"expected\":%llu,\"seed\":%llu,\"max_size\":%u,\"spurious_wakeups\":%llu",
			o->count, o->seed, o->max_size, r->spurious);
		if (o->mode == M_RECV)
			fprintf(f, ",\"eos\":%s", r->eos ? "true" : "false");
	}
	fputs("}\n", f);
	if (fclose(f)) {
		fprintf(stderr, PROG ": %s: %s\n", o->json, strerror(errno));
		return -1;
	}
	return 0;
}

/* One line on stdout, for recv and send. */
static void print_result(const struct opts *o, const struct result *r, bool ok)
{
	__s64 ms = elapsed_ms(r);

	printf("%s: %s: %llu/%llu messages, %llu bytes, %lld ms, %.1f MB/s, seed %llu",
	       o->mode_name, ok ? "ok" : "FAILED", r->count, o->count,
	       r->bytes, ms, ms ? r->bytes / 1000.0 / ms : 0.0, o->seed);
	if (o->mode == M_RECV)
		printf(", %s", r->eos ? "end of stream" : "no end of stream");
	if (r->spurious)
		printf(", %llu spurious wakeups", r->spurious);
	if (r->errors)
		printf(", %llu errors, first: %s", r->errors, r->first_error);
	printf("\n");
	fflush(stdout);
}

/* ------------------------------------------------------- signals, time */

static atomic_int alarm_fired;
static atomic_llong usr1_ns;

static void on_alarm(int sig)
{
	(void)sig;
	alarm_fired = 1;
}

static void on_usr1(int sig)
{
	(void)sig;
	atomic_store(&usr1_ns, now_ns());
}

static void install_handlers(bool usr1)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_alarm;	/* no SA_RESTART: interrupt the ioctl */
	sigaction(SIGALRM, &sa, NULL);
	if (usr1) {
		sa.sa_handler = on_usr1;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGUSR1, &sa, NULL);
	}
}

static void arm_timer(__s64 ns)
{
	struct itimerval it;

	memset(&it, 0, sizeof(it));
	alarm_fired = 0;
	if (ns <= 0)
		ns = 1000;
	it.it_value.tv_sec = ns / NSEC;
	it.it_value.tv_usec = (ns % NSEC) / 1000;
	if (!it.it_value.tv_sec && !it.it_value.tv_usec)
		it.it_value.tv_usec = 1;
	setitimer(ITIMER_REAL, &it, NULL);
}

static void disarm_timer(void)
{
	struct itimerval it;

	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
}

static __s64 deadline_after(double sec)
{
	return sec > 0 ? now_ns() + (__s64)(sec * NSEC) : 0;
}

static void sleep_ns(__s64 ns)
{
	struct timespec ts = { ns / NSEC, ns % NSEC };

	while (ns > 0 && nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * Wait until @fd is ready for @events or @deadline (0: never) passes.
 * Returns 1 when ready, 0 on timeout, -1 with errno on a poll() error.
 */
static int wait_fd(int fd, short events, __s64 deadline)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	struct timespec ts, *tsp;
	__s64 left;
	int ret;

	for (;;) {
		tsp = NULL;
		if (deadline) {
			left = deadline - now_ns();
			if (left <= 0)
				return 0;
			ts.tv_sec = left / NSEC;
			ts.tv_nsec = left % NSEC;
			tsp = &ts;
		}
		ret = ppoll(&pfd, 1, tsp, NULL);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0)
			return -1;
		if (ret > 0)
			return 1;
	}
}

/* ---------------------------------------------------------- endpoints */

static int xfer(int fd, unsigned long cmd, struct rdmx_msg_vec *v,
		unsigned int n, __u32 flags)
{
	struct rdmx_ep_xfer x;
	unsigned int i;

	for (i = 0; i < n; i++)
		v[i].status = 0;
	memset(&x, 0, sizeof(x));
	x.size = sizeof(x);
	x.flags = flags;
	x.count = n;
	x.vec_size = sizeof(*v);
	x.msgs = (uintptr_t)v;
	return ioctl(fd, cmd, &x);
}

/*
 * SEND or RECV @n messages, waiting at most until @deadline (0: forever);
 * ETIMEDOUT when it passes. @mode_poll: poll() first, then a non-blocking
 * xfer (recv --poll); @mode_nonblock: a non-blocking xfer first, poll() on
 * EAGAIN (send --nonblock); neither: a blocking xfer cut short by SIGALRM.
 * For RECV the caller resets each vec's len before calling.
 */
static int xfer_wait(int fd, unsigned long cmd, struct rdmx_msg_vec *v,
		     unsigned int n, bool mode_poll, bool mode_nonblock,
		     __s64 deadline, struct result *r)
{
	short events = cmd == RDMX_IOC_EP_SEND ? POLLOUT : POLLIN;
	bool polled = false;
	int ret, e;

	for (;;) {
		if (mode_poll || (mode_nonblock && polled)) {
			ret = wait_fd(fd, events, deadline);
			if (ret == 0) {
				errno = ETIMEDOUT;
				return -1;
			}
			if (ret < 0)
				return -1;
		}
		if (mode_poll || mode_nonblock) {
			ret = xfer(fd, cmd, v, n, RDMX_XFER_NONBLOCK);
			if (ret >= 0 || (errno != EAGAIN && errno != EINTR))
				return ret;
			if (errno == EAGAIN && (mode_poll || polled))
				r->spurious++;
			polled = true;
			continue;
		}
		if (deadline)
			arm_timer(deadline - now_ns());
		ret = xfer(fd, cmd, v, n, 0);
		e = errno;
		if (deadline)
			disarm_timer();
		if (ret >= 0 || e != EINTR) {
			errno = e;
			return ret;
		}
		if (deadline && (alarm_fired || now_ns() >= deadline)) {
			errno = ETIMEDOUT;
			return -1;
		}
	}
}

static bool connect_retryable(int e)
{
	switch (e) {
	case EINVAL: case E2BIG: case EFAULT: case ENOTTY: case EBADF:
	case EPERM: case EACCES: case ENOMEM: case EMFILE: case ENFILE:
		return false;
	}
	return true;
}

/* CONNECT to HOST; with --wait, retry failures for that long. */
static int connect_ep(const struct opts *o, struct result *r)
{
	__s64 deadline = deadline_after(o->wait);
	struct rdmx_sockaddr peer;
	struct rdmx_ep_addr a;
	int fd, e;

	e = resolve(o->host, &peer);
	if (e) {
		fail(r, 0, "%s: %s", o->host, gai_strerror(e));
		return -1;
	}
	peer.port = o->port;
	for (;;) {
		fd = open(o->dev, O_RDWR | O_CLOEXEC);
		if (fd < 0) {
			e = errno;
			fail(r, e, "%s: %s", o->dev, strerror(e));
			return -1;
		}
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.addr = peer;
		memcpy(a.service, o->service, sizeof(a.service));
		if (ioctl(fd, RDMX_IOC_EP_CONNECT, &a) >= 0)
			return fd;
		e = errno;
		close(fd);
		if (e == EINTR)
			continue;
		if (!connect_retryable(e) || !deadline || now_ns() >= deadline) {
			fail(r, e, "CONNECT to %s port %u service %s failed: %s",
			     o->host, o->port, o->service, strerror(e));
			return -1;
		}
		sleep_ns(200000000);
	}
}

/* Grow every RECV buffer to at least @need bytes. */
static int grow_bufs(__u8 **buf, __u32 *cap, unsigned int n,
		     __u32 need)
{
	unsigned int i;
	__u8 *p;

	for (i = 0; i < n; i++) {
		if (cap[i] >= need)
			continue;
		p = realloc(buf[i], need);
		if (!p)
			return -1;
		buf[i] = p;
		cap[i] = need;
	}
	return 0;
}

/* ---------------------------------------------------------------- recv */

struct rx {
	const struct opts *o;
	struct result *r;
	__u64 next;			/* index of the message expected next */
	__u8 *seen;			/* bitmap of intact messages received */
	__u8 *scratch;		/* an expected message, regenerated */
};

static bool seen_get(const struct rx *st, __u64 i)
{
	return st->seen[i / 8] & (1u << (i % 8));
}

static void seen_set(struct rx *st, __u64 i)
{
	st->seen[i / 8] |= 1u << (i % 8);
}

/* Is @p (@len bytes) exactly message @idx? */
static bool is_msg(struct rx *st, __u64 idx, const __u8 *p, __u32 len)
{
	const struct opts *o = st->o;

	if (idx >= o->count || msg_len(o->seed, idx, o->max_size) != len)
		return false;
	fill_msg(st->scratch, o->seed, idx, len);
	return !memcmp(st->scratch, p, len);
}

/*
 * Which message near the expected one is this headerless one, or -1. In
 * order: the expected one; an earlier one not seen yet (reordered); a later
 * one (lost), but not for an empty message, which would match any empty
 * one; an earlier one seen already (duplicated). The ones that keep the
 * expected index where it is come first, so that one ambiguous short
 * message cannot make every message after it look reordered.
 */
static __s64 find_short(struct rx *st, const __u8 *p, __u32 len)
{
	__u64 k = st->next, d;

	if (is_msg(st, k, p, len))
		return k;
	for (d = 1; d <= SEARCH_WINDOW && d <= k; d++)
		if (!seen_get(st, k - d) && is_msg(st, k - d, p, len))
			return k - d;
	for (d = 1; len && d <= SEARCH_WINDOW; d++)
		if (is_msg(st, k + d, p, len))
			return k + d;
	for (d = 1; d <= SEARCH_WINDOW && d <= k; d++)
		if (seen_get(st, k - d) && is_msg(st, k - d, p, len))
			return k - d;
	return -1;
}

/* Report a message that is not an intact copy of any message as corrupt. */
static void report_corrupt(struct rx *st, const __u8 *p, __u32 len)
{
	const struct opts *o = st->o;
	__u64 k = st->next, diff = 0, first = 0;
	char hdr[128] = "";
	__u32 want, i;

	if (len >= HDR_LEN) {
		if (get_le32(p) == MSG_MAGIC)
			snprintf(hdr, sizeof(hdr),
				 " (header: index %u, len %u, crc %s)",
				 get_le32(p + 4), get_le32(p + 8),
				 get_le32(p + 12) == crc32(p + HDR_LEN, len - HDR_LEN) ?
				 "ok" : "mismatch");
		else
			snprintf(hdr, sizeof(hdr), " (bad magic 0x%08x)",
				 get_le32(p));
	}
	if (k >= o->count) {
		fail(st->r, 0,
		     "corrupt at message %llu: expected end of stream, got an unidentifiable %u-byte message%s",
		     k, len, hdr);
		return;
	}
	want = msg_len(o->seed, k, o->max_size);
	if (want != len) {
		fail(st->r, 0,
		     "corrupt at message %llu: expected len %u, got len %u%s%s",
		     k, want, len, hdr, want > 65536 || len > 65536 ?
		     " (is --max-size the sender's?)" : "");
	} else {
		fill_msg(st->scratch, o->seed, k, len);
		for (i = 0; i < len; i++) {
			if (st->scratch[i] == p[i])
				continue;
			if (!diff++)
				first = i;
		}
		fail(st->r, 0,
		     "corrupt at message %llu: expected byte 0x%02x at offset %llu of %u, got 0x%02x; %llu bytes differ%s",
		     k, st->scratch[first], first, len, p[first], diff, hdr);
	}
	seen_set(st, k);
	st->next++;
}

static const char *expect_str(const struct rx *st, char *buf, size_t size)
{
	if (st->next >= st->o->count)
		return "end of stream";
	snprintf(buf, size, "index %llu", st->next);
	return buf;
}

/* The LISTEN argument of recv and churn: -a (any IPv4), -p, -S. */
static int listen_arg(const struct opts *o, struct rdmx_ep_addr *a,
		      struct result *r)
{
	int e;

	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	if (o->addr) {
		e = resolve(o->addr, &a->addr);
		if (e) {
			fail(r, 0, "%s: %s", o->addr, gai_strerror(e));
			return -1;
		}
	} else {
		a->addr.family = AF_INET;
	}
	a->addr.port = o->port;
	memcpy(a->service, o->service, sizeof(a->service));
	return 0;
}

/* Check one received message against the one expected next. */
static void rx_check(struct rx *st, const __u8 *p, __u32 len)
{
	__u64 k = st->next;
	__s64 h = -1;
	char exp[48];

	if (len >= HDR_LEN && get_le32(p) == MSG_MAGIC) {
		if (is_msg(st, get_le32(p + 4), p, len))
			h = get_le32(p + 4);
	} else if (len < HDR_LEN) {
		h = find_short(st, p, len);
	}
	if (h < 0) {
		report_corrupt(st, p, len);
		return;
	}
	if ((__u64)h == k) {
		seen_set(st, k);
		st->r->count++;
		st->next++;
	} else if ((__u64)h > k) {
		fail(st->r, 0,
		     "lost at message %llu: expected index %llu, got index %lld (%llu missing)",
		     k, k, h, (__u64)h - k);
		seen_set(st, h);
		st->r->count++;
		st->next = h + 1;
	} else if (seen_get(st, h)) {
		fail(st->r, 0,
		     "duplicated at message %llu: expected %s, got index %lld again",
		     k, expect_str(st, exp, sizeof(exp)), h);
	} else {
		fail(st->r, 0,
		     "reordered at message %llu: expected %s, got index %lld (late)",
		     k, expect_str(st, exp, sizeof(exp)), h);
		seen_set(st, h);
		st->r->count++;
	}
}

static int run_recv(const struct opts *o, struct result *r)
{
	struct rdmx_msg_vec vec[RDMX_XFER_MAX];
	__u8 *buf[RDMX_XFER_MAX] = { NULL };
	__u32 cap[RDMX_XFER_MAX] = { 0 };
	struct rdmx_ep_accept acc;
	struct rdmx_ep_addr a;
	struct rx st;
	int lfd = -1, fd = -1, e, i, n;
	unsigned int grows = 0;
	bool fatal = false;
	__s64 deadline;
	char peer[INET6_ADDRSTRLEN] = "?";

	memset(&st, 0, sizeof(st));
	st.o = o;
	st.r = r;
	st.seen = calloc(o->count / 8 + 1, 1);
	st.scratch = malloc((size_t)o->max_size + HDR_LEN);
	if (!st.seen || !st.scratch || grow_bufs(buf, cap, o->batch,
						 o->buf_size ? o->buf_size : 1)) {
		fail(r, ENOMEM, "out of memory");
		goto out;
	}

	lfd = open(o->dev, O_RDWR | O_CLOEXEC);
	if (lfd < 0) {
		e = errno;
		fail(r, e, "%s: %s", o->dev, strerror(e));
		goto out;
	}
	if (listen_arg(o, &a, r))
		goto out;
	if (ioctl(lfd, RDMX_IOC_EP_LISTEN, &a) < 0) {
		e = errno;
		fail(r, e, "LISTEN on %s port %u service %s failed: %s",
		     o->addr ? o->addr : "any address", o->port, o->service,
		     strerror(e));
		goto out;
	}

	/* ACCEPT blocks; the idle timeout cuts it short with SIGALRM. */
	deadline = deadline_after(o->idle_timeout);
	for (;;) {
		memset(&acc, 0, sizeof(acc));
		acc.size = sizeof(acc);
		acc.flags = RDMX_ACCEPT_CLOEXEC;
		if (deadline)
			arm_timer(deadline - now_ns());
		fd = ioctl(lfd, RDMX_IOC_EP_ACCEPT, &acc);
		e = errno;
		if (deadline)
			disarm_timer();
		if (fd >= 0)
			break;
		if (e == EINTR && !(deadline && (alarm_fired || now_ns() >= deadline)))
			continue;
		if (e == EINTR)
			e = ETIMEDOUT;
		fail(r, e, "ACCEPT failed: %s", strerror(e));
		goto out;
	}
	if (acc.peer.family == AF_INET || acc.peer.family == AF_INET6)
		inet_ntop(acc.peer.family, acc.peer.addr, peer, sizeof(peer));
	fprintf(stderr, PROG ": recv: channel from %s port %u\n", peer,
		acc.peer.port);
	/*
	 * The listening endpoint stays open until the end: while it listens
	 * the host accepts the session's reconnects.
	 */

	r->t0 = now_ns();
	for (;;) {
		if (st.next >= o->count && r->eos)
			break;
		for (i = 0; i < (int)o->batch; i++) {
			memset(&vec[i], 0, sizeof(vec[i]));
			vec[i].addr = (uintptr_t)buf[i];
			vec[i].len = cap[i];
		}
		deadline = deadline_after(o->idle_timeout);
		n = xfer_wait(fd, RDMX_IOC_EP_RECV, vec, o->batch, o->poll, false,
			      deadline, r);
		if (n < 0 && errno == EMSGSIZE && vec[0].len > cap[0] &&
		    vec[0].len <= RDMX_MSG_MAX && grows++ < 32) {
			if (grow_bufs(buf, cap, o->batch, vec[0].len)) {
				fail(r, ENOMEM, "out of memory");
				break;
			}
			continue;
		}
		if (n < 0) {
			e = errno;
			if (e == ETIMEDOUT && st.next >= o->count) {
				fprintf(stderr,
					"%s: recv: no end of stream within %g s after the last message; closing\n",
					PROG, o->idle_timeout);
				break;
			}
			if (e == ETIMEDOUT)
				fail(r, e,
				     "lost at message %llu: expected index %llu, got nothing for %g s",
				     st.next, st.next, o->idle_timeout);
			else if (e == EMSGSIZE)
				fail(r, e,
				     "RECV at message %llu failed: %s (buffer %u bytes, needs %u)",
				     st.next, strerror(e), cap[0], vec[0].len);
			else
				fail(r, e, "RECV at message %llu failed: %s",
				     st.next, strerror(e));
			break;
		}
		if (n == 0) {
			r->eos = true;
			if (st.next < o->count)
				fail(r, 0,
				     "lost at message %llu: expected index %llu, got end of stream (%llu missing)",
				     st.next, st.next, o->count - st.next);
			break;
		}
		if (n > (int)o->batch) {
			fail(r, EPROTO, "RECV returned %d for %u buffers", n, o->batch);
			break;
		}
		for (i = 0; i < n; i++) {
			if (vec[i].status == -EMSGSIZE && vec[i].len > cap[i] &&
			    vec[i].len <= RDMX_MSG_MAX && grows++ < 32) {
				/* Not taken: it comes first next time. */
				if (grow_bufs(buf, cap, o->batch, vec[i].len)) {
					fail(r, ENOMEM, "out of memory");
					fatal = true;
				}
				break;
			}
			if (vec[i].status) {
				fail(r, -vec[i].status, "RECV at message %llu: status %s",
				     st.next, errno_name(-vec[i].status));
				fatal = true;
				break;
			}
			if (vec[i].len > cap[i]) {
				fail(r, EPROTO,
				     "RECV at message %llu: len %u exceeds the buffer's %u",
				     st.next, vec[i].len, cap[i]);
				fatal = true;
				break;
			}
			r->bytes += vec[i].len;
			rx_check(&st, buf[i], vec[i].len);
		}
		if (fatal)
			break;
	}
	r->t1 = now_ns();
	if (ioctl(fd, RDMX_IOC_EP_SHUTDOWN, NULL) < 0)
		fprintf(stderr, PROG ": recv: SHUTDOWN: %s\n", strerror(errno));
out:
	if (!r->t1)
		r->t1 = now_ns();
	if (r->count < o->count && !r->errors)
		fail(r, 0, "only %llu of %llu messages received",
		     r->count, o->count);
	if (fd >= 0)
		close(fd);
	if (lfd >= 0)
		close(lfd);
	for (i = 0; i < (int)o->batch; i++)
		free(buf[i]);
	free(st.seen);
	free(st.scratch);
	return r->errors ? 1 : 0;
}

/* ---------------------------------------------------------------- send */

/* After SHUTDOWN: wait for the receiver's end of stream. */
static void wait_eos(const struct opts *o, struct result *r, int fd)
{
	__u8 *buf = malloc(STREAM_BUF);
	__u32 cap = STREAM_BUF;
	struct rdmx_msg_vec v;
	__s64 deadline = deadline_after(o->idle_timeout);
	int n, e;

	for (;;) {
		if (!buf) {
			fail(r, ENOMEM, "out of memory");
			break;
		}
		memset(&v, 0, sizeof(v));
		v.addr = (uintptr_t)buf;
		v.len = cap;
		n = xfer_wait(fd, RDMX_IOC_EP_RECV, &v, 1, false, o->nonblock,
			      deadline, r);
		if (n == 0)
			break;
		if (n > 0) {
			fail(r, 0, "unexpected %u-byte message from the receiver",
			     v.len);
			continue;
		}
		e = errno;
		if (e == EMSGSIZE && v.len > cap && v.len <= RDMX_MSG_MAX) {
			__u8 *p = realloc(buf, v.len);

			if (!p)
				free(buf);
			buf = p;
			cap = v.len;
			continue;
		}
		if (e == ETIMEDOUT)
			fail(r, e, "no end of stream from the receiver within %g s",
			     o->idle_timeout);
		else
			fail(r, e, "RECV (waiting for end of stream) failed: %s",
			     strerror(e));
		break;
	}
	free(buf);
}

static int run_send(const struct opts *o, struct result *r)
{
	struct rdmx_msg_vec vec[RDMX_XFER_MAX];
	__u8 *buf[RDMX_XFER_MAX] = { NULL };
	__u32 cap[RDMX_XFER_MAX] = { 0 };
	__u64 i = 0;
	unsigned int j, n, done;
	int fd, ret, e;

	fd = connect_ep(o, r);
	if (fd < 0)
		goto out;
	r->t0 = now_ns();
	while (i < o->count) {
		n = o->count - i < o->batch ? (unsigned int)(o->count - i) : o->batch;
		for (j = 0; j < n; j++) {
			__u32 len = msg_len(o->seed, i + j, o->max_size);

			if (grow_bufs(&buf[j], &cap[j], 1, len ? len : 1)) {
				fail(r, ENOMEM, "out of memory");
				goto shut;
			}
			fill_msg(buf[j], o->seed, i + j, len);
			memset(&vec[j], 0, sizeof(vec[j]));
			vec[j].addr = (uintptr_t)buf[j];
			vec[j].len = len;
		}
		for (done = 0; done < n; ) {
			ret = xfer_wait(fd, RDMX_IOC_EP_SEND, vec + done, n - done,
					false, o->nonblock,
					deadline_after(o->idle_timeout), r);
			if (ret < 0 || ret == 0 || (unsigned int)ret > n - done) {
				e = ret < 0 ? errno : EPROTO;
				if (ret >= 0)
					fail(r, e,
					     "SEND of %u messages at message %llu returned %d",
					     n - done, i + done, ret);
				else
					fail(r, e, "SEND at message %llu failed: %s",
					     i + done, strerror(e));
				goto shut;
			}
			for (j = done; j < done + (unsigned int)ret; j++) {
				if (vec[j].status) {
					fail(r, -vec[j].status,
					     "SEND at message %llu: status %s", i + j,
					     errno_name(-vec[j].status));
					goto shut;
				}
				r->count++;
				r->bytes += vec[j].len;
			}
			done += ret;
		}
		i += n;
		if (o->pace_us && i < o->count)
			sleep_ns((__s64)o->pace_us * 1000);
	}
	if (ioctl(fd, RDMX_IOC_EP_SHUTDOWN, NULL) < 0) {
		e = errno;
		fail(r, e, "SHUTDOWN failed: %s", strerror(e));
		goto done;
	}
	wait_eos(o, r, fd);
	goto done;
shut:
	ioctl(fd, RDMX_IOC_EP_SHUTDOWN, NULL);
done:
	r->t1 = now_ns();
	close(fd);
out:
	if (!r->t1)
		r->t1 = now_ns();
	for (j = 0; j < o->batch; j++)
		free(buf[j]);
	return r->errors ? 1 : 0;
}

/* -------------------------------------------------------------- stream */

static int run_stream(const struct opts *o, struct result *r)
{
	struct rdmx_msg_vec sv, vec[16];
	__u8 msg[STREAM_MSG_LEN], *buf[16] = { NULL };
	__u32 cap[16] = { 0 };
	struct pollfd pfd;
	__s64 last_ok, t, mark, pace_end, left;
	struct timespec ts;
	__u64 seq = 0;
	bool eos = false;
	int fd, n, e = 0, i;
	const char *what = NULL;

	fd = connect_ep(o, r);
	if (fd < 0) {
		r->t1 = now_ns();
		printf("stream: %s (%s)\n", r->err ? errno_name(r->err) : "failed",
		       r->first_error);
		return 1;
	}
	if (grow_bufs(buf, cap, 16, STREAM_BUF)) {
		fail(r, ENOMEM, "out of memory");
		close(fd);
		return 1;
	}
	last_ok = now_ns();
	r->t0 = last_ok;
	fprintf(stderr,
		PROG ": stream: connected to %s; sending until the channel fails\n",
		o->host);
	for (;;) {
		fill_msg(msg, o->seed, seq, sizeof(msg));
		memset(&sv, 0, sizeof(sv));
		sv.addr = (uintptr_t)msg;
		sv.len = sizeof(msg);
		n = xfer(fd, RDMX_IOC_EP_SEND, &sv, 1, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || sv.status) {
			e = n < 0 ? errno : sv.status ? -sv.status : EPROTO;
			what = "SEND";
			break;
		}
		last_ok = now_ns();
		seq++;
		r->count++;
		r->bytes += sizeof(msg);

		/* Take whatever came in, for --pace-us (at least once). */
		pace_end = now_ns() + (__s64)o->pace_us * 1000;
		for (;;) {
			for (i = 0; i < 16; i++) {
				memset(&vec[i], 0, sizeof(vec[i]));
				vec[i].addr = (uintptr_t)buf[i];
				vec[i].len = cap[i];
			}
			n = xfer(fd, RDMX_IOC_EP_RECV, vec, 16, RDMX_XFER_NONBLOCK);
			if (n > 0) {
				last_ok = now_ns();
				r->received += n;
				if (last_ok < pace_end)
					continue;
				break;
			}
			if (n == 0) {
				eos = true;
				break;
			}
			e = errno;
			if (e == EINTR)
				continue;
			if (e == EMSGSIZE && vec[0].len > cap[0] &&
			    vec[0].len <= RDMX_MSG_MAX) {
				if (grow_bufs(buf, cap, 16, vec[0].len)) {
					what = "RECV";
					e = ENOMEM;
					break;
				}
				continue;
			}
			if (e != EAGAIN) {
				what = "RECV";
				break;
			}
			e = 0;
			left = pace_end - now_ns();
			if (left <= 0)
				break;
			pfd.fd = fd;
			pfd.events = POLLIN;
			pfd.revents = 0;
			ts.tv_sec = left / NSEC;
			ts.tv_nsec = left % NSEC;
			if (ppoll(&pfd, 1, &ts, NULL) <= 0)
				continue;
		}
		if (eos || what)
			break;
	}
	t = now_ns();
	r->t1 = t;
	mark = atomic_load(&usr1_ns);
	if (mark < last_ok)
		mark = last_ok;
	r->detect_ms = (t - mark) / 1000000;
	r->op = eos ? "RECV" : what;
	if (eos) {
		fail(r, 0, "end of stream (the peer shut down) after %lld ms",
		     r->detect_ms);
		printf("stream: EOS after %lld ms (end of stream; sent %llu, received %llu)\n",
		       r->detect_ms, r->count, r->received);
	} else {
		r->err = e;
		printf("stream: %s after %lld ms (%s failed: %s; sent %llu, received %llu)\n",
		       errno_name(e), r->detect_ms, what, strerror(e), r->count, r->received);
		if (e != ETIMEDOUT && e != ECONNRESET)
			fail(r, e, "%s failed: %s", what, strerror(e));
		else
			snprintf(r->first_error, sizeof(r->first_error),
				 "%s failed: %s", what, strerror(e));
	}
	fflush(stdout);
	close(fd);
	for (i = 0; i < 16; i++)
		free(buf[i]);
	return r->errors ? 1 : 0;
}

/* ------------------------------------------------------------ arguments */

static void print_usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " recv [-a ADDR] [-p PORT] -S SERVICE -n COUNT [--seed S]\n"
		"                    [--max-size BYTES] [--buf-size BYTES] [--batch B] [--poll]\n"
		"                    [--idle-timeout SEC] [--json FILE] [--dev PATH]\n"
		"       " PROG " send [-p PORT] -S SERVICE -n COUNT [--seed S] [--max-size BYTES]\n"
		"                    [--batch B] [--pace-us US] [--nonblock] [--wait SEC]\n"
		"                    [--idle-timeout SEC] [--json FILE] [--dev PATH] HOST\n"
		"       " PROG " stream [-p PORT] -S SERVICE [--pace-us US] [--wait SEC]\n"
		"                    [--json FILE] [--dev PATH] HOST\n"
		"       " PROG " hold [-p PORT] -S SERVICE -n COUNT [--ports N] [--linger SEC]\n"
		"                    [--dev PATH] HOST\n"
		"\n"
		"Checks that the rdmx message service delivers reliably, in order and\n"
		"exactly once. Message i has a length and content that follow from the seed\n"
		"and i; the receiver regenerates them and reports each lost, duplicated,\n"
		"reordered or corrupt message with its index.\n"
		"\n"
		"  recv      LISTEN, ACCEPT one channel, check COUNT messages, then wait for\n"
		"            the sender's end of stream, SHUTDOWN and close\n"
		"  send      CONNECT to HOST, SEND COUNT messages, SHUTDOWN, wait for the\n"
		"            receiver's end of stream\n"
		"  stream    CONNECT to HOST and send small messages (receiving whatever\n"
		"            comes) until a SEND or RECV fails; print the errno and the ms\n"
		"            since the last success or SIGUSR1, whichever is later; exit 0\n"
		"            only for ETIMEDOUT or ECONNRESET\n"
		"  hold      CONNECT COUNT channels to HOST, all held at once; print how\n"
		"            many were opened, in how long, and the errno of the first\n"
		"            that was not; exit 0 only when all were\n"
		"  churn     LISTEN on ADDR and close, COUNT times, one endpoint at a time;\n"
		"            print how many listened and how many were refused, with the\n"
		"            first refusal's errno; exit 0 unless the device node fails\n"
		"\n"
		"  -a, --addr ADDR        recv, churn: local address to listen on (default: any IPv4;\n"
		"                         '::' for any IPv6)\n"
		"  -p, --port PORT        rdma_cm port (default 0: RDMX_DEFAULT_PORT, %d)\n"
		"  -S, --service NAME     service name, 1-%d of [A-Za-z0-9._-]\n"
		"  -n, --count COUNT      messages to send or expect\n"
		"      --seed S           PRNG seed, the same on both sides (default 1)\n"
		"      --max-size BYTES   largest message, K/M suffixes (default 4M =\n"
		"                         RDMX_MSG_MAX); recv needs the sender's value\n"
		"      --buf-size BYTES   recv: initial buffer size, grown on EMSGSIZE\n"
		"                         (default --max-size)\n"
		"      --batch B          messages per SEND/RECV, 1-%d (default 16)\n"
		"      --pace-us US       send: pause between batches (default 0);\n"
		"                         stream: between messages (default 1000)\n"
		"      --poll             recv: poll() for EPOLLIN, then non-blocking RECV\n"
		"      --nonblock         send: RDMX_XFER_NONBLOCK, poll() for EPOLLOUT on EAGAIN\n"
		"      --idle-timeout SEC recv, send: fail after SEC s without progress\n"
		"                         (default 60, 0 = never)\n"
		"      --wait SEC         send, stream: retry a failing CONNECT for SEC s\n"
		"      --ports N          hold: go round N ports from PORT on (a session\n"
		"                         each; default 1)\n"
		"      --linger SEC       hold: keep the channels open SEC s once all are\n"
		"      --json FILE        also write the result as a JSON object to FILE\n"
		"      --dev PATH         device node (default /dev/rdmx)\n"
		"  -h, --help             this text\n"
		"\n"
		"Exit status: 0 all good, 1 a failure, 2 bad arguments.\n",
		RDMX_DEFAULT_PORT, RDMX_SERVICE_LEN - 1, RDMX_XFER_MAX);
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

/* An unsigned number in [min, max], with K/M/G suffixes if @suffix. */
static bool parse_u64(const char *s, bool suffix, __u64 min, __u64 max,
		      __u64 *out)
{
	unsigned long long v;
	char *end;
	int shift = 0;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return false;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return false;
	if (suffix && *end) {
		switch (*end) {
		case 'k': case 'K':
			shift = 10;
			break;
		case 'm': case 'M':
			shift = 20;
			break;
		case 'g': case 'G':
			shift = 30;
			break;
		default:
			return false;
		}
		end++;
		if (*end == 'i' || *end == 'I')
			end++;
		if (*end == 'b' || *end == 'B')
			end++;
		if (v > (ULLONG_MAX >> shift))
			return false;
		v <<= shift;
	}
	if (*end || v < min || v > max)
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
	if (errno || end == s || *end || !isfinite(v) || v < 0 || v > 1e6)
		return false;
	*out = v;
	return true;
}

enum {
	OPT_SEED = 256, OPT_MAX_SIZE, OPT_BUF_SIZE, OPT_BATCH, OPT_PACE,
	OPT_JSON, OPT_IDLE, OPT_POLL, OPT_NONBLOCK, OPT_WAIT, OPT_DEV,
	OPT_PORTS, OPT_LINGER,
};

static const struct option long_opts[] = {
	{ "addr", required_argument, NULL, 'a' },
	{ "port", required_argument, NULL, 'p' },
	{ "service", required_argument, NULL, 'S' },
	{ "count", required_argument, NULL, 'n' },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "max-size", required_argument, NULL, OPT_MAX_SIZE },
	{ "buf-size", required_argument, NULL, OPT_BUF_SIZE },
	{ "batch", required_argument, NULL, OPT_BATCH },
	{ "pace-us", required_argument, NULL, OPT_PACE },
	{ "json", required_argument, NULL, OPT_JSON },
	{ "idle-timeout", required_argument, NULL, OPT_IDLE },
	{ "poll", no_argument, NULL, OPT_POLL },
	{ "nonblock", no_argument, NULL, OPT_NONBLOCK },
	{ "wait", required_argument, NULL, OPT_WAIT },
	{ "dev", required_argument, NULL, OPT_DEV },
	{ "ports", required_argument, NULL, OPT_PORTS },
	{ "linger", required_argument, NULL, OPT_LINGER },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Which modes take each option. */
static unsigned int opt_modes(int c)
{
	switch (c) {
	case 'a':
		return M_RECV | M_CHURN;
	case OPT_POLL: case OPT_BUF_SIZE:
		return M_RECV;
	case 'n':
		return M_RECV | M_SEND | M_HOLD | M_CHURN;
	case OPT_SEED: case OPT_MAX_SIZE: case OPT_BATCH:
	case OPT_IDLE:
		return M_RECV | M_SEND;
	case OPT_NONBLOCK:
		return M_SEND;
	case OPT_PACE: case OPT_WAIT:
		return M_SEND | M_STREAM;
	case OPT_JSON:
		return M_RECV | M_SEND | M_STREAM;
	case OPT_PORTS: case OPT_LINGER:
		return M_HOLD;
	}
	return M_RECV | M_SEND | M_STREAM | M_HOLD | M_CHURN;
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
static int parse_args(int argc, char **argv, struct opts *o)
{
	__u64 v;
	int c;

	memset(o, 0, sizeof(*o));
	o->dev = "/dev/rdmx";
	o->seed = 1;
	o->max_size = RDMX_MSG_MAX;
	o->batch = 16;
	o->idle_timeout = 60;
	o->ports = 1;

	if (argc < 2)
		return bad_arg("missing mode: recv, send, stream, hold or churn");
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		print_usage(stdout);
		return 0;
	}
	o->mode_name = argv[1];
	if (!strcmp(argv[1], "recv"))
		o->mode = M_RECV;
	else if (!strcmp(argv[1], "send"))
		o->mode = M_SEND;
	else if (!strcmp(argv[1], "stream"))
		o->mode = M_STREAM;
	else if (!strcmp(argv[1], "hold"))
		o->mode = M_HOLD;
	else if (!strcmp(argv[1], "churn"))
		o->mode = M_CHURN;
	else
		return bad_arg("unknown mode '%s': recv, send, stream, hold or churn",
			       argv[1]);

	argc--;
	argv++;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":a:p:S:n:h", long_opts, NULL)) != -1) {
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
			return bad_arg("option '%s' needs an argument",
				       argv[optind - 1]);
		if (!(opt_modes(c) & o->mode))
			return bad_arg("option --%s is not for %s", opt_name(c),
				       o->mode_name);
		switch (c) {
		case 'a':
			o->addr = optarg;
			break;
		case 'p':
			if (!parse_u64(optarg, false, 0, 65535, &v))
				return bad_arg("bad port '%s' (0-65535)", optarg);
			o->port = v;
			break;
		case 'S':
			if (!valid_service(optarg))
				return bad_arg("bad service '%s': 1-%d of [A-Za-z0-9._-]",
					       optarg, RDMX_SERVICE_LEN - 1);
			memset(o->service, 0, sizeof(o->service));
			memcpy(o->service, optarg, strlen(optarg));
			o->have_service = true;
			break;
		case 'n':
			if (!parse_u64(optarg, false, 0, UINT32_MAX, &v))
				return bad_arg("bad count '%s' (0-%u)", optarg,
					       UINT32_MAX);
			o->count = v;
			o->have_count = true;
			break;
		case OPT_SEED:
			if (!parse_u64(optarg, false, 0, UINT64_MAX, &v))
				return bad_arg("bad seed '%s'", optarg);
			o->seed = v;
			break;
		case OPT_MAX_SIZE:
			if (!parse_u64(optarg, true, 0, RDMX_MSG_MAX, &v))
				return bad_arg("bad --max-size '%s' (0-%u)", optarg,
					       RDMX_MSG_MAX);
			o->max_size = v;
			break;
		case OPT_BUF_SIZE:
			if (!parse_u64(optarg, true, 0, RDMX_MSG_MAX, &v))
				return bad_arg("bad --buf-size '%s' (0-%u)", optarg,
					       RDMX_MSG_MAX);
			o->buf_size = v;
			o->have_buf_size = true;
			break;
		case OPT_BATCH:
			if (!parse_u64(optarg, false, 1, RDMX_XFER_MAX, &v))
				return bad_arg("bad --batch '%s' (1-%d)", optarg,
					       RDMX_XFER_MAX);
			o->batch = v;
			break;
		case OPT_PACE:
			if (!parse_u64(optarg, false, 0, 3600000000ULL, &v))
				return bad_arg("bad --pace-us '%s'", optarg);
			o->pace_us = v;
			o->have_pace = true;
			break;
		case OPT_JSON:
			if (!*optarg)
				return bad_arg("empty --json file name");
			o->json = optarg;
			break;
		case OPT_IDLE:
			if (!parse_seconds(optarg, &o->idle_timeout))
				return bad_arg("bad --idle-timeout '%s'", optarg);
			break;
		case OPT_WAIT:
			if (!parse_seconds(optarg, &o->wait))
				return bad_arg("bad --wait '%s'", optarg);
			break;
		case OPT_POLL:
			o->poll = true;
			break;
		case OPT_NONBLOCK:
			o->nonblock = true;
			break;
		case OPT_DEV:
			o->dev = optarg;
			break;
		case OPT_PORTS:
			if (!parse_u64(optarg, false, 1, 4096, &v))
				return bad_arg("bad --ports '%s' (1-4096)", optarg);
			o->ports = v;
			break;
		case OPT_LINGER:
			if (!parse_seconds(optarg, &o->linger))
				return bad_arg("bad --linger '%s'", optarg);
			break;
		}
	}
	if (!o->have_service)
		return bad_arg("%s needs -S SERVICE", o->mode_name);
	if (o->mode != M_STREAM && !o->have_count)
		return bad_arg("%s needs -n COUNT", o->mode_name);
	if (o->mode == M_RECV || o->mode == M_CHURN) {
		if (optind < argc)
			return bad_arg("%s takes no HOST ('%s')", o->mode_name,
				       argv[optind]);
		if (!o->have_buf_size)
			o->buf_size = o->max_size;
	} else {
		if (optind >= argc)
			return bad_arg("%s needs HOST", o->mode_name);
		if (optind + 1 < argc)
			return bad_arg("unexpected argument '%s'", argv[optind + 1]);
		o->host = argv[optind];
	}
	if (o->mode == M_STREAM && !o->have_pace)
		o->pace_us = 1000;
	if (o->mode == M_HOLD && (o->port ? o->port : RDMX_DEFAULT_PORT) +
	    o->ports - 1 > 65535)
		return bad_arg("--ports %u from port %u passes 65535", o->ports,
			       o->port ? o->port : RDMX_DEFAULT_PORT);
	return -1;
}

/* hold: COUNT channels open at once, round --ports ports. */
static int run_hold(const struct opts *o, struct result *r)
{
	int *fds = calloc(o->count ? o->count : 1, sizeof(*fds));
	unsigned int base = o->port ? o->port : RDMX_DEFAULT_PORT;
	struct opts one = *o;
	__u64 i, n = 0;
	__s64 t0;

	if (!fds) {
		fail(r, ENOMEM, "out of memory");
		return 1;
	}
	t0 = now_ns();
	for (i = 0; i < o->count; i++) {
		one.port = base + i % o->ports;
		fds[n] = connect_ep(&one, r);
		if (fds[n] < 0)
			break;
		n++;
	}
	printf("%s: %llu of %llu channels open in %.3f s%s%s\n", PROG,
	       (unsigned long long)n, (unsigned long long)o->count,
	       (double)(now_ns() - t0) / NSEC,
	       r->err ? "; the next: " : "", r->err ? strerror(r->err) : "");
	if (i == o->count && o->linger > 0) {
		struct timespec ts = {
			.tv_sec = (time_t)o->linger,
			.tv_nsec = (long)((o->linger - (time_t)o->linger) * NSEC),
		};

		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	}
	while (n)
		close(fds[--n]);
	free(fds);
	return i == o->count ? 0 : 1;
}

/* churn: LISTEN and close, COUNT times. */
static int run_churn(const struct opts *o, struct result *r)
{
	struct rdmx_ep_addr a;
	__u64 i, listened = 0, refused = 0;
	int lfd, e, first = 0;

	if (listen_arg(o, &a, r))
		return 1;
	for (i = 0; i < o->count; i++) {
		lfd = open(o->dev, O_RDWR | O_CLOEXEC);
		if (lfd < 0) {
			e = errno;
			fail(r, e, "%s: %s", o->dev, strerror(e));
			return 1;
		}
		if (ioctl(lfd, RDMX_IOC_EP_LISTEN, &a) < 0) {
			if (!refused++)
				first = errno;
		} else {
			listened++;
		}
		close(lfd);
	}
	printf("%s: listened %llu, refused %llu of %llu%s%s\n", PROG,
	       (unsigned long long)listened, (unsigned long long)refused,
	       (unsigned long long)i, first ? "; the first: " : "",
	       first ? strerrorname_np(first) : "");
	return 0;
}

int main(int argc, char **argv)
{
	struct result r;
	struct opts o;
	int ret;

	ret = parse_args(argc, argv, &o);
	if (ret >= 0)
		return ret;
	setvbuf(stdout, NULL, _IOLBF, 0);
	crc32_init();
	memset(&r, 0, sizeof(r));
	install_handlers(true);

	switch (o.mode) {
	case M_RECV:
		ret = run_recv(&o, &r);
		print_result(&o, &r, !ret);
		break;
	case M_SEND:
		ret = run_send(&o, &r);
		print_result(&o, &r, !ret);
		break;
	case M_STREAM:
		ret = run_stream(&o, &r);
		break;
	case M_HOLD:
		ret = run_hold(&o, &r);
		break;
	case M_CHURN:
		ret = run_churn(&o, &r);
		break;
	}
	if (o.json && write_json(&o, &r))
		ret = 1;
	return ret;
}
