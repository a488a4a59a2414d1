// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx core: RDMA helpers every service's connections use.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/gfp.h>
#include <rdma/rdma_cm.h>

#include "rdmx.h"

/**
 * rdmx_rc_qp_create() - create an rdma_cm id's RC QP on one CQ
 * @cm_id: the id; its QP is @cm_id->qp on success
 * @pd: the QP's protection domain
 * @cq: the completion queue of both its queues
 * @context: the QP's context
 * @cap: the work requests, scatter/gather entries and rdma_rw contexts the
 *	owner posts at most. One send and one receive work request are
 *	added for ib_drain_qp(). On success, what the device granted (which
 *	may be more), the drain's included.
 *
 * Every work request but the last of an rdma_rw chain is unsignaled
 * (IB_SIGNAL_REQ_WR). The owner destroys the QP with rdma_destroy_qp().
 *
 * Context: process context.
 * Return: 0 or rdma_create_qp()'s negative errno.
 */
int rdmx_rc_qp_create(struct rdma_cm_id *cm_id, struct ib_pd *pd,
		      struct ib_cq *cq, void *context,
		      struct ib_qp_cap *cap)
{
	struct ib_qp_init_attr attr = {
		.qp_context = context,
		.send_cq = cq,
		.recv_cq = cq,
		.cap = *cap,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
		.port_num = cm_id->port_num,
	};
	int ret;

	attr.cap.max_send_wr++;
	attr.cap.max_recv_wr++;
	ret = rdma_create_qp(cm_id, pd, &attr);
	if (!ret)
		*cap = attr.cap;
	return ret;
}

/**
 * rdmx_rx_hdr_alloc() - allocate and map memory for a receive buffer's
 *	first scatter entry
 * @dev: the device it is mapped for
 * @len: its bytes
 * @gfp: allocation flags
 * @dma: its mapping (DMA_FROM_DEVICE), set on success
 *
 * Context: any context, as @gfp allows.
 * Return: the memory, or NULL when it could not be allocated or mapped.
 */
void *rdmx_rx_hdr_alloc(struct ib_device *dev, u32 len, gfp_t gfp, u64 *dma)
{
	void *buf = kmalloc(len, gfp);

	if (!buf)
		return NULL;
	*dma = ib_dma_map_single(dev, buf, len, DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(dev, *dma)) {
		kfree(buf);
		return NULL;
	}
	return buf;
}

/**
 * rdmx_rx_hdr_free() - unmap and free what rdmx_rx_hdr_alloc() gave
 * @dev: the device it is mapped for
 * @buf: the memory; NULL for none
 * @len: its bytes
 * @dma: its mapping
 *
 * Context: any context.
 */
void rdmx_rx_hdr_free(struct ib_device *dev, void *buf, u32 len, u64 dma)
{
	if (!buf)
		return;
	ib_dma_unmap_single(dev, dma, len, DMA_FROM_DEVICE);
	kfree(buf);
}

/**
 * rdmx_rx_buf_swap_hdr() - take a completed receive's first scatter entry
 *	and give the buffer another
 * @dev: the device both are mapped for
 * @rb: the buffer: completed, synced for the CPU, not posted
 * @buf: memory from rdmx_rx_hdr_alloc() of @rb->hdr_len bytes
 * @dma: its mapping
 *
 * The receiver keeps what arrived where it arrived instead of copying it
 * out, as RDS hands its receive fragments to the message; @rb is posted
 * again with @buf.
 *
 * Context: any context.
 * Return: the received memory, unmapped: the caller's, to kfree().
 */
void *rdmx_rx_buf_swap_hdr(struct ib_device *dev, struct rdmx_rx_buf *rb,
			   void *buf, u64 dma)
{
	void *old = rb->hdr;

	ib_dma_unmap_single(dev, rb->hdr_dma, rb->hdr_len, DMA_FROM_DEVICE);
	rb->hdr = buf;
	rb->hdr_dma = dma;
	return old;
}

/**
 * rdmx_rx_buf_init() - allocate and map a receive buffer's memory
 * @dev: the device it is mapped for
 * @rb: the buffer, zeroed but for @rb->cqe
 * @hdr_len: bytes of its first scatter entry, more than 0
 * @data_len: bytes of its second, at most a page; 0 for none
 *
 * On failure, part of the work may be done: the owner calls
 * rdmx_rx_buf_exit() whether this succeeded or not.
 *
 * Context: process context.
 * Return: 0, -ENOMEM, or -EINVAL for sizes out of range.
 */
int rdmx_rx_buf_init(struct ib_device *dev, struct rdmx_rx_buf *rb,
		     u32 hdr_len, u32 data_len)
{
	if (WARN_ON_ONCE(!hdr_len || data_len > PAGE_SIZE))
		return -EINVAL;
	rb->hdr_len = hdr_len;
	rb->data_len = data_len;
	/*
	 * Its own allocation, so that what the CPU writes beside it shares
	 * no cache line with it (kmalloc()'s DMA alignment, or the bounce
	 * buffer the DMA API gives a smaller one).
	 */
	rb->hdr = rdmx_rx_hdr_alloc(dev, hdr_len, GFP_KERNEL, &rb->hdr_dma);
	if (!rb->hdr)
		return -ENOMEM;
	if (!data_len)
		return 0;
	rb->data = alloc_page(GFP_KERNEL);
	if (!rb->data)
		return -ENOMEM;
	rb->data_dma = ib_dma_map_page(dev, rb->data, 0, data_len,
				       DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(dev, rb->data_dma)) {
		rb->data_dma = 0;
		return -ENOMEM;
	}
	return 0;
}

/**
 * rdmx_rx_buf_exit() - unmap and free what rdmx_rx_buf_init() set up
 * @dev: the device it was mapped for
 * @rb: the buffer, no longer posted (its QP is drained or destroyed)
 *
 * Idempotent; takes any buffer rdmx_rx_buf_init() was called on, or a
 * zeroed one.
 *
 * Context: any context.
 */
void rdmx_rx_buf_exit(struct ib_device *dev, struct rdmx_rx_buf *rb)
{
	/* rdmx_rx_hdr_alloc() gives it mapped or not at all. */
	rdmx_rx_hdr_free(dev, rb->hdr, rb->hdr_len, rb->hdr_dma);
	if (rb->data_dma)
		ib_dma_unmap_page(dev, rb->data_dma, rb->data_len,
				  DMA_FROM_DEVICE);
	if (rb->data)
		__free_page(rb->data);
	rb->hdr_dma = 0;
	rb->data_dma = 0;
	rb->data = NULL;
	rb->hdr = NULL;
}

/**
 * rdmx_rx_buf_post() - give a receive buffer to the device
 * @qp: the QP; its PD's local DMA lkey covers the buffer
 * @rb: the buffer; the CPU reads nothing of it until its completion
 *
 * Context: any context; the owner keeps @qp alive.
 * Return: 0 or ib_post_recv()'s negative errno.
 */
int rdmx_rx_buf_post(struct ib_qp *qp, struct rdmx_rx_buf *rb)
{
	u32 lkey = qp->pd->local_dma_lkey;
	struct ib_sge sge[2] = {
		{ .addr = rb->hdr_dma, .length = rb->hdr_len, .lkey = lkey },
		{ .addr = rb->data_dma, .length = rb->data_len, .lkey = lkey },
	};
	struct ib_recv_wr wr = {
		.wr_cqe = &rb->cqe,
		.sg_list = sge,
		.num_sge = rb->data ? 2 : 1,
	};

	if (rb->data_first && !WARN_ON_ONCE(!rb->data))
		swap(sge[0], sge[1]);

	ib_dma_sync_single_for_device(qp->device, rb->hdr_dma, rb->hdr_len,
				      DMA_FROM_DEVICE);
	if (rb->data)
		ib_dma_sync_single_for_device(qp->device, rb->data_dma,
					      rb->data_len, DMA_FROM_DEVICE);
	return ib_post_recv(qp, &wr, NULL);
}

/**
 * rdmx_rx_buf_sync() - make a completed receive's bytes visible to the CPU
 * @dev: the device it is mapped for
 * @rb: the buffer
 * @byte_len: the completion's byte_len: bytes received, in the order of
 *	the scatter entries (@rb->data_first)
 *
 * Context: any context.
 */
void rdmx_rx_buf_sync(struct ib_device *dev, struct rdmx_rx_buf *rb,
		      u32 byte_len)
{
	u32 hdr, data;

	if (rb->data_first) {
		data = min(byte_len, rb->data_len);
		hdr = min(byte_len - data, rb->hdr_len);
	} else {
		hdr = min(byte_len, rb->hdr_len);
		data = min(byte_len - hdr, rb->data_len);
	}

	if (hdr)
		ib_dma_sync_single_for_cpu(dev, rb->hdr_dma, hdr,
					   DMA_FROM_DEVICE);
	if (data)
		ib_dma_sync_single_for_cpu(dev, rb->data_dma, data,
					   DMA_FROM_DEVICE);
}
