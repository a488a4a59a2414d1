// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx block service, server side: the file backend, as nvmet's
 * io-cmd-file.c is: a regular file, read and written through the VFS.
 * Its helpers serve the other backends too: a block device export writes
 * through its file, and a RAM export is a shmem file.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bvec.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <linux/jhash.h>
#include <linux/mm.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/uio.h>

#include "blk_srv.h"

/* Pieces a transfer describes on the stack before it allocates an array. */
#define RDMX_IO_FILE_INLINE_BVEC	8

/*
 * Read or write an export's file from a scatterlist: -EIO for a short
 * transfer. Process context; sleeps.
 */
static int rdmx_io_file_rw(struct rdmx_export *exp, struct scatterlist *sgl,
			   unsigned int nents, u32 len, u64 off, bool write,
			   bool fua)
{
	struct bio_vec inline_bv[RDMX_IO_FILE_INLINE_BVEC];
	struct bio_vec *bv = inline_bv;
	struct scatterlist *sg;
	struct iov_iter iter;
	loff_t pos = off;
	unsigned int i;
	ssize_t ret;

	if (nents > ARRAY_SIZE(inline_bv)) {
		bv = kvmalloc_array(nents, sizeof(*bv), GFP_KERNEL);
		if (!bv)
			return -ENOMEM;
	}
	for_each_sg(sgl, sg, nents, i)
		bvec_set_page(&bv[i], sg_page(sg), sg->length, sg->offset);
	iov_iter_bvec(&iter, write ? ITER_SOURCE : ITER_DEST, bv, nents, len);
	if (write)
		ret = vfs_iter_write(exp->file, &iter, &pos, fua ? RWF_DSYNC : 0);
	else
		ret = vfs_iter_read(exp->file, &iter, &pos, 0);
	if (bv != inline_bv)
		kvfree(bv);
	if (ret >= 0 && ret != len)
		ret = -EIO;
	return ret < 0 ? ret : 0;
}

/**
 * rdmx_io_file_write() - a backend's write: through the export's file
 * @req: the command (rdmx_srvq_write_data()); answered before this returns
 *
 * Context: process context; sleeps.
 */
void rdmx_io_file_write(struct rdmx_srvq_req *req)
{
	unsigned int nents;
	struct scatterlist *sgl = rdmx_srvq_write_data(req, &nents);

	rdmx_srvq_write_done(req, rdmx_io_file_rw(req->q->exp, sgl, nents,
						  req->io.length,
						  req->io.offset, true,
						  req->io.flags &
						  RDMX_BLK_CMD_FUA));
}

/**
 * rdmx_io_file_read() - a backend's READ: through the export's file
 * @req: the command; answered before this returns
 *
 * Context: process context; sleeps.
 */
void rdmx_io_file_read(struct rdmx_srvq_req *req)
{
	rdmx_srvq_read_done(req, rdmx_io_file_rw(req->q->exp, req->sgl,
						 req->nents, req->io.length,
						 req->io.offset, false, false));
}

/**
 * rdmx_io_file_fallocate() - zero or punch a range of the export's file
 * @exp: the export
 * @mode: FALLOC_FL_ZERO_RANGE or FALLOC_FL_PUNCH_HOLE
 * @off: byte offset
 * @len: bytes
 * @discard: a discard, a hint: a file system that cannot punch holes
 *	ignores it
 * @fua: stable before this returns
 *
 * Context: process context; sleeps.
 * Return: 0 or a negative errno.
 */
int rdmx_io_file_fallocate(struct rdmx_export *exp, int mode, u64 off,
			   u32 len, bool discard, bool fua)
{
	int ret;

	ret = vfs_fallocate(exp->file, mode | FALLOC_FL_KEEP_SIZE, off, len);
	if (ret == -EOPNOTSUPP && discard)
		return 0;
	if (!ret && fua)
		ret = vfs_fsync_range(exp->file, off, off + len - 1, 1);
	return ret;
}

/**
 * rdmx_io_file_zero() - a backend's discard or write zeroes, on its file
 * @exp: the export
 * @off: byte offset
 * @len: bytes
 * @discard: punch a hole (else zero the range, keeping its blocks)
 * @fua: stable before this returns
 *
 * Context: process context; sleeps.
 * Return: 0 or a negative errno.
 */
int rdmx_io_file_zero(struct rdmx_export *exp, u64 off, u32 len,
		      bool discard, bool fua)
{
	return rdmx_io_file_fallocate(exp, discard ? FALLOC_FL_PUNCH_HOLE :
				      FALLOC_FL_ZERO_RANGE, off, len, discard,
				      fua);
}

/**
 * rdmx_io_file_flush() - a backend's FLUSH: the file's data and metadata
 * @exp: the export
 *
 * Context: process context; sleeps.
 * Return: 0 or a negative errno.
 */
int rdmx_io_file_flush(struct rdmx_export *exp)
{
	return vfs_fsync(exp->file, 0);
}

static int rdmx_io_file_setup(struct rdmx_export *exp,
			      const struct rdmx_export_add *ea, u32 *lbs)
{
	*lbs = 512;
	exp->flags = RDMX_BLK_EXP_FLUSH | RDMX_BLK_EXP_DISCARD |
		     RDMX_BLK_EXP_WZEROES;
	exp->size = i_size_read(file_inode(exp->file));
	return 0;
}

static u64 rdmx_io_file_size(struct rdmx_export *exp)
{
	return i_size_read(file_inode(exp->file));
}

/*
 * From the file's filesystem uuid (or, for one without, such as tmpfs, its
 * device number), inode number and generation, so that it survives a
 * server restart and a path that changed, and a file put in its place
 * does not inherit it.
 */
static void rdmx_io_file_uuid(struct rdmx_export *exp, u32 w[4])
{
	struct inode *inode = file_inode(exp->file);
	int i;

	exp->uuid_src = "file";
	for (i = 0; i < 4; i++) {
		if (uuid_is_null(&inode->i_sb->s_uuid))
			w[i] = jhash_1word(inode->i_sb->s_dev, w[i]);
		else
			w[i] = jhash(&inode->i_sb->s_uuid,
				     sizeof(inode->i_sb->s_uuid), w[i]);
		w[i] = jhash_3words(lower_32_bits(inode->i_ino),
				    upper_32_bits(inode->i_ino),
				    inode->i_generation, w[i]);
	}
}

const struct rdmx_backend rdmx_backend_file = {
	.setup = rdmx_io_file_setup,
	.uuid = rdmx_io_file_uuid,
	.size = rdmx_io_file_size,
	.read = rdmx_io_file_read,
	.write = rdmx_io_file_write,
	.zero = rdmx_io_file_zero,
	.flush = rdmx_io_file_flush,
};
