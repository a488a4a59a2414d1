// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx-abuse: feed /dev/rdmx the ioctls a careless or hostile program
 * would, and check each gets the documented errno (Documentation/uapi.rst).
 *
 * Usage: rdmx-abuse [DEVNODE]
 * Prints "ok N - ..." / "not ok N - ..." lines and exits 1 on any failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/rdmx.h>

static int fd;
static int n_tests, n_failed;

static void report(int ok, const char *what, int got_errno)
{
	n_tests++;
	if (!ok)
		n_failed++;
	printf("%sok %d - %s", ok ? "" : "not ", n_tests, what);
	if (!ok)
		printf(" (got %s)", got_errno ? strerror(got_errno) : "success");
	printf("\n");
}

/* Run one ioctl and compare its outcome with the expected errno (0 = ok). */
static void expect(const char *what, unsigned long cmd, void *arg, int want)
{
	int ret = ioctl(fd, cmd, arg);
	int err = ret < 0 ? errno : 0;

	report(err == want, what, err);
}

static void info_cases(void)
{
	unsigned char buf[sizeof(struct rdmx_info) + 64];
	struct rdmx_info *info = (struct rdmx_info *)buf;

	memset(buf, 0, sizeof(buf));
	info->size = sizeof(*info);
	expect("GET_INFO, exact size", RDMX_IOC_GET_INFO, info, 0);
	report(info->abi_version == RDMX_ABI_VERSION &&
	       (info->features & RDMX_FEATURE_LIST_DEVICES) &&
	       info->size == sizeof(*info),
	       "GET_INFO reports ABI version, features and size", 0);

	memset(buf, 0, sizeof(buf));
	info->size = sizeof(*info);
	info->flags = 1;
	expect("GET_INFO, unknown flag -> EINVAL", RDMX_IOC_GET_INFO, info, EINVAL);

	memset(buf, 0, sizeof(buf));
	info->size = 0;
	expect("GET_INFO, size 0 -> EINVAL", RDMX_IOC_GET_INFO, info, EINVAL);

	info->size = RDMX_INFO_SIZE_VER0 - 1;
	expect("GET_INFO, short struct -> EINVAL", RDMX_IOC_GET_INFO, info, EINVAL);

	memset(buf, 0, sizeof(buf));
	info->size = sizeof(buf);
	expect("GET_INFO, longer struct with zero tail -> ok",
	       RDMX_IOC_GET_INFO, info, 0);
	report(info->size == sizeof(*info),
	       "GET_INFO writes back only what the kernel knows", 0);

	memset(buf, 0, sizeof(buf));
	info->size = sizeof(buf);
	buf[sizeof(buf) - 1] = 1;
	expect("GET_INFO, longer struct with non-zero tail -> E2BIG",
	       RDMX_IOC_GET_INFO, info, E2BIG);

	expect("GET_INFO, NULL argument -> EFAULT", RDMX_IOC_GET_INFO, NULL, EFAULT);
	expect("GET_INFO, kernel address -> EFAULT", RDMX_IOC_GET_INFO,
	       (void *)0xffffffff81000000UL, EFAULT);
}

/* A struct whose claimed size runs past the end of a mapping. */
static void edge_of_mapping_case(void)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned char *p = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct rdmx_info *info;

	if (p == MAP_FAILED) {
		report(0, "mmap for the edge-of-mapping case", errno);
		return;
	}
	munmap(p + page, page);
	info = (struct rdmx_info *)(p + page - RDMX_INFO_SIZE_VER0);
	memset(info, 0, RDMX_INFO_SIZE_VER0);
	info->size = RDMX_INFO_SIZE_VER0 + 8;
	expect("GET_INFO, size running past the mapping -> EFAULT",
	       RDMX_IOC_GET_INFO, info, EFAULT);
	munmap(p, page);
}

static void list_cases(void)
{
	struct rdmx_list_devices ld;
	struct rdmx_device_info one;

	memset(&ld, 0, sizeof(ld));
	ld.size = sizeof(ld);
	ld.entry_size = sizeof(struct rdmx_device_info);
	expect("LIST_DEVICES, count query", RDMX_IOC_LIST_DEVICES, &ld, 0);

	ld.count = 0;
	ld.flags = 0x100;
	expect("LIST_DEVICES, unknown flag -> EINVAL", RDMX_IOC_LIST_DEVICES,
	       &ld, EINVAL);

	ld.flags = 0;
	ld.entry_size = RDMX_DEVICE_INFO_SIZE_VER0 - 8;
	expect("LIST_DEVICES, short entries -> EINVAL", RDMX_IOC_LIST_DEVICES,
	       &ld, EINVAL);

	ld.entry_size = 1u << 20;
	ld.count = 1;
	ld.devices = (uintptr_t)&one;
	expect("LIST_DEVICES, absurd entry size -> EINVAL",
	       RDMX_IOC_LIST_DEVICES, &ld, EINVAL);

	ld.entry_size = sizeof(one);
	ld.count = 1;
	ld.devices = 0;
	expect("LIST_DEVICES, room but no array -> EINVAL",
	       RDMX_IOC_LIST_DEVICES, &ld, EINVAL);

	ld.count = 0xffffffff;
	ld.devices = 8;
	expect("LIST_DEVICES, bogus array pointer -> EFAULT",
	       RDMX_IOC_LIST_DEVICES, &ld, EFAULT);

	memset(&ld, 0, sizeof(ld));
	ld.size = 8;
	expect("LIST_DEVICES, short struct -> EINVAL", RDMX_IOC_LIST_DEVICES,
	       &ld, EINVAL);
}

static void unknown_cases(void)
{
	struct rdmx_info info;

	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	expect("unknown command number -> ENOTTY", _IO(RDMX_IOC_TYPE, 0x7f),
	       &info, ENOTTY);
	expect("size encoded in the number -> ENOTTY",
	       _IOWR(RDMX_IOC_TYPE, RDMX_CMD_GET_INFO, struct rdmx_info),
	       &info, ENOTTY);
	expect("another driver's type -> ENOTTY", _IO('T', 0x01), &info, ENOTTY);
}

static void ep_addr_init(struct rdmx_ep_addr *a, const char *service)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->addr.family = AF_INET;
	a->addr.port = 7999;
	memcpy(a->service, service, strlen(service));
}

/*
 * The message service's ioctls on an endpoint that is neither listening
 * nor connected, and the administrative ones.
 */
static void ep_cases(void)
{
	struct rdmx_listener_arg la;
	struct rdmx_sess_close sc;
	struct rdmx_ep_accept acc;
	struct rdmx_ep_info info;
	struct rdmx_msg_vec v;
	struct rdmx_ep_xfer x;
	struct rdmx_ep_addr a;

	ep_addr_init(&a, "svc");
	a.flags = 1;
	expect("EP_LISTEN, unknown flag -> EINVAL", RDMX_IOC_EP_LISTEN, &a, EINVAL);
	ep_addr_init(&a, "svc");
	a.timeout_ms = 5;
	expect("EP_LISTEN, a timeout -> EINVAL", RDMX_IOC_EP_LISTEN, &a, EINVAL);
	ep_addr_init(&a, "svc");
	a.addr.family = 12345;
	expect("EP_LISTEN, unknown family -> EINVAL", RDMX_IOC_EP_LISTEN, &a, EINVAL);
	ep_addr_init(&a, "svc");
	a.addr.addr[9] = 1;
	expect("EP_LISTEN, IPv4 with bytes past the address -> EINVAL",
	       RDMX_IOC_EP_LISTEN, &a, EINVAL);
	ep_addr_init(&a, "");
	expect("EP_LISTEN, empty service -> EINVAL", RDMX_IOC_EP_LISTEN, &a, EINVAL);
	ep_addr_init(&a, "a/b");
	expect("EP_LISTEN, '/' in the service -> EINVAL", RDMX_IOC_EP_LISTEN, &a,
	       EINVAL);
	ep_addr_init(&a, "svc");
	a.service[10] = 'x';
	expect("EP_LISTEN, service not NUL-padded -> EINVAL", RDMX_IOC_EP_LISTEN,
	       &a, EINVAL);
	memset(a.service, 'a', sizeof(a.service));
	expect("EP_LISTEN, service without a NUL -> EINVAL", RDMX_IOC_EP_LISTEN,
	       &a, EINVAL);
	ep_addr_init(&a, RDMX_SERVICE_ECHO);
	expect("EP_LISTEN, the built-in echo service -> EINVAL",
	       RDMX_IOC_EP_LISTEN, &a, EINVAL);
	ep_addr_init(&a, "svc");
	a.backlog = 100000;
	expect("EP_LISTEN, absurd backlog -> EINVAL", RDMX_IOC_EP_LISTEN, &a, EINVAL);
	ep_addr_init(&a, "svc");
	a.size = 20;
	expect("EP_LISTEN, short struct -> EINVAL", RDMX_IOC_EP_LISTEN, &a, EINVAL);

	ep_addr_init(&a, "svc");
	expect("EP_CONNECT, to the any-address -> EINVAL", RDMX_IOC_EP_CONNECT,
	       &a, EINVAL);
	a.addr.addr[0] = 198;
	a.addr.addr[1] = 18;
	a.addr.addr[3] = 99;
	a.backlog = 1;
	expect("EP_CONNECT, a backlog -> EINVAL", RDMX_IOC_EP_CONNECT, &a, EINVAL);
	a.backlog = 0;
	a.flags = 1u << 9;
	expect("EP_CONNECT, unknown flag -> EINVAL", RDMX_IOC_EP_CONNECT, &a, EINVAL);

	memset(&v, 0, sizeof(v));
	memset(&x, 0, sizeof(x));
	x.size = sizeof(x);
	x.vec_size = sizeof(v);
	x.count = 1;
	x.msgs = (unsigned long)&v;
	expect("EP_SEND, not connected -> ENOTCONN", RDMX_IOC_EP_SEND, &x, ENOTCONN);
	expect("EP_RECV, not connected -> ENOTCONN", RDMX_IOC_EP_RECV, &x, ENOTCONN);
	v.len = RDMX_MSG_MAX + 1;
	expect("EP_SEND, message over RDMX_MSG_MAX -> EMSGSIZE", RDMX_IOC_EP_SEND,
	       &x, EMSGSIZE);
	v.len = 0;
	v.flags = 1;
	expect("EP_SEND, unknown message flag -> EINVAL", RDMX_IOC_EP_SEND, &x,
	       EINVAL);
	v.flags = 0;
	v.imm = 1;
	expect("EP_SEND, immediate set on a message -> EINVAL", RDMX_IOC_EP_SEND, &x, EINVAL);
	v.imm = 0;
	x.count = 0;
	expect("EP_SEND, no messages -> EINVAL", RDMX_IOC_EP_SEND, &x, EINVAL);
	x.count = RDMX_XFER_MAX + 1;
	expect("EP_SEND, too many messages -> EINVAL", RDMX_IOC_EP_SEND, &x, EINVAL);
	x.count = 1;
	x.vec_size = 8;
	expect("EP_RECV, short message entries -> EINVAL", RDMX_IOC_EP_RECV, &x,
	       EINVAL);
	x.vec_size = sizeof(v);
	x.msgs = 8;
	expect("EP_SEND, bogus array pointer -> EFAULT", RDMX_IOC_EP_SEND, &x,
	       EFAULT);
	x.msgs = (unsigned long)&v;
	x.flags = 1u << 7;
	expect("EP_RECV, unknown flag -> EINVAL", RDMX_IOC_EP_RECV, &x, EINVAL);

	memset(&acc, 0, sizeof(acc));
	acc.size = sizeof(acc);
	expect("EP_ACCEPT, not listening -> EINVAL", RDMX_IOC_EP_ACCEPT, &acc,
	       EINVAL);
	acc.flags = 1u << 5;
	expect("EP_ACCEPT, unknown flag -> EINVAL", RDMX_IOC_EP_ACCEPT, &acc, EINVAL);
	acc.flags = 0;
	acc.reserved = 1;
	expect("EP_ACCEPT, reserved field set -> EINVAL", RDMX_IOC_EP_ACCEPT, &acc,
	       EINVAL);

	expect("EP_SHUTDOWN, an argument -> EINVAL", RDMX_IOC_EP_SHUTDOWN, &acc,
	       EINVAL);
	expect("EP_SHUTDOWN, not connected -> ENOTCONN", RDMX_IOC_EP_SHUTDOWN, NULL,
	       ENOTCONN);

	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	expect("EP_INFO of a new endpoint", RDMX_IOC_EP_INFO, &info, 0);
	report(info.state == RDMX_EP_NEW && !info.sess_id,
	       "EP_INFO: state new, no session", 0);
	info.flags = 1;
	expect("EP_INFO, unknown flag -> EINVAL", RDMX_IOC_EP_INFO, &info, EINVAL);

	memset(&la, 0, sizeof(la));
	la.size = sizeof(la);
	la.addr.family = AF_INET;
	la.addr.port = 7998;
	expect("LISTENER_DEL, none there -> ENOENT", RDMX_IOC_LISTENER_DEL, &la,
	       ENOENT);
	la.flags = 1;
	expect("LISTENER_ADD, unknown flag -> EINVAL", RDMX_IOC_LISTENER_ADD, &la,
	       EINVAL);

	memset(&sc, 0, sizeof(sc));
	sc.size = sizeof(sc);
	expect("SESS_CLOSE, session 0 -> EINVAL", RDMX_IOC_SESS_CLOSE, &sc, EINVAL);
	sc.sess_id = 0x7fffffff;
	expect("SESS_CLOSE, no such session -> ENOENT", RDMX_IOC_SESS_CLOSE, &sc,
	       ENOENT);
	sc.reserved = 1;
	expect("SESS_CLOSE, reserved field set -> EINVAL", RDMX_IOC_SESS_CLOSE, &sc,
	       EINVAL);
}

/*
 * One-sided access on an endpoint that is not connected: every malformed
 * argument is refused first (EINVAL), a well-formed one with ENOTCONN.
 */
static void rma_cases(void)
{
	static char buf[4096];
	static unsigned char token[RDMX_TOKEN_MAX];
	struct rdmx_mr_dereg d;
	struct rdmx_rma_op op;
	struct rdmx_events e;
	struct rdmx_event ev;
	struct rdmx_mr_reg r;
	struct rdmx_rma x;

	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	r.addr = (uintptr_t)buf;
	r.length = sizeof(buf);
	r.access = RDMX_ACCESS_REMOTE_READ;
	r.token = (uintptr_t)token;
	r.token_len = sizeof(token);
	expect("MR_REG, not connected -> ENOTCONN", RDMX_IOC_MR_REG, &r,
	       ENOTCONN);
	r.flags = 1;
	expect("MR_REG, unknown flag -> EINVAL", RDMX_IOC_MR_REG, &r, EINVAL);
	r.flags = 0;
	r.access = 0;
	expect("MR_REG, no rights -> EINVAL", RDMX_IOC_MR_REG, &r, EINVAL);
	r.access = 8;
	expect("MR_REG, unknown right -> EINVAL", RDMX_IOC_MR_REG, &r, EINVAL);
	r.access = RDMX_ACCESS_REMOTE_WRITE;
	r.length = 0;
	expect("MR_REG, zero length -> EINVAL", RDMX_IOC_MR_REG, &r, EINVAL);
	r.length = RDMX_MR_MAX + 1;
	expect("MR_REG, over RDMX_MR_MAX -> EINVAL", RDMX_IOC_MR_REG, &r,
	       EINVAL);
	r.length = sizeof(buf);
	r.reserved = 1;
	expect("MR_REG, reserved field set -> EINVAL", RDMX_IOC_MR_REG, &r,
	       EINVAL);
	r.reserved = 0;

	memset(&d, 0, sizeof(d));
	d.size = sizeof(d);
	d.mr_id = 1;
	expect("MR_DEREG, no such region -> ENOENT", RDMX_IOC_MR_DEREG, &d,
	       ENOENT);
	d.reserved = 1;
	expect("MR_DEREG, reserved field set -> EINVAL", RDMX_IOC_MR_DEREG, &d,
	       EINVAL);

	memset(&op, 0, sizeof(op));
	op.opcode = RDMX_RMA_READ;
	op.local_addr = (uintptr_t)buf;
	op.length = 8;
	op.token = (uintptr_t)token;
	op.token_len = 64;
	memset(&x, 0, sizeof(x));
	x.size = sizeof(x);
	x.count = 1;
	x.op_size = sizeof(op);
	x.ops = (uintptr_t)&op;
	expect("RMA, not connected -> ENOTCONN", RDMX_IOC_RMA, &x, ENOTCONN);
	x.flags = 2;
	expect("RMA, unknown flag -> EINVAL", RDMX_IOC_RMA, &x, EINVAL);
	x.flags = 0;
	x.count = 0;
	expect("RMA, no operations -> EINVAL", RDMX_IOC_RMA, &x, EINVAL);
	x.count = RDMX_RMA_BATCH_MAX + 1;
	expect("RMA, too many operations -> EINVAL", RDMX_IOC_RMA, &x, EINVAL);
	x.count = 1;
	x.op_size = RDMX_RMA_OP_SIZE_VER0 - 1;
	expect("RMA, op_size too small -> EINVAL", RDMX_IOC_RMA, &x, EINVAL);

	memset(&e, 0, sizeof(e));
	e.size = sizeof(e);
	e.flags = RDMX_EVENTS_NONBLOCK;
	e.count = 1;
	e.event_size = sizeof(ev);
	e.events = (uintptr_t)&ev;
	expect("EP_EVENTS, none -> EAGAIN", RDMX_IOC_EP_EVENTS, &e, EAGAIN);
	e.flags = 2;
	expect("EP_EVENTS, unknown flag -> EINVAL", RDMX_IOC_EP_EVENTS, &e,
	       EINVAL);
	e.flags = RDMX_EVENTS_NONBLOCK;
	e.count = 0;
	expect("EP_EVENTS, no room -> EINVAL", RDMX_IOC_EP_EVENTS, &e, EINVAL);
	e.count = 1;
	e.event_size = RDMX_EVENT_SIZE_VER0 - 1;
	expect("EP_EVENTS, event_size too small -> EINVAL", RDMX_IOC_EP_EVENTS,
	       &e, EINVAL);
}

/* RDMX_IOC_BENCH: every field is checked before the endpoint's state. */
static void bench_cases(void)
{
	static unsigned char token[64];
	unsigned char buf[sizeof(struct rdmx_bench) + 8];
	struct rdmx_bench *b = (struct rdmx_bench *)buf;
	struct rdmx_info info;

	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	report(ioctl(fd, RDMX_IOC_GET_INFO, &info) == 0 &&
	       (info.features & RDMX_FEATURE_BENCH),
	       "GET_INFO advertises RDMX_FEATURE_BENCH", errno);

#define BENCH_RESET() do {					\
		memset(buf, 0, sizeof(buf));			\
		b->size = sizeof(*b);				\
		b->op = RDMX_BENCH_WRITE;			\
		b->depth = 16;					\
		b->length = 4096;				\
		b->iters = 10;					\
		b->token = (uintptr_t)token;			\
		b->token_len = sizeof(token);			\
	} while (0)

	BENCH_RESET();
	expect("BENCH, not connected -> ENOTCONN", RDMX_IOC_BENCH, b,
	       ENOTCONN);
	b->ops = 99;
	expect("BENCH, output fields set on input: still ENOTCONN",
	       RDMX_IOC_BENCH, b, ENOTCONN);
	BENCH_RESET();
	b->flags = 2;
	expect("BENCH, unknown flag -> EINVAL", RDMX_IOC_BENCH, b, EINVAL);
	b->flags = RDMX_BENCH_PINGPONG;
	expect("BENCH, PINGPONG on a write -> EINVAL", RDMX_IOC_BENCH, b,
	       EINVAL);
	BENCH_RESET();
	b->op = 0;
	expect("BENCH, op 0 -> EINVAL", RDMX_IOC_BENCH, b, EINVAL);
	b->op = RDMX_BENCH_FETCH_ADD + 1;
	expect("BENCH, unknown op -> EINVAL", RDMX_IOC_BENCH, b, EINVAL);
	BENCH_RESET();
	b->depth = 0;
	expect("BENCH, depth 0 -> EINVAL", RDMX_IOC_BENCH, b, EINVAL);
	b->depth = RDMX_BENCH_DEPTH_MAX + 1;
	expect("BENCH, depth over the bound -> EINVAL", RDMX_IOC_BENCH, b,
	       EINVAL);
	BENCH_RESET();
	b->length = RDMX_BENCH_LEN_MAX + 1;
	expect("BENCH, length over the bound -> EINVAL", RDMX_IOC_BENCH, b,
	       EINVAL);
	b->op = RDMX_BENCH_CMP_SWAP;
	b->length = 4;
	expect("BENCH, 4-byte atomic -> EINVAL", RDMX_IOC_BENCH, b, EINVAL);
	BENCH_RESET();
	b->duration_ms = 1000;
	expect("BENCH, count and duration -> EINVAL", RDMX_IOC_BENCH, b,
	       EINVAL);
	b->iters = 0;
	b->duration_ms = RDMX_BENCH_DURATION_MAX_MS + 1;
	expect("BENCH, duration over the bound -> EINVAL", RDMX_IOC_BENCH, b,
	       EINVAL);
	b->duration_ms = 0;
	expect("BENCH, neither count nor duration -> EINVAL", RDMX_IOC_BENCH,
	       b, EINVAL);
	b->iters = RDMX_BENCH_ITERS_MAX + 1;
	expect("BENCH, count over the bound -> EINVAL", RDMX_IOC_BENCH, b,
	       EINVAL);
	BENCH_RESET();
	b->token_len = 0;
	expect("BENCH, one-sided without a token -> EINVAL", RDMX_IOC_BENCH,
	       b, EINVAL);
	b->token_len = RDMX_TOKEN_MAX + 1;
	expect("BENCH, token over RDMX_TOKEN_MAX -> EINVAL", RDMX_IOC_BENCH,
	       b, EINVAL);
	BENCH_RESET();
	b->op = RDMX_BENCH_SEND;
	b->depth = 1;
	expect("BENCH, send with a token -> EINVAL", RDMX_IOC_BENCH, b,
	       EINVAL);
	b->token = 0;
	b->token_len = 0;
	expect("BENCH, send, not connected -> ENOTCONN", RDMX_IOC_BENCH, b,
	       ENOTCONN);
	b->depth = 2;
	expect("BENCH, send with depth 2 -> EINVAL", RDMX_IOC_BENCH, b,
	       EINVAL);
	BENCH_RESET();
	b->reserved0 = 1;
	expect("BENCH, reserved0 set -> EINVAL", RDMX_IOC_BENCH, b, EINVAL);
	BENCH_RESET();
	b->reserved[3] = 1;
	expect("BENCH, reserved[3] set -> EINVAL", RDMX_IOC_BENCH, b, EINVAL);
	BENCH_RESET();
	b->size = RDMX_BENCH_SIZE_VER0 - 1;
	expect("BENCH, short size -> EINVAL", RDMX_IOC_BENCH, b, EINVAL);
	b->size = sizeof(buf);
	buf[sizeof(buf) - 1] = 1;
	expect("BENCH, longer struct with a non-zero tail -> E2BIG",
	       RDMX_IOC_BENCH, b, E2BIG);
	buf[sizeof(buf) - 1] = 0;
	expect("BENCH, longer struct with a zero tail: checked, ENOTCONN",
	       RDMX_IOC_BENCH, b, ENOTCONN);
	expect("BENCH, bad pointer -> EFAULT", RDMX_IOC_BENCH, (void *)8,
	       EFAULT);
#undef BENCH_RESET
}

int main(int argc, char **argv)
{
	const char *node = argc > 1 ? argv[1] : "/dev/rdmx";

	fd = open(node, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "rdmx-abuse: %s: %s\n", node, strerror(errno));
		return 1;
	}
	info_cases();
	edge_of_mapping_case();
	list_cases();
	unknown_cases();
	ep_cases();
	rma_cases();
	bench_cases();
	close(fd);
	printf("%d passed, %d failed\n", n_tests - n_failed, n_failed);
	return n_failed ? 1 : 0;
}
