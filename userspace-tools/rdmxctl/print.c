// SPDX-License-Identifier: GPL-2.0
/*
 * One printing path for text and JSON, after iproute2's json_print.
 *
 * Each helper takes the JSON key and the text format of one item. In JSON
 * mode the item becomes a member (or, with a NULL key, an array element); in
 * text mode it is printed with the format, separated from the previous item
 * on the line by one space. A NULL format leaves the item out of the text;
 * print_text() puts text only. Objects, arrays and keys are JSON only; lines
 * and indentation are text only.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "rdmxctl.h"

static void text_sep(struct rd *rd)
{
	if (rd->text_midline)
		putchar(' ');
	rd->text_midline = true;
}

void print_text(struct rd *rd, const char *fmt, ...)
{
	va_list ap;

	if (rd->json)
		return;
	text_sep(rd);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}

static void json_key(struct rd *rd, const char *key)
{
	if (key)
		jsonw_name(&rd->jw, key);
}

void print_str(struct rd *rd, const char *key, const char *fmt,
	       const char *val)
{
	if (rd->json) {
		json_key(rd, key);
		jsonw_string(&rd->jw, val);
	} else if (fmt) {
		print_text(rd, fmt, val);
	}
}

void print_uint(struct rd *rd, const char *key, const char *fmt,
		unsigned int val)
{
	if (rd->json) {
		json_key(rd, key);
		jsonw_uint(&rd->jw, val);
	} else if (fmt) {
		print_text(rd, fmt, val);
	}
}

void print_u64(struct rd *rd, const char *key, const char *fmt, uint64_t val)
{
	if (rd->json) {
		json_key(rd, key);
		jsonw_uint(&rd->jw, val);
	} else if (fmt) {
		print_text(rd, fmt, val);
	}
}

void print_bool(struct rd *rd, const char *key, const char *fmt, bool val)
{
	if (rd->json) {
		json_key(rd, key);
		jsonw_bool(&rd->jw, val);
	} else if (fmt) {
		print_text(rd, fmt, val ? "yes" : "no");
	}
}

/* @fmt takes the double, as "%.2f" */
void print_float(struct rd *rd, const char *key, const char *fmt, double val)
{
	if (rd->json) {
		json_key(rd, key);
		jsonw_float(&rd->jw, val);
	} else if (fmt) {
		print_text(rd, fmt, val);
	}
}

/* JSON null; @text, if not NULL, is printed as is in text mode. */
void print_null(struct rd *rd, const char *key, const char *text)
{
	if (rd->json) {
		json_key(rd, key);
		jsonw_null(&rd->jw);
	} else if (text) {
		print_text(rd, "%s", text);
	}
}

/* "LABEL N"; or, when @ok is false (unknown), "LABEL -" and JSON null. */
void print_u64_or_null(struct rd *rd, const char *key, const char *label,
		       bool ok, uint64_t val)
{
	if (ok) {
		print_u64(rd, key, NULL, val);
		print_text(rd, "%s %" PRIu64, label, val);
	} else {
		print_null(rd, key, NULL);
		print_text(rd, "%s -", label);
	}
}

static void print_flag(struct rd *rd, const char *name, bool *first)
{
	if (rd->json)
		jsonw_string(&rd->jw, name);
	else
		printf("%s%s", *first ? "" : ",", name);
	*first = false;
}

/**
 * print_flags() - print the set bits of a flags word by name
 * @rd: context
 * @key: JSON key of the array, and the label in text ("caps a,b")
 * @names: names of the known bits
 * @nr_names: entries in @names
 * @bits: the flags word
 *
 * Bits without a name are printed together in hex, so none is hidden.
 * Text says "none" when no bit is set.
 */
void print_flags(struct rd *rd, const char *key,
		 const struct rd_flag_name *names, size_t nr_names,
		 uint64_t bits)
{
	bool first = true;
	size_t i;

	open_array(rd, key);
	print_text(rd, "%s ", key);
	for (i = 0; i < nr_names; i++) {
		if (bits & names[i].bit)
			print_flag(rd, names[i].name, &first);
		bits &= ~names[i].bit;
	}
	if (bits) {
		char unknown[24];

		snprintf(unknown, sizeof(unknown), "0x%" PRIx64, bits);
		print_flag(rd, unknown, &first);
	}
	if (first && !rd->json)
		fputs("none", stdout);
	close_array(rd);
}

void print_nl(struct rd *rd)
{
	if (rd->json)
		return;
	putchar('\n');
	rd->text_midline = false;
}

/* Indent the start of a text line; the next item needs no separator. */
void print_indent(struct rd *rd, int width)
{
	if (!rd->json)
		printf("%*s", width, "");
}

void open_object(struct rd *rd, const char *key)
{
	if (!rd->json)
		return;
	json_key(rd, key);
	jsonw_start_object(&rd->jw);
}

void close_object(struct rd *rd)
{
	if (rd->json)
		jsonw_end_object(&rd->jw);
}

void open_array(struct rd *rd, const char *key)
{
	if (!rd->json)
		return;
	json_key(rd, key);
	jsonw_start_array(&rd->jw);
}

void close_array(struct rd *rd)
{
	if (rd->json)
		jsonw_end_array(&rd->jw);
}
