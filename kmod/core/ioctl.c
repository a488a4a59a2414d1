// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx core: /dev/rdmx ioctls that are not a file's, and the uapi copy
 * helpers every ioctl uses. The core answers its own (GET_INFO,
 * LIST_DEVICES, LISTENER_ADD and _DEL) and hands the rest to the
 * registered services (rdmx_services_ioctl()).
 *
 * Every argument struct leads with its size (as the caller knows it) and
 * flags. Input is read with copy_struct_from_user(), so an older caller's
 * shorter struct is zero-extended and a newer caller's longer one is
 * accepted only when the bytes this kernel does not know are zero. Output
 * is written back up to the smaller of the two sizes. See
 * Documentation/uapi.rst.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/build_bug.h>
#include <linux/capability.h>
#include <linux/minmax.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "rdmx.h"

static_assert(sizeof(struct rdmx_info) == RDMX_INFO_SIZE_VER0);
static_assert(sizeof(struct rdmx_device_info) == RDMX_DEVICE_INFO_SIZE_VER0);
static_assert(sizeof(struct rdmx_list_devices) == RDMX_LIST_DEVICES_SIZE_VER0);
static_assert(sizeof(struct rdmx_listener_arg) == RDMX_LISTENER_ARG_SIZE_VER0);

/**
 * rdmx_copy_args_in() - read a size-led argument struct from userspace
 * @karg: kernel copy, @ksize bytes
 * @ksize: size of the struct this kernel knows
 * @min_size: first published size of the struct
 * @uarg: the caller's struct, which starts with its size as a __u32
 * @usize: set to the caller's size
 *
 * Context: process context; may fault.
 * Return: 0; -EFAULT when @uarg cannot be read; -EINVAL when the caller's
 * size is below @min_size; -E2BIG when the caller's struct is longer than
 * @ksize and the extra bytes are not all zero.
 */
int rdmx_copy_args_in(void *karg, size_t ksize, size_t min_size,
		      const void __user *uarg, u32 *usize)
{
	if (get_user(*usize, (const u32 __user *)uarg))
		return -EFAULT;
	if (*usize < min_size)
		return -EINVAL;
	return copy_struct_from_user(karg, ksize, uarg, *usize);
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_copy_args_in);

/**
 * rdmx_copy_args_out() - write a size-led argument struct back
 * @uarg: the caller's struct
 * @karg: kernel copy; its leading size field is set here
 * @ksize: size of the struct this kernel knows
 * @usize: the caller's size
 *
 * Writes min(@usize, @ksize) bytes; the size field says how many.
 *
 * Context: process context; may fault.
 * Return: 0 or -EFAULT.
 */
int rdmx_copy_args_out(void __user *uarg, void *karg, size_t ksize,
		       u32 usize)
{
	u32 n = min_t(size_t, usize, ksize);

	*(u32 *)karg = n;
	return copy_to_user(uarg, karg, n) ? -EFAULT : 0;
}

/**
 * rdmx_check_info() - validate RDMX_IOC_GET_INFO input
 * @info: the caller's struct, as read in
 *
 * Context: any context.
 * Return: 0, or -EINVAL for unknown flags.
 */
VISIBLE_IF_KUNIT int rdmx_check_info(const struct rdmx_info *info)
{
	if (info->flags)
		return -EINVAL;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_check_info);

static long rdmx_ioc_get_info(void __user *uarg)
{
	struct rdmx_info info;
	u32 usize;
	int ret;

	ret = rdmx_copy_args_in(&info, sizeof(info), RDMX_INFO_SIZE_VER0,
				uarg, &usize);
	if (ret)
		return ret;
	ret = rdmx_check_info(&info);
	if (ret)
		return ret;

	memset(&info, 0, sizeof(info));
	info.abi_version = RDMX_ABI_VERSION;
	info.nr_ports = rdmx_device_count_ports();
	info.features = rdmx_features();
	strscpy(info.version, RDMX_MODULE_VERSION, sizeof(info.version));
	return rdmx_copy_args_out(uarg, &info, sizeof(info), usize);
}

/**
 * rdmx_check_list_devices() - validate RDMX_IOC_LIST_DEVICES input
 * @ld: the caller's struct, as read in
 *
 * Context: any context.
 * Return: 0, or -EINVAL for unknown flags, an entry size below the first
 * published one or above RDMX_ENTRY_SIZE_MAX, or room for entries with no
 * array to put them in.
 */
VISIBLE_IF_KUNIT int rdmx_check_list_devices(const struct rdmx_list_devices *ld)
{
	if (ld->flags)
		return -EINVAL;
	if (ld->entry_size < RDMX_DEVICE_INFO_SIZE_VER0 ||
	    ld->entry_size > RDMX_ENTRY_SIZE_MAX)
		return -EINVAL;
	if (ld->count && !ld->devices)
		return -EINVAL;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_check_list_devices);

/* Copy @n entries to the caller's array, each @entry_size bytes apart. */
static int rdmx_copy_entries_out(u64 uptr, u32 entry_size,
				 const struct rdmx_device_info *entries,
				 unsigned int n)
{
	size_t known = min_t(size_t, entry_size, sizeof(*entries));
	unsigned int i;

	for (i = 0; i < n; i++) {
		void __user *dst = u64_to_user_ptr(uptr + (u64)i * entry_size);

		if (copy_to_user(dst, &entries[i], known))
			return -EFAULT;
		if (entry_size > known &&
		    clear_user(dst + known, entry_size - known))
			return -EFAULT;
	}
	return 0;
}

static long rdmx_ioc_list_devices(void __user *uarg)
{
	struct rdmx_device_info *entries = NULL;
	struct rdmx_list_devices ld;
	unsigned int room, total, n;
	u32 usize;
	int ret;

	ret = rdmx_copy_args_in(&ld, sizeof(ld), RDMX_LIST_DEVICES_SIZE_VER0,
				uarg, &usize);
	if (ret)
		return ret;
	ret = rdmx_check_list_devices(&ld);
	if (ret)
		return ret;

	/* Never allocate more than there are ports, whatever room is offered. */
	room = min(ld.count, rdmx_device_count_ports());
	if (room) {
		entries = kcalloc(room, sizeof(*entries), GFP_KERNEL);
		if (!entries)
			return -ENOMEM;
	}
	n = rdmx_device_list(entries, room, &total);

	ret = rdmx_copy_entries_out(ld.devices, ld.entry_size, entries, n);
	if (ret)
		goto out_free;

	ld.entry_size = min_t(size_t, ld.entry_size, sizeof(*entries));
	ld.count = total;
	ret = rdmx_copy_args_out(uarg, &ld, sizeof(ld), usize);
out_free:
	kfree(entries);
	return ret;
}

static long rdmx_ioc_listener(void __user *uarg, bool add)
{
	struct rdmx_listener_arg la;
	struct sockaddr_storage ss;
	u32 usize;
	int ret;

	ret = rdmx_copy_args_in(&la, sizeof(la), RDMX_LISTENER_ARG_SIZE_VER0,
				uarg, &usize);
	if (ret)
		return ret;
	if (la.flags)
		return -EINVAL;
	ret = rdmx_addr_from_user(&la.addr, &ss, true);
	if (ret)
		return ret;
	if (!capable(CAP_NET_ADMIN))
		return -EPERM;
	if (add)
		return rdmx_listener_get((struct sockaddr *)&ss, true);
	return rdmx_listener_del((struct sockaddr *)&ss);
}

/**
 * rdmx_ioctl_dispatch() - run one /dev/rdmx ioctl
 * @cmd: ioctl number
 * @uarg: the caller's argument
 *
 * Context: process context.
 * Return: 0 or a negative errno; -ENOTTY for an unknown @cmd.
 */
long rdmx_ioctl_dispatch(unsigned int cmd, void __user *uarg)
{
	long ret;

	switch (cmd) {
	case RDMX_IOC_GET_INFO:
		return rdmx_ioc_get_info(uarg);
	case RDMX_IOC_LIST_DEVICES:
		return rdmx_ioc_list_devices(uarg);
	case RDMX_IOC_LISTENER_ADD:
		return rdmx_ioc_listener(uarg, true);
	case RDMX_IOC_LISTENER_DEL:
		return rdmx_ioc_listener(uarg, false);
	}
	ret = rdmx_services_ioctl(cmd, uarg);
	return ret == -ENOIOCTLCMD ? -ENOTTY : ret;
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_ioctl_dispatch);
