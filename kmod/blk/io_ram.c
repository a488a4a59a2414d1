// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx block service, server side: the RAM backend, a shmem file of the
 * size asked for. Nothing of it survives the export: each one is new
 * storage with a new uuid. It grows on RDMX_IOC_EXPORT_RESIZE.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/falloc.h>
#include <linux/slab.h>

#include "core/compat.h"
#include "blk_srv.h"

static int rdmx_io_ram_setup(struct rdmx_export *exp,
			     const struct rdmx_export_add *ea, u32 *lbs)
{
	struct file *file;

	file = rdmx_shmem_file_setup("rdmx-ram", ea->ram_size);
	if (IS_ERR(file))
		return PTR_ERR(file);
	exp->file = file;
	exp->size = ea->ram_size;
	*lbs = 512;
	exp->flags = RDMX_BLK_EXP_DISCARD | RDMX_BLK_EXP_WZEROES;
	exp->path = kasprintf(GFP_KERNEL, "ram:%llu", ea->ram_size);
	return exp->path ? 0 : -ENOMEM;
}

/* shmem punches holes only; a hole reads back as zeroes there. */
static int rdmx_io_ram_zero(struct rdmx_export *exp, u64 off, u32 len,
			    bool discard, bool fua)
{
	return rdmx_io_file_fallocate(exp, FALLOC_FL_PUNCH_HOLE, off, len,
				      discard, fua);
}

/* Nothing is volatile beyond what RAM is. */
static int rdmx_io_ram_flush(struct rdmx_export *exp)
{
	return 0;
}

static int rdmx_io_ram_grow(struct rdmx_export *exp, u64 size)
{
	return vfs_truncate(&exp->file->f_path, size);
}

const struct rdmx_backend rdmx_backend_ram = {
	.setup = rdmx_io_ram_setup,
	.grow = rdmx_io_ram_grow,
	.read = rdmx_io_file_read,
	.write = rdmx_io_file_write,
	.zero = rdmx_io_ram_zero,
	.flush = rdmx_io_ram_flush,
};
