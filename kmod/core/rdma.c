// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx core: RDMA helpers every service's connections use.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

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
