/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmx core: the one rdma_cm event handler, and the services that take
 * connection requests through rdmx's listeners.
 *
 * Every rdma_cm id rdmx creates or accepts has rdmx_cm_handler() as its
 * handler and a struct rdmx_cm_ctx as its context, embedded in what owns
 * the id (a listener, a connection of a session, a block server queue);
 * the handler calls the context's ops. A connection request arrives on a
 * new id whose context is still its listener's: the core parses the
 * request's private data and hands it to the registered service that takes
 * it (struct rdmx_cm_service: message sessions, block queues), which
 * accepts it, pointing the id's context at its own object, or rejects it.
 * The core knows no service by name.
 */
#ifndef _RDMX_CM_H
#define _RDMX_CM_H

#include <linux/list.h>
#include <rdma/rdma_cm.h>

#include "proto.h"

/**
 * struct rdmx_cm_ops - what an rdma_cm id's owner does with its events
 * @event: an event other than a connection request on an id it owns.
 *	Context: rdma_cm's handler for the id (its handler mutex held).
 *	Return: non-zero to have rdma_cm destroy the id.
 */
struct rdmx_cm_ops {
	int (*event)(struct rdma_cm_id *cm_id, struct rdma_cm_event *ev);
};

/**
 * struct rdmx_cm_ctx - an rdma_cm id's context, embedded in its owner
 * @ops: the owner's event handler
 * @trace_id: the session id the rdmx_cm_event tracepoint shows; 0 for
 *	ids of no session
 */
struct rdmx_cm_ctx {
	const struct rdmx_cm_ops *ops;
	u32 trace_id;
};

/**
 * struct rdmx_cm_service - a service that takes connection requests
 * @name: what a request it takes is called in log lines ("block queue")
 * @takes: whether it takes a request of these parameters; services take
 *	disjoint sets
 * @admin_only: only through a listener an administrator added
 *	(RDMX_IOC_LISTENER_ADD, CAP_NET_ADMIN), not one an endpoint's listen
 *	made, which any user may do
 * @connect: take the request: accept it, pointing @cm_id's context at the
 *	service's own struct rdmx_cm_ctx, or reject it (rdmx_cm_reject()).
 *	@req was checked by rdmx_conn_req_parse(). Context: rdma_cm's handler
 *	for @cm_id. Return: non-zero to have rdma_cm destroy @cm_id.
 * @node: on the core's list, from rdmx_cm_service_register() to
 *	rdmx_cm_service_unregister()
 */
struct rdmx_cm_service {
	const char *name;
	bool (*takes)(const struct rdmx_conn_params *req);
	bool admin_only;
	int (*connect)(struct rdma_cm_id *cm_id, struct rdma_cm_event *ev,
		       const struct rdmx_conn_params *req);
	struct list_head node;
};

/*
 * Receiver-not-ready retries of a SEND, asked of the peer by every rdmx
 * connection: a conforming peer never answers RNR (a SEND goes only with
 * a credit, and a credit is a posted receive), so a device fails a SEND
 * that is refused this many times, at most 655 ms apart (the refuser's
 * min_rnr_timer), rather than retrying it, and holding its send queue
 * behind it, for ever (7 would). On InfiniBand and RoCE each side's QP
 * retries as many times as its peer asks, in the REQ or the REP: a peer
 * that asks for 7 is refused (rdmx_cm_rnr_endless()). iWARP has no RNR.
 */
#define RDMX_RNR_RETRY			6

void rdmx_cm_service_register(struct rdmx_cm_service *svc);
void rdmx_cm_service_unregister(struct rdmx_cm_service *svc);
int rdmx_cm_handler(struct rdma_cm_id *cm_id, struct rdma_cm_event *ev);
void rdmx_cm_reject(struct rdma_cm_id *cm_id, enum rdmx_rej_reason reason);
bool rdmx_cm_rnr_endless(struct rdma_cm_id *cm_id,
			 const struct rdma_cm_event *ev);
int rdmx_cm_event_errno(struct rdma_cm_id *cm_id, struct rdma_cm_event *ev,
			enum rdmx_rej_reason *reason);

#if IS_ENABLED(CONFIG_KUNIT)
int rdmx_rej_errno(enum rdmx_rej_reason reason);
#endif

#endif /* _RDMX_CM_H */
