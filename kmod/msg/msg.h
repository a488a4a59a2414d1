/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmx message service: what the module's init (kmod/module.c) calls.
 */
#ifndef _RDMX_MSG_H
#define _RDMX_MSG_H

int rdmx_msg_init(void);
void rdmx_msg_exit(void);

#endif /* _RDMX_MSG_H */
