// SPDX-License-Identifier: GPL-2.0
/*
 * rdmxctl msg: send files as messages to a service on another host, and
 * receive them into a directory.
 *
 * "msg send" counts as done only when the receiver has ended its side of
 * the stream, after taking every message: the SEND ioctl returns once
 * messages are queued, not when they are read.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rdmxctl.h"

#define MSG_TIMEOUT_DEFAULT_S	30
#define MSG_TIMEOUT_MAX_S	86400
/* Messages and bytes one SEND ioctl carries at most */
#define MSG_BATCH		64
#define MSG_BATCH_BYTES		(16U << 20)
/* Receive buffers: the first size, and the most bytes of them at once */
#define MSG_RECV_BUF_MIN	(64U << 10)
#define MSG_RECV_BYTES		(16U << 20)
#define MSG_RECV_BATCH		16

enum {
	MSG_OPT_ADDR,
	MSG_OPT_PORT,
	MSG_OPT_TIMEOUT,
	MSG_OPT_COUNT,
	MSG_OPT_DIR,
};

static const struct rd_opt msg_send_opts[] = {
	{ MSG_OPT_PORT,		'p', "port", true },
	{ MSG_OPT_TIMEOUT,	't', "timeout", true },
	{ 0, 0, NULL, false },
};

static const struct rd_opt msg_recv_opts[] = {
	{ MSG_OPT_ADDR,		'a', "addr", true },
	{ MSG_OPT_PORT,		'p', "port", true },
	{ MSG_OPT_COUNT,	'c', "count", true },
	{ MSG_OPT_DIR,		'd', "dir", true },
	{ 0, 0, NULL, false },
};

static int msg_send_help(struct rd *rd)
{
	(void)rd;
	printf("Usage: " RD_PROG " msg send [ -p PORT ] [ --timeout SEC ] HOST SERVICE FILE...\n"
	       "Connect to SERVICE on HOST (a name, IPv4 or IPv6 address) and send each\n"
	       "FILE as one message, in order; '-' is standard input. A file may hold at\n"
	       "most %u bytes. Then wait up to SEC seconds (default %u) for the receiver\n"
	       "to end its side of the stream, which says it got every message.\n"
	       "PORT defaults to %u.\n",
	       RDMX_MSG_MAX, MSG_TIMEOUT_DEFAULT_S, RDMX_DEFAULT_PORT);
	return RD_EXIT_OK;
}

static int msg_recv_help(struct rd *rd)
{
	(void)rd;
	printf("Usage: " RD_PROG " msg recv [ -a ADDR ] [ -p PORT ] SERVICE --count N --dir DIR\n"
	       "Listen for SERVICE on ADDR (default 0.0.0.0, any IPv4 address; '::' is any\n"
	       "IPv6 address) and PORT (default %u), accept one channel, and write its\n"
	       "first N messages to DIR/000001, DIR/000002, ... Each file appears whole,\n"
	       "by rename. Fails if the sender ends its stream before N messages.\n",
	       RDMX_DEFAULT_PORT);
	return RD_EXIT_OK;
}

static int msg_help(struct rd *rd)
{
	msg_send_help(rd);
	putchar('\n');
	return msg_recv_help(rd);
}

static double msg_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- files ---- */

/**
 * struct msg_file - one FILE of "msg send"
 * @name: as given; "-" is standard input
 * @data: its bytes, when read already (standard input, pipes), else NULL
 * @len: bytes at @data
 */
struct msg_file {
	const char *name;
	char *data;
	size_t len;
};

static const char *msg_file_name(const struct msg_file *f)
{
	return strcmp(f->name, "-") ? f->name : "(standard input)";
}

/* Read all of @fd into a new buffer; Return: 0, -errno, or -EFBIG past @max. */
static int msg_read_fd(int fd, size_t max, char **data, size_t *len)
{
	size_t room = 0, have = 0;
	char *buf = NULL, *p;
	ssize_t n;

	for (;;) {
		if (have == room) {
			room = room ? room * 2 : 65536;
			if (room > (size_t)max + 1)
				room = (size_t)max + 1;
			p = realloc(buf, room);
			if (!p) {
				free(buf);
				return -ENOMEM;
			}
			buf = p;
		}
		if (have == room) {	/* max + 1 bytes read: too long */
			free(buf);
			return -EFBIG;
		}
		n = read(fd, buf + have, room - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			n = -errno;
			free(buf);
			return n;
		}
		if (!n)
			break;
		have += n;
	}
	*data = buf;
	*len = have;
	return 0;
}

/* @size: its size, or 0 when only known to be too big */
static void msg_too_big(const struct msg_file *f, intmax_t size)
{
	char has[32] = "";

	if (size)
		snprintf(has, sizeof(has), "%jd bytes, ", size);
	rd_err("%s: %smore than the largest message (%u bytes)",
	       msg_file_name(f), has, RDMX_MSG_MAX);
}

/*
 * Check one FILE before connecting: it exists, is no directory, and is no
 * larger than a message. Standard input and other files that are no
 * regular files are read now, since they can be read only once.
 */
static int msg_file_check(struct msg_file *f)
{
	bool in = !strcmp(f->name, "-");
	struct stat st;
	int fd, err = 0;

	fd = in ? STDIN_FILENO : open(f->name, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		rd_err("%s: %s", msg_file_name(f), strerror(errno));
		if (fd >= 0)
			close(fd);
		return RD_EXIT_FAIL;
	}
	if (S_ISDIR(st.st_mode)) {
		err = -EISDIR;
	} else if (S_ISREG(st.st_mode) && st.st_size > RDMX_MSG_MAX) {
		msg_too_big(f, st.st_size);
		err = -EFBIG;
	} else if (in || !S_ISREG(st.st_mode)) {
		err = msg_read_fd(fd, RDMX_MSG_MAX, &f->data, &f->len);
		if (err == -EFBIG)
			msg_too_big(f, 0);
	}
	if (!in)
		close(fd);
	if (err && err != -EFBIG)
		rd_err("%s: %s", msg_file_name(f), strerror(-err));
	return err ? RD_EXIT_FAIL : 0;
}

static int msg_files_check(struct msg_file *files, unsigned int n)
{
	unsigned int i, stdin_uses = 0;

	for (i = 0; i < n; i++)
		stdin_uses += !strcmp(files[i].name, "-");
	if (stdin_uses > 1)
		return rd_usage_err("msg", "standard input ('-') can be sent only once");
	for (i = 0; i < n; i++)
		if (msg_file_check(&files[i]))
			return RD_EXIT_FAIL;
	return 0;
}

/* The bytes of @f into f->data, if not there yet; Return: 0, or -1 after saying why. */
static int msg_file_load(struct msg_file *f)
{
	int fd, err;

	if (f->data)
		return 0;
	fd = open(f->name, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rd_err("%s: %s", f->name, strerror(errno));
		return -1;
	}
	err = msg_read_fd(fd, RDMX_MSG_MAX, &f->data, &f->len);
	close(fd);
	if (err == -EFBIG)
		msg_too_big(f, 0);
	else if (err)
		rd_err("%s: %s", f->name, strerror(-err));
	return err ? -1 : 0;
}

static void msg_file_unload(struct msg_file *f)
{
	free(f->data);
	f->data = NULL;
}

/* ---- send ---- */

/**
 * struct msg_send - state of one "msg send"
 * @peer: host, port and service
 * @timeout_s: for connecting, and for the receiver to end its stream
 * @files: the FILEs
 * @nr_files: entries in @files
 * @bytes: bytes sent
 */
struct msg_send {
	struct rd_peer peer;
	unsigned int timeout_s;
	struct msg_file *files;
	unsigned int nr_files;
	uint64_t bytes;
};

static int msg_send_parse(struct rd *rd, struct msg_send *ms)
{
	const char *val, *port = NULL, *timeout = NULL;
	unsigned long v;
	int opt, ret;

	ms->files = calloc(rd->argc > 0 ? rd->argc : 1, sizeof(*ms->files));
	if (!ms->files) {
		rd_err("out of memory");
		return RD_EXIT_FAIL;
	}
	while ((opt = rd_getopt(rd, "msg", msg_send_opts, &val)) != RD_OPT_END) {
		switch (opt) {
		case MSG_OPT_PORT:
			port = val;
			break;
		case MSG_OPT_TIMEOUT:
			timeout = val;
			break;
		case RD_OPT_HELP:
			return -1;
		case RD_OPT_WORD:
			if (!ms->peer.host)
				ms->peer.host = val;
			else if (!ms->peer.service)
				ms->peer.service = val;
			else
				ms->files[ms->nr_files++].name = val;
			break;
		default:
			return RD_EXIT_USAGE;
		}
	}
	if (!ms->peer.host)
		return rd_usage_err("msg", "msg send: missing HOST");
	if (!ms->peer.service)
		return rd_usage_err("msg", "msg send: missing SERVICE");
	if (!ms->nr_files)
		return rd_usage_err("msg", "msg send: missing FILE");
	ret = rd_check_service("msg", ms->peer.service);
	if (ret)
		return ret;
	ms->peer.port = RDMX_DEFAULT_PORT;
	if (port) {
		ret = rd_parse_port("msg", port, &ms->peer.port);
		if (ret)
			return ret;
	}
	ms->timeout_s = MSG_TIMEOUT_DEFAULT_S;
	if (timeout) {
		if (rd_parse_secs(timeout, MSG_TIMEOUT_MAX_S, &v))
			return rd_usage_err("msg", "bad timeout '%s': expected 1 to %u seconds (a bare number, or with s, m or h)",
					    timeout, MSG_TIMEOUT_MAX_S);
		ms->timeout_s = v;
	}
	return 0;
}

/* Send files [first, first + n), loaded, in one go; Return: 0, or -1 after saying why. */
static int msg_send_batch(int fd, struct msg_send *ms, unsigned int first,
			  unsigned int n)
{
	struct rdmx_msg_vec vec[MSG_BATCH];
	unsigned int i, done;
	int err;

	memset(vec, 0, sizeof(vec));
	for (i = 0; i < n; i++) {
		vec[i].addr = (uintptr_t)ms->files[first + i].data;
		vec[i].len = ms->files[first + i].len;
	}
	err = rd_ep_send(fd, vec, n, &done);
	for (i = 0; i < done; i++)
		ms->bytes += vec[i].len;
	if (!err)
		return 0;
	rd_ep_err(-err, &ms->peer, "send %s (message %u) to %s service %s",
		  msg_file_name(&ms->files[first + done]), first + done + 1,
		  ms->peer.addr_str, ms->peer.service);
	return -1;
}

/* Send every file, batching up to MSG_BATCH messages or MSG_BATCH_BYTES. */
static int msg_send_files(int fd, struct msg_send *ms)
{
	unsigned int i, first = 0;
	size_t bytes = 0;
	int err = 0;

	for (i = 0; i < ms->nr_files && !err; i++) {
		if (msg_file_load(&ms->files[i])) {
			err = -1;
			break;
		}
		bytes += ms->files[i].len;
		if (i + 1 - first == MSG_BATCH || bytes >= MSG_BATCH_BYTES ||
		    i + 1 == ms->nr_files) {
			err = msg_send_batch(fd, ms, first, i + 1 - first);
			while (first <= i)
				msg_file_unload(&ms->files[first++]);
			bytes = 0;
		}
	}
	while (first < ms->nr_files)
		msg_file_unload(&ms->files[first++]);
	return err;
}

/*
 * After our SHUTDOWN, wait for the receiver to end its side: RECV gives
 * 0. Messages it sends meanwhile are read and dropped, and counted.
 */
static int msg_wait_end(int fd, struct msg_send *ms)
{
	double deadline = msg_now() + ms->timeout_s;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct rdmx_msg_vec vec;
	unsigned int extra = 0;
	size_t size = 4096;
	char *buf = NULL;
	int ret, left_ms;

	for (;;) {
		if (!buf)
			buf = malloc(size);
		if (!buf) {
			ret = -ENOMEM;
			break;
		}
		left_ms = (deadline - msg_now()) * 1000;
		if (left_ms <= 0) {
			ret = -ETIMEDOUT;
			break;
		}
		ret = poll(&pfd, 1, left_ms);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret <= 0) {
			ret = ret ? -errno : -ETIMEDOUT;
			break;
		}
		memset(&vec, 0, sizeof(vec));
		vec.addr = (uintptr_t)buf;
		vec.len = size;
		ret = rd_ep_recv(fd, &vec, 1, true);
		if (ret == -EAGAIN || ret == -EINTR)
			continue;
		if (ret == -EMSGSIZE && vec.len > size && vec.len <= RDMX_MSG_MAX) {
			free(buf);
			buf = NULL;
			size = vec.len;
			continue;
		}
		if (ret <= 0)
			break;
		extra += ret;
	}
	free(buf);
	if (extra)
		fprintf(stderr, RD_PROG ": warning: %s sent %u message%s back; dropped\n",
			ms->peer.addr_str, extra, extra == 1 ? "" : "s");
	if (!ret)
		return 0;
	if (ret == -ETIMEDOUT) {
		rd_err("%s did not end its stream within %u s: not known whether service %s received every message",
		       ms->peer.addr_str, ms->timeout_s, ms->peer.service);
		fprintf(stderr, "hint: is the receiver still reading, or gone? See '" RD_PROG " session list'; wait longer with --timeout\n");
	} else {
		rd_ep_err(-ret, &ms->peer, "wait for %s to end its stream",
			  ms->peer.addr_str);
	}
	return -1;
}

static void msg_send_summary(struct rd *rd, const struct msg_send *ms,
			     double secs)
{
	open_object(rd, NULL);
	print_text(rd, "sent");
	print_uint(rd, "messages", ms->nr_files == 1 ? "%u message," :
						       "%u messages,", ms->nr_files);
	print_u64(rd, "bytes", ms->bytes == 1 ? "%" PRIu64 " byte," :
						"%" PRIu64 " bytes,", ms->bytes);
	print_str(rd, "host", NULL, ms->peer.host);
	print_str(rd, "peer", "to %s", ms->peer.addr_str);
	print_str(rd, "service", "service %s", ms->peer.service);
	print_float(rd, "seconds", "in %.3f s", secs);
	print_nl(rd);
	close_object(rd);
}

static int msg_send(struct rd *rd)
{
	struct msg_send ms = { .files = NULL };
	double start;
	int fd, ret;

	ret = msg_send_parse(rd, &ms);
	if (ret < 0) {
		ret = msg_send_help(rd);
		goto out;
	}
	if (!ret)
		ret = msg_files_check(ms.files, ms.nr_files);
	if (ret)
		goto out;

	start = msg_now();
	ret = RD_EXIT_FAIL;
	fd = rd_ep_connect(&ms.peer, ms.timeout_s * 1000);
	if (fd < 0)
		goto out;
	if (msg_send_files(fd, &ms))
		goto out_close;
	ret = rd_ep_shutdown(fd);
	if (ret) {
		rd_ep_err(-ret, &ms.peer, "shut down the stream to %s",
			  ms.peer.addr_str);
		ret = RD_EXIT_FAIL;
		goto out_close;
	}
	ret = RD_EXIT_FAIL;
	if (msg_wait_end(fd, &ms))
		goto out_close;
	msg_send_summary(rd, &ms, msg_now() - start);
	ret = RD_EXIT_OK;
out_close:
	close(fd);
out:
	if (ms.files)
		while (ms.nr_files)
			msg_file_unload(&ms.files[--ms.nr_files]);
	free(ms.files);
	return ret;
}

/* ---- recv ---- */

/**
 * struct msg_recv - state of one "msg recv"
 * @peer: service and port in; the sender's address once accepted
 * @local: address to listen on
 * @count: messages to receive
 * @dir: where to write them
 * @dfd: @dir, open
 * @got: messages written
 * @bytes: bytes written
 */
struct msg_recv {
	struct rd_peer peer;
	struct rdmx_sockaddr local;
	unsigned int count;
	const char *dir;
	int dfd;
	unsigned int got;
	uint64_t bytes;
};

static int msg_recv_parse(struct rd *rd, struct msg_recv *mr)
{
	const char *val, *addr = NULL, *port = NULL, *count = NULL;
	unsigned long v;
	int opt, ret;

	while ((opt = rd_getopt(rd, "msg", msg_recv_opts, &val)) != RD_OPT_END) {
		switch (opt) {
		case MSG_OPT_ADDR:
			addr = val;
			break;
		case MSG_OPT_PORT:
			port = val;
			break;
		case MSG_OPT_COUNT:
			count = val;
			break;
		case MSG_OPT_DIR:
			mr->dir = val;
			break;
		case RD_OPT_HELP:
			return -1;
		case RD_OPT_WORD:
			if (mr->peer.service)
				return rd_usage_err("msg", "unexpected argument '%s'",
						    val);
			mr->peer.service = val;
			break;
		default:
			return RD_EXIT_USAGE;
		}
	}
	if (!mr->peer.service)
		return rd_usage_err("msg", "msg recv: missing SERVICE");
	if (!count)
		return rd_usage_err("msg", "msg recv: missing --count N");
	if (!mr->dir)
		return rd_usage_err("msg", "msg recv: missing --dir DIR");
	ret = rd_check_service("msg", mr->peer.service);
	if (ret)
		return ret;
	if (rd_parse_ulong(count, 1, UINT32_MAX, &v))
		return rd_usage_err("msg", "bad count '%s': expected 1 to %u",
				    count, UINT32_MAX);
	mr->count = v;
	return rd_listen_addr("msg", addr, port, &mr->peer.port, &mr->local);
}

/* Write message @k to DIR/<k> through a temporary file and rename(). */
static int msg_write(struct msg_recv *mr, unsigned int k, const char *buf,
		     size_t len)
{
	char name[24], tmp[32];
	int fd, err;

	snprintf(name, sizeof(name), "%06u", k);
	snprintf(tmp, sizeof(tmp), ".%06u.tmp", k);
	fd = openat(mr->dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		    0666);
	if (fd < 0) {
		rd_err("%s/%s: %s", mr->dir, tmp, strerror(errno));
		return -1;
	}
	err = rd_write_all(fd, buf, len);
	if (close(fd) && !err)
		err = -errno;
	if (!err && renameat(mr->dfd, tmp, mr->dfd, name))
		err = -errno;
	if (!err)
		return 0;
	unlinkat(mr->dfd, tmp, 0);
	rd_err("%s/%s: %s", mr->dir, name, strerror(-err));
	return -1;
}

/* Buffers of @size bytes that fit in MSG_RECV_BYTES, at least one */
static unsigned int msg_recv_batch(size_t size)
{
	size_t n = MSG_RECV_BYTES / size;

	return n < 1 ? 1 : n > MSG_RECV_BATCH ? MSG_RECV_BATCH : n;
}

/* Receive and write mr->count messages; Return: 0, or -1 after saying why. */
static int msg_recv_all(int fd, struct msg_recv *mr)
{
	struct rdmx_msg_vec vec[MSG_RECV_BATCH];
	size_t size = MSG_RECV_BUF_MIN;
	unsigned int i, n;
	char *buf = NULL;
	int ret = 0;

	while (mr->got < mr->count) {
		n = msg_recv_batch(size);
		if (n > mr->count - mr->got)
			n = mr->count - mr->got;
		if (!buf)
			buf = malloc(n * size);
		if (!buf) {
			rd_err("out of memory");
			return -1;
		}
		memset(vec, 0, sizeof(vec));
		for (i = 0; i < n; i++) {
			vec[i].addr = (uintptr_t)(buf + i * size);
			vec[i].len = size;
		}
		ret = rd_ep_recv(fd, vec, n, false);
		if (ret == -EMSGSIZE && vec[0].len > size &&
		    vec[0].len <= RDMX_MSG_MAX) {
			/* The message waits: take it with a bigger buffer. */
			size = (vec[0].len + 4095) & ~(size_t)4095;
			free(buf);
			buf = NULL;
			continue;
		}
		if (ret == -EMSGSIZE)
			ret = -EPROTO;	/* no size, or a bigger one than allowed */
		if (ret <= 0)
			break;
		for (i = 0; i < (unsigned int)ret; i++) {
			if (vec[i].len > size) {
				ret = -EPROTO;
				break;
			}
			if (msg_write(mr, mr->got + 1, buf + i * size,
				      vec[i].len)) {
				free(buf);
				return -1;
			}
			mr->got++;
			mr->bytes += vec[i].len;
		}
		if (ret < 0)
			break;
	}
	free(buf);
	if (mr->got == mr->count)
		return 0;
	if (!ret)
		rd_err("%s ended the stream after %u of %u messages",
		       mr->peer.addr_str, mr->got, mr->count);
	else
		rd_ep_err(-ret, &mr->peer, "receive message %u of %u from %s",
			  mr->got + 1, mr->count, mr->peer.addr_str);
	return -1;
}

static void msg_recv_summary(struct rd *rd, const struct msg_recv *mr)
{
	open_object(rd, NULL);
	print_text(rd, "received");
	print_uint(rd, "messages", mr->got == 1 ? "%u message," :
						  "%u messages,", mr->got);
	print_u64(rd, "bytes", mr->bytes == 1 ? "%" PRIu64 " byte," :
						"%" PRIu64 " bytes,", mr->bytes);
	print_str(rd, "peer", "from %s", mr->peer.addr_str);
	print_str(rd, "service", "service %s", mr->peer.service);
	print_str(rd, "dir", "into %s", mr->dir);
	print_nl(rd);
	close_object(rd);
}

static int msg_recv(struct rd *rd)
{
	struct msg_recv mr = { .dfd = -1 };
	int lfd, fd, ret;

	ret = msg_recv_parse(rd, &mr);
	if (ret < 0)
		return msg_recv_help(rd);
	if (ret)
		return ret;
	ret = RD_EXIT_FAIL;
	mr.dfd = open(mr.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (mr.dfd < 0 || faccessat(mr.dfd, ".", W_OK | X_OK, AT_EACCESS)) {
		rd_err("%s: %s", mr.dir, strerror(errno));
		goto out;
	}

	lfd = rd_ep_listen(&mr.local, mr.peer.service);
	if (lfd < 0)
		goto out;
	fd = rd_ep_accept(lfd, &mr.peer);
	close(lfd);	/* one channel only: refuse the next */
	if (fd < 0)
		goto out;
	mr.peer.host = mr.peer.addr_str;
	if (!msg_recv_all(fd, &mr)) {
		/* Ends the sender's wait: it knows we have it all. */
		rd_ep_shutdown(fd);
		msg_recv_summary(rd, &mr);
		ret = RD_EXIT_OK;
	}
	close(fd);
out:
	if (mr.dfd >= 0)
		close(mr.dfd);
	return ret;
}

static int msg_none(struct rd *rd)
{
	(void)rd;
	return rd_usage_err("msg", "missing command: send or recv");
}

static const struct rd_cmd msg_cmds[] = {
	{ NULL,		msg_none },
	{ "help",	msg_help },
	{ "recv",	msg_recv },
	{ "send",	msg_send },
	{ NULL,		NULL },
};

int cmd_msg(struct rd *rd)
{
	return rd_exec_cmd(rd, msg_cmds, "msg");
}
