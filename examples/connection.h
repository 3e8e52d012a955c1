/*
 * connection.h: a connection's life as a transition table, shared by the
 * connection actor (examples/connection.c) and its test, which replays
 * the same table as the model.
 *
 *	            CONNECT            UP
 *	 CLOSED -------------> CONNECTING ------> CONNECTED
 *	   ^  ^                 |  |                |
 *	   |  |   FAIL, CRASH,  |  | CLOSE          | CLOSE
 *	   |  +---- SETTLE -----+  v                v
 *	   +------ ACK, CRASH, SETTLE ---------- CLOSING
 *
 * CRASH is the peer (or the link) dying; SETTLE is the cleanup a timeout
 * or a supervisor does: nothing is left half-open after it.  Every other
 * pair (a late UP, a CLOSE of a closed connection, two CONNECTs racing)
 * leaves the state as it is: the table says so, no code path decides it.
 * A connection in CONNECTING or CLOSING after SETTLE is a zombie; there
 * must never be one.
 */
#ifndef ACTORD_EXAMPLES_CONNECTION_H
#define ACTORD_EXAMPLES_CONNECTION_H

#include <stdint.h>

enum conn_state { C_CLOSED, C_CONNECTING, C_CONNECTED, C_CLOSING,
	C_NSTATES };
enum conn_event { E_CONNECT, E_UP, E_FAIL, E_CLOSE, E_ACK, E_CRASH,
	E_SETTLE, E_NEVENTS };

static const uint8_t conn_next[C_NSTATES][E_NEVENTS] = {
	/*		  CONNECT	UP		FAIL
			  CLOSE		ACK		CRASH		SETTLE */
	[C_CLOSED] =	{ C_CONNECTING, C_CLOSED,	C_CLOSED,
			  C_CLOSED,	C_CLOSED,	C_CLOSED,	C_CLOSED },
	[C_CONNECTING] = { C_CONNECTING, C_CONNECTED,	C_CLOSED,
			  C_CLOSING,	C_CONNECTING,	C_CLOSED,	C_CLOSED },
	[C_CONNECTED] =	{ C_CONNECTED,	C_CONNECTED,	C_CONNECTED,
			  C_CLOSING,	C_CONNECTED,	C_CLOSED,	C_CONNECTED },
	[C_CLOSING] =	{ C_CLOSING,	C_CLOSING,	C_CLOSING,
			  C_CLOSING,	C_CLOSED,	C_CLOSED,	C_CLOSED },
};

static const char *const conn_state_name[C_NSTATES] = {
	"closed", "connecting", "connected", "closing"
};

/* The next state; a value out of range (scribbled on) is taken as closed. */
static inline uint8_t
conn_step(uint8_t state, uint8_t event)
{
	if (state >= C_NSTATES)
		state = C_CLOSED;
	return event < E_NEVENTS ? conn_next[state][event] : state;
}

/* After SETTLE, only CLOSED and CONNECTED are states a connection may be in. */
static inline int
conn_zombie(uint8_t state)
{
	return state == C_CONNECTING || state == C_CLOSING;
}

#endif /* ACTORD_EXAMPLES_CONNECTION_H */
