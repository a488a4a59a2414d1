// SPDX-License-Identifier: GPL-2.0
/*
 * json_writer: a small streaming JSON emitter, after iproute2's json_writer.
 */
#include <assert.h>
#include <inttypes.h>

#include "json_writer.h"

void jsonw_init(struct json_writer *jw, FILE *out, bool pretty)
{
	*jw = (struct json_writer){ .out = out, .pretty = pretty };
}

/* End the document with a newline, if anything was written. */
void jsonw_finish(struct json_writer *jw)
{
	assert(jw->depth == 0);
	if (jw->has_items[0])
		putc('\n', jw->out);
}

static void jsonw_indent(struct json_writer *jw)
{
	unsigned int i;

	putc('\n', jw->out);
	for (i = 0; i < jw->depth; i++)
		fputs("  ", jw->out);
}

/* Separate a new member or element from the one before it. */
static void jsonw_begin_value(struct json_writer *jw)
{
	if (jw->after_name) {
		jw->after_name = false;
		return;
	}
	if (jw->has_items[jw->depth])
		putc(',', jw->out);
	if (jw->pretty && jw->depth > 0)
		jsonw_indent(jw);
	jw->has_items[jw->depth] = true;
}

static void jsonw_quoted(struct json_writer *jw, const char *s)
{
	const unsigned char *p;

	putc('"', jw->out);
	for (p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", jw->out);
			break;
		case '\\':
			fputs("\\\\", jw->out);
			break;
		case '\n':
			fputs("\\n", jw->out);
			break;
		case '\t':
			fputs("\\t", jw->out);
			break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(jw->out, "\\u%04x", *p);
			else
				putc(*p, jw->out);
		}
	}
	putc('"', jw->out);
}

void jsonw_name(struct json_writer *jw, const char *name)
{
	jsonw_begin_value(jw);
	jsonw_quoted(jw, name);
	fputs(jw->pretty ? ": " : ":", jw->out);
	jw->after_name = true;
}

static void jsonw_open(struct json_writer *jw, char c)
{
	jsonw_begin_value(jw);
	putc(c, jw->out);
	assert(jw->depth < JSONW_MAX_DEPTH);
	jw->depth++;
	jw->has_items[jw->depth] = false;
}

static void jsonw_close(struct json_writer *jw, char c)
{
	assert(jw->depth > 0);
	jw->depth--;
	if (jw->pretty && jw->has_items[jw->depth + 1])
		jsonw_indent(jw);
	putc(c, jw->out);
}

void jsonw_start_object(struct json_writer *jw)
{
	jsonw_open(jw, '{');
}

void jsonw_end_object(struct json_writer *jw)
{
	jsonw_close(jw, '}');
}

void jsonw_start_array(struct json_writer *jw)
{
	jsonw_open(jw, '[');
}

void jsonw_end_array(struct json_writer *jw)
{
	jsonw_close(jw, ']');
}

void jsonw_string(struct json_writer *jw, const char *s)
{
	jsonw_begin_value(jw);
	jsonw_quoted(jw, s);
}

void jsonw_uint(struct json_writer *jw, uint64_t v)
{
	jsonw_begin_value(jw);
	fprintf(jw->out, "%" PRIu64, v);
}

void jsonw_null(struct json_writer *jw)
{
	jsonw_begin_value(jw);
	fputs("null", jw->out);
}

void jsonw_bool(struct json_writer *jw, bool v)
{
	jsonw_begin_value(jw);
	fputs(v ? "true" : "false", jw->out);
}

/* Three decimals; JSON has no NaN or infinity, so those become null. */
void jsonw_float(struct json_writer *jw, double v)
{
	jsonw_begin_value(jw);
	if (v != v || v > 1e300 || v < -1e300)
		fputs("null", jw->out);
	else
		fprintf(jw->out, "%.3f", v);
}
