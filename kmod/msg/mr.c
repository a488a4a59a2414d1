// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx registered regions: a session's protection domain, pinning and
 * charging of user memory, FRWR registration and invalidation, tokens.
 *
 * A region is cut into chunks of as many pages as one FRWR registration
 * may map (the device's max_fast_reg_page_list_len); each chunk is one MR
 * with its own rkey, and the token lists them. The MRs' iova is not the
 * memory's address: a region's bytes sit at remote addresses
 * (tag << 32) + offset (keeping the offset within the page, as FRWR
 * wants) and tag is a random 31-bit number, so tokens reveal no kernel or
 * user address, and a stale key that the device reuses for a later region
 * of the same session fails the address check; each registration also
 * takes a random key byte.
 *
 * The keys work on every queue pair of the session's protection domain,
 * so a token is a capability: whoever holds it on the peer host may use
 * it. It cannot be derived from another token (one that a user got for
 * its own region): besides the key index, a guess must hit 31 random bits
 * of address and 8 of key, and each miss fails the guesser's connection.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <kunit/visibility.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "rma.h"

/* ---- protection domains ------------------------------------------------- */

/**
 * rdmx_pd_create() - allocate a protection domain on a device
 * @ibdev: the device
 *
 * Context: process context.
 * Return: the PD with one reference, or an ERR_PTR.
 */
static struct rdmx_pd *rdmx_pd_create(struct ib_device *ibdev)
{
	struct rdmx_pd *xpd;
	int ret;

	xpd = kzalloc(sizeof(*xpd), GFP_KERNEL);
	if (!xpd)
		return ERR_PTR(-ENOMEM);
	kref_init(&xpd->ref);
	xpd->rdev = rdmx_device_get_ibdev(ibdev);
	if (!xpd->rdev) {
		ret = -ENODEV;
		goto out_free;
	}
	xpd->pd = ib_alloc_pd(ibdev, 0);
	if (IS_ERR(xpd->pd)) {
		ret = PTR_ERR(xpd->pd);
		goto out_put_dev;
	}
	return xpd;

out_put_dev:
	rdmx_device_put(xpd->rdev);
out_free:
	kfree(xpd);
	return ERR_PTR(ret);
}

static void rdmx_pd_release(struct kref *ref)
{
	struct rdmx_pd *xpd = container_of(ref, struct rdmx_pd, ref);

	ib_dealloc_pd(xpd->pd);
	rdmx_device_put(xpd->rdev);
	kfree(xpd);
}

/**
 * rdmx_pd_put() - drop a PD reference
 * @xpd: the PD, or NULL
 *
 * Context: process context.
 */
void rdmx_pd_put(struct rdmx_pd *xpd)
{
	if (xpd)
		kref_put(&xpd->ref, rdmx_pd_release);
}

static void rdmx_mr_release_ib(struct rdmx_mr *mr);

/**
 * rdmx_sess_pd_get() - the session's PD on a device, for a new connection
 * @sess: the session
 * @ibdev: the connection's device
 *
 * The PD outlives connections on the same device, so registered regions
 * and their tokens survive a reconnect. A connection on another device
 * gets a new PD, and the old regions lose their keys (in sess->pd_work).
 *
 * Context: process context (a CM event handler): takes sess->lock only,
 * since teardown waits for CM handlers while holding sess->mutex, and a
 * registration waits for sess->mutex while holding sess->mr_mutex.
 * Return: a reference to the PD, or an ERR_PTR.
 */
struct rdmx_pd *rdmx_sess_pd_get(struct rdmx_sess *sess,
				 struct ib_device *ibdev)
{
	struct rdmx_pd *xpd, *old = NULL, *new = NULL;

	for (;;) {
		spin_lock_bh(&sess->lock);
		xpd = sess->xpd;
		if (xpd && !sess->pd_gone && xpd->pd->device == ibdev) {
			kref_get(&xpd->ref);
			spin_unlock_bh(&sess->lock);
			break;
		}
		if (new) {
			/* Replace a PD of another (or a departing) device. */
			old = sess->xpd;
			sess->xpd = new;
			sess->pd_gone = false;
			kref_get(&new->ref);
			xpd = new;
			new = NULL;
			spin_unlock_bh(&sess->lock);
			break;
		}
		spin_unlock_bh(&sess->lock);
		new = rdmx_pd_create(ibdev);
		if (IS_ERR(new))
			return new;
	}
	rdmx_pd_put(new);
	if (old) {
		pr_info_ratelimited("session %u: now on %s: registered regions lose their keys\n",
				    sess->id, ibdev->name);
		rdmx_pd_put(old);
		rdmx_sess_queue(sess, &sess->pd_work, 0);
	}
	return xpd;
}

/**
 * rdmx_sess_pd_device_gone() - the device of the session's PD is going
 * @sess: the session
 * @ibdev: the device
 *
 * Context: any context; queues sess->pd_work, which the device's removal
 * waits for (the PD holds a device reference).
 */
void rdmx_sess_pd_device_gone(struct rdmx_sess *sess, struct ib_device *ibdev)
{
	bool queue;

	spin_lock_bh(&sess->lock);
	queue = sess->xpd && sess->xpd->pd->device == ibdev;
	if (queue)
		sess->pd_gone = true;
	spin_unlock_bh(&sess->lock);
	if (queue)
		rdmx_sess_queue(sess, &sess->pd_work, 0);
}

/**
 * rdmx_sess_pd_work() - release what belongs to a departed PD
 * @work: sess->pd_work
 *
 * Regions whose PD is not the session's current one lose their keys; a PD
 * whose device is going is dropped.
 *
 * Context: rdmx's workqueue; holds a session reference, dropped here.
 */
void rdmx_sess_pd_work(struct work_struct *work)
{
	struct rdmx_sess *sess = container_of(to_delayed_work(work),
					      struct rdmx_sess, pd_work);
	struct rdmx_pd *cur, *gone = NULL;
	struct rdmx_mr *mr;

	mutex_lock(&sess->mr_mutex);
	spin_lock_bh(&sess->lock);
	if (sess->pd_gone) {
		gone = sess->xpd;
		sess->xpd = NULL;
		sess->pd_gone = false;
	}
	cur = sess->xpd;
	spin_unlock_bh(&sess->lock);
	list_for_each_entry(mr, &sess->mrs, sess_node)
		if (mr->xpd != cur)
			rdmx_mr_release_ib(mr);
	mutex_unlock(&sess->mr_mutex);
	rdmx_pd_put(gone);
	rdmx_sess_put(sess);
}

/* ---- local memory -------------------------------------------------------- */

/*
 * Charge @npages pinned pages to the caller's RLIMIT_MEMLOCK, as
 * ib_umem_get() does (CAP_IPC_LOCK lifts the limit, not the count).
 */
static int rdmx_pin_charge(unsigned long npages, struct mm_struct **mmp)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	struct mm_struct *mm = current->mm;
	u64 pinned;

	if (!mm)
		return -EFAULT;
	pinned = atomic64_add_return(npages, &mm->pinned_vm);
	if (pinned > limit && !capable(CAP_IPC_LOCK)) {
		atomic64_sub(npages, &mm->pinned_vm);
		pr_info_ratelimited("pid %d: pinning %lu pages goes over RLIMIT_MEMLOCK (%lu pages)\n",
				    task_pid_nr(current), npages, limit);
		return -ENOMEM;
	}
	mmgrab(mm);
	*mmp = mm;
	return 0;
}

static void rdmx_pin_uncharge(struct mm_struct **mmp, unsigned long npages)
{
	if (!*mmp)
		return;
	atomic64_sub(npages, &(*mmp)->pinned_vm);
	mmdrop(*mmp);
	*mmp = NULL;
}

/**
 * rdmx_lmem_pin() - pin user memory
 * @lm: filled in
 * @uaddr: user address
 * @len: bytes, not 0
 * @write: the device will write it
 * @longterm: pinned for long (a region): FOLL_LONGTERM
 *
 * The pages are charged to the caller's RLIMIT_MEMLOCK (its mm's
 * pinned_vm, as ib_umem_get() does) before they are pinned, until
 * rdmx_lmem_release(); CAP_IPC_LOCK lifts the limit.
 *
 * Context: process context.
 * Return: 0, -EINVAL, -ENOMEM (also over RLIMIT_MEMLOCK), -EINTR or
 * -EFAULT.
 */
int rdmx_lmem_pin(struct rdmx_lmem *lm, u64 uaddr, u64 len, bool write,
		  bool longterm)
{
	unsigned int gup = (write ? FOLL_WRITE : 0) |
			   (longterm ? FOLL_LONGTERM : 0);
	unsigned long start = uaddr & PAGE_MASK;
	unsigned long done = 0;
	int n, ret;
	u64 end;

	memset(lm, 0, sizeof(*lm));
	if (!len || check_add_overflow(uaddr, len, &end) ||
	    !access_ok(u64_to_user_ptr(uaddr), len))
		return -EFAULT;
	lm->offset = offset_in_page(uaddr);
	lm->len = len;
	lm->npages = (PAGE_ALIGN(end) - start) >> PAGE_SHIFT;
	lm->user = true;
	lm->dirty = write;
	ret = rdmx_pin_charge(lm->npages, &lm->mm);
	if (ret)
		return ret;
	lm->pages = kvmalloc_array(lm->npages, sizeof(*lm->pages), GFP_KERNEL);
	if (!lm->pages) {
		ret = -ENOMEM;
		goto out_uncharge;
	}
	while (done < lm->npages) {
		n = pin_user_pages_fast(start + (done << PAGE_SHIFT),
					min_t(unsigned long, lm->npages - done,
					      INT_MAX / sizeof(void *)),
					gup, lm->pages + done);
		if (n <= 0) {
			ret = n ?: -EFAULT;
			goto out_unpin;
		}
		done += n;
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			goto out_unpin;
		}
	}
	return 0;

out_unpin:
	unpin_user_pages(lm->pages, done);
	kvfree(lm->pages);
	lm->pages = NULL;
out_uncharge:
	rdmx_pin_uncharge(&lm->mm, lm->npages);
	return ret;
}

/**
 * rdmx_lmem_kernel() - describe a kernel buffer (kmalloc'd or vmalloc'd)
 * @lm: filled in
 * @buf: the buffer
 * @len: bytes, not 0
 *
 * Context: process context.
 * Return: 0, -EINVAL or -ENOMEM.
 */
int rdmx_lmem_kernel(struct rdmx_lmem *lm, void *buf, size_t len)
{
	unsigned long start = (unsigned long)buf & PAGE_MASK;
	unsigned long i;

	memset(lm, 0, sizeof(*lm));
	if (!buf || !len)
		return -EINVAL;
	lm->offset = offset_in_page(buf);
	lm->len = len;
	lm->npages = (PAGE_ALIGN((unsigned long)buf + len) - start) >>
		     PAGE_SHIFT;
	lm->pages = kvmalloc_array(lm->npages, sizeof(*lm->pages), GFP_KERNEL);
	if (!lm->pages)
		return -ENOMEM;
	for (i = 0; i < lm->npages; i++) {
		void *p = (void *)(start + (i << PAGE_SHIFT));

		lm->pages[i] = is_vmalloc_addr(p) ? vmalloc_to_page(p) :
			       virt_to_page(p);
	}
	return 0;
}

/**
 * rdmx_lmem_release() - unpin (user memory) and free the page array
 * @lm: the memory; may be released twice
 *
 * Context: process context; kernel memory (not @lm->user): any context.
 */
void rdmx_lmem_release(struct rdmx_lmem *lm)
{
	if (lm->pages) {
		if (lm->user)
			unpin_user_pages_dirty_lock(lm->pages, lm->npages,
						    lm->dirty);
		kvfree(lm->pages);
		lm->pages = NULL;
	}
	rdmx_pin_uncharge(&lm->mm, lm->npages);
}

/**
 * rdmx_lmem_sgt() - a scatter table for part of local memory
 * @lm: the memory
 * @off: first byte, from the start of @lm
 * @len: bytes, with @off + @len inside @lm
 * @sgt: built here; free with sg_free_table()
 *
 * Context: process context.
 * Return: 0 or -ENOMEM.
 */
int rdmx_lmem_sgt(const struct rdmx_lmem *lm, u64 off, u64 len,
		  struct sg_table *sgt)
{
	u64 pos = lm->offset + off;
	unsigned long first = pos >> PAGE_SHIFT;
	unsigned long last = (pos + len - 1) >> PAGE_SHIFT;

	return sg_alloc_table_from_pages(sgt, lm->pages + first,
					 last - first + 1,
					 offset_in_page(pos), len, GFP_KERNEL);
}

/* ---- regions ------------------------------------------------------------ */

/**
 * rdmx_access_to_ib() - verbs access flags of region rights
 * @access: RDMX_TOKEN_* rights
 *
 * Remote write and atomics need local write too (the device writes the
 * memory); nothing else is granted.
 *
 * Context: any context.
 * Return: IB_ACCESS_* flags.
 */
u32 rdmx_access_to_ib(u8 access)
{
	u32 ib = 0;

	if (access & RDMX_TOKEN_READ)
		ib |= IB_ACCESS_REMOTE_READ;
	if (access & RDMX_TOKEN_WRITE)
		ib |= IB_ACCESS_REMOTE_WRITE | IB_ACCESS_LOCAL_WRITE;
	if (access & RDMX_TOKEN_ATOMIC)
		ib |= IB_ACCESS_REMOTE_ATOMIC | IB_ACCESS_LOCAL_WRITE;
	return ib;
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_access_to_ib);

/*
 * Runs before the connection's drain returns, so before the connection
 * can be freed: its send queue entry goes back here, not in the waiter.
 */
static void rdmx_mr_wr_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rdmx_mr *mr = container_of(wc->wr_cqe, struct rdmx_mr, cqe);

	rdmx_rma_conn_wrs_done(mr->sess, mr->post_conn, 1);
	mr->post_conn = NULL;
	mr->wc_status = wc->status;
	complete(&mr->done);
}

/*
 * Post one registration or invalidation on the session's connection and
 * wait for it. A registration waits for a connection; an invalidation
 * does not (-EAGAIN), as deregistration that follows it is as final.
 * Once sess->mutex is dropped the connection may be torn down and freed:
 * nothing here touches it after that. The wait cannot be cut short (the
 * device may use the region's keys and pages until the request completes)
 * but it is bounded: the request completes in order behind what was posted
 * before it, which the device completes or fails within its retries (a
 * peer that acknowledges nothing, or refuses SENDs: RDMX_RNR_RETRY), and
 * a send queue on which nothing completes for long fails its connection
 * (rdmx_conn_sq_stalled()), whose drain flushes it.
 */
static int rdmx_mr_post_wait(struct rdmx_mr *mr, struct ib_send_wr *wr,
			     bool wait)
{
	struct rdmx_sess *sess = mr->sess;
	struct rdmx_conn *conn;
	int ret;

	ret = rdmx_rma_get_conn(sess, &conn, 1, wait);
	if (ret)
		return ret;
	if (conn->xpd != mr->xpd) {
		/* A connection on another device: these keys are gone. */
		rdmx_rma_conn_wrs_put(sess, conn, 1);
		mutex_unlock(&sess->mutex);
		return -ENODEV;
	}
	mr->cqe.done = rdmx_mr_wr_done;
	mr->post_conn = conn;
	wr->wr_cqe = &mr->cqe;
	wr->send_flags |= IB_SEND_SIGNALED;
	reinit_completion(&mr->done);
	ret = ib_post_send(conn->qp, wr, NULL);
	if (ret) {
		mr->post_conn = NULL;
		rdmx_rma_conn_wrs_put(sess, conn, 1);
		mutex_unlock(&sess->mutex);
		return ret;
	}
	mutex_unlock(&sess->mutex);
	/* A local work request: it completes, if only flushed. */
	wait_for_completion(&mr->done);
	if (mr->wc_status != IB_WC_SUCCESS) {
		pr_err_ratelimited("session %u: region %u: %s failed: %s\n",
				   sess->id, mr->id,
				   wr->opcode == IB_WR_REG_MR ? "registration" :
				   "invalidation",
				   ib_wc_status_msg(mr->wc_status));
		return -EIO;
	}
	return 0;
}

/*
 * Release the keys and DMA mappings (the pages stay pinned). Idempotent.
 * Under sess->mr_mutex, or before the region is on the session's list.
 */
static void rdmx_mr_release_ib(struct rdmx_mr *mr)
{
	struct ib_device *ibdev;
	u32 i;

	if (!mr->xpd)
		return;
	ibdev = mr->xpd->pd->device;
	for (i = 0; i < mr->nr_keys; i++) {
		if (mr->mrs && mr->mrs[i])
			ib_dereg_mr(mr->mrs[i]);
		if (mr->sgts && mr->sgts[i].sgl) {
			if (mr->sgts[i].nents)
				ib_dma_unmap_sgtable_attrs(ibdev, &mr->sgts[i],
							   DMA_BIDIRECTIONAL,
							   0);
			sg_free_table(&mr->sgts[i]);
		}
	}
	kfree(mr->mrs);
	mr->mrs = NULL;
	kfree(mr->sgts);
	mr->sgts = NULL;
	rdmx_pd_put(mr->xpd);
	mr->xpd = NULL;
}

/* Map and register chunk @i. */
static int rdmx_mr_reg_chunk(struct rdmx_mr *mr, struct rdmx_lmem *lm,
			     u32 i)
{
	struct ib_device *ibdev = mr->xpd->pd->device;
	u64 start = i ? i * mr->chunk - mr->first_off : 0;
	u64 len = min(mr->length - start, i ? mr->chunk :
		      mr->chunk - mr->first_off);
	struct sg_table *sgt = &mr->sgts[i];
	struct ib_reg_wr wr = {};
	struct ib_mr *ibmr;
	int ret, n;

	ret = rdmx_lmem_sgt(lm, start, len, sgt);
	if (ret)
		return ret;
	ret = ib_dma_map_sgtable_attrs(ibdev, sgt, DMA_BIDIRECTIONAL, 0);
	if (ret) {
		sgt->nents = 0;
		return ret;
	}
	ibmr = ib_alloc_mr(mr->xpd->pd, IB_MR_TYPE_MEM_REG,
			   DIV_ROUND_UP(offset_in_page(lm->offset + start) +
					len, PAGE_SIZE));
	if (IS_ERR(ibmr))
		return PTR_ERR(ibmr);
	mr->mrs[i] = ibmr;
	n = ib_map_mr_sg(ibmr, sgt->sgl, sgt->nents, NULL, PAGE_SIZE);
	if (n != sgt->nents || ibmr->length != len) {
		pr_err_ratelimited("session %u: region %u: chunk %u mapped %d of %u entries\n",
				   mr->sess->id, mr->id, i, n, sgt->nents);
		return n < 0 ? n : -EIO;
	}
	/* Keep the offset in the page, hide the address. */
	ibmr->iova = mr->iova + start;
	/* A fresh key byte, so an old key of a reused MR is refused. */
	ib_update_fast_reg_key(ibmr, get_random_u8());
	wr.wr.opcode = IB_WR_REG_MR;
	wr.mr = ibmr;
	wr.key = ibmr->rkey;
	wr.access = rdmx_access_to_ib(mr->access);
	ret = rdmx_mr_post_wait(mr, &wr.wr, true);
	if (ret)
		return ret;
	mr->keys[i] = ibmr->rkey;
	return 0;
}

static void rdmx_mr_free(struct rdmx_mr *mr, struct rdmx_lmem *lm)
{
	rdmx_mr_release_ib(mr);
	rdmx_lmem_release(lm);
	rdmx_pin_uncharge(&mr->mm, mr->npages);
	kfree(mr->keys);
	kfree(mr);
}

/**
 * rdmx_mr_reg() - register memory on an endpoint's session
 * @ep: a connected endpoint
 * @lmem: the memory (the region takes it over, even on failure)
 * @access: RDMX_TOKEN_* rights, at least one
 * @token: room for the token
 * @token_len: in: room at @token; out: the token's length
 * @id: out: the region's id on @ep
 *
 * Context: process context; may sleep.
 * Return: 0; -EINVAL (no rights, unknown rights); -ENOTCONN; -EOPNOTSUPP
 * (atomics on a device without them); -E2BIG (too large for a token on
 * this device); -ENOSPC (@token too small); -ENOMEM (including over
 * RLIMIT_MEMLOCK); -EIO (the device refused the registration).
 */
int rdmx_mr_reg(struct rdmx_ep *ep, struct rdmx_lmem *lmem, u8 access,
		void *token, u32 *token_len, u32 *id)
{
	struct rdmx_sess *sess = ep->sess;
	const struct ib_device_attr *attr;
	struct rdmx_token t = {};
	struct rdmx_mr *mr;
	u32 chunk_pages, i;
	int ret;

	if (!access || (access & ~RDMX_TOKEN_ACCESS_ALL)) {
		rdmx_lmem_release(lmem);
		return -EINVAL;
	}
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr) {
		rdmx_lmem_release(lmem);
		return -ENOMEM;
	}
	mr->access = access;
	mr->sess = sess;
	INIT_LIST_HEAD(&mr->sess_node);
	init_completion(&mr->done);
	mr->first_off = lmem->offset;
	mr->length = lmem->len;
	/*
	 * Reserve the id (lookups see nothing there) and publish the region
	 * only once it is whole: a DEREG racing with this finds no
	 * half-built region.
	 */
	ret = xa_alloc_cyclic(&ep->mrs, &mr->id, NULL, XA_LIMIT(1, U16_MAX),
			      &ep->mr_next, GFP_KERNEL);
	if (ret < 0)
		goto out_free;

	mutex_lock(&sess->mr_mutex);
	spin_lock_bh(&sess->lock);
	mr->xpd = sess->pd_gone ? NULL : sess->xpd;
	if (mr->xpd)
		kref_get(&mr->xpd->ref);
	spin_unlock_bh(&sess->lock);
	ret = -ENOTCONN;
	if (!mr->xpd)
		goto out_unlock;
	attr = &mr->xpd->pd->device->attrs;
	ret = -EOPNOTSUPP;
	if ((access & RDMX_TOKEN_ATOMIC) && attr->atomic_cap == IB_ATOMIC_NONE)
		goto out_unlock;
	if (!(attr->device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS))
		goto out_unlock;
	chunk_pages = min(attr->max_fast_reg_page_list_len,
			  RDMX_MR_CHUNK_PAGES_MAX);
	ret = -EOPNOTSUPP;
	if (!chunk_pages)
		goto out_unlock;
	mr->chunk = (u64)chunk_pages << PAGE_SHIFT;
	mr->nr_keys = rdmx_token_nr_keys(mr->length, mr->first_off, mr->chunk);
	ret = -E2BIG;
	if (!mr->nr_keys || mr->length > attr->max_mr_size)
		goto out_unlock;
	ret = -ENOSPC;
	if (*token_len < rdmx_token_size(mr->nr_keys))
		goto out_unlock;
	ret = -ENOMEM;
	mr->keys = kcalloc(mr->nr_keys, sizeof(*mr->keys), GFP_KERNEL);
	mr->mrs = kcalloc(mr->nr_keys, sizeof(*mr->mrs), GFP_KERNEL);
	mr->sgts = kcalloc(mr->nr_keys, sizeof(*mr->sgts), GFP_KERNEL);
	if (!mr->keys || !mr->mrs || !mr->sgts)
		goto out_unlock;
	/*
	 * A random space for each region (never 0, below 2^63 so that no
	 * region's end overflows): with the key's random byte, a token
	 * cannot be guessed from another (see the comment at the top).
	 */
	mr->iova = ((u64)get_random_u32_inclusive(1, U32_MAX >> 1) << 32) +
		   mr->first_off;
	for (i = 0; i < mr->nr_keys; i++) {
		ret = rdmx_mr_reg_chunk(mr, lmem, i);
		if (ret)
			goto out_unlock;
	}
	/* The region takes over the pages, and their charge (lmem->mm). */
	mr->pages = lmem->pages;
	mr->npages = lmem->npages;
	mr->mm = lmem->mm;
	lmem->pages = NULL;
	lmem->mm = NULL;
	list_add_tail(&mr->sess_node, &sess->mrs);
	mutex_unlock(&sess->mr_mutex);

	t.access = access;
	t.nr_keys = mr->nr_keys;
	t.region = mr->id;
	t.first_off = mr->first_off;
	t.iova = mr->iova;
	t.length = mr->length;
	t.chunk = mr->chunk;
	rdmx_token_pack(token, &t, mr->keys);
	*token_len = rdmx_token_size(mr->nr_keys);
	*id = mr->id;
	/* Last: once published, a DEREG may free it. */
	xa_store(&ep->mrs, mr->id, mr, GFP_KERNEL);
	return 0;

out_unlock:
	mutex_unlock(&sess->mr_mutex);
	xa_erase(&ep->mrs, mr->id);
out_free:
	rdmx_mr_free(mr, lmem);
	return ret;
}

/* Invalidate every key (so in-flight peer access stops), then release. */
static void rdmx_mr_destroy(struct rdmx_mr *mr)
{
	struct rdmx_sess *sess = mr->sess;
	struct rdmx_lmem lm = {
		.pages = mr->pages,
		.npages = mr->npages,
		.user = !!mr->mm,
		.dirty = !!(mr->access & (RDMX_TOKEN_WRITE | RDMX_TOKEN_ATOMIC)),
	};
	u32 i;

	mutex_lock(&sess->mr_mutex);
	for (i = 0; mr->xpd && i < mr->nr_keys; i++) {
		struct ib_send_wr wr = {
			.opcode = IB_WR_LOCAL_INV,
			.ex.invalidate_rkey = mr->keys[i],
		};

		/*
		 * Without a connection, deregistration below invalidates
		 * as surely; LOCAL_INV orders it after what is posted.
		 */
		if (rdmx_mr_post_wait(mr, &wr, false))
			break;
	}
	list_del_init(&mr->sess_node);
	mutex_unlock(&sess->mr_mutex);
	/* ib_dereg_mr() returns once the device can no longer reach it. */
	mr->pages = NULL;
	rdmx_mr_free(mr, &lm);
}

/**
 * rdmx_ep_mr_dereg() - deregister a region
 * @ep: its channel
 * @id: as rdmx_ep_mr_reg() gave it
 *
 * Context: process context; may sleep.
 * Return: 0 or -ENOENT.
 */
int rdmx_ep_mr_dereg(struct rdmx_ep *ep, u32 id)
{
	struct rdmx_mr *mr = xa_erase(&ep->mrs, id);

	if (!mr)
		return -ENOENT;
	rdmx_mr_destroy(mr);
	return 0;
}
EXPORT_SYMBOL_GPL(rdmx_ep_mr_dereg);

/**
 * rdmx_mr_dereg_all() - deregister every region of an endpoint
 * @ep: the endpoint, being released
 *
 * Context: process context; may sleep.
 */
void rdmx_mr_dereg_all(struct rdmx_ep *ep)
{
	struct rdmx_mr *mr;
	unsigned long id;

	xa_for_each(&ep->mrs, id, mr) {
		xa_erase(&ep->mrs, id);
		rdmx_mr_destroy(mr);
	}
}
