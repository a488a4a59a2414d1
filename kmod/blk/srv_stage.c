// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx block service, server side: a queue's staging area
 * (RDMX_BLK_OPEN_STAGE).
 *
 * A client that asks for one at OPEN gets server memory, registered in
 * the queue's own protection domain for remote writes only, one
 * RDMX_BLK_STAGE_SLOT for each of the queue's tags: it RDMA WRITEs the
 * data of several small WRITEs there with one work request, then sends
 * their commands, which name their slots (RDMX_BLK_CMD_STAGED). The
 * client exposes no memory for them, and the server neither registers
 * nor fetches anything per WRITE: a staged WRITE's data is written from
 * its slot as an inline WRITE's is from its receive.
 *
 * Only the queue's QP can reach the area (the PD is the queue's), and
 * only to write it: a client can change no data but its own. The pages
 * are zeroed when allocated, so a slot the client never wrote holds
 * nothing of the server's. Its address is no kernel address: the area
 * sits at a random multiple of 4 GiB, as registered regions do
 * (msg/mr.c), and its key takes a random byte. The area lives from the
 * OPEN that granted it to the queue's teardown, after its QP is destroyed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/random.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "blk_srv.h"

/**
 * rdmx_srvq_stage_init() - allocate and map a queue's staging area
 * @q: the queue, being opened (from the OPEN's work)
 * @wr: filled in with the area's registration, which the caller posts
 *	before the OPEN's answer
 *
 * The area has a slot for each of the client's tags (the queue's depth
 * less the receive its events take), up to RDMX_BLK_STAGE_MAX bytes and
 * what one fast registration of the device covers, in 4 KiB pages as the
 * client's registrations are, whatever the CPU's page size.
 * @q->stage_len stays 0 until the caller sets it, once the registration
 * is posted.
 *
 * Context: process context; sleeps.
 * Return: the area's length in bytes; -EOPNOTSUPP when the device cannot
 * register an area for every tag; -ENOMEM. On error nothing is left to
 * free but what rdmx_srvq_stage_exit() frees.
 */
int rdmx_srvq_stage_init(struct rdmx_srvq *q, struct ib_reg_wr *wr)
{
	u32 len = (q->depth - 1) * RDMX_BLK_STAGE_SLOT;
	unsigned int i, n = DIV_ROUND_UP(len, PAGE_SIZE);
	struct scatterlist *sgl;
	struct page *page;
	int ret;

	if (WARN_ON_ONCE(q->stage_pages))
		return -EINVAL;
	if (len > RDMX_BLK_STAGE_MAX ||
	    len / SZ_4K > q->ibdev->attrs.max_fast_reg_page_list_len)
		return -EOPNOTSUPP;
	q->stage_npages = n;
	q->stage_pages = kcalloc(n, sizeof(*q->stage_pages), GFP_KERNEL);
	q->stage_dma = kcalloc(n, sizeof(*q->stage_dma), GFP_KERNEL);
	sgl = kcalloc(n, sizeof(*sgl), GFP_KERNEL);
	if (!q->stage_pages || !q->stage_dma || !sgl) {
		ret = -ENOMEM;
		goto out;
	}
	sg_init_table(sgl, n);
	for (i = 0; i < n; i++) {
		page = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!page) {
			ret = -ENOMEM;
			goto out;
		}
		q->stage_pages[i] = page;
		q->stage_dma[i] = ib_dma_map_page(q->ibdev, page, 0, PAGE_SIZE,
						  DMA_FROM_DEVICE);
		if (ib_dma_mapping_error(q->ibdev, q->stage_dma[i])) {
			q->stage_dma[i] = 0;
			ret = -ENOMEM;
			goto out;
		}
		/* Mapped a page at a time: one entry each, never merged. */
		sg_set_page(&sgl[i], page, PAGE_SIZE, 0);
		sg_dma_address(&sgl[i]) = q->stage_dma[i];
		sg_dma_len(&sgl[i]) = PAGE_SIZE;
	}
	q->stage_mr = ib_alloc_mr(q->pd, IB_MR_TYPE_MEM_REG, len / SZ_4K);
	if (IS_ERR(q->stage_mr)) {
		ret = PTR_ERR(q->stage_mr);
		q->stage_mr = NULL;
		goto out;
	}
	ret = ib_map_mr_sg(q->stage_mr, sgl, n, NULL, SZ_4K);
	if (ret != n || q->stage_mr->length < len) {
		ret = ret < 0 ? ret : -EOPNOTSUPP;
		goto out;
	}
	/* The client learns no kernel address (the area starts a page). */
	q->stage_mr->iova = (u64)get_random_u32_inclusive(1, U32_MAX >> 1) << 32;
	ib_update_fast_reg_key(q->stage_mr, get_random_u8());
	*wr = (struct ib_reg_wr){
		.wr.opcode = IB_WR_REG_MR,
		.wr.wr_cqe = &q->stage_cqe,
		.mr = q->stage_mr,
		.key = q->stage_mr->rkey,
		/* The client writes it; nobody reads it remotely. */
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE,
	};
	ret = len;
out:
	kfree(sgl);
	return ret;
}

/**
 * rdmx_srvq_stage_exit() - free a queue's staging area, if it has one
 * @q: the queue: its QP destroyed, or the area's registration never
 *	posted (rdmx_srvq_stage_init() failed)
 *
 * Idempotent.
 *
 * Context: process context.
 */
void rdmx_srvq_stage_exit(struct rdmx_srvq *q)
{
	unsigned int i;

	q->stage_len = 0;
	if (q->stage_mr)
		ib_dereg_mr(q->stage_mr);
	q->stage_mr = NULL;
	for (i = 0; q->stage_pages && i < q->stage_npages; i++) {
		if (q->stage_dma && q->stage_dma[i])
			ib_dma_unmap_page(q->ibdev, q->stage_dma[i], PAGE_SIZE,
					  DMA_FROM_DEVICE);
		if (q->stage_pages[i])
			__free_page(q->stage_pages[i]);
	}
	kfree(q->stage_pages);
	kfree(q->stage_dma);
	q->stage_pages = NULL;
	q->stage_dma = NULL;
	q->stage_npages = 0;
}

/**
 * rdmx_srvq_stage_sg() - a staged WRITE's data, for its backend
 * @q: the queue, with a staging area
 * @sg: set to the data's extent
 * @addr: the command's slot, checked (rdmx_blk_io_check())
 * @len: its length, at most RDMX_BLK_STAGE_SLOT
 *
 * The data the client wrote is synced for the CPU first.
 *
 * Context: any context.
 */
void rdmx_srvq_stage_sg(struct rdmx_srvq *q, struct scatterlist *sg,
			u64 addr, u32 len)
{
	unsigned int i = addr >> PAGE_SHIFT;

	ib_dma_sync_single_for_cpu(q->ibdev, q->stage_dma[i] +
				   offset_in_page(addr), len, DMA_FROM_DEVICE);
	sg_init_table(sg, 1);
	sg_set_page(sg, q->stage_pages[i], len, offset_in_page(addr));
}

/**
 * rdmx_srvq_stage_done() - a staged WRITE's slot goes back to the device
 * @q: the queue, with a staging area
 * @addr: the command's slot
 * @len: its length
 *
 * Before its answer, after which the client may write the slot again.
 *
 * Context: any context.
 */
void rdmx_srvq_stage_done(struct rdmx_srvq *q, u64 addr, u32 len)
{
	ib_dma_sync_single_for_device(q->ibdev, q->stage_dma[addr >> PAGE_SHIFT] +
				      offset_in_page(addr), len,
				      DMA_FROM_DEVICE);
}
