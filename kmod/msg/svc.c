// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx message service: the table of named services, the endpoints
 * listening for channels. An OPEN that arrives on a session names a
 * service; rdmx_svc_find_get() finds the endpoint that takes it.
 *
 * Locking: rdmx_svc_lock (a spinlock) guards the table; the table holds a
 * reference on each endpoint on it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/spinlock.h>
#include <linux/string.h>

#include "core/rdmx.h"
#include "sess.h"

static LIST_HEAD(rdmx_svc_table);
static DEFINE_SPINLOCK(rdmx_svc_lock);

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
	list_for_each_entry(other, &rdmx_svc_table, svc_node) {
		if (!strcmp(other->service, ep->service) &&
		    rdmx_svc_overlap((struct sockaddr *)&other->listener,
				     (struct sockaddr *)&ep->listener)) {
			ret = -EADDRINUSE;
			goto out;
		}
	}
	kref_get(&ep->ref);
	list_add_tail(&ep->svc_node, &rdmx_svc_table);
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
	list_for_each_entry(ep, &rdmx_svc_table, svc_node) {
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
 * rdmx_svc_exit() - check that the table is empty
 *
 * Endpoints hold a reference on the module, so none listens any more.
 *
 * Context: module exit.
 */
void rdmx_svc_exit(void)
{
	WARN_ON(!list_empty(&rdmx_svc_table));
}
