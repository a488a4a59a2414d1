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

/**
 * rd_read_u64() - read a file holding one 64-bit counter
 * @path: the file
 * @val: out: the number, in decimal; untouched on error
 *
 * Return: 0, or -errno (-EINVAL if it is not a decimal number).
 */
int rd_read_u64(const char *path, uint64_t *val)
{
	char buf[32], *end;
	unsigned long long v;
	int err;

	err = rd_read_file(path, buf, sizeof(buf));
	if (err < 0)
		return err;
	if (buf[0] < '0' || buf[0] > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno || *end)
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

/**
 * rd_rdmx_objects() - list one kind of rdmx object in sysfs
 * @kind: "sessions", "listeners" or "exports", under kernel/rdmx in
 *	rd_sysfs()
 * @path: out: the directory
 * @size: bytes at @path
 * @list: out: its entries, for rd_freedir(); only those named by a
 *	number (an id) count
 *
 * Says on stderr what is wrong when the directory cannot be read: the
 * module not loaded, or a module without the message service (the block
 * service for "exports").
 *
 * Return: number of entries, or -1.
 */
int rd_rdmx_objects(const char *kind, char *path, size_t size,
		    struct dirent ***list)
{
	char mod[4096];
	int n;

	if (rd_pathf(path, size, "%s/kernel/rdmx/%s", rd_sysfs(), kind)) {
		rd_err("%s/kernel/rdmx/%s: %s", rd_sysfs(), kind,
		       strerror(ENAMETOOLONG));
		return -1;
	}
	n = rd_scandir(path, list);
	if (n >= 0)
		return n;
	if (n == -ENOENT &&
	    !rd_pathf(mod, sizeof(mod), "%s/kernel/rdmx", rd_sysfs()) &&
	    !rd_exists(mod))
		rd_err("%s: the rdmx module is not loaded: try: modprobe rdmx",
		       mod);
	else if (n == -ENOENT)
		rd_err("%s: not found: this rdmx module has no %s service (see '" RD_PROG " version')",
		       path, strcmp(kind, "exports") ? "message" : "block");
	else
		rd_err("%s: %s", path, strerror(-n));
	return -1;
}

/**
 * rd_object_id() - the id an entry of rd_rdmx_objects() is named by
 * @name: the entry's name
 * @id: out: 1 to UINT32_MAX
 *
 * Return: 0, or -EINVAL for an entry that is no object.
 */
int rd_object_id(const char *name, unsigned int *id)
{
	unsigned long v;

	if (rd_parse_ulong(name, 1, UINT32_MAX, &v))
		return -EINVAL;
	*id = v;
	return 0;
}

/**
 * rd_object_attr() - read one attribute of an rdmx object in sysfs
 * @dir: the object's directory
 * @attr: the attribute
 * @buf: out: its value, trailing whitespace removed; empty on error
 * @size: bytes at @buf
 *
 * Return: length of the value, or -errno.
 */
int rd_object_attr(const char *dir, const char *attr, char *buf, size_t size)
{
	char path[4096];
	int err;

	buf[0] = '\0';
	err = rd_pathf(path, sizeof(path), "%s/%s", dir, attr);
	return err ? err : rd_read_file(path, buf, size);
}

/**
 * rd_object_u64() - a numeric attribute of an rdmx object in sysfs
 * @dir: the object's directory
 * @attr: the attribute
 * @val: out: its value
 *
 * Return: 0, or -errno (missing, unreadable or not a number).
 */
int rd_object_u64(const char *dir, const char *attr, uint64_t *val)
{
	char path[4096];
	int err;

	err = rd_pathf(path, sizeof(path), "%s/%s", dir, attr);
	return err ? err : rd_read_u64(path, val);
}
