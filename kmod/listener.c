// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx listeners, the one rdma_cm handler (kmod/cm.h) with the services
 * that take connection requests, and the message service's table of named
 * services.
 *
 * A listener is an rdma_cm id listening on an address and port. It is
 * shared by the endpoints listening there (one use each) and by an
 * administrator's RDMX_IOC_LISTENER_ADD (persistent). A listener bound to
 * one address sits on that address's RDMA device; when the device goes,
 * rdma_cm reports DEVICE_REMOVAL and the id is dropped, and the listener
 * binds again when a device is added (RDMX_DEVICE_ADDED). A wildcard
 * listener is not bound to a device: rdma_cm follows devices for it.
 *
 * Locking: rdmx_lst_mutex guards the list and each listener's fields
 * except cm_id, which rdmx_lst_lock also guards, because the CM handler
 * (which must not take the mutex: rdma_destroy_id() under the mutex waits
 * for it) clears it on DEVICE_REMOVAL.
 *
 * The services that take connection requests are registered at module
 * init, before any listener exists, and unregistered at exit, after the
 * last is gone (rdma_destroy_id() waits for the handler): rdmx_cm_svc_mutex
 * guards the list, and the handler holds it only to find a service.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/in.h>
#include <linux/in6.h>
#include <linux/notifier.h>
#include <linux/nsproxy.h>
#include <linux/slab.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>
#include <rdma/ib_cm.h>
#include <rdma/rdma_cm.h>

#include "rdmx.h"
#include "sess.h"
#include "rdmx_trace.h"

static LIST_HEAD(rdmx_listeners);
static DEFINE_MUTEX(rdmx_lst_mutex);
static DEFINE_SPINLOCK(rdmx_lst_lock);
static DEFINE_IDA(rdmx_lst_ida);
static struct work_struct rdmx_lst_rebind_work;

static LIST_HEAD(rdmx_services);
static DEFINE_SPINLOCK(rdmx_svc_lock);

static LIST_HEAD(rdmx_cm_services);
static DEFINE_MUTEX(rdmx_cm_svc_mutex);

#define RDMX_LISTEN_BACKLOG	128

/**
 * rdmx_addr_port() - the port of an IPv4 or IPv6 address
 * @sa: the address
 *
 * Context: any context.
 * Return: the port in host byte order.
 */
u16 rdmx_addr_port(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	return ntohs(((const struct sockaddr_in *)sa)->sin_port);
}

/**
 * rdmx_addr_set_port() - set the port of an IPv4 or IPv6 address
 * @sa: the address
 * @port: the port, host byte order
 *
 * Context: any context.
 */
void rdmx_addr_set_port(struct sockaddr *sa, u16 port)
{
	if (sa->sa_family == AF_INET6)
		((struct sockaddr_in6 *)sa)->sin6_port = htons(port);
	else
		((struct sockaddr_in *)sa)->sin_port = htons(port);
}

static bool rdmx_addr_any(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET6)
		return ipv6_addr_any(&((const struct sockaddr_in6 *)sa)->sin6_addr);
	return ((const struct sockaddr_in *)sa)->sin_addr.s_addr == htonl(INADDR_ANY);
}

/**
 * rdmx_addr_copy() - copy an IPv4 or IPv6 address
 * @dst: destination, zeroed beyond the address
 * @src: the address
 *
 * Context: any context.
 */
void rdmx_addr_copy(struct sockaddr_storage *dst, const struct sockaddr *src)
{
	memset(dst, 0, sizeof(*dst));
	memcpy(dst, src, src->sa_family == AF_INET6 ?
	       sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in));
}

/**
 * rdmx_addr_prepare() - copy an address from a kernel user, default port
 * @dst: the copy
 * @src: an AF_INET or AF_INET6 address; port 0 means RDMX_DEFAULT_PORT
 *
 * Context: any context.
 * Return: 0, or -EAFNOSUPPORT for another family.
 */
int rdmx_addr_prepare(struct sockaddr_storage *dst, const struct sockaddr *src)
{
	if (src->sa_family != AF_INET && src->sa_family != AF_INET6)
		return -EAFNOSUPPORT;
	rdmx_addr_copy(dst, src);
	if (!rdmx_addr_port((struct sockaddr *)dst))
		rdmx_addr_set_port((struct sockaddr *)dst, RDMX_DEFAULT_PORT);
	return 0;
}

/**
 * rdmx_addr_equal() - whether two addresses and ports are the same
 * @a: one
 * @b: the other
 *
 * Context: any context.
 * Return: true when family, address, port (and IPv6 scope) match.
 */
bool rdmx_addr_equal(const struct sockaddr *a, const struct sockaddr *b)
{
	if (a->sa_family != b->sa_family)
		return false;
	if (a->sa_family == AF_INET6) {
		const struct sockaddr_in6 *a6 = (const void *)a, *b6 = (const void *)b;

		return ipv6_addr_equal(&a6->sin6_addr, &b6->sin6_addr) &&
		       a6->sin6_port == b6->sin6_port &&
		       a6->sin6_scope_id == b6->sin6_scope_id;
	}
	return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
	       ((const struct sockaddr_in *)b)->sin_addr.s_addr &&
	       ((const struct sockaddr_in *)a)->sin_port ==
	       ((const struct sockaddr_in *)b)->sin_port;
}

/**
 * rdmx_addr_same_host() - whether two addresses name the same host
 * @a: one
 * @b: the other
 *
 * Ports are ignored: each connection of a session has its own.
 *
 * Context: any context.
 * Return: true when family and address (and IPv6 scope) match.
 */
bool rdmx_addr_same_host(const struct sockaddr *a, const struct sockaddr *b)
{
	if (a->sa_family != b->sa_family)
		return false;
	if (a->sa_family == AF_INET6) {
		const struct sockaddr_in6 *a6 = (const void *)a, *b6 = (const void *)b;

		return ipv6_addr_equal(&a6->sin6_addr, &b6->sin6_addr) &&
		       a6->sin6_scope_id == b6->sin6_scope_id;
	}
	return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
	       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
}

/**
 * rdmx_addr_from_user() - check and convert a uapi address
 * @ua: the caller's struct rdmx_sockaddr
 * @ss: the result
 * @any_ok: whether the any-address is acceptable (listening)
 *
 * rdmx's rdma_cm ids live in the initial network namespace, so an address
 * is only taken from a process in that namespace: one in another would
 * reach the initial namespace's addresses and ports through rdmx.
 *
 * Context: process context (an ioctl).
 * Return: 0, or -EINVAL for an unknown family, bytes set beyond an IPv4
 * address, a scope on IPv4, or an any-address where one is not allowed;
 * -EAFNOSUPPORT for IPv6 on a kernel without it; -EOPNOTSUPP for a caller
 * in another network namespace than the initial one.
 */
int rdmx_addr_from_user(const struct rdmx_sockaddr *ua,
			struct sockaddr_storage *ss, bool any_ok)
{
	u16 port = ua->port ?: RDMX_DEFAULT_PORT;

	memset(ss, 0, sizeof(*ss));
	if (!net_eq(current->nsproxy->net_ns, &init_net)) {
		pr_info_ratelimited("pid %d: refused an address from another network namespace: rdmx works in the initial one only\n",
				    task_pid_nr(current));
		return -EOPNOTSUPP;
	}
	if (ua->family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		if (ua->scope_id || memchr_inv(ua->addr + 4, 0, 12))
			return -EINVAL;
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		memcpy(&sin->sin_addr, ua->addr, 4);
	} else if (ua->family == AF_INET6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		if (!IS_ENABLED(CONFIG_IPV6))
			return -EAFNOSUPPORT;
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		sin6->sin6_scope_id = ua->scope_id;
		memcpy(&sin6->sin6_addr, ua->addr, 16);
	} else {
		return -EINVAL;
	}
	if (!any_ok && rdmx_addr_any((struct sockaddr *)ss))
		return -EINVAL;
	return 0;
}

/**
 * rdmx_addr_to_user() - convert an address for the uapi
 * @sa: an IPv4 or IPv6 address, or an empty one (family 0)
 * @ua: the result
 *
 * Context: any context.
 */
void rdmx_addr_to_user(const struct sockaddr *sa, struct rdmx_sockaddr *ua)
{
	memset(ua, 0, sizeof(*ua));
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *sin = (const void *)sa;

		ua->family = AF_INET;
		ua->port = ntohs(sin->sin_port);
		memcpy(ua->addr, &sin->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const void *)sa;

		ua->family = AF_INET6;
		ua->port = ntohs(sin6->sin6_port);
		ua->scope_id = sin6->sin6_scope_id;
		memcpy(ua->addr, &sin6->sin6_addr, 16);
	}
}

/* ---- listeners ---------------------------------------------------------- */

static struct rdmx_listener *rdmx_listener_find(const struct sockaddr *addr)
{
	struct rdmx_listener *lst;

	lockdep_assert_held(&rdmx_lst_mutex);
	list_for_each_entry(lst, &rdmx_listeners, node)
		if (rdmx_addr_equal((struct sockaddr *)&lst->addr, addr))
			return lst;
	return NULL;
}

/* Create, bind and listen; under the mutex. */
static int rdmx_listener_bind(struct rdmx_listener *lst)
{
	struct rdma_cm_id *cm_id;
	int ret;

	lockdep_assert_held(&rdmx_lst_mutex);
	cm_id = rdma_create_id(&init_net, rdmx_cm_handler, &lst->cm_ctx,
			       RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(cm_id))
		return PTR_ERR(cm_id);
	if (lst->addr.ss_family == AF_INET6)
		rdma_set_afonly(cm_id, 1);
	ret = rdma_bind_addr(cm_id, (struct sockaddr *)&lst->addr);
	if (ret)
		goto out_destroy;
	ret = rdma_listen(cm_id, RDMX_LISTEN_BACKLOG);
	if (ret)
		goto out_destroy;
	spin_lock(&rdmx_lst_lock);
	lst->cm_id = cm_id;
	spin_unlock(&rdmx_lst_lock);
	return 0;

out_destroy:
	rdma_destroy_id(cm_id);
	return ret;
}

static void rdmx_listener_unbind(struct rdmx_listener *lst)
{
	struct rdma_cm_id *cm_id;

	spin_lock(&rdmx_lst_lock);
	cm_id = lst->cm_id;
	lst->cm_id = NULL;
	spin_unlock(&rdmx_lst_lock);
	if (cm_id)
		rdma_destroy_id(cm_id);
}

/*
 * An event on a listening id other than a connection request. Return: 1
 * on DEVICE_REMOVAL of an id nobody else is destroying, so that rdma_cm
 * destroys it; else 0.
 */
static int rdmx_listener_cm_event(struct rdma_cm_id *cm_id,
				  struct rdma_cm_event *ev)
{
	struct rdmx_listener *lst = container_of(cm_id->context,
						 struct rdmx_listener, cm_ctx);
	int ret = 0;

	if (ev->event != RDMA_CM_EVENT_DEVICE_REMOVAL)
		return 0;
	spin_lock(&rdmx_lst_lock);
	if (lst->cm_id == cm_id) {
		lst->cm_id = NULL;
		ret = 1;
	}
	spin_unlock(&rdmx_lst_lock);
	if (ret)
		pr_info("listener %pISpc: its device went away; waiting for one\n",
			&lst->addr);
	return ret;
}

static const struct rdmx_cm_ops rdmx_listener_cm_ops = {
	.event = rdmx_listener_cm_event,
};

static void rdmx_lst_rebind(struct work_struct *work)
{
	struct rdmx_listener *lst;
	bool unbound;

	mutex_lock(&rdmx_lst_mutex);
	list_for_each_entry(lst, &rdmx_listeners, node) {
		spin_lock(&rdmx_lst_lock);
		unbound = !lst->cm_id;
		spin_unlock(&rdmx_lst_lock);
		if (unbound && !rdmx_listener_bind(lst))
			pr_info("listener %pISpc: listening again\n", &lst->addr);
	}
	mutex_unlock(&rdmx_lst_mutex);
}

/* A device was added (RDMX_DEVICE_ADDED): rebind listeners without one. */
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

/**
 * rdmx_listener_get() - listen on an address and port, or share a listener
 * @addr: address (any, or one of this host's) and port
 * @persistent: an administrator's listener (RDMX_IOC_LISTENER_ADD)
 *
 * Context: process context.
 * Return: 0; -EEXIST when a persistent listener is already there;
 * -ENOMEM; or rdma_cm's error (-EADDRNOTAVAIL, -EADDRINUSE, -ENODEV).
 */
int rdmx_listener_get(const struct sockaddr *addr, bool persistent)
{
	struct rdmx_listener *lst;
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
	lst = kzalloc(sizeof(*lst), GFP_KERNEL);
	if (!lst) {
		ret = -ENOMEM;
		goto out;
	}
	lst->cm_ctx.ops = &rdmx_listener_cm_ops;
	rdmx_addr_copy(&lst->addr, addr);
	ret = rdmx_listener_bind(lst);
	if (ret)
		goto out_free;
	ret = ida_alloc_min(&rdmx_lst_ida, 1, GFP_KERNEL);
	if (ret < 0)
		goto out_unbind;
	lst->id = ret;
	ret = 0;
	WRITE_ONCE(lst->persistent, persistent);
	lst->users = !persistent;
	list_add_tail(&lst->node, &rdmx_listeners);
	if (rdmx_sysfs_listener_add(lst))
		pr_warn("listener %pISpc: no sysfs directory\n", &lst->addr);
	pr_info_ratelimited("listening on %pISpc\n", &lst->addr);
	goto out;

out_unbind:
	rdmx_listener_unbind(lst);
out_free:
	kfree(lst);
out:
	mutex_unlock(&rdmx_lst_mutex);
	return ret;
}

static void rdmx_listener_free(struct rdmx_listener *lst)
{
	lockdep_assert_held(&rdmx_lst_mutex);
	list_del(&lst->node);
	rdmx_listener_unbind(lst);
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
 * Whether the listener a connection request came through was added by an
 * administrator. @cm_id is the request's new id, whose context is still
 * the listener's (rdma_cm copies it from the listening id).
 */
static bool rdmx_listener_persistent(struct rdma_cm_id *cm_id)
{
	struct rdmx_cm_ctx *ctx = cm_id->context;
	struct rdmx_listener *lst;

	if (!ctx || ctx->ops != &rdmx_listener_cm_ops)
		return false;
	lst = container_of(ctx, struct rdmx_listener, cm_ctx);
	/* Set and cleared under rdmx_lst_mutex; a snapshot will do. */
	return READ_ONCE(lst->persistent);
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

/* A connection request: to the service that takes it, or rejected. */
static int rdmx_cm_connect_request(struct rdma_cm_id *cm_id,
				   struct rdma_cm_event *ev)
{
	enum rdmx_rej_reason reason = RDMX_REJ_UNKNOWN;
	struct rdmx_cm_service *svc, *found = NULL;
	struct rdmx_conn_params req;

	if (rdmx_conn_req_parse(ev->param.conn.private_data,
				ev->param.conn.private_data_len, &req, &reason))
		goto reject;
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
	if (found->admin_only && !rdmx_listener_persistent(cm_id)) {
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
 * Every id's context is a struct rdmx_cm_ctx (kmod/cm.h); an id created by
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
 * rdmx_listener_device() - the device a listener is bound to, for sysfs
 * @lst: the listener
 * @buf: where to put the name
 * @len: room at @buf
 *
 * Context: process context.
 */
void rdmx_listener_device(struct rdmx_listener *lst, char *buf, size_t len)
{
	buf[0] = '\0';
	spin_lock(&rdmx_lst_lock);
	if (lst->cm_id && lst->cm_id->device)
		strscpy(buf, lst->cm_id->device->name, len);
	spin_unlock(&rdmx_lst_lock);
}

/* ---- services ----------------------------------------------------------- */

/*
 * How closely a listening endpoint's address covers @local: 0 not at all,
 * 1 through the any address of @local's family, 2 the address itself.
 * Families never mix: IPv6 listeners take IPv6 only (rdma_set_afonly()).
 */
static int rdmx_svc_match(const struct sockaddr *lst,
			  const struct sockaddr *local)
{
	if (lst->sa_family != local->sa_family ||
	    rdmx_addr_port(lst) != rdmx_addr_port(local))
		return 0;
	if (rdmx_addr_any(lst))
		return 1;
	return rdmx_addr_equal(lst, local) ? 2 : 0;
}

/*
 * Whether two listening addresses of one service would share connections:
 * the same port and family, and one of them the any address or both the
 * same address.
 */
static bool rdmx_svc_overlap(const struct sockaddr *a, const struct sockaddr *b)
{
	if (a->sa_family != b->sa_family ||
	    rdmx_addr_port(a) != rdmx_addr_port(b))
		return false;
	return rdmx_addr_any(a) || rdmx_addr_any(b) || rdmx_addr_equal(a, b);
}

/**
 * rdmx_svc_add() - publish a listening endpoint's service
 * @ep: the endpoint; the table takes a reference
 *
 * A service name is taken on a port once per address family, as a socket
 * binding is: a listener on the any address and one on a specific
 * address of that family would share connections, so whichever comes
 * second is refused rather than taking the other's.
 *
 * Context: process context.
 * Return: 0, or -EADDRINUSE when the service is taken on that address.
 */
int rdmx_svc_add(struct rdmx_ep *ep)
{
	struct rdmx_ep *other;
	int ret = 0;

	spin_lock(&rdmx_svc_lock);
	list_for_each_entry(other, &rdmx_services, svc_node) {
		if (!strcmp(other->service, ep->service) &&
		    rdmx_svc_overlap((struct sockaddr *)&other->listener,
				     (struct sockaddr *)&ep->listener)) {
			ret = -EADDRINUSE;
			goto out;
		}
	}
	kref_get(&ep->ref);
	list_add_tail(&ep->svc_node, &rdmx_services);
out:
	spin_unlock(&rdmx_svc_lock);
	return ret;
}

/**
 * rdmx_svc_del() - withdraw a listening endpoint's service
 * @ep: the endpoint
 *
 * Context: process context.
 */
void rdmx_svc_del(struct rdmx_ep *ep)
{
	bool was = false;

	spin_lock(&rdmx_svc_lock);
	if (!list_empty(&ep->svc_node)) {
		list_del_init(&ep->svc_node);
		was = true;
	}
	spin_unlock(&rdmx_svc_lock);
	if (was)
		kref_put(&ep->ref, rdmx_ep_kref_release);
}

/**
 * rdmx_svc_find_get() - the endpoint listening for a service
 * @local: the address and port a session arrived on
 * @service: the service name
 *
 * The closest listener takes it: one on @local's own address, else one on
 * the any address of its family. rdmx_svc_add() lets no two listeners tie.
 *
 * Context: process context.
 * Return: the endpoint with a reference, or NULL.
 */
struct rdmx_ep *rdmx_svc_find_get(const struct sockaddr *local,
				  const char *service)
{
	struct rdmx_ep *ep, *found = NULL;
	int m, best = 0;

	spin_lock(&rdmx_svc_lock);
	list_for_each_entry(ep, &rdmx_services, svc_node) {
		if (strcmp(ep->service, service))
			continue;
		m = rdmx_svc_match((struct sockaddr *)&ep->listener, local);
		if (m > best) {
			best = m;
			found = ep;
		}
	}
	if (found)
		kref_get(&found->ref);
	spin_unlock(&rdmx_svc_lock);
	return found;
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
	WARN_ON(!list_empty(&rdmx_services));
}
