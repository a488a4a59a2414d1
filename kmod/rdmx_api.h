/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmx message service: the kernel API.
 *
 * An endpoint either listens on a (port, service) and accepts channels, or
 * connects to (address, port, service). A connected endpoint sends and
 * receives whole messages, reliably, in order and exactly once, across
 * reconnects of the session under it. See Documentation/kernel-api.rst.
 */
#ifndef _RDMX_API_H
#define _RDMX_API_H

#include <linux/socket.h>
#include <linux/types.h>
#include <linux/uio.h>

struct rdmx_ep;

/**
 * struct rdmx_ep_ops - callbacks of a kernel user
 * @data_ready: a message, an end of stream or an error is waiting on a
 *	channel, or a channel is waiting for accept on a listening
 *	endpoint. Called from rdmx's workqueue with no rdmx lock held; it
 *	may sleep, but rdmx's other users wait while it does.
 */
struct rdmx_ep_ops {
	void (*data_ready)(struct rdmx_ep *ep, void *priv);
};

struct rdmx_ep *rdmx_ep_create(const struct rdmx_ep_ops *ops, void *priv);
void rdmx_ep_release(struct rdmx_ep *ep);
int rdmx_ep_listen(struct rdmx_ep *ep, const struct sockaddr *addr,
		   const char *service, unsigned int backlog);
struct rdmx_ep *rdmx_ep_accept(struct rdmx_ep *ep, bool nonblock);
int rdmx_ep_connect(struct rdmx_ep *ep, const struct sockaddr *addr,
		    const char *service, unsigned int timeout_ms);
int rdmx_ep_send(struct rdmx_ep *ep, struct iov_iter *from, bool nonblock);
ssize_t rdmx_ep_recv(struct rdmx_ep *ep, struct iov_iter *to, bool nonblock);
int rdmx_ep_shutdown(struct rdmx_ep *ep);
void rdmx_ep_set_priv(struct rdmx_ep *ep, const struct rdmx_ep_ops *ops,
		      void *priv);

#endif /* _RDMX_API_H */
