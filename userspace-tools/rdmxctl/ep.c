// SPDX-License-Identifier: GPL-2.0
/*
 * Endpoints of the rdmx message service: each open /dev/rdmx is one.
 * Connecting, listening, accepting, sending and receiving whole messages,
 * and explaining their errors to an operator.
 */
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "rdmxctl.h"

/* Set by a signal handler (ping's timeout): stop retrying after EINTR. */
volatile sig_atomic_t rd_ep_stop;

/* Print the hint for @err, if there is one worth giving. */
static void rd_ep_hint(int err, const struct rd_peer *p)
{
	bool echo = p && p->service && !strcmp(p->service, RDMX_SERVICE_ECHO);
	const char *host = p && p->host ? p->host : "the peer";
	unsigned int port = p && p->port ? p->port : RDMX_DEFAULT_PORT;

	switch (err) {
	case ECONNREFUSED:
		if (echo)
			fprintf(stderr, "hint: nothing listens on %s port %u: run '" RD_PROG " listen add -p %u' there\n",
				host, port, port);
		else if (p && p->serve_cmd)
			fprintf(stderr, "hint: nothing on %s port %u serves '%s': run '" RD_PROG " %s' there, or check the port and service name\n",
				host, port, p->service, p->serve_cmd);
		else
			fprintf(stderr, "hint: nothing on %s port %u serves '%s': run '" RD_PROG " msg recv -p %u %s ...' there, or check the port and service name\n",
				host, port, p ? p->service : "?", port,
				p ? p->service : "SERVICE");
		break;
	case ETIMEDOUT:
		fprintf(stderr, "hint: %s did not answer in time: is it up, reachable through an RDMA device here ('" RD_PROG " doctor' on both hosts) and not firewalled? Or give it longer (--timeout)\n",
			host);
		break;
	case ECONNRESET:
		fprintf(stderr, "hint: the session to %s was closed: by '" RD_PROG " session close', the peer going away or unloading rdmx, or a link failing; see '" RD_PROG " session list' and dmesg on both hosts\n",
			host);
		break;
	case EPERM:
	case EACCES:
		fputs("hint: this needs CAP_NET_ADMIN: run as root\n", stderr);
		break;
	case ENETUNREACH:
	case EHOSTUNREACH:
	case EADDRNOTAVAIL:
	case ENODEV:
		if (p && p->host)
			fprintf(stderr, "hint: no RDMA device here reaches %s: see '" RD_PROG " doctor' and 'ip route get'\n",
				host);
		else
			fputs("hint: is the address on an RDMA device of this host? See '" RD_PROG " doctor' and 'ip addr'\n",
			      stderr);
		break;
	}
}

/**
 * rd_ep_err() - say what failed, why (strerror), and a hint
 * @err: positive errno
 * @peer: what the endpoint talks to, for the hint; may be NULL
 * @fmt: what failed ("connect to ...")
 */
void rd_ep_err(int err, const struct rd_peer *peer, const char *fmt, ...)
{
	va_list ap;

	fputs(RD_PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, ": %s\n", strerror(err));
	rd_ep_hint(err, peer);
}

/**
 * rd_ep_open() - open a new endpoint
 *
 * Says on stderr what is wrong if the module is missing, speaks another
 * ABI or has no message service.
 *
 * Return: the endpoint's file descriptor, or -1.
 */
int rd_ep_open(void)
{
	struct rdmx_info info;
	int fd;

	fd = rd_open_checked_flags(&info, O_RDWR);
	if (fd < 0)
		return -1;
	if (!(info.features & RDMX_FEATURE_MSG)) {
		rd_err("rdmx module %s has no message service: upgrade the module",
		       (const char *)info.version);
		close(fd);
		return -1;
	}
	return fd;
}

static void rd_ep_addr_init(struct rdmx_ep_addr *ea,
			    const struct rdmx_sockaddr *sa, const char *service)
{
	memset(ea, 0, sizeof(*ea));
	ea->size = sizeof(*ea);
	ea->addr = *sa;
	/* rd_check_service() has made sure it fits with its NUL */
	strncpy((char *)ea->service, service, sizeof(ea->service) - 1);
}

/* Errors after which another address of the same host may still work */
static bool rd_try_next(int err)
{
	return err == ECONNREFUSED || err == ETIMEDOUT || err == ENETUNREACH ||
	       err == EHOSTUNREACH || err == EADDRNOTAVAIL ||
	       err == EAFNOSUPPORT || err == ENODEV;
}

/* CONNECT a new endpoint to @sa; Return: its fd, -errno, or -EBADF if it could not be opened (already reported). */
static int rd_ep_connect_one(const struct rdmx_sockaddr *sa,
			     const char *service, unsigned int timeout_ms)
{
	struct rdmx_ep_addr ea;
	int fd, err;

	fd = rd_ep_open();
	if (fd < 0)
		return -EBADF;
	rd_ep_addr_init(&ea, sa, service);
	ea.timeout_ms = timeout_ms;
	if (ioctl(fd, RDMX_IOC_EP_CONNECT, &ea) == 0)
		return fd;
	err = errno;
	close(fd);
	return -err;
}

/**
 * rd_ep_connect() - connect to a service, trying each address of the host
 * @peer: host, port and service in; the address connected to out
 * @timeout_ms: give up on each address after this long
 *
 * Says on stderr why for each address that fails, and ends with a hint.
 *
 * Return: the connected endpoint's file descriptor, or -1.
 */
int rd_ep_connect(struct rd_peer *peer, unsigned int timeout_ms)
{
	struct rdmx_sockaddr *addrs;
	unsigned int i, n;
	int fd = -EBADF;

	if (rd_addr_resolve(peer->host, peer->port, &addrs, &n))
		return -1;
	for (i = 0; i < n; i++) {
		peer->addr = addrs[i];
		rd_addr_str(&addrs[i], peer->addr_str, sizeof(peer->addr_str));
		fd = rd_ep_connect_one(&addrs[i], peer->service, timeout_ms);
		if (fd >= 0 || fd == -EBADF)
			break;
		fprintf(stderr, RD_PROG ": connect to %s (%s) service %s: %s\n",
			peer->host, peer->addr_str, peer->service,
			strerror(-fd));
		if (!rd_try_next(-fd))
			break;
	}
	free(addrs);
	if (fd >= 0)
		return fd;
	if (fd != -EBADF)
		rd_ep_hint(-fd, peer);
	return -1;
}

/**
 * rd_ep_listen() - a new endpoint listening for a service
 * @local: local address and port
 * @service: the service name
 *
 * Says on stderr why if it fails.
 *
 * Return: the listening endpoint's file descriptor, or -1.
 */
int rd_ep_listen(const struct rdmx_sockaddr *local, const char *service)
{
	struct rdmx_ep_addr ea;
	char where[RD_ADDRSTRLEN];
	int fd, err;

	fd = rd_ep_open();
	if (fd < 0)
		return -1;
	rd_ep_addr_init(&ea, local, service);
	if (ioctl(fd, RDMX_IOC_EP_LISTEN, &ea) == 0)
		return fd;
	err = errno;
	close(fd);
	rd_addr_str(local, where, sizeof(where));
	if (err == EACCES && local->port < 1024) {
		rd_err("listen on %s for service %s: %s", where, service,
		       strerror(err));
		fputs("hint: ports below 1024 need CAP_NET_BIND_SERVICE: run as root, or take a higher port\n",
		      stderr);
		return -1;
	}
	rd_ep_err(err, NULL, "listen on %s for service %s", where, service);
	if (err == EADDRINUSE)
		fprintf(stderr, "hint: another endpoint serves '%s' on port %u already\n",
			service, local->port);
	return -1;
}

/**
 * rd_ep_accept() - wait for a channel on a listening endpoint
 * @lfd: the listening endpoint
 * @peer: out: the peer's address
 *
 * Return: the new channel's file descriptor, or -1 after saying why.
 */
int rd_ep_accept(int lfd, struct rd_peer *peer)
{
	struct rdmx_ep_accept acc;
	int fd;

	do {
		memset(&acc, 0, sizeof(acc));
		acc.size = sizeof(acc);
		acc.flags = RDMX_ACCEPT_CLOEXEC;
		fd = ioctl(lfd, RDMX_IOC_EP_ACCEPT, &acc);
	} while (fd < 0 && errno == EINTR);
	if (fd < 0) {
		rd_ep_err(errno, peer, "accept on service %s", peer->service);
		return -1;
	}
	peer->addr = acc.peer;
	rd_addr_str(&acc.peer, peer->addr_str, sizeof(peer->addr_str));
	return fd;
}

static int rd_ep_xfer(int fd, unsigned long req, struct rdmx_msg_vec *msgs,
		      unsigned int n, __u32 flags)
{
	struct rdmx_ep_xfer x = {
		.size = sizeof(x),
		.flags = flags,
		.count = n,
		.vec_size = sizeof(*msgs),
		.msgs = (uintptr_t)msgs,
	};
	int ret;

	ret = ioctl(fd, req, &x);
	if (ret < 0)
		return -errno;
	if ((unsigned int)ret > n)
		return -EPROTO;
	return ret;
}

/**
 * rd_ep_send() - send messages, in order, all of them
 * @fd: a connected endpoint
 * @msgs: the messages; addr and len set, the rest zero
 * @n: entries at @msgs
 * @done: out: messages queued, also on error
 *
 * Return: 0, or -errno of the first message not sent (msgs[*done]);
 * -EINTR only once rd_ep_stop is set.
 */
int rd_ep_send(int fd, struct rdmx_msg_vec *msgs, unsigned int n,
	       unsigned int *done)
{
	unsigned int chunk;
	int ret;

	*done = 0;
	while (*done < n) {
		chunk = n - *done;
		if (chunk > RDMX_XFER_MAX)
			chunk = RDMX_XFER_MAX;
		ret = rd_ep_xfer(fd, RDMX_IOC_EP_SEND, msgs + *done, chunk, 0);
		if (ret == -EINTR && !rd_ep_stop)
			continue;
		if (ret < 0)
			return ret;
		if (!ret)	/* the ABI fails rather than send nothing */
			return -EPROTO;
		*done += ret;
	}
	return 0;
}

/**
 * rd_ep_recv() - receive what is there, waiting for the first message
 * @fd: a connected endpoint
 * @msgs: buffers: addr and len (the buffer size) set, the rest zero; on
 *	return each received one's len is the message's length
 * @n: entries at @msgs, 1 to RDMX_XFER_MAX
 * @nonblock: fail with -EAGAIN rather than wait
 *
 * Return: messages received, 0 at the end of the stream, or -errno
 * (-EINTR only once rd_ep_stop is set); -EMSGSIZE when msgs[0] is too small for the next message, with its
 * length in msgs[0].len (the message stays queued).
 */
int rd_ep_recv(int fd, struct rdmx_msg_vec *msgs, unsigned int n,
	       bool nonblock)
{
	int ret;

	do {
		ret = rd_ep_xfer(fd, RDMX_IOC_EP_RECV, msgs, n,
				 nonblock ? RDMX_XFER_NONBLOCK : 0);
	} while (ret == -EINTR && !rd_ep_stop);
	return ret;
}

/**
 * rd_ep_shutdown() - end this side of the stream; the peer reads its end
 * @fd: a connected endpoint
 *
 * Return: 0, or -errno.
 */
int rd_ep_shutdown(int fd)
{
	return ioctl(fd, RDMX_IOC_EP_SHUTDOWN, 0) < 0 ? -errno : 0;
}

/* ---- one-sided access ---- */

/**
 * rd_feature_check() - does the module offer what a command needs?
 * @need: RDMX_FEATURE_* bits, all of which must be there
 * @what: what they are, for the message ("one-sided access")
 *
 * Return: 0, or -1 after saying why not (no module, another ABI, a module
 * without one of @need).
 */
int rd_feature_check(uint64_t need, const char *what)
{
	struct rdmx_info info;
	int fd;

	fd = rd_open_checked(&info);
	if (fd < 0)
		return -1;
	close(fd);
	if ((info.features & need) != need) {
		rd_err("rdmx module %s has no %s: upgrade the module",
		       (const char *)info.version, what);
		return -1;
	}
	return 0;
}

/**
 * rd_rma_check() - does the module offer one-sided access?
 *
 * Return: 0, or -1 after saying why not (see rd_feature_check()).
 */
int rd_rma_check(void)
{
	return rd_feature_check(RDMX_FEATURE_MSG | RDMX_FEATURE_RMA,
				"one-sided access");
}

/**
 * rd_mr_reg() - register memory on a connected endpoint
 * @fd: the endpoint
 * @addr: the memory
 * @len: its length, 1 to RDMX_MR_MAX
 * @access: RDMX_ACCESS_* bits
 * @token: out: the token, RDMX_TOKEN_MAX bytes of room
 * @token_len: out: the token's length
 * @mr_id: out: the region's id, for rd_mr_dereg()
 *
 * Return: 0, or -errno (-EPROTO if the kernel's answer makes no sense).
 */
int rd_mr_reg(int fd, void *addr, uint64_t len, uint32_t access,
	      void *token, uint32_t *token_len, uint32_t *mr_id)
{
	struct rdmx_mr_reg r = {
		.size = sizeof(r),
		.addr = (uintptr_t)addr,
		.length = len,
		.access = access,
		.token = (uintptr_t)token,
		.token_len = RDMX_TOKEN_MAX,
	};

	if (ioctl(fd, RDMX_IOC_MR_REG, &r) < 0)
		return -errno;
	if (r.size < RDMX_MR_REG_SIZE_VER0 || !r.token_len ||
	    r.token_len > RDMX_TOKEN_MAX)
		return -EPROTO;
	*token_len = r.token_len;
	*mr_id = r.mr_id;
	return 0;
}

/* rd_mr_dereg() - deregister region @mr_id of endpoint @fd; Return: 0, or -errno. */
int rd_mr_dereg(int fd, uint32_t mr_id)
{
	struct rdmx_mr_dereg d = { .size = sizeof(d), .mr_id = mr_id };

	return ioctl(fd, RDMX_IOC_MR_DEREG, &d) < 0 ? -errno : 0;
}

/**
 * rd_rma() - RDMX_IOC_RMA: start (and, without RDMX_RMA_ASYNC, complete)
 *	one-sided operations
 * @fd: a connected endpoint
 * @ops: the operations; each one's status is set on return
 * @n: entries at @ops, 1 to RDMX_RMA_BATCH_MAX
 * @flags: 0 or RDMX_RMA_ASYNC
 *
 * Return: the number accepted (the ones after it did not run), or -errno
 * when none was.
 */
int rd_rma(int fd, struct rdmx_rma_op *ops, unsigned int n, uint32_t flags)
{
	struct rdmx_rma r = {
		.size = sizeof(r),
		.flags = flags,
		.count = n,
		.op_size = sizeof(*ops),
		.ops = (uintptr_t)ops,
	};
	int ret;

	ret = ioctl(fd, RDMX_IOC_RMA, &r);
	if (ret < 0)
		return -errno;
	if (!ret || (unsigned int)ret > n)
		return -EPROTO;
	return ret;
}
