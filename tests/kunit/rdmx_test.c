// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suites for rdmx: uapi validation and device tracking.
 *
 * Loaded after rdmx.ko in the debug guest; the suites run at load time and
 * their KTAP lands in /sys/kernel/debug/kunit/<suite>/results.
 */
#include <kunit/test.h>
#include <linux/mman.h>
#include <linux/uaccess.h>
#include <rdma/ib_verbs.h>

#include "core/compat.h"
#include "core/rdmx.h"

MODULE_IMPORT_NS("EXPORTED_FOR_KUNIT_TESTING");

/* ---- rdmx_uapi: argument validation ---- */

struct rdmx_flags_case {
	const char *desc;
	u32 flags;
	int expect;
};

static const struct rdmx_flags_case rdmx_info_cases[] = {
	{ "no flags", 0, 0 },
	{ "lowest flag bit", 1, -EINVAL },
	{ "highest flag bit", 0x80000000, -EINVAL },
	{ "all flag bits", ~0u, -EINVAL },
};

static void rdmx_flags_case_desc(const struct rdmx_flags_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rdmx_info, rdmx_info_cases, rdmx_flags_case_desc);

static void rdmx_check_info_test(struct kunit *test)
{
	const struct rdmx_flags_case *c = test->param_value;
	struct rdmx_info info = { .size = sizeof(info), .flags = c->flags };

	KUNIT_EXPECT_EQ_MSG(test, rdmx_check_info(&info), c->expect,
			    "flags=%#x", c->flags);
}

struct rdmx_list_case {
	const char *desc;
	u32 flags;
	u32 entry_size;
	u32 count;
	u64 devices;
	int expect;
};

static const struct rdmx_list_case rdmx_list_cases[] = {
	{ "query count only", 0, RDMX_DEVICE_INFO_SIZE_VER0, 0, 0, 0 },
	{ "array given", 0, RDMX_DEVICE_INFO_SIZE_VER0, 4, 0x1000, 0 },
	{ "larger entries from newer userspace", 0, 512, 1, 0x1000, 0 },
	{ "entry size at the upper bound", 0, RDMX_ENTRY_SIZE_MAX, 1, 0x1000, 0 },
	{ "unknown flag", 1, RDMX_DEVICE_INFO_SIZE_VER0, 0, 0, -EINVAL },
	{ "entry size zero", 0, 0, 0, 0, -EINVAL },
	{ "entry size one short", 0, RDMX_DEVICE_INFO_SIZE_VER0 - 1, 0, 0, -EINVAL },
	{ "entry size over the bound", 0, RDMX_ENTRY_SIZE_MAX + 1, 1, 0x1000, -EINVAL },
	{ "entry size huge", 0, ~0u, 1, 0x1000, -EINVAL },
	{ "room but no array", 0, RDMX_DEVICE_INFO_SIZE_VER0, 1, 0, -EINVAL },
};

static void rdmx_list_case_desc(const struct rdmx_list_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rdmx_list, rdmx_list_cases, rdmx_list_case_desc);

static void rdmx_check_list_devices_test(struct kunit *test)
{
	const struct rdmx_list_case *c = test->param_value;
	struct rdmx_list_devices ld = {
		.size = sizeof(ld),
		.flags = c->flags,
		.entry_size = c->entry_size,
		.count = c->count,
		.devices = c->devices,
	};

	KUNIT_EXPECT_EQ_MSG(test, rdmx_check_list_devices(&ld), c->expect,
			    "flags=%#x entry_size=%u count=%u devices=%#llx",
			    c->flags, c->entry_size, c->count, c->devices);
}

/* A page of user memory for the ioctl paths; KUnit unmaps it. */
static void __user *rdmx_test_user_page(struct kunit *test)
{
	unsigned long addr;

	addr = kunit_vm_mmap(test, NULL, 0, PAGE_SIZE, PROT_READ | PROT_WRITE,
			     MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR_VALUE(addr),
			       "kunit_vm_mmap failed: %ld", (long)addr);
	return (void __user *)addr;
}

struct rdmx_size_case {
	const char *desc;
	u32 size;		/* what the caller claims */
	u8 tail;		/* value of the bytes past the kernel's struct */
	int expect;
};

static const struct rdmx_size_case rdmx_size_cases[] = {
	{ "exact size", RDMX_INFO_SIZE_VER0, 0, 0 },
	{ "zero size", 0, 0, -EINVAL },
	{ "only the size field", 4, 0, -EINVAL },
	{ "one byte short", RDMX_INFO_SIZE_VER0 - 1, 0, -EINVAL },
	{ "longer, zero tail", RDMX_INFO_SIZE_VER0 + 16, 0, 0 },
	{ "longer, non-zero tail", RDMX_INFO_SIZE_VER0 + 16, 0xa5, -E2BIG },
	{ "a page, zero tail", PAGE_SIZE, 0, 0 },
	{ "past the mapping", PAGE_SIZE + 8, 0, -EFAULT },
};

static void rdmx_size_case_desc(const struct rdmx_size_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rdmx_size, rdmx_size_cases, rdmx_size_case_desc);

/* The whole GET_INFO path, from the caller's claimed size to the copy back. */
static void rdmx_get_info_size_test(struct kunit *test)
{
	const struct rdmx_size_case *c = test->param_value;
	void __user *u = rdmx_test_user_page(test);
	u8 *buf = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	struct rdmx_info *info = (struct rdmx_info *)buf;
	long ret;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	memset(buf + sizeof(*info), c->tail, PAGE_SIZE - sizeof(*info));
	info->size = c->size;
	KUNIT_ASSERT_EQ(test, copy_to_user(u, buf, PAGE_SIZE), 0);

	ret = rdmx_ioctl_dispatch(RDMX_IOC_GET_INFO, u);
	KUNIT_EXPECT_EQ_MSG(test, ret, (long)c->expect, "size=%u tail=%#x",
			    c->size, c->tail);
	if (ret)
		return;

	KUNIT_ASSERT_EQ(test, copy_from_user(buf, u, PAGE_SIZE), 0);
	KUNIT_EXPECT_EQ(test, info->size, (u32)sizeof(*info));
	KUNIT_EXPECT_EQ(test, info->flags, 0u);
	KUNIT_EXPECT_EQ(test, info->abi_version, (u32)RDMX_ABI_VERSION);
	KUNIT_EXPECT_EQ(test, info->features, rdmx_features());
	KUNIT_EXPECT_EQ(test, info->nr_ports, rdmx_device_count_ports());
	KUNIT_EXPECT_STREQ(test, (char *)info->version, RDMX_MODULE_VERSION);
	/* Nothing past the kernel's struct was written. */
	KUNIT_EXPECT_NULL(test, memchr_inv(buf + sizeof(*info), c->tail,
					   c->size - sizeof(*info)));
}

static void rdmx_get_info_flags_test(struct kunit *test)
{
	void __user *u = rdmx_test_user_page(test);
	struct rdmx_info info = { .size = sizeof(info), .flags = 2 };

	KUNIT_ASSERT_EQ(test, copy_to_user(u, &info, sizeof(info)), 0);
	KUNIT_EXPECT_EQ(test, rdmx_ioctl_dispatch(RDMX_IOC_GET_INFO, u),
			(long)-EINVAL);
}

static void rdmx_get_info_fault_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, rdmx_ioctl_dispatch(RDMX_IOC_GET_INFO, NULL),
			(long)-EFAULT);
}

static const unsigned int rdmx_unknown_cmds[] = {
	_IO(RDMX_IOC_TYPE, 0x02),
	_IO(RDMX_IOC_TYPE, 0xff),
	_IOWR(RDMX_IOC_TYPE, RDMX_CMD_GET_INFO, struct rdmx_info),
	_IO(RDMX_IOC_TYPE + 1, RDMX_CMD_GET_INFO),
	0,
};

static void rdmx_unknown_ioctl_test(struct kunit *test)
{
	void __user *u = rdmx_test_user_page(test);
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(rdmx_unknown_cmds); i++)
		KUNIT_EXPECT_EQ_MSG(test,
				    rdmx_ioctl_dispatch(rdmx_unknown_cmds[i], u),
				    (long)-ENOTTY, "cmd=%#x", rdmx_unknown_cmds[i]);
}

/* Entries larger than the kernel's get their unknown tail zeroed. */
static void rdmx_list_devices_ioctl_test(struct kunit *test)
{
	const u32 esize = sizeof(struct rdmx_device_info) + 24;
	void __user *u = rdmx_test_user_page(test);
	void __user *uarr = rdmx_test_user_page(test);
	struct rdmx_list_devices ld = {
		.size = sizeof(ld),
		.entry_size = esize,
	};
	unsigned int ports = rdmx_device_count_ports();
	u8 *arr;
	u32 room;

	KUNIT_ASSERT_EQ(test, copy_to_user(u, &ld, sizeof(ld)), 0);
	KUNIT_ASSERT_EQ(test, rdmx_ioctl_dispatch(RDMX_IOC_LIST_DEVICES, u), 0L);
	KUNIT_ASSERT_EQ(test, copy_from_user(&ld, u, sizeof(ld)), 0);
	KUNIT_EXPECT_EQ(test, ld.count, ports);
	KUNIT_EXPECT_EQ(test, ld.entry_size, (u32)sizeof(struct rdmx_device_info));
	if (!ports)
		kunit_skip(test, "no RDMA device: entries not exercised");

	room = min_t(u32, ports, PAGE_SIZE / esize);
	arr = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, arr);
	memset(arr, 0xff, PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, copy_to_user(uarr, arr, PAGE_SIZE), 0);

	ld.entry_size = esize;
	ld.count = room;
	ld.devices = (u64)(uintptr_t)uarr;
	KUNIT_ASSERT_EQ(test, copy_to_user(u, &ld, sizeof(ld)), 0);
	KUNIT_ASSERT_EQ(test, rdmx_ioctl_dispatch(RDMX_IOC_LIST_DEVICES, u), 0L);
	KUNIT_ASSERT_EQ(test, copy_from_user(arr, uarr, PAGE_SIZE), 0);
	KUNIT_ASSERT_EQ(test, copy_from_user(&ld, u, sizeof(ld)), 0);
	KUNIT_EXPECT_EQ(test, ld.count, ports);

	/* Each entry's unknown tail zeroed, nothing past the last entry touched. */
	KUNIT_EXPECT_NULL(test, memchr_inv(arr + sizeof(struct rdmx_device_info),
					   0, esize - sizeof(struct rdmx_device_info)));
	KUNIT_EXPECT_NULL(test, memchr_inv(arr + room * esize, 0xff,
					   PAGE_SIZE - room * esize));
	KUNIT_EXPECT_NE(test, ((struct rdmx_device_info *)arr)->name[0], 0);
}

static struct kunit_case rdmx_uapi_cases[] = {
	KUNIT_CASE_PARAM(rdmx_check_info_test, rdmx_info_gen_params),
	KUNIT_CASE_PARAM(rdmx_check_list_devices_test, rdmx_list_gen_params),
	KUNIT_CASE_PARAM(rdmx_get_info_size_test, rdmx_size_gen_params),
	KUNIT_CASE(rdmx_get_info_flags_test),
	KUNIT_CASE(rdmx_get_info_fault_test),
	KUNIT_CASE(rdmx_unknown_ioctl_test),
	KUNIT_CASE(rdmx_list_devices_ioctl_test),
	{}
};

static struct kunit_suite rdmx_uapi_suite = {
	.name = "rdmx_uapi",
	.test_cases = rdmx_uapi_cases,
};

/* ---- rdmx_device: mapping helpers and device tracking ---- */

struct rdmx_mtu_case {
	const char *desc;
	enum ib_mtu mtu;
	u32 bytes;
};

static const struct rdmx_mtu_case rdmx_mtu_cases[] = {
	{ "256", IB_MTU_256, 256 },
	{ "512", IB_MTU_512, 512 },
	{ "1024", IB_MTU_1024, 1024 },
	{ "2048", IB_MTU_2048, 2048 },
	{ "4096", IB_MTU_4096, 4096 },
	{ "zero is not an MTU", 0, 0 },
	{ "past the enumeration", IB_MTU_4096 + 1, 0 },
};

static void rdmx_mtu_case_desc(const struct rdmx_mtu_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rdmx_mtu, rdmx_mtu_cases, rdmx_mtu_case_desc);

static void rdmx_mtu_bytes_test(struct kunit *test)
{
	const struct rdmx_mtu_case *c = test->param_value;

	KUNIT_EXPECT_EQ_MSG(test, rdmx_mtu_bytes(c->mtu), c->bytes,
			    "mtu enum %d", c->mtu);
}

static void rdmx_atomic_cap_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, rdmx_atomic_cap_of(IB_ATOMIC_NONE), RDMX_ATOMIC_NONE);
	KUNIT_EXPECT_EQ(test, rdmx_atomic_cap_of(IB_ATOMIC_HCA), RDMX_ATOMIC_HCA);
	KUNIT_EXPECT_EQ(test, rdmx_atomic_cap_of(IB_ATOMIC_GLOB), RDMX_ATOMIC_GLOB);
	KUNIT_EXPECT_EQ(test, rdmx_atomic_cap_of(IB_ATOMIC_GLOB + 1),
			RDMX_ATOMIC_NONE);
}

static void rdmx_find_unknown_test(struct kunit *test)
{
	KUNIT_EXPECT_NULL(test, rdmx_device_find_get("rdmx-no-such-device"));
	KUNIT_EXPECT_NULL(test, rdmx_device_find_get(""));
}

/* Compare one listed entry with what the RDMA core says of the device. */
static void rdmx_check_entry(struct kunit *test,
			     const struct rdmx_device_info *e)
{
	struct rdmx_device *rdev;
	struct ib_device *ibdev;

	KUNIT_EXPECT_NE(test, e->name[0], 0);
	KUNIT_EXPECT_EQ(test, e->name[sizeof(e->name) - 1], 0);
	/* The table's reference plus ours. */
	rdev = rdmx_device_find_get((const char *)e->name);
	KUNIT_ASSERT_NOT_NULL_MSG(test, rdev, "rdmx does not know %s", e->name);
	KUNIT_EXPECT_EQ(test, kref_read(&rdev->ref), 2u);
	ibdev = rdev->ibdev;
	KUNIT_EXPECT_STREQ(test, dev_name(&ibdev->dev), (const char *)e->name);

	KUNIT_EXPECT_EQ(test, e->index, ibdev->index);
	KUNIT_EXPECT_EQ(test, e->node_guid, be64_to_cpu(ibdev->node_guid));
	KUNIT_EXPECT_TRUE(test, rdma_is_port_valid(ibdev, e->port));
	KUNIT_EXPECT_EQ(test, e->transport, rdmx_transport_of(ibdev, e->port));
	KUNIT_EXPECT_NE(test, e->transport, RDMX_TRANSPORT_UNKNOWN);
	KUNIT_EXPECT_GE(test, e->port_state, RDMX_PORT_DOWN);
	KUNIT_EXPECT_LE(test, e->port_state, RDMX_PORT_ACTIVE_DEFER);
	KUNIT_EXPECT_LE(test, e->phys_state, RDMX_PHYS_STATE_PHY_TEST);
	if (e->port_state == RDMX_PORT_ACTIVE)
		KUNIT_EXPECT_EQ(test, e->phys_state, RDMX_PHYS_STATE_LINK_UP);
	KUNIT_EXPECT_LE(test, e->active_mtu, e->max_mtu);
	KUNIT_EXPECT_EQ(test, e->max_qp_wr, (u32)ibdev->attrs.max_qp_wr);
	KUNIT_EXPECT_EQ(test, e->max_send_sge, (u32)ibdev->attrs.max_send_sge);
	KUNIT_EXPECT_GT(test, e->max_msg_sz, 0u);

	/* And back to the table's reference alone. */
	rdmx_device_put(rdev);
	KUNIT_EXPECT_EQ(test, kref_read(&rdev->ref), 1u);
}

static void rdmx_device_tracking_test(struct kunit *test)
{
	struct rdmx_device_info *entries;
	unsigned int total, n, i;

	total = rdmx_device_count_ports();
	if (!total)
		kunit_skip(test, "no RDMA device present");

	entries = kunit_kcalloc(test, total, sizeof(*entries), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, entries);
	n = rdmx_device_list(entries, total, &total);
	KUNIT_ASSERT_EQ(test, n, total);

	for (i = 0; i < n; i++)
		rdmx_check_entry(test, &entries[i]);
}

static void rdmx_device_list_room_test(struct kunit *test)
{
	struct rdmx_device_info one;
	unsigned int total;

	KUNIT_EXPECT_EQ(test, rdmx_device_list(NULL, 0, &total), 0);
	KUNIT_EXPECT_EQ(test, total, rdmx_device_count_ports());
	if (!total)
		kunit_skip(test, "no RDMA device present");
	KUNIT_EXPECT_EQ(test, rdmx_device_list(&one, 1, &total), 1);
}

/*
 * The reconnect backoff: doubling from RDMX_RECONNECT_MIN_MS up to the cap
 * (never under the minimum, even for a smaller cap), plus at most half
 * again; many draws, so that the jitter's range is seen.
 */
static void rdmx_backoff_test(struct kunit *test)
{
	static const unsigned int caps[] = { 0, 50, 100, 1500, 2000, 600000 };
	unsigned int a, c, k, base, ms, most;

	for (c = 0; c < ARRAY_SIZE(caps); c++) {
		for (a = 0; a <= 40; a++) {
			base = min_t(unsigned int,
				     RDMX_RECONNECT_MIN_MS << min(a, 10U),
				     max_t(unsigned int, caps[c],
					   RDMX_RECONNECT_MIN_MS));
			most = 0;
			for (k = 0; k < 64; k++) {
				ms = rdmx_backoff_ms(a, caps[c]);
				KUNIT_EXPECT_GE(test, ms, base);
				KUNIT_EXPECT_LE(test, ms, base + base / 2);
				most = max(most, ms);
			}
			/* 64 draws of up to half again: some above the base. */
			KUNIT_EXPECT_GT(test, most, base);
		}
	}
	KUNIT_EXPECT_LE(test, rdmx_backoff_ms(UINT_MAX, UINT_MAX),
			(RDMX_RECONNECT_MIN_MS << 10) * 3 / 2);
}

static struct kunit_case rdmx_device_cases[] = {
	KUNIT_CASE_PARAM(rdmx_mtu_bytes_test, rdmx_mtu_gen_params),
	KUNIT_CASE(rdmx_atomic_cap_test),
	KUNIT_CASE(rdmx_find_unknown_test),
	KUNIT_CASE(rdmx_device_tracking_test),
	KUNIT_CASE(rdmx_device_list_room_test),
	KUNIT_CASE(rdmx_backoff_test),
	{}
};

static struct kunit_suite rdmx_device_suite = {
	.name = "rdmx_device",
	.test_cases = rdmx_device_cases,
};

kunit_test_suites(&rdmx_uapi_suite, &rdmx_device_suite);

MODULE_DESCRIPTION("KUnit tests for rdmx");
MODULE_LICENSE("GPL");
