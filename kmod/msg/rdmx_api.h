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
ssize_t rdmx_ep_recvmsg(struct rdmx_ep *ep, struct iov_iter *to,
			bool nonblock, bool *imm, u32 *value);
int rdmx_ep_mr_reg(struct rdmx_ep *ep, void *buf, size_t len, u32 access,
		   void *token, u32 *token_len, u32 *id);
int rdmx_ep_mr_dereg(struct rdmx_ep *ep, u32 id);
/**
 * struct rdmx_kop - a one-sided operation, as rdmx_ep_rma() takes it
 * @opcode: RDMX_RMA_*
 * @imm: WRITE_IMM's immediate
 * @local: kernel memory (kmalloc'd or vmalloc'd): READ's destination,
 *	WRITE's source, the atomics' 8-byte aligned result word
 * @token: the peer's token
 * @token_len: its length
 * @remote_offset: region offset
 * @length: bytes
 * @compare_add: CMP_SWAP's compare value, FETCH_ADD's addend
 * @swap: CMP_SWAP's new value
 * @result: atomics: the word's old value
 * @status: 0 or a negative errno
 */
struct rdmx_kop {
	u32 opcode;
	u32 imm;
	void *local;
	const void *token;
	size_t token_len;
	u64 remote_offset;
	u64 length;
	u64 compare_add;
	u64 swap;
	u64 result;
	int status;
};

int rdmx_ep_rma(struct rdmx_ep *ep, struct rdmx_kop *ops, unsigned int n);
int rdmx_ep_shutdown(struct rdmx_ep *ep);
void rdmx_ep_set_priv(struct rdmx_ep *ep, const struct rdmx_ep_ops *ops,
		      void *priv);

#endif /* _RDMX_API_H */
