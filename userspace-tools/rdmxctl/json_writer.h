/* SPDX-License-Identifier: GPL-2.0 */
/*
 * json_writer: a small streaming JSON emitter, after iproute2's json_writer.
 *
 * Values are written as they come; the writer only remembers, per nesting
 * level, whether a separator is due. Names and values are the caller's to
 * keep well formed (a name only inside an object, one root value).
 */
#ifndef RDMXCTL_JSON_WRITER_H
#define RDMXCTL_JSON_WRITER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSONW_MAX_DEPTH	16

struct json_writer {
	FILE *out;
	bool pretty;
	bool after_name;	/* a member name was written, its value is due */
	unsigned int depth;
	bool has_items[JSONW_MAX_DEPTH + 1];	/* per level: a comma is due */
};

void jsonw_init(struct json_writer *jw, FILE *out, bool pretty);
void jsonw_finish(struct json_writer *jw);
void jsonw_name(struct json_writer *jw, const char *name);
void jsonw_start_object(struct json_writer *jw);
void jsonw_end_object(struct json_writer *jw);
void jsonw_start_array(struct json_writer *jw);
void jsonw_end_array(struct json_writer *jw);
void jsonw_string(struct json_writer *jw, const char *s);
void jsonw_uint(struct json_writer *jw, uint64_t v);
void jsonw_null(struct json_writer *jw);
void jsonw_bool(struct json_writer *jw, bool v);
void jsonw_float(struct json_writer *jw, double v);

#endif /* RDMXCTL_JSON_WRITER_H */
