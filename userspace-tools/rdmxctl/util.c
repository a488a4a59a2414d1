// SPDX-License-Identifier: GPL-2.0
/*
 * Opening /dev/rdmx and the ioctls on it; reading and writing whole files.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rdmxctl.h"

/* LIST_DEVICES retries when ports keep appearing between two calls */
#define RD_LIST_RETRIES	8

static const char *rd_env(const char *name, const char *dflt)
{
	const char *val = getenv(name);

	return val && *val ? val : dflt;
}

/* Return: the rdmx device node, from RDMX_DEVNODE or the default. */
const char *rd_devnode(void)
{
	return rd_env("RDMX_DEVNODE", RD_DEVNODE_DEFAULT);
}

/* Return: the sysfs root, from RDMX_SYSFS or the default. */
const char *rd_sysfs(void)
{
	return rd_env("RDMX_SYSFS", RD_SYSFS_DEFAULT);
}

/* Return: a file descriptor on rd_devnode(), or -errno. */
int rd_devnode_open(void)
{
	int fd = open(rd_devnode(), O_RDONLY | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/* Each @why is a question, so "WHAT: WHY try: FIX" reads well. */
static const struct rd_errhint rd_devnode_hints[] = {
	{ ENOENT, "not found", "is the module loaded?", "modprobe rdmx" },
	{ ENXIO, "has no driver behind it", "is the module loaded?",
	  "modprobe rdmx" },
	{ ENODEV, "has no driver behind it", "is the module loaded?",
	  "modprobe rdmx" },
	{ EACCES, "permission denied", "are you root?", "sudo " RD_PROG },
	{ EPERM, "permission denied", "are you root?", "sudo " RD_PROG },
	{ ENOTTY, "is not an rdmx device", "is RDMX_DEVNODE right?",
	  "unset RDMX_DEVNODE" },
	{ EPROTO, "gave a malformed answer", "do module and tool match?",
	  "dmesg | grep rdmx" },
};

/**
 * rd_devnode_errhint() - explain an error from opening or using /dev/rdmx
 * @err: positive errno
 *
 * Return: the explanation; for an errno without one, @what is NULL (use
 * strerror) and @fix points at the kernel log.
 */
const struct rd_errhint *rd_devnode_errhint(int err)
{
	static const struct rd_errhint other = {
		0, NULL, "", "dmesg | grep rdmx"
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(rd_devnode_hints); i++)
		if (rd_devnode_hints[i].err == err)
			return &rd_devnode_hints[i];
	return &other;
}

/* Say on stderr what went wrong with /dev/rdmx and what to try. */
void rd_devnode_err(int err)
{
	const struct rd_errhint *h = rd_devnode_errhint(err);

	rd_err("%s %s: %s%stry: %s", rd_devnode(),
	       h->what ? h->what : strerror(err),
	       h->why, *h->why ? " " : "", h->fix);
}

/**
 * rd_get_info() - RDMX_IOC_GET_INFO
 * @fd: open /dev/rdmx
 * @info: filled in; version is NUL-terminated even if the kernel's is not
 *
 * Return: 0, or -errno (-EPROTO if the kernel wrote back too little).
 */
int rd_get_info(int fd, struct rdmx_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	if (ioctl(fd, RDMX_IOC_GET_INFO, info) < 0)
		return -errno;
	if (info->size < RDMX_INFO_SIZE_VER0)
		return -EPROTO;
	info->version[sizeof(info->version) - 1] = '\0';
	return 0;
}

/* One RDMX_IOC_LIST_DEVICES call into @devs, which has room for @room. */
static int rd_list_once(int fd, struct rdmx_device_info *devs,
			unsigned int room, unsigned int *present)
{
	struct rdmx_list_devices ld = {
		.size = sizeof(ld),
		.entry_size = sizeof(*devs),
		.count = room,
		.devices = (uintptr_t)devs,
	};

	if (ioctl(fd, RDMX_IOC_LIST_DEVICES, &ld) < 0)
		return -errno;
	if (ld.size < RDMX_LIST_DEVICES_SIZE_VER0)
		return -EPROTO;
	if (ld.count && room &&
	    (ld.entry_size < RDMX_DEVICE_INFO_SIZE_VER0 ||
	     ld.entry_size > sizeof(*devs)))
		return -EPROTO;
	*present = ld.count;
	return 0;
}

static void rd_terminate_names(struct rdmx_device_info *devs, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		devs[i].name[sizeof(devs[i].name) - 1] = '\0';
		devs[i].netdev[sizeof(devs[i].netdev) - 1] = '\0';
	}
}

/**
 * rd_list_devices() - RDMX_IOC_LIST_DEVICES, sized to what is present
 * @fd: open /dev/rdmx
 * @devs: out: array of the device ports, for free(); NULL when none
 * @count: out: entries in @devs
 *
 * Asks for the count first, then fetches; asks again while ports appear in
 * between. Entries are zeroed first, so fields an older kernel does not
 * know read as 0.
 *
 * Return: 0, or -errno (-EAGAIN if the list never settled).
 */
int rd_list_devices(int fd, struct rdmx_device_info **devs,
		    unsigned int *count)
{
	struct rdmx_device_info *buf = NULL;
	unsigned int room = 0, present = 0;
	int tries, err = 0;

	for (tries = 0; tries < RD_LIST_RETRIES; tries++) {
		err = rd_list_once(fd, buf, room, &present);
		if (err)
			break;
		if (present <= room) {
			rd_terminate_names(buf, present);
			*devs = buf;
			*count = present;
			return 0;
		}
		free(buf);
		room = present;
		buf = calloc(room, sizeof(*buf));
		if (!buf)
			return -ENOMEM;
	}
	free(buf);
	return tries == RD_LIST_RETRIES ? -EAGAIN : err;
}

/**
 * rd_open_checked_flags() - open /dev/rdmx for a command that needs the module
 * @info: out: the module's GET_INFO answer
 * @oflags: O_RDONLY, or O_RDWR for an endpoint that sends
 *
 * Says on stderr what is wrong if the node is missing, the ioctl fails or
 * the module speaks another ABI.
 *
 * Return: an open file descriptor, or -1.
 */
int rd_open_checked_flags(struct rdmx_info *info, int oflags)
{
	int fd, err;

	fd = open(rd_devnode(), oflags | O_CLOEXEC);
	if (fd < 0) {
		rd_devnode_err(errno);
		return -1;
	}
	err = rd_get_info(fd, info);
	if (err) {
		rd_devnode_err(-err);
		goto out_close;
	}
	if (info->abi_version != RDMX_ABI_VERSION) {
		rd_err("rdmx module speaks ABI %u, " RD_PROG " ABI %u: install both from the same release",
		       info->abi_version, RDMX_ABI_VERSION);
		goto out_close;
	}
	return fd;

out_close:
	close(fd);
	return -1;
}

/* rd_open_checked_flags() read-only, for the commands that only ask. */
int rd_open_checked(struct rdmx_info *info)
{
	return rd_open_checked_flags(info, O_RDONLY);
}

/**
 * rd_file_load() - read a whole file into memory
 * @name: the file; "-" is standard input
 * @max: the most bytes it may hold
 * @data: out: its bytes, for free() (never NULL on success, even when empty)
 * @len: out: their number
 *
 * Return: 0, -errno, or -EFBIG when it holds more than @max bytes.
 */
int rd_file_load(const char *name, uint64_t max, unsigned char **data,
		 size_t *len)
{
	bool in = !strcmp(name, "-");
	size_t room = 0, have = 0;
	unsigned char *buf = NULL, *p;
	struct stat st;
	ssize_t n;
	int fd, err = 0;

	fd = in ? STDIN_FILENO : open(name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		err = -EISDIR;
		goto out;
	}
	if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > max) {
		err = -EFBIG;
		goto out;
	}
	for (;;) {
		if (have == room) {
			if (have > max) {
				err = -EFBIG;
				break;
			}
			room = room ? room * 2 : 65536;
			if (room > max + 1)
				room = max + 1;
			p = realloc(buf, room ? room : 1);
			if (!p) {
				err = -ENOMEM;
				break;
			}
			buf = p;
		}
		n = read(fd, buf + have, room - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		if (!n)
			break;
		have += n;
	}
	if (!err && have > max)
		err = -EFBIG;
	if (!err && !buf)
		buf = malloc(1);
	if (!err && !buf)
		err = -ENOMEM;
out:
	if (!in)
		close(fd);
	if (err) {
		free(buf);
		return err;
	}
	*data = buf;
	*len = have;
	return 0;
}

/**
 * rd_write_all() - write all of a buffer, across short writes and EINTR
 * @fd: where
 * @buf: what
 * @len: bytes
 *
 * Return: 0 or a negative errno.
 */
int rd_write_all(int fd, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	ssize_t n;

	while (len) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= n;
	}
	return 0;
}

/**
 * rd_file_save() - write a buffer to a file, which appears whole
 * @name: the file, written as NAME.tmp and renamed; "-" is standard output
 * @buf: the bytes
 * @len: their number
 *
 * Return: 0, or -errno (NAME.tmp removed again).
 */
int rd_file_save(const char *name, const void *buf, size_t len)
{
	char tmp[4096];
	int fd, err;

	if (!strcmp(name, "-")) {
		if (fflush(stdout))
			return -errno;
		return rd_write_all(STDOUT_FILENO, buf, len);
	}
	if (rd_pathf(tmp, sizeof(tmp), "%s.tmp", name))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0)
		return -errno;
	err = rd_write_all(fd, buf, len);
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, name))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}
