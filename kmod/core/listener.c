// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx listeners, and the one rdma_cm handler (cm.h) with the services
 * that take connection requests.
 *
 * A listener is an address and port rdmx takes connections on. It is
 * shared by the endpoints listening there (one use each) and by an
 * administrator's RDMX_IOC_LISTENER_ADD (persistent).
 *
 * rdmx holds one rdma_cm listening id per port (struct rdmx_lport), bound
 * to the address of the port's first listener. Another listener joins the
 * port when that id covers its address: the same address, or the first is
 * the any-address of the other's family; else it is refused (-EADDRINUSE).
 * Two rdma_cm ids listening on one port of one IB or RoCE device share an
 * IB CM listen id, and rdma_cm handles a connection request with the
 * listening id it found and holds no reference on: destroying one of two
 * such ids while a request for it is handled frees it under the handler.
 * rdmx never makes two (another rdma_cm user on the host still can pair
 * one with rdmx's: that is rdma_cm's to fix, by holding a reference on the
 * listening id it hands a request to). A connection request is taken when
 * a listener covers its local address (that address, on the interface the
 * request came in on, or its family's any-address),
 * and by an administrator's service (the block service) only when one of
 * those an administrator added; a request none covers (the port's id
 * outlives a wider first listener) is refused as one nothing listens for.
 *
 * An id bound to one address sits on that address's RDMA device; when the
 * device goes, rdma_cm reports DEVICE_REMOVAL and the id is dropped, and
 * the port binds again when a device is added (RDMX_DEVICE_ADDED). A
 * wildcard id is not bound to a device: rdma_cm follows devices for it.
 *
 * Locking: rdmx_lst_mutex guards both lists and the fields of listeners
 * and ports. rdmx_lst_lock also guards a port's cm_id and listener list
 * and a listener's lport: the CM handler reads them and must not take the
 * mutex (rdma_destroy_id() under the mutex waits for the handler). A port
 * is freed only after rdma_destroy_id() of its id, so it outlives the
 * handler of every request that came through it.
 *
 * The services that take connection requests are registered at module
 * init, before any listener exists, and unregistered at exit, after the
 * last is gone (rdma_destroy_id() waits for the handler): rdmx_cm_svc_mutex
 * guards the list, and the handler holds it only to find a service.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/in.h>
#include <linux/in6.h>
#include <linux/inetdevice.h>
#include <linux/notifier.h>
#include <linux/nsproxy.h>
#include <linux/slab.h>
#include <net/addrconf.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cm.h>
#include <rdma/rdma_cm.h>

#include "rdmx.h"
#include "listener.h"
#include "rdmx_trace.h"

/**
 * struct rdmx_lport - rdmx's one rdma_cm listening id on a port
 * @cm_ctx: what the cm_id's context points to
 * @node: on rdmx_lports
 * @addr: what @cm_id is bound to: the address of the port's first listener
 * @cm_id: the listening id; NULL while its device is gone (then bound
 *	again when a device is added)
 * @listeners: the listeners on this port, by their lport_node
 */
struct rdmx_lport {
	struct rdmx_cm_ctx cm_ctx;
	struct list_head node;
	struct sockaddr_storage addr;
	struct rdma_cm_id *cm_id;
	struct list_head listeners;
};

static LIST_HEAD(rdmx_listeners);
static LIST_HEAD(rdmx_lports);
static DEFINE_MUTEX(rdmx_lst_mutex);
static DEFINE_SPINLOCK(rdmx_lst_lock);
static DEFINE_IDA(rdmx_lst_ida);
static struct work_struct rdmx_lst_rebind_work;

static LIST_HEAD(rdmx_cm_services);
static DEFINE_MUTEX(rdmx_cm_svc_mutex);

#define RDMX_LISTEN_BACKLOG	128

/* ---- ports ---------------------------------------------------------------- */

static const struct rdmx_cm_ops rdmx_lport_cm_ops;

static struct rdmx_lport *rdmx_lport_find(u16 port)
{
	struct rdmx_lport *lport;

	lockdep_assert_held(&rdmx_lst_mutex);
	list_for_each_entry(lport, &rdmx_lports, node)
		if (rdmx_addr_port((struct sockaddr *)&lport->addr) == port)
			return lport;
	return NULL;
}

/* Whether a listener on @addr takes a request to @local (same port). */
static bool rdmx_lst_covers(const struct sockaddr *addr,
			    const struct sockaddr *local)
{
	return rdmx_addr_equal(addr, local) ||
	       (addr->sa_family == local->sa_family && rdmx_addr_any(addr));
}

/* Create, bind and listen; under the mutex. */
static int rdmx_lport_bind(struct rdmx_lport *lport)
{
	struct rdma_cm_id *cm_id;
	int ret;

	lockdep_assert_held(&rdmx_lst_mutex);
	cm_id = rdma_create_id(&init_net, rdmx_cm_handler, &lport->cm_ctx,
			       RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(cm_id))
		return PTR_ERR(cm_id);
	if (lport->addr.ss_family == AF_INET6)
		rdma_set_afonly(cm_id, 1);
	ret = rdma_bind_addr(cm_id, (struct sockaddr *)&lport->addr);
	if (ret)
		goto out_destroy;
	ret = rdma_listen(cm_id, RDMX_LISTEN_BACKLOG);
	if (ret)
		goto out_destroy;
	spin_lock(&rdmx_lst_lock);
	lport->cm_id = cm_id;
	spin_unlock(&rdmx_lst_lock);
	return 0;

out_destroy:
	rdma_destroy_id(cm_id);
	return ret;
}

/* A port for the first listener on it, at @addr: bound and listening. */
static struct rdmx_lport *rdmx_lport_new(const struct sockaddr *addr)
{
	struct rdmx_lport *lport;
	int ret;

	lport = kzalloc(sizeof(*lport), GFP_KERNEL);
	if (!lport)
		return ERR_PTR(-ENOMEM);
	lport->cm_ctx.ops = &rdmx_lport_cm_ops;
	rdmx_addr_copy(&lport->addr, addr);
	INIT_LIST_HEAD(&lport->listeners);
	ret = rdmx_lport_bind(lport);
	if (ret) {
		kfree(lport);
		return ERR_PTR(ret);
	}
	list_add_tail(&lport->node, &rdmx_lports);
	return lport;
}

/* Stop listening on a port that has no listener left, and free it. */
static void rdmx_lport_release(struct rdmx_lport *lport)
{
	struct rdma_cm_id *cm_id;

	lockdep_assert_held(&rdmx_lst_mutex);
	if (!list_empty(&lport->listeners))
		return;
	list_del(&lport->node);
	spin_lock(&rdmx_lst_lock);
	cm_id = lport->cm_id;
	lport->cm_id = NULL;
	spin_unlock(&rdmx_lst_lock);
	/* Waits for the handler of every request that came through it. */
	if (cm_id)
		rdma_destroy_id(cm_id);
	kfree(lport);
}

/*
 * An event on a listening id other than a connection request. Return: 1
 * on DEVICE_REMOVAL of an id nobody else is destroying, so that rdma_cm
 * destroys it; else 0.
 */
static int rdmx_lport_cm_event(struct rdma_cm_id *cm_id,
			       struct rdma_cm_event *ev)
{
	struct rdmx_lport *lport = container_of(cm_id->context,
						struct rdmx_lport, cm_ctx);
	struct sockaddr_storage addr;
	int ret = 0;

	if (ev->event != RDMA_CM_EVENT_DEVICE_REMOVAL)
		return 0;
	/*
	 * Once cm_id is cleared, rdmx_lport_release() may free the port:
	 * what the log line needs is copied before.
	 */
	spin_lock(&rdmx_lst_lock);
	if (lport->cm_id == cm_id) {
		lport->cm_id = NULL;
		addr = lport->addr;
		ret = 1;
	}
	spin_unlock(&rdmx_lst_lock);
	if (ret)
		pr_info("listener %pISpc: its device went away; waiting for one\n",
			&addr);
	return ret;
}

static const struct rdmx_cm_ops rdmx_lport_cm_ops = {
	.event = rdmx_lport_cm_event,
};

static void rdmx_lst_rebind(struct work_struct *work)
{
	struct rdmx_lport *lport;
	bool unbound;

	mutex_lock(&rdmx_lst_mutex);
	list_for_each_entry(lport, &rdmx_lports, node) {
		spin_lock(&rdmx_lst_lock);
		unbound = !lport->cm_id;
		spin_unlock(&rdmx_lst_lock);
		if (unbound && !rdmx_lport_bind(lport))
			pr_info("listener %pISpc: listening again\n",
				&lport->addr);
	}
	mutex_unlock(&rdmx_lst_mutex);
}

/* A device was added (RDMX_DEVICE_ADDED): rebind ports without an id. */
static int rdmx_lst_device_event(struct notifier_block *nb,
				 unsigned long event, void *data)
{
	if (event == RDMX_DEVICE_ADDED)
		queue_work(rdmx_wq, &rdmx_lst_rebind_work);
	return NOTIFY_OK;
}

static struct notifier_block rdmx_lst_device_nb = {
	.notifier_call = rdmx_lst_device_event,
};

/* ---- listeners ------------------------------------------------------------ */

static struct rdmx_listener *rdmx_listener_find(const struct sockaddr *addr)
{
	struct rdmx_listener *lst;

	lockdep_assert_held(&rdmx_lst_mutex);
	list_for_each_entry(lst, &rdmx_listeners, node)
		if (rdmx_addr_equal((struct sockaddr *)&lst->addr, addr))
			return lst;
	return NULL;
}

/*
 * Whether @addr is the any-address or one of this host's, as binding it
 * would check, for a listener that joins a port bound elsewhere.
 */
static int rdmx_addr_check_local(const struct sockaddr *addr)
{
	struct rdma_dev_addr dev_addr = { .net = &init_net };

	if (rdmx_addr_any(addr))
		return 0;
	return rdma_translate_ip(addr, &dev_addr) ? -EADDRNOTAVAIL : 0;
}

/* The port @addr's listener would join, or NULL for a new one. */
static int rdmx_lport_for(const struct sockaddr *addr,
			  struct rdmx_lport **lportp)
{
	struct rdmx_lport *lport;

	lport = rdmx_lport_find(rdmx_addr_port(addr));
	*lportp = lport;
	if (!lport)
		return 0;
	if (!rdmx_lst_covers((struct sockaddr *)&lport->addr, addr)) {
		pr_info_ratelimited("refused to listen on %pISpc: port %u is rdmx's on %pISc\n",
				    addr, rdmx_addr_port(addr), &lport->addr);
		return -EADDRINUSE;
	}
	return rdmx_addr_check_local(addr);
}

/**
 * rdmx_listener_get() - listen on an address and port, or share a listener
 * @addr: address (any, or one of this host's) and port
 * @persistent: an administrator's listener (RDMX_IOC_LISTENER_ADD)
 *
 * The first listener on a port binds rdmx's rdma_cm id there; a later one
 * on another address joins it when the first is the any-address of its
 * family (see the top of this file).
 *
 * Context: process context.
 * Return: 0; -EEXIST when a persistent listener is already there;
 * -EADDRINUSE when rdmx listens on that port on an address that does not
 * cover @addr, or something else listens there; -ENOMEM; or rdma_cm's
 * error (-EADDRNOTAVAIL, -ENODEV).
 */
int rdmx_listener_get(const struct sockaddr *addr, bool persistent)
{
	struct rdmx_listener *lst;
	struct rdmx_lport *lport;
	int ret = 0;

	mutex_lock(&rdmx_lst_mutex);
	lst = rdmx_listener_find(addr);
	if (lst) {
		if (persistent) {
			if (lst->persistent)
				ret = -EEXIST;
			else
				WRITE_ONCE(lst->persistent, true);
		} else {
			lst->users++;
		}
		goto out;
	}
	ret = rdmx_lport_for(addr, &lport);
	if (ret)
		goto out;
	lst = kzalloc(sizeof(*lst), GFP_KERNEL);
	if (!lst) {
		ret = -ENOMEM;
		goto out;
	}
	rdmx_addr_copy(&lst->addr, addr);
	ret = ida_alloc_min(&rdmx_lst_ida, 1, GFP_KERNEL);
	if (ret < 0)
		goto out_free;
	lst->id = ret;
	if (!lport) {
		lport = rdmx_lport_new(addr);
		if (IS_ERR(lport)) {
			ret = PTR_ERR(lport);
			goto out_ida;
		}
	}
	ret = 0;
	WRITE_ONCE(lst->persistent, persistent);
	lst->users = !persistent;
	list_add_tail(&lst->node, &rdmx_listeners);
	spin_lock(&rdmx_lst_lock);
	lst->lport = lport;
	list_add_tail(&lst->lport_node, &lport->listeners);
	spin_unlock(&rdmx_lst_lock);
	if (rdmx_sysfs_listener_add(lst))
		pr_warn("listener %pISpc: no sysfs directory\n", &lst->addr);
	pr_info_ratelimited("listening on %pISpc\n", &lst->addr);
	goto out;

out_ida:
	ida_free(&rdmx_lst_ida, lst->id);
out_free:
	kfree(lst);
out:
	mutex_unlock(&rdmx_lst_mutex);
	return ret;
}

static void rdmx_listener_free(struct rdmx_listener *lst)
{
	struct rdmx_lport *lport = lst->lport;

	lockdep_assert_held(&rdmx_lst_mutex);
	list_del(&lst->node);
	spin_lock(&rdmx_lst_lock);
	list_del(&lst->lport_node);
	lst->lport = NULL;
	spin_unlock(&rdmx_lst_lock);
	rdmx_lport_release(lport);
	pr_info_ratelimited("stopped listening on %pISpc\n", &lst->addr);
	ida_free(&rdmx_lst_ida, lst->id);
	rdmx_sysfs_listener_del(lst);	/* frees it */
}

/**
 * rdmx_listener_put() - drop a use of a listener
 * @addr: the address it was got with
 * @persistent: dropping the administrator's listener (LISTENER_DEL)
 *
 * Context: process context.
 */
void rdmx_listener_put(const struct sockaddr *addr, bool persistent)
{
	struct rdmx_listener *lst;

	mutex_lock(&rdmx_lst_mutex);
	lst = rdmx_listener_find(addr);
	if (!lst)
		goto out;
	if (persistent)
		WRITE_ONCE(lst->persistent, false);
	else if (!WARN_ON(!lst->users))
		lst->users--;
	if (!lst->users && !lst->persistent)
		rdmx_listener_free(lst);
out:
	mutex_unlock(&rdmx_lst_mutex);
}

/**
 * rdmx_listener_del() - remove an administrator's listener
 * @addr: its address and port
 *
 * Context: process context.
 * Return: 0, or -ENOENT when no persistent listener is there.
 */
int rdmx_listener_del(const struct sockaddr *addr)
{
	struct rdmx_listener *lst;
	bool found;

	mutex_lock(&rdmx_lst_mutex);
	lst = rdmx_listener_find(addr);
	found = lst && lst->persistent;
	mutex_unlock(&rdmx_lst_mutex);
	if (!found)
		return -ENOENT;
	rdmx_listener_put(addr, true);
	return 0;
}

/*
 * Whether @local, a connection request's local address, is an address of
 * the interface the request came in on (@ifindex). rdma_cm checks that
 * for an id bound to an address; for one on the any-address the address
 * is what the peer's request names.
 */
static bool rdmx_addr_on_dev(const struct sockaddr *local, int ifindex)
{
	struct net_device *dev;
	bool ok = false;

	rcu_read_lock();
	dev = ifindex ? dev_get_by_index_rcu(&init_net, ifindex) : NULL;
	if (!dev)
		goto out;
	if (local->sa_family == AF_INET) {
		__be32 a = ((const struct sockaddr_in *)local)->sin_addr.s_addr;
		const struct in_device *in = __in_dev_get_rcu(dev);
		const struct in_ifaddr *ifa;

		if (!in)
			goto out;
		in_dev_for_each_ifa_rcu(ifa, in) {
			if (ifa->ifa_local == a) {
				ok = true;
				break;
			}
		}
	} else if (IS_ENABLED(CONFIG_IPV6) && local->sa_family == AF_INET6) {
		ok = ipv6_chk_addr(&init_net,
				   &((const struct sockaddr_in6 *)local)->sin6_addr,
				   dev, 1);
	}
out:
	rcu_read_unlock();
	return ok;
}

/*
 * Whether a listener on @addr takes a connection request to @local, which
 * came in on interface @ifindex through a port's id bound to the
 * any-address (@port_any) or to @addr itself. rdma_cm sets no scope id in
 * @local: a link-local listener's scope is the interface.
 */
static bool rdmx_lst_takes(const struct sockaddr *addr,
			   const struct sockaddr *local, int ifindex,
			   bool port_any)
{
	if (addr->sa_family != local->sa_family)
		return false;
	if (rdmx_addr_any(addr))
		return true;
	if (addr->sa_family == AF_INET6) {
		const struct sockaddr_in6 *a6 = (const void *)addr;
		const struct sockaddr_in6 *l6 = (const void *)local;

		if (!ipv6_addr_equal(&a6->sin6_addr, &l6->sin6_addr) ||
		    (a6->sin6_scope_id && a6->sin6_scope_id != ifindex))
			return false;
	} else if (((const struct sockaddr_in *)addr)->sin_addr.s_addr !=
		   ((const struct sockaddr_in *)local)->sin_addr.s_addr) {
		return false;
	}
	return !port_any || rdmx_addr_on_dev(local, ifindex);
}

/*
 * Whether a listener takes a connection request (rdmx_lst_takes()). @cm_id
 * is the request's new id, whose context is still its port's (rdma_cm
 * copies it from the listening id). *@persistent: whether one of those
 * that take it an administrator added, so that an endpoint's listener on
 * an address cannot shut the block service out of it.
 */
static bool rdmx_listener_match(struct rdma_cm_id *cm_id, bool *persistent)
{
	const struct sockaddr *local = (struct sockaddr *)&cm_id->route.addr.src_addr;
	struct rdmx_cm_ctx *ctx = cm_id->context;
	int ifindex = cm_id->route.addr.dev_addr.bound_dev_if;
	struct rdmx_listener *lst;
	struct rdmx_lport *lport;
	bool found = false, port_any;

	*persistent = false;
	if (!ctx || ctx->ops != &rdmx_lport_cm_ops)
		return false;
	lport = container_of(ctx, struct rdmx_lport, cm_ctx);
	/* The port's first address, set before any request came through. */
	port_any = rdmx_addr_any((struct sockaddr *)&lport->addr);
	spin_lock(&rdmx_lst_lock);
	list_for_each_entry(lst, &lport->listeners, lport_node) {
		if (!rdmx_lst_takes((struct sockaddr *)&lst->addr, local,
				    ifindex, port_any))
			continue;
		found = true;
		if (READ_ONCE(lst->persistent))
			*persistent = true;
	}
	spin_unlock(&rdmx_lst_lock);
	return found;
}

/**
 * rdmx_cm_service_register() - take connection requests for a service
 * @svc: the service, which must stay until rdmx_cm_service_unregister()
 *
 * Context: process context, before any listener exists (module init).
 */
void rdmx_cm_service_register(struct rdmx_cm_service *svc)
{
	mutex_lock(&rdmx_cm_svc_mutex);
	list_add_tail(&svc->node, &rdmx_cm_services);
	mutex_unlock(&rdmx_cm_svc_mutex);
}

/**
 * rdmx_cm_service_unregister() - stop taking requests for a service
 * @svc: a registered service
 *
 * Context: process context, once every listener is gone (module exit).
 */
void rdmx_cm_service_unregister(struct rdmx_cm_service *svc)
{
	mutex_lock(&rdmx_lst_mutex);
	WARN_ON_ONCE(!list_empty(&rdmx_listeners));
	mutex_unlock(&rdmx_lst_mutex);
	mutex_lock(&rdmx_cm_svc_mutex);
	list_del_init(&svc->node);
	mutex_unlock(&rdmx_cm_svc_mutex);
}

/**
 * rdmx_cm_reject() - reject a connection request, saying why
 * @cm_id: the request's id
 * @reason: what the peer is told (struct rdmx_conn_rej)
 *
 * Context: rdma_cm's handler for @cm_id.
 */
void rdmx_cm_reject(struct rdma_cm_id *cm_id, enum rdmx_rej_reason reason)
{
	struct rdmx_conn_rej rej;

	rdmx_conn_rej_pack(&rej, reason);
	rdma_reject(cm_id, &rej, sizeof(rej), IB_CM_REJ_CONSUMER_DEFINED);
}

/**
 * rdmx_cm_rnr_endless() - whether a peer asks for RNR retries without end
 * @cm_id: the connection's id
 * @ev: the peer's CONNECT_REQUEST (its REQ) or, on the active side,
 *	ESTABLISHED (its REP)
 *
 * On InfiniBand and RoCE, @cm_id's QP retries a SEND the peer refuses as
 * receiver not ready as many times as the peer asks; 7 is without end
 * (RDMX_RNR_RETRY). iWARP has no RNR.
 *
 * Context: rdma_cm's handler for @cm_id.
 * Return: true when @ev asks for retries without end on such a fabric.
 */
bool rdmx_cm_rnr_endless(struct rdma_cm_id *cm_id,
			 const struct rdma_cm_event *ev)
{
	return rdma_ib_or_roce(cm_id->device, cm_id->port_num) &&
	       ev->param.conn.rnr_retry_count > RDMX_RNR_RETRY;
}

/* A connection request: to the service that takes it, or rejected. */
static int rdmx_cm_connect_request(struct rdma_cm_id *cm_id,
				   struct rdma_cm_event *ev)
{
	enum rdmx_rej_reason reason = RDMX_REJ_UNKNOWN;
	struct rdmx_cm_service *svc, *found = NULL;
	struct rdmx_conn_params req;
	bool persistent = false;

	if (!rdmx_listener_match(cm_id, &persistent)) {
		pr_info_ratelimited("refused a connection from %pISpc: nothing listens on %pISpc\n",
				    &cm_id->route.addr.dst_addr,
				    &cm_id->route.addr.src_addr);
		rdmx_cm_reject(cm_id, RDMX_REJ_UNKNOWN);
		return 1;
	}
	if (rdmx_conn_req_parse(ev->param.conn.private_data,
				ev->param.conn.private_data_len, &req, &reason))
		goto reject;
	if (rdmx_cm_rnr_endless(cm_id, ev)) {
		pr_info_ratelimited("refused a connection from %pISpc: it asks for receiver-not-ready retries without end\n",
				    &cm_id->route.addr.dst_addr);
		rdmx_cm_reject(cm_id, RDMX_REJ_PARAMS);
		return 1;
	}
	mutex_lock(&rdmx_cm_svc_mutex);
	list_for_each_entry(svc, &rdmx_cm_services, node) {
		if (svc->takes(&req)) {
			found = svc;
			break;
		}
	}
	mutex_unlock(&rdmx_cm_svc_mutex);
	if (!found) {
		reason = RDMX_REJ_FEATURES;
		goto reject;
	}
	if (found->admin_only && !persistent) {
		pr_warn_ratelimited("refused a %s from %pISpc: its listener %pISpc was not added by an administrator\n",
				    found->name, &cm_id->route.addr.dst_addr,
				    &cm_id->route.addr.src_addr);
		reason = RDMX_REJ_NOT_ALLOWED;
		goto reject;
	}
	return found->connect(cm_id, ev, &req);

reject:
	pr_info_ratelimited("refused a connection from %pISpc: %s\n",
			    &cm_id->route.addr.dst_addr,
			    rdmx_rej_reason_str(reason));
	rdmx_cm_reject(cm_id, reason);
	return 1;
}

/**
 * rdmx_cm_handler() - rdma_cm event handler of every rdmx cm_id
 * @cm_id: the id
 * @ev: the event
 *
 * Every id's context is a struct rdmx_cm_ctx (cm.h); an id created by
 * a connection request inherits its listener's, and the request goes to
 * the service that takes it.
 *
 * Context: rdma_cm's handler context (its handler mutex held).
 * Return: non-zero to have rdma_cm destroy @cm_id.
 */
int rdmx_cm_handler(struct rdma_cm_id *cm_id, struct rdma_cm_event *ev)
{
	struct rdmx_cm_ctx *ctx = cm_id->context;

	trace_rdmx_cm_event(ctx ? ctx->trace_id : 0, ev->event, ev->status);
	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return rdmx_cm_connect_request(cm_id, ev);
	if (!ctx)
		return 0;
	return ctx->ops->event(cm_id, ev);
}

/**
 * rdmx_rej_errno() - the errno a connection refused for @reason fails with
 * @reason: the reason in the peer's reject, RDMX_REJ_UNKNOWN when it gave
 *	none of rdmx's
 *
 * Context: any context.
 * Return: -EAGAIN (busy: try later), -ESTALE (the session is gone),
 * -EPROTO (the peer finds this side's request incompatible: magic,
 * version, parameters, features) or -ECONNREFUSED (anything else: nothing
 * takes such a request there).
 */
VISIBLE_IF_KUNIT int rdmx_rej_errno(enum rdmx_rej_reason reason)
{
	switch (reason) {
	case RDMX_REJ_BUSY:
		return -EAGAIN;
	case RDMX_REJ_STALE:
		return -ESTALE;
	case RDMX_REJ_BAD_MAGIC:
	case RDMX_REJ_VERSION:
	case RDMX_REJ_MALFORMED:
	case RDMX_REJ_PARAMS:
	case RDMX_REJ_FEATURES:
		return -EPROTO;
	default:
		return -ECONNREFUSED;
	}
}
EXPORT_SYMBOL_IF_KUNIT(rdmx_rej_errno);

/**
 * rdmx_cm_event_errno() - what an rdma_cm event means to a connection
 * @cm_id: the connection's id
 * @ev: the event
 * @reason: set to the peer's reason when @ev is a reject with rdmx's data,
 *	else to RDMX_REJ_UNKNOWN
 *
 * The one translation, for every service's connections, of the events
 * that end a connection or an attempt: a reject (rdmx_rej_errno()),
 * resolution failures, an unreachable peer and a connection that could not
 * be established (-EHOSTUNREACH, or rdma_cm's own error when it has one
 * other than a timeout: iWARP reports TCP's), a disconnect (-ECONNRESET),
 * the device's removal (-ENODEV).
 *
 * Context: the id's rdma_cm handler.
 * Return: a negative errno, or 0 for an event that ends nothing.
 */
int rdmx_cm_event_errno(struct rdma_cm_id *cm_id, struct rdma_cm_event *ev,
			enum rdmx_rej_reason *reason)
{
	const void *data;
	u8 len = 0;

	*reason = RDMX_REJ_UNKNOWN;
	switch (ev->event) {
	case RDMA_CM_EVENT_REJECTED:
		data = rdma_consumer_reject_data(cm_id, ev, &len);
		if (!data)
			return -ECONNREFUSED;
		*reason = rdmx_conn_rej_parse(data, len);
		return rdmx_rej_errno(*reason);
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		if (ev->status < 0 && ev->status != -ETIMEDOUT)
			return ev->status;
		return -EHOSTUNREACH;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_ADDR_CHANGE:
		return -ECONNRESET;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		return -ENODEV;
	default:
		return 0;
	}
}

/**
 * rdmx_listener_device() - the device a listener is bound to, for sysfs
 * @lst: the listener
 * @buf: where to put the name
 * @len: room at @buf
 *
 * Context: process context.
 */
void rdmx_listener_device(struct rdmx_listener *lst, char *buf, size_t len)
{
	struct rdma_cm_id *cm_id;

	buf[0] = '\0';
	spin_lock(&rdmx_lst_lock);
	cm_id = lst->lport ? lst->lport->cm_id : NULL;
	if (cm_id && cm_id->device)
		strscpy(buf, cm_id->device->name, len);
	spin_unlock(&rdmx_lst_lock);
}

/**
 * rdmx_listeners_init() - set up the listener table
 *
 * Context: module init.
 * Return: 0.
 */
int rdmx_listeners_init(void)
{
	INIT_WORK(&rdmx_lst_rebind_work, rdmx_lst_rebind);
	return rdmx_device_notifier_register(&rdmx_lst_device_nb);
}

/**
 * rdmx_listeners_exit() - stop every listener
 *
 * Endpoints hold a module reference, so only persistent listeners remain.
 *
 * Context: module exit.
 */
void rdmx_listeners_exit(void)
{
	struct rdmx_listener *lst, *tmp;

	rdmx_device_notifier_unregister(&rdmx_lst_device_nb);
	cancel_work_sync(&rdmx_lst_rebind_work);
	mutex_lock(&rdmx_lst_mutex);
	list_for_each_entry_safe(lst, tmp, &rdmx_listeners, node) {
		WARN_ON(lst->users);
		rdmx_listener_free(lst);
	}
	mutex_unlock(&rdmx_lst_mutex);
}
