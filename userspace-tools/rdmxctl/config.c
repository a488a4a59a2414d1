// SPDX-License-Identifier: GPL-2.0
/*
 * rdmxctl config: listeners, exports, maps and tunables from one file,
 * /etc/rdmx/rdmx.conf, so that they survive a reboot or a module reload.
 *
 * A line is a command of rdmxctl's, its arguments as on the command line:
 *
 *   set NAME VALUE          a tunable, /sys/kernel/rdmx/NAME
 *   listen [-a ADDR] [-p PORT]
 *   export NAME PATH [OPTION...]      as "rdmxctl export add"
 *   map [-p PORT] HOST NAME [OPTION...]   as "rdmxctl map"
 *
 * Words are separated by blanks; '#' starts a comment. "apply" brings up
 * what is missing, in that order, and leaves alone what is there (a
 * listener on the address, an export of the name, a disk of the export
 * from the server), so running it twice changes nothing; "down" takes down
 * what the file names; "save" writes what runs now; "show" prints the
 * file's commands. --server takes the tunables, listeners and exports,
 * --client the tunables and maps.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rdmxctl.h"

#define CONFIG_FILE		"/etc/rdmx/rdmx.conf"
#define CONFIG_WORDS		64	/* most words on a line */
#define CONFIG_LINE_MAX		4096
#define CONFIG_RETRY_SECS	5	/* between attempts of --retry */

/* The tunables "set" takes, and "save" writes. */
static const char *const config_params[] = {
	"hb_interval_ms", "hb_miss_max", "loss_timeout_ms",
	"connect_timeout_ms", "reconnect_max_ms", "queue_depth", "max_qps",
	"blk_inline_read_max", "max_sessions", "max_sessions_per_host",
	"max_blk_queues", "max_blk_queues_per_host", "blk_keepalive_ms",
	"blk_stage_writes",
};

enum config_kind { CFG_SET, CFG_LISTEN, CFG_EXPORT, CFG_MAP, CFG_KINDS };

static const char *const config_verbs[CFG_KINDS] = {
	"set", "listen", "export", "map",
};

/**
 * struct config_line - one command of the file
 * @kind: its verb
 * @lineno: where it is, for messages
 * @argc: words after the verb
 * @argv: the words, NULL-terminated
 * @done: brought up (apply) or found there
 * @addr: a listen line's address, as "listen add" parses it
 * @host: a map line's HOST, as "map" parses it
 * @port: its port
 * @name: the export it maps
 */
struct config_line {
	enum config_kind kind;
	unsigned int lineno;
	int argc;
	char *argv[CONFIG_WORDS + 1];
	bool done;
	struct rdmx_sockaddr addr;
	char host[256];
	unsigned int port;
	const char *name;
};

/**
 * struct config - what a run was told
 * @file: the file
 * @server: --server: tunables, listeners, exports
 * @client: --client: tunables, maps
 * @retry_ms: --retry: how long apply tries again maps that failed;
 *	UINT64_MAX for ever
 * @lines: the file's commands
 * @n: how many
 * @text: the file's contents, which @lines point into
 */
struct config {
	const char *file;
	bool server;
	bool client;
	uint64_t retry_ms;
	struct config_line *lines;
	unsigned int n;
	char *text;
};

enum { CFG_OPT_FILE, CFG_OPT_SERVER, CFG_OPT_CLIENT, CFG_OPT_RETRY };

static const struct rd_opt config_opts[] = {
	{ CFG_OPT_FILE,		'f', "file", true },
	{ CFG_OPT_SERVER,	0, "server", false },
	{ CFG_OPT_CLIENT,	0, "client", false },
	{ CFG_OPT_RETRY,	0, "retry", true },
	{ 0, 0, NULL, false },
};

static int config_help(struct rd *rd)
{
	(void)rd;
	printf("Usage: " RD_PROG " config apply [ -f FILE ] [ --server | --client ] [ --retry TIME|forever ]\n"
	       "       " RD_PROG " config down [ -f FILE ] [ --server | --client ]\n"
	       "       " RD_PROG " config save [ -f FILE ]\n"
	       "       " RD_PROG " config show [ -f FILE ]\n"
	       "Bring up the listeners, exports, maps and tunables FILE names (default\n"
	       CONFIG_FILE "), leaving alone those already there; take them\n"
	       "down; write what runs now to FILE; or print FILE's commands. Each line of\n"
	       "FILE is a command: 'set NAME VALUE' (a tunable of /sys/kernel/rdmx),\n"
	       "'listen [-a ADDR] [-p PORT]', 'export NAME PATH [OPTION...]' as in\n"
	       "'export add', 'map [-p PORT] HOST NAME [OPTION...]' as in 'map'; '#' starts\n"
	       "a comment. --server takes tunables, listeners and exports, --client\n"
	       "tunables and maps. --retry tries maps whose server cannot be reached again\n"
	       "every %d s for TIME (a number with ms, s, m or h) or for ever.\n",
	       CONFIG_RETRY_SECS);
	return RD_EXIT_OK;
}

static bool config_takes(const struct config *c, enum config_kind kind)
{
	switch (kind) {
	case CFG_SET:
		return true;
	case CFG_LISTEN:
	case CFG_EXPORT:
		return c->server;
	default:
		return c->client;
	}
}

/* Split one line into @l; Return: 0, 1 for a blank line, or -1. */
static int config_split(const struct config *c, char *s, struct config_line *l)
{
	char *word, *save = NULL;
	int i;

	s[strcspn(s, "#")] = '\0';
	word = strtok_r(s, " \t\r", &save);
	if (!word)
		return 1;
	for (i = 0; i < CFG_KINDS; i++)
		if (!strcmp(word, config_verbs[i]))
			break;
	if (i == CFG_KINDS) {
		rd_err("%s:%u: unknown command '%s' (set, listen, export or map)",
		       c->file, l->lineno, word);
		return -1;
	}
	l->kind = i;
	l->argc = 0;
	while ((word = strtok_r(NULL, " \t\r", &save))) {
		if (l->argc == CONFIG_WORDS) {
			rd_err("%s:%u: more than %d words", c->file, l->lineno,
			       CONFIG_WORDS);
			return -1;
		}
		l->argv[l->argc++] = word;
	}
	l->argv[l->argc] = NULL;
	return 0;
}

/* Whether NAME is a tunable "set" takes. */
static bool config_param_ok(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(config_params); i++)
		if (!strcmp(name, config_params[i]))
			return true;
	return false;
}

/*
 * What a line must have; a listen or map line is parsed as its command
 * parses it, into @l. Return: 0 or -1.
 */
static int config_check(const struct config *c, struct config_line *l)
{
	struct rd sub = { .argc = l->argc, .argv = l->argv };

	switch (l->kind) {
	case CFG_SET:
		if (l->argc != 2 || !config_param_ok(l->argv[0])) {
			rd_err("%s:%u: expected 'set NAME VALUE', NAME a tunable of /sys/kernel/rdmx",
			       c->file, l->lineno);
			return -1;
		}
		return 0;
	case CFG_EXPORT:
		if (l->argc < 2 || l->argv[0][0] == '-') {
			rd_err("%s:%u: expected 'export NAME PATH [OPTION...]'",
			       c->file, l->lineno);
			return -1;
		}
		return 0;
	case CFG_LISTEN:
		if (rd_listen_words(&sub, &l->addr)) {
			rd_err("%s:%u: expected 'listen [-a ADDR] [-p PORT]'",
			       c->file, l->lineno);
			return -1;
		}
		return 0;
	default:
		if (rd_map_words(&sub, l->host, sizeof(l->host), &l->port,
				 &l->name)) {
			rd_err("%s:%u: expected 'map [-p PORT] HOST NAME [OPTION...]'",
			       c->file, l->lineno);
			return -1;
		}
		return 0;
	}
}

/* Read and split c->file; Return: 0, or RD_EXIT_FAIL after saying why. */
static int config_load(struct config *c)
{
	unsigned char *data;
	char *line, *next;
	unsigned int lineno = 0;
	size_t len;
	int ret;

	ret = rd_file_load(c->file, 1 << 20, &data, &len);
	if (ret) {
		rd_err("%s: %s", c->file, strerror(-ret));
		return RD_EXIT_FAIL;
	}
	c->text = malloc(len + 1);
	if (!c->text) {
		free(data);
		rd_err("out of memory");
		return RD_EXIT_FAIL;
	}
	memcpy(c->text, data, len);
	free(data);
	c->text[len] = '\0';
	if (strlen(c->text) != len) {
		rd_err("%s: not a text file", c->file);
		return RD_EXIT_FAIL;
	}
	for (line = c->text; line; line = next) {
		struct config_line *l;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		if (strlen(line) >= CONFIG_LINE_MAX) {
			rd_err("%s:%u: line too long", c->file, lineno);
			return RD_EXIT_FAIL;
		}
		l = realloc(c->lines, (c->n + 1) * sizeof(*l));
		if (!l) {
			rd_err("out of memory");
			return RD_EXIT_FAIL;
		}
		c->lines = l;
		l = &c->lines[c->n];
		memset(l, 0, sizeof(*l));
		l->lineno = lineno;
		ret = config_split(c, line, l);
		if (ret < 0 || (!ret && config_check(c, l)))
			return RD_EXIT_FAIL;
		if (!ret)
			c->n++;
	}
	return 0;
}

/* Each entry of DIR, for @fn, until it returns true; Return: that. */
static bool config_scan(const char *dir, bool (*fn)(const char *entry,
						    const char *name,
						    const void *arg),
			const void *arg)
{
	char path[PATH_MAX];
	struct dirent **list;
	bool found = false;
	int i, n;

	n = rd_scandir(dir, &list);
	if (n < 0)
		return false;
	for (i = 0; i < n && !found; i++)
		if (list[i]->d_name[0] != '.' &&
		    !rd_pathf(path, sizeof(path), "%s/%s", dir, list[i]->d_name))
			found = fn(path, list[i]->d_name, arg);
	rd_freedir(list, n);
	return found;
}

/* Whether @have ("ADDR:PORT", as sysfs writes it, no scope) is @sa. */
static bool config_addr_is(const char *have, const struct rdmx_sockaddr *sa)
{
	struct rdmx_sockaddr want = *sa;
	char buf[RD_ADDRSTRLEN];

	want.scope_id = 0;
	return !strcmp(have, rd_addr_str(&want, buf, sizeof(buf)));
}

static bool config_listener_is(const char *dir, const char *name,
			       const void *arg)
{
	const struct config_line *l = arg;
	char addr[128], persistent[8];

	(void)name;
	return rd_object_attr(dir, "addr", addr, sizeof(addr)) > 0 &&
	       rd_object_attr(dir, "persistent", persistent,
			      sizeof(persistent)) > 0 &&
	       !strcmp(persistent, "1") && config_addr_is(addr, &l->addr);
}

/**
 * struct config_disk - what config_disk_is() looks for
 * @l: a map line
 * @disk: out, when not NULL: the disk found, rdmxbN
 */
struct config_disk {
	const struct config_line *l;
	char *disk;
};

/* Whether disk @name maps @w->l's export from one of its host's addresses. */
static bool config_disk_is(const char *dir, const char *name,
			   const void *arg)
{
	const struct config_disk *w = arg;
	char path[PATH_MAX], server[128], export[RDMX_EXPORT_NAME_LEN];
	struct rdmx_sockaddr *addrs;
	unsigned int i, n;
	bool match = false;

	if (strncmp(name, "rdmxb", 5) ||
	    rd_pathf(path, sizeof(path), "%s/rdmx", dir) ||
	    rd_object_attr(path, "export", export, sizeof(export)) <= 0 ||
	    rd_object_attr(path, "server", server, sizeof(server)) <= 0 ||
	    strcmp(export, w->l->name) ||
	    rd_addr_resolve(w->l->host, w->l->port, &addrs, &n))
		return false;
	for (i = 0; i < n && !match; i++)
		match = config_addr_is(server, &addrs[i]);
	free(addrs);
	if (match && w->disk)
		snprintf(w->disk, RDMX_EXPORT_NAME_LEN, "%s", name);
	return match;
}

/* Whether what @l names runs already; a map's disk into @disk if not NULL. */
static bool config_present(const struct config_line *l, char *disk)
{
	struct config_disk w = { .l = l, .disk = disk };
	char path[PATH_MAX];

	switch (l->kind) {
	case CFG_LISTEN:
		return !rd_pathf(path, sizeof(path), "%s/kernel/rdmx/listeners",
				 rd_sysfs()) &&
		       config_scan(path, config_listener_is, l);
	case CFG_EXPORT:
		return !rd_pathf(path, sizeof(path), "%s/kernel/rdmx/exports/%s",
				 rd_sysfs(), l->argv[0]) &&
		       rd_exists(path);
	case CFG_MAP:
		return !rd_pathf(path, sizeof(path), "%s/block", rd_sysfs()) &&
		       config_scan(path, config_disk_is, &w);
	default:
		return false;
	}
}

/*
 * Run "rdmxctl VERB [COMMAND] WORD..." for @l's words in this process
 * (VERB: @l's kind); Return: its exit code.
 */
static int config_run(const char *command, const struct config_line *l)
{
	char *argv[CONFIG_WORDS + 2];
	struct rd sub = { .argv = argv };
	int i;

	if (command)
		argv[sub.argc++] = (char *)command;
	for (i = 0; i < l->argc; i++)
		argv[sub.argc++] = l->argv[i];
	argv[sub.argc] = NULL;
	switch (l->kind) {
	case CFG_LISTEN:
		return cmd_listen(&sub);
	case CFG_EXPORT:
		return cmd_export(&sub);
	default:
		return cmd_map(&sub);
	}
}

/* "set NAME VALUE": the tunable, unless it has the value already. */
static int config_set(const struct config_line *l)
{
	char path[PATH_MAX], have[64];
	FILE *f;

	if (rd_pathf(path, sizeof(path), "%s/kernel/rdmx/%s", rd_sysfs(),
		     l->argv[0]))
		return RD_EXIT_FAIL;
	if (rd_read_file(path, have, sizeof(have)) > 0 &&
	    !strcmp(have, l->argv[1]))
		return RD_EXIT_OK;
	f = fopen(path, "w");
	if (!f || fputs(l->argv[1], f) < 0 || fclose(f)) {
		rd_err("set %s %s: %s", l->argv[0], l->argv[1], strerror(errno));
		if (f)
			fclose(f);
		return RD_EXIT_FAIL;
	}
	printf("set %s %s\n", l->argv[0], l->argv[1]);
	return RD_EXIT_OK;
}

/* One line brought up; Return: its exit code. */
static int config_up(struct config_line *l)
{
	char buf[RD_ADDRSTRLEN];
	int ret;

	if (config_present(l, NULL)) {
		l->done = true;
		return RD_EXIT_OK;
	}
	switch (l->kind) {
	case CFG_SET:
		ret = config_set(l);
		break;
	case CFG_LISTEN:
		ret = config_run("add", l);
		if (!ret)
			printf("listening: %s\n",
			       rd_addr_str(&l->addr, buf, sizeof(buf)));
		break;
	case CFG_EXPORT:
		ret = config_run("add", l);
		if (!ret)
			printf("exported: %s\n", l->argv[0]);
		break;
	default:
		ret = config_run(NULL, l);
		break;
	}
	l->done = !ret;
	return ret;
}

static int config_apply(struct config *c)
{
	uint64_t waited = 0;
	unsigned int i, left;
	int k, ret = RD_EXIT_OK;

	for (k = 0; k < CFG_KINDS; k++) {
		if (!config_takes(c, k))
			continue;
		for (i = 0; i < c->n; i++) {
			struct config_line *l = &c->lines[i];

			if (l->kind == (enum config_kind)k &&
			    config_up(l) && k != CFG_MAP)
				ret = RD_EXIT_FAIL;
		}
	}
	for (;;) {
		for (i = left = 0; i < c->n; i++)
			if (c->lines[i].kind == CFG_MAP && c->client &&
			    !c->lines[i].done)
				left++;
		if (!left || waited >= c->retry_ms)
			break;
		fprintf(stderr, "%u map(s) not up: trying again in %d s\n", left,
			CONFIG_RETRY_SECS);
		sleep(CONFIG_RETRY_SECS);
		waited += CONFIG_RETRY_SECS * 1000;
		for (i = 0; i < c->n; i++)
			if (c->lines[i].kind == CFG_MAP && !c->lines[i].done)
				config_up(&c->lines[i]);
	}
	if (left) {
		rd_err("%s: %u map(s) not up", c->file, left);
		ret = RD_EXIT_FAIL;
	}
	return ret;
}

static int config_down(struct config *c)
{
	int k, ret = RD_EXIT_OK;
	unsigned int i;

	/* The other way round: maps, exports, listeners. */
	for (k = CFG_KINDS - 1; k > CFG_SET; k--) {
		if (!config_takes(c, k))
			continue;
		for (i = 0; i < c->n; i++) {
			struct config_line *l = &c->lines[i];
			struct config_line del = { .kind = l->kind };
			char disk[RDMX_EXPORT_NAME_LEN];

			if (l->kind != (enum config_kind)k ||
			    !config_present(l, disk))
				continue;
			if (k == CFG_MAP) {
				struct rd sub = { .argc = 1, .argv = del.argv };

				del.argv[0] = disk;
				if (cmd_unmap(&sub))
					ret = RD_EXIT_FAIL;
				else
					printf("unmapped: %s\n", disk);
				continue;
			}
			if (k == CFG_EXPORT) {
				del.argv[del.argc++] = l->argv[0];
				del.argv[del.argc++] = "--force";
			} else {
				int j;

				for (j = 0; j < l->argc; j++)
					del.argv[del.argc++] = l->argv[j];
			}
			del.argv[del.argc] = NULL;
			if (config_run("del", &del))
				ret = RD_EXIT_FAIL;
		}
	}
	return ret;
}

static int config_show(struct rd *rd, const struct config *c)
{
	unsigned int i;
	int j;

	open_array(rd, NULL);
	for (i = 0; i < c->n; i++) {
		const struct config_line *l = &c->lines[i];

		if (rd->json) {
			open_object(rd, NULL);
			print_str(rd, "command", NULL, config_verbs[l->kind]);
			jsonw_name(&rd->jw, "args");
			jsonw_start_array(&rd->jw);
			for (j = 0; j < l->argc; j++)
				jsonw_string(&rd->jw, l->argv[j]);
			jsonw_end_array(&rd->jw);
			close_object(rd);
			continue;
		}
		printf("%s", config_verbs[l->kind]);
		for (j = 0; j < l->argc; j++)
			printf(" %s", l->argv[j]);
		printf("\n");
	}
	close_array(rd);
	return RD_EXIT_OK;
}

/* ---- save ---- */

static void save_tunables(FILE *f)
{
	char path[PATH_MAX], v[64];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(config_params); i++)
		if (!rd_pathf(path, sizeof(path), "%s/kernel/rdmx/%s",
			      rd_sysfs(), config_params[i]) &&
		    rd_read_file(path, v, sizeof(v)) > 0)
			fprintf(f, "set %s %s\n", config_params[i], v);
}

static bool save_listener(const char *dir, const char *name, const void *arg)
{
	char addr[128], persistent[8], *colon;
	FILE *f = (FILE *)arg;

	(void)name;
	if (rd_object_attr(dir, "addr", addr, sizeof(addr)) <= 0 ||
	    rd_object_attr(dir, "persistent", persistent,
			   sizeof(persistent)) <= 0 || strcmp(persistent, "1"))
		return false;
	colon = strrchr(addr, ':');
	if (!colon)
		return false;
	*colon = '\0';
	if (addr[0] == '[') {
		addr[strlen(addr) - 1] = '\0';
		fprintf(f, "listen -a %s -p %s\n", addr + 1, colon + 1);
	} else {
		fprintf(f, "listen -a %s -p %s\n", addr, colon + 1);
	}
	return false;
}

/*
 * Whether export @name's uuid must be written: only one the operator gave
 * that the storage would not give again. One derived from the storage (a
 * device's WWN or serial, a file's filesystem and inode) is derived again
 * when the file is applied, from whatever the path then is: pinned, it
 * would follow the path to other storage after devices were renamed. RAM
 * gets a new one each time. @uuid gets the uuid.
 */
static bool save_pin_uuid(const char *dir, const char *name, const char *path,
			  char *uuid, size_t size)
{
	char src[16], derived[RD_UUID_LEN], from[768];
	uint8_t u[16];

	if (rd_object_attr(dir, "uuid", uuid, size) <= 0 ||
	    rd_object_attr(dir, "identity", src, sizeof(src)) <= 0 ||
	    strcmp(src, "given"))
		return false;
	if (rd_blk_identity(name, path, u, from, sizeof(from)))
		return true;
	rd_format_uuid(u, derived);
	return strcmp(derived, uuid);
}

/*
 * A block device by a name that follows it (/dev/disk/by-id/...), when
 * udev made one: @path is rewritten, else left.
 */
static void save_stable_path(char *path, size_t size)
{
	static const char by_id[] = "/dev/disk/by-id";
	char link[PATH_MAX], real[PATH_MAX];
	struct dirent **list;
	struct stat st;
	int i, n;

	if (stat(path, &st) || !S_ISBLK(st.st_mode))
		return;
	n = rd_scandir(by_id, &list);
	if (n < 0)
		return;
	for (i = 0; i < n; i++)
		if (list[i]->d_name[0] != '.' &&
		    !rd_pathf(link, sizeof(link), "%s/%s", by_id,
			      list[i]->d_name) &&
		    realpath(link, real) && !strcmp(real, path)) {
			snprintf(path, size, "%s", link);
			break;
		}
	rd_freedir(list, n);
}

/**
 * rd_export_words() - "NAME PATH [OPTION...]" that adds export @name again
 * @dir: the export's sysfs directory
 * @name: its name
 *
 * A block device is named by /dev/disk/by-id where it has such a name; a
 * uuid is given only when the storage would not give it again.
 *
 * Return: the words, to free(); NULL when the export is gone (no path) or
 * out of memory.
 */
char *rd_export_words(const char *dir, const char *name)
{
	char path[PATH_MAX], v[1024], *save = NULL, *a, *words = NULL;
	size_t len;
	FILE *f;

	if (rd_object_attr(dir, "path", path, sizeof(path)) <= 0)
		return NULL;
	f = open_memstream(&words, &len);
	if (!f)
		return NULL;
	save_stable_path(path, sizeof(path));
	fprintf(f, "%s %s", name, path);
	if (rd_object_attr(dir, "read_only", v, sizeof(v)) > 0 && !strcmp(v, "1"))
		fprintf(f, " --ro");
	if (rd_object_attr(dir, "secure", v, sizeof(v)) > 0 && !strcmp(v, "0"))
		fprintf(f, " --insecure");
	if (rd_object_attr(dir, "access", v, sizeof(v)) > 0 &&
	    !strcmp(v, "shared"))
		fprintf(f, " --shared");
	if (rd_object_attr(dir, "logical_block_size", v, sizeof(v)) > 0)
		fprintf(f, " --lbs %s", v);
	if (rd_object_attr(dir, "allow", v, sizeof(v)) > 0)
		for (a = strtok_r(v, " ", &save); a; a = strtok_r(NULL, " ", &save))
			fprintf(f, " --allow %s", a);
	if (save_pin_uuid(dir, name, path, v, sizeof(v)))
		fprintf(f, " --uuid %s", v);
	if (fclose(f)) {
		free(words);
		return NULL;
	}
	return words;
}

static bool save_export(const char *dir, const char *name, const void *arg)
{
	char *words = rd_export_words(dir, name);

	if (words)
		fprintf((FILE *)arg, "export %s\n", words);
	free(words);
	return false;
}

static bool save_map(const char *dir, const char *name, const void *arg)
{
	char rdmx[PATH_MAX], server[128], export[RDMX_EXPORT_NAME_LEN], v[32];
	FILE *f = (FILE *)arg;
	char *colon;

	if (strncmp(name, "rdmxb", 5) ||
	    rd_pathf(rdmx, sizeof(rdmx), "%s/rdmx", dir) ||
	    rd_object_attr(rdmx, "server", server, sizeof(server)) <= 0 ||
	    rd_object_attr(rdmx, "export", export, sizeof(export)) <= 0)
		return false;
	colon = strrchr(server, ':');
	if (!colon)
		return false;
	*colon = '\0';
	fprintf(f, "map -p %s %s %s", colon + 1, server, export);
	if (rd_object_attr(dir, "ro", v, sizeof(v)) > 0 && !strcmp(v, "1"))
		fprintf(f, " --ro");
	if (rd_object_attr(rdmx, "nr_queues", v, sizeof(v)) > 0)
		fprintf(f, " --queues %s", v);
	if (rd_object_attr(rdmx, "queue_depth", v, sizeof(v)) > 0)
		fprintf(f, " --depth %s", v);
	if (rd_object_attr(rdmx, "loss_timeout_ms", v, sizeof(v)) > 0) {
		if (strtoull(v, NULL, 10) == RDMX_MAP_LOSS_TIMEOUT_FOREVER)
			fprintf(f, " --loss-timeout forever");
		else
			fprintf(f, " --loss-timeout %sms", v);
	}
	fprintf(f, "\n");
	return false;
}

static int config_save(const struct config *c)
{
	char tmp[PATH_MAX], dir[PATH_MAX], path[PATH_MAX], *slash;
	time_t now = time(NULL);
	FILE *f;

	if (rd_pathf(path, sizeof(path), "%s/kernel/rdmx", rd_sysfs()) ||
	    !rd_exists(path)) {
		rd_err("%s: no rdmx module loaded: nothing to save", path);
		return RD_EXIT_FAIL;
	}
	snprintf(dir, sizeof(dir), "%s", c->file);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		mkdir(dir, 0755);
	}
	if (rd_pathf(tmp, sizeof(tmp), "%s.new", c->file))
		return RD_EXIT_FAIL;
	f = fopen(tmp, "w");
	if (!f) {
		rd_err("%s: %s", tmp, strerror(errno));
		return RD_EXIT_FAIL;
	}
	fprintf(f, "# rdmx configuration, written by '" RD_PROG " config save' on %s",
		ctime(&now));
	fprintf(f, "# See rdmxctl-config(8). Applied at boot by rdmx-server.service\n"
		   "# (set, listen, export) and rdmx-client.service (set, map).\n");
	save_tunables(f);
	if (!rd_pathf(path, sizeof(path), "%s/kernel/rdmx/listeners", rd_sysfs()))
		config_scan(path, save_listener, f);
	if (!rd_pathf(path, sizeof(path), "%s/kernel/rdmx/exports", rd_sysfs()))
		config_scan(path, save_export, f);
	if (!rd_pathf(path, sizeof(path), "%s/block", rd_sysfs()))
		config_scan(path, save_map, f);
	if (fflush(f) || fsync(fileno(f)) || fclose(f) ||
	    rename(tmp, c->file)) {
		rd_err("%s: %s", c->file, strerror(errno));
		unlink(tmp);
		return RD_EXIT_FAIL;
	}
	printf("saved to %s\n", c->file);
	return RD_EXIT_OK;
}

/* Return: 0, RD_EXIT_USAGE, or -1 for help. */
static int config_parse(struct rd *rd, struct config *c, bool retry_ok)
{
	const char *val;
	int opt;

	c->file = getenv("RDMX_CONFIG") ?: CONFIG_FILE;
	while ((opt = rd_getopt(rd, "config", config_opts, &val)) != RD_OPT_END) {
		switch (opt) {
		case RD_OPT_HELP:
			return -1;
		case CFG_OPT_FILE:
			c->file = val;
			break;
		case CFG_OPT_SERVER:
			c->server = true;
			break;
		case CFG_OPT_CLIENT:
			c->client = true;
			break;
		case CFG_OPT_RETRY:
			if (!retry_ok)
				return rd_usage_err("config", "--retry is for apply");
			if (!strcmp(val, "forever"))
				c->retry_ms = UINT64_MAX;
			else if (rd_parse_ms(val, 1000, 0, UINT64_MAX / 2,
					     &c->retry_ms))
				return rd_usage_err("config", "bad --retry '%s': expected a time (30s, 5m) or forever",
						    val);
			break;
		case RD_OPT_WORD:
			return rd_usage_err("config", "unexpected argument '%s'",
					    val);
		default:
			return RD_EXIT_USAGE;
		}
	}
	if (c->server && c->client)
		return rd_usage_err("config", "--server and --client exclude each other (neither takes both)");
	if (!c->server && !c->client)
		c->server = c->client = true;
	return 0;
}

static int config_cmd(struct rd *rd, char what)
{
	struct config c = { 0 };
	int ret;

	ret = config_parse(rd, &c, what == 'a');
	if (ret < 0)
		return config_help(rd);
	if (ret)
		return ret;
	if (what == 's')
		return config_save(&c);
	ret = config_load(&c);
	if (!ret) {
		if (what == 'a')
			ret = config_apply(&c);
		else if (what == 'd')
			ret = config_down(&c);
		else
			ret = config_show(rd, &c);
	}
	free(c.lines);
	free(c.text);
	return ret;
}

static int config_apply_cmd(struct rd *rd)
{
	return config_cmd(rd, 'a');
}

static int config_down_cmd(struct rd *rd)
{
	return config_cmd(rd, 'd');
}

static int config_save_cmd(struct rd *rd)
{
	return config_cmd(rd, 's');
}

static int config_show_cmd(struct rd *rd)
{
	return config_cmd(rd, 'v');
}

static int config_help_cmd(struct rd *rd)
{
	return config_help(rd);
}

/**
 * cmd_config() - "rdmxctl config"
 * @rd: context
 *
 * Return: exit status.
 */
int cmd_config(struct rd *rd)
{
	static const struct rd_cmd cmds[] = {
		{ NULL,		config_show_cmd },
		{ "apply",	config_apply_cmd },
		{ "down",	config_down_cmd },
		{ "save",	config_save_cmd },
		{ "show",	config_show_cmd },
		{ "help",	config_help_cmd },
		{ NULL,		NULL },
	};

	return rd_exec_cmd(rd, cmds, "config");
}
