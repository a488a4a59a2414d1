// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx block service tracepoint definitions (see blk_trace.h).
 */
#define CREATE_TRACE_POINTS
#include "blk_trace.h"
