// SPDX-License-Identifier: GPL-2.0
/*
 * rdmxctl doctor: what stops rdmx, or RDMA at all, from working on this
 * host, and the command that fixes it.
 *
 * Reads only sysfs (under RDMX_SYSFS, so tests can fake it), the module
 * lists in /lib/modules and /dev/rdmx (RDMX_DEVNODE). Each check prints
 * findings: a level, the check's name, a message and, unless all is well,
 * the fix.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "rdmxctl.h"

#define DOC_PATH_MAX	4096
#define DOC_MSG_MAX	512
#define DOC_FIX_MAX	256
#define DOC_DEV_NAME_MAX	64	/* the kernel's IB_DEVICE_NAME_MAX */

/* node_type of an iWARP device ("4: RNIC"), RDMA_NODE_RNIC in the kernel */
#define DOC_NODE_RNIC	4

/*
 * Bytes of RoCE headers a path MTU must leave room for in the netdev MTU:
 * GRH, UDP, BTH, XRC and AtomicETH extended headers and ICRC, as the
 * kernel's iboe_get_mtu() counts them.
 */
#define ROCE_HDR_BYTES	(40 + 8 + 12 + 4 + 28 + 4)
/* Below this RoCE path MTU, warn: 512 and 256 byte packets cost throughput */
#define ROCE_GOOD_MTU	1024

enum doc_level {
	DOC_OK,
	DOC_WARN,
	DOC_ERROR,
	DOC_NR_LEVELS
};

static const char *const doc_level_names[DOC_NR_LEVELS] = {
	[DOC_OK]	= "ok",
	[DOC_WARN]	= "warn",
	[DOC_ERROR]	= "error",
};

/**
 * struct doctor - state of one doctor run
 * @rd: context, for printing
 * @sysfs: sysfs root
 * @count: findings so far, per level
 * @module_loaded: sysfs shows the rdmx module
 * @devs: device ports from RDMX_IOC_LIST_DEVICES, NULL if unavailable
 * @nr_devs: entries in @devs
 * @nr_rdma_devs: RDMA devices in sysfs
 * @eth: netdev to name in soft-RoCE fixes ("ETH" if none fits)
 * @root: the check that found why rdmx cannot run on this kernel at all
 *	(no module support, no RDMA core, no rdmx module for it), whose
 *	consequences the later checks report as such; NULL if none
 * @release: the running kernel's release
 * @distro: ID of /etc/os-release ("debian", "ubuntu"...), "" if unknown
 */
/* A port's netdev: which netdevs RDMA devices use, and which two share */
struct netdev_user {
	char dev[DOC_DEV_NAME_MAX];
	char netdev[IFNAMSIZ];
};

struct doctor {
	struct rd *rd;
	const char *sysfs;
	unsigned int count[DOC_NR_LEVELS];
	bool module_loaded;
	struct rdmx_device_info *devs;
	unsigned int nr_devs;
	int nr_rdma_devs;
	struct netdev_user *users;
	unsigned int nr_users;
	bool port_without_netdev;
	char eth[IFNAMSIZ];
	const char *root;
	char release[65];
	char distro[32];
};

struct netdev_info {
	bool exists;
	bool admin_up;		/* IFF_UP */
	bool carrier;		/* operstate up (or unknown while up) */
	bool loopback;
	unsigned long type;	/* ARPHRD_* */
	unsigned long mtu;	/* 0: unknown */
};

/* What sysfs says about one port of one RDMA device */
struct port_info {
	const char *dev;
	unsigned int port;
	unsigned int state;	/* RDMX_PORT_*, NOP if unreadable */
	char state_name[32];
	bool ethernet;		/* link layer Ethernet: RoCE or iWARP */
	bool iwarp;
	char link_layer[32];
	char netdev[IFNAMSIZ];	/* empty: unknown */
	struct netdev_info nd;
	unsigned int gids;	/* non-zero GIDs */
	unsigned int routable_gids;	/* non-zero and not link-local */
	unsigned int active_mtu;	/* 0: unknown */
};

static void finding(struct doctor *d, enum doc_level level, const char *check,
		    const char *fix, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/**
 * finding() - print one finding and count it
 * @d: doctor
 * @level: how bad
 * @check: the check's name, stable for scripts
 * @fix: command that fixes it, NULL when there is nothing to fix
 * @fmt: message
 */
static void finding(struct doctor *d, enum doc_level level, const char *check,
		    const char *fix, const char *fmt, ...)
{
	struct rd *rd = d->rd;
	char msg[DOC_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	d->count[level]++;

	open_object(rd, NULL);
	print_str(rd, "level", "%-5s", doc_level_names[level]);
	print_str(rd, "check", "%s:", check);
	print_str(rd, "message", "%s", msg);
	if (fix) {
		print_nl(rd);
		print_indent(rd, 6);
		print_str(rd, "fix", "fix: %s", fix);
	} else {
		print_null(rd, "fix", NULL);
	}
	print_nl(rd);
	close_object(rd);
}

static bool sys_exists(const struct doctor *d, const char *rel)
{
	char path[DOC_PATH_MAX];

	return !rd_pathf(path, sizeof(path), "%s/%s", d->sysfs, rel) &&
	       rd_exists(path);
}

/* ---- network devices ---- */

static int netdev_attr(const struct doctor *d, const char *name,
		       const char *attr, char *buf, size_t size)
{
	char path[DOC_PATH_MAX];
	int err;

	err = rd_pathf(path, sizeof(path), "%s/class/net/%s/%s", d->sysfs,
		       name, attr);
	return err ? err : rd_read_file(path, buf, size);
}

static void netdev_ulong(const struct doctor *d, const char *name,
			 const char *attr, unsigned long *val)
{
	char path[DOC_PATH_MAX];

	if (!rd_pathf(path, sizeof(path), "%s/class/net/%s/%s", d->sysfs,
		      name, attr))
		rd_read_ulong(path, val);
}

/* Fill @nd from class/net/@name; what cannot be read stays 0. */
static void netdev_read(const struct doctor *d, const char *name,
			struct netdev_info *nd)
{
	char path[DOC_PATH_MAX], state[32];
	unsigned long flags = 0;

	memset(nd, 0, sizeof(*nd));
	if (rd_pathf(path, sizeof(path), "%s/class/net/%s", d->sysfs, name) ||
	    !rd_exists(path))
		return;
	nd->exists = true;
	netdev_ulong(d, name, "flags", &flags);
	netdev_ulong(d, name, "type", &nd->type);
	netdev_ulong(d, name, "mtu", &nd->mtu);
	nd->admin_up = flags & IFF_UP;
	nd->loopback = flags & IFF_LOOPBACK;
	if (netdev_attr(d, name, "operstate", state, sizeof(state)) >= 0)
		nd->carrier = !strcmp(state, "up") ||
			      (!strcmp(state, "unknown") && nd->admin_up);
}

/* How fit a netdev is to carry soft-RoCE: 0 not, 1 up, 2 up with carrier */
static int netdev_score(const struct netdev_info *nd)
{
	if (!nd->exists || nd->loopback || nd->type != ARPHRD_ETHER ||
	    !nd->admin_up)
		return 0;
	return nd->carrier ? 2 : 1;
}

/* Choose the netdev that soft-RoCE fixes name: the first fittest one. */
static void pick_netdev(struct doctor *d)
{
	char path[DOC_PATH_MAX];
	struct netdev_info nd;
	struct dirent **list;
	int n, i, score, best = 0;

	snprintf(d->eth, sizeof(d->eth), "ETH");
	if (rd_pathf(path, sizeof(path), "%s/class/net", d->sysfs))
		return;
	n = rd_scandir(path, &list);
	if (n < 0)
		return;
	for (i = 0; i < n; i++) {
		size_t len = strlen(list[i]->d_name);

		if (len >= sizeof(d->eth))
			continue;
		netdev_read(d, list[i]->d_name, &nd);
		score = netdev_score(&nd);
		if (score > best) {
			best = score;
			memcpy(d->eth, list[i]->d_name, len + 1);
		}
	}
	rd_freedir(list, n);
}

/*
 * Where the kernel's files are: /proc, /lib/modules, /usr/src, the DKMS
 * tree, /etc/os-release; under RDMX_ROOT when set (the tests' fake host).
 */
static int root_path(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int root_path(char *buf, size_t size, const char *fmt, ...)
{
	const char *root = getenv("RDMX_ROOT");
	char rel[DOC_PATH_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(rel))
		return -ENAMETOOLONG;
	return rd_pathf(buf, size, "%s%s", root ? root : "", rel);
}

static bool root_exists(const char *rel)
{
	char path[DOC_PATH_MAX];

	return !root_path(path, sizeof(path), "%s", rel) && rd_exists(path);
}

/* Does a modules.dep or modules.builtin list @mod (also as .ko.xz etc.)? */
static bool kmod_listed(const char *file, const char *mod)
{
	size_t len = strlen(mod), cap = 0;
	char *line = NULL, *base;
	bool found = false;
	FILE *f;

	f = fopen(file, "re");
	if (!f)
		return false;
	while (!found && getline(&line, &cap, f) >= 0) {
		line[strcspn(line, ":\n")] = '\0';
		base = strrchr(line, '/');
		base = base ? base + 1 : line;
		found = !strncmp(base, mod, len) && !strncmp(base + len, ".ko", 3);
	}
	free(line);
	fclose(f);
	return found;
}

static bool kmod_available(const char *release, const char *mod)
{
	static const char *const lists[] = { "modules.dep", "modules.builtin" };
	char path[DOC_PATH_MAX];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(lists); i++)
		if (!root_path(path, sizeof(path), "/lib/modules/%s/%s",
			       release, lists[i]) && kmod_listed(path, mod))
			return true;
	return false;
}

/* ID= of /etc/os-release into d->distro. */
static void read_distro(struct doctor *d)
{
	char path[DOC_PATH_MAX], *line = NULL;
	size_t cap = 0;
	FILE *f;

	if (root_path(path, sizeof(path), "/etc/os-release"))
		return;
	f = fopen(path, "re");
	if (!f)
		return;
	while (getline(&line, &cap, f) >= 0)
		if (!strncmp(line, "ID=", 3)) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(d->distro, sizeof(d->distro), "%s",
				 line + 3 + (line[3] == '"'));
			d->distro[strcspn(d->distro, "\"")] = '\0';
			break;
		}
	free(line);
	fclose(f);
}

/* The rdmx-dkms sources' version (/usr/src/rdmx-VERSION), or NULL. */
static bool dkms_version(char *buf, size_t size)
{
	char path[DOC_PATH_MAX];
	struct dirent **list;
	bool found = false;
	int i, n;

	if (root_path(path, sizeof(path), "/usr/src"))
		return false;
	n = rd_scandir(path, &list);
	if (n < 0)
		return false;
	for (i = 0; i < n && !found; i++)
		if (!strncmp(list[i]->d_name, "rdmx-", 5)) {
			snprintf(buf, size, "%s", list[i]->d_name + 5);
			found = true;
		}
	rd_freedir(list, n);
	return found;
}

/* Why rdmx has no module for this kernel, and the fix. */
static void no_rdmx_module(struct doctor *d)
{
	char fix[DOC_FIX_MAX], ver[64], build[DOC_PATH_MAX];

	if (!dkms_version(ver, sizeof(ver))) {
		finding(d, DOC_ERROR, "kernel",
			"apt-get install rdmx-dkms (or, from rdmx's sources: make install)",
			"no rdmx module for kernel %s: rdmx is not installed",
			d->release);
	} else if (snprintf(build, sizeof(build), "/lib/modules/%s/build",
			    d->release) > 0 && !root_exists(build)) {
		snprintf(fix, sizeof(fix),
			 "apt-get install linux-headers-%s && dkms install rdmx/%s -k %s",
			 d->release, ver, d->release);
		finding(d, DOC_ERROR, "kernel", fix,
			"no rdmx module for kernel %s: DKMS has rdmx %s but cannot build it without the kernel's headers",
			d->release, ver);
	} else {
		snprintf(fix, sizeof(fix), "dkms install rdmx/%s -k %s", ver,
			 d->release);
		finding(d, DOC_ERROR, "kernel", fix,
			"no rdmx module for kernel %s: DKMS has rdmx %s but did not build it for this kernel (dkms status rdmx; the build log is under /var/lib/dkms/rdmx/%s/build)",
			d->release, ver, ver);
	}
	d->root = "kernel";
}

/*
 * The root causes first: a kernel that cannot load modules, has no RDMA
 * core, or has no rdmx module. Each makes the checks after it fail in ways
 * their own fixes (modprobe) cannot mend.
 */
static void check_kernel(struct doctor *d)
{
	char path[DOC_PATH_MAX], v[16];
	bool debian = !strcmp(d->distro, "debian");

	d->module_loaded = sys_exists(d, "module/rdmx");
	if (d->module_loaded) {
		finding(d, DOC_OK, "kernel", NULL,
			"kernel %s runs the rdmx module", d->release);
		return;
	}
	if (!root_exists("/proc/modules")) {
		finding(d, DOC_ERROR, "kernel",
			debian ? "boot a Debian kernel (apt-get install linux-image-amd64)" :
				 "boot a kernel built with CONFIG_MODULES",
			"kernel %s cannot load modules (no /proc/modules: built without CONFIG_MODULES): rdmx cannot run on it",
			d->release);
		d->root = "kernel";
		return;
	}
	if (!root_path(path, sizeof(path), "/proc/sys/kernel/modules_disabled") &&
	    rd_read_file(path, v, sizeof(v)) > 0 && !strcmp(v, "1")) {
		finding(d, DOC_ERROR, "kernel",
			"reboot without setting kernel.modules_disabled (it cannot be unset)",
			"kernel %s loads no more modules (kernel.modules_disabled is 1)",
			d->release);
		d->root = "kernel";
		return;
	}
	if (!sys_exists(d, "class/infiniband") && !sys_exists(d, "module/ib_core") &&
	    !kmod_available(d->release, "ib_core")) {
		finding(d, DOC_ERROR, "kernel",
			debian ? "boot a Debian kernel (apt-get install linux-image-amd64): its RDMA core is a module" :
			!strcmp(d->distro, "ubuntu") ? "apt-get install linux-modules-extra-$(uname -r)" :
			"boot a kernel built with CONFIG_INFINIBAND",
			"kernel %s has no RDMA core (ib_core: CONFIG_INFINIBAND) loaded, built in or installed",
			d->release);
		d->root = "kernel";
		return;
	}
	if (!kmod_available(d->release, "rdmx")) {
		no_rdmx_module(d);
		return;
	}
	finding(d, DOC_OK, "kernel", NULL,
		"kernel %s loads modules, has the RDMA core and an rdmx module",
		d->release);
}

/* A check's failure that follows from the root cause: said once, no fix. */
static bool follows_root(struct doctor *d, const char *check, const char *what)
{
	if (!d->root)
		return false;
	finding(d, DOC_WARN, check, NULL, "%s: follows from the %s error above",
		what, d->root);
	return true;
}

/* ---- the rdmx module and /dev/rdmx ---- */

static void check_module(struct doctor *d)
{
	if (d->module_loaded)
		finding(d, DOC_OK, "module", NULL, "rdmx module loaded");
	else if (!follows_root(d, "module", "rdmx module not loaded"))
		finding(d, DOC_ERROR, "module", "modprobe rdmx",
			"rdmx module not loaded (not installed? from a build tree: insmod rdmx.ko)");
}

/* A fix for a missing node: recreate it from the misc device's numbers. */
static void devnode_mknod_fix(const struct doctor *d, char *fix, size_t size)
{
	char path[DOC_PATH_MAX], num[32];
	unsigned int major, minor;

	if (!rd_pathf(path, sizeof(path), "%s/class/misc/rdmx/dev", d->sysfs) &&
	    rd_read_file(path, num, sizeof(num)) > 0 &&
	    sscanf(num, "%u:%u", &major, &minor) == 2)
		snprintf(fix, size, "mknod %s c %u %u", rd_devnode(), major, minor);
	else
		snprintf(fix, size, "rmmod rdmx && modprobe rdmx");
}

static void devnode_failed(struct doctor *d, int err)
{
	const struct rd_errhint *h = rd_devnode_errhint(err);

	if (err == ENOENT && d->module_loaded) {
		char fix[DOC_FIX_MAX];

		devnode_mknod_fix(d, fix, sizeof(fix));
		finding(d, DOC_ERROR, "devnode", fix,
			"%s not found although the rdmx module is loaded (devtmpfs or udev did not create it)",
			rd_devnode());
		return;
	}
	finding(d, DOC_ERROR, "devnode", h->fix, "%s %s%s%s", rd_devnode(),
		h->what ? h->what : strerror(err), *h->why ? ": " : "", h->why);
}

static bool check_abi(struct doctor *d, const struct rdmx_info *info)
{
	if (info->abi_version == RDMX_ABI_VERSION) {
		finding(d, DOC_OK, "abi", NULL, "module ABI %u is " RD_PROG "'s",
			info->abi_version);
		return true;
	}
	finding(d, DOC_ERROR, "abi",
		"install " RD_PROG " and the rdmx module from the same release",
		"module ABI %u, " RD_PROG " ABI %u", info->abi_version,
		RDMX_ABI_VERSION);
	return false;
}

/* Keep the module's view of the ports, for what sysfs does not show. */
static void load_devices(struct doctor *d, int fd, const struct rdmx_info *info)
{
	int err;

	if (!(info->features & RDMX_FEATURE_LIST_DEVICES))
		return;
	err = rd_list_devices(fd, &d->devs, &d->nr_devs);
	if (err)
		finding(d, DOC_WARN, "devnode", "dmesg | grep rdmx",
			"listing device ports on %s failed: %s", rd_devnode(),
			strerror(-err));
}

static void check_devnode(struct doctor *d)
{
	struct rdmx_info info;
	int fd, err;

	fd = rd_devnode_open();
	if (fd < 0) {
		if (!d->module_loaded &&
		    follows_root(d, "devnode", "no device node"))
			return;
		devnode_failed(d, -fd);
		return;
	}
	err = rd_get_info(fd, &info);
	if (err) {
		devnode_failed(d, -err);
	} else {
		finding(d, DOC_OK, "devnode", NULL,
			"%s answers: module %s, %u RDMA port%s", rd_devnode(),
			(const char *)info.version, info.nr_ports,
			info.nr_ports == 1 ? "" : "s");
		if (check_abi(d, &info))
			load_devices(d, fd, &info);
	}
	close(fd);
}

/* ---- the RDMA core ---- */

static void check_rdma_core(struct doctor *d)
{
	if (sys_exists(d, "class/infiniband"))
		finding(d, DOC_OK, "rdma_core", NULL, "RDMA core (ib_core) loaded");
	else if (!follows_root(d, "rdma_core", "no RDMA core loaded"))
		finding(d, DOC_ERROR, "rdma_core", "modprobe ib_core",
			"no RDMA core (ib_core) loaded / no RDMA devices");
}

static void check_uverbs(struct doctor *d)
{
	if (sys_exists(d, "class/infiniband_verbs"))
		finding(d, DOC_OK, "uverbs", NULL,
			"userspace verbs interface (ib_uverbs) loaded");
	else if (!follows_root(d, "uverbs", "ib_uverbs not loaded"))
		finding(d, DOC_WARN, "uverbs", "modprobe ib_uverbs",
			"userspace verbs interface (ib_uverbs) not loaded: rdmx does not need it, but ibv_devinfo and perftest do (ibv_devinfo's \"Failed to get IB devices list: Unknown error -38\" means this)");
}

/* ---- ports ---- */

static int port_attr(const struct doctor *d, const struct port_info *p,
		     const char *attr, char *buf, size_t size)
{
	char path[DOC_PATH_MAX];
	int err;

	err = rd_pathf(path, sizeof(path), "%s/class/infiniband/%s/ports/%u/%s",
		       d->sysfs, p->dev, p->port, attr);
	return err ? err : rd_read_file(path, buf, size);
}

static int dev_attr(const struct doctor *d, const char *dev, const char *attr,
		    char *buf, size_t size)
{
	char path[DOC_PATH_MAX];
	int err;

	err = rd_pathf(path, sizeof(path), "%s/class/infiniband/%s/%s",
		       d->sysfs, dev, attr);
	return err ? err : rd_read_file(path, buf, size);
}

static bool dev_is_iwarp(const struct doctor *d, const char *dev)
{
	char buf[32];

	return dev_attr(d, dev, "node_type", buf, sizeof(buf)) > 0 &&
	       strtoul(buf, NULL, 10) == DOC_NODE_RNIC;
}

/* "4: ACTIVE" */
static void port_read_state(const struct doctor *d, struct port_info *p)
{
	char buf[64], *end;
	unsigned long state;

	p->state = RDMX_PORT_NOP;
	snprintf(p->state_name, sizeof(p->state_name), "unknown");
	if (port_attr(d, p, "state", buf, sizeof(buf)) <= 0)
		return;
	state = strtoul(buf, &end, 10);
	if (end == buf || *end != ':' || state > RDMX_PORT_ACTIVE_DEFER)
		return;
	p->state = state;
	end++;
	while (isspace((unsigned char)*end))
		end++;
	snprintf(p->state_name, sizeof(p->state_name), "%s", end);
}

/* The port's netdev: the one GID 0 belongs to, else the soft device's parent. */
static void port_read_netdev(const struct doctor *d, struct port_info *p)
{
	if (port_attr(d, p, "gid_attrs/ndevs/0", p->netdev,
		      sizeof(p->netdev)) > 0)
		return;
	if (dev_attr(d, p->dev, "parent", p->netdev, sizeof(p->netdev)) > 0)
		return;
	p->netdev[0] = '\0';
}

/* Return: 0 and the GID in @gid, or -errno (unset entries may read EINVAL). */
static int port_read_gid(const struct doctor *d, const struct port_info *p,
			 const char *index, struct in6_addr *gid)
{
	char attr[300], buf[64];
	int err;

	err = rd_pathf(attr, sizeof(attr), "gids/%s", index);
	if (!err)
		err = port_attr(d, p, attr, buf, sizeof(buf));
	if (err < 0)
		return err;
	return inet_pton(AF_INET6, buf, gid) == 1 ? 0 : -EINVAL;
}

static void port_count_gids(const struct doctor *d, struct port_info *p)
{
	char path[DOC_PATH_MAX];
	struct in6_addr gid;
	struct dirent **list;
	int n, i;

	if (rd_pathf(path, sizeof(path), "%s/class/infiniband/%s/ports/%u/gids",
		     d->sysfs, p->dev, p->port))
		return;
	n = rd_scandir(path, &list);
	if (n < 0)
		return;
	for (i = 0; i < n; i++) {
		if (port_read_gid(d, p, list[i]->d_name, &gid) ||
		    IN6_IS_ADDR_UNSPECIFIED(&gid))
			continue;
		p->gids++;
		if (!IN6_IS_ADDR_LINKLOCAL(&gid))
			p->routable_gids++;
	}
	rd_freedir(list, n);
}

/*
 * An MTU as a file may hold it: "1024", "1024 (3)", or the IB enum alone
 * (1 = 256 ... 5 = 4096). Return: bytes, 0 if none found.
 */
static unsigned int parse_mtu(const char *s)
{
	unsigned long v, mtu_enum = 0;
	char *end;

	while (*s) {
		if (!isdigit((unsigned char)*s)) {
			s++;
			continue;
		}
		v = strtoul(s, &end, 10);
		if (v >= 256 && v <= 4096)
			return v;
		if (!mtu_enum && v >= 1 && v <= 5)
			mtu_enum = v;
		s = end;
	}
	return mtu_enum ? 128u << mtu_enum : 0;
}

static const struct rdmx_device_info *
module_port(const struct doctor *d, const struct port_info *p)
{
	unsigned int i;

	for (i = 0; i < d->nr_devs; i++)
		if (d->devs[i].port == p->port &&
		    !strcmp((const char *)d->devs[i].name, p->dev))
			return &d->devs[i];
	return NULL;
}

/* From sysfs where the driver has the file, else from the rdmx module. */
static unsigned int port_read_active_mtu(const struct doctor *d,
					 const struct port_info *p)
{
	const struct rdmx_device_info *di;
	char buf[64];

	if (port_attr(d, p, "active_mtu", buf, sizeof(buf)) > 0)
		return parse_mtu(buf);
	di = module_port(d, p);
	return di ? di->active_mtu : 0;
}

static void port_read(const struct doctor *d, const char *dev,
		      unsigned int port, bool iwarp, struct port_info *p)
{
	memset(p, 0, sizeof(*p));
	p->dev = dev;
	p->port = port;
	p->iwarp = iwarp;
	port_read_state(d, p);
	if (port_attr(d, p, "link_layer", p->link_layer,
		      sizeof(p->link_layer)) <= 0)
		snprintf(p->link_layer, sizeof(p->link_layer), "unknown");
	p->ethernet = !strcmp(p->link_layer, "Ethernet");
	port_read_netdev(d, p);
	if (p->netdev[0])
		netdev_read(d, p->netdev, &p->nd);
	port_count_gids(d, p);
	p->active_mtu = port_read_active_mtu(d, p);
}

static const char *port_transport(const struct port_info *p)
{
	if (p->iwarp)
		return "iWARP";
	if (p->ethernet)
		return "RoCE";
	return p->link_layer;
}

static const char *port_netdev_name(const struct port_info *p)
{
	return p->netdev[0] ? p->netdev : "NETDEV";
}

/* An Ethernet port follows its netdev: find out why that is not running. */
static void eth_port_down(struct doctor *d, const struct port_info *p)
{
	const char *nd = port_netdev_name(p);
	char fix[DOC_FIX_MAX];
	const char *why;

	if (!p->nd.exists) {
		why = "is unknown";
		snprintf(fix, sizeof(fix), "ip link set %s up", nd);
	} else if (!p->nd.admin_up) {
		why = "is down";
		snprintf(fix, sizeof(fix), "ip link set %s up", nd);
	} else if (!p->nd.carrier) {
		why = "has no carrier (cable unplugged or link peer down)";
		snprintf(fix, sizeof(fix), "ip link show %s", nd);
	} else {
		why = "is up, yet the port did not follow";
		snprintf(fix, sizeof(fix), "ip link set %s down && ip link set %s up",
			 nd, nd);
	}
	finding(d, DOC_ERROR, "port", fix, "%s port %u is %s: netdev %s %s",
		p->dev, p->port, p->state_name, nd, why);
}

/* An InfiniBand port needs a link, then a subnet manager. */
static void ib_port_down(struct doctor *d, const struct port_info *p)
{
	char fix[DOC_FIX_MAX];

	if (p->state == RDMX_PORT_INIT || p->state == RDMX_PORT_ARMED) {
		finding(d, DOC_WARN, "port", "systemctl start opensm",
			"%s port %u is %s: no subnet manager has activated it",
			p->dev, p->port, p->state_name);
		return;
	}
	snprintf(fix, sizeof(fix), "ibstat %s %u", p->dev, p->port);
	finding(d, DOC_ERROR, "port", fix,
		"%s port %u is %s: no physical link (check the cable and the switch port)",
		p->dev, p->port, p->state_name);
}

static void check_port_state(struct doctor *d, const struct port_info *p)
{
	if (p->state == RDMX_PORT_ACTIVE || p->state == RDMX_PORT_ACTIVE_DEFER)
		finding(d, DOC_OK, "port", NULL, "%s port %u is %s: %s%s%s",
			p->dev, p->port, p->state_name, port_transport(p),
			p->netdev[0] ? ", netdev " : "", p->netdev);
	else if (p->ethernet)
		eth_port_down(d, p);
	else
		ib_port_down(d, p);
}

static void check_port_gids(struct doctor *d, const struct port_info *p)
{
	const char *nd = port_netdev_name(p);
	char fix[DOC_FIX_MAX];

	/* iWARP connects by IP address; its GIDs only carry the MAC. */
	if (p->iwarp)
		return;
	if (!p->ethernet) {
		if (p->gids)
			finding(d, DOC_OK, "gid", NULL, "%s port %u: GIDs: %u set",
				p->dev, p->port, p->gids);
		else
			finding(d, DOC_WARN, "gid", "systemctl start opensm",
				"%s port %u: no GID: no subnet manager has configured the port",
				p->dev, p->port);
		return;
	}

	snprintf(fix, sizeof(fix), "ip addr add ADDR/PREFIX dev %s", nd);
	if (!p->gids)
		finding(d, DOC_ERROR, "gid", fix,
			"%s port %u: no GID: the netdev %s has no IP address",
			p->dev, p->port, nd);
	else if (!p->routable_gids)
		finding(d, DOC_WARN, "gid", fix,
			"%s port %u: only link-local GIDs: %s has no IPv4 or global IPv6 address for rdma_cm to use",
			p->dev, p->port, nd);
	else
		finding(d, DOC_OK, "gid", NULL,
			"%s port %u: GIDs: %u set, %u routable", p->dev,
			p->port, p->gids, p->routable_gids);
}

/* Largest RoCE path MTU a netdev MTU carries, as iboe_get_mtu(); 0: none */
static unsigned int roce_mtu(unsigned long netdev_mtu)
{
	static const unsigned int ib_mtus[] = { 4096, 2048, 1024, 512, 256 };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ib_mtus); i++)
		if (netdev_mtu >= ib_mtus[i] + ROCE_HDR_BYTES)
			return ib_mtus[i];
	return 0;
}

static void check_port_mtu(struct doctor *d, const struct port_info *p)
{
	char fix[DOC_FIX_MAX], active[32] = "";
	unsigned int mtu;

	if (!p->ethernet || p->iwarp || !p->nd.mtu)
		return;
	mtu = roce_mtu(p->nd.mtu);
	if (p->active_mtu)
		snprintf(active, sizeof(active), " (active_mtu %u)", p->active_mtu);
	if (mtu >= ROCE_GOOD_MTU) {
		finding(d, DOC_OK, "mtu", NULL,
			"%s port %u: %s mtu %lu carries RoCE MTU %u%s", p->dev,
			p->port, p->netdev, p->nd.mtu, mtu, active);
		return;
	}
	snprintf(fix, sizeof(fix), "ip link set %s mtu 1500", p->netdev);
	finding(d, mtu ? DOC_WARN : DOC_ERROR, "mtu", fix,
		"%s port %u: %s mtu %lu limits the RoCE path MTU to %u%s",
		p->dev, p->port, p->netdev, p->nd.mtu, mtu, active);
}

static int parse_port(const char *name, unsigned int *port)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(name, &end, 10);
	if (errno || end == name || *end || !v || v > 255)
		return -EINVAL;
	*port = v;
	return 0;
}

/*
 * The port directories of @dev, sorted. Return: their number, with *list
 * to free with rd_freedir(); or 0 or less with nothing to free.
 */
static int dev_ports(const struct doctor *d, const char *dev,
		     struct dirent ***list)
{
	char path[DOC_PATH_MAX];
	int n;

	if (rd_pathf(path, sizeof(path), "%s/class/infiniband/%s/ports",
		     d->sysfs, dev))
		return -1;
	n = rd_scandir(path, list);
	if (n == 0)
		rd_freedir(*list, n);
	return n;
}

static void check_device(struct doctor *d, const char *dev)
{
	bool iwarp = dev_is_iwarp(d, dev);
	struct port_info p;
	struct dirent **list;
	unsigned int port;
	int n, i;

	n = dev_ports(d, dev, &list);
	if (n <= 0) {
		finding(d, DOC_WARN, "port", "dmesg | grep -i rdma",
			"%s shows no ports in sysfs", dev);
		return;
	}
	for (i = 0; i < n; i++) {
		if (parse_port(list[i]->d_name, &port))
			continue;
		port_read(d, dev, port, iwarp, &p);
		check_port_state(d, &p);
		check_port_gids(d, &p);
		check_port_mtu(d, &p);
	}
	rd_freedir(list, n);
}

/*
 * Append to d->users the ports of @dev that have a netdev (on ENOMEM,
 * none); note a port without one (InfiniBand's GIDs name no netdev).
 */
static void add_netdev_users(struct doctor *d, const char *dev)
{
	struct netdev_user *grown;
	struct port_info p;
	struct dirent **list;
	int n, i;

	n = dev_ports(d, dev, &list);
	if (n <= 0)
		return;
	grown = realloc(d->users, (d->nr_users + n) * sizeof(*grown));
	if (!grown) {
		rd_freedir(list, n);
		return;
	}
	d->users = grown;
	for (i = 0; i < n; i++) {
		memset(&p, 0, sizeof(p));
		p.dev = dev;
		if (parse_port(list[i]->d_name, &p.port))
			continue;
		port_read_netdev(d, &p);
		if (!p.netdev[0]) {
			d->port_without_netdev = true;
			continue;
		}
		snprintf(grown[d->nr_users].dev, sizeof(grown->dev), "%.*s",
			 (int)sizeof(grown->dev) - 1, dev);
		memcpy(grown[d->nr_users].netdev, p.netdev, sizeof(p.netdev));
		d->nr_users++;
	}
	rd_freedir(list, n);
}

/*
 * Is @u[k] the first port of a second device on its netdev? Return: the
 * first device, else NULL (not shared, or already reported).
 */
static const char *netdev_sharer(const struct netdev_user *u, unsigned int k)
{
	const char *first = NULL;
	unsigned int j;

	for (j = 0; j < k; j++) {
		if (strcmp(u[j].netdev, u[k].netdev))
			continue;
		/* Two devices before @k: the pair was reported already. */
		if (first && strcmp(u[j].dev, first))
			return NULL;
		first = u[j].dev;
	}
	return first && strcmp(first, u[k].dev) ? first : NULL;
}

/* Warn once per netdev that ports of two RDMA devices are on. */
static void check_shared_netdev(struct doctor *d)
{
	const struct netdev_user *u = d->users;
	char fix[DOC_FIX_MAX];
	const char *first;
	unsigned int k;

	for (k = 0; k < d->nr_users; k++) {
		first = netdev_sharer(u, k);
		if (!first)
			continue;
		snprintf(fix, sizeof(fix), "rdma link del %s", u[k].dev);
		finding(d, DOC_WARN, "shared_netdev", fix,
			"%s and %s both use %s: rdma_cm resolves an IP address to one RDMA device, so connections to %s's addresses may land on either",
			first, u[k].dev, u[k].netdev, u[k].netdev);
	}
}

static void no_devices(struct doctor *d)
{
	char fix[DOC_FIX_MAX];

	snprintf(fix, sizeof(fix),
		 "modprobe rdma_rxe && rdma link add rxe0 type rxe netdev %s",
		 d->eth);
	finding(d, DOC_ERROR, "devices", fix,
		"no RDMA devices: create a soft-RoCE device on an Ethernet netdev (or soft-iWARP: modprobe siw && rdma link add siw0 type siw netdev %s)",
		d->eth);
}

static void check_devices(struct doctor *d)
{
	char path[DOC_PATH_MAX];
	struct dirent **list;
	int n, i;

	n = rd_pathf(path, sizeof(path), "%s/class/infiniband", d->sysfs);
	if (!n)
		n = rd_scandir(path, &list);
	if (n == -ENOENT || n == 0) {
		if (n == 0)
			rd_freedir(list, n);
		if (!follows_root(d, "devices", "no RDMA devices"))
			no_devices(d);
		return;
	}
	if (n < 0) {
		finding(d, DOC_ERROR, "devices", "sudo " RD_PROG " doctor",
			"cannot list %s: %s", path, strerror(-n));
		return;
	}
	d->nr_rdma_devs = n;
	for (i = 0; i < n; i++) {
		check_device(d, list[i]->d_name);
		add_netdev_users(d, list[i]->d_name);
	}
	check_shared_netdev(d);
	rd_freedir(list, n);
}

/* ---- tools to create a soft-RoCE device ---- */

static void check_soft_roce(struct doctor *d)
{
	char fix[DOC_FIX_MAX];
	bool siw;

	if (sys_exists(d, "module/rdma_rxe")) {
		finding(d, DOC_OK, "soft_roce", NULL,
			"rdma_rxe loaded: soft-RoCE devices can be created");
		return;
	}
	if (follows_root(d, "soft_roce", "no soft-RoCE"))
		return;
	if (kmod_available(d->release, "rdma_rxe")) {
		finding(d, DOC_OK, "soft_roce", NULL,
			"rdma_rxe available for kernel %s (not loaded)", d->release);
		return;
	}
	if (d->nr_rdma_devs > 0) {
		finding(d, DOC_OK, "soft_roce", NULL,
			"rdma_rxe not available for kernel %s; not needed, RDMA devices are present",
			d->release);
		return;
	}
	siw = sys_exists(d, "module/siw") || kmod_available(d->release, "siw");
	if (siw)
		snprintf(fix, sizeof(fix),
			 "modprobe siw && rdma link add siw0 type siw netdev %s",
			 d->eth);
	else if (!strcmp(d->distro, "ubuntu"))
		snprintf(fix, sizeof(fix), "apt-get install linux-modules-extra-%s",
			 d->release);
	else if (!strcmp(d->distro, "debian"))
		snprintf(fix, sizeof(fix),
			 "boot a Debian kernel (apt-get install linux-image-amd64): it has rdma_rxe");
	else
		snprintf(fix, sizeof(fix), "build the kernel with CONFIG_RDMA_RXE=m");
	finding(d, DOC_WARN, "soft_roce", fix,
		"rdma_rxe not available for kernel %s%s", d->release,
		siw ? "; soft-iWARP (siw) is" : ", nor siw");
}

/* Look for an executable @prog in the ':'-separated @dirs. */
static bool find_prog(const char *dirs, const char *prog, char *buf,
		      size_t size)
{
	const char *p = dirs;
	struct stat st;

	while (*p) {
		const char *end = strchrnul(p, ':');

		/* An empty entry means the current directory: skip it. */
		if (end > p &&
		    !rd_pathf(buf, size, "%.*s/%s", (int)(end - p), p, prog) &&
		    !stat(buf, &st) && S_ISREG(st.st_mode) && !access(buf, X_OK))
			return true;
		p = *end ? end + 1 : end;
	}
	return false;
}

static void check_rdma_tool(struct doctor *d)
{
	const char *path_env = getenv("PATH");
	char path[DOC_PATH_MAX];

	/* sbin is often not in a user's PATH, yet the tool is there. */
	if ((path_env && find_prog(path_env, "rdma", path, sizeof(path))) ||
	    find_prog("/usr/sbin:/sbin", "rdma", path, sizeof(path)))
		finding(d, DOC_OK, "rdma_tool", NULL,
			"rdma tool (iproute2) found: %s", path);
	else
		finding(d, DOC_WARN, "rdma_tool", "apt-get install iproute2",
			"rdma tool (iproute2) not found: it creates soft-RoCE devices (rdma link add)");
}

/* ---- the block service: listeners, exports, maps ---- */

/* Entries of sysfs directory @rel whose name starts with @prefix. */
static int count_entries(const struct doctor *d, const char *rel,
			 const char *prefix)
{
	char path[DOC_PATH_MAX];
	struct dirent **list;
	int i, n, k = 0;

	if (rd_pathf(path, sizeof(path), "%s/%s", d->sysfs, rel))
		return 0;
	n = rd_scandir(path, &list);
	if (n < 0)
		return 0;
	for (i = 0; i < n; i++)
		if (list[i]->d_name[0] != '.' &&
		    !strncmp(list[i]->d_name, prefix, strlen(prefix)))
			k++;
	rd_freedir(list, n);
	return k;
}

/* One mapped disk (@bdir, a block device): live, a loss timeout that covers a restart. */
static void check_map(struct doctor *d, const char *bdir, const char *name)
{
	char disk[16];
	char dir[DOC_PATH_MAX], state[32] = "", server[64] = "", fix[DOC_FIX_MAX];
	char export[RDMX_EXPORT_NAME_LEN] = "";
	uint64_t loss;

	/* rdmxbN, N below 2^20: a disk of rdmx's has rdmx/. */
	if (strncmp(name, "rdmxb", 5) || strlen(name) >= sizeof(disk))
		return;
	snprintf(disk, sizeof(disk), "%s", name);
	if (rd_pathf(dir, sizeof(dir), "%s/rdmx", bdir) || !rd_exists(dir))
		return;
	rd_object_attr(dir, "state", state, sizeof(state));
	rd_object_attr(dir, "server", server, sizeof(server));
	rd_object_attr(dir, "export", export, sizeof(export));
	if (strcmp(state, "live")) {
		if (!strcmp(state, "dead"))
			snprintf(fix, sizeof(fix),
				 RD_PROG " unmap --force %s && " RD_PROG " map %s %s",
				 disk, server, export);
		else
			snprintf(fix, sizeof(fix), RD_PROG " map show %s; dmesg | grep %s",
				 disk, disk);
		finding(d, !strcmp(state, "dead") ? DOC_ERROR : DOC_WARN, "map",
			fix, "%s (export %s of %s) is %s", disk, export, server,
			state[0] ? state : "in an unknown state");
		return;
	}
	if (!rd_object_u64(dir, "loss_timeout_ms", &loss) && loss < 10000) {
		snprintf(fix, sizeof(fix),
			 RD_PROG " unmap %s && " RD_PROG " map %s %s --loss-timeout 10m",
			 disk, server, export);
		finding(d, DOC_WARN, "map", fix,
			"%s (export %s of %s) fails its I/O after %llu ms without its server: too short for a server restart",
			disk, export, server, (unsigned long long)loss);
		return;
	}
	finding(d, DOC_OK, "map", NULL, "%s (export %s of %s) is live", disk,
		export, server);
}

/*
 * The interface that has address @ip (an IPv4 or IPv6 literal) into
 * @ifname. Return: true if one has it.
 */
static bool address_ifname(const char *ip, char *ifname, size_t size)
{
	unsigned char want[sizeof(struct in6_addr)];
	struct ifaddrs *ifa, *i;
	bool found = false;
	int family;

	family = strchr(ip, ':') ? AF_INET6 : AF_INET;
	if (inet_pton(family, ip, want) != 1 || getifaddrs(&ifa))
		return false;
	for (i = ifa; i && !found; i = i->ifa_next) {
		const void *have;

		if (!i->ifa_addr || i->ifa_addr->sa_family != family)
			continue;
		if (family == AF_INET)
			have = &((struct sockaddr_in *)i->ifa_addr)->sin_addr;
		else
			have = &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr;
		if (!memcmp(have, want, family == AF_INET ? 4 : 16)) {
			snprintf(ifname, size, "%s", i->ifa_name);
			found = true;
		}
	}
	freeifaddrs(ifa);
	return found;
}

/* Whether a port of an RDMA device uses netdev @ifname. */
static bool rdma_netdev(const struct doctor *d, const char *ifname)
{
	unsigned int k;

	for (k = 0; k < d->nr_users; k++)
		if (!strcmp(d->users[k].netdev, ifname))
			return true;
	return false;
}

/*
 * One listener: its address is still this host's, on a netdev that an RDMA
 * device uses (judged only where every port names its netdev: InfiniBand's
 * IPoIB netdevs are not in its GID table).
 */
static void check_listener(struct doctor *d, const char *dir,
			   const char *name)
{
	char addr[128] = "", host[128], ip[128], ifname[IFNAMSIZ];
	char fix[DOC_FIX_MAX];
	unsigned int port = 0;

	(void)name;
	if (rd_object_attr(dir, "addr", addr, sizeof(addr)) <= 0 ||
	    rd_host_port(addr, host, sizeof(host), &port) <= 0 ||
	    rd_unbracket(host, ip, sizeof(ip)))
		return;
	if (!strcmp(ip, "0.0.0.0") || !strcmp(ip, "::")) {
		finding(d, DOC_OK, "listener", NULL,
			"listener %s: every %s address of this host", addr,
			ip[0] == ':' ? "IPv6" : "IPv4");
		return;
	}
	if (!address_ifname(ip, ifname, sizeof(ifname))) {
		snprintf(fix, sizeof(fix),
			 RD_PROG " listen del -a %s -p %u && " RD_PROG " listen add -a ADDR -p %u",
			 ip, port, port);
		finding(d, DOC_WARN, "listener", fix,
			"listener %s: no interface of this host has %s now: no peer reaches it",
			addr, ip);
		return;
	}
	if (d->nr_rdma_devs > 0 && !d->port_without_netdev &&
	    !rdma_netdev(d, ifname)) {
		snprintf(fix, sizeof(fix),
			 "rdma link add rxe0 type rxe netdev %s", ifname);
		finding(d, DOC_WARN, "listener", fix,
			"listener %s: %s is on %s, which no RDMA device uses: peers cannot reach it over RDMA (or listen on an address of an RDMA netdev)",
			addr, ip, ifname);
		return;
	}
	finding(d, DOC_OK, "listener", NULL, "listener %s on %s", addr,
		ifname);
}

/* One export: who may map it, and whether its backing store failed I/O. */
static void check_export(struct doctor *d, const char *dir, const char *name)
{
	char allow[512] = "", path[DOC_PATH_MAX] = "", fix[DOC_FIX_MAX];
	char again[DOC_PATH_MAX + 256], *words;
	uint64_t errors = 0;
	int ret;

	rd_object_attr(dir, "path", path, sizeof(path));
	if (!rd_object_u64(dir, "errors", &errors) && errors) {
		snprintf(fix, sizeof(fix), "dmesg | grep -w %s", name);
		finding(d, DOC_WARN, "export", fix,
			"export %s (%s): %llu I/O errors on its backing store",
			name, path, (unsigned long long)errors);
		return;
	}
	ret = rd_object_attr(dir, "allow", allow, sizeof(allow));
	if (ret < 0)
		return;
	if (ret == 0) {
		/* Adding it again keeps a store's data and uuid, not RAM's. */
		words = strncmp(path, "ram:", 4) ?
			rd_export_words(dir, name) : NULL;
		if (words)
			snprintf(again, sizeof(again),
				 RD_PROG " export del %s && " RD_PROG " export add %s --allow PREFIX",
				 name, words);
		finding(d, DOC_WARN, "export", words ? again : NULL,
			"export %s (%s): any host that reaches this one may map it (no --allow)",
			name, path);
		free(words);
		return;
	}
	finding(d, DOC_OK, "export", NULL, "export %s (%s): allow %s", name,
		path, allow);
}

/* Each entry of sysfs directory @rel, for @fn. */
static void for_each_entry(struct doctor *d, const char *rel,
			   void (*fn)(struct doctor *d, const char *dir,
				      const char *name))
{
	char path[DOC_PATH_MAX], dir[DOC_PATH_MAX];
	struct dirent **list;
	int i, n;

	if (rd_pathf(path, sizeof(path), "%s/%s", d->sysfs, rel))
		return;
	n = rd_scandir(path, &list);
	if (n < 0)
		return;
	for (i = 0; i < n; i++)
		if (list[i]->d_name[0] != '.' &&
		    !rd_pathf(dir, sizeof(dir), "%s/%s", path, list[i]->d_name))
			fn(d, dir, list[i]->d_name);
	rd_freedir(list, n);
}

static void check_block(struct doctor *d)
{
	int exports, listeners;

	if (!d->module_loaded || !sys_exists(d, "kernel/rdmx/exports"))
		return;
	exports = count_entries(d, "kernel/rdmx/exports", "");
	listeners = count_entries(d, "kernel/rdmx/listeners", "");
	if (exports && !listeners)
		finding(d, DOC_WARN, "exports", RD_PROG " listen add",
			"%d export%s but no listener: no peer can map %s",
			exports, exports == 1 ? "" : "s",
			exports == 1 ? "it" : "them");
	for_each_entry(d, "kernel/rdmx/listeners", check_listener);
	for_each_entry(d, "kernel/rdmx/exports", check_export);
	for_each_entry(d, "block", check_map);
}

/* ---- the command ---- */

static void (*const doctor_checks[])(struct doctor *d) = {
	check_kernel,
	check_module,
	check_devnode,
	check_rdma_core,
	check_uverbs,
	check_devices,
	check_soft_roce,
	check_rdma_tool,
	check_block,
};

static void doctor_summary(struct doctor *d)
{
	struct rd *rd = d->rd;

	print_uint(rd, "ok", "%u ok,", d->count[DOC_OK]);
	print_uint(rd, "warnings", "%u warnings,", d->count[DOC_WARN]);
	print_uint(rd, "errors", "%u errors", d->count[DOC_ERROR]);
	print_nl(rd);
}

static int doctor_run(struct rd *rd)
{
	struct doctor d = { .rd = rd, .sysfs = rd_sysfs() };
	struct utsname u;
	size_t i;
	int ret;

	ret = rd_no_more_args(rd, "doctor");
	if (ret)
		return ret;
	snprintf(d.release, sizeof(d.release), "%s",
		 uname(&u) ? "unknown" : u.release);
	read_distro(&d);

	pick_netdev(&d);
	open_object(rd, NULL);
	open_array(rd, "findings");
	for (i = 0; i < ARRAY_SIZE(doctor_checks); i++)
		doctor_checks[i](&d);
	close_array(rd);
	doctor_summary(&d);
	close_object(rd);
	free(d.devs);
	free(d.users);
	return d.count[DOC_ERROR] ? RD_EXIT_FAIL : RD_EXIT_OK;
}

static int doctor_help(struct rd *rd)
{
	(void)rd;
	printf("Usage: " RD_PROG " doctor\n"
	       "Check first that this kernel can run rdmx at all (module support, the RDMA\n"
	       "core, an rdmx module for it, DKMS), then the rdmx module, /dev/rdmx, the\n"
	       "RDMA core, every RDMA port (state, netdev, GIDs, MTU), netdevs that two\n"
	       "RDMA devices share, the tools to create a soft-RoCE device, listeners\n"
	       "on addresses peers cannot reach over RDMA, exports without a listener,\n"
	       "an allow-list or a working backing store, and mapped disks that are not\n"
	       "live or whose loss timeout is short; print each finding as ok, warn or\n"
	       "error, with the command that fixes it.\n"
	       "Exit status 1 if any finding is an error.\n"
	       "Environment: RDMX_SYSFS (default " RD_SYSFS_DEFAULT "), RDMX_DEVNODE (default "
	       RD_DEVNODE_DEFAULT "), RDMX_ROOT (where /proc, /lib/modules, /usr/src and\n"
	       "/etc/os-release are; default /).\n");
	return RD_EXIT_OK;
}

static const struct rd_cmd doctor_cmds[] = {
	{ NULL,		doctor_run },
	{ "help",	doctor_help },
	{ NULL,		NULL },
};

int cmd_doctor(struct rd *rd)
{
	return rd_exec_cmd(rd, doctor_cmds, "doctor");
}
