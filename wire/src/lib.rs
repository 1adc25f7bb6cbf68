//! yard-wire: the JSON messages the daemons exchange (NM heartbeats, AM allocate, client REST bodies).
//! It owns only data shapes and their validation; no IO. Empty until the live cluster lands (issue 6).
