// SPDX-License-Identifier: GPL-2.0
/*
 * connect-retry.so: an LD_PRELOAD shim for qperf's RDS clients in
 * tests/bench/guest.sh (tests/bench/run builds it into .build/bench/).
 *
 * Before an RDS test qperf 0.4.11 (Debian 12's) opens a side TCP
 * connection to learn both ends' addresses: its server binds a socket,
 * sends the port to the client and only then calls listen(). A client
 * that connects in between is refused ("connect failed: Connection
 * refused"), and in one guest of one vCPU the client, woken by the port,
 * often runs before the server gets to listen(). Here a blocking
 * TCP connect() refused is tried again, 10 ms later, up to 100 times
 * (a line on stderr says when it took more than one); anything else is
 * connect() itself. Nothing in the measured loop connects, so the
 * figures are qperf's own.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <sys/socket.h>
#include <time.h>

#define TRIES 100

int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	static int (*real_connect)(int, const struct sockaddr *, socklen_t);
	const struct timespec pause = { 0, 10 * 1000 * 1000 };
	int i, rc, err, type;
	socklen_t tlen;

	if (!real_connect) {
		real_connect = (int (*)(int, const struct sockaddr *, socklen_t))
			dlsym(RTLD_NEXT, "connect");
		if (!real_connect) {
			errno = ELIBACC;
			return -1;
		}
	}
	for (i = 1;; i++) {
		rc = real_connect(fd, addr, len);
		if (rc == 0 && i > 1)
			fprintf(stderr, "retry shim: refused %d time(s), then connected\n", i - 1);
		if (rc == 0 || errno != ECONNREFUSED || i == TRIES)
			return rc;
		err = errno;
		tlen = sizeof(type);
		if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tlen) ||
		    type != SOCK_STREAM) {
			errno = err;
			return rc;
		}
		nanosleep(&pause, NULL);
	}
}
