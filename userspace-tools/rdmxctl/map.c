// SPDX-License-Identifier: GPL-2.0
/*
 * rdmxctl map and unmap: the block service's client side. An export of a
 * peer is mapped as the disk /dev/rdmxbN (RDMX_IOC_MAP) and unmapped again
 * (RDMX_IOC_UNMAP); the mapped disks are listed from
 * /sys/block/rdmxbN/rdmx/.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "rdmxctl.h"

#define MAP_PATH_MAX		4096
#define MAP_DISK_PREFIX		"rdmxb"
#define MAP_DEV_PREFIX		"/dev/" MAP_DISK_PREFIX
#define MAP_TIMEOUT_MAX_MS	3600000
#define MAP_SECTOR_SIZE		512
#define MAP_DEV_FORMS		"/dev/rdmxbN, rdmxbN or N"

enum {
	MAP_OPT_PORT,
	MAP_OPT_QUEUES,
	MAP_OPT_DEPTH,
	MAP_OPT_RO,
	MAP_OPT_LOSS_TIMEOUT,
	MAP_OPT_TIMEOUT,
	MAP_OPT_FORCE,
};

static const struct rd_opt map_opts[] = {
	{ MAP_OPT_PORT,		'p', "port", true },
	{ MAP_OPT_QUEUES,	'q', "queues", true },
	{ MAP_OPT_DEPTH,	'd', "depth", true },
	{ MAP_OPT_RO,		0, "ro", false },
	{ MAP_OPT_LOSS_TIMEOUT,	0, "loss-timeout", true },
	{ MAP_OPT_TIMEOUT,	't', "timeout", true },
	{ 0, 0, NULL, false },
};

static const struct rd_opt unmap_opts[] = {
	{ MAP_OPT_FORCE,	'f', "force", false },
	{ 0, 0, NULL, false },
};

static int map_help(struct rd *rd)
{
	(void)rd;
	printf("Usage: " RD_PROG " map [ -p PORT ] HOST[:PORT] NAME [ --queues N ] [ --depth D ] [ --ro ]\n"
	       "                   [ --loss-timeout TIME|forever ] [ --timeout TIME ]\n"
	       "       " RD_PROG " map list\n"
	       "       " RD_PROG " map show DEV\n"
	       "Map export NAME of HOST (served by the listener on PORT, default %u) as a\n"
	       "local disk and print its path, /dev/rdmxbN; or list the mapped disks with\n"
	       "their counters. N hardware queues, one connection each (1 to %d, default\n"
	       "one per CPU), of D requests each (1 to %d, default 128). --ro maps\n"
	       "read-only. I/O waits up to --loss-timeout for a lost server (default:\n"
	       "/sys/kernel/rdmx/loss_timeout_ms; at most 1h, or forever) before failing;\n"
	       "--timeout bounds the first connection (default 10s). TIME is a number with\n"
	       "a unit, ms, s, m or h (a bare number is seconds). A server that has\n"
	       "other storage under NAME when the disk reconnects fails its I/O at once.\n"
	       "Mapping needs CAP_SYS_ADMIN.\n"
	       "See also '" RD_PROG " unmap'.\n",
	       RDMX_DEFAULT_PORT, RDMX_MAP_QUEUES_MAX, RDMX_MAP_DEPTH_MAX);
	return RD_EXIT_OK;
}

static int unmap_help(struct rd *rd)
{
	(void)rd;
	printf("Usage: " RD_PROG " unmap DEV [ --force ]\n"
	       "Remove the disk DEV (/dev/rdmxbN, rdmxbN or N) that '" RD_PROG " map' made.\n"
	       "Refused while the disk is open (mounted, or held by a program), unless\n"
	       "--force: then its pending and new I/O fails with EIO and the disk goes away\n"
	       "once closed. Needs CAP_SYS_ADMIN.\n");
	return RD_EXIT_OK;
}

/**
 * rd_parse_disk() - a mapped disk as the user names it
 * @s: "/dev/rdmxbN", "rdmxbN" or "N"
 * @index: out: N
 *
 * Return: 0, or -EINVAL.
 */
int rd_parse_disk(const char *s, unsigned int *index)
{
	unsigned long v;

	if (!strncmp(s, MAP_DEV_PREFIX, strlen(MAP_DEV_PREFIX)))
		s += strlen(MAP_DEV_PREFIX);
	else if (!strncmp(s, MAP_DISK_PREFIX, strlen(MAP_DISK_PREFIX)))
		s += strlen(MAP_DISK_PREFIX);
	if (rd_parse_ulong(s, 0, UINT32_MAX, &v))
		return -EINVAL;
	/* "rdmxb01" is no disk's name */
	if (s[0] == '0' && s[1])
		return -EINVAL;
	*index = v;
	return 0;
}

/**
 * struct map_args - what "map" was told
 * @m: the ioctl's argument, filled in as the words come
 * @host: HOST
 * @name: NAME
 * @port: PORT
 */
struct map_args {
	struct rdmx_map m;
	const char *host;
	const char *name;
	unsigned int port;
	char hostbuf[256];
};

static int map_number(const char *what, const char *s, unsigned long min,
		      unsigned long max, __u32 *val)
{
	unsigned long v;

	if (rd_parse_ulong(s, min, max, &v))
		return rd_usage_err("map", "bad %s '%s': expected %lu to %lu",
				    what, s, min, max);
	*val = v;
	return 0;
}

/* A duration of 1 ms to @max ms ("@most" in words); a bare number is s. */
static int map_ms(const char *what, const char *s, uint64_t max,
		  const char *most, __u32 *val)
{
	uint64_t ms;

	if (rd_parse_ms(s, 1000, 1, max, &ms))
		return rd_usage_err("map", "bad %s '%s': expected 1ms to %s (a bare number is seconds; units ms, s, m, h)",
				    what, s, most);
	*val = ms;
	return 0;
}

static int map_opt(struct map_args *x, int opt, const char *val)
{
	switch (opt) {
	case MAP_OPT_PORT:
		return rd_parse_port("map", val, &x->port);
	case MAP_OPT_QUEUES:
		return map_number("queue count", val, 1, RDMX_MAP_QUEUES_MAX,
				  &x->m.nr_queues);
	case MAP_OPT_DEPTH:
		return map_number("depth", val, 1, RDMX_MAP_DEPTH_MAX,
				  &x->m.queue_depth);
	case MAP_OPT_RO:
		x->m.flags |= RDMX_MAP_RO;
		return 0;
	case MAP_OPT_LOSS_TIMEOUT:
		if (!strcmp(val, "forever")) {
			x->m.loss_timeout_ms = RDMX_MAP_LOSS_TIMEOUT_FOREVER;
			return 0;
		}
		return map_ms("loss timeout", val, RDMX_MAP_LOSS_TIMEOUT_MAX_MS,
			      "1h, or forever", &x->m.loss_timeout_ms);
	case MAP_OPT_TIMEOUT:
		return map_ms("timeout", val, MAP_TIMEOUT_MAX_MS, "1h",
			      &x->m.timeout_ms);
	}
	return RD_EXIT_USAGE;
}

/* Return: 0, RD_EXIT_USAGE, or -1 for help. */
static int map_parse(struct rd *rd, struct map_args *x)
{
	const char *val;
	int opt, ret = 0;

	x->port = RDMX_DEFAULT_PORT;
	while (!ret &&
	       (opt = rd_getopt(rd, "map", map_opts, &val)) != RD_OPT_END) {
		if (opt == RD_OPT_HELP)
			return -1;
		if (opt >= 0) {
			ret = map_opt(x, opt, val);
		} else if (opt != RD_OPT_WORD) {
			ret = RD_EXIT_USAGE;
		} else if (!x->host) {
			x->host = val;
		} else if (!x->name) {
			x->name = val;
			ret = rd_check_export_name("map", val);
		} else {
			ret = rd_usage_err("map", "unexpected argument '%s'",
					   val);
		}
	}
	if (ret)
		return ret;
	if (!x->host)
		return rd_usage_err("map", "missing HOST");
	if (!x->name)
		return rd_usage_err("map", "missing NAME (the export's name)");
	/* HOST:PORT, as map list prints it, names the port. */
	if (rd_host_port(x->host, x->hostbuf, sizeof(x->hostbuf), &x->port) < 0)
		return rd_usage_err("map", "bad HOST '%s': expected HOST, HOST:PORT or [ADDR]:PORT",
				    x->host);
	x->host = x->hostbuf;
	return 0;
}

/**
 * rd_map_words() - what a "map" command line names, as map parses it
 * @rd: the words after "map"; consumed
 * @host: out: HOST without a port (an IPv6 address keeps its brackets)
 * @size: bytes at @host
 * @port: out: the port: -p, HOST:PORT's, or RDMX_DEFAULT_PORT
 * @name: out: NAME, one of @rd's words
 *
 * Return: 0, RD_EXIT_USAGE after saying what is wrong, or -1 for -h.
 */
int rd_map_words(struct rd *rd, char *host, size_t size, unsigned int *port,
		 const char **name)
{
	struct map_args x = { 0 };
	int ret;

	ret = map_parse(rd, &x);
	if (ret)
		return ret;
	if (snprintf(host, size, "%s", x.host) >= (int)size)
		return rd_usage_err("map", "host name too long");
	*port = x.port;
	*name = x.name;
	return 0;
}

/* Errors after which another address of the same host may still work */
static bool map_try_next(int err)
{
	return err == ECONNREFUSED || err == ETIMEDOUT || err == ENETUNREACH ||
	       err == EHOSTUNREACH || err == EADDRNOTAVAIL ||
	       err == EAFNOSUPPORT || err == ENODEV;
}

static void map_err(int err, const struct map_args *x, const char *where)
{
	switch (err) {
	case ENOENT:
		rd_err("no export %s on %s (%s): see '" RD_PROG " export list' there",
		       x->name, x->host, where);
		return;
	case EACCES:
		rd_err("%s (%s) refused export %s: %s", x->host, where,
		       x->name, x->m.flags & RDMX_MAP_RO ?
		       "this host is not on its allow-list" :
		       "read-only export (map it with --ro), or this host is not on its allow-list");
		fprintf(stderr, "hint: see '%s export show %s' on %s\n",
			RD_PROG, x->name, x->host);
		return;
	case EBUSY:
		rd_err("%s (%s) refused to let this map write export %s: another map writes it",
		       x->host, where, x->name);
		fprintf(stderr, "hint: '%s export show %s' on %s names it; map with --ro, or export it --shared for a cluster filesystem\n",
			RD_PROG, x->name, x->host);
		return;
	case EPERM:
		rd_err("map %s of %s: %s: mapping needs CAP_SYS_ADMIN, run as root",
		       x->name, x->host, strerror(err));
		return;
	case EPROTO:
		rd_err("map %s of %s (%s): incompatible server: install the same rdmx release on both hosts",
		       x->name, x->host, where);
		return;
	case ECONNREFUSED:
		rd_err("map %s of %s (%s): connection refused: no listener an administrator added on port %u",
		       x->name, x->host, where, x->port);
		fprintf(stderr, "hint: run '" RD_PROG " listen add -p %u' on %s\n",
			x->port, x->host);
		return;
	case ETIMEDOUT:
		rd_err("map %s of %s (%s): timed out: %s did not answer",
		       x->name, x->host, where, x->host);
		fputs("hint: is it up and reachable through an RDMA device here ('" RD_PROG " doctor' on both hosts)? Or give it longer (--timeout)\n",
		      stderr);
		return;
	case ENETUNREACH:
	case EHOSTUNREACH:
	case EADDRNOTAVAIL:
	case ENODEV:
		rd_err("map %s of %s (%s): %s", x->name, x->host, where,
		       strerror(err));
		fprintf(stderr, "hint: no RDMA device here reaches %s: see '" RD_PROG " doctor' and 'ip route get'\n",
			x->host);
		return;
	}
	rd_err("map %s of %s (%s): %s", x->name, x->host, where,
	       strerror(err));
}

/* Return: 0 with x->m.addr the address that worked, or -1 after saying why. */
static int map_connect(int fd, struct map_args *x, char *where, size_t size)
{
	struct rdmx_sockaddr *addrs;
	unsigned int i, n;
	bool mapped = false;
	int err;

	if (rd_addr_resolve(x->host, x->port, &addrs, &n))
		return -1;
	for (i = 0; i < n; i++) {
		x->m.addr = addrs[i];
		rd_addr_str(&addrs[i], where, size);
		if (ioctl(fd, RDMX_IOC_MAP, &x->m) == 0) {
			mapped = true;
			break;
		}
		err = errno;
		if (i + 1 < n && map_try_next(err)) {
			rd_err("map %s of %s (%s): %s; trying the next address",
			       x->name, x->host, where, strerror(err));
			continue;
		}
		map_err(err, x, where);
		break;
	}
	free(addrs);
	return mapped ? 0 : -1;
}

static int map_add(struct rd *rd)
{
	struct map_args x = { .m.size = sizeof(x.m) };
	char where[RD_ADDRSTRLEN], dev[64];
	int fd, ret;

	ret = map_parse(rd, &x);
	if (ret < 0)
		return map_help(rd);
	if (ret)
		return ret;
	memcpy(x.m.name, x.name, strlen(x.name));

	if (x.m.loss_timeout_ms == RDMX_MAP_LOSS_TIMEOUT_FOREVER)
		fd = rd_blk_open_need(RDMX_FEATURE_BLOCK |
				      RDMX_FEATURE_BLOCK_IDENTITY,
				      "loss timeout forever");
	else
		fd = rd_blk_open();
	if (fd < 0)
		return RD_EXIT_FAIL;
	ret = map_connect(fd, &x, where, sizeof(where));
	close(fd);
	if (ret)
		return RD_EXIT_FAIL;

	snprintf(dev, sizeof(dev), MAP_DEV_PREFIX "%u", x.m.index);
	open_object(rd, NULL);
	print_str(rd, "dev", "%s", dev);
	print_uint(rd, "index", NULL, x.m.index);
	print_str(rd, "server", NULL, where);
	print_str(rd, "export", NULL, x.name);
	print_bool(rd, "read_only", NULL, x.m.flags & RDMX_MAP_RO);
	print_nl(rd);
	close_object(rd);
	return RD_EXIT_OK;
}

/* ---- map list ---- */

/* The text attributes of /sys/block/rdmxbN/rdmx, on the first line */
static const char *const map_strs[] = {
	"server",
	"export",
	"state",
};

/* The numbers, on the second line */
static const char *const map_nums[] = {
	"nr_queues",
	"queue_depth",
	"loss_timeout_ms",
	"reconnects",
	"reads",
	"writes",
	"read_bytes",
	"write_bytes",
	"in_flight",
	"errors",
	"timeouts",
	"slow",
	"requeues",
	"inline_reads",
	"cmd_batched",
	"cmd_batches",
	"imm_writes",
	"staged_writes",
};

/* The counters of each hardware queue, in its line */
static const char *const map_queue_nums[] = {
	"reads", "writes", "read_bytes", "write_bytes", "in_flight", "errors",
	"timeouts", "slow", "requeues", "inline_reads", "cmd_batched",
	"cmd_batches", "imm_writes", "staged_writes",
};

#define MAP_LAT_BUCKETS	24	/* lat_hist: [2^i, 2^(i+1)) us */

/*
 * A latency histogram (lat_hist) and the bucket bounds its median and
 * 99th percentile fall under; Return: false if unreadable.
 */
static bool map_read_hist(const char *dir, uint64_t hist[MAP_LAT_BUCKETS],
			  uint64_t *p50, uint64_t *p99)
{
	char val[512], *p = val, *end;
	uint64_t total = 0, seen = 0;
	int i;

	if (rd_object_attr(dir, "lat_hist", val, sizeof(val)) <= 0)
		return false;
	for (i = 0; i < MAP_LAT_BUCKETS; i++) {
		hist[i] = strtoull(p, &end, 10);
		if (end == p)
			return false;
		total += hist[i];
		p = end;
	}
	*p50 = *p99 = 0;
	for (i = 0; i < MAP_LAT_BUCKETS && total; i++) {
		seen += hist[i];
		if (!*p50 && seen * 2 >= total)
			*p50 = 2ULL << i;
		if (!*p99 && seen * 100 >= total * 99)
			*p99 = 2ULL << i;
	}
	return true;
}

/*
 * "latency": median and 99th percentile bounds, and the histogram (in
 * text, only @with_hist).
 */
static void map_print_latency(struct rd *rd, const char *dir, bool with_hist)
{
	uint64_t hist[MAP_LAT_BUCKETS], p50, p99;
	int i;

	if (!map_read_hist(dir, hist, &p50, &p99)) {
		print_null(rd, "latency", "latency -");
		return;
	}
	if (rd->json) {
		jsonw_name(&rd->jw, "latency");
		jsonw_start_object(&rd->jw);
		jsonw_name(&rd->jw, "p50_us_under");
		jsonw_uint(&rd->jw, p50);
		jsonw_name(&rd->jw, "p99_us_under");
		jsonw_uint(&rd->jw, p99);
		jsonw_name(&rd->jw, "hist");
		jsonw_start_array(&rd->jw);
		for (i = 0; i < MAP_LAT_BUCKETS; i++)
			jsonw_uint(&rd->jw, hist[i]);
		jsonw_end_array(&rd->jw);
		jsonw_end_object(&rd->jw);
		return;
	}
	print_text(rd, "latency p50 <%llu us p99 <%llu us",
		   (unsigned long long)p50, (unsigned long long)p99);
	if (!with_hist)
		return;
	print_text(rd, "hist");
	for (i = 0; i < MAP_LAT_BUCKETS; i++)
		print_text(rd, "%llu", (unsigned long long)hist[i]);
}

/*
 * -s: the disk's serial, its latency, and a line per hardware queue with
 * its counters and latency (JSON: "serial", "latency", "queues").
 */
static void map_print_stats(struct rd *rd, const char *rdmx)
{
	char path[MAP_PATH_MAX], val[64];
	unsigned long nq = 0, q;
	uint64_t v;
	size_t i;
	bool ok;

	print_indent(rd, 4);
	if (rd_object_attr(rdmx, "serial", val, sizeof(val)) > 0)
		print_str(rd, "serial", "serial %s", val);
	else
		print_null(rd, "serial", "serial -");
	map_print_latency(rd, rdmx, true);
	print_nl(rd);
	if (rd_object_attr(rdmx, "nr_queues", val, sizeof(val)) > 0)
		nq = strtoul(val, NULL, 10);
	open_array(rd, "queues");
	for (q = 0; q < nq && q < RDMX_MAP_QUEUES_MAX; q++) {
		if (rd_pathf(path, sizeof(path), "%s/queues/%lu", rdmx, q) ||
		    !rd_exists(path))
			continue;
		open_object(rd, NULL);
		print_indent(rd, 4);
		print_uint(rd, "queue", "queue %u:", (unsigned int)q);
		for (i = 0; i < ARRAY_SIZE(map_queue_nums); i++) {
			ok = !rd_object_u64(path, map_queue_nums[i], &v);
			print_u64_or_null(rd, map_queue_nums[i],
					  map_queue_nums[i], ok, v);
		}
		map_print_latency(rd, path, false);
		print_nl(rd);
		close_object(rd);
	}
	close_array(rd);
}

/*
 * One disk: a line with its name, path, server, export, state, size and
 * access, then an indented line of settings and counters.
 * Return: false if it went away while being read.
 */
static bool map_print(struct rd *rd, const char *disk, unsigned int index,
		      const char *dir)
{
	char rdmx[MAP_PATH_MAX], val[256], dev[300];
	uint64_t v;
	size_t i;
	bool ok;

	if (rd_pathf(rdmx, sizeof(rdmx), "%s/rdmx", dir) || !rd_exists(rdmx))
		return false;
	snprintf(dev, sizeof(dev), "/dev/%s", disk);
	open_object(rd, NULL);
	print_str(rd, "name", "%s:", disk);
	print_uint(rd, "index", NULL, index);
	print_str(rd, "dev", "%s", dev);
	for (i = 0; i < ARRAY_SIZE(map_strs); i++) {
		if (rd_object_attr(rdmx, map_strs[i], val, sizeof(val)) > 0) {
			print_str(rd, map_strs[i], NULL, val);
			print_text(rd, "%s %s", map_strs[i], val);
		} else {
			print_null(rd, map_strs[i], NULL);
			print_text(rd, "%s -", map_strs[i]);
		}
	}
	ok = !rd_object_u64(dir, "size", &v) && v <= UINT64_MAX / MAP_SECTOR_SIZE;
	print_u64_or_null(rd, "size", "size", ok, ok ? v * MAP_SECTOR_SIZE : 0);
	if (!rd_object_u64(dir, "ro", &v) && v <= 1) {
		print_bool(rd, "read_only", NULL, v);
		print_text(rd, "%s", v ? "ro" : "rw");
	} else {
		print_null(rd, "read_only", "-");
	}
	print_nl(rd);
	print_indent(rd, 4);
	for (i = 0; i < ARRAY_SIZE(map_nums); i++) {
		ok = !rd_object_u64(rdmx, map_nums[i], &v);
		print_u64_or_null(rd, map_nums[i], map_nums[i], ok, v);
	}
	print_nl(rd);
	if (rd->stats)
		map_print_stats(rd, rdmx);
	close_object(rd);
	return true;
}

/* Every rdmx disk, or with @want >= 0 only that one. */
static int map_print_all(struct rd *rd, long long want)
{
	char path[MAP_PATH_MAX], dir[MAP_PATH_MAX];
	struct dirent **list;
	unsigned int index;
	int i, n, found = 0;

	if (rd_pathf(path, sizeof(path), "%s/kernel/rdmx", rd_sysfs()) ||
	    !rd_exists(path)) {
		rd_err("%s: the rdmx module is not loaded: try: modprobe rdmx",
		       path);
		return RD_EXIT_FAIL;
	}
	if (rd_pathf(path, sizeof(path), "%s/block", rd_sysfs())) {
		rd_err("%s/block: %s", rd_sysfs(), strerror(ENAMETOOLONG));
		return RD_EXIT_FAIL;
	}
	n = rd_scandir(path, &list);
	if (n == -ENOENT) {
		n = 0;
		list = NULL;
	} else if (n < 0) {
		rd_err("%s: %s", path, strerror(-n));
		return RD_EXIT_FAIL;
	}
	open_array(rd, NULL);
	for (i = 0; i < n; i++) {
		const char *name = list[i]->d_name;

		if (strncmp(name, MAP_DISK_PREFIX, strlen(MAP_DISK_PREFIX)) ||
		    rd_parse_disk(name, &index) ||
		    (want >= 0 && index != want) ||
		    rd_pathf(dir, sizeof(dir), "%s/%s", path, name))
			continue;
		if (map_print(rd, name, index, dir))
			found++;
	}
	close_array(rd);
	rd_freedir(list, n);
	if (want >= 0 && !found) {
		rd_err("no " MAP_DEV_PREFIX "%lld mapped (see '" RD_PROG " map list')",
		       want);
		return RD_EXIT_FAIL;
	}
	return RD_EXIT_OK;
}

static int map_list(struct rd *rd)
{
	int ret = rd_no_more_args(rd, "map");

	return ret ? ret : map_print_all(rd, -1);
}

static int map_show(struct rd *rd)
{
	unsigned int index;
	const char *dev;
	int ret;

	if (rd_no_arg(rd))
		return map_print_all(rd, -1);
	dev = rd_argv(rd);
	if (rd_parse_disk(dev, &index))
		return rd_usage_err("map", "bad device '%s': expected %s", dev,
				    MAP_DEV_FORMS);
	rd_arg_inc(rd);
	ret = rd_no_more_args(rd, "map");
	return ret ? ret : map_print_all(rd, index);
}

int cmd_map(struct rd *rd)
{
	const char *word;

	/* Any other first word is HOST (or an option): "map HOST NAME". */
	if (!rd_no_arg(rd)) {
		word = rd_argv(rd);
		if (!strcmp(word, "list") || !strcmp(word, "show") ||
		    !strcmp(word, "help"))
			rd_arg_inc(rd);
		if (!strcmp(word, "list"))
			return map_list(rd);
		if (!strcmp(word, "show"))
			return map_show(rd);
		if (!strcmp(word, "help"))
			return map_help(rd);
	}
	return map_add(rd);
}

/* ---- unmap ---- */

int cmd_unmap(struct rd *rd)
{
	struct rdmx_unmap um = { .size = sizeof(um) };
	const char *val, *dev = NULL;
	int opt, fd, ret;

	while ((opt = rd_getopt(rd, "unmap", unmap_opts, &val)) != RD_OPT_END) {
		switch (opt) {
		case MAP_OPT_FORCE:
			um.flags |= RDMX_UNMAP_FORCE;
			break;
		case RD_OPT_HELP:
			return unmap_help(rd);
		case RD_OPT_WORD:
			if (dev)
				return rd_usage_err("unmap", "unexpected argument '%s'",
						    val);
			if (!strcmp(val, "help"))
				return unmap_help(rd);
			if (rd_parse_disk(val, &um.index))
				return rd_usage_err("unmap", "bad device '%s': expected %s",
						    val, MAP_DEV_FORMS);
			dev = val;
			break;
		default:
			return RD_EXIT_USAGE;
		}
	}
	if (!dev)
		return rd_usage_err("unmap", "missing DEV (" MAP_DEV_PREFIX "N, see '" RD_PROG " map list')");

	fd = rd_blk_open();
	if (fd < 0)
		return RD_EXIT_FAIL;
	ret = ioctl(fd, RDMX_IOC_UNMAP, &um);
	if (ret < 0 && (errno == ENOENT || errno == ENODEV || errno == ENXIO))
		rd_err("no " MAP_DEV_PREFIX "%u mapped (see '" RD_PROG " map list')",
		       um.index);
	else if (ret < 0 && errno == EBUSY)
		rd_err(MAP_DEV_PREFIX "%u busy: open by a user (mounted, or held by a program): close it, or use --force to fail its I/O",
		       um.index);
	else if (ret < 0 && (errno == EPERM || errno == EACCES))
		rd_err("unmap " MAP_DEV_PREFIX "%u: %s: needs CAP_SYS_ADMIN, run as root",
		       um.index, strerror(errno));
	else if (ret < 0)
		rd_err("unmap " MAP_DEV_PREFIX "%u: %s", um.index,
		       strerror(errno));
	close(fd);
	return ret < 0 ? RD_EXIT_FAIL : RD_EXIT_OK;
}
