// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the message service through its kernel API, connected to this
 * host over the first RDMA device that has an IPv4 address. Skipped, with
 * the reason, where there is none.
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/inetdevice.h>
#include <linux/netdevice.h>
#include <linux/uio.h>
#include <linux/vmalloc.h>
#include <rdma/ib_verbs.h>

#include "core/compat.h"
#include "core/rdmx.h"
#include "msg/rdmx_api.h"
#include "msg/sess.h"

#define RDMX_KUNIT_PORT		7499
#define RDMX_KUNIT_SERVICE	"kunit"

struct rdmx_sess_fixture {
	struct rdmx_ep *lep;	/* listening */
	struct rdmx_ep *cep;	/* the connecting end */
	struct rdmx_ep *sep;	/* the accepted end */
	u8 *tx;
	u8 *rx;
	void *priv;
};

/* An IPv4 address of a netdev that an RDMA device runs on, or 0. */
static __be32 rdmx_kunit_rdma_addr(char *ibname, size_t len)
{
	struct net_device *ndev;
	__be32 addr = 0;

	rtnl_lock();
	for_each_netdev(&init_net, ndev) {
		struct ib_device *ibdev;
		struct in_device *in;

		ibdev = ib_device_get_by_netdev(ndev, RDMA_DRIVER_UNKNOWN);
		if (!ibdev)
			continue;
		in = __in_dev_get_rtnl(ndev);
		if (in && in->ifa_list) {
			addr = rtnl_dereference(in->ifa_list)->ifa_local;
			strscpy(ibname, ibdev->name, len);
		}
		ib_device_put(ibdev);
		if (addr)
			break;
	}
	rtnl_unlock();
	return addr;
}

static int rdmx_sess_test_init(struct kunit *test)
{
	struct rdmx_sess_fixture *f;
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_port = htons(RDMX_KUNIT_PORT),
	};
	char ibname[IB_DEVICE_NAME_MAX] = "";
	int ret;

	sin.sin_addr.s_addr = rdmx_kunit_rdma_addr(ibname, sizeof(ibname));
	if (!sin.sin_addr.s_addr)
		kunit_skip(test, "no RDMA device with an IPv4 address");
	kunit_info(test, "connecting to %pI4 over %s\n", &sin.sin_addr, ibname);

	f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f);
	test->priv = f;
	f->tx = vmalloc(RDMX_MSG_MAX);
	f->rx = vmalloc(RDMX_MSG_MAX);
	KUNIT_ASSERT_NOT_NULL(test, f->tx);
	KUNIT_ASSERT_NOT_NULL(test, f->rx);

	f->lep = rdmx_ep_create(NULL, NULL);
	KUNIT_ASSERT_NOT_NULL(test, f->lep);
	ret = rdmx_ep_listen(f->lep, (struct sockaddr *)&sin,
			     RDMX_KUNIT_SERVICE, 0);
	KUNIT_ASSERT_EQ(test, ret, 0);

	f->cep = rdmx_ep_create(NULL, NULL);
	KUNIT_ASSERT_NOT_NULL(test, f->cep);
	ret = rdmx_ep_connect(f->cep, (struct sockaddr *)&sin,
			      RDMX_KUNIT_SERVICE, 20000);
	KUNIT_ASSERT_EQ_MSG(test, ret, 0, "connect to %pI4:%u",
			    &sin.sin_addr, RDMX_KUNIT_PORT);

	f->sep = rdmx_ep_accept(f->lep, true);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(f->sep), "accept: %pe", f->sep);
	return 0;
}

static void rdmx_sess_test_exit(struct kunit *test)
{
	struct rdmx_sess_fixture *f = test->priv;

	if (!f)
		return;
	if (f->sep && !IS_ERR(f->sep))
		rdmx_ep_release(f->sep);
	if (f->cep)
		rdmx_ep_release(f->cep);
	if (f->lep)
		rdmx_ep_release(f->lep);
	vfree(f->tx);
	vfree(f->rx);
}

static int rdmx_kunit_send(struct rdmx_ep *ep, const void *buf, size_t len)
{
	struct kvec kv = { .iov_base = (void *)buf, .iov_len = len };
	struct iov_iter it;

	iov_iter_kvec(&it, ITER_SOURCE, &kv, 1, len);
	return rdmx_ep_send(ep, &it, false);
}

static ssize_t rdmx_kunit_recv(struct rdmx_ep *ep, void *buf, size_t room)
{
	struct kvec kv = { .iov_base = buf, .iov_len = room };
	struct iov_iter it;

	iov_iter_kvec(&it, ITER_DEST, &kv, 1, room);
	return rdmx_ep_recv(ep, &it, false);
}

static const size_t rdmx_kunit_sizes[] = {
	0, 1, 63, 4096, 32 * 1024 - 257, 32 * 1024 - 256, 32 * 1024 - 255,
	65536, 1 << 20, RDMX_MSG_MAX - 1, RDMX_MSG_MAX,
};

/* Each size there and back, byte for byte. */
static void rdmx_sess_sizes_test(struct kunit *test)
{
	struct rdmx_sess_fixture *f = test->priv;
	unsigned int i;
	size_t j;

	for (i = 0; i < ARRAY_SIZE(rdmx_kunit_sizes); i++) {
		size_t len = rdmx_kunit_sizes[i];
		ssize_t got;

		for (j = 0; j < len; j++)
			f->tx[j] = (u8)(j * 31 + i);
		KUNIT_ASSERT_EQ_MSG(test, rdmx_kunit_send(f->cep, f->tx, len), 0,
				    "send %zu bytes", len);
		memset(f->rx, 0xa5, len + 1 > RDMX_MSG_MAX ? len : len + 1);
		got = rdmx_kunit_recv(f->sep, f->rx, RDMX_MSG_MAX);
		KUNIT_ASSERT_EQ_MSG(test, got, (ssize_t)len, "receive %zu bytes", len);
		KUNIT_EXPECT_EQ_MSG(test, memcmp(f->tx, f->rx, len), 0,
				    "%zu bytes arrived changed", len);
		/* And back: the accepted end sends too. */
		KUNIT_ASSERT_EQ(test, rdmx_kunit_send(f->sep, f->rx, len), 0);
		memset(f->tx, 0, len);
		got = rdmx_kunit_recv(f->cep, f->tx, RDMX_MSG_MAX);
		KUNIT_ASSERT_EQ(test, got, (ssize_t)len);
		KUNIT_EXPECT_EQ(test, memcmp(f->tx, f->rx, len), 0);
	}
}

/* A message larger than the receiver's buffer stays queued. */
static void rdmx_sess_emsgsize_test(struct kunit *test)
{
	struct rdmx_sess_fixture *f = test->priv;

	memset(f->tx, 7, 100);
	KUNIT_ASSERT_EQ(test, rdmx_kunit_send(f->cep, f->tx, 100), 0);
	KUNIT_EXPECT_EQ(test, rdmx_kunit_recv(f->sep, f->rx, 99),
			(ssize_t)-EMSGSIZE);
	KUNIT_EXPECT_EQ(test, rdmx_kunit_recv(f->sep, f->rx, 100), (ssize_t)100);
	KUNIT_EXPECT_EQ(test, rdmx_kunit_send(f->cep, f->tx, RDMX_MSG_MAX + 1),
			-EMSGSIZE);
}

/*
 * Far more messages than the peer has receive buffers, sent before any
 * is read: credits run out and come back as the receiver reposts, and
 * every message arrives, in order.
 */
static void rdmx_sess_credits_test(struct kunit *test)
{
	struct rdmx_sess_fixture *f = test->priv;
	const u32 n = 1000;
	u32 i, v;

	for (i = 0; i < n; i++)
		KUNIT_ASSERT_EQ_MSG(test, rdmx_kunit_send(f->cep, &i, sizeof(i)), 0,
				    "send %u", i);
	for (i = 0; i < n; i++) {
		KUNIT_ASSERT_EQ(test, rdmx_kunit_recv(f->sep, &v, sizeof(v)),
				(ssize_t)sizeof(v));
		KUNIT_ASSERT_EQ_MSG(test, v, i, "message %u out of order", i);
	}
}

/* SHUTDOWN: the peer reads what was sent, then the end of the stream. */
static void rdmx_sess_shutdown_test(struct kunit *test)
{
	struct rdmx_sess_fixture *f = test->priv;

	KUNIT_ASSERT_EQ(test, rdmx_kunit_send(f->cep, "x", 1), 0);
	KUNIT_ASSERT_EQ(test, rdmx_ep_shutdown(f->cep), 0);
	KUNIT_EXPECT_EQ(test, rdmx_kunit_send(f->cep, "y", 1), -EPIPE);
	KUNIT_EXPECT_EQ(test, rdmx_kunit_recv(f->sep, f->rx, 16), (ssize_t)1);
	KUNIT_EXPECT_EQ(test, rdmx_kunit_recv(f->sep, f->rx, 16),
			(ssize_t)-ENODATA);
	/* The other direction still works (a half close). */
	KUNIT_EXPECT_EQ(test, rdmx_kunit_send(f->sep, "z", 1), 0);
	KUNIT_EXPECT_EQ(test, rdmx_kunit_recv(f->cep, f->rx, 16), (ssize_t)1);
}

/* Nobody listens on the service: refused, not timed out. */
static void rdmx_sess_no_service_test(struct kunit *test)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_port = htons(RDMX_KUNIT_PORT),
	};
	char ibname[IB_DEVICE_NAME_MAX];
	struct rdmx_ep *ep;

	sin.sin_addr.s_addr = rdmx_kunit_rdma_addr(ibname, sizeof(ibname));
	ep = rdmx_ep_create(NULL, NULL);
	KUNIT_ASSERT_NOT_NULL(test, ep);
	KUNIT_EXPECT_EQ(test, rdmx_ep_connect(ep, (struct sockaddr *)&sin,
					      "nobody-here", 20000),
			-ECONNREFUSED);
	KUNIT_EXPECT_EQ(test, rdmx_ep_connect(ep, (struct sockaddr *)&sin,
					      "bad/name", 20000), -EINVAL);
	rdmx_ep_release(ep);
}

static struct kunit_case rdmx_sess_cases[] = {
	KUNIT_CASE_SLOW(rdmx_sess_sizes_test),
	KUNIT_CASE(rdmx_sess_emsgsize_test),
	KUNIT_CASE_SLOW(rdmx_sess_credits_test),
	KUNIT_CASE(rdmx_sess_shutdown_test),
	KUNIT_CASE(rdmx_sess_no_service_test),
	{}
};

static struct kunit_suite rdmx_sess_suite = {
	.name = "rdmx_sess",
	.init = rdmx_sess_test_init,
	.exit = rdmx_sess_test_exit,
	.test_cases = rdmx_sess_cases,
};

kunit_test_suites(&rdmx_sess_suite);

/* ---- rdmx_listener: one rdma_cm id per port ---- */

#define RDMX_KUNIT_LPORT	7498

/* Listen for @service on @sa; Return: the endpoint, or an ERR_PTR. */
static struct rdmx_ep *rdmx_kunit_listen(struct kunit *test, const void *sa,
					 const char *service)
{
	struct rdmx_ep *ep = rdmx_ep_create(NULL, NULL);
	int ret;

	KUNIT_ASSERT_NOT_NULL(test, ep);
	ret = rdmx_ep_listen(ep, sa, service, 0);
	if (ret) {
		rdmx_ep_release(ep);
		return ERR_PTR(ret);
	}
	return ep;
}

/* A listen expected to fail: its error, 0 (the endpoint released) if not. */
static int rdmx_kunit_listen_err(struct kunit *test, const void *sa,
				 const char *service)
{
	struct rdmx_ep *ep = rdmx_kunit_listen(test, sa, service);

	if (IS_ERR(ep))
		return PTR_ERR(ep);
	rdmx_ep_release(ep);
	return 0;
}

/* Release an endpoint rdmx_kunit_listen() made, if it made one. */
static void rdmx_kunit_unlisten(struct rdmx_ep *ep)
{
	if (!IS_ERR(ep))
		rdmx_ep_release(ep);
}

/*
 * A port is bound for its first listener's address; a later one joins
 * only under that family's any-address, else gets -EADDRINUSE, and the
 * port stays bound as it was until its last listener goes.
 */
static void rdmx_listener_port_test(struct kunit *test)
{
	struct sockaddr_in any4 = {
		.sin_family = AF_INET,
		.sin_port = htons(RDMX_KUNIT_LPORT),
	};
	struct sockaddr_in6 any6 = {
		.sin6_family = AF_INET6,
		.sin6_port = htons(RDMX_KUNIT_LPORT),
	};
	struct sockaddr_in one4 = any4, lo4 = any4, far4 = any4;
	char ibname[IB_DEVICE_NAME_MAX];
	struct rdmx_ep *a, *b, *c;

	one4.sin_addr.s_addr = rdmx_kunit_rdma_addr(ibname, sizeof(ibname));
	if (!one4.sin_addr.s_addr)
		kunit_skip(test, "no RDMA device with an IPv4 address");
	lo4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	far4.sin_addr.s_addr = htonl(0xc6336401);	/* 198.51.100.1 */

	/* A specific address first: no other address, of either family. */
	a = rdmx_kunit_listen(test, &one4, "l1");
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(a), "%pe", a);
	KUNIT_EXPECT_EQ(test, rdmx_kunit_listen_err(test, &lo4, "l2"),
			-EADDRINUSE);
	KUNIT_EXPECT_EQ(test, rdmx_kunit_listen_err(test, &any4, "l2"),
			-EADDRINUSE);
	KUNIT_EXPECT_EQ(test, rdmx_kunit_listen_err(test, &any6, "l2"),
			-EADDRINUSE);
	b = rdmx_kunit_listen(test, &one4, "l2");	/* the same: shared */
	KUNIT_EXPECT_FALSE_MSG(test, IS_ERR(b), "%pe", b);
	rdmx_kunit_unlisten(b);
	rdmx_ep_release(a);

	/* The any-address first: its family's addresses join it. */
	a = rdmx_kunit_listen(test, &any4, "l1");
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(a), "%pe", a);
	b = rdmx_kunit_listen(test, &one4, "l2");
	KUNIT_EXPECT_FALSE_MSG(test, IS_ERR(b), "%pe", b);
	c = rdmx_kunit_listen(test, &lo4, "l3");
	KUNIT_EXPECT_FALSE_MSG(test, IS_ERR(c), "%pe", c);
	KUNIT_EXPECT_EQ(test, rdmx_kunit_listen_err(test, &far4, "l4"),
			-EADDRNOTAVAIL);
	KUNIT_EXPECT_EQ(test, rdmx_kunit_listen_err(test, &any6, "l4"),
			-EADDRINUSE);
	/* The first goes; the port stays the any-address's. */
	rdmx_ep_release(a);
	KUNIT_EXPECT_EQ(test, rdmx_kunit_listen_err(test, &any6, "l4"),
			-EADDRINUSE);
	a = rdmx_kunit_listen(test, &any4, "l1");
	KUNIT_EXPECT_FALSE_MSG(test, IS_ERR(a), "%pe", a);
	rdmx_kunit_unlisten(a);
	rdmx_kunit_unlisten(c);
	rdmx_kunit_unlisten(b);

	/* Free again: the other family may have it. */
	a = rdmx_kunit_listen(test, &any6, "l1");
	if (IS_ERR(a) && PTR_ERR(a) == -EAFNOSUPPORT)
		kunit_skip(test, "no IPv6");
	KUNIT_EXPECT_FALSE_MSG(test, IS_ERR(a), "%pe", a);
	rdmx_kunit_unlisten(a);
}

static struct kunit_case rdmx_listener_cases[] = {
	KUNIT_CASE(rdmx_listener_port_test),
	{}
};

static struct kunit_suite rdmx_listener_suite = {
	.name = "rdmx_listener",
	.test_cases = rdmx_listener_cases,
};

kunit_test_suites(&rdmx_listener_suite);

/* ---- rdmx_rma: one-sided access through the kernel API ---- */

#define RDMX_KUNIT_REGION	(3 << 20)

struct rdmx_rma_fixture {
	u8 *mem;		/* the accepted end's region, and 5 bytes more */
	u8 *token;
	u32 token_len;
	u32 id;
};

static int rdmx_rma_test_init(struct kunit *test)
{
	struct rdmx_sess_fixture *f;
	struct rdmx_rma_fixture *r;
	int ret;

	ret = rdmx_sess_test_init(test);
	if (ret)
		return ret;
	f = test->priv;
	r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	r->mem = vzalloc(RDMX_KUNIT_REGION + 5);
	r->token = kunit_kzalloc(test, RDMX_TOKEN_MAX, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r->mem);
	KUNIT_ASSERT_NOT_NULL(test, r->token);
	/* Unaligned, and across two chunks on rxe (2 MiB per FRWR). */
	r->token_len = RDMX_TOKEN_MAX;
	ret = rdmx_ep_mr_reg(f->sep, r->mem + 5, RDMX_KUNIT_REGION,
			     RDMX_ACCESS_REMOTE_READ | RDMX_ACCESS_REMOTE_WRITE |
			     RDMX_ACCESS_REMOTE_ATOMIC, r->token,
			     &r->token_len, &r->id);
	if (ret == -EOPNOTSUPP)
		ret = rdmx_ep_mr_reg(f->sep, r->mem + 5, RDMX_KUNIT_REGION,
				     RDMX_ACCESS_REMOTE_READ |
				     RDMX_ACCESS_REMOTE_WRITE, r->token,
				     &r->token_len, &r->id);
	KUNIT_ASSERT_EQ_MSG(test, ret, 0, "register %u bytes",
			    RDMX_KUNIT_REGION);
	test->priv = f;
	f->priv = r;
	return 0;
}

/*
 * Set all of the owner's memory to @v, a page at a time: sparse flags a
 * single memset() of megabytes as a likely mistake.
 */
static void rdmx_kunit_fill(struct rdmx_rma_fixture *r, u8 v)
{
	size_t off, len = RDMX_KUNIT_REGION + 5;

	for (off = 0; off < len; off += PAGE_SIZE)
		memset(r->mem + off, v, min_t(size_t, PAGE_SIZE, len - off));
}

static void rdmx_rma_test_exit(struct kunit *test)
{
	struct rdmx_sess_fixture *f = test->priv;
	struct rdmx_rma_fixture *r = f ? f->priv : NULL;

	rdmx_sess_test_exit(test);
	if (r)
		vfree(r->mem);
}

static int rdmx_kunit_rma1(struct rdmx_ep *ep, struct rdmx_rma_fixture *r,
			   u32 opcode, void *local, u64 off, u64 len)
{
	struct rdmx_kop op = {
		.opcode = opcode,
		.local = local,
		.token = r->token,
		.token_len = r->token_len,
		.remote_offset = off,
		.length = len,
	};
	int ret = rdmx_ep_rma(ep, &op, 1);

	return ret < 0 ? ret : op.status;
}

/*
 * WRITE then READ back, at sizes and offsets that cross the chunk
 * boundary and start unaligned; what lands is checked in the owner's
 * memory directly, and nothing around it changes. The owner's memory is
 * looked at only once the READ completed: on iWARP a WRITE completes
 * when sent, and only a later READ on the same endpoint shows that the
 * peer placed it.
 */
static void rdmx_rma_rw_test(struct kunit *test)
{
	static const struct { u64 off, len; } cases[] = {
		{ 0, 1 }, { 3, 7 }, { 4093, 4099 }, { (2 << 20) - 5 - 100, 300 },
		{ 1, (2 << 20) + 12345 }, { 0, RDMX_KUNIT_REGION },
		/* Small, across the owner's page boundary at 4091 (siw). */
		{ 4081, 20 }, { 4090, 2 }, { 4075, 32 }, { 4061, 64 },
		{ 8187 - 16, 33 },
	};
	struct rdmx_sess_fixture *f = test->priv;
	struct rdmx_rma_fixture *r = f->priv;
	unsigned int i;
	u64 j;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		u64 off = cases[i].off, len = cases[i].len;

		rdmx_kunit_fill(r, 0x5a);
		for (j = 0; j < len; j++)
			f->tx[j] = (u8)(j * 13 + i + 1);
		KUNIT_ASSERT_EQ_MSG(test, rdmx_kunit_rma1(f->cep, r,
							  RDMX_RMA_WRITE,
							  f->tx + 1, off, len),
				    0, "write %llu at %llu", len, off);
		memset(f->rx, 0, len + 2);
		KUNIT_ASSERT_EQ_MSG(test, rdmx_kunit_rma1(f->cep, r,
							  RDMX_RMA_READ,
							  f->rx + 1, off, len),
				    0, "read %llu at %llu", len, off);
		KUNIT_EXPECT_EQ_MSG(test, memcmp(r->mem + 5 + off, f->tx + 1,
						 len), 0,
				    "write %llu at %llu landed changed", len,
				    off);
		KUNIT_EXPECT_EQ(test, r->mem[4 + off], 0x5a);
		if (5 + off + len < RDMX_KUNIT_REGION + 5)
			KUNIT_EXPECT_EQ(test, r->mem[5 + off + len], 0x5a);
		KUNIT_EXPECT_EQ_MSG(test, memcmp(f->rx + 1, f->tx + 1, len), 0,
				    "read %llu at %llu came back changed", len,
				    off);
		KUNIT_EXPECT_EQ(test, f->rx[len + 1], 0);
	}
}

/* Both ends agreed on the message service and one-sided access. */
static void rdmx_rma_features_test(struct kunit *test)
{
	struct rdmx_sess_fixture *f = test->priv;
	u32 want = RDMX_PROTO_F_MSG | RDMX_PROTO_F_RMA;

	KUNIT_EXPECT_EQ(test, READ_ONCE(f->cep->sess->features), want);
	KUNIT_EXPECT_EQ(test, READ_ONCE(f->sep->sess->features), want);
}

/* Out of bounds, a bad token, rights: refused before anything is posted. */
static void rdmx_rma_checks_test(struct kunit *test)
{
	struct rdmx_sess_fixture *f = test->priv;
	struct rdmx_rma_fixture *r = f->priv;
	u8 save;

	KUNIT_EXPECT_EQ(test, rdmx_kunit_rma1(f->cep, r, RDMX_RMA_WRITE, f->tx,
					      RDMX_KUNIT_REGION - 1, 2),
			-ERANGE);
	KUNIT_EXPECT_EQ(test, rdmx_kunit_rma1(f->cep, r, RDMX_RMA_READ, f->rx,
					      U64_MAX, 2), -ERANGE);
	KUNIT_EXPECT_EQ(test, rdmx_kunit_rma1(f->cep, r, 99, f->rx, 0, 2),
			-EINVAL);
	save = r->token[0];
	r->token[0] ^= 1;
	KUNIT_EXPECT_EQ(test, rdmx_kunit_rma1(f->cep, r, RDMX_RMA_READ, f->rx,
					      0, 2), -EINVAL);
	r->token[0] = save;
	r->token_len--;
	KUNIT_EXPECT_EQ(test, rdmx_kunit_rma1(f->cep, r, RDMX_RMA_READ, f->rx,
					      0, 2), -EINVAL);
	r->token_len++;
	/* Still good after all that. */
	KUNIT_EXPECT_EQ(test, rdmx_kunit_rma1(f->cep, r, RDMX_RMA_READ, f->rx,
					      0, 2), 0);
}

/* Fetch-and-add and compare-and-swap, where the device has atomics. */
static void rdmx_rma_atomic_test(struct kunit *test)
{
	struct rdmx_sess_fixture *f = test->priv;
	struct rdmx_rma_fixture *r = f->priv;
	struct rdmx_kop op = {
		.token = r->token,
		.token_len = r->token_len,
		.length = 8,
	};
	u64 *word = kunit_kzalloc(test, sizeof(u64), GFP_KERNEL);
	u64 off = 3;	/* region byte 3 is memory byte 8: aligned */
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, word);
	op.local = word;
	op.opcode = RDMX_RMA_FETCH_ADD;
	op.remote_offset = off;
	op.compare_add = 1;
	memset(r->mem, 0, 16);
	if (rdmx_ep_rma(f->cep, &op, 1) == -EOPNOTSUPP ||
	    op.status == -EOPNOTSUPP || op.status == -EACCES)
		kunit_skip(test, "the device has no atomics (%d)", op.status);
	KUNIT_ASSERT_EQ(test, op.status, 0);
	for (i = 1; i < 100; i++) {
		KUNIT_ASSERT_EQ(test, rdmx_ep_rma(f->cep, &op, 1), 1);
		KUNIT_ASSERT_EQ(test, op.status, 0);
		KUNIT_EXPECT_EQ(test, op.result, (u64)i);
	}
	KUNIT_EXPECT_EQ(test, *(u64 *)(r->mem + 8), 100ULL);
	op.opcode = RDMX_RMA_CMP_SWAP;
	op.compare_add = 100;
	op.swap = 7;
	KUNIT_ASSERT_EQ(test, rdmx_ep_rma(f->cep, &op, 1), 1);
	KUNIT_EXPECT_EQ(test, op.result, 100ULL);
	KUNIT_EXPECT_EQ(test, *(u64 *)(r->mem + 8), 7ULL);
	KUNIT_ASSERT_EQ(test, rdmx_ep_rma(f->cep, &op, 1), 1);
	KUNIT_EXPECT_EQ(test, op.result, 7ULL);
	KUNIT_EXPECT_EQ(test, *(u64 *)(r->mem + 8), 7ULL);
	/* Misaligned: refused. */
	op.remote_offset = 4;
	KUNIT_EXPECT_EQ(test, rdmx_ep_rma(f->cep, &op, 1), -EINVAL);
}

/* WRITE_IMM: when the immediate is received, the data is in place. */
static void rdmx_rma_write_imm_test(struct kunit *test)
{
	struct rdmx_sess_fixture *f = test->priv;
	struct rdmx_rma_fixture *r = f->priv;
	struct rdmx_kop op = {
		.opcode = RDMX_RMA_WRITE_IMM,
		.token = r->token,
		.token_len = r->token_len,
		.length = 65536,
		.local = f->tx,
	};
	struct kvec kv = { .iov_base = f->rx, .iov_len = 16 };
	struct rdmx_sess *sess = f->sep->sess;
	size_t q0, q;
	struct iov_iter it;
	unsigned int i;
	bool imm;
	u32 v;

	spin_lock_bh(&sess->lock);
	q0 = sess->rx_queued;
	spin_unlock_bh(&sess->lock);
	for (i = 0; i < 20; i++) {
		memset(f->tx, i + 1, 65536);
		op.imm = 0xabc000 + i;
		op.remote_offset = i * 4096;
		KUNIT_ASSERT_EQ(test, rdmx_ep_rma(f->cep, &op, 1), 1);
		KUNIT_ASSERT_EQ(test, op.status, 0);
		KUNIT_ASSERT_EQ(test, rdmx_kunit_send(f->cep, &i, sizeof(i)), 0);
	}
	/*
	 * Queued immediates count against the receive budget (a peer must
	 * not queue them unbounded), and reading gives all of it back.
	 */
	for (i = 0; i < 200 && READ_ONCE(f->sep->rxq_len) < 40; i++)
		msleep(50);
	KUNIT_ASSERT_EQ(test, READ_ONCE(f->sep->rxq_len), 40U);
	spin_lock_bh(&sess->lock);
	q = sess->rx_queued;
	spin_unlock_bh(&sess->lock);
	KUNIT_EXPECT_EQ(test, q - q0,
			20 * (rdmx_rxseg_cost(sizeof(u32)) +
			      rdmx_rxseg_cost(sizeof(struct rdmx_imm))));
	for (i = 0; i < 20; i++) {
		iov_iter_kvec(&it, ITER_DEST, &kv, 1, 16);
		KUNIT_ASSERT_EQ(test, rdmx_ep_recvmsg(f->sep, &it, false, &imm,
						      &v), 0);
		KUNIT_ASSERT_TRUE(test, imm);
		KUNIT_EXPECT_EQ(test, v, 0xabc000 + i);
		/* Later writes overlap it, so only its first 4 KiB stay. */
		KUNIT_EXPECT_EQ(test, r->mem[5 + i * 4096], (u8)(i + 1));
		iov_iter_kvec(&it, ITER_DEST, &kv, 1, 16);
		KUNIT_ASSERT_EQ(test, rdmx_ep_recvmsg(f->sep, &it, false, &imm,
						      &v), (ssize_t)4);
		KUNIT_EXPECT_FALSE(test, imm);
	}
	spin_lock_bh(&sess->lock);
	q = sess->rx_queued;
	spin_unlock_bh(&sess->lock);
	KUNIT_EXPECT_EQ(test, q, q0);
}

/* After a failed one-sided operation, the session carries messages again. */
static void rdmx_kunit_still_talks(struct kunit *test,
				   struct rdmx_sess_fixture *f)
{
	u32 v = 42;

	KUNIT_ASSERT_EQ(test, rdmx_kunit_send(f->cep, &v, sizeof(v)), 0);
	v = 0;
	KUNIT_EXPECT_EQ(test, rdmx_kunit_recv(f->sep, &v, sizeof(v)),
			(ssize_t)sizeof(v));
	KUNIT_EXPECT_EQ(test, v, 42U);
}

/*
 * A stale token (its region deregistered) fails at the peer's device; the
 * session recovers and messages keep flowing, none lost.
 */
static void rdmx_rma_stale_test(struct kunit *test)
{
	struct rdmx_sess_fixture *f = test->priv;
	struct rdmx_rma_fixture *r = f->priv;
	int ret;
	u64 i;

	rdmx_kunit_fill(r, 0x11);
	KUNIT_ASSERT_EQ(test, rdmx_ep_mr_dereg(f->sep, r->id), 0);
	KUNIT_EXPECT_EQ(test, rdmx_ep_mr_dereg(f->sep, r->id), -ENOENT);
	/*
	 * A WRITE with it reaches nothing. On iWARP a WRITE completes once
	 * sent, so its refusal shows only as a reconnect; a READ has to
	 * come back, so it fails everywhere.
	 */
	memset(f->tx, 0xee, 100);
	ret = rdmx_kunit_rma1(f->cep, r, RDMX_RMA_WRITE, f->tx, 0, 100);
	KUNIT_EXPECT_TRUE_MSG(test, ret == -EACCES || ret == -EIO ||
			      ret == -ECONNRESET || ret == 0,
			      "stale token, write: %d", ret);
	ret = rdmx_kunit_rma1(f->cep, r, RDMX_RMA_READ, f->rx, 0, 100);
	KUNIT_EXPECT_TRUE_MSG(test, ret == -EACCES || ret == -EIO ||
			      ret == -ECONNRESET, "stale token, read: %d", ret);
	for (i = 0; i < RDMX_KUNIT_REGION + 5; i++)
		if (r->mem[i] != 0x11)
			break;
	KUNIT_EXPECT_EQ_MSG(test, i, (u64)RDMX_KUNIT_REGION + 5,
			    "a stale token changed memory at %llu", i);
	rdmx_kunit_still_talks(test, f);
}

/*
 * A token cannot be derived from another: a user holding the token of its
 * own region, and even the keys of another's (as if it had guessed them),
 * does not reach the other region at the address its own suggests (the
 * region registered just before it, had addresses been numbered). The
 * forged READ fails, returns none of the region's bytes, and the session
 * recovers.
 */
static void rdmx_rma_forge_test(struct kunit *test)
{
	struct rdmx_sess_fixture *f = test->priv;
	struct rdmx_rma_fixture *r = f->priv;
	struct rdmx_kop op = {};
	struct rdmx_token_hdr *h;
	struct rdmx_token t1, t2;
	u32 len2 = RDMX_TOKEN_MAX, id2;
	u8 *mem2, *tok2, *forged;
	u64 guess, i;
	int ret;

	mem2 = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	tok2 = kunit_kzalloc(test, RDMX_TOKEN_MAX, GFP_KERNEL);
	forged = kunit_kmalloc(test, r->token_len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, mem2);
	KUNIT_ASSERT_NOT_NULL(test, tok2);
	KUNIT_ASSERT_NOT_NULL(test, forged);
	KUNIT_ASSERT_EQ(test, rdmx_ep_mr_reg(f->sep, mem2, PAGE_SIZE,
					     RDMX_ACCESS_REMOTE_READ, tok2,
					     &len2, &id2), 0);
	KUNIT_ASSERT_EQ(test, rdmx_token_parse(r->token, r->token_len, &t1), 0);
	KUNIT_ASSERT_EQ(test, rdmx_token_parse(tok2, len2, &t2), 0);
	guess = (((t2.iova >> 32) - 1) << 32) + t1.first_off;
	KUNIT_EXPECT_NE_MSG(test, guess, t1.iova,
			    "a region's address follows from the next one's");

	memcpy(forged, r->token, r->token_len);
	h = (struct rdmx_token_hdr *)forged;
	h->iova = cpu_to_le64(guess);
	rdmx_token_seal(forged, r->token_len);
	rdmx_kunit_fill(r, 0x5a);
	memset(f->rx, 0, 100);
	op.opcode = RDMX_RMA_READ;
	op.local = f->rx;
	op.token = forged;
	op.token_len = r->token_len;
	op.length = 100;
	ret = rdmx_ep_rma(f->cep, &op, 1);
	if (ret >= 0)
		ret = op.status;	/* it returns how many it took */
	if (guess != t1.iova)
		KUNIT_EXPECT_TRUE_MSG(test, ret == -EACCES || ret == -EIO ||
				      ret == -ECONNRESET,
				      "forged token, read: %d", ret);
	for (i = 0; i < 100; i++)
		if (f->rx[i] == 0x5a)
			break;
	KUNIT_EXPECT_EQ_MSG(test, i, 100ULL,
			    "a forged token read the region's bytes");
	KUNIT_EXPECT_EQ(test, rdmx_ep_mr_dereg(f->sep, id2), 0);
	rdmx_kunit_still_talks(test, f);
}

struct rdmx_kunit_async {
	struct work_struct work;
	struct rdmx_ep *ep;
	struct rdmx_kop op;
	int ret;
	struct completion done;
};

static void rdmx_kunit_async_work(struct work_struct *work)
{
	struct rdmx_kunit_async *a = container_of(work, struct rdmx_kunit_async,
						  work);

	a->ret = rdmx_ep_rma(a->ep, &a->op, 1);
	if (a->ret == 1)
		a->ret = a->op.status;
	complete_all(&a->done);	/* waited for more than once */
}

static void rdmx_kunit_async_imm(struct rdmx_kunit_async *a,
				 struct rdmx_ep *ep, struct rdmx_rma_fixture *r,
				 void *local, u64 off, u32 imm)
{
	a->ep = ep;
	a->op = (struct rdmx_kop) {
		.opcode = RDMX_RMA_WRITE_IMM,
		.local = local,
		.token = r->token,
		.token_len = r->token_len,
		.remote_offset = off,
		.length = 64,
		.imm = imm,
	};
	a->ret = -EINPROGRESS;
	init_completion(&a->done);
	INIT_WORK(&a->work, rdmx_kunit_async_work);
	queue_work(system_unbound_wq, &a->work);
}

/* The immediate @ep receives next, within 10 s, or a negative errno. */
static s64 rdmx_kunit_recv_imm(struct rdmx_ep *ep, void *buf)
{
	struct kvec kv = { .iov_base = buf, .iov_len = 16 };
	struct iov_iter it;
	ssize_t ret;
	int i = 0;
	bool imm;
	u32 v;

	do {
		iov_iter_kvec(&it, ITER_DEST, &kv, 1, 16);
		ret = rdmx_ep_recvmsg(ep, &it, true, &imm, &v);
		if (ret != -EAGAIN)
			break;
		msleep(20);
	} while (++i < 500);
	if (ret < 0)
		return ret;
	return imm ? v : -EBADMSG;
}

/*
 * One channel's sender holding its send mutex (as one waiting for a peer
 * that grants no window does) holds up that channel's immediates only:
 * another channel's WRITE_IMM completes meanwhile, and the first one's
 * immediate follows once the sender lets go.
 */
static void rdmx_rma_imm_stall_test(struct kunit *test)
{
	struct rdmx_sess_fixture *f = test->priv;
	struct rdmx_rma_fixture *r = f->priv;
	struct rdmx_kunit_async *a, *b;
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_port = htons(RDMX_KUNIT_PORT),
	};
	char ibname[IB_DEVICE_NAME_MAX];
	struct rdmx_ep *cep2, *sep2;
	int i, ret;

	/* Not kunit's: an operation that never ends keeps its memory. */
	a = kzalloc(sizeof(*a), GFP_KERNEL);
	b = kzalloc(sizeof(*b), GFP_KERNEL);
	if (!a || !b) {
		kfree(a);
		kfree(b);
		KUNIT_FAIL(test, "out of memory");
		return;
	}
	sin.sin_addr.s_addr = rdmx_kunit_rdma_addr(ibname, sizeof(ibname));
	cep2 = rdmx_ep_create(NULL, NULL);
	ret = cep2 ? rdmx_ep_connect(cep2, (struct sockaddr *)&sin,
				     RDMX_KUNIT_SERVICE, 20000) : -ENOMEM;
	sep2 = ret ? ERR_PTR(ret) : rdmx_ep_accept(f->lep, true);
	if (IS_ERR(sep2)) {
		if (cep2)
			rdmx_ep_release(cep2);
		kfree(a);
		kfree(b);
		KUNIT_FAIL(test, "second channel: %pe", sep2);
		return;
	}

	rdmx_kunit_fill(r, 0);
	memset(f->tx, 0xa1, 64);
	memset(f->tx + 64, 0xb2, 64);
	mutex_lock(&f->cep->send_mutex);
	rdmx_kunit_async_imm(a, f->cep, r, f->tx, 0, 0xa1);
	/* Its data placed, its immediate waits for the mutex. */
	for (i = 0; i < 100 && READ_ONCE(r->mem[5 + 63]) != 0xa1; i++)
		msleep(50);
	msleep(200);
	rdmx_kunit_async_imm(b, cep2, r, f->tx + 64, 4096, 0xb2);
	KUNIT_EXPECT_TRUE_MSG(test,
			      wait_for_completion_timeout(&b->done, 10 * HZ),
			      "another channel's WRITE_IMM waited for this one's sender");
	KUNIT_EXPECT_EQ(test, b->ret, 0);
	KUNIT_EXPECT_FALSE(test, completion_done(&a->done));
	rdmx_ep_send_unlock(f->cep);
	KUNIT_EXPECT_TRUE_MSG(test,
			      wait_for_completion_timeout(&a->done, 10 * HZ),
			      "the held channel's WRITE_IMM after its sender let go");
	if (!wait_for_completion_timeout(&a->done, 60 * HZ) ||
	    !wait_for_completion_timeout(&b->done, 60 * HZ)) {
		KUNIT_FAIL(test, "WRITE_IMMs never ended (%d, %d): left behind",
			   a->ret, b->ret);
		return;
	}
	KUNIT_EXPECT_EQ(test, a->ret, 0);
	KUNIT_EXPECT_EQ(test, rdmx_kunit_recv_imm(f->sep, f->rx), 0xa1LL);
	KUNIT_EXPECT_EQ(test, rdmx_kunit_recv_imm(sep2, f->rx), 0xb2LL);
	KUNIT_EXPECT_EQ(test, r->mem[5 + 4096 + 63], 0xb2);
	rdmx_ep_release(sep2);
	rdmx_ep_release(cep2);
	kfree(a);
	kfree(b);
}

static struct kunit_case rdmx_rma_cases[] = {
	KUNIT_CASE_SLOW(rdmx_rma_rw_test),
	KUNIT_CASE(rdmx_rma_features_test),
	KUNIT_CASE(rdmx_rma_checks_test),
	KUNIT_CASE(rdmx_rma_atomic_test),
	KUNIT_CASE_SLOW(rdmx_rma_write_imm_test),
	KUNIT_CASE_SLOW(rdmx_rma_imm_stall_test),
	KUNIT_CASE_SLOW(rdmx_rma_stale_test),
	KUNIT_CASE_SLOW(rdmx_rma_forge_test),
	{}
};

static struct kunit_suite rdmx_rma_suite = {
	.name = "rdmx_rma",
	.init = rdmx_rma_test_init,
	.exit = rdmx_rma_test_exit,
	.test_cases = rdmx_rma_cases,
};

kunit_test_suites(&rdmx_rma_suite);
