// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx benchmark: RDMX_IOC_BENCH runs one kind of operation, of one size,
 * many times from the kernel, as krping did, and reports totals,
 * bandwidth and latency statistics (rdmxctl bench prints them in
 * perftest's columns).
 *
 * One-sided operations go through rdmx_rma_submit() like any other, each
 * in a ring slot of its own (a one-operation synchronous batch), @depth
 * slots in flight: the loop waits for the oldest slot, takes its latency
 * (start to completion, stamped by the completion handler) and starts the
 * next operation in it. SEND goes through rdmx_ep_send(), one message at a
 * time: the session's send window is its queue depth.
 *
 * Latencies are kept, as u32 nanoseconds, for the first
 * RDMX_BENCH_SAMPLES_MAX operations; the median, percentiles and standard
 * deviation come from those, the minimum, maximum and mean from all.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/math.h>
#include <linux/math64.h>
#include <linux/overflow.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <linux/uio.h>

#include "rma.h"

static_assert(sizeof(struct rdmx_bench) == RDMX_BENCH_SIZE_VER0);

/* Completions per window of the peak bandwidth, at least. */
#define RDMX_BENCH_PEAK_WINDOW_MIN	16

/**
 * struct rdmx_bench_slot - one operation in flight
 * @batch: the operation's own batch: its completion and time
 * @req: the operation, NULL when the slot is free
 * @start_ns: when it was started
 */
struct rdmx_bench_slot {
	struct rdmx_rma_batch batch;
	struct rdmx_rma_req *req;
	u64 start_ns;
};

/**
 * struct rdmx_bench_run - state of one RDMX_IOC_BENCH
 * @ep: the channel
 * @b: the arguments, and the results as they build up
 * @opcode: RDMX_RMA_* of a one-sided run
 * @tok: the peer's token, parsed (its keys point into @tbuf)
 * @tbuf: the token's bytes
 * @buf: local memory of every operation: @b->length bytes
 * @slots: @b->depth of them (one-sided)
 * @samples: latencies of the first operations, in ns
 * @max_samples: room at @samples
 * @started: operations started
 * @deadline_ns: with a duration, stop starting operations then
 * @start_ns: when the first operation started
 * @last_ns: when the last one completed
 * @lat_sum: sum of all latencies
 * @win_ns: start of the current peak window
 * @win_ops: operations completed before it
 * @window: completions per peak window
 */
struct rdmx_bench_run {
	struct rdmx_ep *ep;
	struct rdmx_bench *b;
	u32 opcode;
	struct rdmx_token tok;
	void *tbuf;
	void *buf;
	struct rdmx_bench_slot *slots;
	u32 *samples;
	u32 max_samples;
	u64 started;
	u64 deadline_ns;
	u64 start_ns;
	u64 last_ns;
	u64 lat_sum;
	u64 win_ns;
	u64 win_ops;
	u32 window;
};

/* The RDMX_RMA_* opcode of a one-sided benchmark op; 0 for SEND. */
static u32 rdmx_bench_opcode(u32 op)
{
	switch (op) {
	case RDMX_BENCH_WRITE:
		return RDMX_RMA_WRITE;
	case RDMX_BENCH_READ:
		return RDMX_RMA_READ;
	case RDMX_BENCH_CMP_SWAP:
		return RDMX_RMA_CMP_SWAP;
	case RDMX_BENCH_FETCH_ADD:
		return RDMX_RMA_FETCH_ADD;
	default:
		return 0;
	}
}

/**
 * rdmx_bench_check() - validate the input of RDMX_IOC_BENCH
 * @b: the caller's struct, as read in
 *
 * Context: any context.
 * Return: 0, or -EINVAL for unknown flags or ops, non-zero reserved
 * fields, and fields out of their bounds (see struct rdmx_bench).
 */
VISIBLE_IF_KUNIT int rdmx_bench_check(const struct rdmx_bench *b)
{
	bool send = b->op == RDMX_BENCH_SEND;
	u64 len_max;

	if (b->flags & ~RDMX_BENCH_PINGPONG || b->reserved0 ||
	    memchr_inv(b->reserved, 0, sizeof(b->reserved)))
		return -EINVAL;
	if (!send && (b->flags || !rdmx_bench_opcode(b->op)))
		return -EINVAL;
	if (!b->depth || b->depth > RDMX_BENCH_DEPTH_MAX ||
	    (send && b->depth != 1))
		return -EINVAL;
	if (b->op == RDMX_BENCH_CMP_SWAP || b->op == RDMX_BENCH_FETCH_ADD)
		len_max = sizeof(u64);
	else
		len_max = send ? RDMX_MSG_MAX : RDMX_BENCH_LEN_MAX;
	if (!b->length || b->length > len_max ||
	    (len_max == sizeof(u64) && b->length != len_max))
		return -EINVAL;
	/* Exactly one of a count and a duration. */
	if (!b->iters == !b->duration_ms ||
	    b->iters > RDMX_BENCH_ITERS_MAX ||
	    b->duration_ms > RDMX_BENCH_DURATION_MAX_MS)
		return -EINVAL;
	if (send)
		return b->token || b->token_len || b->remote_offset ?
		       -EINVAL : 0;
	if (!b->token_len || b->token_len > RDMX_TOKEN_MAX)
		return -EINVAL;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_bench_check);

/**
 * rdmx_bench_rate() - bytes per second
 * @bytes: bytes moved
 * @ns: in this many nanoseconds
 *
 * Context: any context.
 * Return: the rate, 0 when @ns is 0.
 */
VISIBLE_IF_KUNIT u64 rdmx_bench_rate(u64 bytes, u64 ns)
{
	return ns ? mul_u64_u64_div_u64(bytes, NSEC_PER_SEC, ns) : 0;
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_bench_rate);

static int rdmx_bench_cmp_u32(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

/* The sample at percentile @num / @den of @n sorted ones, by nearest rank. */
static u32 rdmx_bench_rank(const u32 *s, u32 n, u32 num, u32 den)
{
	u64 rank = DIV_ROUND_UP_ULL((u64)num * n, den);

	return s[rank ? rank - 1 : 0];
}

/*
 * Standard deviation of @n samples about @mean. A squared deviation fits
 * 64 bits; their sum, which may not, is kept as @hi:@lo and scaled down
 * before dividing (@hi counts carries, at most @n, so the shift is small).
 */
static u64 rdmx_bench_stdev(const u32 *s, u32 n, u64 mean)
{
	u64 lo = 0, hi = 0, d, var;
	unsigned int shift;
	u32 i;

	for (i = 0; i < n; i++) {
		d = s[i] > mean ? s[i] - mean : mean - s[i];
		if (check_add_overflow(lo, d * d, &lo))
			hi++;
	}
	if (!hi) {
		var = div64_u64(lo, n);
	} else {
		shift = fls64(hi);
		var = div64_u64(hi << (64 - shift) | lo >> shift, n) << shift;
	}
	return int_sqrt64(var);
}

/**
 * rdmx_bench_lat_stats() - median, percentiles and spread of samples
 * @samples: latencies in ns; sorted here
 * @n: how many, at least 1
 * @b: out: @lat_median_ns, @lat_p99_ns, @lat_p999_ns, @lat_stdev_ns
 *
 * Percentiles are by nearest rank: the smallest sample that at least that
 * share of the samples does not exceed.
 *
 * Context: process context (sorting may take a while).
 */
VISIBLE_IF_KUNIT void rdmx_bench_lat_stats(u32 *samples, u32 n,
					   struct rdmx_bench *b)
{
	u64 sum = 0;
	u32 i;

	sort(samples, n, sizeof(*samples), rdmx_bench_cmp_u32, NULL);
	for (i = 0; i < n; i++)
		sum += samples[i];
	b->lat_median_ns = rdmx_bench_rank(samples, n, 1, 2);
	b->lat_p99_ns = rdmx_bench_rank(samples, n, 99, 100);
	b->lat_p999_ns = rdmx_bench_rank(samples, n, 999, 1000);
	b->lat_stdev_ns = rdmx_bench_stdev(samples, n, div_u64(sum, n));
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_bench_lat_stats);

/* Account one completed operation of @lat ns that completed at @now. */
static void rdmx_bench_record(struct rdmx_bench_run *r, u64 lat, u64 now)
{
	struct rdmx_bench *b = r->b;
	u64 n;

	if (!b->ops || lat < b->lat_min_ns)
		b->lat_min_ns = lat;
	b->lat_max_ns = max(b->lat_max_ns, lat);
	r->lat_sum += lat;
	if (b->nr_samples < r->max_samples)
		r->samples[b->nr_samples++] = min_t(u64, lat, U32_MAX);
	b->ops++;
	b->bytes += b->length;
	r->last_ns = now;
	n = b->ops - r->win_ops;
	if (n >= r->window) {
		b->bw_peak = max(b->bw_peak,
				 rdmx_bench_rate(n * b->length, now - r->win_ns));
		r->win_ns = now;
		r->win_ops = b->ops;
	}
}

/*
 * Whether to start another operation: not after the count or the
 * duration, nor once a signal is pending (then -EINTR in @err).
 */
static bool rdmx_bench_more(struct rdmx_bench_run *r, int *err)
{
	/* A send window that never closes would never sleep. */
	cond_resched();
	if (signal_pending(current)) {
		*err = -EINTR;
		return false;
	}
	if (r->b->iters)
		return r->started < r->b->iters;
	return ktime_get_ns() < r->deadline_ns;
}

/* Start a one-sided operation in slot @s. */
static int rdmx_bench_start(struct rdmx_bench_run *r,
			    struct rdmx_bench_slot *s)
{
	struct rdmx_lmem lm;
	int ret;

	ret = rdmx_lmem_kernel(&lm, r->buf, r->b->length);
	if (ret)
		return ret;
	rdmx_rma_batch_init(&s->batch);
	s->start_ns = ktime_get_ns();
	/* FETCH_ADD adds 1; CMP_SWAP swaps 0 for 0 (the region stays). */
	ret = rdmx_rma_submit(r->ep, &s->batch, r->opcode, 0, &r->tok,
			      r->b->remote_offset, &lm,
			      r->opcode == RDMX_RMA_FETCH_ADD, 0, 0, &s->req);
	if (ret) {
		s->req = NULL;
		return ret;
	}
	r->started++;
	return 0;
}

/* Wait for the operation in slot @s and account it; Return: its status. */
static int rdmx_bench_reap(struct rdmx_bench_run *r, struct rdmx_bench_slot *s)
{
	int status;

	rdmx_rma_batch_wait(&s->batch);
	status = s->req->status;
	rdmx_rma_req_free(s->req);
	s->req = NULL;
	if (!status)
		rdmx_bench_record(r, s->batch.done_ns - s->start_ns,
				  s->batch.done_ns);
	return status;
}

/*
 * The ring: each turn reaps the oldest slot and starts the next operation
 * in it. Once there is nothing more to start, or an error, it only reaps,
 * until nothing is in flight.
 */
static int rdmx_bench_rma(struct rdmx_bench_run *r)
{
	u32 depth = r->b->depth, head = 0, inflight = 0;
	struct rdmx_bench_slot *s;
	bool more = true;
	int ret = 0, err;

	while (more || inflight) {
		s = &r->slots[head];
		if (s->req) {
			inflight--;
			err = rdmx_bench_reap(r, s);
			if (err && !ret) {
				ret = err;
				more = false;
			}
		}
		more = more && rdmx_bench_more(r, &ret);
		if (more) {
			err = rdmx_bench_start(r, s);
			if (err) {
				ret = err;
				more = false;
			} else {
				inflight++;
			}
		}
		head = head + 1 == depth ? 0 : head + 1;
	}
	return ret;
}

/* Send @len bytes of @r->buf as one message. */
static int rdmx_bench_send_one(struct rdmx_bench_run *r, size_t len)
{
	struct kvec kv = { .iov_base = r->buf, .iov_len = len };
	struct iov_iter it;

	iov_iter_kvec(&it, ITER_SOURCE, &kv, 1, len);
	return rdmx_ep_send(r->ep, &it, false);
}

/* Receive the peer's reply, of at most @r->b->length bytes. */
static int rdmx_bench_recv_one(struct rdmx_bench_run *r)
{
	struct kvec kv = { .iov_base = r->buf, .iov_len = r->b->length };
	struct iov_iter it;
	ssize_t ret;

	iov_iter_kvec(&it, ITER_DEST, &kv, 1, r->b->length);
	ret = rdmx_ep_recv(r->ep, &it, false);
	if (ret == -ERESTARTSYS)
		return -EINTR;
	/* A reply too long, or the end of the stream, breaks the protocol. */
	if (ret == -EMSGSIZE || ret == -ENODATA)
		return -EPROTO;
	return ret < 0 ? ret : 0;
}

/*
 * SEND: messages one after the other (with PINGPONG, each waits for the
 * peer's reply), then an empty one, which the peer answers once it has
 * taken everything: that answer ends the run.
 */
static int rdmx_bench_send(struct rdmx_bench_run *r)
{
	bool pingpong = r->b->flags & RDMX_BENCH_PINGPONG;
	u64 t, now;
	int ret = 0;

	while (rdmx_bench_more(r, &ret)) {
		t = ktime_get_ns();
		ret = rdmx_bench_send_one(r, r->b->length);
		if (!ret && pingpong)
			ret = rdmx_bench_recv_one(r);
		if (ret)
			return ret;
		r->started++;
		now = ktime_get_ns();
		rdmx_bench_record(r, now - t, now);
	}
	if (ret)
		return ret;
	ret = rdmx_bench_send_one(r, 0);
	if (!ret)
		ret = rdmx_bench_recv_one(r);
	r->last_ns = ktime_get_ns();
	return ret;
}

/* Fill in what comes from the totals once the run is over. */
static void rdmx_bench_finish(struct rdmx_bench_run *r)
{
	struct rdmx_bench *b = r->b;

	b->elapsed_ns = r->last_ns - r->start_ns;
	b->bw_avg = rdmx_bench_rate(b->bytes, b->elapsed_ns);
	/* A run's tail, shorter than a window, may beat every window. */
	b->bw_peak = max(b->bw_peak, b->bw_avg);
	if (!b->ops)
		return;
	b->lat_avg_ns = div64_u64(r->lat_sum, b->ops);
	rdmx_bench_lat_stats(r->samples, b->nr_samples, b);
}

/* Take in and parse the peer's token of a one-sided run. */
static int rdmx_bench_token(struct rdmx_bench_run *r)
{
	const struct rdmx_bench *b = r->b;

	r->tbuf = memdup_user(u64_to_user_ptr(b->token), b->token_len);
	if (IS_ERR(r->tbuf)) {
		int ret = PTR_ERR(r->tbuf);

		r->tbuf = NULL;
		return ret;
	}
	if (rdmx_token_parse(r->tbuf, b->token_len, &r->tok)) {
		pr_info_ratelimited("pid %d: malformed token\n",
				    task_pid_nr(current));
		return -EINVAL;
	}
	return 0;
}

static int rdmx_bench_alloc(struct rdmx_bench_run *r)
{
	const struct rdmx_bench *b = r->b;

	r->max_samples = min_t(u64, b->iters ?: RDMX_BENCH_SAMPLES_MAX,
			       RDMX_BENCH_SAMPLES_MAX);
	r->samples = kvmalloc_array(r->max_samples, sizeof(*r->samples),
				    GFP_KERNEL_ACCOUNT);
	/* Zeroed: a READ or WRITE benchmark shows the peer no stale data. */
	r->buf = kvzalloc(b->length, GFP_KERNEL_ACCOUNT);
	if (r->opcode)
		r->slots = kvcalloc(b->depth, sizeof(*r->slots),
				    GFP_KERNEL_ACCOUNT);
	if (!r->samples || !r->buf || (r->opcode && !r->slots))
		return -ENOMEM;
	return 0;
}

static void rdmx_bench_free(struct rdmx_bench_run *r)
{
	kvfree(r->slots);
	kvfree(r->buf);
	kvfree(r->samples);
	kfree(r->tbuf);
}

/**
 * rdmx_uep_bench() - RDMX_IOC_BENCH
 * @ep: a connected channel
 * @uarg: the caller's struct rdmx_bench
 *
 * Context: process context; sleeps for the length of the run.
 * Return: 0, or a negative errno (see struct rdmx_bench and
 * Documentation/uapi.rst).
 */
long rdmx_uep_bench(struct rdmx_ep *ep, void __user *uarg)
{
	struct rdmx_bench_run r = { .ep = ep };
	struct rdmx_bench b;
	u32 usize;
	int ret;

	ret = rdmx_copy_args_in(&b, sizeof(b), RDMX_BENCH_SIZE_VER0, uarg,
				&usize);
	if (ret)
		return ret;
	ret = rdmx_bench_check(&b);
	if (ret)
		return ret;
	ret = rdmx_ep_rma_ready(ep);
	if (ret)
		return ret;
	/* The results start from zero, whatever the caller left there. */
	memset_startat(&b, 0, ops);
	r.b = &b;
	r.opcode = rdmx_bench_opcode(b.op);
	r.window = max_t(u32, b.depth, RDMX_BENCH_PEAK_WINDOW_MIN);
	if (r.opcode) {
		ret = rdmx_bench_token(&r);
		if (ret)
			goto out_free;
	}
	ret = rdmx_bench_alloc(&r);
	if (ret)
		goto out_free;

	r.start_ns = ktime_get_ns();
	r.win_ns = r.start_ns;
	r.last_ns = r.start_ns;
	r.deadline_ns = r.start_ns + (u64)b.duration_ms * NSEC_PER_MSEC;
	ret = r.opcode ? rdmx_bench_rma(&r) : rdmx_bench_send(&r);
	if (ret)
		goto out_free;
	rdmx_bench_finish(&r);
	ret = rdmx_copy_args_out(uarg, &b, sizeof(b), usize);
out_free:
	rdmx_bench_free(&r);
	return ret;
}
