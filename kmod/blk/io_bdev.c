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
	bool write = op_is_write(bio_op(bio));

	bio_put(bio);
	/* No room without waiting (maybe inside submit_bio()): again, later. */
	if (status == BLK_STS_AGAIN && nowait) {
		rdmx_srvq_io_again(req);
		return;
	}
	if (write)
		rdmx_srvq_write_done(req, blk_status_to_errno(status));
	else
		rdmx_srvq_read_done(req, blk_status_to_errno(status));
}

/*
 * READs and WRITEs go to the device as bios when the export has direct
 * access, and the device can refuse a bio rather than make it wait
 * (REQ_NOWAIT).
 */
static bool rdmx_io_bdev_nowait(const struct rdmx_export *exp)
{
	return exp->bdev && bdev_nowait(exp->bdev);
}

/*
 * A command's pages as one bio to the device, answered from its
 * completion: false when there is no direct access or they do not fit one
 * bio (the caller goes through the file then).
 */
static bool rdmx_io_bdev_submit(struct rdmx_srvq_req *req, blk_opf_t opf,
				struct scatterlist *sgl, unsigned int nents)
{
	struct block_device *bdev = req->q->exp->bdev;
	struct scatterlist *sg;
	struct bio *bio;
	unsigned int i;

	if (!bdev || nents > BIO_MAX_VECS)
		return false;
	bio = bio_alloc(bdev, nents, opf, GFP_KERNEL);
	bio->bi_iter.bi_sector = req->io.offset >> SECTOR_SHIFT;
	bio->bi_private = req;
	bio->bi_end_io = rdmx_io_bdev_end_io;
	for_each_sg(sgl, sg, nents, i) {
		if (bio_add_page(bio, sg_page(sg), sg->length,
				 sg->offset) != sg->length) {
			/* Answered -EIO, through the completion. */
			bio->bi_opf &= ~REQ_NOWAIT;
			bio_io_error(bio);
			return true;
		}
	}
	submit_bio(bio);
	return true;
}

/*
 * Whether a command must not wait for its device: it runs in a completion
 * (rdmx_srvq_runs_here()) and was not handed back to its work yet.
 */
static bool rdmx_io_bdev_must_not_wait(struct rdmx_srvq_req *req)
{
	return !rdmx_srvq_io_retried(req) && rdmx_io_bdev_nowait(req->q->exp);
}

/*
 * A READ: a bio straight to the device when the export has direct access
 * (exp->bdev) and the pages fit one bio; else through the file, from the
 * command's work.
 */
static void rdmx_io_bdev_read(struct rdmx_srvq_req *req)
{
	bool nowait = rdmx_io_bdev_must_not_wait(req);

	if (!rdmx_srvq_io_retried(req))
		rdmx_srvq_read_submitted(req);
	if (rdmx_io_bdev_submit(req, REQ_OP_READ | (nowait ? REQ_NOWAIT : 0),
				req->sgl, req->nents))
		return;
	/* The file waits: not in a completion. */
	if (nowait)
		rdmx_srvq_io_again(req);
	else
		rdmx_io_file_read(req);
}

/* A WRITE, as a READ goes (rdmx_io_bdev_read()); inside the fence. */
static void rdmx_io_bdev_write(struct rdmx_srvq_req *req)
{
	bool nowait = rdmx_io_bdev_must_not_wait(req);
	blk_opf_t opf = REQ_OP_WRITE | REQ_SYNC | REQ_IDLE;
	struct scatterlist *sgl;
	unsigned int nents;

	if (nowait)
		opf |= REQ_NOWAIT;
	if (req->io.flags & RDMX_BLK_CMD_FUA)
		opf |= REQ_FUA;
	sgl = rdmx_srvq_write_data(req, &nents);
	if (rdmx_io_bdev_submit(req, opf, sgl, nents))
		return;
	if (nowait)
		rdmx_srvq_io_again(req);
	else
		rdmx_io_file_write(req);
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
	.write = rdmx_io_bdev_write,
	.nowait = rdmx_io_bdev_nowait,
	.zero = rdmx_io_file_zero,
	.flush = rdmx_io_file_flush,
};
