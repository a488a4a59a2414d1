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

/**
 * struct rdmx_listener - an rdma_cm listener on an address and port
 * @cm_ctx: what the cm_id's context points to
 * @node: on rdmx_listeners
 * @id: number in /sys/kernel/rdmx/listeners
 * @addr: the address and port
 * @cm_id: the listening id; NULL while its device is gone (then retried
 *	when a device is added)
 * @users: endpoints listening through it
 * @persistent: added with RDMX_IOC_LISTENER_ADD
 * @kobj: /sys/kernel/rdmx/listeners/ID
 * @kobj_added: @kobj is in sysfs
 */
struct rdmx_listener {
	struct rdmx_cm_ctx cm_ctx;
	struct list_head node;
	u32 id;
	struct sockaddr_storage addr;
	struct rdma_cm_id *cm_id;
	unsigned int users;
	bool persistent;
	struct kobject kobj;
	bool kobj_added;
};

void rdmx_listener_device(struct rdmx_listener *lst, char *buf, size_t len);
int rdmx_sysfs_listener_add(struct rdmx_listener *lst);
void rdmx_sysfs_listener_del(struct rdmx_listener *lst);

#endif /* _RDMX_LISTENER_H */
