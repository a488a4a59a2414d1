// SPDX-License-Identifier: GPL-2.0
/*
 * rdmxctl export: the block service's server side. Exports (a block device,
 * a regular file or a RAM region under a name) are added and deleted with
 * RDMX_IOC_EXPORT_ADD and _DEL, grown with _RESIZE, and listed from
 * /sys/kernel/rdmx/exports/NAME/.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rdmxctl.h"

#define EXPORT_PATH_MAX		4096
#define EXPORT_RAM_PREFIX	"ram:"
#define EXPORT_RAM_ALIGN	4096
/* 16 prefixes of "[ffff:...:ffff]/128 " fit */
#define EXPORT_ALLOW_STR	1024

enum { EXPORT_OPT_RO, EXPORT_OPT_ALLOW, EXPORT_OPT_LBS, EXPORT_OPT_FORCE,
       EXPORT_OPT_INSECURE, EXPORT_OPT_SHARED, EXPORT_OPT_UUID };

static const struct rd_opt export_add_opts[] = {
	{ EXPORT_OPT_RO,	0, "ro", false },
	{ EXPORT_OPT_ALLOW,	0, "allow", true },
	{ EXPORT_OPT_LBS,	0, "lbs", true },
	{ EXPORT_OPT_INSECURE,	0, "insecure", false },
	{ EXPORT_OPT_SHARED,	0, "shared", false },
	{ EXPORT_OPT_UUID,	0, "uuid", true },
	{ 0, 0, NULL, false },
};

static const struct rd_opt export_del_opts[] = {
	{ EXPORT_OPT_FORCE,	'f', "force", false },
	{ 0, 0, NULL, false },
};

static const struct rd_opt export_resize_opts[] = {
	{ 0, 0, NULL, false },
};

static int export_help(struct rd *rd)
{
	(void)rd;
	printf("Usage: " RD_PROG " export add NAME PATH [ --ro ] [ --allow ADDR[/PREFIX] ]...\n"
	       "                          [ --lbs 512|4096 ] [ --insecure ] [ --shared ]\n"
	       "                          [ --uuid UUID ]\n"
	       "       " RD_PROG " export del NAME [ --force ]\n"
	       "       " RD_PROG " export resize NAME [ SIZE ]\n"
	       "       " RD_PROG " export [ list ]\n"
	       "       " RD_PROG " export show NAME\n"
	       "Export storage under NAME for peers to map with '" RD_PROG " map'; delete an\n"
	       "export, or list them with their counters. PATH is a block device, a regular\n"
	       "file, or ram:SIZE for memory (SIZE with K, M, G or T, a multiple of 4 KiB).\n"
	       "--ro refuses writes; each --allow admits a peer address or prefix (up to %d;\n"
	       "without one, any peer); --lbs sets the logical block size (default: the\n"
	       "device's, 512 for files and memory). Clients must connect from a port\n"
	       "below 1024, which only privileged processes bind (rdmx's client does);\n"
	       "--insecure serves any port. One map at a time may write the export (others\n"
	       "map it --ro); --shared lets several write it, for a cluster filesystem.\n"
	       "The export's uuid, its clients' disk serial, follows the storage: --uuid\n"
	       "sets it; else a block device's comes from its WWN, serial or uuid, a file's\n"
	       "from its filesystem and inode, and RAM gets a new one each time.\n"
	       "Peers connect through a listener\n"
	       "('" RD_PROG " listen add'). 'del' refuses while a client has the export mapped,\n"
	       "unless --force, which disconnects the clients. 'resize' grows an export:\n"
	       "a ram export to SIZE bytes (as in ram:SIZE), a file or device to its size\n"
	       "now; mapped disks see the new size with their next request. Exports only\n"
	       "grow. Adding, deleting and resizing need CAP_SYS_ADMIN.\n",
	       RDMX_EXPORT_ALLOW_MAX);
	return RD_EXIT_OK;
}

/**
 * rd_blk_open_need() - open /dev/rdmx for a command that needs features
 * @need: the RDMX_FEATURE_* bits it needs, RDMX_FEATURE_BLOCK among them
 * @what: what they give, for the message when they are missing
 *
 * Return: a file descriptor, or -1 after saying why not.
 */
int rd_blk_open_need(uint64_t need, const char *what)
{
	struct rdmx_info info;
	int fd;

	fd = rd_open_checked_flags(&info, O_RDWR);
	if (fd < 0)
		return -1;
	if (!(info.features & RDMX_FEATURE_BLOCK))
		what = "block service";
	else if ((info.features & need) == need)
		return fd;
	rd_err("rdmx module %s has no %s: upgrade the module",
	       (const char *)info.version, what);
	close(fd);
	return -1;
}

/* Whether the module behind @fd has all of @features. */
static bool blk_has(int fd, uint64_t features)
{
	struct rdmx_info info;

	return !rd_get_info(fd, &info) &&
	       (info.features & features) == features;
}

/**
 * rd_blk_open() - open /dev/rdmx for a command of the block service
 *
 * Says on stderr what is wrong if the module is missing, speaks another
 * ABI or has no block service.
 *
 * Return: a file descriptor, or -1.
 */
int rd_blk_open(void)
{
	return rd_blk_open_need(RDMX_FEATURE_BLOCK, "block service");
}

static bool export_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

/**
 * rd_check_export_name() - check an export's name as the kernel will
 * @object: the command, for the message
 * @name: 1 to RDMX_EXPORT_NAME_LEN - 1 bytes of [A-Za-z0-9._-]
 *
 * Return: 0, or RD_EXIT_USAGE after saying what is wrong.
 */
int rd_check_export_name(const char *object, const char *name)
{
	size_t len = strlen(name), i;

	if (!len || len >= RDMX_EXPORT_NAME_LEN)
		return rd_usage_err(object, "bad export name '%s': expected 1 to %d characters",
				    name, RDMX_EXPORT_NAME_LEN - 1);
	for (i = 0; i < len; i++)
		if (!export_name_char(name[i]))
			return rd_usage_err(object, "bad export name '%s': only letters, digits, '.', '_' and '-'",
					    name);
	if (!strcmp(name, ".") || !strcmp(name, ".."))
		return rd_usage_err(object, "bad export name '%s'", name);
	return 0;
}

/* Zero the bits of @addr past the first @bits. */
static void export_mask(__u8 *addr, unsigned int bytes, unsigned int bits)
{
	unsigned int i;

	for (i = 0; i < bytes; i++) {
		if (bits >= 8) {
			bits -= 8;
			continue;
		}
		addr[i] &= (__u8)(0xff00 >> bits);
		bits = 0;
	}
}

/**
 * rd_parse_allow() - one allow-list entry, "ADDR" or "ADDR/PREFIX"
 * @s: an IPv4 or IPv6 address (IPv6 also in brackets), maybe with a prefix
 *	length; without one, the host alone (/32 or /128)
 * @a: out: the entry, host bits cleared ("10.0.0.5/24" is 10.0.0.0/24)
 *
 * Return: 0, or -EINVAL.
 */
int rd_parse_allow(const char *s, struct rdmx_export_allow *a)
{
	char buf[INET6_ADDRSTRLEN + 2], *slash, *p = buf;
	unsigned long prefix;
	unsigned int max;
	size_t len;

	len = strlen(s);
	if (!len || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len + 1);
	slash = strchr(buf, '/');
	if (slash)
		*slash++ = '\0';
	len = strlen(p);
	if (len >= 2 && p[0] == '[' && p[len - 1] == ']') {
		p[len - 1] = '\0';
		p++;
	}
	memset(a, 0, sizeof(*a));
	if (inet_pton(AF_INET, p, a->addr) == 1) {
		a->family = AF_INET;
		max = 32;
	} else if (inet_pton(AF_INET6, p, a->addr) == 1) {
		a->family = AF_INET6;
		max = 128;
	} else {
		return -EINVAL;
	}
	prefix = max;
	if (slash && rd_parse_ulong(slash, 0, max, &prefix))
		return -EINVAL;
	a->prefix_len = prefix;
	export_mask(a->addr, max / 8, prefix);
	return 0;
}

/**
 * rd_parse_ram() - the size of "ram:SIZE"
 * @s: SIZE: a number with an optional K, M, G or T (times 2^10 ... 2^40)
 * @size: out: bytes, a non-zero multiple of 4096
 *
 * Return: 0, or -EINVAL.
 */
int rd_parse_ram(const char *s, uint64_t *size)
{
	uint64_t v;

	if (rd_parse_u64(s, true, 1, UINT64_MAX, &v) ||
	    v % EXPORT_RAM_ALIGN)
		return -EINVAL;
	*size = v;
	return 0;
}

/**
 * struct export_args - what "export add" was told
 * @ea: the ioctl's argument, filled in as the words come
 * @name: NAME
 * @path: PATH, as given
 * @abs: PATH made absolute, for the kernel and sysfs
 * @uuid_opt: --uuid was given
 * @ident: where the uuid came from: "--uuid", what rd_blk_identity() read,
 *	or empty for the kernel's own
 */
struct export_args {
	struct rdmx_export_add ea;
	const char *name;
	const char *path;
	char abs[PATH_MAX];
	bool uuid_opt;
	char ident[768];
};

static int export_add_word(struct export_args *x, const char *word)
{
	if (!x->name) {
		x->name = word;
		return rd_check_export_name("export", word);
	}
	if (!x->path) {
		x->path = word;
		return 0;
	}
	return rd_usage_err("export", "unexpected argument '%s'", word);
}

static int export_add_opt(struct export_args *x, int opt, const char *val)
{
	unsigned long lbs;

	switch (opt) {
	case EXPORT_OPT_RO:
		x->ea.flags |= RDMX_EXPORT_RO;
		return 0;
	case EXPORT_OPT_INSECURE:
		x->ea.flags |= RDMX_EXPORT_INSECURE;
		return 0;
	case EXPORT_OPT_SHARED:
		x->ea.flags |= RDMX_EXPORT_SHARED;
		return 0;
	case EXPORT_OPT_UUID:
		if (rd_parse_uuid(val, x->ea.uuid))
			return rd_usage_err("export", "bad --uuid '%s': expected a uuid (8-4-4-4-12 hex digits), not all zero",
					    val);
		x->ea.flags |= RDMX_EXPORT_UUID;
		x->uuid_opt = true;
		snprintf(x->ident, sizeof(x->ident), "--uuid");
		return 0;
	case EXPORT_OPT_ALLOW:
		if (x->ea.nr_allow == RDMX_EXPORT_ALLOW_MAX)
			return rd_usage_err("export", "too many --allow: at most %d",
					    RDMX_EXPORT_ALLOW_MAX);
		if (rd_parse_allow(val, &x->ea.allow[x->ea.nr_allow]))
			return rd_usage_err("export", "bad --allow '%s': expected an IPv4 or IPv6 address, with /PREFIX of 0 to 32 or 0 to 128",
					    val);
		x->ea.nr_allow++;
		return 0;
	case EXPORT_OPT_LBS:
		if (rd_parse_ulong(val, 512, 4096, &lbs) ||
		    (lbs != 512 && lbs != 4096))
			return rd_usage_err("export", "bad --lbs '%s': expected 512 or 4096",
					    val);
		x->ea.logical_block_size = lbs;
		return 0;
	}
	return RD_EXIT_USAGE;
}

/* Return: 0, RD_EXIT_USAGE, or -1 for help. */
static int export_add_parse(struct rd *rd, struct export_args *x)
{
	const char *val;
	uint64_t ram_size;
	int opt, ret = 0;

	while (!ret && (opt = rd_getopt(rd, "export", export_add_opts,
					&val)) != RD_OPT_END) {
		if (opt == RD_OPT_HELP)
			return -1;
		if (opt == RD_OPT_WORD)
			ret = export_add_word(x, val);
		else if (opt >= 0)
			ret = export_add_opt(x, opt, val);
		else
			ret = RD_EXIT_USAGE;
	}
	if (ret)
		return ret;
	if (!x->name)
		return rd_usage_err("export", "export add: missing NAME");
	if (!x->path)
		return rd_usage_err("export", "export add: missing PATH (a block device, a file or ram:SIZE)");
	if (strncmp(x->path, EXPORT_RAM_PREFIX, strlen(EXPORT_RAM_PREFIX)))
		return 0;
	if (rd_parse_ram(x->path + strlen(EXPORT_RAM_PREFIX), &ram_size))
		return rd_usage_err("export", "bad size in '%s': expected ram:SIZE, SIZE a non-zero multiple of 4096 bytes (K, M, G, T suffixes)",
				    x->path);
	if (x->ea.flags & RDMX_EXPORT_UUID)
		return rd_usage_err("export", "--uuid does not apply to RAM: its data does not outlive the export, so it gets a new uuid each time");
	x->ea.ram_size = ram_size;
	x->ea.flags |= RDMX_EXPORT_RAM;
	return 0;
}

/*
 * PATH made absolute (sysfs shows it, and the kernel resolves it in no
 * particular directory), and checked to be a block device or regular file.
 * Return: 0, or -1 after saying why not.
 */
static int export_path(struct export_args *x)
{
	struct stat st;

	if (!realpath(x->path, x->abs) || stat(x->abs, &st)) {
		rd_err("%s: %s", x->path, strerror(errno));
		return -1;
	}
	if (!S_ISBLK(st.st_mode) && !S_ISREG(st.st_mode)) {
		rd_err("%s: neither a block device nor a regular file", x->path);
		return -1;
	}
	if (S_ISREG(st.st_mode) && !st.st_size) {
		rd_err("%s: empty file: give it a size first (truncate -s SIZE)",
		       x->path);
		return -1;
	}
	if (strlen(x->abs) >= EXPORT_PATH_MAX) {
		rd_err("%s: %s", x->path, strerror(ENAMETOOLONG));
		return -1;
	}
	x->ea.path = (uintptr_t)x->abs;
	x->ea.path_len = strlen(x->abs);
	if (S_ISREG(st.st_mode) && !(x->ea.flags & RDMX_EXPORT_UUID))
		snprintf(x->ident, sizeof(x->ident), "its filesystem and inode");
	if (S_ISBLK(st.st_mode) && !(x->ea.flags & RDMX_EXPORT_UUID)) {
		if (!rd_blk_identity(x->name, x->abs, x->ea.uuid, x->ident,
				     sizeof(x->ident)))
			x->ea.flags |= RDMX_EXPORT_UUID;
		else if (snprintf(x->ident, sizeof(x->ident), "its path") > 0)
			fprintf(stderr, "note: %s says nothing stable about itself (no WWN, serial or uuid): export %s's uuid follows its path; pin it with --uuid\n",
				x->path, x->name);
	}
	return 0;
}

static void export_add_err(int err, const struct export_args *x)
{
	switch (err) {
	case EEXIST:
		rd_err("export %s exists already (see '" RD_PROG " export list')",
		       x->name);
		return;
	case EPERM:
	case EACCES:
		rd_err("add export %s: %s", x->name, strerror(err));
		fputs("hint: exporting needs CAP_SYS_ADMIN: run as root\n",
		      stderr);
		return;
	case EBUSY:
		rd_err("add export %s: %s is busy: in use exclusively (mounted, or claimed by another driver)",
		       x->name, x->path);
		return;
	case ENOENT:
	case ENXIO:
	case ENODEV:
		rd_err("add export %s: %s: %s", x->name, x->path,
		       strerror(err));
		return;
	case EINVAL:
		rd_err("add export %s: %s: refused as invalid (a file whose size is not a multiple of the block size, a block size the device cannot take?)",
		       x->name, x->path);
		fputs("hint: see 'dmesg | grep rdmx'\n", stderr);
		return;
	case ENOMEM:
		rd_err("add export %s: out of memory%s", x->name,
		       x->ea.flags & RDMX_EXPORT_RAM ?
		       ": is ram:SIZE more than this host has?" : "");
		return;
	}
	rd_err("add export %s: %s", x->name, strerror(err));
}

/* -j: what export add made: its name and uuid, where the uuid came from. */
static void export_add_print(struct rd *rd, const struct export_args *x)
{
	char uuid[RD_UUID_LEN] = "";

	if (!rd->json)
		return;
	if (x->ea.size >= RDMX_EXPORT_ADD_SIZE_VER1)
		rd_format_uuid(x->ea.uuid, uuid);
	open_object(rd, NULL);
	print_str(rd, "export", NULL, x->name);
	print_str(rd, "uuid", NULL, uuid[0] ? uuid : "unknown");
	print_str(rd, "identity", NULL,
		  x->ident[0] ? x->ident :
		  x->ea.flags & RDMX_EXPORT_RAM ? "new for RAM" : "the module's");
	close_object(rd);
}

static int export_add(struct rd *rd)
{
	struct export_args *x;
	int fd, ret;

	x = calloc(1, sizeof(*x));
	if (!x) {
		rd_err("out of memory");
		return RD_EXIT_FAIL;
	}
	x->ea.size = sizeof(x->ea);
	ret = export_add_parse(rd, x);
	if (ret < 0) {
		ret = export_help(rd);
		goto out;
	}
	if (ret)
		goto out;
	ret = RD_EXIT_FAIL;
	if (!(x->ea.flags & RDMX_EXPORT_RAM) && export_path(x))
		goto out;
	memcpy(x->ea.name, x->name, strlen(x->name));

	if (x->uuid_opt)
		fd = rd_blk_open_need(RDMX_FEATURE_BLOCK | RDMX_FEATURE_BLOCK_IDENTITY,
				   "export uuids (--uuid)");
	else if (x->ea.flags & RDMX_EXPORT_SHARED)
		fd = rd_blk_open_need(RDMX_FEATURE_BLOCK | RDMX_FEATURE_BLOCK_ACCESS,
				   "access modes (--shared)");
	else if (x->ea.flags & RDMX_EXPORT_INSECURE)
		fd = rd_blk_open_need(RDMX_FEATURE_BLOCK | RDMX_FEATURE_BLOCK_SECURE,
				   "source port check (--insecure)");
	else
		fd = rd_blk_open();
	if (fd < 0)
		goto out;
	if (!blk_has(fd, RDMX_FEATURE_BLOCK_IDENTITY)) {
		/* An older module: its own identity, and the old argument. */
		x->ea.flags &= ~(uint32_t)RDMX_EXPORT_UUID;
		memset(x->ea.uuid, 0, sizeof(x->ea.uuid));
		x->ea.size = RDMX_EXPORT_ADD_SIZE_VER0;
		x->ident[0] = '\0';
	}
	if (ioctl(fd, RDMX_IOC_EXPORT_ADD, &x->ea) < 0) {
		export_add_err(errno, x);
	} else {
		export_add_print(rd, x);
		ret = RD_EXIT_OK;
	}
	close(fd);
out:
	free(x);
	return ret;
}

/**
 * export_name_parse() - the words of a command on one export
 * @rd: context
 * @cmd: the command, for messages ("del")
 * @opts: the options it takes, none with a value
 * @opt_bits: out: bit N set for each option of id N given
 * @name: out: NAME, checked
 * @arg: out: the word after NAME, NULL if none; NULL when the command
 *	takes no such word
 *
 * Return: 0, RD_EXIT_USAGE after saying what is wrong, or -1 for help.
 */
static int export_name_parse(struct rd *rd, const char *cmd,
			     const struct rd_opt *opts, unsigned int *opt_bits,
			     const char **name, const char **arg)
{
	const char *val;
	int opt, ret;

	*name = NULL;
	while ((opt = rd_getopt(rd, "export", opts, &val)) != RD_OPT_END) {
		if (opt == RD_OPT_HELP)
			return -1;
		if (opt >= 0) {
			*opt_bits |= 1u << opt;
		} else if (opt != RD_OPT_WORD) {
			return RD_EXIT_USAGE;
		} else if (!*name) {
			ret = rd_check_export_name("export", val);
			if (ret)
				return ret;
			*name = val;
		} else if (arg && !*arg) {
			*arg = val;
		} else {
			return rd_usage_err("export", "unexpected argument '%s'",
					    val);
		}
	}
	if (!*name)
		return rd_usage_err("export", "export %s: missing NAME", cmd);
	return 0;
}

/* The errors of del and resize on export @name alike; @verb: "delete". */
static void export_name_err(int err, const char *verb, const char *name)
{
	if (err == ENOENT)
		rd_err("no export %s (see '" RD_PROG " export list')", name);
	else if (err == EPERM || err == EACCES)
		rd_err("%s export %s: %s: needs CAP_SYS_ADMIN, run as root",
		       verb, name, strerror(err));
	else
		rd_err("%s export %s: %s", verb, name, strerror(err));
}

static int export_del(struct rd *rd)
{
	struct rdmx_export_del ed = { .size = sizeof(ed) };
	unsigned int opts = 0;
	const char *name;
	int fd, ret;

	ret = export_name_parse(rd, "del", export_del_opts, &opts, &name, NULL);
	if (ret)
		return ret < 0 ? export_help(rd) : ret;
	if (opts & (1u << EXPORT_OPT_FORCE))
		ed.flags |= RDMX_EXPORT_DEL_FORCE;
	memcpy(ed.name, name, strlen(name));

	fd = rd_blk_open();
	if (fd < 0)
		return RD_EXIT_FAIL;
	ret = ioctl(fd, RDMX_IOC_EXPORT_DEL, &ed);
	if (ret < 0 && errno == EBUSY)
		rd_err("export %s busy: mapped by a client, or queues of a client that unmapped it still finishing their requests (retry, or use --force to disconnect its clients)",
		       name);
	else if (ret < 0)
		export_name_err(errno, "delete", name);
	close(fd);
	return ret < 0 ? RD_EXIT_FAIL : RD_EXIT_OK;
}

/* @size: SIZE as given, or NULL */
static void export_resize_err(int err, const char *name, const char *size)
{
	if (err != EINVAL) {
		export_name_err(err, "resize", name);
		return;
	}
	if (size)
		rd_err("resize export %s to %s: refused as invalid: exports only grow, SIZE is for ram exports only, and must be a multiple of 4096 and of the export's block size",
		       name, size);
	else
		rd_err("resize export %s: refused as invalid: exports only grow (did its file or device shrink?), and a ram export needs SIZE",
		       name);
	fprintf(stderr, "hint: see '" RD_PROG " export show %s'\n", name);
}

static int export_resize(struct rd *rd)
{
	struct rdmx_export_resize er = { .size = sizeof(er) };
	const char *name, *size = NULL;
	unsigned int opts = 0;
	uint64_t bytes = 0;
	int fd, ret;

	ret = export_name_parse(rd, "resize", export_resize_opts, &opts, &name,
				&size);
	if (ret)
		return ret < 0 ? export_help(rd) : ret;
	if (size && rd_parse_ram(size, &bytes))
		return rd_usage_err("export", "bad SIZE '%s': expected a non-zero multiple of 4096 bytes (K, M, G, T suffixes)",
				    size);
	er.new_size = bytes;	/* 0: read the file's or device's size again */
	memcpy(er.name, name, strlen(name));

	fd = rd_blk_open_need(RDMX_FEATURE_BLOCK | RDMX_FEATURE_BLOCK_RESIZE,
			   "export resize");
	if (fd < 0)
		return RD_EXIT_FAIL;
	ret = ioctl(fd, RDMX_IOC_EXPORT_RESIZE, &er);
	if (ret < 0)
		export_resize_err(errno, name, size);
	close(fd);
	if (ret < 0)
		return RD_EXIT_FAIL;

	open_object(rd, NULL);
	print_str(rd, "name", "%s:", name);
	print_u64(rd, "old_size", "%" PRIu64, er.old_size);
	print_text(rd, "->");
	print_u64(rd, "size", "%" PRIu64 " bytes", er.new_size);
	print_nl(rd);
	close_object(rd);
	return RD_EXIT_OK;
}

/* The counters, in print order, on the second line. */
static const char *const export_nums[] = {
	"clients",
	"reads",
	"writes",
	"read_bytes",
	"write_bytes",
	"errors",
};

/* A numeric attribute; "-" (null) when missing or no number. */
static void export_print_num(struct rd *rd, const char *dir, const char *attr,
			     const char *label)
{
	uint64_t v = 0;
	bool ok = !rd_object_u64(dir, attr, &v);

	print_u64_or_null(rd, attr, label, ok, v);
}

/* "allow": the prefixes as an array in JSON; "any" in text when empty. */
static void export_print_allow(struct rd *rd, const char *dir)
{
	char buf[EXPORT_ALLOW_STR], *p, *save = NULL;
	bool first = true;
	int len;

	len = rd_object_attr(dir, "allow", buf, sizeof(buf));
	if (len < 0) {
		print_null(rd, "allow", "allow -");
		return;
	}
	if (!len) {
		open_array(rd, "allow");
		close_array(rd);
		print_text(rd, "allow any");
		return;
	}
	open_array(rd, "allow");
	print_text(rd, "allow");
	for (p = strtok_r(buf, " \t\n", &save); p;
	     p = strtok_r(NULL, " \t\n", &save)) {
		if (rd->json)
			jsonw_string(&rd->jw, p);
		else
			printf("%s%s", first ? " " : ",", p);
		first = false;
	}
	close_array(rd);
}

/*
 * A 0/1 attribute @name of an export: a JSON boolean, in text @yes or @no;
 * null ("-") when it cannot be read.
 */
static void export_print_flag(struct rd *rd, const char *dir,
			      const char *name, const char *yes,
			      const char *no)
{
	char v[8];

	if (rd_object_attr(dir, name, v, sizeof(v)) > 0 &&
	    (!strcmp(v, "0") || !strcmp(v, "1"))) {
		print_bool(rd, name, NULL, v[0] == '1');
		print_text(rd, "%s", v[0] == '1' ? yes : no);
	} else {
		print_null(rd, name, "-");
	}
}

/*
 * A one-word attribute of an export as a string, in text "@name WORD"; null
 * ("@name -") if unreadable.
 */
static void export_print_word(struct rd *rd, const char *dir,
			      const char *name)
{
	char v[40];

	if (rd_object_attr(dir, name, v, sizeof(v)) > 0) {
		print_text(rd, "%s", name);
		print_str(rd, name, "%s", v);
	} else {
		print_null(rd, name, name);
		print_text(rd, "-");
	}
}

/*
 * "maps": who maps the export, a line each in text ("map ADDR UUID rw
 * queues N"), an array of objects in JSON; null when unreadable (the file
 * is root's).
 */
static void export_print_maps(struct rd *rd, const char *dir)
{
	char buf[8192], host[64], uuid[40], mode[4], *line, *save = NULL;
	unsigned int queues;
	int len;

	len = rd_object_attr(dir, "maps", buf, sizeof(buf));
	if (len < 0) {
		if (rd->json)
			print_null(rd, "maps", NULL);
		return;
	}
	open_array(rd, "maps");
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "%63s %39s %3s %u", host, uuid, mode,
			   &queues) != 4)
			continue;
		print_nl(rd);
		print_indent(rd, 4);
		open_object(rd, NULL);
		print_str(rd, "host", "map %s", host);
		print_str(rd, "map", "%s", uuid);
		print_str(rd, "mode", "%s", mode);
		print_uint(rd, "queues", "queues %u", queues);
		close_object(rd);
	}
	close_array(rd);
}

/*
 * One export: a line with name, path, size, block size, access, port
 * check, access mode and allow-list, then an indented line of counters,
 * and a line for each map (for root).
 * Return: false if it went away while being read.
 */
static bool export_print(struct rd *rd, const char *dir, const char *name)
{
	char path[EXPORT_PATH_MAX];
	size_t i;

	if (rd_object_attr(dir, "path", path, sizeof(path)) == -ENOENT &&
	    !rd_exists(dir))
		return false;
	open_object(rd, NULL);
	print_str(rd, "name", "%s:", name);
	if (path[0])
		print_str(rd, "path", "%s", path);
	else
		print_null(rd, "path", "-");
	export_print_num(rd, dir, "size", "size");
	export_print_num(rd, dir, "logical_block_size", "lbs");
	export_print_flag(rd, dir, "read_only", "ro", "rw");
	export_print_flag(rd, dir, "secure", "secure", "insecure");
	export_print_word(rd, dir, "access");
	export_print_allow(rd, dir);
	print_nl(rd);
	print_indent(rd, 4);
	export_print_word(rd, dir, "uuid");
	export_print_word(rd, dir, "identity");
	for (i = 0; i < ARRAY_SIZE(export_nums); i++)
		export_print_num(rd, dir, export_nums[i], export_nums[i]);
	export_print_maps(rd, dir);
	print_nl(rd);
	close_object(rd);
	return true;
}

/* Every export, or with @want only that one. */
static int export_print_all(struct rd *rd, const char *want)
{
	char path[EXPORT_PATH_MAX], dir[EXPORT_PATH_MAX];
	struct dirent **list;
	int i, n, found = 0;

	n = rd_rdmx_objects("exports", path, sizeof(path), &list);
	if (n < 0)
		return RD_EXIT_FAIL;
	open_array(rd, NULL);
	for (i = 0; i < n; i++) {
		if (want && strcmp(list[i]->d_name, want))
			continue;
		if (!rd_pathf(dir, sizeof(dir), "%s/%s", path,
			      list[i]->d_name) &&
		    export_print(rd, dir, list[i]->d_name))
			found++;
	}
	close_array(rd);
	rd_freedir(list, n);
	if (want && !found) {
		rd_err("no export %s (see '" RD_PROG " export list')", want);
		return RD_EXIT_FAIL;
	}
	return RD_EXIT_OK;
}

static int export_list(struct rd *rd)
{
	int ret = rd_no_more_args(rd, "export");

	return ret ? ret : export_print_all(rd, NULL);
}

static int export_show(struct rd *rd)
{
	const char *name;
	int ret;

	if (rd_no_arg(rd))
		return export_print_all(rd, NULL);
	name = rd_argv(rd);
	ret = rd_check_export_name("export", name);
	if (ret)
		return ret;
	rd_arg_inc(rd);
	ret = rd_no_more_args(rd, "export");
	return ret ? ret : export_print_all(rd, name);
}

static const struct rd_cmd export_cmds[] = {
	{ NULL,		export_list },
	{ "add",	export_add },
	{ "del",	export_del },
	{ "help",	export_help },
	{ "list",	export_list },
	{ "resize",	export_resize },
	{ "show",	export_show },
	{ NULL,		NULL },
};

int cmd_export(struct rd *rd)
{
	return rd_exec_cmd(rd, export_cmds, "export");
}
