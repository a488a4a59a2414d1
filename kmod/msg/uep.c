// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx: endpoint ioctls of /dev/rdmx (RDMX_IOC_EP_*) and poll.
 *
 * Every open file is an endpoint (file->private_data); ACCEPT hands out a
 * new file for each channel. The calls map onto the kernel API in ep.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/anon_inodes.h>
#include <linux/capability.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/uio.h>

#include "core/rdmx.h"
#include "rma.h"
#include "sess.h"

static_assert(sizeof(struct rdmx_ep_addr) == RDMX_EP_ADDR_SIZE_VER0);
static_assert(sizeof(struct rdmx_ep_accept) == RDMX_EP_ACCEPT_SIZE_VER0);
static_assert(sizeof(struct rdmx_ep_xfer) == RDMX_EP_XFER_SIZE_VER0);
static_assert(sizeof(struct rdmx_msg_vec) == RDMX_MSG_VEC_SIZE_VER0);

#define RDMX_VEC_STATUS	offsetof(struct rdmx_msg_vec, status)
#define RDMX_VEC_LEN	offsetof(struct rdmx_msg_vec, len)
#define RDMX_VEC_FLAGS	offsetof(struct rdmx_msg_vec, flags)
#define RDMX_VEC_IMM	offsetof(struct rdmx_msg_vec, imm)
static_assert(sizeof(struct rdmx_mr_reg) == RDMX_MR_REG_SIZE_VER0);
static_assert(sizeof(struct rdmx_mr_dereg) == RDMX_MR_DEREG_SIZE_VER0);
static_assert(sizeof(struct rdmx_rma) == RDMX_RMA_SIZE_VER0);
static_assert(sizeof(struct rdmx_rma_op) == RDMX_RMA_OP_SIZE_VER0);
static_assert(sizeof(struct rdmx_events) == RDMX_EVENTS_SIZE_VER0);
static_assert(sizeof(struct rdmx_event) == RDMX_EVENT_SIZE_VER0);
static_assert(RDMX_TOKEN_READ == RDMX_ACCESS_REMOTE_READ);
static_assert(RDMX_TOKEN_WRITE == RDMX_ACCESS_REMOTE_WRITE);
static_assert(RDMX_TOKEN_ATOMIC == RDMX_ACCESS_REMOTE_ATOMIC);
static_assert(sizeof(struct rdmx_token_hdr) + 4 * RDMX_TOKEN_KEYS_MAX <=
	      RDMX_TOKEN_MAX);
static_assert(sizeof(struct rdmx_ep_info) == RDMX_EP_INFO_SIZE_VER0);

/*
 * Checks shared by LISTEN and CONNECT: the name must be NUL-padded, as
 * reserved bytes are zero.
 */
static int rdmx_ep_addr_check(const struct rdmx_ep_addr *a, bool listen,
			      struct sockaddr_storage *ss)
{
	if (a->flags || (listen ? a->timeout_ms : a->backlog))
		return -EINVAL;
	if (!rdmx_service_name_valid(a->service, sizeof(a->service)))
		return -EINVAL;
	return rdmx_addr_from_user(&a->addr, ss, listen);
}

/* Read and check the argument of LISTEN or CONNECT. */
static int rdmx_ep_addr_in(void __user *uarg, bool listen,
			   struct rdmx_ep_addr *a, struct sockaddr_storage *ss)
{
	u32 usize;
	int ret;

	ret = rdmx_copy_args_in(a, sizeof(*a), RDMX_EP_ADDR_SIZE_VER0, uarg,
				&usize);
	if (ret)
		return ret;
	return rdmx_ep_addr_check(a, listen, ss);
}

static long rdmx_uep_listen(struct rdmx_ep *ep, void __user *uarg)
{
	struct sockaddr_storage ss;
	struct rdmx_ep_addr a;
	int ret;

	ret = rdmx_ep_addr_in(uarg, true, &a, &ss);
	if (ret)
		return ret;
	if (rdmx_addr_port((struct sockaddr *)&ss) < 1024 &&
	    !capable(CAP_NET_BIND_SERVICE))
		return -EACCES;
	if (a.backlog > 4096)
		return -EINVAL;
	return rdmx_ep_listen(ep, (struct sockaddr *)&ss, a.service, a.backlog);
}

static long rdmx_uep_connect(struct rdmx_ep *ep, void __user *uarg)
{
	struct sockaddr_storage ss;
	struct rdmx_ep_addr a;
	int ret;

	ret = rdmx_ep_addr_in(uarg, false, &a, &ss);
	if (ret)
		return ret;
	return rdmx_ep_connect(ep, (struct sockaddr *)&ss, a.service,
			       a.timeout_ms);
}

static long rdmx_uep_accept(struct file *file, struct rdmx_ep *ep,
			    void __user *uarg)
{
	struct rdmx_ep_accept acc;
	struct rdmx_ep *nep;
	struct file *nfile;
	u32 usize;
	int fd, ret;

	ret = rdmx_copy_args_in(&acc, sizeof(acc), RDMX_EP_ACCEPT_SIZE_VER0,
				uarg, &usize);
	if (ret)
		return ret;
	if (acc.flags & ~(RDMX_ACCEPT_NONBLOCK | RDMX_ACCEPT_CLOEXEC) ||
	    acc.reserved || acc.fd)
		return -EINVAL;

	fd = get_unused_fd_flags(acc.flags & RDMX_ACCEPT_CLOEXEC ? O_CLOEXEC : 0);
	if (fd < 0)
		return fd;
	nep = rdmx_ep_accept(ep, file->f_flags & O_NONBLOCK);
	if (IS_ERR(nep)) {
		ret = PTR_ERR(nep);
		goto out_put_fd;
	}
	nfile = anon_inode_getfile("[rdmx-chan]", rdmx_file_fops(), nep,
				   O_RDWR | (acc.flags & RDMX_ACCEPT_NONBLOCK ?
					     O_NONBLOCK : 0));
	if (IS_ERR(nfile)) {
		ret = PTR_ERR(nfile);
		goto out_release;
	}
	memset(&acc, 0, sizeof(acc));
	acc.fd = fd;
	rdmx_addr_to_user((struct sockaddr *)&nep->sess->peer, &acc.peer);
	ret = rdmx_copy_args_out(uarg, &acc, sizeof(acc), usize);
	if (ret) {
		fput(nfile);
		put_unused_fd(fd);
		return ret;
	}
	fd_install(fd, nfile);
	return fd;

out_release:
	rdmx_ep_release(nep);
out_put_fd:
	put_unused_fd(fd);
	return ret;
}

static long rdmx_uep_xfer(struct file *file, struct rdmx_ep *ep,
			  void __user *uarg, bool send)
{
	bool nonblock = file->f_flags & O_NONBLOCK;
	struct rdmx_ep_xfer x;
	struct rdmx_msg_vec v;
	struct iov_iter it;
	u32 usize, i, done = 0;
	bool imm = false;
	u32 value = 0;
	long ret;

	ret = rdmx_copy_args_in(&x, sizeof(x), RDMX_EP_XFER_SIZE_VER0, uarg,
				&usize);
	if (ret)
		return ret;
	if (x.flags & ~RDMX_XFER_NONBLOCK || !x.count ||
	    x.count > RDMX_XFER_MAX || x.vec_size < RDMX_MSG_VEC_SIZE_VER0 ||
	    x.vec_size > RDMX_ENTRY_SIZE_MAX)
		return -EINVAL;
	nonblock |= x.flags & RDMX_XFER_NONBLOCK;

	for (i = 0; i < x.count; i++) {
		void __user *uv = u64_to_user_ptr(x.msgs + (u64)i * x.vec_size);

		ret = copy_struct_from_user(&v, sizeof(v), uv, x.vec_size);
		if (ret)
			break;
		if (v.flags || v.imm) {
			ret = -EINVAL;
			break;
		}
		if (send) {
			if (v.len > RDMX_MSG_MAX) {
				ret = -EMSGSIZE;
			} else {
				iov_iter_ubuf(&it, ITER_SOURCE,
					      u64_to_user_ptr(v.addr), v.len);
				ret = rdmx_ep_send(ep, &it, nonblock || done);
			}
		} else {
			iov_iter_ubuf(&it, ITER_DEST, u64_to_user_ptr(v.addr),
				      v.len);
			/* Wait for the first message only. */
			ret = rdmx_ep_recvmsg(ep, &it, nonblock || done, &imm,
					      &value);
			if (ret == -EMSGSIZE) {
				ssize_t need = rdmx_ep_recv_len(ep);

				if (need >= 0)
					v.len = need;
			} else if (ret >= 0) {
				v.len = ret;
				ret = 0;
			}
		}
		if ((ret == -EAGAIN || ret == -ERESTARTSYS) && done)
			break;
		v.status = ret == -ERESTARTSYS ? -EINTR : ret;
		if (ret == -ENODATA && !send) {
			/* End of stream: reported as 0 messages. */
			if (done)
				break;
			x.count = 0;
			return rdmx_copy_args_out(uarg, &x, sizeof(x), usize) ?:
			       0;
		}
		if (put_user(v.status, (s32 __user *)(uv + RDMX_VEC_STATUS)) ||
		    (!send && put_user(v.len, (u32 __user *)(uv + RDMX_VEC_LEN))) ||
		    (imm && (put_user(RDMX_MSG_IMM,
				      (u32 __user *)(uv + RDMX_VEC_FLAGS)) ||
			     put_user(value,
				      (u32 __user *)(uv + RDMX_VEC_IMM))))) {
			ret = -EFAULT;
			break;
		}
		if (ret)
			break;
		done++;
	}
	if (!done)
		return ret;
	x.count = done;
	ret = rdmx_copy_args_out(uarg, &x, sizeof(x), usize);
	return ret ?: done;
}

static long rdmx_uep_info(struct rdmx_ep *ep, void __user *uarg)
{
	struct rdmx_ep_info info;
	struct rdmx_sess *sess;
	unsigned int lane;
	u32 usize;
	int ret;

	ret = rdmx_copy_args_in(&info, sizeof(info), RDMX_EP_INFO_SIZE_VER0,
				uarg, &usize);
	if (ret)
		return ret;
	if (info.flags)
		return -EINVAL;
	memset(&info, 0, sizeof(info));

	spin_lock_bh(&ep->lock);
	info.state = ep->state;
	info.error = ep->error;
	info.queued = ep->rxq_len;
	info.msgs_tx = ep->msgs_tx;
	info.msgs_rx = ep->msgs_rx;
	info.bytes_tx = ep->bytes_tx;
	info.bytes_rx = ep->bytes_rx;
	memcpy(info.service, ep->service, sizeof(info.service));
	sess = ep->sess;
	lane = ep->lane;
	rdmx_addr_to_user((struct sockaddr *)&ep->local, &info.local);
	spin_unlock_bh(&ep->lock);
	if (sess) {
		spin_lock_bh(&sess->lock);
		info.sess_id = sess->id;
		info.sess_state = sess->state;
		info.generation = sess->generation;
		info.credits = sess->lanes[lane].credits.avail;
		rdmx_addr_to_user((struct sockaddr *)&sess->peer, &info.peer);
		spin_unlock_bh(&sess->lock);
	}
	return rdmx_copy_args_out(uarg, &info, sizeof(info), usize);
}

static long rdmx_uep_mr_reg(struct rdmx_ep *ep, void __user *uarg)
{
	struct rdmx_mr_reg r;
	struct rdmx_lmem lm;
	u32 usize, tlen;
	void *token;
	long ret;

	ret = rdmx_copy_args_in(&r, sizeof(r), RDMX_MR_REG_SIZE_VER0, uarg,
				&usize);
	if (ret)
		return ret;
	/* @mr_id and @token_len's result are outputs. */
	if (r.flags || r.reserved || !r.access ||
	    r.access & ~(RDMX_ACCESS_REMOTE_READ | RDMX_ACCESS_REMOTE_WRITE |
			 RDMX_ACCESS_REMOTE_ATOMIC) ||
	    !r.length || r.length > RDMX_MR_MAX)
		return -EINVAL;
	ret = rdmx_ep_rma_ready(ep);
	if (ret)
		return ret;
	tlen = min_t(u32, r.token_len, RDMX_TOKEN_MAX);
	token = kzalloc(RDMX_TOKEN_MAX, GFP_KERNEL);
	if (!token)
		return -ENOMEM;
	/* The device may write what remote writers and atomics may. */
	ret = rdmx_lmem_pin(&lm, r.addr, r.length,
			    r.access & (RDMX_ACCESS_REMOTE_WRITE |
					RDMX_ACCESS_REMOTE_ATOMIC), true);
	if (ret)
		goto out_free;
	ret = rdmx_mr_reg(ep, &lm, r.access, token, &tlen, &r.mr_id);
	if (ret)
		goto out_free;
	r.token_len = tlen;
	if (copy_to_user(u64_to_user_ptr(r.token), token, tlen))
		ret = -EFAULT;
	else
		ret = rdmx_copy_args_out(uarg, &r, sizeof(r), usize);
	if (ret)
		rdmx_ep_mr_dereg(ep, r.mr_id);
out_free:
	kfree(token);
	return ret;
}

static long rdmx_uep_mr_dereg(struct rdmx_ep *ep, void __user *uarg)
{
	struct rdmx_mr_dereg d;
	u32 usize;
	long ret;

	ret = rdmx_copy_args_in(&d, sizeof(d), RDMX_MR_DEREG_SIZE_VER0, uarg,
				&usize);
	if (ret)
		return ret;
	if (d.flags || d.reserved)
		return -EINVAL;
	ret = rdmx_ep_mr_dereg(ep, d.mr_id);
	return ret ?: rdmx_copy_args_out(uarg, &d, sizeof(d), usize);
}

/* Check one operation's fields and take in its token and local memory. */
static int rdmx_uep_rma_op_in(const struct rdmx_rma_op *op, void *tbuf,
			      struct rdmx_token *t, struct rdmx_lmem *lm)
{
	bool atomic = op->opcode == RDMX_RMA_CMP_SWAP ||
		      op->opcode == RDMX_RMA_FETCH_ADD;
	int ret;

	memset(lm, 0, sizeof(*lm));
	/* @status is the kernel's to write: what it holds is ignored. */
	if (op->flags || op->reserved ||
	    op->opcode < RDMX_RMA_READ || op->opcode > RDMX_RMA_FETCH_ADD ||
	    (op->opcode != RDMX_RMA_WRITE_IMM && op->imm) ||
	    (op->opcode != RDMX_RMA_CMP_SWAP && op->swap) ||
	    (!atomic && op->compare_add) ||
	    (atomic && op->length != sizeof(u64)) ||
	    op->length > RDMX_RMA_LEN_MAX ||
	    (!op->length && op->opcode != RDMX_RMA_WRITE_IMM) ||
	    !op->token_len || op->token_len > RDMX_TOKEN_MAX)
		return -EINVAL;
	if (copy_from_user(tbuf, u64_to_user_ptr(op->token), op->token_len))
		return -EFAULT;
	if (rdmx_token_parse(tbuf, op->token_len, t)) {
		pr_info_ratelimited("pid %d: malformed token\n",
				    task_pid_nr(current));
		return -EINVAL;
	}
	if (atomic && (op->local_addr & 7))
		return -EINVAL;
	if (!op->length)
		return 0;
	ret = rdmx_lmem_pin(lm, op->local_addr, op->length,
			    op->opcode == RDMX_RMA_READ || atomic, false);
	return ret;
}

/* Write operation @i's status back into the caller's array. */
static int rdmx_rma_put_status(const struct rdmx_rma *r, u32 i, int status)
{
	void __user *uop = u64_to_user_ptr(r->ops + (u64)i * r->op_size);

	return put_user((s32)status, (s32 __user *)(uop +
			offsetof(struct rdmx_rma_op, status)));
}

static long rdmx_uep_rma(struct file *file, struct rdmx_ep *ep,
			 void __user *uarg)
{
	struct rdmx_rma_batch batch;
	struct rdmx_rma_req **reqs;
	struct rdmx_rma_op op;
	struct rdmx_lmem lm;
	struct rdmx_token t;
	u32 usize, i, done = 0;
	bool async, fault = false;
	struct rdmx_rma r;
	void *tbuf;
	long ret;

	ret = rdmx_copy_args_in(&r, sizeof(r), RDMX_RMA_SIZE_VER0, uarg,
				&usize);
	if (ret)
		return ret;
	if (r.flags & ~RDMX_RMA_ASYNC || !r.count ||
	    r.count > RDMX_RMA_BATCH_MAX || r.op_size < RDMX_RMA_OP_SIZE_VER0 ||
	    r.op_size > RDMX_ENTRY_SIZE_MAX)
		return -EINVAL;
	ret = rdmx_ep_rma_ready(ep);
	if (ret)
		return ret;
	async = r.flags & RDMX_RMA_ASYNC;
	tbuf = kmalloc(RDMX_TOKEN_MAX, GFP_KERNEL);
	reqs = kcalloc(r.count, sizeof(*reqs), GFP_KERNEL);
	if (!tbuf || !reqs) {
		ret = -ENOMEM;
		goto out_free;
	}
	rdmx_rma_batch_init(&batch);

	for (i = 0; i < r.count; i++) {
		void __user *uop = u64_to_user_ptr(r.ops + (u64)i * r.op_size);

		ret = copy_struct_from_user(&op, sizeof(op), uop, r.op_size);
		if (ret)
			break;
		ret = rdmx_uep_rma_op_in(&op, tbuf, &t, &lm);
		if (!ret)
			ret = rdmx_rma_submit(ep, async ? NULL : &batch,
					      op.opcode, op.imm, &t,
					      op.remote_offset, &lm,
					      op.compare_add, op.swap,
					      op.user_data, &reqs[i]);
		if (ret) {
			if (ret == -EINTR && done)
				ret = 0;
			else if (rdmx_rma_put_status(&r, i, ret))
				ret = -EFAULT;
			break;
		}
		done++;
	}
	if (!async) {
		rdmx_rma_batch_wait(&batch);
		for (i = 0; i < done; i++) {
			if (rdmx_rma_put_status(&r, i, reqs[i]->status))
				fault = true;
			rdmx_rma_req_free(reqs[i]);
		}
	}
	/* Statuses the caller cannot see: the call fails, though they ran. */
	if (fault) {
		ret = -EFAULT;
	} else if (done) {
		r.count = done;
		ret = rdmx_copy_args_out(uarg, &r, sizeof(r), usize) ?: done;
	}
out_free:
	kfree(reqs);
	kfree(tbuf);
	return ret;
}

static long rdmx_uep_events(struct file *file, struct rdmx_ep *ep,
			    void __user *uarg)
{
	bool nonblock = file->f_flags & O_NONBLOCK;
	struct rdmx_event *evs;
	struct rdmx_events e;
	u32 usize, i;
	long ret;
	int n;

	ret = rdmx_copy_args_in(&e, sizeof(e), RDMX_EVENTS_SIZE_VER0, uarg,
				&usize);
	if (ret)
		return ret;
	if (e.flags & ~RDMX_EVENTS_NONBLOCK || !e.count ||
	    e.count > RDMX_RMA_BATCH_MAX ||
	    e.event_size < RDMX_EVENT_SIZE_VER0 ||
	    e.event_size > RDMX_ENTRY_SIZE_MAX)
		return -EINVAL;
	nonblock |= e.flags & RDMX_EVENTS_NONBLOCK;
	evs = kcalloc(e.count, sizeof(*evs), GFP_KERNEL);
	if (!evs)
		return -ENOMEM;
	n = rdmx_ep_events_take(ep, evs, e.count, nonblock);
	if (n < 0) {
		ret = n;
		goto out;
	}
	/*
	 * Taken events are the caller's: a fault below loses them, as a
	 * read() into a bad buffer loses data.
	 */
	for (i = 0; i < n; i++) {
		void __user *ue = u64_to_user_ptr(e.events +
						  (u64)i * e.event_size);

		if (copy_to_user(ue, &evs[i], sizeof(evs[i])) ||
		    clear_user(ue + sizeof(evs[i]),
			       e.event_size - sizeof(evs[i]))) {
			ret = -EFAULT;
			goto out;
		}
	}
	e.count = n;
	ret = rdmx_copy_args_out(uarg, &e, sizeof(e), usize) ?: n;
out:
	kfree(evs);
	return ret;
}

/* SHUTDOWN takes no argument: it must be 0, so one can be added later. */
static long rdmx_uep_shutdown(struct rdmx_ep *ep, void __user *uarg)
{
	if (uarg)
		return -EINVAL;
	return rdmx_ep_shutdown(ep);
}

/**
 * rdmx_uep_ioctl() - an endpoint ioctl
 * @file: the endpoint's file
 * @cmd: ioctl number
 * @uarg: the caller's argument
 *
 * Context: process context.
 * Return: the result, or -ENOIOCTLCMD when @cmd is not an endpoint ioctl.
 */
long rdmx_uep_ioctl(struct file *file, unsigned int cmd, void __user *uarg)
{
	struct rdmx_ep *ep = file->private_data;

	switch (cmd) {
	case RDMX_IOC_EP_LISTEN:
		return rdmx_uep_listen(ep, uarg);
	case RDMX_IOC_EP_ACCEPT:
		return rdmx_uep_accept(file, ep, uarg);
	case RDMX_IOC_EP_CONNECT:
		return rdmx_uep_connect(ep, uarg);
	case RDMX_IOC_EP_SEND:
		return rdmx_uep_xfer(file, ep, uarg, true);
	case RDMX_IOC_EP_RECV:
		return rdmx_uep_xfer(file, ep, uarg, false);
	case RDMX_IOC_EP_SHUTDOWN:
		return rdmx_uep_shutdown(ep, uarg);
	case RDMX_IOC_EP_INFO:
		return rdmx_uep_info(ep, uarg);
	case RDMX_IOC_MR_REG:
		return rdmx_uep_mr_reg(ep, uarg);
	case RDMX_IOC_MR_DEREG:
		return rdmx_uep_mr_dereg(ep, uarg);
	case RDMX_IOC_RMA:
		return rdmx_uep_rma(file, ep, uarg);
	case RDMX_IOC_EP_EVENTS:
		return rdmx_uep_events(file, ep, uarg);
	case RDMX_IOC_BENCH:
		return rdmx_uep_bench(ep, uarg);
	default:
		return -ENOIOCTLCMD;
	}
}

/**
 * rdmx_uep_poll() - readiness of an endpoint
 * @file: the endpoint's file
 * @wait: poll table
 *
 * EPOLLIN: a message, a channel to accept, the end of the stream or an
 * error. EPOLLPRI: a completion event to read (RDMX_IOC_EP_EVENTS).
 * EPOLLOUT: a send would not block. EPOLLHUP once the peer shut
 * down; EPOLLERR once the channel failed.
 *
 * Context: process context.
 * Return: the mask.
 */
__poll_t rdmx_uep_poll(struct file *file, poll_table *wait)
{
	struct rdmx_ep *ep = file->private_data;
	struct rdmx_sess *sess;
	__poll_t mask = 0;
	u32 state;

	poll_wait(file, &ep->wait, wait);
	spin_lock_bh(&ep->lock);
	state = ep->state;
	sess = ep->sess;
	if (ep->rxq_len || !list_empty(&ep->acceptq))
		mask |= EPOLLIN | EPOLLRDNORM;
	if (ep->nr_events)
		mask |= EPOLLPRI;
	spin_unlock_bh(&ep->lock);

	switch (state) {
	case RDMX_EP_CONNECTED:
		poll_wait(file, &sess->wait, wait);
		if (rdmx_sess_writable(sess, ep->lane))
			mask |= EPOLLOUT | EPOLLWRNORM;
		break;
	case RDMX_EP_CLOSED:
		mask |= EPOLLIN | EPOLLRDNORM | EPOLLHUP;
		break;
	case RDMX_EP_ERROR:
		mask |= EPOLLIN | EPOLLERR | EPOLLHUP;
		break;
	default:
		break;
	}
	return mask;
}
