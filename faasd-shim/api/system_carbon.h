// system_carbon.h — GET /system/carbon[?function=F&since=T&until=T&group_by=function|hour]:
// the carbon bill from the energy ledger, the same JSON document as
// `faasnode carbon report --format json` (billing::CarbonReportJson).
//
// Replies: 200 application/json; 400 for an unknown parameter, a bad time or group_by (the
// message says what is accepted); 405 for a method other than GET/HEAD; 404 when the node
// keeps no ledger (energy billing is off); 500 when the ledger cannot be read. Basic auth is
// the router's business (wrap it in auth::RequireBasicAuth, as every /system route).
//
// Blocking: the query reads the SQLite file on the calling uthread's core (a read-only
// connection per request; WAL, so the node's ledger writer is never blocked). A system
// endpoint, not a data-path one: its cost is one query over the ledger's rows in range.
#pragma once

#include <string>

#include "faasd-shim/api/route.h"

namespace faasnode::api {

// `ledger_path`: the node's energy.ledger; empty when billing is off (every call gets 404).
RouteHandler MakeSystemCarbonHandler(std::string ledger_path);

}  // namespace faasnode::api
