// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers shared by the rdmx test programs; see testlib.h.
 */
#define __SANE_USERSPACE_TYPES__

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "testlib.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static const struct {
	int num;
	const char *name;
} errno_names[] = {
/* E(PERM) is { EPERM, "EPERM" }: the names come without their leading E. */
#define E(x) { E##x, "E" #x }
	E(PERM), E(NOENT), E(SRCH), E(INTR), E(IO), E(NXIO), E(2BIG),
	E(BADF), E(AGAIN), E(NOMEM), E(ACCES), E(FAULT), E(BUSY),
	E(EXIST), E(NODEV), E(INVAL), E(NFILE), E(MFILE), E(NOTTY),
	E(FBIG), E(NOSPC), E(PIPE), E(RANGE), E(DEADLK), E(NAMETOOLONG),
	E(NOSYS), E(NOMSG), E(IDRM), E(NODATA), E(TIME), E(NOLINK),
	E(PROTO), E(BADMSG), E(OVERFLOW), E(NOTSOCK), E(DESTADDRREQ),
	E(MSGSIZE), E(PROTOTYPE), E(NOPROTOOPT), E(PROTONOSUPPORT),
	E(OPNOTSUPP), E(AFNOSUPPORT), E(ADDRINUSE), E(ADDRNOTAVAIL),
	E(NETDOWN), E(NETUNREACH), E(NETRESET), E(CONNABORTED),
	E(CONNRESET), E(NOBUFS), E(ISCONN), E(NOTCONN), E(SHUTDOWN),
	E(TIMEDOUT), E(CONNREFUSED), E(HOSTDOWN), E(HOSTUNREACH),
	E(ALREADY), E(INPROGRESS), E(STALE), E(CANCELED), E(NOKEY),
	E(KEYEXPIRED), E(KEYREVOKED), E(KEYREJECTED), E(REMOTEIO),
	E(NOMEDIUM),
#undef E
};

const char *errno_name(int e)
{
	static char buf[4][24];
	static unsigned int k;
	size_t i;

	if (!e)
		return "success";
	for (i = 0; i < ARRAY_SIZE(errno_names); i++)
		if (errno_names[i].num == e)
			return errno_names[i].name;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "E%d", e);
	return buf[k];
}

__u64 mix2(__u64 a, __u64 b)
{
	__u64 s = a ^ (b * 0xd1342543de82ef95ULL + 0x632be59bd9b4e019ULL);

	return splitmix64(&s);
}

__s64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__s64)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

bool valid_service(const char *s)
{
	size_t n = strlen(s), i;

	if (n < 1 || n > RDMX_SERVICE_LEN - 1)
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '.' || s[i] == '_' ||
		      s[i] == '-'))
			return false;
	return true;
}

void json_string(FILE *f, const char *s)
{
	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

int resolve(const char *host, struct rdmx_sockaddr *sa)
{
	struct addrinfo hints, *ai;
	int ret;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	ret = getaddrinfo(host, NULL, &hints, &ai);
	if (ret)
		return ret;
	memset(sa, 0, sizeof(*sa));
	sa->family = ai->ai_family;
	if (ai->ai_family == AF_INET) {
		memcpy(sa->addr, &((struct sockaddr_in *)ai->ai_addr)->sin_addr, 4);
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ai->ai_addr;

		memcpy(sa->addr, &s6->sin6_addr, 16);
		sa->scope_id = s6->sin6_scope_id;
	}
	freeaddrinfo(ai);
	return 0;
}
