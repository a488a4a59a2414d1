// SPDX-License-Identifier: GPL-2.0
/*
 * Small-file and directory helpers for sysfs and procfs.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rdmxctl.h"

/**
 * rd_pathf() - format a path
 * @buf: out
 * @size: bytes at @buf
 * @fmt: format
 *
 * Return: 0, or -ENAMETOOLONG if it did not fit.
 */
int rd_pathf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	return 0;
}

bool rd_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

static void rd_strip_trailing_space(char *s, size_t len)
{
	while (len && (s[len - 1] == '\n' || s[len - 1] == ' ' ||
		       s[len - 1] == '\t'))
		s[--len] = '\0';
}

/* Read up to @size bytes; Return: bytes read, or -errno. */
static ssize_t rd_read_all(int fd, char *buf, size_t size)
{
	size_t len = 0;

	while (len < size) {
		ssize_t n = read(fd, buf + len, size - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		len += n;
	}
	return len;
}

/**
 * rd_read_file() - read a small file, as sysfs attributes are
 * @path: the file
 * @buf: out: contents, NUL-terminated, trailing whitespace removed; empty
 *	on error
 * @size: bytes at @buf, at least 1
 *
 * Return: length of the contents, or -errno (-EOVERFLOW if longer than
 * @size - 1 bytes).
 */
int rd_read_file(const char *path, char *buf, size_t size)
{
	ssize_t len;
	int fd;

	buf[0] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* Reading @size bytes tells a file that is too long from one that fits. */
	len = rd_read_all(fd, buf, size);
	close(fd);
	if (len < 0 || (size_t)len == size) {
		buf[0] = '\0';
		return len < 0 ? len : -EOVERFLOW;
	}
	buf[len] = '\0';
	rd_strip_trailing_space(buf, len);
	return strlen(buf);
}

/**
 * rd_read_ulong() - read a file holding one number
 * @path: the file
 * @val: out: the number (decimal, or hex with 0x); untouched on error
 *
 * Return: 0, or -errno (-EINVAL if it is not a number).
 */
int rd_read_ulong(const char *path, unsigned long *val)
{
	char buf[32], *end;
	unsigned long v;
	int err;

	err = rd_read_file(path, buf, sizeof(buf));
	if (err < 0)
		return err;
	errno = 0;
	v = strtoul(buf, &end, 0);
	if (errno || end == buf || *end)
		return -EINVAL;
	*val = v;
	return 0;
}

static int rd_not_hidden(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

/**
 * rd_scandir() - list a directory without dot entries, in version order
 * @path: the directory
 * @list: out: entries, for rd_freedir()
 *
 * Version order puts "port 10" after "port 9" and "gid 10" after "gid 9".
 *
 * Return: number of entries (free @list even when 0), or -errno.
 */
int rd_scandir(const char *path, struct dirent ***list)
{
	int n = scandir(path, list, rd_not_hidden, versionsort);

	return n < 0 ? -errno : n;
}

void rd_freedir(struct dirent **list, int n)
{
	int i;

	for (i = 0; i < n; i++)
		free(list[i]);
	free(list);
}
