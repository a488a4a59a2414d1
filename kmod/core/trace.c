// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx tracepoint definitions (see rdmx_trace.h).
 */
#define CREATE_TRACE_POINTS
#include "rdmx_trace.h"
