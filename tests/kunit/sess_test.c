// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the message service through its kernel API, connected to this
 * host over the first RDMA device that has an IPv4 address. Skipped, with
 * the reason, where there is none.
 */
#include <kunit/test.h>
#include <linux/inetdevice.h>
#include <linux/netdevice.h>
#include <linux/uio.h>
#include <linux/vmalloc.h>
#include <rdma/ib_verbs.h>

#include "../../kmod/rdmx.h"
#include "../../kmod/rdmx_api.h"

#define RDMX_KUNIT_PORT		7499
#define RDMX_KUNIT_SERVICE	"kunit"

struct rdmx_sess_fixture {
	struct rdmx_ep *lep;	/* listening */
	struct rdmx_ep *cep;	/* the connecting end */
	struct rdmx_ep *sep;	/* the accepted end */
	u8 *tx;
	u8 *rx;
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
