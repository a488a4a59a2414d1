// SPDX-License-Identifier: GPL-2.0
/*
 * fake-rdmx: an LD_PRELOAD library that plays /dev/rdmx in userspace, well
 * enough for rdmx-rmatest to run on a host without the module, between
 * processes of one host: tests/host/rmatest-fake.sh uses it to check the
 * test program itself, and that each of its cases fails when the "kernel"
 * misbehaves (FAKE_BUG).
 *
 * An open of a path ending in "rdmx-fake" is an endpoint: an AF_UNIX
 * SOCK_SEQPACKET socket. LISTEN binds an abstract name made of the port and
 * service, CONNECT connects to it, ACCEPT accepts; a session is (the
 * connecting process, the port). Messages and immediates are packets.
 * Anonymous private mmaps of a process that opened an endpoint (not those
 * of a shell that only passes the library on) become shared mappings of a
 * memfd, so that MR_REG can name memory another process maps (/proc/PID/fd/N);
 * the token carries that, the bounds, the rights, the session and a CRC,
 * and a file in /dev/shm exists while the region is registered. RMA checks
 * an operation as the uapi says, then runs it at once on the mapping
 * (atomics with the CPU's), so asynchronous operations complete at once and
 * their events wait in a queue.
 *
 * FAKE_NO_ATOMICS=1: a device without atomics. FAKE_BUG=NAME: one
 * misbehaviour, see fake_bug(). FAKE_RDMX_PATH: another path that opens an
 * endpoint (/dev/rdmx, for scripts). LIST_DEVICES shows one port, named
 * RDMX_RDMA_DEV; EP_INFO's addresses are RDMX_ADDR (local) and the one
 * connected to, as in the guests.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/rdmx.h>

#define MAX_FD		4096
#define MAX_MAPS	256
#define MAX_MRS		64
#define MAX_EVENTS	4096
#define PKT_MSG		1
#define PKT_IMM		2
#define TOKEN_MAGIC	0x454b414658444d52ULL	/* "RMDXFAKE" */

struct token {
	uint64_t magic;
	uint64_t key;		/* names the registry file */
	uint64_t map_off;	/* region start within the owner's memfd */
	uint64_t len;
	uint32_t access;
	uint32_t owner_pid;
	uint32_t memfd;
	uint32_t sess_pid;
	uint32_t sess_port;
	uint32_t crc;
};

struct ep {
	bool used;
	bool chan;
	unsigned int port;
	struct rdmx_sockaddr peer;
	pid_t sess_pid;
	unsigned int nmrs;
	struct { uint32_t id; uint64_t key; } mrs[MAX_MRS];
	uint32_t next_id;
	unsigned int nev, ev_head;
	struct rdmx_event ev[MAX_EVENTS];
	int held_imm;		/* FAKE_BUG=imm-late: an immediate held back */
	uint32_t held_val;
};

static struct ep *eps[MAX_FD];
static struct { char *base; size_t len; int memfd; } maps[MAX_MAPS];
static unsigned int nmaps;
static bool active;		/* this process opened an endpoint */
static unsigned long long nwrites, nevents;

static int (*real_open)(const char *, int, ...);
static int (*real_close)(int);
static int (*real_ioctl)(int, unsigned long, ...);
static int (*real_poll)(struct pollfd *, nfds_t, int);
static void *(*real_mmap)(void *, size_t, int, int, int, off_t);

static void fake_init(void)
{
	if (real_open)
		return;
	real_open = dlsym(RTLD_NEXT, "open");
	real_close = dlsym(RTLD_NEXT, "close");
	real_ioctl = dlsym(RTLD_NEXT, "ioctl");
	real_poll = dlsym(RTLD_NEXT, "poll");
	real_mmap = dlsym(RTLD_NEXT, "mmap");
}

/*
 * FAKE_BUG names one misbehaviour: write-drop (every 5th WRITE does nothing
 * and succeeds), stale-ok (deregistered regions stay reachable), nonatomic
 * (FETCH_ADD and CMP_SWAP are a load and a store), event-dup (one event
 * comes twice), event-lose (one event never comes), token-nocrc (the CRC is
 * not checked), rights (rights are not checked), imm-late (an immediate
 * comes after the next message), atomic-reg (MR_REG takes the atomic right
 * on a device without atomics), bounds (an access may end 1 byte past the
 * region), read-short (READs move a byte less).
 */
static bool fake_bug(const char *name)
{
	const char *b = getenv("FAKE_BUG");

	return b && !strcmp(b, name);
}

static struct ep *ep_of(int fd)
{
	return fd >= 0 && fd < MAX_FD ? eps[fd] : NULL;
}

static struct ep *ep_new(int fd)
{
	struct ep *e = calloc(1, sizeof(*e));

	if (!e || fd >= MAX_FD)
		abort();
	e->used = true;
	e->next_id = 1;
	eps[fd] = e;
	return e;
}

static uint32_t crc32(const void *p, size_t len)
{
	const uint8_t *b = p;
	uint32_t c = 0xffffffffu;
	int k;

	while (len--) {
		c ^= *b++;
		for (k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
	}
	return ~c;
}

/* FAKE_TAG keeps the registries of concurrent runs apart. */
static void reg_path(char *buf, size_t size, uint64_t key)
{
	const char *tag = getenv("FAKE_TAG");

	snprintf(buf, size, "/dev/shm/rdmxfake.%s.%016llx", tag ? tag : "0",
		 (unsigned long long)key);
}

static void sock_name(struct sockaddr_un *sa, socklen_t *len, unsigned int port,
		      const uint8_t *service)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	snprintf(sa->sun_path + 1, sizeof(sa->sun_path) - 1, "rdmxfake.%u.%u.%.63s",
		 getuid(), port ? port : RDMX_DEFAULT_PORT, (const char *)service);
	*len = offsetof(struct sockaddr_un, sun_path) + 1 + strlen(sa->sun_path + 1);
}

int open(const char *path, int flags, ...)
{
	size_t n = strlen(path);
	mode_t mode = 0;
	va_list ap;
	int fd;

	fake_init();
	if (flags & O_CREAT) {
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	if ((n < 9 || strcmp(path + n - 9, "rdmx-fake")) &&
	    !(getenv("FAKE_RDMX_PATH") && !strcmp(path, getenv("FAKE_RDMX_PATH"))))
		return real_open(path, flags, mode);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | (flags & O_CLOEXEC ? SOCK_CLOEXEC : 0), 0);
	if (fd >= 0)
		ep_new(fd);
	active = true;
	return fd;
}

int open64(const char *path, int flags, ...) __attribute__((alias("open")));

static void mrs_drop(struct ep *e)
{
	char path[128];
	unsigned int i;

	for (i = 0; i < e->nmrs; i++) {
		reg_path(path, sizeof(path), e->mrs[i].key);
		unlink(path);
	}
	e->nmrs = 0;
}

int close(int fd)
{
	struct ep *e;

	fake_init();
	e = ep_of(fd);
	if (e) {
		mrs_drop(e);
		free(e);
		eps[fd] = NULL;
	}
	return real_close(fd);
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	char *p;
	int m;

	fake_init();
	if (!active || addr || !(flags & MAP_ANONYMOUS) || !(flags & MAP_PRIVATE) ||
	    nmaps == MAX_MAPS)
		return real_mmap(addr, len, prot, flags, fd, off);
	m = memfd_create("rdmxfake", 0);
	if (m < 0 || ftruncate(m, len))
		return MAP_FAILED;
	p = real_mmap(NULL, len, prot, MAP_SHARED, m, 0);
	if (p == MAP_FAILED)
		return p;
	maps[nmaps].base = p;
	maps[nmaps].len = len;
	maps[nmaps].memfd = m;
	nmaps++;
	return p;
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
	__attribute__((alias("mmap")));

/* The memfd stays open: a peer may still have it mapped, as a pinned MR. */
int munmap(void *addr, size_t len)
{
	static int (*real_munmap)(void *, size_t);
	unsigned int i;

	if (!real_munmap)
		real_munmap = dlsym(RTLD_NEXT, "munmap");
	for (i = 0; i < nmaps; i++) {
		if (maps[i].base == addr) {
			maps[i] = maps[--nmaps];
			break;
		}
	}
	return real_munmap(addr, len);
}

/* ------------------------------------------------------------ messages */

static int pkt_send(int fd, uint32_t type, const void *p, size_t len)
{
	struct iovec iov[2] = { { &type, 4 }, { (void *)p, len } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };

	return sendmsg(fd, &mh, MSG_NOSIGNAL) < 0 ? -errno : 0;
}

static int ep_send(int fd, struct ep *e, struct rdmx_ep_xfer *x)
{
	struct rdmx_msg_vec *v = (void *)(uintptr_t)x->msgs;
	unsigned int i;
	int err;

	for (i = 0; i < x->count; i++) {
		if (v[i].flags || v[i].imm || v[i].len > RDMX_MSG_MAX)
			return i ? (int)i : (errno = v[i].len > RDMX_MSG_MAX ? EMSGSIZE : EINVAL, -1);
		err = pkt_send(fd, PKT_MSG, (void *)(uintptr_t)v[i].addr, v[i].len);
		if (err)
			return i ? (int)i : (errno = err == -EPIPE ? EPIPE : -err, -1);
		v[i].status = 0;
		if (e->held_imm) {
			e->held_imm = 0;
			pkt_send(fd, PKT_IMM, &e->held_val, 4);
		}
	}
	return x->count;
}

static int ep_recv(int fd, struct rdmx_ep_xfer *x)
{
	struct rdmx_msg_vec *v = (void *)(uintptr_t)x->msgs;
	bool nb = x->flags & RDMX_XFER_NONBLOCK;
	unsigned int i;
	ssize_t n;
	char *buf;

	for (i = 0; i < x->count; i++) {
		int fl = (i || nb) ? MSG_DONTWAIT : 0;

		n = recv(fd, NULL, 0, MSG_PEEK | MSG_TRUNC | fl);
		if (n < 0 && i)
			break;
		if (n < 0)
			return -1;
		if (n == 0)
			break;		/* the end of the stream */
		if (n < 4) {
			errno = EPROTO;
			return -1;
		}
		if ((size_t)n - 4 > v[i].len) {
			uint32_t t;

			recv(fd, &t, 4, MSG_PEEK | MSG_DONTWAIT);
			if (t == PKT_MSG) {
				v[i].len = n - 4;
				if (!i) {
					errno = EMSGSIZE;
					return -1;
				}
				v[i].status = -EMSGSIZE;
				break;
			}
		}
		buf = malloc(n);
		if (recv(fd, buf, n, MSG_DONTWAIT) != n)
			abort();
		v[i].status = 0;
		if (*(uint32_t *)buf == PKT_IMM) {
			v[i].flags = RDMX_MSG_IMM;
			v[i].len = 0;
			memcpy(&v[i].imm, buf + 4, 4);
		} else {
			v[i].flags = 0;
			v[i].imm = 0;
			v[i].len = n - 4;
			memcpy((void *)(uintptr_t)v[i].addr, buf + 4, n - 4);
		}
		free(buf);
	}
	x->count = i;
	return i;
}

/* ---------------------------------------------------------------- MRs */

static int mr_reg(int fd, struct ep *e, struct rdmx_mr_reg *r)
{
	struct token t;
	char path[128];
	unsigned int i;
	struct ucred cr;
	socklen_t cl = sizeof(cr);
	char *a = (char *)(uintptr_t)r->addr;

	if (r->size < RDMX_MR_REG_SIZE_VER0 || r->flags || r->reserved || !r->length ||
	    r->length > RDMX_MR_MAX || !r->access || (r->access & ~7u))
		return errno = EINVAL, -1;
	if (!e->chan)
		return errno = ENOTCONN, -1;
	if ((r->access & RDMX_ACCESS_REMOTE_ATOMIC) && getenv("FAKE_NO_ATOMICS") &&
	    !fake_bug("atomic-reg"))
		return errno = EOPNOTSUPP, -1;
	if (r->token_len < sizeof(t))
		return errno = ENOSPC, -1;
	for (i = 0; i < nmaps; i++)
		if (a >= maps[i].base && a + r->length <= maps[i].base + maps[i].len)
			break;
	if (i >= nmaps || e->nmrs == MAX_MRS)
		return errno = EFAULT, -1;
	memset(&t, 0, sizeof(t));
	t.magic = TOKEN_MAGIC;
	t.key = ((uint64_t)getpid() << 32) ^ ((uint64_t)rand() << 8) ^ nwrites++;
	t.map_off = a - maps[i].base;
	t.len = r->length;
	t.access = r->access;
	t.owner_pid = getpid();
	t.memfd = maps[i].memfd;
	t.sess_pid = e->sess_pid;
	t.sess_port = e->port;
	if (!e->sess_pid && getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) == 0)
		t.sess_pid = cr.pid;
	t.crc = crc32(&t, offsetof(struct token, crc));
	reg_path(path, sizeof(path), t.key);
	if (real_close(real_open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600)))
		return errno = EIO, -1;
	e->mrs[e->nmrs].id = e->next_id++;
	e->mrs[e->nmrs].key = t.key;
	r->mr_id = e->mrs[e->nmrs].id;
	e->nmrs++;
	memcpy((void *)(uintptr_t)r->token, &t, sizeof(t));
	r->token_len = sizeof(t);
	return 0;
}

static int mr_dereg(struct ep *e, struct rdmx_mr_dereg *d)
{
	char path[128];
	unsigned int i;

	if (d->size < RDMX_MR_DEREG_SIZE_VER0 || d->flags || d->reserved)
		return errno = EINVAL, -1;
	for (i = 0; i < e->nmrs; i++)
		if (e->mrs[i].id == d->mr_id)
			break;
	if (i == e->nmrs)
		return errno = ENOENT, -1;
	reg_path(path, sizeof(path), e->mrs[i].key);
	unlink(path);
	e->mrs[i] = e->mrs[--e->nmrs];
	return 0;
}

/* ---------------------------------------------------------------- RMA */

static struct { pid_t pid; uint32_t memfd; char *p; size_t len; } rmaps[256];
static unsigned int nrmaps;

/* The owner's memory: its memfd mapped here (cached); NULL if out of it */
static char *remote(const struct token *t, uint64_t off, uint64_t len)
{
	char path[128];
	struct stat st;
	unsigned int i;
	char *p;
	int fd;

	for (i = 0; i < nrmaps; i++)
		if (rmaps[i].pid == (pid_t)t->owner_pid && rmaps[i].memfd == t->memfd)
			break;
	if (i < nrmaps)
		return t->map_off <= rmaps[i].len && off <= rmaps[i].len - t->map_off &&
		       len <= rmaps[i].len - t->map_off - off ? rmaps[i].p : NULL;
	snprintf(path, sizeof(path), "/proc/%u/fd/%u", t->owner_pid, t->memfd);
	fd = real_open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) || nrmaps == 256)
		return NULL;
	p = real_mmap(NULL, st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	real_close(fd);
	if (p == MAP_FAILED)
		return NULL;
	rmaps[nrmaps].pid = t->owner_pid;
	rmaps[nrmaps].memfd = t->memfd;
	rmaps[nrmaps].p = p;
	rmaps[nrmaps].len = st.st_size;
	nrmaps++;
	return remote(t, off, len);
}

/* The checks before anything is sent; Return: 0 or -errno. */
static int op_check(struct ep *e, const struct rdmx_rma_op *op, struct token *t)
{
	bool atomic = op->opcode == RDMX_RMA_CMP_SWAP || op->opcode == RDMX_RMA_FETCH_ADD;
	uint32_t need;
	uint64_t end;

	if (op->flags || op->reserved || !op->opcode || op->opcode > RDMX_RMA_FETCH_ADD)
		return -EINVAL;
	if (op->imm && op->opcode != RDMX_RMA_WRITE_IMM)
		return -EINVAL;
	if (op->swap && op->opcode != RDMX_RMA_CMP_SWAP)
		return -EINVAL;
	if (op->compare_add && !atomic)
		return -EINVAL;
	if (op->token_len != sizeof(*t) || !op->token)
		return -EINVAL;
	memcpy(t, (void *)(uintptr_t)op->token, sizeof(*t));
	if (t->magic != TOKEN_MAGIC ||
	    (!fake_bug("token-nocrc") && t->crc != crc32(t, offsetof(struct token, crc))))
		return -EINVAL;
	if (t->sess_pid != (uint32_t)getpid() || t->sess_port != e->port)
		return -EINVAL;
	if (atomic && getenv("FAKE_NO_ATOMICS"))
		return -EOPNOTSUPP;
	if (atomic && (op->length != 8 || op->remote_offset % 8))
		return -EINVAL;
	if (!atomic && (op->length > RDMX_RMA_LEN_MAX ||
			(!op->length && op->opcode != RDMX_RMA_WRITE_IMM)))
		return -EINVAL;
	end = op->remote_offset + op->length;
	if (op->remote_offset > t->len || op->length > t->len - op->remote_offset ||
	    end < op->remote_offset) {
		if (!(fake_bug("bounds") && end == t->len + 1))
			return -ERANGE;
	}
	need = op->opcode == RDMX_RMA_READ ? RDMX_ACCESS_REMOTE_READ :
	       atomic ? RDMX_ACCESS_REMOTE_ATOMIC : RDMX_ACCESS_REMOTE_WRITE;
	if (!(t->access & need) && !fake_bug("rights"))
		return -EACCES;
	return 0;
}

/* Run a checked operation on the owner's memory; Return: 0 or -errno. */
static int op_run(int fd, struct ep *e, const struct rdmx_rma_op *op,
		  const struct token *t, uint64_t *value)
{
	char path[128], *mem;
	uint64_t *w, old, len = op->length;
	void *local = (void *)(uintptr_t)op->local_addr;

	reg_path(path, sizeof(path), t->key);
	if (access(path, F_OK) && !fake_bug("stale-ok"))
		return -EACCES;		/* the owner's HCA refuses the key */
	mem = remote(t, op->remote_offset, len);
	if (!mem)
		return -EIO;		/* the HCA refuses what is out of the MR */
	mem += t->map_off + op->remote_offset;
	switch (op->opcode) {
	case RDMX_RMA_READ:
		memcpy(local, mem, fake_bug("read-short") && len > 1 ? len - 1 : len);
		return 0;
	case RDMX_RMA_WRITE:
	case RDMX_RMA_WRITE_IMM:
		if (!(fake_bug("write-drop") && op->opcode == RDMX_RMA_WRITE &&
		      ++nwrites % 5 == 0))
			memcpy(mem, local, len);
		if (op->opcode == RDMX_RMA_WRITE)
			return 0;
		if (fake_bug("imm-late")) {
			e->held_imm = 1;
			e->held_val = op->imm;
			return 0;
		}
		return pkt_send(fd, PKT_IMM, &op->imm, 4);
	}
	w = (uint64_t *)mem;
	if (fake_bug("nonatomic")) {
		/*
		 * A window wide enough that two users at once always land
		 * in each other's (a yield alone, on a busy machine, could
		 * let one run through before the other started).
		 */
		old = *(volatile uint64_t *)w;
		usleep(200);
		if (op->opcode == RDMX_RMA_FETCH_ADD)
			*(volatile uint64_t *)w = old + op->compare_add;
		else if (old == op->compare_add)
			*(volatile uint64_t *)w = op->swap;
	} else if (op->opcode == RDMX_RMA_FETCH_ADD) {
		old = __atomic_fetch_add(w, op->compare_add, __ATOMIC_SEQ_CST);
	} else {
		old = op->compare_add;
		__atomic_compare_exchange_n(w, &old, op->swap, false, __ATOMIC_SEQ_CST,
					    __ATOMIC_SEQ_CST);
	}
	memcpy(local, &old, 8);
	*value = old;
	return 0;
}

static void ev_push(struct ep *e, const struct rdmx_rma_op *op, int st, uint64_t value)
{
	struct rdmx_event *ev;

	if (e->nev == MAX_EVENTS)
		abort();
	nevents++;
	if (fake_bug("event-lose") && nevents == 3)
		return;
	ev = &e->ev[(e->ev_head + e->nev++) % MAX_EVENTS];
	memset(ev, 0, sizeof(*ev));
	ev->type = RDMX_EVENT_RMA_DONE;
	ev->status = st;
	ev->user_data = op->user_data;
	ev->opcode = op->opcode;
	ev->value = value;
	if (fake_bug("event-dup") && nevents == 5)
		ev_push(e, op, st, value);
}

static int rma(int fd, struct ep *e, struct rdmx_rma *r)
{
	struct rdmx_rma_op *ops = (void *)(uintptr_t)r->ops;
	struct token t;
	unsigned int i;
	uint64_t value;
	int st;

	if (r->size < RDMX_RMA_SIZE_VER0 || (r->flags & ~RDMX_RMA_ASYNC) || !r->count ||
	    r->count > RDMX_RMA_BATCH_MAX || r->op_size != sizeof(*ops) || !ops)
		return errno = EINVAL, -1;
	if (!e->chan)
		return errno = ENOTCONN, -1;
	for (i = 0; i < r->count; i++) {
		st = op_check(e, &ops[i], &t);
		if (st) {
			ops[i].status = st;
			break;
		}
		value = 0;
		st = op_run(fd, e, &ops[i], &t, &value);
		if (r->flags & RDMX_RMA_ASYNC)
			ev_push(e, &ops[i], st, value);
		else
			ops[i].status = st;
	}
	if (!i)
		return errno = -ops[0].status, -1;
	r->count = i;
	return i;
}

static int events(struct ep *e, struct rdmx_events *x, int fd)
{
	struct rdmx_event *out = (void *)(uintptr_t)x->events;
	unsigned int i;

	if (x->size < RDMX_EVENTS_SIZE_VER0 || (x->flags & ~RDMX_EVENTS_NONBLOCK) ||
	    !x->count || x->count > RDMX_RMA_BATCH_MAX ||
	    x->event_size != sizeof(*out))
		return errno = EINVAL, -1;
	(void)fd;
	if (!e->nev)
		return errno = EAGAIN, -1;	/* nothing in flight */
	for (i = 0; i < x->count && e->nev; i++) {
		out[i] = e->ev[e->ev_head];
		e->ev_head = (e->ev_head + 1) % MAX_EVENTS;
		e->nev--;
	}
	x->count = i;
	return i;
}

/* -------------------------------------------------------------- ioctl */

static int ep_ioctl(int fd, struct ep *e, unsigned long req, void *arg)
{
	struct sockaddr_un sa;
	struct ucred cr;
	socklen_t len, cl = sizeof(cr);
	int nfd;

	switch (req) {
	case RDMX_IOC_GET_INFO: {
		struct rdmx_info *i = arg;

		memset(i, 0, sizeof(*i));
		i->size = sizeof(*i);
		i->abi_version = RDMX_ABI_VERSION;
		i->nr_ports = 1;
		i->features = RDMX_FEATURE_LIST_DEVICES | RDMX_FEATURE_MSG | RDMX_FEATURE_RMA;
		strcpy((char *)i->version, "fake");
		return 0;
	}
	case RDMX_IOC_EP_LISTEN:
	case RDMX_IOC_EP_CONNECT: {
		struct rdmx_ep_addr *a = arg;

		e->port = a->addr.port ? a->addr.port : RDMX_DEFAULT_PORT;
		sock_name(&sa, &len, e->port, a->service);
		if (req == RDMX_IOC_EP_LISTEN)
			return bind(fd, (struct sockaddr *)&sa, len) || listen(fd, 64) ? -1 : 0;
		if (connect(fd, (struct sockaddr *)&sa, len))
			return errno == ENOENT ? (errno = ECONNREFUSED, -1) : -1;
		e->chan = true;
		e->sess_pid = getpid();
		e->peer = a->addr;
		e->peer.port = e->port;
		return 0;
	}
	case RDMX_IOC_EP_ACCEPT: {
		struct rdmx_ep_accept *acc = arg;
		struct ep *n;

		nfd = accept4(fd, NULL, NULL,
			      acc->flags & RDMX_ACCEPT_CLOEXEC ? SOCK_CLOEXEC : 0);
		if (nfd < 0)
			return -1;
		n = ep_new(nfd);
		n->chan = true;
		n->port = e->port;
		if (!getsockopt(nfd, SOL_SOCKET, SO_PEERCRED, &cr, &cl))
			n->sess_pid = cr.pid;
		acc->fd = nfd;
		memset(&acc->peer, 0, sizeof(acc->peer));
		acc->peer.family = AF_INET;
		acc->peer.port = 40000;
		acc->peer.addr[0] = 127;
		acc->peer.addr[3] = 1;
		return nfd;
	}
	case RDMX_IOC_EP_SEND:
		return ep_send(fd, e, arg);
	case RDMX_IOC_EP_RECV:
		return ep_recv(fd, arg);
	case RDMX_IOC_EP_SHUTDOWN:
		return shutdown(fd, SHUT_WR) && errno != ENOTCONN ? -1 : 0;
	case RDMX_IOC_EP_INFO: {
		struct rdmx_ep_info *i = arg;

		memset(i, 0, sizeof(*i));
		i->size = sizeof(*i);
		i->state = e->chan ? RDMX_EP_CONNECTED : RDMX_EP_NEW;
		i->sess_state = RDMX_SESS_STATE_CONNECTED;
		i->peer = e->peer;
		i->local.family = AF_INET;
		i->local.port = 40000;
		if (!getenv("RDMX_ADDR") ||
		    inet_pton(AF_INET, getenv("RDMX_ADDR"), i->local.addr) != 1)
			i->local.addr[0] = 127, i->local.addr[3] = 1;
		return 0;
	}
	case RDMX_IOC_LIST_DEVICES: {
		struct rdmx_list_devices *ld = arg;
		struct rdmx_device_info *d = (void *)(uintptr_t)ld->devices;

		if (ld->count && d) {
			memset(d, 0, ld->entry_size);
			snprintf((char *)d->name, sizeof(d->name), "%s",
				 getenv("RDMX_RDMA_DEV") ? getenv("RDMX_RDMA_DEV") : "fake0");
			d->port = 1;
			d->port_state = RDMX_PORT_ACTIVE;
			d->atomic_cap = getenv("FAKE_NO_ATOMICS") ? RDMX_ATOMIC_NONE :
					RDMX_ATOMIC_HCA;
		}
		ld->count = 1;
		return 0;
	}
	case RDMX_IOC_MR_REG:
		return mr_reg(fd, e, arg);
	case RDMX_IOC_MR_DEREG:
		return mr_dereg(e, arg);
	case RDMX_IOC_RMA:
		return rma(fd, e, arg);
	case RDMX_IOC_EP_EVENTS:
		return events(e, arg, fd);
	}
	errno = ENOTTY;
	return -1;
}

int ioctl(int fd, unsigned long req, ...)
{
	struct ep *e;
	va_list ap;
	void *arg;

	fake_init();
	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	e = ep_of(fd);
	if (!e)
		return real_ioctl(fd, req, arg);
	return ep_ioctl(fd, e, req, arg);
}

/* EPOLLPRI while events wait; the sockets answer the rest. */
int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	nfds_t i;
	int pri = 0, ret;

	fake_init();
	for (i = 0; i < n; i++) {
		struct ep *e = ep_of(fds[i].fd);

		if (e && (fds[i].events & POLLPRI) && e->nev)
			pri++;
	}
	ret = real_poll(fds, n, pri ? 0 : timeout);
	if (ret < 0)
		return ret;
	for (i = 0; i < n; i++) {
		struct ep *e = ep_of(fds[i].fd);

		fds[i].revents &= ~POLLPRI;
		if (e && (fds[i].events & POLLPRI) && e->nev)
			fds[i].revents |= POLLPRI;
	}
	for (i = 0, ret = 0; i < n; i++)
		ret += !!fds[i].revents;
	return ret;
}

int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t len)
{
	(void)len;
	return poll(fds, n, timeout);
}
