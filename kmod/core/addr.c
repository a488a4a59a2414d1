// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx core: IPv4 and IPv6 addresses, and their uapi form (struct
 * rdmx_sockaddr). Pure helpers, for every layer.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/in.h>
#include <linux/in6.h>
#include <linux/string.h>
#include <net/ipv6.h>

#include "rdmx.h"

/**
 * rdmx_addr_port() - the port of an IPv4 or IPv6 address
 * @sa: the address
 *
 * Context: any context.
 * Return: the port in host byte order.
 */
u16 rdmx_addr_port(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	return ntohs(((const struct sockaddr_in *)sa)->sin_port);
}

/**
 * rdmx_addr_set_port() - set the port of an IPv4 or IPv6 address
 * @sa: the address
 * @port: the port, host byte order
 *
 * Context: any context.
 */
void rdmx_addr_set_port(struct sockaddr *sa, u16 port)
{
	if (sa->sa_family == AF_INET6)
		((struct sockaddr_in6 *)sa)->sin6_port = htons(port);
	else
		((struct sockaddr_in *)sa)->sin_port = htons(port);
}

/**
 * rdmx_addr_any() - whether an IPv4 or IPv6 address is the any address
 * @sa: the address
 *
 * Context: any context.
 * Return: true for 0.0.0.0 and ::.
 */
bool rdmx_addr_any(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET6)
		return ipv6_addr_any(&((const struct sockaddr_in6 *)sa)->sin6_addr);
	return ((const struct sockaddr_in *)sa)->sin_addr.s_addr == htonl(INADDR_ANY);
}

/**
 * rdmx_addr_copy() - copy an IPv4 or IPv6 address
 * @dst: destination, zeroed beyond the address
 * @src: the address
 *
 * Context: any context.
 */
void rdmx_addr_copy(struct sockaddr_storage *dst, const struct sockaddr *src)
{
	memset(dst, 0, sizeof(*dst));
	memcpy(dst, src, src->sa_family == AF_INET6 ?
	       sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in));
}

/**
 * rdmx_addr_prepare() - copy an address from a kernel user, default port
 * @dst: the copy
 * @src: an AF_INET or AF_INET6 address; port 0 means RDMX_DEFAULT_PORT
 *
 * Context: any context.
 * Return: 0, or -EAFNOSUPPORT for another family.
 */
int rdmx_addr_prepare(struct sockaddr_storage *dst, const struct sockaddr *src)
{
	if (src->sa_family != AF_INET && src->sa_family != AF_INET6)
		return -EAFNOSUPPORT;
	rdmx_addr_copy(dst, src);
	if (!rdmx_addr_port((struct sockaddr *)dst))
		rdmx_addr_set_port((struct sockaddr *)dst, RDMX_DEFAULT_PORT);
	return 0;
}

/**
 * rdmx_addr_equal() - whether two addresses and ports are the same
 * @a: one
 * @b: the other
 *
 * Context: any context.
 * Return: true when family, address, port (and IPv6 scope) match.
 */
bool rdmx_addr_equal(const struct sockaddr *a, const struct sockaddr *b)
{
	if (a->sa_family != b->sa_family)
		return false;
	if (a->sa_family == AF_INET6) {
		const struct sockaddr_in6 *a6 = (const void *)a, *b6 = (const void *)b;

		return ipv6_addr_equal(&a6->sin6_addr, &b6->sin6_addr) &&
		       a6->sin6_port == b6->sin6_port &&
		       a6->sin6_scope_id == b6->sin6_scope_id;
	}
	return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
	       ((const struct sockaddr_in *)b)->sin_addr.s_addr &&
	       ((const struct sockaddr_in *)a)->sin_port ==
	       ((const struct sockaddr_in *)b)->sin_port;
}

/**
 * rdmx_addr_same_host() - whether two addresses name the same host
 * @a: one
 * @b: the other
 *
 * Ports are ignored: each connection of a session has its own.
 *
 * Context: any context.
 * Return: true when family and address (and IPv6 scope) match.
 */
bool rdmx_addr_same_host(const struct sockaddr *a, const struct sockaddr *b)
{
	if (a->sa_family != b->sa_family)
		return false;
	if (a->sa_family == AF_INET6) {
		const struct sockaddr_in6 *a6 = (const void *)a, *b6 = (const void *)b;

		return ipv6_addr_equal(&a6->sin6_addr, &b6->sin6_addr) &&
		       a6->sin6_scope_id == b6->sin6_scope_id;
	}
	return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
	       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
}

/**
 * rdmx_addr_from_user() - check and convert a uapi address
 * @ua: the caller's struct rdmx_sockaddr
 * @ss: the result
 * @any_ok: whether the any-address is acceptable (listening)
 *
 * rdmx's rdma_cm ids live in the initial network namespace, so an address
 * is only taken from a process in that namespace: one in another would
 * reach the initial namespace's addresses and ports through rdmx.
 *
 * Context: process context (an ioctl).
 * Return: 0, or -EINVAL for an unknown family, bytes set beyond an IPv4
 * address, a scope on IPv4, or an any-address where one is not allowed;
 * -EAFNOSUPPORT for IPv6 on a kernel without it; -EOPNOTSUPP for a caller
 * in another network namespace than the initial one.
 */
int rdmx_addr_from_user(const struct rdmx_sockaddr *ua,
			struct sockaddr_storage *ss, bool any_ok)
{
	u16 port = ua->port ?: RDMX_DEFAULT_PORT;

	memset(ss, 0, sizeof(*ss));
	if (!net_eq(current->nsproxy->net_ns, &init_net)) {
		pr_info_ratelimited("pid %d: refused an address from another network namespace: rdmx works in the initial one only\n",
				    task_pid_nr(current));
		return -EOPNOTSUPP;
	}
	if (ua->family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		if (ua->scope_id || memchr_inv(ua->addr + 4, 0, 12))
			return -EINVAL;
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		memcpy(&sin->sin_addr, ua->addr, 4);
	} else if (ua->family == AF_INET6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		if (!IS_ENABLED(CONFIG_IPV6))
			return -EAFNOSUPPORT;
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		sin6->sin6_scope_id = ua->scope_id;
		memcpy(&sin6->sin6_addr, ua->addr, 16);
	} else {
		return -EINVAL;
	}
	if (!any_ok && rdmx_addr_any((struct sockaddr *)ss))
		return -EINVAL;
	return 0;
}

/**
 * rdmx_addr_to_user() - convert an address for the uapi
 * @sa: an IPv4 or IPv6 address, or an empty one (family 0)
 * @ua: the result
 *
 * Context: any context.
 */
void rdmx_addr_to_user(const struct sockaddr *sa, struct rdmx_sockaddr *ua)
{
	memset(ua, 0, sizeof(*ua));
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *sin = (const void *)sa;

		ua->family = AF_INET;
		ua->port = ntohs(sin->sin_port);
		memcpy(ua->addr, &sin->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const void *)sa;

		ua->family = AF_INET6;
		ua->port = ntohs(sin6->sin6_port);
		ua->scope_id = sin6->sin6_scope_id;
		memcpy(ua->addr, &sin6->sin6_addr, 16);
	}
}
