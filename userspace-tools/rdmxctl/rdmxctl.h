/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmxctl: the context every command handler gets, and shared prototypes.
 */
#ifndef RDMXCTL_H
#define RDMXCTL_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/rdmx.h>

#include "json_writer.h"

#ifndef RDMX_VERSION
#define RDMX_VERSION "0.1.0"
#endif

#define RD_PROG			"rdmxctl"
#define RD_DEVNODE_DEFAULT	"/dev/rdmx"
#define RD_SYSFS_DEFAULT	"/sys"

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
/* Zero, or a compile error when @e is true (as in the kernel). */
#define BUILD_BUG_ON_ZERO(e)	(sizeof(char[1 - 2 * !!(e)]) - 1)

/* Exit statuses */
enum {
	RD_EXIT_OK	= 0,
	RD_EXIT_FAIL	= 1,	/* runtime failure: module, device, sysfs */
	RD_EXIT_USAGE	= 2,	/* bad command line */
};

/**
 * struct rd - state of one rdmxctl run
 * @argc: words left on the command line
 * @argv: the next word is argv[0]
 * @json: -j: print JSON instead of text
 * @pretty: -p: indent the JSON
 * @stats: -s: more statistics (per-queue counters, latency histograms)
 * @want_help: -h was given
 * @want_version: -V was given
 * @text_midline: text output: something is on the current line already,
 *	so the next item needs a separating space
 * @opts_done: a command's "--" was seen: the words left are no options
 * @jw: the JSON writer, when @json
 */
struct rd {
	int argc;
	char **argv;
	bool json;
	bool pretty;
	bool stats;
	bool want_help;
	bool want_version;
	bool text_midline;
	bool opts_done;
	struct json_writer jw;
};

/*
 * One word of a command level. In each table the first entry has no name and
 * runs when no word is left; a { NULL, NULL } entry ends the table.
 */
struct rd_cmd {
	const char *name;
	int (*func)(struct rd *rd);
};

/* Name of one bit of a flags word, for print_flags() */
struct rd_flag_name {
	uint64_t bit;
	const char *name;
};

static inline bool rd_no_arg(const struct rd *rd)
{
	return rd->argc <= 0;
}

static inline const char *rd_argv(const struct rd *rd)
{
	return rd->argv[0];
}

static inline void rd_arg_inc(struct rd *rd)
{
	if (rd->argc > 0) {
		rd->argc--;
		rd->argv++;
	}
}

/* rdmxctl.c */
int rd_exec_cmd(struct rd *rd, const struct rd_cmd *cmds, const char *object);
int rd_no_more_args(struct rd *rd, const char *object);
void rd_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int rd_usage_err(const char *object, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* print.c: one path for text and JSON; a NULL text format means JSON only */
void print_text(struct rd *rd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void print_str(struct rd *rd, const char *key, const char *fmt,
	       const char *val);
void print_uint(struct rd *rd, const char *key, const char *fmt,
		unsigned int val);
void print_u64(struct rd *rd, const char *key, const char *fmt, uint64_t val);
/* print_bool: @fmt takes a string, "yes" or "no"; print_float: a double */
void print_bool(struct rd *rd, const char *key, const char *fmt, bool val);
void print_float(struct rd *rd, const char *key, const char *fmt, double val);
void print_null(struct rd *rd, const char *key, const char *text);
void print_u64_or_null(struct rd *rd, const char *key, const char *label,
		       bool ok, uint64_t val);
void print_flags(struct rd *rd, const char *key,
		 const struct rd_flag_name *names, size_t nr_names,
		 uint64_t bits);
void print_nl(struct rd *rd);
void print_indent(struct rd *rd, int width);
void open_object(struct rd *rd, const char *key);
void close_object(struct rd *rd);
void open_array(struct rd *rd, const char *key);
void close_array(struct rd *rd);

/* util.c: /dev/rdmx and its ioctls */

/**
 * struct rd_errhint - what an errno from /dev/rdmx means to an operator
 * @err: the errno
 * @what: short description ("not found")
 * @why: likely cause, as a question; may be ""
 * @fix: command that helps
 */
struct rd_errhint {
	int err;
	const char *what;
	const char *why;
	const char *fix;
};

const char *rd_devnode(void);
const char *rd_sysfs(void);
int rd_devnode_open(void);
const struct rd_errhint *rd_devnode_errhint(int err);
void rd_devnode_err(int err);
int rd_get_info(int fd, struct rdmx_info *info);
int rd_list_devices(int fd, struct rdmx_device_info **devs,
		    unsigned int *count);
int rd_open_checked(struct rdmx_info *info);
int rd_open_checked_flags(struct rdmx_info *info, int oflags);
int rd_file_load(const char *name, uint64_t max, unsigned char **data,
		 size_t *len);
int rd_file_save(const char *name, const void *buf, size_t len);

/* sysfs.c: bounded reads of small files, sorted directory listings */
struct dirent;

int rd_pathf(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
bool rd_exists(const char *path);
int rd_read_file(const char *path, char *buf, size_t size);
int rd_read_ulong(const char *path, unsigned long *val);
int rd_read_u64(const char *path, uint64_t *val);
int rd_scandir(const char *path, struct dirent ***list);
void rd_freedir(struct dirent **list, int n);
int rd_rdmx_objects(const char *kind, char *path, size_t size,
		    struct dirent ***list);
int rd_object_id(const char *name, unsigned int *id);
int rd_object_attr(const char *dir, const char *attr, char *buf, size_t size);
int rd_object_u64(const char *dir, const char *attr, uint64_t *val);

/* args.c: options and values of one command's own words */

/**
 * struct rd_opt - an option a command takes after its name
 * @id: what rd_getopt() returns for it, >= 0
 * @short_name: the letter of "-x VALUE", or 0 for none
 * @long_name: the name of "--name VALUE" (also "--name=VALUE")
 * @value: the option takes a value
 *
 * A table of them ends with an entry whose @long_name is NULL.
 */
struct rd_opt {
	int id;
	char short_name;
	const char *long_name;
	bool value;
};

enum {
	RD_OPT_END	= -1,	/* no words left */
	RD_OPT_WORD	= -2,	/* a word that is no option */
	RD_OPT_HELP	= -3,	/* -h or --help */
	RD_OPT_ERR	= -4,	/* a usage error, already reported */
};

int rd_getopt(struct rd *rd, const char *object, const struct rd_opt *opts,
	      const char **val);
int rd_parse_ulong(const char *s, unsigned long min, unsigned long max,
		   unsigned long *val);
int rd_parse_u64(const char *s, bool suffix, uint64_t min, uint64_t max,
		 uint64_t *val);
int rd_parse_port(const char *object, const char *s, unsigned int *port);
int rd_parse_ms(const char *s, uint64_t unit_ms, uint64_t min, uint64_t max,
		uint64_t *ms);
int rd_parse_secs(const char *s, unsigned long max, unsigned long *secs);
int rd_check_service(const char *object, const char *name);

/* addr.c: addresses of the message service */

/* "[ffff:...:ffff%ifname]:65535" and a NUL */
#define RD_ADDRSTRLEN	96

int rd_addr_parse(const char *s, unsigned int port, struct rdmx_sockaddr *sa);
void rd_addr_any(unsigned int port, struct rdmx_sockaddr *sa);
int rd_write_all(int fd, const void *buf, size_t len);
int rd_listen_addr(const char *object, const char *addr, const char *port_arg,
		   unsigned int *port, struct rdmx_sockaddr *sa);
int rd_host_port(const char *s, char *host, size_t size, unsigned int *port);
int rd_unbracket(const char *s, char *buf, size_t size);
int rd_addr_resolve(const char *host, unsigned int port,
		    struct rdmx_sockaddr **addrs, unsigned int *count);
const char *rd_addr_str(const struct rdmx_sockaddr *sa, char *buf,
			size_t size);

/* ep.c: endpoints of the message service on /dev/rdmx */

/**
 * struct rd_peer - what an endpoint talks to, for messages and hints
 * @host: the host as the user gave it; NULL on the accepting side
 * @port: the port (host byte order)
 * @service: the service name
 * @serve_cmd: the rdmxctl command that serves @service, for the hint when
 *	nothing does ("mr serve -p 7471"); NULL: "msg recv"
 * @addr: the peer's address once connected or accepted
 * @addr_str: @addr as "ADDR:PORT"
 */
struct rd_peer {
	const char *host;
	unsigned int port;
	const char *service;
	const char *serve_cmd;
	struct rdmx_sockaddr addr;
	char addr_str[RD_ADDRSTRLEN];
};

extern volatile sig_atomic_t rd_ep_stop;

void rd_ep_err(int err, const struct rd_peer *peer, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int rd_ep_open(void);
int rd_ep_connect(struct rd_peer *peer, unsigned int timeout_ms);
int rd_ep_listen(const struct rdmx_sockaddr *local, const char *service);
int rd_ep_accept(int lfd, struct rd_peer *peer);
int rd_ep_send(int fd, struct rdmx_msg_vec *msgs, unsigned int n,
	       unsigned int *done);
int rd_ep_recv(int fd, struct rdmx_msg_vec *msgs, unsigned int n,
	       bool nonblock);
int rd_ep_shutdown(int fd);
int rd_feature_check(uint64_t need, const char *what);
int rd_rma_check(void);
int rd_mr_reg(int fd, void *addr, uint64_t len, uint32_t access,
	      void *token, uint32_t *token_len, uint32_t *mr_id);
int rd_mr_dereg(int fd, uint32_t mr_id);
int rd_rma(int fd, struct rdmx_rma_op *ops, unsigned int n, uint32_t flags);

/* export.c, map.c: the block service */
int rd_blk_open(void);
int rd_blk_open_need(uint64_t need, const char *what);
int rd_check_export_name(const char *object, const char *name);
int rd_parse_allow(const char *s, struct rdmx_export_allow *a);
int rd_parse_ram(const char *s, uint64_t *size);
int rd_parse_disk(const char *s, unsigned int *index);

/* ident.c: export identities */
#define RD_UUID_LEN	37	/* 36 characters and a NUL */
int rd_parse_uuid(const char *s, uint8_t uuid[16]);
void rd_format_uuid(const uint8_t uuid[16], char buf[RD_UUID_LEN]);
int rd_blk_identity(const char *name, const char *path, uint8_t uuid[16],
		    char *src, size_t size);

/* Objects */
int cmd_bench(struct rd *rd);
int cmd_dev(struct rd *rd);
int cmd_doctor(struct rd *rd);
int cmd_config(struct rd *rd);
char *rd_export_words(const char *dir, const char *name);
int cmd_export(struct rd *rd);
int cmd_listen(struct rd *rd);
int rd_listen_words(struct rd *rd, struct rdmx_sockaddr *sa);
int cmd_map(struct rd *rd);
int rd_map_words(struct rd *rd, char *host, size_t size, unsigned int *port,
		 const char **name);
int cmd_monitor(struct rd *rd);
int cmd_mr(struct rd *rd);
int cmd_msg(struct rd *rd);
int cmd_ping(struct rd *rd);
int cmd_rma(struct rd *rd);
int cmd_session(struct rd *rd);
int cmd_unmap(struct rd *rd);
int cmd_version(struct rd *rd);
int version_show(struct rd *rd);

#endif /* RDMXCTL_H */
