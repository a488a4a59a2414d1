// SPDX-License-Identifier: GPL-2.0
/*
 * rdmxctl: export identities. An export's uuid is what its clients' disks
 * show as their serial and what a reconnecting client checks, so it must
 * follow the storage, not the name the storage had at boot (/dev/sdb
 * today, /dev/sdc tomorrow). For a block device it is derived here from
 * what the device says it is (see rd_blk_identity()); the kernel derives
 * a file's from its filesystem and inode, and gives RAM a new one each
 * time (Documentation/block.rst, "Identity").
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "rdmxctl.h"

/**
 * rd_parse_uuid() - a uuid in its usual text form
 * @s: 32 hex digits, in groups of 8-4-4-4-12 joined by '-'
 * @uuid: out: its 16 bytes
 *
 * Return: 0, or -EINVAL (also for the all-zero uuid, which means none).
 */
int rd_parse_uuid(const char *s, uint8_t uuid[16])
{
	static const int dash[] = { 8, 13, 18, 23 };
	unsigned int i, n = 0, d = 0, hi = 0;
	uint8_t any = 0;

	if (strlen(s) != 36)
		return -EINVAL;
	for (i = 0; i < 36; i++) {
		char c = s[i];
		unsigned int v;

		if (d < 4 && (int)i == dash[d]) {
			if (c != '-')
				return -EINVAL;
			d++;
			continue;
		}
		if (c >= '0' && c <= '9')
			v = c - '0';
		else if (c >= 'a' && c <= 'f')
			v = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v = c - 'A' + 10;
		else
			return -EINVAL;
		if (n % 2 == 0) {
			hi = v;
		} else {
			uuid[n / 2] = hi << 4 | v;
			any |= uuid[n / 2];
		}
		n++;
	}
	return any ? 0 : -EINVAL;
}

/**
 * rd_format_uuid() - a uuid as text
 * @uuid: its 16 bytes
 * @buf: out: 36 characters and a NUL
 */
void rd_format_uuid(const uint8_t uuid[16], char buf[RD_UUID_LEN])
{
	snprintf(buf, RD_UUID_LEN,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 uuid[0], uuid[1], uuid[2], uuid[3], uuid[4], uuid[5],
		 uuid[6], uuid[7], uuid[8], uuid[9], uuid[10], uuid[11],
		 uuid[12], uuid[13], uuid[14], uuid[15]);
}

/* 64-bit FNV-1a over @len bytes, from @h. */
static uint64_t fnv1a(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;

	while (len--) {
		h ^= *p++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* splitmix64's finalizer: every input bit reaches every output bit. */
static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/*
 * A name-based uuid (version 8, RFC 9562) of "rdmx export", the export's
 * name and @key: the same storage under the same name gives the same uuid
 * on any host.
 */
static void ident_uuid(const char *name, const char *key, uint8_t uuid[16])
{
	static const char tag[] = "rdmx export";
	uint64_t h[2] = { 0xcbf29ce484222325ULL, 0x84222325cbf29ce4ULL };
	int i, j;

	for (i = 0; i < 2; i++) {
		h[i] = fnv1a(h[i], tag, sizeof(tag));
		h[i] = fnv1a(h[i], name, strlen(name) + 1);
		h[i] = mix64(fnv1a(h[i], key, strlen(key)));
		for (j = 0; j < 8; j++)
			uuid[i * 8 + j] = h[i] >> (56 - 8 * j);
	}
	uuid[6] = (uuid[6] & 0x0f) | 0x80;
	uuid[8] = (uuid[8] & 0x3f) | 0x80;
}

/*
 * What a disk says it is, best first: a WWN (NVMe namespaces, SCSI disks),
 * a device-mapper uuid (LVM volumes, dm-crypt, multipath), an MD array's
 * uuid, a serial (virtio-blk, NVMe, with the namespace), a loop device's
 * backing file.
 */
static const char *const ident_attrs[] = {
	"wwid", "device/wwid", "dm/uuid", "md/uuid", "serial",
	"device/serial", "loop/backing_file",
};

/**
 * rd_blk_identity() - a block device's export uuid, from what it is
 * @name: the export's name
 * @path: the block device
 * @uuid: out: the uuid
 * @src: out: what it came from ("wwid=…", with ";part=N" for a partition)
 * @size: bytes at @src
 *
 * Reads /sys/dev/block/MAJ:MIN (for a partition, its disk's attributes
 * and its number), so the uuid follows the device wherever it appears
 * (/dev/sdb or /dev/sdc, any /dev/disk/by-* link to it).
 *
 * Return: 0, or -ENOENT when the device says nothing stable about itself
 * (the kernel then derives one from the path), or another -errno.
 */
int rd_blk_identity(const char *name, const char *path, uint8_t uuid[16],
		    char *src, size_t size)
{
	char dir[PATH_MAX], disk[PATH_MAX], f[PATH_MAX], val[512];
	char part[32] = "";
	struct stat st;
	size_t i;

	if (stat(path, &st))
		return -errno;
	if (!S_ISBLK(st.st_mode))
		return -ENOTBLK;
	if (rd_pathf(dir, sizeof(dir), "/sys/dev/block/%u:%u",
		     major(st.st_rdev), minor(st.st_rdev)))
		return -ENAMETOOLONG;
	snprintf(disk, sizeof(disk), "%s", dir);
	if (!rd_pathf(f, sizeof(f), "%s/partition", dir) &&
	    rd_read_file(f, val, sizeof(val)) > 0) {
		snprintf(part, sizeof(part), ";part=%.16s", val);
		if (rd_pathf(disk, sizeof(disk), "%s/..", dir))
			return -ENAMETOOLONG;
	}
	for (i = 0; i < ARRAY_SIZE(ident_attrs); i++) {
		char key[700], nsid[32] = "";

		if (rd_pathf(f, sizeof(f), "%s/%s", disk, ident_attrs[i]) ||
		    rd_read_file(f, val, sizeof(val)) <= 0)
			continue;
		/* A controller's serial names every namespace behind it. */
		if (!strcmp(ident_attrs[i], "device/serial") &&
		    !rd_pathf(f, sizeof(f), "%s/nsid", disk))
			rd_read_file(f, nsid, sizeof(nsid));
		snprintf(key, sizeof(key), "%s=%.512s%s%s%s", ident_attrs[i],
			 val, nsid[0] ? ";nsid=" : "", nsid, part);
		ident_uuid(name, key, uuid);
		snprintf(src, size, "%s", key);
		return 0;
	}
	return -ENOENT;
}
