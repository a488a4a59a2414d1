// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx-ioctlfuzz: a structure-aware fuzzer of the /dev/rdmx ioctls.
 *
 * Threads share a small pool of /dev/rdmx descriptors and call every ioctl
 * of uapi/linux/rdmx.h on them. Arguments are valid most of the time (the
 * right sizes, zero reserved fields, known flags, ids and tokens that
 * earlier calls returned, this host's addresses in 198.18.0.0/24 or
 * 127.0.0.1 and ports 7400-7499: nothing else is ever connected to) and
 * otherwise mutated: sizes below VER0 and beyond the struct (with a zero
 * tail and not), unknown flag bits, non-zero reserved fields, random ids,
 * NULL, unmapped, kernel, non-canonical and misaligned pointers, pointers
 * into memory another thread remaps or unmaps, huge lengths, offsets and
 * counts, bad descriptors, and random ioctl numbers in and out of rdmx's
 * type. Meanwhile the threads close, reopen and dup() the shared
 * descriptors under each other's calls, remap the memory that regions are
 * registered on, set up channels (listen, connect, accept) over this
 * host's RDMA device, and now and then fork a child that makes a few calls
 * and exits.
 *
 * It checks what Documentation/uapi.rst and the header guarantee: a call
 * that must fail does (an unknown flag, a non-zero reserved field, a size
 * below VER0, a non-zero tail, a missing capability), with the documented
 * errno when one mutation alone decides it; a number of rdmx's type that
 * is not an rdmx ioctl gives ENOTTY; nothing is written past the caller's
 * size; and successful calls return possible output (the size written
 * back, counts, descriptors, ids, states, events, statistics). Rules on
 * which the documentation and the code disagree are not checked.
 *
 * Every call that may block gets a short timeout when the ABI has one and
 * is interrupted by a signal after a while otherwise (a call that cannot
 * be interrupted is let be); one that has not returned after the hang
 * limit (-w, 60 s), or no progress at all for that long, is a hang: where
 * each thread is gets printed, with its wchan.
 *
 * Usage:
 *   rdmx-ioctlfuzz [-s SEED] [-n CALLS] [-d SECONDS] [-t THREADS] [-j]
 *                  [-a ADDR]... [-w SECONDS] [-k] [-x] [-v] [DEVNODE]
 *
 *   -s SEED     seed (default: from the clock, printed). Each thread draws
 *               from a generator seeded with SEED and its number; as what
 *               it draws next also depends on what the kernel answered
 *               (ids, which calls succeeded), a run repeats call for call
 *               as far as the kernel answers the same (-t 1 helps)
 *   -n CALLS    stop after this many ioctl calls, all threads together
 *               (default 100000 unless -d is given)
 *   -d SECONDS  stop after this long (whichever of -n and -d comes first)
 *   -t THREADS  racing threads (default 4)
 *   -j          a one-line JSON summary on stdout
 *   -a ADDR     an address of this host to listen and connect on, in
 *               198.18.0.0/24 or 127.0.0.1 (default: this host's addresses
 *               in 198.18.0.0/24, else 127.0.0.1)
 *   -w SECONDS  hang limit (default 60)
 *   -k          keep going after a broken invariant
 *   -x          the guest is the fuzzer's alone: also close sessions,
 *               delete listeners and unmap disks it did not make, and use
 *               port 7471 (RDMX_DEFAULT_PORT, port 0)
 *   -v          progress every 10 s on stderr
 *
 * In a test guest, about 10^6 calls, as root and as an unprivileged user:
 *   rdmx-ioctlfuzz -s 1 -n 1000000 -d 3000
 *   setpriv --reuid=65534 --regid=65534 --clear-groups -- \
 *           rdmx-ioctlfuzz -s 2 -n 1000000 -d 3000
 *
 * Exit status: 0 when the calls or the time ran out; 1 on bad usage (or no
 * DEVNODE); 2 when an invariant broke (the call is printed); 3 on a hang.
 * As root it adds and deletes listeners, exports ("fzx0".."fzx7", RAM or
 * a file it creates in /tmp) and mapped disks, and closes sessions; it
 * removes what it made before it exits. Run it alone in its guest.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* gettid(), MAP_FIXED_NOREPLACE */
#endif
/* __u64 is unsigned long long, printed with %llu, on every architecture. */
#define __SANE_USERSPACE_TYPES__

#include <arpa/inet.h>
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/capability.h>

#include "testlib.h"

#define PROG		"rdmx-ioctlfuzz"

typedef unsigned long long u64;
typedef unsigned int u32;

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define MIN(a, b)	({ typeof(a) _a = (a); typeof(b) _b = (b); _a < _b ? _a : _b; })
#define MAX(a, b)	({ typeof(a) _a = (a); typeof(b) _b = (b); _a > _b ? _a : _b; })

/*
 * The kernel's __printf() and __noreturn, which userspace has to define
 * itself; split so that checkpatch does not take them for the raw
 * attributes it wants replaced by these very macros.
 */
#define __printf(fmt, args)	__attribute__(\
	(format(printf, fmt, args)))
#define __noreturn	__attribute__(\
	(noreturn))
#define MS		1000000ULL
#define SEC		1000000000ULL

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE	0x100000
#endif

/* ---- configuration ------------------------------------------------------ */

#define NSLOTS		16		/* shared descriptors */
#define MAX_THREADS	64
#define PORT_BASE	7400		/* ports 7400-7499 only */
#define PORT_COUNT	100
#define NSERVICES	16		/* "fz0" .. "fz15" */
#define NEXPORTS	8		/* "fzx0" .. "fzx7" */
#define FUZZ_PCT	40		/* calls that get at least one mutation */
#define LIMIT_NS	(250 * MS)	/* interrupt a call after this long */
#define WAIT_NS		(30 * MS)	/* a call made to block: interrupt it */
#define KICK_EVERY_NS	(20 * MS)	/* and again this often until it returns */
#define MR_KEEP		32		/* regions a thread keeps registered */
#define ERR_SLOTS	160		/* errno histogram; the last is "other" */

/* A thread's private memory (its arena), then a guard page. */
#define ARENA_SIZE	(256 << 10)
#define A_ARG		0		/* the argument, its tail and a canary */
#define A_ARG_SZ	(16 << 10)
#define A_AUX		(16 << 10)	/* arrays: messages, ops, events, devices */
#define A_AUX_SZ	(64 << 10)
#define A_BUF		(80 << 10)	/* tokens, a path, data; regions go here */
#define A_BUF_SZ	(ARENA_SIZE - A_BUF)
#define B_TOKEN		0		/* in A_BUF: MR_REG's token */
#define B_TOKCOPY	(4 << 10)	/* a token for RMA and BENCH */
#define B_PATH		(8 << 10)	/* EXPORT_ADD's path */
#define B_DATA		(12 << 10)	/* messages, local memory of operations */
#define B_DATA_SZ	(A_BUF_SZ - B_DATA)

#define TAIL_MAX	4096		/* bytes a struct may get past its size */
#define ENTRY_SIZE_MAX	4096		/* entry_size, vec_size... (uapi.rst) */
#define CANARY		0xa5
#define CANARY_N	64
#define SENTINEL	0x5a5a5a5a	/* rdmx_msg_vec.status as passed */

#define HOT_SLOTS	8		/* shared memory that threads remap */
#define HOT_SIZE	(64 << 10)
#define HOT_SUB		(HOT_SIZE / 8)	/* a thread's part, for arguments */

#define KB_TOKEN_LEN	512		/* tokens kept for RMA and BENCH, at most */

static struct {
	u64 seed;
	u64 ncalls;
	double seconds;
	int threads;
	bool json;
	bool keep_going;
	bool exclusive;
	bool verbose;
	double hang_s;
	const char *dev;
} opt = {
	.threads = 4,
	.hang_s = 60,
	.dev = "/dev/rdmx",
};

/* ---- ioctls ------------------------------------------------------------- */

enum {
	I_GET_INFO, I_LIST_DEVICES, I_EP_LISTEN, I_EP_ACCEPT, I_EP_CONNECT,
	I_EP_SEND, I_EP_RECV, I_EP_SHUTDOWN, I_EP_INFO, I_LISTENER_ADD,
	I_LISTENER_DEL, I_SESS_CLOSE, I_MR_REG, I_MR_DEREG, I_RMA,
	I_EP_EVENTS, I_BENCH, I_EXPORT_ADD, I_EXPORT_DEL, I_MAP, I_UNMAP,
	I_EXPORT_RESIZE, NIOC
};

/* Where a capability is checked (Documentation/security.rst). */
enum {
	CAP_NONE,
	CAP_AFTER,	/* CAP_NET_ADMIN, after the argument (uapi.rst) */
	CAP_FIRST,	/* CAP_SYS_ADMIN, before it is read (blk_srv.c, blk_clt.c) */
};

/* What a successful call returns. */
enum { RET_ZERO, RET_COUNT, RET_FD };

struct rsv {
	unsigned short off, len;
};

struct ioc_desc {
	const char *name;
	unsigned long cmd;
	u32 ver0;		/* first published size; 0: no struct */
	u32 ksize;		/* sizeof() in this header */
	u32 flags_known;
	unsigned char cap;
	unsigned char ret;
	bool writes_back;	/* success writes back min(size, ksize) bytes */
	struct rsv rsv[2];	/* reserved input fields */
	unsigned short ptrs[2];	/* offsets of pointers (0: none) */
};

/*
 * Every handler reads its argument first (rdmx_copy_args_in()) and checks
 * flags and reserved fields right after, all as EINVAL, except that the
 * block calls check CAP_SYS_ADMIN before anything (kmod/core/ioctl.c,
 * kmod/msg/service.c, uep.c, bench.c, kmod/blk/blk_srv.c, blk_clt.c).
 */
static const struct ioc_desc iocs[NIOC] = {
	[I_GET_INFO] = { .name = "GET_INFO", .cmd = RDMX_IOC_GET_INFO,
		.ver0 = RDMX_INFO_SIZE_VER0, .ksize = sizeof(struct rdmx_info),
		.writes_back = true },
	[I_LIST_DEVICES] = { .name = "LIST_DEVICES",
		.cmd = RDMX_IOC_LIST_DEVICES,
		.ver0 = RDMX_LIST_DEVICES_SIZE_VER0,
		.ksize = sizeof(struct rdmx_list_devices), .writes_back = true,
		.ptrs = { offsetof(struct rdmx_list_devices, devices) } },
	[I_EP_LISTEN] = { .name = "EP_LISTEN", .cmd = RDMX_IOC_EP_LISTEN,
		.ver0 = RDMX_EP_ADDR_SIZE_VER0,
		.ksize = sizeof(struct rdmx_ep_addr) },
	[I_EP_ACCEPT] = { .name = "EP_ACCEPT", .cmd = RDMX_IOC_EP_ACCEPT,
		.ver0 = RDMX_EP_ACCEPT_SIZE_VER0,
		.ksize = sizeof(struct rdmx_ep_accept),
		.flags_known = RDMX_ACCEPT_NONBLOCK | RDMX_ACCEPT_CLOEXEC,
		.ret = RET_FD, .writes_back = true,
		.rsv = { { offsetof(struct rdmx_ep_accept, reserved), 4 } } },
	[I_EP_CONNECT] = { .name = "EP_CONNECT", .cmd = RDMX_IOC_EP_CONNECT,
		.ver0 = RDMX_EP_ADDR_SIZE_VER0,
		.ksize = sizeof(struct rdmx_ep_addr) },
	[I_EP_SEND] = { .name = "EP_SEND", .cmd = RDMX_IOC_EP_SEND,
		.ver0 = RDMX_EP_XFER_SIZE_VER0,
		.ksize = sizeof(struct rdmx_ep_xfer),
		.flags_known = RDMX_XFER_NONBLOCK, .ret = RET_COUNT,
		.writes_back = true,
		.ptrs = { offsetof(struct rdmx_ep_xfer, msgs) } },
	[I_EP_RECV] = { .name = "EP_RECV", .cmd = RDMX_IOC_EP_RECV,
		.ver0 = RDMX_EP_XFER_SIZE_VER0,
		.ksize = sizeof(struct rdmx_ep_xfer),
		.flags_known = RDMX_XFER_NONBLOCK, .ret = RET_COUNT,
		.writes_back = true,
		.ptrs = { offsetof(struct rdmx_ep_xfer, msgs) } },
	[I_EP_SHUTDOWN] = { .name = "EP_SHUTDOWN",
		.cmd = RDMX_IOC_EP_SHUTDOWN },
	[I_EP_INFO] = { .name = "EP_INFO", .cmd = RDMX_IOC_EP_INFO,
		.ver0 = RDMX_EP_INFO_SIZE_VER0,
		.ksize = sizeof(struct rdmx_ep_info), .writes_back = true },
	[I_LISTENER_ADD] = { .name = "LISTENER_ADD",
		.cmd = RDMX_IOC_LISTENER_ADD,
		.ver0 = RDMX_LISTENER_ARG_SIZE_VER0,
		.ksize = sizeof(struct rdmx_listener_arg), .cap = CAP_AFTER },
	[I_LISTENER_DEL] = { .name = "LISTENER_DEL",
		.cmd = RDMX_IOC_LISTENER_DEL,
		.ver0 = RDMX_LISTENER_ARG_SIZE_VER0,
		.ksize = sizeof(struct rdmx_listener_arg), .cap = CAP_AFTER },
	[I_SESS_CLOSE] = { .name = "SESS_CLOSE", .cmd = RDMX_IOC_SESS_CLOSE,
		.ver0 = RDMX_SESS_CLOSE_SIZE_VER0,
		.ksize = sizeof(struct rdmx_sess_close), .cap = CAP_AFTER,
		.rsv = { { offsetof(struct rdmx_sess_close, reserved), 4 } } },
	[I_MR_REG] = { .name = "MR_REG", .cmd = RDMX_IOC_MR_REG,
		.ver0 = RDMX_MR_REG_SIZE_VER0,
		.ksize = sizeof(struct rdmx_mr_reg), .writes_back = true,
		.rsv = { { offsetof(struct rdmx_mr_reg, reserved), 4 } },
		.ptrs = { offsetof(struct rdmx_mr_reg, addr),
			  offsetof(struct rdmx_mr_reg, token) } },
	[I_MR_DEREG] = { .name = "MR_DEREG", .cmd = RDMX_IOC_MR_DEREG,
		.ver0 = RDMX_MR_DEREG_SIZE_VER0,
		.ksize = sizeof(struct rdmx_mr_dereg), .writes_back = true,
		.rsv = { { offsetof(struct rdmx_mr_dereg, reserved), 4 } } },
	[I_RMA] = { .name = "RMA", .cmd = RDMX_IOC_RMA,
		.ver0 = RDMX_RMA_SIZE_VER0, .ksize = sizeof(struct rdmx_rma),
		.flags_known = RDMX_RMA_ASYNC, .ret = RET_COUNT,
		.writes_back = true, .ptrs = { offsetof(struct rdmx_rma, ops) } },
	[I_EP_EVENTS] = { .name = "EP_EVENTS", .cmd = RDMX_IOC_EP_EVENTS,
		.ver0 = RDMX_EVENTS_SIZE_VER0,
		.ksize = sizeof(struct rdmx_events),
		.flags_known = RDMX_EVENTS_NONBLOCK, .ret = RET_COUNT,
		.writes_back = true,
		.ptrs = { offsetof(struct rdmx_events, events) } },
	[I_BENCH] = { .name = "BENCH", .cmd = RDMX_IOC_BENCH,
		.ver0 = RDMX_BENCH_SIZE_VER0, .ksize = sizeof(struct rdmx_bench),
		.flags_known = RDMX_BENCH_PINGPONG, .writes_back = true,
		.rsv = { { offsetof(struct rdmx_bench, reserved0), 4 },
			 { offsetof(struct rdmx_bench, reserved), 32 } },
		.ptrs = { offsetof(struct rdmx_bench, token) } },
	[I_EXPORT_ADD] = { .name = "EXPORT_ADD", .cmd = RDMX_IOC_EXPORT_ADD,
		.ver0 = RDMX_EXPORT_ADD_SIZE_VER0,
		.ksize = sizeof(struct rdmx_export_add),
		.flags_known = RDMX_EXPORT_RO | RDMX_EXPORT_RAM |
			       RDMX_EXPORT_INSECURE | RDMX_EXPORT_SHARED |
			       RDMX_EXPORT_UUID,
		.cap = CAP_FIRST, .writes_back = true,
		.rsv = { { offsetof(struct rdmx_export_add, reserved0), 4 },
			 { offsetof(struct rdmx_export_add, reserved), 32 } },
		.ptrs = { offsetof(struct rdmx_export_add, path) } },
	[I_EXPORT_DEL] = { .name = "EXPORT_DEL", .cmd = RDMX_IOC_EXPORT_DEL,
		.ver0 = RDMX_EXPORT_DEL_SIZE_VER0,
		.ksize = sizeof(struct rdmx_export_del),
		.flags_known = RDMX_EXPORT_DEL_FORCE, .cap = CAP_FIRST,
		.writes_back = true },
	[I_MAP] = { .name = "MAP", .cmd = RDMX_IOC_MAP,
		.ver0 = RDMX_MAP_SIZE_VER0, .ksize = sizeof(struct rdmx_map),
		.flags_known = RDMX_MAP_RO, .cap = CAP_FIRST,
		.writes_back = true,
		.rsv = { { offsetof(struct rdmx_map, reserved0), 4 },
			 { offsetof(struct rdmx_map, reserved), 32 } } },
	[I_UNMAP] = { .name = "UNMAP", .cmd = RDMX_IOC_UNMAP,
		.ver0 = RDMX_UNMAP_SIZE_VER0, .ksize = sizeof(struct rdmx_unmap),
		.flags_known = RDMX_UNMAP_FORCE, .cap = CAP_FIRST,
		.writes_back = true,
		.rsv = { { offsetof(struct rdmx_unmap, reserved), 4 } } },
	[I_EXPORT_RESIZE] = { .name = "EXPORT_RESIZE",
		.cmd = RDMX_IOC_EXPORT_RESIZE,
		.ver0 = RDMX_EXPORT_RESIZE_SIZE_VER0,
		.ksize = sizeof(struct rdmx_export_resize), .cap = CAP_FIRST,
		.writes_back = true },
};

static_assert(sizeof(((struct rdmx_bench *)0)->reserved) == 32 &&
	      sizeof(((struct rdmx_export_add *)0)->reserved) == 32 &&
	      sizeof(((struct rdmx_map *)0)->reserved) == 32 &&
	      sizeof(((struct rdmx_unmap *)0)->reserved) == 4,
	      "reserved fields of iocs[] as the header has them");

/* ---- shared state ------------------------------------------------------- */

/* What a descriptor of the pool was last seen to be; a hint only. */
enum { R_NEW, R_LISTEN, R_CHAN, R_OTHER };

struct slot {
	int fd;
	int role;
	int peer;	/* slot of the other end of a channel, or -1 */
};

static struct slot pool[NSLOTS];
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;

struct kb_listen {
	struct rdmx_sockaddr sa;
	unsigned char svc[RDMX_SERVICE_LEN];
};

struct kb_token {
	int slot;		/* where it was registered */
	u32 len;
	unsigned char b[KB_TOKEN_LEN];
};

/* What earlier calls returned: ids and tokens to use again. */
static struct {
	pthread_mutex_t lock;
	struct kb_listen listen[16];
	unsigned int nlisten;
	struct kb_token tok[32];
	unsigned int ntok;
	u32 sess[16];
	unsigned int nsess;
	u32 maps[256];		/* disks this program mapped */
	unsigned int nmaps;
	struct rdmx_sockaddr lst[512];	/* listeners it added */
	unsigned int nlst;
} kb = { .lock = PTHREAD_MUTEX_INITIALIZER };

enum { HOT_RW, HOT_NONE, HOT_DEAD };

static unsigned char *hot;	/* HOT_SLOTS slots, a guard page after each */
static size_t hot_stride;
static int hot_state[HOT_SLOTS];
static pthread_mutex_t hot_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned char *ro_page;	/* readable, not writable */
static unsigned char *big;	/* RDMX_MSG_MAX bytes of zeros, read-only */

#define MAX_LOCAL	8
static in_addr_t local4[MAX_LOCAL];	/* network byte order */
static int nlocal;

static bool priv_sys_admin, priv_net_admin;
static long page_size;
static int null_fd = -1;
static char img_path[64];		/* a file to export, root only */
static u32 disks_before[256];		/* rdmxbN present at the start */
static unsigned int ndisks_before;

static int stop;		/* __atomic */
static u64 total_calls;
static u64 nviolations;
static u64 deadline_ns;
static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;

struct worker {
	int idx;
	pthread_t pt;
	pid_t tid;
	u64 rng;
	unsigned char *arena;	/* ARENA_SIZE bytes, then a guard page */
	unsigned char *guard;
	unsigned char *edge;	/* a page, then a guard page */
	unsigned char *shadow;	/* the argument as passed */
	u32 lens[RDMX_XFER_MAX];

	/* What it is doing, for the watchdog. */
	u64 busy_since;		/* 0: between calls */
	u64 kick_at;
	u64 last_kick;
	const char *what;
	int what_fd;
	u64 ops;
	int done;
	u64 kicks;

	struct {
		int slot;
		u32 id;
	} mr[MR_KEEP];
	unsigned int nmr;
	pid_t child;

	u64 calls, ok;
	u64 err[ERR_SLOTS];
	u64 ioc_calls[NIOC], ioc_ok[NIOC], ioc_ns[NIOC];
	u64 magic_calls, other_calls;
	u64 fds_opened, fds_closed, dups, forks, mem_ops, polls;
	u64 scenarios, channels;
	unsigned int connects_failed;	/* in a row, since the last channel */
};

static struct worker *workers;

/* ---- random numbers ----------------------------------------------------- */

static u64 rnd(struct worker *w)
{
	return splitmix64(&w->rng);
}

static u32 below(struct worker *w, u64 n)
{
	return n ? (u32)(rnd(w) % n) : 0;
}

static bool one_in(struct worker *w, u32 n)
{
	return below(w, n) == 0;
}

static u64 now(void)
{
	return (u64)now_ns();
}

/* ---- the watchdog's view ------------------------------------------------ */

static void busy(struct worker *w, const char *what, int fd, u64 limit)
{
	u64 t = now();

	__atomic_store_n(&w->what, what, __ATOMIC_RELAXED);
	__atomic_store_n(&w->what_fd, fd, __ATOMIC_RELAXED);
	__atomic_store_n(&w->kick_at, t + limit, __ATOMIC_RELAXED);
	__atomic_store_n(&w->busy_since, t, __ATOMIC_RELEASE);
}

static void idle(struct worker *w)
{
	__atomic_store_n(&w->busy_since, 0, __ATOMIC_RELEASE);
}

/* ---- calls -------------------------------------------------------------- */

/* Mutation sites every call has, then those of each ioctl. */
enum { G_SIZE, G_FLAGS, G_RSV, G_PTR, G_FLIP, G_FD, NGEN };
#define S(n)	(NGEN + (n))

/* What a mutation does to the outcome. */
enum {
	M_NEUTRAL,	/* nothing: the call is as valid as before */
	M_WILD,		/* the outcome is anyone's guess */
	M_FAIL,		/* the call must fail (with @err when alone) */
};

struct call {
	int ioc;		/* iocs[] index, -1 for a raw number */
	const char *name;
	unsigned long cmd;
	int fd;
	int slot;		/* of the pool, -1 if not from it */
	unsigned long arg;	/* as passed */
	unsigned char *st;	/* the struct, in the arena */
	u32 usize;		/* its size field */
	u32 span;		/* bytes of it (and after it) to compare */
	bool checkable;		/* arg is st: what the kernel wrote can be checked */
	bool hot_arg;		/* arg in memory others remap: no checks */
	bool flipped;		/* a random bit flipped: skip detailed checks */
	bool unpriv;		/* must fail: the caller lacks the capability */
	bool no_hot;		/* keep the argument private (traffic calls) */
	u64 plan;		/* mutation sites chosen */
	int nmut, nfail, exp_errno;
	int exp_alt;		/* another errno as good as exp_errno */
	u64 limit;		/* interrupt after this long */
	long ret;
	int err;
	char why[256];
};

static void fuzz_plan(struct worker *w, struct call *c, int nspec)
{
	int n = NGEN + nspec, k;

	c->plan = 0;
	if (below(w, 100) >= FUZZ_PCT)
		return;
	k = one_in(w, 4) ? 2 + below(w, 2) : 1;
	while (k--)
		c->plan |= 1ULL << below(w, n);
}

static bool at(const struct call *c, int site)
{
	return c->plan & (1ULL << site);
}

static __printf(4, 5) void mut(struct call *c, int kind, int err,
				const char *fmt, ...)
{
	size_t n = strlen(c->why);
	va_list ap;

	if (n && n < sizeof(c->why) - 2) {
		memcpy(c->why + n, "; ", 3);
		n += 2;
	}
	va_start(ap, fmt);
	if (n < sizeof(c->why))
		vsnprintf(c->why + n, sizeof(c->why) - n, fmt, ap);
	va_end(ap);
	if (kind == M_NEUTRAL)
		return;
	c->nmut++;
	if (kind == M_FAIL) {
		c->nfail++;
		c->exp_errno = err;
		c->exp_alt = 0;
	}
}

static void hexdump(FILE *f, const unsigned char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		fprintf(f, "%s%02x", i % 32 ? (i % 8 ? "" : " ") : "\n    ",
			p[i]);
	fputc('\n', f);
}

static __printf(3, 4) void violation(struct worker *w, const struct call *c,
				     const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&print_lock);
	fprintf(stderr, PROG
		": INVARIANT BROKEN (seed %llu, thread %d, op %llu): %s (ioctl %#lx) on fd %d",
		opt.seed, w->idx, w->ops, c->name, c->cmd, c->fd);
	if (c->ret < 0)
		fprintf(stderr, " failed with %s: ", errno_name(c->err));
	else
		fprintf(stderr, " returned %ld: ", c->ret);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n  mutations: %s\n", c->why[0] ? c->why : "none");
	if (c->checkable && c->span) {
		fprintf(stderr, "  argument at %#lx, %u bytes as passed:",
			c->arg, c->span);
		hexdump(stderr, w->shadow, MIN(c->span, 1024u));
	} else {
		fprintf(stderr, "  argument %#lx\n", c->arg);
	}
	fflush(stderr);
	pthread_mutex_unlock(&print_lock);
	__atomic_add_fetch(&nviolations, 1, __ATOMIC_RELAXED);
	if (!opt.keep_going)
		__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
}

static void *arg_begin(struct worker *w, struct call *c, int ioc)
{
	const struct ioc_desc *d = &iocs[ioc];

	memset(c, 0, sizeof(*c));
	c->ioc = ioc;
	c->name = d->name;
	c->cmd = d->cmd;
	c->slot = -1;
	c->st = w->arena + A_ARG;
	c->limit = LIMIT_NS;
	memset(c->st, 0, d->ksize + TAIL_MAX + CANARY_N + 8);
	return c->st;
}

static int slot_fd(int s)
{
	return __atomic_load_n(&pool[s].fd, __ATOMIC_RELAXED);
}

static int slot_role(int s)
{
	return __atomic_load_n(&pool[s].role, __ATOMIC_RELAXED);
}

/* A slot, usually one whose descriptor was last seen in @role (-1: any). */
static int pick_slot(struct worker *w, int role)
{
	int i, start = below(w, NSLOTS);

	if (role >= 0 && !one_in(w, 4))
		for (i = 0; i < NSLOTS; i++)
			if (slot_role((start + i) % NSLOTS) == role)
				return (start + i) % NSLOTS;
	return start;
}

static int bad_fd(struct worker *w)
{
	switch (below(w, 5)) {
	case 0:
		return -1;
	case 1:
		return INT_MAX;
	case 2:
		return 1 << 20;
	case 3:
		return null_fd;		/* not rdmx's */
	default:
		return 999;
	}
}

static void use_slot(struct worker *w, struct call *c, int s)
{
	c->slot = s;
	c->fd = slot_fd(s);
	if (at(c, G_FD)) {
		c->fd = bad_fd(w);
		c->slot = -1;
		mut(c, M_WILD, 0, "fd %d", c->fd);
	}
}

static void call_fd(struct worker *w, struct call *c, int role)
{
	use_slot(w, c, pick_slot(w, role));
}

static u64 kernel_ptr(struct worker *w)
{
	return one_in(w, 2) ? 0xffffffff81000000ULL :
	       0xffff888000000000ULL + ((u64)below(w, 1 << 20) << 12);
}

static u64 noncanonical_ptr(struct worker *w)
{
	static const u64 v[] = {
		0x0000800000000000ULL, 0x8000000000000000ULL,
		0xdead000000000000ULL, 0x00007ffffffff000ULL,
	};

	return v[below(w, ARRAY_SIZE(v))];
}

/* A pointer that reaches no memory the caller may use. */
static u64 bad_ptr(struct worker *w)
{
	switch (below(w, 4)) {
	case 0:
		return 0;
	case 1:
		return kernel_ptr(w);
	case 2:
		return (uintptr_t)w->guard + below(w, page_size);
	default:
		return noncanonical_ptr(w);
	}
}

/* bad_ptr(), or read-only memory: readable, never written. */
static u64 wild_ptr(struct worker *w)
{
	if (one_in(w, 5))
		return (uintptr_t)ro_page + below(w, page_size);
	return bad_ptr(w);
}

static int hot_slot_of(const void *p)
{
	const unsigned char *q = p;

	if (q < hot || q >= hot + HOT_SLOTS * hot_stride)
		return -1;
	return (q - hot) / hot_stride;
}

/* A pointer into memory that other threads remap, and the room after it. */
static u64 hot_ptr(struct worker *w, u32 *room)
{
	unsigned int s = below(w, HOT_SLOTS), i;
	u32 off = one_in(w, 4) ? 0 : below(w, HOT_SIZE);

	for (i = 0; i < HOT_SLOTS; i++, s = (s + 1) % HOT_SLOTS)
		if (__atomic_load_n(&hot_state[s], __ATOMIC_RELAXED) != HOT_DEAD)
			break;
	if (i == HOT_SLOTS) {
		*room = 0;
		return (uintptr_t)w->guard;
	}
	*room = HOT_SIZE - off;
	return (uintptr_t)(hot + s * hot_stride + off);
}

/* Copy into hot memory, if it is mapped writable just now. */
static void hot_put(void *dst, const void *src, size_t len)
{
	int s = hot_slot_of(dst);
	unsigned char *end;

	if (s < 0)
		return;
	end = hot + s * hot_stride + HOT_SIZE;
	pthread_mutex_lock(&hot_lock);
	if (hot_state[s] == HOT_RW)
		memcpy(dst, src, MIN(len, (size_t)(end - (unsigned char *)dst)));
	pthread_mutex_unlock(&hot_lock);
}

/* Where the thread puts arguments in hot memory. */
static unsigned char *hot_arg_ptr(struct worker *w)
{
	unsigned int s = below(w, HOT_SLOTS), i;

	for (i = 0; i < HOT_SLOTS; i++, s = (s + 1) % HOT_SLOTS)
		if (__atomic_load_n(&hot_state[s], __ATOMIC_RELAXED) != HOT_DEAD)
			return hot + s * hot_stride + (w->idx % 8) * HOT_SUB;
	return w->guard;
}

static void argptr_mutation(struct worker *w, struct call *c)
{
	const struct ioc_desc *d = &iocs[c->ioc];
	unsigned int k, n;
	unsigned char *p;

	switch (below(w, 8)) {
	case 0:
		c->arg = 0;
		c->checkable = false;
		mut(c, M_FAIL, EFAULT, "argument NULL");
		break;
	case 1:
		c->arg = kernel_ptr(w);
		c->checkable = false;
		mut(c, M_FAIL, EFAULT, "argument a kernel address");
		break;
	case 2:
		c->arg = (uintptr_t)w->guard + below(w, page_size - 4);
		c->checkable = false;
		mut(c, M_FAIL, EFAULT, "argument in a PROT_NONE page");
		break;
	case 3:
		c->arg = noncanonical_ptr(w);
		c->checkable = false;
		mut(c, M_FAIL, EFAULT, "argument non-canonical");
		break;
	case 4:
		k = 1 + below(w, 7);
		memmove(c->st + k, c->st, c->span);
		c->st += k;
		c->arg = (uintptr_t)c->st;
		mut(c, M_NEUTRAL, 0, "argument misaligned by %u", k);
		break;
	case 5:
		/* Only the first n bytes readable, the size field among them. */
		if (c->usize <= 4)
			break;
		n = 4 + below(w, MIN(c->usize, (u32)page_size) - 4);
		p = w->edge + page_size - n;
		memcpy(p, c->st, n);
		c->arg = (uintptr_t)p;
		c->checkable = false;
		mut(c, M_FAIL, EFAULT, "only %u bytes of the argument mapped", n);
		break;
	default:
		if (c->no_hot)
			break;
		p = hot_arg_ptr(w);
		hot_put(p, c->st, MIN(MAX(c->usize, d->ksize), (u32)HOT_SUB));
		c->arg = (uintptr_t)p;
		c->checkable = false;
		c->hot_arg = true;
		mut(c, M_WILD, 0, "argument in memory other threads remap");
		break;
	}
}

/* Generic mutations: size, flags, reserved fields, bits, the pointer. */
static void arg_finish(struct worker *w, struct call *c)
{
	const struct ioc_desc *d = &iocs[c->ioc];
	static const u32 huge[] = { 1u << 20, 1u << 31, 0xffffffffu };
	unsigned char *st = c->st;
	u32 ks = d->ksize, bit, off, v;

	/*
	 * Not in a pointer: the kernel would write where it then points,
	 * anywhere in this process. Nor in an address of CONNECT or MAP.
	 */
	if (at(c, G_FLIP) && !c->no_hot) {
		do
			off = 8 + below(w, ks - 8);
		while ((d->ptrs[0] && off - d->ptrs[0] < 8) ||
		       (d->ptrs[1] && off - d->ptrs[1] < 8));
		st[off] ^= 1u << below(w, 8);
		c->flipped = true;
		/* It may have undone what made the call fail. */
		c->nfail = 0;
		c->exp_errno = 0;
		mut(c, M_WILD, 0, "a bit of byte %u flipped", off);
	}
	if (at(c, G_FLAGS)) {
		do
			bit = 1u << below(w, 32);
		while (bit & d->flags_known);
		memcpy(&v, st + 4, 4);
		v |= bit;
		memcpy(st + 4, &v, 4);
		mut(c, M_FAIL, EINVAL, "flags |= %#x, unknown", bit);
	}
	if (at(c, G_RSV) && d->rsv[0].len) {
		const struct rsv *r = &d->rsv[d->rsv[1].len && one_in(w, 2)];

		off = r->off + below(w, r->len);
		st[off] = 1 + below(w, 255);
		mut(c, M_FAIL, EINVAL, "reserved byte %u = %#x", off, st[off]);
	}
	c->usize = ks;
	if (at(c, G_SIZE)) {
		switch (below(w, 6)) {
		case 0:
			c->usize = below(w, d->ver0);
			mut(c, M_FAIL, EINVAL, "size %u, below VER0 %u", c->usize,
			    d->ver0);
			break;
		case 1:
			c->usize = d->ver0 - 1 - below(w, 8);
			mut(c, M_FAIL, EINVAL, "size %u, below VER0 %u", c->usize,
			    d->ver0);
			break;
		case 2:
			c->usize = ks + 1 + below(w, one_in(w, 4) ? TAIL_MAX : 64);
			mut(c, M_NEUTRAL, 0, "size %u, zero tail", c->usize);
			break;
		case 3:
			c->usize = ks + 1 + below(w, one_in(w, 4) ? TAIL_MAX : 64);
			off = ks + below(w, c->usize - ks);
			st[off] = 1 + below(w, 255);
			mut(c, M_FAIL, E2BIG, "size %u, tail byte %u = %#x",
			    c->usize, off, st[off]);
			break;
		case 4:
			c->usize = huge[below(w, ARRAY_SIZE(huge))];
			mut(c, M_FAIL, 0, "size %#x", c->usize);
			break;
		default:
			c->usize = ks + 8;
			mut(c, M_NEUTRAL, 0, "size %u, zero tail", c->usize);
			break;
		}
	}
	memcpy(st, &c->usize, 4);
	if (c->usize <= ks + TAIL_MAX) {
		memset(st + MAX(c->usize, ks), CANARY, CANARY_N);
		c->span = MAX(c->usize, ks) + CANARY_N;
	} else {
		c->span = ks;
	}
	c->arg = (uintptr_t)st;
	c->checkable = true;
	if (at(c, G_PTR))
		argptr_mutation(w, c);
}

static void account(struct worker *w, struct call *c, u64 ns)
{
	w->calls++;
	__atomic_add_fetch(&total_calls, 1, __ATOMIC_RELAXED);
	if (c->ret >= 0)
		w->ok++;
	w->err[c->ret >= 0 ? 0 : MIN(c->err, ERR_SLOTS - 1)]++;
	if (c->ioc >= 0) {
		w->ioc_calls[c->ioc]++;
		w->ioc_ns[c->ioc] += ns;
		if (c->ret >= 0)
			w->ioc_ok[c->ioc]++;
	}
}

/*
 * A call that must fail does; when one mutation alone decides it, with the
 * errno the code gives for it (EBADF: the shared descriptor was closed
 * meanwhile; EPERM, ENOMEM: the block calls check the capability and
 * allocate before they read the argument).
 */
static void check_outcome(struct worker *w, struct call *c)
{
	bool cap_first = c->ioc >= 0 && iocs[c->ioc].cap == CAP_FIRST;
	int e = c->err;

	if (c->hot_arg || (!c->nfail && !c->unpriv))
		return;
	if (c->ret >= 0) {
		violation(w, c, "it must fail: %s",
			  c->nfail ? "see the mutations" :
			  "the caller lacks the capability");
		return;
	}
	if (c->nfail != 1 || c->nmut != 1 || !c->exp_errno)
		return;
	if (e == c->exp_errno || (c->exp_alt && e == c->exp_alt) ||
	    e == EBADF || (cap_first && (e == EPERM || e == ENOMEM)))
		return;
	violation(w, c, "expected %s", errno_name(c->exp_errno));
}

/*
 * Nothing is written past the caller's size; on success the size field
 * says how much was (uapi.rst, Conventions).
 */
static void check_struct(struct worker *w, struct call *c)
{
	const struct ioc_desc *d = &iocs[c->ioc];
	u32 from = c->usize, got, i;

	if (c->ret >= 0) {
		memcpy(&got, c->st, 4);
		if (d->writes_back) {
			u32 want = MIN(c->usize, d->ksize);

			if (got != want)
				violation(w, c,
					  "size %u written back, expected %u (the smaller of the caller's %u and the kernel's %u)",
					  got, want, c->usize, d->ksize);
			from = want;
		} else if (got > c->usize) {
			violation(w, c, "size %u written back, more than the caller's %u",
				  got, c->usize);
		}
	}
	for (i = from; i < c->span; i++)
		if (c->st[i] != w->shadow[i]) {
			violation(w, c,
				  "byte %u changed (%#x to %#x): past what the kernel may write (size %u, kernel's %u)",
				  i, w->shadow[i], c->st[i], c->usize, d->ksize);
			break;
		}
}

static void run_call(struct worker *w, struct call *c)
{
	u32 snap = c->checkable ? c->span : 0;
	u64 t;

	if (snap)
		memcpy(w->shadow, c->st, snap);
	busy(w, c->name, c->fd, c->limit);
	t = now();
	c->ret = ioctl(c->fd, c->cmd, c->arg);
	c->err = c->ret < 0 ? errno : 0;
	t = now() - t;
	idle(w);
	account(w, c, t);
	check_outcome(w, c);
	if (c->ioc >= 0 && c->ret >= 0) {
		if (iocs[c->ioc].ret == RET_ZERO && c->ret != 0)
			violation(w, c, "this ioctl returns 0 on success");
	}
	if (snap && c->ioc >= 0)
		check_struct(w, c);
}

/* The struct as the kernel left it, aligned, when it can be trusted. */
static bool output(const struct call *c, void *out, size_t len)
{
	if (c->ret < 0 || !c->checkable || c->flipped)
		return false;
	memcpy(out, c->st, len);
	return true;
}

/* ---- the pool and the knowledge base ------------------------------------ */

static void xclose(struct worker *w, int fd)
{
	if (fd < 0)
		return;
	busy(w, "close", fd, (u64)(opt.hang_s * SEC));
	close(fd);
	idle(w);
	w->fds_closed++;
}

static int open_rdmx(struct worker *w, int flags)
{
	int fd;

	busy(w, "open", -1, (u64)(opt.hang_s * SEC));
	fd = open(opt.dev, O_RDWR | O_CLOEXEC | flags);
	idle(w);
	if (fd >= 0)
		w->fds_opened++;
	return fd;
}

/* Put @fd in slot @s; the descriptor there is closed. */
static void install_at(struct worker *w, int s, int fd, int role, int peer)
{
	int old;

	pthread_mutex_lock(&pool_lock);
	old = pool[s].fd;
	pool[s].fd = fd;
	pool[s].role = role;
	pool[s].peer = peer;
	pthread_mutex_unlock(&pool_lock);
	if (old != fd)
		xclose(w, old);
}

static int install(struct worker *w, int fd, int role)
{
	int s = below(w, NSLOTS);

	install_at(w, s, fd, role, -1);
	return s;
}

static void set_role(int s, int fd, int role)
{
	if (s < 0)
		return;
	pthread_mutex_lock(&pool_lock);
	if (pool[s].fd == fd)
		pool[s].role = role;
	pthread_mutex_unlock(&pool_lock);
}

static void kb_add_listen(const struct rdmx_sockaddr *sa,
			  const unsigned char *svc)
{
	struct kb_listen *e;

	pthread_mutex_lock(&kb.lock);
	e = &kb.listen[kb.nlisten++ % ARRAY_SIZE(kb.listen)];
	e->sa = *sa;
	memcpy(e->svc, svc, RDMX_SERVICE_LEN);
	pthread_mutex_unlock(&kb.lock);
}

static bool kb_get_listen(struct worker *w, struct kb_listen *out)
{
	bool ok;

	pthread_mutex_lock(&kb.lock);
	ok = kb.nlisten;
	if (ok)
		*out = kb.listen[below(w, MIN(kb.nlisten,
					      (u32)ARRAY_SIZE(kb.listen)))];
	pthread_mutex_unlock(&kb.lock);
	return ok;
}

static void kb_add_token(int slot, const unsigned char *b, u32 len)
{
	struct kb_token *t;

	if (!len || len > KB_TOKEN_LEN)
		return;
	pthread_mutex_lock(&kb.lock);
	t = &kb.tok[kb.ntok++ % ARRAY_SIZE(kb.tok)];
	t->slot = slot;
	t->len = len;
	memcpy(t->b, b, len);
	pthread_mutex_unlock(&kb.lock);
}

/* A token for an operation on slot @s: preferably one its peer made. */
static u32 kb_get_token(struct worker *w, int s, unsigned char *buf)
{
	int peer = s >= 0 ? __atomic_load_n(&pool[s].peer, __ATOMIC_RELAXED) :
		   -1;
	unsigned int n, i, j;
	u32 len = 0;

	pthread_mutex_lock(&kb.lock);
	n = MIN(kb.ntok, (u32)ARRAY_SIZE(kb.tok));
	if (n) {
		i = below(w, n);
		for (j = 0; peer >= 0 && j < n && !one_in(w, 4); j++)
			if (kb.tok[(i + j) % n].slot == peer) {
				i = (i + j) % n;
				break;
			}
		len = kb.tok[i].len;
		memcpy(buf, kb.tok[i].b, len);
	}
	pthread_mutex_unlock(&kb.lock);
	if (!len || one_in(w, 10)) {
		/* A forged one: the magic, then noise. */
		u32 magic = 0x54584452;

		len = 16 + below(w, 240);
		for (i = 0; i < len; i++)
			buf[i] = rnd(w);
		memcpy(buf, &magic, 4);
		buf[4] = 1;
	}
	return len;
}

static void kb_add_u32(u32 *arr, unsigned int *n, unsigned int cap, u32 v,
		       bool ring)
{
	unsigned int i;

	pthread_mutex_lock(&kb.lock);
	for (i = 0; i < MIN(*n, cap); i++)
		if (arr[i] == v)
			goto out;
	if (ring)
		arr[(*n)++ % cap] = v;
	else if (*n < cap)
		arr[(*n)++] = v;
out:
	pthread_mutex_unlock(&kb.lock);
}

static void kb_del_map(u32 v)
{
	unsigned int i;

	pthread_mutex_lock(&kb.lock);
	for (i = 0; i < kb.nmaps; i++)
		if (kb.maps[i] == v) {
			kb.maps[i] = kb.maps[--kb.nmaps];
			break;
		}
	pthread_mutex_unlock(&kb.lock);
}

static bool kb_get_u32(struct worker *w, const u32 *arr, unsigned int n,
		       unsigned int cap, u32 *out)
{
	bool ok;

	pthread_mutex_lock(&kb.lock);
	ok = n;
	if (ok)
		*out = arr[below(w, MIN(n, cap))];
	pthread_mutex_unlock(&kb.lock);
	return ok;
}

static bool sa_equal(const struct rdmx_sockaddr *a,
		     const struct rdmx_sockaddr *b)
{
	return !memcmp(a, b, sizeof(*a));
}

static void kb_lst(const struct rdmx_sockaddr *sa, bool add)
{
	unsigned int i;

	pthread_mutex_lock(&kb.lock);
	for (i = 0; i < kb.nlst; i++)
		if (sa_equal(&kb.lst[i], sa))
			break;
	if (add && i == kb.nlst && kb.nlst < ARRAY_SIZE(kb.lst))
		kb.lst[kb.nlst++] = *sa;
	else if (!add && i < kb.nlst)
		kb.lst[i] = kb.lst[--kb.nlst];
	pthread_mutex_unlock(&kb.lock);
}

static bool kb_get_lst(struct worker *w, struct rdmx_sockaddr *out)
{
	bool ok;

	pthread_mutex_lock(&kb.lock);
	ok = kb.nlst;
	if (ok)
		*out = kb.lst[below(w, kb.nlst)];
	pthread_mutex_unlock(&kb.lock);
	return ok;
}

/* ---- addresses, names --------------------------------------------------- */

static bool addr_allowed(in_addr_t a)
{
	u32 h = ntohl(a);

	return h == INADDR_LOOPBACK || (h & 0xffffff00) == 0xc6120000;
}

static u32 pick_port(struct worker *w)
{
	u32 p;

	do
		p = PORT_BASE + below(w, PORT_COUNT);
	while (p == RDMX_DEFAULT_PORT && !opt.exclusive);
	if (opt.exclusive && one_in(w, 50))
		p = one_in(w, 2) ? 0 : RDMX_DEFAULT_PORT;
	return p;
}

static in_addr_t pick_local(struct worker *w)
{
	if (nlocal && !one_in(w, 8))
		return local4[below(w, nlocal)];
	return htonl(INADDR_LOOPBACK);
}

static void sa_v4(struct rdmx_sockaddr *sa, in_addr_t a, u32 port)
{
	memset(sa, 0, sizeof(*sa));
	sa->family = AF_INET;
	sa->port = port;
	memcpy(sa->addr, &a, 4);
}

/* An address to listen on: this host's, the any-address, loopback. */
static void listen_addr(struct worker *w, struct rdmx_sockaddr *sa)
{
	u32 r = below(w, 20);

	sa_v4(sa, r < 2 ? INADDR_ANY : pick_local(w), pick_port(w));
	if (!r)
		sa->family = AF_INET6;	/* [::], the IPv6 any-address */
}

static void put_name(unsigned char *field, size_t size, const char *name)
{
	memset(field, 0, size);
	memcpy(field, name, MIN(strlen(name), size));
}

static void put_service(struct worker *w, unsigned char *field)
{
	char s[16];

	snprintf(s, sizeof(s), "fz%u", below(w, NSERVICES));
	put_name(field, RDMX_SERVICE_LEN, s);
}

static void put_export(struct worker *w, unsigned char *field)
{
	char s[16];

	snprintf(s, sizeof(s), "fzx%u", below(w, NEXPORTS));
	put_name(field, RDMX_EXPORT_NAME_LEN, s);
}

/* A name (service or export) that breaks the rules: EINVAL. */
static void bad_name(struct worker *w, struct call *c, unsigned char *f,
		     size_t size)
{
	static const char bad_chars[] = "/ :@\x7f\x80\xff";
	size_t n = strnlen((char *)f, size);

	switch (below(w, 4)) {
	case 0:
		memset(f, 0, size);
		mut(c, M_FAIL, EINVAL, "name empty");
		break;
	case 1:
		f[below(w, MAX(n, 1u))] = bad_chars[below(w, sizeof(bad_chars) - 1)];
		mut(c, M_FAIL, EINVAL, "name with a forbidden byte");
		break;
	case 2:
		f[MIN(n + 1 + below(w, size - n - 1), size - 1)] = 'a';
		mut(c, M_FAIL, EINVAL, "name not NUL-padded");
		break;
	default:
		memset(f, 'a', size);
		mut(c, M_FAIL, EINVAL, "name without a NUL");
		break;
	}
}

/*
 * An address the kernel must refuse (EINVAL), never one it could reach.
 * EOPNOTSUPP comes first when the caller is not in the initial network
 * namespace (rdmx_addr_from_user()).
 */
static void bad_addr(struct worker *w, struct call *c,
		     struct rdmx_sockaddr *sa, bool any_ok)
{
	u32 fam;

	sa->family = AF_INET;
	switch (below(w, 5)) {
	case 0:
		do
			fam = below(w, 5) ? below(w, 64) : below(w, 65536);
		while (fam == AF_INET || fam == AF_INET6);
		sa->family = fam;
		mut(c, M_FAIL, EINVAL, "address family %u", fam);
		break;
	case 1:
		sa->scope_id = 1 + below(w, 1000);
		mut(c, M_FAIL, EINVAL, "scope_id %u on IPv4", sa->scope_id);
		break;
	case 2:
		sa->addr[4 + below(w, 12)] = 1 + below(w, 255);
		mut(c, M_FAIL, EINVAL, "bytes past the IPv4 address");
		break;
	case 3:
		memset(sa->addr, 0, sizeof(sa->addr));
		mut(c, any_ok ? M_WILD : M_FAIL, EINVAL, "the IPv4 any-address");
		break;
	default:
		sa->family = AF_INET6;
		memset(sa->addr, 0, sizeof(sa->addr));
		/* EAFNOSUPPORT on a kernel without IPv6. */
		mut(c, any_ok ? M_WILD : M_FAIL, 0, "the IPv6 any-address");
		break;
	}
	c->exp_alt = EOPNOTSUPP;
}

/*
 * The last line of defence of "nothing but 198.18.0.0/24 and 127.0.0.1":
 * an address the kernel would accept for CONNECT or MAP must be one of
 * those. Anything else here is a bug of this program.
 */
static void assert_reachable_ok(const struct rdmx_sockaddr *sa)
{
	static const unsigned char zero[16];
	in_addr_t a;

	if (sa->family == AF_INET6 && memcmp(sa->addr, zero, 16)) {
		fprintf(stderr, PROG ": internal error: IPv6 target\n");
		abort();
	}
	if (sa->family != AF_INET || sa->scope_id || memcmp(sa->addr + 4, zero, 12))
		return;
	memcpy(&a, sa->addr, 4);
	if (a != INADDR_ANY && !addr_allowed(a)) {
		fprintf(stderr, PROG ": internal error: target %s\n",
			inet_ntoa(*(struct in_addr *)&a));
		abort();
	}
}

/* ---- the ioctls --------------------------------------------------------- */

static void op_get_info(struct worker *w)
{
	struct rdmx_info *a, o;
	struct call c;

	a = arg_begin(w, &c, I_GET_INFO);
	fuzz_plan(w, &c, 1);
	call_fd(w, &c, -1);
	if (at(&c, S(0))) {
		a->abi_version = rnd(w);
		a->nr_ports = rnd(w);
		a->features = rnd(w);
		memset(a->version, 0xff, sizeof(a->version));
		mut(&c, M_NEUTRAL, 0, "output fields set on input");
	}
	arg_finish(w, &c);
	run_call(w, &c);
	if (!output(&c, &o, sizeof(o)))
		return;
	if (o.abi_version != RDMX_ABI_VERSION)
		violation(w, &c, "abi_version %u, expected %u", o.abi_version,
			  RDMX_ABI_VERSION);
	if (!memchr(o.version, 0, sizeof(o.version)))
		violation(w, &c, "version not NUL-terminated");
}

static void check_device(struct worker *w, struct call *c,
			 const unsigned char *e, u32 es, u32 i)
{
	static const unsigned char zero[32];
	struct rdmx_device_info di;
	u32 j;

	if (e[0] == CANARY)	/* not written: ports came and went */
		return;
	memcpy(&di, e, sizeof(di));
	if (!memchr(di.name, 0, sizeof(di.name)) ||
	    !memchr(di.netdev, 0, sizeof(di.netdev)))
		violation(w, c, "entry %u: a name not NUL-terminated", i);
	if (!di.port || di.transport > RDMX_TRANSPORT_IWARP ||
	    di.atomic_cap > RDMX_ATOMIC_GLOB)
		violation(w, c, "entry %u: port %u, transport %u, atomic_cap %u",
			  i, di.port, di.transport, di.atomic_cap);
	if (di.reserved0 || memcmp(di.reserved, zero, sizeof(di.reserved)))
		violation(w, c, "entry %u: reserved fields not zero", i);
	if (di.cap_flags & ~(RDMX_DEV_CAP_MEM_MGT_EXTENSIONS |
			     RDMX_DEV_CAP_SG_GAPS_REG |
			     RDMX_DEV_CAP_RC_RNR_NAK_GEN |
			     RDMX_DEV_CAP_BLOCK_MULTICAST))
		violation(w, c, "entry %u: unknown cap_flags %#llx", i,
			  di.cap_flags);
	for (j = sizeof(di); j < es; j++)
		if (e[j]) {
			violation(w, c, "entry %u: byte %u past the kernel's entry not zeroed",
				  i, j);
			break;
		}
}

static void op_list_devices(struct worker *w)
{
	unsigned char *arr = w->arena + A_AUX;
	struct rdmx_list_devices *a, o, in;
	u32 es, count, i, n;
	bool arr_ok = true;
	struct call c;

	a = arg_begin(w, &c, I_LIST_DEVICES);
	fuzz_plan(w, &c, 4);
	call_fd(w, &c, -1);
	switch (below(w, 4)) {
	case 0:
		es = 208 + 8 * below(w, 64);
		break;
	case 1:
		es = ENTRY_SIZE_MAX;
		break;
	default:
		es = sizeof(struct rdmx_device_info);
		break;
	}
	count = below(w, 5);
	memset(arr, CANARY, A_AUX_SZ);
	if (at(&c, S(0))) {
		es = one_in(w, 2) ? below(w, RDMX_DEVICE_INFO_SIZE_VER0) :
		     ENTRY_SIZE_MAX + 1 + below(w, 1 << 20);
		mut(&c, M_FAIL, EINVAL, "entry_size %u", es);
	}
	if (at(&c, S(1))) {
		count = one_in(w, 2) ? 0xffffffff : 1000;
		arr_ok = false;
		mut(&c, M_WILD, 0, "count %u, room for fewer", count);
	}
	a->entry_size = es;
	a->count = count;
	a->devices = count || one_in(w, 2) ? (uintptr_t)arr : 0;
	/* What may decide the outcome comes last, so that it holds. */
	if (at(&c, S(3))) {
		a->devices = wild_ptr(w);
		arr_ok = false;
		mut(&c, M_WILD, 0, "devices %#llx", a->devices);
	}
	if (at(&c, S(2))) {
		count = MAX(count, 1u);
		a->count = count;
		a->devices = 0;
		mut(&c, M_FAIL, EINVAL, "count %u, no array", count);
	}
	arg_finish(w, &c);
	run_call(w, &c);
	if (!output(&c, &o, sizeof(o)))
		return;
	memcpy(&in, w->shadow, sizeof(in));
	if (o.entry_size != MIN(in.entry_size,
				(u32)sizeof(struct rdmx_device_info)))
		violation(w, &c, "entry_size %u written back, %u passed",
			  o.entry_size, in.entry_size);
	if (!arr_ok || in.devices != (uintptr_t)arr)
		return;
	n = MIN(in.count, o.count);
	for (i = 0; i < n && (u64)(i + 1) * es <= A_AUX_SZ; i++)
		check_device(w, &c, arr + (u64)i * es, es, i);
	if ((u64)(in.count + 1) * es <= A_AUX_SZ) {
		const unsigned char *e = arr + (u64)in.count * es;

		for (i = 0; i < es; i++)
			if (e[i] != CANARY) {
				violation(w, &c, "entry %u written, past the room given (count %u)",
					  in.count, in.count);
				break;
			}
	}
}

static void op_listen(struct worker *w)
{
	struct rdmx_ep_addr *a, built;
	struct call c;

	a = arg_begin(w, &c, I_EP_LISTEN);
	fuzz_plan(w, &c, 5);
	call_fd(w, &c, R_NEW);
	listen_addr(w, &a->addr);
	put_service(w, a->service);
	if (one_in(w, 3))
		a->backlog = below(w, 128);
	if (at(&c, S(0))) {
		a->timeout_ms = 1 + below(w, 10000);
		mut(&c, M_FAIL, EINVAL, "timeout_ms %u on LISTEN", a->timeout_ms);
	}
	if (at(&c, S(1))) {
		a->backlog = 4097 + below(w, 1 << 20);
		mut(&c, M_FAIL, 0, "backlog %u", a->backlog);
	}
	if (at(&c, S(2)))
		bad_name(w, &c, a->service, RDMX_SERVICE_LEN);
	if (at(&c, S(3))) {
		put_name(a->service, RDMX_SERVICE_LEN, RDMX_SERVICE_ECHO);
		mut(&c, M_FAIL, 0, "service " RDMX_SERVICE_ECHO);
	}
	if (at(&c, S(4)))
		bad_addr(w, &c, &a->addr, true);
	built = *a;
	arg_finish(w, &c);
	run_call(w, &c);
	if (c.ret == 0) {
		kb_add_listen(&built.addr, built.service);
		set_role(c.slot, c.fd, R_LISTEN);
	}
}

static void op_accept(struct worker *w)
{
	struct rdmx_ep_accept *a, o;
	struct call c;

	a = arg_begin(w, &c, I_EP_ACCEPT);
	fuzz_plan(w, &c, 3);
	call_fd(w, &c, R_LISTEN);
	a->flags = below(w, 4);
	if (at(&c, S(0))) {
		a->fd = one_in(w, 2) ? -1 : (int)(1 + below(w, 1000));
		mut(&c, M_FAIL, EINVAL, "fd %d on input", a->fd);
	}
	if (at(&c, S(1))) {
		memset(&a->peer, 0x77, sizeof(a->peer));
		mut(&c, M_NEUTRAL, 0, "peer set on input");
	}
	if (at(&c, S(2)))
		c.limit = WAIT_NS;	/* blocks unless the fd is O_NONBLOCK */
	else
		c.limit = 5 * WAIT_NS;
	arg_finish(w, &c);
	run_call(w, &c);
	if (c.ret < 0)
		return;
	w->fds_opened++;
	w->channels++;
	if (output(&c, &o, sizeof(o)) && o.fd != c.ret)
		violation(w, &c, "fd %d written back, %ld returned", o.fd, c.ret);
	install(w, c.ret, R_CHAN);
}

/* Where to connect: an endpoint that listens, echo, nobody, far away. */
static void connect_target(struct worker *w, struct rdmx_ep_addr *a)
{
	static const unsigned char zero[16];
	struct kb_listen l;
	u32 r = below(w, 100);
	in_addr_t far;

	if (r < 85 && kb_get_listen(w, &l)) {
		a->addr = l.sa;
		memcpy(a->service, l.svc, RDMX_SERVICE_LEN);
		if (r >= 65)
			put_name(a->service, RDMX_SERVICE_LEN, RDMX_SERVICE_ECHO);
		if (a->addr.family == AF_INET6 || !memcmp(a->addr.addr, zero, 4))
			sa_v4(&a->addr, pick_local(w), a->addr.port);
		return;
	}
	put_service(w, a->service);
	if (r < 99) {
		sa_v4(&a->addr, pick_local(w), pick_port(w));
		return;
	}
	/* In 198.18.0.0/24 and, most likely, nobody's. */
	far = htonl(0xc6120000 | (250 + below(w, 5)));
	sa_v4(&a->addr, far, pick_port(w));
	a->timeout_ms = 20 + below(w, 200);
}

static void op_connect(struct worker *w)
{
	struct rdmx_ep_addr *a;
	bool fresh = one_in(w, 3);
	struct call c;
	int fd = -1;

	a = arg_begin(w, &c, I_EP_CONNECT);
	c.no_hot = true;
	fuzz_plan(w, &c, 4);
	if (fresh) {
		fd = open_rdmx(w, one_in(w, 2) ? O_NONBLOCK : 0);
		c.fd = fd;
	} else {
		call_fd(w, &c, R_NEW);
	}
	/*
	 * Mostly short: a connect that waits its whole timeout is most of
	 * the fuzzer's time otherwise; 1 in 8 waits long enough for a
	 * session to come up on a slow guest, and longer still once 100
	 * in a row have failed (a guest on a crowded host: without it, no
	 * channel is ever made, and their ioctls are never fuzzed).
	 */
	a->timeout_ms = one_in(w, 8) ? 50 + below(w, 1000) : 20 + below(w, 250);
	if (w->connects_failed >= 100 && one_in(w, 8))
		a->timeout_ms = 2000 + below(w, 4000);
	connect_target(w, a);
	if (at(&c, S(0))) {
		a->backlog = 1 + below(w, 100);
		mut(&c, M_FAIL, EINVAL, "backlog %u on CONNECT", a->backlog);
	}
	if (at(&c, S(1)))
		bad_name(w, &c, a->service, RDMX_SERVICE_LEN);
	if (at(&c, S(2)))
		bad_addr(w, &c, &a->addr, false);
	if (at(&c, S(3))) {
		a->timeout_ms = 1 + below(w, 3);
		mut(&c, M_NEUTRAL, 0, "timeout_ms %u", a->timeout_ms);
	}
	c.limit = (a->timeout_ms + 3000ULL) * MS;
	arg_finish(w, &c);
	assert_reachable_ok(&((struct rdmx_ep_addr *)c.st)->addr);
	run_call(w, &c);
	if (fresh) {
		if (fd >= 0)
			install(w, fd, c.ret == 0 ? R_CHAN : R_OTHER);
	} else {
		set_role(c.slot, c.fd, c.ret == 0 ? R_CHAN : R_OTHER);
	}
	if (c.ret == 0) {
		w->channels++;
		w->connects_failed = 0;
	} else {
		w->connects_failed++;
	}
}

/* Memory for message @i of a SEND or RECV: mostly good, sometimes not. */
static void fill_msg(struct worker *w, struct rdmx_msg_vec *v, bool send)
{
	u32 r = below(w, 100), room, off;

	if (r < 80) {
		off = below(w, B_DATA_SZ);
		room = B_DATA_SZ - off;
		v->addr = (uintptr_t)(w->arena + A_BUF + B_DATA + off);
		v->len = one_in(w, 10) ? room : below(w, MIN(room, 4096u) + 1);
	} else if (r < 88) {
		v->addr = hot_ptr(w, &room);
		v->len = one_in(w, 4) ? room + below(w, 8192) :
			 below(w, room + 1);
	} else if (r < 91 && send) {
		v->addr = (uintptr_t)big;
		v->len = below(w, RDMX_MSG_MAX + 1);
	} else if (r < 94) {
		v->addr = (uintptr_t)ro_page;
		v->len = below(w, page_size + 1);
	} else {
		v->addr = wild_ptr(w);
		v->len = below(w, 4097);
	}
}

static void check_xfer(struct worker *w, struct call *c, bool send,
		       const unsigned char *arr)
{
	struct rdmx_ep_xfer in, o;
	struct rdmx_msg_vec v;
	u32 i, stop_at, vs;

	memcpy(&in, w->shadow, sizeof(in));
	vs = in.vec_size;
	if (c->ret >= 0) {
		if (!output(c, &o, sizeof(o)))
			return;
		if ((long)o.count != c->ret)
			violation(w, c, "count %u written back, %ld returned",
				  o.count, c->ret);
		if ((u64)c->ret > in.count || (send && !c->ret)) {
			violation(w, c, "%ld messages done of %u", c->ret,
				  in.count);
			return;
		}
	}
	if (vs < sizeof(v) || vs > 4096 || !in.count ||
	    in.count > RDMX_XFER_MAX || (u64)(in.count + 1) * vs > A_AUX_SZ)
		return;
	stop_at = c->ret > 0 ? c->ret : 0;
	for (i = 0; i < in.count; i++) {
		memcpy(&v, arr + (u64)i * vs, sizeof(v));
		if (i < stop_at) {
			if (v.status)
				violation(w, c, "message %u done, status %d", i,
					  v.status);
			if (send)
				continue;
			if (v.flags & ~RDMX_MSG_IMM)
				violation(w, c, "message %u: flags %#x", i,
					  v.flags);
			if ((v.flags & RDMX_MSG_IMM) && v.len)
				violation(w, c, "message %u: an immediate of length %u",
					  i, v.len);
			if (!(v.flags & RDMX_MSG_IMM) && v.len > w->lens[i])
				violation(w, c, "message %u: %u bytes in a buffer of %u",
					  i, v.len, w->lens[i]);
		} else if (i == stop_at) {
			if (v.status != (int)SENTINEL &&
			    (v.status >= 0 || v.status < -4095))
				violation(w, c, "message %u, where the call stopped: status %d",
					  i, v.status);
		} else if (v.status != (int)SENTINEL || v.flags || v.imm ||
			   v.len != w->lens[i]) {
			violation(w, c,
				  "message %u, after where the call stopped (%u), was written",
				  i, stop_at);
			break;
		}
	}
	for (i = 0; i < vs; i++)
		if (arr[(u64)in.count * vs + i] != CANARY) {
			violation(w, c, "the entry past count %u was written",
				  in.count);
			break;
		}
}

static void op_xfer(struct worker *w, bool send)
{
	unsigned char *arr = w->arena + A_AUX;
	struct rdmx_msg_vec *v0;
	struct rdmx_ep_xfer *a;
	bool arr_ok = true;
	u32 vs, count, i, r;
	struct call c;

	a = arg_begin(w, &c, send ? I_EP_SEND : I_EP_RECV);
	fuzz_plan(w, &c, 9);
	call_fd(w, &c, R_CHAN);
	r = below(w, 10);
	vs = r == 0 ? sizeof(*v0) + 8 * (1 + below(w, 16)) :
	     r == 1 ? 4096 : sizeof(*v0);
	r = below(w, 20);
	count = r == 0 ? 1 + below(w, 64) : r == 1 ? RDMX_XFER_MAX :
		1 + below(w, 4);
	count = MIN(count, A_AUX_SZ / vs - 1);
	memset(arr, 0, (u64)count * vs);
	memset(arr + (u64)count * vs, CANARY, vs);
	for (i = 0; i < count; i++) {
		struct rdmx_msg_vec *v = (void *)(arr + (u64)i * vs);

		fill_msg(w, v, send);
		v->status = SENTINEL;
		w->lens[i] = v->len;
	}
	v0 = (void *)arr;
	a->flags = one_in(w, 20) ? 0 : RDMX_XFER_NONBLOCK;
	if (!a->flags)
		c.limit = WAIT_NS;
	a->count = count;
	a->vec_size = vs;
	a->msgs = (uintptr_t)arr;
	/* Placement first: what is in the array holds only if it is ours. */
	if (at(&c, S(7))) {
		u32 room;

		a->msgs = hot_ptr(w, &room);
		hot_put((void *)(uintptr_t)a->msgs, arr, (u64)count * vs);
		arr_ok = false;
		mut(&c, M_WILD, 0, "messages in memory other threads remap");
	} else if (at(&c, S(8)) && (u64)count * vs - 8 <= (u64)page_size) {
		/* The last entry runs into a PROT_NONE page. */
		unsigned char *p = w->edge + page_size - (count * vs - 8);

		memcpy(p, arr, count * vs - 8);
		a->msgs = (uintptr_t)p;
		arr_ok = false;
		mut(&c, M_WILD, 0, "the last message entry cut by unmapped memory");
	} else if (at(&c, S(6))) {
		if (one_in(w, 4)) {
			a->msgs = (uintptr_t)ro_page;
			mut(&c, M_WILD, 0, "messages in read-only memory");
		} else {
			a->msgs = bad_ptr(w);
			/* The first entry cannot be read. */
			mut(&c, M_FAIL, EFAULT, "msgs %#llx", a->msgs);
			/*
			 * Past a guard page's, a larger entry's tail may be
			 * readable, and not zero: it is checked first
			 * (copy_struct_from_user()).
			 */
			if (vs > sizeof(*v0))
				c.exp_alt = E2BIG;
		}
		arr_ok = false;
	} else {
		if (at(&c, S(2))) {
			v0->flags = 1u << below(w, 32);
			mut(&c, M_FAIL, EINVAL, "message 0: flags %#x", v0->flags);
		}
		if (at(&c, S(3))) {
			v0->imm = 1 + below(w, 0xffffffff);
			mut(&c, M_FAIL, EINVAL, "message 0: imm %u", v0->imm);
		}
		if (at(&c, S(4)) && vs > sizeof(*v0)) {
			arr[sizeof(*v0) + below(w, vs - sizeof(*v0))] = 1;
			mut(&c, M_FAIL, E2BIG, "message 0: a byte of its tail set");
		}
		if (at(&c, S(5))) {
			v0->len = RDMX_MSG_MAX + 1 +
				  below(w, 0xffffffff - RDMX_MSG_MAX);
			w->lens[0] = v0->len;
			if (send)
				mut(&c, M_FAIL, EMSGSIZE, "message 0: len %u",
				    v0->len);
			else
				mut(&c, M_WILD, 0, "message 0: len %u", v0->len);
		}
	}
	if (at(&c, S(0))) {
		a->count = one_in(w, 2) ? 0 : RDMX_XFER_MAX + 1 + below(w, 1 << 20);
		mut(&c, M_FAIL, EINVAL, "count %u", a->count);
	}
	if (at(&c, S(1))) {
		a->vec_size = one_in(w, 2) ? below(w, sizeof(*v0)) :
			      4097 + below(w, 1 << 20);
		mut(&c, M_FAIL, EINVAL, "vec_size %u", a->vec_size);
	}
	arg_finish(w, &c);
	run_call(w, &c);
	if (arr_ok && c.checkable && !c.flipped)
		check_xfer(w, &c, send, arr);
}

static void op_send(struct worker *w)
{
	op_xfer(w, true);
}

static void op_recv(struct worker *w)
{
	op_xfer(w, false);
}

static void op_shutdown(struct worker *w)
{
	struct call c;

	memset(&c, 0, sizeof(c));
	c.ioc = I_EP_SHUTDOWN;
	c.name = iocs[I_EP_SHUTDOWN].name;
	c.cmd = RDMX_IOC_EP_SHUTDOWN;
	c.limit = LIMIT_NS;
	fuzz_plan(w, &c, 1);
	call_fd(w, &c, R_CHAN);
	if (at(&c, S(0))) {
		static const unsigned long v[] = { 1, 8, ~0UL };

		c.arg = one_in(w, 2) ? v[below(w, ARRAY_SIZE(v))] :
			(uintptr_t)w->arena;
		mut(&c, M_FAIL, EINVAL, "argument %#lx, not 0", c.arg);
	}
	run_call(w, &c);
}

static void op_ep_info(struct worker *w)
{
	static const unsigned char zero[32];
	struct rdmx_ep_info *a, o;
	struct call c;

	a = arg_begin(w, &c, I_EP_INFO);
	fuzz_plan(w, &c, 1);
	call_fd(w, &c, one_in(w, 2) ? R_CHAN : -1);
	if (at(&c, S(0))) {
		a->state = rnd(w);
		a->sess_id = rnd(w);
		a->msgs_tx = rnd(w);
		memset(a->service, 'x', sizeof(a->service));
		mut(&c, M_NEUTRAL, 0, "output fields set on input");
	}
	arg_finish(w, &c);
	run_call(w, &c);
	if (!output(&c, &o, sizeof(o)))
		return;
	if (o.state > RDMX_EP_ERROR || o.sess_state > RDMX_SESS_STATE_CLOSED)
		violation(w, &c, "state %u, sess_state %u", o.state,
			  o.sess_state);
	if ((o.state == RDMX_EP_NEW || o.state == RDMX_EP_LISTENING) &&
	    o.sess_id)
		violation(w, &c,
			  "state %u with session %u (uapi.rst: 0 without one, new or listening)",
			  o.state, o.sess_id);
	if (o.error >= 4096)
		violation(w, &c, "error %u", o.error);
	if (!memchr(o.service, 0, sizeof(o.service)))
		violation(w, &c, "service not NUL-terminated");
	if (memcmp(o.reserved, zero, sizeof(o.reserved)))
		violation(w, &c, "reserved not zero");
	if ((o.local.family && o.local.family != AF_INET &&
	     o.local.family != AF_INET6) ||
	    (o.peer.family && o.peer.family != AF_INET &&
	     o.peer.family != AF_INET6))
		violation(w, &c, "address families %u, %u", o.local.family,
			  o.peer.family);
	if (o.sess_id)
		kb_add_u32(kb.sess, &kb.nsess, ARRAY_SIZE(kb.sess), o.sess_id,
			   true);
}

static void op_listener(struct worker *w, bool add)
{
	struct rdmx_listener_arg *a, built;
	struct call c;

	a = arg_begin(w, &c, add ? I_LISTENER_ADD : I_LISTENER_DEL);
	fuzz_plan(w, &c, 1);
	call_fd(w, &c, -1);
	if (add || one_in(w, 3) || !kb_get_lst(w, &a->addr)) {
		listen_addr(w, &a->addr);
		/* Not someone else's listener: an address not of this host. */
		if (!add && !opt.exclusive)
			sa_v4(&a->addr, htonl(0xc6120000 | (250 + below(w, 5))),
			      pick_port(w));
	}
	if (at(&c, S(0)))
		bad_addr(w, &c, &a->addr, true);
	c.unpriv = !priv_net_admin;
	built = *a;
	arg_finish(w, &c);
	run_call(w, &c);
	if (c.ret == 0)
		kb_lst(&built.addr, add);
}

static void op_listener_add(struct worker *w)
{
	op_listener(w, true);
}

static void op_listener_del(struct worker *w)
{
	op_listener(w, false);
}

static void op_sess_close(struct worker *w)
{
	struct rdmx_sess_close *a;
	struct call c;
	u32 id;

	a = arg_begin(w, &c, I_SESS_CLOSE);
	fuzz_plan(w, &c, 2);
	call_fd(w, &c, -1);
	if (one_in(w, 4) || !kb_get_u32(w, kb.sess, kb.nsess,
					ARRAY_SIZE(kb.sess), &id))
		id = opt.exclusive ? 1 + below(w, 64) :
		     0x40000000 + below(w, 1 << 20);
	a->sess_id = id;
	if (at(&c, S(1)) && opt.exclusive) {
		a->sess_id = rnd(w);
		mut(&c, M_WILD, 0, "sess_id %u", a->sess_id);
	}
	if (at(&c, S(0))) {
		a->sess_id = 0;
		mut(&c, M_FAIL, EINVAL, "sess_id 0");
	}
	c.unpriv = !priv_net_admin;
	arg_finish(w, &c);
	run_call(w, &c);
}

static void mr_forget(struct worker *w, unsigned int i)
{
	w->mr[i] = w->mr[--w->nmr];
}

/* @mine: one of the thread's regions, if it has one. */
static void mr_dereg(struct worker *w, bool mine)
{
	struct rdmx_mr_dereg *a;
	struct call c;
	unsigned int i;

	a = arg_begin(w, &c, I_MR_DEREG);
	fuzz_plan(w, &c, 1);
	if (w->nmr && (mine || !one_in(w, 4))) {
		i = below(w, w->nmr);
		use_slot(w, &c, w->mr[i].slot);
		a->mr_id = w->mr[i].id;
		mr_forget(w, i);
	} else {
		call_fd(w, &c, R_CHAN);
		a->mr_id = one_in(w, 4) ? (u32)rnd(w) : below(w, 70000);
	}
	if (at(&c, S(0))) {
		a->mr_id = rnd(w);
		mut(&c, M_WILD, 0, "mr_id %u", a->mr_id);
	}
	arg_finish(w, &c);
	run_call(w, &c);
}

static void op_mr_dereg(struct worker *w)
{
	mr_dereg(w, false);
}

static void op_mr_reg(struct worker *w)
{
	unsigned char *tok = w->arena + A_BUF + B_TOKEN;
	struct rdmx_mr_reg *a, o, in;
	bool tok_ok = true;
	u32 r, room, off;
	struct call c;

	/* Keep the pinned memory bounded. */
	if (w->nmr == MR_KEEP)
		mr_dereg(w, true);
	a = arg_begin(w, &c, I_MR_REG);
	fuzz_plan(w, &c, 5);
	call_fd(w, &c, R_CHAN);
	r = below(w, 100);
	if (r < 45) {
		a->addr = hot_ptr(w, &room);
		a->length = 1 + below(w, MAX(room, 1u));
	} else if (r < 90) {
		off = below(w, B_DATA_SZ);
		a->addr = (uintptr_t)(w->arena + A_BUF + B_DATA + off);
		a->length = 1 + below(w, B_DATA_SZ - off);
	} else {
		a->addr = (uintptr_t)ro_page;
		a->length = 1 + below(w, page_size);
	}
	a->access = 1 + below(w, 7);
	if (r >= 90 && !one_in(w, 4))
		a->access = RDMX_ACCESS_REMOTE_READ;
	a->token = (uintptr_t)tok;
	a->token_len = RDMX_TOKEN_MAX;
	if (one_in(w, 20))
		a->token_len = 0xffffffff;	/* counts as RDMX_TOKEN_MAX */
	if (at(&c, S(2))) {
		a->length = RDMX_MR_MAX;
		mut(&c, M_WILD, 0, "length %llu, past the mapping", a->length);
	}
	if (at(&c, S(0))) {
		a->length = one_in(w, 3) ? 0 : RDMX_MR_MAX + 1 +
					       below(w, 0xffffffff);
		mut(&c, M_FAIL, EINVAL, "length %llu", a->length);
	}
	if (at(&c, S(1))) {
		a->access = one_in(w, 3) ? 0 : a->access | 8u << below(w, 29);
		mut(&c, M_FAIL, EINVAL, "access %#x", a->access);
	}
	if (at(&c, S(3))) {
		a->addr = wild_ptr(w);
		mut(&c, M_WILD, 0, "addr %#llx", a->addr);
	}
	if (at(&c, S(4))) {
		if (one_in(w, 2)) {
			a->token_len = below(w, 64);
			mut(&c, M_WILD, 0, "token_len %u", a->token_len);
		} else {
			a->token = wild_ptr(w);
			mut(&c, M_WILD, 0, "token %#llx", a->token);
		}
		tok_ok = false;
	}
	arg_finish(w, &c);
	run_call(w, &c);
	if (!output(&c, &o, sizeof(o)))
		return;
	memcpy(&in, w->shadow, sizeof(in));
	if (!o.mr_id || o.mr_id > 65535)
		violation(w, &c, "mr_id %u (uapi.rst: 1 to 65535)", o.mr_id);
	if (!o.token_len || o.token_len > MIN(in.token_len, (u32)RDMX_TOKEN_MAX))
		violation(w, &c, "token_len %u written back, room %u",
			  o.token_len, in.token_len);
	if (w->nmr < MR_KEEP && c.slot >= 0) {
		w->mr[w->nmr].slot = c.slot;
		w->mr[w->nmr++].id = o.mr_id;
	}
	if (tok_ok && c.slot >= 0)
		kb_add_token(c.slot, tok, o.token_len);
}

/* One operation, valid but for the peer's say-so. */
static void fill_op(struct worker *w, struct rdmx_rma_op *op,
		    const unsigned char *tok, u32 tlen)
{
	bool atomic;
	u32 room, off;

	op->opcode = RDMX_RMA_READ + below(w, 5);
	atomic = op->opcode >= RDMX_RMA_CMP_SWAP;
	if (atomic)
		op->length = 8;
	else if (one_in(w, 10))
		op->length = 1 + below(w, 65536);
	else
		op->length = (op->opcode == RDMX_RMA_WRITE_IMM ? 0 : 1) +
			     below(w, 4096);
	if (one_in(w, 8)) {
		op->local_addr = hot_ptr(w, &room);
	} else if (one_in(w, 20) && op->opcode != RDMX_RMA_READ && !atomic) {
		op->local_addr = (uintptr_t)ro_page;
		op->length = MIN(op->length, (u64)page_size);
	} else {
		off = below(w, B_DATA_SZ - op->length);
		op->local_addr = (uintptr_t)(w->arena + A_BUF + B_DATA + off);
	}
	if (atomic)
		op->local_addr &= ~7ULL;
	op->token = (uintptr_t)tok;
	op->token_len = tlen;
	op->imm = op->opcode == RDMX_RMA_WRITE_IMM ? rnd(w) : 0;
	op->remote_offset = one_in(w, 4) ? below(w, 1 << 20) : below(w, 4096);
	if (one_in(w, 50))
		op->remote_offset = rnd(w);
	if (atomic)
		op->remote_offset &= ~7ULL;
	op->compare_add = atomic ? rnd(w) : 0;
	op->swap = op->opcode == RDMX_RMA_CMP_SWAP ? rnd(w) : 0;
	op->user_data = rnd(w);
}

/* Op 0 gets a field its opcode forbids: the call must fail. */
static void bad_op(struct worker *w, struct call *c, struct rdmx_rma_op *op)
{
	switch (below(w, 9)) {
	case 0:
		op->flags = 1u << below(w, 32);
		mut(c, M_FAIL, 0, "op 0: flags %#x", op->flags);
		break;
	case 1:
		op->reserved = 1 + below(w, 0xffffffff);
		mut(c, M_FAIL, 0, "op 0: reserved %#x", op->reserved);
		break;
	case 2:
		op->opcode = one_in(w, 2) ? 0 : RDMX_RMA_FETCH_ADD + 1 +
						below(w, 0xfffffff0);
		mut(c, M_FAIL, 0, "op 0: opcode %u", op->opcode);
		break;
	case 3:
		op->opcode = RDMX_RMA_READ + 2 * below(w, 2);	/* READ, WRITE_IMM */
		op->length = MAX(op->length, 8ULL);
		op->compare_add = 1 + below(w, 1000);
		mut(c, M_FAIL, 0, "op 0: compare_add on opcode %u", op->opcode);
		break;
	case 4:
		op->opcode = RDMX_RMA_FETCH_ADD;
		op->length = 8;
		op->local_addr &= ~7ULL;
		op->imm = 0;
		op->swap = 1 + below(w, 1000);
		mut(c, M_FAIL, 0, "op 0: swap on FETCH_ADD");
		break;
	case 5:
		op->opcode = RDMX_RMA_WRITE;
		op->imm = 1 + below(w, 1000);
		op->compare_add = 0;
		op->swap = 0;
		op->length = MAX(op->length, 1ULL);
		mut(c, M_FAIL, 0, "op 0: imm on WRITE");
		break;
	case 6:
		op->opcode = RDMX_RMA_CMP_SWAP + below(w, 2);
		op->length = one_in(w, 2) ? 4 : 16;
		op->imm = 0;
		mut(c, M_FAIL, 0, "op 0: an atomic of %llu bytes", op->length);
		break;
	case 7:
		op->length = one_in(w, 2) ? RDMX_RMA_LEN_MAX + 1 : ~0ULL;
		op->opcode = RDMX_RMA_READ;
		op->imm = 0;
		op->compare_add = 0;
		op->swap = 0;
		mut(c, M_FAIL, 0, "op 0: length %llu", op->length);
		break;
	default:
		op->token_len = one_in(w, 2) ? 0 : RDMX_TOKEN_MAX + 1 +
						   below(w, 1 << 20);
		mut(c, M_FAIL, 0, "op 0: token_len %u", op->token_len);
		break;
	}
}

static void op_rma(struct worker *w)
{
	unsigned char *arr = w->arena + A_AUX;
	unsigned char *tok = w->arena + A_BUF + B_TOKCOPY;
	struct rdmx_rma *a, in, o;
	struct rdmx_rma_op op;
	bool arr_ok = true;
	u32 osz, count, tlen, i, r;
	struct call c;
	int s;

	a = arg_begin(w, &c, I_RMA);
	fuzz_plan(w, &c, 8);
	call_fd(w, &c, R_CHAN);
	tlen = kb_get_token(w, c.slot, tok);
	r = below(w, 10);
	osz = r == 0 ? sizeof(op) + 8 * (1 + below(w, 16)) :
	      r == 1 ? 4096 : sizeof(op);
	count = one_in(w, 20) ? 1 + below(w, RDMX_RMA_BATCH_MAX) :
		1 + below(w, 4);
	count = MIN(count, A_AUX_SZ / osz);
	memset(arr, 0, (u64)count * osz);
	for (i = 0; i < count; i++)
		fill_op(w, (void *)(arr + (u64)i * osz), tok, tlen);
	a->flags = one_in(w, 2) ? RDMX_RMA_ASYNC : 0;
	a->count = count;
	a->op_size = osz;
	a->ops = (uintptr_t)arr;
	if (at(&c, S(7))) {
		u32 room;

		a->ops = hot_ptr(w, &room);
		hot_put((void *)(uintptr_t)a->ops, arr, (u64)count * osz);
		arr_ok = false;
		mut(&c, M_WILD, 0, "ops in memory other threads remap");
	} else if (at(&c, S(6))) {
		/* ENOTCONN before the array is read, else EFAULT. */
		a->ops = bad_ptr(w);
		arr_ok = false;
		mut(&c, M_FAIL, 0, "ops %#llx", a->ops);
	} else {
		if (at(&c, S(2)))
			bad_op(w, &c, (void *)arr);
		if (at(&c, S(3)) && osz > sizeof(op)) {
			arr[sizeof(op) + below(w, osz - sizeof(op))] = 1;
			mut(&c, M_FAIL, 0, "op 0: a byte of its tail set");
		}
		if (at(&c, S(4))) {
			s = below(w, tlen);
			tok[s] ^= 1u << below(w, 8);
			mut(&c, M_WILD, 0, "token byte %d flipped", s);
		}
		if (at(&c, S(5))) {
			struct rdmx_rma_op *p = (void *)(arr + below(w, count) * (u64)osz);

			p->token = wild_ptr(w);
			mut(&c, M_WILD, 0, "a token pointer %#llx", p->token);
		}
	}
	if (at(&c, S(0))) {
		a->count = one_in(w, 2) ? 0 : RDMX_RMA_BATCH_MAX + 1 +
					      below(w, 1 << 20);
		mut(&c, M_FAIL, EINVAL, "count %u", a->count);
	}
	if (at(&c, S(1))) {
		a->op_size = one_in(w, 2) ? below(w, sizeof(op)) :
			     4097 + below(w, 1 << 20);
		mut(&c, M_FAIL, EINVAL, "op_size %u", a->op_size);
	}
	/* A synchronous batch cannot be interrupted: wait for it. */
	c.limit = 10 * LIMIT_NS;
	arg_finish(w, &c);
	run_call(w, &c);
	if (!arr_ok || !output(&c, &o, sizeof(o)))
		return;
	memcpy(&in, w->shadow, sizeof(in));
	if (c.ret < 1 || (u64)c.ret > in.count || (long)o.count != c.ret) {
		violation(w, &c, "count %u written back, %ld returned, %u passed",
			  o.count, c.ret, in.count);
		return;
	}
	if (in.flags & RDMX_RMA_ASYNC || in.op_size != osz)
		return;
	for (i = 0; i < (u32)c.ret; i++) {
		memcpy(&op, arr + (u64)i * osz, sizeof(op));
		if (op.status > 0 || op.status < -4095)
			violation(w, &c, "op %u: status %d", i, op.status);
	}
}

static void op_events(struct worker *w)
{
	unsigned char *arr = w->arena + A_AUX;
	struct rdmx_events *a, in, o;
	struct rdmx_event ev;
	bool arr_ok = true;
	u32 es, count, i, j, r;
	struct call c;

	a = arg_begin(w, &c, I_EP_EVENTS);
	fuzz_plan(w, &c, 4);
	call_fd(w, &c, R_CHAN);
	r = below(w, 10);
	es = r == 0 ? sizeof(ev) + 8 * (1 + below(w, 16)) :
	     r == 1 ? 4096 : sizeof(ev);
	count = one_in(w, 20) ? RDMX_RMA_BATCH_MAX : 1 + below(w, 16);
	count = MIN(count, A_AUX_SZ / es - 1);
	memset(arr, CANARY, (u64)(count + 1) * es);
	a->flags = one_in(w, 20) ? 0 : RDMX_EVENTS_NONBLOCK;
	if (!a->flags)
		c.limit = WAIT_NS;
	a->count = count;
	a->event_size = es;
	a->events = (uintptr_t)arr;
	if (at(&c, S(0))) {
		a->count = one_in(w, 2) ? 0 : RDMX_RMA_BATCH_MAX + 1 +
					      below(w, 1 << 20);
		mut(&c, M_FAIL, EINVAL, "count %u", a->count);
	}
	if (at(&c, S(1))) {
		a->event_size = one_in(w, 2) ? below(w, sizeof(ev)) :
				4097 + below(w, 1 << 20);
		mut(&c, M_FAIL, EINVAL, "event_size %u", a->event_size);
	}
	if (at(&c, S(2))) {
		a->events = wild_ptr(w);
		arr_ok = false;
		mut(&c, M_WILD, 0, "events %#llx", a->events);
	}
	if (at(&c, S(3))) {
		u32 room;

		a->events = hot_ptr(w, &room);
		arr_ok = false;
		mut(&c, M_WILD, 0, "events in memory other threads remap");
	}
	arg_finish(w, &c);
	run_call(w, &c);
	if (!arr_ok || !output(&c, &o, sizeof(o)))
		return;
	memcpy(&in, w->shadow, sizeof(in));
	if (c.ret < 1 || (u64)c.ret > in.count || (long)o.count != c.ret) {
		violation(w, &c, "count %u written back, %ld returned, room %u",
			  o.count, c.ret, in.count);
		return;
	}
	if (in.event_size != es || in.count > count)
		return;
	for (i = 0; i <= in.count; i++) {
		const unsigned char *e = arr + (u64)i * es;

		if (i >= (u32)c.ret) {
			for (j = 0; j < es; j++)
				if (e[j] != CANARY) {
					violation(w, &c, "event %u written, %ld returned",
						  i, c.ret);
					return;
				}
			continue;
		}
		memcpy(&ev, e, sizeof(ev));
		if (ev.type != RDMX_EVENT_RMA_DONE || ev.reserved ||
		    ev.opcode < RDMX_RMA_READ || ev.opcode > RDMX_RMA_FETCH_ADD ||
		    ev.status > 0 || ev.status < -4095)
			violation(w, &c, "event %u: type %u, opcode %u, status %d, reserved %u",
				  i, ev.type, ev.opcode, ev.status, ev.reserved);
		if (ev.value && (ev.status || ev.opcode < RDMX_RMA_CMP_SWAP))
			violation(w, &c,
				  "event %u: value %#llx, opcode %u, status %d (only a successful atomic has one)",
				  i, ev.value, ev.opcode, ev.status);
		for (j = sizeof(ev); j < es; j++)
			if (e[j]) {
				violation(w, &c,
					  "event %u: byte %u past the kernel's event not zeroed",
					  i, j);
				break;
			}
	}
}

static void op_bench(struct worker *w)
{
	unsigned char *tok = w->arena + A_BUF + B_TOKCOPY;
	struct rdmx_bench *a, in, o;
	bool send, atomic;
	struct call c;

	a = arg_begin(w, &c, I_BENCH);
	fuzz_plan(w, &c, 8);
	call_fd(w, &c, R_CHAN);
	a->op = RDMX_BENCH_SEND + below(w, 5);
	send = a->op == RDMX_BENCH_SEND;
	atomic = a->op >= RDMX_BENCH_CMP_SWAP;
	if (send) {
		a->depth = 1;
		a->length = 1 + below(w, 4096);
		if (one_in(w, 3))
			a->flags = RDMX_BENCH_PINGPONG;
	} else {
		a->depth = 1 + below(w, 16);
		a->length = atomic ? 8 : one_in(w, 50) ? RDMX_BENCH_LEN_MAX :
			    1 + below(w, 65536);
		a->token_len = kb_get_token(w, c.slot, tok);
		a->token = (uintptr_t)tok;
		a->remote_offset = below(w, 4096) & (atomic ? ~7u : ~0u);
	}
	if (one_in(w, 4))
		a->duration_ms = 1 + below(w, 30);
	else
		a->iters = 1 + below(w, 64);
	if (at(&c, S(0))) {
		if (send) {
			a->depth = 2 + below(w, 100);
			mut(&c, M_FAIL, EINVAL, "depth %u on SEND", a->depth);
		} else {
			a->flags = RDMX_BENCH_PINGPONG;
			mut(&c, M_FAIL, EINVAL, "PINGPONG on op %u", a->op);
		}
	}
	if (at(&c, S(1))) {
		a->op = one_in(w, 2) ? 0 : RDMX_BENCH_FETCH_ADD + 1 +
					   below(w, 0xfffffff0);
		mut(&c, M_FAIL, EINVAL, "op %u", a->op);
	}
	if (at(&c, S(2))) {
		a->depth = one_in(w, 2) ? 0 : RDMX_BENCH_DEPTH_MAX + 1 +
					      below(w, 1 << 20);
		mut(&c, M_FAIL, EINVAL, "depth %u", a->depth);
	}
	if (at(&c, S(3))) {
		a->length = one_in(w, 3) ? 0 : atomic ? 4 :
			    send ? RDMX_MSG_MAX + 1 : RDMX_BENCH_LEN_MAX + 1;
		mut(&c, M_FAIL, EINVAL, "length %llu on op %u", a->length,
		    a->op);
	}
	if (at(&c, S(4))) {
		switch (below(w, 4)) {
		case 0:
			a->iters = 1 + below(w, 10);
			a->duration_ms = 1 + below(w, 10);
			break;
		case 1:
			a->iters = 0;
			a->duration_ms = 0;
			break;
		case 2:
			a->iters = RDMX_BENCH_ITERS_MAX + 1 + below(w, 1000);
			a->duration_ms = 0;
			break;
		default:
			a->iters = 0;
			a->duration_ms = RDMX_BENCH_DURATION_MAX_MS + 1 +
					 below(w, 1000);
			break;
		}
		mut(&c, M_FAIL, EINVAL, "iters %llu, duration_ms %u", a->iters,
		    a->duration_ms);
	}
	if (at(&c, S(5))) {
		if (send) {
			a->token = (uintptr_t)tok;
			a->token_len = 8;
			mut(&c, M_FAIL, EINVAL, "a token on SEND");
		} else {
			a->token_len = one_in(w, 2) ? 0 : RDMX_TOKEN_MAX + 1;
			mut(&c, M_FAIL, EINVAL, "token_len %u", a->token_len);
		}
	}
	if (at(&c, S(6))) {
		a->ops = rnd(w);
		a->lat_max_ns = rnd(w);
		a->nr_samples = rnd(w);
		mut(&c, M_NEUTRAL, 0, "output fields set on input");
	}
	if (at(&c, S(7))) {
		if (send) {
			a->remote_offset = 8;
			mut(&c, M_FAIL, EINVAL, "remote_offset on SEND");
		} else {
			a->remote_offset = rnd(w) & ~7ULL;
			mut(&c, M_WILD, 0, "remote_offset %#llx", a->remote_offset);
		}
	}
	c.limit = (a->duration_ms + 300ULL) * MS;
	arg_finish(w, &c);
	run_call(w, &c);
	if (!output(&c, &o, sizeof(o)))
		return;
	memcpy(&in, w->shadow, sizeof(in));
	if (in.iters && o.ops != in.iters)
		violation(w, &c, "ops %llu of %llu iterations", o.ops, in.iters);
	if (o.bytes != o.ops * in.length)
		violation(w, &c, "bytes %llu, ops %llu of %llu bytes", o.bytes,
			  o.ops, in.length);
	if (o.nr_samples != MIN(o.ops, (u64)RDMX_BENCH_SAMPLES_MAX))
		violation(w, &c, "nr_samples %u, ops %llu", o.nr_samples, o.ops);
	if (o.ops && (o.lat_min_ns > o.lat_max_ns ||
		      o.lat_median_ns > o.lat_p99_ns ||
		      o.lat_p99_ns > o.lat_p999_ns ||
		      o.lat_p999_ns > o.lat_max_ns ||
		      o.lat_median_ns < MIN(o.lat_min_ns, 0xffffffffULL)))
		violation(w, &c, "latencies min %llu median %llu p99 %llu p99.9 %llu max %llu",
			  o.lat_min_ns, o.lat_median_ns, o.lat_p99_ns,
			  o.lat_p999_ns, o.lat_max_ns);
	if (o.bw_peak < o.bw_avg)
		violation(w, &c, "bw_peak %llu below bw_avg %llu", o.bw_peak,
			  o.bw_avg);
}

static void put_allow(struct worker *w, struct rdmx_export_allow *al)
{
	in_addr_t a;

	memset(al, 0, sizeof(*al));
	al->family = AF_INET;
	if (one_in(w, 2)) {
		a = htonl(0xc6120000);
		al->prefix_len = 24;
	} else {
		a = pick_local(w);
		al->prefix_len = 32;
	}
	memcpy(al->addr, &a, 4);
}

static void op_export_add(struct worker *w)
{
	static const char *const paths[] = {
		"/nonexistent-rdmx-ioctlfuzz", "/dev/null", "/tmp",
	};
	char *path = (char *)w->arena + A_BUF + B_PATH;
	static const u32 lbs[] = { 0, 512, 4096 };
	static const u32 bad_lbs[] = { 1, 511, 1024, 2048, 8192, 0xffffffff };
	struct rdmx_export_add *a;
	struct rdmx_export_allow *al;
	struct call c;
	u32 i;

	a = arg_begin(w, &c, I_EXPORT_ADD);
	fuzz_plan(w, &c, 9);
	call_fd(w, &c, -1);
	put_export(w, a->name);
	if (one_in(w, 4)) {
		snprintf(path, 4096, "%s", img_path[0] && !one_in(w, 3) ?
			 img_path : paths[below(w, ARRAY_SIZE(paths))]);
		a->path = (uintptr_t)path;
		a->path_len = strlen(path);
	} else {
		a->flags = RDMX_EXPORT_RAM;
		a->ram_size = 4096ULL * (1 + below(w, 1024));
	}
	if (one_in(w, 3))
		a->flags |= RDMX_EXPORT_RO;
	if (one_in(w, 4))
		a->flags |= RDMX_EXPORT_INSECURE;
	if (one_in(w, 4))
		a->flags |= RDMX_EXPORT_SHARED;
	if (!(a->flags & RDMX_EXPORT_RAM) && one_in(w, 3)) {
		a->flags |= RDMX_EXPORT_UUID;
		for (i = 0; i < sizeof(a->uuid); i++)
			a->uuid[i] = below(w, 256);
		a->uuid[0] |= 1;
	}
	a->logical_block_size = lbs[below(w, ARRAY_SIZE(lbs))];
	a->nr_allow = below(w, 3);
	for (i = 0; i < a->nr_allow; i++)
		put_allow(w, &a->allow[i]);
	/* What may decide the outcome comes last, so that it holds. */
	if (at(&c, S(5)) && !(a->flags & RDMX_EXPORT_RAM)) {
		a->path = wild_ptr(w);
		mut(&c, M_WILD, 0, "path %#llx", a->path);
	}
	if (at(&c, S(6)) && (a->flags & RDMX_EXPORT_RAM)) {
		a->ram_size = 1ULL << (32 + below(w, 9));	/* sparse */
		mut(&c, M_WILD, 0, "ram_size %llu", a->ram_size);
	}
	if (at(&c, S(7))) {
		put_allow(w, &a->allow[RDMX_EXPORT_ALLOW_MAX - 1]);
		mut(&c, M_WILD, 0, "an allow-list entry past nr_allow");
	}
	if (at(&c, S(0)))
		bad_name(w, &c, a->name, RDMX_EXPORT_NAME_LEN);
	if (at(&c, S(1))) {
		a->nr_allow = RDMX_EXPORT_ALLOW_MAX + 1 + below(w, 1000);
		mut(&c, M_FAIL, EINVAL, "nr_allow %u", a->nr_allow);
	}
	if (at(&c, S(2))) {
		a->logical_block_size = bad_lbs[below(w, ARRAY_SIZE(bad_lbs))];
		mut(&c, M_FAIL, EINVAL, "logical_block_size %u",
		    a->logical_block_size);
	}
	if (at(&c, S(3))) {
		if (a->flags & RDMX_EXPORT_RAM) {
			switch (below(w, 3)) {
			case 0:
				snprintf(path, 4096, "/tmp");
				a->path = (uintptr_t)path;
				a->path_len = 4;
				break;
			case 1:
				a->ram_size = one_in(w, 2) ? 0 :
					      4096 * (1 + below(w, 100)) -
					      1 - below(w, 4095);
				break;
			default:
				a->ram_size = 1ULL << 63;
				break;
			}
			mut(&c, M_FAIL, EINVAL, "RAM export, path_len %u, ram_size %llu",
			    a->path_len, a->ram_size);
		} else {
			switch (below(w, 4)) {
			case 0:
				a->ram_size = 4096;
				break;
			case 1:
				a->path = 0;
				break;
			case 2:
				a->path_len = 0;
				break;
			default:
				a->path_len = 4096 + below(w, 1 << 20);
				break;
			}
			mut(&c, M_FAIL, EINVAL, "path %#llx, path_len %u, ram_size %llu",
			    a->path, a->path_len, a->ram_size);
		}
	}
	if (at(&c, S(4))) {
		if (!a->nr_allow) {
			a->nr_allow = 1;
			put_allow(w, &a->allow[0]);
		}
		al = &a->allow[below(w, MIN(a->nr_allow,
					   (u32)RDMX_EXPORT_ALLOW_MAX))];
		switch (below(w, 4)) {
		case 0:
			al->reserved0 = 1 + below(w, 255);
			break;
		case 1:
			al->reserved1 = 1 + below(w, 0xfffffffe);
			break;
		case 2:
			al->prefix_len = 33 + below(w, 200);
			break;
		default:
			al->family = one_in(w, 2) ? 0 : 3 + below(w, 7);
			break;
		}
		mut(&c, M_FAIL, EINVAL, "a bad allow-list entry");
	}
	if (at(&c, S(8))) {
		/* A uuid for RAM, an all-zero one, or one without its flag. */
		if (a->flags & RDMX_EXPORT_RAM) {
			a->flags |= RDMX_EXPORT_UUID;
			a->uuid[below(w, sizeof(a->uuid))] = 1 + below(w, 255);
		} else if (a->flags & RDMX_EXPORT_UUID) {
			memset(a->uuid, 0, sizeof(a->uuid));
		} else {
			a->uuid[below(w, sizeof(a->uuid))] = 1 + below(w, 255);
		}
		mut(&c, M_FAIL, EINVAL, "uuid with flags %#x", a->flags);
	}
	c.unpriv = !priv_sys_admin;
	arg_finish(w, &c);
	run_call(w, &c);
}

static void op_export_del(struct worker *w)
{
	struct rdmx_export_del *a;
	struct call c;

	a = arg_begin(w, &c, I_EXPORT_DEL);
	fuzz_plan(w, &c, 1);
	call_fd(w, &c, -1);
	put_export(w, a->name);
	if (one_in(w, 2))
		a->flags = RDMX_EXPORT_DEL_FORCE;
	if (at(&c, S(0)))
		bad_name(w, &c, a->name, RDMX_EXPORT_NAME_LEN);
	c.unpriv = !priv_sys_admin;
	c.limit = 4 * LIMIT_NS;
	arg_finish(w, &c);
	run_call(w, &c);
}

static void op_export_resize(struct worker *w)
{
	struct rdmx_export_resize *a, in, o;
	struct call c;

	a = arg_begin(w, &c, I_EXPORT_RESIZE);
	fuzz_plan(w, &c, 3);
	call_fd(w, &c, -1);
	put_export(w, a->name);
	a->new_size = one_in(w, 4) ? 0 : 4096ULL * (1 + below(w, 4096));
	if (at(&c, S(0)))
		bad_name(w, &c, a->name, RDMX_EXPORT_NAME_LEN);
	if (at(&c, S(1))) {
		/* Not a multiple of 4096: no export of any kind takes it. */
		a->new_size = 4096ULL * below(w, 4096) + 1 + below(w, 4095);
		mut(&c, M_FAIL, 0, "new_size %llu", a->new_size);
	}
	if (at(&c, S(2))) {
		a->old_size = rnd(w);
		mut(&c, M_WILD, 0, "old_size %llu on input", a->old_size);
	}
	c.unpriv = !priv_sys_admin;
	arg_finish(w, &c);
	run_call(w, &c);
	if (!output(&c, &o, sizeof(o)))
		return;
	memcpy(&in, w->shadow, sizeof(in));
	if (o.old_size > o.new_size)
		violation(w, &c, "shrank from %llu to %llu (exports only grow)",
			  o.old_size, o.new_size);
	if (in.new_size && o.new_size != in.new_size)
		violation(w, &c, "new_size %llu written back, %llu asked",
			  o.new_size, in.new_size);
}

static void op_map(struct worker *w)
{
	struct rdmx_listener_arg la;
	struct rdmx_map *a, o;
	struct call c;
	u32 port;

	a = arg_begin(w, &c, I_MAP);
	c.no_hot = true;
	fuzz_plan(w, &c, 7);
	call_fd(w, &c, -1);
	port = pick_port(w);
	if (!one_in(w, 4) && kb_get_lst(w, &la.addr))
		port = la.addr.port;
	sa_v4(&a->addr, pick_local(w), port);
	a->timeout_ms = 100 + below(w, 1000);
	if (one_in(w, 200)) {
		sa_v4(&a->addr, htonl(0xc6120000 | (250 + below(w, 5))), port);
		a->timeout_ms = 20 + below(w, 200);
	}
	put_export(w, a->name);
	if (one_in(w, 3))
		a->flags = RDMX_MAP_RO;
	a->nr_queues = below(w, 5);
	a->queue_depth = below(w, 129);
	a->loss_timeout_ms = 100 + below(w, 3000);
	if (at(&c, S(0)))
		bad_name(w, &c, a->name, RDMX_EXPORT_NAME_LEN);
	if (at(&c, S(1))) {
		a->nr_queues = RDMX_MAP_QUEUES_MAX + 1 + below(w, 1 << 20);
		mut(&c, M_FAIL, EINVAL, "nr_queues %u", a->nr_queues);
	}
	if (at(&c, S(2))) {
		a->queue_depth = RDMX_MAP_DEPTH_MAX + 1 + below(w, 1 << 20);
		mut(&c, M_FAIL, EINVAL, "queue_depth %u", a->queue_depth);
	}
	if (at(&c, S(3))) {
		a->loss_timeout_ms = RDMX_MAP_LOSS_TIMEOUT_MAX_MS + 1 +
				     below(w, 1 << 20);
		mut(&c, M_FAIL, EINVAL, "loss_timeout_ms %u", a->loss_timeout_ms);
	}
	if (at(&c, S(4)))
		bad_addr(w, &c, &a->addr, false);
	if (at(&c, S(5))) {
		a->index = 1 + below(w, 100);
		mut(&c, M_WILD, 0, "index %u on input", a->index);
	}
	if (at(&c, S(6))) {
		a->timeout_ms = 1 + below(w, 3);
		mut(&c, M_NEUTRAL, 0, "timeout_ms %u", a->timeout_ms);
	}
	c.unpriv = !priv_sys_admin;
	c.limit = (a->timeout_ms + 5000ULL) * MS;
	arg_finish(w, &c);
	assert_reachable_ok(&((struct rdmx_map *)c.st)->addr);
	run_call(w, &c);
	if (output(&c, &o, sizeof(o)))
		kb_add_u32(kb.maps, &kb.nmaps, ARRAY_SIZE(kb.maps), o.index,
			   false);
}

static void op_unmap(struct worker *w)
{
	struct rdmx_unmap *a, built;
	struct call c;
	u32 idx;

	a = arg_begin(w, &c, I_UNMAP);
	fuzz_plan(w, &c, 1);
	call_fd(w, &c, -1);
	if (one_in(w, 4) || !kb_get_u32(w, kb.maps, kb.nmaps,
					ARRAY_SIZE(kb.maps), &idx))
		idx = opt.exclusive ? below(w, 16) : 65536 + below(w, 1 << 20);
	a->index = idx;
	if (one_in(w, 2))
		a->flags = RDMX_UNMAP_FORCE;
	if (at(&c, S(0)) && opt.exclusive) {
		a->index = rnd(w);
		mut(&c, M_WILD, 0, "index %u", a->index);
	}
	c.unpriv = !priv_sys_admin;
	c.limit = 4 * LIMIT_NS;
	built = *a;
	arg_finish(w, &c);
	run_call(w, &c);
	if (c.ret == 0)
		kb_del_map(built.index);
}

static bool rdmx_cmd(unsigned long cmd)
{
	unsigned int i;

	for (i = 0; i < NIOC; i++)
		if (iocs[i].cmd == cmd)
			return true;
	return false;
}

/* An argument for a number nobody knows: sometimes a buffer, sometimes not. */
static unsigned long raw_arg(struct worker *w)
{
	unsigned char *p = w->arena + A_ARG;
	unsigned int i;

	if (one_in(w, 3))
		return one_in(w, 2) ? bad_ptr(w) : rnd(w);
	for (i = 0; i < 256; i++)
		p[i] = rnd(w);
	return (uintptr_t)p;
}

/* A number of rdmx's type that is no rdmx ioctl: ENOTTY. */
static void op_raw_magic(struct worker *w)
{
	struct call c;
	unsigned long cmd;

	memset(&c, 0, sizeof(c));
	c.ioc = -1;
	c.name = "raw ioctl (rdmx type)";
	c.limit = LIMIT_NS;
	fuzz_plan(w, &c, 0);
	call_fd(w, &c, -1);
	do
		cmd = _IOC(below(w, 4), RDMX_IOC_TYPE, below(w, 256),
			   one_in(w, 2) ? 0 : below(w, 1 << _IOC_SIZEBITS));
	while (rdmx_cmd(cmd));
	c.cmd = cmd;
	c.arg = raw_arg(w);
	mut(&c, M_FAIL, ENOTTY, "number %#lx, not rdmx's", cmd);
	w->magic_calls++;
	run_call(w, &c);
}

/*
 * A number of another type. The types the VFS answers itself, for every
 * file, are left out (FIONBIO, FIOCLEX, FIFREEZE, FIGETBSZ, FICLONE,
 * FS_IOC_*: do_vfs_ioctl()); for the others rdmx is asked, and knows none.
 */
static void op_raw_other(struct worker *w)
{
	static const unsigned char vfs_types[] = {
		0x00, 0x15, 'T', 'X', 'f', 0x94, RDMX_IOC_TYPE,
	};
	unsigned long cmd;
	struct call c;
	unsigned int i;
	bool vfs;

	memset(&c, 0, sizeof(c));
	c.ioc = -1;
	c.name = "raw ioctl (other type)";
	c.limit = LIMIT_NS;
	fuzz_plan(w, &c, 0);
	call_fd(w, &c, -1);
	do {
		cmd = (u32)rnd(w);
		for (vfs = false, i = 0; i < sizeof(vfs_types); i++)
			vfs |= _IOC_TYPE(cmd) == vfs_types[i];
	} while (vfs);
	c.cmd = cmd;
	c.arg = raw_arg(w);
	mut(&c, M_FAIL, ENOTTY, "number %#lx, of type %#x", cmd,
	    (u32)_IOC_TYPE(cmd));
	w->other_calls++;
	run_call(w, &c);
}

/* ---- races: descriptors, memory, fork ----------------------------------- */

static void op_fds(struct worker *w)
{
	int s = below(w, NSLOTS), t = below(w, NSLOTS), fd, nfd, fl;

	switch (below(w, 10)) {
	case 0: case 1: case 2: case 3: case 4:
		fd = open_rdmx(w, one_in(w, 2) ? O_NONBLOCK : 0);
		if (fd >= 0)
			install_at(w, s, fd, R_NEW, -1);
		break;
	case 5: case 6:
		fd = slot_fd(s);
		busy(w, "dup", fd, LIMIT_NS);
		nfd = dup(fd);
		idle(w);
		if (nfd < 0)
			break;
		w->dups++;
		w->fds_opened++;
		if (t == s)
			t = (t + 1) % NSLOTS;
		install_at(w, t, nfd, slot_role(s),
			   __atomic_load_n(&pool[s].peer, __ATOMIC_RELAXED));
		break;
	case 7:
		/* Replace t's file under its number: a close, done by dup2. */
		fd = slot_fd(s);
		nfd = slot_fd(t);
		if (fd < 0 || nfd < 0 || fd == nfd)
			break;
		busy(w, "dup2", nfd, (u64)(opt.hang_s * SEC));
		if (dup2(fd, nfd) == nfd) {
			w->dups++;
			w->fds_opened++;
			w->fds_closed++;
			set_role(t, nfd, slot_role(s));
		}
		idle(w);
		break;
	case 8:
		fd = slot_fd(s);
		fl = fcntl(fd, F_GETFL);
		if (fl >= 0)
			fcntl(fd, F_SETFL, fl ^ O_NONBLOCK);
		break;
	default:
		/* Close a channel, most likely, under the others' calls. */
		s = pick_slot(w, R_CHAN);
		fd = open_rdmx(w, O_NONBLOCK);
		if (fd >= 0)
			install_at(w, s, fd, R_NEW, -1);
		break;
	}
}

static void hot_fill(unsigned char *p, size_t len, u64 seed)
{
	size_t i;

	for (i = 0; i + 8 <= len; i += 512)
		memcpy(p + i, &seed, 8);
}

static void op_mem(struct worker *w)
{
	unsigned int s = below(w, HOT_SLOTS);
	unsigned char *p = hot + s * hot_stride, *q;
	size_t pg;

	pthread_mutex_lock(&hot_lock);
	busy(w, "mmap", -1, (u64)(opt.hang_s * SEC));
	if (hot_state[s] == HOT_DEAD)
		goto out;
	w->mem_ops++;
	switch (below(w, 5)) {
	case 0:
		/* New pages in place of the old, pinned or not. */
		if (mmap(p, HOT_SIZE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == p) {
			hot_state[s] = HOT_RW;
			hot_fill(p, HOT_SIZE, rnd(w));
		}
		break;
	case 1:
		if (hot_state[s] == HOT_RW) {
			if (!mprotect(p, HOT_SIZE, PROT_NONE))
				hot_state[s] = HOT_NONE;
		} else if (!mprotect(p, HOT_SIZE, PROT_READ | PROT_WRITE)) {
			hot_state[s] = HOT_RW;
		}
		break;
	case 2:
		/* Gone, for a moment, then back (unless someone took the hole). */
		munmap(p, HOT_SIZE);
		q = mmap(p, HOT_SIZE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (q != p) {
			if (q != MAP_FAILED)
				munmap(q, HOT_SIZE);
			__atomic_store_n(&hot_state[s], HOT_DEAD, __ATOMIC_RELAXED);
			break;
		}
		hot_state[s] = HOT_RW;
		hot_fill(p, HOT_SIZE, rnd(w));
		break;
	case 3:
		if (hot_state[s] == HOT_RW)
			madvise(p, HOT_SIZE, MADV_DONTNEED);
		break;
	default:
		/* One page of it replaced. */
		pg = below(w, HOT_SIZE / page_size) * page_size;
		if (mmap(p + pg, page_size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != p + pg)
			break;
		if (hot_state[s] == HOT_NONE)
			mprotect(p + pg, page_size, PROT_NONE);
		break;
	}
out:
	idle(w);
	pthread_mutex_unlock(&hot_lock);
}

/* A child: a few calls on the inherited descriptors, then _exit(). */
static __noreturn void child_main(struct worker *w)
{
	unsigned char buf[512];
	struct rdmx_msg_vec v;
	struct rdmx_ep_xfer x;
	struct rdmx_info info;
	int i, fd;

	alarm(2);
	for (i = 0; i < 6; i++) {
		fd = slot_fd(below(w, NSLOTS));
		switch (below(w, 5)) {
		case 0:
			memset(&info, 0, sizeof(info));
			info.size = sizeof(info);
			ioctl(fd, RDMX_IOC_GET_INFO, &info);
			break;
		case 1:
		case 2:
			memset(&v, 0, sizeof(v));
			v.addr = (uintptr_t)buf;
			v.len = i & 1 ? sizeof(buf) : below(w, sizeof(buf));
			memset(&x, 0, sizeof(x));
			x.size = sizeof(x);
			x.flags = RDMX_XFER_NONBLOCK;
			x.count = 1;
			x.vec_size = sizeof(v);
			x.msgs = (uintptr_t)&v;
			ioctl(fd, i & 1 ? RDMX_IOC_EP_RECV : RDMX_IOC_EP_SEND, &x);
			break;
		case 3:
			ioctl(fd, RDMX_IOC_EP_SHUTDOWN, 0);
			break;
		default:
			close(fd);
			break;
		}
	}
	_exit(0);
}

static void op_fork(struct worker *w)
{
	pid_t pid;

	if (w->child > 0) {
		if (!waitpid(w->child, NULL, WNOHANG))
			return;		/* still at it */
		w->child = 0;
	}
	busy(w, "fork", -1, (u64)(opt.hang_s * SEC));
	pid = fork();
	if (!pid)
		child_main(w);
	idle(w);
	if (pid > 0) {
		w->child = pid;
		w->forks++;
	}
}

static void op_poll(struct worker *w)
{
	struct pollfd p[NSLOTS];
	int i;

	for (i = 0; i < NSLOTS; i++) {
		p[i].fd = slot_fd(i);
		p[i].events = POLLIN | POLLOUT | POLLPRI;
	}
	busy(w, "poll", -1, LIMIT_NS);
	poll(p, NSLOTS, 0);
	idle(w);
	w->polls++;
}

/* ---- channels ----------------------------------------------------------- */

static int plain_listen(struct worker *w, int fd,
			const struct rdmx_sockaddr *sa, const unsigned char *svc)
{
	struct rdmx_ep_addr *a;
	struct call c;

	a = arg_begin(w, &c, I_EP_LISTEN);
	c.fd = fd;
	a->addr = *sa;
	memcpy(a->service, svc, RDMX_SERVICE_LEN);
	arg_finish(w, &c);
	run_call(w, &c);
	if (c.ret == 0)
		kb_add_listen(sa, svc);
	return c.ret;
}

static int plain_connect(struct worker *w, int fd,
			 const struct rdmx_sockaddr *sa,
			 const unsigned char *svc, u32 timeout_ms)
{
	struct rdmx_ep_addr *a;
	struct call c;

	a = arg_begin(w, &c, I_EP_CONNECT);
	c.fd = fd;
	a->addr = *sa;
	memcpy(a->service, svc, RDMX_SERVICE_LEN);
	a->timeout_ms = timeout_ms;
	c.limit = (timeout_ms + 3000ULL) * MS;
	arg_finish(w, &c);
	assert_reachable_ok(&a->addr);
	run_call(w, &c);
	return c.ret;
}

static int plain_accept(struct worker *w, int fd)
{
	struct rdmx_ep_accept *a;
	struct call c;

	a = arg_begin(w, &c, I_EP_ACCEPT);
	c.fd = fd;
	a->flags = below(w, 4);
	c.limit = WAIT_NS;
	arg_finish(w, &c);
	run_call(w, &c);
	if (c.ret >= 0)
		w->fds_opened++;
	return c.ret < 0 ? -c.err : c.ret;
}

/*
 * A channel over this host's RDMA device: listen on a fresh descriptor,
 * connect another to it (or to echo), accept; the three go to the pool.
 */
static void op_scenario(struct worker *w)
{
	unsigned char svc[RDMX_SERVICE_LEN], echo[RDMX_SERVICE_LEN];
	int l, cl, ch = -1, sl, scl, sch, i;
	struct rdmx_sockaddr sa;
	bool to_echo, connected;

	w->scenarios++;
	sa_v4(&sa, pick_local(w), pick_port(w));
	put_service(w, svc);
	put_name(echo, sizeof(echo), RDMX_SERVICE_ECHO);
	l = open_rdmx(w, O_NONBLOCK);
	if (l < 0)
		return;
	if (plain_listen(w, l, &sa, svc)) {
		xclose(w, l);
		return;
	}
	cl = open_rdmx(w, one_in(w, 2) ? O_NONBLOCK : 0);
	if (cl < 0) {
		xclose(w, l);
		return;
	}
	to_echo = one_in(w, 4);
	connected = !plain_connect(w, cl, &sa, to_echo ? echo : svc, 2000);
	if (connected) {
		w->channels++;
		for (i = 0; i < 20 && !to_echo; i++) {
			ch = plain_accept(w, l);
			if (ch != -EAGAIN)
				break;
			usleep(1000);
		}
	}
	/* Three different slots. */
	sl = below(w, NSLOTS);
	scl = (sl + 1 + below(w, NSLOTS - 2)) % NSLOTS;
	sch = (scl + 1) % NSLOTS;
	install_at(w, sl, l, R_LISTEN, -1);
	if (ch >= 0) {
		w->channels++;
		install_at(w, sch, ch, R_CHAN, scl);
		install_at(w, scl, cl, R_CHAN, sch);
	} else {
		install_at(w, scl, cl, connected ? R_CHAN : R_OTHER, -1);
	}
}

/* ---- the threads -------------------------------------------------------- */

static const struct {
	void (*fn)(struct worker *w);
	unsigned int weight;
} op_table[] = {
	{ op_get_info, 25 },
	{ op_list_devices, 20 },
	{ op_listen, 40 },
	{ op_accept, 40 },
	{ op_connect, 25 },
	{ op_send, 80 },
	{ op_recv, 80 },
	{ op_shutdown, 8 },
	{ op_ep_info, 50 },
	{ op_listener_add, 12 },
	{ op_listener_del, 12 },
	{ op_sess_close, 4 },
	{ op_mr_reg, 50 },
	{ op_mr_dereg, 30 },
	{ op_rma, 80 },
	{ op_events, 50 },
	{ op_bench, 12 },
	{ op_export_add, 20 },
	{ op_export_del, 12 },
	{ op_export_resize, 12 },
	{ op_map, 6 },
	{ op_unmap, 10 },
	{ op_raw_magic, 60 },
	{ op_raw_other, 30 },
	{ op_fds, 25 },
	{ op_mem, 15 },
	{ op_fork, 2 },
	{ op_poll, 10 },
	{ op_scenario, 5 },
};

static unsigned int op_weights;

static void do_op(struct worker *w)
{
	unsigned int r, i, chans = 0;

	for (i = 0; i < NSLOTS; i++)
		chans += slot_role(i) == R_CHAN;
	if (chans < 2 && one_in(w, 20)) {
		op_scenario(w);
		return;
	}
	r = below(w, op_weights);
	for (i = 0; r >= op_table[i].weight; i++)
		r -= op_table[i].weight;
	op_table[i].fn(w);
}

static void *worker_main(void *p)
{
	struct worker *w = p;

	w->tid = gettid();
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		if (__atomic_load_n(&total_calls, __ATOMIC_RELAXED) >= opt.ncalls)
			break;
		if (deadline_ns && now() >= deadline_ns)
			break;
		do_op(w);
		__atomic_add_fetch(&w->ops, 1, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void on_kick(int sig)
{
	(void)sig;
}

static void print_wchan(FILE *f, pid_t tid)
{
	char path[64], buf[4096];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/wchan", tid);
	fd = open(path, O_RDONLY);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n > 0) {
			buf[n] = 0;
			fprintf(f, ", wchan %s", buf);
		}
	}
	snprintf(path, sizeof(path), "/proc/self/task/%d/stack", tid);
	fd = open(path, O_RDONLY);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n > 0) {
			buf[n] = 0;
			fprintf(f, "\n    kernel stack:\n%s", buf);
		}
	}
}

static void report_hang(const char *why)
{
	u64 t, since;
	int i;

	pthread_mutex_lock(&print_lock);
	fprintf(stderr, PROG ": HANG (seed %llu): %s; the threads:\n", opt.seed,
		why);
	for (i = 0; i < opt.threads; i++) {
		struct worker *w = &workers[i];

		since = __atomic_load_n(&w->busy_since, __ATOMIC_ACQUIRE);
		/* After since: reading wchans takes time, calls start meanwhile. */
		t = now();
		fprintf(stderr, "  thread %d (tid %d, op %llu): ", i, w->tid,
			w->ops);
		if (__atomic_load_n(&w->done, __ATOMIC_ACQUIRE))
			fprintf(stderr, "done");
		else if (!since)
			fprintf(stderr, "between calls");
		else
			fprintf(stderr, "in %s on fd %d for %.1f s",
				__atomic_load_n(&w->what, __ATOMIC_RELAXED),
				__atomic_load_n(&w->what_fd, __ATOMIC_RELAXED),
				(t - since) / 1e9);
		print_wchan(stderr, w->tid);
		fputc('\n', stderr);
	}
	fflush(stderr);
	pthread_mutex_unlock(&print_lock);
}

/*
 * Interrupt calls that take too long; 0 when every thread is done, 3 on a
 * hang (reported).
 */
static int watchdog(void)
{
	u64 hang = (u64)(opt.hang_s * SEC), t, since, total, last_total = ~0ULL;
	u64 last_change = now(), last_progress = now();
	char why[160];
	bool all_done;
	int i;

	for (;;) {
		usleep(10000);
		t = now();
		all_done = true;
		total = 0;
		for (i = 0; i < opt.threads; i++) {
			struct worker *w = &workers[i];

			if (!__atomic_load_n(&w->done, __ATOMIC_ACQUIRE))
				all_done = false;
			total += __atomic_load_n(&w->ops, __ATOMIC_RELAXED);
			since = __atomic_load_n(&w->busy_since, __ATOMIC_ACQUIRE);
			if (!since)
				continue;
			if (t >= __atomic_load_n(&w->kick_at, __ATOMIC_RELAXED) &&
			    t - w->last_kick >= KICK_EVERY_NS) {
				pthread_kill(w->pt, SIGUSR1);
				w->last_kick = t;
				w->kicks++;
			}
			if (t > since && t - since >= hang) {
				snprintf(why, sizeof(why),
					 "thread %d in %s for %.0f s", i,
					 __atomic_load_n(&w->what, __ATOMIC_RELAXED),
					 (t - since) / 1e9);
				report_hang(why);
				return 3;
			}
		}
		if (all_done)
			return 0;
		if (total != last_total) {
			last_total = total;
			last_change = t;
		} else if (t - last_change >= hang) {
			snprintf(why, sizeof(why), "no call returned for %.0f s",
				 (t - last_change) / 1e9);
			report_hang(why);
			return 3;
		}
		if (opt.verbose && t - last_progress >= 10 * SEC) {
			fprintf(stderr, PROG ": %llu calls\n",
				__atomic_load_n(&total_calls, __ATOMIC_RELAXED));
			last_progress = t;
		}
	}
}

/* ---- setup and cleanup -------------------------------------------------- */

static bool have_cap(int cap)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return false;
	return d[cap / 32].effective & (1u << (cap % 32));
}

static void find_addresses(void)
{
	struct ifaddrs *ifa, *i;
	in_addr_t a;

	if (nlocal || getifaddrs(&ifa))
		return;
	for (i = ifa; i && nlocal < MAX_LOCAL; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
			continue;
		a = ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr;
		if (addr_allowed(a) && ntohl(a) != INADDR_LOOPBACK)
			local4[nlocal++] = a;
	}
	freeifaddrs(ifa);
}

static void *map_or_die(size_t len, int prot)
{
	void *p = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror(PROG ": mmap");
		exit(1);
	}
	return p;
}

static void setup_memory(void)
{
	unsigned int s;
	int i;

	hot_stride = HOT_SIZE + page_size;
	hot = map_or_die(HOT_SLOTS * hot_stride, PROT_NONE);
	for (s = 0; s < HOT_SLOTS; s++) {
		unsigned char *p = hot + s * hot_stride;

		if (mmap(p, HOT_SIZE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != p) {
			perror(PROG ": mmap");
			exit(1);
		}
		hot_fill(p, HOT_SIZE, s);
	}
	ro_page = map_or_die(page_size, PROT_READ | PROT_WRITE);
	memset(ro_page, 0x5a, page_size);
	mprotect(ro_page, page_size, PROT_READ);
	big = map_or_die(RDMX_MSG_MAX, PROT_READ);
	for (i = 0; i < opt.threads; i++) {
		struct worker *w = &workers[i];

		w->arena = map_or_die(ARENA_SIZE + page_size,
				      PROT_READ | PROT_WRITE);
		w->guard = w->arena + ARENA_SIZE;
		mprotect(w->guard, page_size, PROT_NONE);
		w->edge = map_or_die(2 * page_size, PROT_READ | PROT_WRITE);
		mprotect(w->edge + page_size, page_size, PROT_NONE);
		w->shadow = calloc(1, A_ARG_SZ);
		if (!w->shadow) {
			perror(PROG ": calloc");
			exit(1);
		}
	}
}

/* A file to export, root only: 1 MiB, sparse. */
static void setup_image(void)
{
	int fd;

	if (!priv_sys_admin)
		return;
	snprintf(img_path, sizeof(img_path), "/tmp/" PROG ".%d.img",
		 (int)getpid());
	fd = open(img_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, 1 << 20)) {
		if (fd >= 0)
			close(fd);
		img_path[0] = 0;
		return;
	}
	close(fd);
}

/* The rdmxbN disks present; @out NULL: count only. */
static unsigned int list_disks(u32 *out, unsigned int cap)
{
	struct dirent *de;
	unsigned int n = 0;
	DIR *d;
	u32 idx;

	d = opendir("/sys/block");
	if (!d)
		return 0;
	while ((de = readdir(d)) && n < cap)
		if (sscanf(de->d_name, "rdmxb%u", &idx) == 1)
			out[n++] = idx;
	closedir(d);
	return n;
}

/* Remove what the run made: disks, exports, listeners, the file. */
static void cleanup(void)
{
	struct rdmx_export_del ed;
	struct rdmx_listener_arg la;
	struct rdmx_unmap um;
	u32 disks[256];
	unsigned int i, j, n;
	char name[16];
	int fd;

	fd = open(opt.dev, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		goto out;
	if (priv_sys_admin) {
		n = list_disks(disks, ARRAY_SIZE(disks));
		for (i = 0; i < n; i++) {
			for (j = 0; j < ndisks_before; j++)
				if (disks_before[j] == disks[i])
					break;
			if (j < ndisks_before)
				continue;
			memset(&um, 0, sizeof(um));
			um.size = sizeof(um);
			um.flags = RDMX_UNMAP_FORCE;
			um.index = disks[i];
			ioctl(fd, RDMX_IOC_UNMAP, &um);
		}
		for (i = 0; i < kb.nmaps; i++) {
			memset(&um, 0, sizeof(um));
			um.size = sizeof(um);
			um.flags = RDMX_UNMAP_FORCE;
			um.index = kb.maps[i];
			ioctl(fd, RDMX_IOC_UNMAP, &um);
		}
		for (i = 0; i < NEXPORTS; i++) {
			memset(&ed, 0, sizeof(ed));
			ed.size = sizeof(ed);
			ed.flags = RDMX_EXPORT_DEL_FORCE;
			snprintf(name, sizeof(name), "fzx%u", i);
			put_name(ed.name, sizeof(ed.name), name);
			ioctl(fd, RDMX_IOC_EXPORT_DEL, &ed);
		}
	}
	if (priv_net_admin) {
		for (i = 0; i < kb.nlst; i++) {
			memset(&la, 0, sizeof(la));
			la.size = sizeof(la);
			la.addr = kb.lst[i];
			ioctl(fd, RDMX_IOC_LISTENER_DEL, &la);
		}
	}
	close(fd);
out:
	for (i = 0; i < NSLOTS; i++)
		if (pool[i].fd >= 0) {
			close(pool[i].fd);
			pool[i].fd = -1;
		}
	if (img_path[0])
		unlink(img_path);
}

/* Wait for the children; 3 when one does not go. */
static int reap_children(void)
{
	u64 until = now() + (u64)(opt.hang_s * SEC);
	bool left;
	int i;

	do {
		left = false;
		for (i = 0; i < opt.threads; i++) {
			struct worker *w = &workers[i];

			if (w->child <= 0)
				continue;
			if (waitpid(w->child, NULL, WNOHANG))
				w->child = 0;
			else
				left = true;
		}
		if (left)
			usleep(10000);
	} while (left && now() < until);
	if (!left)
		return 0;
	for (i = 0; i < opt.threads; i++)
		if (workers[i].child > 0) {
			char path[64], buf[256];
			ssize_t n = 0;
			int fd;

			snprintf(path, sizeof(path), "/proc/%d/wchan",
				 workers[i].child);
			fd = open(path, O_RDONLY);
			if (fd >= 0) {
				n = read(fd, buf, sizeof(buf) - 1);
				close(fd);
			}
			buf[n > 0 ? n : 0] = 0;
			fprintf(stderr, PROG
				": HANG (seed %llu): child %d of thread %d did not exit in %.0f s, wchan %s\n",
				opt.seed, workers[i].child, i, opt.hang_s, buf);
		}
	return 3;
}

/* ---- the summary -------------------------------------------------------- */

static void summary(u64 t0, int status)
{
	static const char *const what[] = {
		"completed", "", "invariant broken", "hang",
	};
	u64 calls = 0, ok = 0, err[ERR_SLOTS] = { 0 }, ic[NIOC] = { 0 };
	u64 iok[NIOC] = { 0 }, ins[NIOC] = { 0 }, opened = 0, closed = 0, dups = 0, forks = 0;
	u64 mem = 0, polls = 0, scen = 0, chans = 0, kicks = 0, magic = 0;
	u64 other = 0;
	double secs = (now() - t0) / 1e9;
	unsigned int i, j, order[ERR_SLOTS], n = 0;
	FILE *f;

	for (i = 0; i < (unsigned int)opt.threads; i++) {
		struct worker *w = &workers[i];

		calls += w->calls;
		ok += w->ok;
		for (j = 0; j < ERR_SLOTS; j++)
			err[j] += w->err[j];
		for (j = 0; j < NIOC; j++) {
			ic[j] += w->ioc_calls[j];
			iok[j] += w->ioc_ok[j];
			ins[j] += w->ioc_ns[j];
		}
		opened += w->fds_opened;
		closed += w->fds_closed;
		dups += w->dups;
		forks += w->forks;
		mem += w->mem_ops;
		polls += w->polls;
		scen += w->scenarios;
		chans += w->channels;
		kicks += w->kicks;
		magic += w->magic_calls;
		other += w->other_calls;
	}
	for (i = 1; i < ERR_SLOTS; i++)
		if (err[i])
			order[n++] = i;
	for (i = 1; i < n; i++)		/* most frequent first */
		for (j = i; j > 0 && err[order[j]] > err[order[j - 1]]; j--) {
			unsigned int t = order[j];

			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	if (opt.json) {
		printf("{\"seed\":%llu,\"calls\":%llu,\"seconds\":%.3f,",
		       opt.seed, calls, secs);
		printf("\"rate\":%.1f,\"threads\":%d,\"ok\":%llu,\"errno\":{",
		       secs > 0 ? calls / secs : 0.0, opt.threads, ok);
		for (i = 0; i < n; i++) {
			printf("%s", i ? "," : "");
			json_string(stdout, order[i] == ERR_SLOTS - 1 ? "other" :
				    errno_name(order[i]));
			printf(":%llu", err[order[i]]);
		}
		printf("},\"ioctls\":{");
		for (i = 0; i < NIOC; i++) {
			printf("%s", i ? "," : "");
			json_string(stdout, iocs[i].name);
			printf(":{\"calls\":%llu,\"ok\":%llu,\"ms\":%llu}", ic[i],
			       iok[i], ins[i] / 1000000);
		}
		printf("},\"raw_rdmx_type\":%llu,\"raw_other_type\":%llu,",
		       magic, other);
		printf("\"fds_opened\":%llu,\"fds_closed\":%llu,\"dups\":%llu,",
		       opened, closed, dups);
		printf("\"forks\":%llu,\"remaps\":%llu,\"polls\":%llu,",
		       forks, mem, polls);
		printf("\"channel_setups\":%llu,\"channels\":%llu,", scen,
		       chans);
		printf("\"interrupts\":%llu,\"violations\":%llu,", kicks,
		       nviolations);
		printf("\"root\":%s,\"status\":%d,\"result\":",
		       priv_sys_admin ? "true" : "false", status);
		json_string(stdout, what[status]);
		printf("}\n");
	} else {
		printf(PROG ": ioctl           calls  succeeded  thread-ms\n");
		for (i = 0; i < NIOC; i++)
			printf("  %-14s %10llu %10llu %10llu\n", iocs[i].name,
			       ic[i], iok[i], ins[i] / 1000000);
		printf("  %-14s %10llu\n  %-14s %10llu\n", "other numbers",
		       other, "rdmx type", magic);
		printf("  errnos: success %llu", ok);
		for (i = 0; i < n; i++)
			printf(", %s %llu", order[i] == ERR_SLOTS - 1 ? "other" :
			       errno_name(order[i]), err[order[i]]);
		printf("\n  descriptors: %llu opened, %llu closed (%llu by dup)\n",
		       opened, closed, dups);
		printf("  channels: %llu set up (%llu tries)\n", chans, scen);
		printf("  races: %llu forks, %llu remaps, %llu polls\n", forks, mem,
		       polls);
		printf("  calls interrupted %llu times\n", kicks);
	}
	f = opt.json ? stderr : stdout;
	fprintf(f, PROG
		": seed %llu, %llu calls in %.1f s (%.0f/s), %d threads%s, %llu succeeded, %llu violations: %s\n",
		opt.seed, calls, secs, secs > 0 ? calls / secs : 0.0,
		opt.threads, priv_sys_admin ? ", root" : "", ok, nviolations,
		what[status]);
	fflush(stdout);
	fflush(stderr);
}

/* ---- main --------------------------------------------------------------- */

static void print_usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " [-s SEED] [-n CALLS] [-d SECONDS] [-t THREADS] [-j]\n"
		"                      [-a ADDR]... [-w SECONDS] [-k] [-x] [-v] [DEVNODE]\n"
		"  -s SEED     seed (default: from the clock)\n"
		"  -n CALLS    ioctl calls in all (default 100000 without -d)\n"
		"  -d SECONDS  run at most this long\n"
		"  -t THREADS  racing threads, 1 to %d (default 4)\n"
		"  -j          one-line JSON summary on stdout\n"
		"  -a ADDR     this host's address to use: 198.18.0.0/24 or 127.0.0.1\n"
		"  -w SECONDS  a call that has not returned after this long is a hang (60)\n"
		"  -k          keep going after a broken invariant\n"
		"  -x          the guest is ours: touch sessions, listeners, disks of others\n"
		"  -v          progress on stderr\n"
		"Exit: 0 done, 1 usage, 2 invariant broken, 3 hang.\n",
		MAX_THREADS);
}

static bool parse_u64(const char *s, u64 *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return !errno && *s && !*end;
}

int main(int argc, char **argv)
{
	bool seeded = false, counted = false;
	struct sigaction sa;
	struct in_addr ia;
	pthread_attr_t attr;
	int c, i, status, fd;
	u64 v, t0;
	char *end;

	while ((c = getopt(argc, argv, "s:n:d:t:ja:w:kxvh")) != -1) {
		switch (c) {
		case 's':
			if (!parse_u64(optarg, &opt.seed))
				goto bad;
			seeded = true;
			break;
		case 'n':
			if (!parse_u64(optarg, &opt.ncalls) || !opt.ncalls)
				goto bad;
			counted = true;
			break;
		case 'd':
			opt.seconds = strtod(optarg, &end);
			if (*end || !(opt.seconds > 0))
				goto bad;
			break;
		case 't':
			if (!parse_u64(optarg, &v) || !v || v > MAX_THREADS)
				goto bad;
			opt.threads = v;
			break;
		case 'j':
			opt.json = true;
			break;
		case 'a':
			if (!inet_aton(optarg, &ia) || !addr_allowed(ia.s_addr)) {
				fprintf(stderr, PROG
					": -a %s: not in 198.18.0.0/24 nor 127.0.0.1\n",
					optarg);
				return 1;
			}
			if (nlocal < MAX_LOCAL)
				local4[nlocal++] = ia.s_addr;
			break;
		case 'w':
			opt.hang_s = strtod(optarg, &end);
			if (*end || !(opt.hang_s >= 1))
				goto bad;
			break;
		case 'k':
			opt.keep_going = true;
			break;
		case 'x':
			opt.exclusive = true;
			break;
		case 'v':
			opt.verbose = true;
			break;
		case 'h':
			print_usage(stdout);
			return 0;
		default:
			goto bad;
		}
	}
	if (optind < argc)
		opt.dev = argv[optind++];
	if (optind < argc)
		goto bad;
	if (!counted)
		opt.ncalls = opt.seconds > 0 ? ~0ULL : 100000;
	if (!seeded)
		opt.seed = (u64)now_ns() ^ ((u64)getpid() << 32);

	page_size = sysconf(_SC_PAGESIZE);
	priv_sys_admin = have_cap(CAP_SYS_ADMIN);
	priv_net_admin = have_cap(CAP_NET_ADMIN);
	find_addresses();
	fd = open(opt.dev, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, PROG ": %s: %s\n", opt.dev, strerror(errno));
		return 1;
	}
	close(fd);
	null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	for (i = 0; i < (int)ARRAY_SIZE(op_table); i++)
		op_weights += op_table[i].weight;

	workers = calloc(opt.threads, sizeof(*workers));
	if (!workers) {
		perror(PROG ": calloc");
		return 1;
	}
	setup_memory();
	setup_image();
	ndisks_before = list_disks(disks_before, ARRAY_SIZE(disks_before));
	for (i = 0; i < NSLOTS; i++) {
		pool[i].fd = open(opt.dev, O_RDWR | O_CLOEXEC |
				  (i & 1 ? O_NONBLOCK : 0));
		pool[i].role = R_NEW;
		pool[i].peer = -1;
	}
	if (!opt.json || opt.verbose)
		fprintf(opt.json ? stderr : stdout,
			PROG ": seed %llu, %d threads, %s%s, addresses:%s",
			opt.seed, opt.threads, priv_sys_admin ? "root" : "unprivileged",
			opt.exclusive ? ", exclusive" : "",
			nlocal ? "" : " 127.0.0.1 only (no 198.18.0.0/24 here)");
	for (i = 0; i < nlocal && (!opt.json || opt.verbose); i++)
		fprintf(opt.json ? stderr : stdout, " %s",
			inet_ntoa(*(struct in_addr *)&local4[i]));
	if (!opt.json || opt.verbose)
		fprintf(opt.json ? stderr : stdout, "\n");
	fflush(stdout);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_kick;	/* no SA_RESTART: the call ends, EINTR */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	t0 = now();
	if (opt.seconds > 0)
		deadline_ns = t0 + (u64)(opt.seconds * SEC);
	pthread_attr_init(&attr);
	for (i = 0; i < opt.threads; i++) {
		struct worker *w = &workers[i];

		w->idx = i;
		w->rng = mix2(opt.seed, i);
		if (pthread_create(&w->pt, &attr, worker_main, w)) {
			fprintf(stderr, PROG ": pthread_create failed\n");
			return 1;
		}
	}
	status = watchdog();
	if (status == 3) {
		/* Threads stuck in the kernel: no cleanup, that may hang too. */
		if (img_path[0])
			unlink(img_path);
		summary(t0, 3);
		_exit(3);
	}
	for (i = 0; i < opt.threads; i++)
		pthread_join(workers[i].pt, NULL);
	status = reap_children();
	cleanup();
	if (!status && nviolations)
		status = 2;
	summary(t0, status);
	return status;

bad:
	print_usage(stderr);
	return 1;
}
