/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmx core: a listener, for listener.c and its sysfs directory (sysfs.c).
 * Services use the functions in rdmx.h.
 */
#ifndef _RDMX_LISTENER_H
#define _RDMX_LISTENER_H

#include <linux/kobject.h>
#include <linux/list.h>
#include <linux/socket.h>

#include "cm.h"

struct rdmx_lport;

/**
 * struct rdmx_listener - an address and port rdmx listens on
 * @node: on rdmx_listeners
 * @lport_node: on its port's @listeners
 * @id: number in /sys/kernel/rdmx/listeners
 * @addr: the address and port
 * @lport: the port's rdma_cm id, which this listener's connections come
 *	through; NULL once the listener is gone
 * @users: endpoints listening through it
 * @persistent: added with RDMX_IOC_LISTENER_ADD
 * @kobj: /sys/kernel/rdmx/listeners/ID
 * @kobj_added: @kobj is in sysfs
 */
struct rdmx_listener {
	struct list_head node;
	struct list_head lport_node;
	u32 id;
	struct sockaddr_storage addr;
	struct rdmx_lport *lport;
	unsigned int users;
	bool persistent;
	struct kobject kobj;
	bool kobj_added;
};

void rdmx_listener_device(struct rdmx_listener *lst, char *buf, size_t len);
int rdmx_sysfs_listener_add(struct rdmx_listener *lst);
void rdmx_sysfs_listener_del(struct rdmx_listener *lst);

#endif /* _RDMX_LISTENER_H */
