// SPDX-License-Identifier: GPL-2.0
/*
 * The words after a command's name: its options ("-p 7471", "--port 7471",
 * "--port=7471", "-p7471"), numbers, ports and service names.
 *
 * Options and other words may come in any order; "--" ends the options and
 * a lone "-" is a word (standard input, to "msg send").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rdmxctl.h"

static const struct rd_opt *rd_find_long(const struct rd_opt *opts,
					 const char *name, size_t len)
{
	for (; opts->long_name; opts++)
		if (strlen(opts->long_name) == len &&
		    !strncmp(opts->long_name, name, len))
			return opts;
	return NULL;
}

static const struct rd_opt *rd_find_short(const struct rd_opt *opts, char c)
{
	for (; opts->long_name; opts++)
		if (opts->short_name && opts->short_name == c)
			return opts;
	return NULL;
}

/* The value of option @o: attached (@attached, may be NULL) or the next word. */
static int rd_opt_value(struct rd *rd, const char *object, const char *word,
			const struct rd_opt *o, const char *attached,
			const char **val)
{
	if (!o->value) {
		if (attached) {
			rd_usage_err(object, "option '%s' takes no value", word);
			return RD_OPT_ERR;
		}
		*val = NULL;
		return o->id;
	}
	if (attached) {
		*val = attached;
		return o->id;
	}
	if (rd_no_arg(rd)) {
		rd_usage_err(object, "option '%s' needs a value", word);
		return RD_OPT_ERR;
	}
	*val = rd_argv(rd);
	rd_arg_inc(rd);
	return o->id;
}

/**
 * rd_getopt() - take the next word of a command
 * @rd: context; the word (and an option's value) is consumed
 * @object: the command, for messages ("msg")
 * @opts: the options it takes; -h and --help are always known
 * @val: out: the option's value (NULL if it takes none), or the word
 *
 * Return: the option's id, RD_OPT_WORD for a word that is no option,
 * RD_OPT_HELP, RD_OPT_END when no word is left, or RD_OPT_ERR after
 * reporting an unknown option or a missing value.
 */
int rd_getopt(struct rd *rd, const char *object, const struct rd_opt *opts,
	      const char **val)
{
	const struct rd_opt *o;
	const char *word, *eq;

	*val = NULL;
	if (rd_no_arg(rd))
		return RD_OPT_END;
	word = rd_argv(rd);
	rd_arg_inc(rd);
	if (rd->opts_done || word[0] != '-' || !word[1]) {
		*val = word;
		return RD_OPT_WORD;
	}
	if (!strcmp(word, "--")) {
		rd->opts_done = true;
		return rd_getopt(rd, object, opts, val);
	}
	if (!strcmp(word, "-h") || !strcmp(word, "--help"))
		return RD_OPT_HELP;
	if (word[1] == '-') {
		eq = strchr(word + 2, '=');
		o = rd_find_long(opts, word + 2,
				 eq ? (size_t)(eq - word - 2) : strlen(word + 2));
		if (o)
			return rd_opt_value(rd, object, word, o,
					    eq ? eq + 1 : NULL, val);
	} else {
		o = rd_find_short(opts, word[1]);
		if (o)
			return rd_opt_value(rd, object, word, o,
					    word[2] ? word + 2 : NULL, val);
	}
	rd_usage_err(object, "unknown option '%s'", word);
	return RD_OPT_ERR;
}

/**
 * rd_parse_ulong() - a decimal number in a range
 * @s: the text: digits only, no sign, no spaces
 * @min: smallest value allowed
 * @max: largest value allowed
 * @val: out: the number; untouched on error
 *
 * Return: 0, or -EINVAL.
 */
int rd_parse_ulong(const char *s, unsigned long min, unsigned long max,
		   unsigned long *val)
{
	unsigned long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*val = v;
	return 0;
}

/**
 * rd_parse_ms() - a duration
 * @s: a number with an optional unit: ms, s, m or h; a bare number counts
 *	in @unit_ms
 * @unit_ms: what a bare number counts, in milliseconds (1 or 1000)
 * @min: the least, in milliseconds
 * @max: the most, in milliseconds
 * @ms: out: milliseconds
 *
 * Return: 0, or -EINVAL.
 */
int rd_parse_ms(const char *s, uint64_t unit_ms, uint64_t min, uint64_t max,
		uint64_t *ms)
{
	static const struct { const char *suffix; uint64_t ms; } units[] = {
		{ "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 },
	};
	unsigned long long v;
	char *end;
	size_t i;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	if (*end) {
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (!strcmp(end, units[i].suffix))
				break;
		if (i == sizeof(units) / sizeof(units[0]))
			return -EINVAL;
		unit_ms = units[i].ms;
	}
	if (v > UINT64_MAX / unit_ms || v * unit_ms < min || v * unit_ms > max)
		return -EINVAL;
	*ms = v * unit_ms;
	return 0;
}

/**
 * rd_parse_secs() - a duration in whole seconds
 * @s: as rd_parse_ms() takes it, a bare number counting seconds: "30",
 *	"30s", "2m", "1h", "5000ms"
 * @max: the most, in seconds (the least is 1)
 * @secs: out: seconds
 *
 * Return: 0, or -EINVAL (also for a duration that is no whole number of
 * seconds).
 */
int rd_parse_secs(const char *s, unsigned long max, unsigned long *secs)
{
	uint64_t ms;

	if (rd_parse_ms(s, 1000, 1000, (uint64_t)max * 1000, &ms) || ms % 1000)
		return -EINVAL;
	*secs = ms / 1000;
	return 0;
}

/**
 * rd_parse_port() - a port of the rdma_cm (TCP) port space
 * @object: the command, for the message
 * @s: the text
 * @port: out: 1 to 65535
 *
 * Return: 0, or RD_EXIT_USAGE after saying what is wrong.
 */
int rd_parse_port(const char *object, const char *s, unsigned int *port)
{
	unsigned long v;

	if (rd_parse_ulong(s, 1, 65535, &v))
		return rd_usage_err(object, "bad port '%s': expected 1 to 65535",
				    s);
	*port = v;
	return 0;
}

static bool rd_service_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

/**
 * rd_check_service() - check a service name as the kernel will
 * @object: the command, for the message
 * @name: the name: 1 to RDMX_SERVICE_LEN - 1 bytes of [A-Za-z0-9._-]
 *
 * Return: 0, or RD_EXIT_USAGE after saying what is wrong.
 */
int rd_check_service(const char *object, const char *name)
{
	size_t len = strlen(name), i;

	if (!len || len >= RDMX_SERVICE_LEN)
		return rd_usage_err(object, "bad service name '%s': expected 1 to %d characters",
				    name, RDMX_SERVICE_LEN - 1);
	for (i = 0; i < len; i++)
		if (!rd_service_char(name[i]))
			return rd_usage_err(object, "bad service name '%s': only letters, digits, '.', '_' and '-'",
					    name);
	return 0;
}

/* The multiplier of a size suffix at @s ("K", "KiB", "kb", "M" ... "T"); @s is past it. */
static int rd_size_suffix(const char **s, unsigned int *shift)
{
	const char *p = *s;

	switch (*p) {
	case 'k': case 'K':
		*shift = 10;
		break;
	case 'm': case 'M':
		*shift = 20;
		break;
	case 'g': case 'G':
		*shift = 30;
		break;
	case 't': case 'T':
		*shift = 40;
		break;
	default:
		return -EINVAL;
	}
	p++;
	if (*p == 'i' || *p == 'I')
		p++;
	if (*p == 'b' || *p == 'B')
		p++;
	*s = p;
	return 0;
}

/**
 * rd_parse_u64() - a 64-bit number, decimal or 0x hex, maybe a size
 * @s: the text: digits, or "0x" and hex digits; no sign, no spaces. With
 *	@suffix, a K, M, G or T may follow (times 2^10 to 2^40; "KiB",
 *	"kb" and the like are the same), as rdmx-msgtest takes sizes
 * @suffix: allow the suffix
 * @min: smallest value allowed
 * @max: largest value allowed
 * @val: out: the number; untouched on error
 *
 * A leading 0 does not mean octal: "010" is ten.
 *
 * Return: 0, or -EINVAL.
 */
int rd_parse_u64(const char *s, bool suffix, uint64_t min, uint64_t max,
		 uint64_t *val)
{
	unsigned long long v;
	unsigned int shift = 0;
	const char *p;
	char *end;
	int base = 10;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') ||
		      (*s >= 'A' && *s <= 'F')))
			return -EINVAL;
	}
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno)
		return -EINVAL;
	p = end;
	if (*p && suffix && base == 10) {
		if (rd_size_suffix(&p, &shift))
			return -EINVAL;
		if (v > (UINT64_MAX >> shift))
			return -EINVAL;
		v <<= shift;
	}
	if (*p || v < min || v > max)
		return -EINVAL;
	*val = v;
	return 0;
}
