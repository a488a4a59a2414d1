// SPDX-License-Identifier: GPL-2.0
/*
 * rdmx message service tracepoint definitions (see msg_trace.h).
 */
#define CREATE_TRACE_POINTS
#include "msg_trace.h"
