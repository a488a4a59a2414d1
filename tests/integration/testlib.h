/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the rdmx test programs (rdmx-msgtest, rdmx-rmatest):
 * errno names, the seeded pattern generator, time, service names, JSON
 * strings and address resolution.
 */
#ifndef RDMX_TESTLIB_H
#define RDMX_TESTLIB_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>
#include <linux/rdmx.h>

/* splitmix64's next output; its state is *@s. */
static inline __u64 splitmix64(__u64 *s)
{
	__u64 z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A well-mixed function of two values (seeds of independent streams). */
__u64 mix2(__u64 a, __u64 b);
/* CLOCK_MONOTONIC in nanoseconds. */
__s64 now_ns(void);
/* "EPERM" for EPERM, "success" for 0, "E<n>" for what it does not know. */
const char *errno_name(int e);
/* 1 to 63 bytes of [A-Za-z0-9._-], as rdmx wants service names. */
bool valid_service(const char *s);
/* @s as a JSON string (null for NULL). */
void json_string(FILE *f, const char *s);
/* Returns 0, or a getaddrinfo() error for gai_strerror(). */
int resolve(const char *host, struct rdmx_sockaddr *sa);

#endif /* RDMX_TESTLIB_H */
