// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx block service, server side: the block device backend, as nvmet's
 * io-cmd-bdev.c is for reads: opened with direct I/O where the device
 * allows, a READ goes to the device as a bio and is answered from the
 * bio's completion; no thread waits for it. It is submitted from the
 * receive's completion with REQ_NOWAIT, so that a busy device (no free
 * tag) never holds up the CQ that other queues share: such a READ is
 * submitted again from the command's work, which may wait. Writes,
 * zeroing and flushes go through the device's file, as the file backend's
 * do.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/fs.h>
#include <linux/jhash.h>
#include <linux/scatterlist.h>
#include <linux/utsname.h>

#include "blk_srv.h"

static void rdmx_io_bdev_end_io(struct bio *bio)
{
	struct rdmx_srvq_req *req = bio->bi_private;
	blk_status_t status = bio->bi_status;
	bool nowait = bio->bi_opf & REQ_NOWAIT;

	bio_put(bio);
	/* No room without waiting (maybe inside submit_bio()): again, later. */
	if (status == BLK_STS_AGAIN && nowait) {
		rdmx_srvq_read_again(req);
		return;
	}
	rdmx_srvq_read_done(req, blk_status_to_errno(status));
}

/*
 * A READ goes to the device as a bio when the export has direct access,
 * and the device can refuse a bio rather than make it wait (REQ_NOWAIT).
 */
static bool rdmx_io_bdev_read_nowait(const struct rdmx_export *exp)
{
	return exp->bdev && bdev_nowait(exp->bdev);
}

/*
 * A READ: a bio straight to the device when the export has direct access
 * (exp->bdev) and the pages fit one bio; else through the file.
 */
static void rdmx_io_bdev_read(struct rdmx_srvq_req *req)
{
	struct rdmx_export *exp = req->q->exp;
	struct block_device *bdev = exp->bdev;
	bool retried = rdmx_srvq_read_retried(req);
	/* Run from the receive's completion (rdmx_srvq_runs_here()): no wait. */
	bool nowait = !retried && rdmx_io_bdev_read_nowait(exp);
	struct scatterlist *sg;
	struct bio *bio;
	unsigned int i;

	if (!bdev || req->nents > BIO_MAX_VECS) {
		/* The file waits: not in a receive's completion. */
		if (nowait) {
			rdmx_srvq_read_submitted(req);
			rdmx_srvq_read_again(req);
			return;
		}
		rdmx_io_file_read(req);
		return;
	}
	bio = bio_alloc(bdev, req->nents,
			REQ_OP_READ | (nowait ? REQ_NOWAIT : 0), GFP_KERNEL);
	bio->bi_iter.bi_sector = req->io.offset >> SECTOR_SHIFT;
	bio->bi_private = req;
	bio->bi_end_io = rdmx_io_bdev_end_io;
	for_each_sg(req->sgl, sg, req->nents, i) {
		if (bio_add_page(bio, sg_page(sg), sg->length,
				 sg->offset) != sg->length) {
			bio_put(bio);
			rdmx_srvq_read_done(req, -EIO);
			return;
		}
	}
	if (!retried)
		rdmx_srvq_read_submitted(req);
	submit_bio(bio);
}

static int rdmx_io_bdev_setup(struct rdmx_export *exp,
			      const struct rdmx_export_add *ea, u32 *lbs)
{
	struct block_device *bdev = I_BDEV(exp->file->f_mapping->host);

	*lbs = bdev_logical_block_size(bdev);
	if (exp->file->f_flags & O_DIRECT)
		exp->bdev = bdev;
	exp->flags = RDMX_BLK_EXP_DISCARD | RDMX_BLK_EXP_WZEROES;
	/*
	 * Without direct I/O, writes land in the page cache: a volatile cache
	 * the client must flush, whatever the disk's.
	 */
	if (bdev_write_cache(bdev) || !exp->bdev)
		exp->flags |= RDMX_BLK_EXP_FLUSH;
	if (!bdev_max_discard_sectors(bdev))
		exp->flags &= ~RDMX_BLK_EXP_DISCARD;
	exp->size = bdev_nr_bytes(bdev);
	return 0;
}

static u64 rdmx_io_bdev_size(struct rdmx_export *exp)
{
	return bdev_nr_bytes(I_BDEV(exp->file->f_mapping->host));
}

/*
 * From the host, the export's name and the path: rdmxctl derives a better
 * one from the device's WWN, serial or uuid and passes it.
 */
static void rdmx_io_bdev_uuid(struct rdmx_export *exp, u32 w[4])
{
	const char *host = init_utsname()->nodename;
	int i;

	exp->uuid_src = "path";
	for (i = 0; i < 4; i++) {
		w[i] = jhash(host, strlen(host), w[i]);
		w[i] = jhash(exp->path, strlen(exp->path), w[i]);
	}
}

const struct rdmx_backend rdmx_backend_bdev = {
	.setup = rdmx_io_bdev_setup,
	.uuid = rdmx_io_bdev_uuid,
	.size = rdmx_io_bdev_size,
	.read = rdmx_io_bdev_read,
	.read_nowait = rdmx_io_bdev_read_nowait,
	.write = rdmx_io_file_write,
	.zero = rdmx_io_file_zero,
	.flush = rdmx_io_file_flush,
};
