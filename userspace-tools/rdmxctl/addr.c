// SPDX-License-Identifier: GPL-2.0
/*
 * Addresses of the message service: from the command line (literals and
 * host names) to struct rdmx_sockaddr, and back to "ADDR:PORT" text as
 * sysfs writes it ("[ADDR]:PORT" for IPv6).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "rdmxctl.h"

/* Return: 0, or -EAFNOSUPPORT for a family rdmx does not carry. */
static int rd_addr_from(const struct sockaddr *s, unsigned int port,
			struct rdmx_sockaddr *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->port = port;
	if (s->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)s;

		sa->family = AF_INET;
		memcpy(sa->addr, &in->sin_addr, sizeof(in->sin_addr));
		return 0;
	}
	if (s->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)s;

		sa->family = AF_INET6;
		sa->scope_id = in6->sin6_scope_id;
		memcpy(sa->addr, &in6->sin6_addr, sizeof(in6->sin6_addr));
		return 0;
	}
	return -EAFNOSUPPORT;
}

/**
 * rd_unbracket() - an address without the brackets of "[ADDR]"
 * @s: "[2001:db8::1]", or an address or name without brackets
 * @buf: out
 * @size: bytes at @buf
 *
 * Return: 0, or -EINVAL for an empty or too long @s.
 */
int rd_unbracket(const char *s, char *buf, size_t size)
{
	size_t len = strlen(s);

	if (len >= 2 && s[0] == '[' && s[len - 1] == ']') {
		s++;
		len -= 2;
	}
	if (!len || len >= size)
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	return 0;
}

/**
 * rd_addr_parse() - an IPv4 or IPv6 literal, as "-a ADDR" takes it
 * @s: "192.0.2.1", "2001:db8::1", "[2001:db8::1]" or "fe80::1%eth0"
 * @port: the port to put in @sa
 * @sa: out: the address
 *
 * Return: 0, or -EINVAL if @s is no address literal.
 */
int rd_addr_parse(const char *s, unsigned int port, struct rdmx_sockaddr *sa)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_NUMERICHOST | AI_PASSIVE,
	};
	struct addrinfo *res;
	char buf[RD_ADDRSTRLEN];
	int err;

	if (rd_unbracket(s, buf, sizeof(buf)))
		return -EINVAL;
	if (getaddrinfo(buf, NULL, &hints, &res))
		return -EINVAL;
	err = rd_addr_from(res->ai_addr, port, sa);
	freeaddrinfo(res);
	return err ? -EINVAL : 0;
}

/**
 * rd_addr_any() - the wildcard address of listeners
 * @port: the port
 * @sa: out: the IPv4 wildcard 0.0.0.0. The kernel binds a listener on the
 *	IPv6 wildcard "::" for IPv6 only, and the family must be given, so
 *	"any" is IPv4's, the family RoCE and iWARP peers mostly use; "-a ::"
 *	asks for IPv6.
 */
void rd_addr_any(unsigned int port, struct rdmx_sockaddr *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->family = AF_INET;
	sa->port = port;
}

/**
 * rd_listen_addr() - a listening command's address, from -a and -p
 * @object: the command, for messages
 * @addr: -a's value; NULL for any address (see rd_addr_any())
 * @port_arg: -p's value; NULL for RDMX_DEFAULT_PORT
 * @port: out: the port
 * @sa: out: the address and port
 *
 * Return: 0, or RD_EXIT_USAGE after saying what is wrong.
 */
int rd_listen_addr(const char *object, const char *addr, const char *port_arg,
		   unsigned int *port, struct rdmx_sockaddr *sa)
{
	int ret;

	*port = RDMX_DEFAULT_PORT;
	if (port_arg) {
		ret = rd_parse_port(object, port_arg, port);
		if (ret)
			return ret;
	}
	if (!addr) {
		rd_addr_any(*port, sa);
		return 0;
	}
	if (rd_addr_parse(addr, *port, sa))
		return rd_usage_err(object, "bad address '%s': expected an IPv4 or IPv6 address",
				    addr);
	return 0;
}

/**
 * rd_host_port() - HOST and its PORT from "HOST:PORT" or "[ADDR]:PORT"
 * @s: a host as given: "192.0.2.1", "node1", "2001:db8::1", "[2001:db8::1]",
 *	or one of those (IPv6 in brackets) with ":PORT", as sysfs and
 *	"map list" write them
 * @host: out: the host without the port (brackets kept)
 * @size: bytes at @host
 * @port: out: the port when @s has one; untouched otherwise
 *
 * Return: 1 when @s has a port, 0 when not, or -EINVAL (a bad port, or too
 * long).
 */
int rd_host_port(const char *s, char *host, size_t size, unsigned int *port)
{
	const char *colon = strrchr(s, ':');
	unsigned long v;
	size_t len;

	/* A bare IPv6 literal has several colons and no brackets. */
	if (!colon || (s[0] != '[' && strchr(s, ':') != colon) ||
	    (s[0] == '[' && colon[-1] != ']')) {
		if (strlen(s) >= size)
			return -EINVAL;
		strcpy(host, s);
		return 0;
	}
	len = colon - s;
	if (!len || len >= size || rd_parse_ulong(colon + 1, 1, 65535, &v))
		return -EINVAL;
	memcpy(host, s, len);
	host[len] = '\0';
	*port = v;
	return 1;
}

/**
 * rd_addr_resolve() - the addresses of a peer
 * @host: an IPv4 or IPv6 literal (IPv6 also in brackets) or a host name,
 *	optionally with ":PORT" (see rd_host_port())
 * @port: the port to put in each address, unless @host has one
 * @addrs: out: the addresses, in getaddrinfo() order, for free()
 * @count: out: entries in @addrs, at least 1
 *
 * Says on stderr why when @host does not resolve.
 *
 * Return: 0, or -1.
 */
int rd_addr_resolve(const char *host, unsigned int port,
		    struct rdmx_sockaddr **addrs, unsigned int *count)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
	};
	struct addrinfo *res, *ai;
	char buf[256], hp[256];
	unsigned int n = 0;
	int err;

	if (rd_host_port(host, hp, sizeof(hp), &port) < 0 ||
	    rd_unbracket(hp, buf, sizeof(buf))) {
		rd_err("bad host '%s'", host);
		return -1;
	}
	err = getaddrinfo(buf, NULL, &hints, &res);
	if (err) {
		rd_err("cannot resolve '%s': %s", host,
		       err == EAI_SYSTEM ? strerror(errno) : gai_strerror(err));
		return -1;
	}
	for (ai = res; ai; ai = ai->ai_next)
		n++;
	*addrs = calloc(n, sizeof(**addrs));
	if (!*addrs) {
		freeaddrinfo(res);
		rd_err("out of memory");
		return -1;
	}
	n = 0;
	for (ai = res; ai; ai = ai->ai_next)
		if (!rd_addr_from(ai->ai_addr, port, &(*addrs)[n]))
			n++;
	freeaddrinfo(res);
	if (!n) {
		free(*addrs);
		rd_err("'%s' has no IPv4 or IPv6 address", host);
		return -1;
	}
	*count = n;
	return 0;
}

/**
 * rd_addr_str() - an address as text, as sysfs writes it
 * @sa: the address
 * @buf: out
 * @size: bytes at @buf, RD_ADDRSTRLEN is enough
 *
 * Return: @buf: "192.0.2.1:7471", "[2001:db8::1]:7471" or, with a scope,
 * "[fe80::1%eth0]:7471".
 */
const char *rd_addr_str(const struct rdmx_sockaddr *sa, char *buf,
			size_t size)
{
	char ip[INET6_ADDRSTRLEN], scope[IF_NAMESIZE + 1] = "";
	char ifname[IF_NAMESIZE];

	if (sa->family == AF_INET &&
	    inet_ntop(AF_INET, sa->addr, ip, sizeof(ip))) {
		snprintf(buf, size, "%s:%u", ip, sa->port);
		return buf;
	}
	if (sa->family == AF_INET6 &&
	    inet_ntop(AF_INET6, sa->addr, ip, sizeof(ip))) {
		if (sa->scope_id && if_indextoname(sa->scope_id, ifname))
			snprintf(scope, sizeof(scope), "%%%s", ifname);
		else if (sa->scope_id)
			snprintf(scope, sizeof(scope), "%%%u", sa->scope_id);
		snprintf(buf, size, "[%s%s]:%u", ip, scope, sa->port);
		return buf;
	}
	snprintf(buf, size, "(family %u):%u", sa->family, sa->port);
	return buf;
}
