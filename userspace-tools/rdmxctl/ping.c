// SPDX-License-Identifier: GPL-2.0
/*
 * rdmxctl ping: round trips to the echo service every listener has, timed
 * and checked, reported as ib_send_lat reports its latencies.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rdmxctl.h"

#define PING_COUNT_DEFAULT	1000
#define PING_COUNT_MAX		10000000
#define PING_SIZE_DEFAULT	64
#define PING_INTERVAL_MAX_MS	3600000
#define PING_TIMEOUT_DEFAULT_S	30
#define PING_TIMEOUT_MAX_S	86400

enum {
	PING_OPT_COUNT,
	PING_OPT_SIZE,
	PING_OPT_PORT,
	PING_OPT_INTERVAL,
	PING_OPT_TIMEOUT,
};

static const struct rd_opt ping_opts[] = {
	{ PING_OPT_COUNT,	'c', "count", true },
	{ PING_OPT_SIZE,	's', "size", true },
	{ PING_OPT_PORT,	'p', "port", true },
	{ PING_OPT_INTERVAL,	'i', "interval", true },
	{ PING_OPT_TIMEOUT,	't', "timeout", true },
	{ 0, 0, NULL, false },
};

/**
 * struct ping - state of one ping run
 * @peer: host and port; the service is RDMX_SERVICE_ECHO
 * @count: round trips
 * @size: bytes of each message
 * @interval_ms: pause between round trips
 * @timeout_s: for connecting, and for each echo
 * @lat_ns: the round trip times
 * @tx: the message sent; @rx: the echo
 */
struct ping {
	struct rd_peer peer;
	unsigned int count;
	unsigned int size;
	unsigned int interval_ms;
	unsigned int timeout_s;
	uint64_t *lat_ns;
	unsigned char *tx;
	unsigned char *rx;
};

/* In microseconds */
struct ping_stats {
	double min, max, p50, avg, stdev, p99, p99_9;
};

static int ping_help(struct rd *rd)
{
	(void)rd;
	printf("Usage: " RD_PROG " ping [ -c COUNT ] [ -s SIZE ] [ -p PORT ] [ -i INTERVAL_MS ]\n"
	       "                    [ --timeout SEC ] HOST\n"
	       "Send COUNT messages (default %u) of SIZE bytes (default %u) one at a time to\n"
	       "the " RDMX_SERVICE_ECHO " service of the listener on HOST and PORT (default %u),\n"
	       "check each echo and print the round trip times in microseconds, as\n"
	       "ib_send_lat does. INTERVAL_MS pauses between round trips (default 0); SEC\n"
	       "bounds connecting and each echo (default %u).\n",
	       PING_COUNT_DEFAULT, PING_SIZE_DEFAULT, RDMX_DEFAULT_PORT,
	       PING_TIMEOUT_DEFAULT_S);
	return RD_EXIT_OK;
}

/* One numeric option; Return: 0, or RD_EXIT_USAGE. */
static int ping_number(const char *what, const char *s, unsigned long min,
		       unsigned long max, unsigned int *val)
{
	unsigned long v;

	if (rd_parse_ulong(s, min, max, &v))
		return rd_usage_err("ping", "bad %s '%s': expected %lu to %lu",
				    what, s, min, max);
	*val = v;
	return 0;
}

static int ping_parse(struct rd *rd, struct ping *p)
{
	unsigned long secs;
	const char *val;
	int opt, ret = 0;

	p->count = PING_COUNT_DEFAULT;
	p->size = PING_SIZE_DEFAULT;
	p->timeout_s = PING_TIMEOUT_DEFAULT_S;
	p->peer.port = RDMX_DEFAULT_PORT;
	p->peer.service = RDMX_SERVICE_ECHO;
	while (!ret &&
	       (opt = rd_getopt(rd, "ping", ping_opts, &val)) != RD_OPT_END) {
		switch (opt) {
		case PING_OPT_COUNT:
			ret = ping_number("count", val, 1, PING_COUNT_MAX,
					  &p->count);
			break;
		case PING_OPT_SIZE:
			ret = ping_number("size", val, 0, RDMX_MSG_MAX, &p->size);
			break;
		case PING_OPT_PORT:
			ret = rd_parse_port("ping", val, &p->peer.port);
			break;
		case PING_OPT_INTERVAL:
			ret = ping_number("interval", val, 0,
					  PING_INTERVAL_MAX_MS, &p->interval_ms);
			break;
		case PING_OPT_TIMEOUT:
			if (rd_parse_secs(val, PING_TIMEOUT_MAX_S, &secs))
				ret = rd_usage_err("ping", "bad timeout '%s': expected 1 to %u seconds (a bare number, or with s, m or h)",
						   val, PING_TIMEOUT_MAX_S);
			else
				p->timeout_s = secs;
			break;
		case RD_OPT_HELP:
			return -1;
		case RD_OPT_WORD:
			if (p->peer.host)
				return rd_usage_err("ping", "unexpected argument '%s'",
						    val);
			p->peer.host = val;
			break;
		default:
			return RD_EXIT_USAGE;
		}
	}
	if (!ret && !p->peer.host)
		return rd_usage_err("ping", "missing HOST");
	return ret;
}

static void ping_alarm(int sig)
{
	(void)sig;
	rd_ep_stop = 1;
}

/* SIGALRM ends a SEND or RECV that waits too long, with EINTR. */
static void ping_watchdog(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = ping_alarm;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
}

static uint64_t ping_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

/* Message @i: a fixed pattern, its first bytes the number @i. */
static void ping_stamp(struct ping *p, unsigned int i)
{
	unsigned int b;

	for (b = 0; b < p->size && b < sizeof(i); b++)
		p->tx[b] = i >> (8 * b);
}

/* Return: 0, or -1 after saying why the echo is not what was sent. */
static int ping_check(const struct ping *p, unsigned int i,
		      const struct rdmx_msg_vec *v)
{
	unsigned int b;

	if (v->len != p->size) {
		rd_err("echo %u from %s has %u bytes, not %u", i + 1,
		       p->peer.addr_str, v->len, p->size);
		return -1;
	}
	for (b = 0; b < p->size; b++)
		if (p->rx[b] != p->tx[b]) {
			rd_err("echo %u from %s differs from the message sent, first at byte %u",
			       i + 1, p->peer.addr_str, b);
			return -1;
		}
	return 0;
}

static void ping_pause(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
}

/* Say why round trip @i failed; @err from SEND (@sending) or RECV. */
static void ping_fail(const struct ping *p, unsigned int i, int err,
		      bool sending)
{
	if (err == -EINTR && rd_ep_stop) {
		rd_err("%s %u: no %s from %s within %u s",
		       sending ? "message" : "echo", i + 1,
		       sending ? "room to send" : "echo", p->peer.addr_str,
		       p->timeout_s);
		fputs("hint: is the session stuck? See '" RD_PROG " session list' on both hosts\n",
		      stderr);
	} else if (!err) {
		rd_err("%s ended the stream after %u echoes", p->peer.addr_str,
		       i);
	} else {
		rd_ep_err(-err, &p->peer, "%s %u %s %s",
			  sending ? "send message" : "receive echo", i + 1,
			  sending ? "to" : "from", p->peer.addr_str);
	}
}

/* The round trips; Return: 0, or -1 after saying why. */
static int ping_run(int fd, struct ping *p)
{
	struct rdmx_msg_vec tx = { .addr = (uintptr_t)p->tx, .len = p->size };
	struct rdmx_msg_vec rx;
	unsigned int i, done;
	int sent, ret;
	uint64_t t0;

	ping_watchdog();
	for (i = 0; i < p->count; i++) {
		if (i && p->interval_ms)
			ping_pause(p->interval_ms);
		ping_stamp(p, i);
		memset(&rx, 0, sizeof(rx));
		rx.addr = (uintptr_t)p->rx;
		rx.len = p->size;
		rd_ep_stop = 0;
		alarm(p->timeout_s);

		t0 = ping_ns();
		sent = rd_ep_send(fd, &tx, 1, &done);
		ret = sent ? sent : rd_ep_recv(fd, &rx, 1, false);
		p->lat_ns[i] = ping_ns() - t0;

		alarm(0);
		if (ret == 1) {
			if (ping_check(p, i, &rx))
				return -1;
			continue;
		}
		if (!sent && ret == -EMSGSIZE)
			rd_err("echo %u from %s has %u bytes, more than the %u sent",
			       i + 1, p->peer.addr_str, rx.len, p->size);
		else
			ping_fail(p, i, ret, sent);
		return -1;
	}
	return 0;
}

static int ping_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Newton's method: spares linking libm for one square root. */
static double ping_sqrt(double x)
{
	double r = x > 1 ? x : 1, prev = 0;
	int i;

	if (x <= 0)
		return 0;
	for (i = 0; i < 200 && r != prev; i++) {
		prev = r;
		r = (r + x / r) / 2;
	}
	return r;
}

/* The sample at percentile @num / @den, by nearest rank, of @n sorted */
static uint64_t ping_rank(const uint64_t *v, unsigned int n, uint64_t num,
			  uint64_t den)
{
	uint64_t rank = (num * n + den - 1) / den;

	return v[rank ? rank - 1 : 0];
}

static void ping_stats(struct ping *p, struct ping_stats *st)
{
	const uint64_t *v = p->lat_ns;
	unsigned int n = p->count, i;
	double sum = 0, dev = 0, d;

	qsort(p->lat_ns, n, sizeof(*v), ping_cmp);
	for (i = 0; i < n; i++)
		sum += v[i];
	st->avg = sum / n;
	for (i = 0; i < n; i++) {
		d = v[i] - st->avg;
		dev += d * d;
	}
	st->stdev = ping_sqrt(dev / n) / 1000;
	st->avg /= 1000;
	st->min = v[0] / 1000.0;
	st->max = v[n - 1] / 1000.0;
	st->p50 = (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0) / 1000;
	st->p99 = ping_rank(v, n, 99, 100) / 1000.0;
	st->p99_9 = ping_rank(v, n, 999, 1000) / 1000.0;
}

/* ib_send_lat's columns; each value is printed under its heading */
static const char *const ping_cols[] = {
	"#bytes", "#iterations", "t_min[usec]", "t_max[usec]",
	"t_typical[usec]", "t_avg[usec]", "t_stdev[usec]",
	"99% percentile[usec]", "99.9% percentile[usec]",
};

#define PING_NR_COLS	ARRAY_SIZE(ping_cols)

static void ping_row(struct rd *rd, char vals[][32], bool heading)
{
	char line[512];
	size_t i, len = 0;

	for (i = 0; i < PING_NR_COLS; i++)
		len += snprintf(line + len, sizeof(line) - len, "%s%-*s",
				i ? "   " : " ",
				i + 1 < PING_NR_COLS ? (int)strlen(ping_cols[i]) : 0,
				heading ? ping_cols[i] : vals[i]);
	print_text(rd, "%s", line);
	print_nl(rd);
}

static void ping_print(struct rd *rd, const struct ping *p,
		       const struct ping_stats *st)
{
	const double us[] = {
		st->min, st->max, st->p50, st->avg, st->stdev, st->p99,
		st->p99_9,
	};
	char vals[PING_NR_COLS][32];
	size_t i;

	if (!rd->json) {
		snprintf(vals[0], sizeof(vals[0]), "%u", p->size);
		snprintf(vals[1], sizeof(vals[1]), "%u", p->count);
		for (i = 0; i < ARRAY_SIZE(us); i++)
			snprintf(vals[i + 2], sizeof(vals[i + 2]), "%.2f", us[i]);
		ping_row(rd, vals, true);
		ping_row(rd, vals, false);
		return;
	}
	open_object(rd, NULL);
	print_str(rd, "host", NULL, p->peer.host);
	print_str(rd, "peer", NULL, p->peer.addr_str);
	print_uint(rd, "bytes", NULL, p->size);
	print_uint(rd, "iterations", NULL, p->count);
	print_float(rd, "min", NULL, st->min);
	print_float(rd, "max", NULL, st->max);
	print_float(rd, "p50", NULL, st->p50);
	print_float(rd, "avg", NULL, st->avg);
	print_float(rd, "stdev", NULL, st->stdev);
	print_float(rd, "p99", NULL, st->p99);
	print_float(rd, "p99_9", NULL, st->p99_9);
	close_object(rd);
}

static int cmd_ping_run(struct rd *rd)
{
	struct ping p = { .lat_ns = NULL };
	struct ping_stats st;
	unsigned int b;
	int fd, ret;

	ret = ping_parse(rd, &p);
	if (ret < 0)
		return ping_help(rd);
	if (ret)
		return ret;

	ret = RD_EXIT_FAIL;
	p.lat_ns = calloc(p.count, sizeof(*p.lat_ns));
	p.tx = malloc(p.size + 1);
	p.rx = malloc(p.size + 1);
	if (!p.lat_ns || !p.tx || !p.rx) {
		rd_err("out of memory");
		goto out;
	}
	for (b = 0; b < p.size; b++)
		p.tx[b] = b * 7 + 1;

	fd = rd_ep_connect(&p.peer, p.timeout_s * 1000);
	if (fd < 0)
		goto out;
	if (!ping_run(fd, &p)) {
		rd_ep_shutdown(fd);
		ping_stats(&p, &st);
		ping_print(rd, &p, &st);
		ret = RD_EXIT_OK;
	}
	close(fd);
out:
	free(p.lat_ns);
	free(p.tx);
	free(p.rx);
	return ret;
}

int cmd_ping(struct rd *rd)
{
	/* "help" only as the sole word: a host may be called anything */
	if (rd->argc == 1 && !strcmp(rd_argv(rd), "help"))
		return ping_help(rd);
	return cmd_ping_run(rd);
}
